//! The one poison-free `lock` of the workspace.
//!
//! It lives here because jsonrpc is the lowest crate that every crate taking a lock (ext-host,
//! ext-sdk, mcp, the CLI) already depends on; a crate of its own for one function
//! would be one more crate to publish.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Locks `mutex`, taking the data even if a thread panicked while holding it.
///
/// Every mutex in sidewire guards plain data (a table, a queue, a flag) that a panic elsewhere
/// cannot leave half-updated, so poisoning would only turn one panic into many. This is the
/// one helper for it, shared by the crates above (ext-host, ext-sdk, mcp, the CLI) and their
/// tests.
pub fn lock<T: ?Sized>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    #[test]
    fn a_poisoned_mutex_still_locks() {
        let mutex = Mutex::new(1);
        let _ = std::panic::catch_unwind(|| {
            let _guard = mutex.lock().unwrap();
            panic!("poison it");
        });
        assert!(mutex.is_poisoned());
        *super::lock(&mutex) += 1;
        assert_eq!(*super::lock(&mutex), 2);
    }
}
