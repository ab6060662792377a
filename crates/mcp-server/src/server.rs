//! [`Server`]: a [`Handler`] with its limits, shared by every session and transport, and the
//! dispatch of one request through it.

use std::collections::{BTreeSet, HashMap};
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use futures_util::future::join_all;
use serde::Serialize;
use serde_json::{Map, Value, json};
use tokio::sync::{mpsc, oneshot};
use tokio::task::AbortHandle;

use crate::Error;
use crate::context::{HandlerContext, Out, Outbox};
use crate::core::{Call, Offer, SessionCore, Step};
use crate::era::{self, Era};
use crate::handler::{CompleteRequest, Handler, InputRequest, PromptGet, Reply, ToolCallRequest};
use crate::seal::{STATE_LIFETIME, Sealer, SealingKey};
use crate::wire::{self, Inbound};

/// How long a listing's cursor is honoured.
const CURSOR_LIFETIME: Duration = Duration::from_secs(24 * 3600);

/// The bounds of a [`Server`], per session and per server. Every one is hit by a test.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Limits {
    /// Items per page of a listing (default 100).
    pub page_size: usize,
    /// Requests one session runs at once; more are answered `-32603` at once (default 64).
    pub max_in_flight: usize,
    /// Requests to the client one session waits for at once (default 16).
    pub max_pending_inputs: usize,
    /// How long a request to the client is waited for (default 120 s).
    pub input_timeout: Duration,
    /// Input rounds one legacy request may go through (default 10).
    pub max_rounds: usize,
    /// Input requests one round may carry (default 16).
    pub max_input_requests: usize,
    /// Messages queued on one request's stream before its handler waits (default 64).
    pub stream_queue: usize,
    /// The most bytes of one client message (default 4 MiB).
    pub max_message_bytes: usize,
    /// Open `subscriptions/listen` requests per server (default 256).
    pub max_listeners: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            page_size: 100,
            max_in_flight: 64,
            max_pending_inputs: 16,
            input_timeout: Duration::from_secs(120),
            max_rounds: 10,
            max_input_requests: 16,
            stream_queue: 64,
            max_message_bytes: wire::DEFAULT_MAX_MESSAGE_BYTES,
            max_listeners: 256,
        }
    }
}

/// A change a [`Server`] announces to its clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListKind {
    /// `notifications/tools/list_changed`.
    Tools,
    /// `notifications/prompts/list_changed`.
    Prompts,
    /// `notifications/resources/list_changed`.
    Resources,
}

impl ListKind {
    fn method(self) -> &'static str {
        match self {
            ListKind::Tools => "notifications/tools/list_changed",
            ListKind::Prompts => "notifications/prompts/list_changed",
            ListKind::Resources => "notifications/resources/list_changed",
        }
    }

    fn filter_key(self) -> &'static str {
        match self {
            ListKind::Tools => "toolsListChanged",
            ListKind::Prompts => "promptsListChanged",
            ListKind::Resources => "resourcesListChanged",
        }
    }
}

/// An MCP server: a [`Handler`], its limits and its sessions. Cheap to clone; serve it with
/// [`Server::serve_stdio`] or [`crate::http::serve`].
pub struct Server<H> {
    pub(crate) inner: Arc<Inner<H>>,
}

impl<H> Clone for Server<H> {
    fn clone(&self) -> Self {
        Server {
            inner: Arc::clone(&self.inner),
        }
    }
}

impl<H: Handler> std::fmt::Debug for Server<H> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("info", &self.inner.offer.info)
            .field("limits", &self.inner.limits)
            .finish_non_exhaustive()
    }
}

pub(crate) struct Inner<H> {
    pub(crate) handler: H,
    pub(crate) offer: Offer,
    pub(crate) caps: crate::Capabilities,
    pub(crate) limits: Limits,
    sealer: Sealer,
    /// The sealing key was given: legacy sessions over HTTP get sealed ids that another
    /// replica with the key takes over.
    portable: bool,
    pub(crate) hub: Arc<Hub>,
}

/// Who hears of changes: every live session and every open `subscriptions/listen`.
#[derive(Default)]
pub(crate) struct Hub {
    /// Every live session, for list changes and resource updates.
    sessions: Mutex<Vec<Weak<Session>>>,
    /// Open `subscriptions/listen` requests: their filter and stream.
    listeners: Mutex<Vec<Listener>>,
}

/// Announces changes to a [`Server`]'s clients; cheap to clone, and usable from a handler
/// ([`HandlerContext::notifier`]) or any task. It holds no session alive.
#[derive(Clone)]
pub struct Notifier(pub(crate) Arc<Hub>);

