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
};
use sidewire_ext_host::protocol::{HookPayload, Verdict};
use sidewire_ext_host::{ExtensionHost, Outcome, TraceResult};
use sidewire_mcp::{
    CallToolResult, GetPromptResult, Implementation, McpHost, McpHostDriver, NoHandler, Prompt,
    ReadResourceResult, Resource, ResourceTemplate, ServerSpec, StartFailure, Tool,
    ToolCallOptions,
};
use sidewire_mcp_server::{
    Capabilities, CompleteRequest, Completion, CompletionRef, Handler, HandlerContext, ListKind,
    Notifier, PromptGet, Reply, ToolCallRequest,
};

use crate::audit::{Audit, AuditSink};
use crate::error::Error;
use crate::names::{Alias, Naming};
use crate::policy::Policy;

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
        }
    }

    /// Adds a server under the alias made from its name ([`Alias::from_server_name`]).
    #[must_use]
    pub fn server(mut self, spec: ServerSpec) -> Self {
        let alias = Alias::from_server_name(spec.name());
        self.servers.push(Upstream { spec, alias });
        self
    }

    /// Adds a server under `alias`.
    #[must_use]
    pub fn server_as(mut self, spec: ServerSpec, alias: Alias) -> Self {
        self.servers.push(Upstream { spec, alias });
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
    view: Mutex<Arc<View>>,
    calls: AtomicU64,
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

/// Where a tool of the view goes.
#[derive(Debug, Clone)]
struct Route {
    server: String,
    /// The host's namespaced name (`mcp__<server>__<tool>`): what the chain's sidecars see,
    /// the same name `sidewire run` gives them.
    host_name: String,
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
        let audit = Audit::open(&config.audit, config.audit_arguments)?;
        let (host, driver) = McpHost::new(NoHandler);
        let gateway = Gateway {
            inner: Arc::new(Inner {
                host,
                extensions,
                specs: config.servers.into_iter().map(|u| u.spec).collect(),
                naming,
                aliases,
                servers,
                policy: config.policy,
                audit,
                view: Mutex::default(),
                calls: AtomicU64::new(0),
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
        let failures = (self.inner.host)
            .start_available(self.inner.specs.clone())
            .await;
        let view = self.refresh();
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
    /// policy hides is not told). Runs until the upstreams shut down.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: it only waits and notifies.
    pub async fn watch(&self, notifier: Notifier) {
        let watchers =
            (self.inner.aliases.keys()).map(|server| self.watch_server(server, &notifier));
        future::join_all(watchers).await;
    }

    async fn watch_server(&self, server: &str, notifier: &Notifier) {
        loop {
            let Ok(client) = (self.inner.host).ready_client(server, RESTART_WAIT).await else {
                return;
            };
            let seen = client.list_revision();
            let now = client.list_changed_since(seen).await;
            let before = self.view();
            let after = self.refresh();
            let kinds = [ListKind::Tools, ListKind::Prompts, ListKind::Resources];
            for (i, kind) in kinds.into_iter().enumerate() {
                if before.digests[i] != after.digests[i] {
                    notifier.list_changed(kind);
                }
            }
            if now == seen && client.is_closed() {
                // The connection ended: wait for its restart (or the end).
                if self.inner.host.client(server).is_none() {
                    return;
                }
                tokio::task::yield_now().await;
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
            };
            if view.tool_routes.insert(name.clone(), route).is_some() {
                view.collisions.push(name);
                continue;
            }
            let mut tool = named.item.clone();
            tool.name = name;
            view.tools.push(tool);
        }
        for named in snapshot.prompts() {
            let Some(alias) = inner.aliases.get(named.server) else {
                continue;
            };
            let name = inner.naming.name(alias, &named.item.name);
            let route = Route {
                server: named.server.to_owned(),
                host_name: named.name.clone(),
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
        let policy = inner.policy.host_policy(&request.name);
        let arguments = Value::Object(request.arguments);
        let recorded = inner.audit.arguments(&arguments);
        let id = inner.calls.fetch_add(1, Ordering::Relaxed);
        let call = ToolCall::new(format!("gw-{id}"), route.host_name.clone(), arguments);
        // Progress from upstream goes on to the client; a full queue drops a report (progress
        // is advisory, and the next report says more).
        let (progress, mut reports) = tokio::sync::mpsc::channel(PROGRESS_QUEUE);
        let options = ToolCallOptions::new().on_progress(move |report| {
            let _ = progress.try_send(report);
        });
        let report = {
            // One generation of the extensions for the whole call (§13.3).
            let turn = inner.extensions.turn().await;
            let chained =
                std::pin::pin!(chained_tool_call(&turn, &inner.host, call, policy, options));
            relay(chained, &mut reports, &ctx).await
        };
        let (answer, outcome) = answer(&request.name, &report);
        if inner.audit.is_on() {
            let record = record(RecordParts {
                time,
                ctx: &ctx,
                server: &route.server,
                name: &request.name,
                report: &report,
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
        answer.map(Reply::from)
    }
}

/// Progress reports queued for one call at most.
const PROGRESS_QUEUE: usize = 32;

/// Runs `call`, passing each progress report on to the client meanwhile.
async fn relay<F: std::future::Future<Output = ToolCallReport> + Unpin>(
    mut call: F,
    reports: &mut tokio::sync::mpsc::Receiver<sidewire_mcp::Progress>,
    ctx: &HandlerContext,
) -> ToolCallReport {
    loop {
        match future::select(&mut call, std::pin::pin!(reports.recv())).await {
            Either::Left((report, _)) => return report,
            Either::Right((Some(p), _)) => {
                ctx.progress(p.progress, p.total, p.message.as_deref())
                    .await;
            }
            Either::Right((None, _)) => return call.await,
        }
    }
}

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
        }
    }
}

/// What the client gets for a call, and how it ended.
fn answer(
    name: &str,
    report: &ToolCallReport,
) -> (
    Result<CallToolResult, sidewire_mcp_server::Error>,
    CallOutcome,
) {
    let refused = |text: String, outcome| {
        let mut result = CallToolResult::text(text);
        result.is_error = true;
        (Ok(result), outcome)
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
                    (Ok(result), outcome)
                }
                None => (Ok(sent.clone()), outcome),
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
        Some(ToolStop::Failed(err)) => refused(
            format!("the call failed: {}", sidewire_mcp::error_line(err)),
            CallOutcome::Failed,
        ),
        Some(_) => refused("the call was not run".to_owned(), CallOutcome::Failed),
    }
}

struct RecordParts<'a> {
    time: SystemTime,
    ctx: &'a HandlerContext,
    server: &'a str,
    name: &'a str,
    report: &'a ToolCallReport,
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
    let host = report.policy.map(|policy| {
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
    let verdict = (report.permission.as_ref())
        .and_then(|outcome| outcome.permission)
        .map(Verdict::as_str);
    let mut record = json!({
        "time": sidewire_ext_host::audit_time(parts.time),
        "event": "tools/call",
        "client": client,
        "era": parts.ctx.era().version(),
        "server": parts.server,
        "tool": parts.name,
        "hostTool": report.tool,
        "policy": match parts.policy {
            ToolPolicy::AllowAll => "allow",
            ToolPolicy::ReadOnly => "read-only",
            ToolPolicy::DenyAll => "deny",
            _ => "other",
        },
        "hostDecision": host,
        "chain": {
            "toolBefore": report.before.as_ref().map(trace),
            "permission": report.permission.as_ref().map(trace),
            "toolAfter": report.after.as_ref().map(trace),
        },
        "verdict": verdict,
        "override": report.permission.as_ref().and_then(|o| o.audit.as_ref()).map(|a| json!({
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
        Capabilities::default()
            .tools()
            .prompts()
            .resources(false)
            .completions()
            .list_changed()
    }

    fn list_generation(&self) -> u64 {
        self.view().generation()
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
        _ctx: HandlerContext,
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
        let result = (self.inner.host)
            .get_prompt(&route.host_name, arguments)
            .await
            .map_err(|err| upstream_error(&err))?;
        Ok(Reply::from(result))
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
        _ctx: HandlerContext,
    ) -> Result<Reply<ReadResourceResult>, sidewire_mcp_server::Error> {
        let Some((server, upstream)) = self.resource_route(&uri) else {
            return Err(sidewire_mcp_server::Error::ResourceNotFound { uri });
        };
        let mut result = match self.inner.host.read_resource(&server, upstream).await {
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
        _ctx: HandlerContext,
    ) -> Result<Completion, sidewire_mcp_server::Error> {
        let (server, reference) = match &request.reference {
            CompletionRef::Prompt { name } => {
                let Some(route) = self.prompt_route(name) else {
                    return Err(sidewire_mcp_server::Error::invalid_params(format!(
                        "unknown prompt: {name}"
                    )));
                };
                let snapshot = self.inner.host.snapshot();
                let upstream = (snapshot.prompts())
                    .find(|p| p.name == route.host_name)
                    .map(|p| p.item.name.clone());
                let Some(upstream) = upstream else {
                    return Err(sidewire_mcp_server::Error::invalid_params(format!(
                        "unknown prompt: {name}"
                    )));
                };
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
        let client = (self.inner.host)
            .ready_client(&server, sidewire_mcp::DEFAULT_CALL_TIMEOUT)
            .await
            .map_err(|err| upstream_error(&err))?;
        client
            .complete(reference, &request.argument, &request.value, context)
            .await
            .map_err(|err| upstream_error(&err))
    }
}
