//! Restarting a crashed server: the supervising future each started server's connection
//! driver runs inside, on the [`McpHostDriver`](crate::McpHostDriver), and the wait of calls
//! made while it restarts.
//!
//! A server's lifecycle in the host, once its first start has succeeded ([`Phase`]):
//!
//! | Phase        | Event                                                        | Next         |
//! |--------------|--------------------------------------------------------------|--------------|
//! | `Up`         | the connection ends by itself, policy `Never`                | `Up` (closed: shown as `Exited`) |
//! | `Up`         | the connection ends by itself, an attempt left in the window | `Restarting` |
//! | `Up`         | the connection ends by itself, no attempt left               | `GaveUp`     |
//! | `Up`         | `Client::close` (the connection ends by our doing)           | `Up` (closed: `Exited`) |
//! | `Restarting` | the backoff ends and reconnect + listing succeed             | `Up` (restarts + 1) |
//! | `Restarting` | the attempt fails, an attempt left in the window             | `Restarting` |
//! | `Restarting` | the attempt fails, no attempt left                           | `GaveUp`     |
//! | any          | `remove`, `shutdown`, the host dropped                       | gone: the supervisor stops, a restart in progress is dropped (its process killed) |
//!
//! Attempts are counted in a sliding window ([`RestartPolicy::within`]); at most
//! [`RestartPolicy::max_restarts`] timestamps are kept. The n-th consecutive attempt waits
//! [`RestartPolicy::delay`]`(n)`. The supervisor holds the host only weakly across its waits,
//! so dropping the last `McpHost` still kills every server at once.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Weak};
use std::time::Duration;

use sidewire_jsonrpc::lock;
use tokio::sync::oneshot;
use tokio::time::Instant;

use super::{HostInner, Running, list_offerings};
use crate::error::Kind;
use crate::host::views::{ServerExit, ServerState, ServerStatus, StartFailure};
use crate::protocol::handler::DynHandler;
use crate::spec::AttemptWindow;
use crate::{Client, ClientDriver, Error, Restart, RestartPolicy, ServerSpec};

/// A started server's supervisor, as the host driver runs it.
pub(super) type Supervised = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// Where a started server stands (see the module's state table).
#[derive(Debug)]
pub(super) enum Phase {
    /// Its connection is the entry's client (open, or closed and not being restarted).
    Up,
    /// Crashed; a restart is waiting out its backoff or connecting.
    Restarting,
    /// Crashed, and the attempts are spent; `failure` is why the last attempt failed, if one
    /// did.
    GaveUp { failure: Option<StartFailure> },
}

impl Running {
    /// The entry's status line.
    pub(super) fn status(&self) -> ServerStatus {
        let mut status = ServerStatus::running(&self.client, self.startup);
        status.restarts = self.restarts;
        status.last_exit = self.last_exit.clone();
        match &self.phase {
            Phase::Up => {}
            Phase::Restarting => {
                status.state = ServerState::Restarting;
                status.pid = None;
            }
            Phase::GaveUp { failure } => {
                status.state = ServerState::GaveUp;
                status.pid = None;
                status.failure = failure.clone();
            }
        }
        status
    }

    /// The error a call gets once the server's restarts were given up on.
    fn gave_up(&self, name: &str) -> Error {
        let mut reason = format!(
            "the server crashed and its restarts were given up on after {} restart(s)",
            self.restarts
        );
        if let Phase::GaveUp {
            failure: Some(failure),
        } = &self.phase
        {
            reason.push_str(&format!("; the last attempt failed: {}", failure.error));
        }
        let exit = self.last_exit.as_ref();
        Error::new(Kind::Closed {
            what: format!("the MCP server `{name}`"),
            reason,
        })
        .with_server(&self.client.spec().name)
        .with_diagnostics(
            exit.and_then(|e| e.exit_status.clone()),
            exit.and_then(|e| e.stderr_tail.clone()),
        )
    }
}

/// Whether a connection that ended was ended by us (a deliberate close), not by the server.
fn closed_by_us(client: &Client) -> bool {
    matches!(
        client.close_reason(),
        Some(sidewire_jsonrpc::CloseReason::ShutDown)
    )
}

