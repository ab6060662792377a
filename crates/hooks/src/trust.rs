//! [`Approvals`]: which project hooks the user approved, pinned by a hash of what they run, and
//! which hooks sidewire's own configuration marks required.
//!
//! A user's own hooks (`~/.claude/settings.json`) run; a project's run only once approved, the
//! consent model of a plugin install: what is approved is the hook's [`HookId`], a SHA-256 over
//! its file, event, matcher and command text, so a changed command (or the same command moved
//! to another file or event) is a hook nobody approved, and asks again.
//!
//! The approvals live in one JSON file sidewire owns (`$SIDEWIRE_HOME/hooks.json`), read
//! bounded, written whole to a temporary file and renamed over the old one.

use std::collections::BTreeMap;
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use sidewire_process::file::{self, Symlinks};

use crate::error::Error;
use crate::runner::Armed;
use crate::settings::{Hook, HookFiles, Scope};

/// The largest approvals file read.
pub const MAX_APPROVALS_BYTES: usize = 1024 * 1024;

/// The most hooks one approvals file holds.
pub const MAX_APPROVALS: usize = 4096;

/// What pins a hook: the SHA-256 of its file's path, its event, its matcher and its command.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct HookId(String);

impl HookId {
    /// The id of `hook`.
    pub fn of(hook: &Hook) -> HookId {
        let mut sha = Sha256::new();
        for part in [
            hook.source.path.to_string_lossy().as_bytes(),
            hook.event.name().as_bytes(),
            hook.matcher.text().as_bytes(),
            hook.command.as_bytes(),
        ] {
            sha.update(u64::try_from(part.len()).unwrap_or(u64::MAX).to_be_bytes());
            sha.update(part);
        }
        HookId(hex(&sha.finalize()))
    }

    /// The whole id (64 hex digits).
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Its first 12 digits, as `sidewire hooks list` shows it.
    pub fn short(&self) -> &str {
        &self.0[..12.min(self.0.len())]
    }

    /// Whether `prefix` (at least 6 digits) names it.
    pub fn starts_with(&self, prefix: &str) -> bool {
        prefix.len() >= 6 && self.0.starts_with(&prefix.to_ascii_lowercase())
    }
}

impl fmt::Display for HookId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut text = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        let _ = write!(text, "{byte:02x}");
    }
    text
}

/// Whether a hook may run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Standing {
    /// A user's own hook: it runs.
    User,
    /// A project hook the user approved (this exact command): it runs.
    Approved,
    /// A project hook nobody approved, or whose command changed since: it does not run.
    NotApproved,
}

impl Standing {
    /// Whether the hook runs.
    pub fn runs(self) -> bool {
        matches!(self, Standing::User | Standing::Approved)
    }

    /// As `sidewire hooks list` shows it.
    pub fn as_str(self) -> &'static str {
        match self {
            Standing::User => "user",
            Standing::Approved => "approved",
            Standing::NotApproved => "not approved",
        }
    }
}

/// One hook sidewire knows of, as the file keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Entry {
    /// The file it was approved in (shown; the id pins it).
    path: PathBuf,
    /// Its event.
    event: String,
    /// Its command, as approved.
    command: String,
    /// Approved to run (a project hook).
    #[serde(default)]
    approved: bool,
    /// Marked required.
    #[serde(default)]
    required: bool,
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileShape {
    version: u32,
    hooks: BTreeMap<HookId, Entry>,
}

/// The approvals file: which project hooks run, and which hooks are required.
#[derive(Debug)]
pub struct Approvals {
    path: PathBuf,
    hooks: BTreeMap<HookId, Entry>,
}

