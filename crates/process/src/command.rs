//! What to run and how: the [`Command`] builder, and spawning it into a supervised [`Process`].
//!
//! Spawning never goes through a shell: the program is a path (resolve a bare name with
//! [`resolve`](crate::resolve) first), arguments reach it verbatim. Every child leads its own
//! process group, gets `PR_SET_PDEATHSIG(SIGKILL)` between fork and exec, and has its stdin,
//! stdout and stderr piped; stderr belongs to the [`Supervise`] future.
//!
//! The `pre_exec` call that sets the death signal is the workspace's one `unsafe` (`unsafe_code`
//! is `deny` in this crate, `forbid` in the rest of the workspace). The child then checks that its
//! parent is still the process recorded before the fork, and refuses to exec if not: the host died
//! before the death signal was set, so it would never come.

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;

use rustix::process::{Pid, Signal};
use tokio::process::{ChildStdin, ChildStdout};

use crate::error::Error;
use crate::process::{Process, Supervise};
use crate::redact::Redactor;
use crate::tail::{Forward, TAIL_BYTES};

/// The nice value a low-priority child runs at.
const LOW_PRIORITY_NICE: i32 = 10;

/// A child process to start: program, arguments, environment, working directory, and how its
/// stderr is kept. Its `Debug` shows the environment's names, never its values.
#[derive(Clone)]
pub struct Command {
    program: PathBuf,
    args: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
    cwd: Option<PathBuf>,
    low_priority: bool,
    redactor: Redactor,
    forward: Option<Arc<str>>,
    tail_bytes: usize,
}

/// A started child: the owning [`Process`] handle, its stdin and stdout, and the [`Supervise`]
/// future the caller must run.
#[derive(Debug)]
pub struct Spawned {
    /// The owning handle; dropping its last clone kills the group.
    pub process: Process,
    /// The child's stdin; dropping it closes the pipe (the first step of a graceful close).
    pub stdin: ChildStdin,
    /// The child's stdout.
    pub stdout: ChildStdout,
    /// Drains stderr, reaps the child and publishes its exit. Run it (poll it to completion,
    /// on a task or inside a driver); until it runs, no exit is observed.
    pub supervise: Supervise,
}

impl std::fmt::Debug for Command {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let env: Vec<_> = self.env.iter().map(|(name, _)| name).collect();
        f.debug_struct("Command")
            .field("program", &self.program)
            .field("args", &self.args)
            .field("env", &env)
            .field("cwd", &self.cwd)
            .field("low_priority", &self.low_priority)
            .field("redactor", &self.redactor)
            .field("forward", &self.forward)
            .field("tail_bytes", &self.tail_bytes)
            .finish()
    }
}

impl Command {
    /// A command running `program`, which must be a path (absolute, or relative to the working
    /// directory when it contains a `/`): there is no implicit `PATH` lookup.
    pub fn new(program: impl Into<PathBuf>) -> Self {
        Command {
            program: program.into(),
            args: Vec::new(),
            env: Vec::new(),
            cwd: None,
            low_priority: false,
            redactor: Redactor::default(),
            forward: None,
            tail_bytes: TAIL_BYTES,
        }
    }

    /// Adds an argument, passed verbatim.
    pub fn arg(&mut self, arg: impl Into<OsString>) -> &mut Self {
        self.args.push(arg.into());
        self
    }

    /// Adds arguments, passed verbatim.
    pub fn args<I, S>(&mut self, args: I) -> &mut Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Sets a variable on top of the inherited environment (later settings win). Values of
    /// credential-named variables are added to the stderr tail's redactor.
    pub fn env(&mut self, name: impl Into<OsString>, value: impl Into<OsString>) -> &mut Self {
        self.env.push((name.into(), value.into()));
        self
    }

    /// Sets variables on top of the inherited environment, in order.
    pub fn envs<I, K, V>(&mut self, vars: I) -> &mut Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<OsString>,
        V: Into<OsString>,
    {
        self.env
            .extend(vars.into_iter().map(|(k, v)| (k.into(), v.into())));
        self
    }

    /// The child's working directory (default: the current one). It must exist.
    pub fn current_dir(&mut self, dir: impl Into<PathBuf>) -> &mut Self {
        self.cwd = Some(dir.into());
        self
    }

    /// Runs the child at nice 10, set in the child before exec so everything it starts
    /// inherits it.
    pub fn low_priority(&mut self, low: bool) -> &mut Self {
        self.low_priority = low;
        self
    }

