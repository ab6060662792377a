//! The status-card sidecar: publishes a `status` surface as soon as the connection is ready
//! (after `extension/initialized`, never before), and offers a `refresh` action that
//! publishes it again.
//!
//! The extension itself is `sidewire_ext_sdk::samples::status_card`; this binary only serves
//! it. Install it like the starter example: this folder's `reasonix-plugin.json` plus the built
//! binary as `bin/status_card` (`runtime.command` is `${REASONIX_PLUGIN_ROOT}/bin/status_card`).

use std::process::ExitCode;

use sidewire_ext_sdk::{Options, samples, serve_main};

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    serve_main(samples::status_card(), Options::new()).await
}
