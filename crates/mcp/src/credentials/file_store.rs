//! [`FileStore`]: a [`TokenStore`] over one directory (the CLI's is `$SIDEWIRE_HOME/mcp/oauth/`),
//! one JSON file per [`StoreKey`], private to the user, replaced atomically, with a
//! cross-process lock per key.
//!
//! Layout: `<name>-<hash>.json` holds one [`StoredAuth`], where `<name>` is the server name
//! with every character outside `[A-Za-z0-9_-]` replaced by `_` (at most
//! [`MAX_STORED_NAME_CHARS`] characters) and `<hash>` is the first 16 hex digits of the SHA-256 of
//! the server name and resource URL, so any name is a safe, distinct file name. Beside it,
//! `<name>-<hash>.json.lock` is the key's `flock` (created on first use, never removed: a lock
//! file unlinked while another process has it open would let a third take a second lock on a
//! new file). Writes go to `.<name>-<hash>.json.<pid>-<n>.tmp` in the same directory, which is
//! fsynced, renamed over the record, and the directory fsynced, so a crash leaves the old record
//! or the new one. The directory is created `0700` and the files `0600` (Unix).
//!
//! A record is checked on load: at most [`MAX_STORED_RECORD_BYTES`], valid JSON, version
//! [`StoredAuth::VERSION`], and holding the key it is filed under. A file that fails any of
//! these is an [`io::Error`] naming it (`InvalidData`), never an empty record, so a corrupt
//! store is noticed instead of silently logging everybody out. [`list`](TokenStore::list)
//! reads at most [`MAX_STORED_RECORDS`] records.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write as _};
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use sha2::{Digest as _, Sha256};
use sidewire_process::file::Symlinks;

use super::store::{StoreGuard, TokenStore};
use super::types::{StoreKey, StoredAuth};

/// The largest record file read (1 MiB): a record is a few kilobytes; a larger file is refused
/// as corrupt rather than read whole.
pub const MAX_STORED_RECORD_BYTES: u64 = 1024 * 1024;
/// The most records [`list`](TokenStore::list) reads from one directory (4,096); a directory
/// with more record files is an error naming it.
pub const MAX_STORED_RECORDS: usize = 4096;
/// The most characters of the server name kept in a record's file name (64).
pub const MAX_STORED_NAME_CHARS: usize = 64;

const RECORD_SUFFIX: &str = ".json";
const LOCK_SUFFIX: &str = ".lock";
const TEMP_SUFFIX: &str = ".tmp";

/// Distinguishes the temporary files of one process (the pid distinguishes processes).
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// A [`TokenStore`] of one JSON file per server and resource in a directory (see the module
/// docs for the layout and the checks). Several stores, in one process or many, may share a
/// directory: each operation opens the files afresh.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileStore {
    dir: PathBuf,
}

impl FileStore {
    /// The store in `dir` (created, `0700`, on the first write or lock).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        FileStore { dir: dir.into() }
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file that holds `key`'s record.
    pub fn path_of(&self, key: &StoreKey) -> PathBuf {
        self.dir.join(file_name(key))
    }

    fn create_dir(&self) -> io::Result<()> {
        if let Some(parent) = self.dir.parent().filter(|p| !p.as_os_str().is_empty()) {
            fs::create_dir_all(parent).map_err(|err| named(parent, err))?;
        }
        match fs::DirBuilder::new().mode(0o700).create(&self.dir) {
            Ok(()) => Ok(()),
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists && self.dir.is_dir() => Ok(()),
            Err(err) => Err(named(&self.dir, err)),
        }
    }

    fn sync_dir(&self) -> io::Result<()> {
        File::open(&self.dir)
            .and_then(|dir| dir.sync_all())
            .map_err(|err| named(&self.dir, err))
    }
}

/// `<name>-<hash>.json` for `key` (see the module docs).
fn file_name(key: &StoreKey) -> String {
    let name: String = key
        .server
        .chars()
        .take(MAX_STORED_NAME_CHARS)
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut hasher = Sha256::new();
    // The lengths keep ("ab", "c") and ("a", "bc") apart.
    hasher.update((key.server.len() as u64).to_le_bytes());
    hasher.update(key.server.as_bytes());
    hasher.update(key.resource.as_bytes());
    let digest = hasher.finalize();
    let hash: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    format!("{name}-{hash}{RECORD_SUFFIX}")
}

/// `err` with `path` in its message (the kind kept).
fn named(path: &Path, err: io::Error) -> io::Error {
    io::Error::new(err.kind(), format!("{}: {err}", path.display()))
}

/// A corrupt record: `InvalidData` naming the file.
fn corrupt(path: &Path, detail: impl std::fmt::Display) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("{}: not a usable token record: {detail}", path.display()),
    )
}