impl Approvals {
    /// The approvals kept at `path`; none when it does not exist.
    ///
    /// # Errors
    ///
    /// [`Error::is_file`]: it could not be read; [`Error::is_malformed`]: it is not an
    /// approvals file.
    pub fn load(path: impl Into<PathBuf>) -> Result<Approvals, Error> {
        let path = path.into();
        let text = match file::read_to_string(&path, MAX_APPROVALS_BYTES, Symlinks::Refuse) {
            Ok(text) => text,
            Err(err) if err.is_not_found() => {
                return Ok(Approvals {
                    path,
                    hooks: BTreeMap::new(),
                });
            }
            Err(err) => return Err(Error::File(err)),
        };
        let malformed = |message: String| Error::Malformed {
            path: path.clone(),
            json_path: "$".to_owned(),
            message,
        };
        let shape: FileShape =
            serde_json::from_str(&text).map_err(|err| malformed(err.to_string()))?;
        if shape.version != 1 {
            return Err(malformed(format!("version {} is not 1", shape.version)));
        }
        if shape.hooks.len() > MAX_APPROVALS {
            return Err(malformed(format!("more than {MAX_APPROVALS} hooks")));
        }
        Ok(Approvals {
            path,
            hooks: shape.hooks,
        })
    }

    /// Where it is kept.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether `hook` may run.
    pub fn standing(&self, hook: &Hook) -> Standing {
        if hook.source.scope == Scope::User {
            return Standing::User;
        }
        match self.hooks.get(&HookId::of(hook)) {
            Some(entry) if entry.approved => Standing::Approved,
            _ => Standing::NotApproved,
        }
    }

    /// Whether `hook` is marked required.
    pub fn is_required(&self, hook: &Hook) -> bool {
        self.hooks
            .get(&HookId::of(hook))
            .is_some_and(|entry| entry.required)
    }

    /// Approves `hook` (this exact command), marking it required or not.
    ///
    /// # Errors
    ///
    /// [`Error::is_malformed`] when the file would hold more than [`MAX_APPROVALS`] hooks.
    pub fn approve(&mut self, hook: &Hook, required: bool) -> Result<(), Error> {
        let id = HookId::of(hook);
        if !self.hooks.contains_key(&id) && self.hooks.len() >= MAX_APPROVALS {
            return Err(Error::Malformed {
                path: self.path.clone(),
                json_path: "hooks".to_owned(),
                message: format!("more than {MAX_APPROVALS} hooks"),
            });
        }
        self.hooks.insert(
            id,
            Entry {
                path: hook.source.path.clone(),
                event: hook.event.name().to_owned(),
                command: hook.command.clone(),
                approved: hook.source.scope != Scope::User,
                required,
            },
        );
        Ok(())
    }

    /// Takes back the approval and the required mark of the hook `id`; whether it had one.
    pub fn revoke(&mut self, id: &HookId) -> bool {
        self.hooks.remove(id).is_some()
    }

    /// Writes the file (a temporary file renamed over it; its directory made if need be).
    ///
    /// # Errors
    ///
    /// [`Error::is_io`]: the file could not be written.
    pub fn save(&self) -> Result<(), Error> {
        let io = |source| Error::Io {
            path: self.path.clone(),
            source,
        };
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(io)?;
        let shape = FileShape {
            version: 1,
            hooks: self.hooks.clone(),
        };
        let text = serde_json::to_string_pretty(&shape).map_err(|err| io(err.into()))?;
        let mut temp = tempfile_in(dir).map_err(io)?;
        temp.1.write_all(text.as_bytes()).map_err(io)?;
        temp.1.sync_all().map_err(io)?;
        std::fs::rename(&temp.0, &self.path).map_err(|err| {
            let _ = std::fs::remove_file(&temp.0);
            io(err)
        })
    }

    /// The hooks of `files` that may run, each with its required mark, in order; and the
    /// project hooks that may not, for one warning.
    pub fn arm(&self, files: &HookFiles) -> (Vec<Armed>, Vec<Hook>) {
        let mut armed = Vec::new();
        let mut held = Vec::new();
        for hook in &files.hooks {
            if self.standing(hook).runs() {
                armed.push(Armed {
                    hook: hook.clone(),
                    required: self.is_required(hook),
                });
            } else {
                held.push(hook.clone());
            }
        }
        (armed, held)
    }
}

/// A new file next to where the approvals go, named so that two writers never share one.
fn tempfile_in(dir: &Path) -> std::io::Result<(PathBuf, std::fs::File)> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.subsec_nanos());
    let path = dir.join(format!(".hooks.json.{}.{nanos}.tmp", std::process::id()));
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)?;
    Ok((path, file))
}
