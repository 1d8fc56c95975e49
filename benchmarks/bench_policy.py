"""How sound and how fast the agent's approval policy is under ``risky``.

Reads the corpora the tests read (``tests/vectors/policy_corpus.json``, and the public
notebooks' cells of ``tests/vectors/public_cells.json``) and prints: how many disguised risky
snippets would run unasked (target: none), how many everyday analysis snippets would ask (target:
at most 5%), the side-effect steps by level, the public everyday cells that ask with trials and
without, and what the analysis costs: ``analyse`` on 100-line cells made of real public cells
joined in notebook order (the median and 90th percentile of the cells' medians over ``--repeat``
runs; target: median under 2 ms), ``classify`` on a 100-line cell of corpus snippets, and per
snippet. Not a test: run it by hand from the repository's root,
``python benchmarks/bench_policy.py [--repeat N] [--verbose]``.
"""

from __future__ import annotations

import argparse
import ast
import json
import statistics
import time
import warnings
from pathlib import Path

from chapyter_ext.parsing.syntax import transform_cell
from chapyter_ext.policy import KNOWN, LIKELY, analyse, classify

VECTORS = Path(__file__).resolve().parents[1] / "tests" / "vectors"
CORPUS = VECTORS / "policy_corpus.json"
PUBLIC = VECTORS / "public_cells.json"


def load() -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(label, code) of the risky and the everyday snippets."""
    corpus = json.loads(CORPUS.read_text())
    return tuple(  # type: ignore[return-value]
        [(e["label"], "\n".join(e["code"])) for e in corpus[kind]] for kind in ("risky", "everyday")
    )


def hundred_lines(everyday: list[tuple[str, str]]) -> str:
    """Whole everyday snippets (no magics) until the cell has 100 lines, padded with blank
    lines between snippets: plain Python the analysis reads to the end."""
    lines: list[str] = []
    for _, code in everyday:
        block = code.splitlines()
        if any(line.startswith(("%", "!")) for line in block):
            continue
        if len(lines) + len(block) > 100:
            break
        lines += block
    lines += [""] * (100 - len(lines))
    cell = "\n".join(lines)
    ast.parse(cell)  # a cell that does not parse would be classified at once
    return cell


def public_cells() -> list[dict]:
    return json.loads(PUBLIC.read_text())["cells"]


def joined_cells(cells: list[dict], lines: int = 100) -> list[str]:
    """Real cells joined in notebook order until about ``lines`` lines (a cell magic must open
    its cell, so those are left out): the 100-line cells the figures are for."""
    joined: list[str] = []
    block: list[str] = []
    for cell in cells:
        source = cell["source"]
        if source and source[0].startswith("%%"):
            continue
        if block and len(block) + len(source) > lines:
            joined.append("\n".join(block))
            block = []
        block += source
    return [code for code in joined if len(code.splitlines()) >= lines * 0.8]


def median_ms(code: str, repeat: int, check=classify) -> float:
    check(code)  # warm the allow-list caches
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        check(code)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def public_figures(repeat: int) -> None:
    """The public notebooks' everyday cells that ask, and ``analyse`` on their 100-line cells."""
    cells = public_cells()
    everyday = [c for c in cells if c["label"] == "everyday"]
    for trials, asks in (("with trials", {KNOWN}), ("without trials", {KNOWN, "unproven"})):
        asked = sum(
            any(
                r.level in asks
                for r in analyse(
                    "\n".join(c["source"]),
                    known_functions=c.get("known_functions", ()),
                    known_types=c.get("known_types"),
                )
            )
            for c in everyday
        )
        print(
            f"public everyday cells that ask {trials}: {asked} of {len(everyday)}"
            f" ({asked / len(everyday):.1%})"
        )
    joined = joined_cells(cells)
    per = sorted(median_ms(code, repeat, analyse) for code in joined)
    p90 = per[min(len(per) - 1, int(0.9 * len(per)))]
    lines = statistics.median(len(code.splitlines()) for code in joined)
    print(
        f"analyse, real 100-line cells:     {statistics.median(per):.2f} ms median, "
        f"{p90:.2f} ms p90 ({len(per)} cells of {lines:.0f} lines, median of {repeat} runs each)"
    )
    # Cells with IPython's syntax (a magic, ``!cmd``, ``x?``) go through IPython's own input
    # transforms first, which tokenize the whole cell once per escape.
    plain = [code for code in joined if _python(code)]
    ipython = [code for code in joined if not _python(code)]
    for name, group in (("plain Python", plain), ("with IPython syntax", ipython)):
        if group:
            times = [median_ms(code, repeat, analyse) for code in group]
            parse = (
                [median_ms(code, repeat, transform_cell) for code in group]
                if group is ipython
                else []
            )
            share = (
                f", of which IPython's transform {statistics.median(parse):.2f} ms" if parse else ""
            )
            print(f"  {name}: {len(group)} cells, {statistics.median(times):.2f} ms median{share}")


def _python(code: str) -> bool:
    """Whether ``code`` is plain Python (``"\\s"`` in a string warns: not a reason to say no)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            ast.parse(code)
        except SyntaxError:
            return False
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=200, help="runs per median (default 200)")
    parser.add_argument("--verbose", action="store_true", help="print every reason")
    args = parser.parse_args()
    risky, everyday = load()

    missed = [label for label, code in risky if not classify(code)]
    asked = [(label, classify(code)) for label, code in everyday]
    asked = [(label, reasons) for label, reasons in asked if reasons]
    print(f"risky snippets that run unasked: {len(missed)} of {len(risky)}")
    for label in missed:
        print(f"  missed: {label}")
    share = len(asked) / len(everyday)
    print(f"everyday snippets that ask:      {len(asked)} of {len(everyday)} ({share:.1%})")
    for label, reasons in asked:
        print(f"  asked: {label}: {'; '.join(reasons)}")
    if args.verbose:
        for label, code in risky:
            print(f"  {label}: {'; '.join(classify(code))}")
    steps = json.loads(CORPUS.read_text())["side_effects"]
    levels = {
        level: sum(s["level"] == level for s in steps) for level in (KNOWN, "unproven", LIKELY)
    }
    print(f"side-effect steps by level:      {levels} of {len(steps)}")
    public_figures(max(20, args.repeat // 4))

    cell = hundred_lines(everyday)
    assert classify(cell) == [], classify(cell)
    print(f"classify, 100-line everyday cell: {median_ms(cell, args.repeat):.2f} ms (median)")
    per = sorted(median_ms(code, max(5, args.repeat // 20)) for _, code in everyday)
    print(
        f"classify, per everyday snippet:   {statistics.median(per):.3f} ms median, "
        f"{per[-1]:.3f} ms slowest ({len(per)} snippets)"
    )


if __name__ == "__main__":
    main()