impl std::fmt::Debug for Notifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Notifier").finish_non_exhaustive()
    }
}

impl Notifier {
    /// Announces that a list changed: to every legacy session (on its GET stream or stdio)
    /// and every modern listen that asked for it. A session that cannot take it now (a full
    /// queue) misses it; a list change is a hint to list again, never data.
    pub fn list_changed(&self, kind: ListKind) {
        let hub = &self.0;
        let message = wire::notification(kind.method(), json!({}));
        // Legacy sessions only: a modern connection hears of changes on its listens.
        hub.broadcast(&message, |session| {
            lock(&session.core).legacy_version().is_some()
        });
        for listener in lock(&hub.listeners).iter() {
            if listener
                .filter
                .get(kind.filter_key())
                .and_then(Value::as_bool)
                == Some(true)
            {
                let mut message = message.clone();
                message["params"] = json!({ "_meta": subscription_meta(&listener.id) });
                listener.send(message);
            }
        }
    }

    /// Tells one session that the out-of-band step of its URL-mode elicitation
    /// `elicitation_id` is done (`notifications/elicitation/complete`), on its GET stream or
    /// stdio: how a server (or a gateway passing one on) lets the client retry what waited for
    /// it. A session that ended, or cannot take it now (a full queue), misses it.
    pub fn elicitation_complete(&self, session: SessionKey, elicitation_id: &str) {
        let message = wire::notification(
            "notifications/elicitation/complete",
            json!({ "elicitationId": elicitation_id }),
        );
        self.0
            .broadcast(&message, |candidate| candidate.key == Some(session));
    }

    /// Announces that a resource changed, to the sessions and listens subscribed to it.
    pub fn resource_updated(&self, uri: &str) {
        let hub = &self.0;
        let message = wire::notification("notifications/resources/updated", json!({ "uri": uri }));
        hub.broadcast(&message, |session| lock(&session.core).is_subscribed(uri));
        for listener in lock(&hub.listeners).iter() {
            let named = listener
                .filter
                .get("resourceSubscriptions")
                .and_then(Value::as_array);
            if named.is_some_and(|uris| uris.iter().any(|u| u.as_str() == Some(uri))) {
                let mut message = message.clone();
                message["params"]["_meta"] = subscription_meta(&listener.id);
                listener.send(message);
            }
        }
    }
}

impl Hub {
    fn broadcast(&self, message: &Value, wants: impl Fn(&Session) -> bool) {
        let mut sessions = lock(&self.sessions);
        sessions.retain(|session| session.strong_count() > 0);
        for session in sessions.iter().filter_map(Weak::upgrade) {
            if !wants(&session) {
                continue;
            }
            if let Some(out) = lock(&session.unsolicited).as_ref() {
                let _ = out.try_send(Out::Message(message.clone()));
            }
        }
    }
}

struct Listener {
    id: Value,
    filter: Map<String, Value>,
    /// Weak: a listen whose stream closed is gone, and holds no transport open.
    out: mpsc::WeakSender<Out>,
}

impl Listener {
    fn send(&self, message: Value) {
        if let Some(out) = self.out.upgrade() {
            let _ = out.try_send(Out::Message(message));
        }
    }
}

/// What a sealed session id is bound to.
const SESSION_ID_BINDING: &str = "mcp-session-id";

/// The longest session id taken (`http::check::MAX_SESSION_ID_BYTES`): room for a sealed one.
pub(crate) const MAX_SESSION_ID_BYTES: usize = 4096;

/// How long a sealed session id can be taken over by another replica after it was made.
pub const SESSION_ID_LIFETIME: Duration = Duration::from_secs(24 * 3600);

/// One session's shared state: its core, its requests in flight, and its requests to the
/// client.
pub(crate) struct Session {
    pub(crate) core: Mutex<SessionCore>,
    in_flight: Mutex<HashMap<String, AbortHandle>>,
    pending: Mutex<HashMap<String, oneshot::Sender<Result<Value, Value>>>>,
    next_id: AtomicU64,
    /// Where messages no request owns go: the GET stream, the stdio writer.
    pub(crate) unsolicited: Mutex<Option<Outbox>>,
    /// Told of each subscription the session still had when it closed.
    unsubscribed: Option<Unsubscribed>,
    /// A connection's or a legacy session's key (none for a modern HTTP request's own
    /// session), told to the handler once as the session closes.
    pub(crate) key: Option<SessionKey>,
    ended: Option<Ended>,
    closed: std::sync::atomic::AtomicBool,
}

