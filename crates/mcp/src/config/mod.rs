//! The MCP server config files users already keep, read into [`ServerSpec`]s: every dialect
//! maps its entries into one common intermediate (`Entry`), whose values are then expanded
//! and checked the same way, with errors that name the offending field's path.
//!
//! # Dialects and how one is told
//!
//! | Dialect | Usual file | Servers under | Told by |
//! |---|---|---|---|
//! | [`Dialect::Codex`] | `~/.codex/config.toml` | `[mcp_servers.NAME]` | a name ending in `.toml` (or, with no name, text that is not JSON) |
//! | [`Dialect::VsCode`] | `.vscode/mcp.json` | `servers` (+ `inputs`) | a `servers` member and no `mcpServers` |
//! | [`Dialect::Opencode`] | `opencode.json` | `mcp` | an object `mcp` member and no `mcpServers` |
//! | [`Dialect::ClaudeDesktop`] | `claude_desktop_config.json` | `mcpServers` | that file name |
//! | [`Dialect::Cline`] | `cline_mcp_settings.json` | `mcpServers` | that file name; else an entry with `transportType` or `autoApprove` |
//! | [`Dialect::Copilot`] | `~/.copilot/mcp-config.json` | `mcpServers` | `mcp-config.json` or a `.copilot` folder; else an entry with `tools` |
//! | [`Dialect::Gemini`] | `.gemini/settings.json` | `mcpServers` | `settings.json` or a `.gemini` folder; else an entry with `httpUrl`, `includeTools`, `excludeTools` or `trust` |
//! | [`Dialect::Cursor`] | `.cursor/mcp.json` | `mcpServers` | a `.cursor` folder; else an entry with `envFile` |
//! | [`Dialect::ClaudeCode`] | `.mcp.json`, `~/.claude.json`, plugin manifests | `mcpServers` | `.mcp.json`/`.claude.json`, and any other `mcpServers` document |
//!
//! The rows are tried top to bottom; among the `mcpServers` dialects a known file name wins
//! over the shape, so an ambiguous file picks by name (`settings.json` is Gemini's even
//! without `httpUrl`). [`ConfigLoader::dialect`] (the CLI's `--dialect`) overrides the rule.
//!
//! Every JSON file is read as JSONC (`//` and `/* */` comments, trailing commas), but not
//! every tool reads its file that way ([`Dialect::takes_comments`],
//! [`Dialect::takes_trailing_commas`]): VS Code, opencode and Claude Code read JSONC, Gemini
//! CLI strips comments but not trailing commas, and Claude Desktop, Cursor, Copilot and Cline
//! parse strict JSON. A file that works here but that its own tool would refuse is read, with
//! a [`ConfigWarning`] ([`ConfigWarningKind::RefusedByItsTool`]) naming the line, the column
//! and the dialect's rule, so it is fixed before that tool meets it; refusing it here would
//! only add one more tool that cannot read a file the user keeps.
//!
//! # Roots
//!
//! A top-level `roots` member beside the servers (JSON dialects: `"roots": ["src",
//! "${workspaceFolder}"]`) lists directories offered to every server of the file through
//! `roots/list` ([`ServerSpec::root`]); each is expanded like `cwd`, relative to the project
//! directory, at most [`MAX_CONFIG_ROOTS`] ([`McpConfig::roots`]). No root, no `roots`
//! capability.
//!
//! # Members
//!
//! An `mcpServers` (or VS Code `servers`) entry may have `type` (`stdio`/`local`, `http`/
//! `streamable-http`/`streamableHttp`, `sse`; Cline's `transportType` is the same), `command`,
//! `args`, `env`, `envFile`, `cwd`, `url`, `httpUrl` (always Streamable HTTP), `headers`;
//! `disabled: true` or `enabled: false` (the server is listed as disabled and never started);
//! `timeout`, the call timeout ([`ServerSpec::call_timeout`]) in milliseconds (seconds in
//! Cline's files); `startup_timeout_sec`/`startup_timeout_ms` ([`ServerSpec::startup_timeout`])
//! and `tool_timeout_sec` (the call timeout in seconds); the tool filters `includeTools`/
//! `enabled_tools`/`tools` (allow lists; Copilot's `["*"]` allows all) and `excludeTools`/
//! `disabled_tools` (deny lists; see [`ToolFilter`]); `restart`: `false`, `true`, or
//! `{"maxRestarts": 3, "withinMs": 60000, "initialBackoffMs": 500, "maxBackoffMs": 8000}`
//! (each member optional); the listing caps `maxListItems` and `maxListBytes` (positive
//! integers; see [`ServerSpec::max_list_items`]); the protocol era `era`: `"auto"` (the
//! default), `"modern"` (also `"2026-07-28"`) or `"legacy"` (see [`crate::EraChoice`]). An entry
//! with a `url`, no `command` and no `type` is Streamable HTTP, except in Gemini's files, where
//! `url` means SSE. Members other tools write there (`alwaysAllow`, `autoApprove`, `trust`,
//! `description`, `dev`, ...) are ignored; any other member is most likely a typo (`arg` for
//! `args`) and is reported as a [`ConfigWarning`] naming its path (every dialect's entries
//! alike). An HTTP server may have `oauth`, in the shape Claude Code uses (every member
//! optional, no others allowed):
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
//! `authorization_code` (the default) or `client_credentials`. See [`OAuthSettings`](crate::auth::OAuthSettings).
//!
//! opencode's entries have `type` (`local`, `remote`), `command` (an array: the program, then
//! its arguments), `environment`, `url`, `headers`, `enabled` and `timeout` (ms, the startup
//! budget). Codex's tables have `command`, `args`, `env`, `env_vars` (names passed through
//! from sidewire's environment), `cwd`, `url`, `http_headers`, `env_http_headers` (header →
//! variable name), `bearer_token_env_var` (sent as `Authorization: Bearer ...`), `enabled`,
//! `startup_timeout_sec`/`startup_timeout_ms`, `tool_timeout_sec`, `enabled_tools`,
//! `disabled_tools`; errors name them as `mcp_servers.NAME.member`.
//!
//! # Expansion
//!
//! `command`, `args`, `env` values, `envFile`, `cwd`, `url`, `headers` values and
//! `oauth.clientSecret` are expanded in every dialect, once (an expanded value is never
//! expanded again) and to at most [`MAX_EXPANDED_BYTES`]:
//!
//! - `${NAME}` and `${NAME:-default}` (Claude Code; the default also covers a set but empty
//!   variable, as in a shell), `${env:NAME}` (Cursor, VS Code);
//! - `${userHome}` (`$HOME`), `${workspaceFolder}` (the project directory: the folder holding
//!   the file, or its parent when that folder is `.vscode`, `.cursor`, `.gemini`, `.codex`,
//!   `.copilot` or `.claude`), `${workspaceFolderBasename}`, `${pathSeparator}` (Cursor,
//!   VS Code); these names win over variables of the same name;
//! - `${input:ID}` (VS Code): an entry of the file's `inputs[]` (`{"type": "promptString",
//!   "id", "description", "password", "default"}`), answered through the [`InputResolver`]
//!   given to the [`ConfigLoader`], each input asked for once per file; with no resolver or no
//!   answer, its `default`; with neither, an error naming the input;
//! - `{env:NAME}` in opencode's files; `$NAME` in Gemini's `env` values.
//!
//! A variable that is not set and has no default is an error naming the variable and the
//! field's path (which begins with the server's name), never an empty string sent to a server.
//! `envFile` names a dotenv file (relative paths from the project directory; at most
//! [`MAX_ENV_FILE_BYTES`]) whose pairs are added to the server's environment under its `env`.
//! Which fields were expanded from which variables is kept ([`ConfiguredServer::expansions`]),
//! with views of the environment, headers and URL in which secrets are redacted, so a person
//! can check a file (`sidewire mcp servers --config FILE`).

