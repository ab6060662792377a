//! Per-session instances of stateful servers: a server marked stateful
//! ([`GatewayConfig::stateful`](crate::GatewayConfig::stateful)) gets one instance of its own
//! per client session, started on the session's first use, closed when the session ends or
//! the instance has been idle for [`GatewayConfig::instance_idle`](crate::GatewayConfig),
//! and never more than [`GatewayConfig::max_instances`](crate::GatewayConfig) at once.
//!
//! Each instance is one more server in the gateway's upstream host, under the name
//! `<server>#<n>` (the `#` keeps it apart from every configured name the host lists); the
//! gateway's view never shows it (the view comes from the shared instance, which the
//! listings, and the requests that belong to no session, use).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use sidewire_mcp::{McpHost, ServerSpec};
use sidewire_mcp_server::SessionKey;
use tokio::sync::OnceCell;

/// How many instances of stateful servers run at once, by default (each is a process or a
/// connection).
pub const DEFAULT_MAX_INSTANCES: usize = 16;

/// How long an instance may go unused before it is closed, by default.
pub const DEFAULT_INSTANCE_IDLE: Duration = Duration::from_secs(10 * 60);

/// The character between a server's name and its instance number.
const INSTANCE_MARK: char = '#';

/// The configured server an instance's host name belongs to (`notes#3` → `notes`); a
/// configured name is itself.
pub(crate) fn configured_name(host_name: &str) -> &str {
    host_name
        .rsplit_once(INSTANCE_MARK)
        .filter(|(_, n)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        .map_or(host_name, |(server, _)| server)
}

/// Why a session's instance could not be had.
#[derive(Debug)]
pub(crate) enum LeaseError {
    /// Every instance is in use by a call, and there are `max` of them.
    Full { max: usize },
    /// The instance did not start.
    Start(sidewire_mcp::Error),
}

/// One session's instance of one server.
struct Slot {
    /// Its name in the host.
    name: String,
    started: OnceCell<()>,
    /// Calls holding it now.
    busy: AtomicUsize,
    last_used: Mutex<Instant>,
}

/// The instances running now, by session and configured server.
pub(crate) struct Instances {
    max: usize,
    idle: Duration,
    next: AtomicU64,
    slots: Mutex<HashMap<(SessionKey, String), Arc<Slot>>>,
}

/// A call's hold on an instance: while it lives, the instance is neither reaped nor evicted.
pub(crate) struct Lease {
    slot: Arc<Slot>,
}

impl Lease {
    /// The instance's name in the host.
    pub(crate) fn name(&self) -> &str {
        &self.slot.name
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        *lock(&self.slot.last_used) = Instant::now();
        self.slot.busy.fetch_sub(1, Ordering::AcqRel);
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Instances {
    pub(crate) fn new(max: usize, idle: Duration) -> Self {
        Instances {
            max: max.max(1),
            idle,
            next: AtomicU64::new(1),
            slots: Mutex::default(),
        }
    }

    /// How long an instance may sit unused.
    pub(crate) fn idle(&self) -> Duration {
        self.idle
    }

    /// How many instances there are (started or starting).
    pub(crate) fn len(&self) -> usize {
        lock(&self.slots).len()
    }

    /// `session`'s instance of `spec`, started in `host` on first use. When the table is
    /// full, the longest unused idle instance is closed to make room.
    ///
    /// Cancel safety: dropping the future abandons a start in flight (its process is killed);
    /// the next call starts the instance again.
    pub(crate) async fn lease(
        &self,
        host: &McpHost,
        session: SessionKey,
        spec: &ServerSpec,
    ) -> Result<Lease, LeaseError> {
        let (slot, evicted) = {
            let mut slots = lock(&self.slots);
            let key = (session, spec.name().to_owned());
            let mut evicted = None;
            let slot = match slots.get(&key) {
                Some(slot) => Arc::clone(slot),
                None => {
                    if slots.len() >= self.max {
                        let victim = (slots.iter())
                            .filter(|(_, slot)| slot.busy.load(Ordering::Acquire) == 0)
                            .min_by_key(|(_, slot)| *lock(&slot.last_used))
                            .map(|(key, _)| key.clone());
                        let Some(victim) = victim else {
                            return Err(LeaseError::Full { max: self.max });
                        };
                        evicted = slots.remove(&victim).map(|slot| slot.name.clone());
                    }
                    let n = self.next.fetch_add(1, Ordering::Relaxed);
                    let slot = Arc::new(Slot {
                        name: format!("{}{INSTANCE_MARK}{n}", spec.name()),
                        started: OnceCell::new(),
                        busy: AtomicUsize::new(0),
                        last_used: Mutex::new(Instant::now()),
                    });
                    slots.insert(key, Arc::clone(&slot));
                    slot
                }
            };
            slot.busy.fetch_add(1, Ordering::AcqRel);
            (slot, evicted)
        };
        let lease = Lease {
            slot: Arc::clone(&slot),
        };
        if let Some(name) = evicted {
            tracing::debug!(instance = %name, "closing the longest unused instance to make room");
            let _ = host.remove(&name).await;
        }
        let started = slot
            .started
            .get_or_try_init(|| host.add(spec.instance(&slot.name)))
            .await;
        if let Err(err) = started {
            // Forget the slot (if it is still this one), so the next call tries again.
            let mut slots = lock(&self.slots);
            let key = (session, spec.name().to_owned());
            if slots.get(&key).is_some_and(|kept| Arc::ptr_eq(kept, &slot)) {
                slots.remove(&key);
            }
            return Err(LeaseError::Start(err));
        }
        Ok(lease)
    }

    /// Forgets `session`'s instances; their names, to close.
    pub(crate) fn session_ended(&self, session: SessionKey) -> Vec<String> {
        let mut slots = lock(&self.slots);
        let ended: Vec<_> = (slots.keys())
            .filter(|(key, _)| *key == session)
            .cloned()
            .collect();
        ended
            .into_iter()
            .filter_map(|key| slots.remove(&key).map(|slot| slot.name.clone()))
            .collect()
    }

    /// Forgets the instances unused for the idle time and not in use; their names, to close.
    pub(crate) fn reap_idle(&self) -> Vec<String> {
        let mut slots = lock(&self.slots);
        let idle = self.idle;
        let mut reaped = Vec::new();
        slots.retain(|_, slot| {
            let keep =
                slot.busy.load(Ordering::Acquire) > 0 || lock(&slot.last_used).elapsed() < idle;
            if !keep {
                reaped.push(slot.name.clone());
            }
            keep
        });
        reaped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_instance_name_leads_back_to_its_server() {
        assert_eq!(configured_name("notes#12"), "notes");
        assert_eq!(configured_name("notes"), "notes");
        assert_eq!(configured_name("a#b#3"), "a#b");
        // Not an instance number: a configured name that happens to hold the mark.
        assert_eq!(configured_name("odd#name"), "odd#name");
        assert_eq!(configured_name("odd#"), "odd#");
    }
}
