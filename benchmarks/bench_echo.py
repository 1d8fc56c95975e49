"""What the echo check costs per answer, and that it does not grow with the
chat.

Builds a chat request as the server does (the chat's system prompt with two project rules, a
context of about ``--context`` characters, ``--exchanges`` earlier exchanges of about 1,500
characters each) and times :func:`chapyter_ext.guards.answers.clean_answer` on a 2,000-character
answer (prose and a code block), with the instructions built from the request each time, as
``ChatTurn`` does when an answer ends. Medians over ``--repeat`` runs, in milliseconds, for a
chat of 1 exchange and one of ``--exchanges``, and their ratio (which should stay near 1: the
chat's turns are not compared).

Not a test: run it by hand from the repository's root,
``python -m benchmarks.bench_echo [--context N] [--exchanges N] [--repeat N]``.
"""

from __future__ import annotations

import argparse
import statistics
import time

from chapyter_ext.chat.prompts import CHAT_SYSTEM_PROMPT
from chapyter_ext.guards.answers import clean_answer
from chapyter_ext.guards.echo import Instructions, request_instructions
from chapyter_ext.messages import build_messages
from chapyter_ext.rules import ProjectRules, RuleFile, with_rules

RULES = ProjectRules(
    files=(RuleFile("AGENTS.md", "Use method chains.\nNever print DataFrames whole."),)
)
PROSE = (
    "The frame groups by region and sums the revenue of each, then sorts the totals from the "
    "largest down, so the first bar of the chart is the region that sold the most."
)
CODE = "totals = sales.groupby('region')['revenue'].sum().sort_values(ascending=False)\ntotals"


def context(chars: int) -> str:
    """A kernel-state text of about ``chars`` characters, shaped like the chat's."""
    lines = ["Notebook: sales.ipynb (40 cells; the active cell is the 12th cell)", ""]
    lines += ["Active cell, the 12th cell (code):", CODE, "", "Variables (most recent first):"]
    n = 0
    while sum(len(line) + 1 for line in lines) < chars:
        lines.append(
            f"- frame_{n} (DataFrame): DataFrame 1000 rows x 4 columns: a_{n} (int64), "
            f"b_{n} (float64), c_{n} (object), d_{n} (datetime64[ns])"
        )
        n += 1
    return "\n".join(lines)


def answer(chars: int = 2000) -> str:
    """An answer of about ``chars`` characters: prose, a code block, prose."""
    parts = []
    while sum(len(p) for p in parts) < chars:
        parts += [PROSE, f"```python\n{CODE}\n```"]
    return "\n\n".join(parts)


def history(exchanges: int) -> list[dict[str, str]]:
    turns = []
    for i in range(exchanges):
        turns.append({"role": "user", "content": f"How are the totals sorted? ({i})"})
        turns.append({"role": "assistant", "content": answer(1500)})
    return turns


def median_ms(text: str, ctx: str, exchanges: int, repeat: int) -> float:
    messages = with_rules(
        build_messages("Why?", ctx, history=history(exchanges), system=CHAT_SYSTEM_PROMPT), RULES
    )
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        clean_answer(text, Instructions(request_instructions(messages)))
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--context", type=int, default=6000)
    parser.add_argument("--exchanges", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()
    ctx, text = context(args.context), answer()
    median_ms(text, ctx, 1, 5)  # warm: IPython's transformer, regexes
    one = median_ms(text, ctx, 1, args.repeat)
    many = median_ms(text, ctx, args.exchanges, args.repeat)
    print(f"context {len(ctx)} chars, answer {len(text)} chars, {args.repeat} runs")
    print(
        f"1 exchange: {one:.3f} ms; {args.exchanges} exchanges: {many:.3f} ms; "
        f"ratio {many / one:.2f}"
    )


if __name__ == "__main__":
    main()
