"""What an MCP tool call costs the agent beyond the tool's own work, and the first call.

Against real servers (installed by ``scripts/test.sh``): ``mcp-server-time`` (Python, stdio)
and ``@modelcontextprotocol/server-everything`` (node, stdio). Prints, as medians over
``--repeat`` calls:

- **call overhead**: a call through the agent's path (the tool record's ``call``, the server's
  ``call`` with its timeout, the result turned into what the model sees, redacted and within
  the budget), less the same call made straight on the SDK's ``ClientSession`` (the tool's own
  work plus the protocol's round trip): what chapyter-ext adds. Target: < 20 ms.
- **round trip**: the whole call through the agent's path for ``echo`` (whose own work is nil:
  this is all overhead, the SDK's and the transport's included) and ``get_current_time``.
- **first call**: from nothing to a first result: starting the Python stdio server, its
  handshake, listing its tools, and the call (a fresh server each time, ``--starts`` times).
  Target: < 2 s.

Not a test: run it by hand from the repository's root,
``python benchmarks/bench_mcp.py [--repeat N] [--starts N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from chapyter_ext.agent.tools.mcp import McpToolSource
from chapyter_ext.mcp import McpServers
from chapyter_ext.redact import Redactor
from tests.mcp_servers import everything_server, time_server


def ms(seconds: list[float]) -> str:
    return f"{statistics.median(seconds) * 1000:.2f} ms"


async def calls(repeat: int) -> dict[str, list[float]]:
    servers = McpServers.from_config(
        {"mcpServers": {"time": time_server(), "every": everything_server()}}, files=[]
    )
    redactor = Redactor(["sk-benchmark-secret-0123456789"])
    try:
        tools = {t.name: t for t in (await McpToolSource(servers).turn_tools()).tools}
        cases = {
            "every__echo": {"message": "hello"},
            "time__get_current_time": {"timezone": "Europe/Paris"},
        }
        out: dict[str, list[float]] = {}
        for name, arguments in cases.items():
            tool = tools[name]
            session = servers.servers[tool.server]._session
            for _ in range(5):  # warm both paths
                await tool.call(arguments)
            ours, raw = [], []
            for _ in range(repeat):
                start = time.perf_counter()
                await session.call_tool(tool.tool, arguments)
                raw.append(time.perf_counter() - start)
                start = time.perf_counter()
                output = await tool.call(arguments)
                tool.observe(output, budget=4000, images=False, redactor=redactor)
                ours.append(time.perf_counter() - start)
            out[f"{name} agent path"] = ours
            out[f"{name} SDK session"] = raw
            out[f"{name} overhead"] = [a - b for a, b in zip(ours, raw)]
        return out
    finally:
        await servers.close()


async def first_call() -> float:
    servers = McpServers.from_config({"mcpServers": {"time": time_server()}}, files=[])
    try:
        start = time.perf_counter()
        found = await McpToolSource(servers).turn_tools()
        tool = next(t for t in found.tools if t.tool == "get_current_time")
        output = await tool.call({"timezone": "UTC"})
        elapsed = time.perf_counter() - start
        assert not output.failed, output
        return elapsed
    finally:
        await servers.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=200, help="calls per tool (default 200)")
    parser.add_argument("--starts", type=int, default=7, help="fresh server starts (default 7)")
    args = parser.parse_args()
    results = asyncio.run(calls(args.repeat))
    for name, values in results.items():
        p90 = statistics.quantiles(values, n=10)[-1] * 1000
        print(f"{name:42s} median {ms(values):>10s}   p90 {p90:.2f} ms")
    starts = [asyncio.run(first_call()) for _ in range(args.starts)]
    print(
        f"{'first call (start, list, call) time server':42s} median {ms(starts):>10s}   "
        f"max {max(starts) * 1000:.0f} ms"
    )


if __name__ == "__main__":
    main()
