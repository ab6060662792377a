//! `sidewire plugin`: install, list, show, remove, enable and disable plugins in the store
//! under `$SIDEWIRE_HOME`. Installing shows the FULL TRUST summary and asks for consent.
//!
//! A package that could never be installed (a control character in a member the summary
//! shows, a relative or shell command) is refused before the summary is shown, so nobody is
//! asked to consent to it. The summary escapes the manifest's text itself (see
//! `sidewire_ext_host::TrustSummary`), and still goes through [`safe`] like all output.
//!
//! `plugin install --builtin demo` writes the built-in plugin's package (`builtin::write_package`)
//! to a temporary directory and installs it by copy, through the same summary and consent.

use std::io::{BufRead, IsTerminal, Write};

use anyhow::Context as _;
use serde_json::json;
use sidewire_ext_host::{InstallOptions, Package, PluginStore};

use crate::cli::{BuiltinPlugin, PluginCommand};
use crate::out::Out;
use crate::safe;

pub(crate) fn run(command: PluginCommand, out: &Out) -> anyhow::Result<()> {
    let home = crate::sidewire_home()?;
    let store = PluginStore::new(&home);
    match command {
        PluginCommand::Install {
            path,
            builtin,
            link,
            replace,
            yes,
        } => {
            // A built-in plugin is written as a package in a temporary directory and goes
            // through the same flow as any other: the summary, the consent, a copy install
            // (the temporary directory goes when this ends).
            let staged = match builtin {
                Some(BuiltinPlugin::Demo) => Some(stage_demo()?),
                None => None,
            };
            let path = match (&staged, path) {
                (Some(staged), _) => staged.path().join("package"),
                (None, Some(path)) => path,
                (None, None) => anyhow::bail!("name a plugin directory or --builtin"),
            };
            let package = Package::open(&path)
                .with_context(|| format!("reading the plugin at {}", path.display()))?;
            package.check_installable()?;
            // A v2 manifest's contributed paths: refused before consent is asked for; what is
            // only worth saying (a missing path) is said with the summary.
            let warnings = package.check_contributions()?;
            for warning in &warnings {
                out.note(format!("warning: {}", safe::line(&warning.to_string())));
            }
            // Said before consent is asked for, and naming the flag (the store refuses it too).
            if !replace {
                let installed = store.list().context("reading the plugin store")?;
                anyhow::ensure!(
                    !installed.iter().any(|p| p.id == package.id()),
                    "plugin {} is already installed: pass --replace to reinstall it",
                    safe::line(package.id())
                );
            }
            let summary = package.trust_summary();
            // The summary goes to stderr so `--json` output stays one document.
            out.note(summary.to_string());
            if !yes {
                let interactive = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
                anyhow::ensure!(
                    interactive,
                    "not installing {}: consent is needed and this is not an interactive terminal (pass --yes to consent)",
                    summary.plugin
                );
                if !ask(&format!(
                    "Install {} with FULL TRUST? [y/N] ",
                    safe::line(&summary.plugin)
                ))? {
                    anyhow::bail!("not installed: consent was not given");
                }
            }
            let mut options = if link {
                InstallOptions::link()
            } else {
                InstallOptions::copy()
            };
            if replace {
                options = options.replacing();
            }
            let installed = store
                .install(&path, options)
                .context("installing the plugin")?;
            out.line(format!(
                "installed {} {} ({})",
                safe::line(&installed.id),
                safe::line(&installed.version),
                if installed.linked { "linked" } else { "copied" }
            ));
            out.json(&json!({ "installed": installed.id, "version": installed.version, "linked": installed.linked, "root": installed.root }));
            Ok(())
        }
        PluginCommand::List => {
            let plugins = store.list().context("reading the plugin store")?;
            if plugins.is_empty() {
                out.line("no plugins installed");
            }
            // A v2 plugin that would not start (spec delta §2.6), and why; a package that
            // cannot be read is `ext check`'s to report.
            let inactive: Vec<Option<String>> = plugins
                .iter()
                .map(|p| {
                    Package::open(&p.root)
                        .ok()
                        .and_then(|package| package.inactive())
                        .map(|inactive| inactive.reason.to_string())
                })
                .collect();
            for (plugin, inactive) in plugins.iter().zip(&inactive) {
                // The record file is ours, but a hand-edited one must not reach the terminal
                // raw either.
                out.line(format!(
                    "{} {}{}{}{}",
                    safe::line(&plugin.id),
                    // A v2 manifest may omit its version (spec delta §4.3).
                    if plugin.version.is_empty() {
                        "unversioned".into()
                    } else {
                        safe::line(&plugin.version)
                    },
                    if plugin.enabled { "" } else { " (disabled)" },
                    if plugin.linked { " (linked)" } else { "" },
                    match inactive {
                        Some(reason) => format!(" (inactive: {})", safe::line(reason)),
                        None => String::new(),
                    }
                ));
            }
            out.json(&json!({ "plugins": plugins.iter().zip(&inactive).map(|(p, inactive)| json!({
                "id": p.id, "version": p.version, "enabled": p.enabled, "linked": p.linked, "root": p.root,
                "inactive": inactive,
            })).collect::<Vec<_>>() }));
            Ok(())
        }
        PluginCommand::Show { name } => {
            let plugin = store
                .get(&name)
                .context("reading the plugin store")?
                .with_context(|| {
                    format!("no installed plugin is named {name} (see `sidewire plugin list`)")
                })?;
            let summary = Package::open(&plugin.root)
                .with_context(|| {
                    format!("reading the installed plugin at {}", plugin.root.display())
                })?
                .trust_summary();
            out.line(format!(
                "{} {} ({}, {})",
                safe::line(&plugin.id),
                safe::line(&plugin.version),
                if plugin.enabled {
                    "enabled"
                } else {
                    "disabled"
                },
                if plugin.linked { "linked" } else { "copied" }
            ));
            out.line(summary.to_string().trim_end());
            out.json(&json!({ "id": plugin.id, "version": plugin.version, "enabled": plugin.enabled, "linked": plugin.linked, "root": plugin.root, "summary": summary.to_string() }));
            Ok(())
        }
        PluginCommand::Remove { name } => {
            store
                .remove(&name)
                .with_context(|| format!("removing {name}"))?;
            out.line(format!("removed {name}"));
            out.json(&json!({ "removed": name }));
            Ok(())
        }
        PluginCommand::Enable { name } => set_enabled(&store, &name, true, out),
        PluginCommand::Disable { name } => set_enabled(&store, &name, false, out),
    }
}

