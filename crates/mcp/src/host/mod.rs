//! [`McpHost`]: many MCP servers behind one set of namespaced tools, prompts and resources.
//!
//! Servers start in parallel (at most [`MAX_PARALLEL_STARTS`] at once, each within its own
//! startup timeout, counted from when its turn comes); a failure is recorded with its stage,
//! elapsed time, exit status and stderr tail, and either ends an all-or-nothing start or is
//! kept beside the servers that did start. Servers can be added and removed while others run.
//! Every connection's driver runs inside the one [`McpHostDriver`] the caller spawns: the host
//! itself never spawns.
//!
//! The host holds its lock only for bookkeeping, never across a call, so status queries never
//! wait behind a tool call or a startup.
//!
//! A server that had started and whose connection then ends by itself (the process exited, the
//! connection died; not [`Client::close`], [`McpHost::remove`] or [`McpHost::shutdown`]) is
//! restarted under its spec's [`Restart`](crate::Restart) policy (default: 3 attempts in 60 s,
//! backoff from 0.5 s doubling to 8 s): each connection's driver runs inside a supervising
//! future on the [`McpHostDriver`] that notices the end, waits out the backoff, reconnects and
//! lists again (see [`restart`] for the lifecycle's state table). Calls in flight at the crash
//! fail at once with the exit status and stderr tail; calls made while it restarts
//! ([`McpHost::call_tool`], [`McpHost::get_prompt`], [`McpHost::read_resource`],
//! [`McpHost::ready_client`]) wait for it within their own timeout, then go to the new
//! connection, or fail with [`Error::is_closed`] carrying the last failure once it is given up.
//! The waiters hold no queue: there are as many as there are callers, each bounded by its
//! timeout. Restarts do not take a start slot ([`MAX_PARALLEL_STARTS`]); each server restarts
//! at most once at a time.
//!
//! A batch files every name first, then creates each startup only when one of the
//! [`MAX_PARALLEL_STARTS`] places frees, so what it holds (and with it the cost of each spawn's
//! `fork`) does not grow with the batch; an abandoned start gives its name back. The host's roots
//! ([`McpHost::set_roots`]) are told to the running servers, and every later start or restart
//! connects with them.

mod restart;
mod views;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use serde_json::Value;
use tokio::sync::{OnceCell, Semaphore, mpsc, oneshot, watch};
use tokio::time::Instant;

pub use crate::host::views::{
    HostPrompt, HostResource, HostSnapshot, HostTool, Named, ServerExit, ServerState, ServerStatus,
    StartFailure,
};

use crate::host::restart::{Phase, Supervised};
use sidewire_jsonrpc::lock;

use crate::error::Kind;
use crate::protocol::handler::{self, ClientHandler, DynHandler};
use crate::protocol::methods::{ListPrompts, ListResourceTemplates, ListResources, ListTools};
use crate::{
    CallToolResult, Client, Error, GetPromptResult, ReadResourceResult, Root, ServerSpec, Stage,
    ToolCallOptions,
};

/// How many servers start at once.
pub const MAX_PARALLEL_STARTS: usize = 8;

/// Runs many MCP servers. Cheap to clone; every clone is the same host.
///
/// Dropping the last clone kills every server at once; [`shutdown`](McpHost::shutdown) is the
/// graceful way.
#[derive(Clone)]
pub struct McpHost {
    inner: Arc<HostInner>,
}

struct HostInner {
    handler: Arc<dyn DynHandler>,
    state: Mutex<State>,
    /// Where new connections' supervisors go; taken at shutdown, which lets the host driver
    /// end.
    drivers: Mutex<Option<mpsc::UnboundedSender<Supervised>>>,
    starts: Semaphore,
    /// Set at shutdown: startups in flight give up and new ones are refused.
    closing: watch::Sender<bool>,
    shutdown: OnceCell<()>,
    /// Bumped whenever a server's entry changes phase or appears, for the calls waiting on a
    /// restart and the supervisors waiting for their start to be filed.
    changes: watch::Sender<u64>,
    /// The id of the next started server's entry.
    next_id: AtomicU64,
    /// The roots set by [`McpHost::set_roots`], offered to every server from then on in place
    /// of its spec's (bounded as the caller's list is; replaced whole).
    roots: Mutex<Option<Vec<Root>>>,
    /// The namespaced tool names of the last snapshot a call used, kept until a list changes.
    tool_names: Mutex<Arc<views::ToolNames>>,
    /// How many startups are alive at once, for the test that a batch holds a bounded number.
    #[cfg(test)]
    probe: LaunchProbe,
}