mod codex;
mod detect;
mod dotenv;
mod expand;
mod jsonc;
mod mcp_servers;
mod oauth;
mod opencode;
mod values;
mod vscode;

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

pub use self::detect::Dialect;
pub use self::dotenv::MAX_ENV_FILE_BYTES;
pub use self::expand::MAX_EXPANDED_BYTES;
use self::expand::{Expander, Syntax};
use crate::{EraChoice, Error, Restart, Root, ServerSpec, ToolFilter, Transport};

/// The largest config file read (4 MiB).
pub const MAX_CONFIG_BYTES: usize = 4 * 1024 * 1024;

/// The most `roots` a config file may list.
pub const MAX_CONFIG_ROOTS: usize = 64;

/// The most [`ConfigWarning`]s kept for one file (the rest are counted in
/// [`McpConfig::warnings_omitted`]).
pub const MAX_CONFIG_WARNINGS: usize = 32;

/// Parses an `mcpServers` document (any JSON object with an `mcpServers` member, so a plugin
/// manifest works as is; or any other dialect, detected from its shape, see the module docs)
/// into specs, sorted by server name, disabled ones included
/// ([`ServerSpec::is_enabled`]). Variables come from the process environment,
/// `${workspaceFolder}` is the current directory, and `${input:...}` is an error (use a
/// [`ConfigLoader`] with an [`InputResolver`]).
///
/// # Errors
///
/// A config error ([`Error::is_config`]) naming the path of the first bad field, e.g.
/// `mcpServers.files.args[1]: expected a string, got a number`.
pub fn parse_mcp_servers(text: &str) -> Result<Vec<ServerSpec>, Error> {
    ConfigLoader::new()
        .parse(text, None)
        .map(McpConfig::into_specs)
}

