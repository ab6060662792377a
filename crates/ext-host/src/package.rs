//! A plugin package on disk: its directory and strictly decoded manifest (spec §12.1), and the
//! FULL TRUST summary shown before consent (§12.2).
//!
//! This module reads; it never installs, launches or asks anything. The CLI shows
//! [`TrustSummary`] and asks for consent; [`PluginStore`](crate::PluginStore) records it.
//!
//! The summary is shown *before* anything is refused, so its text must be safe to print even
//! for a hostile manifest: a member holding a character a terminal would act on
//! ([`is_terminal_control`](crate::is_terminal_control), such as ESC or CR) is shown escaped
//! (`\u{1b}`, `\r`), so an embedder that prints the summary as it is cannot be made to show a
//! different command than the one that runs. [`Package::check_installable`] then refuses such
//! a package outright, with the member named.

use std::fmt;
use std::path::{Path, PathBuf};

use sidewire_ext_protocol::{MANIFEST_FILE, MAX_MANIFEST_BYTES, Manifest};
use sidewire_process::file::{self, Symlinks};

use crate::Error;

mod contrib;

pub use self::contrib::{
    ContributionRefusal, ContributionWarning, MAX_GLOB_ENTRIES, MAX_GLOB_MATCHES,
};

/// A plugin package: a directory holding `reasonix-plugin.json`.
#[derive(Debug, Clone, PartialEq)]
pub struct Package {
    /// The package directory.
    pub root: PathBuf,
    /// Its manifest, strictly decoded.
    pub manifest: Manifest,
}

impl Package {
    /// Reads and strictly decodes `dir/reasonix-plugin.json`. The package is not trusted yet
    /// (this runs before consent): the manifest is read only if it is a regular file of at
    /// most [`MAX_MANIFEST_BYTES`], opened without blocking (a FIFO cannot hang the read), and
    /// a symlink is followed only to a file inside `dir` (not to `/dev/zero`, not out of the
    /// package).
    ///
    /// # Errors
    ///
    /// [`Error::File`] when the file is refused or cannot be read ([`Error::is_io`];
    /// [`Error::file`] says which rule), [`Error::Manifest`] (naming the file and the member's
    /// JSON path) when it does not decode.
    pub fn open(dir: &Path) -> Result<Package, Error> {
        let path = dir.join(MANIFEST_FILE);
        let text = file::read_to_string(&path, MAX_MANIFEST_BYTES, Symlinks::Inside(dir))
            .map_err(Error::File)?;
        let manifest = Manifest::parse(&text).map_err(|error| Error::Manifest { path, error })?;
        Ok(Package {
            root: dir.to_path_buf(),
            manifest,
        })
    }

    /// Checks the rules that a package must meet beyond decoding, the same ones a launch
    /// applies (spec §12.3): no control character (ESC, CR, DEL, C1, bidi overrides; see
    /// [`is_terminal_control`](crate::is_terminal_control)) in `name`, `version`,
    /// `runtime.command` or `runtime.args`, and a command that is absolute once
    /// `${REASONIX_PLUGIN_ROOT}` is replaced and is not a shell. The root used for the
    /// replacement is this package's directory; [`PluginStore::install`](crate::PluginStore)
    /// checks again against the root the plugin is installed at.
    ///
    /// # Errors
    ///
    /// [`Error::Refused`] naming the member and the rule; [`Error::Io`] when the directory's
    /// absolute path cannot be formed.
    pub fn check_installable(&self) -> Result<(), Error> {
        let root = std::path::absolute(&self.root).map_err(|err| Error::io(&self.root, err))?;
        self.check_at(&root)
    }

    /// [`check_installable`](Self::check_installable) against the root the plugin will have.
    pub(crate) fn check_at(&self, root: &Path) -> Result<(), Error> {
        let manifest = &self.manifest;
        sidewire_ext_protocol::check_launch(
            &manifest.name,
            root,
            &manifest.version,
            manifest.runtime.as_ref(),
        )
        .map_err(|refused| Error::Refused {
            plugin: if refused.field == "name" {
                format!("the package at {}", Shown(&self.root.to_string_lossy()))
            } else {
                manifest.name.clone()
            },
            field: refused.field,
            refusal: refused.refusal,
        })
    }

    /// Checks the paths a v2 manifest contributes against this package's directory (spec
    /// delta §4.1): an existing path must resolve inside the directory through symlinks and a
    /// theme must be a regular file (or a glob whose matches are); a missing path, or a glob
    /// that matches nothing, is returned as a warning. A v1 manifest contributes nothing
    /// checked here. Reads metadata and, for theme globs, at most [`MAX_GLOB_ENTRIES`]
    /// directory entries.
    ///
    /// # Errors
    ///
    /// [`Error::Contribution`] naming the list, the path and the rule; [`Error::Io`] when the
    /// package directory cannot be resolved.
    pub fn check_contributions(&self) -> Result<Vec<ContributionWarning>, Error> {
        let Some(v2) = &self.manifest.v2 else {
            return Ok(Vec::new());
        };
        let root = std::fs::canonicalize(&self.root).map_err(|err| Error::io(&self.root, err))?;
        contrib::check(&root, &v2.contributions).map_err(|(kind, path, refusal)| {
            Error::Contribution {
                plugin: self.manifest.name.clone(),
                kind,
                path,
                refusal,
            }
        })
    }

