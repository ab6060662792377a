//! Which tool's config file a text is: the [`Dialect`], told from the file's name and shape
//! (the rule is the table in the [crate docs](crate#dialects-and-how-one-is-told)).

use std::fmt;
use std::path::Path;
use std::str::FromStr;

use serde_json::{Map, Value};

use crate::error::Error;

/// The tool whose config file format a file is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Dialect {
    /// Claude Code's `.mcp.json` / `~/.claude.json` (`mcpServers`; `timeout` in ms). Also the
    /// dialect of a plugin manifest and of any `mcpServers` file not told apart otherwise.
    ClaudeCode,
    /// Claude Desktop's `claude_desktop_config.json` (`mcpServers`).
    ClaudeDesktop,
    /// Cursor's `.cursor/mcp.json` (`mcpServers`; `envFile`, `${env:NAME}`, `${userHome}`,
    /// `${workspaceFolder}`).
    Cursor,
    /// GitHub Copilot CLI's `mcp-config.json` (`mcpServers`; `tools` allow list).
    Copilot,
    /// Cline's `cline_mcp_settings.json` (`mcpServers`; `timeout` in seconds,
    /// `transportType`).
    Cline,
    /// Gemini CLI's `settings.json` (`mcpServers`; `httpUrl` is Streamable HTTP, `url` is
    /// SSE; `includeTools`/`excludeTools`; `$VAR` in `env`).
    Gemini,
    /// VS Code's `.vscode/mcp.json` (`servers`, `inputs`).
    VsCode,
    /// opencode's `opencode.json` (`mcp`; `type: local|remote`, `command` an array,
    /// `environment`, `{env:NAME}`).
    Opencode,
    /// Codex's `config.toml` (`[mcp_servers.NAME]` tables).
    Codex,
}

impl Dialect {
    /// Every dialect, in the order of the docs (the loader's names, the fuzz target's choices).
    pub(crate) const ALL: [Dialect; 9] = [
        Dialect::ClaudeCode,
        Dialect::ClaudeDesktop,
        Dialect::Cursor,
        Dialect::Copilot,
        Dialect::Cline,
        Dialect::Gemini,
        Dialect::VsCode,
        Dialect::Opencode,
        Dialect::Codex,
    ];

    /// Its name: `claude-code`, `claude-desktop`, `cursor`, `copilot`, `cline`, `gemini`,
    /// `vscode`, `opencode` or `codex`.
    pub fn as_str(self) -> &'static str {
        match self {
            Dialect::ClaudeCode => "claude-code",
            Dialect::ClaudeDesktop => "claude-desktop",
            Dialect::Cursor => "cursor",
            Dialect::Copilot => "copilot",
            Dialect::Cline => "cline",
            Dialect::Gemini => "gemini",
            Dialect::VsCode => "vscode",
            Dialect::Opencode => "opencode",
            Dialect::Codex => "codex",
        }
    }

    /// Whether its tool reads `//` and `/* */` comments in its file: VS Code, opencode and
    /// Claude Code read JSONC, Gemini CLI strips comments (not trailing commas); the others
    /// parse strict JSON.
    pub fn takes_comments(self) -> bool {
        self.takes_trailing_commas() || self == Dialect::Gemini
    }

    /// Whether its tool reads trailing commas in its file (JSONC): VS Code, opencode and
    /// Claude Code.
    pub fn takes_trailing_commas(self) -> bool {
        matches!(
            self,
            Dialect::VsCode | Dialect::Opencode | Dialect::ClaudeCode
        )
    }

    /// The member (or TOML table) that holds the servers.
    pub fn servers_key(self) -> &'static str {
        match self {
            Dialect::VsCode => "servers",
            Dialect::Opencode => "mcp",
            Dialect::Codex => "mcp_servers",
            _ => "mcpServers",
        }
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Dialect {
    type Err = Error;

    fn from_str(name: &str) -> Result<Self, Error> {
        Dialect::ALL
            .into_iter()
            .find(|dialect| dialect.as_str() == name)
            .ok_or_else(|| Error::UnknownDialect {
                name: name.to_owned(),
            })
    }
}

/// Whether the text is TOML rather than JSON: its name ends in `.toml`, or (no such name) its
/// text is neither JSON nor opens a JSON object (a TOML file may begin with `[table]`).
pub(crate) fn is_toml(path: Option<&Path>, text: &str) -> bool {
    match path.and_then(Path::extension) {
        Some(ext) if ext.eq_ignore_ascii_case("toml") => true,
        Some(_) => false,
        None => {
            let start = text.trim_start();
            !start.is_empty()
                && !start.starts_with(['{', '/'])
                && serde_json::from_str::<Value>(text).is_err()
        }
    }
}

/// The dialect of a JSON document, by the file's name first, then by its shape.
pub(crate) fn json_dialect(
    path: Option<&Path>,
    top: &Map<String, Value>,
) -> Result<Dialect, Error> {
    let name = path
        .and_then(Path::file_name)
        .map(|name| name.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let parent = path
        .and_then(Path::parent)
        .and_then(Path::file_name)
        .map(|name| name.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    if !top.contains_key("mcpServers") {
        return if top.contains_key("servers") {
            Ok(Dialect::VsCode)
        } else if top.get("mcp").is_some_and(Value::is_object) {
            Ok(Dialect::Opencode)
        } else {
            Err(Error::invalid(
                "missing the `mcpServers` member (or `servers` for VS Code, `mcp` for opencode)",
            ))
        };
    }
    let by_name = match (name.as_str(), parent.as_str()) {
        ("claude_desktop_config.json", _) => Some(Dialect::ClaudeDesktop),
        ("cline_mcp_settings.json", _) => Some(Dialect::Cline),
        ("mcp-config.json", _) => Some(Dialect::Copilot),
        ("settings.json", _) => Some(Dialect::Gemini),
        (".mcp.json" | ".claude.json", _) => Some(Dialect::ClaudeCode),
        (_, ".cursor") => Some(Dialect::Cursor),
        (_, ".gemini") => Some(Dialect::Gemini),
        (_, ".copilot") => Some(Dialect::Copilot),
        _ => None,
    };
    if let Some(dialect) = by_name {
        return Ok(dialect);
    }
    let entries = top.get("mcpServers").and_then(Value::as_object);
    let any = |members: &[&str]| {
        entries.is_some_and(|entries| {
            entries
                .values()
                .filter_map(Value::as_object)
                .any(|entry| members.iter().any(|member| entry.contains_key(*member)))
        })
    };
    Ok(
        if any(&["httpUrl", "includeTools", "excludeTools", "trust"]) {
            Dialect::Gemini
        } else if any(&["transportType", "autoApprove"]) {
            Dialect::Cline
        } else if any(&["tools"]) {
            Dialect::Copilot
        } else if any(&["envFile"]) {
            Dialect::Cursor
        } else {
            Dialect::ClaudeCode
        },
    )
}
