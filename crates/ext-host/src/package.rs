//! A plugin package on disk: its directory and strictly decoded manifest (spec §12.1), and the
//! FULL TRUST summary shown before consent (§12.2).
//!
//! This module reads; it never installs, launches or asks anything. The CLI shows
//! [`TrustSummary`] and asks for consent; [`PluginStore`](crate::PluginStore) records it.

use std::fmt;
use std::path::{Path, PathBuf};

use sidewire_ext_protocol::{MANIFEST_FILE, Manifest};

use crate::Error;

/// A plugin package: a directory holding `reasonix-plugin.json`.
#[derive(Debug, Clone, PartialEq)]
pub struct Package {
    /// The package directory.
    pub root: PathBuf,
    /// Its manifest, strictly decoded.
    pub manifest: Manifest,
}

impl Package {
    /// Reads and strictly decodes `dir/reasonix-plugin.json`.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when the file cannot be read, [`Error::Manifest`] (naming the file and the
    /// member's JSON path) when it does not decode.
    pub fn open(dir: &Path) -> Result<Package, Error> {
        let path = dir.join(MANIFEST_FILE);
        let text = std::fs::read_to_string(&path).map_err(|err| Error::io(&path, err))?;
        let manifest = Manifest::parse(&text).map_err(|source| Error::Manifest { path, source })?;
        Ok(Package {
            root: dir.to_path_buf(),
            manifest,
        })
    }

    /// The plugin id: the manifest `name`.
    pub fn id(&self) -> &str {
        &self.manifest.name
    }

    /// What installing this package trusts, for the consent prompt.
    pub fn trust_summary(&self) -> TrustSummary {
        TrustSummary {
            plugin: self.manifest.name.clone(),
            version: self.manifest.version.clone(),
            root: self.root.clone(),
            manifest: self.manifest.clone(),
        }
    }
}

/// The FULL TRUST summary of §12.2: command, args, intercepts, slots, capabilities and the
/// required flag. Its `Display` is the text to show before asking for consent.
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

impl fmt::Display for TrustSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(runtime) = &self.manifest.runtime else {
            return writeln!(
                f,
                "plugin {} {} (from {}) is declarative only: it runs no code",
                self.plugin,
                self.version,
                self.root.display()
            );
        };
        writeln!(
            f,
            "FULL TRUST: plugin {} {} runs a program on this machine with your user's rights,",
            self.plugin, self.version
        )?;
        writeln!(
            f,
            "and may see and change what the agent sends and receives at the points below."
        )?;
        writeln!(f, "  package:      {}", self.root.display())?;
        writeln!(f, "  command:      {}", runtime.command)?;
        let args = if runtime.args.is_empty() {
            "(none)".to_owned()
        } else {
            runtime
                .args
                .iter()
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
