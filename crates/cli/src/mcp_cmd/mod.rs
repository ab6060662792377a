//! `sidewire mcp`: start the selected MCP servers (from a config file, or one ad hoc server),
//! run one command against them, and shut them down.
//!
//! This file selects and starts the servers and dispatches to one function per subcommand:
//! the listings (`servers`, `tools`, `prompts`, `resources`, `templates`) in `list.rs`, the
//! requests (`call`, `prompt`, `read`, `ping`) in `request.rs` (a task's live status line in
//! `task_status.rs`); authorization (`login`,
//! `logout`, `auth status`, and the offer to log in when a server needs it) in `auth.rs`; the
//! consent screen for a server's URL elicitation in `elicit_url.rs`.
//!
//! Everything a server says (names, descriptions, results, stderr, error bodies) is printed
//! through [`safe`]: one-line values with [`safe::line()`], content with [`safe::block`].

mod auth;
pub(crate) mod config;
mod elicit_url;
mod hints;
mod list;
pub(crate) mod request;
mod result;
mod serve;
mod task_status;

use std::time::Duration;

use anyhow::Context as _;
use sidewire_mcp::{McpHost, ServerSpec, ServerState, StartFailure};
use sidewire_mcp_config::McpConfig;

use self::auth::LoginMode;
use self::list::Listing;
use crate::Interrupted;
use crate::cli::{AuthCommand, HttpTransport, McpArgs, McpCommand};
use crate::out::Out;
use crate::safe;

/// The indent of a peer's continuation lines under a listing entry.
const LIST_INDENT: &str = "    ";
/// The indent of a peer's continuation lines in printed content.
const CONTENT_INDENT: &str = "  ";

/// The name of the `--url` or `--stdio` server (its token store key, too).
pub(super) const ADHOC: &str = "adhoc";

/// The `--url` server, with its `--header`s.
fn adhoc_http(args: &McpArgs) -> anyhow::Result<ServerSpec> {
    let url = args.url.as_deref().context("no --url given")?;
    let mut spec = match args.transport.unwrap_or(HttpTransport::Auto) {
        HttpTransport::Sse => ServerSpec::sse(ADHOC, url),
        HttpTransport::Auto | HttpTransport::Http => ServerSpec::http(ADHOC, url),
    };
    for (name, value) in &args.headers {
        spec = spec.header(name, value);
    }
    Ok(spec)
}

/// The server specs the arguments select, with `--era` applied.
fn specs(args: &McpArgs) -> anyhow::Result<Vec<ServerSpec>> {
    Ok(selected(args)?.0)
}

/// The server specs the arguments select, with `--era` applied, and the config they came from
/// (none for --url and --stdio).
fn selected(args: &McpArgs) -> anyhow::Result<(Vec<ServerSpec>, Option<McpConfig>)> {
    let (specs, config) = from_flags_or_config(args)?;
    let specs = match args.era {
        Some(era) => specs.into_iter().map(|s| s.era(era.into())).collect(),
        None => specs,
    };
    Ok((specs, config))
}

/// The server specs the arguments select, as the config or the flags give them.
fn from_flags_or_config(args: &McpArgs) -> anyhow::Result<(Vec<ServerSpec>, Option<McpConfig>)> {
    if args.url.is_some() {
        return Ok((vec![adhoc_http(args)?], None));
    }
    if let Some((command, rest)) = args.stdio_command.split_first().filter(|_| args.stdio) {
        let mut spec = ServerSpec::stdio(ADHOC, command.clone()).args(rest.iter().cloned());
        for (key, value) in &args.env {
            spec = spec.env(key, value);
        }
        return Ok((vec![spec], None));
    }
    let (path, mut config) = config::load(args)?;
    if !args.servers.is_empty() {
        let mut chosen = Vec::new();
        for name in &args.servers {
            chosen.push(config::find(&path, &config, name)?.clone());
        }
        config.servers = chosen;
    }
    let specs = config.servers.iter().map(|s| s.spec.clone()).collect();
    Ok((specs, Some(config)))
}