impl HostInner {
    /// Tells the waiters that an entry changed.
    fn changed(&self) {
        self.changes.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// `spec` as it connects now: with the host's roots, once [`McpHost::set_roots`] set them.
    pub(crate) fn connecting<'a>(&self, spec: &'a ServerSpec) -> std::borrow::Cow<'a, ServerSpec> {
        match &*lock(&self.roots) {
            Some(roots) => {
                let mut spec = spec.clone();
                spec.roots = roots.clone();
                std::borrow::Cow::Owned(spec)
            }
            None => std::borrow::Cow::Borrowed(spec),
        }
    }
}

#[derive(Default)]
struct State {
    running: BTreeMap<String, Running>,
    starting: BTreeSet<String>,
    failures: BTreeMap<String, StartFailure>,
    /// The servers given disabled (config `disabled: true`, `enabled: false`): listed, never
    /// started.
    disabled: BTreeSet<String>,
}

/// A started server: its current (or last) connection and where it stands.
struct Running {
    /// Told apart from a later server of the same name.
    id: u64,
    client: Client,
    startup: Duration,
    phase: Phase,
    /// Successful restarts.
    restarts: u32,
    last_exit: Option<ServerExit>,
    /// Dropped with the entry (remove, shutdown, the host dropped), which stops its
    /// supervisor's backoff or reconnect.
    _stop: oneshot::Sender<()>,
}

/// A name [`McpHost::admit`] filed as starting, not yet filed as running or failed. Dropped
/// unfiled (the start was abandoned: its batch's or `add`'s future was dropped), it takes the
/// name out of `starting` again, so an abandoned start never leaves a server starting for ever.
struct Reservation {
    inner: std::sync::Weak<HostInner>,
    name: Option<String>,
}

impl Reservation {
    /// The outcome is being filed (under the caller's lock): the name leaves `starting`.
    fn filed(&mut self, state: &mut State) {
        if let Some(name) = self.name.take() {
            state.starting.remove(&name);
        }
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if let (Some(name), Some(inner)) = (self.name.take(), self.inner.upgrade()) {
            lock(&inner.state).starting.remove(&name);
        }
    }
}

/// Counts the startups alive (launching or filing) and the most there ever were at once.
#[cfg(test)]
#[derive(Default)]
struct LaunchProbe {
    alive: std::sync::atomic::AtomicUsize,
    peak: std::sync::atomic::AtomicUsize,
}

#[cfg(test)]
impl LaunchProbe {
    fn launch(&self) -> impl Drop + '_ {
        struct Alive<'a>(&'a LaunchProbe);
        impl Drop for Alive<'_> {
            fn drop(&mut self) {
                self.0.alive.fetch_sub(1, Ordering::SeqCst);
            }
        }
        let now = self.alive.fetch_add(1, Ordering::SeqCst) + 1;
        self.peak.fetch_max(now, Ordering::SeqCst);
        Alive(self)
    }
}

/// Runs the connections of a [`McpHost`]. Spawn it before starting servers. It ends after
/// [`McpHost::shutdown`] (or when every `McpHost` clone is gone) once every connection has wound
/// down.
#[must_use = "the host's servers do nothing unless its driver is polled"]
pub struct McpHostDriver {
    incoming: mpsc::UnboundedReceiver<Supervised>,
    incoming_done: bool,
    /// One supervisor per started server: its connection's driver, then its restarts.
    running: FuturesUnordered<Supervised>,
}

