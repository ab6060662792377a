//! One server entry as a dialect read it (`Entry`, the common intermediate every dialect maps
//! into, its values still as written) and how it becomes a [`ConfiguredServer`]: expanded,
//! checked, with the views of it fit to show a person.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value;
use sidewire_mcp::{EraChoice, Restart, ServerSpec, ToolFilter, Transport};

use crate::dotenv::{self, MAX_ENV_FILE_BYTES};
use crate::error::Error;
use crate::expand::{Expander, Syntax};
use crate::loader::read_bounded;
use crate::oauth;
use crate::types::{ConfigVariable, ConfiguredServer, Expansion, VariableSource};

/// A value as the file writes it, with its path and the syntaxes it takes.
#[derive(Debug, Clone)]
pub(crate) struct Text {
    pub(crate) raw: String,
    pub(crate) path: String,
    pub(crate) syntax: Syntax,
}

impl Text {
    pub(crate) fn new(raw: &str, path: String, syntax: Syntax) -> Self {
        Text {
            raw: raw.to_owned(),
            path,
            syntax,
        }
    }
}

/// One server entry as a dialect read it, before expansion: the common intermediate every
/// dialect maps into.
#[derive(Debug)]
pub(crate) struct Entry {
    pub(crate) name: String,
    /// The entry's path, e.g. `mcpServers.files` or `mcp_servers.files`.
    pub(crate) path: String,
    pub(crate) transport: Transport,
    pub(crate) command: Option<Text>,
    pub(crate) args: Vec<Text>,
    pub(crate) env: Vec<(String, Text)>,
    /// Codex `env_vars`: names passed through from the environment, each with its path.
    pub(crate) env_passthrough: Vec<(String, String)>,
    pub(crate) env_file: Option<Text>,
    pub(crate) cwd: Option<Text>,
    pub(crate) url: Option<Text>,
    pub(crate) headers: Vec<(String, Text)>,
    pub(crate) enabled: bool,
    pub(crate) startup_timeout: Option<Duration>,
    pub(crate) call_timeout: Option<Duration>,
    pub(crate) tools: ToolFilter,
    pub(crate) restart: Option<Restart>,
    pub(crate) max_list_items: Option<usize>,
    pub(crate) max_list_bytes: Option<usize>,
    pub(crate) era: Option<EraChoice>,
    /// The `oauth` object and its path, read once its secret can be expanded.
    pub(crate) oauth: Option<(Value, String)>,
    /// The paths of members the reader does not know (see [`ConfigWarning`]).
    pub(crate) unknown: Vec<String>,
}

impl Entry {
    pub(crate) fn new(name: &str, path: String, transport: Transport) -> Self {
        Entry {
            name: name.to_owned(),
            path,
            transport,
            command: None,
            args: Vec::new(),
            env: Vec::new(),
            env_passthrough: Vec::new(),
            env_file: None,
            cwd: None,
            url: None,
            headers: Vec::new(),
            enabled: true,
            startup_timeout: None,
            call_timeout: None,
            tools: ToolFilter::all(),
            restart: None,
            max_list_items: None,
            max_list_bytes: None,
            era: None,
            oauth: None,
            unknown: Vec::new(),
        }
    }

    /// `path.member`.
    pub(crate) fn field(&self, member: &str) -> String {
        format!("{}.{member}", self.path)
    }
}

/// The name every dialect checks: a server needs a non-empty one.
pub(crate) fn check_server_name(name: &str, path: &str) -> Result<(), Error> {
    if name.trim().is_empty() {
        return Err(Error::invalid(format!(
            "{path}: a server needs a non-empty name"
        )));
    }
    Ok(())
}

