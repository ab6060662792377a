//! Loading `--config` (any dialect, or the one `--dialect` names), with the `${input:ID}`
//! questions of a VS Code file asked on the terminal (an input's `default` offered, and taken
//! on an empty answer): the library takes the answers through an
//! [`InputResolver`](sidewire_mcp_config::InputResolver) and never reads a terminal itself. Without a
//! terminal no resolver is given, so an input takes its `default`, and one without a default
//! fails naming it. What the file holds but looks wrong (an unknown key in a server entry) is
//! warned of on stderr, once per load, naming the file and the member's path.

use std::io::{BufRead as _, IsTerminal as _, Write as _};
use std::path::{Path, PathBuf};

use sidewire_mcp_config::{ConfigInput, ConfigLoader, Dialect, McpConfig};

use crate::cli::McpArgs;
use crate::safe;

/// The config file (`--config`, else `./.mcp.json`) read whole.
pub(super) fn load(args: &McpArgs) -> anyhow::Result<(PathBuf, McpConfig)> {
    let path = match &args.config {
        Some(path) => path.clone(),
        None => {
            let default = PathBuf::from(".mcp.json");
            anyhow::ensure!(
                default.exists(),
                "no MCP servers given: pass --config FILE, --url URL or --stdio -- CMD (or create ./.mcp.json)"
            );
            default
        }
    };
    let config = load_file(&path, args.dialect)?;
    Ok((path, config))
}

/// Reads the config file at `path` in its dialect (or `dialect`), asking for `${input:ID}`
/// values on the terminal when there is one: `mcp` commands and `sidewire run` alike.
pub(crate) fn load_file(path: &Path, dialect: Option<Dialect>) -> anyhow::Result<McpConfig> {
    let mut loader = ConfigLoader::new();
    if let Some(dialect) = dialect {
        loader = loader.dialect(dialect);
    }
    if std::io::stdin().is_terminal() && std::io::stderr().is_terminal() {
        loader = loader.inputs(ask);
    }
    let config = loader.load(path)?;
    let out = crate::out::Out::new(false);
    for warning in &config.warnings {
        out.note(format!(
            "warning: {}: {}",
            path.display(),
            safe::line(&warning.to_string())
        ));
    }
    if config.warnings_omitted > 0 {
        out.note(format!(
            "warning: {}: {} more like these",
            path.display(),
            config.warnings_omitted
        ));
    }
    Ok(config)
}

/// Asks for one input on the terminal: its description on stderr, the answer read from stdin
/// (not echoed for a password). The end of input is no answer.
fn ask(input: &ConfigInput) -> Option<String> {
    // The default is offered as VS Code pre-fills it (a password's is not shown).
    let default = match (&input.default, input.password) {
        (Some(_), true) => " [Enter keeps the default]".to_owned(),
        (Some(default), false) => format!(" [{}]", safe::line(default)),
        (None, _) => String::new(),
    };
    let question = if input.description.is_empty() {
        format!("{}{default}: ", safe::line(&input.id))
    } else {
        format!(
            "{} ({}){default}: ",
            safe::line(&input.description),
            safe::line(&input.id)
        )
    };
    let mut stderr = std::io::stderr().lock();
    let _ = stderr.write_all(question.as_bytes());
    let _ = stderr.flush();
    let hidden = input.password.then(hide_echo).flatten();
    let mut line = String::new();
    let read = std::io::stdin().lock().read_line(&mut line);
    if let Some(saved) = hidden {
        let _ = rustix::termios::tcsetattr(
            std::io::stdin(),
            rustix::termios::OptionalActions::Now,
            &saved,
        );
        let _ = stderr.write_all(b"\n");
    }
    let answer = match read {
        Ok(n) if n > 0 => line.trim_end_matches(['\r', '\n']).to_owned(),
        _ => return None,
    };
    // An empty answer keeps the default (the library takes it when given none).
    if answer.is_empty() && input.default.is_some() {
        return None;
    }
    Some(answer)
}

/// Turns the terminal's echo off; the settings to restore, when it could.
fn hide_echo() -> Option<rustix::termios::Termios> {
    use rustix::termios::{LocalModes, OptionalActions, tcgetattr, tcsetattr};
    let saved = tcgetattr(std::io::stdin()).ok()?;
    let mut quiet = saved.clone();
    quiet.local_modes.remove(LocalModes::ECHO);
    tcsetattr(std::io::stdin(), OptionalActions::Now, &quiet).ok()?;
    Some(saved)
}

/// The server called `name` in the config at `path`.
pub(super) fn find<'a>(
    path: &Path,
    config: &'a McpConfig,
    name: &str,
) -> anyhow::Result<&'a sidewire_mcp_config::ConfiguredServer> {
    config
        .servers
        .iter()
        .find(|s| s.spec.name() == name)
        .ok_or_else(|| {
            let names: Vec<&str> = config.servers.iter().map(|s| s.spec.name()).collect();
            anyhow::anyhow!(
                "{} has no server named {}; it has: {}",
                path.display(),
                safe::line(name),
                safe::line(&names.join(", "))
            )
        })
}
