#!/usr/bin/env bash
# tap.sh LOG COMMAND [ARG...]: runs COMMAND (a stdio MCP server) with everything it reads on stdin
# appended to LOG as well, so .ci/mcp-server-clients.sh can see what the gateway sent its
# upstream (whether a client's cancel reached it). COMMAND's stdout and stderr are untouched.
set -euo pipefail
log="${1:?usage: $0 LOG COMMAND [ARG...]}"
shift
tee -a "$log" | "$@"
