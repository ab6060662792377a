//! The text-tools sidecar: serves two extension tools (Extension Protocol v2), `word_count`
//! (read-only) and `reverse_words`, each taking `{"text": "…"}`. A host shows them to its model
//! as `ext__text-tools__word_count` and `ext__text-tools__reverse_words`, through the same
//! permission check and hook points as MCP tools.
//!
//! The extension itself is `sidewire_ext_sdk::samples::text_tools`; this binary only serves it.
//! Its manifest (`reasonix-plugin.json` in this folder) is a `reasonix.io/plugin/v2` one: the
//! tools exist only in v2, and each must be declared under `runtime.tools` with capability
//! `tools`, or the SDK does not offer it. Install it like the starter example: the manifest
//! plus the built binary (`<target>/<profile>/examples/tools`) as `bin/tools`.

use std::process::ExitCode;

use sidewire_ext_sdk::{Options, samples, serve_main};

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    serve_main(samples::text_tools(), Options::new()).await
}
