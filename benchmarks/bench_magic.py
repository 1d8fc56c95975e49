"""Benchmarks of the kernel side: `%load_ext chapyter_ext`, the first `%%ai` of a fresh kernel,
and the overhead of a warm `%%ai`, each compared with a raw request in the same run.

Run: .venv/bin/python benchmarks/bench_magic.py [--runs N] [--only load,first,warm]

1. load: `%load_ext chapyter_ext` in a fresh Python process with IPython already imported (as
   in a kernel), so nothing is cached between samples; and how long a trivial cell run right
   after it takes while the background warm-up (`chapyter_ext.magic.warmup`) is busy, which shows
   whether the kernel stays responsive.
2. first: the first `%%ai` of a fresh process (`%load_ext`, one small cell, then `%%ai`), once
   right after `%load_ext` (as "Run all" does) and once after a pause (a user writing the
   request; 2 s by default), with `Chapyter.warm_up` on and off. Compared with the same
   request as a raw HTTP POST on a new connection in the same process (the physical limit:
   the model itself).
3. warm: a `%%ai` cell in a 100-variable namespace (one 1,000,000-row DataFrame, 39 small ones,
   20 arrays, 20 lists, 20 strings) against the zero-latency loopback server, compared with
   the very request it sent (the recorded body) POSTed raw on one kept-alive connection, and
   with the same messages through the `openai` client. The difference of the medians is
   chapyter-ext's overhead: summary, prompt, SDK, progress, code extraction, syntax check,
   payload.

Every model answer comes from `chapyter_ext.testing.openai_server` (zero latency), in this
process for `warm` and in the parent process for `first` (the child is the fresh kernel).
"""

from __future__ import annotations

import argparse
import http.client
import io
import json
import os
import statistics
import subprocess
import sys
import time
from contextlib import redirect_stdout
from urllib.parse import urlsplit

ANSWER = "```python\nimport numpy as np\nprint(np.mean(arr_1))\n```"

LOAD_SNIPPET = """
import sys, time
from traitlets.config import Config
from IPython.core.interactiveshell import InteractiveShell
config = Config()
config.Chapyter.warm_up = sys.argv[1] == "1"
shell = InteractiveShell.instance(config=config)
t = time.perf_counter()
shell.run_line_magic("load_ext", "chapyter_ext")
load = time.perf_counter() - t
t = time.perf_counter()
shell.run_cell("x = sum(range(1000))")
print(load, time.perf_counter() - t)
"""

# The fresh kernel of `first`: argv = pause (s), warm_up (0/1). Prints JSON.
FIRST_SNIPPET = r"""
import http.client, io, json, sys, time
from contextlib import redirect_stdout
from urllib.parse import urlsplit
from traitlets.config import Config
from IPython.core.interactiveshell import InteractiveShell

pause, warm = float(sys.argv[1]), sys.argv[2] == "1"
config = Config()
config.Chapyter.warm_up = warm
shell = InteractiveShell.instance(config=config)
t = time.perf_counter()
shell.run_line_magic("load_ext", "chapyter_ext")
load = time.perf_counter() - t
shell.run_cell("rain = [763, 16, 722]\ntotal = sum(rain)")
time.sleep(pause)
from chapyter_ext.magic import warmup
w = warmup.state
warm_s = w["finished"] - w["started"] if w["finished"] is not None else None
t = time.perf_counter()
with redirect_stdout(io.StringIO()):
    shell.run_cell_magic("ai", "", "mean of rain")
first = time.perf_counter() - t
t = time.perf_counter()
with redirect_stdout(io.StringIO()):
    shell.run_cell_magic("ai", "", "mean of rain")
second = time.perf_counter() - t
print(json.dumps({"load": load, "first": first, "second": second, "warm_up": warm_s}))
"""


class RawClient:
    """A chat completion as bytes on one kept-alive HTTP connection: no SDK, no parsing
    beyond reading the stream to its end. The physical limit of a request on this machine."""

    def __init__(self, base_url: str) -> None:
        parts = urlsplit(base_url)
        self._path = parts.path.rstrip("/") + "/chat/completions"
        self._conn = http.client.HTTPConnection(parts.hostname, parts.port)

    def post(self, body: bytes) -> bytes:
        headers = {"Content-Type": "application/json", "Authorization": "Bearer sk-bench"}
        self._conn.request("POST", self._path, body=body, headers=headers)
        response = self._conn.getresponse()
        data = response.read()
        if response.status != 200 or b"[DONE]" not in data:
            raise RuntimeError(f"raw request failed: {response.status} {data[:200]!r}")
        return data

    def close(self) -> None:
        self._conn.close()


def bench_load(runs: int) -> dict[str, list[float]]:
    samples: dict[str, list[float]] = {"load": [], "cell_after_load": [], "load_off": []}
    samples["cell_after_load_off"] = []
    for _ in range(runs):
        for warm, suffix in (("1", ""), ("0", "_off")):  # warm-up on, then off, in turn
            out = subprocess.run(
                [sys.executable, "-c", LOAD_SNIPPET, warm],
                capture_output=True,
                text=True,
                check=True,
            )
            a, b = out.stdout.strip().splitlines()[-1].split()
            samples["load" + suffix].append(float(a))
            samples["cell_after_load" + suffix].append(float(b))
    return samples


