"""What one inline-completion request costs the Jupyter server: wall time and CPU per request.

Run: .venv/bin/python benchmarks/bench_inline_completion.py [--requests 200]

Starts a real `jupyter server` with chapyter-ext and the loopback OpenAI-compatible model (in
its own process; it answers at once), then alternates, one at a time:

- ``direct``: the same streamed chat completion sent straight to the model (what the server
  itself sends upstream, same body), read to its end;
- ``route``: ``POST /chapyter-ext/complete`` through the Jupyter server, read to ``done``
  (``first_token`` is when the first ``token`` event arrived).

``overhead_ms`` is the median of ``route`` minus the median of ``direct``, measured in the same
run. ``server_cpu_ms_per_request`` is the Jupyter server process's user+system CPU time over
the ``route`` requests (from /proc), divided by their number. Everything on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import time

from loopback import JupyterServer, fake_model, get_json, jupyter_server
from tornado.httpclient import AsyncHTTPClient, HTTPRequest

from chapyter_ext.testing.openai_server import Reply

SUGGESTION = "upby('city').temp_c.mean()"
BODY = {
    "prefix": "import pandas as pd\nweather.gro",
    "suffix": "",
    "cells_above": ["weather = pd.read_csv('weather.csv')"],
    "variables": [
        {"name": "weather", "type": "DataFrame", "summary": "2 rows; columns: city, temp_c"}
    ],
    "language": "python",
    "editor": "bench",
}


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process (Linux /proc)."""
    with open(f"/proc/{pid}/stat") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "median_ms": round(statistics.median(ordered), 2),
        "p90_ms": round(ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))], 2),
        "min_ms": round(ordered[0], 2),
    }


async def measure(server: JupyterServer, fake_url: str, n: int) -> dict:
    client = AsyncHTTPClient()

    async def route() -> tuple[float, float]:
        started = time.monotonic()  # the reader's clock
        sse = await server.stream(client, "complete", BODY)
        ended = time.monotonic()
        assert sse.names[-1] == "done" and "".join(sse.tokens()) == SUGGESTION, sse.events
        return (sse.first_at("token") - started) * 1000, (ended - started) * 1000

    # The exact body the server sends upstream, taken from the model's record of it.
    await route()
    upstream = get_json(f"{fake_url}/_control/requests")["requests"][-1]["body"]

    async def direct() -> float:
        started = time.perf_counter()
        await client.fetch(
            HTTPRequest(
                f"{fake_url}/v1/chat/completions",
                method="POST",
                body=json.dumps(upstream),
                headers={"Content-Type": "application/json", "Authorization": "Bearer x"},
                streaming_callback=lambda chunk: None,
            )
        )
        return (time.perf_counter() - started) * 1000

    for _ in range(20):  # warm up both paths
        await route()
        await direct()
    route_first, route_total, direct_total = [], [], []
    cpu = 0.0
    for _ in range(n):
        direct_total.append(await direct())
        before = cpu_seconds(server.pid)
        first, total = await route()
        cpu += cpu_seconds(server.pid) - before
        route_first.append(first)
        route_total.append(total)
    return {
        "requests": n,
        "direct": summary(direct_total),
        "route_first_token": summary(route_first),
        "route_done": summary(route_total),
        "overhead_ms": round(statistics.median(route_total) - statistics.median(direct_total), 2),
        "server_cpu_ms_per_request": round(cpu * 1000 / n, 2),
        "loadavg": os.getloadavg(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200)
    args = parser.parse_args()
    reply = Reply(content=SUGGESTION, chunk_size=8).to_dict()
    with fake_model(reply) as fake_url, jupyter_server(f"{fake_url}/v1") as server:
        result = asyncio.run(measure(server, fake_url, args.requests))
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
