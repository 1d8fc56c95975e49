"""How often the bundled small model turns an everyday request into code that does it.

Every request of ``small_model_everyday.py`` (``--earlier``: the earlier set of
``small_model_requests.py``) goes through the real ``%%ai --run`` in an
in-process IPython shell (the magic, its prompt, the candidates, their checks and their
confined trials where this machine can make them (Linux: the shell's process forks, as a
kernel's does; ``--set trials=False`` for the checks alone), the real
SmolLM2-135M behind llama-cpp-python's server, the correction retry): the kernel is set up,
the request is asked, the generated code runs, and the check reads the kernel's state after.
Nothing is configured, so the bundled local model answers, as for a newcomer. Each request
ends one of three ways: solved (the check holds and the variables the request does not ask
to change are as they were), an honest "could not" (no code offered, one line), or wrong but
offered (code was offered, and it did not do the request or it changed the user's data).

    .venv/bin/python benchmarks/bench_small_model.py             # "solved N/33, could not ..."
    .venv/bin/python benchmarks/bench_small_model.py --earlier   # the issue-13 set: N/20
    .venv/bin/python benchmarks/bench_small_model.py --short     # the test suite's few
    .venv/bin/python benchmarks/bench_small_model.py --json out.json

Needs ``chapyter-ext[local]``. Several minutes on two cores.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from small_model_everyday import CASES, SHORT
from small_model_requests import CASES as EARLIER
from small_model_requests import CHECK_HELPERS, Case


def _shell(settings: list[str]):
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance(colors="nocolor")
    shell.run_cell("%load_ext chapyter_ext")
    for setting in settings:
        shell.run_cell(f"%config Chapyter.{setting}")
    return shell


def run_case(shell, case: Case, workdir: Path) -> dict:
    """Set up, ask, run, check: what happened to one request."""
    shell.run_cell("%reset -f", store_history=False)
    os.chdir(workdir)
    if case.setup:
        setup = shell.run_cell(case.setup, store_history=False)
        if not setup.success:
            raise RuntimeError(f"{case.name}: the setup failed: {setup.error_in_exec}")
    shell.run_cell(
        f"import copy as _copy\n_before = set(globals())\n"
        f"_kept = {{n: _copy.deepcopy(globals()[n]) for n in {list(case.keep)!r}}}",
        store_history=False,
    )
    before = len(shell.history_manager.input_hist_raw)
    out = io.StringIO()
    started = time.monotonic()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        asked = shell.run_cell(f"%%ai --run\n{case.request}", store_history=True)
    elapsed = time.monotonic() - started
    inputs = shell.history_manager.input_hist_raw[before:]
    ran = [cell for cell in inputs if not cell.startswith("%%ai")]
    error = asked.error_in_exec
    shell.run_cell(CHECK_HELPERS, store_history=False)
    try:
        done = bool(shell.ev(case.check))
    except Exception:
        done = False
    kept = bool(shell.ev("_unchanged()"))
    code = ran[-1] if ran else None
    # Solved: offered, right, and the user's data as it was.
    outcome = "could not" if code is None else ("solved" if done and kept else "wrong")
    return {
        "name": case.name,
        "request": case.request,
        "solved": outcome == "solved",
        "outcome": outcome,
        "kept": kept,
        "seconds": round(elapsed, 2),
        "code": code,
        "message": str(error) if error is not None else None,
        "candidates": 1 + out.getvalue().count("↻ candidate"),
        "corrections": out.getvalue().count("↻ retry"),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--short", action="store_true", help="only the test suite's requests")
    parser.add_argument("--only", help="comma-separated request names")
    parser.add_argument("--earlier", action="store_true", help="the issue-13 set of 20")
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument("--verbose", "-v", action="store_true", help="print each answer")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a Chapyter setting, e.g. --set prompt_style=\"'full'\" (the full prompt)",
    )
    args = parser.parse_args(argv)
    for name in list(os.environ):
        if name.startswith(("OPENAI_", "CHAPYTER_")):
            del os.environ[name]  # nothing configured: the bundled model answers

    names = SHORT if args.short else (args.only.split(",") if args.only else None)
    cases = [c for c in (EARLIER if args.earlier else CASES) if names is None or c.name in names]
    shell = _shell(args.set)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        home = os.getcwd()
        try:
            for case in cases:
                workdir = Path(tmp) / case.name
                workdir.mkdir()
                result = run_case(shell, case, workdir)
                results.append(result)
                mark = {"solved": "✓", "could not": "·", "wrong": "✗"}[result["outcome"]]
                print(
                    f"{mark} {case.name:14} {result['seconds']:5.1f} s "
                    f"{result['candidates']} cand. {case.request}",
                    flush=True,
                )
                if args.verbose or not result["solved"]:
                    shown = result["code"] or result["message"]
                    print("    " + str(shown).replace("\n", "\n    "), flush=True)
        finally:
            os.chdir(home)
    solved = sum(r["solved"] for r in results)
    could_not = sum(r["outcome"] == "could not" for r in results)
    wrong = sum(r["outcome"] == "wrong" for r in results)
    seconds = [r["seconds"] for r in results]
    print(
        f"\nsolved {solved}/{len(results)}, could not {could_not}, wrong but offered {wrong} "
        f"({sum(not r['kept'] for r in results)} changed data they were not asked to); "
        f"median {statistics.median(seconds):.1f} s per "
        f"request (max {max(seconds):.1f} s); "
        f"{sum(r['candidates'] for r in results)} candidates, "
        f"{sum(r['corrections'] for r in results)} corrections"
    )
    if args.json:
        args.json.write_text(
            json.dumps(
                {"solved": solved, "could_not": could_not, "wrong": wrong, "results": results},
                indent=1,
            )
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
