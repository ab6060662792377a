//! [`Gateway`]: the [`Handler`] that serves every upstream's tools, prompts and resources
//! under the gateway's names, and runs each tool call through the chain and the policy.

use std::collections::hash_map::DefaultHasher;
use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use futures_util::future::{self, Either};
use serde_json::{Value, json};
use sidewire_agent::{
    PolicyReason, ToolCall, ToolCallReport, ToolPolicy, ToolStop, chained_tool_call,
    chained_tool_call_to,
};
use sidewire_ext_host::protocol::{HookPayload, Verdict};
use sidewire_ext_host::{ExtensionHost, Outcome, TraceResult};
use sidewire_mcp::auth::{AuthorizationPrompt, Interaction};
use sidewire_mcp::{
    CallToolResult, ClientHandler, CreateMessageParams, CreateMessageResult, ElicitAction,
    ElicitParams, ElicitResult, ErrorObject, GetPromptResult, Implementation, LogMessage, McpHost,
    McpHostDriver, Progress, Prompt, ReadResourceResult, Resource, ResourceTemplate, Root,
    ServerSpec, StartFailure, Tool, ToolCallOptions, UrlElicitation,
};
use sidewire_mcp_server::{
    Capabilities, CompleteRequest, Completion, CompletionRef, Handler, HandlerContext,
    InputRequest, InputRequired, ListKind, Notifier, PromptGet, Reply, SessionKey, ToolCallRequest,
};

use crate::audit::{Audit, AuditSink};
use crate::error::Error;
use crate::instances::{
    DEFAULT_INSTANCE_IDLE, DEFAULT_MAX_INSTANCES, Instances, Lease, LeaseError, configured_name,
};
use crate::names::{Alias, Naming};
use crate::policy::Policy;
use crate::subscriptions::Subscriptions;

/// The name clients know the gateway by when none is given (`mcp__sidewire__<tool>`).
pub const DEFAULT_NAME: &str = "sidewire";

/// How long a list watcher waits for a restarting server before it looks again.
const RESTART_WAIT: Duration = Duration::from_secs(3600);

/// One upstream server and its alias.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Upstream {
    /// How to reach it.
    pub spec: ServerSpec,
    /// The prefix of its names.
    pub alias: Alias,
    /// One instance per client session ([`GatewayConfig::stateful`]) instead of one shared
    /// by all.
    pub stateful: bool,
}

/// What a [`Gateway`] serves and how.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct GatewayConfig {
    /// The name clients register the gateway under (Claude Code: `mcp__<name>__<tool>`),
    /// which sets how long a tool name may be. Default [`DEFAULT_NAME`].
    pub name: String,
    /// The upstream servers.
    pub servers: Vec<Upstream>,
    /// Names prefixed with each server's alias (default); `false` is bridge mode, which needs
    /// exactly one server and passes its names through unchanged.
    pub prefix: bool,
    /// What is shown and the host's verdict on each call.
    pub policy: Policy,
    /// Where the per-call audit records go.
    pub audit: AuditSink,
    /// Record each call's arguments (redacted) in its audit record.
    pub audit_arguments: bool,
    /// How a person signs in to an upstream that needs a login: a command line in which
    /// `{server}` stands for the server's name (the CLI's is `sidewire mcp login {server}`). A
    /// call that fails for want of a login gets a tool error that names it.
    pub login_command: Option<String>,
    /// The most instances of stateful servers at once, over all sessions (default
    /// [`DEFAULT_MAX_INSTANCES`](crate::DEFAULT_MAX_INSTANCES)): when all are taken, the
    /// longest unused one not serving a call is closed to make room, and when every one is
    /// serving a call the request is refused.
    pub max_instances: usize,
    /// How long an instance of a stateful server may go unused before it is closed (default
    /// [`DEFAULT_INSTANCE_IDLE`](crate::DEFAULT_INSTANCE_IDLE)); [`Gateway::watch`] closes them.
    pub instance_idle: Duration,
    /// Names given to [`GatewayConfig::stateful`] that no server has.
    unknown_stateful: Vec<String>,
}

impl GatewayConfig {
    /// No servers yet; prefixed names, the read-only policy, no audit.
    pub fn new() -> Self {
        GatewayConfig {
            name: DEFAULT_NAME.to_owned(),
            servers: Vec::new(),
            prefix: true,
            policy: Policy::default(),
            audit: AuditSink::Off,
            audit_arguments: false,
            login_command: None,
            max_instances: DEFAULT_MAX_INSTANCES,
            instance_idle: DEFAULT_INSTANCE_IDLE,
            unknown_stateful: Vec::new(),
        }
    }

    /// Adds a server under the alias made from its name ([`Alias::from_server_name`]).
    #[must_use]
    pub fn server(mut self, spec: ServerSpec) -> Self {
        let alias = Alias::from_server_name(spec.name());
        self.servers.push(Upstream {
            spec,
            alias,
            stateful: false,
        });
        self
    }

    /// Adds a server under `alias`.
    #[must_use]
    pub fn server_as(mut self, spec: ServerSpec, alias: Alias) -> Self {
        self.servers.push(Upstream {
            spec,
            alias,
            stateful: false,
        });
        self
    }

    /// Marks the server `name` stateful: each client session gets an instance of its own
    /// (started on the session's first call, prompt, read or completion on it, closed when
    /// the session ends or after [`instance_idle`](GatewayConfig::instance_idle) unused),
    /// while the shared instance serves the lists and the requests that belong to no session
    /// (a modern-era request over HTTP). A stdio connection is one session. [`Gateway::new`]
    /// refuses a name that is not configured.
    #[must_use]
    pub fn stateful(mut self, name: &str) -> Self {
        match self.servers.iter_mut().find(|u| u.spec.name() == name) {
            Some(upstream) => upstream.stateful = true,
            None => self.unknown_stateful.push(name.to_owned()),
        }
        self
    }

    /// The cap on instances of stateful servers and how long one may go unused.
    #[must_use]
    pub fn instances(mut self, max: usize, idle: Duration) -> Self {
        self.max_instances = max;
        self.instance_idle = idle;
        self
    }

    /// The name clients know the gateway by.
    #[must_use]
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Bridge mode: one server, its names unchanged.
    #[must_use]
    pub fn bridge(mut self) -> Self {
        self.prefix = false;
        self
    }

    /// The policy.
    #[must_use]
    pub fn policy(mut self, policy: Policy) -> Self {
        self.policy = policy;
        self
    }

    /// Where audit records go, and whether they carry the (redacted) arguments.
    #[must_use]
    pub fn audit(mut self, sink: AuditSink, arguments: bool) -> Self {
        self.audit = sink;
        self.audit_arguments = arguments;
        self
    }

    /// The command a person runs to sign in to an upstream, with `{server}` for its name.
    #[must_use]
    pub fn login_command(mut self, command: impl Into<String>) -> Self {
        self.login_command = Some(command.into());
        self
    }
}

impl Default for GatewayConfig {
    fn default() -> Self {
        GatewayConfig::new()
    }
}

/// One MCP server in front of many. Cheap to clone; every clone is the same gateway.
///
/// Serve it with `sidewire_mcp_server::Server::new(gateway.clone())` over stdio or HTTP,
/// and run [`Gateway::watch`] beside it so clients hear of list changes.
#[derive(Clone)]
pub struct Gateway {
    inner: Arc<Inner>,
}

