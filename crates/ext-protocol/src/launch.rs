//! The launch contract (spec §12.3) as pure functions: from a plugin's manifest `runtime`, id,
//! version and root to the exact argv, environment and working directory of its sidecar,
//! refusing what the contract forbids before anything runs.
//!
//! Only `${REASONIX_PLUGIN_ROOT}` is expanded; `$HOME`, `~` and every other `${…}` reach the
//! sidecar verbatim. The command must be absolute (no `PATH` lookup) and must not be a shell:
//! hooks launched through login shells are the slowest and least portable part of other hosts
//! (the reference notes measure 4× per call), and a shell would re-introduce expansion. On top
//! of §12.3, the members a consent screen shows (`name`, `version`, `runtime.command`,
//! `runtime.args`) must hold no [`is_terminal_control`] character, so a plugin that can be
//! launched can never forge that screen.
//!
//! The host (`sidewire-ext-host`) applies these rules at install and at every launch, and the
//! conformance kit (`sidewire-ext-conformance`) launches a package through them too, so the kit
//! starts a sidecar exactly as the host would. This module reads no file and spawns nothing.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::constants::{
    ENV_PLUGIN_NAME, ENV_PLUGIN_ROOT, ENV_PLUGIN_VERSION, PLUGIN_ROOT_PLACEHOLDER,
    REFUSED_COMMAND_NAMES,
};
use crate::manifest::RuntimeSpec;

/// Whether `c` can move the cursor, change the terminal's state or reorder the text around it:
///
/// * every C0 control (U+0000–U+001F, which includes tab, newline, carriage return and ESC),
///   DEL (U+007F) and every C1 control (U+0080–U+009F; U+009B is a one-character CSI);
/// * the Unicode bidi embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069), and the
///   implicit marks U+200E, U+200F and U+061C, which reorder neighbouring text ("Trojan
///   Source", CVE-2021-42574);
/// * the line and paragraph separators U+2028 and U+2029, which some renderers break lines at.
///
/// One predicate decides both what the launch rules refuse in the members a consent screen
/// shows, and what a renderer must escape before printing anything a peer or a manifest said.
/// Keeping the two on one set means a manifest that installs can never hold a character the
/// consent screen would have to hide.
pub fn is_terminal_control(c: char) -> bool {
    matches!(
        c,
        '\u{0}'..='\u{1f}'
            | '\u{7f}'..='\u{9f}'
            | '\u{61c}'
            | '\u{200e}'
            | '\u{200f}'
            | '\u{2028}'..='\u{202e}'
            | '\u{2066}'..='\u{2069}'
    )
}

/// The first character of `text` for which [`is_terminal_control`] holds, with its byte offset.
fn first_terminal_control(text: &str) -> Option<(usize, char)> {
    text.char_indices().find(|&(_, c)| is_terminal_control(c))
}

/// Everything needed to spawn one sidecar: what [`resolve_launch`] gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchSpec {
    /// argv\[0\]: the expanded, absolute command.
    pub command: PathBuf,
    /// argv\[1\]…, expanded.
    pub args: Vec<String>,
    /// Set on top of the inherited environment, in order (later entries win): the manifest
    /// `env`, then the three `REASONIX_PLUGIN_*` variables.
    pub env: Vec<(String, String)>,
    /// The working directory: the plugin root.
    pub cwd: PathBuf,
}

/// Why a manifest member makes a plugin unlaunchable (and so uninstallable).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refusal {
    /// The member holds a character for which [`is_terminal_control`] holds: it could forge
    /// what the consent screen shows.
    ControlCharacter {
        /// The first such character.
        character: char,
        /// Its byte offset in the member.
        at: usize,
    },
    /// After replacing `${REASONIX_PLUGIN_ROOT}`, the command is not an absolute path; there is
    /// no `PATH` lookup (§12.3 rule 2).
    RelativeCommand,
    /// The command's base name is a shell (§12.3 rule 3).
    ShellCommand {
        /// The base name as written (`bash`, `PWSH.EXE`).
        name: String,
    },
    /// The plugin root is not valid UTF-8, so `${REASONIX_PLUGIN_ROOT}` cannot be expanded.
    NonUtf8Root,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::ControlCharacter { character, at } => write!(
                f,
                "contains the control character U+{:04X} at byte {at} (control characters, DEL \
                 and bidi overrides are refused: they could change what the consent screen shows)",
                u32::from(*character)
            ),
            Refusal::RelativeCommand => f.write_str(
                "is not an absolute path: a sidecar command must be an absolute path or start with \
                 ${REASONIX_PLUGIN_ROOT}/, and is run directly (no PATH lookup, no shell)",
            ),
            Refusal::ShellCommand { name } => write!(
                f,
                "is a shell ({name}): sidecars are launched directly, never through a shell; \
                 point the command at the program itself"
            ),
            Refusal::NonUtf8Root => f.write_str(
                "cannot be expanded: the plugin root is not valid UTF-8, so \
                 ${REASONIX_PLUGIN_ROOT} has no value",
            ),
        }
    }
}

