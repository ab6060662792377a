#!/usr/bin/env bash
# Builds every documented feature combination of every library crate that has features, each
# crate on its own (so no other member's features are unified into it), and fails on any error
# or warning. `cargo test --workspace` and clippy build the crates only with the features the
# whole workspace unifies to (all of them), which would let a `#[cfg]` gap in a smaller build
# rot unseen. Run by `.ci/run`; alone: `.ci/features.sh`.
#
# The list is the one the crates' READMEs document:
# - sidewire-mcp: no features (a client over caller streams) and each feature alone (`stdio` is
#   the default); all features together is what clippy builds, and `stdio` with `host` is
#   sidewire-agent's, below;
# - the crates built on it, alone with their own defaults (sidewire-agent: `host` and `stdio`;
#   sidewire-mcp-config: `http` and `auth`; sidewire-mcp-server: `http`), and sidewire-mcp-server
#   without `http` too (stdio only);
# - sidewire-ext-sdk without and with `samples` (the workspace always unifies it on);
# - sidewire-hooks alone (no features: its tokio features are its own, not the workspace's).
# Every other library crate has no features; the workspace build covers it.
set -euo pipefail
cd "$(dirname "$0")/.."

COMBOS=(
  "sidewire-mcp --no-default-features"
  "sidewire-mcp --no-default-features --features stdio"
  "sidewire-mcp --no-default-features --features http"
  "sidewire-mcp --no-default-features --features auth"
  "sidewire-mcp --no-default-features --features structured"
  "sidewire-mcp --no-default-features --features host"
  "sidewire-agent"
  "sidewire-mcp-config"
  "sidewire-mcp-server --no-default-features"
  "sidewire-mcp-server"
  "sidewire-ext-sdk"
  "sidewire-ext-sdk --features samples"
  "sidewire-hooks"
)

failed=0
for combo in "${COMBOS[@]}"; do
  read -r package flags <<<"${combo} "
  started=$SECONDS
  # shellcheck disable=SC2086 # the flags are words
  if ! output="$(cargo check --locked --lib -p "${package}" ${flags} --message-format short 2>&1)"; then
    echo "FAILED: ${combo}"
    echo "${output}"
    failed=1
    continue
  fi
  warnings="$(grep -E '^(crates|src)/.*: warning' <<<"${output}" || true)"
  if [[ -n "${warnings}" ]]; then
    echo "WARNINGS: ${combo}"
    echo "${warnings}"
    failed=1
    continue
  fi
  printf 'ok   %-62s %4ds\n' "${combo}" "$((SECONDS - started))"
done
exit "${failed}"
