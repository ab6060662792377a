//! Finding the program for a command: a path when it contains `/`, else the current `PATH`,
//! and only on a miss the `PATH` of the user's login shell.
//!
//! A host started from a desktop launcher inherits a thin `PATH` (no nvm, Homebrew or
//! `~/.local/bin`), so `npx` and `uvx` are "not found" although they work in a terminal. When a
//! command is not on the current `PATH`, the login shell is asked for its `PATH` once per
//! process (`$SHELL -l -c`, 2 s budget, no input, its own process group killed on timeout), its
//! entries are appended where missing, and the merged `PATH` is searched. The answer, even an
//! empty one, is cached for the life of the process; a probe whose caller was cancelled is not
//! cached, so the next caller probes again. A command found on the current `PATH` runs no
//! shell at all (the probe costs 0.1–0.9 s).

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::sync::OnceCell;

use crate::command::Command;
use crate::error::Error;
use crate::process::STDERR_AFTER_EXIT;

/// How long the login shell gets to print its `PATH`.
pub const PROBE_BUDGET: Duration = Duration::from_secs(2);

/// Marks the line holding the answer, since login scripts may print anything.
const MARKER: &str = "__SIDEWIRE_PATH__=";

/// The most of the probe's output read: a login script that floods stdout must not grow memory
/// without limit.
const PROBE_OUTPUT_CAP: u64 = 1024 * 1024;

static LOGIN_PATH: OnceCell<Option<OsString>> = OnceCell::const_new();

/// A resolved command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// The program to run.
    pub program: PathBuf,
    /// The `PATH` to give the child: `Some` only when the login-shell probe ran and the
    /// program was found on the merged `PATH`, so the child sees what found it. `None`: the
    /// child keeps the `PATH` it would have had.
    pub path: Option<OsString>,
}

/// Resolves `command` for spawning.
///
/// With a `/` it is a path, relative to `dir` (else to the current directory), and must be an
/// executable file. Otherwise it is looked up on `path` (the `PATH` the child will get; `None`:
/// the current process's), skipping relative entries (they would depend on the child's working
/// directory); only if it is not there is the login shell probed (see the module docs) and the
/// merged `PATH` searched. The error of a miss says where it looked and how to fix it.
///
/// # Cancel safety
///
/// Cancel safe: a cancelled probe is killed with its process group and not cached.
pub async fn resolve(
    command: &str,
    path: Option<&OsStr>,
    dir: Option<&Path>,
) -> Result<Resolved, Error> {
    if command.contains('/') {
        return resolve_path(command, dir).map(|program| Resolved {
            program,
            path: None,
        });
    }
    let current = std::env::var_os("PATH").unwrap_or_default();
    let base = path.unwrap_or(&current);
    if let Some(program) = search(command, base) {
        return Ok(Resolved {
            program,
            path: None,
        });
    }
    let login = login_shell_path().await;
    let merged = merge(base, login.as_deref());
    if merged.as_os_str() != base
        && let Some(program) = search(command, &merged)
    {
        return Ok(Resolved {
            program,
            path: Some(merged),
        });
    }
    Err(not_found(command, &merged))
}

fn not_found(command: &str, searched: &OsStr) -> Error {
    Error::NotFound {
        command: command.to_owned(),
        message: format!(
            "the command `{command}` was not found on PATH ({}), nor on your login shell's \
             PATH. A host started from a desktop launcher may not see your shell's PATH: give \
             the command as an absolute path (e.g. the output of `which {command}`), or set \
             PATH in the command's environment",
            shown_path(searched)
        ),
    }
}

/// At most this many characters of a searched `PATH` are shown in an error: a long `PATH`
/// would bury the advice after it (and an error's text is cut further up).
const SHOWN_PATH_CHARS: usize = 300;

/// `path` for an error message: its entries once each, as many whole ones as fit in
/// [`SHOWN_PATH_CHARS`], then how many more there are.
fn shown_path(path: &OsStr) -> String {
    let text = path.to_string_lossy();
    let entries: Vec<&str> = text.split(':').filter(|entry| !entry.is_empty()).collect();
    let mut shown = String::new();
    let mut count = 0;
    for entry in &entries {
        if count > 0 && shown.len() + 1 + entry.len() > SHOWN_PATH_CHARS {
            break;
        }
        if count > 0 {
            shown.push(':');
        }
        // A single entry longer than the bound is cut itself.
        shown.extend(entry.chars().take(SHOWN_PATH_CHARS));
        count += 1;
    }
    if count < entries.len() {
        shown.push_str(&format!(" and {} more entries", entries.len() - count));
    }
    shown
}

