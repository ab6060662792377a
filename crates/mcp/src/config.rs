//! Parsing the `mcpServers` JSON format of desktop clients, `.mcp.json` files and plugin
//! manifests into [`ServerSpec`]s, with errors that name the offending field's path.
//!
//! ```json
//! {"mcpServers": {"files": {"command": "npx", "args": ["-y", "pkg@latest"], "env": {}}}}
//! ```
//!
//! Each entry may have `type`, `command`, `args`, `env`, `cwd`, `url`, `headers`; the
//! startup timeout as `startup_timeout_sec` (a number of seconds) or `startup_timeout_ms` (the
//! names Codex uses; [`crate::DEFAULT_STARTUP_TIMEOUT`] when absent); `restart`: `false`,
//! `true`, or `{"maxRestarts": 3, "withinMs": 60000, "initialBackoffMs": 500,
//! "maxBackoffMs": 8000}` (each member optional); and the listing caps `maxListItems` and
//! `maxListBytes` (positive integers; see [`ServerSpec::max_list_items`] and
//! [`ServerSpec::max_list_bytes`]); the protocol era `era`: `"auto"` (the default: probe with
//! `server/discover`, fall back to `initialize`), `"modern"` (also written `"2026-07-28"`) or
//! `"legacy"` (see [`crate::EraChoice`]). An HTTP server may have `oauth`, in the shape Claude Code
//! uses (every member optional, no others allowed):
//!
//! ```json
//! {"oauth": {"clientId": "sidewire-app", "clientSecret": "${env:APP_SECRET}",
//!            "callbackPort": 8080, "scopes": "read write",
//!            "authServerMetadataUrl": "https://auth.example.com/.well-known/oauth-authorization-server",
//!            "tokenEndpointAuthMethod": "client_secret_basic", "grant": "authorization_code"}}
//! ```
//!
//! `scopes` is a space-separated string or an array of strings; `tokenEndpointAuthMethod` is
//! `none`, `client_secret_basic`, `client_secret_post` or `private_key_jwt`; `grant` is
//! `authorization_code` (the default) or `client_credentials`. `clientSecret` is the one value
//! that is expanded: `${env:NAME}` (Cursor, VS Code), `${NAME}` and `${NAME:-default}`
//! (Claude Code) are replaced from the environment, an unset variable without a default being
//! an error, so a secret need not be written into the file. See [`OAuthSettings`]. Other
//! members (`disabled`, `alwaysAllow`, ...) belong to the client that wrote the file and are
//! ignored. It does not expand `${VAR}` references elsewhere, read environment files or start
//! anything.

use std::path::Path;
use std::time::Duration;

use serde_json::{Map, Value};

use crate::auth::{ClientAuthMethod, Grant, OAuthSettings, Secret};
use crate::{EraChoice, Error, Restart, RestartPolicy, ServerSpec, Transport};

/// Looks up an environment variable for `${...}` in `clientSecret`.
type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

/// Parses an `mcpServers` document (any JSON object with an `mcpServers` member, so a plugin
/// manifest works as is) into specs, sorted by server name.
///
/// The transport comes from `type` (absent or `stdio`, `http`/`streamable-http`/
/// `streamable_http`, `sse`); an entry with a `url`, no `command` and no `type` is taken as
/// Streamable HTTP, as several clients do.
///
/// # Errors
///
/// A config error ([`Error::is_config`]) naming the path of the first bad field, e.g.
/// `mcpServers.files.args[1]: expected a string, got a number`.
pub fn parse_mcp_servers(text: &str) -> Result<Vec<ServerSpec>, Error> {
    parse_with_env(text, &|name| std::env::var(name).ok())
}