/// Runs one `sidewire mcp` subcommand. A server that needs a login is offered one on a
/// terminal, and the command then runs again, once; elsewhere the command fails naming
/// `sidewire mcp login`.
///
/// On an ending signal (`interrupted`) the command winds down: what it was doing is dropped
/// (a call in flight is cancelled, its `notifications/cancelled` queued), then the servers are
/// let go, each told of the cancel first (see `sidewire_mcp::CANCEL_FLUSH`).
pub(crate) async fn run(args: McpArgs, out: &Out, interrupted: Interrupted) -> anyhow::Result<()> {
    match &args.command {
        McpCommand::Login {
            server,
            no_browser,
            headless,
        } => {
            let mode = if *headless {
                LoginMode::Headless
            } else {
                LoginMode::Person {
                    browser: !no_browser,
                }
            };
            return auth::login(&args, server.as_deref(), mode, out).await;
        }
        McpCommand::Logout { server } => return auth::logout(&args, server.as_deref(), out),
        McpCommand::Auth(AuthCommand::Status) => return auth::status(out),
        McpCommand::Serve(serve) => return serve::serve(&args, serve, out, interrupted).await,
        _ => {}
    }
    let authorizer = auth::authorizer();
    let interactive = auth::interactive();
    let err = match attempt(&args, authorizer.as_ref(), interactive, out, &interrupted).await {
        Ok(()) => return Ok(()),
        Err(err) => err,
    };
    let server = match err.downcast_ref::<NeedsLogin>() {
        Some(NeedsLogin(server)) => server.clone(),
        None => match auth::login_required_in(&err) {
            Some(server) => server,
            None => return Err(err),
        },
    };
    if !interactive || !auth::offer_login(&server).await? {
        return Err(auth::login_required_error(&args, &server));
    }
    let spec = specs(&args)?
        .into_iter()
        .find(|spec| spec.name() == server)
        .with_context(|| format!("server {} is gone from the config", safe::line(&server)))?;
    // No browser from here: one it started would end with this command (the subreaper reaps
    // everything below sidewire); the URL is printed, and `sidewire mcp login` opens one.
    auth::login_spec(spec, LoginMode::Person { browser: false }, out).await?;
    // Once: a second login-required failure is reported, not offered again.
    match attempt(&args, authorizer.as_ref(), false, out, &interrupted).await {
        Err(err) if err.is::<NeedsLogin>() || auth::login_required_in(&err).is_some() => {
            let server = auth::login_required_in(&err)
                .or_else(|| err.downcast_ref::<NeedsLogin>().map(|n| n.0.clone()))
                .unwrap_or(server);
            Err(auth::login_required_error(&args, &server))
        }
        other => other,
    }
}

/// A server failed to start because it needs a login, and a person may give it one: the host
/// was shut down so the command can run again after the login.
#[derive(Debug)]
struct NeedsLogin(String);

impl std::fmt::Display for NeedsLogin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "server {} requires authorization", safe::line(&self.0))
    }
}

impl std::error::Error for NeedsLogin {}