/// Reads and parses a config file of any dialect (see [`ConfigLoader::load`]); errors name the
/// file.
///
/// # Errors
///
/// A config error when the file cannot be read or does not parse (see [`parse_mcp_servers`]).
pub fn load_mcp_servers(path: &Path) -> Result<Vec<ServerSpec>, Error> {
    ConfigLoader::new().load(path).map(McpConfig::into_specs)
}

/// A `promptString` entry of a VS Code file's `inputs[]`, referred to as `${input:ID}`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConfigInput {
    /// Its `id`.
    pub id: String,
    /// Its `description`, the question to show (may be empty).
    pub description: String,
    /// Whether the answer is a secret (`password: true`): not echoed while typed.
    pub password: bool,
    /// Its `default`: the answer when nobody gives one (offered on a terminal).
    pub default: Option<String>,
}

/// Answers the `${input:ID}` references of a config: the CLI asks on the terminal. The library
/// never reads a terminal itself.
pub trait InputResolver: Send + Sync {
    /// The answer to `input`, or `None` when there is none (the load then fails naming it).
    fn resolve(&self, input: &ConfigInput) -> Option<String>;
}

impl<F> InputResolver for F
where
    F: Fn(&ConfigInput) -> Option<String> + Send + Sync,
{
    fn resolve(&self, input: &ConfigInput) -> Option<String> {
        self(input)
    }
}

/// Where the value of a variable used in an expansion came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum VariableSource {
    /// The process environment.
    Environment,
    /// The reference's `:-default` (the variable was unset or empty).
    Default,
    /// The server's `envFile`.
    EnvFile,
    /// An answer to an `${input:ID}`.
    Input,
    /// A predefined name (`userHome`, `workspaceFolder`, ...).
    Builtin,
}

impl VariableSource {
    /// `env`, `default`, `envFile`, `input` or `builtin`.
    pub fn as_str(self) -> &'static str {
        match self {
            VariableSource::Environment => "env",
            VariableSource::Default => "default",
            VariableSource::EnvFile => "envFile",
            VariableSource::Input => "input",
            VariableSource::Builtin => "builtin",
        }
    }
}

/// One variable an expansion used: its name (an input's id) and where its value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConfigVariable {
    /// The variable's name, or the input's id.
    pub name: String,
    /// Where the value came from.
    pub source: VariableSource,
}

impl ConfigVariable {
    pub(crate) fn new(name: &str, source: VariableSource) -> Self {
        ConfigVariable {
            name: name.to_owned(),
            source,
        }
    }
}

/// A field whose value was expanded: its path, its text as written and the variables used.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Expansion {
    /// The field's path, e.g. `mcpServers.api.headers.Authorization`.
    pub field: String,
    /// The value as the file writes it, e.g. `Bearer ${TOKEN}` (for `envFile`, its path).
    pub template: String,
    /// The variables used, in order.
    pub variables: Vec<ConfigVariable>,
}

