#!/usr/bin/env bash
# The gateway scaled out on an existing engine: two `sidewire mcp serve --listen` replicas with
# one --state-key-file behind nginx (Debian's package), each in front of its own built-in demo
# MCP server.
#
#   - port A: round robin. A modern client (`sidewire run`, era modern) makes 100 calls; both
#     replicas serve some of them (each replica's audit file says which).
#   - port B: `hash $http_mcp_session_id`. A legacy client (`sidewire run`, era legacy) makes
#     100 calls in one session; nginx sends `initialize` anywhere and the rest to one replica,
#     which takes the session over from its sealed id.
#   - halfway through, the replica holding the legacy session is killed (SIGKILL, its process
#     group): the modern calls go on on the other one, and the legacy session moves there and
#     goes on without a new `initialize`.
#
# Usage: .ci/gateway-nginx/run.sh --install   (installs nginx from Debian when it is missing)
#        .ci/gateway-nginx/run.sh SIDEWIRE_BINARY
set -euo pipefail
cd "$(dirname "$0")/../.."

if [[ "${1:-}" == "--install" ]]; then
  if nginx -v 2>/dev/null; then
    exit 0
  fi
  # No service is started by the package (this script runs its own nginx on loopback ports).
  policy=/usr/sbin/policy-rc.d
  if [[ ! -e "$policy" ]]; then
    printf '#!/bin/sh\nexit 101\n' > "$policy"
    chmod +x "$policy"
    trap 'rm -f "$policy"' EXIT
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nginx >/dev/null
  nginx -v
  exit 0
fi

binary="$(cd "$(dirname "${1:?usage: $0 SIDEWIRE_BINARY | --install}")" && pwd)/$(basename "$1")"
command -v nginx >/dev/null || { echo "nginx is not installed (run $0 --install)" >&2; exit 1; }
exec python3 .ci/gateway-nginx/scale_out.py "$binary"
