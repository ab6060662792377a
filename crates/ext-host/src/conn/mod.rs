//! One sidecar connection: its process, its JSON-RPC peer, the handshake (spec §6.1–§6.4),
//! calls with their failure mapping, events, crash handling (§13.4) and the shutdown sequence
//! (§6.6).
//!
//! Each connection runs three tasks on the caller's runtime: the jsonrpc driver (behind the
//! readiness barrier and a kill switch), the process's supervision (`sidewire-process`'s
//! `Supervise` future: stderr drain, reap, group kill) together with the exit watcher, and the
//! event forwarder. Tasks hold only weak references to the connection (the supervision only a
//! non-owning view of the process), so dropping the last [`Connection`] kills the process
//! group synchronously. This module does not
//! walk chains or decide policy; it reports what happened to each call.
//!
//! The §6.6 close is `Process::close` without a `SIGTERM`: stdin closed, then `SHUTDOWN_EXIT_WAIT`
//! (750 ms) for the sidecar to exit, then `SIGKILL` to the group and `SHUTDOWN_REAP_WAIT` (5 s) for
//! the reap.

mod barrier;
mod handshake;
mod router;

use std::future::{Future, poll_fn};
use std::path::PathBuf;
use std::pin::pin;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::task::Poll;
use std::time::Duration;

use bytes::Bytes;
use serde::Serialize;
use serde_json::value::RawValue;
use sidewire_ext_protocol::{
    CONTENT_OBJECT_BYTES, Capability, EVENT_QUEUE_FRAMES, EXTERNALIZE_FIELD_BYTES,
    ExternalizedField, HookPayload, HookPoint, InterceptResult, Method, ProtocolProfile,
    ProviderDescriptor, Reason, RuntimeSpec, SHUTDOWN_ANSWER_GRACE, SHUTDOWN_EXIT_WAIT,
    SHUTDOWN_REAP_WAIT, ShutdownParams, Slot, UiActionDecl, decode_result, v2, v2::ManifestV2,
};
use sidewire_jsonrpc::{CallOptions, CloseReason, Peer, RawResult};
use tokio::sync::{Notify, mpsc, watch};

use sidewire_process::{CloseBudgets, CloseStep, Exit, Monitor, Process};

use crate::content::{ContentStore, sha256_hex};
use crate::provider::Catalog;
use crate::provider::stream::Streams;
use crate::shared::Shared;
use crate::util::lock;

pub(crate) use self::handshake::start;

/// A plugin as resolved for one runtime build: the install record plus the manifest read now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Plugin {
    pub(crate) id: String,
    pub(crate) root: PathBuf,
    /// The installed version, else the manifest's.
    pub(crate) version: String,
    pub(crate) runtime: RuntimeSpec,
    /// What a v2 manifest declares beyond the v1 model; `Some` exactly when the plugin speaks
    /// v2 (its manifest's `apiVersion` decided). Part of the plugin's identity, so
    /// a change of profile restarts the sidecar like any changed runtime.
    pub(crate) v2: Option<Arc<ManifestV2>>,
}

impl Plugin {
    pub(crate) fn required(&self) -> bool {
        self.runtime.required
    }

    /// The profile its connections speak (spec delta §1.4 P1–P2): V2 exactly when its
    /// manifest is a v2 one.
    pub(crate) fn profile(&self) -> ProtocolProfile {
        if self.v2.is_some() {
            ProtocolProfile::V2
        } else {
            ProtocolProfile::V1
        }
    }
}

/// What the sidecar said in its handshake, after validation.
#[derive(Debug, Clone, Default)]
pub(crate) struct Handshake {
    pub(crate) subscriptions: Vec<HookPoint>,
    pub(crate) replaces: Vec<Slot>,
    pub(crate) ui_actions: Vec<UiActionDecl>,
    /// The initial provider catalog (§14.2).
    pub(crate) providers: Vec<ProviderDescriptor>,
    /// The extension tools served (V2 only; each in the manifest's `runtime.tools`, checked).
    pub(crate) tools: Vec<String>,
}

