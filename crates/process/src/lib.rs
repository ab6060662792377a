//! Supervised child processes for sidewire's hosts (the extension host's sidecars and MCP
//! stdio servers): the one place that knows how a child is started, watched and ended. A child
//! is spawned without a shell from a path ([`resolve`] finds one on `PATH`, asking the login
//! shell only on a miss); it leads its own process group, gets `PR_SET_PDEATHSIG(SIGKILL)` so a
//! host killed outright takes it along, and its whole group is killed synchronously when the
//! last [`Process`] is dropped (no runtime needed). Its stderr is always drained into a bounded
//! tail redacted by one [`Redactor`], its end is a typed [`Exit`], and [`Process::close`] is the
//! bounded close sequence ([`CloseBudgets`]). The library spawns no task: [`Command::spawn`]
//! returns a [`Supervise`] future the caller runs. For binaries it offers
//! [`set_child_subreaper`] and [`kill_descendants`]; for both hosts, [`file::read`], the one
//! bounded, non-blocking read of a file a peer, a package or a config controls (it cannot block
//! on a FIFO, follows a final symlink only by policy, and reads nothing but a regular file within
//! a cap). It is not a protocol layer (it hands out
//! stdin and stdout and never reads them), not portable yet (Linux first; other Unixes lose the
//! death signal and the subreaper), and not a sandbox.
//!
//! **Main types:** [`Command`] (what to start), [`Process`] (the running child's handle) and
//! [`Supervise`] (the future that watches it).
//!
//! ```no_run
//! # async fn demo() -> Result<(), sidewire_process::Error> {
//! use sidewire_process::{CloseBudgets, Command, resolve};
//!
//! let resolved = resolve("my-server", None, None).await?;
//! let mut command = Command::new(resolved.program);
//! if let Some(path) = resolved.path {
//!     command.env("PATH", path);
//! }
//! let spawned = command.arg("--stdio").spawn()?;
//! let monitor = spawned.process.monitor();
//! // Run the supervision wherever the caller runs its futures (here: alongside the close).
//! let stdin = spawned.stdin;
//! let close = spawned
//!     .process
//!     .close(CloseBudgets::MCP_STDIO, async move { drop(stdin) });
//! let (closed, _) = tokio::join!(close, spawned.supervise);
//! println!("{:?} after {:?}: {}", closed.exit, closed.step, monitor.stderr_tail());
//! # Ok(())
//! # }
//! ```

mod close;
mod command;
mod error;
mod exit;
pub mod file;
mod path;
mod process;
mod procfs;
mod reaper;
mod redact;
mod tail;

#[doc(hidden)]
pub mod testing;

pub use crate::close::{CloseBudgets, CloseStep, Closed};
pub use crate::command::{Command, Spawned};
pub use crate::error::Error;
pub use crate::exit::Exit;
pub use crate::path::{PROBE_BUDGET, Resolved, login_shell_path, resolve};
pub use crate::process::{Monitor, Process, STDERR_AFTER_EXIT, Supervise};
pub use crate::reaper::{kill_descendants, set_child_subreaper};
pub use crate::redact::{REDACTED, Redactor, is_secret_name};
pub use crate::tail::{LINE_CAP, STDERR_TARGET, TAIL_BYTES};