/// What a closing session calls for each subscription it had.
type Unsubscribed = Box<dyn Fn(&str) + Send + Sync>;

/// What a closing session calls once with its key.
type Ended = Box<dyn Fn(SessionKey) + Send + Sync>;

/// Which session a request belongs to: a legacy session (its `Mcp-Session-Id` over HTTP) or a
/// stdio connection. Opaque, unique within the process for its lifetime, and the same for every
/// request of that session; a modern-era request over HTTP belongs to none
/// ([`HandlerContext::session`](crate::HandlerContext::session)). When the session ends (its
/// client's `DELETE`, the idle reaper, the connection's end) the handler is told once
/// ([`Handler::session_ended`](crate::Handler::session_ended)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionKey(u64);

/// The next [`SessionKey`] (process-wide, so two servers' keys never meet in one handler).
static NEXT_SESSION_KEY: AtomicU64 = AtomicU64::new(1);

impl Session {
    pub(crate) fn new() -> Self {
        Session {
            core: Mutex::new(SessionCore::new()),
            in_flight: Mutex::new(HashMap::new()),
            pending: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(0),
            unsolicited: Mutex::new(None),
            unsubscribed: None,
            key: None,
            ended: None,
            closed: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Cancels every request in flight and fails every wait on the client; its subscriptions
    /// end.
    pub(crate) fn close(&self) {
        let first = !self.closed.swap(true, Ordering::AcqRel);
        let subscriptions = {
            let mut core = lock(&self.core);
            core.close();
            core.take_subscriptions()
        };
        if let Some(unsubscribed) = &self.unsubscribed {
            for uri in &subscriptions {
                unsubscribed(uri);
            }
        }
        for (_, handle) in lock(&self.in_flight).drain() {
            handle.abort();
        }
        lock(&self.pending).clear();
        lock(&self.unsolicited).take();
        if first && let (Some(key), Some(ended)) = (self.key, &self.ended) {
            ended(key);
        }
    }

    /// Requests of this session running now.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn in_flight(&self) -> usize {
        lock(&self.in_flight).len()
    }
}

pub(crate) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Aborts a spawned request when dropped (an HTTP stream that closed cancels its request).
#[derive(Debug)]
pub(crate) struct CallGuard(Option<AbortHandle>);

impl CallGuard {
    pub(crate) fn detach(mut self) {
        self.0 = None;
    }
}

impl Drop for CallGuard {
    fn drop(&mut self) {
        if let Some(handle) = self.0.take() {
            handle.abort();
        }
    }
}

impl<H: Handler> Server<H> {
    /// A server for `handler`, with the default [`Limits`].
    pub fn new(handler: H) -> Self {
        Server::with_limits(handler, Limits::default())
    }

    /// A server for `handler` with these limits, whose tokens are sealed with `key`: replicas
    /// given the same key open each other's `requestState`s and cursors, and take over each
    /// other's legacy sessions over HTTP (a session's id is then sealed: see the `http`
    /// module), so they can run behind any load balancer.
    pub fn with_sealing_key(handler: H, limits: Limits, key: SealingKey) -> Self {
        Server::build(handler, limits, Some(key))
    }

    /// A server for `handler` with these limits.
    pub fn with_limits(handler: H, limits: Limits) -> Self {
        Server::build(handler, limits, None)
    }

    fn build(handler: H, limits: Limits, key: Option<SealingKey>) -> Self {
        let caps = handler.capabilities();
        let offer = Offer {
            info: serde_json::to_value(handler.info()).unwrap_or_else(|_| json!({})),
            capabilities: caps.to_json(),
            instructions: handler.instructions(),
        };
        Server {
            inner: Arc::new(Inner {
                handler,
                offer,
                caps,
                limits,
                portable: key.is_some(),
                sealer: key.map_or_else(Sealer::new, Sealer::with_key),
                hub: Arc::new(Hub::default()),
            }),
        }
    }

    /// The handler.
    pub fn handler(&self) -> &H {
        &self.inner.handler
    }

    /// The limits.
    pub fn limits(&self) -> &Limits {
        &self.inner.limits
    }

    /// The [`Notifier`] that announces list changes and resource updates to the clients.
    pub fn notifier(&self) -> Notifier {
        Notifier(Arc::clone(&self.inner.hub))
    }

    /// [`Notifier::list_changed`].
    pub fn list_changed(&self, kind: ListKind) {
        self.notifier().list_changed(kind);
    }