/// Where a connection stands towards the UI hub (§10.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum UiState {
    /// Started for a generation being built during a reload: `host/ui/*` is held until the swap.
    Staged,
    /// Part of the published generation.
    Live,
    /// Retired, crashed or shut down: stale.
    Retired,
}

const HANDSHAKE: u8 = 0;
const READY: u8 = 1;
const SHUTTING_DOWN: u8 = 2;
const CRASHED: u8 = 3;

/// What the event queue carries.
pub(crate) enum EventItem {
    /// `extension/event` params.
    Event(Box<RawValue>),
    /// Signalled once everything queued before it was handed to the writer.
    Flush(tokio::sync::oneshot::Sender<()>),
}

/// How long a shutdown waits for queued events to reach the writer before `extension/shutdown`
/// (not a spec budget: it only keeps events emitted just before a shutdown in order).
const EVENT_FLUSH_WAIT: Duration = Duration::from_millis(500);

/// A call that failed: the reason and a message naming the plugin (redacted).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CallError {
    pub(crate) reason: Reason,
    pub(crate) message: String,
}

/// One sidecar connection.
pub(crate) struct Connection {
    pub(crate) plugin: Arc<Plugin>,
    /// The generation that started it.
    pub(crate) generation: u64,
    peer: Peer,
    /// The owning handle: the only one, so dropping the connection kills the group.
    process: Process,
    /// A non-owning view of the same process: its exit and stderr tail.
    monitor: Monitor,
    pub(crate) shared: Arc<Shared>,
    state: AtomicU8,
    cause: OnceLock<String>,
    /// Dropping the jsonrpc driver closes stdin and fails every pending call at once; this
    /// asks its task to do so.
    kill: Arc<Notify>,
    reader_done: watch::Receiver<bool>,
    /// The last intercept `seq` written.
    seq: Mutex<u64>,
    events: mpsc::Sender<EventItem>,
    pub(crate) content: Mutex<ContentStore>,
    handshake: OnceLock<Handshake>,
    shutdown_done: tokio::sync::OnceCell<()>,
    pub(crate) ui_state: watch::Sender<UiState>,
    /// `host/ui/*` calls held while staged (at most 16).
    pub(crate) held_ui: AtomicUsize,
    /// Open prompts, dismissed if the connection goes away.
    pub(crate) prompts: Mutex<Vec<u64>>,
    /// The current provider catalog: the handshake's, then the last accepted refresh.
    catalog: Mutex<Catalog>,
    /// Its provider streams.
    pub(crate) streams: Arc<Streams>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("plugin", &self.plugin.id)
            .field("generation", &self.generation)
            .field("pid", &self.process.pid())
            .field("state", &self.state.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

/// `extension/intercept` params as written: the payload is pre-serialized text, and `seq` is
/// filled in at the moment the frame is queued.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WireIntercept<'a> {
    event: HookPoint,
    #[serde(serialize_with = "load_seq")]
    seq: &'a std::sync::atomic::AtomicU64,
    /// The text of one JSON value.
    #[serde(serialize_with = "verbatim")]
    payload: &'a str,
    timeout_millis: u64,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    externalized: Vec<ExternalizedField>,
}

fn load_seq<S: serde::Serializer>(
    seq: &&std::sync::atomic::AtomicU64,
    s: S,
) -> Result<S::Ok, S::Error> {
    s.serialize_u64(seq.load(Ordering::Acquire))
}

/// Writes JSON text as it is, through serde.
fn verbatim<S: serde::Serializer>(json: &&str, s: S) -> Result<S::Ok, S::Error> {
    let raw: &RawValue = serde_json::from_str(json).map_err(serde::ser::Error::custom)?;
    raw.serialize(s)
}

/// A payload serialized once for a walk or an event: its compact JSON and, once externalized,
/// its bytes and hash, shared by every connection that stores it (one buffer, not a copy per
/// chain member or event recipient).
#[derive(Debug)]
pub(crate) struct PayloadText {
    /// The text of one JSON value, byte for byte what serde_json writes of the payload.
    json: Box<str>,
    sha256: OnceLock<String>,
    bytes: OnceLock<Bytes>,
}

impl PayloadText {
    /// `payload`'s compact JSON, as serde_json writes it.
    pub(crate) fn of(payload: &HookPayload) -> Self {
        PayloadText::from_json(serde_json::to_string(payload).expect("a hook payload serializes"))
    }

