#!/usr/bin/env bash
# The published crates as a registry user gets them (issue 43): every publishable crate packaged
# and built from its `.crate`, the `sidewire` binary installed from its package, and a crate
# outside the workspace built on the packaged `sidewire-mcp` (stdio only) and `sidewire-framing`.
# `.ci/run` runs it as three steps (`package.sh package`, `install`, `outside`); with no argument
# it runs all three. Run from anywhere; it works in the repository's root and its `target/`.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
PACKAGES="$TARGET/package"
VERSION="$(cargo metadata --format-version 1 --no-deps --offline --locked \
  | python3 -c 'import json,sys; print({p["name"]: p["version"] for p in json.load(sys.stdin)["packages"]}["sidewire-mcp"])')"
# The largest normal-dependency tree a stdio-only `sidewire-mcp` may have (issue 43: rmcp's
# stdio-only client has 60 in the same lockfile).
MAX_MCP_STDIO_PACKAGES=50

# The packaged sidewire crates NAMES..., patched in for crates.io's (`--config`, so no manifest
# in the repository names a `target/` path): what `cargo install` and the outside crate build
# against. A crate the graph needs but the list lacks fails the build (crates.io has no
# sidewire crates we publish yet), so a missing name is loud; with no NAMES, all of them.
patches() {
  local dir name
  for dir in "$PACKAGES"/sidewire-*-"$VERSION"; do
    [[ -d "$dir" ]] || continue
    name="$(basename "$dir")"
    name="${name%-"$VERSION"}"
    if [[ $# -eq 0 || " $* " == *" $name "* ]]; then
      printf -- "--config\npatch.crates-io.%s.path=\"%s\"\n" "$name" "$dir"
    fi
  done
}

package() {
  # A registry crate is never rebuilt for a change of content at the same version: Cargo keeps
  # its unpacked source under $CARGO_HOME/registry/src and fingerprints its build by version.
  # `cargo package` verifies each crate against the others through a local overlay of
  # crates.io, so a second run at the same version would build against the first run's
  # sources and artifacts. Both go first: the unpacked sidewire crates (crates.io has none we
  # use) and, in the target directory, the units built from them (their dep-info names a
  # registry source).
  local cargo_home="${CARGO_HOME:-$HOME/.cargo}" dep stem
  rm -rf "$cargo_home"/registry/src/*/sidewire-* "$cargo_home"/registry/cache/*/sidewire-*
  for dep in $(grep -l "/registry/src/[^/]*/sidewire-" "$TARGET"/debug/deps/sidewire*.d 2>/dev/null || true); do
    stem="$(basename "$dep" .d)"
    rm -rf "$TARGET"/debug/deps/{lib,}"$stem"* "$TARGET/debug/.fingerprint/${stem//_/-}"
  done
  # Dependency order, each `.crate` built (verified) with the others as its registry; the
  # unpublished members are excluded by name (`--workspace` takes `publish = false` ones too).
  # PACKAGE_ALLOW_DIRTY=1 packages uncommitted changes (a run by hand before a commit).
  cargo package --workspace --locked --exclude sidewire-test-support --exclude sidewire-benches --exclude xtask \
    ${PACKAGE_ALLOW_DIRTY:+--allow-dirty}
  ls -l "$PACKAGES"/*.crate
}

install() {
  # `cargo install` of the packaged binary crate (its directory under target/package, the
  # unpacked `.crate`), its sidewire dependencies the packaged ones. `--locked`: the
  # Cargo.lock packaged with it. It builds in the workspace's target directory with the
  # workspace's release profile, so the dependencies the release build of `sidewire` (the
  # README's run command) compiled are reused.
  local root="$TARGET/ci-install"
  rm -rf "$root"
  mapfile -t config < <(patches)
  CARGO_PROFILE_RELEASE_STRIP=symbols CARGO_TARGET_DIR="$TARGET" \
    cargo install --locked --path "$PACKAGES/sidewire-$VERSION" --root "$root" "${config[@]}"
  "$root/bin/sidewire" --version
  ls -l "$root/bin/sidewire"
}

outside() {
  # Its lockfile is a copy of the workspace's, so it builds the versions CI tested.
  local root="$TARGET/ci-install"
  # The sidewire crates a stdio-only sidewire-mcp and sidewire-framing pull in.
  mapfile -t config < <(patches sidewire-mcp sidewire-framing sidewire-jsonrpc sidewire-process)
  cp Cargo.lock .ci/outside/Cargo.lock
  cp Cargo.lock .ci/outside-rmcp/Cargo.lock
  CARGO_TARGET_DIR="$TARGET" cargo run --manifest-path .ci/outside/Cargo.toml "${config[@]}" \
    -- "$root/bin/sidewire"
  # The packages in each normal-dependency tree, each once, the crate itself not counted
  # (rmcp's 60 in issue 43 is counted so).
  local ours theirs
  ours="$(cargo tree --manifest-path .ci/outside/Cargo.toml "${config[@]}" -e normal \
    -p sidewire-mcp --prefix none | sed 's/ (\*)$//; s/ (proc-macro)$//; s/ (\/.*)$//' | sort -u | wc -l)"
  theirs="$(cargo tree --manifest-path .ci/outside-rmcp/Cargo.toml -e normal \
    -p rmcp --prefix none | sed 's/ (\*)$//; s/ (proc-macro)$//' | sort -u | wc -l)"
  ours=$((ours - 1))
  theirs=$((theirs - 1))
  echo "normal-dependency packages of a stdio-only client: sidewire-mcp ${ours}" \
    "(at most ${MAX_MCP_STDIO_PACKAGES}), rmcp 3.11 ${theirs}"
  if [[ "$ours" -gt "$MAX_MCP_STDIO_PACKAGES" ]]; then
    echo "sidewire-mcp with features [\"stdio\"] has ${ours} packages in its normal-dependency" \
      "tree, more than ${MAX_MCP_STDIO_PACKAGES}:"
    cargo tree --manifest-path .ci/outside/Cargo.toml "${config[@]}" -e normal -p sidewire-mcp --depth 1
    exit 1
  fi
}

case "${1:-all}" in
  package) package ;;
  install) install ;;
  outside) outside ;;
  all) package && install && outside ;;
  *) echo "usage: .ci/package.sh [package|install|outside|all]" >&2; exit 2 ;;
esac
