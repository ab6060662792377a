//! The embedding application's API: [`ExtensionHost::boot`] builds the first generation and
//! returns the running [`ExtensionHost`] (intercepts, events, reloads, UI actions, shutdown)
//! and the [`HostEvents`] stream.
//!
//! Generations are swapped atomically; a turn ([`ExtensionHost::turn`]) pins one generation for its
//! whole length, and a reload waits until no turn runs (one reload queued at most: requests
//! made while it waits join it). The fast path of a point nobody intercepts is one atomic load
//! and a bit test.

pub(crate) mod activation;
mod build;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use futures_util::future::join_all;
use serde_json::Value;
use sidewire_ext_protocol::{
    HookPayload, HookPoint, Method, ResourcesChangedParams, ToolCallResult, UiActionDecl,
    UiActionResult, UiSubmitResult,
};
use tokio::sync::OwnedRwLockReadGuard;

use crate::Redactor;
use crate::chain::{Outcome, walk};
use crate::config::HostConfig;
use crate::conn::{Connection, PayloadText, UiState};
use crate::events::HostEvents;
use crate::generation::{Generation, bit};
use crate::provider::{self, CatalogEntry, ProviderStream, StreamRequest};
use crate::shared::Shared;
use crate::store::PluginStore;
use crate::tool::ExtensionTool;
use crate::util::lock;
use crate::{Error, ui};

pub use self::activation::{InactivePlugin, InactiveReason, UnmetOptional};
pub use self::build::GenerationReport;

/// The extension host of one session: the installed plugins' sidecars, running.
/// [`boot`](Self::boot) makes one; cheap to clone, every clone is the same host. Dropping the
/// last clone kills every sidecar synchronously; call [`shutdown`](Self::shutdown) first for
/// an orderly stop.
#[derive(Clone)]
pub struct ExtensionHost {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for ExtensionHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExtensionHost")
            .field("generation", &self.generation())
            .field("sidecars", &self.sidecars())
            .finish_non_exhaustive()
    }
}

impl ExtensionHost {
    /// Reads the installed-plugin store, checks slots, starts every enabled plugin's sidecar
    /// (at most 4 at once, sharing one 30 s budget) and publishes generation 1. With no enabled
    /// runtime plugin it starts nothing and exchanges no frames.
    ///
    /// Must be called within a Tokio runtime (with the time driver): each sidecar's tasks run
    /// on it. The library never builds a runtime of its own.
    ///
    /// # Errors
    ///
    /// The store's errors, [`Error::SlotConflict`] (nothing spawned), or [`Error::Startup`]
    /// for a required plugin that failed to start (every sidecar this boot started is shut
    /// down first). Optional plugins that fail are reported as warnings and in the report.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future kills every sidecar it started.
    pub async fn boot(config: HostConfig) -> Result<(ExtensionHost, HostEvents), Error> {
        let (tx, events) = crate::events::stream();
        let store = PluginStore::new(config.get_state_dir());
        let base_redactor = Redactor::from_process_env();
        // §10.5: the first build binds the UI to (session, its generation) before its first
        // spawn, so its sidecars may publish at once.
        let shared = Arc::new(Shared::new(
            config,
            base_redactor.clone(),
            tx,
            FIRST_GENERATION,
        ));
        let built = build::build(
            &shared,
            &store,
            &base_redactor,
            FIRST_GENERATION,
            None,
            UiState::Live,
        )
        .await?;
        let host = ExtensionHost {
            inner: Arc::new(Inner {
                mask: AtomicU32::new(built.generation.mask),
                current: RwLock::new(Arc::new(built.generation)),
                report: Mutex::new(built.report),
                shared,
                store,
                base_redactor,
                next_generation: AtomicU64::new(FIRST_GENERATION + 1),
                turns: Arc::new(tokio::sync::RwLock::new(())),
                reload_lock: tokio::sync::Mutex::new(ReloadLedger::default()),
                reload_requests: AtomicU64::new(0),
                shut: AtomicBool::new(false),
                shutdown_done: tokio::sync::OnceCell::new(),
            }),
        };
        Ok((host, events))
    }
}

/// The number of the generation [`ExtensionHost::boot`] builds.
const FIRST_GENERATION: u64 = 1;

