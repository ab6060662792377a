//! [`Client`]: one connection to one MCP server, and its [`ClientDriver`].
//!
//! Connecting opens the transport, runs the `initialize` handshake (offering
//! [`LATEST_PROTOCOL_VERSION`], accepting the older versions in [`SUPPORTED_PROTOCOL_VERSIONS`]) while
//! polling the driver itself, sends `notifications/initialized`, and hands the driver back for
//! the caller to run. It does not keep a registry of servers (that is [`crate::McpHost`]) and does
//! not reconnect.

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use serde_json::{Value, json};
use sidewire_jsonrpc::{CallOptions, Config, Peer, Profile, RawResult, Request, lock};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::oneshot;
use tokio::time::Instant;

use crate::error::{Handshake, Kind, no_mutual_version};
use crate::protocol::bridge;
use crate::protocol::era::{self, DiscoverResult, Era, EraChoice, Probe};
use crate::protocol::features::Listed;
use crate::protocol::handler::{self, ClientHandler, DynHandler};
use crate::protocol::listen;
use crate::protocol::listing::{self, Truncation};
use crate::protocol::methods::{
    CallTool, CallToolParams, Complete, CompleteArgument, CompleteContext, CompleteParams,
    Discover, GetPrompt, GetPromptParams, INITIALIZED, Initialize, ListPrompts,
    ListResourceTemplates, ListResources, ListSkills, ListTools, Ping, ProgressMeta, ReadResource,
    SetLevel, SetLevelParams, Subscribe, Unsubscribe, UriParams,
};
use crate::protocol::modern;
use crate::protocol::options::{ClientStats, ToolCallOptions};
use crate::protocol::session::{self, Cached, McpHooks, ProgressSlot, Shared};
use crate::protocol::skills::Skill;
use crate::protocol::tasks;
use crate::protocol::types::{
    CallToolResult, Completion, CompletionRef, GetPromptResult, Implementation, InitializeParams,
    InitializeResult, LATEST_PROTOCOL_VERSION, LogLevel, Prompt, ReadResourceResult, Resource,
    ResourceTemplate, SUPPORTED_PROTOCOL_VERSIONS, ServerCapabilities, Tool,
};

/// The modern era's first request.
const DISCOVER: &str = Discover::METHOD;
use crate::transport::{self, Backend, Background, Opened};
use crate::{Error, ServerSpec, Stage};

/// How long an error waits for a dead server's exit status and last stderr.
const SETTLE: Duration = Duration::from_secs(1);

/// How long a connection whose last handle is dropped gives a `notifications/cancelled` it
/// still owes the server (a request abandoned just before: the usual way an interrupted
/// program ends) before the server is killed. The driver writes what is queued and closes the
/// connection: a stdio server (its stdin closed) then has until this long after the drop to
/// read the notice and exit by itself before its group is killed; over HTTP the write takes at
/// most this long and the notice's POST at most this long again. The driver must still be
/// polled for this (a dropped driver kills at once).
pub const CANCEL_FLUSH: Duration = Duration::from_millis(200);

/// The future that runs a connection: the JSON-RPC reader and writer, server requests, the
/// list refresh, and (stdio) the process supervision and stderr drain. Spawn it, or poll it in
/// a `select!`; nothing works while it is not polled.
///
/// It ends when the connection has ended and the process has been reaped. Dropping it closes
/// the connection and kills the process.
#[must_use = "the connection does nothing unless its driver is polled"]
pub struct ClientDriver {
    name: Arc<str>,
    future: Background,
}

impl Future for ClientDriver {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.future.as_mut().poll(cx)
    }
}

impl fmt::Debug for ClientDriver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientDriver")
            .field("server", &self.name)
            .finish_non_exhaustive()
    }
}

/// A connection to one MCP server. Cheap to clone; every clone uses the same connection.
///
/// When the last clone is dropped the server is killed at once (its whole process group,
/// synchronously) and the driver winds down; [`close`](Client::close) is the graceful way. The
/// one exception: when a request was abandoned on the connection (a `notifications/cancelled`
/// was queued, perhaps not written yet), the driver first writes what is queued and closes the
/// connection, and the server is killed within [`CANCEL_FLUSH`], so that it learns of the
/// cancel.
#[derive(Clone)]
pub struct Client {
    inner: Arc<ClientInner>,
}

struct ClientInner {
    shared: Arc<Shared>,
    peer: Peer,
    backend: Backend,
    /// Dropped with the last handle, which tells the driver to stop serving; or sent the
    /// backend, when a cancel notice is owed (see [`CANCEL_FLUSH`]).
    alive: Option<oneshot::Sender<Backend>>,
}

