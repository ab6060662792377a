//! `sidewire`: the thin binary that wires the extension host and the MCP client together.
//!
//! It holds wiring and presentation only; logic a library user would also want lives in the
//! libraries. Exit codes: 0 ok; 1 failure (including a blocked chain or a tool result with
//! `isError`, both printed); 2 usage (clap's, and `key=value` words a tool's schema refuses,
//! before anything is sent); 130 after Ctrl-C (SIGINT), 143 after SIGTERM and 129
//! after SIGHUP, once every child process is cleaned up.
//!
//! Ending: the command's future runs on a thread of its own ([`CommandThread`]) and the signals on
//! the main thread, so a command stuck in a blocking call still ends: its future is dropped on its
//! thread and waited for at most [`DROP_WAIT`], then sidewire exits. Commands that start servers or
//! streams ([`winds_down`]) are told of the signal first and given [`GRACE`] to cancel and shut
//! down (a second signal ends them at once); `run` owns SIGINT (the first cancels the line
//! running). sidewire is a child subreaper, and at the very end kills and reaps every process still
//! below it, except for `mcp login`, whose browser must outlive it.

mod builtin;
mod cli;
mod conformance_cmd;
mod demo;
mod ext_cmd;
mod hooks_cmd;
mod many_tools;
mod mcp_cmd;
mod out;
mod plugin_cmd;
mod run;
mod safe;
mod schema_args;
mod stdio;
mod stream_out;

use std::io::IsTerminal;
use std::process::ExitCode;

use clap::CommandFactory;
/// The workspace's one poison-free lock, as `crate::lock` for the modules here.
pub(crate) use sidewire_jsonrpc::lock;

use crate::cli::{Cli, Command};
use crate::out::Out;

/// A failure that has already been printed (a blocked chain, a tool error): exit 1 quietly.
#[derive(Debug)]
pub(crate) struct Reported;

impl std::fmt::Display for Reported {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("failed (reported above)")
    }
}

impl std::error::Error for Reported {}

fn main() -> ExitCode {
    let cli = Cli::try_parse_args(std::env::args_os()).unwrap_or_else(|err| err.exit());
    init_tracing(&cli);
    let out = Out::new(cli.json);
    match cli.command {
        // The built-ins speak a protocol on stdout; they own their runtime and exit code.
        Command::BuiltinSidecar(args) => return builtin::sidecar(&args),
        Command::BuiltinMcpServer(args) => return builtin::mcp_server(&args),
        Command::Completions { shell } => {
            clap_complete::generate(
                shell,
                &mut Cli::command(),
                "sidewire",
                &mut std::io::stdout(),
            );
            return ExitCode::SUCCESS;
        }
        _ => {}
    }
    // Descendants that `setsid()` away from their group are re-parented to us instead of
    // PID 1, so the end of `main` can still kill them (best effort: without it, only groups
    // are killed). Not for `mcp login`: it starts no server, and the browser it opens must
    // outlive it.
    let reaps = !matches!(
        &cli.command,
        Command::Mcp(args) if matches!(args.command, cli::McpCommand::Login { .. })
    );
    if reaps && let Err(err) = sidewire_ext_host::reaper::set_child_subreaper() {
        tracing::debug!("cannot become a child subreaper: {err}");
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            out.error(&anyhow::anyhow!("cannot start the async runtime: {err}"));
            return ExitCode::FAILURE;
        }
    };
    let graceful = winds_down(&cli.command);
    let owns_ctrl_c = matches!(cli.command, Command::Run { .. });
    let verbose = cli.verbose > 0;
    let handle = runtime.handle().clone();
    let code = runtime.block_on(async {
        let mut signals = EndingSignals::install();
        // `run` gives Ctrl-C its own meaning (cancel the call in flight); SIGTERM and SIGHUP
        // still end it here.
        let ctrl_c = CtrlC(if owns_ctrl_c {
            signals.interrupt.take()
        } else {
            None
        });
        let (interrupt, interrupted) = Interrupted::channel();
        let mut work =
            CommandThread::start(handle, cli.command, out, interrupted, ctrl_c, verbose);
        tokio::select! {
            result = work.finished() => exit_code(&out, result),
            signal = signals.recv() => {
                if graceful {
                    // The command cancels what it streams (the sidecar is told) and shuts down;
                    // bounded, and a second signal ends it at once.
                    interrupt.fire();
                    tokio::select! {
                        _ = tokio::time::timeout(GRACE, work.finished()) => {}
                        _ = signals.recv() => {}
                    }
                }
                // Dropping the command's future cancels calls in flight (MCP servers are told)
                // and kills every child process group; then exit as the shell expects. A
                // command stuck in a blocking call is not waited for beyond the bound: what it
                // started is killed below all the same.
                work.cancel();
                if tokio::time::timeout(DROP_WAIT, work.dropped()).await.is_err() {
                    tracing::debug!("the command did not stop within {DROP_WAIT:?}; exiting anyway");
                }
                out.note(format!("interrupted ({})", signal.name()));
                ExitCode::from(signal.exit_code())
            }
        }
    });
    // Children are killed synchronously on drop; give their reapers a moment, bounded.
    runtime.shutdown_timeout(std::time::Duration::from_secs(2));
    // Then whatever is still below us (daemons adopted as their parents died, a child whose
    // reaper did not get to run) is killed and reaped, bounded.
    let reaped = if reaps {
        sidewire_ext_host::reaper::kill_descendants(std::time::Duration::from_secs(2))
    } else {
        Ok(0)
    };
    match reaped {
        Ok(0) => {}
        Ok(n) => tracing::debug!("killed {n} process(es) left below sidewire"),
        Err(err) => tracing::debug!("cannot clean up the processes below sidewire: {err}"),
    }
    code
}

