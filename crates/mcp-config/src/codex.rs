//! Codex's `config.toml`: servers are the `[mcp_servers.NAME]` tables. The TOML is parsed with
//! the `toml` crate and turned into JSON values, so the members are read by the same helpers
//! and errors name `mcp_servers.NAME.member`.

use serde_json::Value;

use sidewire_mcp::Transport;

use crate::entry::{Entry, Text, check_server_name};
use crate::error::Error;
use crate::expand::Syntax;
use crate::mcp_servers::{enabled, tool_filter};
use crate::text;
use crate::values::{
    Unit, display_key, duration, object, optional_string, startup_timeout, string_array,
    string_map, unknown_members,
};

/// The members a Codex server table may have, as the reader takes them.
const READ: &[&str] = &[
    "command",
    "url",
    "args",
    "env",
    "env_vars",
    "cwd",
    "http_headers",
    "env_http_headers",
    "bearer_token_env_var",
    "enabled",
    "disabled",
    "startup_timeout_sec",
    "startup_timeout_ms",
    "tool_timeout_sec",
    "enabled_tools",
    "disabled_tools",
];

/// The entries of a Codex `config.toml`.
pub(crate) fn entries(text: &str) -> Result<Vec<Entry>, Error> {
    let table: toml::Table = toml::from_str(text).map_err(|err| toml_error(&err, text))?;
    let Some(servers) = table.get("mcp_servers") else {
        return Err(Error::invalid("missing the `[mcp_servers.NAME]` tables"));
    };
    let servers = serde_json::to_value(servers)
        .map_err(|err| Error::invalid(format!("mcp_servers: {err}")))?;
    object(&servers, "mcp_servers")?
        .iter()
        .map(|(name, entry)| server(name, entry))
        .collect()
}

/// How much of the offending line a TOML error quotes.
const TOML_LINE_BYTES: usize = 120;

/// A TOML error as its position, its message and the start of its line, each cut: the `toml`
/// crate's own text quotes the whole offending line, which may be any size.
fn toml_error(err: &toml::de::Error, text: &str) -> Error {
    let message = text::peer(err.message().trim_end());
    let Some(start) = err.span().map(|span| span.start.min(text.len())) else {
        return Error::syntax(format!("invalid TOML: {message}"));
    };
    // Spans are byte offsets of the text; a line starts after a `\n`, so at a char boundary.
    let line_start = text.as_bytes()[..start]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let line_end = text.as_bytes()[line_start..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(text.len(), |i| line_start + i);
    let line = text.as_bytes()[..start]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1;
    let column = start - line_start + 1;
    let bytes = &text.as_bytes()[line_start..line_end];
    let quoted = text::quote(bytes.strip_suffix(b"\r").unwrap_or(bytes), TOML_LINE_BYTES);
    Error::syntax(format!(
        "invalid TOML at line {line} column {column}: {message} (the line: `{quoted}`)"
    ))
}

fn server(name: &str, entry: &Value) -> Result<Entry, Error> {
    let path = format!("mcp_servers.{}", display_key(name));
    check_server_name(name, &path)?;
    let members = object(entry, &path)?;
    let field = |member: &str| format!("{path}.{member}");
    let command = optional_string(members, "command", &field("command"))?;
    let url = optional_string(members, "url", &field("url"))?;
    let transport = match (command, url) {
        (Some(_), Some(_)) => {
            return Err(Error::invalid(format!(
                "{}: give `command` (stdio) or `url` (Streamable HTTP), not both",
                field("url")
            )));
        }
        (None, Some(_)) => Transport::StreamableHttp,
        _ => Transport::Stdio,
    };
    let text = |raw: &str, at: String| Text::new(raw, at, Syntax::default());
    let mut out = Entry::new(name, path.clone(), transport);
    out.unknown = unknown_members(members, READ, &[], &path);
    out.command = command.map(|c| text(c, field("command")));
    out.url = url.map(|u| text(u, field("url")));
    if let Some(args) = string_array(members, "args", &field("args"))? {
        out.args = args.into_iter().map(|(arg, at)| text(arg, at)).collect();
    }
    for (key, value, at) in string_map(members, "env", &field("env"))? {
        out.env.push((key.to_owned(), text(value, at)));
    }
    if let Some(names) = string_array(members, "env_vars", &field("env_vars"))? {
        out.env_passthrough = names
            .into_iter()
            .map(|(name, at)| (name.to_owned(), at))
            .collect();
    }
    out.cwd = optional_string(members, "cwd", &field("cwd"))?
        .filter(|cwd| !cwd.is_empty())
        .map(|cwd| text(cwd, field("cwd")));
    for (key, value, at) in string_map(members, "http_headers", &field("http_headers"))? {
        out.headers.push((key.to_owned(), text(value, at)));
    }
    // A header whose value is read from the environment: the variable's name, written as a
    // reference so it is expanded (and an unset one reported) like any other.
    for (key, variable, at) in string_map(members, "env_http_headers", &field("env_http_headers"))?
    {
        out.headers
            .push((key.to_owned(), text(&reference(variable, &at)?, at)));
    }
    if let Some(variable) = optional_string(
        members,
        "bearer_token_env_var",
        &field("bearer_token_env_var"),
    )? {
        let at = field("bearer_token_env_var");
        let value = format!("Bearer {}", reference(variable, &at)?);
        out.headers
            .push(("Authorization".to_owned(), text(&value, at)));
    }
    out.enabled = enabled(members, &field)?;
    out.startup_timeout = startup_timeout(members, &field)?;
    out.call_timeout = duration(
        members,
        "tool_timeout_sec",
        Unit::Seconds,
        &field("tool_timeout_sec"),
    )?;
    out.tools = tool_filter(members, &["enabled_tools"], &["disabled_tools"], &field)?;
    Ok(out)
}

/// `${NAME}` for a variable named in the file, which must be a plain name.
fn reference(name: &str, path: &str) -> Result<String, Error> {
    let valid = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if valid {
        Ok(format!("${{{name}}}"))
    } else {
        Err(Error::invalid(format!(
            "{path}: {name:?} is not an environment variable name"
        )))
    }
}
