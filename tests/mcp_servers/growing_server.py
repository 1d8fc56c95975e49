"""A small MCP server made with the official SDK, for the one behaviour no registry server shows
on demand: its tool list changes (``grow`` adds ``added`` and says so with
``notifications/tools/list_changed``)."""

from mcp.server.mcpserver import Context, MCPServer

app = MCPServer("growing")


def added() -> str:
    """A tool that exists only after grow ran."""
    return "I was added"


@app.tool()
async def grow(ctx: Context) -> str:
    """Add the tool 'added' and tell the client its tool list changed."""
    app.add_tool(added, name="added")
    await ctx.session.send_tool_list_changed()
    return "grown"


if __name__ == "__main__":
    app.run()
