//! Serving one connection: the jsonrpc router with the §6.5 dispatch order and state machine,
//! the intercept, UI, provider and lifecycle handlers, the ordered event queue, and the loop
//! that runs it all until end of input or a fatal error.
//!
//! Nothing here spawns a task or builds a runtime. Requests run concurrently inside the jsonrpc
//! driver; the long-lived jobs (the event worker, the ready hook, one producer per provider
//! stream) run in a `FuturesUnordered` polled by [`serve_io`] itself, next to the driver.

use std::future::Future;
use std::process::ExitCode;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use futures_util::StreamExt as _;
use futures_util::stream::FuturesUnordered;
use serde_json::value::RawValue;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{Notify, Semaphore, mpsc};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use sidewire_ext_protocol::{
    CALL_TIMEOUT, Caller, DecisionKind, Dto, ENV_PLUGIN_NAME, ENV_PLUGIN_VERSION,
    EVENT_QUEUE_FRAMES, EventParams, ExternalizedField, HookPayload, HookPoint, Initialize,
    InitializeResult, InitializedParams, InterceptParams, InterceptResult,
    MIN_CONCURRENT_CALLBACKS, Method, ProtocolProfile, ProviderCatalogParams,
    ProviderCatalogResult, Reason, ResourcesChangedParams, ShutdownParams, ShutdownResult,
    StreamCancelParams, StreamCancelResult, StreamOpenParams, StreamOpenResult, ToolCallParams,
    ToolCallResult, UiActionParams, UiActionResult, UiSubmitParams, UiSubmitResult,
    decode_initialize_params_in, decode_params, jsonrpc_config, reason_of, v2,
};
use sidewire_jsonrpc::{ErrorObject, LocalError, Router, lock};

use crate::extension::{BoxFuture, Plan};
use crate::host::Handshake;
use crate::log::Logger;
use crate::point::Decision;
use crate::provider::{MAX_STREAMS, ProviderFn, Refusal, Streams};
use crate::state::State;
use crate::{Context, Error, Extension, HostHandle};

/// Callbacks that may wait for one of the [`Options::concurrency`] slots, beyond those
/// running; one more request is answered `-32603` without running anything.
///
/// The waiting happens inside the SDK, not in the jsonrpc queue, so that `extension/shutdown`
/// and the immediate error answers never wait behind busy callbacks.
const WAITING_CALLBACKS: usize = 1024;

/// How long in-flight work gets to finish after a failed handshake before the connection is
/// closed. The error answer itself is already queued by then; this only bounds the rest.
const FATAL_GRACE: Duration = Duration::from_secs(1);

/// "No bound" for a wait: tokio treats an unrepresentable deadline as never.
const NO_BOUND: Duration = Duration::MAX;

/// How [`serve`] runs.
#[derive(Debug, Clone)]
pub struct Options {
    concurrency: usize,
    logger: Logger,
    protocols: Vec<ProtocolProfile>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            concurrency: MIN_CONCURRENT_CALLBACKS,
            logger: Logger::stderr(),
            protocols: ProtocolProfile::ALL.to_vec(),
        }
    }
}

impl Options {
    /// The defaults: 32 callbacks at once (§2.4), diagnostics on stderr.
    pub fn new() -> Self {
        Options::default()
    }

    /// How many callbacks (interceptors, UI actions, form submissions) run at once, at least
    /// one. Further ones wait, within their own deadlines, while lifecycle requests and the
    /// reading of frames go on. The spec asks for at least 32 (§2.4), the default.
    pub fn concurrency(mut self, callbacks: usize) -> Self {
        self.concurrency = callbacks.max(1);
        self
    }

    /// Where the SDK's diagnostics go, one message per call (the default writes
    /// `reasonix-extension: `-prefixed lines to stderr). Useful in tests and when a sidecar
    /// runs inside another process.
    pub fn logger(mut self, sink: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.logger = Logger::new(sink);
        self
    }

    /// The protocol versions this sidecar speaks (default: every one, [`ProtocolProfile::ALL`]): the
    /// host's `extension/initialize` picks one by its `protocolId` and the sidecar answers in
    /// it; a host of a profile not listed is answered `unsupported_version`, and the sidecar
    /// exits non-zero. An empty list is taken as every one.
    pub fn protocols(mut self, profiles: &[ProtocolProfile]) -> Self {
        self.protocols = if profiles.is_empty() {
            ProtocolProfile::ALL.to_vec()
        } else {
            profiles.to_vec()
        };
        self
    }
}

