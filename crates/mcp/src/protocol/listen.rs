//! `subscriptions/listen`: how a modern-era connection hears of changes.
//!
//! The modern era has no GET stream, no standing list_changed notices and no
//! `resources/subscribe`: a client that wants notices opens one long-lived
//! `subscriptions/listen` request naming what it wants (its [`Filter`]), and the notices arrive
//! on that request's stream (over HTTP, the POST's SSE answer; over stdio, interleaved as
//! usual). They reach the router like any notification, so a list_changed marks the list stale
//! for the debounced refresh and a `notifications/resources/updated` goes to
//! [`ClientHandler::on_resource_updated`](crate::ClientHandler::on_resource_updated). The
//! server acknowledges a listen first (`notifications/subscriptions/acknowledged`, naming the
//! part of the filter it honours) and ends it with an empty result, or not at all.
//!
//! The connection's listen loop ([`listen_loop`], run by the driver) keeps one listen open
//! while there is something to hear of: the lists that were listed (the `listed` bits) whose
//! capability says `listChanged`, and the subscribed URIs when the server's `resources`
//! capability says `subscribe`. Nothing in the legacy era, and nothing while the filter is
//! empty. When the wanted filter changes (a subscription, a first listing) the current listen
//! is closed (dropped: over HTTP the transport aborts its POST, over stdio
//! `notifications/cancelled` goes out) and the new one opened at once. A listen that ends (a
//! result, an error, a broken stream, the call's absolute cap) is opened again after a backoff
//! of [`FIRST_BACKOFF`] doubling to [`MAX_BACKOFF`], reset after a listen that lived
//! [`HEALTHY`]; there is no replay, so the lists it covered are re-listed (debounced). A
//! `-32601` (the server has no listen) stops the loop for good.
//!
//! | status | event | next |
//! |---|---|---|
//! | `Idle` | the filter is not empty | `Opening` |
//! | `Opening` | the acknowledgment | `Acknowledged` |
//! | `Opening`, `Acknowledged` | the filter changed | `Opening` (the old listen closed), or `Idle` when empty |
//! | `Opening`, `Acknowledged` | the listen ended | `Ended`, then after the backoff `Opening` |
//! | `Ended` | the filter changed | `Opening` at once |
//! | any | a `-32601` | `Unsupported`, for good |
//!
//! Acknowledgments carry the listen's request id (`_meta` `subscriptionId`); one is taken for
//! the listen being opened unless it repeats the id of the last one taken. Over stdio, the
//! acknowledgment of a listen closed before it was acknowledged can still arrive after its
//! successor went out and be taken for the successor's; [`subscribe`] therefore waits for an
//! acknowledgment that names its URI.

use std::collections::BTreeSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use sidewire_jsonrpc::{CallOptions, ErrorObject, Peer, lock};
use tokio::sync::{Notify, watch};
use tokio::time::Instant;

use crate::Error;
use crate::error::Kind;
use crate::protocol::era::Era;
use crate::protocol::modern;
use crate::protocol::session::{PROMPTS, RESOURCES, Shared, TOOLS};

/// The request.
pub(crate) const LISTEN: &str = "subscriptions/listen";
/// The server's first message on a listen.
pub(crate) const ACKNOWLEDGED: &str = "notifications/subscriptions/acknowledged";
/// The `_meta` key naming the listen a message belongs to.
const META_SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// The most URIs one connection subscribes to.
pub(crate) const MAX_SUBSCRIPTIONS: usize = 256;
/// The longest URI one may subscribe to, in bytes.
pub(crate) const MAX_SUBSCRIPTION_URI_BYTES: usize = 4096;
/// The first wait before opening an ended listen again.
pub(crate) const FIRST_BACKOFF: Duration = Duration::from_secs(1);
/// The longest such wait.
pub(crate) const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// A listen that lived this long resets the backoff when it ends.
pub(crate) const HEALTHY: Duration = Duration::from_secs(60);

/// What a listen asks to hear of (`params.notifications`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Filter {
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    tools_list_changed: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    prompts_list_changed: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    resources_list_changed: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    resource_subscriptions: Vec<String>,
}

impl Filter {
    fn is_empty(&self) -> bool {
        *self == Filter::default()
    }

