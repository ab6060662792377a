//! The `mcpServers` family (Claude Code, Claude Desktop, Cursor, GitHub Copilot, Cline, Gemini
//! CLI) and VS Code's `servers`, which share one entry shape: each entry read into an
//! [`Entry`], the dialect deciding what `url` and `timeout` mean.

use serde_json::{Map, Value};

use sidewire_mcp::{EraChoice, ToolFilter, Transport};

use crate::detect::Dialect;
use crate::entry::{Entry, Text, check_server_name};
use crate::error::Error;
use crate::expand::Syntax;
use crate::values::{
    Unit, display_key, duration, member, object, optional_bool, optional_string, positive,
    restart_policy, startup_timeout, string_array, string_map, unknown_members,
};

/// The members an entry of this family may have, as the reader takes them.
const READ: &[&str] = &[
    "type",
    "transportType",
    "command",
    "url",
    "httpUrl",
    "args",
    "env",
    "envFile",
    "headers",
    "cwd",
    "disabled",
    "enabled",
    "startup_timeout_sec",
    "startup_timeout_ms",
    "timeout",
    "tool_timeout_sec",
    "includeTools",
    "enabled_tools",
    "tools",
    "excludeTools",
    "disabled_tools",
    "restart",
    "maxListItems",
    "maxListBytes",
    "era",
    "oauth",
];

/// Members other tools write in these entries, which sidewire leaves alone: Cline's
/// `alwaysAllow`, `autoApprove` and `networkTimeout`, Gemini CLI's `trust`, `description` and
/// its Google auth settings, VS Code's `dev` and `gallery`, Claude Code's `headersHelper`.
const FOREIGN: &[&str] = &[
    "alwaysAllow",
    "autoApprove",
    "networkTimeout",
    "trust",
    "description",
    "authProviderType",
    "targetAudience",
    "targetServiceAccount",
    "dev",
    "gallery",
    "headersHelper",
];

/// The entries of the document's servers member (`mcpServers`, or `servers` for VS Code).
pub(crate) fn entries(top: &Map<String, Value>, dialect: Dialect) -> Result<Vec<Entry>, Error> {
    let key = dialect.servers_key();
    let Some(servers) = top.get(key) else {
        return Err(Error::invalid(format!("missing the `{key}` member")));
    };
    object(servers, key)?
        .iter()
        .map(|(name, entry)| server(name, entry, dialect))
        .collect()
}

