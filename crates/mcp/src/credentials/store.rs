//! Where tokens and client registrations are kept between runs: the [`TokenStore`] trait, and
//! [`MemoryStore`] for a process that keeps nothing. ([`FileStore`](super::FileStore), files
//! under `$SIDEWIRE_HOME`, is in `file_store.rs`.)

use sidewire_jsonrpc::lock;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::io;
use std::sync::{Arc, Mutex};

use super::types::{StoreKey, StoredAuth};

/// Holds a store's lock on one key until dropped.
pub struct StoreGuard(#[allow(dead_code)] Box<dyn Send>);

impl StoreGuard {
    /// A guard that releases whatever `held` releases when dropped.
    pub fn new(held: impl Send + 'static) -> Self {
        StoreGuard(Box::new(held))
    }
}

impl fmt::Debug for StoreGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("StoreGuard")
    }
}

/// Keeps each server's [`StoredAuth`]. Implementations must be safe to share between
/// connections (and, for a store on disk, between processes: see [`try_lock`]).
///
/// The methods are synchronous and quick (a small file or a map): they run on the connection's
/// driver.
///
/// [`try_lock`]: TokenStore::try_lock
pub trait TokenStore: Send + Sync + fmt::Debug + 'static {
    /// The record for `key`; `Ok(None)` when there is none. A record that cannot be read is an
    /// error that names it, never `None`.
    fn load(&self, key: &StoreKey) -> io::Result<Option<StoredAuth>>;

    /// Replaces the record for `key` (atomically: a reader sees the old record or the new one).
    fn save(&self, key: &StoreKey, auth: &StoredAuth) -> io::Result<()>;

    /// Removes the record for `key`; `Ok(false)` when there was none.
    fn remove(&self, key: &StoreKey) -> io::Result<bool>;

    /// Every record, ordered by server name.
    fn list(&self) -> io::Result<Vec<StoredAuth>>;

    /// Takes the exclusive lock on `key` if it is free (`Ok(None)` when another holder has it).
    /// A refresh holds it from loading the refresh token to saving the new tokens, so two
    /// processes never spend the same refresh token.
    fn try_lock(&self, key: &StoreKey) -> io::Result<Option<StoreGuard>>;
}

/// A store in memory: nothing survives the process. The default of an
/// [`Authorizer`](super::Authorizer).
#[derive(Debug, Default, Clone)]
pub struct MemoryStore {
    inner: Arc<Mutex<MemoryInner>>,
}

#[derive(Debug, Default)]
struct MemoryInner {
    records: BTreeMap<StoreKey, StoredAuth>,
    locked: BTreeSet<StoreKey>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        MemoryStore::default()
    }
}

struct MemoryLock {
    store: Arc<Mutex<MemoryInner>>,
    key: StoreKey,
}

impl Drop for MemoryLock {
    fn drop(&mut self) {
        lock(&self.store).locked.remove(&self.key);
    }
}

impl TokenStore for MemoryStore {
    fn load(&self, key: &StoreKey) -> io::Result<Option<StoredAuth>> {
        Ok(lock(&self.inner).records.get(key).cloned())
    }

    fn save(&self, key: &StoreKey, auth: &StoredAuth) -> io::Result<()> {
        lock(&self.inner).records.insert(key.clone(), auth.clone());
        Ok(())
    }

    fn remove(&self, key: &StoreKey) -> io::Result<bool> {
        Ok(lock(&self.inner).records.remove(key).is_some())
    }

    fn list(&self) -> io::Result<Vec<StoredAuth>> {
        Ok(lock(&self.inner).records.values().cloned().collect())
    }

    fn try_lock(&self, key: &StoreKey) -> io::Result<Option<StoreGuard>> {
        if !lock(&self.inner).locked.insert(key.clone()) {
            return Ok(None);
        }
        Ok(Some(StoreGuard::new(MemoryLock {
            store: Arc::clone(&self.inner),
            key: key.clone(),
        })))
    }
}
