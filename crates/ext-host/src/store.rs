//! The installed-plugin store (spec §12.2): the only record of which plugins may start a
//! sidecar, and the copies of installed packages.
//!
//! Layout under the state directory the caller gives: `plugins.json` (the record), `plugins.lock`
//! (an `flock` taken shared to read and exclusive to change anything), and `plugins/<id>/` (the
//! copy of each package installed by copy; linked packages stay where they are). The record is
//! written atomically (temp file, fsync, rename, fsync of the directory) under the exclusive
//! lock, so a crash leaves either the old or the new record. A record that does not decode is
//! an error naming the file, never a silent reset: resetting it would quietly drop the user's
//! consent decisions.
//!
//! This module does not ask for consent: the caller shows [`Package::trust_summary`] first and
//! calls [`PluginStore::install`] only once the user agreed (installing *is* the consent).

mod copy;

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sidewire_ext_protocol::v2::is_plugin_name;

use crate::{Error, Package};

const RECORD_FILE: &str = "plugins.json";
const LOCK_FILE: &str = "plugins.lock";
const PACKAGES_DIR: &str = "plugins";
/// A copy being made; renamed to its final name when complete.
const STAGING_PREFIX: &str = ".staging-";
/// A replaced copy being removed.
const RETIRED_PREFIX: &str = ".retired-";
/// The record's format number; a record of another format is refused, not guessed at.
const FORMAT: u32 = 1;
/// The largest record read: a plugin's entry is a few hundred bytes, so this is thousands of
/// plugins; anything larger is not a record this store wrote. The read stops one byte past.
const MAX_RECORD_BYTES: usize = 16 * 1024 * 1024;

/// One installed plugin, as recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub struct InstalledPlugin {
    /// The plugin id (the manifest `name` at install time).
    pub id: String,
    /// The installed root: the copy under the state directory, or the linked directory.
    pub root: PathBuf,
    /// The version installed (a linked plugin's manifest is re-read at every runtime build).
    pub version: String,
    /// Recorded in place (`--link`) rather than copied.
    pub linked: bool,
    /// Whether it may start; only enabled plugins ever start a sidecar.
    pub enabled: bool,
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Record {
    format: u32,
    plugins: Vec<InstalledPlugin>,
}

/// How to install.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct InstallOptions {
    /// Record the directory in place instead of copying it (for development).
    pub link: bool,
    /// Allow reinstalling over an existing id (refused otherwise).
    pub replace: bool,
}

impl InstallOptions {
    /// Copy, refusing an existing id.
    pub fn copy() -> Self {
        InstallOptions::default()
    }

    /// Link in place.
    pub fn link() -> Self {
        InstallOptions {
            link: true,
            replace: false,
        }
    }

    /// The same, allowing an existing id to be replaced.
    pub fn replacing(mut self) -> Self {
        self.replace = true;
        self
    }
}

/// The installed-plugin store under one state directory.
#[derive(Debug, Clone)]
pub struct PluginStore {
    dir: PathBuf,
}

/// An `flock` on the lock file, released when dropped (the file closes).
struct Lock {
    _file: File,
}

impl PluginStore {
    /// The store under `state_dir` (created on first write).
    pub fn new(state_dir: impl Into<PathBuf>) -> Self {
        PluginStore {
            dir: state_dir.into(),
        }
    }

    /// The state directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The record file's path.
    pub fn record_path(&self) -> PathBuf {
        self.dir.join(RECORD_FILE)
    }