def bench_first(runs: int, pause: float) -> dict[str, dict[str, list[float]]]:
    from chapyter_ext.testing.openai_server import FakeOpenAIServer, Reply

    results: dict[str, dict[str, list[float]]] = {}
    with FakeOpenAIServer() as server:
        server.default_reply = Reply(content=ANSWER, chunk_size=16)
        env = dict(
            os.environ,
            OPENAI_BASE_URL=server.base_url,
            OPENAI_API_KEY="sk-bench",
            CHAPYTER_MODEL="fake-model",
        )
        cases = [("immediately", 0.0, "1"), ("after_pause", pause, "1"), ("no_warm_up", pause, "0")]
        for name, wait, warm in cases:
            first, second, raw, warmed = [], [], [], []
            for _ in range(runs):
                out = subprocess.run(
                    [sys.executable, "-c", FIRST_SNIPPET, str(wait), warm],
                    capture_output=True,
                    text=True,
                    env=env,
                )
                if out.returncode:
                    raise RuntimeError(out.stderr[-2000:])
                sample = json.loads(out.stdout.strip().splitlines()[-1])
                first.append(sample["first"])
                second.append(sample["second"])
                warmed.append(sample["warm_up"])
                # The request the first %%ai sent, raw, on a new connection (as its first was).
                body = json.dumps(server.requests[-1].body).encode()
                t = time.perf_counter()
                client = RawClient(server.base_url)
                client.post(body)
                raw.append(time.perf_counter() - t)
                client.close()
            results[name] = {"first": first, "second": second, "raw": raw, "warmed": warmed}
    return results


def make_namespace(shell) -> None:
    import numpy as np
    import pandas as pd

    ns = shell.user_ns
    rows = 1_000_000
    ns["sales"] = pd.DataFrame(
        {
            "day": pd.date_range("2020-01-01", periods=rows, freq="min"),
            "store": np.arange(rows) % 50,
            "amount": np.random.default_rng(0).random(rows) * 100,
            "region": pd.Categorical(
                np.array(["north", "south", "east", "west"])[np.arange(rows) % 4]
            ),
        }
    )
    for i in range(39):
        ns[f"df_{i}"] = pd.DataFrame({"a": range(100), "b": [f"s{j}" for j in range(100)]})
    for i in range(20):
        ns[f"arr_{i}"] = np.arange(1000)
    for i in range(20):
        ns[f"items_{i}"] = list(range(500))
    for i in range(20):
        ns[f"text_{i}"] = "hello world " * 50


def bench_warm(runs: int) -> dict[str, list[float]]:
    from IPython.core.interactiveshell import InteractiveShell

    from chapyter_ext.llm import Endpoint, complete
    from chapyter_ext.testing.openai_server import FakeOpenAIServer, Reply

    with FakeOpenAIServer() as server:
        server.default_reply = Reply(content=ANSWER, chunk_size=16)
        shell = InteractiveShell.instance()
        shell.run_line_magic("load_ext", "chapyter_ext")
        shell.run_line_magic("config", f"Chapyter.base_url = {server.base_url!r}")
        shell.run_line_magic("config", "Chapyter.api_key = 'sk-bench'")
        shell.run_line_magic("config", "Chapyter.model = 'fake-model'")
        make_namespace(shell)
        endpoint = Endpoint(base_url=server.base_url, api_key="sk-bench", model="fake-model")
        raw_client = RawClient(server.base_url)
        magic, raw, sdk = [], [], []
        for i in range(runs + 3):
            t = time.perf_counter()
            with redirect_stdout(io.StringIO()):
                shell.run_cell_magic("ai", "", "mean of arr_1")
            m = time.perf_counter() - t
            body = server.requests[-1].body
            encoded = json.dumps(body).encode()
            t = time.perf_counter()
            raw_client.post(encoded)
            r = time.perf_counter() - t
            t = time.perf_counter()
            complete(endpoint, body["messages"], on_token=lambda _: None)
            d = time.perf_counter() - t
            if i >= 3:  # warm-up: first client creation, first imports
                magic.append(m)
                raw.append(r)
                sdk.append(d)
        raw_client.close()
        return {"magic": magic, "raw": raw, "sdk": sdk}


def ms(values: list[float]) -> float:
    return round(statistics.median(values) * 1000, 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--first-runs", type=int, default=10)
    parser.add_argument(
        "--pause", type=float, default=2.0, help="seconds before the first %%ai (writing it)"
    )
    parser.add_argument("--only", default="load,first,warm")
    args = parser.parse_args()
    parts = set(args.only.split(","))
    result: dict = {"runs": args.runs}
    if "load" in parts:
        load = bench_load(max(5, args.runs // 3))
        result["load_ext_median_ms"] = ms(load["load"])
        result["cell_right_after_load_ext_median_ms"] = ms(load["cell_after_load"])
        result["load_ext_warm_up_off_median_ms"] = ms(load["load_off"])
        result["cell_right_after_load_ext_warm_up_off_median_ms"] = ms(load["cell_after_load_off"])
    if "first" in parts:
        first = bench_first(args.first_runs, args.pause)
        for name, samples in first.items():
            result[f"first_ai_{name}"] = {
                "first_ai_median_ms": ms(samples["first"]),
                "raw_request_median_ms": ms(samples["raw"]),
                "beyond_model_ms": round(ms(samples["first"]) - ms(samples["raw"]), 2),
                "second_ai_median_ms": ms(samples["second"]),
                # How long the warm-up took, in the samples where it was over by the %%ai.
                "warm_up_done_before_first_ai": sum(w is not None for w in samples["warmed"]),
                "warm_up_median_ms": ms([w for w in samples["warmed"] if w is not None] or [0]),
            }
        result["first_ai_pause_s"] = args.pause
    if "warm" in parts:
        warm = bench_warm(args.runs)
        result["warm_ai_cell_median_ms"] = ms(warm["magic"])
        result["warm_raw_post_median_ms"] = ms(warm["raw"])
        result["warm_sdk_request_median_ms"] = ms(warm["sdk"])
        result["warm_ai_overhead_vs_raw_ms"] = round(ms(warm["magic"]) - ms(warm["raw"]), 2)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
