//! The audit log (spec §11): one JSON line per host `deny` turned into `allow`, appended to a
//! file and made durable (`fdatasync`) before the verdict changes.
//!
//! Exactly one event is audited; `deny`, `continue` and `allow` over a host `allow` write
//! nothing. The record has exactly the six string members of §11.2; its `reason` (peer text) is
//! cut to [`AUDIT_REASON_BYTES`] on a character boundary and marked.
//!
//! The log is a security record, so writing it fails closed and never hangs the host:
//!
//! * The file is opened non-blocking (a FIFO in its place cannot block the open) and refused
//!   unless it is a regular file (a directory, a FIFO or a device such as `/dev/full`).
//! * The write and the sync run on Tokio's blocking pool under a deadline the caller gives (the
//!   remaining budget of the point). A write stuck in the kernel (a hung network file system)
//!   keeps its one blocking thread; every later append waits for the log's lock under its own
//!   deadline and fails, so a stuck disk costs one thread, not one per override.
//! * A failed write drops the cached handle (the next append reopens the file) and makes the
//!   next record start on a fresh line, so a partial line left by a full disk never swallows the
//!   next record.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use serde::Serialize;

use crate::util::rfc3339;

/// The most bytes of an extension's reason an audit record keeps; longer reasons are cut on a
/// character boundary and end with [`CUT_MARK`].
pub(crate) const AUDIT_REASON_BYTES: usize = 4096;

/// Appended to a reason that was cut.
const CUT_MARK: &str = "…[cut]";

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
    /// The extension's redacted reason, or `""`; at most 4 KiB (cut and marked beyond).
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
            reason: cut(reason, AUDIT_REASON_BYTES),
        }
    }
}

/// `text` if it fits in `max` bytes, else its longest prefix that fits with [`CUT_MARK`] after
/// it, cut on a character boundary.
pub(crate) fn cut(mut text: String, max: usize) -> String {
    if text.len() <= max {
        return text;
    }
    let mut end = max.saturating_sub(CUT_MARK.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    text.push_str(CUT_MARK);
    text
}

/// Why an audit record was not written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum AuditFailure {
    /// Opening, writing or syncing the file failed.
    #[error("cannot write the audit log {}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Something other than a regular file stands where the log should be.
    #[error("the audit log {} is not a regular file (it is a {kind})", path.display())]
    NotAFile { path: PathBuf, kind: &'static str },
    /// The write did not finish within its deadline (a stuck disk or file system).
    #[error("writing the audit log {} did not finish within {} ms", path.display(), deadline.as_millis())]
    Timeout { path: PathBuf, deadline: Duration },
}

impl AuditFailure {
    /// The failure and its cause on one line, each said once (for a trace entry or a warning).
    pub(crate) fn chain(&self) -> String {
        match self {
            AuditFailure::Io { source, .. } => format!("{self}: {source}"),
            _ => self.to_string(),
        }
    }
}

#[derive(Debug, Default)]
struct State {
    file: Option<File>,
    /// The last write failed part-way, possibly leaving a partial line.
    broken_line: bool,
}

/// The append-only audit file, opened on first use.
#[derive(Debug)]
pub(crate) struct AuditLog {
    path: Arc<PathBuf>,
    /// Held across the blocking write (moved into it), so at most one write runs per log.
    state: Arc<tokio::sync::Mutex<State>>,
}

impl AuditLog {
    pub(crate) fn new(path: PathBuf) -> Self {
        AuditLog {
            path: Arc::new(path),
            state: Arc::default(),
        }
    }

    /// Appends one line and makes it durable, within `deadline`.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future before the write started writes nothing; once the write started on
    /// the blocking pool it runs to its end, and the record may land although the caller gave
    /// up (an audit line for an override that was not applied is harmless; the reverse never
    /// happens).
    pub(crate) async fn append(
        &self,
        record: &AuditRecord,
        deadline: Duration,
    ) -> Result<(), AuditFailure> {
        let mut line = serde_json::to_vec(record).expect("an audit record serializes");
        line.push(b'\n');
        let path = Arc::clone(&self.path);
        let timeout = || AuditFailure::Timeout {
            path: self.path.to_path_buf(),
            deadline,
        };
        let work = async {
            let mut state = Arc::clone(&self.state).lock_owned().await;
            let task = tokio::task::spawn_blocking(move || write_line(&path, &mut state, &line));
            task.await.unwrap_or_else(|join| {
                Err(AuditFailure::Io {
                    path: self.path.to_path_buf(),
                    source: std::io::Error::other(join.to_string()),
                })
            })
        };
        tokio::time::timeout(deadline, work)
            .await
            .unwrap_or_else(|_| Err(timeout()))
    }
}

fn write_line(path: &Path, state: &mut State, line: &[u8]) -> Result<(), AuditFailure> {
    let io = |source| AuditFailure::Io {
        path: path.to_path_buf(),
        source,
    };
    if state.file.is_none() {
        state.file = Some(open(path)?);
    }
    let file = state.file.as_mut().expect("opened above");
    let mut buf;
    let bytes = if state.broken_line {
        buf = Vec::with_capacity(line.len() + 1);
        buf.push(b'\n');
        buf.extend_from_slice(line);
        &buf[..]
    } else {
        line
    };
    // One write call per line: with O_APPEND, concurrent hosts never interleave inside it.
    match file.write_all(bytes).and_then(|()| file.sync_data()) {
        Ok(()) => {
            state.broken_line = false;
            Ok(())
        }
        Err(err) => {
            state.broken_line = true;
            state.file = None;
            Err(io(err))
        }
    }
}

/// Opens the log for appending without blocking, creating it (and its directory) if needed,
/// and refuses anything but a regular file.
fn open(path: &Path) -> Result<File, AuditFailure> {
    let io = |at: &Path, source| AuditFailure::Io {
        path: at.to_path_buf(),
        source,
    };
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    if let Some(dir) = dir {
        std::fs::create_dir_all(dir).map_err(|err| io(dir, err))?;
    }
    // O_NONBLOCK: opening a FIFO for writing fails at once (ENXIO) when nobody reads it, and
    // never waits for a reader; on a regular file it changes nothing.
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open(path)
        .map_err(|err| io(path, err))?;
    let kind = file.metadata().map_err(|err| io(path, err))?.file_type();
    if !kind.is_file() {
        let kind = if kind.is_dir() {
            "directory"
        } else if kind.is_fifo() {
            "FIFO"
        } else if kind.is_char_device() || kind.is_block_device() {
            "device"
        } else if kind.is_socket() {
            "socket"
        } else {
            "special file"
        };
        return Err(AuditFailure::NotAFile {
            path: path.to_path_buf(),
            kind,
        });
    }
    // Make a newly created file's directory entry durable too.
    if let Some(dir) = dir {
        File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(|err| io(dir, err))?;
    }
    Ok(file)
}

#[cfg(test)]
mod tests;
