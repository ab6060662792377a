#!/usr/bin/env bash
# One era of the MCP Inspector CLI (npm `@modelcontextprotocol/inspector` 2.12.0, `--cli`) against
# an MCP server: the checks that .ci/mcp-server-clients.sh tabulates.
#
# Usage: NODE=... INSPECTOR=... insp_client.sh --era legacy|modern (URL | -- COMMAND [ARG...])
#
#   NODE       node >= 22.19 (the package's engines)
#   INSPECTOR  its launcher, .../@modelcontextprotocol/inspector/clients/launcher/build/index.js
#   HOME       is where the CLI keeps ~/.mcp-inspector: the caller points it at a scratch directory
#
# --era is the CLI's --protocol-era (legacy: `initialize`; modern: pinned, a server/discover first,
# no fallback). Each CLI run is one connection and one method, so this makes two runs:
#   tools  `--method tools/list` names test_simple_text
#   text   `--method tools/call --tool-name test_simple_text` answers the fixture's text
# The CLI has no progress display and no sampling handler: those checks print n/a.
# Each check prints one line, `check NAME pass|fail|n/a DETAIL`. Exit status 0 when all pass.
set -uo pipefail
: "${NODE:?set NODE}" "${INSPECTOR:?set INSPECTOR}"

usage() {
  echo "usage: $0 --era legacy|modern (URL | -- COMMAND [ARG...])" >&2
  exit 2
}
[[ "${1:-}" == --era && ( "${2:-}" == legacy || "${2:-}" == modern ) ]] || usage
era="$2"
shift 2
if [[ "${1:-}" == -- && $# -gt 1 ]]; then
  shift
  target=(-- "$@")
elif [[ $# -eq 1 && "$1" == http*://* ]]; then
  target=(--transport http --server-url "$1")
else
  usage
fi

failures=0
# check NAME METHOD-ARGS...: one CLI run (the stdio command goes last, after `--`), judged by
# a small node program reading its `--format json` output on stdin.
check() {
  local name="$1" judge="$2" out status=0 verdict
  shift 2
  out="$("$NODE" "$INSPECTOR" --cli --protocol-era "$era" --format json "$@" "${target[@]}" 2>&1)" || status=$?
  verdict="$("$NODE" -e "$judge" <<<"$out" 2>/dev/null)" || verdict="fail exit ${status}: $(tr -s '\n ' ' ' <<<"$out" | cut -c1-300)"
  [[ "$verdict" == pass* ]] || failures=$((failures + 1))
  echo "check $name $verdict"
}
# The judges: `pass DETAIL` or `fail DETAIL` for the CLI's JSON ({"result": ...} or {"error": ...}).
read -r -d '' tools_judge <<'JS'
let s = ''; process.stdin.on('data', (d) => (s += d)).on('end', () => {
  const names = JSON.parse(s.slice(s.indexOf('{'))).result.tools.map((t) => t.name);
  console.log(`${names.includes('test_simple_text') ? 'pass' : 'fail'} ${names.length} tools`);
});
JS
read -r -d '' text_judge <<'JS'
let s = ''; process.stdin.on('data', (d) => (s += d)).on('end', () => {
  const got = JSON.parse(s.slice(s.indexOf('{'))).result.content.filter((c) => c.type === 'text').map((c) => c.text).join(' ');
  console.log(`${got === 'This is a simple text response for testing.' ? 'pass' : 'fail'} ${JSON.stringify(got)}`);
});
JS
check tools "$tools_judge" --method tools/list
check text "$text_judge" --method tools/call --tool-name test_simple_text
echo "check progress n/a the CLI shows no progress"
echo "check sampling n/a the CLI answers no sampling request"
(( failures == 0 ))