/// The built-in demo plugin as a package in a fresh temporary directory (`package/` in it),
/// running this binary by its absolute path.
fn stage_demo() -> anyhow::Result<tempfile::TempDir> {
    let exe = std::env::current_exe().context("cannot find this program's own path")?;
    let temp = tempfile::Builder::new()
        .prefix("sidewire-builtin-")
        .tempdir()
        .context("cannot make a temporary directory")?;
    crate::builtin::write_package(&temp.path().join("package"), &exe)
        .context("writing the built-in plugin's package")?;
    Ok(temp)
}

fn set_enabled(store: &PluginStore, name: &str, enabled: bool, out: &Out) -> anyhow::Result<()> {
    store
        .set_enabled(name, enabled)
        .with_context(|| format!("{} {name}", if enabled { "enabling" } else { "disabling" }))?;
    out.line(format!(
        "{} {name}",
        if enabled { "enabled" } else { "disabled" }
    ));
    out.json(&json!({ "plugin": name, "enabled": enabled }));
    Ok(())
}

/// Asks a yes/no question on stderr and reads the answer from stdin (never `/dev/tty`).
pub(crate) fn ask(question: &str) -> anyhow::Result<bool> {
    let mut stderr = std::io::stderr().lock();
    stderr.write_all(question.as_bytes())?;
    stderr.flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes" | "YES" | "Yes"))
}