/// A command with a `/`: a path relative to `dir` or the current directory.
pub(crate) fn resolve_path(command: &str, dir: Option<&Path>) -> Result<PathBuf, Error> {
    let path = Path::new(command);
    let path = if path.is_absolute() {
        path.to_path_buf()
    } else {
        let base = match dir {
            Some(dir) => dir.to_path_buf(),
            None => std::env::current_dir().unwrap_or_default(),
        };
        base.join(path)
    };
    if is_executable(&path) {
        return Ok(path);
    }
    let why = if path.exists() {
        "is not an executable file"
    } else {
        "does not exist"
    };
    Err(Error::NotFound {
        command: command.to_owned(),
        message: format!("the command {} {why}", path.display()),
    })
}

/// The first executable `command` on the absolute entries of `path`.
pub(crate) fn search(command: &str, path: &OsStr) -> Option<PathBuf> {
    path.as_bytes()
        .split(|&b| b == b':')
        .map(|entry| Path::new(OsStr::from_bytes(entry)))
        .filter(|entry| entry.is_absolute())
        .map(|entry| entry.join(command))
        .find(|candidate| is_executable(candidate))
}

/// `base` followed by the entries of `extra` it lacks; empty entries are dropped.
pub(crate) fn merge(base: &OsStr, extra: Option<&OsStr>) -> OsString {
    let mut entries: Vec<&[u8]> = Vec::new();
    let extra = extra.map_or(&[][..], OsStr::as_bytes);
    for entry in base
        .as_bytes()
        .split(|&b| b == b':')
        .chain(extra.split(|&b| b == b':'))
    {
        if !entry.is_empty() && !entries.contains(&entry) {
            entries.push(entry);
        }
    }
    OsString::from_vec(entries.join(&b':'))
}

/// Whether `path` is a file with an execute bit.
pub(crate) fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .map(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// The login shell's `PATH`, probed once per process.
///
/// # Cancel safety
///
/// Cancel safe: a cancelled probe is killed with its process group and not cached.
pub async fn login_shell_path() -> Option<OsString> {
    LOGIN_PATH.get_or_init(probe).await.clone()
}

async fn probe() -> Option<OsString> {
    let shell = PathBuf::from(std::env::var_os("SHELL")?);
    if !shell.is_absolute() || !is_executable(&shell) {
        return None;
    }
    let found = probe_with(&shell).await;
    if found.is_none() {
        tracing::debug!(shell = %shell.display(), "the login shell did not report its PATH");
    }
    found
}

/// Asks `shell` for its login `PATH`, within [`PROBE_BUDGET`].
pub(crate) async fn probe_with(shell: &Path) -> Option<OsString> {
    // fish keeps PATH as a list, which "$PATH" would join with spaces.
    let path = if shell.file_name().is_some_and(|name| name == "fish") {
        "(string join : $PATH)"
    } else {
        "\"$PATH\""
    };
    let spawned = Command::new(shell)
        .args(["-l", "-c", &format!("printf '\\n{MARKER}%s\\n' {path}")])
        .tail_bytes(1)
        .spawn()
        .ok()?;
    let process = spawned.process;
    // No input: the pipe closes at once.
    drop(spawned.stdin);
    let mut stdout = spawned.stdout;
    let mut supervise = spawned.supervise;
    let mut out = Vec::new();
    let work = async {
        let mut limited = (&mut stdout).take(PROBE_OUTPUT_CAP);
        let read = limited.read_to_end(&mut out);
        tokio::pin!(read);
        // Supervision runs alongside, so a profile writing to stderr cannot block on the pipe;
        // once the shell is reaped, something it left behind holding stdout gets 250 ms.
        tokio::select! {
            _ = &mut read => {}
            _ = &mut supervise => {
                let _ = tokio::time::timeout(STDERR_AFTER_EXIT, read).await;
            }
        }
    };
    // On timeout the shell's whole group is killed (dropping `process` and `supervise`).
    let finished = tokio::time::timeout(PROBE_BUDGET, work).await.is_ok();
    drop(process);
    if !finished {
        tracing::debug!(shell = %shell.display(), "the login shell did not answer within 2 s");
    }
    parse_probe(&out)
}

/// The `PATH` from the last marker line of the probe's output.
pub(crate) fn parse_probe(output: &[u8]) -> Option<OsString> {
    output
        .split(|&b| b == b'\n')
        .rev()
        .find_map(|line| {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            line.strip_prefix(MARKER.as_bytes())
        })
        .filter(|path| !path.is_empty())
        .map(|path| OsString::from_vec(path.to_vec()))
}

#[cfg(test)]
mod tests;