    /// [`Notifier::resource_updated`].
    pub fn resource_updated(&self, uri: &str) {
        self.notifier().resource_updated(uri);
    }

    /// A legacy session's id that carries what its client said at `initialize` (`params`),
    /// sealed, when the server was given a [`SealingKey`] and the id fits
    /// the longest session id taken (`http::check::MAX_SESSION_ID_BYTES`); else `None` (a
    /// client whose `initialize` would make a longer one gets a random id, and its session
    /// stays on the replica that made it).
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn sealed_session_id(&self, params: &Map<String, Value>) -> Option<String> {
        if !self.inner.portable {
            return None;
        }
        let carried: Map<String, Value> = ["protocolVersion", "capabilities", "clientInfo"]
            .into_iter()
            .filter_map(|key| Some((key.to_owned(), params.get(key)?.clone())))
            .collect();
        let id = (self.inner.sealer)
            .seal(SESSION_ID_BINDING, &Value::Object(carried))
            .ok()?;
        (id.len() <= MAX_SESSION_ID_BYTES).then_some(id)
    }

    /// What a sealed session id (made by this server or a replica with its key, within
    /// [`SESSION_ID_LIFETIME`]) carries: the `initialize` params to open the session again.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn open_session_id(&self, id: &str) -> Option<Map<String, Value>> {
        if !self.inner.portable {
            return None;
        }
        match self
            .inner
            .sealer
            .open(SESSION_ID_BINDING, id, SESSION_ID_LIFETIME, "session id")
        {
            Ok(Value::Object(params)) => Some(params),
            _ => None,
        }
    }

    /// A new session, known to the broadcasts.
    pub(crate) fn open_session(&self) -> Arc<Session> {
        let inner = Arc::clone(&self.inner);
        let ending = Arc::clone(&self.inner);
        let session = Arc::new(Session {
            unsubscribed: Some(Box::new(move |uri| {
                inner.handler.subscription_changed(uri, false);
            })),
            key: Some(SessionKey(NEXT_SESSION_KEY.fetch_add(1, Ordering::Relaxed))),
            ended: Some(Box::new(move |key| ending.handler.session_ended(key))),
            ..Session::new()
        });
        let mut sessions = lock(&self.inner.hub.sessions);
        sessions.retain(|session| session.strong_count() > 0);
        sessions.push(Arc::downgrade(&session));
        session
    }

    /// The core's step for one message of `session`; a change of its subscriptions is told
    /// to the handler ([`Handler::subscription_changed`]).
    pub(crate) fn step(&self, session: &Session, message: Inbound) -> Step {
        let watched = match &message {
            Inbound::Request { method, params, .. }
                if method == "resources/subscribe" || method == "resources/unsubscribe" =>
            {
                params.get("uri").and_then(Value::as_str).map(str::to_owned)
            }
            _ => None,
        };
        let mut core = lock(&session.core);
        let before = watched
            .as_deref()
            .is_some_and(|uri| core.is_subscribed(uri));
        let step = core.step(message, &self.inner.offer);
        let after = watched
            .as_deref()
            .is_some_and(|uri| core.is_subscribed(uri));
        drop(core);
        if let Some(uri) = watched
            && before != after
        {
            self.inner.handler.subscription_changed(&uri, after);
        }
        step
    }

    /// Carries out a reply or a cancel; gives back the other steps.
    pub(crate) fn settle(&self, session: &Session, step: Step) -> Option<Step> {
        match step {
            Step::Reply { id, outcome } => {
                if let Some(waiter) = lock(&session.pending).remove(&key(&id)) {
                    let _ = waiter.send(outcome);
                }
                None
            }
            Step::Cancel { id } => {
                if let Some(handle) = lock(&session.in_flight).remove(&key(&id)) {
                    handle.abort();
                }
                None
            }
            Step::Nothing => None,
            other => Some(other),
        }
    }

