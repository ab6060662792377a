"""A no-op MCP server on the Python SDK (`mcp` 2.x, `MCPServer`): one tool, `noop`, no
arguments, answering the text "ok". Run by `drive.py` to capture its answers (README.md)."""

from mcp.server import MCPServer

server = MCPServer("noop")


@server.tool(description="Does nothing.")
def noop() -> str:
    return "ok"


if __name__ == "__main__":
    server.run("stdio")
