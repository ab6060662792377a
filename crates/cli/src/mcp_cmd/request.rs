//! The request subcommands of `sidewire mcp`: `call` a tool, fill in a `prompt`, `read` a
//! resource, `ping` every server; and how their names and arguments are read from the line.

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::Context as _;
use serde_json::{Value, json};
use sidewire_mcp::{McpHost, ServerState, ToolCallOptions};

use super::{CONTENT_INDENT, hints, result};
use crate::Reported;
use crate::out::Out;
use crate::{safe, schema_args};

/// The arguments of `call` as the line gives them.
#[derive(Debug)]
pub(super) enum CallArguments<'a> {
    /// Exact JSON (`--args`, or one positional JSON object).
    Json(&'a str),
    /// `key=value` words, typed by the tool's input schema.
    Pairs(&'a [String]),
}

impl<'a> CallArguments<'a> {
    pub(super) fn new(words: &'a [String], json: Option<&'a str>) -> Self {
        match (json, words) {
            (Some(json), _) => CallArguments::Json(json),
            (None, [one]) if one.trim_start().starts_with('{') => CallArguments::Json(one),
            (None, words) => CallArguments::Pairs(words),
        }
    }
}

/// `call TOOL ARGS...`: the result as [`result::print`] shows it (`--json`: the whole result,
/// once); a result with `isError` fails (reported). On a terminal, progress (and the status of a
/// tool that runs as a task) is shown on stderr as it comes.
pub(super) async fn call(
    host: &McpHost,
    tool: &str,
    args: CallArguments<'_>,
    timeout: Option<Duration>,
    show: result::Show<'_>,
    out: &Out,
) -> anyhow::Result<()> {
    let snapshot = host.snapshot();
    let known = snapshot.tools().map(|t| (t.name, t.item.name.clone()));
    let name = resolve_tool(host, known, tool)?;
    let arguments = match args {
        CallArguments::Json(text) => json_object(text)?,
        CallArguments::Pairs(words) => {
            let schema = snapshot
                .tools()
                .find(|t| t.name == name)
                .map_or(Value::Bool(true), |t| t.item.input_schema.to_value());
            // A typed error (usage, exit 2), before anything is sent.
            let pairs = schema_args::split_pairs(words)?;
            Value::Object(schema_args::arguments(&schema, &pairs)?)
        }
    };
    // The arguments are checked against the tool's inputSchema before anything is sent.
    let mut options = ToolCallOptions::new().validate_arguments(true);
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
        options = super::task_status::on_terminal(options);
    }
    let result = match host.call_tool(&name, arguments, options).await {
        Ok(result) => result,
        Err(err) if err.is_url_elicitation_required() => {
            super::elicit_url::offer(host, &err).await;
            return Err(anyhow::Error::new(err).context(format!("calling {name}")));
        }
        Err(err) => {
            let hint = hints::call(&err);
            let err = anyhow::Error::new(err).context(format!("calling {name}"));
            let Some(hint) = hint else {
                return Err(err);
            };
            // The error once, then what to do.
            out.error(&err);
            out.note(format!("hint: {hint}"));
            return Err(Reported.into());
        }
    };
    if show_progress {
        let _ = std::io::Write::write_all(&mut std::io::stderr(), b"\r\x1b[2K");
    }
    if out.json {
        out.json(&serde_json::to_value(&result).unwrap_or_default());
    } else {
        result::print(&result, show, out)?;
    }
    if result.is_error {
        out.note(format!("{} reported an error (isError)", safe::line(&name)));
        return Err(Reported.into());
    }
    Ok(())
}

/// `prompt NAME key=value...`: the filled-in messages, each under its role.
pub(super) async fn prompt(
    host: &McpHost,
    name: &str,
    args: &[String],
    out: &Out,
) -> anyhow::Result<()> {
    let snapshot = host.snapshot();
    let known = snapshot.prompts().map(|p| (p.name, p.item.name.clone()));
    let name = resolve(known, name, "prompt")?;
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

/// `read URI`: from the server that lists it, or the only running one.
pub(super) async fn read(host: &McpHost, uri: &str, out: &Out) -> anyhow::Result<()> {
    let owner = host
        .resources()
        .into_iter()
        .find(|r| r.resource.as_ref().is_some_and(|res| res.uri == uri))
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
    // A resource's text, like a tool's, is written as it is when stdout is not a terminal.
    let parts = &mut result::Parts::new(out);
    for contents in &result.contents {
        match (&contents.text, &contents.blob) {
            (Some(text), _) => parts.text(text),
            (None, Some(blob)) => parts.line(format!(
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

/// `ping`: every running server, with the round trip's time; one failure fails (reported).
pub(super) async fn ping(host: &McpHost, out: &Out) -> anyhow::Result<()> {
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
            Ok(()) => out.line(format!("{} ok in {millis:.1} ms", safe::line(&status.name))),
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

/// [`resolve`] for a tool; an unknown name that a server's tool filter (the config's
/// `includeTools`/`excludeTools`, `enabled_tools`/`disabled_tools`, `tools`) keeps out says so.
pub(crate) fn resolve_tool(
    host: &McpHost,
    known: impl IntoIterator<Item = (String, String)>,
    wanted: &str,
) -> anyhow::Result<String> {
    resolve(known, wanted, "tool").map_err(|err| match filtered_by(host, wanted) {
        Some(server) => err.context(format!(
            "the config's tool filter of server {} keeps a tool named {} out (its \
             includeTools/excludeTools, enabled_tools/disabled_tools or tools)",
            safe::line(&server),
            safe::line(wanted)
        )),
        None => err,
    })
}

/// The running server whose tool filter keeps a tool of the name `wanted` out: its own name,
/// or the namespaced name on that server.
fn filtered_by(host: &McpHost, wanted: &str) -> Option<String> {
    host.status()
        .into_iter()
        .filter(|status| status.state == ServerState::Running)
        .find_map(|status| {
            let client = host.client(&status.name)?;
            let filter = client.spec().tools_exposed();
            if filter.is_all() {
                return None;
            }
            let own = match wanted.strip_prefix(&format!("mcp__{}__", status.name)) {
                Some(own) => own,
                // Another server's namespaced name.
                None if wanted.starts_with("mcp__") => return None,
                None => wanted,
            };
            (!filter.allows(own)).then_some(status.name)
        })
}

/// A namespaced name, or a server-local name that is unambiguous among the selected servers.
/// `known` yields (namespaced, server-local) pairs.
pub(crate) fn resolve(
    known: impl IntoIterator<Item = (String, String)>,
    wanted: &str,
    what: &str,
) -> anyhow::Result<String> {
    let known: Vec<(String, String)> = known.into_iter().collect();
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

/// `--args`: exactly one JSON object, sent as it is.
fn json_object(text: &str) -> anyhow::Result<Value> {
    let value: Value = serde_json::from_str(text)
        .with_context(|| format!("the arguments are not valid JSON: {text}"))?;
    anyhow::ensure!(value.is_object(), "the arguments must be a JSON object");
    Ok(value)
}
