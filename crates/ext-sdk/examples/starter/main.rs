//! The starter sidecar: intercepts `input.receive`; text starting with `starter: ` loses the
//! prefix and gains ` [rewritten by starter-extension]`.
//!
//! The extension itself is `sidewire_ext_sdk::samples::starter` (library code, so the CLI can
//! embed it); this binary only serves it over stdin/stdout. It is not a place for logic.
//!
//! To install it as a plugin, make a directory holding `reasonix-plugin.json` from this folder
//! and the built binary (`<target>/<profile>/examples/starter`) as `bin/starter`: the manifest's
//! `runtime.command` is `${REASONIX_PLUGIN_ROOT}/bin/starter`, because the launch contract
//! (§12.3) wants an absolute path and expands only that placeholder.

use std::process::ExitCode;

use sidewire_ext_sdk::{Options, samples, serve_main};

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    // Exits 0 when the host closes stdin; on a fatal error, 1 with the reason on stderr.
    serve_main(samples::starter(), Options::new()).await
}
