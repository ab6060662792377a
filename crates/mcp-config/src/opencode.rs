//! opencode's `opencode.json`: servers under `mcp`, each `{"type": "local", "command": [program,
//! args...], "environment": {...}}` or `{"type": "remote", "url", "headers"}`, with `enabled`
//! and `timeout` (ms, the startup budget); values take `{env:NAME}` besides `${...}`.

use serde_json::{Map, Value};

use sidewire_mcp::Transport;

use crate::entry::{Entry, Text, check_server_name};
use crate::error::Error;
use crate::expand::Syntax;
use crate::mcp_servers::{enabled, tool_filter};
use crate::values::{
    Unit, display_key, duration, object, optional_string, string_array, string_map, unknown_members,
};

/// opencode's own `{env:NAME}`, and `${...}`.
const SYNTAX: Syntax = Syntax {
    opencode: true,
    bare: false,
};

/// The members an opencode entry may have, as the reader takes them (and `oauth`, opencode's
/// own, which sidewire leaves alone).
const READ: &[&str] = &[
    "type",
    "command",
    "url",
    "environment",
    "headers",
    "enabled",
    "disabled",
    "timeout",
];
const FOREIGN: &[&str] = &["oauth"];

/// The entries under `mcp`.
pub(crate) fn entries(top: &Map<String, Value>) -> Result<Vec<Entry>, Error> {
    let Some(servers) = top.get("mcp") else {
        return Err(Error::invalid("missing the `mcp` member"));
    };
    object(servers, "mcp")?
        .iter()
        .map(|(name, entry)| server(name, entry))
        .collect()
}

fn server(name: &str, entry: &Value) -> Result<Entry, Error> {
    let path = format!("mcp.{}", display_key(name));
    check_server_name(name, &path)?;
    let members = object(entry, &path)?;
    let field = |member: &str| format!("{path}.{member}");
    let url = optional_string(members, "url", &field("url"))?;
    let transport = match optional_string(members, "type", &field("type"))? {
        Some("local") => Transport::Stdio,
        Some("remote") => Transport::StreamableHttp,
        Some(other) => {
            return Err(Error::invalid(format!(
                "{}: unknown type {other:?}; expected \"local\" or \"remote\"",
                field("type")
            )));
        }
        None if url.is_some() => Transport::StreamableHttp,
        None => Transport::Stdio,
    };
    let mut out = Entry::new(name, path.clone(), transport);
    out.unknown = unknown_members(members, READ, FOREIGN, &path);
    let text = |raw: &str, at: String| Text::new(raw, at, SYNTAX);
    if transport == Transport::Stdio {
        let command = string_array(members, "command", &field("command"))?.unwrap_or_default();
        let mut words = command.into_iter().map(|(word, at)| text(word, at));
        out.command = words.next();
        out.args = words.collect();
        if out.command.is_none() {
            return Err(Error::invalid(format!(
                "{}: a local server needs a `command` array (the program, then its arguments)",
                field("command")
            )));
        }
    }
    out.url = url.map(|url| text(url, field("url")));
    for (key, value, at) in string_map(members, "environment", &field("environment"))? {
        out.env.push((key.to_owned(), text(value, at)));
    }
    for (key, value, at) in string_map(members, "headers", &field("headers"))? {
        out.headers.push((key.to_owned(), text(value, at)));
    }
    out.enabled = enabled(members, &field)?;
    out.startup_timeout = duration(members, "timeout", Unit::Millis, &field("timeout"))?;
    out.tools = tool_filter(members, &[], &[], &field)?;
    Ok(out)
}