    /// A payload already written as JSON; `json` must be the text of one JSON value.
    pub(crate) fn from_json(json: String) -> Self {
        debug_assert!(
            serde_json::from_str::<&RawValue>(&json).is_ok(),
            "payload text is one JSON value"
        );
        PayloadText {
            json: json.into_boxed_str(),
            sha256: OnceLock::new(),
            bytes: OnceLock::new(),
        }
    }

    /// The payload's JSON text.
    pub(crate) fn get(&self) -> &str {
        &self.json
    }

    /// The payload's bytes as a shared buffer, copied out of the text once.
    pub(crate) fn shared_bytes(&self) -> Bytes {
        self.bytes
            .get_or_init(|| Bytes::copy_from_slice(self.json.as_bytes()))
            .clone()
    }

    fn len(&self) -> usize {
        self.json.len()
    }

    fn sha256(&self) -> &str {
        self.sha256.get_or_init(|| sha256_hex(self.json.as_bytes()))
    }
}

/// "5 s", or "1500 ms" when not whole seconds.
pub(crate) fn human(duration: Duration) -> String {
    let ms = duration.as_millis();
    if ms.is_multiple_of(1000) {
        format!("{} s", ms / 1000)
    } else {
        format!("{ms} ms")
    }
}

impl Connection {
    pub(crate) fn pid(&self) -> u32 {
        self.process.pid()
    }

    /// The profile this connection speaks, fixed before its first frame.
    pub(crate) fn profile(&self) -> ProtocolProfile {
        self.plugin.profile()
    }

    pub(crate) fn handshake(&self) -> &Handshake {
        static EMPTY: OnceLock<Handshake> = OnceLock::new();
        self.handshake
            .get()
            .unwrap_or_else(|| EMPTY.get_or_init(Handshake::default))
    }

    pub(crate) fn is_ready(&self) -> bool {
        self.state.load(Ordering::Acquire) == READY
    }

    /// Whether the installed manifest declares capability `providers` (§14): only then are
    /// streams opened on it and its stream notifications handled.
    pub(crate) fn serves_providers(&self) -> bool {
        self.plugin.runtime.has(Capability::Providers)
    }

    /// The current provider catalog.
    pub(crate) fn catalog(&self) -> Catalog {
        Arc::clone(&lock(&self.catalog))
    }

    /// Replaces the provider catalog (a refresh that passed §14.2).
    pub(crate) fn set_catalog(&self, providers: Vec<ProviderDescriptor>) {
        *lock(&self.catalog) = providers.into();
    }

    pub(crate) fn is_crashed(&self) -> bool {
        self.state.load(Ordering::Acquire) == CRASHED
    }

    /// The stderr tail, redacted with the host's current redactor (its environment and every
    /// manifest `env`, which a reload may have changed since the spawn).
    pub(crate) fn stderr_tail(&self) -> String {
        self.monitor.stderr_tail_with(&self.shared.redactor())
    }

    fn not_running(&self) -> CallError {
        let why = match self.state.load(Ordering::Acquire) {
            CRASHED => format!(
                "crashed ({})",
                self.cause.get().map_or("no cause recorded", String::as_str)
            ),
            SHUTTING_DOWN => "is shut down".to_owned(),
            _ => "is not ready".to_owned(),
        };
        CallError {
            reason: Reason::ProviderInterrupted,
            message: self
                .shared
                .redact(&format!("extension {} {why}", self.plugin.id)),
        }
    }

