"""Benchmarks of the kernel side: `%load_ext chapyter_ext` and the overhead of `%%ai`.

Run: .venv/bin/python benchmarks/bench_magic.py [--runs N]

1. load: median wall time of `%load_ext chapyter_ext`, each sample in a fresh Python process
   with IPython already imported (as in a kernel), so nothing is cached between samples.
2. overhead: median time of a `%%ai` cell with a 100-variable namespace (DataFrames, arrays,
   lists, strings) against the zero-latency loopback server, minus the median time of the same
   streamed request made directly with the `openai` client. What is left is what chapyter-ext
   adds: context, prompt, streaming display, code extraction, syntax check, payload.
"""

from __future__ import annotations

import argparse
import io
import json
import statistics
import subprocess
import sys
import time
from contextlib import redirect_stdout

LOAD_SNIPPET = """
import time
from IPython.core.interactiveshell import InteractiveShell
shell = InteractiveShell.instance()
t = time.perf_counter()
shell.run_line_magic("load_ext", "chapyter_ext")
print(time.perf_counter() - t)
"""


def bench_load(runs: int) -> list[float]:
    samples = []
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, "-c", LOAD_SNIPPET], capture_output=True, text=True, check=True
        )
        samples.append(float(out.stdout.strip().splitlines()[-1]))
    return samples


def make_namespace(shell) -> None:
    import numpy as np
    import pandas as pd

    ns = shell.user_ns
    for i in range(40):
        ns[f"df_{i}"] = pd.DataFrame({"a": range(100), "b": [f"s{j}" for j in range(100)]})
    for i in range(20):
        ns[f"arr_{i}"] = np.arange(1000)
    for i in range(20):
        ns[f"items_{i}"] = list(range(500))
    for i in range(20):
        ns[f"text_{i}"] = "hello world " * 50


def bench_overhead(runs: int) -> tuple[list[float], list[float]]:
    from IPython.core.interactiveshell import InteractiveShell

    from chapyter_ext.llm import Endpoint, complete
    from chapyter_ext.testing.openai_server import FakeOpenAIServer, Reply

    answer = "```python\nimport numpy as np\nprint(np.mean(arr_1))\n```"
    with FakeOpenAIServer() as server:
        server.default_reply = Reply(content=answer, chunk_size=16)
        shell = InteractiveShell.instance()
        shell.run_line_magic("load_ext", "chapyter_ext")
        shell.run_line_magic("config", f"Chapyter.base_url = {server.base_url!r}")
        shell.run_line_magic("config", "Chapyter.api_key = 'sk-bench'")
        shell.run_line_magic("config", "Chapyter.model = 'fake-model'")
        make_namespace(shell)
        endpoint = Endpoint(base_url=server.base_url, api_key="sk-bench", model="fake-model")
        messages = [{"role": "user", "content": "mean of arr_1"}]
        magic, direct = [], []
        for i in range(runs + 3):
            t = time.perf_counter()
            with redirect_stdout(io.StringIO()):
                shell.run_cell_magic("ai", "", "mean of arr_1")
            m = time.perf_counter() - t
            t = time.perf_counter()
            complete(endpoint, messages, on_token=lambda _: None)
            d = time.perf_counter() - t
            if i >= 3:  # warm-up: first client creation, first imports
                magic.append(m)
                direct.append(d)
        return magic, direct


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    load = bench_load(max(5, args.runs // 3))
    magic, direct = bench_overhead(args.runs)
    ms = 1000
    result = {
        "load_ext_median_ms": round(statistics.median(load) * ms, 2),
        "ai_cell_median_ms": round(statistics.median(magic) * ms, 2),
        "direct_request_median_ms": round(statistics.median(direct) * ms, 2),
        "ai_overhead_median_ms": round(
            (statistics.median(magic) - statistics.median(direct)) * ms, 2
        ),
        "runs": args.runs,
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