    /// Whether this package, installed and enabled, would be inactive (spec delta §2.6): a v2
    /// manifest with a runtime and a non-optional requirement the host cannot satisfy. What a
    /// runtime build decides, without booting anything.
    pub fn inactive(&self) -> Option<crate::InactivePlugin> {
        let v2 = self.manifest.v2.as_deref()?;
        self.manifest.runtime.as_ref()?;
        crate::runtime::activation::activation(&self.manifest.name, v2).inactive
    }

    /// The plugin id: the manifest `name`.
    pub fn id(&self) -> &str {
        &self.manifest.name
    }

    /// What installing this package trusts, for the consent prompt.
    pub fn trust_summary(&self) -> TrustSummary {
        TrustSummary {
            plugin: self.manifest.name.clone(),
            // A v2 manifest may omit its version (spec delta §4.3).
            version: if self.manifest.version.is_empty() {
                "unversioned".to_owned()
            } else {
                self.manifest.version.clone()
            },
            root: self.root.clone(),
            manifest: self.manifest.clone(),
        }
    }
}

/// The FULL TRUST summary of §12.2: command, args, intercepts, slots, capabilities and the
/// required flag. Its `Display` is the text to show before asking for consent; every member
/// that came from the manifest or the package path is shown escaped when it holds a character
/// a terminal would act on, so the text is safe to print as it is.
#[derive(Debug, Clone, PartialEq)]
pub struct TrustSummary {
    /// The plugin id.
    pub plugin: String,
    /// The manifest version.
    pub version: String,
    /// The package directory.
    pub root: PathBuf,
    manifest: Manifest,
}

impl TrustSummary {
    /// Whether the plugin runs code (has a `runtime` section).
    pub fn runs_code(&self) -> bool {
        self.manifest.runtime.is_some()
    }
}

fn list<T>(items: &[T], name: impl Fn(&T) -> &str) -> String {
    if items.is_empty() {
        "(none)".to_owned()
    } else {
        items.iter().map(name).collect::<Vec<_>>().join(", ")
    }
}

/// A manifest member or path as the summary shows it: as written, or, when it holds a
/// character a terminal would act on, with every such character (and quotes and backslashes)
/// escaped the way Rust's `str::escape_debug` does. An escaped member never contains a raw
/// control character, so it cannot move the cursor over the lines around it.
struct Shown<'a>(&'a str);

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.chars().any(crate::is_terminal_control) {
            write!(f, "{}", self.0.escape_debug())
        } else {
            f.write_str(self.0)
        }
    }
}

impl fmt::Display for TrustSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(runtime) = &self.manifest.runtime else {
            return writeln!(
                f,
                "plugin {} {} (from {}) is declarative only: it runs no code",
                Shown(&self.plugin),
                Shown(&self.version),
                Shown(&self.root.to_string_lossy())
            );
        };
        writeln!(
            f,
            "FULL TRUST: plugin {} {} runs a program on this machine with your user's rights,",
            Shown(&self.plugin),
            Shown(&self.version)
        )?;
        writeln!(
            f,
            "and may see and change what the agent sends and receives at the points below."
        )?;
        writeln!(f, "  package:      {}", Shown(&self.root.to_string_lossy()))?;
        writeln!(f, "  command:      {}", Shown(&runtime.command))?;
        let args = if runtime.args.is_empty() {
            "(none)".to_owned()
        } else {
            runtime
                .args
                .iter()
                // Debug quoting escapes every control character, so an argument cannot end
                // the line either.
                .map(|a| format!("{a:?}"))
                .collect::<Vec<_>>()
                .join(" ")
        };
        writeln!(f, "  args:         {args}")?;
        writeln!(
            f,
            "  intercepts:   {}",
            list(&runtime.intercepts, |p| p.as_str())
        )?;
        match &self.manifest.v2 {
            // A v2 manifest's lists as written: its slot grammar and capabilities are wider.
            Some(v2) => {
                let shown = |items: Vec<&String>| -> Vec<String> {
                    items.into_iter().map(|s| Shown(s).to_string()).collect()
                };
                let slots = shown(v2.replaces.iter().collect());
                writeln!(f, "  slots:        {}", list(&slots, |s| s.as_str()))?;
                writeln!(
                    f,
                    "  capabilities: {}",
                    list(&v2.capabilities, |c| c.as_str())
                )?;
                if !v2.tools.is_empty() {
                    let tools = shown(v2.tools.iter().map(|t| &t.name).collect());
                    writeln!(f, "  tools:        {}", list(&tools, |t| t.as_str()))?;
                }
            }
            None => {
                writeln!(
                    f,
                    "  slots:        {}",
                    list(&runtime.replaces, |s| s.as_str())
                )?;
                writeln!(
                    f,
                    "  capabilities: {}",
                    list(&runtime.capabilities, |c| c.as_str())
                )?;
            }
        }
        writeln!(
            f,
            "  required:     {}",
            if runtime.required {
                "yes (its failures fail the operation)"
            } else {
                "no (its failures are skipped with a warning)"
            }
        )
    }
}

#[cfg(test)]
mod tests;