    /// Runs `call` on its own task; its messages and then its response go to `out`. Over the
    /// session's in-flight bound, the response is the error at once.
    pub(crate) fn spawn_call(&self, session: &Arc<Session>, call: Call, out: Outbox) -> CallGuard {
        let id_key = key(&call.id);
        {
            let in_flight = lock(&session.in_flight);
            if in_flight.len() >= self.inner.limits.max_in_flight || in_flight.contains_key(&id_key)
            {
                drop(in_flight);
                let error = if lock(&session.in_flight).contains_key(&id_key) {
                    Error::Rpc {
                        code: crate::error::INVALID_REQUEST,
                        message: "a request with this id is already running".into(),
                        data: None,
                    }
                } else {
                    Error::Limit("requests in flight per session")
                };
                let response = wire::error(&call.id, error.to_error_object());
                let _ = out.try_send(Out::Final(response));
                return CallGuard(None);
            }
        }
        let server = self.clone();
        let owner = Arc::clone(session);
        let task_key = id_key.clone();
        let handle = tokio::spawn(async move {
            let response = server.dispatch(&owner, call, out.clone()).await;
            lock(&owner.in_flight).remove(&task_key);
            let _ = out.send(Out::Final(response)).await;
        })
        .abort_handle();
        lock(&session.in_flight).insert(id_key, handle.clone());
        CallGuard(Some(handle))
    }

    /// The response to `call`.
    pub(crate) async fn dispatch(&self, session: &Arc<Session>, call: Call, out: Outbox) -> Value {
        let id = call.id.clone();
        let era = call.era;
        let method = call.method.clone();
        match self.run(session, call, out).await {
            Ok(result) => {
                let result = match era {
                    Era::Modern(_) => modern_result(&method, result),
                    Era::Legacy(_) => result,
                };
                wire::result(&id, result)
            }
            Err(err) => wire::error(&id, err.to_error_object_in(era)),
        }
    }

    async fn run(&self, session: &Arc<Session>, call: Call, out: Outbox) -> Result<Value, Error> {
        let caps = &self.inner.caps;
        let handler = &self.inner.handler;
        let ctx = HandlerContext {
            era: call.era,
            client: Arc::new(call.client.clone()),
            progress_token: call
                .params
                .get("_meta")
                .and_then(|meta| meta.get("progressToken"))
                .filter(|token| !token.is_null())
                .cloned(),
            out,
            responses: Arc::new(Map::new()),
            state: None,
            notifier: self.notifier(),
            session: session.key,
            asker: (!call.era.is_modern()).then(|| Asker {
                session: Arc::clone(session),
                timeout: self.inner.limits.input_timeout,
                max_pending: self.inner.limits.max_pending_inputs,
            }),
        };
        let params = &call.params;
        let offered = |on: bool| {
            if on {
                Ok(())
            } else {
                Err(Error::MethodNotFound(call.method.clone()))
            }
        };
        match call.method.as_str() {
            "server/discover" if call.era.is_modern() => Ok(self.discover()),
            "subscriptions/listen" if call.era.is_modern() => self.listen(&call, &ctx).await,
            "tools/list" => {
                offered(caps.tools)?;
                let tools = handler.list_tools(&ctx).await?;
                self.page("tools/list", "tools", tools, params)
            }
            "tools/call" => {
                offered(caps.tools)?;
                let name = string(params, "name")?;
                let arguments = object(params, "arguments")?;
                if let Some(headers) = &call.param_headers {
                    self.check_param_headers(&ctx, &name, &arguments, headers)
                        .await?;
                }
                let binding = format!("tools/call\0{name}");
                self.rounds(session, &call, &binding, ctx, |ctx| {
                    handler.call_tool(
                        ToolCallRequest {
                            name: name.clone(),
                            arguments: arguments.clone(),
                        },
                        ctx,
                    )
                })
                .await
            }
            "prompts/list" => {
                offered(caps.prompts)?;
                let prompts = handler.list_prompts(&ctx).await?;
                self.page("prompts/list", "prompts", prompts, params)
            }
            "prompts/get" => {
                offered(caps.prompts)?;
                let name = string(params, "name")?;
                let arguments = object(params, "arguments")?;
                let binding = format!("prompts/get\0{name}");
                self.rounds(session, &call, &binding, ctx, |ctx| {
                    handler.get_prompt(
                        PromptGet {
                            name: name.clone(),
                            arguments: arguments.clone(),
                        },
                        ctx,
                    )
                })
                .await
            }
            "resources/list" => {
                offered(caps.resources)?;
                let resources = handler.list_resources(&ctx).await?;
                self.page("resources/list", "resources", resources, params)
            }
            "resources/templates/list" => {
                offered(caps.resources)?;
                let templates = handler.list_resource_templates(&ctx).await?;
                self.page(
                    "resources/templates/list",
                    "resourceTemplates",
                    templates,
                    params,
                )
            }
            "resources/read" => {
                offered(caps.resources)?;
                let uri = string(params, "uri")?;
                let binding = format!("resources/read\0{uri}");
                self.rounds(session, &call, &binding, ctx, |ctx| {
                    handler.read_resource(uri.clone(), ctx)
                })
                .await
            }
            "completion/complete" => {
                offered(caps.completions)?;
                let request = complete_request(params)?;
                let completion = handler.complete(request, ctx).await?;
                Ok(json!({ "completion": to_json(&completion)? }))
            }
            _ => Err(Error::MethodNotFound(call.method.clone())),
        }
    }