struct Inner {
    host: McpHost,
    extensions: ExtensionHost,
    specs: Vec<ServerSpec>,
    naming: Naming,
    /// Server name → alias.
    aliases: BTreeMap<String, Alias>,
    /// Alias → server name.
    servers: BTreeMap<String, String>,
    policy: Policy,
    audit: Audit,
    login_command: Option<String>,
    view: Mutex<Arc<View>>,
    /// The view's digests the clients were last told of (at start: the first view's).
    told: Mutex<[u64; 3]>,
    calls: AtomicU64,
    inflight: Arc<Inflight>,
    elicited: Arc<UrlElicitations>,
    subscriptions: Arc<Subscriptions>,
    /// The stateful servers' specs, by name.
    stateful: BTreeMap<String, ServerSpec>,
    instances: Instances,
}

/// What an upstream says during a call, on its way to the client whose call it is.
enum Forward {
    Progress(Progress),
    Log(LogMessage),
    /// A request of the upstream's (sampling, elicitation), for the client to answer.
    Ask {
        request: InputRequest,
        answer: tokio::sync::oneshot::Sender<Result<Value, sidewire_mcp_server::Error>>,
    },
    /// The upstream's sign-in page, for the client to open (a URL-mode elicitation): the call
    /// goes on when the sign-in's redirect comes back; when the client does not accept, why
    /// goes to `declined` and the sign-in fails at once.
    SignIn {
        server: String,
        url: String,
        declined: tokio::sync::oneshot::Sender<String>,
    },
}

/// Signs in to an upstream through the client whose call needs it: the upstream host's
/// [`AuthorizationPrompt`] when the configured authorizer has nobody to sign in. The sign-in
/// page goes to the latest call in flight on that server whose client can be sent it mid-call
/// (a legacy client that takes URL-mode elicitation); with none, the sign-in fails at once
/// (login required: the call's error names the login command).
struct SignInPrompt {
    inflight: Arc<Inflight>,
}

impl SignInPrompt {
    fn signing_call(&self, server: &str) -> Option<tokio::sync::mpsc::Sender<Forward>> {
        let calls = self.inflight.lock();
        let filed = calls
            .get(server)?
            .iter()
            .rev()
            .find(|filed| filed.signs_in)?;
        Some(filed.to.clone())
    }
}

impl AuthorizationPrompt for SignInPrompt {
    fn open(&self, server: &str, url: &url::Url) {
        drop(self.open_until_declined(server, url));
    }

    fn open_until_declined(
        &self,
        server: &str,
        url: &url::Url,
    ) -> futures_util::future::BoxFuture<'static, String> {
        let (declined, why) = tokio::sync::oneshot::channel();
        let sign_in = Forward::SignIn {
            server: server.to_owned(),
            url: url.to_string(),
            declined,
        };
        let sent = self
            .signing_call(server)
            .is_some_and(|to| to.try_send(sign_in).is_ok());
        if !sent {
            return Box::pin(future::ready(
                "no client of this call can open a sign-in page".to_owned(),
            ));
        }
        // Accepted (the sender dropped): the wait for the redirect decides.
        Box::pin(async move {
            match why.await {
                Ok(why) => why,
                Err(_) => future::pending().await,
            }
        })
    }

    fn can_open(&self, server: &str) -> bool {
        self.signing_call(server).is_some()
    }
}

/// The calls in flight on each upstream, each with where its upstream's messages go: the
/// way an upstream's log line finds the client whose call it is (a shared upstream says
/// nothing of which call a log belongs to, so each call on that server hears it).
/// Server name → the calls in flight on it, each with where its messages go.
type Calls = HashMap<String, Vec<Filed>>;

/// One call in flight on a server.
struct Filed {
    id: u64,
    to: tokio::sync::mpsc::Sender<Forward>,
    /// Its client can be sent a sign-in page mid-call (a legacy client that takes URL-mode
    /// elicitation).
    signs_in: bool,
    /// Its client's session, and the way to tell it what no request owns (a URL elicitation's
    /// completion).
    session: Option<SessionKey>,
    notifier: Notifier,
}

/// The most URL elicitations of upstreams the gateway remembers, to pass on their
/// `notifications/elicitation/complete` to the session that was asked (the oldest is
/// forgotten first).
pub const MAX_PASSED_URL_ELICITATIONS: usize = 256;

/// A URL elicitation passed on to a session: its upstream, its id, and whom to tell.
struct Elicited {
    server: String,
    id: String,
    session: SessionKey,
    notifier: Notifier,
}

/// The URL elicitations passed on to sessions, oldest first (at most
/// [`MAX_PASSED_URL_ELICITATIONS`]).
#[derive(Default)]
struct UrlElicitations(Mutex<std::collections::VecDeque<Elicited>>);

impl UrlElicitations {
    fn remember(&self, server: &str, id: &str, session: SessionKey, notifier: &Notifier) {
        let mut held = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        held.retain(|e| !(e.server == server && e.id == id));
        if held.len() >= MAX_PASSED_URL_ELICITATIONS {
            held.pop_front();
        }
        held.push_back(Elicited {
            server: server.to_owned(),
            id: id.to_owned(),
            session,
            notifier: notifier.clone(),
        });
    }

    /// Tells the session asked for `id` on `server` that it is done, once.
    fn complete(&self, server: &str, id: &str) {
        let mut held = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(at) = held.iter().position(|e| e.server == server && e.id == id) {
            let elicited = held.remove(at).expect("the position found");
            drop(held);
            elicited.notifier.elicitation_complete(elicited.session, id);
        }
    }
}

#[derive(Default)]
struct Inflight {
    calls: Mutex<Calls>,
}

impl Inflight {
    fn lock(&self) -> std::sync::MutexGuard<'_, Calls> {
        self.calls
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Files the call on `server` until the guard drops.
    fn enter<'a>(&'a self, server: &str, filed: Filed) -> impl Drop + 'a {
        let id = filed.id;
        self.lock()
            .entry(server.to_owned())
            .or_default()
            .push(filed);
        struct Leave<'a>(&'a Inflight, String, u64);
        impl Drop for Leave<'_> {
            fn drop(&mut self) {
                let mut calls = self.0.lock();
                if let Some(list) = calls.get_mut(&self.1) {
                    list.retain(|filed| filed.id != self.2);
                    if list.is_empty() {
                        calls.remove(&self.1);
                    }
                }
            }
        }
        Leave(self, server.to_owned(), id)
    }
}

/// The upstream host's handler. Sampling and form elicitation are offered upstream and passed
/// on to the client whose call is in flight on that server (the latest one when several are:
/// a shared upstream does not say which call a request belongs to), which must have declared
/// the capability and be able to be asked mid-call (a legacy session); anything else is
/// refused with the client's reason. Log lines go to every call in flight on their server (a
/// full queue drops one: logs are advisory).
struct Upstreams {
    inflight: Arc<Inflight>,
    elicited: Arc<UrlElicitations>,
    subscriptions: Arc<Subscriptions>,
    naming: Naming,
    /// Server name → alias.
    aliases: BTreeMap<String, Alias>,
}

impl Upstreams {
    /// Passes `request` on to the latest call in flight on `server`, and waits for the answer.
    async fn ask(&self, server: &str, request: InputRequest) -> Result<Value, ErrorObject> {
        let method = request.method();
        let to = (self.inflight.lock().get(server))
            .and_then(|calls| calls.last().map(|filed| filed.to.clone()));
        let Some(to) = to else {
            return Err(ErrorObject::new(
                ErrorObject::INVALID_REQUEST,
                format!("{method} outside of a call: no client to ask"),
            ));
        };
        let (answer, answered) = tokio::sync::oneshot::channel();
        let gone = || ErrorObject::internal(format!("the call that {method} belongs to ended"));
        to.send(Forward::Ask { request, answer })
            .await
            .map_err(|_| gone())?;
        match answered.await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(err)) => Err(ErrorObject::new(err.code(), err.to_string())),
            Err(_) => Err(gone()),
        }
    }
}

