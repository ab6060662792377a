//! No-op Rust sidecars for the extension-host scale benches (`scale_ext`, `sustained`): the
//! SDK serving an extension that answers `continue` to `input.receive`, installed N times in a
//! temporary plugin store and booted. The sidecar is the bench binary itself, re-executed with
//! [`ROLE`] set (the intercept bench does the same with its own copy of these lines).
//!
//! [`serve_replay`] is a sidecar of another kind, for the intercept bench: no SDK, just the
//! answers of one [`InterceptShape`] replayed byte for byte with the request's id (see
//! [`crate::replay`]), so that the host reads each SDK's exact bytes.

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

/// Serves the allow-all extension of a tool call's chain on stdin/stdout until the host ends
/// it: `continue` at `tool.before` and `tool.after`, `allow` at `permission.decision` (what a
/// policy sidecar that lets everything through costs).
///
/// # Panics
///
/// When no Tokio runtime can be built.
pub fn serve_allow_all() -> std::process::ExitCode {
    use sidewire_ext_protocol::{PermissionPayload, ToolAfterPayload, ToolBeforePayload};
    use sidewire_ext_sdk::{Decision, Extension, Options, point, serve_main};
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let extension = Extension::new("allow-all", "1.0.0")
        .on_intercept(
            point::TOOL_BEFORE,
            |_ctx, _payload: ToolBeforePayload| async move { Ok(Decision::Continue) },
        )
        .on_intercept(
            point::PERMISSION_DECISION,
            |_ctx, _payload: PermissionPayload| async move {
                Ok(Decision::Allow("the bench allows every call".to_owned()))
            },
        )
        .on_intercept(
            point::TOOL_AFTER,
            |_ctx, _payload: ToolAfterPayload| async move { Ok(Decision::Continue) },
        );
    runtime.block_on(serve_main(extension, Options::new()))
}

/// A temporary plugin store holding one [`serve_allow_all`] sidecar (`allow-all`, this binary
/// re-executed with [`ROLE`] set), and its host configuration. Keep the directory alive while
/// the runtime runs.
pub fn allow_all_store() -> (HostConfig, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let state = dir.path().join("state");
    let store = PluginStore::new(&state);
    let root = dir.path().join("allow-all");
    std::fs::create_dir_all(&root).expect("a plugin directory");
    let manifest = json!({
        "apiVersion": "reasonix.io/plugin/v1", "name": "allow-all", "version": "1.0.0",
        "runtime": {
            "command": std::env::current_exe().expect("the bench binary's path").display().to_string(),
            "env": {ROLE: "1"},
            "intercepts": ["tool.before", "permission.decision", "tool.after"],
            "capabilities": ["interceptors"],
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
    (HostConfig::new(&state, "bench", dir.path()), dir)
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

/// The byte shape a replay sidecar answers in: whose sidecar the frames come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InterceptShape {
    /// sidewire's Rust SDK (`sidewire-ext-sdk`), captured from [`serve`]'s sidecar.
    RustSdk,
    /// The reference Go SDK (esengine/DeepSeek-Reasonix `sdk/go` at 60ab9be), derived from its
    /// source: `encoding/json` output of its wire structs (`benches/capture/README.md`).
    Go,
}

impl InterceptShape {
    /// Every shape, in the order the bench runs them.
    pub const ALL: [InterceptShape; 2] = [InterceptShape::RustSdk, InterceptShape::Go];

    /// The name in bench ids and roles.
    pub fn name(self) -> &'static str {
        match self {
            InterceptShape::RustSdk => "rust_sdk",
            InterceptShape::Go => "go",
        }
    }

    /// The shape named `name`.
    pub fn from_name(name: &str) -> Option<InterceptShape> {
        InterceptShape::ALL
            .into_iter()
            .find(|shape| shape.name() == name)
    }

    /// The answers to `extension/initialize`, `extension/intercept` (`continue`) and
    /// `extension/shutdown` (`benches/fixtures/real/`).
    pub fn captured(self) -> [&'static str; 3] {
        macro_rules! real {
            ($file:literal) => {
                include_str!(concat!("../fixtures/real/", $file))
            };
        }
        match self {
            InterceptShape::RustSdk => [
                real!("ext-rust-sdk.initialize.json"),
                real!("ext-rust-sdk.intercept.json"),
                real!("ext-rust-sdk.shutdown.json"),
            ],
            InterceptShape::Go => [
                real!("ext-go-sdk-60ab9be.initialize.json"),
                real!("ext-go-sdk-60ab9be.intercept.json"),
                real!("ext-go-sdk-60ab9be.shutdown.json"),
            ],
        }
    }
}

/// Serves a replay sidecar in `shape` on stdin/stdout until the host shuts it down or closes
/// its stdin.
///
/// # Panics
///
/// When no Tokio runtime can be built.
pub fn serve_replay(shape: InterceptShape) -> std::process::ExitCode {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let (reader, writer) = crate::stdio_pipes();
        match replay_on(shape, reader, writer).await {
            Ok(()) => std::process::ExitCode::SUCCESS,
            Err(_) => std::process::ExitCode::FAILURE,
        }
    })
}

/// [`serve_replay`] on `reader` and `writer`: the three captured answers with the request's
/// id, `-32601` to any other request, nothing to notifications. No check of what the host
/// sends: the host's side is what the bench times.
///
/// # Errors
///
/// A read or a write failing.
pub async fn replay_on<R, W>(shape: InterceptShape, reader: R, writer: W) -> std::io::Result<()>
where
    R: tokio::io::AsyncRead + Unpin,
    W: tokio::io::AsyncWrite + Unpin,
{
    use crate::replay::{Flow, Frame, write_error};
    let [initialize, intercept, shutdown] = shape.captured().map(Frame::split);
    crate::replay::serve_requests(reader, writer, |id, method, _, out| {
        match method {
            "extension/intercept" => intercept.write(id, out),
            "extension/initialize" => initialize.write(id, out),
            "extension/shutdown" => {
                shutdown.write(id, out);
                return Flow::Stop;
            }
            _ => write_error(id, -32601, "Method not found", out),
        }
        Flow::Continue
    })
    .await
}
