//! [`ConfigLoader`]: a config file's text read into a [`McpConfig`]. The dialect is told (or
//! forced), its reader maps the servers into entries, and every entry is expanded and built
//! the same way (see the crate docs for the rules).

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;
use sidewire_mcp::{Root, ServerSpec};

use crate::detect::{self, Dialect};
use crate::entry::{Text, build};
use crate::error::Error;
use crate::expand::{Expander, Syntax};
use crate::types::{
    ConfigWarning, ConfigWarningKind, ConfiguredServer, InputResolver, JsoncSyntax,
};
use crate::{codex, jsonc, mcp_servers, opencode, values, vscode};

/// The largest config file read (4 MiB).
pub const MAX_CONFIG_BYTES: usize = 4 * 1024 * 1024;

/// The most `roots` a config file may list.
pub const MAX_CONFIG_ROOTS: usize = 64;

/// The most [`ConfigWarning`]s kept for one file (the rest are counted in
/// [`McpConfig::warnings_omitted`]).
pub const MAX_CONFIG_WARNINGS: usize = 32;

/// Parses an `mcpServers` document (any JSON object with an `mcpServers` member, so a plugin
/// manifest works as is; or any other dialect, detected from its shape, see the
/// [crate docs](crate#dialects-and-how-one-is-told)) into specs, sorted by server name, disabled ones included
/// ([`ServerSpec::is_enabled`]). Variables come from the process environment,
/// `${workspaceFolder}` is the current directory, and `${input:...}` is an error (use a
/// [`ConfigLoader`] with an [`InputResolver`]).
///
/// # Errors
///
/// An [`Error`] naming the path of the first bad field, e.g.
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
/// An [`Error`] naming the file: [`Error::is_read`] when it cannot be read, else as
/// [`parse_mcp_servers`].
pub fn load_mcp_servers(path: &Path) -> Result<Vec<ServerSpec>, Error> {
    ConfigLoader::new().load(path).map(McpConfig::into_specs)
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
    /// An [`Error`] naming the file ([`Error::is_read`] when it cannot be read), and the
    /// field's path when a field is at fault.
    pub fn load(&self, path: &Path) -> Result<McpConfig, Error> {
        let text = read_bounded(path, MAX_CONFIG_BYTES)?;
        self.parse(&text, Some(path))
            .map_err(|err| err.at(path.display()))
    }

    /// Parses `text`, read from `path` when given (its name takes part in telling the dialect;
    /// without one, the project directory is the current directory).
    ///
    /// # Errors
    ///
    /// An [`Error`] naming the path of the first bad field (see [`Error`] for the kinds).
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
                Error::syntax(format!(
                    "invalid JSON at line {} column {}: {err}",
                    err.line(),
                    err.column()
                ))
            })?;
            let Value::Object(top) = document else {
                return Err(Error::invalid(format!(
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
            return Err(Error::invalid(format!(
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
                return Err(Error::invalid(format!("{}: an empty root", root.path)));
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
/// tool would refuse (see the crate docs), each naming where it is.
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

/// The project directory of a config at `path` (see the crate docs: `${workspaceFolder}`).
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
        .map_err(|err| Error::read(format!("cannot read {err}")))
}
