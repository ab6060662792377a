//! `sidewire mcp`: start the selected MCP servers (from a config file, or one ad hoc server),
//! run one command against them, and shut them down.
//!
//! Everything a server says (names, descriptions, results, stderr, error bodies) is printed
//! through [`safe`]: one-line values with [`safe::line()`], content with [`safe::block`].

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use serde_json::{Map, Value, json};
use sidewire_mcp::{CallOptions, Host, NoHandler, ServerSpec, ServerState};

use crate::Reported;
use crate::cli::{HttpTransport, McpArgs, McpCommand};
use crate::out::Out;
use crate::safe;

/// The indent of a peer's continuation lines under a listing entry.
const LIST_INDENT: &str = "    ";
/// The indent of a peer's continuation lines in printed content.
const CONTENT_INDENT: &str = "  ";

/// A listing entry: a name and a description that may span lines.
fn entry(name: &str, description: Option<&str>) -> String {
    format!(
        "{}  {}",
        safe::line(name),
        safe::block(description.unwrap_or_default().trim_end(), LIST_INDENT)
    )
}

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
    let timeout = match args.timeout {
        Some(secs) if secs.is_finite() && secs > 0.0 => Some(Duration::from_secs_f64(secs)),
        Some(secs) => anyhow::bail!("--timeout must be a positive number of seconds, got {secs}"),
        None => None,
    };
    if let Some(timeout) = timeout {
        specs = specs.into_iter().map(|s| s.call_timeout(timeout)).collect();
    }
    let (host, driver) = Host::new(NoHandler);
    let driver = tokio::spawn(driver);
    let failures = host.start_available(specs).await;
    let result = command(&host, &args.command, timeout, &failures, out).await;
    host.shutdown().await;
    let _ = tokio::time::timeout(Duration::from_secs(5), driver).await;
    result
}

