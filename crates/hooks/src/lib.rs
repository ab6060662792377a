#![doc = include_str!("../README.md")]
//!
//! # Main types
//!
//! [`HookFiles`] (the hooks of the files users keep, read from [`Source`]s, with the
//! [`Warning`]s of what was not read), [`Hook`] (one command, its [`HookEvent`] and
//! [`Matcher`]), [`run_hook`] (one hook run: a [`Ran`]), [`answer`] and [`merge`] (what runs say,
//! as a [`HookDecision`]).
//!
//! # Cancel safety
//!
//! [`run_hook`], the one `async fn`: dropping its future kills the hook's process group.
#![cfg_attr(docsrs, feature(doc_cfg))]

mod decision;
mod error;
mod event;
mod matcher;
mod run;
mod runner;
mod settings;
mod trust;

pub use crate::decision::{Answer, HookDecision, answer, merge};
pub use crate::error::Error;
pub use crate::event::HookEvent;
pub use crate::matcher::{MAX_MATCHER_BYTES, Matcher};
pub use crate::run::{DEFAULT_TIMEOUT, Ended, MAX_OUTPUT_BYTES, Ran, RunContext, run_hook};
pub use crate::runner::{
    Armed, HookRun, HookRunner, Intercepted, MAX_PENDING_ALLOWS, decision_name,
};
pub use crate::settings::{
    Hook, HookDialect, HookFiles, MAX_FILE_BYTES, MAX_HOOKS_PER_FILE, MAX_TIMEOUT, Scope, Source,
    Warning,
};
pub use crate::trust::{Approvals, HookId, MAX_APPROVALS, MAX_APPROVALS_BYTES, Standing};

/// Locks `mutex`, taking the data of a poisoned one (a panic elsewhere leaves nothing half
/// written here: every critical section is one push or one removal).
pub(crate) fn lock<T>(mutex: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