    /// Maps a failed jsonrpc call to a reason and a message naming the plugin and `what`.
    fn call_error(&self, what: &str, err: sidewire_jsonrpc::Error) -> CallError {
        use sidewire_jsonrpc::Error as E;
        let id = &self.plugin.id;
        let (reason, message) = match err {
            E::Timeout { after, .. } => (
                Reason::InterceptTimeout,
                format!(
                    "extension {id} did not answer {what} within {}",
                    human(after)
                ),
            ),
            E::Closed(close) => {
                // A crash recorded its own cause; otherwise the close reason says what ended.
                if self.is_crashed() || self.state.load(Ordering::Acquire) == SHUTTING_DOWN {
                    return self.not_running();
                }
                (
                    Reason::ProviderInterrupted,
                    format!("extension {id} went away during {what}: {close}"),
                )
            }
            E::Remote { error, .. } => {
                // Read with the connection's reason table (spec delta §3.1).
                let carried = Reason::from_error_object_in(&error, self.profile());
                (
                    carried.unwrap_or(Reason::Internal),
                    format!(
                        "extension {id} answered {what} with an error ({}): {}",
                        carried.map_or("no reason", Reason::as_str),
                        error.message
                    ),
                )
            }
            E::FrameTooLarge { limit, .. } => (
                Reason::FrameTooLarge,
                format!("{what} for extension {id} exceeds the {limit}-byte frame limit"),
            ),
            E::InvalidResponse { reason, .. } => (
                Reason::ProtocolError,
                format!("extension {id} sent an invalid response to {what}: {reason}"),
            ),
            other => (
                Reason::Internal,
                format!("extension {id}: {what} failed: {other}"),
            ),
        };
        CallError {
            reason,
            message: self.shared.redact(&message),
        }
    }

    /// A request with a deadline; `what` names it in failure messages.
    pub(crate) async fn call<P: Serialize + ?Sized>(
        &self,
        method: Method,
        params: &P,
        timeout: Duration,
        what: &str,
    ) -> Result<RawResult, CallError> {
        if !self.is_ready() {
            return Err(self.not_running());
        }
        self.peer
            .call(method.as_str(), Some(params), CallOptions::timeout(timeout))
            .await
            .map_err(|err| self.call_error(what, err))
    }

    /// One `extension/intercept`: externalizes the payload when needed, numbers it in write
    /// order, and decodes the result strictly.
    pub(crate) async fn intercept(
        &self,
        point: HookPoint,
        payload: &PayloadText,
        timeout_millis: u64,
    ) -> Result<InterceptResult, CallError> {
        if !self.is_ready() {
            return Err(self.not_running());
        }
        let what = point.as_str();
        let (inline, externalized) = if payload.len() > EXTERNALIZE_FIELD_BYTES {
            if payload.len() > CONTENT_OBJECT_BYTES {
                return Err(CallError {
                    reason: Reason::FrameTooLarge,
                    message: format!(
                        "the {what} payload ({} bytes) is too large to send to extension {}",
                        payload.len(),
                        self.plugin.id
                    ),
                });
            }
            let field = lock(&self.content).store(payload.shared_bytes(), payload.sha256());
            ("null", vec![field])
        } else {
            (payload.get(), Vec::new())
        };
        let seq = std::sync::atomic::AtomicU64::new(0);
        let params = WireIntercept {
            event: point,
            seq: &seq,
            payload: inline,
            timeout_millis,
            externalized,
        };
        let timeout = Duration::from_millis(timeout_millis);
        let mut call = pin!(self.peer.call(
            Method::Intercept.as_str(),
            Some(&params),
            CallOptions::timeout(timeout)
        ));
        // The frame is encoded and queued on the call's first poll, so numbering it under the
        // lock during that poll keeps `seq` in write order; a call that fails on its first poll
        // was never written and takes no number (§7.1).
        let first = poll_fn(|cx| {
            let mut last = lock(&self.seq);
            seq.store(*last + 1, Ordering::Release);
            let poll = call.as_mut().poll(cx);
            if !matches!(poll, Poll::Ready(Err(_))) {
                *last += 1;
            }
            Poll::Ready(poll)
        })
        .await;
        let raw = match first {
            Poll::Ready(result) => result,
            Poll::Pending => call.await,
        }
        .map_err(|err| self.call_error(what, err))?;
        let invalid = |err: sidewire_ext_protocol::Error| CallError {
            reason: Reason::ProtocolError,
            message: self.shared.redact(&format!(
                "extension {} sent an invalid {what} result: {err}",
                self.plugin.id
            )),
        };
        match self.profile() {
            ProtocolProfile::V2 => {
                let result = decode_result::<v2::InterceptResult>(raw.get()).map_err(invalid)?;
                self.resolve_externalized(result, what)
            }
            _ => decode_result::<InterceptResult>(raw.get()).map_err(invalid),
        }
    }

