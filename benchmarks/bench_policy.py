"""How sound and how fast the agent's approval policy is under ``risky``.

Reads the corpus the tests read (``tests/vectors/policy_corpus.json``) and prints: how many
disguised risky snippets would run unasked (target: none), how many everyday analysis snippets
would ask (target: at most 5%), and what ``classify`` costs: for a 100-line everyday cell made of
whole corpus snippets (median over ``--repeat`` runs; target: under 2 ms) and per snippet (the
median and the slowest of the everyday snippets' medians). Not a test: run it by hand from the
repository's root, ``python benchmarks/bench_policy.py [--repeat N] [--verbose]``.
"""

from __future__ import annotations

import argparse
import ast
import json
import statistics
import time
from pathlib import Path

from chapyter_ext.policy import classify

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "vectors" / "policy_corpus.json"


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


def median_ms(code: str, repeat: int) -> float:
    classify(code)  # warm the allow-list caches
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        classify(code)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


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