    /// The cached lists whose notices it carries (bits of `Shared::dirty`).
    fn lists(&self) -> u8 {
        (if self.tools_list_changed { TOOLS } else { 0 })
            | (if self.prompts_list_changed {
                PROMPTS
            } else {
                0
            })
            | (if self.resources_list_changed {
                RESOURCES
            } else {
                0
            })
    }
}

/// What the listen loop last did (the table in the module docs); `version` is the value of
/// [`Listen::wanted`] the listen's filter was computed at.
#[derive(Debug, Clone)]
pub(crate) enum Status {
    Idle {
        version: u64,
    },
    Opening {
        version: u64,
    },
    /// `uris`: the subscribed URIs the server said it honours.
    Acknowledged {
        version: u64,
        uris: Vec<String>,
    },
    /// The listen ended (with the server's error, if it answered one); it opens again after
    /// the backoff.
    Ended {
        version: u64,
        error: Option<ErrorObject>,
    },
    /// The server has no listen.
    Unsupported(ErrorObject),
}

/// A connection's subscriptions and the state of its listen.
pub(crate) struct Listen {
    /// The subscribed URIs: at most [`MAX_SUBSCRIPTIONS`] of at most
    /// [`MAX_SUBSCRIPTION_URI_BYTES`] each.
    uris: Mutex<BTreeSet<String>>,
    /// Bumped whenever the wanted filter may have changed.
    wanted: AtomicU64,
    /// Wakes the loop after `wanted` was bumped.
    wake: Notify,
    status: watch::Sender<Status>,
    /// The `subscriptionId` of the last acknowledgment taken, as JSON text (bounded by the
    /// frame cap).
    last_ack: Mutex<Option<String>>,
}

impl Default for Listen {
    fn default() -> Self {
        Listen {
            uris: Mutex::new(BTreeSet::new()),
            wanted: AtomicU64::new(0),
            wake: Notify::new(),
            status: watch::channel(Status::Idle { version: 0 }).0,
            last_ack: Mutex::new(None),
        }
    }
}

/// `notifications/subscriptions/acknowledged`'s params, as far as they are read.
#[derive(Deserialize)]
struct Ack {
    #[serde(default)]
    notifications: AckFilter,
    #[serde(default, rename = "_meta")]
    meta: Option<Map<String, Value>>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct AckFilter {
    #[serde(default)]
    resource_subscriptions: Vec<String>,
}

impl Listen {
    /// What the connection wants may have changed: wake the loop. Returns the new version.
    pub(crate) fn changed(&self) -> u64 {
        let version = self.wanted.fetch_add(1, Ordering::SeqCst) + 1;
        self.wake.notify_one();
        version
    }

    /// Takes an acknowledgment for the listen being opened (see the module docs).
    pub(crate) fn acknowledged(&self, params: Option<&RawValue>) {
        let Some(ack) = params.and_then(|raw| serde_json::from_str::<Ack>(raw.get()).ok()) else {
            return;
        };
        let id = ack
            .meta
            .as_ref()
            .and_then(|meta| meta.get(META_SUBSCRIPTION_ID))
            .map(Value::to_string);
        {
            let mut last = lock(&self.last_ack);
            if id.is_some() && *last == id {
                return;
            }
            *last = id;
        }
        // Only what we asked for is kept, so this holds at most MAX_SUBSCRIPTIONS URIs.
        let uris: Vec<String> = {
            let ours = lock(&self.uris);
            ack.notifications
                .resource_subscriptions
                .into_iter()
                .filter(|uri| ours.contains(uri))
                .collect()
        };
        self.status.send_if_modified(|status| match *status {
            Status::Opening { version } | Status::Acknowledged { version, .. } => {
                *status = Status::Acknowledged { version, uris };
                true
            }
            _ => false,
        });
    }

    /// The listen open now serves `version` as well (the filter did not change).
    fn restamp(&self, new: u64) {
        self.status.send_modify(|status| match status {
            Status::Idle { version }
            | Status::Opening { version }
            | Status::Acknowledged { version, .. }
            | Status::Ended { version, .. } => *version = new,
            Status::Unsupported(_) => {}
        });
    }

