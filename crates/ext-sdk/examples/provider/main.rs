//! The provider sidecar: serves a deterministic local "model" (no network) that streams its
//! answer word by word, emits reasoning, and asks for an `add` tool when the prompt says
//! `add A and B` and such a tool is offered.
//!
//! The provider itself is `sidewire_ext_sdk::samples::ScriptedModel` (library code, so the CLI
//! can embed it); this binary only serves it over stdin/stdout. It is not a place for logic.
//!
//! To install it as a plugin, make a directory holding `reasonix-plugin.json` from this folder
//! and the built binary (`<target>/<profile>/examples/provider`) as `bin/provider`: the
//! manifest's `runtime.command` is `${REASONIX_PLUGIN_ROOT}/bin/provider`. Its ref is then
//! `plugin/scripted-model/scripted/echo-1`.

use std::process::ExitCode;

use sidewire_ext_sdk::{Options, samples, serve_main};

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    // Exits 0 when the host closes stdin; on a fatal error, 1 with the reason on stderr.
    serve_main(samples::scripted_model(), Options::new()).await
}