async fn command(
    host: &Host,
    command: &McpCommand,
    timeout: Option<Duration>,
    failures: &[sidewire_mcp::StartFailure],
    out: &Out,
) -> anyhow::Result<()> {
    if !matches!(command, McpCommand::Servers) {
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
    }
    match command {
        McpCommand::Servers => {
            let mut rows = Vec::new();
            for status in host.status() {
                let state = format!("{:?}", status.state).to_lowercase();
                out.line(format!(
                    "{} {state}{}{}",
                    safe::line(&status.name),
                    status
                        .server_info
                        .as_ref()
                        .map(|i| format!(" {} {}", safe::line(&i.name), safe::line(&i.version)))
                        .unwrap_or_default(),
                    status
                        .startup
                        .map(|d| format!(" (started in {} ms)", d.as_millis()))
                        .unwrap_or_default(),
                ));
                if let Some(failure) = &status.failure {
                    // One printed line per line of the text, each escaped on its own, so a
                    // stderr line cannot pass for another server's row.
                    for line in failure_text(failure).lines() {
                        out.line(format!("  {}", safe::line(line)));
                    }
                }
                rows.push(json!({
                    "name": status.name, "state": state, "pid": status.pid,
                    "protocolVersion": status.protocol_version,
                    "tools": status.tools, "prompts": status.prompts, "resources": status.resources,
                    "failure": status.failure.as_ref().map(failure_text),
                }));
            }
            out.json(&json!({ "servers": rows }));
            if failures.is_empty() {
                Ok(())
            } else {
                Err(Reported.into())
            }
        }
        McpCommand::Tools => {
            let tools = host.tools();
            for tool in &tools {
                out.line(entry(&tool.name, tool.tool.description.as_deref()));
            }
            out.json(&json!({ "tools": tools.iter().map(|t| json!({
                "name": t.name, "server": t.server, "tool": t.tool,
            })).collect::<Vec<_>>() }));
            Ok(())
        }
        McpCommand::Call { tool, args } => {
            let name = resolve(
                &host
                    .tools()
                    .iter()
                    .map(|t| (t.name.clone(), t.tool.name.clone()))
                    .collect::<Vec<_>>(),
                tool,
                "tool",
            )?;
            let arguments = parse_arguments(args)?;
            let mut options = CallOptions::new();
            if let Some(timeout) = timeout {
                options = options.timeout(timeout).max_duration(timeout);
            }
            let show_progress = !out.json && std::io::IsTerminal::is_terminal(&std::io::stderr());
            if show_progress {
                options = options.on_progress(|p| {
                    let total = p.total.map(|t| format!("/{t}")).unwrap_or_default();
                    let message = p.message.unwrap_or_default();
                    // The CLI's own line-clearing sequence, around the server's escaped text.
                    let _ = std::io::Write::write_all(
                        &mut std::io::stderr(),
                        format!(
                            "\r\x1b[2Kprogress {}{total} {}",
                            p.progress,
                            safe::line(&message)
                        )
                        .as_bytes(),
                    );
                });
            }
            let result = host
                .call_tool(&name, arguments, options)
                .await
                .with_context(|| format!("calling {name}"))?;
            if show_progress {
                let _ = std::io::Write::write_all(&mut std::io::stderr(), b"\r\x1b[2K");
            }
            for content in &result.content {
                out.line(safe::block(
                    &crate::builtin::content_text(content),
                    CONTENT_INDENT,
                ));
            }
            if let Some(structured) = &result.structured_content {
                out.line(safe::json(structured));
            }
            out.json(&serde_json::to_value(&result).unwrap_or_default());
            if result.is_error {
                out.note(format!("{} reported an error (isError)", safe::line(&name)));
                return Err(Reported.into());
            }
            Ok(())
        }
        McpCommand::Prompts => {
            let prompts = host.prompts();
            for prompt in &prompts {
                out.line(entry(&prompt.name, prompt.prompt.description.as_deref()));
            }
            out.json(&json!({ "prompts": prompts.iter().map(|p| json!({
                "name": p.name, "server": p.server, "prompt": p.prompt,
            })).collect::<Vec<_>>() }));
            Ok(())
        }
        McpCommand::Prompt { name, args } => {
            let name = resolve(
                &host
                    .prompts()
                    .iter()
                    .map(|p| (p.name.clone(), p.prompt.name.clone()))
                    .collect::<Vec<_>>(),
                name,
                "prompt",
            )?;
            let mut arguments = BTreeMap::new();
            for pair in args {
                let (key, value) = pair
                    .split_once('=')
                    .with_context(|| format!("prompt arguments are key=value, got {pair:?}"))?;
                arguments.insert(key.to_owned(), value.to_owned());
            }
            let result = host
                .get_prompt(&name, arguments)
                .await
                .with_context(|| format!("getting {name}"))?;
            for message in &result.messages {
                out.line(format!(
                    "[{}] {}",
                    serde_json::to_value(message.role)
                        .unwrap_or_default()
                        .as_str()
                        .unwrap_or("?"),
                    safe::block(
                        &crate::builtin::content_text(&message.content),
                        CONTENT_INDENT
                    )
                ));
            }
            out.json(&serde_json::to_value(&result).unwrap_or_default());
            Ok(())
        }
        McpCommand::Resources | McpCommand::Templates => {
            let templates = matches!(command, McpCommand::Templates);
            let mut rows = Vec::new();
            for entry in host.resources() {
                match (&entry.resource, &entry.template) {
                    (Some(resource), _) if !templates => {
                        out.line(format!(
                            "{}:{}  {}",
                            safe::line(&entry.server),
                            safe::line(&resource.uri),
                            safe::line(&resource.name)
                        ));
                        rows.push(json!({ "server": entry.server, "resource": resource }));
                    }
                    (_, Some(template)) if templates => {
                        out.line(format!(
                            "{}:{}  {}",
                            safe::line(&entry.server),
                            safe::line(&template.uri_template),
                            safe::line(&template.name)
                        ));
                        rows.push(json!({ "server": entry.server, "template": template }));
                    }
                    _ => {}
                }
            }
            out.json(&json!({ if templates { "templates" } else { "resources" }: rows }));
            Ok(())
        }
        McpCommand::Read { uri } => {
            let owner = host
                .resources()
                .into_iter()
                .find(|r| r.resource.as_ref().is_some_and(|res| &res.uri == uri))
                .map(|r| r.server)
                .or_else(|| {
                    let running: Vec<String> = host
                        .status()
                        .into_iter()
                        .filter(|s| s.state == ServerState::Running)
                        .map(|s| s.name)
                        .collect();
                    (running.len() == 1).then(|| running[0].clone())
                })
                .with_context(|| format!("no server lists the resource {uri}"))?;
            let result = host
                .read_resource(&owner, uri)
                .await
                .with_context(|| format!("reading {uri}"))?;
            for contents in &result.contents {
                match (&contents.text, &contents.blob) {
                    (Some(text), _) => out.line(safe::block(text, CONTENT_INDENT)),
                    (None, Some(blob)) => out.line(format!(
                        "({} bytes of base64 data, {})",
                        blob.len(),
                        safe::line(contents.mime_type.as_deref().unwrap_or_default())
                    )),
                    _ => {}
                }
            }
            out.json(&serde_json::to_value(&result).unwrap_or_default());
            Ok(())
        }
        McpCommand::Ping => {
            let mut rows = Vec::new();
            let mut failed = false;
            for status in host
                .status()
                .into_iter()
                .filter(|s| s.state == ServerState::Running)
            {
                let Some(client) = host.client(&status.name) else {
                    continue;
                };
                let started = std::time::Instant::now();
                let result = client.ping().await;
                let millis = started.elapsed().as_secs_f64() * 1000.0;
                match &result {
                    Ok(()) => {
                        out.line(format!("{} ok in {millis:.1} ms", safe::line(&status.name)))
                    }
                    Err(err) => {
                        failed = true;
                        out.line(format!(
                            "{} failed: {}",
                            safe::line(&status.name),
                            safe::block(&err.to_string(), CONTENT_INDENT)
                        ));
                    }
                }
                rows.push(json!({ "server": status.name, "ok": result.is_ok(), "millis": millis }));
            }
            out.json(&json!({ "ping": rows }));
            if failed { Err(Reported.into()) } else { Ok(()) }
        }
    }
}

