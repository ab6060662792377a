//! Resource subscriptions through the gateway: the sessions' subscriptions counted per gateway
//! URI, the upstream subscribed to a resource while at least one session holds it, and the
//! upstream's `notifications/resources/updated` passed on to the sessions that hold it.
//!
//! Sessions tell of their changes ([`Subscriptions::changed`], from the server's
//! `Handler::subscription_changed`) and upstreams of their updates ([`Subscriptions::updated`]),
//! both without waiting; [`Gateway::watch`](crate::Gateway::watch) takes the work
//! ([`Subscriptions::next`]) and does it. Both kinds of work are coalesced by URI, so neither
//! grows with how often a client or an upstream repeats itself.

use std::collections::{BTreeSet, HashMap};
use std::sync::Mutex;

use tokio::sync::Notify;

/// The most gateway URIs held at once, all sessions together. A subscription past it is kept
/// by its session (answered `{}`) but not made upstream, so it hears of no update.
pub const MAX_HELD_URIS: usize = 4096;

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The gateway's resource subscriptions.
#[derive(Debug, Default)]
pub(crate) struct Subscriptions {
    state: Mutex<State>,
    /// Work was added.
    work: Notify,
}

#[derive(Debug, Default)]
struct State {
    /// Gateway URI → how many sessions hold it.
    held: HashMap<String, usize>,
    /// URIs whose upstream subscription may have to change.
    dirty: BTreeSet<String>,
    /// Held URIs an upstream said changed, not yet told.
    updated: BTreeSet<String>,
}

/// What [`Subscriptions::next`] hands over.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Work {
    /// Each URI whose upstream subscription may have to change, and whether it should exist.
    pub(crate) subscribe: Vec<(String, bool)>,
    /// The URIs to tell the sessions of.
    pub(crate) updated: Vec<String>,
}

impl Subscriptions {
    /// One session subscribed to `uri` (`on`) or stopped.
    pub(crate) fn changed(&self, uri: &str, on: bool) {
        let mut state = lock(&self.state);
        let full = state.held.len() >= MAX_HELD_URIS;
        let dirty = if on {
            match state.held.get_mut(uri) {
                Some(count) => {
                    *count += 1;
                    false
                }
                None if full => false,
                None => {
                    state.held.insert(uri.to_owned(), 1);
                    true
                }
            }
        } else {
            match state.held.get_mut(uri) {
                Some(count) if *count > 1 => {
                    *count -= 1;
                    false
                }
                Some(_) => {
                    state.held.remove(uri);
                    true
                }
                None => false,
            }
        };
        if dirty {
            state.dirty.insert(uri.to_owned());
            drop(state);
            self.work.notify_one();
        }
    }

    /// An upstream said the resource at gateway URI `uri` changed: told to the sessions that
    /// hold it (nothing when none does).
    pub(crate) fn updated(&self, uri: String) {
        let mut state = lock(&self.state);
        if state.held.contains_key(&uri) {
            state.updated.insert(uri);
            drop(state);
            self.work.notify_one();
        }
    }

    /// Waits until there is work, and takes it.
    ///
    /// Cancel safety: cancel safe (the work is taken only as it is returned).
    pub(crate) async fn next(&self) -> Work {
        loop {
            let notified = self.work.notified();
            {
                let mut state = lock(&self.state);
                if !state.dirty.is_empty() || !state.updated.is_empty() {
                    let dirty = std::mem::take(&mut state.dirty);
                    let subscribe = (dirty.into_iter())
                        .map(|uri| {
                            let wanted = state.held.contains_key(&uri);
                            (uri, wanted)
                        })
                        .collect();
                    let updated = std::mem::take(&mut state.updated).into_iter().collect();
                    return Work { subscribe, updated };
                }
            }
            notified.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now(subscriptions: &Subscriptions) -> Work {
        futures_util::FutureExt::now_or_never(subscriptions.next()).unwrap_or_default()
    }

    #[test]
    fn the_upstream_is_subscribed_while_one_session_holds_the_uri() {
        let subs = Subscriptions::default();
        subs.changed("a+x", true);
        subs.changed("a+x", true);
        assert_eq!(now(&subs).subscribe, [("a+x".to_owned(), true)]);
        subs.changed("a+x", false);
        assert_eq!(now(&subs), Work::default(), "one session still holds it");
        subs.changed("a+x", false);
        assert_eq!(now(&subs).subscribe, [("a+x".to_owned(), false)]);
        // An end never subscribed does not go below zero or ask for anything.
        subs.changed("a+x", false);
        assert_eq!(now(&subs), Work::default());
    }

    #[test]
    fn updates_are_told_only_for_held_uris_once_per_take() {
        let subs = Subscriptions::default();
        subs.updated("a+x".to_owned());
        assert_eq!(now(&subs), Work::default(), "nobody holds it");
        subs.changed("a+x", true);
        let _ = now(&subs);
        for _ in 0..1000 {
            subs.updated("a+x".to_owned());
        }
        assert_eq!(now(&subs).updated, ["a+x".to_owned()]);
    }

    #[test]
    fn past_the_bound_a_uri_is_not_subscribed_upstream() {
        let subs = Subscriptions::default();
        for n in 0..MAX_HELD_URIS {
            subs.changed(&format!("a+{n}"), true);
        }
        assert_eq!(now(&subs).subscribe.len(), MAX_HELD_URIS);
        subs.changed("a+over", true);
        assert_eq!(now(&subs), Work::default());
        subs.updated("a+over".to_owned());
        assert_eq!(now(&subs), Work::default());
    }
}