    /// A v2 result whose replacement is externalized, resolved against this connection's
    /// content store (spec delta §2.9 steps 3–5; the decoder did steps 1–2): a descriptor over
    /// 8 MiB is `frame_too_large`, a ref this store does not hold (unknown, evicted, another
    /// connection's) is `content_ref_expired`, a length or SHA-256 that does not match the
    /// object is `protocol_error`. The bytes become the replacement, which the chain then
    /// re-validates as any other (step 6).
    fn resolve_externalized(
        &self,
        result: v2::InterceptResult,
        what: &str,
    ) -> Result<InterceptResult, CallError> {
        let id = &self.plugin.id;
        let Some(field) = result.externalized.first() else {
            return Ok(InterceptResult {
                decision: result.decision,
                reason: result.reason,
                replacement: result.replacement,
            });
        };
        let fail = |reason: Reason, why: String| CallError {
            reason,
            message: self.shared.redact(&format!(
                "extension {id}'s externalized {what} replacement {why}"
            )),
        };
        if field.total_bytes > CONTENT_OBJECT_BYTES as u64 {
            return Err(fail(
                Reason::FrameTooLarge,
                format!(
                    "declares {} bytes, over the {CONTENT_OBJECT_BYTES}-byte limit",
                    field.total_bytes
                ),
            ));
        }
        let Some(bytes) = lock(&self.content).get(&field.content_ref) else {
            return Err(fail(
                Reason::ContentRefExpired,
                "names a content ref this connection does not hold".to_owned(),
            ));
        };
        if bytes.len() as u64 != field.total_bytes || sha256_hex(&bytes) != field.sha256 {
            return Err(fail(
                Reason::ProtocolError,
                "does not match its object's length or SHA-256".to_owned(),
            ));
        }
        let replacement = std::str::from_utf8(&bytes)
            .ok()
            .and_then(|text| sidewire_jsonrpc::parse_unique(text).ok())
            .filter(|value| !value.is_null())
            .ok_or_else(|| fail(Reason::ProtocolError, "is not one JSON value".to_owned()))?;
        Ok(InterceptResult {
            decision: result.decision,
            reason: result.reason,
            replacement: Some(replacement),
        })
    }

