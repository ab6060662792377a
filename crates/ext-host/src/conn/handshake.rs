//! Starting a connection: launch, spawn, and the handshake with every validation rule of
//! spec §6.3, in order, each with its reason. Any failure kills and reaps the process tree and
//! becomes a [`StartupFailure`] carrying the redacted stderr tail and, when one side refused the
//! other, which side that was ([`RefusedBy`]).

use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use sidewire_ext_protocol::v2::{self, ManifestV2};
use sidewire_ext_protocol::{
    Capability, HostCapabilities, InitializeParams, InitializedParams, LaunchSpec,
    ManifestExpectation, Method, ProtocolProfile, Reason, RuntimeSpec, STDERR_TAIL_BYTES,
    SessionContext, UiHost, decode_initialize_result, decode_initialize_result_in, jsonrpc_config,
    resolve_launch,
};
use sidewire_jsonrpc::{CallOptions, CloseReason};
use sidewire_process::{Command, Spawned};
use tokio::sync::{Notify, mpsc, watch};
use tokio::time::Instant;

use super::barrier::{Barrier, Gate};
use super::{Connection, EVENT_QUEUE, EventItem, HANDSHAKE, Handshake, Plugin, READY, UiState};
use crate::content::ContentStore;
use crate::error::{RefusedBy, StartupFailure, StartupStage};
use crate::provider::stream::{Streams, run_cancels};
use crate::shared::Shared;