/// Serves `extension` over stdin and stdout until stdin ends.
///
/// `Ok(())` means an orderly end: end of input in any state, with or without a shutdown
/// before it (§6.6); exit with status 0. `Err` is fatal and the process must exit non-zero
/// with the reason on stderr; [`serve_main`] does exactly that.
///
/// # Errors
///
/// [`Error::Config`] before anything is read; [`Error::Handshake`] after an error answer to
/// `extension/initialize`; [`Error::Connection`] for a frame over the cap (its text contains
/// "frame"), a line that is not a JSON object, input ending inside a line, an I/O error or a
/// write stall.
///
/// # Cancel safety
///
/// Dropping the future closes the connection at once: in-flight callbacks are cancelled and
/// nothing more is written.
pub async fn serve(extension: Extension, options: Options) -> Result<(), Error> {
    extension.check()?;
    // When the host gave us pipes (it always does), read and write them as non-blocking pipes
    // on the runtime's reactor: `tokio::io::stdout` writes (and a reader thread reads) on
    // other threads, and that hand-off on every frame is most of an intercept's latency.
    match (crate::stdio::pipe_in(), crate::stdio::pipe_out()) {
        (Some(reader), Some(writer)) => serve_io(extension, options, reader, writer).await,
        (Some(reader), None) => serve_io(extension, options, reader, tokio::io::stdout()).await,
        (None, Some(writer)) => serve_io(extension, options, crate::stdio::stdin()?, writer).await,
        (None, None) => {
            serve_io(
                extension,
                options,
                crate::stdio::stdin()?,
                tokio::io::stdout(),
            )
            .await
        }
    }
}

/// [`serve`] for a sidecar's `main`: writes a fatal error to stderr (always stderr, whatever
/// [`Options::logger`] says, since that is where a host looks) and turns the outcome into the
/// exit status: 0 after an orderly end, 1 otherwise. It does not build a runtime:
///
/// ```no_run
/// use sidewire_ext_sdk::{Extension, Options, serve_main};
///
/// #[tokio::main(flavor = "current_thread")]
/// async fn main() -> std::process::ExitCode {
///     serve_main(Extension::new("my-extension", "0.1.0"), Options::new()).await
/// }
/// ```
///
/// # Cancel safety
///
/// As for [`serve`].
pub async fn serve_main(extension: Extension, options: Options) -> ExitCode {
    match serve(extension, options).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            crate::log(&err);
            ExitCode::FAILURE
        }
    }
}

/// [`serve`] over any reader and writer: tests, or a sidecar embedded in another process.
///
/// # Errors
///
/// As for [`serve`].
///
/// # Cancel safety
///
/// As for [`serve`].
pub async fn serve_io<R, W>(
    extension: Extension,
    options: Options,
    reader: R,
    writer: W,
) -> Result<(), Error>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    extension.check()?;
    let config = jsonrpc_config()
        .max_concurrent_requests(options.concurrency + WAITING_CALLBACKS)
        .max_queued_requests(0);
    let (stream, sink) = sidewire_jsonrpc::ndjson(reader, writer, &config);
    let (events_tx, events_rx) = mpsc::channel(EVENT_QUEUE_FRAMES);
    let (jobs_tx, mut jobs_rx) = mpsc::unbounded_channel::<BoxFuture<()>>();
    let conn = Arc::new(Connection {
        host: HostHandle::new(options.logger.clone()),
        ext: extension,
        plan: OnceLock::new(),
        permits: Semaphore::new(options.concurrency),
        cancel: CancellationToken::new(),
        fatal: Mutex::new(None),
        fatal_signal: Notify::new(),
        streams: Arc::new(Streams::default()),
        logger: options.logger,
        protocols: options.protocols,
    });
    let router = conn.router(events_tx, jobs_tx);
    let (peer, mut driver) = sidewire_jsonrpc::connect(stream, sink, router, config);
    // Set before the driver first runs, so no handler can see the handle without its peer.
    let _ = conn.host.inner.peer.set(peer.clone());

    let mut jobs: FuturesUnordered<BoxFuture<()>> = FuturesUnordered::new();
    jobs.push(conn.cancellable(event_worker(Arc::clone(&conn), events_rx)));
    let outcome = loop {
        // Biased so the driver's end is noticed before anything else is started.
        tokio::select! {
            biased;
            outcome = &mut driver => break outcome,
            () = conn.fatal_signal.notified() => {
                // The handshake failed and its error answer is queued: let the driver write
                // it, then close (§6.5: "followed by exit non-zero").
                let (outcome, ()) = tokio::join!(&mut driver, peer.shutdown(FATAL_GRACE));
                break outcome;
            }
            Some(job) = jobs_rx.recv() => jobs.push(job),
            Some(()) = jobs.next(), if !jobs.is_empty() => {}
        }
    };
    drop(jobs);
    if let Some(err) = conn.take_fatal() {
        return Err(err);
    }
    outcome.map_err(Error::Connection)
}

/// The answer to `extension/initialize` in the connection's profile: v1's member set, or v2's
/// (the same members, plus the served `tools` and the dependency declarations).
#[derive(serde::Serialize)]
#[serde(untagged)]
enum InitializeAnswer {
    V1(InitializeResult),
    V2(v2::InitializeResult),
}

impl InitializeAnswer {
    fn new(
        profile: ProtocolProfile,
        result: InitializeResult,
        tools: Vec<String>,
        (requires, provides): (Vec<v2::RequirementWire>, Vec<v2::CapabilityWire>),
    ) -> Self {
        match profile {
            ProtocolProfile::V1 => InitializeAnswer::V1(result),
            _ => InitializeAnswer::V2(v2::InitializeResult {
                protocol_version: result.protocol_version,
                name: result.name,
                version: result.version,
                component_id: None,
                subscriptions: result.subscriptions,
                replaces: (result.replaces.iter())
                    .map(|slot| slot.as_str().to_owned())
                    .collect(),
                providers: result.providers,
                ui_actions: result.ui_actions,
                requires,
                provides,
                tools,
                state_schema_version: result.state_schema_version,
            }),
        }
    }
}

