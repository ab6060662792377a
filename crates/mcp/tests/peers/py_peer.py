"""A Python MCP server for sidewire-mcp's real-peer tests, built on PyPI's `mcp` 2.x (`MCPServer`).

Installed at a pinned version by .ci/mcp-peers/install.sh; run as `python py_peer.py` (stdio),
`python py_peer.py sse PORT` (GET /sse, POST /messages/) or `python py_peer.py streamable-http
PORT [stateless] [json]` (/mcp; `stateless` runs it with `stateless_http=True`, `json` with
`json_response=True`), always on 127.0.0.1.
It offers tools that exercise plain calls, progress, roots, elicitation and sampling, one prompt
and one resource template. `roots` and `ask` send server→client requests, which only the legacy
era has; `pick`, `where` and `sample` ask through resolvers, which the SDK turns into a
multi-round-trip `InputRequiredResult` in the modern era (2026-07-28) and into those requests in
the legacy one.
"""

import asyncio
from typing import Annotated

from mcp_types import CreateMessageResult, ListRootsResult, SamplingMessage, TextContent

from pydantic import BaseModel

from mcp.server import MCPServer
from mcp.server.mcpserver import Context, Elicit, ListRoots, Resolve, Sample

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


def favourite() -> Elicit[Favourite]:
    return Elicit("What is your favourite colour?", Favourite)


@srv.tool()
async def pick(choice: Annotated[Favourite, Resolve(favourite)]) -> str:
    """Ask the user for a colour through a resolver (input_required in the modern era)."""
    return f"{choice.colour} {choice.number}"


def client_roots() -> ListRoots:
    return ListRoots()


@srv.tool(name="where")
async def where(found: Annotated[ListRootsResult, Resolve(client_roots)]) -> str:
    """List the client's roots through a resolver, one URI a line."""
    return "\n".join(str(root.uri) for root in found.roots)


def ask_model(prompt: str) -> Sample:
    return Sample([SamplingMessage(role="user", content=TextContent(type="text", text=prompt))], max_tokens=100)


@srv.tool()
async def sample(prompt: str, answer: Annotated[CreateMessageResult, Resolve(ask_model)]) -> str:
    """Ask the client's model the prompt through a resolver (input_required in the modern era)."""
    return f"sampled: {getattr(answer.content, 'text', '')}"


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
    elif mode == "streamable-http":
        flags = sys.argv[3:]
        srv.run(
            mode,
            host="127.0.0.1",
            port=int(sys.argv[2]),
            stateless_http="stateless" in flags,
            json_response="json" in flags,
        )
    else:
        srv.run(mode, host="127.0.0.1", port=int(sys.argv[2]))