impl ClientHandler for Upstreams {
    fn on_resource_updated(&self, server: &str, uri: &str) {
        if let Some(alias) = self.aliases.get(configured_name(server)) {
            self.subscriptions.updated(self.naming.uri(alias, uri));
        }
    }

    fn supports_sampling(&self) -> bool {
        true
    }

    fn supports_elicitation(&self) -> bool {
        true
    }

    fn supports_url_elicitation(&self) -> bool {
        true
    }

    fn supports_roots(&self) -> bool {
        true
    }

    async fn create_message(
        &self,
        server: &str,
        params: CreateMessageParams,
    ) -> Result<CreateMessageResult, ErrorObject> {
        let params =
            serde_json::to_value(params).map_err(|err| ErrorObject::internal(err.to_string()))?;
        let answer = self.ask(server, InputRequest::Sample(params)).await?;
        serde_json::from_value(answer).map_err(|err| {
            ErrorObject::internal(format!(
                "the client's sampling answer does not decode: {err}"
            ))
        })
    }

    async fn elicit(
        &self,
        server: &str,
        params: ElicitParams,
    ) -> Result<ElicitResult, ErrorObject> {
        let params =
            serde_json::to_value(params).map_err(|err| ErrorObject::internal(err.to_string()))?;
        let answer = self.ask(server, InputRequest::Elicit(params)).await?;
        serde_json::from_value(answer).map_err(|err| {
            ErrorObject::internal(format!(
                "the client's elicitation answer does not decode: {err}"
            ))
        })
    }

    /// A URL-mode elicitation goes to the client whose call it is, when that client takes
    /// URL mode (`elicitation.url`); the client shows the URL and opens it.
    async fn elicit_url(
        &self,
        server: &str,
        request: UrlElicitation,
    ) -> Result<ElicitAction, ErrorObject> {
        let params = json!({
            "mode": "url",
            "message": request.message,
            "url": request.url,
            "elicitationId": request.elicitation_id,
        });
        // The session asked (the call `ask` picks), to tell when the upstream completes it.
        let asked = (self.inflight.lock().get(server))
            .and_then(|calls| calls.last())
            .and_then(|filed| Some((filed.session?, filed.notifier.clone())));
        let answer = self.ask(server, InputRequest::Elicit(params)).await?;
        let action: ElicitAction =
            serde_json::from_value(answer["action"].clone()).map_err(|err| {
                ErrorObject::internal(format!(
                    "the client's URL elicitation answer does not decode: {err}"
                ))
            })?;
        if action == ElicitAction::Accept
            && let Some((session, notifier)) = asked
        {
            (self.elicited).remember(server, &request.elicitation_id, session, &notifier);
        }
        Ok(action)
    }

    fn on_elicitation_complete(&self, server: &str, elicitation_id: &str) {
        self.elicited.complete(server, elicitation_id);
    }

    /// A `roots/list` goes to the client whose call is in flight on that server; with no call
    /// in flight, or a client that declared no `roots`, the answer is the gateway's own: none.
    async fn list_roots(&self, server: &str) -> Option<Result<Vec<Root>, ErrorObject>> {
        let to = (self.inflight.lock().get(server))
            .and_then(|calls| calls.last().map(|filed| filed.to.clone()))?;
        let (answer, answered) = tokio::sync::oneshot::channel();
        let request = InputRequest::ListRoots;
        to.send(Forward::Ask { request, answer }).await.ok()?;
        match answered.await.ok()? {
            Ok(answer) => Some(
                serde_json::from_value(answer["roots"].clone()).map_err(|err| {
                    ErrorObject::internal(format!("the client's roots do not decode: {err}"))
                }),
            ),
            Err(sidewire_mcp_server::Error::MissingCapability(_)) => None,
            Err(err) => Some(Err(ErrorObject::new(err.code(), err.to_string()))),
        }
    }

    fn on_log(&self, server: &str, message: &LogMessage) {
        if let Some(calls) = self.inflight.lock().get(server) {
            for filed in calls {
                let _ = filed.to.try_send(Forward::Log(message.clone()));
            }
        }
    }
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gateway")
            .field("servers", &self.inner.aliases)
            .field("naming", &self.inner.naming)
            .field("policy", &self.inner.policy)
            .finish_non_exhaustive()
    }
}

/// The `server` an extension tool's route and audit records name: `ext:<plugin>`.
const EXTENSION_SERVER_PREFIX: &str = "ext:";

/// Where a tool of the view goes.
#[derive(Debug, Clone)]
struct Route {
    server: String,
    /// The host's namespaced name (`mcp__<server>__<tool>`): what the chain's sidecars see,
    /// the same name `sidewire run` gives them.
    host_name: String,
    /// The item's name on its server.
    upstream: String,
}

/// The lists as the gateway serves them, built from one snapshot of the upstreams.
#[derive(Debug, Default)]
struct View {
    tools: Vec<Tool>,
    tool_routes: HashMap<String, Route>,
    prompts: Vec<Prompt>,
    prompt_routes: HashMap<String, Route>,
    resources: Vec<Resource>,
    templates: Vec<ResourceTemplate>,
    /// Two gateway names given to different upstream items (only the first is kept).
    collisions: Vec<String>,
    /// A digest of each list kind, to tell which changed.
    digests: [u64; 3],
}

impl View {
    fn generation(&self) -> u64 {
        let mut hasher = DefaultHasher::new();
        self.digests.hash(&mut hasher);
        hasher.finish()
    }
}

fn digest<T: serde::Serialize>(items: &[T]) -> u64 {
    let mut hasher = DefaultHasher::new();
    serde_json::to_string(items)
        .unwrap_or_default()
        .hash(&mut hasher);
    hasher.finish()
}

/// Runs the gateway's upstream connections; spawn it (or poll it beside the server) before
/// [`Gateway::start`].
#[must_use = "the upstream servers do nothing unless the driver is polled"]
pub struct GatewayDriver(McpHostDriver);

impl std::fmt::Debug for GatewayDriver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("GatewayDriver").field(&self.0).finish()
    }
}

impl std::future::Future for GatewayDriver {
    type Output = ();

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<()> {
        std::pin::Pin::new(&mut self.0).poll(cx)
    }
}