/// Starts the selected servers and runs the command once. With `offer` (a person is there), a
/// server that needs a login ends the attempt with [`NeedsLogin`]; without, it is reported
/// with the command that logs in.
async fn attempt(
    args: &McpArgs,
    authorizer: Option<&sidewire_mcp::auth::Authorizer>,
    offer: bool,
    out: &Out,
    interrupted: &Interrupted,
) -> anyhow::Result<()> {
    let (specs, config) = selected(args)?;
    let mut specs = auth::authorize(specs, authorizer);
    anyhow::ensure!(!specs.is_empty(), "the config lists no MCP servers");
    let timeout = seconds(args.timeout);
    let startup = seconds(args.startup_timeout);
    if let Some(timeout) = timeout {
        specs = specs.into_iter().map(|s| s.call_timeout(timeout)).collect();
    }
    // --startup-timeout sets startup; --timeout alone caps it, so no command outlives it.
    match (startup, timeout) {
        (Some(startup), _) => {
            specs = specs
                .into_iter()
                .map(|s| s.startup_timeout(startup))
                .collect()
        }
        (None, Some(timeout)) => {
            specs = (specs.into_iter())
                .map(|s| {
                    let capped = s.startup_budget().min(timeout);
                    s.startup_timeout(capped)
                })
                .collect();
        }
        (None, None) => {}
    }
    let (host, driver) = McpHost::new(CliHandler {
        show_logs: args.log_level.is_some() || matches!(args.command, McpCommand::LogLevel { .. }),
        urls: elicit_url::UrlConsent::new(),
        told: std::sync::Mutex::default(),
    });
    let mut driver = tokio::spawn(driver);
    if !args.roots.is_empty() {
        // Before any server starts, in place of the config's `roots`: each server connects
        // with them (and declares the capability).
        let roots = args.roots.iter().map(sidewire_mcp::Root::dir).collect();
        host.set_roots(roots).await;
    }
    let work = async {
        let failures = host.start_available(specs.clone()).await;
        let login = |failure: &StartFailure| auth::needs_login(failure, &specs);
        match failures.iter().find(|f| login(f)) {
            Some(failure) if offer => Err(NeedsLogin(failure.server.clone()).into()),
            _ => {
                let config = config.as_ref();
                command(&host, args, config, timeout, &failures, &login, out).await
            }
        }
    };
    let mut interrupted = interrupted.clone();
    let finished = tokio::select! {
        result = work => Some(result),
        () = interrupted.wait() => None,
    };
    let Some(result) = finished else {
        // An ending signal: the work was dropped just now (a call in flight cancelled, its
        // notice queued). The host goes next, without the graceful shutdown: each connection
        // writes what it owes its server, then kills it (`sidewire_mcp::CANCEL_FLUSH`), and
        // the driver ends once they all have; waited for, bounded, so that nothing is cut
        // short by the exit.
        drop(host);
        let _ = tokio::time::timeout(DRIVER_WIND_DOWN, &mut driver).await;
        return Err(anyhow::anyhow!("interrupted"));
    };
    host.shutdown().await;
    let _ = tokio::time::timeout(DRIVER_WIND_DOWN, driver).await;
    result
}

/// How long the end of a command waits for the MCP host's driver to wind down: after a
/// graceful shutdown, or after the host was dropped on a signal (then each connection takes
/// `sidewire_mcp::CANCEL_FLUSH` at most).
const DRIVER_WIND_DOWN: Duration = Duration::from_secs(5);

/// A duration flag's value (clap checked it is positive and finite).
fn seconds(value: Option<f64>) -> Option<Duration> {
    value.and_then(|secs| Duration::try_from_secs_f64(secs).ok())
}

/// What the CLI answers for servers: no sampling or form elicitation (neither is advertised),
/// URL elicitation through the consent screen of `elicit_url.rs` (only at a terminal), and,
/// with `--log-level`, each log message on stderr (escaped, one line).
#[derive(Debug)]
struct CliHandler {
    show_logs: bool,
    urls: elicit_url::UrlConsent,
    /// The (server, method) pairs already told of, so a server that asks again and again is
    /// told of once (at most `MAX_UNOFFERED_NOTES` pairs of 64-character methods; past that,
    /// nothing more is printed).
    told: std::sync::Mutex<std::collections::BTreeSet<(String, String)>>,
}

/// How many (server, method) pairs of unoffered requests `sidewire mcp` notes per run.
const MAX_UNOFFERED_NOTES: usize = 16;

/// The note for a server's request that the CLI does not offer.
fn unoffered_note(server: &str, method: &str) -> String {
    let what = match method {
        "sampling/createMessage" => "sampling (an LLM completion)".to_owned(),
        "elicitation/create" => "elicitation (a form for you to fill in)".to_owned(),
        other => format!("`{}`", safe::line(other)),
    };
    format!(
        "note: MCP server {} asked for {what}, which `sidewire mcp` does not offer; it was \
         refused, so the server's work may fail: use a client that offers it, or a tool that \
         needs none\n",
        safe::line(server)
    )
}

impl sidewire_mcp::ClientHandler for CliHandler {
    fn supports_url_elicitation(&self) -> bool {
        self.urls.supports_url_elicitation()
    }

