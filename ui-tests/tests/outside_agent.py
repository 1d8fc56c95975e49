"""An outside agent for the browser test: the official ``mcp`` SDK client over streamable HTTP
calls one tool of the Jupyter server's MCP endpoint and prints what came back as one JSON line:
``{"is_error", "text", "images"}``.

    python outside_agent.py URL TOKEN TOOL ARGUMENTS_JSON
"""

from __future__ import annotations

import asyncio
import json
import sys


async def main(url: str, token: str, tool: str, arguments: dict) -> None:
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client
    from mcp.types import Implementation

    headers = {"Authorization": f"Bearer {token}"}
    timeout = httpx2.Timeout(30.0, read=300.0)
    async with (
        create_mcp_http_client(headers=headers, timeout=timeout) as http,
        streamable_http_client(url, http_client=http) as streams,
        ClientSession(
            streams[0],
            streams[1],
            client_info=Implementation(name="claude-code", version="1.2"),
        ) as session,
    ):
        await session.initialize()
        result = await session.call_tool(tool, arguments)
    text = "\n".join(block.text for block in result.content if block.type == "text")
    images = sum(1 for block in result.content if block.type == "image")
    print(
        json.dumps(
            {
                "is_error": bool(
                    getattr(result, "is_error", None) or getattr(result, "isError", False)
                ),
                "text": text,
                "images": images,
            }
        )
    )


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])))
