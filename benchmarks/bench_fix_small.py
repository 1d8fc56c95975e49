"""Fix with the bundled small model: how many failing cells get a fix that runs, how many say
honestly that they cannot, and how many proposals offered as runnable would fail (target 0)
or run but miss what the cell was for.

Each case sets up a kernel (an in-process IPython shell), runs the failing cell to get its
real error, reads the kernel's variables as the browser does (``describe_variables``), and
asks the server's Fix path (:func:`chapyter_ext.fix.service.propose_fix`: the cheap repairs,
then the small model's seeded candidates, all checked) with nothing configured, so the
bundled SmolLM2-135M answers. A proposal offered as runnable is then run in a fresh kernel
set up the same way: it must run without an error, and its ``check`` (what the fix was for)
must hold.

    .venv/bin/python benchmarks/bench_fix_small.py               # all cases
    .venv/bin/python benchmarks/bench_fix_small.py --short       # the test suite's few
    .venv/bin/python benchmarks/bench_fix_small.py --model-only  # no cheap repairs: the model
    .venv/bin/python benchmarks/bench_fix_small.py --json out.json -v

Needs ``chapyter-ext[local]``. A few minutes on two cores.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import json
import os
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SETUP = """\
import pandas as pd
total = 6
nums = [1, 2, 3]
prices = {'apple': 1.5, 'pear': 2.0}
sales = pd.DataFrame({'city': ['Oslo', 'Lima', 'Oslo'], 'price': [10.0, 20.0, 30.0]})
"""


@dataclass(frozen=True)
class Case:
    """A failing cell, what kind of slip it is, and what its fix must leave true."""

    name: str
    kind: str
    cell: str
    check: str = "True"


CASES = (
    Case("print-typo", "typo", "prnt(total)", "_out.strip() == '6'"),
    Case("variable-typo", "typo", "print(totl)", "_out.strip() == '6'"),
    Case("column-typo", "wrong column", "avg = sales['prise'].mean()", "avg == 20.0"),
    Case("column-case", "wrong column", "cities = sales['City'].unique()", "len(cities) == 2"),
    Case(
        "method-typo",
        "typo",
        "by_city = sales.groupy('city')['price'].sum()",
        "by_city['Oslo'] == 40.0",
    ),
    Case("list-method-typo", "typo", "nums.apend(4)", "nums == [1, 2, 3, 4]"),
    Case("index-past-end", "off-by-one", "last = nums[3]", "last == 3"),
    Case(
        "range-past-end",
        "off-by-one",
        "for i in range(len(nums) + 1):\n    print(nums[i])",
        "_out.split() == ['1', '2', '3']",
    ),
    Case("unclosed-paren", "syntax", "s = sum(nums", "s == 6"),
    Case("text-plus-number", "type", "print('total: ' + total)", "_out.strip() == 'total: 6'"),
    Case("missing-import", "import", "m = np.mean(nums)", "m == 2.0"),
    Case("dict-key-typo", "typo", "p = prices['aple']", "p == 1.5"),
    Case("divide-by-zero", "hard", "share = total / 0"),
    Case("list-arithmetic", "hard", "half = nums / 2"),
    Case("bad-literal", "hard", "x = int('abc')"),
    Case("missing-column", "hard", "sales['total'] = sales['price'] * sales['qty']"),
)
#: Run by the test suite (tests/test_fix_small_model.py): two slips a repair fixes, and one
#: only the model could fix.
SHORT = ("print-typo", "column-typo", "bad-literal")


def _shell():
    from IPython.core.interactiveshell import InteractiveShell

    return InteractiveShell.instance(colors="nocolor")


def _fresh(shell) -> None:
    shell.run_cell("%reset -f", store_history=False)
    result = shell.run_cell(SETUP, store_history=False)
    if not result.success:
        raise RuntimeError(f"the setup failed: {result.error_in_exec}")


def _run(shell, code: str) -> tuple[Any, str]:
    """Run ``code`` as a cell: its ExecutionResult and what it printed."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        result = shell.run_cell(code, store_history=True)
    return result, out.getvalue()


def _error(shell, result) -> dict[str, Any]:
    """The failing cell's error output, as the browser would send it."""
    exc = result.error_in_exec or result.error_before_exec
    frames = shell.InteractiveTB.structured_traceback(type(exc), exc, exc.__traceback__)
    return {"ename": type(exc).__name__, "evalue": str(exc), "traceback": list(frames)}


async def _propose(case: Case, snapshot: dict, error: dict, services: tuple) -> dict:
    from chapyter_ext.chat import parse_context
    from chapyter_ext.fix.request import FixRequest
    from chapyter_ext.fix.service import propose_fix

    registry, chat = services
    body = {
        "notebook": "bench.ipynb",
        "mode": "fix",
        "cell": {"id": f"cell-{case.name}", "index": 1, "source": case.cell},
        "error": error,
        "context": snapshot,
    }
    request = FixRequest.parse(body, parse_context=parse_context)
    return await propose_fix(request, registry=registry, chat=chat)