/// [`parse_mcp_servers`] with `env` for the environment.
fn parse_with_env(text: &str, env: Env<'_>) -> Result<Vec<ServerSpec>, Error> {
    let document: Value = serde_json::from_str(text).map_err(|err| {
        Error::config(format!(
            "invalid JSON at line {} column {}: {err}",
            err.line(),
            err.column()
        ))
    })?;
    let Value::Object(top) = document else {
        return Err(Error::config(format!(
            "expected a JSON object with an `mcpServers` member, got {}",
            kind(&document)
        )));
    };
    let Some(servers) = top.get("mcpServers") else {
        return Err(Error::config("missing the `mcpServers` member"));
    };
    let servers = object(servers, "mcpServers")?;
    servers
        .iter()
        .map(|(name, entry)| server(name, entry, env))
        .collect()
}

/// Reads and parses an `mcpServers` file; errors name the file.
///
/// # Errors
///
/// A config error when the file cannot be read or does not parse (see [`parse_mcp_servers`]).
pub fn load_mcp_servers(path: &Path) -> Result<Vec<ServerSpec>, Error> {
    let text = std::fs::read_to_string(path)
        .map_err(|err| Error::config(format!("cannot read {}: {err}", path.display())))?;
    parse_mcp_servers(&text).map_err(|err| Error::config(format!("{}: {err}", path.display())))
}

fn server(name: &str, entry: &Value, env: Env<'_>) -> Result<ServerSpec, Error> {
    let path = format!("mcpServers.{}", display_key(name));
    if name.trim().is_empty() {
        return Err(Error::config(format!(
            "{path}: a server needs a non-empty name"
        )));
    }
    let entry = object(entry, &path)?;
    let field = |member: &str| format!("{path}.{member}");
    let type_ = optional_string(entry, "type", &field("type"))?;
    let command = optional_string(entry, "command", &field("command"))?;
    let url = optional_string(entry, "url", &field("url"))?;
    let transport = match type_ {
        None if command.is_none() && url.is_some() => Transport::StreamableHttp,
        other => Transport::from_type(other)
            .map_err(|err| Error::config(format!("{}: {err}", field("type"))))?,
    };
    let mut spec = match transport {
        Transport::Stdio => {
            let command = command.filter(|c| !c.trim().is_empty()).ok_or_else(|| {
                Error::config(format!(
                    "{}: a stdio server needs a non-empty string `command`",
                    field("command")
                ))
            })?;
            ServerSpec::stdio(name, command)
        }
        Transport::StreamableHttp | Transport::Sse => {
            let url = url.ok_or_else(|| {
                Error::config(format!(
                    "{}: an {transport} server needs a `url`",
                    field("url")
                ))
            })?;
            let spec = if transport == Transport::Sse {
                ServerSpec::sse(name, url)
            } else {
                ServerSpec::http(name, url)
            };
            spec.validate()
                .map_err(|err| Error::config(format!("{}: {err}", field("url"))))?;
            spec
        }
    };
    if let Some(args) = entry.get("args") {
        let Value::Array(items) = args else {
            return Err(expected(&field("args"), "an array of strings", args));
        };
        for (i, item) in items.iter().enumerate() {
            let Value::String(arg) = item else {
                return Err(expected(
                    &format!("{}[{i}]", field("args")),
                    "a string",
                    item,
                ));
            };
            spec = spec.arg(arg.clone());
        }
    }
    for (key, value) in string_map(entry, "env", &field("env"))? {
        spec = spec.env(key, value);
    }
    for (key, value) in string_map(entry, "headers", &field("headers"))? {
        spec = spec.header(key, value);
    }
    if let Some(cwd) = optional_string(entry, "cwd", &field("cwd"))?
        && !cwd.is_empty()
    {
        spec = spec.dir(cwd);
    }
    if let Some(timeout) = startup_timeout(entry, &field)? {
        spec = spec.startup_timeout(timeout);
    }
    if let Some(restart) = entry.get("restart") {
        spec = spec.restart(restart_policy(restart, &field("restart"))?);
    }
    // The listing caps.
    if let Some(items) = positive(entry, "maxListItems", &field("maxListItems"))? {
        spec = spec.max_list_items(items);
    }
    if let Some(bytes) = positive(entry, "maxListBytes", &field("maxListBytes"))? {
        spec = spec.max_list_bytes(bytes);
    }
    if let Some(name) = optional_string(entry, "era", &field("era"))? {
        let era = name.parse::<EraChoice>().map_err(|_| {
            Error::config(format!(
                "{}: unknown protocol era {name:?}; expected auto, modern or legacy",
                field("era")
            ))
        })?;
        spec = spec.era(era);
    }
    if let Some(value) = entry.get("oauth").filter(|value| !value.is_null()) {
        if transport == Transport::Stdio {
            return Err(Error::config(format!(
                "{}: `oauth` is for HTTP servers; this one is stdio",
                field("oauth")
            )));
        }
        spec = spec.oauth(oauth(value, &field("oauth"), env)?);
    }
    Ok(spec)
}