impl Future for McpHostDriver {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = &mut *self;
        while !this.incoming_done {
            match this.incoming.poll_recv(cx) {
                Poll::Ready(Some(driver)) => this.running.push(driver),
                Poll::Ready(None) => this.incoming_done = true,
                Poll::Pending => break,
            }
        }
        while let Poll::Ready(Some(())) = this.running.poll_next_unpin(cx) {}
        if this.incoming_done && this.running.is_empty() {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

impl fmt::Debug for McpHostDriver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpHostDriver")
            .field("connections", &self.running.len())
            .field("accepting", &!self.incoming_done)
            .finish()
    }
}

impl fmt::Debug for McpHost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = lock(&self.inner.state);
        f.debug_struct("McpHost")
            .field("running", &state.running.keys().collect::<Vec<_>>())
            .field("starting", &state.starting)
            .field("failed", &state.failures.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl McpHost {
    /// A host with no servers, whose servers' requests (sampling, elicitation) and
    /// notifications go to `handler`; and its driver, to spawn.
    pub fn new(handler: impl ClientHandler) -> (McpHost, McpHostDriver) {
        let (sender, incoming) = mpsc::unbounded_channel();
        let host = McpHost {
            inner: Arc::new(HostInner {
                handler: handler::share(handler),
                state: Mutex::new(State::default()),
                drivers: Mutex::new(Some(sender)),
                starts: Semaphore::new(MAX_PARALLEL_STARTS),
                closing: watch::channel(false).0,
                shutdown: OnceCell::new(),
                changes: watch::channel(0).0,
                next_id: AtomicU64::new(0),
                roots: Mutex::new(None),
                tool_names: Mutex::default(),
                #[cfg(test)]
                probe: LaunchProbe::default(),
            }),
        };
        let driver = McpHostDriver {
            incoming,
            incoming_done: false,
            running: FuturesUnordered::new(),
        };
        (host, driver)
    }

    /// Starts servers in parallel and keeps the ones that start; returns the failures (also
    /// kept in [`status`](McpHost::status) until that name starts or is removed).
    ///
    /// # Cancel safety
    ///
    /// Dropping the future abandons the startups in flight (their processes are killed);
    /// servers already started stay.
    pub async fn start_available(
        &self,
        specs: impl IntoIterator<Item = ServerSpec>,
    ) -> Vec<StartFailure> {
        self.start_batch(specs)
            .await
            .into_iter()
            .filter_map(|(_, result)| result.err().map(|(_, failure)| failure))
            .collect()
    }

    /// Starts servers in parallel, all or nothing: if any fails, the ones this call started
    /// are closed again and the error lists every failure (the failures are also kept in
    /// [`status`](McpHost::status)).
    ///
    /// # Errors
    ///
    /// [`Error::is_start_failed`], naming each server that failed, its stage and why.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future abandons the startups in flight (their processes are killed);
    /// servers it already started stay running.
    pub async fn start_all(
        &self,
        specs: impl IntoIterator<Item = ServerSpec>,
    ) -> Result<(), Error> {
        let results = self.start_batch(specs).await;
        let total = results.len();
        let mut started = Vec::new();
        let mut failed = Vec::new();
        for (name, result) in results {
            match result {
                Ok(()) => started.push(name),
                Err((_, failure)) => failed.push(failure),
            }
        }
        if failed.is_empty() {
            return Ok(());
        }
        let closing: Vec<Client> = {
            let mut state = lock(&self.inner.state);
            started
                .iter()
                .filter_map(|name| state.running.remove(name).map(|r| r.client))
                .collect()
        };
        futures_util::future::join_all(closing.iter().map(Client::close)).await;
        let details: Vec<String> = failed
            .iter()
            .map(|failure| format!("{}: {}", failure.server, failure.error))
            .collect();
        Err(Error::new(Kind::StartFailed(format!(
            "{} of {total} MCP servers failed to start, so none was kept: {}",
            failed.len(),
            details.join("; ")
        ))))
    }

    /// Starts one more server while others run. A disabled spec
    /// ([`ServerSpec::is_enabled`] false) is not started: it is listed as
    /// [`ServerState::Disabled`] and this returns `Ok` (so do [`start_available`] and
    /// [`start_all`] for such specs).
    ///
    /// [`start_available`]: McpHost::start_available
    /// [`start_all`]: McpHost::start_all
    ///
    /// # Errors
    ///
    /// [`Error::is_already_exists`] when a server of that name runs or is starting,
    /// [`Error::is_shut_down`] after shutdown, else the startup error (with its stage).
    ///
    /// # Cancel safety
    ///
    /// Dropping the future abandons the startup (its process is killed).
    pub async fn add(&self, spec: ServerSpec) -> Result<(), Error> {
        self.start_one(spec).await.map_err(|(err, _)| err)
    }

    /// Closes a running server (gracefully, bounded) and forgets it, or forgets a recorded
    /// failure.
    ///
    /// # Errors
    ///
    /// [`Error::is_not_found`] when no server or failure has that name.
    ///
    /// # Cancel safety
    ///
    /// The server is forgotten at once; dropping the future skips the graceful part (the
    /// process is killed when its last handle drops).
    pub async fn remove(&self, name: &str) -> Result<(), Error> {
        let running = {
            let mut state = lock(&self.inner.state);
            let failure = state.failures.remove(name);
            let disabled = state.disabled.remove(name);
            match state.running.remove(name) {
                Some(running) => Some(running),
                None if failure.is_some() || disabled => None,
                None => {
                    return Err(Error::new(Kind::NotFound(format!(
                        "no MCP server named `{name}`"
                    ))));
                }
            }
        };
        if let Some(running) = running {
            running.client.close().await;
        }
        Ok(())
    }

    /// Replaces the roots offered to every server, in place of each spec's own: each running
    /// connection that advertised `roots` takes them at once ([`Client::set_roots`]: a
    /// legacy-era server is sent `notifications/roots/list_changed`), and every server started
    /// or restarted from now on connects with them (advertising `roots` even when its spec had
    /// none).
    ///
    /// Returns the running servers that could not take them now, each with why: a connection
    /// that advertised no roots when it connected ([`Error::is_unsupported`]; it gets them at
    /// its next start), or a connection that failed to send the notice.
    ///
    /// # Cancel safety
    ///
    /// The host's roots are replaced before the first await; dropping the future may leave
    /// some running connections with the old roots until their next start.
    pub async fn set_roots(&self, roots: Vec<Root>) -> Vec<(String, Error)> {
        *lock(&self.inner.roots) = Some(roots.clone());
        let clients: Vec<(String, Client)> = lock(&self.inner.state)
            .running
            .iter()
            .map(|(name, running)| (name.clone(), running.client.clone()))
            .collect();
        let mut refused = Vec::new();
        for (name, client) in clients {
            if let Err(err) = client.set_roots(roots.clone()).await {
                refused.push((name, err));
            }
        }
        refused
    }

    /// The client of a running server (while it restarts, or once given up on, its last,
    /// closed connection; [`ready_client`](McpHost::ready_client) waits for the new one).
    pub fn client(&self, name: &str) -> Option<Client> {
        lock(&self.inner.state)
            .running
            .get(name)
            .map(|running| running.client.clone())
    }

    fn clients(&self) -> Vec<(String, Client)> {
        lock(&self.inner.state)
            .running
            .iter()
            .map(|(name, running)| (name.clone(), running.client.clone()))
            .collect()
    }

    /// Every running server's cached lists as they are now, shared rather than copied: the
    /// way to walk thousands of tools without cloning them.
    pub fn snapshot(&self) -> HostSnapshot {
        let mut snapshot = HostSnapshot::default();
        for (name, running) in &lock(&self.inner.state).running {
            snapshot.push(name.clone(), &running.client);
        }
        snapshot
    }

    /// The namespaced tool names of the running servers' lists as they are now: the kept ones
    /// while no list changed, else named again (outside the lock; a race names twice).
    fn tool_names(&self) -> Arc<views::ToolNames> {
        let snapshot = self.snapshot();
        {
            let names = lock(&self.inner.tool_names);
            if names.is_for(&snapshot) {
                return Arc::clone(&names);
            }
        }
        let names = Arc::new(views::ToolNames::new(&snapshot));
        *lock(&self.inner.tool_names) = Arc::clone(&names);
        names
    }

    /// Every running server's tools under their namespaced names (`mcp__<server>__<tool>`,
    /// sanitised to the MCP tool-name rule with a hash suffix when that changed the name),
    /// ordered by server then server order. Names never collide. A copy of every tool: see
    /// [`snapshot`](McpHost::snapshot) to walk them without one.
    pub fn tools(&self) -> Vec<HostTool> {
        (self.snapshot().tools())
            .map(|t| HostTool::new(t.name, t.server.to_owned(), t.item.clone()))
            .collect()
    }

    /// The running server's tool named `name` (namespaced, as [`tools`](McpHost::tools) names
    /// it), found through the index [`call_tool`](McpHost::call_tool) uses: a lookup, not a
    /// walk of every tool.
    pub fn find_tool(&self, name: &str) -> Option<HostTool> {
        let names = self.tool_names();
        let (server, tool) = names.find(name)?;
        Some(HostTool::new(
            name.to_owned(),
            server.to_owned(),
            tool.clone(),
        ))
    }

    /// Every running server's prompts under namespaced names (the same scheme as tools).
    pub fn prompts(&self) -> Vec<HostPrompt> {
        (self.snapshot().prompts())
            .map(|p| HostPrompt::new(p.name, p.server.to_owned(), p.item.clone()))
            .collect()
    }

    /// Every running server's resources and resource templates, with the server each is
    /// read from (URIs are not renamed).
    pub fn resources(&self) -> Vec<HostResource> {
        let mut resources = Vec::new();
        for (server, client) in self.clients() {
            for resource in client.resources().iter() {
                resources.push(HostResource::resource(server.clone(), resource.clone()));
            }
            for template in client.resource_templates().iter() {
                resources.push(HostResource::template(server.clone(), template.clone()));
            }
        }
        resources
    }

    /// Calls a tool by its namespaced name.
    ///
    /// # Errors
    ///
    /// [`Error::is_not_found`] for an unknown name, else as [`Client::call_tool`]; while the
    /// server restarts it waits for it up to the call's timeout (its
    /// [`ToolCallOptions::timeout`], else the spec's timeout for the tool), then as
    /// [`ready_client`](McpHost::ready_client).
    ///
    /// # Cancel safety
    ///
    /// As [`Client::call_tool`]: dropping the future cancels the call on the server (or
    /// stops waiting for a restart).
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Value,
        options: ToolCallOptions,
    ) -> Result<CallToolResult, Error> {
        let (server, tool) = {
            let names = self.tool_names();
            let found = names.find(name);
            found
                .map(|(server, tool)| (server.to_owned(), tool.name.clone()))
                .ok_or_else(|| Error::new(Kind::NotFound(format!("no MCP tool named `{name}`"))))?
        };
        let wait = options.timeout.unwrap_or_else(|| {
            self.client(&server)
                .map_or(crate::DEFAULT_CALL_TIMEOUT, |client| {
                    client.spec().timeout_for_tool(&tool)
                })
        });
        let client = self.ready_client(&server, wait).await?;
        client.call_tool(&tool, arguments, options).await
    }

    /// Fills in a prompt by its namespaced name.
    ///
    /// # Errors
    ///
    /// [`Error::is_not_found`] for an unknown name, else as [`Client::get_prompt`]; while the
    /// server restarts it waits up to the server's call timeout (see
    /// [`ready_client`](McpHost::ready_client)).
    ///
    /// # Cancel safety
    ///
    /// Dropping the future cancels the request (the server is told).
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: BTreeMap<String, String>,
    ) -> Result<GetPromptResult, Error> {
        let (server, prompt) = {
            let snapshot = self.snapshot();
            let found = snapshot.prompts().find(|prompt| prompt.name == name);
            found
                .map(|prompt| (prompt.server.to_owned(), prompt.item.name.clone()))
                .ok_or_else(|| {
                    Error::new(Kind::NotFound(format!("no MCP prompt named `{name}`")))
                })?
        };
        let client = self.ready_client(&server, self.wait_for(&server)).await?;
        client.get_prompt(&prompt, arguments).await
    }

    /// The client of a started server, waiting up to `wait` while it restarts.
    ///
    /// # Errors
    ///
    /// [`Error::is_not_found`] when no server of that name was started (or it was removed),
    /// [`Error::is_timeout`] when the restart takes longer than `wait`, [`Error::is_closed`]
    /// (with the last exit status and stderr tail) when its restarts were given up on, and
    /// [`Error::is_shut_down`] when the host goes away meanwhile.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: it only waits.
    pub async fn ready_client(&self, name: &str, wait: Duration) -> Result<Client, Error> {
        restart::ready(&self.inner, name, wait).await
    }

    /// How long a prompt or resource request waits for a restart: the server's call timeout.
    fn wait_for(&self, server: &str) -> Duration {
        self.client(server)
            .map_or(crate::DEFAULT_CALL_TIMEOUT, |client| {
                client.spec().default_call_timeout()
            })
    }

    /// Reads a resource from a server.
    ///
    /// # Errors
    ///
    /// [`Error::is_not_found`] for an unknown server, else as [`Client::read_resource`]; while
    /// the server restarts it waits up to the server's call timeout (see
    /// [`ready_client`](McpHost::ready_client)).
    ///
    /// # Cancel safety
    ///
    /// Dropping the future cancels the request (the server is told).
    pub async fn read_resource(
        &self,
        server: &str,
        uri: &str,
    ) -> Result<ReadResourceResult, Error> {
        let client = self.ready_client(server, self.wait_for(server)).await?;
        client.read_resource(uri).await
    }

    /// One entry per known server, by name: running (or exited), restarting, given up,
    /// starting, or failed.
    pub fn status(&self) -> Vec<ServerStatus> {
        let state = lock(&self.inner.state);
        let mut status: BTreeMap<&str, ServerStatus> = BTreeMap::new();
        for (name, failure) in &state.failures {
            status.insert(name, ServerStatus::failed(name, failure.clone()));
        }
        for name in &state.disabled {
            status.insert(name, ServerStatus::disabled(name));
        }
        for name in &state.starting {
            status.insert(name, ServerStatus::starting(name));
        }
        for (name, running) in &state.running {
            status.insert(name, running.status());
        }
        status.into_values().collect()
    }

    /// Shuts every server down in order: refuse new starts and abandon those in flight
    /// (killing their processes), close every running server in parallel (each bounded, under
    /// 5 s), then release the driver, which ends when the last connection has wound down.
    /// Idempotent: later and concurrent calls wait for the same shutdown.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future stops waiting; servers not yet closed are killed when their last
    /// handle drops.
    pub async fn shutdown(&self) {
        self.inner
            .shutdown
            .get_or_init(|| async {
                self.inner.closing.send_replace(true);
                let clients: Vec<Client> = std::mem::take(&mut lock(&self.inner.state).running)
                    .into_values()
                    .map(|running| running.client)
                    .collect();
                futures_util::future::join_all(clients.iter().map(Client::close)).await;
                lock(&self.inner.drivers).take();
            })
            .await;
    }

    /// Starts `specs`: every name is filed first (refused, disabled, or reserved as starting,
    /// all under one lock), then at most [`MAX_PARALLEL_STARTS`] startups are in flight at once,
    /// each created only when a place frees. The results come in the order of `specs`.
    ///
    /// Creating every startup up front (a `join_all` over the batch) held one startup state
    /// machine per server for the whole batch: memory grew with the batch, and so did the cost
    /// of each spawn's `fork`, which copies the parent's page tables; the batch cost
    /// O(servers²) (20,000 `/bin/false` servers took over two minutes). Now what a batch holds
    /// beyond its specs and results is bounded by the window.
    async fn start_batch(
        &self,
        specs: impl IntoIterator<Item = ServerSpec>,
    ) -> Vec<(String, Result<(), (Error, StartFailure)>)> {
        let mut results = Vec::new();
        let mut queued = Vec::new();
        {
            let mut state = lock(&self.inner.state);
            for spec in specs {
                let name = spec.name.to_string();
                match self.admit(&mut state, &spec) {
                    Ok(Some(reservation)) => queued.push((results.len(), spec, reservation)),
                    Ok(None) => {}
                    Err(refused) => {
                        results.push((name, Err(refused)));
                        continue;
                    }
                }
                results.push((name, Ok(())));
            }
        }
        let mut launches = futures_util::stream::iter(queued)
            .map(|(index, spec, reservation)| async move {
                (index, self.launch_and_file(spec, reservation).await)
            })
            .buffer_unordered(MAX_PARALLEL_STARTS);
        while let Some((index, result)) = launches.next().await {
            results[index].1 = result;
        }
        results
    }

    /// Starts one server and files the outcome.
    async fn start_one(&self, spec: ServerSpec) -> Result<(), (Error, StartFailure)> {
        let admitted = self.admit(&mut lock(&self.inner.state), &spec)?;
        match admitted {
            Some(reservation) => self.launch_and_file(spec, reservation).await,
            None => Ok(()),
        }
    }

    /// Files `spec` before its start (under the caller's lock on `state`): refused (the host is
    /// closing, or the name runs or is starting), listed as disabled (`Ok(None)`: never
    /// started, no failure), or reserved as starting.
    #[allow(clippy::result_large_err)] // The pair every start returns, moved once per start.
    fn admit(
        &self,
        state: &mut State,
        spec: &ServerSpec,
    ) -> Result<Option<Reservation>, (Error, StartFailure)> {
        let name = spec.name.to_string();
        let refusal = if *self.inner.closing.borrow() {
            Some(Kind::ShutDown("the MCP host is shut down".to_owned()))
        } else if state.running.contains_key(&name) || state.starting.contains(&name) {
            Some(Kind::AlreadyExists(format!(
                "an MCP server named `{name}` is already running or starting"
            )))
        } else {
            None
        };
        if let Some(kind) = refusal {
            let err = Error::new(kind).with_server(&spec.name);
            let failure = StartFailure::from_error(spec, &err, Duration::ZERO);
            return Err((err, failure));
        }
        if !spec.enabled {
            // Never started: listed as disabled, which is no failure.
            state.failures.remove(&name);
            state.disabled.insert(name);
            return Ok(None);
        }
        state.disabled.remove(&name);
        state.starting.insert(name.clone());
        Ok(Some(Reservation {
            inner: Arc::downgrade(&self.inner),
            name: Some(name),
        }))
    }

    /// Launches a server admitted as starting and files the outcome.
    async fn launch_and_file(
        &self,
        spec: ServerSpec,
        mut reservation: Reservation,
    ) -> Result<(), (Error, StartFailure)> {
        #[cfg(test)]
        let _alive = self.inner.probe.launch();
        let name = spec.name.to_string();
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let (stop, stopped) = oneshot::channel();
        let result = self.launch(&spec, id, stopped).await;
        // Filed under the lock, so a shutdown either sees this server running (and closes it)
        // or has already set `closing` (and this start closes it below).
        let late = {
            let mut state = lock(&self.inner.state);
            reservation.filed(&mut state);
            match result {
                Ok((client, startup)) if !*self.inner.closing.borrow() => {
                    state.failures.remove(&name);
                    state.running.insert(
                        name,
                        Running {
                            id,
                            client,
                            startup,
                            phase: Phase::Up,
                            restarts: 0,
                            last_exit: None,
                            _stop: stop,
                        },
                    );
                    drop(state);
                    self.inner.changed();
                    return Ok(());
                }
                Ok((client, startup)) => (client, startup),
                Err((err, elapsed)) => {
                    let failure = StartFailure::from_error(&spec, &err, elapsed);
                    // Debug, not warn: the failure is the caller's to report (returned, and kept
                    // in `status()`); a warning too would show it twice.
                    tracing::debug!(server = %name, error = %err, "an MCP server failed to start");
                    state.failures.insert(name, failure.clone());
                    return Err((err, failure));
                }
            }
        };
        let (client, startup) = late;
        client.close().await;
        let err = Error::new(Kind::ShutDown(
            "the MCP host shut down during startup".to_owned(),
        ))
        .with_server(&spec.name);
        let failure = StartFailure::from_error(&spec, &err, startup);
        Err((err, failure))
    }

    /// Connects (within the server's startup timeout, once a start slot is free), hands the
    /// connection's supervisor (entry `id`, stopped by `stopped`) to the host driver, and lists
    /// what it offers. Returns the client and how long startup took.
    async fn launch(
        &self,
        spec: &ServerSpec,
        id: u64,
        stopped: oneshot::Receiver<()>,
    ) -> Result<(Client, Duration), (Error, Duration)> {
        let mut closing = self.inner.closing.subscribe();
        let shut_down = || {
            Error::new(Kind::ShutDown(
                "the MCP host shut down during startup".to_owned(),
            ))
            .with_server(&spec.name)
        };
        let _permit = tokio::select! {
            permit = self.inner.starts.acquire() => permit.map_err(|_| (shut_down(), Duration::ZERO))?,
            _ = closing.wait_for(|closing| *closing) => return Err((shut_down(), Duration::ZERO)),
        };
        let started = Instant::now();
        let deadline = started + spec.startup_timeout;
        let work = async {
            let connecting = self.inner.connecting(spec);
            let (client, driver) =
                Client::connect_shared(&connecting, Arc::clone(&self.inner.handler), deadline)
                    .await?;
            let supervised = restart::supervise(&self.inner, spec, id, driver, stopped);
            let sender = lock(&self.inner.drivers).clone();
            match sender {
                Some(sender) if sender.send(supervised).is_ok() => {}
                _ => return Err(shut_down()),
            }
            list_offerings(&client, deadline, started).await?;
            Ok(client)
        };
        let outcome = tokio::select! {
            outcome = work => outcome,
            _ = closing.wait_for(|closing| *closing) => Err(shut_down()),
        };
        outcome
            .map(|client| (client, started.elapsed()))
            .map_err(|err| (err, started.elapsed()))
    }
}