    /// Checks a modern HTTP `tools/call`'s `Mcp-Param-*` headers against the arguments its
    /// tool designates (`-32020` when one is missing or differs).
    async fn check_param_headers(
        &self,
        ctx: &HandlerContext,
        name: &str,
        arguments: &Map<String, Value>,
        headers: &[(String, String)],
    ) -> Result<(), Error> {
        let tools = self.inner.handler.list_tools(ctx).await?;
        let Some(tool) = tools.iter().find(|tool| tool.name == name) else {
            return Ok(());
        };
        let schema = tool.input_schema.to_value();
        crate::params::check(&schema, arguments, headers).map_err(|message| Error::Rpc {
            code: era::HEADER_MISMATCH,
            message,
            data: None,
        })
    }

    fn discover(&self) -> Value {
        let versions: Vec<&str> = era::modern_versions()
            .iter()
            .chain(era::legacy_versions())
            .copied()
            .collect();
        let mut result = json!({
            "supportedVersions": versions,
            "capabilities": self.inner.offer.capabilities,
            "serverInfo": self.inner.offer.info,
            "_meta": { "io.modelcontextprotocol/serverInfo": self.inner.offer.info },
        });
        if let Some(instructions) = &self.inner.offer.instructions {
            result["instructions"] = json!(instructions);
        }
        result
    }

    /// One page of `items`, from the sealed cursor in `params`.
    fn page<T: Serialize>(
        &self,
        method: &str,
        member: &str,
        items: Vec<T>,
        params: &Map<String, Value>,
    ) -> Result<Value, Error> {
        // A cursor is good only for the lists' generation it was made in.
        let generation = self.inner.handler.list_generation();
        let binding = format!("cursor\0{method}\0{generation}");
        let start = match params.get("cursor") {
            None | Some(Value::Null) => 0,
            Some(Value::String(cursor)) => {
                let at = self
                    .inner
                    .sealer
                    .open(&binding, cursor, CURSOR_LIFETIME, "cursor")?;
                let at = at
                    .as_u64()
                    .ok_or_else(|| Error::invalid_params("invalid cursor"))?;
                usize::try_from(at).map_err(|_| Error::invalid_params("invalid cursor"))?
            }
            Some(_) => return Err(Error::invalid_params("cursor must be a string")),
        };
        if start > items.len() {
            return Err(Error::invalid_params("invalid cursor"));
        }
        let end = start
            .saturating_add(self.inner.limits.page_size.max(1))
            .min(items.len());
        let page: Vec<Value> = items[start..end]
            .iter()
            .map(to_json)
            .collect::<Result<_, _>>()?;
        let mut result = json!({ member: page });
        if end < items.len() {
            result["nextCursor"] = json!(self.inner.sealer.seal(&binding, &json!(end))?);
        }
        Ok(result)
    }