/// What the launch rules refused: the manifest member's path and the rule it breaks.
///
/// Its message names the member and the rule (`manifest member runtime.command is a shell
/// (bash): …`); from [`resolve_launch`] it also quotes the command when the command is what is
/// refused (Debug-quoted, so escaped), since a launch names what it did not run. The error of
/// [`check_launch`] never repeats a member's value: an install screen shows it already.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct LaunchRefused {
    /// The member's path: `name`, `version`, `runtime.command`, `runtime.args[2]`.
    pub field: String,
    /// Which rule it breaks.
    pub refusal: Refusal,
    /// The command as written, quoted in the message when it is what is refused.
    command: Option<String>,
}

impl LaunchRefused {
    fn new(field: String, refusal: Refusal) -> Self {
        LaunchRefused {
            field,
            refusal,
            command: None,
        }
    }

    /// A refusal of `runtime.command`.
    fn command(refusal: Refusal) -> Self {
        LaunchRefused::new("runtime.command".to_owned(), refusal)
    }
}

impl fmt::Display for LaunchRefused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.command {
            Some(command) => write!(
                f,
                "manifest member {} {command:?} {}",
                self.field, self.refusal
            ),
            None => write!(f, "manifest member {} {}", self.field, self.refusal),
        }
    }
}

impl std::error::Error for LaunchRefused {}

/// Resolves the launch of `runtime` for plugin `id` installed at `root` with `version`.
///
/// It applies [`check_launch`] first, so a linked plugin whose manifest was edited after install
/// into something the install would refuse does not start either.
///
/// # Errors
///
/// The first member [`check_launch`] refuses; the message quotes the command when it is the
/// command that is refused.
pub fn resolve_launch(
    id: &str,
    root: &Path,
    version: &str,
    runtime: &RuntimeSpec,
) -> Result<LaunchSpec, LaunchRefused> {
    check_launch(id, root, version, Some(runtime)).map_err(|mut refused| {
        // The command has no control character here, and Debug quoting would escape one.
        if matches!(
            refused.refusal,
            Refusal::RelativeCommand | Refusal::ShellCommand { .. }
        ) {
            refused.command = Some(runtime.command.clone());
        }
        refused
    })?;
    let root_text = root
        .to_str()
        .expect("check_launch refuses a root that is not UTF-8");
    let expand = |text: &str| text.replace(PLUGIN_ROOT_PLACEHOLDER, root_text);
    let mut env: Vec<(String, String)> = runtime
        .env
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    env.push((ENV_PLUGIN_ROOT.to_owned(), root_text.to_owned()));
    env.push((ENV_PLUGIN_NAME.to_owned(), id.to_owned()));
    env.push((ENV_PLUGIN_VERSION.to_owned(), version.to_owned()));
    Ok(LaunchSpec {
        command: PathBuf::from(expand(&runtime.command)),
        args: runtime.args.iter().map(|a| expand(a)).collect(),
        env,
        cwd: root.to_path_buf(),
    })
}

/// The rules a plugin must meet to be installed and, identically, to be launched: the members
/// the consent screen shows (`name`, `version`, `runtime.command`, `runtime.args[i]`) hold no
/// [`is_terminal_control`] character, the root is UTF-8, and the command expanded against
/// `root` is absolute and not a shell (§12.3 rules 1–3; only when there is a `runtime`).
///
/// Install and launch both call this one function, so a package that installs is one that can
/// start, and a command that could never start is refused with the rule while the user is
/// still looking at it.
///
/// # Errors
///
/// The first offending member's path and the rule it breaks.
pub fn check_launch(
    id: &str,
    root: &Path,
    version: &str,
    runtime: Option<&RuntimeSpec>,
) -> Result<(), LaunchRefused> {
    let mut members = vec![("name".to_owned(), id), ("version".to_owned(), version)];
    if let Some(runtime) = runtime {
        members.push(("runtime.command".to_owned(), &runtime.command));
        for (i, arg) in runtime.args.iter().enumerate() {
            members.push((format!("runtime.args[{i}]"), arg));
        }
    }
    for (field, text) in members {
        if let Some((at, character)) = first_terminal_control(text) {
            return Err(LaunchRefused::new(
                field,
                Refusal::ControlCharacter { character, at },
            ));
        }
    }
    let Some(runtime) = runtime else {
        return Ok(());
    };
    let Some(root_text) = root.to_str() else {
        return Err(LaunchRefused::command(Refusal::NonUtf8Root));
    };
    let command = runtime.command.replace(PLUGIN_ROOT_PLACEHOLDER, root_text);
    if !Path::new(&command).is_absolute() {
        return Err(LaunchRefused::command(Refusal::RelativeCommand));
    }
    let base = base_name(&command);
    if is_refused_name(base) {
        return Err(LaunchRefused::command(Refusal::ShellCommand {
            name: base.to_owned(),
        }));
    }
    Ok(())
}

/// The last path component as written: after the last `/` or `\` (symlinks are not resolved).
fn base_name(command: &str) -> &str {
    command.rsplit(['/', '\\']).next().unwrap_or(command)
}

/// Whether a base name is one of the refused shells, compared case-insensitively after removing
/// a trailing `.exe`.
fn is_refused_name(base: &str) -> bool {
    let lower = base.to_ascii_lowercase();
    let name = lower.strip_suffix(".exe").unwrap_or(&lower);
    REFUSED_COMMAND_NAMES.contains(&name)
}

#[cfg(test)]
mod tests;