/// The members `oauth` may have.
const OAUTH_MEMBERS: [&str; 7] = [
    "clientId",
    "clientSecret",
    "callbackPort",
    "scopes",
    "authServerMetadataUrl",
    "tokenEndpointAuthMethod",
    "grant",
];

/// An `oauth` object (see the module docs).
fn oauth(value: &Value, path: &str, env: Env<'_>) -> Result<OAuthSettings, Error> {
    let members = object(value, path)?;
    let field = |member: &str| format!("{path}.{member}");
    if let Some(unknown) = members
        .keys()
        .find(|key| !OAUTH_MEMBERS.contains(&key.as_str()))
    {
        return Err(Error::config(format!(
            "{}: unknown member; `oauth` has {}",
            field(&display_key(unknown)),
            OAUTH_MEMBERS.join(", ")
        )));
    }
    let mut settings = OAuthSettings::new();
    if let Some(id) = optional_string(members, "clientId", &field("clientId"))? {
        if id.trim().is_empty() {
            return Err(Error::config(format!(
                "{}: expected a non-empty string",
                field("clientId")
            )));
        }
        settings = settings.client_id(id);
    }
    if let Some(secret) = optional_string(members, "clientSecret", &field("clientSecret"))? {
        let secret = expand(secret, &field("clientSecret"), env)?;
        if secret.is_empty() {
            return Err(Error::config(format!(
                "{}: the secret is empty",
                field("clientSecret")
            )));
        }
        settings = settings.client_secret(Secret::new(secret));
    }
    match members.get("callbackPort") {
        None | Some(Value::Null) => {}
        Some(value) => match value.as_u64().and_then(|n| u16::try_from(n).ok()) {
            Some(port) if port > 0 => settings = settings.callback_port(port),
            _ if value.is_number() => {
                return Err(Error::config(format!(
                    "{}: expected a port from 1 to 65535, got {value}",
                    field("callbackPort")
                )));
            }
            _ => return Err(expected(&field("callbackPort"), "a port number", value)),
        },
    }
    match members.get("scopes") {
        None | Some(Value::Null) => {}
        Some(value) => settings = settings.scopes(scopes(value, &field("scopes"))?),
    }
    if let Some(url) = optional_string(
        members,
        "authServerMetadataUrl",
        &field("authServerMetadataUrl"),
    )? {
        let parsed = url::Url::parse(url).map_err(|err| {
            Error::config(format!(
                "{}: not a URL ({err})",
                field("authServerMetadataUrl")
            ))
        })?;
        if !matches!(parsed.scheme(), "https" | "http") {
            return Err(Error::config(format!(
                "{}: expected an https:// URL, got a {}: URL",
                field("authServerMetadataUrl"),
                parsed.scheme()
            )));
        }
        settings = settings.auth_server_metadata_url(url);
    }
    let method_path = field("tokenEndpointAuthMethod");
    if let Some(name) = optional_string(members, "tokenEndpointAuthMethod", &method_path)? {
        let method = ClientAuthMethod::from_name(name).ok_or_else(|| {
            Error::config(format!(
                "{method_path}: unknown method {name:?}; expected none, client_secret_basic, \
                 client_secret_post or private_key_jwt"
            ))
        })?;
        settings = settings.token_endpoint_auth_method(method);
    }
    if let Some(name) = optional_string(members, "grant", &field("grant"))? {
        let grant = match name {
            "authorization_code" => Grant::AuthorizationCode,
            "client_credentials" => Grant::ClientCredentials,
            other => {
                return Err(Error::config(format!(
                    "{}: unknown grant {other:?}; expected authorization_code or \
                     client_credentials",
                    field("grant")
                )));
            }
        };
        settings = settings.grant(grant);
    }
    Ok(settings)
}