/// Work for the ordered event worker.
enum Work {
    Event(EventParams),
    Resources(Vec<String>),
}

/// One connection's shared state.
struct Connection {
    ext: Extension,
    host: HostHandle,
    /// Set while `extension/initialize` is handled.
    plan: OnceLock<Plan>,
    /// The callback slots of [`Options::concurrency`].
    permits: Semaphore,
    /// Cancels in-flight callbacks and jobs after a shutdown (§6.6).
    cancel: CancellationToken,
    /// The error that ends `serve` after the handshake failed.
    fatal: Mutex<Option<Error>>,
    fatal_signal: Notify,
    /// The provider's catalog refs and active streams (§14).
    streams: Arc<Streams>,
    logger: Logger,
    /// The profiles [`Options::protocols`] lets the host pick.
    protocols: Vec<ProtocolProfile>,
}

/// Either an error answer sent at once, or the work whose outcome is the answer.
type Routed<T> = Result<BoxFuture<Result<T, ErrorObject>>, ErrorObject>;

impl Connection {
    fn router(
        self: &Arc<Self>,
        events: mpsc::Sender<Work>,
        jobs: mpsc::UnboundedSender<BoxFuture<()>>,
    ) -> Router {
        let init = Arc::clone(self);
        let shutdown = Arc::clone(self);
        let intercept = Arc::clone(self);
        let action = Arc::clone(self);
        let submit = Arc::clone(self);
        let initialized = Arc::clone(self);
        let event = Arc::clone(self);
        let resources = Arc::clone(self);
        let resources_events = events.clone();
        let catalog = Arc::clone(self);
        let open = Arc::clone(self);
        let open_jobs = jobs.clone();
        let cancel = Arc::clone(self);
        let tool = Arc::clone(self);
        Router::new()
            .request_raw(Method::Initialize.as_str(), move |params, _| {
                init.initialize(params)
            })
            .request_raw(Method::Shutdown.as_str(), move |params, _| {
                shutdown.shutdown(params)
            })
            .request_raw(Method::Intercept.as_str(), move |params, _| {
                intercept.intercept(params)
            })
            .request_raw(Method::UiAction.as_str(), move |params, _| {
                action.ui_action(params)
            })
            .request_raw(Method::UiSubmit.as_str(), move |params, _| {
                submit.ui_submit(params)
            })
            .request_raw(Method::ProviderCatalog.as_str(), move |params, _| {
                catalog.provider_catalog(params)
            })
            .request_raw(Method::StreamOpen.as_str(), move |params, _| {
                open.stream_open(params, &open_jobs)
            })
            .request_raw(Method::StreamCancel.as_str(), move |params, _| {
                cancel.stream_cancel(params)
            })
            // Registered in the V2 profile only: on a V1 connection (or before the handshake
            // picked a profile) the handler answers exactly what an unregistered method gets.
            .request_raw(Method::ToolCall.as_str(), move |params, _| {
                tool.tool_call(params)
            })
            // Notifications run on the driver in arrival order, so the state they set is in
            // force before the next frame is routed (§6.5).
            .notification_raw(Method::Initialized.as_str(), move |params| {
                initialized.on_initialized(params, &jobs);
            })
            .notification_raw(Method::Event.as_str(), move |params| {
                event.on_event(params, &events);
            })
            .notification_raw(Method::ResourcesChanged.as_str(), move |params| {
                resources.on_resources_changed(params, &resources_events);
            })
    }

    fn state(&self) -> State {
        self.host.inner.state.get()
    }

    fn plan(&self) -> &Plan {
        // Requests that need the plan are served only from `ready`, which comes after the
        // plan is set; the default keeps a broken invariant harmless.
        static EMPTY: OnceLock<Plan> = OnceLock::new();
        self.plan
            .get()
            .unwrap_or_else(|| EMPTY.get_or_init(Plan::default))
    }

    /// The profile the host picked (V1 until `extension/initialize`, which no request routed
    /// here precedes).
    fn profile(&self) -> ProtocolProfile {
        self.host.profile().unwrap_or(ProtocolProfile::V1)
    }

    /// Decodes params with the member set of the connection's profile: `V1` as it is, or `V2`
    /// turned into v1's type by `common` (spec delta §1.4 P1).
    fn decode_in<V1: Dto, V2: Dto>(
        &self,
        params: Option<&RawValue>,
        common: impl FnOnce(V2) -> V1,
    ) -> Result<V1, sidewire_ext_protocol::Error> {
        let raw = params.map(RawValue::get);
        match self.profile() {
            ProtocolProfile::V2 => decode_params::<V2>(raw).map(common),
            _ => decode_params::<V1>(raw),
        }
    }

    /// §6.5 step 3: a registered request the current state does not serve.
    fn gate(&self, method: Method) -> Result<(), ErrorObject> {
        let state = self.state();
        if state.serves(method) {
            return Ok(());
        }
        Err(Reason::ProtocolError
            .error_object_with(format!("{method} is not served in state {}", state.name())))
    }

    /// Records a failed handshake (fatal) and returns its error answer.
    fn fail_handshake(&self, reason: Reason, message: String) -> ErrorObject {
        let answer = reason.error_object_with(message.clone());
        let mut fatal = lock(&self.fatal);
        if fatal.is_none() {
            *fatal = Some(Error::Handshake { reason, message });
            // A stored permit: the serve loop sees it even if it is not waiting right now.
            self.fatal_signal.notify_one();
        }
        answer
    }