/// The startup listing: tools (when offered) within the startup deadline; prompts and
/// resources too when offered, whose failure is only logged.
pub(super) async fn list_offerings(
    client: &Client,
    deadline: Instant,
    started: Instant,
) -> Result<(), Error> {
    let capabilities = client.capabilities();
    let stage_failed = |err: Error| {
        err.with_server(&client.spec().name)
            .with_stage(Stage::ListTools, started.elapsed())
    };
    if capabilities.tools.is_some() {
        match tokio::time::timeout_at(deadline, client.relist::<ListTools>()).await {
            Ok(Ok(_)) => {}
            Ok(Err(err)) => return Err(stage_failed(err)),
            Err(_) => {
                return Err(client.diagnose(stage_failed(Error::new(Kind::Timeout {
                    what: "tools/list".to_owned(),
                    after: client.spec().startup_timeout,
                    idle: false,
                }))));
            }
        }
    }
    let name = client.name();
    if capabilities.prompts.is_some()
        && let Ok(Err(err)) =
            tokio::time::timeout_at(deadline, client.relist::<ListPrompts>()).await
    {
        tracing::warn!(server = name, %err, "listing prompts failed");
    }
    if capabilities.resources.is_some() {
        if let Ok(Err(err)) =
            tokio::time::timeout_at(deadline, client.relist::<ListResources>()).await
        {
            tracing::warn!(server = name, %err, "listing resources failed");
        }
        if let Ok(Err(err)) =
            tokio::time::timeout_at(deadline, client.relist::<ListResourceTemplates>()).await
        {
            tracing::debug!(server = name, %err, "listing resource templates failed");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