impl Gateway {
    /// A gateway for `config`, whose calls go through `extensions`' chain; and the driver of
    /// its upstream connections. Nothing is started yet ([`Gateway::start`]).
    ///
    /// # Errors
    ///
    /// [`Error::is_config`]: two servers share an alias or a name, or bridge mode has other
    /// than one server; [`Error::is_audit`]: the audit file cannot be opened.
    pub fn new(
        config: GatewayConfig,
        extensions: ExtensionHost,
    ) -> Result<(Gateway, GatewayDriver), Error> {
        let naming = if config.prefix {
            Naming::prefixed(&config.name)
        } else {
            if config.servers.len() != 1 {
                return Err(Error::config(format!(
                    "bridge mode (no prefix) serves exactly one server; {} are configured",
                    config.servers.len()
                )));
            }
            Naming::Bridge
        };
        let mut aliases = BTreeMap::new();
        let mut servers = BTreeMap::new();
        for upstream in &config.servers {
            let name = upstream.spec.name().to_owned();
            if let Some(other) = servers.insert(upstream.alias.to_string(), name.clone()) {
                return Err(Error::config(format!(
                    "servers {other:?} and {name:?} both have the alias {:?}; give one another alias",
                    upstream.alias.as_str()
                )));
            }
            if aliases
                .insert(name.clone(), upstream.alias.clone())
                .is_some()
            {
                return Err(Error::config(format!(
                    "server {name:?} is configured twice"
                )));
            }
        }
        if let Some(name) = config.unknown_stateful.first() {
            return Err(Error::config(format!(
                "no server {name:?} to make stateful; the configured servers are {}",
                config
                    .servers
                    .iter()
                    .map(|u| format!("{:?}", u.spec.name()))
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        let stateful: BTreeMap<String, ServerSpec> = (config.servers.iter())
            .filter(|u| u.stateful)
            .map(|u| (u.spec.name().to_owned(), u.spec.clone()))
            .collect();
        let audit = Audit::open(&config.audit, config.audit_arguments)?;
        let inflight = Arc::new(Inflight::default());
        let subscriptions = Arc::new(Subscriptions::default());
        // An upstream whose authorizer has nobody to sign in asks the client whose call needs
        // the sign-in to open its page.
        let prompt: Arc<dyn AuthorizationPrompt> = Arc::new(SignInPrompt {
            inflight: Arc::clone(&inflight),
        });
        let specs: Vec<ServerSpec> = (config.servers.into_iter())
            .map(|upstream| match upstream.spec.authorizer_ref() {
                Some(authorizer) if !authorizer.is_interactive() => {
                    let authorizer =
                        (authorizer.clone()).interaction(Interaction::Prompt(Arc::clone(&prompt)));
                    upstream.spec.authorizer(authorizer)
                }
                _ => upstream.spec,
            })
            .collect();
        let stateful: BTreeMap<String, ServerSpec> = (specs.iter())
            .filter(|spec| stateful.contains_key(spec.name()))
            .map(|spec| (spec.name().to_owned(), spec.clone()))
            .collect();
        let elicited = Arc::new(UrlElicitations::default());
        let (host, driver) = McpHost::new(Upstreams {
            inflight: Arc::clone(&inflight),
            elicited: Arc::clone(&elicited),
            subscriptions: Arc::clone(&subscriptions),
            naming: naming.clone(),
            aliases: aliases.clone(),
        });
        let gateway = Gateway {
            inner: Arc::new(Inner {
                host,
                extensions,
                specs,
                naming,
                aliases,
                servers,
                policy: config.policy,
                audit,
                login_command: config.login_command,
                view: Mutex::default(),
                told: Mutex::default(),
                calls: AtomicU64::new(0),
                inflight,
                elicited,
                subscriptions,
                stateful,
                instances: Instances::new(config.max_instances, config.instance_idle),
            }),
        };
        Ok((gateway, GatewayDriver(driver)))
    }

    /// Starts every upstream in parallel and keeps those that start; returns the failures.
    ///
    /// # Errors
    ///
    /// [`Error::is_config`] when two of the started servers' items get one gateway name (the
    /// servers are shut down again).
    ///
    /// # Cancel safety
    ///
    /// Dropping the future abandons the startups in flight (their processes are killed).
    pub async fn start(&self) -> Result<Vec<StartFailure>, Error> {
        // Roots are declared to every upstream (`Upstreams::supports_roots`): its `roots/list`
        // goes to the client whose call is in flight, or is answered with none.
        self.inner.host.set_roots(Vec::new()).await;
        let failures = (self.inner.host)
            .start_available(self.inner.specs.clone())
            .await;
        // Each upstream that logs sends every level: each client's own level is applied on the
        // way out (`logging/setLevel`, or a modern request's `logLevel`).
        for server in self.inner.aliases.keys() {
            if let Some(client) = self.inner.host.client(server)
                && client.capabilities().logging.is_some()
                && let Err(err) = client.set_log_level(sidewire_mcp::LogLevel::Debug).await
            {
                tracing::debug!(server = %server, error = %err, "the upstream took no log level");
            }
        }
        let view = self.refresh();
        *self
            .inner
            .told
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = view.digests;
        if !view.collisions.is_empty() {
            self.inner.host.shutdown().await;
            return Err(Error::config(format!(
                "two upstream items would share the gateway name(s) {}; give a server another alias",
                view.collisions.join(", ")
            )));
        }
        Ok(failures)
    }

    /// The upstream host (status, servers).
    pub fn host(&self) -> &McpHost {
        &self.inner.host
    }

    /// Shuts the upstreams down (each bounded; see [`McpHost::shutdown`]).
    ///
    /// # Cancel safety
    ///
    /// Dropping the future stops waiting; what is not closed yet is killed when the last
    /// handle drops.
    pub async fn shutdown(&self) {
        self.inner.host.shutdown().await;
    }

    /// Tells `notifier`'s clients whenever an upstream's tools, prompts or resources change as
    /// the gateway serves them (after the upstream client's own debounce; a change that the
    /// policy hides is not told), and keeps the upstreams subscribed to the resources clients
    /// subscribed to, passing on their updates. Runs until the upstreams shut down.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: it only waits, notifies, and subscribes upstream (a subscription cancelled
    /// midway may or may not exist upstream; an update from it reaches only subscribed clients).
    pub async fn watch(&self, notifier: Notifier) {
        let watchers =
            (self.inner.aliases.keys()).map(|server| self.watch_server(server, &notifier));
        let watchers = std::pin::pin!(future::join_all(watchers));
        let following = std::pin::pin!(self.follow_subscriptions(&notifier));
        let reaping = std::pin::pin!(self.reap_instances());
        let working = future::select(following, reaping);
        future::select(watchers, working).await;
    }

    /// Closes the instances of stateful servers unused for their idle time, looking a few
    /// times per idle time (at most every 30 s, at least every 10 ms). Runs for ever.
    async fn reap_instances(&self) {
        if self.inner.stateful.is_empty() {
            return future::pending().await;
        }
        let every = (self.inner.instances.idle() / 4)
            .clamp(Duration::from_millis(10), Duration::from_secs(30));
        let mut ticks = tokio::time::interval(every);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticks.tick().await;
            let idle = self.inner.instances.reap_idle();
            if !idle.is_empty() {
                tracing::debug!(instances = idle.len(), "closing idle instances");
                self.close_instances(idle).await;
            }
        }
    }

    /// How many instances of stateful servers run (or start) now.
    pub fn instances(&self) -> usize {
        self.inner.instances.len()
    }

    /// Subscribes and unsubscribes upstream as the clients' subscriptions come and go, and
    /// tells the clients of the updates. Runs for ever.
    async fn follow_subscriptions(&self, notifier: &Notifier) {
        // Gateway URIs subscribed upstream.
        let mut upstream = std::collections::HashSet::new();
        loop {
            let work = self.inner.subscriptions.next().await;
            for uri in &work.updated {
                notifier.resource_updated(uri);
            }
            for (uri, wanted) in work.subscribe {
                if wanted == upstream.contains(&uri) {
                    continue;
                }
                let Some((server, upstream_uri)) = self.resource_route(&uri) else {
                    continue;
                };
                let Some(client) = self.inner.host.client(&server) else {
                    continue;
                };
                let done = if wanted {
                    client.subscribe(upstream_uri).await
                } else {
                    client.unsubscribe(upstream_uri).await
                };
                match done {
                    Ok(()) if wanted => {
                        upstream.insert(uri);
                    }
                    Ok(()) => {
                        upstream.remove(&uri);
                    }
                    Err(err) => tracing::debug!(
                        server = %server,
                        "the upstream (un)subscription failed: {}",
                        sidewire_mcp::error_line(&err)
                    ),
                }
            }
        }
    }

    async fn watch_server(&self, server: &str, notifier: &Notifier) {
        loop {
            let Ok(client) = (self.inner.host).ready_client(server, RESTART_WAIT).await else {
                return;
            };
            // The revision first, then the view: a change after the read wakes the wait, one
            // before it is in the view.
            let seen = client.list_revision();
            self.tell_changes(notifier);
            let now = client.list_changed_since(seen).await;
            self.tell_changes(notifier);
            if now == seen && client.is_closed() {
                // The connection ended: wait for its restart (or the end).
                if self.inner.host.client(server).is_none() {
                    return;
                }
                tokio::task::yield_now().await;
            }
        }
    }

    /// Tells the clients of each list kind whose view differs from what they were last told
    /// (a client's own listing does not count: another client may not have listed).
    fn tell_changes(&self, notifier: &Notifier) {
        let view = self.refresh();
        let mut told = (self.inner.told)
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let kinds = [ListKind::Tools, ListKind::Prompts, ListKind::Resources];
        for (i, kind) in kinds.into_iter().enumerate() {
            if told[i] != view.digests[i] {
                told[i] = view.digests[i];
                notifier.list_changed(kind);
            }
        }
    }

    /// The view as last built.
    fn view(&self) -> Arc<View> {
        Arc::clone(
            &self
                .inner
                .view
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }

    /// Builds the view from the upstreams' lists as they are now.
    fn refresh(&self) -> Arc<View> {
        let view = Arc::new(self.build());
        for name in &view.collisions {
            tracing::warn!(name = %name, "two upstream items share one gateway name; the second is not served");
        }
        *self
            .inner
            .view
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Arc::clone(&view);
        view
    }

    fn build(&self) -> View {
        let inner = &*self.inner;
        let snapshot = inner.host.snapshot();
        let mut view = View::default();
        for named in snapshot.tools() {
            let Some(alias) = inner.aliases.get(named.server) else {
                continue;
            };
            let name = inner.naming.name(alias, &named.item.name);
            if !inner.policy.shows(&name) {
                continue;
            }
            let route = Route {
                server: named.server.to_owned(),
                host_name: named.name.clone(),
                upstream: named.item.name.clone(),
            };
            if view.tool_routes.insert(name.clone(), route).is_some() {
                view.collisions.push(name);
                continue;
            }
            let mut tool = named.item.clone();
            tool.name = name;
            view.tools.push(tool);
        }
        // The extension tools of the published generation (spec delta §2.5), by their own
        // `ext__<plugin>__<tool>` names (already model-safe, and never `mcp__…`), after the MCP
        // tools; their calls take the same chained call. A reload that changes them is seen at
        // the next rebuild of the view, not announced by itself.
        for tool in inner.extensions.tools() {
            if !inner.policy.shows(&tool.name) {
                continue;
            }
            let route = Route {
                server: format!("{EXTENSION_SERVER_PREFIX}{}", tool.plugin),
                host_name: tool.name.clone(),
                upstream: tool.tool.clone(),
            };
            if view.tool_routes.insert(tool.name.clone(), route).is_some() {
                view.collisions.push(tool.name);
                continue;
            }
            let mut item = Tool::new(
                &tool.name,
                &tool.description,
                Value::Object(tool.input_schema),
            );
            if tool.read_only {
                item.annotations = Some(json!({"readOnlyHint": true}).into());
            }
            view.tools.push(item);
        }
        for named in snapshot.prompts() {
            let Some(alias) = inner.aliases.get(named.server) else {
                continue;
            };
            let name = inner.naming.name(alias, &named.item.name);
            let route = Route {
                server: named.server.to_owned(),
                host_name: named.name.clone(),
                upstream: named.item.name.clone(),
            };
            if view.prompt_routes.insert(name.clone(), route).is_some() {
                view.collisions.push(name);
                continue;
            }
            let mut prompt = named.item.clone();
            prompt.name = name;
            view.prompts.push(prompt);
        }
        for (server, resource) in snapshot.resources() {
            let Some(alias) = inner.aliases.get(server) else {
                continue;
            };
            let mut resource = resource.clone();
            resource.uri = inner.naming.uri(alias, &resource.uri);
            view.resources.push(resource);
        }
        for (server, template) in snapshot.resource_templates() {
            let Some(alias) = inner.aliases.get(server) else {
                continue;
            };
            let mut template = template.clone();
            template.uri_template = inner.naming.uri(alias, &template.uri_template);
            view.templates.push(template);
        }
        view.digests = [
            digest(&view.tools),
            digest(&view.prompts),
            digest(&view.resources) ^ digest(&view.templates).rotate_left(1),
        ];
        view
    }

    /// The route of the tool `name`: from the view, else from a fresh one (a tool listed
    /// since). Hidden and unknown tools have none.
    fn tool_route(&self, name: &str) -> Option<Route> {
        if let Some(route) = self.view().tool_routes.get(name) {
            return Some(route.clone());
        }
        self.refresh().tool_routes.get(name).cloned()
    }

    fn prompt_route(&self, name: &str) -> Option<Route> {
        if let Some(route) = self.view().prompt_routes.get(name) {
            return Some(route.clone());
        }
        self.refresh().prompt_routes.get(name).cloned()
    }

    /// The server and upstream URI of a gateway URI.
    fn resource_route<'a>(&self, uri: &'a str) -> Option<(String, &'a str)> {
        let inner = &*self.inner;
        match inner.naming.split_uri(uri) {
            Some((alias, upstream)) => Some((inner.servers.get(alias)?.clone(), upstream)),
            None if inner.naming == Naming::Bridge => {
                Some((inner.aliases.keys().next()?.clone(), uri))
            }
            None => None,
        }
    }

    /// The session's own instance of `server` when it is stateful and the request belongs to
    /// a session (held while the lease lives), else `None`: the shared instance serves it.
    async fn instance(
        &self,
        server: &str,
        ctx: &HandlerContext,
    ) -> Result<Option<Lease>, sidewire_mcp_server::Error> {
        let inner = &*self.inner;
        let (Some(spec), Some(session)) = (inner.stateful.get(server), ctx.session()) else {
            return Ok(None);
        };
        match inner.instances.lease(&inner.host, session, spec).await {
            Ok(lease) => Ok(Some(lease)),
            Err(LeaseError::Full { max }) => Err(sidewire_mcp_server::Error::Rpc {
                code: ErrorObject::INTERNAL_ERROR,
                message: format!(
                    "all {max} instances of stateful servers are serving calls; try again when one ends"
                ),
                data: Some(json!({"reason": "instances_full", "max": max})),
            }),
            Err(LeaseError::Start(err)) => Err(upstream_error(&err)),
        }
    }

    /// Closes the named instances (each bounded: [`McpHost::remove`]).
    async fn close_instances(&self, names: Vec<String>) {
        let host = &self.inner.host;
        future::join_all(names.iter().map(|name| host.remove(name))).await;
    }

    /// One tool call: the chain, the upstream, the audit record.
    async fn call(
        &self,
        request: ToolCallRequest,
        ctx: HandlerContext,
    ) -> Result<Reply<CallToolResult>, sidewire_mcp_server::Error> {
        let inner = &*self.inner;
        let started = Instant::now();
        let time = SystemTime::now();
        let Some(route) = self.tool_route(&request.name) else {
            return Err(unknown_tool(&request.name));
        };
        let lease = self.instance(&route.server, &ctx).await?;
        // The host name of the tool on the session's instance (the chain sees the shared name).
        let target = match &lease {
            Some(lease) => {
                let snapshot = inner.host.snapshot();
                let found = (snapshot.tools())
                    .find(|tool| tool.server == lease.name() && tool.item.name == route.upstream)
                    .map(|tool| tool.name);
                let Some(found) = found else {
                    return Err(unknown_tool(&request.name));
                };
                Some(found)
            }
            None => None,
        };
        let serving = lease.as_ref().map_or(route.server.as_str(), Lease::name);
        let policy = inner.policy.host_policy(&request.name);
        let arguments = Value::Object(request.arguments);
        let recorded = inner.audit.arguments(&arguments);
        // A call the client cancels is dropped wherever it is: the guard writes its record.
        let mut unfinished = Unfinished {
            audit: &inner.audit,
            parts: Some(RecordParts {
                time,
                ctx: &ctx,
                server: &route.server,
                name: &request.name,
                host_tool: &route.host_name,
                report: None,
                policy,
                outcome: CallOutcome::Cancelled,
                arguments: recorded.clone(),
                elapsed: Duration::ZERO,
            }),
            started,
        };
        let id = inner.calls.fetch_add(1, Ordering::Relaxed);
        let call = ToolCall::new(format!("gw-{id}"), route.host_name.clone(), arguments);
        // Progress and log lines from upstream go on to the client; a full queue drops one
        // (both are advisory, and the next report says more).
        let (forward, mut reports) = tokio::sync::mpsc::channel(FORWARD_QUEUE);
        let filed = Filed {
            id,
            to: forward.clone(),
            signs_in: !ctx.era().is_modern() && ctx.client_has("elicitation.url"),
            session: ctx.session(),
            notifier: ctx.notifier().clone(),
        };
        let _filed = inner.inflight.enter(serving, filed);
        let options = ToolCallOptions::new().on_progress(move |report| {
            let _ = forward.try_send(Forward::Progress(report));
        });
        let options = passing_input(&ctx, options);
        let report = {
            // One generation of the extensions for the whole call (§13.3).
            let turn = inner.extensions.turn().await;
            match &target {
                Some(target) => {
                    let chained = std::pin::pin!(chained_tool_call_to(
                        &turn,
                        &inner.host,
                        call,
                        target,
                        policy,
                        options
                    ));
                    relay(chained, &mut reports, &ctx).await
                }
                None => {
                    let chained = std::pin::pin!(chained_tool_call(
                        &turn,
                        &inner.host,
                        call,
                        policy,
                        options
                    ));
                    relay(chained, &mut reports, &ctx).await
                }
            }
        };
        let login = inner.login_command.as_deref();
        let (answer, outcome) = answer(&request.name, &route.server, login, &report);
        // A `-32042` passes through as it is: its URL elicitations' completions reach this
        // session.
        if let (Some(ToolStop::Failed(sidewire_agent::Error::Tool { source, .. })), Some(session)) =
            (&report.stop, ctx.session())
        {
            for elicitation in source.url_elicitations() {
                (inner.elicited).remember(
                    serving,
                    &elicitation.elicitation_id,
                    session,
                    ctx.notifier(),
                );
            }
        }
        unfinished.parts = None;
        if inner.audit.is_on() {
            let record = record(RecordParts {
                time,
                ctx: &ctx,
                server: &route.server,
                name: &request.name,
                host_tool: &route.host_name,
                report: Some(&report),
                policy,
                outcome,
                arguments: recorded,
                elapsed: started.elapsed(),
            });
            if let Err(err) = inner.audit.write(&record) {
                tracing::error!(error = %err, "an audit record could not be written; the result is withheld");
                return Err(sidewire_mcp_server::Error::internal(
                    "the gateway could not write the call's audit record, so its result is withheld",
                ));
            }
        }
        answer
    }
}

/// `options` for a modern client, which cannot be asked mid-call: a modern upstream's input
/// requests go to it as this request's own `input_required` (the upstream's `requestState`
/// inside ours, which the server seals), its answers go back up on the retry, and each leg
/// declares the client's capabilities, so the upstream asks only for what it can give. A
/// legacy client is asked mid-call instead ([`Upstreams`]).
fn passing_input(ctx: &HandlerContext, options: ToolCallOptions) -> ToolCallOptions {
    if !ctx.era().is_modern() {
        return options;
    }
    let state = (ctx.request_state())
        .and_then(|state| state.get(UPSTREAM_STATE))
        .and_then(Value::as_str)
        .map(str::to_owned);
    options.pass_input_through(
        ctx.input_responses().clone(),
        state,
        ctx.client_capabilities().clone(),
    )
}

/// The member of the gateway's `requestState` that holds its upstream's.
const UPSTREAM_STATE: &str = "upstream";

/// An upstream's input requests as the client's: `{method, params}` by key.
fn input_required<T>(
    requests: &serde_json::Map<String, Value>,
    state: Option<&str>,
) -> Result<Reply<T>, sidewire_mcp_server::Error> {
    let mut input = InputRequired::new();
    for (key, request) in requests {
        let params = request.get("params").cloned().unwrap_or(Value::Null);
        let request = match request.get("method").and_then(Value::as_str) {
            Some("sampling/createMessage") => InputRequest::Sample(params),
            Some("elicitation/create") => InputRequest::Elicit(params),
            Some("roots/list") => InputRequest::ListRoots,
            other => {
                return Err(sidewire_mcp_server::Error::internal(format!(
                    "the upstream asked for input the gateway does not know: {}",
                    other.unwrap_or("(no method)")
                )));
            }
        };
        input = input.request(key.clone(), request);
    }
    Ok(Reply::InputRequired(
        input.state(json!({ UPSTREAM_STATE: state })),
    ))
}

/// Progress reports and log lines queued for one call at most.
const FORWARD_QUEUE: usize = 32;

/// Runs `call`, passing each progress report and log line on to the client meanwhile.
async fn relay<F: std::future::Future<Output = ToolCallReport> + Unpin>(
    mut call: F,
    reports: &mut tokio::sync::mpsc::Receiver<Forward>,
    ctx: &HandlerContext,
) -> ToolCallReport {
    let report = loop {
        let next = match future::select(&mut call, std::pin::pin!(reports.recv())).await {
            Either::Left((report, _)) => break report,
            Either::Right((next, _)) => next,
        };
        match next {
            Some(forward) => tell(ctx, forward).await,
            None => break call.await,
        }
    };
    // What the upstream said before its answer is queued already (the connection hands
    // messages over in arrival order): it goes first.
    while let Ok(forward) = reports.try_recv() {
        tell(ctx, forward).await;
    }
    report
}

/// Passes one progress report or log line on to the client.
async fn tell(ctx: &HandlerContext, forward: Forward) {
    match forward {
        Forward::Progress(p) => {
            ctx.progress(p.progress, p.total, p.message.as_deref())
                .await
        }
        Forward::Log(line) => ctx.log(line.level, line.logger.as_deref(), line.data).await,
        Forward::Ask { request, answer } => {
            let _ = answer.send(ctx.ask(&request).await);
        }
        Forward::SignIn {
            server,
            url,
            declined,
        } => {
            let id = SIGN_INS.fetch_add(1, Ordering::Relaxed);
            let request = InputRequest::Elicit(json!({
                "mode": "url",
                "message": format!("Sign in to {server} to go on with this call"),
                "url": url,
                "elicitationId": format!("sidewire-sign-in-{id}"),
            }));
            let why = match ctx.ask(&request).await {
                Ok(answer) if answer["action"] == "accept" => return,
                Ok(answer) => format!(
                    "the client answered {}",
                    answer["action"].as_str().unwrap_or("without an action")
                ),
                Err(err) => format!("the client could not be asked: {err}"),
            };
            let _ = declined.send(why);
        }
    }
}

/// Numbers the sign-in pages sent to clients (their `elicitationId`s).
static SIGN_INS: AtomicU64 = AtomicU64::new(1);

fn unknown_tool(name: &str) -> sidewire_mcp_server::Error {
    sidewire_mcp_server::Error::invalid_params(format!("unknown tool: {name}"))
}

/// How a call ended, as its audit record says it.
#[derive(Debug, Clone, Copy)]
enum CallOutcome {
    Ok,
    ToolError,
    Blocked,
    Denied,
    Failed,
    Unknown,
    InputRequired,
    LoginRequired,
    /// The client cancelled (or went away) before the call ended: what the chain decided
    /// is not known to the record.
    Cancelled,
}

impl CallOutcome {
    fn as_str(self) -> &'static str {
        match self {
            CallOutcome::Ok => "ok",
            CallOutcome::ToolError => "tool_error",
            CallOutcome::Blocked => "blocked",
            CallOutcome::Denied => "denied",
            CallOutcome::Failed => "failed",
            CallOutcome::Unknown => "unknown_tool",
            CallOutcome::InputRequired => "input_required",
            CallOutcome::LoginRequired => "login_required",
            CallOutcome::Cancelled => "cancelled",
        }
    }
}

/// What the client gets for a call, and how it ended.
fn answer(
    name: &str,
    server: &str,
    login_command: Option<&str>,
    report: &ToolCallReport,
) -> (
    Result<Reply<CallToolResult>, sidewire_mcp_server::Error>,
    CallOutcome,
) {
    let refused = |text: String, outcome| {
        let mut result = CallToolResult::text(text);
        result.is_error = true;
        (Ok(Reply::from(result)), outcome)
    };
    match &report.stop {
        None => {
            let Some(sent) = &report.call_result else {
                return (
                    Err(sidewire_mcp_server::Error::internal(
                        "the call has no result",
                    )),
                    CallOutcome::Failed,
                );
            };
            let outcome = if sent.is_error {
                CallOutcome::ToolError
            } else {
                CallOutcome::Ok
            };
            // `tool.after` may have rewritten the result: then the client gets the rewrite
            // (text), else the server's result whole (every content item, structured content).
            let rewritten = match (&report.after, &report.result) {
                (
                    Some(Outcome {
                        payload: HookPayload::ToolAfter(after),
                        ..
                    }),
                    Some(seen),
                ) => {
                    let is_error = after.is_error.unwrap_or(seen.is_error);
                    (after.result != seen.text.join("\n") || is_error != seen.is_error)
                        .then(|| (after.result.clone(), is_error))
                }
                _ => None,
            };
            match rewritten {
                Some((text, is_error)) => {
                    let mut result = CallToolResult::text(text);
                    result.is_error = is_error;
                    (Ok(Reply::from(result)), outcome)
                }
                None => (Ok(Reply::from(sent.clone())), outcome),
            }
        }
        Some(ToolStop::UnknownTool) => (Err(unknown_tool(name)), CallOutcome::Unknown),
        Some(ToolStop::Blocked {
            point,
            plugin,
            reason,
        }) => refused(
            format!(
                "the call was blocked at {} by {plugin}: {reason}",
                point.as_str()
            ),
            CallOutcome::Blocked,
        ),
        Some(ToolStop::Denied) => refused(
            format!("permission to call {name} was denied by the gateway's policy"),
            CallOutcome::Denied,
        ),
        // The upstream asks a modern client for input: this call's own `input_required`.
        Some(ToolStop::Failed(sidewire_agent::Error::Tool { source, .. }))
            if source.is_input_required() =>
        {
            let empty = serde_json::Map::new();
            let (requests, state) = source.input_required().unwrap_or((&empty, None));
            (input_required(requests, state), CallOutcome::InputRequired)
        }
        // The upstream needs a sign-in no one here can give: the client is told how.
        Some(ToolStop::Failed(sidewire_agent::Error::Tool { source, .. }))
            if source.is_login_required() =>
        {
            refused(
                login_text(server, login_command),
                CallOutcome::LoginRequired,
            )
        }
        // The upstream's own JSON-RPC error (`-32602`, `-32021`, ...) goes to the client as it
        // is: the gateway adds nothing to a refusal it did not make.
        Some(ToolStop::Failed(sidewire_agent::Error::Tool { source, .. }))
            if source.remote().is_some() =>
        {
            (Err(upstream_error(source)), CallOutcome::Failed)
        }
        Some(ToolStop::Failed(err)) => refused(
            format!("the call failed: {}", sidewire_mcp::error_line(err)),
            CallOutcome::Failed,
        ),
        Some(_) => refused("the call was not run".to_owned(), CallOutcome::Failed),
    }
}

/// What a client is told when `server` needs a sign-in.
fn login_text(server: &str, login_command: Option<&str>) -> String {
    match login_command {
        Some(command) => format!(
            "server {server} needs a sign-in: run `{}`, then call again",
            command.replace("{server}", server)
        ),
        None => format!("server {server} needs a sign-in"),
    }
}

/// Writes the record of a call dropped before it ended (outcome `cancelled`).
struct Unfinished<'a> {
    audit: &'a Audit,
    /// `None` once the call ended (its own record is written).
    parts: Option<RecordParts<'a>>,
    started: Instant,
}

impl Drop for Unfinished<'_> {
    fn drop(&mut self) {
        let Some(mut parts) = self.parts.take() else {
            return;
        };
        if !self.audit.is_on() {
            return;
        }
        parts.elapsed = self.started.elapsed();
        if let Err(err) = self.audit.write(&record(parts)) {
            tracing::error!(error = %err, "a cancelled call's audit record could not be written");
        }
    }
}

