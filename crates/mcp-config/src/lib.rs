#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]
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
//! `roots/list` ([`ServerSpec::root`](sidewire_mcp::ServerSpec::root)); each is expanded like `cwd`, relative to the project
//! directory, at most [`MAX_CONFIG_ROOTS`] ([`McpConfig::roots`]). No root, no `roots`
//! capability.
//!
//! # Members
//!
//! An `mcpServers` (or VS Code `servers`) entry may have `type` (`stdio`/`local`, `http`/
//! `streamable-http`/`streamableHttp`, `sse`; Cline's `transportType` is the same), `command`,
//! `args`, `env`, `envFile`, `cwd`, `url`, `httpUrl` (always Streamable HTTP), `headers`;
//! `disabled: true` or `enabled: false` (the server is listed as disabled and never started);
//! `timeout`, the call timeout ([`ServerSpec::call_timeout`](sidewire_mcp::ServerSpec::call_timeout)) in milliseconds (seconds in
//! Cline's files); `startup_timeout_sec`/`startup_timeout_ms` ([`ServerSpec::startup_timeout`](sidewire_mcp::ServerSpec::startup_timeout))
//! and `tool_timeout_sec` (the call timeout in seconds); the tool filters `includeTools`/
//! `enabled_tools`/`tools` (allow lists; Copilot's `["*"]` allows all) and `excludeTools`/
//! `disabled_tools` (deny lists; see [`ToolFilter`](sidewire_mcp::ToolFilter)); `restart`: `false`, `true`, or
//! `{"maxRestarts": 3, "withinMs": 60000, "initialBackoffMs": 500, "maxBackoffMs": 8000}`
//! (each member optional); the listing caps `maxListItems` and `maxListBytes` (positive
//! integers; see [`ServerSpec::max_list_items`](sidewire_mcp::ServerSpec::max_list_items)); the protocol era `era`: `"auto"` (the
//! default), `"modern"` (also `"2026-07-28"`) or `"legacy"` (see [`EraChoice`](sidewire_mcp::EraChoice)). An entry
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
//! `authorization_code` (the default) or `client_credentials`. See [`OAuthSettings`](sidewire_mcp::auth::OAuthSettings).
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
//!
//! # Errors
//!
//! One [`Error`] enum, each variant a kind of fault with a message that names the file, the
//! field's path (`mcpServers.api.headers.Authorization`, `mcp_servers.docs.args[1]`) and the
//! rule, never a value that may be a secret: [`Error::is_read`] (a file could not be read),
//! [`Error::is_syntax`] (JSON, TOML or an `envFile` that does not parse), [`Error::is_invalid`]
//! (a member is wrong), [`Error::is_unexpanded`] (a variable or input without a value) and
//! [`Error::is_unknown_dialect`]. What a file wrote is quoted escaped and cut (a key to 1 KiB, a
//! TOML line to 120 bytes), and a message is at most 16 KiB.

mod codex;
mod detect;
mod dotenv;
mod entry;
mod error;
mod expand;
#[doc(hidden)]
pub mod fuzz;
mod jsonc;
mod loader;
mod mcp_servers;
mod oauth;
mod opencode;
mod text;
mod types;
mod values;
mod vscode;

pub use crate::detect::Dialect;
pub use crate::dotenv::MAX_ENV_FILE_BYTES;
pub use crate::error::Error;
pub use crate::expand::MAX_EXPANDED_BYTES;
pub use crate::loader::{
    ConfigLoader, MAX_CONFIG_BYTES, MAX_CONFIG_ROOTS, MAX_CONFIG_WARNINGS, McpConfig,
    load_mcp_servers, parse_mcp_servers,
};
pub use crate::types::{
    ConfigInput, ConfigVariable, ConfigWarning, ConfigWarningKind, ConfiguredServer, Expansion,
    InputResolver, JsoncSyntax, VariableSource,
};

#[cfg(test)]
mod tests;