#[derive(Default)]
struct ReloadLedger {
    /// Requests up to this number were served by the last reload, with this result.
    served: u64,
    last: Option<Result<GenerationReport, ReloadFailure>>,
}

/// Why a reload published nothing. Cheap to clone: the requests that joined a failed reload get
/// the same typed cause (the same [`Arc`]), so its predicates and reason survive.
#[derive(Debug, Clone)]
enum ReloadFailure {
    /// The host was shut down before the reload could build.
    ShutDown,
    /// The build of `generation` failed; that number is not reused.
    Build { generation: u64, source: Arc<Error> },
}

impl From<ReloadFailure> for Error {
    fn from(failure: ReloadFailure) -> Self {
        match failure {
            ReloadFailure::ShutDown => Error::ShutDown,
            ReloadFailure::Build { generation, source } => Error::Reload { generation, source },
        }
    }
}

struct Inner {
    shared: Arc<Shared>,
    store: PluginStore,
    base_redactor: Redactor,
    /// Mirrors `current.mask` for the no-subscriber fast path.
    mask: AtomicU32,
    current: RwLock<Arc<Generation>>,
    report: Mutex<GenerationReport>,
    next_generation: AtomicU64,
    /// Turns hold it shared; a reload takes it exclusively, so it waits for idle.
    turns: Arc<tokio::sync::RwLock<()>>,
    reload_lock: tokio::sync::Mutex<ReloadLedger>,
    reload_requests: AtomicU64,
    shut: AtomicBool,
    shutdown_done: tokio::sync::OnceCell<()>,
}

/// One running sidecar, for diagnostics.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SidecarInfo {
    /// The plugin id.
    pub plugin: String,
    /// The process id (also its process group id).
    pub pid: u32,
    /// The generation that started it.
    pub generation: u64,
    /// Whether it is ready (not crashed or shut down).
    pub ready: bool,
    /// How many provider streams it has open: not yet read to their end, or dropped and
    /// waiting for their cancel (at most 64).
    pub streams: usize,
}

/// A pinned generation: every intercept and event of one turn (with its tool calls and
/// compaction) goes to the same sidecars (§13.3). A reload waits until no turn is held.
#[derive(Debug)]
pub struct Turn {
    generation: Arc<Generation>,
    shared: Arc<Shared>,
    /// Shared with the provider streams opened in the turn, which keep it pinned while they
    /// live.
    pin: Arc<OwnedRwLockReadGuard<()>>,
}

impl Turn {
    /// The pinned generation's number.
    pub fn generation(&self) -> u64 {
        self.generation.number
    }

    /// Runs the interceptor chain of `point` (see [`ExtensionHost::intercept`]).
    ///
    /// # Errors
    ///
    /// As for [`ExtensionHost::intercept`].
    ///
    /// # Cancel safety
    ///
    /// As for [`ExtensionHost::intercept`].
    pub async fn intercept(
        &self,
        point: HookPoint,
        payload: HookPayload,
    ) -> Result<Outcome, Error> {
        if self.generation.mask & bit(point) == 0 {
            return Ok(Outcome::unchanged(point, payload));
        }
        walk(self.generation.plan(point), &self.shared, point, payload).await
    }

    /// Emits an event (see [`ExtensionHost::event`]).
    pub fn event(&self, point: HookPoint, payload: &HookPayload) {
        emit(&self.generation, &self.shared, point, payload);
    }

    /// The provider catalog of the pinned generation (see [`ExtensionHost::providers`]).
    pub fn providers(&self) -> Vec<CatalogEntry> {
        provider::catalog::entries(&self.generation)
    }

    /// Opens a provider stream on the pinned generation (see [`ExtensionHost::open_stream`]). The
    /// stream keeps the turn's generation pinned while it lives, even after the turn is
    /// dropped.
    ///
    /// # Errors
    ///
    /// As for [`ExtensionHost::open_stream`].
    ///
    /// # Cancel safety
    ///
    /// As for [`ExtensionHost::open_stream`].
    pub async fn open_stream(&self, request: StreamRequest) -> Result<ProviderStream, Error> {
        provider::open(&self.generation, &self.pin, request).await
    }

