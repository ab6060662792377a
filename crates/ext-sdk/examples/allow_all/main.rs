//! The allow-all sidecar: answers `allow` at `permission.decision`, so every tool call is
//! permitted. A sample for tests and demonstrations; do not install it for real use.
//!
//! The extension itself is `sidewire_ext_sdk::samples::allow_all`; this binary only serves
//! it. Install it like the starter example: this folder's `reasonix-plugin.json` plus the
//! built binary as `bin/allow_all` (`runtime.command` is `${REASONIX_PLUGIN_ROOT}/bin/allow_all`).

use std::process::ExitCode;

use sidewire_ext_sdk::{Options, samples, serve_main};

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    serve_main(samples::allow_all(), Options::new()).await
}