/// `scopes`: a space-separated string or an array of strings, at least one scope either way.
fn scopes(value: &Value, path: &str) -> Result<Vec<String>, Error> {
    let scopes: Vec<String> = match value {
        Value::String(text) => text.split_whitespace().map(str::to_owned).collect(),
        Value::Array(items) => {
            let mut scopes = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                match item {
                    Value::String(scope)
                        if !scope.is_empty() && !scope.contains(char::is_whitespace) =>
                    {
                        scopes.push(scope.clone());
                    }
                    Value::String(scope) => {
                        return Err(Error::config(format!(
                            "{path}[{i}]: expected one scope, got {scope:?}"
                        )));
                    }
                    other => return Err(expected(&format!("{path}[{i}]"), "a string", other)),
                }
            }
            scopes
        }
        other => return Err(expected(path, "a string or an array of strings", other)),
    };
    if scopes.is_empty() {
        return Err(Error::config(format!(
            "{path}: expected at least one scope"
        )));
    }
    Ok(scopes)
}

/// `text` with each `${env:NAME}`, `${NAME}` and `${NAME:-default}` replaced from `env`. The
/// error names `path` and the variable, never the value.
fn expand(text: &str, path: &str, env: Env<'_>) -> Result<String, Error> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after
            .find('}')
            .ok_or_else(|| Error::config(format!("{path}: `${{` without its closing `}}`")))?;
        let reference = &after[..end];
        let (name, default) = match reference.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (reference, None),
        };
        let name = name.strip_prefix("env:").unwrap_or(name);
        let valid = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return Err(Error::config(format!(
                "{path}: `${{{reference}}}` is not a variable reference \
                 (`${{env:NAME}}`, `${{NAME}}` or `${{NAME:-default}}`)"
            )));
        }
        // As in a shell, `:-` also covers a variable that is set but empty.
        match (env(name), default) {
            (Some(value), Some(default)) if value.is_empty() => out.push_str(default),
            (Some(value), _) => out.push_str(&value),
            (None, Some(default)) => out.push_str(default),
            (None, None) => {
                return Err(Error::config(format!(
                    "{path}: the environment variable {name} is not set"
                )));
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// `startup_timeout_sec` or `startup_timeout_ms` (not both): a positive, finite duration.
fn startup_timeout(
    entry: &Map<String, Value>,
    field: &dyn Fn(&str) -> String,
) -> Result<Option<Duration>, Error> {
    const SEC: &str = "startup_timeout_sec";
    const MS: &str = "startup_timeout_ms";
    let given = |member| entry.get(member).filter(|value| !value.is_null());
    let (member, value, unit) = match (given(SEC), given(MS)) {
        (None, None) => return Ok(None),
        (Some(_), Some(_)) => {
            return Err(Error::config(format!(
                "{}: give `{SEC}` or `{MS}`, not both",
                field(SEC)
            )));
        }
        (Some(value), None) => (SEC, value, 1.0),
        (None, Some(value)) => (MS, value, 1e-3),
    };
    let seconds = value
        .as_f64()
        .map(|n| n * unit)
        .filter(|s| s.is_finite() && *s > 0.0)
        .and_then(|s| Duration::try_from_secs_f64(s).ok())
        .filter(|d| !d.is_zero());
    match seconds {
        Some(duration) => Ok(Some(duration)),
        None if value.is_number() => Err(Error::config(format!(
            "{}: expected a positive number, got {value}",
            field(member)
        ))),
        None => Err(expected(&field(member), "a positive number", value)),
    }
}

/// `restart`: `false` (never), `true` (the default policy), or an object of `maxRestarts`,
/// `withinMs`, `initialBackoffMs` and `maxBackoffMs`, each optional.
fn restart_policy(value: &Value, path: &str) -> Result<Restart, Error> {
    let members = match value {
        Value::Bool(false) => return Ok(Restart::Never),
        Value::Null | Value::Bool(true) => return Ok(Restart::default()),
        Value::Object(members) => members,
        other => return Err(expected(path, "a boolean or an object", other)),
    };
    let number = |member: &str| -> Result<Option<u64>, Error> {
        match members.get(member) {
            None | Some(Value::Null) => Ok(None),
            Some(value) => value.as_u64().map(Some).ok_or_else(|| {
                expected(&format!("{path}.{member}"), "a non-negative integer", value)
            }),
        }
    };
    let mut policy = RestartPolicy::default();
    if let Some(attempts) = number("maxRestarts")? {
        let attempts = u32::try_from(attempts)
            .map_err(|_| Error::config(format!("{path}.maxRestarts: {attempts} is too large")))?;
        policy = policy.max_restarts(attempts);
    }
    if let Some(ms) = number("withinMs")? {
        policy = policy.within(Duration::from_millis(ms));
    }
    let initial = number("initialBackoffMs")?.map_or(policy.initial_backoff, Duration::from_millis);
    let max = number("maxBackoffMs")?.map_or(policy.max_backoff, Duration::from_millis);
    Ok(Restart::OnCrash(policy.backoff(initial, max)))
}

/// An optional positive integer member (`null` counts as absent).
fn positive(entry: &Map<String, Value>, member: &str, path: &str) -> Result<Option<usize>, Error> {
    match entry.get(member) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => match value.as_u64().and_then(|n| usize::try_from(n).ok()) {
            Some(n) if n > 0 => Ok(Some(n)),
            _ if value.is_number() => Err(Error::config(format!(
                "{path}: expected a positive integer, got {value}"
            ))),
            _ => Err(expected(path, "a positive integer", value)),
        },
    }
}

fn object<'a>(value: &'a Value, path: &str) -> Result<&'a Map<String, Value>, Error> {
    match value {
        Value::Object(map) => Ok(map),
        other => Err(expected(path, "an object", other)),
    }
}

