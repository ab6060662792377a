#!/usr/bin/env bash
# One era of the MCP Inspector CLI (npm `@modelcontextprotocol/inspector` 2.12.0, `--cli`) against
# an MCP server: the checks of a plan (plan-*.json here) that .ci/mcp-server-clients.sh tabulates.
#
# Usage: NODE=... INSPECTOR=... insp_client.sh --era legacy|modern --plan PLAN (URL | -- COMMAND [ARG...])
#
#   NODE       node >= 22.19 (the package's engines)
#   INSPECTOR  its launcher, .../@modelcontextprotocol/inspector/clients/launcher/build/index.js
#   HOME       is where the CLI keeps ~/.mcp-inspector: the caller points it at a scratch directory
#
# --era is the CLI's --protocol-era (legacy: `initialize`; modern: pinned, a server/discover first,
# no fallback). Each CLI run is one connection and one method: one `tools/list` for every server
# of the plan, and one call per server (tool names are the server's `prefix` + the plan's):
#   tools  `--method tools/list` names each of `names`
#   text   `--method tools/call --tool-name TOOL --tool-args-json ARGS` answers exactly `expect`
# The CLI has no progress display, no sampling or elicitation handler, and cannot cancel a call:
# those checks print n/a.
# Each check prints one line, `check SERVER:NAME pass|fail|n/a DETAIL`. Exit status 0 when all pass.
set -uo pipefail
: "${NODE:?set NODE}" "${INSPECTOR:?set INSPECTOR}"

usage() {
  echo "usage: $0 --era legacy|modern --plan PLAN (URL | -- COMMAND [ARG...])" >&2
  exit 2
}
[[ "${1:-}" == --era && ( "${2:-}" == legacy || "${2:-}" == modern ) && "${3:-}" == --plan && -f "${4:-}" ]] || usage
era="$2"
plan="$4"
shift 4
if [[ "${1:-}" == -- && $# -gt 1 ]]; then
  shift
  target=(-- "$@")
elif [[ $# -eq 1 && "$1" == http*://* ]]; then
  target=(--transport http --server-url "$1")
else
  usage
fi

# field SERVER-INDEX EXPRESSION: a value of the plan's server (JSON for objects, else as it is).
field() {
  "$NODE" -e '
    const s = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).servers[+process.argv[2]];
    const v = new Function("s", `return ${process.argv[3]}`)(s);
    console.log(v === undefined ? "" : typeof v === "string" ? v : JSON.stringify(v));
  ' "$plan" "$1" "$2"
}

failures=0
# run METHOD-ARGS...: one CLI run (the stdio command goes last, after `--`); sets `out` (its
# `--format json` output) and `status`.
run() {
  status=0
  out="$("$NODE" "$INSPECTOR" --cli --protocol-era "$era" --format json "$@" "${target[@]}" 2>&1)" || status=$?
}
# judge NAME JUDGE: the last run's output, judged by a small node program reading it on stdin
# (WANT in its environment).
judge() {
  local verdict
  verdict="$("$NODE" -e "$2" <<<"$out" 2>/dev/null)" || verdict="fail exit ${status}: $(tr -s '\n ' ' ' <<<"$out" | cut -c1-300)"
  [[ "$verdict" == pass* ]] || failures=$((failures + 1))
  echo "check $1 $verdict"
}
# The judges: `pass DETAIL` or `fail DETAIL` for the CLI's JSON ({"result": ...} or {"error": ...}).
read -r -d '' tools_judge <<'JS'
let s = ''; process.stdin.on('data', (d) => (s += d)).on('end', () => {
  const names = JSON.parse(s.slice(s.indexOf('{'))).result.tools.map((t) => t.name);
  const missing = JSON.parse(process.env.WANT).filter((n) => !names.includes(n));
  console.log(`${missing.length ? 'fail' : 'pass'} ${names.length} tools${missing.length ? `, missing ${JSON.stringify(missing)}` : ''}`);
});
JS
read -r -d '' text_judge <<'JS'
let s = ''; process.stdin.on('data', (d) => (s += d)).on('end', () => {
  const got = JSON.parse(s.slice(s.indexOf('{'))).result.content.filter((c) => c.type === 'text').map((c) => c.text).join(' ');
  console.log(`${got === process.env.WANT ? 'pass' : 'fail'} ${JSON.stringify(got)}`);
});
JS
count="$("$NODE" -p "JSON.parse(require('fs').readFileSync(process.argv[1], 'utf8')).servers.length" "$plan")"
run --method tools/list
listing="$out" listing_status="$status"
for ((i = 0; i < count; i++)); do
  server="$(field "$i" 's.name')"
  prefix="$(field "$i" 's.prefix')"
  out="$listing" status="$listing_status"
  WANT="$(field "$i" 's.checks.tools.names.map((n) => s.prefix + n)')" judge "$server:tools" "$tools_judge"
  run --method tools/call --tool-name "$prefix$(field "$i" 's.checks.text.tool')" \
    --tool-args-json "$(field "$i" 's.checks.text.arguments')"
  WANT="$(field "$i" 's.checks.text.expect')" judge "$server:text" "$text_judge"
  declare -A why=(
    [progress]="the CLI shows no progress"
    [sampling]="the CLI answers no sampling request"
    [elicitation]="the CLI answers no elicitation request"
    [cancel]="the CLI cannot cancel a call"
  )
  for kind in $(field "$i" 'Object.keys(s.checks).join(" ")'); do
    [[ -z "${why[$kind]:-}" ]] || echo "check $server:$kind n/a ${why[$kind]}"
  done
done
(( failures == 0 ))
