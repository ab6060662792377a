//! Running one hook: `sh -c COMMAND` in its own process group, the event's JSON on stdin, its
//! timeout, and its output capped.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::Value;
use sidewire_process::{Command, Spawned};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::settings::Hook;

/// A hook's timeout when its file gives none (Claude Code's: 60 s).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// The most a hook may write to stdout, and the stderr tail kept (1 MiB each): a hook whose
/// stdout goes over it fails, and its group is killed.
pub const MAX_OUTPUT_BYTES: usize = 1024 * 1024;

/// How long the rest of a hook's stdout is read once its shell exited: it is in the pipe
/// already, unless a daemon that left the hook's group holds the pipe open.
const OUTPUT_AFTER_EXIT: Duration = Duration::from_millis(250);

/// The shell hooks run through (the format is a shell command line).
const SHELL: &str = "/bin/sh";

/// Where and how hooks run.
#[derive(Debug, Clone)]
pub struct RunContext {
    /// The project's root: the working directory, and the variables of the hook's dialect
    /// ([`HookDialect::project_dir_env`](crate::HookDialect::project_dir_env):
    /// `CLAUDE_PROJECT_DIR`, Gemini CLI's `GEMINI_PROJECT_DIR`, ...).
    pub project_dir: PathBuf,
    /// A hook's timeout when it gives none.
    pub default_timeout: Duration,
    /// The stdout cap and stderr tail, in bytes.
    pub max_output: usize,
}

impl RunContext {
    /// Hooks of the project at `project_dir`, with the defaults.
    pub fn new(project_dir: impl Into<PathBuf>) -> RunContext {
        RunContext {
            project_dir: project_dir.into(),
            default_timeout: DEFAULT_TIMEOUT,
            max_output: MAX_OUTPUT_BYTES,
        }
    }
}

/// How a hook run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Ended {
    /// It exited with this code.
    Exited(i32),
    /// A signal ended it.
    Signalled(i32),
    /// It ran past its timeout; its group was killed.
    TimedOut(Duration),
    /// Its stdout went over the cap; its group was killed.
    OutputTooLarge(usize),
    /// It could not be started (why).
    NotStarted(String),
}

/// One hook's run: how it ended, what it wrote, and how long it took.
#[derive(Debug, Clone)]
pub struct Ran {
    /// How it ended.
    pub ended: Ended,
    /// Its stdout (lossy UTF-8), at most the cap.
    pub stdout: String,
    /// The tail of its stderr, redacted of secret-looking values.
    pub stderr: String,
    /// How long it ran.
    pub elapsed: Duration,
}

/// Runs `hook` with `input` (the event's JSON) on its stdin. Its process group is killed once
/// the shell exits (so a daemon it forked goes too), on its timeout, when its stdout goes over
/// the cap, and when this future is dropped.
///
/// # Cancel safety
///
/// Dropping the future kills the hook's process group.
pub async fn run_hook(hook: &Hook, input: &Value, context: &RunContext) -> Ran {
    let started = Instant::now();
    let limit = hook.timeout.unwrap_or(context.default_timeout);
    let mut command = Command::new(SHELL);
    command
        .arg("-c")
        .arg(&hook.command)
        .current_dir(&context.project_dir)
        .tail_bytes(context.max_output);
    // The variables the hook's own tool names the project by (`CLAUDE_PROJECT_DIR`,
    // Gemini CLI's `GEMINI_PROJECT_DIR`, ...).
    for name in hook.source.dialect.project_dir_env() {
        command.env(*name, &context.project_dir);
    }
    let spawned = match command.spawn() {
        Ok(spawned) => spawned,
        Err(err) => {
            return Ran {
                ended: Ended::NotStarted(err.to_string()),
                stdout: String::new(),
                stderr: String::new(),
                elapsed: started.elapsed(),
            };
        }
    };
    let Spawned {
        process,
        mut stdin,
        mut stdout,
        supervise,
    } = spawned;
    let monitor = process.monitor();
    let payload = input.to_string();
    let cap = context.max_output;
    let work = async {
        // A hook need not read its input: a write that fails (it exited) is fine.
        let write = async {
            let _ = stdin.write_all(payload.as_bytes()).await;
            drop(stdin);
        };
        let mut out = Vec::new();
        let exit = {
            let read = async {
                let limit = u64::try_from(cap).unwrap_or(u64::MAX).saturating_add(1);
                let _ = (&mut stdout).take(limit).read_to_end(&mut out).await;
                if out.len() > cap {
                    process.kill();
                }
            };
            let exited = async {
                let ((), exit, _) = tokio::join!(write, monitor.exited(), supervise);
                exit
            };
            tokio::pin!(read, exited);
            tokio::select! {
                () = &mut read => exited.await,
                exit = &mut exited => {
                    // The shell is gone and its group killed: what it wrote is in the pipe.
                    // A daemon that left the group may still hold the pipe open; it is not
                    // waited for (the binary's reaper ends it at exit).
                    let _ = tokio::time::timeout(OUTPUT_AFTER_EXIT, &mut read).await;
                    exit
                }
            }
        };
        (out, exit)
    };
    let Ok((out, exit)) = tokio::time::timeout(limit, work).await else {
        process.kill();
        return Ran {
            ended: Ended::TimedOut(limit),
            stdout: String::new(),
            stderr: monitor.stderr_tail(),
            elapsed: started.elapsed(),
        };
    };
    let (ended, stdout) = if out.len() > cap {
        (Ended::OutputTooLarge(cap), String::new())
    } else if let Some(code) = exit.code() {
        (
            Ended::Exited(code),
            String::from_utf8_lossy(&out).into_owned(),
        )
    } else {
        let signal = exit.signal().unwrap_or(0);
        (
            Ended::Signalled(signal),
            String::from_utf8_lossy(&out).into_owned(),
        )
    };
    Ran {
        ended,
        stdout,
        stderr: monitor.stderr_tail(),
        elapsed: started.elapsed(),
    }
}