    /// The extension tools of the pinned generation (see [`ExtensionHost::tools`]).
    pub fn tools(&self) -> Vec<ExtensionTool> {
        crate::tool::entries(&self.generation)
    }

    /// Calls an extension tool on the pinned generation (see [`ExtensionHost::call_tool`]).
    ///
    /// # Errors
    ///
    /// As for [`ExtensionHost::call_tool`].
    ///
    /// # Cancel safety
    ///
    /// As for [`ExtensionHost::call_tool`].
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Option<Value>,
    ) -> Result<ToolCallResult, Error> {
        crate::tool::call(&self.generation, name, arguments).await
    }
}

fn emit(generation: &Generation, shared: &Shared, point: HookPoint, payload: &HookPayload) {
    if generation.mask & bit(point) == 0 {
        return;
    }
    let text = PayloadText::of(payload);
    for conn in generation.plan(point).recipients() {
        if !conn.send_event(point, &text) && conn.is_ready() {
            shared.warn_once(
                &conn.plugin.id,
                "event-dropped",
                &format!(
                    "{}: its event queue is full; events are dropped (reported once)",
                    conn.plugin.id
                ),
            );
        }
    }
}

impl ExtensionHost {
    fn current(&self) -> Arc<Generation> {
        Arc::clone(
            &self
                .inner
                .current
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }

    /// The published generation's number (after [`shutdown`](Self::shutdown), the last one
    /// published).
    pub fn generation(&self) -> u64 {
        self.current().number
    }

    /// What the last successful build did.
    pub fn report(&self) -> GenerationReport {
        lock(&self.inner.report).clone()
    }

    /// The sidecars of the published generation.
    pub fn sidecars(&self) -> Vec<SidecarInfo> {
        self.current()
            .conns
            .values()
            .map(|c| SidecarInfo {
                plugin: c.plugin.id.clone(),
                pid: c.pid(),
                generation: c.generation,
                ready: c.is_ready(),
                streams: c.streams.open(),
            })
            .collect()
    }

    /// The UI actions sidecars declared, to offer as `/<plugin>:<action>`.
    pub fn ui_actions(&self) -> Vec<(String, UiActionDecl)> {
        self.current()
            .conns
            .values()
            .flat_map(|c| {
                c.handshake()
                    .ui_actions
                    .iter()
                    .map(|a| (c.plugin.id.clone(), a.clone()))
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// Whether any sidecar intercepts `point` (a chain member or a slot owner).
    pub fn has_subscribers(&self, point: HookPoint) -> bool {
        self.inner.mask.load(Ordering::Acquire) & bit(point) != 0
    }

    /// Pins the published generation for a turn; waits while a reload runs.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe.
    pub async fn turn(&self) -> Turn {
        let pin = Arc::clone(&self.inner.turns).read_owned().await;
        Turn {
            generation: self.current(),
            shared: Arc::clone(&self.inner.shared),
            pin: Arc::new(pin),
        }
    }

    /// Runs the interceptor chain of `point` over `payload`: chain members in (priority,
    /// plugin id) order, each seeing its predecessor's payload, then the active slot owner.
    /// A point nobody intercepts returns the payload at once, without serializing or
    /// allocating.
    ///
    /// The [`Outcome`] says whether the operation was blocked, the permission verdict, which
    /// replacements were applied, the audit record of an overridden denial, and a trace of
    /// every call. Optional plugins' failures are skipped (warned once per plugin) and appear
    /// in the trace.
    ///
    /// # Errors
    ///
    /// [`Error::Operation`] when a required plugin or a slot owner failed (timeout, error,
    /// crash, violation) or a slot owner blocked; the message names the plugin, the point and
    /// the cause. [`Error::ShutDown`] after [`shutdown`](Self::shutdown).
    ///
    /// # Cancel safety
    ///
    /// Dropping the future abandons the walk: the call in flight is cancelled and its late
    /// answer ignored; nothing is audited for it.
    pub async fn intercept(
        &self,
        point: HookPoint,
        payload: HookPayload,
    ) -> Result<Outcome, Error> {
        if self.inner.mask.load(Ordering::Acquire) & bit(point) == 0 {
            if self.inner.shut.load(Ordering::Acquire) {
                return Err(Error::ShutDown);
            }
            return Ok(Outcome::unchanged(point, payload));
        }
        // What `self.turn().await.intercept(..)` does, without the `Turn`'s shared pin: the
        // read guard pins the generation for the walk, borrowed (no allocation per intercept).
        let _pin = self.inner.turns.read().await;
        let generation = self.current();
        if generation.mask & bit(point) == 0 {
            return Ok(Outcome::unchanged(point, payload));
        }
        walk(generation.plan(point), &self.inner.shared, point, payload).await
    }

    /// Emits `payload` as an event of `point` to every chain member and the active slot owner,
    /// fire-and-forget: it never waits and never fails. A recipient whose queue (256) is full
    /// misses it, and a warning is emitted once per plugin.
    pub fn event(&self, point: HookPoint, payload: &HookPayload) {
        if self.inner.mask.load(Ordering::Acquire) & bit(point) == 0 {
            return;
        }
        emit(&self.current(), &self.inner.shared, point, payload);
    }

    /// Tells every ready sidecar that resources changed on disk (`paths` absolute, never
    /// empty; an empty list sends nothing).
    pub fn resources_changed(&self, paths: Vec<String>) {
        if paths.is_empty() {
            return;
        }
        let params = ResourcesChangedParams { paths };
        for conn in self.current().conns.values() {
            conn.notify(Method::ResourcesChanged, &params);
        }
    }

    /// Invokes a declared UI action of `plugin` (from a menu: no surface).
    ///
    /// # Errors
    ///
    /// [`Error::Ui`]: `invalid_params` for an undeclared action or unknown plugin,
    /// `provider_interrupted` for a crashed sidecar, `intercept_timeout` after the UI deadline
    /// ([`HostConfig::ui_call_timeout`], 30 s), or the sidecar's error.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future abandons the call; a late answer is ignored.
    pub async fn ui_action(&self, plugin: &str, action_id: &str) -> Result<UiActionResult, Error> {
        let conn = self.current().conns.get(plugin).cloned().ok_or_else(|| {
            Error::ui(
                sidewire_ext_protocol::Reason::InvalidParams,
                format!("extension {plugin} is not running"),
            )
        })?;
        ui::action(&conn, action_id, BTreeMap::new()).await
    }

    /// Invokes an action from a card's buttons; the card's surface id is sent in
    /// `args.surfaceId`.
    ///
    /// # Errors
    ///
    /// As for [`ui_action`](Self::ui_action), and `stale_generation` (not forwarded) when the
    /// card's connection was retired or crashed.
    ///
    /// # Cancel safety
    ///
    /// As for [`ui_action`](Self::ui_action).
    pub async fn card_action(
        &self,
        plugin: &str,
        surface_id: &str,
        action_id: &str,
    ) -> Result<UiActionResult, Error> {
        ui::card_action(&self.inner.shared.hub, plugin, surface_id, action_id).await
    }

    /// Submits a published form.
    ///
    /// # Errors
    ///
    /// As for [`card_action`](Self::card_action).
    ///
    /// # Cancel safety
    ///
    /// As for [`ui_action`](Self::ui_action).
    pub async fn submit_form(
        &self,
        plugin: &str,
        surface_id: &str,
        values: BTreeMap<String, Value>,
    ) -> Result<UiSubmitResult, Error> {
        ui::submit(&self.inner.shared.hub, plugin, surface_id, values).await
    }

    /// The extension tools of the published generation (spec delta §2.5): each tool a ready V2
    /// sidecar serves (its handshake's `tools`, within its manifest's `runtime.tools`), named
    /// `ext__<plugin>__<tool>` ([`tool_name`](crate::tool_name)), with the manifest's
    /// description, input schema and `readOnly`; by plugin id, then the handshake's order.
    pub fn tools(&self) -> Vec<ExtensionTool> {
        crate::tool::entries(&self.current())
    }

    /// Calls the extension tool the model knows as `name` (`extension/tool/call`): the
    /// sidecar gets the tool's own name, `arguments` (`{}` when `None`) and the host's budget
    /// in `timeoutMillis` ([`HostConfig::tool_call_timeout`], 5 minutes), and the call is
    /// bounded by the same budget. A tool that reports a failure of its own work answers
    /// `Ok` with [`ToolCallResult::is_error`].
    ///
    /// # Errors
    ///
    /// [`Error::Tool`]: `invalid_params` when no sidecar serves `name` (nothing is sent);
    /// `provider_interrupted` when the sidecar that serves it crashed or is shut down
    /// (nothing is sent); `intercept_timeout` after the budget; `protocol_error` for a result
    /// that fails strict decoding; the reason of the sidecar's error answer.
    /// [`Error::ShutDown`] after [`shutdown`](Self::shutdown).
    ///
    /// # Cancel safety
    ///
    /// Dropping the future abandons the call; a late answer is ignored.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Option<Value>,
    ) -> Result<ToolCallResult, Error> {
        if self.inner.shut.load(Ordering::Acquire) {
            return Err(Error::ShutDown);
        }
        crate::tool::call(&self.current(), name, arguments).await
    }

    /// The aggregated provider catalog of the published generation (§14.2): every ready
    /// sidecar with capability `providers`, by plugin id, each with its list in the sidecar's
    /// order (the handshake's `providers`, or the last refresh that passed the rules).
    pub fn providers(&self) -> Vec<CatalogEntry> {
        provider::catalog::entries(&self.current())
    }

    /// Calls `extension/provider/catalog` on every ready sidecar whose manifest declares
    /// capability `providers`, concurrently (30 s deadline each,
    /// [`HostConfig::provider_call_timeout`]), and returns the new aggregated catalog. A
    /// result that breaks §14.2 is rejected whole: a duplicate ref (`protocol_error`) or a ref
    /// outside `plugin/<pluginId>/` (`capability_not_declared`); so is a failed call. That
    /// plugin keeps its previous list and a [`HostEvent::Warning`](crate::HostEvent) carries
    /// the reason.
    ///
    /// # Errors
    ///
    /// [`Error::ShutDown`] after [`shutdown`](Self::shutdown).
    ///
    /// # Cancel safety
    ///
    /// Dropping the future abandons the calls; every list stays as it was.
    pub async fn refresh_providers(&self) -> Result<Vec<CatalogEntry>, Error> {
        if self.inner.shut.load(Ordering::Acquire) {
            return Err(Error::ShutDown);
        }
        let current = self.current();
        join_all(provider::catalog::serving(&current).map(provider::catalog::refresh)).await;
        Ok(provider::catalog::entries(&current))
    }

    /// Opens a provider stream (§14.3) on the sidecar whose catalog lists
    /// `request.provider_ref`, pinning a turn for the stream's life (a reload waits until the
    /// stream is over, as for a turn). The stream is registered before `stream/open` is written
    /// (`seqBase` 0, 1 for a v2 sidecar; 30 s deadline, [`HostConfig::provider_call_timeout`]).
    ///
    /// # Errors
    ///
    /// [`Error::Provider`]: `invalid_params` when no sidecar's current catalog lists the ref
    /// (nothing is sent to any sidecar); `provider_interrupted` when the sidecar that lists it
    /// crashed or is shut down (no fallback, nothing sent); `provider_failed` when the sidecar
    /// answers `accepted: false` (or already has 64 streams open); the reason of its error
    /// answer; `intercept_timeout` after the deadline; `frame_too_large` when the open does not
    /// fit a frame (never externalized, nothing written). [`Error::ShutDown`] after
    /// [`shutdown`](Self::shutdown). How an opened stream can fail is on [`ProviderStream`].
    ///
    /// # Cancel safety
    ///
    /// Dropping the future after the open was written cancels the stream (as dropping a
    /// [`ProviderStream`] does).
    pub async fn open_stream(&self, request: StreamRequest) -> Result<ProviderStream, Error> {
        if self.inner.shut.load(Ordering::Acquire) {
            return Err(Error::ShutDown);
        }
        let turn = self.turn().await;
        turn.open_stream(request).await
    }

    /// Reloads (§13.3): waits until no turn runs, builds a new generation (adopting live
    /// sidecars of unchanged plugins, starting added, changed, crashed and failed ones), swaps
    /// it in atomically, and shuts the retired sidecars down. Fail-atomic: on any failure the
    /// staged sidecars are shut down and the old generation keeps running; its number is not
    /// reused. Requests made while one waits for the turns to end join it.
    ///
    /// # Errors
    ///
    /// [`Error::Reload`] carrying the build's error; [`Error::ShutDown`]. A request that
    /// joined a reload gets that reload's error, with the same shared cause.
    ///
    /// # Cancel safety
    ///
    /// Not cancel safe once the build started: dropping the future then may leave staged
    /// sidecars to be killed when dropped, without the orderly shutdown.
    pub async fn reload(&self) -> Result<GenerationReport, Error> {
        let ticket = self.inner.reload_requests.fetch_add(1, Ordering::AcqRel) + 1;
        let mut ledger = self.inner.reload_lock.lock().await;
        if ledger.served >= ticket
            && let Some(last) = &ledger.last
        {
            return last.clone().map_err(Error::from);
        }
        let idle = Arc::clone(&self.inner.turns).write_owned().await;
        // Every request made up to now is served by this reload.
        let served = self.inner.reload_requests.load(Ordering::Acquire);
        let result = self.reload_now().await;
        // New turns may start as soon as the new generation is published: they pin it, not the
        // retired one, so the retired sidecars' shutdown (up to the shutdown budget and the
        // exit wait, several seconds for one that does not answer) must not hold them up.
        drop(idle);
        let result = match result {
            Ok((report, retired)) => {
                join_all(retired.iter().map(|c| c.shutdown())).await;
                Ok(report)
            }
            Err(err) => Err(err),
        };
        ledger.served = served;
        ledger.last = Some(result.clone());
        result.map_err(Error::from)
    }

    /// Builds and publishes the next generation; returns its report and the connections it
    /// retired, which the caller shuts down once turns may run again.
    async fn reload_now(&self) -> Result<(GenerationReport, Vec<Arc<Connection>>), ReloadFailure> {
        if self.inner.shut.load(Ordering::Acquire) {
            return Err(ReloadFailure::ShutDown);
        }
        let number = self.inner.next_generation.fetch_add(1, Ordering::AcqRel);
        let previous = self.current();
        let built = build::build(
            &self.inner.shared,
            &self.inner.store,
            &self.inner.base_redactor,
            number,
            Some(&previous),
            UiState::Staged,
        )
        .await;
        let built = match built {
            Ok(built) => built,
            Err(source) => {
                return Err(ReloadFailure::Build {
                    generation: number,
                    source: Arc::new(source),
                });
            }
        };
        // Swap: publish the number first, so calls released from the hold see it as current.
        let next = Arc::new(built.generation);
        self.inner.shared.published.store(number, Ordering::Release);
        *self
            .inner
            .current
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Arc::clone(&next);
        self.inner.mask.store(next.mask, Ordering::Release);
        for conn in &built.started {
            conn.ui_state.send_replace(UiState::Live);
        }
        *lock(&self.inner.report) = built.report.clone();
        let retired: Vec<_> = previous
            .conns
            .values()
            .filter(|old| !next.conns.values().any(|c| Arc::ptr_eq(c, old)))
            .cloned()
            .collect();
        Ok((built.report, retired))
    }

    /// Shuts every sidecar down (§6.6), concurrently; idempotent and safe to call from many
    /// tasks at once (each waits for the one shutdown). Later intercepts fail with
    /// [`Error::ShutDown`].
    ///
    /// # Cancel safety
    ///
    /// Dropping the future stops waiting; dropping the host still kills every sidecar.
    pub async fn shutdown(&self) {
        self.inner
            .shutdown_done
            .get_or_init(|| async {
                self.inner.shut.store(true, Ordering::Release);
                self.inner.mask.store(0, Ordering::Release);
                let current = {
                    let mut current = self
                        .inner
                        .current
                        .write()
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                    // The last published number stays, with no sidecars left in it.
                    let emptied = Arc::new(Generation::empty(current.number));
                    std::mem::replace(&mut *current, emptied)
                };
                join_all(current.conns.values().map(|c| c.shutdown())).await;
            })
            .await;
    }
}