/// How long a command that winds down on a signal ([`winds_down`]) is given before it is
/// dropped: a stream's cancel (2 s at most in the host) and a sidecar's orderly shutdown.
const GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// How long an ending signal waits for the command's future to be dropped on its thread (calls
/// in flight cancelled, child processes killed) before sidewire exits anyway: a command stuck in
/// a blocking call (a read from a terminal or a pipe) never gets there, and must not keep
/// sidewire from ending.
const DROP_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// The command's future, run on a thread of its own (through the runtime's handle) rather than
/// beside the signal handling: a blocking call inside a command (a read of stdin, a file that
/// blocks) holds up only that thread, so an ending signal still ends sidewire. The future is
/// dropped on its thread when [`cancel`](Self::cancel) is called, as it was dropped in place
/// before.
struct CommandThread {
    /// Sent (or dropped) to drop the command's future.
    cancel: Option<tokio::sync::oneshot::Sender<()>>,
    /// The command's result; closed without one when its future was dropped or panicked.
    /// `None` once taken (a oneshot is not polled again after it answered).
    done: Option<tokio::sync::oneshot::Receiver<anyhow::Result<()>>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl CommandThread {
    fn start(
        handle: tokio::runtime::Handle,
        command: Command,
        out: Out,
        interrupted: Interrupted,
        ctrl_c: CtrlC,
        verbose: bool,
    ) -> CommandThread {
        let (cancel, cancelled) = tokio::sync::oneshot::channel::<()>();
        let (finish, done) = tokio::sync::oneshot::channel();
        let thread = std::thread::Builder::new()
            .name("sidewire-command".to_owned())
            .spawn(move || {
                handle.block_on(async move {
                    let work = run(command, &out, interrupted, ctrl_c, verbose);
                    tokio::select! {
                        // A cancel (or its sender dropped) drops `work` here, on this thread.
                        _ = cancelled => {}
                        result = work => {
                            let _ = finish.send(result);
                        }
                    }
                });
            })
            .expect("a thread for the command starts");
        CommandThread {
            cancel: Some(cancel),
            done: Some(done),
            thread: Some(thread),
        }
    }

    /// The command's result. A command that panicked panics here too, as it did when it ran
    /// on this thread.
    ///
    /// Cancel safety: cancel safe (the result stays until it is taken).
    async fn finished(&mut self) -> anyhow::Result<()> {
        let Some(done) = self.done.as_mut() else {
            return Err(anyhow::anyhow!("the command's result was taken already"));
        };
        let answer = done.await;
        self.done = None;
        match answer {
            Ok(result) => result,
            Err(_) => {
                // No result and no cancel: the command's thread panicked.
                if let Some(thread) = self.thread.take()
                    && let Err(panic) = thread.join()
                {
                    std::panic::resume_unwind(panic);
                }
                Err(anyhow::anyhow!("the command ended without a result"))
            }
        }
    }

    /// Drops the command's future on its thread (at its next poll).
    fn cancel(&mut self) {
        if let Some(cancel) = self.cancel.take() {
            let _ = cancel.send(());
        }
    }

    /// Waits until the command's future is gone (finished or dropped); never returns while
    /// its thread is stuck in a blocking call.
    ///
    /// Cancel safety: cancel safe.
    async fn dropped(&mut self) {
        if let Some(done) = self.done.as_mut() {
            let _ = done.await;
            self.done = None;
        }
    }
}

/// Whether `command` winds down itself on an ending signal (cancelling its provider stream so
/// the sidecar sees the cancel, or its MCP call so the server does, then shutting down) instead
/// of being dropped at once. Not `mcp login`, `logout` and `auth`: they start no server.
fn winds_down(command: &Command) -> bool {
    match command {
        Command::Ext(cli::ExtCommand::Complete { .. }) | Command::Run { .. } => true,
        Command::Mcp(args) => !matches!(
            args.command,
            cli::McpCommand::Login { .. }
                | cli::McpCommand::Logout { .. }
                | cli::McpCommand::Auth(_)
        ),
        _ => false,
    }
}

fn exit_code(out: &Out, result: anyhow::Result<()>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) if err.is::<Reported>() => ExitCode::FAILURE,
        Err(err) if err.is::<EndedByCtrlC>() => {
            out.note(format!("interrupted ({})", Ending::Interrupt.name()));
            ExitCode::from(Ending::Interrupt.exit_code())
        }
        // Words that cannot be a tool's arguments are a usage error, like clap's; so are
        // arguments the tool's inputSchema refuses, checked here before anything was sent.
        Err(err) if err.is::<schema_args::ArgError>() || refused_locally(&err) => {
            out.error(&err);
            ExitCode::from(2)
        }
        Err(err) => {
            out.error(&err);
            ExitCode::FAILURE
        }
    }
}