fn server(name: &str, entry: &Value, dialect: Dialect) -> Result<Entry, Error> {
    let path = format!("{}.{}", dialect.servers_key(), display_key(name));
    check_server_name(name, &path)?;
    let members = object(entry, &path)?;
    let field = |member: &str| format!("{path}.{member}");
    let unknown = unknown_members(members, READ, FOREIGN, &path);
    let type_ = match optional_string(members, "type", &field("type"))? {
        Some(type_) => Some((type_, field("type"))),
        None => optional_string(members, "transportType", &field("transportType"))?
            .map(|type_| (type_, field("transportType"))),
    };
    let command = optional_string(members, "command", &field("command"))?;
    let url = optional_string(members, "url", &field("url"))?;
    let http_url = optional_string(members, "httpUrl", &field("httpUrl"))?;
    let transport = match type_ {
        Some((type_, at)) => Transport::from_type(Some(type_))
            .map_err(|err| Error::invalid(format!("{at}: {err}")))?,
        None if http_url.is_some() && command.is_none() => Transport::StreamableHttp,
        // Gemini CLI: `url` is the SSE endpoint, `httpUrl` the Streamable HTTP one.
        None if url.is_some() && command.is_none() && dialect == Dialect::Gemini => Transport::Sse,
        None if url.is_some() && command.is_none() => Transport::StreamableHttp,
        None => Transport::Stdio,
    };
    let text = |raw: &str, at: String| Text::new(raw, at, Syntax::default());
    let mut out = Entry::new(name, path.clone(), transport);
    out.unknown = unknown;
    out.command = command.map(|c| text(c, field("command")));
    out.url = match (transport, http_url, url) {
        (Transport::StreamableHttp, Some(http), _) => Some(text(http, field("httpUrl"))),
        (_, _, Some(url)) => Some(text(url, field("url"))),
        (_, Some(http), None) => Some(text(http, field("httpUrl"))),
        _ => None,
    };
    if let Some(args) = string_array(members, "args", &field("args"))? {
        out.args = args.into_iter().map(|(arg, at)| text(arg, at)).collect();
    }
    // Gemini CLI expands `$VAR` as well as `${VAR}` in `env`.
    let env_syntax = Syntax {
        bare: dialect == Dialect::Gemini,
        ..Syntax::default()
    };
    for (key, value, at) in string_map(members, "env", &field("env"))? {
        out.env
            .push((key.to_owned(), Text::new(value, at, env_syntax)));
    }
    out.env_file = optional_string(members, "envFile", &field("envFile"))?
        .map(|file| text(file, field("envFile")));
    for (key, value, at) in string_map(members, "headers", &field("headers"))? {
        out.headers.push((key.to_owned(), text(value, at)));
    }
    out.cwd = optional_string(members, "cwd", &field("cwd"))?
        .filter(|cwd| !cwd.is_empty())
        .map(|cwd| text(cwd, field("cwd")));
    out.enabled = enabled(members, &field)?;
    out.startup_timeout = startup_timeout(members, &field)?;
    // `timeout` is the call timeout: milliseconds, but seconds in Cline's files.
    let unit = if dialect == Dialect::Cline {
        Unit::Seconds
    } else {
        Unit::Millis
    };
    out.call_timeout = match duration(members, "timeout", unit, &field("timeout"))? {
        Some(timeout) => Some(timeout),
        None => duration(
            members,
            "tool_timeout_sec",
            Unit::Seconds,
            &field("tool_timeout_sec"),
        )?,
    };
    out.tools = tool_filter(
        members,
        &["includeTools", "enabled_tools", "tools"],
        &["excludeTools", "disabled_tools"],
        &field,
    )?;
    if let Some(restart) = member(members, "restart") {
        out.restart = Some(restart_policy(restart, &field("restart"))?);
    }
    out.max_list_items = positive(members, "maxListItems", &field("maxListItems"))?;
    out.max_list_bytes = positive(members, "maxListBytes", &field("maxListBytes"))?;
    if let Some(name) = optional_string(members, "era", &field("era"))? {
        let era = name.parse::<EraChoice>().map_err(|_| {
            Error::invalid(format!(
                "{}: unknown protocol era {name:?}; expected auto, modern or legacy",
                field("era")
            ))
        })?;
        out.era = Some(era);
    }
    if let Some(value) = member(members, "oauth") {
        out.oauth = Some((value.clone(), field("oauth")));
    }
    Ok(out)
}

/// `disabled: true` or `enabled: false` turn a server off; both may be given if they agree.
pub(crate) fn enabled(
    members: &Map<String, Value>,
    field: &dyn Fn(&str) -> String,
) -> Result<bool, Error> {
    let disabled = optional_bool(members, "disabled", &field("disabled"))?;
    let enabled = optional_bool(members, "enabled", &field("enabled"))?;
    match (disabled, enabled) {
        (Some(disabled), Some(enabled)) if disabled == enabled => Err(Error::invalid(format!(
            "{}: `disabled: {disabled}` contradicts `enabled: {enabled}`",
            field("disabled")
        ))),
        (Some(disabled), _) => Ok(!disabled),
        (None, Some(enabled)) => Ok(enabled),
        (None, None) => Ok(true),
    }
}

/// The tool filter from the allow-list and deny-list members a dialect uses. An allow list of
/// `"*"` (Copilot) allows every tool.
pub(crate) fn tool_filter(
    members: &Map<String, Value>,
    allow: &[&str],
    deny: &[&str],
    field: &dyn Fn(&str) -> String,
) -> Result<ToolFilter, Error> {
    let mut filter = ToolFilter::all();
    for name in allow {
        if let Some(tools) = string_array(members, name, &field(name))? {
            if tools.iter().any(|(tool, _)| *tool == "*") {
                continue;
            }
            filter = filter.only(tools.into_iter().map(|(tool, _)| tool.to_owned()));
        }
    }
    for name in deny {
        if let Some(tools) = string_array(members, name, &field(name))? {
            filter = filter.except(tools.into_iter().map(|(tool, _)| tool.to_owned()));
        }
    }
    Ok(filter)
}
