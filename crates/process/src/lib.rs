#![doc = include_str!("../README.md")]
//!
//! # Main types
//!
//! [`Command`] (what to start; [`resolve`] finds the program), [`Process`] (the running child's
//! handle: [`Process::close`] with its [`CloseBudgets`], a [`Monitor`] of its [`Exit`] and
//! stderr tail) and [`Supervise`] (the future that watches it, which the caller runs). For
//! binaries, [`set_child_subreaper`] and [`kill_descendants`]; for both hosts, [`file::read`],
//! the one bounded, non-blocking read of a file a peer, a package or a config controls (it
//! cannot block on a FIFO, follows a final symlink only by policy, and reads nothing but a
//! regular file within a cap). Secrets are scrubbed from the tail by a [`Redactor`].
#![cfg_attr(docsrs, feature(doc_cfg))]

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