/// Whether `err` is the MCP library's check of a tool's arguments against its inputSchema:
/// nothing was sent, so it is the caller's usage, not a server's failure.
fn refused_locally(err: &anyhow::Error) -> bool {
    err.downcast_ref::<sidewire_mcp::Error>()
        .is_some_and(sidewire_mcp::Error::is_invalid_arguments)
}

/// SIGINT, handed to a command that gives Ctrl-C its own meaning (`run`: the first cancels the
/// call in flight). Its handler was installed with the others, before any child started.
#[derive(Debug)]
pub(crate) struct CtrlC(Option<tokio::signal::unix::Signal>);

impl CtrlC {
    /// Waits for the next SIGINT (never returns when it is not watched).
    ///
    /// Cancel safety: cancel safe (a signal that arrives while it is not polled stays pending).
    pub(crate) async fn recv(&mut self) {
        match self.0.as_mut() {
            Some(signal) => {
                signal.recv().await;
            }
            None => std::future::pending().await,
        }
    }
}

/// A command that owns Ctrl-C ended on it: exit as the shell expects after SIGINT (130).
#[derive(Debug)]
pub(crate) struct EndedByCtrlC;

impl std::fmt::Display for EndedByCtrlC {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("interrupted (SIGINT)")
    }
}

impl std::error::Error for EndedByCtrlC {}

/// Tells a command that winds down that an ending signal arrived (the sender side).
struct Interrupt(tokio::sync::watch::Sender<bool>);

impl Interrupt {
    fn fire(&self) {
        self.0.send_replace(true);
    }
}

/// What a command that winds down watches for an ending signal.
#[derive(Debug, Clone)]
pub(crate) struct Interrupted(tokio::sync::watch::Receiver<bool>);

impl Interrupted {
    fn channel() -> (Interrupt, Interrupted) {
        let (tx, rx) = tokio::sync::watch::channel(false);
        (Interrupt(tx), Interrupted(rx))
    }

    /// Waits for the signal (never returns when none comes).
    ///
    /// Cancel safety: cancel safe.
    pub(crate) async fn wait(&mut self) {
        if self.0.wait_for(|fired| *fired).await.is_err() {
            // The sender is gone: no signal will come.
            std::future::pending::<()>().await;
        }
    }
}

/// A signal that ends sidewire the way Ctrl-C does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ending {
    /// SIGINT: Ctrl-C.
    Interrupt,
    /// SIGTERM: `kill`, `timeout`, systemd, `docker stop`.
    Terminate,
    /// SIGHUP: the terminal was closed.
    Hangup,
}

impl Ending {
    fn name(self) -> &'static str {
        match self {
            Ending::Interrupt => "SIGINT",
            Ending::Terminate => "SIGTERM",
            Ending::Hangup => "SIGHUP",
        }
    }

    /// 128 + the signal number, as a shell reports a process the signal killed.
    fn exit_code(self) -> u8 {
        match self {
            Ending::Interrupt => 130,
            Ending::Terminate => 143,
            Ending::Hangup => 129,
        }
    }
}

/// The handlers for SIGINT, SIGTERM and SIGHUP, installed before any command starts (a signal
/// that arrived between a child's spawn and the handlers' installation would kill sidewire
/// outright and leave the child behind). All three are handled alike: whatever killed sidewire
/// (a closed terminal, `timeout`, a service manager), its children are shut down with it. A
/// signal that cannot be watched (no handler could be installed) is simply never reported.
struct EndingSignals {
    interrupt: Option<tokio::signal::unix::Signal>,
    terminate: Option<tokio::signal::unix::Signal>,
    hangup: Option<tokio::signal::unix::Signal>,
}