    /// The redactor for the stderr tail and forwarded lines (default: token patterns only).
    /// The secrets of the variables given with [`env`](Self::env) are always added; pass
    /// [`Redactor::from_process_env`] (computed once) to hide the host's own secrets too.
    pub fn redactor(&mut self, redactor: Redactor) -> &mut Self {
        self.redactor = redactor;
        self
    }

    /// Also logs each stderr line, redacted, at `info` under the target
    /// [`STDERR_TARGET`](crate::STDERR_TARGET) with `process = label`. Lines are only split
    /// and redacted while a subscriber enables that target.
    pub fn forward_stderr(&mut self, label: impl Into<Arc<str>>) -> &mut Self {
        self.forward = Some(label.into());
        self
    }

    /// How many bytes of stderr the tail keeps (default [`TAIL_BYTES`]).
    pub fn tail_bytes(&mut self, bytes: usize) -> &mut Self {
        self.tail_bytes = bytes;
        self
    }

    /// The program to run.
    pub fn program(&self) -> &std::path::Path {
        &self.program
    }

    /// Starts the child. Must be called within a Tokio runtime with I/O enabled (the pipes and
    /// the child's reaping register with it).
    ///
    /// The death signal follows the *thread* that spawns: `PR_SET_PDEATHSIG` fires when that
    /// thread ends, not only when the process does. Spawn from a thread that lives as long as
    /// the child (a runtime worker or the main thread), never from `spawn_blocking` or a
    /// short-lived thread.
    pub fn spawn(&self) -> Result<Spawned, Error> {
        if !self.program.as_os_str().as_bytes().contains(&b'/') {
            return Err(Error::Invalid {
                message: format!(
                    "{:?} is not a path; resolve a command name with `resolve` first",
                    self.program
                ),
            });
        }
        if let Some(dir) = &self.cwd
            && !dir.is_dir()
        {
            return Err(Error::Invalid {
                message: format!("the working directory {} does not exist", dir.display()),
            });
        }
        let mut command = std::process::Command::new(&self.program);
        command
            .args(&self.args)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // A new process group led by the child, so the whole tree is signalled at once and a
            // terminal's ^C aimed at the host does not reach it.
            .process_group(0);
        if let Some(dir) = &self.cwd {
            command.current_dir(dir);
        }
        let parent = rustix::process::getpid();
        let low_priority = self.low_priority;
        // SAFETY: the closure runs in the child between fork and exec, where only
        // async-signal-safe operations are allowed. It makes three raw system calls through
        // rustix (prctl, getppid, setpriority), allocates nothing, takes no lock, and builds
        // its error with `from_raw_os_error`, which does not allocate either.
        #[allow(unsafe_code)]
        unsafe {
            command.pre_exec(move || in_child(parent, low_priority));
        }
        let mut command = tokio::process::Command::from(command);
        // We kill the group ourselves; this only covers a `Child` dropped unreaped.
        command.kill_on_drop(true);
        let mut child = command.spawn().map_err(|source| Error::Spawn {
            program: self.program.clone(),
            source,
        })?;
        let pid = child.id().expect("a child not yet waited for has an id");
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            unreachable!("all three pipes were requested");
        };
        let redactor = self.redactor.with(
            self.env
                .iter()
                .filter_map(|(k, v)| Some((k.to_str()?, v.to_str()?))),
        );
        let forward = self
            .forward
            .clone()
            .map(|label| Forward::new(label, redactor.clone()));
        let (process, supervise) =
            Process::start(pid, child, stderr, redactor, self.tail_bytes, forward);
        tracing::debug!(pid, program = %self.program.display(), "spawned a child process");
        Ok(Spawned {
            process,
            stdin,
            stdout,
            supervise,
        })
    }
}

/// Runs in the child between fork and exec (see the SAFETY comment at the call).
fn in_child(parent: Pid, low_priority: bool) -> std::io::Result<()> {
    rustix::process::set_parent_process_death_signal(Some(Signal::KILL))
        .map_err(|errno| std::io::Error::from_raw_os_error(errno.raw_os_error()))?;
    // The parent may have died between fork and the prctl: then the signal never comes, and we
    // have been re-parented. Refuse to exec (the child then exits at once).
    if rustix::process::getppid() != Some(parent) {
        return Err(std::io::Error::from_raw_os_error(
            rustix::io::Errno::SRCH.raw_os_error(),
        ));
    }
    if low_priority {
        // Raising one's own nice value never needs privileges; a failure (already nicer) is
        // harmless.
        let _ = rustix::process::setpriority_process(None, LOW_PRIORITY_NICE);
    }
    Ok(())
}