    fn take_fatal(&self) -> Option<Error> {
        lock(&self.fatal).take()
    }

    fn log(&self, message: &str) {
        self.logger.log(message);
    }

    /// Wraps a job so that it stops when in-flight work is cancelled.
    fn cancellable(&self, job: impl Future<Output = ()> + Send + 'static) -> BoxFuture<()> {
        let cancel = self.cancel.clone();
        Box::pin(async move {
            tokio::select! {
                biased;
                () = cancel.cancelled() => {}
                () = job => {}
            }
        })
    }

    /// Runs a callback's work within `deadline` (answered `intercept_timeout` when it runs
    /// out), and never answers once a shutdown has cancelled in-flight work (§6.6). A
    /// cancelled callback's request stays parked in the jsonrpc driver, holding one of the many
    /// slots reserved for waiting callbacks, until the connection ends at end of input.
    fn guarded<T: Send + 'static>(
        self: &Arc<Self>,
        deadline: Option<Instant>,
        work: impl Future<Output = Result<T, ErrorObject>> + Send + 'static,
    ) -> BoxFuture<Result<T, ErrorObject>> {
        Box::pin(crate::guard::guarded(work, deadline, self.cancel.clone()))
    }

    fn initialize(self: &Arc<Self>, params: Option<&RawValue>) -> Routed<InitializeAnswer> {
        self.gate(Method::Initialize)?;
        // §6.1 step 2: the identity check runs before strict decoding, inside this decoder; the
        // host's `protocolId` picks the profile among those this sidecar speaks (spec delta
        // §1.4 P4), and the connection keeps it.
        let initialize = decode_initialize_params_in(params.map(RawValue::get), &self.protocols)
            .map_err(|err| self.fail_handshake(err.reason(), err.to_string()))?;
        let profile = initialize.profile();
        let params = initialize.common();
        // The gate passed, so the state is `new`; routing runs on the driver, one frame at a
        // time, so nothing can change it in between.
        self.host
            .inner
            .state
            .advance(State::New, State::Initializing);
        let mut plan = self.ext.plan(&params.manifest);
        match &initialize {
            Initialize::V2(v2) => {
                let capable = v2.manifest.capabilities.iter().any(|c| c == "tools");
                plan.tools = (self.ext).plan_tools(capable, &v2.manifest.tools, &mut plan.warnings);
                (plan.requires, plan.provides) =
                    (self.ext).plan_dependencies(&v2.manifest.provides, &mut plan.warnings);
            }
            _ => {
                if !self.ext.tools.is_empty() {
                    plan.warnings.push(
                        "tools are registered, but the host speaks Extension Protocol v1, which \
                         has none; not offered"
                            .to_owned(),
                    );
                }
                if !self.ext.requires.is_empty() || !self.ext.provides.is_empty() {
                    plan.warnings.push(
                        "requires/provides are declared, but the host speaks Extension Protocol \
                         v1, which has no dependency declarations; not sent"
                            .to_owned(),
                    );
                }
            }
        }
        for warning in &plan.warnings {
            self.log(warning);
        }
        self.check_identity();
        let _ = self.host.inner.handshake.set(Handshake {
            params,
            profile,
            ui_actions: plan.ui_actions.clone(),
        });
        let offers_providers = plan.providers;
        let tools: Vec<String> = plan.tools.iter().cloned().collect();
        let dependencies = (plan.requires.clone(), plan.provides.clone());
        let mut result = InitializeResult {
            protocol_version: profile.protocol_version().to_owned(),
            name: self.ext.name.clone(),
            version: self.ext.version.clone(),
            subscriptions: plan.subscriptions.clone(),
            replaces: plan.replaces.clone(),
            providers: Vec::new(),
            ui_actions: plan.ui_actions.clone(),
            state_schema_version: self.ext.state_schema_version,
        };
        let _ = self.plan.set(plan);
        let conn = Arc::clone(self);
        let work = async move {
            if let Some(hook) = conn.ext.on_initialize.clone()
                && let Err(err) = hook(conn.host.clone()).await
            {
                // §6.1 step 3: a failing initialize handler is answered as an error, and that
                // is fatal.
                return Err(conn.fail_handshake(Reason::Internal, err.to_string()));
            }
            if offers_providers {
                result.providers = conn.handshake_catalog().await;
            }
            if !conn
                .host
                .inner
                .state
                .advance(State::Initializing, State::Handshake)
            {
                // A shutdown arrived meanwhile; it cancels in-flight work without an answer.
                return std::future::pending().await;
            }
            Ok(InitializeAnswer::new(profile, result, tools, dependencies))
        };
        Ok(self.guarded(None, work))
    }

    /// `extension/tool/call` (spec delta §2.5). On a V1 connection, or before the handshake,
    /// the method is unregistered: the answer is the one the router gives any unregistered
    /// method (`-32601`, byte for byte). On V2: the state gate; no tool offered →
    /// `unknown_method` before decoding; strict decoding (`invalid_params`, nothing run); a
    /// name not offered → `unknown_method`; else the callback, bounded by `timeoutMillis` (0:
    /// no deadline), its error answered as `isError` content.
    fn tool_call(self: &Arc<Self>, params: Option<&RawValue>) -> Routed<ToolCallResult> {
        let v2 = (self.host.inner.handshake.get())
            .is_some_and(|handshake| Method::ToolCall.is_registered_in(handshake.profile));
        if !v2 {
            let mut answer = ErrorObject::new(ErrorObject::METHOD_NOT_FOUND, "method not found");
            answer.data = Some(reason_of(LocalError::MethodNotFound).data());
            return Err(answer);
        }
        self.gate(Method::ToolCall)?;
        if self.plan().tools.is_empty() {
            return Err(Reason::UnknownMethod.error_object_with("this extension serves no tools"));
        }
        let params: ToolCallParams =
            decode_params(params.map(RawValue::get)).map_err(|err| err.to_error_object())?;
        let callback = match self.ext.tools.get(&params.name) {
            Some(callback) if self.plan().tools.contains(&params.name) => Arc::clone(callback),
            _ => {
                return Err(Reason::UnknownMethod.error_object_with(format!(
                    "this extension serves no tool {:?}",
                    params.name
                )));
            }
        };
        let deadline = match params.timeout_millis {
            0 => None,
            millis => Instant::now().checked_add(Duration::from_millis(millis)),
        };
        let conn = Arc::clone(self);
        Ok(self.guarded(deadline, async move {
            let _permit = conn.permits.acquire().await;
            Ok(match callback(conn.host.clone(), params.arguments).await {
                Ok(content) => ToolCallResult {
                    content,
                    is_error: false,
                },
                Err(err) => ToolCallResult {
                    content: err.to_string(),
                    is_error: true,
                },
            })
        }))
    }

    /// Warns when the self-description differs from what the host launched; the name and
    /// version are informational (§6.2), so this is never fatal.
    fn check_identity(&self) {
        let checks = [
            (ENV_PLUGIN_NAME, "name", &self.ext.name),
            (ENV_PLUGIN_VERSION, "version", &self.ext.version),
        ];
        for (var, what, ours) in checks {
            if let Ok(launched) = std::env::var(var)
                && launched != *ours
            {
                self.log(&format!(
                    "this sidecar's {what} is {ours:?} but the host launched it as {launched:?} \
                     ({var}); the host goes by its install record"
                ));
            }
        }
    }

    fn shutdown(self: &Arc<Self>, params: Option<&RawValue>) -> Routed<ShutdownResult> {
        self.gate(Method::Shutdown)?;
        let params: ShutdownParams = self
            .decode_in(params, |v2: v2::ShutdownParams| v2.0)
            .map_err(|err| err.to_error_object())?;
        // Enter `shutdown` now, on the driver: every later request is refused, and no stream
        // sends another chunk (each ends `interrupted`).
        self.host.inner.state.shut_down();
        self.streams.cancel_all();
        let conn = Arc::clone(self);
        Ok(Box::pin(async move {
            // A v2 host's 0 puts no bound on the hook (spec delta §2.2); a v1 host sends ≥ 1.
            let budget = match params.timeout_millis {
                0 => NO_BOUND,
                millis => Duration::from_millis(millis),
            };
            let mut overran = false;
            if let Some(hook) = conn.ext.on_shutdown.clone() {
                match tokio::time::timeout(budget, hook(conn.host.clone())).await {
                    Ok(Ok(())) => {}
                    Ok(Err(err)) => conn.log(&format!("the shutdown hook failed: {err}")),
                    Err(_) => overran = true,
                }
            }
            // In-flight callbacks end without an answer (§6.6).
            conn.cancel.cancel();
            if overran {
                conn.log("the shutdown hook overran timeoutMillis");
                return Err(Reason::ShutdownTimeout
                    .error_object_with("the shutdown hook overran timeoutMillis"));
            }
            Ok(ShutdownResult { accepted: true })
        }))
    }

    fn intercept(self: &Arc<Self>, params: Option<&RawValue>) -> Routed<InterceptResult> {
        self.gate(Method::Intercept)?;
        let params: InterceptParams = self
            .decode_in(params, |v2: v2::InterceptParams| v2.0)
            .map_err(|err| err.to_error_object())?;
        // The budget runs from the moment the intercept is routed, so waiting for a callback
        // slot counts against it, as it does on the host's side. A v2 host's 0 sets no deadline
        // (spec delta §2.3); a v1 host sends ≥ 1.
        let budget =
            (params.timeout_millis != 0).then(|| Duration::from_millis(params.timeout_millis));
        let deadline = budget.and_then(|budget| Instant::now().checked_add(budget));
        Ok(self.guarded(deadline, Arc::clone(self).run_intercept(params, budget)))
    }

    async fn run_intercept(
        self: Arc<Self>,
        params: InterceptParams,
        budget: Option<Duration>,
    ) -> Result<InterceptResult, ErrorObject> {
        let point = params.event;
        let plan = self.plan();
        let callback = match self.ext.interceptors.get(&point) {
            Some(callback) if plan.active.contains(&point) => Arc::clone(callback),
            // §7.6: an intercept for a point without a handler is answered `continue`.
            _ => return Ok(InterceptResult::continue_()),
        };
        let _permit = self.permits.acquire().await;
        let payload = self
            .payload(point, params.payload, &params.externalized)
            .await?;
        let strategy = plan.strategy.contains(&point);
        let ctx = Context {
            host: self.host.clone(),
            point,
            seq: Some(params.seq),
            budget,
            strategy,
        };
        // Kept for re-validation: at `permission.decision` a chain member's replacement must
        // carry the `hostDecision` it received (§7.8).
        let received = payload.clone();
        let decision = callback(ctx, payload)
            .await
            .map_err(|err| self.callback_failed(point.as_str(), &err))?;
        self.answer(point, strategy, decision, &received)
    }

    /// The inline payload, or the externalized one read back and decoded (§9).
    async fn payload(
        &self,
        point: HookPoint,
        inline: Option<HookPayload>,
        externalized: &[ExternalizedField],
    ) -> Result<HookPayload, ErrorObject> {
        // Strict decoding already enforced the §9 rule: inline with no descriptor, or `null`
        // with exactly one `/payload` descriptor.
        let field = match (inline, externalized) {
            (Some(payload), _) => return Ok(payload),
            (None, [field]) => field,
            (None, _) => {
                return Err(Reason::InvalidParams
                    .error_object_with("the payload must be inline or one /payload descriptor"));
            }
        };
        let bytes = self
            .host
            .read_content(field)
            .await
            .map_err(|err| error_object(&err))?;
        let text = String::from_utf8(bytes).map_err(|_| {
            Reason::InvalidParams.error_object_with("the externalized payload is not UTF-8")
        })?;
        point
            .decode_payload(&text)
            .map_err(|err| err.to_error_object())
    }

    /// Checks a callback's decision against the point's rules (§7.5, §7.8) and builds the
    /// answer; an illegal one is refused here rather than sent.
    fn answer(
        &self,
        point: HookPoint,
        strategy: bool,
        decision: Decision<HookPayload>,
        received: &HookPayload,
    ) -> Result<InterceptResult, ErrorObject> {
        let caller = if strategy {
            Caller::SlotOwner
        } else {
            Caller::Chain
        };
        let (wire, reason, replacement) = match decision {
            Decision::Continue => (DecisionKind::Continue, String::new(), None),
            Decision::Block(reason) => (DecisionKind::Block, reason, None),
            Decision::Replace(payload) => (DecisionKind::Replace, String::new(), Some(payload)),
            Decision::Allow(reason) => (DecisionKind::Allow, reason, None),
            Decision::Deny(reason) => (DecisionKind::Deny, reason, None),
        };
        if !point.allows(wire, caller) {
            let who = if strategy {
                "a strategy call"
            } else {
                "a chain call"
            };
            return Err(self.refuse(
                point,
                &Error::Invalid {
                    what: "decision",
                    detail: format!("{wire} is not legal at {point} in {who}"),
                    reason: Reason::ProtocolError,
                },
            ));
        }
        let replacement = match replacement {
            None => None,
            Some(payload) => {
                let value = serde_json::to_value(&payload).map_err(|err| {
                    self.refuse(
                        point,
                        &Error::Invalid {
                            what: "replacement",
                            detail: err.to_string(),
                            reason: Reason::ProtocolError,
                        },
                    )
                })?;
                point
                    .validate_replacement(&value, received, caller)
                    .map_err(|err| {
                        self.refuse(
                            point,
                            &Error::Invalid {
                                what: "replacement",
                                detail: err.to_string(),
                                reason: err.reason(),
                            },
                        )
                    })?;
                Some(value)
            }
        };
        Ok(InterceptResult {
            decision: wire,
            reason,
            replacement,
        })
    }

    /// A callback answered something the protocol forbids: the host gets an `internal` error
    /// (its failure policy applies) and the author a line on stderr.
    fn refuse(&self, point: HookPoint, err: &Error) -> ErrorObject {
        let message = format!("{point}: the callback's answer was refused: {err}");
        self.log(&message);
        Reason::Internal.error_object_with(message)
    }

    fn callback_failed(&self, what: &str, err: &Error) -> ErrorObject {
        let message = format!("{what}: the callback failed: {err}");
        self.log(&message);
        Reason::Internal.error_object_with(message)
    }

    fn ui_action(self: &Arc<Self>, params: Option<&RawValue>) -> Routed<UiActionResult> {
        self.gate(Method::UiAction)?;
        // §6.5 step 4, before decoding: no UI handler is `unknown_method`.
        if !self.plan().ui || self.ext.actions.is_empty() {
            return Err(Reason::UnknownMethod
                .error_object_with("this extension does not handle UI actions"));
        }
        let params: UiActionParams =
            decode_params(params.map(RawValue::get)).map_err(|err| err.to_error_object())?;
        let Some(callback) = self
            .ext
            .actions
            .iter()
            .find(|(decl, _)| decl.action_id == params.action_id)
            .map(|(_, callback)| Arc::clone(callback))
        else {
            return Err(Reason::InvalidParams
                .error_object_with(format!("action {:?} is not declared", params.action_id)));
        };
        let conn = Arc::clone(self);
        // The host gives up after 30 s (§2.5); so does the callback.
        let deadline = Instant::now().checked_add(CALL_TIMEOUT);
        Ok(self.guarded(deadline, async move {
            let _permit = conn.permits.acquire().await;
            callback(conn.host.clone(), params)
                .await
                .map_err(|err| conn.callback_failed(Method::UiAction.as_str(), &err))
        }))
    }

    fn ui_submit(self: &Arc<Self>, params: Option<&RawValue>) -> Routed<UiSubmitResult> {
        self.gate(Method::UiSubmit)?;
        let callback = match &self.ext.submit {
            Some(callback) if self.plan().ui => Arc::clone(callback),
            _ => {
                return Err(Reason::UnknownMethod
                    .error_object_with("this extension does not handle form submissions"));
            }
        };
        let params: UiSubmitParams =
            decode_params(params.map(RawValue::get)).map_err(|err| err.to_error_object())?;
        let conn = Arc::clone(self);
        let deadline = Instant::now().checked_add(CALL_TIMEOUT);
        Ok(self.guarded(deadline, async move {
            let _permit = conn.permits.acquire().await;
            callback(conn.host.clone(), params)
                .await
                .map_err(|err| conn.callback_failed(Method::UiSubmit.as_str(), &err))
        }))
    }

    /// §6.5 step 4 for the provider methods: without a provider, or without manifest
    /// capability `providers`, they are `unknown_method`, before their params are decoded.
    fn live_provider(&self) -> Result<ProviderFn, ErrorObject> {
        match &self.ext.provider {
            Some(provider) if self.plan().providers => Ok(Arc::clone(provider)),
            _ => {
                Err(Reason::UnknownMethod
                    .error_object_with("this extension does not serve providers"))
            }
        }
    }

    /// The catalog for the handshake's `providers`: on a failure or a catalog that breaks
    /// the rules nothing is offered (the cause goes to stderr) and the connection goes on; a
    /// later `extension/provider/catalog` may offer it.
    async fn handshake_catalog(&self) -> Vec<sidewire_ext_protocol::ProviderDescriptor> {
        let Some(provider) = self.ext.provider.clone() else {
            return Vec::new();
        };
        let outcome = provider
            .catalog(self.host.clone())
            .await
            .and_then(crate::provider::check_catalog);
        match outcome {
            Ok(result) => {
                self.streams.set_catalog(&result);
                result.providers
            }
            Err(err) => {
                self.log(&format!(
                    "the provider's catalog is not offered at the handshake: {err}"
                ));
                Vec::new()
            }
        }
    }

    fn provider_catalog(
        self: &Arc<Self>,
        params: Option<&RawValue>,
    ) -> Routed<ProviderCatalogResult> {
        self.gate(Method::ProviderCatalog)?;
        let provider = self.live_provider()?;
        let _: ProviderCatalogParams =
            decode_params(params.map(RawValue::get)).map_err(|err| err.to_error_object())?;
        let conn = Arc::clone(self);
        // The host gives up after 30 s (§2.5); so does the callback.
        let deadline = Instant::now().checked_add(CALL_TIMEOUT);
        Ok(self.guarded(deadline, async move {
            let _permit = conn.permits.acquire().await;
            let result = provider
                .catalog(conn.host.clone())
                .await
                .and_then(crate::provider::check_catalog)
                .map_err(|err| conn.callback_failed(Method::ProviderCatalog.as_str(), &err))?;
            conn.streams.set_catalog(&result);
            Ok(result)
        }))
    }

    fn stream_open(
        self: &Arc<Self>,
        params: Option<&RawValue>,
        jobs: &mpsc::UnboundedSender<BoxFuture<()>>,
    ) -> Routed<StreamOpenResult> {
        self.gate(Method::StreamOpen)?;
        let provider = self.live_provider()?;
        // A v2 host's `generation` and `epoch` are accepted and not used (spec delta §2.11).
        let params: StreamOpenParams = self
            .decode_in(params, |v2: v2::StreamOpenParams| v2.open)
            .map_err(|err| err.to_error_object())?;
        if !self.streams.in_catalog(&params.provider_ref) {
            return Err(Reason::InvalidParams.error_object_with(format!(
                "provider ref {:?} is not in this extension's catalog",
                params.provider_ref
            )));
        }
        // Reserved here, on the driver, so a second open with the same id routed before this
        // one is answered already sees it.
        let reservation =
            self.streams
                .reserve(&params.stream_id)
                .map_err(|refusal| match refusal {
                    Refusal::Active => Reason::ProtocolError.error_object_with(format!(
                        "stream {:?} is still active",
                        params.stream_id
                    )),
                    Refusal::Full => Reason::ProviderFailed.error_object_with(format!(
                        "this extension already has {MAX_STREAMS} active streams"
                    )),
                })?;
        let ctx = reservation.context(self.host.clone(), &params.provider_ref);
        let conn = Arc::clone(self);
        let jobs = jobs.clone();
        let deadline = Instant::now().checked_add(CALL_TIMEOUT);
        Ok(self.guarded(deadline, async move {
            let _permit = conn.permits.acquire().await;
            let seq_base = params.seq_base;
            let stream_id = params.stream_id.clone();
            let token = reservation.token().clone();
            let opened = tokio::select! {
                biased;
                // Cancelled while opening: the open is abandoned and the stream ends at once,
                // `interrupted`, with no chunk.
                () = token.cancelled() => None,
                opened = provider.open(ctx, params) => Some(opened),
            };
            let producer = match opened {
                None => None,
                Some(Ok(producer)) => Some(producer),
                Some(Err(err)) => {
                    // The reservation is dropped with this future: the id is free again.
                    let message = format!("stream {stream_id:?}: the provider refused: {err}");
                    conn.log(&message);
                    return Err(Reason::ProviderFailed.error_object_with(message));
                }
            };
            // Queued as the last thing before the answer: this future completes in the same
            // poll, and the jsonrpc driver queues its answer at once, before the serve loop
            // can first poll the job, so the answer precedes the first chunk on the wire.
            let job = crate::provider::produce(
                conn.host.peer().clone(),
                conn.logger.clone(),
                reservation,
                (seq_base, conn.profile()),
                producer,
            );
            // The receiver lives as long as the serve loop, which outlives the driver.
            let _ = jobs.send(Box::pin(job));
            Ok(StreamOpenResult { accepted: true })
        }))
    }

    fn stream_cancel(self: &Arc<Self>, params: Option<&RawValue>) -> Routed<StreamCancelResult> {
        self.gate(Method::StreamCancel)?;
        self.live_provider()?;
        let params: StreamCancelParams =
            decode_params(params.map(RawValue::get)).map_err(|err| err.to_error_object())?;
        // Processed here, on the driver: no chunk is queued after this point.
        let cancelled = self.streams.cancel(&params.stream_id);
        Ok(Box::pin(std::future::ready(Ok(StreamCancelResult {
            cancelled,
        }))))
    }

    fn on_initialized(
        self: &Arc<Self>,
        params: Option<&RawValue>,
        jobs: &mpsc::UnboundedSender<BoxFuture<()>>,
    ) {
        if !self.state().handles(Method::Initialized)
            || decode_params::<InitializedParams>(params.map(RawValue::get)).is_err()
        {
            return;
        }
        self.host
            .inner
            .state
            .advance(State::Handshake, State::Ready);
        if let Some(hook) = self.ext.on_ready.clone() {
            let conn = Arc::clone(self);
            let job = self.cancellable(async move {
                if let Err(err) = hook(conn.host.clone()).await {
                    conn.log(&format!("the ready hook failed: {err}"));
                }
            });
            // The receiver lives as long as the serve loop, which outlives the driver.
            let _ = jobs.send(job);
        }
    }

    fn on_event(&self, params: Option<&RawValue>, events: &mpsc::Sender<Work>) {
        if !self.state().handles(Method::Event) {
            return;
        }
        let Ok(params) = decode_params::<EventParams>(params.map(RawValue::get)) else {
            return;
        };
        // §7.2: an event for a point that has an interceptor and no observer is dropped.
        if !self.ext.observers.contains_key(&params.event)
            || !self.plan().active.contains(&params.event)
        {
            return;
        }
        let point = params.event;
        if events.try_send(Work::Event(params)).is_err() {
            self.log(&format!(
                "the event queue is full ({EVENT_QUEUE_FRAMES}); dropped a {point} event"
            ));
        }
    }

    fn on_resources_changed(&self, params: Option<&RawValue>, events: &mpsc::Sender<Work>) {
        if !self.state().handles(Method::ResourcesChanged) || self.ext.on_resources.is_none() {
            return;
        }
        // A v2 host may send `"paths":[]` (spec delta §2.2); it reaches the callback.
        let Ok(params) = self.decode_in(params, |v2: v2::ResourcesChangedParams| v2.0) else {
            return;
        };
        let params: ResourcesChangedParams = params;
        if events.try_send(Work::Resources(params.paths)).is_err() {
            self.log("the event queue is full; dropped a resources/changed notification");
        }
    }

    /// Delivers one event to its observer; nothing is answered, so failures are logged.
    async fn deliver_event(&self, params: EventParams) {
        let point = params.event;
        let Some(callback) = self.ext.observers.get(&point).cloned() else {
            return;
        };
        let payload = match self
            .payload(point, params.payload, &params.externalized)
            .await
        {
            Ok(payload) => payload,
            Err(err) => {
                // §9: an event whose payload cannot be rehydrated is dropped.
                self.log(&format!("dropped a {point} event: {}", err.message));
                return;
            }
        };
        let ctx = Context {
            host: self.host.clone(),
            point,
            seq: None,
            budget: None,
            strategy: self.plan().strategy.contains(&point),
        };
        if let Err(err) = callback(ctx, payload).await {
            self.log(&format!("{point}: the event observer failed: {err}"));
        }
    }
}

/// Delivers events and resource notifications one at a time, in arrival order.
async fn event_worker(conn: Arc<Connection>, mut events: mpsc::Receiver<Work>) {
    while let Some(work) = events.recv().await {
        match work {
            Work::Event(params) => conn.deliver_event(params).await,
            Work::Resources(paths) => {
                if let Some(callback) = conn.ext.on_resources.clone()
                    && let Err(err) = callback(conn.host.clone(), paths).await
                {
                    conn.log(&format!("the resources/changed observer failed: {err}"));
                }
            }
        }
    }
}

/// The wire error for a failure on the way to a callback (rehydration): its own reason where
/// it has one, else `internal`.
fn error_object(err: &Error) -> ErrorObject {
    err.reason()
        .unwrap_or(Reason::Internal)
        .error_object_with(err.to_string())
}