    fn elicit_url(
        &self,
        server: &str,
        request: sidewire_mcp::UrlElicitation,
    ) -> impl Future<Output = Result<sidewire_mcp::ElicitAction, sidewire_mcp::ErrorObject>> + Send
    {
        self.urls.elicit_url(server, request)
    }

    fn on_elicitation_complete(&self, server: &str, elicitation_id: &str) {
        self.urls.on_elicitation_complete(server, elicitation_id);
    }

    fn on_unoffered_request(&self, server: &str, method: &str) {
        // Peer text: at most 64 characters of it are kept and shown.
        let method: String = method.chars().take(64).collect();
        let method = method.as_str();
        {
            let mut told = self
                .told
                .lock()
                .unwrap_or_else(|poison| poison.into_inner());
            if told.len() >= MAX_UNOFFERED_NOTES
                || !told.insert((server.to_owned(), method.to_owned()))
            {
                return;
            }
        }
        let _ = std::io::Write::write_all(
            &mut std::io::stderr().lock(),
            unoffered_note(server, method).as_bytes(),
        );
    }

    fn on_log(&self, server: &str, message: &sidewire_mcp::LogMessage) {
        if !self.show_logs {
            return;
        }
        let level = serde_json::to_value(message.level).unwrap_or_default();
        let data = match &message.data {
            serde_json::Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        let logger = message
            .logger
            .as_deref()
            .map(|l| format!(" {}", safe::line(l)))
            .unwrap_or_default();
        let _ = std::io::Write::write_all(
            &mut std::io::stderr().lock(),
            format!(
                "log {} {}{logger}: {}\n",
                safe::line(server),
                level.as_str().unwrap_or("?"),
                safe::line(&data)
            )
            .as_bytes(),
        );
    }
}

/// Sends `--log-level` (or `log-level`'s level) to every running server; with `report`,
/// prints each server's answer.
async fn set_log_level(
    host: &McpHost,
    level: sidewire_mcp::LogLevel,
    report: bool,
    out: &Out,
) -> anyhow::Result<()> {
    let mut failed = false;
    for status in host.status() {
        if status.state != ServerState::Running {
            continue;
        }
        let Some(client) = host.client(&status.name) else {
            continue;
        };
        match client.set_log_level(level).await {
            Ok(()) if report => out.line(format!("{}: log level set", safe::line(&status.name))),
            Ok(()) => {}
            Err(err) => {
                failed = true;
                out.note(format!(
                    "warning: server {} did not take the log level: {}",
                    safe::line(&status.name),
                    safe::block(&err.to_string(), "  ")
                ));
            }
        }
    }
    if failed && report {
        return Err(crate::Reported.into());
    }
    Ok(())
}

/// Runs one subcommand against the started servers.
async fn command(
    host: &McpHost,
    args: &McpArgs,
    config: Option<&McpConfig>,
    timeout: Option<Duration>,
    failures: &[StartFailure],
    needs_login: &dyn Fn(&StartFailure) -> bool,
    out: &Out,
) -> anyhow::Result<()> {
    let command = &args.command;
    // `servers` reports the failures itself; every other command needs a running server.
    if !matches!(command, McpCommand::Servers) {
        require_running(host, args, failures, needs_login, out)?;
    }
    match (command, args.log_level) {
        (McpCommand::LogLevel { level }, _) => {
            set_log_level(host, (*level).into(), true, out).await?
        }
        (_, Some(level)) => set_log_level(host, level.into(), false, out).await?,
        _ => {}
    }
    match command {
        McpCommand::Servers => list::servers(host, config, failures, out),
        McpCommand::Tools => list::listing(host, Listing::Tools, out),
        McpCommand::Prompts => list::listing(host, Listing::Prompts, out),
        McpCommand::Resources => list::listing(host, Listing::Resources, out),
        McpCommand::Templates => list::listing(host, Listing::Templates, out),
        McpCommand::Call {
            tool,
            args: words,
            json_args,
            structured,
            save,
        } => {
            let show = result::Show {
                structured: *structured,
                save: save.as_deref(),
            };
            let arguments = request::CallArguments::new(words, json_args.as_deref());
            request::call(host, tool, arguments, timeout, show, out).await
        }
        McpCommand::LogLevel { level } => {
            // Set above already, with the rest of the command's servers.
            let _ = level;
            Ok(())
        }
        McpCommand::Prompt { name, args } => request::prompt(host, name, args, out).await,
        McpCommand::Read { uri } => request::read(host, uri, out).await,
        McpCommand::Ping => request::ping(host, out).await,
        McpCommand::Login { .. }
        | McpCommand::Logout { .. }
        | McpCommand::Auth(_)
        | McpCommand::Serve(_) => {
            unreachable!("handled before any server starts")
        }
    }
}

/// Fails when no server is running: one error naming each failure once (the login command
/// for one that needs a login). Otherwise warns of each server that failed, once each.
fn require_running(
    host: &McpHost,
    args: &McpArgs,
    failures: &[StartFailure],
    needs_login: &dyn Fn(&StartFailure) -> bool,
    out: &Out,
) -> anyhow::Result<()> {
    let running = host
        .status()
        .iter()
        .any(|s| s.state == ServerState::Running);
    if !running {
        if let Some(failure) = failures.iter().find(|f| needs_login(f)) {
            return Err(auth::login_required_error(args, &failure.server));
        }
        let mut text = String::from("no MCP server started");
        for failure in failures {
            text.push_str(&format!(
                "\nserver {}: {}",
                failure.server,
                failure_text(failure)
            ));
        }
        // Printed once, through `Out::error`, which escapes and indents every line.
        anyhow::bail!(text);
    }
    for failure in failures {
        let hint = if needs_login(failure) {
            format!(" (run `{}`)", auth::login_command(args, &failure.server))
        } else {
            String::new()
        };
        out.note(format!(
            "warning: server {} failed to start{hint}: {}",
            safe::line(&failure.server),
            safe::block(&failure_text(failure), "  ")
        ));
    }
    Ok(())
}

/// A start failure, unescaped: the stage, the reason and how the process ended on one line,
/// then the stderr tail (if any) as an indented block. Each fact once: the library's whole
/// error text repeats the exit status and the stderr's end, so it is not used here.
pub(crate) fn failure_text(failure: &StartFailure) -> String {
    // The handshake stage by the request it waited on (`server/discover` or `initialize`).
    let stage = match (failure.stage, failure.handshake) {
        (sidewire_mcp::Stage::Initialize, Some(handshake)) => handshake.method(),
        (stage, _) => stage.as_str(),
    };
    let mut text = format!(
        "{stage} failed after {} ms: {}",
        failure.elapsed.as_millis(),
        failure.reason
    );
    if let Some(status) = &failure.exit_status {
        let verb = if status.starts_with("killed") {
            "was "
        } else {
            ""
        };
        text.push_str(&format!("; the process {verb}{status}"));
    }
    if let Some(tail) = failure
        .stderr_tail
        .as_deref()
        .map(str::trim_end)
        .filter(|t| !t.trim().is_empty())
    {
        text.push_str("\nstderr tail:");
        for line in tail.lines() {
            text.push_str("\n    ");
            text.push_str(line);
        }
    }
    if let Some(hint) = hints::start(failure) {
        text.push_str("\nhint: ");
        text.push_str(&hint);
    }
    text
}

#[cfg(test)]
mod tests {
    use sidewire_mcp::ClientHandler as _;

    use super::*;

    #[test]
    fn unoffered_requests_are_noted_once_each_and_at_most_a_bounded_number() {
        let handler = CliHandler {
            show_logs: false,
            urls: elicit_url::UrlConsent::new(),
            told: std::sync::Mutex::default(),
        };
        handler.on_unoffered_request("s", "sampling/createMessage");
        handler.on_unoffered_request("s", "sampling/createMessage");
        assert_eq!(handler.told.lock().unwrap().len(), 1);
        for n in 0..2 * MAX_UNOFFERED_NOTES {
            handler.on_unoffered_request("s", &format!("x/{n}{}", "y".repeat(100)));
        }
        let told = handler.told.lock().unwrap();
        assert_eq!(told.len(), MAX_UNOFFERED_NOTES);
        assert!(told.iter().all(|(_, method)| method.chars().count() <= 64));
    }
}