    fn unsupported(&self) -> Option<ErrorObject> {
        match &*self.status.borrow() {
            Status::Unsupported(error) => Some(error.clone()),
            _ => None,
        }
    }
}

/// The filter the connection wants now; `None` outside the modern era.
fn wanted(shared: &Shared) -> Option<Filter> {
    if shared.era() != Some(Era::Modern) {
        return None;
    }
    let capabilities = &shared.init.get()?.capabilities;
    let listed = shared.listed.load(Ordering::SeqCst);
    let resources = capabilities.resources.unwrap_or_default();
    Some(Filter {
        tools_list_changed: listed & TOOLS != 0
            && capabilities.tools.is_some_and(|tools| tools.list_changed),
        prompts_list_changed: listed & PROMPTS != 0
            && capabilities
                .prompts
                .is_some_and(|prompts| prompts.list_changed),
        resources_list_changed: listed & RESOURCES != 0 && resources.list_changed,
        resource_subscriptions: if resources.subscribe {
            lock(&shared.listen.uris).iter().cloned().collect()
        } else {
            Vec::new()
        },
    })
}

/// Keeps a listen open while the connection wants one (see the module docs); ends when the
/// connection closes.
pub(crate) async fn listen_loop(peer: Peer, shared: Arc<Shared>) {
    let listen = &shared.listen;
    let closed = peer.closed();
    tokio::pin!(closed);
    let mut backoff = FIRST_BACKOFF;
    'listen: loop {
        // Wait for something to hear of.
        let (mut version, filter) = loop {
            let wake = listen.wake.notified();
            tokio::pin!(wake);
            wake.as_mut().enable();
            let version = listen.wanted.load(Ordering::SeqCst);
            match wanted(&shared) {
                Some(filter) if !filter.is_empty() => break (version, filter),
                _ => {
                    listen.status.send_replace(Status::Idle { version });
                }
            }
            tokio::select! {
                _ = &mut closed => return,
                () = wake => {}
            }
        };
        listen.status.send_replace(Status::Opening { version });
        let opened = Instant::now();
        tracing::debug!(server = %shared.name, ?filter, "opening subscriptions/listen");
        let params = json!({ "notifications": &filter });
        // The listen lives until the call's absolute cap at most, then opens again.
        let call = modern::call(
            &shared,
            &peer,
            LISTEN,
            LISTEN,
            &params,
            CallOptions::timeout(shared.spec.max_call_duration),
        );
        tokio::pin!(call);
        let ended = match beside(&shared, closed.as_mut(), &filter, &mut version, call).await {
            Beside::Done(ended) => ended,
            // Dropping the call closes this listen; the next one opens at once.
            Beside::Refiltered => continue 'listen,
            Beside::Closed => return,
        };
        let error = match ended {
            Ok(_) => None,
            Err(err) => {
                if err
                    .remote()
                    .is_some_and(|error| error.code == ErrorObject::METHOD_NOT_FOUND)
                {
                    tracing::debug!(server = %shared.name, "the server has no subscriptions/listen; no change notices on this connection");
                    let error = err
                        .remote()
                        .cloned()
                        .unwrap_or_else(|| ErrorObject::new(ErrorObject::METHOD_NOT_FOUND, LISTEN));
                    listen.status.send_replace(Status::Unsupported(error));
                    closed.await;
                    return;
                }
                tracing::debug!(server = %shared.name, %err, "subscriptions/listen ended");
                err.remote().cloned()
            }
        };
        listen.status.send_replace(Status::Ended { version, error });
        // No replay: what changed while nobody listened is only found by listing again.
        shared.dirty.fetch_or(filter.lists(), Ordering::SeqCst);
        shared.refresh.notify_one();
        if opened.elapsed() >= HEALTHY {
            backoff = FIRST_BACKOFF;
        }
        let sleep = tokio::time::sleep(backoff);
        tokio::pin!(sleep);
        backoff = (backoff * 2).min(MAX_BACKOFF);
        // A new subscription does not wait out the backoff.
        match beside(&shared, closed.as_mut(), &filter, &mut version, sleep).await {
            Beside::Done(()) | Beside::Refiltered => {}
            Beside::Closed => return,
        }
    }
}

/// How waiting beside a listen ended.
enum Beside<T> {
    /// What was waited for came.
    Done(T),
    /// The wanted filter is no longer `filter`.
    Refiltered,
    /// The connection closed.
    Closed,
}