    /// Queues an `extension/event` without waiting; `false` when the queue is full (the event
    /// is dropped) or the connection is not ready.
    pub(crate) fn send_event(&self, point: HookPoint, payload: &PayloadText) -> bool {
        if !self.is_ready() {
            return false;
        }
        let text = if payload.len() > EXTERNALIZE_FIELD_BYTES {
            if payload.len() > CONTENT_OBJECT_BYTES {
                self.shared.warn_once(
                    &self.plugin.id,
                    "event-too-large",
                    &format!(
                        "{}: a {} event of {} bytes is too large to send; dropped",
                        self.plugin.id,
                        point.as_str(),
                        payload.len()
                    ),
                );
                return false;
            }
            // Reserve room first so a full queue stores nothing.
            let Ok(permit) = self.events.try_reserve() else {
                return false;
            };
            let field = lock(&self.content).store(payload.shared_bytes(), payload.sha256());
            let text = serde_json::to_string(&serde_json::json!({
                "event": point.as_str(),
                "payload": null,
                "externalized": [field],
            }))
            .expect("event params serialize");
            permit.send(EventItem::Event(
                RawValue::from_string(text).expect("serialized JSON"),
            ));
            return true;
        } else {
            let mut text = String::with_capacity(payload.len() + 40);
            text.push_str("{\"event\":\"");
            text.push_str(point.as_str());
            text.push_str("\",\"payload\":");
            text.push_str(payload.get());
            text.push('}');
            text
        };
        let raw = RawValue::from_string(text).expect("assembled from JSON parts");
        self.events.try_send(EventItem::Event(raw)).is_ok()
    }

    /// Queues a notification without waiting (dropped when the writer queue is full).
    pub(crate) fn notify<P: Serialize>(&self, method: Method, params: &P) {
        if self.is_ready() {
            let _ = self.peer.try_notify(method.as_str(), Some(params));
        }
    }

    /// Crash handling (§13.4), run once, and only for a connection that completed its
    /// handshake: kill the tree, fail pending calls, mark the UI stale, report.
    pub(crate) fn crash(self: &Arc<Self>, cause: String) {
        if self
            .state
            .compare_exchange(READY, CRASHED, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return;
        }
        let cause = self.shared.redact(&cause);
        let _ = self.cause.set(cause.clone());
        // Streams fail at once: no fallback, and no waiting for the reap (§13.4, §14.5).
        self.streams.fail_all(
            Reason::ProviderInterrupted,
            &format!("the sidecar crashed ({cause})"),
        );
        self.process.kill();
        self.kill.notify_one();
        self.ui_state.send_replace(UiState::Retired);
        self.shared.hub.connection_gone(self);
        // Report once the process is reaped and stderr drained, so the tail is complete; the
        // report itself is bounded by the reap budget.
        let this = Arc::clone(self);
        tokio::spawn(async move {
            this.wait_gone(SHUTDOWN_REAP_WAIT).await;
            let stderr_tail = this.stderr_tail();
            this.shared.warn(
                Some(&this.plugin.id),
                &format!(
                    "extension {} crashed: {cause}; it is not restarted until a reload",
                    this.plugin.id
                ),
            );
            this.shared.notify(crate::HostEvent::Crashed {
                plugin: this.plugin.id.clone(),
                generation: this.generation,
                cause,
                stderr_tail,
            });
        });
    }

    /// Waits (bounded) for the reap and the end of stderr (or its 250 ms after the reap).
    async fn wait_gone(&self, budget: Duration) -> Option<Exit> {
        tokio::time::timeout(budget, self.monitor.finished())
            .await
            .ok()
            .or_else(|| self.monitor.exit())
    }

    /// The shutdown sequence of §6.6; idempotent and safe to call concurrently (every caller
    /// waits for the one run).
    ///
    /// # Cancel safety
    ///
    /// Dropping the future stops waiting; the sequence goes on only while some caller polls
    /// it, and dropping the connection kills the process anyway.
    pub(crate) async fn shutdown(self: &Arc<Self>) {
        self.shutdown_done
            .get_or_init(|| self.shutdown_sequence())
            .await;
    }

