//! The bookkeeping of requests in flight, both ways, without IO (in the spirit of lsp-server's
//! `ReqQueue`): which of our requests wait for a response and until when, and which of the
//! peer's request ids are being served. The handles and the driver own the clock, the channels
//! and the lock; this module only decides, so its rules are tested without a runtime.
//! Deadlines are plain numbers (the peer keeps them as nanoseconds since its epoch).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use foldhash::fast::RandomState;

use crate::Id;
use crate::envelope::pending_key;

/// Our requests waiting for their responses, keyed by the integer id each was sent with.
///
/// An entry leaves exactly once, by whichever comes first: its response
/// ([`complete`](Self::complete)), the connection's owner failing it locally
/// ([`fail`](Self::fail)), its caller giving up ([`cancel`](Self::cancel)), its deadline
/// ([`expire`](Self::expire)) or the end of the connection ([`drain`](Self::drain)). Whoever
/// takes it gets its value; everyone after gets `None` (a late response, a cancel after the
/// answer, a timeout racing a response).
pub(crate) struct PendingTable<T> {
    // foldhash, not SipHash: one insert and one removal per request, keyed by our own counter.
    entries: HashMap<u64, Entry<T>, RandomState>,
}

struct Entry<T> {
    value: T,
    /// When the driver must next look at the entry: the sooner of its cap and its idle bound
    /// as last read (at insert, or at a sweep that found activity since).
    deadline: u64,
    due: Due,
}

/// When a request is due.
pub(crate) struct Due {
    /// Its absolute deadline.
    pub(crate) cap: u64,
    /// Its idle bound, if it has one: it is also due `after` past its last activity.
    pub(crate) idle: Option<IdleBound>,
}

/// An idle bound: a request is due once `after` passes with no activity. The activity stamp is
/// read only when the entry's deadline comes (a sweep), so activity costs one atomic store and
/// never touches the table or the timer.
pub(crate) struct IdleBound {
    pub(crate) after: Duration,
    /// The last activity, in nanoseconds since the epoch the deadlines count from.
    pub(crate) stamp: Arc<AtomicU64>,
}

impl IdleBound {
    /// When the request is due if no activity comes.
    pub(crate) fn due(&self) -> u64 {
        let after = u64::try_from(self.after.as_nanos()).unwrap_or(u64::MAX);
        self.stamp.load(Ordering::Acquire).saturating_add(after)
    }
}

impl Due {
    /// The sooner of the cap and the idle bound.
    fn next(&self) -> u64 {
        self.idle
            .as_ref()
            .map_or(self.cap, |idle| idle.due().min(self.cap))
    }
}

/// Why an entry expired.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Expiry {
    /// Its cap passed.
    Deadline,
    /// Its idle bound (this long) passed with no activity, before its cap.
    Idle(Duration),
}

/// What [`PendingTable::expire`] took.
pub(crate) struct Expired<T> {
    /// The values of the entries that became due, with why, earliest first (ties by id).
    pub(crate) values: Vec<(T, Expiry)>,
    /// The earliest deadline still pending, if any.
    pub(crate) next_deadline: Option<u64>,
}

impl<T> PendingTable<T> {
    pub(crate) fn new() -> Self {
        PendingTable {
            entries: HashMap::default(),
        }
    }

    /// How many requests are pending.
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// Records a request sent with `id`, due as `due` says, and returns the first deadline the
    /// driver must wake for it. Ids come from the peer's counter and are never reused, so this
    /// never replaces an entry.
    pub(crate) fn insert(&mut self, id: u64, due: Due, value: T) -> u64 {
        let deadline = due.next();
        let previous = self.entries.insert(
            id,
            Entry {
                value,
                deadline,
                due,
            },
        );
        debug_assert!(previous.is_none(), "request id {id} reused while pending");
        deadline
    }

    /// Takes the entry a response answers. `id_token` is the response's raw `id` member: our
    /// ids are integers, so only an integer token can name one (`"7"` the string never names
    /// request 7).
    pub(crate) fn complete(&mut self, id_token: &str) -> Option<T> {
        self.take(pending_key(id_token)?)
    }