    /// Runs a method that may ask the client for input (the crate's handler docs).
    async fn rounds<T, F, Fut>(
        &self,
        session: &Arc<Session>,
        call: &Call,
        binding: &str,
        mut ctx: HandlerContext,
        mut method: F,
    ) -> Result<Value, Error>
    where
        T: Serialize,
        F: FnMut(HandlerContext) -> Fut,
        Fut: Future<Output = Result<Reply<T>, Error>>,
    {
        let limits = &self.inner.limits;
        if call.era.is_modern() {
            ctx.responses = Arc::new(object(&call.params, "inputResponses")?);
            ctx.state = match call.params.get("requestState") {
                None | Some(Value::Null) => None,
                Some(Value::String(token)) => Some(self.inner.sealer.open(
                    binding,
                    token,
                    STATE_LIFETIME,
                    "requestState",
                )?),
                Some(_) => return Err(Error::invalid_params("requestState must be a string")),
            };
            return match method(ctx).await? {
                Reply::Complete(result) => to_json(&result),
                Reply::InputRequired(input) => {
                    if input.requests.len() > limits.max_input_requests {
                        return Err(Error::Limit("input requests per round"));
                    }
                    for (_, request) in &input.requests {
                        if !era::has_capability(&call.client.capabilities, request.capability()) {
                            return Err(Error::MissingCapability(request.capability()));
                        }
                    }
                    let requests: Map<String, Value> = input
                        .requests
                        .iter()
                        .map(|(key, request)| (key.clone(), request.to_json()))
                        .collect();
                    let mut result = json!({ "resultType": "input_required" });
                    if !requests.is_empty() {
                        result["inputRequests"] = Value::Object(requests);
                    }
                    let state = input.state.unwrap_or(Value::Null);
                    result["requestState"] = json!(self.inner.sealer.seal(binding, &state)?);
                    Ok(result)
                }
            };
        }
        for _ in 0..limits.max_rounds {
            match method(ctx.clone()).await? {
                Reply::Complete(result) => return to_json(&result),
                Reply::InputRequired(input) => {
                    if input.requests.len() > limits.max_input_requests {
                        return Err(Error::Limit("input requests per round"));
                    }
                    for (_, request) in &input.requests {
                        if !ctx.client_has(request.capability()) {
                            return Err(Error::MissingCapability(request.capability()));
                        }
                    }
                    let out = &ctx.out;
                    let asks = input.requests.iter().map(|(key, request)| async move {
                        (key.clone(), self.ask(session, out, request).await)
                    });
                    let mut responses = Map::new();
                    for (key, answer) in join_all(asks).await {
                        responses.insert(key, answer?);
                    }
                    ctx.responses = Arc::new(responses);
                    ctx.state = input.state;
                }
            }
        }
        Err(Error::Limit("input rounds per request"))
    }

    /// Sends one request to the client on `out` and waits for its answer, within the bound.
    async fn ask(
        &self,
        session: &Arc<Session>,
        out: &Outbox,
        request: &InputRequest,
    ) -> Result<Value, Error> {
        let asker = Asker {
            session: Arc::clone(session),
            timeout: self.inner.limits.input_timeout,
            max_pending: self.inner.limits.max_pending_inputs,
        };
        asker.ask(out, request).await
    }

    /// A `subscriptions/listen`: acknowledged, then held open until its stream closes.
    async fn listen(&self, call: &Call, ctx: &HandlerContext) -> Result<Value, Error> {
        let wanted = object(&call.params, "notifications")?;
        let caps = &self.inner.caps;
        let mut honoured = Map::new();
        for (kind, on) in [
            ("toolsListChanged", caps.tools && caps.list_changed),
            ("promptsListChanged", caps.prompts && caps.list_changed),
            ("resourcesListChanged", caps.resources && caps.list_changed),
        ] {
            if on && wanted.get(kind).and_then(Value::as_bool) == Some(true) {
                honoured.insert(kind.into(), json!(true));
            }
        }
        if caps.subscribe
            && let Some(uris) = wanted
                .get("resourceSubscriptions")
                .and_then(Value::as_array)
        {
            let uris: Vec<Value> = uris
                .iter()
                .filter(|uri| {
                    uri.as_str()
                        .is_some_and(|uri| uri.len() <= crate::core::MAX_URI_BYTES)
                })
                .take(crate::core::MAX_SUBSCRIPTIONS)
                .cloned()
                .collect();
            honoured.insert("resourceSubscriptions".into(), Value::Array(uris));
        }
        {
            let mut listeners = lock(&self.inner.hub.listeners);
            listeners.retain(|listener| listener.out.strong_count() > 0);
            if listeners.len() >= self.inner.limits.max_listeners {
                return Err(Error::Limit("subscriptions/listen requests per server"));
            }
            listeners.push(Listener {
                id: call.id.clone(),
                filter: honoured.clone(),
                out: ctx.out.downgrade(),
            });
        }
        // The handler hears of the listen's resources as of a legacy session's subscriptions:
        // each once now, and each again when the listen ends (also when its future is dropped).
        let held: BTreeSet<String> = (honoured.get("resourceSubscriptions"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|uri| uri.as_str().map(str::to_owned))
            .collect();
        for uri in &held {
            self.inner.handler.subscription_changed(uri, true);
        }
        let _held = Held {
            handler: &self.inner.handler,
            uris: held,
        };
        ctx.notify(
            "notifications/subscriptions/acknowledged",
            json!({ "notifications": honoured, "_meta": subscription_meta(&call.id) }),
        )
        .await;
        ctx.out.closed().await;
        Ok(json!({}))
    }
}

/// A listen's resource URIs, told to the handler as ended when dropped.
struct Held<'a, H: Handler> {
    handler: &'a H,
    uris: BTreeSet<String>,
}

