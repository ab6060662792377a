//! Test support: a temporary state directory with an installed-plugin store, plugin packages
//! whose sidecar is this very binary (scripted, or one of the SDK samples), booting with
//! deadlines, waiting for events with deadlines, and the check that no process a test started
//! outlives it.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use sidewire_ext_host::{
    ExtensionHost, HostConfig, HostEvent, HostEvents, InstallOptions, PluginStore,
};
use sidewire_ext_protocol::{
    HookPayload, InputPayload, PermissionPayload, ProtocolProfile, Verdict,
};

use crate::sidecar::{ROLE, SCRIPT};

/// Every wait in a test is bounded by this unless the test says otherwise.
pub(crate) const WAIT: Duration = Duration::from_secs(20);

pub(crate) use sidewire_process::testing::is_alive as alive;

tokio::task_local! {
    /// The protocol the scripted plugins of a test speak: v1 unless the test runs inside
    /// [`in_profile`] (spec delta §6 item 27 re-runs v1's chain tests against v2 sidecars).
    static PROFILE: ProtocolProfile;
}

/// Runs `test` with every scripted plugin it installs ([`Env::plugin`]) declaring a manifest
/// of `profile` (`reasonix.io/plugin/v2` for v2), so its sidecar speaks that profile.
pub(crate) async fn in_profile<F: Future<Output = ()>>(profile: ProtocolProfile, test: F) {
    PROFILE.scope(profile, test).await
}
pub(crate) use sidewire_test_support::within;

/// One test's world: a temporary directory holding the state directory and the packages.
pub(crate) struct Env {
    pub(crate) tmp: tempfile::TempDir,
    pub(crate) state: PathBuf,
}

impl Env {
    pub(crate) fn new() -> Env {
        let tmp = tempfile::tempdir().expect("a temporary directory");
        let state = tmp.path().join("state");
        Env { tmp, state }
    }

    pub(crate) fn store(&self) -> PluginStore {
        PluginStore::new(&self.state)
    }

    /// The host configuration: the spec's budgets, a `tui` frontend.
    pub(crate) fn config(&self) -> HostConfig {
        HostConfig::new(&self.state, "s-test", self.tmp.path())
    }

    pub(crate) fn path(&self, name: &str) -> PathBuf {
        self.tmp.path().join(name)
    }

    /// A scripted plugin named `name`.
    pub(crate) fn plugin(&self, name: &str) -> PluginBuilder<'_> {
        PluginBuilder {
            env: self,
            name: name.to_owned(),
            manifest: json!({
                "apiVersion": PROFILE
                    .try_with(|p| *p)
                    .unwrap_or(ProtocolProfile::V1)
                    .manifest_api_version(),
                "name": name,
                "version": "1.0.0",
                "runtime": {
                    "command": std::env::current_exe().unwrap().display().to_string(),
                    "capabilities": ["interceptors"],
                },
            }),
            script: json!({}),
            link: true,
        }
    }

    /// Installs one of the SDK's example packages: its `reasonix-plugin.json` verbatim, and
    /// `bin/<name>` pointing at this binary (which serves the sample when started under that
    /// name). Linked, since the binary lives outside the package.
    pub(crate) fn install_example(&self, example: &str) -> PathBuf {
        self.install_example_with(example, sidewire_ext_protocol::MANIFEST_FILE)
    }

    /// [`install_example`](Self::install_example) with the example's manifest `file` (such as
    /// its Manifest v2 twin, `reasonix-plugin.v2.json`) installed as `reasonix-plugin.json`.
    pub(crate) fn install_example_with(&self, example: &str, file: &str) -> PathBuf {
        let source = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../ext-sdk/examples")
            .join(example)
            .join(file);
        let root = self.path(&format!("pkg-{example}"));
        std::fs::create_dir_all(root.join("bin")).unwrap();
        std::fs::copy(&source, root.join(sidewire_ext_protocol::MANIFEST_FILE))
            .unwrap_or_else(|err| panic!("{}: {err}", source.display()));
        std::os::unix::fs::symlink(
            std::env::current_exe().unwrap(),
            root.join("bin").join(example),
        )
        .unwrap();
        self.store().install(&root, InstallOptions::link()).unwrap();
        root
    }

    /// Boots within the deadline and returns the runtime and its events.
    pub(crate) async fn boot(&self) -> (ExtensionHost, HostEvents) {
        self.boot_with(self.config()).await.expect("the host boots")
    }

    pub(crate) async fn boot_with(
        &self,
        config: HostConfig,
    ) -> Result<(ExtensionHost, HostEvents), sidewire_ext_host::Error> {
        within(Duration::from_secs(60), "boot", ExtensionHost::boot(config)).await
    }

    /// Every pid a sidecar of this test recorded.
    pub(crate) fn pids(&self) -> Vec<u32> {
        let mut pids = Vec::new();
        let mut stack = vec![self.tmp.path().to_path_buf()];
        while let Some(dir) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                if path.is_dir() && !path.is_symlink() {
                    if path.file_name().is_some_and(|n| n == ".pids") {
                        for pid in std::fs::read_dir(&path).unwrap().flatten() {
                            if let Ok(pid) = pid.file_name().to_string_lossy().parse() {
                                pids.push(pid);
                            }
                        }
                    } else {
                        stack.push(path);
                    }
                }
            }
        }
        pids
    }

    /// Waits (5 s at most) until every recorded process is gone, and fails the test if one
    /// is not. A zombie counts as gone: it is dead, waiting for its (possibly foreign) parent.
    pub(crate) fn assert_no_processes(&self) {
        let deadline = Instant::now() + Duration::from_secs(5);
        for pid in self.pids() {
            while alive(pid) {
                assert!(
                    Instant::now() < deadline,
                    "process {pid} outlived its test: {}",
                    std::fs::read_to_string(format!("/proc/{pid}/cmdline")).unwrap_or_default()
                );
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }
}

/// A scripted plugin being described.
pub(crate) struct PluginBuilder<'a> {
    env: &'a Env,
    name: String,
    manifest: Value,
    script: Value,
    link: bool,
}

