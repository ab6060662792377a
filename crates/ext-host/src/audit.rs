//! The audit log (spec §11): one JSON line per host `deny` turned into `allow`, appended to a
//! file and flushed to disk before the operation proceeds.
//!
//! Exactly one event is audited; `deny`, `continue` and `allow` over a host `allow` write
//! nothing. The record has exactly the six string members of §11.2. Writing is synchronous and
//! rare (it happens only when an extension overrides a denial), so it does not use the runtime.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::SystemTime;

use serde::Serialize;

use crate::Error;
use crate::util::{lock, rfc3339};

/// One audit line (§11.2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct AuditRecord {
    /// RFC 3339 UTC with a `Z` suffix.
    pub time: String,
    /// The responsible plugin id.
    pub plugin: String,
    /// Always `permission.decision`.
    pub point: String,
    /// Always `deny`.
    pub host_decision: String,
    /// `allow` (a chain member) or `replace` (the `permission` slot owner).
    pub extension_decision: String,
    /// The extension's redacted reason, or `""`.
    pub reason: String,
}

impl AuditRecord {
    pub(crate) fn new(plugin: &str, extension_decision: &str, reason: String) -> Self {
        AuditRecord {
            time: rfc3339(SystemTime::now()),
            plugin: plugin.to_owned(),
            point: "permission.decision".to_owned(),
            host_decision: "deny".to_owned(),
            extension_decision: extension_decision.to_owned(),
            reason,
        }
    }
}

/// The append-only audit file, opened on first use.
#[derive(Debug)]
pub(crate) struct AuditLog {
    path: PathBuf,
    file: Mutex<Option<File>>,
}

impl AuditLog {
    pub(crate) fn new(path: PathBuf) -> Self {
        AuditLog {
            path,
            file: Mutex::new(None),
        }
    }

    /// Appends one line and flushes it to disk.
    pub(crate) fn append(&self, record: &AuditRecord) -> Result<(), Error> {
        let mut line = serde_json::to_vec(record).expect("an audit record serializes");
        line.push(b'\n');
        let mut file = lock(&self.file);
        if file.is_none() {
            if let Some(dir) = self.path.parent() {
                std::fs::create_dir_all(dir).map_err(|err| Error::io(dir, err))?;
            }
            let opened = OpenOptions::new()
                .create(true)
                .append(true)
                .open(&self.path)
                .map_err(|err| Error::io(&self.path, err))?;
            *file = Some(opened);
        }
        let handle = file.as_mut().expect("opened above");
        // One write call per line: with O_APPEND, concurrent hosts never interleave inside it.
        handle
            .write_all(&line)
            .and_then(|()| handle.sync_data())
            .map_err(|err| Error::io(&self.path, err))
    }
}