/// Launches `plugin` for `generation` and shakes hands within `deadline` (the smaller of the
/// handshake timeout and the generation's remaining boot budget).
///
/// # Cancel safety
///
/// Dropping the future drops the half-started connection, which kills its process group.
pub(crate) async fn start(
    plugin: Arc<Plugin>,
    shared: &Arc<Shared>,
    generation: u64,
    ui: UiState,
    deadline: Instant,
) -> Result<Arc<Connection>, Box<StartupFailure>> {
    let began = Instant::now();
    let fail = |stage: StartupStage, failed: Failed, tail: String| {
        Box::new(StartupFailure {
            plugin: plugin.id.clone(),
            stage,
            elapsed: began.elapsed(),
            reason: failed.reason,
            refused_by: failed.refused_by,
            cause: shared.redact(&failed.cause),
            stderr_tail: tail,
        })
    };
    let spec = resolve_launch(&plugin.id, &plugin.root, &plugin.version, &plugin.runtime).map_err(
        |refused| {
            fail(
                StartupStage::Resolve,
                Failed::other(refused.to_string()),
                String::new(),
            )
        },
    )?;
    let Spawned {
        process,
        stdin,
        stdout,
        supervise,
    } = spawn(&spec, shared)
        .map_err(|cause| fail(StartupStage::Spawn, Failed::other(cause), String::new()))?;
    let monitor = process.monitor();

    let config = jsonrpc_config();
    let (frames, sink) = sidewire_jsonrpc::ndjson(stdout, stdin, &config);
    let gate = Arc::new(Gate::default());
    let kill = Arc::new(Notify::new());
    let (reader_tx, reader_done) = watch::channel(false);
    let (events_tx, mut events_rx) = mpsc::channel(EVENT_QUEUE);
    let (streams, cancels) = Streams::new(
        shared.config.get_stream_gap_timeout(),
        plugin.profile(),
        generation,
    );
    let providers = plugin.runtime.has(Capability::Providers);
    let mut driver_slot = None;
    let conn = Arc::new_cyclic(|weak| {
        let router = super::router::router(
            weak.clone(),
            providers.then(|| Arc::clone(&streams)),
            plugin.profile() == ProtocolProfile::V2,
        );
        let (peer, driver) = sidewire_jsonrpc::connect(
            Barrier::new(frames, Arc::clone(&gate)),
            sink,
            router,
            config,
        );
        driver_slot = Some(driver);
        Connection {
            plugin: Arc::clone(&plugin),
            generation,
            peer,
            process,
            monitor: monitor.clone(),
            shared: Arc::clone(shared),
            state: AtomicU8::new(HANDSHAKE),
            cause: OnceLock::new(),
            kill: Arc::clone(&kill),
            reader_done,
            seq: Mutex::new(0),
            events: events_tx,
            content: Mutex::new(ContentStore::default()),
            handshake: OnceLock::new(),
            shutdown_done: tokio::sync::OnceCell::new(),
            ui_state: watch::channel(ui).0,
            held_ui: AtomicUsize::new(0),
            prompts: Mutex::new(Vec::new()),
            catalog: Mutex::new(Vec::new().into()),
            streams: Arc::clone(&streams),
        }
    });
    let driver = driver_slot.expect("set while building the connection");
    {
        let weak = Arc::downgrade(&conn);
        tokio::spawn(async move {
            let ended = tokio::select! {
                biased;
                () = kill.notified() => None,
                result = driver => Some(result),
            };
            // The driver is dropped by now: stdin is closed and pending calls have failed.
            reader_tx.send_replace(true);
            if let Some(conn) = weak.upgrade() {
                conn.reader_ended(ended);
            }
        });
    }
    {
        // The supervision (stderr drain, reap, group kill) and the exit watcher in one task.
        // Weak: the task must not keep the connection, and so the process, alive, or dropping
        // the last connection would not kill the group.
        let weak = Arc::downgrade(&conn);
        tokio::spawn(async move {
            let watch = async {
                let exit = monitor.exited().await;
                if let Some(conn) = weak.upgrade() {
                    conn.process_exited(exit);
                }
            };
            tokio::join!(supervise, watch);
        });
    }
    if providers {
        // Cancels of dropped or cancelled streams (see `provider::stream`).
        let weak = Arc::downgrade(&streams);
        let peer = conn.peer.clone();
        let timeout = shared.config.get_stream_cancel_timeout();
        tokio::spawn(run_cancels(weak, peer, cancels, timeout));
    }
    drop(streams);
    {
        // Events have a queue of their own (§8), fed without waiting; this task moves them, in
        // order, to the peer's background lane, which the writer serves only when no request
        // or response waits: a full event queue never delays an intercept.
        let peer = conn.peer.clone();
        tokio::spawn(async move {
            while let Some(item) = events_rx.recv().await {
                match item {
                    EventItem::Event(params) => {
                        if peer
                            .notify_background(Method::Event.as_str(), Some(&params))
                            .await
                            .is_err()
                        {
                            break;
                        }
                    }
                    EventItem::Flush(done) => {
                        // Signalled once the events before it were handed to the writer, so
                        // a request sent afterwards goes out after them.
                        if peer.background_flushed().await.is_err() {
                            break;
                        }
                        let _ = done.send(());
                    }
                }
            }
        });
    }

    match handshake(&conn, shared, &gate, deadline, began).await {
        Ok(()) => Ok(conn),
        Err(failed) => {
            gate.fail();
            conn.process.kill();
            conn.kill.notify_one();
            let _ = conn
                .wait_gone(sidewire_ext_protocol::SHUTDOWN_REAP_WAIT)
                .await;
            let tail = conn.stderr_tail();
            Err(fail(StartupStage::Handshake, failed, tail))
        }
    }
}

/// Spawns the sidecar per its launch spec: no shell, its own process group, the death signal,
/// stderr drained into the spec's 16 KiB tail (§13.5), redacted by the host's redactor plus
/// the manifest `env` secrets. Must be called on a runtime worker (or the thread driving the
/// runtime), which the death signal follows. A failure is the [`StartupStage::Spawn`] cause.
fn spawn(spec: &LaunchSpec, shared: &Shared) -> Result<Spawned, String> {
    Command::new(&spec.command)
        .args(&spec.args)
        .envs(spec.env.iter().map(|(name, value)| (name, value)))
        .current_dir(&spec.cwd)
        .redactor(shared.redactor())
        .tail_bytes(STDERR_TAIL_BYTES)
        .spawn()
        .map_err(|err| {
            let why = match &err {
                sidewire_process::Error::Spawn { source, .. } => source.to_string(),
                other => other.to_string(),
            };
            format!("cannot spawn {}: {why}", spec.command.display())
        })
}