/// Reads and checks the record at `path`; `Ok(None)` when there is no file.
fn read_record(path: &Path) -> io::Result<Option<StoredAuth>> {
    // Through the hosts' one bounded read: a record is written by this store only, by an atomic
    // rename, so a link, a FIFO or a device at its path is not a record (refused at once: a
    // FIFO must not hang every command that loads tokens), and neither is a file over the cap.
    let cap = usize::try_from(MAX_STORED_RECORD_BYTES).unwrap_or(usize::MAX);
    let bytes = match sidewire_process::file::read(path, cap, Symlinks::Refuse) {
        Ok(bytes) => bytes,
        Err(err) if err.is_not_found() => return Ok(None),
        // The message names the file; the I/O error's kind is kept.
        Err(err) if err.is_io() => return Err(err.into()),
        Err(err) => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("not a usable token record: {err}"),
            ));
        }
    };
    // The version first: a record of another version may have another shape.
    let value: serde_json::Value =
        serde_json::from_slice(&bytes).map_err(|err| corrupt(path, err))?;
    match value.get("version").and_then(serde_json::Value::as_u64) {
        Some(version) if version == u64::from(StoredAuth::VERSION) => {}
        Some(version) => {
            return Err(corrupt(
                path,
                format_args!(
                    "version {version}, this build reads {}",
                    StoredAuth::VERSION
                ),
            ));
        }
        None => return Err(corrupt(path, "no `version`")),
    }
    let record: StoredAuth = serde_json::from_value(value).map_err(|err| corrupt(path, err))?;
    Ok(Some(record))
}

/// Whether `name` is a record file's name (not a lock or temporary file).
fn is_record_name(name: &str) -> bool {
    name.ends_with(RECORD_SUFFIX) && !name.starts_with('.')
}

/// An exclusive `flock` on a key's lock file, released when the file closes.
struct FileLock {
    _file: File,
}

impl TokenStore for FileStore {
    fn load(&self, key: &StoreKey) -> io::Result<Option<StoredAuth>> {
        let path = self.path_of(key);
        let Some(record) = read_record(&path)? else {
            return Ok(None);
        };
        if record.server != key.server || record.resource != key.resource {
            return Err(corrupt(
                &path,
                format_args!(
                    "it holds server {:?} at {:?}, not {:?} at {:?}",
                    record.server, record.resource, key.server, key.resource
                ),
            ));
        }
        Ok(Some(record))
    }

    fn save(&self, key: &StoreKey, auth: &StoredAuth) -> io::Result<()> {
        let path = self.path_of(key);
        if auth.server != key.server || auth.resource != key.resource {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{}: the record is not for this key", path.display()),
            ));
        }
        self.create_dir()?;
        let mut text = serde_json::to_vec_pretty(auth).map_err(|err| corrupt(&path, err))?;
        text.push(b'\n');
        let temp = self.dir.join(format!(
            ".{}.{}-{}{TEMP_SUFFIX}",
            file_name(key),
            std::process::id(),
            TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let write = || -> io::Result<()> {
            let mut file = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&temp)?;
            file.write_all(&text)?;
            file.sync_all()?;
            fs::rename(&temp, &path)
        };
        write().map_err(|err| {
            let _ = fs::remove_file(&temp);
            named(&path, err)
        })?;
        // Make the rename itself durable.
        self.sync_dir()
    }

    fn remove(&self, key: &StoreKey) -> io::Result<bool> {
        let path = self.path_of(key);
        match fs::remove_file(&path) {
            Ok(()) => {
                self.sync_dir()?;
                Ok(true)
            }
            Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(err) => Err(named(&path, err)),
        }
    }

    fn list(&self) -> io::Result<Vec<StoredAuth>> {
        let entries = match fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(err) => return Err(named(&self.dir, err)),
        };
        let mut paths = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|err| named(&self.dir, err))?;
            let name = entry.file_name();
            if name.to_str().is_some_and(is_record_name) {
                if paths.len() == MAX_STORED_RECORDS {
                    return Err(io::Error::other(format!(
                        "{}: more than {MAX_STORED_RECORDS} token records",
                        self.dir.display()
                    )));
                }
                paths.push(entry.path());
            }
        }
        let mut records = Vec::with_capacity(paths.len());
        for path in paths {
            // A file removed since the directory was read is simply gone.
            let Some(record) = read_record(&path)? else {
                continue;
            };
            let key = StoreKey::new(record.server.clone(), record.resource.clone());
            if self.path_of(&key) != path {
                return Err(corrupt(
                    &path,
                    format_args!(
                        "it holds server {:?} at {:?}, whose file is {}",
                        record.server,
                        record.resource,
                        file_name(&key)
                    ),
                ));
            }
            records.push(record);
        }
        records.sort_by(|a, b| (&a.server, &a.resource).cmp(&(&b.server, &b.resource)));
        Ok(records)
    }

    fn try_lock(&self, key: &StoreKey) -> io::Result<Option<StoreGuard>> {
        self.create_dir()?;
        let mut path = self.path_of(key).into_os_string();
        path.push(LOCK_SUFFIX);
        let path = PathBuf::from(path);
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .mode(0o600)
            .open(&path)
            .map_err(|err| named(&path, err))?;
        match rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => Ok(Some(StoreGuard::new(FileLock { _file: file }))),
            Err(rustix::io::Errno::WOULDBLOCK) => Ok(None),
            Err(err) => Err(named(&path, err.into())),
        }
    }
}

#[cfg(test)]
mod tests;
