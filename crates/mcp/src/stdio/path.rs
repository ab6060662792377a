//! Finding the server's executable: the `PATH` a child gets, enriched from the user's login
//! shell, and command lookup with an error that says how to fix a miss.
//!
//! A host started from a desktop launcher inherits a thin `PATH` (no nvm, Homebrew or
//! `~/.local/bin`), so `npx` and `uvx` are "not found" although they work in a terminal. The
//! login shell is asked for its `PATH` once per process (`$SHELL -l -c`, 2 s budget, no stdin,
//! its own process group killed on timeout) and its entries are appended to the child's
//! `PATH` where missing. The answer, even an empty one, is cached for the life of the process;
//! a probe whose caller was cancelled is not cached, so the next caller probes again.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::sync::OnceCell;

use crate::Error;
use crate::error::Kind;

/// How long the login shell gets to print its `PATH`.
const PROBE_BUDGET: Duration = Duration::from_secs(2);
/// Marks the line holding the answer, since login scripts may print anything.
const MARKER: &str = "__SIDEWIRE_MCP_PATH__=";

static LOGIN_PATH: OnceCell<Option<String>> = OnceCell::const_new();

/// The login shell's `PATH`, probed once per process.
pub(crate) async fn login_shell_path() -> Option<String> {
    LOGIN_PATH.get_or_init(probe).await.clone()
}

async fn probe() -> Option<String> {
    let shell = std::env::var_os("SHELL")?;
    let shell = PathBuf::from(shell);
    if !shell.is_absolute() || !is_executable(&shell) {
        return None;
    }
    // fish keeps PATH as a list, which "$PATH" would join with spaces.
    let path = if shell.file_name().is_some_and(|name| name == "fish") {
        "(string join : $PATH)"
    } else {
        "\"$PATH\""
    };
    let mut child = tokio::process::Command::new(&shell)
        .args(["-l", "-c", &format!("printf '\\n{MARKER}%s\\n' {path}")])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .ok()?;
    let pid = child.id();
    let mut stdout = child.stdout.take()?;
    let read = async {
        use tokio::io::AsyncReadExt;
        let mut out = Vec::new();
        // Bounded: a login script that floods stdout must not grow memory without limit.
        let _ = (&mut stdout).take(1024 * 1024).read_to_end(&mut out).await;
        let _ = child.wait().await;
        out
    };
    match tokio::time::timeout(PROBE_BUDGET, read).await {
        Ok(out) => parse_probe(&String::from_utf8_lossy(&out)),
        Err(_) => {
            // The shell (or something its profile started) hangs: kill its whole group. The
            // child itself is reaped by tokio's kill-on-drop.
            if let Some(pid) = pid {
                crate::stdio::process::kill_group(pid, rustix::process::Signal::KILL);
            }
            tracing::debug!(shell = %shell.display(), "the login shell did not report its PATH within 2 s");
            None
        }
    }
}

/// The `PATH` from the last marker line of the probe's output.
pub(crate) fn parse_probe(output: &str) -> Option<String> {
    output
        .lines()
        .rev()
        .find_map(|line| line.trim_end_matches('\r').strip_prefix(MARKER))
        .map(str::to_owned)
        .filter(|path| !path.is_empty())
}

/// `base` followed by the entries of `extra` it lacks; empty entries are dropped.
pub(crate) fn merge(base: &str, extra: Option<&str>) -> String {
    let mut entries: Vec<&str> = Vec::new();
    for entry in base.split(':').chain(extra.unwrap_or("").split(':')) {
        if !entry.is_empty() && !entries.contains(&entry) {
            entries.push(entry);
        }
    }
    entries.join(":")
}

/// Finds the executable for `command`: a path when it contains `/` (relative to `dir`, else to
/// the current directory), otherwise the first match on `search` (relative entries skipped:
/// they would depend on the child's working directory).
pub(crate) fn resolve(command: &str, search: &str, dir: Option<&Path>) -> Result<PathBuf, Error> {
    if command.contains('/') {
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
        return Err(spawn_error(format!(
            "the server command {} {why}",
            path.display()
        )));
    }
    for entry in search.split(':') {
        let entry = Path::new(entry);
        if !entry.is_absolute() {
            continue;
        }
        let candidate = entry.join(command);
        if is_executable(&candidate) {
            return Ok(candidate);
        }
    }
    Err(spawn_error(format!(
        "the server command `{command}` was not found on PATH ({search}). A host started from a \
         desktop launcher may not see your shell's PATH: give `command` as an absolute path \
         (e.g. the output of `which {command}`), or set PATH in the server's `env`"
    )))
}

fn spawn_error(message: String) -> Error {
    Error::new(Kind::Spawn { message })
}

pub(crate) fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .map(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

#[cfg(test)]
mod tests;