def _services():
    from chapyter_ext.chat import ChatService
    from chapyter_ext.config import Chapyter
    from chapyter_ext.endpoints import ModelRegistry

    settings = Chapyter()
    registry = ModelRegistry.from_config({}, "", settings)
    chat = ChatService(
        registry,
        None,  # type: ignore[arg-type]  # the Fix path keeps no history
        settings,
    )
    return registry, chat


def run_case(shell, case: Case, services: tuple) -> dict:
    """Fail, ask, run what is offered: what happened to one case."""
    from chapyter_ext.context import describe_variables

    _fresh(shell)
    failed, _ = _run(shell, case.cell)
    if failed.success:
        raise RuntimeError(f"{case.name}: the cell did not fail")
    error = _error(shell, failed)
    snapshot = {
        "path": "bench.ipynb",
        "cell_count": 2,
        "active": {"index": 1, "type": "code", "source": case.cell},
        "variables": describe_variables(shell.user_ns, shell.user_ns_hidden),
    }
    started = time.monotonic()
    proposal = asyncio.run(_propose(case, snapshot, error, services))
    seconds = time.monotonic() - started
    outcome = "cannot"
    problem = ""
    if proposal["runnable"]:
        _fresh(shell)
        ran, printed = _run(shell, proposal["code"])
        shell.user_ns["_out"] = printed
        try:
            holds = ran.success and bool(shell.ev(case.check))
        except Exception as err:
            holds, problem = False, f"{type(err).__name__}: {err}"
        if not ran.success:
            problem = repr(ran.error_in_exec or ran.error_before_exec)
        # Offered and raising is an invalid proposal; running but missing the point is not a
        # fix either, and is counted apart.
        outcome = "fixed" if holds else "invalid" if not ran.success else "off target"
    return {
        "name": case.name,
        "kind": case.kind,
        "cell": case.cell,
        "outcome": outcome,
        "by": "repair" if proposal["model"] == "chapyter-ext repair" else proposal["model"],
        "code": proposal["code"],
        "said": proposal["explanation"],
        "hold": proposal["hold"],
        "problem": problem,
        "seconds": round(seconds, 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--short", action="store_true", help="only the test suite's cases")
    parser.add_argument("--only", help="comma-separated case names")
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument("--verbose", "-v", action="store_true", help="print each proposal")
    parser.add_argument(
        "--model-only",
        action="store_true",
        help="skip the cheap repairs: every fix is the small model's (still checked)",
    )
    args = parser.parse_args(argv)
    if args.model_only:
        import chapyter_ext.fix.service as fix

        fix.repairs = lambda *a, **k: []  # type: ignore[assignment]
    for name in list(os.environ):
        if name.startswith(("OPENAI_", "CHAPYTER_")):
            del os.environ[name]  # nothing configured: the bundled model answers
    names = SHORT if args.short else (args.only.split(",") if args.only else None)
    cases = [c for c in CASES if names is None or c.name in names]
    shell = _shell()
    services = _services()
    results = []
    try:
        for case in cases:
            result = run_case(shell, case, services)
            results.append(result)
            mark = {"fixed": "✓", "cannot": "–", "invalid": "✗", "off target": "~"}[
                result["outcome"]
            ]
            print(
                f"{mark} {case.name:17} {result['seconds']:5.1f} s  {result['outcome']:8} "
                f"{result['by']:20} {case.cell.splitlines()[0]}",
                flush=True,
            )
            if args.verbose or result["outcome"] != "fixed":
                shown = result["code"] or result["said"]
                print("    " + str(shown).replace("\n", "\n    "), flush=True)
                if result["problem"]:
                    print(f"    ran: {result['problem']}", flush=True)
    finally:
        services[0].close()
    kinds = ("fixed", "cannot", "invalid", "off target")
    counts = {k: sum(r["outcome"] == k for r in results) for k in kinds}
    by_repair = sum(r["outcome"] == "fixed" and r["by"] == "repair" for r in results)
    seconds = [r["seconds"] for r in results]
    print(
        f"\n{len(results)} fix requests: {counts['fixed']} runnable fixes offered "
        f"({by_repair} by a repair, {counts['fixed'] - by_repair} by the model), "
        f"{counts['cannot']} said honestly they could not, {counts['invalid']} invalid "
        f"proposals offered (target 0), {counts['off target']} that run but miss the point; "
        f"median {statistics.median(seconds):.1f} s per request "
        f"(max {max(seconds):.1f} s)"
    )
    if args.json:
        args.json.write_text(json.dumps({"counts": counts, "results": results}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
