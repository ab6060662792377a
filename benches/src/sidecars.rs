//! No-op Rust sidecars for the extension-host scale benches (`scale_ext`, `sustained`): the
//! SDK serving an extension that answers `continue` to `input.receive`, installed N times in a
//! temporary plugin store and booted. The sidecar is the bench binary itself, re-executed with
//! [`ROLE`] set (the intercept bench does the same with its own copy of these lines).

use std::path::Path;

use serde_json::json;
use sidewire_ext_host::{ExtensionHost, HostConfig, InstallOptions, PluginStore};
use sidewire_ext_protocol::{HookPayload, InputPayload};

/// Set in a re-executed bench binary: serve the no-op sidecar instead.
pub const ROLE: &str = "SIDEWIRE_BENCH_SIDECAR";

/// Whether this process was started as a sidecar.
pub fn is_sidecar() -> bool {
    std::env::var_os(ROLE).is_some()
}

/// Serves the no-op extension on stdin/stdout until the host ends it.
///
/// # Panics
///
/// When no Tokio runtime can be built.
pub fn serve() -> std::process::ExitCode {
    use sidewire_ext_sdk::{Decision, Extension, Options, point, serve_main};
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let extension = Extension::new("noop", "1.0.0").on_intercept(
        point::INPUT_RECEIVE,
        |_ctx, _input: InputPayload| async move { Ok(Decision::Continue) },
    );
    runtime.block_on(serve_main(extension, Options::new()))
}

/// The payload every bench intercept carries.
pub fn payload() -> HookPayload {
    HookPayload::Input(InputPayload {
        text: "fix teh tests in the parser module please".to_owned(),
    })
}

fn install(store: &PluginStore, dir: &Path, name: &str) {
    let root = dir.join(name);
    std::fs::create_dir_all(&root).expect("a plugin directory");
    let manifest = json!({
        "apiVersion": "reasonix.io/plugin/v1", "name": name, "version": "1.0.0",
        "runtime": {
            "command": std::env::current_exe().expect("the bench binary's path").display().to_string(),
            "env": {ROLE: "1"},
            "intercepts": ["input.receive"], "capabilities": ["interceptors"],
        },
    });
    std::fs::write(
        root.join(sidewire_ext_protocol::MANIFEST_FILE),
        manifest.to_string(),
    )
    .expect("the manifest is written");
    store
        .install(&root, InstallOptions::link())
        .expect("the plugin installs");
}

/// A temporary plugin store holding `sidecars` no-op sidecars (`noop0`, `noop1`, ...), and its
/// host configuration. Keep the directory alive while the runtime runs.
pub fn store(sidecars: usize) -> (HostConfig, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let state = dir.path().join("state");
    let store = PluginStore::new(&state);
    for i in 0..sidecars {
        install(&store, dir.path(), &format!("noop{i}"));
    }
    (HostConfig::new(&state, "bench", dir.path()), dir)
}

/// Boots the extension host on `config`; every sidecar must start.
///
/// # Panics
///
/// When the boot fails.
///
/// # Cancel safety
///
/// Dropping the future kills the sidecars it started (as [`ExtensionHost::boot`]).
pub async fn boot(config: HostConfig) -> ExtensionHost {
    let (runtime, _events) = ExtensionHost::boot(config).await.expect("the host boots");
    runtime
}
