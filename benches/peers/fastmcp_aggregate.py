#!/usr/bin/env python3
"""The aggregator `--bench mcp_server` measures sidewire's gateway against (row
`aggregate_fastmcp`): FastMCP (PyPI `fastmcp==4.2.3`) serving, over Streamable HTTP, the tools of
two stdio servers mounted under the namespaces `a` and `b` (`a_noop`, `b_noop`). Run it with the
venv `$SIDEWIRE_BENCH_BRIDGES/fastmcp` (the bench's docs say how to make it).

Usage:
  python fastmcp_aggregate.py PORT COMMAND [ARG...]

Each upstream is `COMMAND ARG...`, started once and kept (a `StdioTransport`, whose `keep_alive`
is on by default, behind `create_proxy`): the composition FastMCP's docs show for proxies. Not
`fastmcp run mcp.json` with the two servers in an MCPConfig: that builds its composite anew for
every request, starting and initializing both upstreams each time (`MCPConfigTransport.
connect_session` in 4.2.3), which would measure process starts, not aggregation.
Streamable HTTP at http://127.0.0.1:PORT/mcp (uvicorn), sessions on; logging at WARNING.
"""

import sys

from fastmcp import FastMCP
from fastmcp.client.transports import StdioTransport
from fastmcp.server import create_proxy

port, command, args = int(sys.argv[1]), sys.argv[2], sys.argv[3:]

server = FastMCP("aggregate")
for name in ("a", "b"):
    upstream = create_proxy(StdioTransport(command, list(args)), name=f"upstream-{name}")
    server.mount(upstream, namespace=name)

server.run(
    transport="http",
    host="127.0.0.1",
    port=port,
    log_level="WARNING",
    show_banner=False,
)