struct RecordParts<'a> {
    time: SystemTime,
    ctx: &'a HandlerContext,
    server: &'a str,
    name: &'a str,
    /// The host's name of the tool (`mcp__<server>__<tool>`).
    host_tool: &'a str,
    /// How far the call got; `None` for a cancelled call.
    report: Option<&'a ToolCallReport>,
    policy: ToolPolicy,
    outcome: CallOutcome,
    arguments: Option<Value>,
    elapsed: Duration,
}

/// One call's audit record.
fn record(parts: RecordParts<'_>) -> Value {
    let report = parts.report;
    let client = parts.ctx.client_info().map(|info| {
        json!({
            "name": info.get("name").cloned().unwrap_or(Value::Null),
            "version": info.get("version").cloned().unwrap_or(Value::Null),
        })
    });
    let host = report.and_then(|report| report.policy).map(|policy| {
        json!({
            "decision": policy.decision.as_str(),
            "why": match policy.why {
                PolicyReason::ReadOnly => "read_only",
                PolicyReason::AllowAll => "allowed",
                PolicyReason::NotReadOnly => "not_read_only",
                PolicyReason::DenyAll => "denied",
                _ => "other",
            },
        })
    });
    let permission = report.and_then(|report| report.permission.as_ref());
    let verdict = permission
        .and_then(|outcome| outcome.permission)
        .map(Verdict::as_str);
    let mut record = json!({
        "time": sidewire_ext_host::audit_time(parts.time),
        "event": "tools/call",
        "client": client,
        "era": parts.ctx.era().version(),
        "server": parts.server,
        "tool": parts.name,
        "hostTool": parts.host_tool,
        "policy": match parts.policy {
            ToolPolicy::AllowAll => "allow",
            ToolPolicy::ReadOnly => "read-only",
            ToolPolicy::DenyAll => "deny",
            _ => "other",
        },
        "hostDecision": host,
        "chain": report.map(|report| json!({
            "toolBefore": report.before.as_ref().map(trace),
            "permission": report.permission.as_ref().map(trace),
            "toolAfter": report.after.as_ref().map(trace),
        })),
        "verdict": verdict,
        "override": permission.and_then(|o| o.audit.as_ref()).map(|a| json!({
            "plugin": a.plugin, "reason": a.reason,
        })),
        "outcome": parts.outcome.as_str(),
        "durationMs": parts.elapsed.as_secs_f64() * 1000.0,
    });
    if let Some(arguments) = parts.arguments {
        record["arguments"] = arguments;
    }
    record
}