impl EndingSignals {
    /// Installs the three handlers (inside the runtime: they need its signal driver).
    fn install() -> EndingSignals {
        use tokio::signal::unix::{SignalKind, signal};
        let watch = |kind: SignalKind| signal(kind).ok();
        EndingSignals {
            interrupt: watch(SignalKind::interrupt()),
            terminate: watch(SignalKind::terminate()),
            hangup: watch(SignalKind::hangup()),
        }
    }

    /// The first of the three signals to arrive.
    ///
    /// Cancel safety: cancel safe (a signal that arrives while it is not polled stays pending).
    async fn recv(&mut self) -> Ending {
        async fn one(stream: Option<&mut tokio::signal::unix::Signal>) {
            match stream {
                Some(stream) => {
                    stream.recv().await;
                }
                None => std::future::pending().await,
            }
        }
        tokio::select! {
            () = one(self.interrupt.as_mut()) => Ending::Interrupt,
            () = one(self.terminate.as_mut()) => Ending::Terminate,
            () = one(self.hangup.as_mut()) => Ending::Hangup,
        }
    }
}

async fn run(
    command: Command,
    out: &Out,
    interrupted: Interrupted,
    ctrl_c: CtrlC,
    verbose: bool,
) -> anyhow::Result<()> {
    match command {
        Command::Mcp(args) => mcp_cmd::run(*args, out, interrupted).await,
        Command::Plugin(command) => plugin_cmd::run(command, out),
        Command::Ext(command) => ext_cmd::run(command, out, interrupted).await,
        Command::Hooks(command) => hooks_cmd::run(command, out).await,
        Command::Demo => demo::run(out).await,
        Command::Run {
            config,
            allow_tools,
            model,
            roots,
            max_rounds,
            idle_timeout,
        } => {
            let agent = model.map(|model| run::AgentMode {
                model,
                max_rounds,
                idle_timeout: idle_timeout
                    .and_then(|s| std::time::Duration::try_from_secs_f64(s).ok()),
            });
            let options = run::Options {
                config,
                roots,
                allow_tools,
                agent,
                verbose,
                interrupted,
                ctrl_c,
            };
            run::run(options, out).await
        }
        Command::Completions { .. } | Command::BuiltinSidecar(_) | Command::BuiltinMcpServer(_) => {
            unreachable!("handled before the runtime starts")
        }
    }
}

fn init_tracing(cli: &Cli) {
    let default = if cli.quiet {
        "error"
    } else {
        match cli.verbose {
            0 => "warn",
            1 => "info",
            2 => "debug",
            _ => "trace",
        }
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let color = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    // Log fields carry peer text (an MCP server's stderr inside an error, a sidecar's reason):
    // each is escaped like any other peer value, newlines included, so one event stays one
    // line and no control byte reaches the terminal. The formatter's own colours are not
    // field text and stay.
    let fields = tracing_subscriber::fmt::format::debug_fn(|writer, field, value| {
        let text = format!("{value:?}");
        if field.name() == "message" {
            write!(writer, "{}", safe::line(&text))
        } else {
            write!(writer, "{field}={}", safe::line(&text))
        }
    });
    let builder = tracing_subscriber::fmt()
        .fmt_fields(tracing_subscriber::field::MakeExt::delimited(fields, " "))
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(color)
        .with_target(false);
    // At the default level a log line is a plain note (`warning: ...`); the timestamps and
    // level columns are for `-v` and `RUST_LOG`.
    let plain = cli.verbose == 0 && std::env::var_os("RUST_LOG").is_none();
    let _ = if plain {
        builder.event_format(out::Notes).try_init()
    } else {
        builder.try_init()
    };
}

/// `$SIDEWIRE_HOME`, or the platform data directory. An empty variable counts as unset (as
/// XDG says of `XDG_DATA_HOME`): an empty path would silently mean the current directory.
pub(crate) fn sidewire_home() -> anyhow::Result<std::path::PathBuf> {
    let set = |name: &str| std::env::var_os(name).filter(|value| !value.is_empty());
    if let Some(home) = set("SIDEWIRE_HOME") {
        return Ok(home.into());
    }
    if let Some(data) = set("XDG_DATA_HOME") {
        return Ok(std::path::PathBuf::from(data).join("sidewire"));
    }
    let home = set("HOME").ok_or_else(|| {
        anyhow::anyhow!("neither SIDEWIRE_HOME nor HOME is set; set SIDEWIRE_HOME")
    })?;
    let home = std::path::PathBuf::from(home);
    if cfg!(target_os = "macos") {
        Ok(home.join("Library/Application Support/sidewire"))
    } else {
        Ok(home.join(".local/share/sidewire"))
    }
}

/// A fresh random session id (32 hex digits).
pub(crate) fn session_id() -> String {
    let mut bytes = [0u8; 16];
    // The OS random source failing is not worth failing a command for; fall back to time.
    if getrandom::fill(&mut bytes).is_err() {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        bytes = nanos.to_le_bytes();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