/// The supervisor of entry `id`: runs `driver`, and when the connection ends by itself
/// restarts the server under its policy until `stopped` fires (the entry is gone).
pub(super) fn supervise(
    inner: &Arc<HostInner>,
    spec: &ServerSpec,
    id: u64,
    driver: ClientDriver,
    stopped: oneshot::Receiver<()>,
) -> Supervised {
    let host = Arc::downgrade(inner);
    let handler = Arc::clone(&inner.handler);
    let spec = spec.clone();
    Box::pin(async move {
        match spec.restart {
            Restart::OnCrash(policy) => {
                Supervisor {
                    host,
                    handler,
                    spec,
                    id,
                    stopped,
                    policy,
                    attempts: AttemptWindow::default(),
                }
                .run(driver)
                .await;
            }
            Restart::Never => driver.await,
        }
    })
}

/// What a supervisor decided once its connection ended.
enum Verdict {
    /// The server crashed: restart it.
    Crashed,
    /// Closed deliberately, removed, or the host is gone: stop.
    Stop,
    /// Its start has not filed the entry yet: wait.
    NotYet,
}

struct Supervisor {
    host: Weak<HostInner>,
    handler: Arc<dyn DynHandler>,
    spec: ServerSpec,
    id: u64,
    /// Fires (with an error) when the entry is dropped.
    stopped: oneshot::Receiver<()>,
    policy: RestartPolicy,
    /// When recent attempts began, within the window: at most `policy.max_restarts`.
    attempts: AttemptWindow,
}

impl Supervisor {
    /// The spec as the server reconnects: with the host's roots when they were set.
    fn connecting(&self) -> ServerSpec {
        match self.host.upgrade() {
            Some(host) => host.connecting(&self.spec).into_owned(),
            None => self.spec.clone(),
        }
    }

    async fn run(mut self, mut driver: ClientDriver) {
        loop {
            // The connection runs until it ends and its process is reaped; a deliberate close
            // needs the driver polled to observe the exit, so `stopped` is not watched here.
            (&mut driver).await;
            if !self.crashed().await {
                return;
            }
            let Some(next) = self.restart().await else {
                return;
            };
            driver = next;
        }
    }

    /// Looks at our entry under the lock.
    fn with_entry<T>(&self, f: impl FnOnce(&HostInner, &mut Running) -> T) -> Option<T> {
        let inner = self.host.upgrade()?;
        let mut state = lock(&inner.state);
        let running = state
            .running
            .get_mut(self.spec.name())
            .filter(|running| running.id == self.id)?;
        Some(f(&inner, running))
    }

    /// Whether the connection that just ended crashed (then its exit is recorded), waiting for
    /// the start that made it to file it.
    async fn crashed(&mut self) -> bool {
        loop {
            let Some(inner) = self.host.upgrade() else {
                return false;
            };
            let mut changes = inner.changes.subscribe();
            drop(inner);
            let verdict = self
                .with_entry(|_, running| {
                    if closed_by_us(&running.client) {
                        return Verdict::Stop;
                    }
                    running.last_exit = Some(ServerExit::of(&running.client));
                    Verdict::Crashed
                })
                .unwrap_or(Verdict::NotYet);
            match verdict {
                Verdict::Crashed => return true,
                Verdict::Stop => return false,
                Verdict::NotYet => {}
            }
            tokio::select! {
                _ = &mut self.stopped => return false,
                changed = changes.changed() => if changed.is_err() { return false },
            }
        }
    }

    /// Sets our entry's phase and tells the waiters.
    fn set_phase(&self, phase: Phase) -> bool {
        self.with_entry(|inner, running| {
            running.phase = phase;
            inner.changed();
        })
        .is_some()
    }

