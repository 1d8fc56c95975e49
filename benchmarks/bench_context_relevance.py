"""Does the context carry what the request needs? Situations in a real IPython shell.

For each situation of ``benchmarks/context_situations.py``: run its hidden setup (no history:
what a file load would define) and its cells (with history) in an ``InteractiveShell`` with
chapyter-ext loaded, send the request through the real ``%%ai --no-run`` path to the loopback
model, and read the request it received. Scored: the fraction of needed strings present in
what was sent, overall, for strings visible in the cells' code, and for strings only the kernel
knows; secrets that appear (must be none); the request's size; the time ``kernel_context``
takes (cold: the first call after the setup; warm: again). The same situations through the
chat's path (the kernel's ``describe_variables`` as JSON, assembled by the server's
``chat_context`` with the message), and without the request (``kernel_context`` ordered by use
and recency only) for comparison. Then the warm summary over 100 variables (``bench_context``'s
namespace). Not a test: run it by hand from the repository's root,
``python -m benchmarks.bench_context_relevance [--verbose NAME]``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import re
import statistics
import sys
import time

from IPython.core.interactiveshell import InteractiveShell
from traitlets.config import Config

from benchmarks.context_situations import SITUATIONS
from chapyter_ext.context import describe_variables, kernel_context, last_error_summary
from chapyter_ext.context.fact_cache import CACHE
from chapyter_ext.context.notebook import NotebookSnapshot, chat_context
from chapyter_ext.redact import Redactor
from chapyter_ext.testing.openai_server import FakeOpenAIServer, Reply

API_KEY = "sk-bench-relevance-Zq81Lm20Xc55Vb"
BUDGET = 6000


def fresh_shell(base_url: str) -> InteractiveShell:
    """A new shell with in-memory history and chapyter-ext pointed at the loopback model."""
    InteractiveShell.clear_instance()
    config = Config()
    config.HistoryManager.hist_file = ":memory:"
    shell = InteractiveShell.instance(config=config)
    shell.run_line_magic("load_ext", "chapyter_ext")
    shell.run_line_magic("config", f"Chapyter.base_url = {base_url!r}")
    shell.run_line_magic("config", f"Chapyter.api_key = {API_KEY!r}")
    shell.run_line_magic("config", "Chapyter.model = 'bench-model'")
    shell.run_line_magic("config", f"Chapyter.context_budget = {BUDGET}")
    return shell


def quiet(func, *args, **kwargs):
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return func(*args, **kwargs)


def score(text: str, needs: list[str], visible: str) -> tuple[list[bool], list[bool]]:
    """(found?, visible in the code?) for each needed string."""
    found = [need in text for need in needs]
    in_code = [need.strip("'") in visible for need in needs]
    return found, in_code


def spelled(situation: dict) -> list[str]:
    """Variables the request spells out (the situation is then too easy: there must be none)."""
    return [
        need
        for need in situation["needs"]
        if need.isidentifier() and re.search(rf"\b{re.escape(need)}\b", situation["request"], re.I)
    ]


def last_error(shell: InteractiveShell, index: int) -> dict | None:
    """The error the last cell showed, as the browser reads it from the outputs."""
    summary = last_error_summary(shell)
    if not summary:
        return None
    ename, _, evalue = summary.split("\n", 1)[0].partition(": ")
    return {"cell_index": index, "ename": ename, "evalue": evalue, "traceback": []}


def run_situation(server: FakeOpenAIServer, situation: dict) -> dict:
    if spelled(situation):
        raise SystemExit(f"{situation['name']}: the request spells {spelled(situation)}")
    shell = fresh_shell(server.base_url)
    CACHE.entries.clear()
    if situation["hidden"]:
        quiet(shell.run_cell, situation["hidden"], store_history=False)
    for cell in situation["cells"]:
        quiet(shell.run_cell, cell, store_history=True)
    request = situation["request"]

    t = time.perf_counter()
    kernel_context(shell, budget=BUDGET, request=request)
    cold = (time.perf_counter() - t) * 1000
    warm_times = []
    for _ in range(5):
        t = time.perf_counter()
        kernel_context(shell, budget=BUDGET, request=request)
        warm_times.append((time.perf_counter() - t) * 1000)
    unaware = kernel_context(shell, budget=BUDGET)

    before = len(server.requests)
    quiet(shell.run_cell, f"%%ai --no-run\n{request}", store_history=True)
    sent = server.requests[before:]
    messages = sent[-1].body["messages"] if sent else []
    text = "\n".join(str(m.get("content", "")) for m in messages)

    # The chat: the kernel's snapshot as JSON, assembled by the server with the message.
    variables = json.loads(
        json.dumps(describe_variables(shell.user_ns, shell.user_ns_hidden, budget=BUDGET))
    )
    snapshot = NotebookSnapshot.parse(
        {
            "path": "bench.ipynb",
            "cell_count": len(situation["cells"]) + 1,
            "active": {"index": len(situation["cells"]), "type": "code", "source": ""},
            "above": [
                {"index": i, "type": "code", "source": c}
                for i, c in enumerate(situation["cells"][-5:])
            ],
            "variables": variables,
            "last_error": last_error(shell, len(situation["cells"]) - 1),
        }
    )
    chat = chat_context(snapshot, budget=BUDGET, redactor=Redactor([API_KEY]), request=request)
    chat_text = chat.text
    visible = "\n".join(situation["cells"])
    found, in_code = score(text, situation["needs"], visible)
    chat_found, _ = score(chat_text, situation["needs"], visible)
    unaware_found, _ = score(unaware, situation["needs"], visible)
    secrets = [*situation.get("secrets", ()), API_KEY]
    leaked = [s for s in secrets if s[:8] in text or s[:8] in chat_text]
    shell.reset(new_session=True)
    return {
        "name": situation["name"],
        "found": found,
        "in_code": in_code,
        "chat_found": chat_found,
        "unaware_found": unaware_found,
        "needs": situation["needs"],
        "chars": len(text),
        "context_chars": len(chat.text),
        "cold_ms": cold,
        "warm_ms": statistics.median(warm_times),
        "leaked": leaked,
        "text": text,
    }


def warm_summary_ms(repeat: int = 50) -> tuple[float, float]:
    """``kernel_context`` warm over bench_context's 100 variables: the median, and of that
    the variables' facts (cache look-ups) and their section."""
    from benchmarks.bench_context import namespace, shell_with
    from chapyter_ext.context.assemble import live_facts, rank
    from chapyter_ext.context.kernel_state import user_variables
    from chapyter_ext.context.relevance import request_terms
    from chapyter_ext.context.selection import variables_section

    InteractiveShell.clear_instance()
    shell = shell_with(namespace(False))
    request = "average price per city in the orders"
    r = Redactor()
    variables = user_variables(shell.user_ns, shell.user_ns_hidden)
    terms = request_terms(request)

    def summary():
        facts = live_facts(variables, r)
        variables_section(rank(facts, terms), 4200, r, terms=terms, focused=True)

    def whole():
        kernel_context(shell, request=request)

    out = []
    for func in (summary, whole):
        func()
        times = []
        for _ in range(repeat):
            t = time.perf_counter()
            func()
            times.append((time.perf_counter() - t) * 1000)
        out.append(statistics.median(times))
    return out[0], out[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--verbose", default="", help="print the request of situations matching")
    args = parser.parse_args(argv)
    results = []
    with FakeOpenAIServer() as server:
        server.default_reply = Reply(content="```python\npass\n```")
        for situation in SITUATIONS:
            result = run_situation(server, situation)
            results.append(result)
            missing = [n for n, f in zip(result["needs"], result["found"]) if not f]
            chat_missing = [n for n, f in zip(result["needs"], result["chat_found"]) if not f]
            mark = "ok " if not missing and not result["leaked"] else "-- "
            print(
                f"{mark}{result['name'][:52]:52} {result['chars']:6,} chars "
                f"cold {result['cold_ms']:6.1f} ms warm {result['warm_ms']:5.2f} ms"
                + (f"  missing {missing}" if missing else "")
                + (f"  chat missing {chat_missing}" if chat_missing else "")
                + (f"  LEAKED {result['leaked']}" if result["leaked"] else "")
            )
            if args.verbose and args.verbose in result["name"]:
                print(result["text"])

    def rate(key: str, which=None) -> tuple[int, int]:
        hits = total = 0
        for res in results:
            for i, ok in enumerate(res[key]):
                if which is None or res["in_code"][i] == which:
                    total += 1
                    hits += ok
        return hits, total

    print(f"\n{len(results)} situations, budget {BUDGET:,} characters")
    for label, key in (
        ("%%ai (request-aware)", "found"),
        ("chat (request-aware)", "chat_found"),
        ("%%ai without the request", "unaware_found"),
    ):
        overall, code, kernel = rate(key), rate(key, True), rate(key, False)
        print(
            f"{label:26} facts {overall[0]}/{overall[1]} ({overall[0] / overall[1]:.0%}), "
            f"code-visible {code[0]}/{code[1]} ({code[0] / max(1, code[1]):.0%}), "
            f"kernel-only {kernel[0]}/{kernel[1]} ({kernel[0] / max(1, kernel[1]):.0%})"
        )
    leaks = sum(len(r["leaked"]) for r in results)
    print(f"secrets sent: {leaks}")
    chars = [r["chars"] for r in results]
    print(
        f"request sent (all messages): median {statistics.median(chars):,.0f} chars, "
        f"max {max(chars):,}; chat context median "
        f"{statistics.median(r['context_chars'] for r in results):,.0f} chars"
    )
    print(
        f"kernel_context: cold median {statistics.median(r['cold_ms'] for r in results):.1f} ms"
        f" (max {max(r['cold_ms'] for r in results):.1f}), warm median "
        f"{statistics.median(r['warm_ms'] for r in results):.2f} ms"
    )
    summary, whole = warm_summary_ms()
    print(
        f"warm, 100 variables: the summary (facts + variables section) {summary:.2f} ms, "
        f"the whole kernel_context {whole:.2f} ms (medians)"
    )
    return 0 if leaks == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
