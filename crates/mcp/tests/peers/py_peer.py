"""A Python MCP server for sidewire-mcp's real-peer tests, built on PyPI's `mcp` 2.x (`MCPServer`).

Installed at a pinned version by .ci/mcp-peers/install.sh; run as `python py_peer.py` (stdio),
`python py_peer.py sse PORT` (GET /sse, POST /messages/) or `python py_peer.py streamable-http
PORT` (/mcp), always on 127.0.0.1.
It offers tools that exercise plain calls, progress, roots and elicitation, one prompt and one
resource template.
"""

import asyncio

from pydantic import BaseModel

from mcp.server import MCPServer
from mcp.server.mcpserver import Context

srv = MCPServer("py-peer")


@srv.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@srv.tool()
def echo(message: str) -> str:
    """Echo the message back."""
    return f"echo: {message}"


@srv.tool()
async def slow(steps: int, ctx: Context) -> str:
    """Take a while, reporting progress after each step."""
    for i in range(1, steps + 1):
        await asyncio.sleep(0.1)
        await ctx.report_progress(i, steps, f"step {i}")
    return f"done after {steps} steps"


@srv.tool()
async def roots(ctx: Context) -> str:
    """List the client's roots, one URI a line."""
    result = await ctx.session.list_roots()
    return "\n".join(str(root.uri) for root in result.roots)


class Favourite(BaseModel):
    colour: str
    number: int = 7


@srv.tool()
async def ask(ctx: Context) -> str:
    """Ask the user for a colour (and a number, which has a default)."""
    result = await ctx.elicit("What is your favourite colour?", Favourite)
    if result.action == "accept":
        return f"{result.data.colour} {result.data.number}"
    return result.action


@srv.prompt()
def greet(name: str) -> str:
    """Greet someone."""
    return f"Say hello to {name}"


@srv.resource("peer://note/{key}")
def note(key: str) -> str:
    """A note by key."""
    return f"note {key}"


if __name__ == "__main__":
    import sys

    mode = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    if mode == "stdio":
        srv.run("stdio")
    else:
        srv.run(mode, host="127.0.0.1", port=int(sys.argv[2]))
