//! `sidewire`: the thin binary that wires the extension host and the MCP client together.
//!
//! It holds wiring and presentation only; logic a library user would also want lives in the
//! libraries. Exit codes: 0 ok; 1 failure (including a blocked chain or a tool result with
//! `isError`, both printed); 2 usage (clap's, and `key=value` words a tool's schema refuses,
//! before anything is sent); 130 after Ctrl-C (SIGINT), 143 after SIGTERM and 129
//! after SIGHUP, once every child process is cleaned up.

mod builtin;
mod cli;
mod conformance_cmd;
mod demo;
mod ext_cmd;
mod many_tools;
mod mcp_cmd;
mod out;
mod plugin_cmd;
mod run;
mod safe;
mod schema_args;
mod stream_out;

use std::io::IsTerminal;
use std::process::ExitCode;

use clap::CommandFactory;

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
        let work = run(cli.command, &out, interrupted, ctrl_c, verbose);
        tokio::pin!(work);
        tokio::select! {
            result = &mut work => exit_code(&out, result),
            signal = signals.recv() => {
                if graceful {
                    // The command cancels what it streams (the sidecar is told) and shuts down;
                    // bounded, and a second signal ends it at once.
                    interrupt.fire();
                    tokio::select! {
                        _ = tokio::time::timeout(GRACE, &mut work) => {}
                        _ = signals.recv() => {}
                    }
                }
                // Dropping the command's future cancels calls in flight (MCP servers are told)
                // and kills every child process group; then exit as the shell expects.
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

/// Whether `command` winds down itself on an ending signal (cancelling its provider stream so
/// the sidecar sees the cancel, then shutting down) instead of being dropped at once.
fn winds_down(command: &Command) -> bool {
    matches!(
        command,
        Command::Ext(cli::ExtCommand::Complete { .. }) | Command::Run { .. }
    )
}

fn exit_code(out: &Out, result: anyhow::Result<()>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) if err.is::<Reported>() => ExitCode::FAILURE,
        Err(err) if err.is::<EndedByCtrlC>() => {
            out.note(format!("interrupted ({})", Ending::Interrupt.name()));
            ExitCode::from(Ending::Interrupt.exit_code())
        }
        // Words that cannot be a tool's arguments are a usage error, like clap's.
        Err(err) if err.is::<schema_args::ArgError>() => {
            out.error(&err);
            ExitCode::from(2)
        }
        Err(err) => {
            out.error(&err);
            ExitCode::FAILURE
        }
    }
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
        Command::Mcp(args) => mcp_cmd::run(args, out).await,
        Command::Plugin(command) => plugin_cmd::run(command, out),
        Command::Ext(command) => ext_cmd::run(command, out, interrupted).await,
        Command::Demo => demo::run(out).await,
        Command::Run {
            config,
            allow_tools,
            model,
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
    let _ = tracing_subscriber::fmt()
        .fmt_fields(tracing_subscriber::field::MakeExt::delimited(fields, " "))
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(color)
        .with_target(false)
        .try_init();
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

/// Locks a mutex, ignoring poisoning: the data is plain bookkeeping.
pub(crate) fn lock<T>(mutex: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
