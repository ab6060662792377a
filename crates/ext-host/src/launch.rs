//! The launch contract (spec §12.3): from an installed plugin to the exact argv, environment and
//! working directory of its sidecar, refusing what the contract forbids before anything runs.
//!
//! Only `${REASONIX_PLUGIN_ROOT}` is expanded; `$HOME`, `~` and every other `${…}` reach the
//! sidecar verbatim. The command must be absolute (no `PATH` lookup) and must not be a shell:
//! hooks launched through login shells are the slowest and least portable part of other hosts
//! (the reference notes measure 4× per call), and a shell would re-introduce expansion. This
//! module spawns nothing; `conn::handshake` does, through `sidewire-process`.

use std::path::{Path, PathBuf};

use sidewire_ext_protocol::{
    ENV_PLUGIN_NAME, ENV_PLUGIN_ROOT, ENV_PLUGIN_VERSION, PLUGIN_ROOT_PLACEHOLDER,
    REFUSED_COMMAND_NAMES, RuntimeSpec,
};

use crate::error::Refusal;
use crate::text::first_terminal_control;

/// Everything needed to spawn one sidecar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LaunchSpec {
    /// argv\[0\]: the expanded, absolute command.
    pub(crate) command: PathBuf,
    /// argv\[1\]…, expanded.
    pub(crate) args: Vec<String>,
    /// Set on top of the inherited environment, in order (later entries win): the manifest
    /// `env`, then the three `REASONIX_PLUGIN_*` variables.
    pub(crate) env: Vec<(String, String)>,
    /// The working directory: the plugin root.
    pub(crate) cwd: PathBuf,
}

/// Resolves the launch of `runtime` for plugin `id` installed at `root` with `version`; the
/// error is the cause of a `resolve`-stage startup failure.
///
/// It applies [`check`] first, so a linked plugin whose manifest was edited after install into
/// something the install would refuse does not start either.
pub(crate) fn resolve(
    id: &str,
    root: &Path,
    version: &str,
    runtime: &RuntimeSpec,
) -> Result<LaunchSpec, String> {
    check(id, version, root, Some(runtime)).map_err(
        |Refused { field, refusal }| match refusal {
            // The command has no control character here, and Debug quoting would escape one.
            Refusal::RelativeCommand | Refusal::ShellCommand { .. } => {
                format!("manifest member {field} {:?} {refusal}", runtime.command)
            }
            _ => format!("manifest member {field} {refusal}"),
        },
    )?;
    let root_text = root
        .to_str()
        .expect("check refuses a root that is not UTF-8");
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

/// What [`check`] refused: the manifest member's path and the rule it breaks.
#[derive(Debug)]
pub(crate) struct Refused {
    pub(crate) field: String,
    pub(crate) refusal: Refusal,
}

impl Refused {
    fn new(field: String, refusal: Refusal) -> Self {
        Refused { field, refusal }
    }

    /// A refusal of `runtime.command`.
    fn command(refusal: Refusal) -> Self {
        Refused::new("runtime.command".to_owned(), refusal)
    }
}

/// The rules a plugin must meet to be installed and, identically, to be launched: the members
/// the consent screen shows (`name`, `version`, `runtime.command`, `runtime.args[i]`) hold no
/// [`is_terminal_control`](crate::is_terminal_control) character, the root is UTF-8, and the
/// command expanded against `root` is absolute and not a shell (§12.3 rules 1–3; only when
/// there is a `runtime`). Refuses with the first offending member's path and the rule it breaks.
///
/// Install and launch both call this one function, so a package that installs is one that can
/// start, and a command that could never start is refused with the rule while the user is
/// still looking at it.
pub(crate) fn check(
    id: &str,
    version: &str,
    root: &Path,
    runtime: Option<&RuntimeSpec>,
) -> Result<(), Refused> {
    let mut members = vec![("name".to_owned(), id), ("version".to_owned(), version)];
    if let Some(runtime) = runtime {
        members.push(("runtime.command".to_owned(), &runtime.command));
        for (i, arg) in runtime.args.iter().enumerate() {
            members.push((format!("runtime.args[{i}]"), arg));
        }
    }
    for (field, text) in members {
        if let Some((at, character)) = first_terminal_control(text) {
            return Err(Refused::new(
                field,
                Refusal::ControlCharacter { character, at },
            ));
        }
    }
    let Some(runtime) = runtime else {
        return Ok(());
    };
    let Some(root_text) = root.to_str() else {
        return Err(Refused::command(Refusal::NonUtf8Root));
    };
    let command = runtime.command.replace(PLUGIN_ROOT_PLACEHOLDER, root_text);
    if !Path::new(&command).is_absolute() {
        return Err(Refused::command(Refusal::RelativeCommand));
    }
    let base = base_name(&command);
    if is_refused_name(base) {
        return Err(Refused::command(Refusal::ShellCommand {
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
