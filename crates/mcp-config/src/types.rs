//! The plain data a load hands out besides the specs: the inputs a VS Code file asks for and
//! their resolver, what each expanded field used, the views of a server fit to show a person,
//! and the warnings about what looks wrong.

use std::collections::BTreeMap;
use std::fmt;

use sidewire_mcp::ServerSpec;

use crate::detect::Dialect;

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