/// Expands an entry and builds its spec.
pub(crate) fn build(entry: Entry, expander: &mut Expander<'_>) -> Result<ConfiguredServer, Error> {
    let mut expansions = Vec::new();
    let name = entry.name.as_str();
    let mut spec = match entry.transport {
        Transport::Stdio => {
            let command = match &entry.command {
                Some(text) => expand(text, expander, &mut expansions)?,
                None => String::new(),
            };
            if command.trim().is_empty() {
                return Err(Error::invalid(format!(
                    "{}: a stdio server needs a non-empty string `command`",
                    entry
                        .command
                        .as_ref()
                        .map_or_else(|| entry.field("command"), |t| t.path.clone())
                )));
            }
            ServerSpec::stdio(name, command)
        }
        transport => {
            let Some(text) = &entry.url else {
                return Err(Error::invalid(format!(
                    "{}: an {transport} server needs a `url`",
                    entry.field("url")
                )));
            };
            let mut values = Vec::new();
            let url = expand_keeping(text, expander, &mut expansions, &mut values)?;
            let spec = if transport == Transport::Sse {
                ServerSpec::sse(name, url)
            } else {
                ServerSpec::http(name, url)
            };
            // What came from variables and inputs into its path is redacted wherever the URL
            // is shown.
            let spec = spec.url_secrets(values);
            spec.validate()
                .map_err(|err| Error::invalid(format!("{}: {err}", text.path)))?;
            spec
        }
    };
    let mut shown_args = Vec::with_capacity(entry.args.len());
    for arg in &entry.args {
        let before = expansions.len();
        let value = expand(arg, expander, &mut expansions)?;
        let secret = expansions[before..].iter().any(|e| {
            (e.variables.iter()).any(|v| v.source == VariableSource::Input || secret_name(&v.name))
        });
        shown_args.push(if secret {
            arg.raw.clone()
        } else {
            value.clone()
        });
        spec = spec.arg(value);
    }
    let mut shown_env = BTreeMap::new();
    if let Some(file) = &entry.env_file {
        let relative = expand(file, expander, &mut expansions)?;
        let resolved = expander.project.join(&relative);
        let text = read_bounded(&resolved, MAX_ENV_FILE_BYTES).map_err(|err| err.at(&file.path))?;
        let pairs = dotenv::parse(&text, &format!("{} ({})", file.path, resolved.display()))?;
        let mut used = Vec::new();
        for (key, value) in pairs {
            used.push(ConfigVariable::new(&key, VariableSource::EnvFile));
            shown_env.insert(key.clone(), "[envFile]".to_owned());
            spec = spec.env(key, value);
        }
        expansions.push(Expansion {
            field: file.path.clone(),
            template: file.raw.clone(),
            variables: used,
        });
    }
    for (key, path) in &entry.env_passthrough {
        if let Some(value) = (expander.env)(key) {
            expansions.push(Expansion {
                field: path.clone(),
                template: format!("${{{key}}}"),
                variables: vec![ConfigVariable::new(key, VariableSource::Environment)],
            });
            shown_env.insert(key.clone(), format!("${{{key}}}"));
            spec = spec.env(key.clone(), value);
        }
    }
    for (key, text) in &entry.env {
        let before = expansions.len();
        let value = expand(text, expander, &mut expansions)?;
        shown_env.insert(
            key.clone(),
            shown(key, &text.raw, &value, expansions.len() > before),
        );
        spec = spec.env(key.clone(), value);
    }
    let mut shown_headers = BTreeMap::new();
    for (key, text) in &entry.headers {
        let before = expansions.len();
        let value = expand(text, expander, &mut expansions)?;
        shown_headers.insert(
            key.clone(),
            shown(key, &text.raw, &value, expansions.len() > before),
        );
        spec = spec.header(key.clone(), value);
    }
    if let Some(text) = &entry.cwd {
        let cwd = expand(text, expander, &mut expansions)?;
        if !cwd.is_empty() {
            spec = spec.dir(cwd);
        }
    }
    if let Some(timeout) = entry.startup_timeout {
        spec = spec.startup_timeout(timeout);
    }
    if let Some(timeout) = entry.call_timeout {
        spec = spec.call_timeout(timeout);
    }
    if let Some(restart) = entry.restart {
        spec = spec.restart(restart);
    }
    if let Some(items) = entry.max_list_items {
        spec = spec.max_list_items(items);
    }
    if let Some(bytes) = entry.max_list_bytes {
        spec = spec.max_list_bytes(bytes);
    }
    if let Some(era) = entry.era {
        spec = spec.era(era);
    }
    if let Some((value, path)) = &entry.oauth {
        if entry.transport == Transport::Stdio {
            return Err(Error::invalid(format!(
                "{path}: `oauth` is for HTTP servers; this one is stdio"
            )));
        }
        let mut secret = |raw: &str, path: &str| {
            let text = Text::new(raw, path.to_owned(), Syntax::default());
            expand(&text, expander, &mut expansions)
        };
        spec = spec.oauth(oauth::oauth(value, path, &mut secret)?);
    }
    let shown_url = spec.shown_url().unwrap_or_default();
    spec = spec.enabled(entry.enabled).tool_filter(entry.tools);
    Ok(ConfiguredServer {
        spec,
        expansions,
        shown_args,
        shown_env,
        shown_headers,
        shown_url,
    })
}

/// `text` expanded; the expansion is recorded when it used a variable.
fn expand(
    text: &Text,
    expander: &mut Expander<'_>,
    expansions: &mut Vec<Expansion>,
) -> Result<String, Error> {
    expand_keeping(text, expander, expansions, &mut Vec::new())
}

/// [`expand`], the values of the variables and inputs it used appended to `values`.
fn expand_keeping(
    text: &Text,
    expander: &mut Expander<'_>,
    expansions: &mut Vec<Expansion>,
    values: &mut Vec<String>,
) -> Result<String, Error> {
    let mut used = Vec::new();
    let value = expander.expand(&text.raw, &text.path, text.syntax, &mut used, values)?;
    if !used.is_empty() {
        expansions.push(Expansion {
            field: text.path.clone(),
            template: text.raw.clone(),
            variables: used,
        });
    }
    Ok(value)
}

/// How an `env` or `headers` value is shown: as written when it came from a variable, else the
/// value unless its name looks like a secret's.
pub(crate) fn shown(key: &str, raw: &str, value: &str, expanded: bool) -> String {
    if expanded {
        return raw.to_owned();
    }
    let lower = key.to_ascii_lowercase();
    let secret = [
        "auth",
        "token",
        "secret",
        "key",
        "password",
        "cookie",
        "credential",
    ]
    .iter()
    .any(|word| lower.contains(word));
    if secret {
        "[REDACTED]".to_owned()
    } else {
        value.to_owned()
    }
}

/// Whether a name (of a header, a variable) says its value is a secret.
fn secret_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    [
        "auth",
        "token",
        "secret",
        "key",
        "password",
        "cookie",
        "credential",
    ]
    .iter()
    .any(|word| lower.contains(word))
}