impl Drop for ClientInner {
    fn drop(&mut self) {
        let backend = std::mem::replace(&mut self.backend, Backend::Streams);
        let alive = self.alive.take();
        // A cancel notice made just before (the future of a call dropped with the client, as
        // when a program is interrupted) is only queued: killing the server now would lose it.
        // The driver gets the backend instead, to kill the server once it is written (bounded).
        if self.shared.cancel_owed()
            && let Some(alive) = alive
        {
            if let Err(backend) = alive.send(backend) {
                // The driver is gone: nothing can write the notice.
                backend.kill_now();
            }
            return;
        }
        backend.kill_now();
    }
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("server", &self.inner.shared.name)
            .field("pid", &self.inner.backend.pid())
            .field("protocol_version", &self.protocol_version())
            .finish_non_exhaustive()
    }
}

/// The jsonrpc settings of an MCP connection.
/// Whether connecting to `spec` starts with the `server/discover` probe (the modern era, or
/// `auto` over a transport that can speak it); else it starts with `initialize`.
fn probes(spec: &ServerSpec) -> bool {
    // HTTP+SSE is a legacy transport: there is nothing to probe.
    spec.era != EraChoice::Legacy && spec.transport != crate::Transport::Sse
}

pub(crate) fn rpc_config(spec: &ServerSpec) -> Config {
    Config::new(Profile::Lenient, spec.max_message_bytes)
        .request_timeout(spec.call_timeout)
        .hooks(McpHooks::default())
}

