"""What checking an answer's numbers costs, and that it grows with the text, not its square.

Builds a seen output of about ``--mb`` megabytes shaped like a printed DataFrame (an index, a
decimal and a thousands-separated column) and an answer of about ``--chars`` characters whose
numbers are rounded values of that output and invented ones, then times
:class:`chapyter_ext.numbers.SeenIndex` (reading every seen number once) and
:func:`chapyter_ext.numbers.check_numbers` against the built index. Medians over ``--repeat``
runs, in milliseconds, at the full size and at a tenth of it, and their ratios (near 10 when
the cost is linear).

Not a test: run it by hand from the repository's root,
``python -m benchmarks.bench_numbers [--mb N] [--chars N] [--repeat N]``.
"""

from __future__ import annotations

import argparse
import statistics
import time

from chapyter_ext.numbers import FOUND, Seen, SeenIndex, check_numbers

ROW_CHARS = 30


def output(chars: int) -> str:
    """A printed table of about ``chars`` characters."""
    rows = max(1, chars // ROW_CHARS)
    return "\n".join(f"{i:>7}  {i * 0.731:>10.4f}  {i * 1.5:>9,.1f}" for i in range(rows))


def answer(chars: int, rows: int) -> str:
    """Prose of about ``chars`` characters: rounded values of the output, and invented ones."""
    parts: list[str] = []
    i = 0
    while sum(len(p) + 1 for p in parts) < chars:
        row = (i * 7919) % rows
        parts.append(f"Row {row} has a value of {row * 0.731:.2f} and a total of {i + 0.37:.2f}.")
        i += 1
    return " ".join(parts)


def medians(seen_chars: int, answer_chars: int, repeat: int) -> tuple[float, float, float]:
    seen = [Seen("output", "cell [1]", output(seen_chars))]
    text = answer(answer_chars, max(1, seen_chars // ROW_CHARS))
    index_times, check_times = [], []
    found = 0.0
    for _ in range(repeat):
        start = time.perf_counter()
        index = SeenIndex(seen)
        index_times.append(time.perf_counter() - start)
        start = time.perf_counter()
        verdicts = check_numbers(text, index)
        check_times.append(time.perf_counter() - start)
        found = sum(v.status == FOUND for v in verdicts) / len(verdicts)
    return statistics.median(index_times) * 1000, statistics.median(check_times) * 1000, found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=1.0)
    parser.add_argument("--chars", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    seen_chars = int(args.mb * 1_000_000)
    full = medians(seen_chars, args.chars, args.repeat)
    tenth = medians(seen_chars // 10, args.chars // 10, args.repeat)
    print(f"seen {seen_chars:,} chars, answer {args.chars:,} chars, {args.repeat} runs")
    print(f"index: {full[0]:.1f} ms (a tenth: {tenth[0]:.1f} ms, ratio {full[0] / tenth[0]:.1f})")
    print(f"check: {full[1]:.1f} ms (a tenth: {tenth[1]:.1f} ms, ratio {full[1] / tenth[1]:.1f})")
    print(f"share found: {full[2]:.2f}")


if __name__ == "__main__":
    main()