    /// Restarts until a connection is up (filed, and its driver returned) or the attempts are
    /// spent (the entry marked given up) or we are stopped.
    async fn restart(&mut self) -> Option<ClientDriver> {
        let name = self.spec.name().to_owned();
        let mut attempt = 0u32;
        let mut failure: Option<StartFailure> = None;
        loop {
            if !self.attempts.allows(&self.policy, Instant::now()) {
                tracing::warn!(
                    server = %name,
                    attempts = self.attempts.len(),
                    within_ms = self.policy.within.as_millis() as u64,
                    "an MCP server keeps crashing; its restarts are given up on"
                );
                self.set_phase(Phase::GaveUp { failure });
                return None;
            }
            attempt += 1;
            if !self.set_phase(Phase::Restarting) {
                return None;
            }
            let exit = self
                .with_entry(|_, running| running.last_exit.clone())
                .flatten();
            tracing::warn!(
                server = %name,
                attempt,
                exit_status = exit.as_ref().and_then(|e| e.exit_status.as_deref()).unwrap_or("unknown"),
                reason = exit.as_ref().map_or("", |e| e.reason.as_str()),
                "restarting a crashed MCP server"
            );
            tokio::select! {
                _ = &mut self.stopped => return None,
                () = tokio::time::sleep(self.policy.delay(attempt)) => {}
            }
            self.attempts.record(Instant::now());
            let spec = self.connecting();
            let outcome = tokio::select! {
                _ = &mut self.stopped => return None,
                outcome = reconnect(&spec, Arc::clone(&self.handler)) => outcome,
            };
            match outcome {
                Ok((client, driver, startup)) => {
                    let filed = self.with_entry(move |inner, running| {
                        running.client = client;
                        running.startup = startup;
                        running.phase = Phase::Up;
                        running.restarts += 1;
                        inner.changed();
                    });
                    // Not filed: the entry went meanwhile; dropping the driver ends it.
                    return filed.map(|()| driver);
                }
                Err((err, elapsed)) => {
                    tracing::warn!(server = %name, attempt, error = %err, "restarting an MCP server failed");
                    failure = Some(StartFailure::from_error(&self.spec, &err, elapsed));
                }
            }
        }
    }
}

/// Connects again and lists, as the first start does, polling the new driver meanwhile.
async fn reconnect(
    spec: &ServerSpec,
    handler: Arc<dyn DynHandler>,
) -> Result<(Client, ClientDriver, Duration), (Error, Duration)> {
    let started = Instant::now();
    let deadline = started + spec.startup_timeout;
    let (client, mut driver) = Client::connect_shared(spec, handler, deadline)
        .await
        .map_err(|err| (err, started.elapsed()))?;
    let outcome = {
        let listing = list_offerings(&client, deadline, started);
        tokio::pin!(listing);
        tokio::select! {
            outcome = &mut listing => outcome,
            // The connection ended during the listing, which fails it in turn.
            () = &mut driver => listing.await,
        }
    };
    match outcome {
        Ok(()) => Ok((client, driver, started.elapsed())),
        Err(err) => Err((err, started.elapsed())),
    }
}

/// The client of `name`, waiting up to `wait` while it restarts (see
/// [`McpHost::ready_client`](crate::McpHost::ready_client)).
pub(super) async fn ready(inner: &HostInner, name: &str, wait: Duration) -> Result<Client, Error> {
    let deadline = Instant::now() + wait;
    let mut changes = inner.changes.subscribe();
    loop {
        {
            let state = lock(&inner.state);
            let Some(running) = state.running.get(name) else {
                return Err(Error::new(Kind::NotFound(format!(
                    "no MCP server named `{name}` is running"
                ))));
            };
            match &running.phase {
                // Open, or closed for good (policy `Never`, or closed by us); or it crashed
                // and its supervisor is about to notice: then wait.
                Phase::Up
                    if !running.client.is_closed()
                        || closed_by_us(&running.client)
                        || running.client.spec().restart == Restart::Never =>
                {
                    return Ok(running.client.clone());
                }
                Phase::Up | Phase::Restarting => {}
                Phase::GaveUp { .. } => return Err(running.gave_up(name)),
            }
        }
        match tokio::time::timeout_at(deadline, changes.changed()).await {
            Ok(Ok(())) => {}
            Ok(Err(_)) => {
                return Err(Error::new(Kind::ShutDown(
                    "the MCP host is shut down".to_owned(),
                )));
            }
            Err(_) => {
                return Err(Error::new(Kind::Timeout {
                    what: format!("waiting for the MCP server `{name}` to restart"),
                    after: wait,
                    idle: false,
                }));
            }
        }
    }
}
