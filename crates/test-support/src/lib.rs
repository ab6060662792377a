//! Helpers shared by the tests of sidewire's crates, so each lives once: [`within`] (await a
//! future under a deadline, failing the test with what it waited for), [`eventually`] (poll a
//! condition until it holds, under a deadline) and [`lock`] (a mutex guard that ignores
//! poisoning, so one failed test does not cascade). Checks of the process table (`/proc`) are
//! not here: they live once in `sidewire_process::testing`, next to the `/proc` reader the
//! reaper uses.
//!
//! It is **not** a product crate: only `[dev-dependencies]` name it, it is never published, and
//! it creates no runtime (the helpers run on the test's own).

use std::future::Future;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

/// How often [`eventually`] looks again.
pub const POLL: Duration = Duration::from_millis(10);

/// Awaits `future` within `limit`; panics naming `what` and the limit when it does not finish.
///
/// Cancel safety: dropping it drops `future`.
pub async fn within<T>(limit: Duration, what: &str, future: impl Future<Output = T>) -> T {
    match tokio::time::timeout(limit, future).await {
        Ok(value) => value,
        Err(_) => panic!("timed out after {limit:?} waiting for {what}"),
    }
}

/// Polls `check` every [`POLL`] until it holds; panics naming `what` after `limit`.
///
/// Cancel safety: cancel safe (it holds nothing but `check`).
pub async fn eventually(limit: Duration, what: &str, mut check: impl FnMut() -> bool) {
    within(limit, what, async {
        while !check() {
            tokio::time::sleep(POLL).await;
        }
    })
    .await;
}

/// Locks `mutex`, taking the data even if a panicking test poisoned it.
pub fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests;