/// One server as the config gave it: the spec, what was expanded, and views of its settings
/// fit to show a person (secrets redacted).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ConfiguredServer {
    /// The spec, expanded (disabled ones included: see [`ServerSpec::is_enabled`]).
    pub spec: ServerSpec,
    /// The fields expanded, in the order they were read.
    pub expansions: Vec<Expansion>,
    /// The arguments, each resolved unless it used an input or a variable whose name looks
    /// like a secret's (`*TOKEN*`, `*KEY*`, ...): then as the file writes it.
    pub shown_args: Vec<String>,
    /// The environment set for the child, each value as written when it came from a variable
    /// (`${TOKEN}`), `[envFile]` when it came from the `envFile`, `[REDACTED]` when its name
    /// looks like a secret's; else the value.
    pub shown_env: BTreeMap<String, String>,
    /// The headers, shown by the same rule as [`shown_env`](Self::shown_env).
    pub shown_headers: BTreeMap<String, String>,
    /// The URL as every message shows it: its userinfo, query values and fragment, and any
    /// value expanded into its path from a variable or an input, redacted (empty for stdio).
    pub shown_url: String,
}

/// Something in a config file that was read but is most likely not what its author meant.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConfigWarning {
    /// The member's path, e.g. `mcpServers.files.arg`.
    pub path: String,
    /// What is wrong with it.
    pub kind: ConfigWarningKind,
}

/// What a [`ConfigWarning`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigWarningKind {
    /// A server entry's member that neither sidewire nor the tools writing that dialect know:
    /// ignored (a typo such as `arg` for `args` would otherwise go unnoticed).
    UnknownKey,
    /// JSONC syntax that sidewire reads but the dialect's own tool would refuse (the warning's
    /// `path` is its line and column): the file works here and fails there.
    RefusedByItsTool {
        /// What was found.
        syntax: JsoncSyntax,
        /// The dialect whose tool would refuse it.
        dialect: Dialect,
    },
}

/// The JSONC syntax strict JSON lacks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum JsoncSyntax {
    /// A `//` or `/* */` comment.
    Comment,
    /// A comma before a closing `]` or `}`.
    TrailingComma,
}

impl fmt::Display for ConfigWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            ConfigWarningKind::UnknownKey => write!(f, "{}: unknown key, ignored", self.path),
            ConfigWarningKind::RefusedByItsTool { syntax, dialect } => {
                let what = match syntax {
                    JsoncSyntax::Comment => "a comment",
                    JsoncSyntax::TrailingComma => "a trailing comma",
                };
                let rule = if dialect.takes_comments() {
                    "takes comments but not trailing commas"
                } else {
                    "is strict JSON"
                };
                write!(
                    f,
                    "{}: {what}, read here, but a {dialect} file {rule}: its tool would refuse \
                     this file (claude-code, vscode and opencode files take both)",
                    self.path
                )
            }
        }
    }
}

/// A config file read: its dialect and its servers, sorted by name.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct McpConfig {
    /// The dialect it was read as.
    pub dialect: Dialect,
    /// Its servers, sorted by name.
    pub servers: Vec<ConfiguredServer>,
    /// The file's top-level `roots`, expanded (every server's spec offers them too).
    pub roots: Vec<Root>,
    /// What was read but looks wrong (at most [`MAX_CONFIG_WARNINGS`], in file order).
    pub warnings: Vec<ConfigWarning>,
    /// How many warnings were left out of [`warnings`](Self::warnings).
    pub warnings_omitted: usize,
}

impl McpConfig {
    /// The servers' specs, disabled ones included.
    pub fn into_specs(self) -> Vec<ServerSpec> {
        self.servers.into_iter().map(|server| server.spec).collect()
    }
}

/// Looks a variable up in the environment a [`ConfigLoader`] was given.
type EnvLookup = dyn Fn(&str) -> Option<String> + Send + Sync;

/// Reads config files of any dialect, with the environment, the input resolver and the dialect
/// it is given (by default: the process environment, no resolver, the dialect detected).
#[derive(Clone)]
pub struct ConfigLoader {
    dialect: Option<Dialect>,
    env: Arc<EnvLookup>,
    resolver: Option<Arc<dyn InputResolver>>,
}

impl fmt::Debug for ConfigLoader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConfigLoader")
            .field("dialect", &self.dialect)
            .field("resolver", &self.resolver.is_some())
            .finish_non_exhaustive()
    }
}

impl Default for ConfigLoader {
    fn default() -> Self {
        ConfigLoader::new()
    }
}