    async fn shutdown_sequence(self: &Arc<Self>) {
        let was_ready = self
            .state
            .compare_exchange(READY, SHUTTING_DOWN, Ordering::AcqRel, Ordering::Acquire)
            .is_ok();
        let _ = self.state.compare_exchange(
            HANDSHAKE,
            SHUTTING_DOWN,
            Ordering::AcqRel,
            Ordering::Acquire,
        );
        if self.ui_state.send_replace(UiState::Retired) != UiState::Retired {
            self.shared.hub.connection_gone(self);
        }
        self.streams
            .fail_all(Reason::ProviderInterrupted, "the sidecar is shutting down");
        if was_ready {
            // Events emitted before the shutdown go out before it.
            let (flushed, done) = tokio::sync::oneshot::channel();
            let _ = tokio::time::timeout(EVENT_FLUSH_WAIT, async {
                if self.events.send(EventItem::Flush(flushed)).await.is_ok() {
                    let _ = done.await;
                }
            })
            .await;
            let millis = self.shared.config.get_shutdown_timeout_millis();
            let params = ShutdownParams {
                timeout_millis: millis,
            };
            let answer = self
                .peer
                .call(
                    Method::Shutdown.as_str(),
                    Some(&params),
                    CallOptions::timeout(Duration::from_millis(millis) + SHUTDOWN_ANSWER_GRACE),
                )
                .await;
            // Only logged (§6.6 step 2); a hook that overran is worth telling the application.
            match answer {
                Ok(raw) => {
                    tracing::debug!(plugin = %self.plugin.id, answer = raw.get(), "shutdown answered")
                }
                Err(err) => {
                    let failure = self.call_error(Method::Shutdown.as_str(), err);
                    if failure.reason == Reason::ShutdownTimeout {
                        self.shared.warn_because(
                            Some(&self.plugin.id),
                            Some(Reason::ShutdownTimeout),
                            &format!(
                                "extension {}'s shutdown hook overran its {} budget \
                                 (shutdown_timeout)",
                                self.plugin.id,
                                human(Duration::from_millis(millis))
                            ),
                        );
                    } else {
                        tracing::debug!(plugin = %self.plugin.id, message = failure.message, "shutdown not answered");
                    }
                }
            }
        }
        // Close stdin (dropping the driver closes the pipe and fails calls still pending), give
        // the process its exit wait, then kill the group and wait for the reap (§6.6 steps 3-4).
        let budgets = CloseBudgets {
            stdin: SHUTDOWN_EXIT_WAIT,
            term: None,
            kill: SHUTDOWN_REAP_WAIT,
        };
        let closed = self
            .process
            .close(budgets, async { self.kill.notify_one() })
            .await;
        if closed.step == CloseStep::Kill {
            self.shared.warn_because(
                Some(&self.plugin.id),
                Some(Reason::ShutdownTimeout),
                &format!(
                    "extension {} did not exit within {} of its stdin closing and was killed \
                     (shutdown_timeout)",
                    self.plugin.id,
                    human(SHUTDOWN_EXIT_WAIT)
                ),
            );
        }
        let mut reader = self.reader_done.clone();
        let _ = tokio::time::timeout(SHUTDOWN_REAP_WAIT, reader.wait_for(|d| *d)).await;
    }

    /// The stdout reader ended: a crash unless we are shutting down.
    fn reader_ended(self: &Arc<Self>, ended: Option<Result<(), CloseReason>>) {
        let cause = match ended {
            None => "it was killed".to_owned(),
            Some(Ok(())) => "it closed its stdout".to_owned(),
            Some(Err(reason)) => format!("{reason}"),
        };
        self.crash(cause);
    }

    /// The process exited: a crash unless we are shutting down. During the handshake the
    /// driver is dropped so a grandchild holding stdout cannot keep the handshake waiting.
    fn process_exited(self: &Arc<Self>, exit: Exit) {
        if self.state.load(Ordering::Acquire) == HANDSHAKE {
            self.kill.notify_one();
        }
        self.crash(exit.to_string());
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        // The process's own `Drop` kills the group when this was its last handle (it is: the
        // tasks hold only weak references); killing here too keeps that true whatever else
        // might come to hold a clone.
        self.process.kill();
        // Its surfaces go with it: nothing can act on them any more.
        self.shared.hub.forget(self);
    }
}

/// How many events a connection queues before dropping new ones (§8).
pub(crate) const EVENT_QUEUE: usize = EVENT_QUEUE_FRAMES;