impl<H: Handler> Drop for Held<'_, H> {
    fn drop(&mut self) {
        for uri in &self.uris {
            self.handler.subscription_changed(uri, false);
        }
    }
}

fn subscription_meta(id: &Value) -> Value {
    json!({ "io.modelcontextprotocol/subscriptionId": id })
}

/// A modern result: `resultType` (unless the method set one), and the cache hints on the
/// results a client may keep.
fn modern_result(method: &str, result: Value) -> Value {
    let mut result = match result {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    result
        .entry("resultType")
        .or_insert_with(|| json!("complete"));
    let cacheable = matches!(
        method,
        "server/discover"
            | "tools/list"
            | "prompts/list"
            | "resources/list"
            | "resources/templates/list"
            | "resources/read"
    );
    if cacheable && result.get("resultType") == Some(&json!("complete")) {
        result.entry("ttlMs").or_insert_with(|| json!(0));
        result
            .entry("cacheScope")
            .or_insert_with(|| json!("private"));
    }
    Value::Object(result)
}

/// The map key of a JSON-RPC id (its JSON text: `1` and `"1"` differ).
pub(crate) fn key(id: &Value) -> String {
    id.to_string()
}

fn to_json<T: Serialize>(value: &T) -> Result<Value, Error> {
    serde_json::to_value(value).map_err(|err| Error::internal(err.to_string()))
}

fn string(params: &Map<String, Value>, member: &str) -> Result<String, Error> {
    params
        .get(member)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| Error::invalid_params(format!("{member} must be a string")))
}

fn object(params: &Map<String, Value>, member: &str) -> Result<Map<String, Value>, Error> {
    match params.get(member) {
        None | Some(Value::Null) => Ok(Map::new()),
        Some(Value::Object(object)) => Ok(object.clone()),
        Some(_) => Err(Error::invalid_params(format!("{member} must be an object"))),
    }
}

fn complete_request(params: &Map<String, Value>) -> Result<CompleteRequest, Error> {
    let reference = params
        .get("ref")
        .cloned()
        .and_then(|reference| serde_json::from_value(reference).ok())
        .ok_or_else(|| Error::invalid_params("ref must be a prompt or resource reference"))?;
    let argument = object(params, "argument")?;
    let context = object(params, "context")?;
    Ok(CompleteRequest {
        reference,
        argument: argument
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| Error::invalid_params("argument.name must be a string"))?
            .to_owned(),
        value: argument
            .get("value")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        context: object(&context, "arguments")?,
    })
}

/// A channel for one request's stream, bounded by [`Limits::stream_queue`].
pub(crate) fn stream(limits: &Limits) -> (Outbox, mpsc::Receiver<Out>) {
    mpsc::channel(limits.stream_queue.max(1))
}

/// A legacy session's way to ask its client (a request of ours on a request's stream), with
/// the server's bounds.
#[derive(Clone)]
pub(crate) struct Asker {
    pub(crate) session: Arc<Session>,
    pub(crate) timeout: Duration,
    pub(crate) max_pending: usize,
}

impl Asker {
    /// Sends one request to the client on `out` and waits for its answer, within the bound.
    pub(crate) async fn ask(&self, out: &Outbox, request: &InputRequest) -> Result<Value, Error> {
        let session = &*self.session;
        let id = json!(format!(
            "s{}",
            session.next_id.fetch_add(1, Ordering::Relaxed)
        ));
        let (tx, rx) = oneshot::channel();
        {
            let mut pending = lock(&session.pending);
            if pending.len() >= self.max_pending {
                return Err(Error::Limit("requests to the client per session"));
            }
            pending.insert(key(&id), tx);
        }
        struct Forget<'a>(&'a Session, String);
        impl Drop for Forget<'_> {
            fn drop(&mut self) {
                lock(&self.0.pending).remove(&self.1);
            }
        }
        let _forget = Forget(session, key(&id));
        let message = wire::request(&id, request.method(), request.params());
        out.send(Out::Message(message))
            .await
            .map_err(|_| Error::Closed)?;
        let method = request.method();
        match tokio::time::timeout(self.timeout, rx).await {
            Err(_) => Err(Error::InputTimeout {
                method: method.to_owned(),
                seconds: self.timeout.as_secs(),
            }),
            Ok(Err(_)) => Err(Error::Closed),
            Ok(Ok(Ok(result))) => Ok(result),
            Ok(Ok(Err(error))) => Err(Error::InputRefused {
                method: method.to_owned(),
                message: error["message"].as_str().unwrap_or_default().to_owned(),
            }),
        }
    }
}