/// One point's trace: each member's decision or failure, and its time.
fn trace(outcome: &Outcome) -> Value {
    let members: Vec<Value> = (outcome.trace.iter())
        .map(|entry| {
            let (decision, failure) = match &entry.result {
                TraceResult::Decided(decision) => (Some(decision.as_str()), None),
                TraceResult::Failed { reason, .. } => (None, Some(reason.as_str())),
                TraceResult::Unaudited { decision, .. } => {
                    (Some(decision.as_str()), Some("audit_failed"))
                }
                _ => (None, None),
            };
            json!({
                "plugin": entry.plugin,
                "decision": decision,
                "failure": failure,
                "ms": entry.elapsed.as_secs_f64() * 1000.0,
            })
        })
        .collect();
    json!({
        "blocked": outcome.blocked.as_ref().map(|b| json!({"plugin": b.plugin, "reason": b.reason})),
        "members": members,
    })
}

fn upstream_error(err: &sidewire_mcp::Error) -> sidewire_mcp_server::Error {
    match err.remote() {
        Some(remote) => sidewire_mcp_server::Error::Rpc {
            code: remote.code,
            message: remote.message.clone(),
            data: remote.data.clone(),
        },
        None => sidewire_mcp_server::Error::internal(sidewire_mcp::error_line(err)),
    }
}

