//! Small synchronisation helpers shared by every layer of the crate (the transports, the
//! protocol core and the host), kept apart so none of them imports another for them.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Locks a mutex, ignoring poisoning: every guarded value in this crate is plain data that a
/// panic elsewhere cannot leave half-updated.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