    /// Takes the entry a skipped oversized response answered: the one its first bytes name
    /// (`named`), if that one is pending, or else the only one pending. `None` when neither
    /// rule picks one.
    pub(crate) fn complete_oversized(&mut self, named: Option<u64>) -> Option<T> {
        let id = named
            .filter(|id| self.entries.contains_key(id))
            .or_else(|| match self.entries.len() {
                1 => self.entries.keys().next().copied(),
                _ => None,
            })?;
        self.take(id)
    }

    /// Takes the entry of request `id`, if it is pending (a frame that did not decode named it).
    pub(crate) fn complete_named(&mut self, id: u64) -> Option<T> {
        self.take(id)
    }

    /// Takes the entry of the request sent with `id`, which the connection's owner fails
    /// locally. Our ids are integers, so only an integer id names one (`Id::string("7")` never
    /// names request 7); an id that names nothing pending takes nothing, so a failure can
    /// never end a different request (ids are never reused).
    pub(crate) fn fail(&mut self, id: &Id) -> Option<T> {
        self.take(id.pending_key()?)
    }

    /// Takes the entry of a request its caller abandoned.
    pub(crate) fn cancel(&mut self, id: u64) -> Option<T> {
        self.take(id)
    }

    /// Takes every entry due at `now` (a deadline equal to `now` is due) and says which
    /// deadline comes next. An entry whose idle bound came but saw activity since is not due:
    /// its deadline moves to the new bound (never past its cap).
    pub(crate) fn expire(&mut self, now: u64) -> Expired<T> {
        let mut due: Vec<(u64, u64, Expiry)> = Vec::new();
        for (id, entry) in &mut self.entries {
            if entry.deadline > now {
                continue;
            }
            let expiry = match &entry.due.idle {
                Some(_) if entry.due.cap <= now => Expiry::Deadline,
                Some(idle) => {
                    let next = entry.due.next();
                    if next > now {
                        entry.deadline = next;
                        continue;
                    }
                    Expiry::Idle(idle.after)
                }
                None => Expiry::Deadline,
            };
            due.push((entry.deadline, *id, expiry));
        }
        due.sort_unstable_by_key(|&(deadline, id, _)| (deadline, id));
        let values = due
            .into_iter()
            .filter_map(|(_, id, expiry)| Some((self.take(id)?, expiry)))
            .collect();
        let next_deadline = self.entries.values().map(|entry| entry.deadline).min();
        Expired {
            values,
            next_deadline,
        }
    }

    /// Takes every entry (the connection ended).
    pub(crate) fn drain(&mut self) -> Vec<T> {
        self.entries.drain().map(|(_, entry)| entry.value).collect()
    }

    fn take(&mut self, id: u64) -> Option<T> {
        self.entries.remove(&id).map(|entry| entry.value)
    }
}

/// The ids of the peer's requests being served (started or waiting for a slot).
///
/// The duplicate-id rule lives here: a request whose id is still being served is refused (and
/// answered `-32600`), and the earlier one is unaffected; the id is free again once the earlier
/// request's response is queued, or when the connection closes.
#[derive(Default)]
pub(crate) struct InFlightIds {
    // The peer picks these ids. foldhash (randomly seeded, as hashbrown's default) rather than
    // SipHash: the set never holds more than the connection's limits on requests served and
    // waiting (`max_concurrent_requests` + `max_queued_requests`), so even ids chosen to
    // collide cost at most that many comparisons per request.
    ids: HashSet<Id, RandomState>,
}

/// A request reused an id still being served.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct IdInUse;

impl InFlightIds {
    /// Whether a request with `id` may start.
    pub(crate) fn check(&self, id: &Id) -> Result<(), IdInUse> {
        if self.ids.contains(id) {
            Err(IdInUse)
        } else {
            Ok(())
        }
    }

    /// Records that a request with `id` started (after [`check`](Self::check) allowed it).
    pub(crate) fn start(&mut self, id: Id) {
        self.ids.insert(id);
    }

    /// The request with `id` was answered: the id is free again.
    pub(crate) fn finish(&mut self, id: &Id) {
        self.ids.remove(id);
    }

    /// Forgets every id (the connection closed, and the requests were dropped).
    pub(crate) fn clear(&mut self) {
        self.ids.clear();
    }
}

#[cfg(test)]
mod tests;