impl PluginBuilder<'_> {
    pub(crate) fn runtime(mut self, key: &str, value: Value) -> Self {
        self.manifest["runtime"][key] = value;
        self
    }

    pub(crate) fn intercepts(self, points: &[&str]) -> Self {
        self.runtime("intercepts", json!(points))
    }

    pub(crate) fn replaces(self, slots: &[&str]) -> Self {
        self.runtime("replaces", json!(slots))
            .runtime("capabilities", json!(["interceptors", "strategies"]))
    }

    pub(crate) fn capabilities(self, caps: &[&str]) -> Self {
        self.runtime("capabilities", json!(caps))
    }

    pub(crate) fn required(self) -> Self {
        self.runtime("required", json!(true))
    }

    pub(crate) fn priority(self, priority: i64) -> Self {
        self.runtime("priority", json!(priority))
    }

    pub(crate) fn manifest(mut self, key: &str, value: Value) -> Self {
        self.manifest[key] = value;
        self
    }

    /// Removes a root member of the manifest.
    pub(crate) fn without(mut self, key: &str) -> Self {
        self.manifest.as_object_mut().unwrap().remove(key);
        self
    }

    /// Sets a member of the sidecar's script (see `sidecar.rs`).
    pub(crate) fn script(mut self, key: &str, value: Value) -> Self {
        self.script[key] = value;
        self
    }

    /// Answers intercepts at `point` (or `*`) with `action`.
    pub(crate) fn on(mut self, point: &str, action: Value) -> Self {
        self.script["intercept"][point] = action;
        self
    }

    /// A provider sidecar: capability `providers` only, and these refs as its handshake's
    /// `providers` (each a descriptor with only `ref`).
    pub(crate) fn providers(mut self, refs: &[&str]) -> Self {
        let providers: Vec<Value> = refs.iter().map(|r| json!({ "ref": r })).collect();
        self.script["initialize"]["result"]["providers"] = json!(providers);
        self.capabilities(&["providers"])
    }

    /// Answers `stream/open` number `n` (from 0; the last one given repeats) with `action`:
    /// `before` (frames written before the answer), `answer` (default `{"accepted":true}`; or
    /// `{"error":…}` or `"hang"`), `after` (frames written after it). Frames as in
    /// `sidecar::provider_frames`.
    pub(crate) fn open(mut self, action: Value) -> Self {
        if !self.script["open"].is_array() {
            self.script["open"] = json!([]);
        }
        self.script["open"].as_array_mut().unwrap().push(action);
        self
    }

    /// Records every frame the sidecar receives into `file` (under the test directory).
    pub(crate) fn record(self, file: &str) -> Self {
        let path = self.env.path(file).display().to_string();
        self.script("record", json!(path))
    }

    /// Writes the package and installs it; returns the package directory.
    pub(crate) fn install(self) -> PathBuf {
        let root = self.package();
        let options = if self.link {
            InstallOptions::link()
        } else {
            InstallOptions::copy()
        };
        self.env
            .store()
            .install(&root, options.replacing())
            .unwrap();
        // (Copies are exercised by the store's unit tests; sidecars here are linked so that
        // a test can rewrite a manifest in place.)
        root
    }

    /// Writes the package (or rewrites it, for a linked plugin's manifest change).
    pub(crate) fn package(&self) -> PathBuf {
        let root = self.env.path(&format!("pkg-{}", self.name));
        std::fs::create_dir_all(&root).unwrap();
        let mut manifest = self.manifest.clone();
        let env = manifest["runtime"]
            .as_object_mut()
            .unwrap()
            .entry("env")
            .or_insert(json!({}));
        env[ROLE] = json!("script");
        env[SCRIPT] = json!(self.script.to_string());
        std::fs::write(
            root.join(sidewire_ext_protocol::MANIFEST_FILE),
            serde_json::to_string_pretty(&manifest).unwrap(),
        )
        .unwrap();
        root
    }
}

