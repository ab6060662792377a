#!/usr/bin/env bash
# Installs the real MCP servers that sidewire-mcp's peer tests talk to, at pinned versions, into
# the directory given as $1. Needs only node 20 (npm) and python 3.11 (venv + pip) and the npm and
# PyPI registries. Safe to run again: a directory already holding these exact versions is kept.
#
# Layout (what crates/mcp/tests/it/peers.rs expects under SIDEWIRE_MCP_PEERS):
#   $1/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js
#   $1/py/bin/python            (a venv with mcp==$MCP_PY_VERSION)
#   $1/py/bin/mcp-server-time   (mcp-server-time==$TIME_VERSION in the same venv: a published
#                                server that speaks 2026-07-28; npm has none, see README.md)
#   $1/ts2/node_modules/@modelcontextprotocol/{server,node}
#                               (the TypeScript SDK v2 server packages and zod, for the TS peer
#                                of benches/benches/mcp_server.rs, benches/peers/ts_noop_server.mjs;
#                                a prefix of their own, so server-everything's zod is not touched)
#   $1/VERSIONS                 (written last, so a half-finished install is never taken as done)
set -euo pipefail

EVERYTHING_VERSION="2026.8.31"
MCP_PY_VERSION="2.3.0"
TIME_VERSION="2026.10.19"
TS_SERVER_VERSION="2.4.0"
TS_NODE_VERSION="2.1.2"
ZOD_VERSION="4.6.7"

dest="${1:?usage: $0 DIR}"
mkdir -p "$dest"
dest="$(cd "$dest" && pwd)"
want="server-everything=${EVERYTHING_VERSION} mcp=${MCP_PY_VERSION} mcp-server-time=${TIME_VERSION}"
want+=" ts-server=${TS_SERVER_VERSION} ts-node=${TS_NODE_VERSION} zod=${ZOD_VERSION}"

if [[ -f "$dest/VERSIONS" && "$(cat "$dest/VERSIONS")" == "$want" ]]; then
  echo "mcp peers already installed in $dest ($want)"
  exit 0
fi
rm -f "$dest/VERSIONS"

echo "installing @modelcontextprotocol/server-everything@${EVERYTHING_VERSION} into $dest/npm"
mkdir -p "$dest/npm"
npm install --prefix "$dest/npm" --no-audit --no-fund --loglevel=error \
  "@modelcontextprotocol/server-everything@${EVERYTHING_VERSION}"
entry="$dest/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
test -f "$entry" || { echo "server-everything entry point missing: $entry" >&2; exit 1; }

echo "installing @modelcontextprotocol/server@${TS_SERVER_VERSION} and node@${TS_NODE_VERSION} into $dest/ts2"
mkdir -p "$dest/ts2"
npm install --prefix "$dest/ts2" --no-audit --no-fund --loglevel=error \
  "@modelcontextprotocol/server@${TS_SERVER_VERSION}" "@modelcontextprotocol/node@${TS_NODE_VERSION}" \
  "zod@${ZOD_VERSION}"
for pkg in server node; do
  got="$(node -p "require('$dest/ts2/node_modules/@modelcontextprotocol/$pkg/package.json').version")"
  case "$pkg" in server) pin="$TS_SERVER_VERSION" ;; node) pin="$TS_NODE_VERSION" ;; esac
  [[ "$got" == "$pin" ]] || { echo "ts2 holds @modelcontextprotocol/$pkg $got, not $pin" >&2; exit 1; }
done

echo "installing mcp==${MCP_PY_VERSION} and mcp-server-time==${TIME_VERSION} into a venv at $dest/py"
python3 -m venv "$dest/py"
# One resolution for both, so the time server cannot pull in another mcp.
"$dest/py/bin/python" -m pip install --quiet --disable-pip-version-check \
  "mcp==${MCP_PY_VERSION}" "mcp-server-time==${TIME_VERSION}"
"$dest/py/bin/python" -c "from mcp.server import MCPServer" \
  || { echo "mcp ${MCP_PY_VERSION} does not provide mcp.server.MCPServer" >&2; exit 1; }
got="$("$dest/py/bin/python" -c "import importlib.metadata as m; print(m.version('mcp'))")"
[[ "$got" == "$MCP_PY_VERSION" ]] \
  || { echo "the venv holds mcp $got, not ${MCP_PY_VERSION}" >&2; exit 1; }
test -x "$dest/py/bin/mcp-server-time" \
  || { echo "mcp-server-time ${TIME_VERSION} has no mcp-server-time entry point" >&2; exit 1; }

echo "$want" > "$dest/VERSIONS"
echo "mcp peers installed in $dest ($want)"
