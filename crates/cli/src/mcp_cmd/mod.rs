//! `sidewire mcp`: start the selected MCP servers (from a config file, or one ad hoc server),
//! run one command against them, and shut them down.
//!
//! This file selects and starts the servers and dispatches to one function per subcommand:
//! the listings (`servers`, `tools`, `prompts`, `resources`, `templates`) in `list.rs`, the
//! requests (`call`, `prompt`, `read`, `ping`) in `request.rs`.
//!
//! Everything a server says (names, descriptions, results, stderr, error bodies) is printed
//! through [`safe`]: one-line values with [`safe::line()`], content with [`safe::block`].

mod list;
mod request;

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use sidewire_mcp::{McpHost, NoHandler, ServerSpec, ServerState, StartFailure};

use self::list::Listing;
use crate::cli::{HttpTransport, McpArgs, McpCommand};
use crate::out::Out;
use crate::safe;

/// The indent of a peer's continuation lines under a listing entry.
const LIST_INDENT: &str = "    ";
/// The indent of a peer's continuation lines in printed content.
const CONTENT_INDENT: &str = "  ";

/// The server specs the arguments select.
fn specs(args: &McpArgs) -> anyhow::Result<Vec<ServerSpec>> {
    if args.url.is_none() && !args.headers.is_empty() {
        anyhow::bail!("--header goes with --url");
    }
    if let Some(url) = &args.url {
        let name = "adhoc";
        let mut spec = match args.transport {
            HttpTransport::Sse => ServerSpec::sse(name, url.clone()),
            HttpTransport::Auto | HttpTransport::Http => ServerSpec::http(name, url.clone()),
        };
        for header in &args.headers {
            let (key, value) = header
                .split_once(':')
                .with_context(|| format!("a header is 'Name: value', got {header:?}"))?;
            spec = spec.header(key.trim(), value.trim());
        }
        return Ok(vec![spec]);
    }
    if let Some((command, rest)) = args.stdio_command.split_first().filter(|_| args.stdio) {
        return Ok(vec![
            ServerSpec::stdio("adhoc", command.clone()).args(rest.iter().cloned()),
        ]);
    }
    let path = match &args.config {
        Some(path) => path.clone(),
        None => {
            let default = PathBuf::from(".mcp.json");
            anyhow::ensure!(
                default.exists(),
                "no MCP servers given: pass --config FILE, --url URL or --stdio -- CMD (or create ./.mcp.json)"
            );
            default
        }
    };
    let all = sidewire_mcp::load_mcp_servers(&path)?;
    if args.servers.is_empty() {
        return Ok(all);
    }
    let mut chosen = Vec::new();
    for name in &args.servers {
        let spec = all.iter().find(|s| s.name() == name).with_context(|| {
            let names: Vec<&str> = all.iter().map(ServerSpec::name).collect();
            format!(
                "{} has no server named {name}; it has: {}",
                path.display(),
                names.join(", ")
            )
        })?;
        chosen.push(spec.clone());
    }
    Ok(chosen)
}

pub(crate) async fn run(args: McpArgs, out: &Out) -> anyhow::Result<()> {
    let mut specs = specs(&args)?;
    anyhow::ensure!(!specs.is_empty(), "the config lists no MCP servers");
    let timeout = seconds("--timeout", args.timeout)?;
    let startup = seconds("--startup-timeout", args.startup_timeout)?;
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
    let (host, driver) = McpHost::new(NoHandler);
    let driver = tokio::spawn(driver);
    let failures = host.start_available(specs).await;
    let result = command(&host, &args.command, timeout, &failures, out).await;
    host.shutdown().await;
    let _ = tokio::time::timeout(Duration::from_secs(5), driver).await;
    result
}

/// A duration flag's value: a positive, finite number of seconds.
fn seconds(flag: &str, value: Option<f64>) -> anyhow::Result<Option<Duration>> {
    match value {
        None => Ok(None),
        Some(secs) => match Duration::try_from_secs_f64(secs) {
            Ok(duration) if !duration.is_zero() => Ok(Some(duration)),
            _ => anyhow::bail!("{flag} must be a positive number of seconds, got {secs}"),
        },
    }
}

/// Runs one subcommand against the started servers.
async fn command(
    host: &McpHost,
    command: &McpCommand,
    timeout: Option<Duration>,
    failures: &[StartFailure],
    out: &Out,
) -> anyhow::Result<()> {
    // `servers` reports the failures itself; every other command needs a running server.
    if !matches!(command, McpCommand::Servers) {
        require_running(host, failures, out)?;
    }
    match command {
        McpCommand::Servers => list::servers(host, failures, out),
        McpCommand::Tools => list::listing(host, Listing::Tools, out),
        McpCommand::Prompts => list::listing(host, Listing::Prompts, out),
        McpCommand::Resources => list::listing(host, Listing::Resources, out),
        McpCommand::Templates => list::listing(host, Listing::Templates, out),
        McpCommand::Call { tool, args } => request::call(host, tool, args, timeout, out).await,
        McpCommand::Prompt { name, args } => request::prompt(host, name, args, out).await,
        McpCommand::Read { uri } => request::read(host, uri, out).await,
        McpCommand::Ping => request::ping(host, out).await,
    }
}

/// Warns of each server that failed to start, and fails when none is running.
fn require_running(host: &McpHost, failures: &[StartFailure], out: &Out) -> anyhow::Result<()> {
    for failure in failures {
        out.note(format!(
            "warning: server {} failed to start: {}",
            safe::line(&failure.server),
            safe::line(&failure.error)
        ));
    }
    if host
        .status()
        .iter()
        .all(|s| s.state != ServerState::Running)
    {
        let first = failures.first().map(failure_text).unwrap_or_default();
        anyhow::bail!("no MCP server started\n{first}");
    }
    Ok(())
}

/// A start failure over several lines: the stage, the error, the exit status, the stderr tail.
fn failure_text(failure: &StartFailure) -> String {
    let mut text = format!(
        "failed at {} after {} ms: {}",
        failure.stage.as_str(),
        failure.elapsed.as_millis(),
        failure.error
    );
    if let Some(status) = &failure.exit_status {
        text.push_str(&format!("\nexit status: {status}"));
    }
    if let Some(tail) = failure
        .stderr_tail
        .as_deref()
        .filter(|t| !t.trim().is_empty())
    {
        text.push_str("\nstderr tail:\n");
        text.push_str(tail.trim_end());
    }
    text
}