impl ConfigLoader {
    /// A loader reading the process environment, with no input resolver, detecting dialects.
    pub fn new() -> Self {
        ConfigLoader {
            dialect: None,
            env: Arc::new(|name| std::env::var(name).ok()),
            resolver: None,
        }
    }

    /// Reads every file as `dialect` instead of detecting it.
    pub fn dialect(mut self, dialect: Dialect) -> Self {
        self.dialect = Some(dialect);
        self
    }

    /// Looks variables up with `env` instead of the process environment (`HOME` included, for
    /// `${userHome}`).
    pub fn env(mut self, env: impl Fn(&str) -> Option<String> + Send + Sync + 'static) -> Self {
        self.env = Arc::new(env);
        self
    }

    /// Answers `${input:ID}` references with `resolver`.
    pub fn inputs(mut self, resolver: impl InputResolver + 'static) -> Self {
        self.resolver = Some(Arc::new(resolver));
        self
    }

    /// Reads and parses the file at `path` (at most [`MAX_CONFIG_BYTES`]); its name takes part
    /// in telling the dialect, and its folder gives the project directory.
    ///
    /// # Errors
    ///
    /// A config error naming the file, and the field's path when a field is at fault.
    pub fn load(&self, path: &Path) -> Result<McpConfig, Error> {
        let text = read_bounded(path, MAX_CONFIG_BYTES)?;
        self.parse(&text, Some(path))
            .map_err(|err| Error::config(format!("{}: {}", path.display(), err)))
    }

    /// Parses `text`, read from `path` when given (its name takes part in telling the dialect;
    /// without one, the project directory is the current directory).
    ///
    /// # Errors
    ///
    /// A config error naming the path of the first bad field.
    pub fn parse(&self, text: &str, path: Option<&Path>) -> Result<McpConfig, Error> {
        let project = project_dir(path);
        let mut jsonc_warnings = Vec::new();
        let (dialect, servers, inputs, roots) = if self.dialect == Some(Dialect::Codex)
            || (self.dialect.is_none() && detect::is_toml(path, text))
        {
            (
                Dialect::Codex,
                codex::entries(text)?,
                Vec::new(),
                Vec::new(),
            )
        } else {
            let stripped = jsonc::strip(text);
            let document: Value = serde_json::from_str(&stripped.text).map_err(|err| {
                Error::config(format!(
                    "invalid JSON at line {} column {}: {err}",
                    err.line(),
                    err.column()
                ))
            })?;
            let Value::Object(top) = document else {
                return Err(Error::config(format!(
                    "expected a JSON object with an `mcpServers` member, got {}",
                    crate::text::json_kind(&document)
                )));
            };
            let dialect = match self.dialect {
                Some(dialect) => dialect,
                None => detect::json_dialect(path, &top)?,
            };
            jsonc_warnings = unportable_jsonc(dialect, text, &stripped);
            let inputs = match dialect {
                Dialect::VsCode => vscode::inputs(&top)?,
                _ => Vec::new(),
            };
            let servers = match dialect {
                Dialect::Opencode => opencode::entries(&top)?,
                Dialect::Codex => unreachable!("read as TOML above"),
                other => mcp_servers::entries(&top, other)?,
            };
            let roots = match values::string_array(&top, "roots", "roots")? {
                Some(roots) => roots
                    .into_iter()
                    .map(|(raw, at)| Text::new(raw, at, Syntax::default()))
                    .collect(),
                None => Vec::new(),
            };
            (dialect, servers, inputs, roots)
        };
        if roots.len() > MAX_CONFIG_ROOTS {
            return Err(Error::config(format!(
                "roots: {} roots; at most {MAX_CONFIG_ROOTS} are offered",
                roots.len()
            )));
        }
        let mut warnings = jsonc_warnings;
        let mut warnings_omitted = 0;
        for path in servers.iter().flat_map(|entry| entry.unknown.iter()) {
            if warnings.len() < MAX_CONFIG_WARNINGS {
                warnings.push(ConfigWarning {
                    path: path.clone(),
                    kind: ConfigWarningKind::UnknownKey,
                });
            } else {
                warnings_omitted += 1;
            }
        }
        let mut expander = Expander {
            env: &*self.env,
            project: &project,
            inputs: inputs.into_iter().map(|i| (i.id.clone(), i)).collect(),
            resolver: self.resolver.as_deref(),
            answers: BTreeMap::new(),
        };
        let mut built = servers
            .into_iter()
            .map(|entry| build(entry, &mut expander))
            .collect::<Result<Vec<_>, _>>()?;
        built.sort_by(|a, b| a.spec.name().cmp(b.spec.name()));
        let mut offered = Vec::with_capacity(roots.len());
        for root in &roots {
            let dir = expander.expand(
                &root.raw,
                &root.path,
                root.syntax,
                &mut Vec::new(),
                &mut Vec::new(),
            )?;
            if dir.trim().is_empty() {
                return Err(Error::config(format!("{}: an empty root", root.path)));
            }
            offered.push(Root::dir(project.join(dir)));
        }
        let built = built
            .into_iter()
            .map(|server| ConfiguredServer {
                spec: offered.iter().cloned().fold(server.spec, ServerSpec::root),
                ..server
            })
            .collect();
        Ok(McpConfig {
            dialect,
            servers: built,
            roots: offered,
            warnings,
            warnings_omitted,
        })
    }
}