fn failure_text(failure: &sidewire_mcp::StartFailure) -> String {
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

/// A namespaced name, or a server-local name that is unambiguous among the selected servers.
fn resolve(known: &[(String, String)], wanted: &str, what: &str) -> anyhow::Result<String> {
    if known.iter().any(|(namespaced, _)| namespaced == wanted) {
        return Ok(wanted.to_owned());
    }
    let matches: Vec<&String> = known
        .iter()
        .filter(|(_, own)| own == wanted)
        .map(|(n, _)| n)
        .collect();
    match matches.as_slice() {
        [one] => Ok((*one).clone()),
        [] => {
            let names: Vec<&str> = known.iter().map(|(n, _)| n.as_str()).collect();
            anyhow::bail!(
                "unknown {what} {wanted:?}; known: {}",
                if names.is_empty() {
                    "(none)".to_owned()
                } else {
                    names.join(", ")
                }
            )
        }
        many => anyhow::bail!(
            "{what} {wanted:?} is offered by several servers; use one of: {}",
            many.iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// One JSON object, or key=value pairs whose values are JSON when they parse as JSON.
fn parse_arguments(args: &[String]) -> anyhow::Result<Value> {
    match args {
        [] => Ok(json!({})),
        [one] if one.trim_start().starts_with('{') => {
            let value: Value = serde_json::from_str(one)
                .with_context(|| format!("the arguments are not valid JSON: {one}"))?;
            anyhow::ensure!(value.is_object(), "the arguments must be a JSON object");
            Ok(value)
        }
        pairs => {
            let mut map = Map::new();
            for pair in pairs {
                let (key, value) = pair.split_once('=').with_context(|| {
                    format!("arguments are one JSON object or key=value pairs, got {pair:?}")
                })?;
                let value =
                    serde_json::from_str(value).unwrap_or_else(|_| Value::String(value.to_owned()));
                map.insert(key.to_owned(), value);
            }
            Ok(Value::Object(map))
        }
    }
}