/// Why a start failed, before it is dressed as a [`StartupFailure`].
struct Failed {
    reason: Option<Reason>,
    refused_by: Option<RefusedBy>,
    cause: String,
}

impl Failed {
    /// The host refused what the sidecar sent.
    fn by_host(reason: Reason, cause: String) -> Self {
        Failed {
            reason: Some(reason),
            refused_by: Some(RefusedBy::Host),
            cause,
        }
    }

    /// The sidecar refused the host's `extension/initialize`; its error may carry no valid
    /// reason (§3), and it is still the sidecar that refused.
    fn by_sidecar(reason: Option<Reason>, cause: String) -> Self {
        Failed {
            reason,
            refused_by: Some(RefusedBy::Sidecar),
            cause,
        }
    }

    /// Nobody refused anybody: a launch failure, a timeout, an exit, a failed write.
    fn other(cause: String) -> Self {
        Failed {
            reason: None,
            refused_by: None,
            cause,
        }
    }
}

/// Sends `extension/initialize`, validates the answer (§6.3), marks the connection ready and
/// sends `extension/initialized`.
async fn handshake(
    conn: &Arc<Connection>,
    shared: &Shared,
    gate: &Gate,
    deadline: Instant,
    began: Instant,
) -> Result<(), Failed> {
    let plugin = &conn.plugin;
    let session = SessionContext {
        session_id: shared.config.get_session_id().to_owned(),
        workspace_root: shared.workspace_root.clone(),
        generation: conn.generation,
    };
    let ui_host = shared.config.get_ui_host();
    // The params in the plugin's profile (spec delta §1.4 P2): its manifest's apiVersion chose.
    let params = match &plugin.v2 {
        None => serde_json::value::to_raw_value(&InitializeParams::new(
            ManifestExpectation::from_runtime(&plugin.runtime),
            session,
            // Carries `protocolVersion` too: the reference SDK requires it (see the ext-protocol
            // crate docs on where this differs from the spec).
            HostCapabilities::new(ui_host),
        )),
        Some(declared) => {
            serde_json::value::to_raw_value(&v2_params(&plugin.runtime, declared, session, ui_host))
        }
    }
    .map_err(|err| Failed::other(format!("cannot encode extension/initialize: {err}")))?;
    let budget = deadline
        .saturating_duration_since(Instant::now())
        .max(Duration::from_millis(1));
    let answer = conn
        .peer
        .call(
            Method::Initialize.as_str(),
            Some(&*params),
            CallOptions::timeout(budget),
        )
        .await;
    let raw = match answer {
        Ok(raw) => raw,
        Err(err) => {
            // Reported as the deadline the boot was given, rounded to whole milliseconds.
            let nominal = deadline.saturating_duration_since(began);
            let nominal = Duration::from_millis(((nominal.as_micros() + 500) / 1000) as u64);
            return Err(handshake_error(conn, gate, nominal, err).await);
        }
    };
    // §6.3 checks 1–3 (version, then strict decoding), then 4–8 against the installed manifest.
    let refused = |err: sidewire_ext_protocol::Error| {
        Failed::by_host(
            err.reason(),
            format!("the host refused the initialize result: {err}"),
        )
    };
    let (result, tools) = match &plugin.v2 {
        None => {
            let result = decode_initialize_result(raw.get()).map_err(refused)?;
            result
                .check_against_manifest(&plugin.id, &plugin.runtime)
                .map_err(refused)?;
            (result, Vec::new())
        }
        Some(declared) => {
            // Spec delta §2.2.1: v1's order (version, then strict decoding) and checks, plus
            // checks 7 (tools) and 8 (the provides ceiling); duplicate action ids are not fatal.
            let mut result =
                decode_initialize_result_in(raw.get(), ProtocolProfile::V2).map_err(refused)?;
            result
                .check_against_manifest(&plugin.id, &plugin.runtime, declared)
                .map_err(refused)?;
            for action in result.drop_duplicate_actions() {
                shared.warn(
                    Some(&plugin.id),
                    &format!(
                        "{}: the sidecar declared UI action {action:?} twice; the first \
                         declaration wins",
                        plugin.id
                    ),
                );
            }
            let tools = std::mem::take(&mut result.tools);
            (result.common(), tools)
        }
    };
    let _ = conn.handshake.set(Handshake {
        subscriptions: result.subscriptions,
        replaces: result.replaces,
        ui_actions: result.ui_actions,
        providers: result.providers,
        tools,
    });
    // The handshake's list is the initial catalog (§14.2).
    conn.set_catalog(conn.handshake().providers.clone());
    // Ready first, then open the barrier, then `initialized`: a sidecar may call us as soon as
    // it reads that notification.
    conn.state.store(READY, Ordering::Release);
    gate.open();
    conn.peer
        .notify_untyped(Method::Initialized.as_str(), Some(&InitializedParams {}))
        .await
        .map_err(|err| Failed::other(format!("cannot send extension/initialized: {err}")))?;
    // An exit noticed while still in the handshake state found nothing to crash.
    if let Some(exit) = conn.monitor.exit() {
        conn.crash(exit.to_string());
    }
    Ok(())
}

