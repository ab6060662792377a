//! The launch contract (spec §12.3): from an installed plugin to the exact argv, environment and
//! working directory of its sidecar, refusing what the contract forbids before anything runs.
//!
//! Only `${REASONIX_PLUGIN_ROOT}` is expanded; `$HOME`, `~` and every other `${…}` reach the
//! sidecar verbatim. The command must be absolute (no `PATH` lookup) and must not be a shell:
//! hooks launched through login shells are the slowest and least portable part of other hosts
//! (the reference notes measure 4× per call), and a shell would re-introduce expansion. This
//! module spawns nothing; `process` does.

use std::path::{Path, PathBuf};

use sidewire_ext_protocol::{
    ENV_PLUGIN_NAME, ENV_PLUGIN_ROOT, ENV_PLUGIN_VERSION, PLUGIN_ROOT_PLACEHOLDER,
    REFUSED_COMMAND_NAMES, RuntimeSpec,
};

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
pub(crate) fn resolve(
    id: &str,
    root: &Path,
    version: &str,
    runtime: &RuntimeSpec,
) -> Result<LaunchSpec, String> {
    let Some(root_text) = root.to_str() else {
        return Err(format!(
            "the plugin root {} is not valid UTF-8",
            root.display()
        ));
    };
    let expand = |text: &str| text.replace(PLUGIN_ROOT_PLACEHOLDER, root_text);
    let command = expand(&runtime.command);
    if !Path::new(&command).is_absolute() {
        return Err(format!(
            "command {command:?} is not an absolute path (there is no PATH lookup)"
        ));
    }
    let base = base_name(&command);
    if is_refused_name(base) {
        return Err(format!(
            "command {command:?} is a shell ({base}); sidecars are launched directly, never \
             through a shell"
        ));
    }
    let mut env: Vec<(String, String)> = runtime
        .env
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    env.push((ENV_PLUGIN_ROOT.to_owned(), root_text.to_owned()));
    env.push((ENV_PLUGIN_NAME.to_owned(), id.to_owned()));
    env.push((ENV_PLUGIN_VERSION.to_owned(), version.to_owned()));
    Ok(LaunchSpec {
        command: PathBuf::from(command),
        args: runtime.args.iter().map(|a| expand(a)).collect(),
        env,
        cwd: root.to_path_buf(),
    })
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