impl Client {
    /// Connects over caller-supplied byte streams (an in-process server, a socket) speaking
    /// newline-delimited JSON; the spec's transport and launch fields are ignored, its name,
    /// timeouts and roots apply.
    ///
    /// # Errors
    ///
    /// As for [`connect`](Client::connect), less the launch errors.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future drops the streams.
    pub async fn connect_streams<R, W>(
        spec: &ServerSpec,
        reader: R,
        writer: W,
        handler: impl ClientHandler,
    ) -> Result<(Client, ClientDriver), Error>
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let started = Instant::now();
        let config = rpc_config(spec);
        let opened = transport::streams(reader, writer, &config);
        let deadline = started + spec.startup_timeout;
        Client::establish(
            spec,
            opened,
            handler::share(handler),
            config,
            deadline,
            started,
        )
        .await
    }

    /// Runs the protocol on an opened transport: the handshake within `deadline`.
    pub(crate) async fn establish(
        spec: &ServerSpec,
        opened: Opened,
        handler: Arc<dyn DynHandler>,
        config: Config,
        deadline: Instant,
        started: Instant,
    ) -> Result<(Client, ClientDriver), Error> {
        let shared = Shared::new(spec, handler);
        let config = config.hooks(McpHooks::of(&shared));
        let router = session::router(&shared);
        let renewed = {
            let shared = Arc::clone(&shared);
            Box::new(move || shared.session_renewed())
        };
        let (peer, rpc) = bridge::connect(
            opened.stream,
            opened.sink,
            router,
            config,
            renewed,
            Arc::clone(&shared.tool_headers),
        );
        let (alive, alive_rx) = oneshot::channel::<Backend>();
        let mut future = session::driver(
            rpc,
            peer.clone(),
            Arc::clone(&shared),
            alive_rx,
            opened.background,
        );
        let client = Client {
            inner: Arc::new(ClientInner {
                shared,
                peer,
                backend: opened.backend,
                alive: Some(alive),
            }),
        };
        // The handshake needs the driver polled; poll it here until the caller takes it.
        let mut driver_done = false;
        // Set once `initialize` goes out: a failure after it is the legacy handshake's, one
        // before it the probe's (when there is one).
        let initialize_sent = AtomicBool::new(false);
        let outcome = tokio::select! {
            outcome = tokio::time::timeout_at(deadline, client.handshake(deadline, &initialize_sent)) => outcome,
            () = &mut future => {
                driver_done = true;
                Ok(Err(Error::new(Kind::Closed {
                    what: "the handshake".to_owned(),
                    reason: "the connection ended during the handshake".to_owned(),
                })))
            }
        };
        let handshake = if initialize_sent.load(Ordering::SeqCst) || !probes(spec) {
            Handshake::Initialize
        } else {
            Handshake::Discover
        };
        let err = match outcome {
            Ok(Ok(())) => {
                let name = Arc::clone(&client.inner.shared.name);
                return Ok((client, ClientDriver { name, future }));
            }
            Ok(Err(err)) => err,
            Err(_) => Error::new(Kind::Timeout {
                what: handshake.method().to_owned(),
                after: spec.startup_timeout,
                idle: false,
            }),
        };
        // A server that died: let the driver reap it and read the last of its stderr, so the
        // error says why. (A live but wedged one is killed below, when `client` drops.)
        if err.is_closed() && !driver_done {
            let _ = tokio::time::timeout(SETTLE, &mut future).await;
        }
        Err(client.diagnose(
            err.with_server(&spec.name)
                .with_stage(Stage::Initialize, started.elapsed())
                .with_handshake(handshake),
        ))
    }

    /// The handshake of the spec's era: `initialize` (legacy), `server/discover` (modern), or
    /// the probe that picks one (see `protocol::era`). `initialize_sent` is set as
    /// `initialize` goes out.
    async fn handshake(
        &self,
        deadline: Instant,
        initialize_sent: &AtomicBool,
    ) -> Result<(), Error> {
        let spec = &self.inner.shared.spec;
        if !probes(spec) {
            return self.initialize(deadline, initialize_sent).await;
        }
        let auto = spec.era == EraChoice::Auto;
        self.discover(deadline, auto, initialize_sent).await
    }

    /// `server/discover`, at most twice (a `-32022` naming a version we speak probes again);
    /// with `auto`, a legacy answer falls back to `initialize` (the table in `protocol::era`).
    async fn discover(
        &self,
        deadline: Instant,
        auto: bool,
        initialize_sent: &AtomicBool,
    ) -> Result<(), Error> {
        let shared = &self.inner.shared;
        let mut again = true;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let timeout = if auto {
                left.min(shared.spec.probe_timeout)
            } else {
                left
            };
            let params = shared.envelope.wrap(json!({}));
            let outcome = self
                .inner
                .peer
                .call(DISCOVER, Some(&params), CallOptions::timeout(timeout))
                .await;
            let probe = match outcome {
                Ok(raw) => match raw.decode::<DiscoverResult>() {
                    Ok(result) => match Probe::of_result(&result) {
                        Probe::Modern(version) => {
                            shared.envelope.set_version(version);
                            self.adopt(version, result);
                            return Ok(());
                        }
                        _ if auto => Probe::Legacy,
                        _ => Probe::Incompatible(result.supported_versions),
                    },
                    Err(_) if auto => Probe::Legacy,
                    Err(err) => {
                        return Err(Error::new(Kind::InvalidResponse(format!(
                            "the {DISCOVER} result does not decode: {err}"
                        ))));
                    }
                },
                Err(sidewire_jsonrpc::Error::Remote { error, .. })
                    if error.code == era::UNSUPPORTED_PROTOCOL_VERSION =>
                {
                    Probe::of_unsupported(error.data.as_ref(), again)
                }
                // A server that does not know the method is not modern; asked for the modern
                // era only, that is no mutual version (below), not a bare remote error.
                Err(sidewire_jsonrpc::Error::Remote { error, .. })
                    if error.code == sidewire_jsonrpc::ErrorObject::METHOD_NOT_FOUND =>
                {
                    Probe::Legacy
                }
                Err(
                    sidewire_jsonrpc::Error::Remote { .. }
                    | sidewire_jsonrpc::Error::Timeout { .. },
                ) if auto => Probe::Legacy,
                Err(err) => {
                    let err = Error::rpc(DISCOVER, err);
                    // An HTTP error status whose body is not a modern error: a legacy server.
                    if auto && err.is_http() && err.http_status().is_some() {
                        Probe::Legacy
                    } else {
                        return Err(err);
                    }
                }
            };
            let probe = match probe {
                // A server that refuses its own modern version but names a legacy one we
                // speak: `auto` initializes, as for any legacy answer.
                Probe::Refused { legacy: true, .. } if auto => Probe::Legacy,
                probe => probe,
            };
            match probe {
                Probe::Modern(_) => unreachable!("returned above"),
                Probe::Again(version) => {
                    shared.envelope.set_version(version);
                    again = false;
                }
                Probe::Legacy if auto => {
                    tracing::debug!(server = %shared.name, "the server does not speak the modern protocol; initializing");
                    return match self.initialize(deadline, initialize_sent).await {
                        // A server that locked itself modern meanwhile (a probe that timed out
                        // here but reached it) says so to initialize: probe once more.
                        Err(err) if again && err.is_incompatible_version() && err.is_remote() => {
                            again = false;
                            continue;
                        }
                        other => other,
                    };
                }
                Probe::Legacy => return Err(no_mutual_version(Vec::new())),
                Probe::Incompatible(offered) => return Err(no_mutual_version(offered)),
                Probe::Refused { version, .. } => {
                    return Err(Error::new(Kind::VersionRefused { version }));
                }
            }
        }
    }

    /// Takes the modern era at `version`, with what `server/discover` said.
    fn adopt(&self, version: &str, result: DiscoverResult) {
        let shared = &self.inner.shared;
        shared.settle_era(Era::Modern);
        let server_info = result.server_info();
        let _ = shared.init.set(InitializeResult {
            protocol_version: version.to_owned(),
            capabilities: result.capabilities,
            server_info,
            instructions: result.instructions,
        });
    }

    async fn initialize(&self, deadline: Instant, sent: &AtomicBool) -> Result<(), Error> {
        let shared = &self.inner.shared;
        sent.store(true, Ordering::SeqCst);
        let params = InitializeParams {
            protocol_version: LATEST_PROTOCOL_VERSION.to_owned(),
            capabilities: session::client_capabilities(&shared.spec, shared.handler.as_ref()),
            client_info: session::client_info(),
        };
        let timeout = deadline.saturating_duration_since(Instant::now());
        let result = self
            .inner
            .peer
            .request_with::<Initialize>(&params, CallOptions::timeout(timeout))
            .await
            .map_err(|err| Error::rpc(Initialize::METHOD, err))?;
        if !SUPPORTED_PROTOCOL_VERSIONS.contains(&result.protocol_version.as_str()) {
            return Err(Error::new(Kind::Incompatible {
                got: result.protocol_version,
                offered: LATEST_PROTOCOL_VERSION,
                supported: SUPPORTED_PROTOCOL_VERSIONS.join(", "),
            }));
        }
        self.inner
            .peer
            .notify_untyped::<()>(INITIALIZED, None)
            .await
            .map_err(|err| Error::rpc(INITIALIZED, err))?;
        shared.settle_era(Era::Legacy);
        let _ = shared.init.set(result);
        Ok(())
    }

    /// The connection's shared state.
    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.inner.shared
    }

    /// The connection's jsonrpc peer.
    pub(crate) fn peer(&self) -> &Peer {
        &self.inner.peer
    }

    /// The era the connection speaks.
    pub fn era(&self) -> Era {
        self.inner.shared.era().unwrap_or(Era::Legacy)
    }

    fn init(&self) -> Option<&InitializeResult> {
        self.inner.shared.init.get()
    }

    /// The server's name (from its spec).
    pub fn name(&self) -> &str {
        &self.inner.shared.name
    }

    /// The spec this client was connected with.
    pub fn spec(&self) -> &ServerSpec {
        &self.inner.shared.spec
    }

    /// The protocol version the server chose.
    pub fn protocol_version(&self) -> &str {
        self.init()
            .map_or("", |init| init.protocol_version.as_str())
    }

    /// What the server said it supports.
    pub fn capabilities(&self) -> ServerCapabilities {
        self.init()
            .map(|init| init.capabilities.clone())
            .unwrap_or_default()
    }

    /// Who the server says it is.
    pub fn server_info(&self) -> Implementation {
        self.init()
            .map(|init| init.server_info.clone())
            .unwrap_or_default()
    }

    /// The server's usage instructions for the model, if it gave any.
    pub fn instructions(&self) -> Option<&str> {
        self.init()?.instructions.as_deref()
    }

    /// The process id (also its process group id) of a stdio server.
    pub fn pid(&self) -> Option<u32> {
        self.inner.backend.pid()
    }

    /// Whether the connection has ended.
    pub fn is_closed(&self) -> bool {
        self.inner.peer.close_reason_if_closed().is_some()
    }

    /// Why the connection ended, once it has; `None` while it is open.
    pub(crate) fn close_reason(&self) -> Option<sidewire_jsonrpc::CloseReason> {
        self.inner.peer.close_reason_if_closed()
    }

    /// The redacted last 16 KiB of the server's stderr (stdio servers).
    pub fn stderr_tail(&self) -> Option<String> {
        self.inner.backend.diagnostics().1
    }

    /// How the server process ended, once it has.
    pub fn exit_status(&self) -> Option<String> {
        self.inner.backend.diagnostics().0
    }

    /// What the connection dropped rather than failed on.
    pub fn stats(&self) -> ClientStats {
        let stats = self.inner.peer.stats();
        ClientStats {
            skipped_lines: stats.garbage_frames,
            late_responses: stats.late_responses,
            dropped_notifications: stats.dropped_notifications,
        }
    }

    /// Attaches the server process's exit status and stderr tail to `err`, when there are any.
    pub(crate) fn diagnose(&self, err: Error) -> Error {
        let (exit, tail) = self.inner.backend.diagnostics();
        err.with_diagnostics(exit, tail)
    }

    /// Names the server in `err`; for a closed connection, waits briefly for a dead server's
    /// exit status and stderr and attaches them.
    pub(crate) async fn explain(&self, err: Error) -> Error {
        let err = err.with_server(&self.inner.shared.name);
        if !err.is_closed() {
            return err;
        }
        self.inner.backend.settle(SETTLE).await;
        self.diagnose(err)
    }

    async fn request<R: Request>(
        &self,
        params: &R::Params,
        timeout: Option<Duration>,
    ) -> Result<R::Result, Error> {
        let timeout = timeout.unwrap_or(self.inner.shared.spec.call_timeout);
        let raw = modern::call(
            &self.inner.shared,
            &self.inner.peer,
            R::METHOD,
            R::METHOD,
            params,
            CallOptions::timeout(timeout),
        )
        .await;
        match raw {
            Ok(raw) => raw.decode::<R::Result>().map_err(|err| {
                Error::new(Kind::InvalidResponse(format!(
                    "the result of {} does not decode: {err}",
                    R::METHOD
                )))
                .with_server(&self.inner.shared.name)
            }),
            Err(err) => Err(self.explain(err).await),
        }
    }

    /// Lists every `M` (within the caps) and caches the list; returns the cached list.
    pub(crate) async fn relist<M: Cached>(&self) -> Result<Arc<[M::Item]>, Error> {
        let deadline = Instant::now() + self.inner.shared.spec.call_timeout;
        let shared = &self.inner.shared;
        let before = shared.listed.fetch_or(M::LIST, Ordering::SeqCst);
        let items = match shared.relist::<M>(&self.inner.peer, deadline).await {
            Ok(items) => items,
            Err(err) => return Err(self.explain(err).await),
        };
        if before & M::LIST == 0 {
            // A first listing: the modern era's listen now asks for its list_changed notices.
            shared.listen.changed();
        }
        shared.bump_revision();
        Ok(items)
    }

    /// Lists every `M` and caches the list; the caller gets its own copy.
    async fn list_cached<M: Cached>(&self) -> Result<Vec<M::Item>, Error> {
        self.relist::<M>().await.map(|items| items.to_vec())
    }

    /// Lists every tool (following `nextCursor`, with a guard against a repeating cursor, a
    /// page cap, and the server's item and byte caps: see
    /// [`ServerSpec::max_list_items`](crate::ServerSpec::max_list_items)), and caches the list
    /// for [`tools`](Client::tools). A later `notifications/tools/list_changed` refreshes the
    /// cache (debounced). The returned `Vec` is a copy of the cached list; one listing at a
    /// time runs per connection (a second waits for the first, within its own timeout).
    ///
    /// # Errors
    ///
    /// A timeout, a closed connection, or the server's error.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future abandons the page being fetched (the server is told) and leaves
    /// the cache as it was.
    pub async fn list_tools(&self) -> Result<Vec<Tool>, Error> {
        self.list_cached::<ListTools>().await
    }

    /// Lists the skills the server offers (the skills extension, `skills/list`), following
    /// `nextCursor` within the same caps as [`list_tools`](Client::list_tools). Nothing of a
    /// skill is read until it is loaded ([`load_skill`](Client::load_skill)); the list is not
    /// cached.
    ///
    /// # Errors
    ///
    /// As for [`list_tools`](Client::list_tools).
    ///
    /// # Cancel safety
    ///
    /// Dropping the future abandons the page being fetched (the server is told).
    pub async fn list_skills(&self) -> Result<Vec<Skill>, Error> {
        let shared = &self.inner.shared;
        let deadline = Instant::now() + shared.spec.call_timeout;
        let caps = (shared.spec.max_list_items, shared.spec.max_list_bytes);
        match listing::list_all::<ListSkills>(shared, &self.inner.peer, caps, deadline).await {
            Ok(listing) => Ok(listing.items),
            Err(err) => Err(self.explain(err).await),
        }
    }

    /// The list `M` as last fetched.
    pub(crate) fn cached<M: Cached>(&self) -> Arc<[M::Item]> {
        self.inner.shared.cached::<M>()
    }

    /// The tools as last listed (empty before the first [`list_tools`](Client::list_tools)).
    pub fn tools(&self) -> Arc<[Tool]> {
        self.cached::<ListTools>()
    }

    /// Lists every prompt and caches the list (see [`list_tools`](Client::list_tools)).
    ///
    /// # Errors
    ///
    /// As for [`list_tools`](Client::list_tools).
    ///
    /// # Cancel safety
    ///
    /// As for [`list_tools`](Client::list_tools).
    pub async fn list_prompts(&self) -> Result<Vec<Prompt>, Error> {
        self.list_cached::<ListPrompts>().await
    }

    /// The prompts as last listed.
    pub fn prompts(&self) -> Arc<[Prompt]> {
        self.cached::<ListPrompts>()
    }

    /// Lists every resource and caches the list (see [`list_tools`](Client::list_tools)).
    ///
    /// # Errors
    ///
    /// As for [`list_tools`](Client::list_tools).
    ///
    /// # Cancel safety
    ///
    /// As for [`list_tools`](Client::list_tools).
    pub async fn list_resources(&self) -> Result<Vec<Resource>, Error> {
        self.list_cached::<ListResources>().await
    }

    /// The resources as last listed.
    pub fn resources(&self) -> Arc<[Resource]> {
        self.cached::<ListResources>()
    }

    /// Lists every resource template and caches the list.
    ///
    /// # Errors
    ///
    /// As for [`list_tools`](Client::list_tools).
    ///
    /// # Cancel safety
    ///
    /// As for [`list_tools`](Client::list_tools).
    pub async fn list_resource_templates(&self) -> Result<Vec<ResourceTemplate>, Error> {
        self.list_cached::<ListResourceTemplates>().await
    }

    /// The resource templates as last listed.
    pub fn resource_templates(&self) -> Arc<[ResourceTemplate]> {
        self.cached::<ListResourceTemplates>()
    }

    /// The cached lists that a limit cut short when they were last listed (the server offered
    /// more than [`ServerSpec::max_list_items`](crate::ServerSpec::max_list_items) items,
    /// [`ServerSpec::max_list_bytes`](crate::ServerSpec::max_list_bytes) bytes or 100 pages),
    /// in list order; empty when every list is whole.
    pub fn truncations(&self) -> Vec<Truncation> {
        self.inner.shared.truncations()
    }

    /// A counter bumped whenever a cached list is replaced (by a listing or a list_changed
    /// refresh).
    pub fn list_revision(&self) -> u64 {
        *self.inner.shared.revision.borrow()
    }

    /// Waits until the list revision exceeds `after`, and returns it.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: it only waits.
    pub async fn list_changed_since(&self, after: u64) -> u64 {
        let mut revision = self.inner.shared.revision.subscribe();
        let seen = revision.wait_for(|revision| *revision > after).await;
        seen.map_or(after, |revision| *revision)
    }

    /// Calls a tool by its name on the server. `arguments` is the arguments object (`null`
    /// sends none).
    ///
    /// Every call carries a progress token. The timeout (the call's, else the tool's, else the
    /// server's, default 300 s) is an idle timeout: each progress report restarts it, under
    /// the absolute cap (default 1 h). A tool's own failure is `Ok` with `is_error: true`.
    ///
    /// A tool whose `execution.taskSupport` is `required` (or `optional`, with
    /// [`ToolCallOptions::as_task`]) on a server that takes task-augmented calls runs as a
    /// task, followed to its end and returned like an ordinary call (the idle timeout and the
    /// cap cover the whole task; a change of its status also restarts the idle timeout); see
    /// [Tasks](crate#tasks).
    ///
    /// # Errors
    ///
    /// A timeout ([`Error::is_timeout`]; the server is sent `notifications/cancelled`), a
    /// closed connection (with exit status and stderr tail), the server's JSON-RPC error, an
    /// oversized answer ([`Error::is_too_large`]; the connection lives), or an answer that
    /// does not decode. As a task, also [`Error::is_task_failed`],
    /// [`Error::is_task_cancelled`] and [`Error::is_task_limit`].
    ///
    /// # Cancel safety
    ///
    /// Dropping the future cancels the call: the server is sent `notifications/cancelled`
    /// (modern era over HTTP: the call's response stream is closed instead) and a late answer
    /// is dropped. A call running as a task sends `tasks/cancel` instead, once the task
    /// exists (when the server announces `tasks.cancel`).
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Value,
        options: ToolCallOptions,
    ) -> Result<CallToolResult, Error> {
        let shared = &self.inner.shared;
        if !shared.spec.tool_filter.allows(name) {
            // Filtered out by the config: as absent as a tool the server does not have.
            return Err(Error::new(Kind::NotFound(format!(
                "tool `{name}` of server `{}` is filtered out by its config",
                shared.name
            ))));
        }
        let listed = self.before_call(name, &arguments, &options)?;
        let idle = options
            .timeout
            .unwrap_or_else(|| shared.spec.timeout_for_tool(name));
        let cap = options
            .max_duration
            .unwrap_or(shared.spec.max_call_duration);
        // A tool that must (or, asked, may) run as a task: see `protocol::tasks`.
        let task = tasks::plan(self, name, options.as_task, options.task_ttl).await;
        let token = shared.next_token();
        // The idle timeout runs from here; each progress report (and a task's change of
        // status) restarts it.
        let activity = self.inner.peer.activity();
        lock(&shared.progress).insert(
            token,
            ProgressSlot {
                callback: options.progress,
                activity: Some(activity.clone()),
            },
        );
        let _slot = SlotGuard { shared, token };
        let params = CallToolParams {
            name: name.to_owned(),
            arguments: (!arguments.is_null()).then_some(arguments),
            meta: ProgressMeta {
                progress_token: token,
                extra: options.meta.clone(),
            },
            task,
        };
        let what = ToolCall(name);
        if params.task.is_none() {
            // The connection's deadline timer keeps both the idle timeout and the cap: no
            // timer of the call's own (a timeout is the idle one when `Error` says so).
            let raw = modern::call_passing(
                shared,
                &self.inner.peer,
                &what,
                CallTool::METHOD,
                &params,
                CallOptions::timeout(cap).with_idle(idle, &activity),
                options.input.as_ref(),
            )
            .await;
            return self.call_result(name, listed.as_ref(), raw).await;
        }
        let deadline = Instant::now() + cap;
        let call = async {
            let follow = tasks::Follow {
                shared,
                peer: &self.inner.peer,
                what: &what,
                deadline,
                activity: &activity,
                on_status: options.task_status.clone(),
            };
            tasks::follow(follow, &params, cap).await
        };
        let idle_timer = async {
            // Activity moves the bound: sleep to it, and again while it moved meanwhile.
            loop {
                let bound = activity.last() + idle;
                if bound <= Instant::now() {
                    break;
                }
                tokio::time::sleep_until(bound).await;
            }
        };
        let raw = tokio::select! {
            // An answer that is ready wins over an idle expiry at the same instant.
            biased;
            raw = call => raw,
            () = idle_timer => {
                // Returning drops `call`, which removes its pending entry and sends
                // notifications/cancelled through the hook.
                return Err(Error::new(Kind::Timeout {
                    what: what.to_string(),
                    after: idle,
                    idle: true,
                })
                .with_server(&shared.name));
            }
        };
        self.call_result(name, listed.as_ref(), raw).await
    }

    /// A tools/call's outcome: its result decoded and checked, or the error explained.
    async fn call_result(
        &self,
        name: &str,
        listed: Option<&Listed>,
        raw: Result<RawResult, Error>,
    ) -> Result<CallToolResult, Error> {
        let shared = &self.inner.shared;
        let raw = match raw {
            Ok(raw) => raw,
            Err(err) => return Err(self.explain(err).await),
        };
        let result = raw.decode::<CallToolResult>().map_err(|err| {
            Error::new(Kind::InvalidResponse(format!(
                "the result of tools/call {name} does not decode: {err}"
            )))
            .with_server(&shared.name)
        })?;
        self.after_call(listed, result)
    }

    /// Fills in a prompt.
    ///
    /// # Errors
    ///
    /// A timeout, a closed connection, or the server's error (`-32602` for a bad name or a
    /// missing argument).
    ///
    /// # Cancel safety
    ///
    /// Dropping the future cancels the request (the server is told).
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: BTreeMap<String, String>,
    ) -> Result<GetPromptResult, Error> {
        let params = GetPromptParams {
            name: name.to_owned(),
            arguments: (!arguments.is_empty()).then_some(arguments),
        };
        self.request::<GetPrompt>(&params, None).await
    }

    /// Reads a resource.
    ///
    /// # Errors
    ///
    /// A timeout, a closed connection, or the server's error.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future cancels the request (the server is told).
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, Error> {
        let params = UriParams {
            uri: uri.to_owned(),
        };
        self.request::<ReadResource>(&params, None).await
    }

    /// Subscribes to a resource's updates (delivered to the handler's
    /// `on_resource_updated`).
    ///
    /// Legacy era: `resources/subscribe`, returning with its answer. Modern era: the URI joins
    /// the connection's subscriptions (at most 256 URIs of at most 4 KiB each) and the
    /// connection's `subscriptions/listen` is opened again carrying them all; this returns
    /// once the server acknowledged a listen naming the URI (the protocol's acknowledgment
    /// notice), within the call timeout. The subscription stays while the connection lives,
    /// across listens the server ends (they are opened again).
    ///
    /// # Errors
    ///
    /// A timeout, a closed connection, or the server's error. Modern era: the server's error
    /// to the listen; [`Error::is_unsupported`] when the server's capabilities lack
    /// `resources.subscribe` or it has no listen; [`Error::is_subscription_limit`] past the
    /// bounds (the subscriptions are unchanged); a timeout when no acknowledgment naming the
    /// URI came (the URI stays subscribed).
    ///
    /// # Cancel safety
    ///
    /// Dropping the future cancels the request; the subscription may or may not exist
    /// (modern era: it does, and the listen carries it).
    pub async fn subscribe(&self, uri: &str) -> Result<(), Error> {
        let shared = &self.inner.shared;
        if self.era() == Era::Modern {
            return listen::subscribe(shared, uri, shared.spec.call_timeout).await;
        }
        let params = UriParams {
            uri: uri.to_owned(),
        };
        self.request::<Subscribe>(&params, None).await.map(drop)
    }

    /// Ends a subscription.
    ///
    /// Legacy era: `resources/unsubscribe`. Modern era: the URI leaves the connection's
    /// subscriptions (nothing to do when it was not subscribed) and the listen is opened again
    /// without it; this returns once the server acknowledged that listen, or at once when
    /// nothing is left to listen to (the listen is closed).
    ///
    /// # Errors
    ///
    /// A timeout, a closed connection, or the server's error (modern era: its error to the new
    /// listen; the URI is unsubscribed all the same).
    ///
    /// # Cancel safety
    ///
    /// Dropping the future cancels the request; the subscription may or may not be gone
    /// (modern era: it is).
    pub async fn unsubscribe(&self, uri: &str) -> Result<(), Error> {
        let shared = &self.inner.shared;
        if self.era() == Era::Modern {
            return listen::unsubscribe(shared, uri, shared.spec.call_timeout).await;
        }
        let params = UriParams {
            uri: uri.to_owned(),
        };
        self.request::<Unsubscribe>(&params, None).await.map(drop)
    }

    /// Sets the lowest level of log message the server sends.
    ///
    /// # Errors
    ///
    /// A timeout, a closed connection, or the server's error.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future cancels the request; the level may or may not have changed.
    pub async fn set_log_level(&self, level: LogLevel) -> Result<(), Error> {
        if self.era() == Era::Modern {
            // No `logging/setLevel` in the modern era: the level rides in every request's
            // `_meta` from now on.
            let level = serde_json::to_value(level).unwrap_or(Value::Null);
            self.inner.shared.envelope.set_log_level(level);
            return Ok(());
        }
        self.request::<SetLevel>(&SetLevelParams { level }, None)
            .await
            .map(drop)
    }

    /// Asks for completions of an argument of a prompt or resource template; `context` holds
    /// the arguments already filled in.
    ///
    /// # Errors
    ///
    /// A timeout, a closed connection, or the server's error.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future cancels the request (the server is told).
    pub async fn complete(
        &self,
        reference: CompletionRef,
        argument: &str,
        value: &str,
        context: BTreeMap<String, String>,
    ) -> Result<Completion, Error> {
        let params = CompleteParams {
            reference,
            argument: CompleteArgument {
                name: argument.to_owned(),
                value: value.to_owned(),
            },
            context: (!context.is_empty()).then_some(CompleteContext { arguments: context }),
        };
        Ok(self.request::<Complete>(&params, None).await?.completion)
    }

    /// Checks the server answers.
    ///
    /// # Errors
    ///
    /// A timeout, a closed connection, or the server's error.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future cancels the request (the server is told).
    pub async fn ping(&self) -> Result<(), Error> {
        if self.era() == Era::Modern {
            // No `ping` in the modern era: `server/discover` is the cheapest request.
            return self.request::<Discover>(&json!({}), None).await.map(drop);
        }
        self.request::<Ping>(&Some(json!({})), None).await.map(drop)
    }

    /// Closes the connection gracefully: pending calls fail, stdin closes, and a process that
    /// does not exit within 750 ms gets `SIGTERM`, then after 2 s `SIGKILL`, always to its
    /// whole process group. Bounded (under 5 s) and idempotent; needs the driver running to
    /// observe the exit.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future stops waiting; a later call (or dropping the client) finishes the
    /// job.
    pub async fn close(&self) {
        self.inner.backend.close(&self.inner.peer).await;
    }
}

/// `tools/call NAME`, naming a call in its errors; formatted only when one happens.
struct ToolCall<'a>(&'a str);

impl std::fmt::Display for ToolCall<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "tools/call {}", self.0)
    }
}

/// Removes a call's progress slot when the call ends, however it ends.
struct SlotGuard<'a> {
    shared: &'a Shared,
    token: u64,
}

impl Drop for SlotGuard<'_> {
    fn drop(&mut self) {
        lock(&self.shared.progress).remove(&self.token);
    }
}