pub(crate) fn input(text: &str) -> HookPayload {
    HookPayload::Input(InputPayload {
        text: text.to_owned(),
    })
}

pub(crate) fn permission(host: Verdict) -> HookPayload {
    HookPayload::Permission(PermissionPayload {
        name: "shell".to_owned(),
        arguments: r#"{"cmd":"git status"}"#.to_owned(),
        read_only: Some(true),
        host_decision: host,
    })
}

pub(crate) fn text_of(payload: &HookPayload) -> &str {
    match payload {
        HookPayload::Input(input) => &input.text,
        other => panic!("not an input payload: {other:?}"),
    }
}

/// The next event matching `pick`, within the deadline; others are skipped.
pub(crate) async fn next_event<T>(
    events: &mut HostEvents,
    what: &str,
    mut pick: impl FnMut(HostEvent) -> Option<T>,
) -> T {
    within(WAIT, what, async {
        loop {
            let event = events.recv().await.expect("the event stream is open");
            if let Some(found) = pick(event) {
                return found;
            }
        }
    })
    .await
}

/// Every event waiting now.
pub(crate) fn drain(events: &mut HostEvents) -> Vec<HostEvent> {
    std::iter::from_fn(|| events.try_recv()).collect()
}

/// The frames a recording sidecar received, parsed.
pub(crate) fn recorded(env: &Env, file: &str) -> Vec<Value> {
    std::fs::read_to_string(env.path(file))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// Polls `check` until it holds or [`WAIT`] passes.
pub(crate) async fn eventually(what: &str, check: impl FnMut() -> bool) {
    sidewire_test_support::eventually(WAIT, what, check).await
}

impl Env {
    /// Shuts the runtime down (bounded), drops it, and proves no process outlived the test.
    pub(crate) async fn finish(&self, runtime: ExtensionHost) {
        within(Duration::from_secs(30), "shutdown", runtime.shutdown()).await;
        drop(runtime);
        self.assert_no_processes();
    }
}

/// The startup failure inside a boot or reload error.
pub(crate) fn startup(err: &sidewire_ext_host::Error) -> &sidewire_ext_host::StartupFailure {
    err.startup()
        .unwrap_or_else(|| panic!("not a startup failure: {err}"))
}

/// Reads a provider stream to its end (within [`WAIT`]): the chunks, and the error it ended
/// with, if any. Fails the test if anything follows the error.
pub(crate) async fn read_stream(
    stream: &mut sidewire_ext_host::ProviderStream,
) -> (
    Vec<sidewire_ext_protocol::ProviderChunk>,
    Option<sidewire_ext_host::Error>,
) {
    use futures_util::StreamExt;
    within(WAIT, "the provider stream to end", async {
        let mut chunks = Vec::new();
        while let Some(item) = stream.next().await {
            match item {
                Ok(chunk) => chunks.push(chunk),
                Err(err) => {
                    assert!(stream.next().await.is_none(), "an item after the error");
                    return (chunks, Some(err));
                }
            }
        }
        (chunks, None)
    })
    .await
}

/// The texts of `chunks`.
pub(crate) fn texts(chunks: &[sidewire_ext_protocol::ProviderChunk]) -> Vec<&str> {
    chunks.iter().map(|c| c.text.as_str()).collect()
}

/// A request with one user message.
pub(crate) fn ask(text: &str) -> sidewire_ext_protocol::ProviderRequest {
    sidewire_ext_protocol::ProviderRequest {
        messages: vec![sidewire_ext_protocol::ProviderMessage {
            role: Some(sidewire_ext_protocol::ProviderRole::User),
            content: text.to_owned(),
            ..Default::default()
        }],
        max_tokens: 256,
        ..Default::default()
    }
}