fn optional_string<'a>(
    entry: &'a Map<String, Value>,
    member: &str,
    path: &str,
) -> Result<Option<&'a str>, Error> {
    match entry.get(member) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text)),
        Some(other) => Err(expected(path, "a string", other)),
    }
}

fn string_map<'a>(
    entry: &'a Map<String, Value>,
    member: &str,
    path: &str,
) -> Result<Vec<(&'a str, &'a str)>, Error> {
    match entry.get(member) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Object(map)) => map
            .iter()
            .map(|(key, value)| match value {
                Value::String(text) => Ok((key.as_str(), text.as_str())),
                other => Err(expected(
                    &format!("{path}.{}", display_key(key)),
                    "a string",
                    other,
                )),
            })
            .collect(),
        Some(other) => Err(expected(path, "an object of strings", other)),
    }
}

fn expected(path: &str, what: &str, got: &Value) -> Error {
    Error::config(format!("{path}: expected {what}, got {}", kind(got)))
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A map key as it appears in a path: bare when it is a plain identifier, quoted otherwise, so
/// a key holding dots or spaces cannot make the path ambiguous.
fn display_key(key: &str) -> String {
    let plain = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if plain {
        key.to_owned()
    } else {
        format!("{key:?}")
    }
}

#[cfg(test)]
mod tests;