/// A prompt argument as the upstream takes it: text as it is, anything else as JSON.
fn argument_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

impl Handler for Gateway {
    fn info(&self) -> Implementation {
        let mut info = Implementation::default();
        info.name = "sidewire-gateway".to_owned();
        info.version = env!("CARGO_PKG_VERSION").to_owned();
        info
    }

    fn capabilities(&self) -> Capabilities {
        // Subscriptions when a started upstream takes them (the server asks once, after the
        // start).
        let subscribe = (self.inner.aliases.keys())
            .filter_map(|server| self.inner.host.client(server))
            .any(|client| {
                (client.capabilities().resources.as_ref())
                    .is_some_and(|resources| resources.subscribe)
            });
        Capabilities::default()
            .tools()
            .prompts()
            .resources(subscribe)
            .completions()
            .logging()
            .list_changed()
    }

    fn list_generation(&self) -> u64 {
        self.view().generation()
    }

    fn subscription_changed(&self, uri: &str, subscribed: bool) {
        self.inner.subscriptions.changed(uri, subscribed);
    }

    fn session_ended(&self, session: SessionKey) {
        let ended = self.inner.instances.session_ended(session);
        if ended.is_empty() {
            return;
        }
        // Closing is async and this must not block: the transport's runtime does it.
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                let gateway = self.clone();
                runtime.spawn(async move { gateway.close_instances(ended).await });
            }
            Err(_) => tracing::warn!(
                instances = ended.len(),
                "a session ended outside a runtime: its instances close at shutdown"
            ),
        }
    }

    async fn list_tools(
        &self,
        _ctx: &HandlerContext,
    ) -> Result<Vec<Tool>, sidewire_mcp_server::Error> {
        Ok(self.refresh().tools.clone())
    }

    async fn call_tool(
        &self,
        call: ToolCallRequest,
        ctx: HandlerContext,
    ) -> Result<Reply<CallToolResult>, sidewire_mcp_server::Error> {
        self.call(call, ctx).await
    }

    async fn list_prompts(
        &self,
        _ctx: &HandlerContext,
    ) -> Result<Vec<Prompt>, sidewire_mcp_server::Error> {
        Ok(self.refresh().prompts.clone())
    }

    async fn get_prompt(
        &self,
        get: PromptGet,
        ctx: HandlerContext,
    ) -> Result<Reply<GetPromptResult>, sidewire_mcp_server::Error> {
        let Some(route) = self.prompt_route(&get.name) else {
            return Err(sidewire_mcp_server::Error::invalid_params(format!(
                "unknown prompt: {}",
                get.name
            )));
        };
        let arguments: BTreeMap<String, String> = (get.arguments.iter())
            .map(|(key, value)| (key.clone(), argument_text(value)))
            .collect();
        let upstream = route.upstream;
        let lease = self.instance(&route.server, &ctx).await?;
        let serving = lease.as_ref().map_or(route.server.as_str(), Lease::name);
        let client = (self.inner.host)
            .ready_client(serving, sidewire_mcp::DEFAULT_CALL_TIMEOUT)
            .await
            .map_err(|err| upstream_error(&err))?;
        let options = passing_input(&ctx, ToolCallOptions::new());
        match client.get_prompt_with(&upstream, arguments, options).await {
            Ok(result) => Ok(Reply::from(result)),
            Err(err) if err.is_input_required() => {
                let empty = serde_json::Map::new();
                let (requests, state) = err.input_required().unwrap_or((&empty, None));
                input_required(requests, state)
            }
            Err(err) => Err(upstream_error(&err)),
        }
    }

    async fn list_resources(
        &self,
        _ctx: &HandlerContext,
    ) -> Result<Vec<Resource>, sidewire_mcp_server::Error> {
        Ok(self.refresh().resources.clone())
    }

    async fn list_resource_templates(
        &self,
        _ctx: &HandlerContext,
    ) -> Result<Vec<ResourceTemplate>, sidewire_mcp_server::Error> {
        Ok(self.refresh().templates.clone())
    }

    async fn read_resource(
        &self,
        uri: String,
        ctx: HandlerContext,
    ) -> Result<Reply<ReadResourceResult>, sidewire_mcp_server::Error> {
        let Some((server, upstream)) = self.resource_route(&uri) else {
            return Err(sidewire_mcp_server::Error::ResourceNotFound { uri });
        };
        let lease = self.instance(&server, &ctx).await?;
        let serving = lease.as_ref().map_or(server.as_str(), Lease::name);
        let mut result = match self.inner.host.read_resource(serving, upstream).await {
            Ok(result) => result,
            Err(err) if err.is_resource_not_found() => {
                return Err(sidewire_mcp_server::Error::ResourceNotFound { uri });
            }
            Err(err) => return Err(upstream_error(&err)),
        };
        if let Some(alias) = self.inner.aliases.get(&server) {
            for contents in &mut result.contents {
                contents.uri = self.inner.naming.uri(alias, &contents.uri);
            }
        }
        Ok(Reply::from(result))
    }

    async fn complete(
        &self,
        request: CompleteRequest,
        ctx: HandlerContext,
    ) -> Result<Completion, sidewire_mcp_server::Error> {
        let (server, reference) = match &request.reference {
            CompletionRef::Prompt { name } => {
                let Some(route) = self.prompt_route(name) else {
                    return Err(sidewire_mcp_server::Error::invalid_params(format!(
                        "unknown prompt: {name}"
                    )));
                };
                let upstream = route.upstream;
                (route.server, CompletionRef::Prompt { name: upstream })
            }
            CompletionRef::Resource { uri } => {
                let Some((server, upstream)) = self.resource_route(uri) else {
                    return Err(sidewire_mcp_server::Error::invalid_params(format!(
                        "unknown resource template: {uri}"
                    )));
                };
                let upstream = upstream.to_owned();
                (server, CompletionRef::Resource { uri: upstream })
            }
        };
        let context: BTreeMap<String, String> = (request.context.iter())
            .map(|(key, value)| (key.clone(), argument_text(value)))
            .collect();
        let lease = self.instance(&server, &ctx).await?;
        let serving = lease.as_ref().map_or(server.as_str(), Lease::name);
        let client = (self.inner.host)
            .ready_client(serving, sidewire_mcp::DEFAULT_CALL_TIMEOUT)
            .await
            .map_err(|err| upstream_error(&err))?;
        client
            .complete(reference, &request.argument, &request.value, context)
            .await
            .map_err(|err| upstream_error(&err))
    }
}