/// The v2 `extension/initialize` params, as the reference host sends them (spec delta §2.2,
/// §5.3; [`v2::InitializeParams::from_manifest`]), with this host's session and no `epoch`.
fn v2_params(
    runtime: &RuntimeSpec,
    declared: &ManifestV2,
    session: SessionContext,
    ui_host: UiHost,
) -> v2::InitializeParams {
    let session = v2::SessionContext {
        session_id: session.session_id,
        workspace_root: session.workspace_root,
        generation: session.generation,
        epoch: None,
    };
    v2::InitializeParams::from_manifest(runtime, declared, session, ui_host)
}

/// Describes a failed initialize call: a barrier violation or a fatal frame with its reason
/// (refused by the host), a timeout or an early exit with the cause §13.2 words (refused by
/// nobody), or the sidecar's error answer (refused by the sidecar).
async fn handshake_error(
    conn: &Connection,
    gate: &Gate,
    budget: Duration,
    err: sidewire_jsonrpc::Error,
) -> Failed {
    use sidewire_jsonrpc::Error as E;
    if let Some(violation) = gate.violation() {
        return Failed::by_host(Reason::ProtocolError, violation.to_owned());
    }
    match err {
        E::Timeout { .. } => Failed::other(format!("timeout after {} ms", budget.as_millis())),
        E::Remote { error, .. } => Failed::by_sidecar(
            Reason::from_error_object_in(&error, conn.profile()),
            format!(
                "the sidecar refused extension/initialize: {}",
                error.message
            ),
        ),
        E::Closed(close) => match close {
            CloseReason::Garbage(detail) => Failed::by_host(
                Reason::ProtocolError,
                format!("wrote a malformed frame: {detail}"),
            ),
            CloseReason::FrameTooLarge { limit } => Failed::by_host(
                Reason::FrameTooLarge,
                format!("wrote a frame over the {limit}-byte limit"),
            ),
            other => {
                // The pipe ended because the process did: report how it exited.
                match conn.wait_gone(Duration::from_secs(2)).await {
                    Some(exit) => Failed::other(exit.to_string()),
                    None => Failed::other(format!("the connection ended: {other}")),
                }
            }
        },
        E::InvalidResponse { reason, .. } => Failed::by_host(
            Reason::ProtocolError,
            format!("invalid initialize response: {reason}"),
        ),
        other => Failed::other(other.to_string()),
    }
}