/// Waits for `work` while the wanted filter stays `filter` (a new `version` of the same filter
/// is taken on) and the connection is open.
async fn beside<C: Future + ?Sized, W: Future + ?Sized>(
    shared: &Shared,
    mut closed: Pin<&mut C>,
    filter: &Filter,
    version: &mut u64,
    mut work: Pin<&mut W>,
) -> Beside<W::Output> {
    let listen = &shared.listen;
    loop {
        let wake = listen.wake.notified();
        tokio::pin!(wake);
        wake.as_mut().enable();
        let now = listen.wanted.load(Ordering::SeqCst);
        if now != *version {
            if wanted(shared).as_ref() != Some(filter) {
                return Beside::Refiltered;
            }
            *version = now;
            listen.restamp(now);
        }
        tokio::select! {
            _ = closed.as_mut() => return Beside::Closed,
            done = work.as_mut() => return Beside::Done(done),
            () = wake => {}
        }
    }
}

/// Adds `uri` to the connection's subscriptions and waits, within `timeout`, for the server
/// to acknowledge a listen that carries it.
pub(crate) async fn subscribe(shared: &Shared, uri: &str, timeout: Duration) -> Result<(), Error> {
    if let Some(error) = shared.listen.unsupported() {
        return Err(Error::new(Kind::Unsupported(format!(
            "the server has no {LISTEN} ({}), so it cannot send resource updates",
            error.message
        ))));
    }
    let offers = shared
        .init
        .get()
        .and_then(|init| init.capabilities.resources)
        .is_some_and(|resources| resources.subscribe);
    if !offers {
        return Err(Error::new(Kind::Unsupported(
            "the server does not offer resource subscriptions (its capabilities lack resources.subscribe)"
                .to_owned(),
        )));
    }
    if uri.len() > MAX_SUBSCRIPTION_URI_BYTES {
        return Err(Error::new(Kind::SubscriptionLimit(format!(
            "a subscribed URI may be at most {MAX_SUBSCRIPTION_URI_BYTES} bytes (this one is {})",
            uri.len()
        ))));
    }
    {
        let mut uris = lock(&shared.listen.uris);
        if !uris.contains(uri) {
            if uris.len() >= MAX_SUBSCRIPTIONS {
                return Err(Error::new(Kind::SubscriptionLimit(format!(
                    "a connection subscribes to at most {MAX_SUBSCRIPTIONS} resources"
                ))));
            }
            uris.insert(uri.to_owned());
        }
    }
    let version = shared.listen.changed();
    settled(shared, version, Some(uri), timeout).await
}

/// Removes `uri` from the connection's subscriptions and waits, within `timeout`, for the
/// listen without it to be acknowledged (or closed, when nothing else is wanted).
pub(crate) async fn unsubscribe(
    shared: &Shared,
    uri: &str,
    timeout: Duration,
) -> Result<(), Error> {
    if !lock(&shared.listen.uris).remove(uri) || shared.listen.unsupported().is_some() {
        return Ok(());
    }
    let version = shared.listen.changed();
    settled(shared, version, None, timeout).await
}

/// Waits for the loop to have acted on `version`: a listen acknowledged (naming `uri`, when
/// given), a listen refused by the server, or nothing left to listen to.
async fn settled(
    shared: &Shared,
    version: u64,
    uri: Option<&str>,
    timeout: Duration,
) -> Result<(), Error> {
    let mut rx = shared.listen.status.subscribe();
    let waited = tokio::time::timeout(
        timeout,
        rx.wait_for(|status| match status {
            Status::Idle { version: at } => *at >= version,
            Status::Acknowledged { version: at, uris } => {
                *at >= version && uri.is_none_or(|uri| uris.iter().any(|u| u == uri))
            }
            Status::Ended {
                version: at,
                error: Some(_),
            } => *at >= version,
            Status::Unsupported(_) => true,
            Status::Opening { .. } | Status::Ended { error: None, .. } => false,
        }),
    )
    .await;
    let outcome = match waited {
        Err(_) => Err(Error::new(Kind::Timeout {
            what: format!("{LISTEN} (waiting for the server's acknowledgment)"),
            after: timeout,
            idle: false,
        })),
        Ok(Err(_)) => Err(Error::new(Kind::Closed {
            what: LISTEN.to_owned(),
            reason: "the connection ended".to_owned(),
        })),
        Ok(Ok(status)) => match &*status {
            Status::Ended {
                error: Some(error), ..
            }
            | Status::Unsupported(error) => Err(Error::new(Kind::Remote {
                method: LISTEN.to_owned(),
                error: error.clone(),
            })),
            _ => Ok(()),
        },
    };
    outcome.map_err(|err| err.with_server(&shared.name))
}