/// A warning for the first comment and the first trailing comma of `text` that `dialect`'s
/// tool would refuse (see the module docs), each naming where it is.
fn unportable_jsonc(
    dialect: Dialect,
    text: &str,
    stripped: &jsonc::Stripped,
) -> Vec<ConfigWarning> {
    let found = [
        (
            stripped.trailing_comma,
            JsoncSyntax::TrailingComma,
            dialect.takes_trailing_commas(),
        ),
        (
            stripped.comment,
            JsoncSyntax::Comment,
            dialect.takes_comments(),
        ),
    ];
    found
        .into_iter()
        .filter_map(|(at, syntax, taken)| {
            let at = at.filter(|_| !taken)?;
            let (line, column) = jsonc::position(text, at);
            Some(ConfigWarning {
                path: format!("line {line} column {column}"),
                kind: ConfigWarningKind::RefusedByItsTool { syntax, dialect },
            })
        })
        .collect()
}

/// The project directory of a config at `path` (see the module docs).
fn project_dir(path: Option<&Path>) -> PathBuf {
    let current = || std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let Some(path) = path else {
        return current();
    };
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        current().join(path)
    };
    let folder = absolute.parent().map(Path::to_path_buf).unwrap_or_default();
    let tool_folder = folder.file_name().is_some_and(|name| {
        matches!(
            name.to_str(),
            Some(".vscode" | ".cursor" | ".gemini" | ".codex" | ".copilot" | ".claude")
        )
    });
    match folder.parent() {
        Some(parent) if tool_folder => parent.to_path_buf(),
        _ => folder,
    }
}

/// Reads a config file or an `envFile` the user keeps: a regular file of at most `limit` bytes,
/// as UTF-8, through the hosts' one bounded read ([`sidewire_process::file`]): opened without
/// blocking, so a FIFO or a device (`/dev/stdin`) there fails at once instead of hanging the
/// command, and following a symlink (such files are often links into a dotfiles repository) to
/// a regular file only. The error names the file and the rule.
pub(crate) fn read_bounded(path: &Path, limit: usize) -> Result<String, Error> {
    sidewire_process::file::read_to_string(path, limit, sidewire_process::file::Symlinks::Follow)
        .map_err(|err| Error::config(format!("cannot read {err}")))
}

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
        return Err(Error::config(format!(
            "{path}: a server needs a non-empty name"
        )));
    }
    Ok(())
}

/// Expands an entry and builds its spec.
fn build(entry: Entry, expander: &mut Expander<'_>) -> Result<ConfiguredServer, Error> {
    let mut expansions = Vec::new();
    let name = entry.name.as_str();
    let mut spec = match entry.transport {
        Transport::Stdio => {
            let command = match &entry.command {
                Some(text) => expand(text, expander, &mut expansions)?,
                None => String::new(),
            };
            if command.trim().is_empty() {
                return Err(Error::config(format!(
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
                return Err(Error::config(format!(
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
                .map_err(|err| Error::config(format!("{}: {err}", text.path)))?;
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
        let text = read_bounded(&resolved, MAX_ENV_FILE_BYTES)
            .map_err(|err| Error::config(format!("{}: {}", file.path, err)))?;
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
            return Err(Error::config(format!(
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
fn shown(key: &str, raw: &str, value: &str, expanded: bool) -> String {
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

#[cfg(test)]
mod tests;