    /// Takes the lock exclusively, for a change: creates the state directory and the lock file
    /// when needed, then collects what interrupted installs left behind.
    fn lock_exclusive(&self) -> Result<Lock, Error> {
        fs::create_dir_all(&self.dir).map_err(|err| Error::io(&self.dir, err))?;
        let path = self.dir.join(LOCK_FILE);
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(&path)
            .map_err(|err| Error::io(&path, err))?;
        rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive)
            .map_err(|err| Error::io(&path, err.into()))?;
        self.collect_stale();
        Ok(Lock { _file: file })
    }

    /// Takes the lock shared, for a read, creating nothing: a read-only or missing state
    /// directory still lists. Without a lock file nobody has written under the lock yet, and the
    /// record is replaced by an atomic rename anyway, so the read goes on unlocked.
    fn lock_shared(&self) -> Result<Option<Lock>, Error> {
        let path = self.dir.join(LOCK_FILE);
        let file = match File::open(&path) {
            Ok(file) => file,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(err) => return Err(Error::io(&path, err)),
        };
        rustix::fs::flock(&file, rustix::fs::FlockOperation::LockShared)
            .map_err(|err| Error::io(&path, err.into()))?;
        Ok(Some(Lock { _file: file }))
    }

    /// Removes the staging and retired copies an interrupted install left under `plugins/`.
    /// Called with the exclusive lock held, so no install is running: every such directory is
    /// stale. Best effort: a directory that cannot be removed now is tried again next time.
    fn collect_stale(&self) {
        let packages = self.dir.join(PACKAGES_DIR);
        let Ok(entries) = fs::read_dir(&packages) else {
            return;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if name.starts_with(STAGING_PREFIX) || name.starts_with(RETIRED_PREFIX) {
                let path = entry.path();
                if let Err(err) = fs::remove_dir_all(&path) {
                    tracing::warn!("cannot remove the stale copy {}: {err}", path.display());
                }
            }
        }
    }

    fn read_record(&self) -> Result<Record, Error> {
        let path = self.record_path();
        // Written by this store only, by an atomic rename: a link or anything but a regular
        // file there is not our record (and a FIFO must not hang every command that lists).
        let read = sidewire_process::file::read_to_string(
            &path,
            MAX_RECORD_BYTES,
            sidewire_process::file::Symlinks::Refuse,
        );
        let text = match read {
            Ok(text) => text,
            Err(err) if err.is_not_found() => {
                return Ok(Record {
                    format: FORMAT,
                    plugins: Vec::new(),
                });
            }
            Err(err) => return Err(Error::File(err)),
        };
        let corrupt = |detail: String| Error::StoreCorrupt {
            path: path.clone(),
            detail,
        };
        let record: Record = serde_json::from_str(&text).map_err(|err| corrupt(err.to_string()))?;
        if record.format != FORMAT {
            return Err(corrupt(format!("format {} is not {FORMAT}", record.format)));
        }
        let mut seen = std::collections::BTreeSet::new();
        for plugin in &record.plugins {
            // v2's pattern, a superset of v1's (spec delta §4.1).
            if !is_plugin_name(&plugin.id) {
                return Err(corrupt(format!("{:?} is not a plugin id", plugin.id)));
            }
            if !seen.insert(plugin.id.as_str()) {
                return Err(corrupt(format!("plugin {} is recorded twice", plugin.id)));
            }
            if !plugin.root.is_absolute() {
                return Err(corrupt(format!(
                    "plugin {} has a relative root {}",
                    plugin.id,
                    plugin.root.display()
                )));
            }
        }
        Ok(record)
    }

    fn write_record(&self, record: &Record) -> Result<(), Error> {
        let path = self.record_path();
        let temp = self
            .dir
            .join(format!(".{RECORD_FILE}.{}.tmp", random_suffix()));
        let text = serde_json::to_string_pretty(record).expect("the record serializes");
        let write = || -> std::io::Result<()> {
            let mut file = File::create(&temp)?;
            file.write_all(text.as_bytes())?;
            file.write_all(b"\n")?;
            file.sync_all()?;
            fs::rename(&temp, &path)?;
            // Make the rename itself durable.
            File::open(&self.dir)?.sync_all()
        };
        write().map_err(|err| {
            let _ = fs::remove_file(&temp);
            Error::io(&path, err)
        })
    }

    /// Every recorded plugin, in id order.
    ///
    /// # Errors
    ///
    /// [`Error::StoreCorrupt`] naming the file, or [`Error::Io`].
    pub fn list(&self) -> Result<Vec<InstalledPlugin>, Error> {
        let _lock = self.lock_shared()?;
        let mut plugins = self.read_record()?.plugins;
        plugins.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(plugins)
    }

    /// The record of one plugin.
    ///
    /// # Errors
    ///
    /// As for [`list`](Self::list).
    pub fn get(&self, id: &str) -> Result<Option<InstalledPlugin>, Error> {
        Ok(self.list()?.into_iter().find(|p| p.id == id))
    }

    /// Installs the package in `source` (copying it, or linking it in place) and records it as
    /// enabled. The caller must have obtained consent after showing
    /// [`Package::trust_summary`].
    ///
    /// A copy keeps every file's Unix permission bits (the executable bit above all) and copies
    /// symlinks as symlinks; a symlink whose target resolves outside the package is refused with
    /// an error naming it.
    ///
    /// # Errors
    ///
    /// [`Error::Manifest`] for a manifest that does not decode, [`Error::Refused`] for one that
    /// breaks the install and launch rules ([`Package::check_installable`]: a control
    /// character in a shown member, a relative or shell command), [`Error::Install`] when the
    /// id is installed and `replace` is not set, or for a symlink leaving the package,
    /// [`Error::Contribution`] for a v2 manifest's contributed path that leaves the package or
    /// a theme that is not a file, and the store's own errors.
    pub fn install(
        &self,
        source: &Path,
        options: InstallOptions,
    ) -> Result<InstalledPlugin, Error> {
        let package = Package::open(source)?;
        let id = package.id().to_owned();
        // The manifest parser held the name to its pattern: v1's, or v2's wider
        // `^[a-zA-Z0-9][a-zA-Z0-9._-]{0,63}$` (spec delta §4.1). Checked again here because the
        // id names the package directory: it can never be empty, `.`, `..` or hold a `/`.
        if !is_plugin_name(&id) {
            return Err(Error::install(
                id,
                "the plugin name is outside ^[a-zA-Z0-9][a-zA-Z0-9._-]{0,63}$",
            ));
        }
        let source_root = fs::canonicalize(source).map_err(|err| Error::io(source, err))?;
        // A v2 manifest's contributed paths, where the files are now (a copy keeps them, and
        // refuses a symlink leaving the package anyway). Warnings are the caller's to show
        // (`Package::check_contributions`).
        package.check_contributions()?;
        // The launch rules, checked against the root the plugin will have, before anything is
        // copied or recorded: a package that installs is one that can start.
        let root = if options.link {
            source_root.clone()
        } else {
            let dir = std::path::absolute(&self.dir).map_err(|err| Error::io(&self.dir, err))?;
            dir.join(PACKAGES_DIR).join(&id)
        };
        package.check_at(&root)?;
        let _lock = self.lock_exclusive()?;
        let mut record = self.read_record()?;
        let existing = record.plugins.iter().position(|p| p.id == id);
        // Ids that differ only by case would share a package directory on a case-insensitive
        // file system, and are confusable on every screen that lists them.
        if let Some(other) =
            (record.plugins.iter()).find(|p| p.id != id && p.id.eq_ignore_ascii_case(&id))
        {
            return Err(Error::install(
                &id,
                format!(
                    "{} is installed, and plugin ids that differ only by case are refused",
                    other.id
                ),
            ));
        }
        if existing.is_some() && !options.replace {
            return Err(Error::install(
                &id,
                "it is already installed (use replace to reinstall)",
            ));
        }
        let packages = self.dir.join(PACKAGES_DIR);
        let final_dir = packages.join(&id);
        let root = if options.link {
            source_root.clone()
        } else {
            fs::create_dir_all(&packages).map_err(|err| Error::io(&packages, err))?;
            let staging = packages.join(format!("{STAGING_PREFIX}{id}-{}", random_suffix()));
            if let Err(err) = copy::copy_package(&source_root, &staging, &id) {
                let _ = fs::remove_dir_all(&staging);
                return Err(err);
            }
            // Swap the copy in: move the old one aside first so the final name is never half
            // written, then remove it.
            let retired = packages.join(format!("{RETIRED_PREFIX}{id}-{}", random_suffix()));
            let had_old = final_dir.exists();
            if had_old {
                fs::rename(&final_dir, &retired).map_err(|err| Error::io(&final_dir, err))?;
            }
            fs::rename(&staging, &final_dir).map_err(|err| Error::io(&final_dir, err))?;
            if had_old {
                let _ = fs::remove_dir_all(&retired);
            }
            fs::canonicalize(&final_dir).map_err(|err| Error::io(&final_dir, err))?
        };
        let installed = InstalledPlugin {
            id: id.clone(),
            root,
            version: package.manifest.version.clone(),
            linked: options.link,
            enabled: true,
        };
        match existing {
            Some(index) => {
                let old = std::mem::replace(&mut record.plugins[index], installed.clone());
                // A copy replaced by a link leaves no stale copy behind.
                if options.link && !old.linked && final_dir.exists() {
                    let _ = fs::remove_dir_all(&final_dir);
                }
            }
            None => record.plugins.push(installed.clone()),
        }
        record.plugins.sort_by(|a, b| a.id.cmp(&b.id));
        self.write_record(&record)?;
        Ok(installed)
    }

    /// Removes a plugin from the record, and its copy (a linked directory is left alone).
    ///
    /// # Errors
    ///
    /// [`Error::NotInstalled`], and the store's own errors.
    pub fn remove(&self, id: &str) -> Result<(), Error> {
        let _lock = self.lock_exclusive()?;
        let mut record = self.read_record()?;
        let index = record
            .plugins
            .iter()
            .position(|p| p.id == id)
            .ok_or_else(|| Error::NotInstalled(id.to_owned()))?;
        let removed = record.plugins.remove(index);
        self.write_record(&record)?;
        if !removed.linked {
            let dir = self.dir.join(PACKAGES_DIR).join(id);
            if dir.exists() {
                fs::remove_dir_all(&dir).map_err(|err| Error::io(&dir, err))?;
            }
        }
        Ok(())
    }

    /// Enables or disables a plugin; a disabled plugin never starts.
    ///
    /// # Errors
    ///
    /// [`Error::NotInstalled`], and the store's own errors.
    pub fn set_enabled(&self, id: &str, enabled: bool) -> Result<(), Error> {
        let _lock = self.lock_exclusive()?;
        let mut record = self.read_record()?;
        let plugin = record
            .plugins
            .iter_mut()
            .find(|p| p.id == id)
            .ok_or_else(|| Error::NotInstalled(id.to_owned()))?;
        if plugin.enabled != enabled {
            plugin.enabled = enabled;
            self.write_record(&record)?;
        }
        Ok(())
    }
}

/// 16 random lowercase hex digits for temporary names.
pub(crate) fn random_suffix() -> String {
    let mut bytes = [0u8; 8];
    // A failing OS generator only weakens the uniqueness of a temporary name; the pid and the
    // clock still separate concurrent writers.
    if getrandom::fill(&mut bytes).is_err() {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        bytes = (nanos ^ u64::from(std::process::id()).rotate_left(32)).to_le_bytes();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests;
