//! Helpers shared by the tests of sidewire's crates, so each lives once: [`within`] (await a
//! future under a deadline, failing the test with what it waited for), [`eventually`] (poll a
//! condition until it holds, under a deadline) and [`mutations`] (a text broken at one
//! place in every small way, for tests that hold a quick reader to a reference one). Checks of the process table (`/proc`) are
//! not here: they live once in `sidewire_process::testing`, next to the `/proc` reader the
//! reaper uses.
//!
//! It is **not** a product crate: only `[dev-dependencies]` name it, it is never published, and
//! it creates no runtime (the helpers run on the test's own).

use std::future::Future;
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

/// `text` broken at byte `at` (at most its length) in every small way: cut there, the byte
/// there removed, replaced by each of `bytes`, and each of `bytes` inserted there. Only the
/// results that are UTF-8 are kept.
pub fn mutations(text: &str, at: usize, bytes: &[u8]) -> Vec<String> {
    let text = text.as_bytes();
    let at = at.min(text.len());
    let mut broken = vec![text[..at].to_vec()];
    if at < text.len() {
        let mut cut = text.to_vec();
        cut.remove(at);
        broken.push(cut);
    }
    for &byte in bytes {
        if at < text.len() {
            let mut changed = text.to_vec();
            changed[at] = byte;
            broken.push(changed);
        }
        let mut inserted = text.to_vec();
        inserted.insert(at, byte);
        broken.push(inserted);
    }
    broken
        .into_iter()
        .filter_map(|bytes| String::from_utf8(bytes).ok())
        .collect()
}

#[cfg(test)]
mod tests;
