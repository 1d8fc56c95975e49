"""What an outside agent's ``run_code`` costs through chapyter-ext's MCP server beyond the
kernel's own time.

Run: .venv/bin/python benchmarks/bench_outside.py [--calls N]

A real ``jupyter server`` (``chapyter_ext.testing.jupyter_process``) with ``agent_policy``
``risky`` (harmless code runs unasked, as an approved call would after the click); this
process plays both ends: the official ``mcp`` SDK client (streamable HTTP, a bearer token) and
the JupyterLab page (``tests/server/outside_browser.py``: subscribed to ``outside/events``, it
runs each call's code in a real kernel, jupyter_client, and times that run itself). Overhead =
the client's round trip for the tool call less the page's own execute time. A few calls warm up
first (the SDK's server starts on the first request).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from chapyter_ext.testing.jupyter_process import JupyterProcess
from tests.kernel_harness import Kernel
from tests.server.kernel_browser import KernelThread
from tests.server.outside_browser import NOTEBOOK, OutsideBrowser, mcp_session

WARM_UP = 5


async def measure(server: JupyterProcess, calls: int) -> tuple[list[float], list[float]]:
    kernel = Kernel({})
    thread = KernelThread()
    auth = {"Authorization": f"token {server.token}"}
    overheads, trips = [], []
    try:
        browser = OutsideBrowser(server.base, auth, kernel=kernel, thread=thread)
        url = f"{server.base}chapyter-ext/mcp"
        async with browser, mcp_session(url, server.token, name="bench") as session:
            for i in range(WARM_UP + calls):
                code = f"total = sum(range({i}))\nprint(total)"
                started = time.perf_counter()
                result = await session.call_tool("run_code", {"notebook": NOTEBOOK, "code": code})
                trip = time.perf_counter() - started
                assert not result.is_error, result
                call_id = browser.calls[-1]["call_id"]
                if i >= WARM_UP:
                    trips.append(trip)
                    overheads.append(trip - browser.kernel_seconds[call_id])
    finally:
        thread.close()
        kernel.shutdown()
    return overheads, trips


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        server = JupyterProcess(
            home,
            "--Chapyter.agent_policy=risky",
            "--Chapyter.agent_max_steps=100",
            env={"OPENAI_API_KEY": "sk-bench-0123456789", "CHAPYTER_MODEL": "bench"},
        ).start()
        try:
            overheads, trips = asyncio.run(measure(server, args.calls))
        finally:
            server.stop()
    ms = [x * 1000 for x in sorted(overheads)]
    print(f"run_code through MCP, {len(ms)} calls")
    print(f"  overhead beyond the kernel: median {statistics.median(ms):.1f} ms, "
          f"p90 {ms[int(len(ms) * 0.9)]:.1f} ms")  # fmt: skip
    print(f"  whole round trip: median {statistics.median(trips) * 1000:.1f} ms")


if __name__ == "__main__":
    main()
