//! Provider extensions (§14), the producer side: the [`Provider`] trait a sidecar author
//! implements, the [`StreamContext`] a stream is opened with, and the machinery that turns an
//! author's [`ChunkStream`] into the wire's numbered `stream/chunk` notifications and the one
//! `stream/end`.
//!
//! The author writes a catalog and an `open` that returns an async stream of chunks; the SDK
//! enforces every rule of §14.4 on it: chunks are checked against the `ProviderChunk` DTO and
//! numbered contiguously from `seqBase + 1`, an `error` chunk never reaches the wire, a producer
//! error becomes `end.error`, exactly one `stream/end` is sent with the right `lastSeq`, and
//! after a processed cancel nothing but `{"interrupted":true}` follows. Routing (the §6.5
//! order, the state gate) is `serve.rs`'s; this module holds what it calls: the registry of
//! active streams ([`Streams`]) and the producer job ([`produce`]).
//!
//! # The life of a stream
//!
//! ```text
//!  stream/open ok      open() Ok            producer ends / errs / invalid chunk
//!  ──────────────▶ reserved ──────────▶ producing ──────────────────────────────▶ ended
//!                     │  open() Err         │ stream/cancel, extension/shutdown      ▲
//!                     ├──────────▶ gone     └──────────────▶ cancelled ──────────────┘
//!                     └─ cancel ─▶ cancelled (no chunk; end interrupted:true)
//! ```
//!
//! A stream is *active* (counted against [`MAX_STREAMS`], its id unusable for another open,
//! cancellable with `{"cancelled":true}`) from the moment its open is routed until its end is
//! decided; the decision and the removal from the registry happen under one lock, so a cancel
//! either is processed before the end (and the end says `interrupted`) or finds the stream
//! ended (and is answered `false`).

use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use futures_util::{Stream, StreamExt as _};
use serde::Serialize;
use serde_json::value::RawValue;
use sidewire_ext_protocol::{
    ChunkType, ENV_PLUGIN_NAME, Method, ProtocolProfile, ProviderCatalogResult, ProviderChunk,
    ProviderDescriptor, StreamEndParams, StreamOpenParams, Target, decode, is_plugin_provider_ref,
};
use sidewire_jsonrpc::{Peer, lock};
use tokio_util::sync::CancellationToken;

use crate::extension::BoxFuture;
use crate::log::Logger;
use crate::{Error, HostHandle};

/// The most streams one connection has active at once (opens being handled included). One
/// more `stream/open` is answered `provider_failed` without calling the provider.
pub const MAX_STREAMS: usize = 64;

/// The longest `end.error` sent, in bytes: a producer's error message is cut (at a character
/// boundary) so the `stream/end` always fits a frame.
pub const END_ERROR_BYTES: usize = 4096;

/// The `end.error` of a stream whose producer broke the chunk rules; the details go to
/// stderr, not to the host.
const INVALID_CHUNK: &str = "the provider produced an invalid chunk";

/// The `end.error` of a producer error whose message is empty (an empty `error` would read as
/// a clean end).
const UNNAMED_FAILURE: &str = "the provider failed";

/// A provider a sidecar serves: its catalog and its streams (§14).
///
/// Register it with [`Extension::provider`](crate::Extension::provider); the installed manifest
/// must have capability `providers`, or the SDK says so on stderr and offers nothing. The SDK
/// calls [`catalog`](Provider::catalog) for the handshake's `providers` and for each
/// `extension/provider/catalog`, and [`open`](Provider::open) for each `stream/open` whose
/// `providerRef` is in the catalog it last sent.
///
/// ```
/// use futures_util::stream;
/// use sidewire_ext_sdk::protocol::{
///     ChunkType, ProviderChunk, ProviderDescriptor, StreamOpenParams,
/// };
/// use sidewire_ext_sdk::{ChunkStream, Error, Extension, HostHandle, Provider, StreamContext};
///
/// struct Shout;
///
/// impl Provider for Shout {
///     async fn catalog(&self, _host: &HostHandle) -> Result<Vec<ProviderDescriptor>, Error> {
///         Ok(vec![ProviderDescriptor {
///             reference: "plugin/shout/loud/v1".into(),
///             ..Default::default()
///         }])
///     }
///
///     async fn open(&self, _ctx: StreamContext, params: StreamOpenParams)
///         -> Result<ChunkStream, Error>
///     {
///         let last = params.request.messages.last().map(|m| m.content.to_uppercase());
///         let Some(text) = last.filter(|t| !t.is_empty()) else {
///             return Err(Error::callback("nothing to shout"));
///         };
///         let mut chunk = ProviderChunk::new(ChunkType::Text);
///         chunk.text = text;
///         let chunks = [Ok(chunk), Ok(ProviderChunk::new(ChunkType::Done))];
///         Ok(Box::pin(stream::iter(chunks)))
///     }
/// }
///
/// let extension = Extension::new("shout", "0.1.0").provider(Shout);
/// # drop(extension);
/// ```
pub trait Provider: Send + Sync + 'static {
    /// The catalog: the handshake's `providers` and the answer to
    /// `extension/provider/catalog` (§14.2). Refs must be unique and non-empty and should
    /// carry the plugin's prefix `plugin/<pluginId>/`.
    ///
    /// A catalog that breaks the `ProviderDescriptor` rules, repeats a ref, or (when
    /// `REASONIX_PLUGIN_NAME` is set) carries a foreign prefix is never sent: the catalog call
    /// is answered `internal` and the cause goes to stderr; at the handshake nothing is
    /// offered. An `Err` is treated the same way. The host gives the call 30 s (§2.5).
    fn catalog(
        &self,
        host: &HostHandle,
    ) -> impl Future<Output = Result<Vec<ProviderDescriptor>, Error>> + Send;

    /// Opens a stream for one of the catalog's refs. `Err` means the provider refuses: the
    /// open is answered `provider_failed` with the error's text. The returned stream is the
    /// producer: the SDK numbers, checks and sends its chunks and the one `stream/end`.
    ///
    /// The producer ends the stream by ending (a clean end) or by yielding `Err` (the stream
    /// ends with `end.error` carrying its text; yield no `error` chunk, which the SDK would
    /// treat as invalid). Dropping it is the cancel: after `extension/provider/stream/cancel`
    /// or `extension/shutdown` it is not polled again and is dropped, so clean-up belongs in
    /// `Drop` or in a task watching [`StreamContext::cancelled`].
    ///
    /// The host gives the open 30 s (§2.5); an open that takes longer is answered
    /// `intercept_timeout` and its stream never starts.
    fn open(
        &self,
        ctx: StreamContext,
        params: StreamOpenParams,
    ) -> impl Future<Output = Result<ChunkStream, Error>> + Send;
}

/// A provider's producer: the chunks of one stream, in order. `Err` ends the stream with
/// `end.error`; the end of the stream is a clean end.
pub type ChunkStream = Pin<Box<dyn Stream<Item = Result<ProviderChunk, Error>> + Send>>;

/// What [`Provider::open`] is called with: the host handle and the stream's identity and
/// cancel state. Cheap to clone.
#[derive(Clone)]
pub struct StreamContext {
    host: HostHandle,
    stream_id: Arc<str>,
    provider_ref: Arc<str>,
    cancel: CancellationToken,
}

impl StreamContext {
    /// The handle for calling the host.
    pub fn host(&self) -> &HostHandle {
        &self.host
    }

    /// The host-minted stream id.
    pub fn stream_id(&self) -> &str {
        &self.stream_id
    }

    /// The provider ref the stream was opened for, one of the catalog's.
    pub fn provider_ref(&self) -> &str {
        &self.provider_ref
    }

    /// Whether the stream was cancelled (`stream/cancel` or `extension/shutdown`); its
    /// producer is then dropped without being polled again.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// Completes when the stream is cancelled; it never completes for a stream that ends
    /// otherwise. Useful for work a producer started outside its own polling.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: it only waits.
    pub fn cancelled(&self) -> impl Future<Output = ()> + Send + 'static {
        self.cancel.clone().cancelled_owned()
    }
}

impl fmt::Debug for StreamContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StreamContext")
            .field("stream_id", &self.stream_id)
            .field("provider_ref", &self.provider_ref)
            .field("cancelled", &self.is_cancelled())
            .finish_non_exhaustive()
    }
}

/// [`Provider`] with its futures boxed, so the extension can hold any provider.
pub(crate) trait DynProvider: Send + Sync {
    fn catalog(
        self: Arc<Self>,
        host: HostHandle,
    ) -> BoxFuture<Result<Vec<ProviderDescriptor>, Error>>;
    fn open(
        self: Arc<Self>,
        ctx: StreamContext,
        params: StreamOpenParams,
    ) -> BoxFuture<Result<ChunkStream, Error>>;
}

impl<P: Provider> DynProvider for P {
    fn catalog(
        self: Arc<Self>,
        host: HostHandle,
    ) -> BoxFuture<Result<Vec<ProviderDescriptor>, Error>> {
        Box::pin(async move { Provider::catalog(&*self, &host).await })
    }

    fn open(
        self: Arc<Self>,
        ctx: StreamContext,
        params: StreamOpenParams,
    ) -> BoxFuture<Result<ChunkStream, Error>> {
        Box::pin(async move { Provider::open(&*self, ctx, params).await })
    }
}

/// The registered provider, type-erased.
pub(crate) type ProviderFn = Arc<dyn DynProvider>;

/// Checks a catalog before it is sent: the `ProviderCatalogResult` DTO (non-blank, unique
/// refs, prices ≥ 0) and, when the host told us our plugin id, the refs' prefix (§14.1).
pub(crate) fn check_catalog(
    providers: Vec<ProviderDescriptor>,
) -> Result<ProviderCatalogResult, Error> {
    let result = ProviderCatalogResult { providers };
    crate::host::check_outbound(&result, "provider catalog")?;
    if let Ok(plugin) = std::env::var(ENV_PLUGIN_NAME)
        && let Some(foreign) = result
            .providers
            .iter()
            .find(|p| !is_plugin_provider_ref(&p.reference, &plugin))
    {
        return Err(Error::Invalid {
            what: "provider catalog",
            detail: format!(
                "ref {:?} does not start with plugin/{plugin}/ ({ENV_PLUGIN_NAME})",
                foreign.reference
            ),
            reason: sidewire_ext_protocol::Reason::CapabilityNotDeclared,
        });
    }
    Ok(result)
}

/// Why an open was refused by the registry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// The stream id is active (`protocol_error`).
    Active,
    /// [`MAX_STREAMS`] are active (`provider_failed`).
    Full,
}

/// The connection's provider state: the refs of the catalog last sent, and the active streams.
#[derive(Debug, Default)]
pub(crate) struct Streams {
    catalog: Mutex<BTreeSet<String>>,
    active: Mutex<Active>,
}

#[derive(Debug, Default)]
struct Active {
    /// Stream id → (serial, cancel token). The serial tells a reservation its own entry from a
    /// later one under the same id.
    streams: HashMap<Arc<str>, (u64, CancellationToken)>,
    next_serial: u64,
}

impl Streams {
    /// Records the catalog just sent: opens are served for its refs only.
    pub(crate) fn set_catalog(&self, result: &ProviderCatalogResult) {
        let refs = result
            .providers
            .iter()
            .map(|p| p.reference.clone())
            .collect();
        *lock(&self.catalog) = refs;
    }

    /// Whether `reference` is in the catalog last sent.
    pub(crate) fn in_catalog(&self, reference: &str) -> bool {
        lock(&self.catalog).contains(reference)
    }

    /// Makes `stream_id` active, or says why not.
    pub(crate) fn reserve(self: &Arc<Self>, stream_id: &str) -> Result<Reservation, Refusal> {
        let mut active = lock(&self.active);
        if active.streams.contains_key(stream_id) {
            return Err(Refusal::Active);
        }
        if active.streams.len() >= MAX_STREAMS {
            return Err(Refusal::Full);
        }
        let serial = active.next_serial;
        active.next_serial += 1;
        let id: Arc<str> = Arc::from(stream_id);
        let token = CancellationToken::new();
        active
            .streams
            .insert(Arc::clone(&id), (serial, token.clone()));
        Ok(Reservation {
            streams: Arc::clone(self),
            id,
            serial,
            token,
        })
    }

    /// Processes a cancel: `true` when the stream was active and not cancelled yet. Its
    /// producer stops before its next chunk and the end says `interrupted`.
    pub(crate) fn cancel(&self, stream_id: &str) -> bool {
        let active = lock(&self.active);
        match active.streams.get(stream_id) {
            Some((_, token)) if !token.is_cancelled() => {
                token.cancel();
                true
            }
            _ => false,
        }
    }

    /// Cancels every active stream (`extension/shutdown`).
    pub(crate) fn cancel_all(&self) {
        for (_, token) in lock(&self.active).streams.values() {
            token.cancel();
        }
    }

    /// How many streams are active.
    #[cfg(test)]
    pub(crate) fn active(&self) -> usize {
        lock(&self.active).streams.len()
    }
}

/// One active stream. Dropping it ends the stream's activity (a refused or timed-out open);
/// [`Reservation::finish`] does the same and says whether a cancel came first.
#[derive(Debug)]
pub(crate) struct Reservation {
    streams: Arc<Streams>,
    id: Arc<str>,
    serial: u64,
    token: CancellationToken,
}

impl Reservation {
    pub(crate) fn context(&self, host: HostHandle, provider_ref: &str) -> StreamContext {
        StreamContext {
            host,
            stream_id: Arc::clone(&self.id),
            provider_ref: Arc::from(provider_ref),
            cancel: self.token.clone(),
        }
    }

    pub(crate) fn token(&self) -> &CancellationToken {
        &self.token
    }

    /// Decides the end: removes the stream from the registry and returns whether it had
    /// been cancelled, both under the registry's lock, so a concurrent cancel is either
    /// processed before (and the end says `interrupted`) or answered `false`.
    fn finish(&self) -> bool {
        let mut active = lock(&self.streams.active);
        let cancelled = self.token.is_cancelled();
        if active
            .streams
            .get(&self.id)
            .is_some_and(|(s, _)| *s == self.serial)
        {
            active.streams.remove(&self.id);
        }
        cancelled
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.finish();
    }
}

/// The params of a `stream/chunk` with the chunk already serialized (it was serialized once to
/// be checked).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ChunkFrame<'a> {
    stream_id: &'a str,
    seq: u64,
    chunk: &'a RawValue,
}

/// Serializes and checks one chunk; `Err` says why it may not be sent.
fn checked_chunk(chunk: &ProviderChunk) -> Result<Box<RawValue>, String> {
    if chunk.kind == ChunkType::Error {
        return Err("an \"error\" chunk (a producer fails by yielding Err)".to_owned());
    }
    let text = serde_json::to_string(chunk).map_err(|err| err.to_string())?;
    decode::<ProviderChunk>(&text, Target::Params).map_err(|err| err.to_string())?;
    RawValue::from_string(text).map_err(|err| err.to_string())
}

/// Cuts `message` to [`END_ERROR_BYTES`] at a character boundary; an empty one is named.
fn end_error(message: String) -> String {
    if message.trim().is_empty() {
        return UNNAMED_FAILURE.to_owned();
    }
    if message.len() <= END_ERROR_BYTES {
        return message;
    }
    let mut cut = END_ERROR_BYTES;
    while !message.is_char_boundary(cut) {
        cut -= 1;
    }
    message[..cut].to_owned()
}

/// Runs one stream's producer to its end and sends the one `stream/end`: a job of the serve
/// loop (the SDK spawns nothing). `producer` is `None` when the stream was cancelled while it
/// was being opened.
///
/// Each chunk is sent with backpressure (it waits for room in the writer's queue) and the wait
/// is abandoned, sending nothing, when the stream is cancelled meanwhile.
///
/// Numbering follows the connection's `profile`: v1 numbers from `seqBase + 1` and an empty
/// stream ends with `lastSeq` = `seqBase` (§14.4); v2 numbers from `max(seqBase, 1)` and
/// `lastSeq` is the last seq sent, 0 if none (spec delta §2.11).
pub(crate) async fn produce(
    peer: Peer,
    logger: Logger,
    reservation: Reservation,
    (seq_base, profile): (u64, ProtocolProfile),
    producer: Option<ChunkStream>,
) {
    let token = reservation.token.clone();
    let id = Arc::clone(&reservation.id);
    let (mut last, mut next) = match profile {
        ProtocolProfile::V2 => (0, Some(seq_base.max(1))),
        _ => (seq_base, seq_base.checked_add(1)),
    };
    let mut failure = String::new();
    if let Some(mut producer) = producer {
        loop {
            let item = tokio::select! {
                biased;
                () = token.cancelled() => break,
                item = producer.next() => item,
            };
            let chunk = match item {
                None => break,
                Some(Err(err)) => {
                    failure = end_error(err.to_string());
                    break;
                }
                Some(Ok(chunk)) => chunk,
            };
            let (seq, raw) = match (next, checked_chunk(&chunk)) {
                (Some(seq), Ok(raw)) => (seq, raw),
                (None, _) => {
                    logger.log(&format!(
                        "stream {id}: seq would pass 2^64-1; the stream ends with an error"
                    ));
                    failure = INVALID_CHUNK.to_owned();
                    break;
                }
                (_, Err(detail)) => {
                    logger.log(&format!(
                        "stream {id}: the provider produced an invalid chunk ({detail}); \
                         the stream ends with an error"
                    ));
                    failure = INVALID_CHUNK.to_owned();
                    break;
                }
            };
            let frame = ChunkFrame {
                stream_id: &id,
                seq,
                chunk: &raw,
            };
            let sent = tokio::select! {
                biased;
                () = token.cancelled() => break,
                sent = peer.notify_untyped(Method::StreamChunk.as_str(), Some(&frame)) => sent,
            };
            match sent {
                Ok(()) => (last, next) = (seq, seq.checked_add(1)),
                // Nothing more can be written; the host sees the connection end.
                Err(err) if err.is_closed() => return,
                Err(err) => {
                    logger.log(&format!(
                        "stream {id}: chunk {seq} could not be sent ({err}); the stream ends \
                         with an error"
                    ));
                    failure = INVALID_CHUNK.to_owned();
                    break;
                }
            }
        }
        // The cancel drops the producer, before the end is sent.
        drop(producer);
    }
    let interrupted = reservation.finish();
    let end = StreamEndParams {
        stream_id: id.to_string(),
        last_seq: last,
        error: if interrupted { String::new() } else { failure },
        interrupted: interrupted.then_some(true),
    };
    if let Err(err) = peer
        .notify_untyped(Method::StreamEnd.as_str(), Some(&end))
        .await
        && !err.is_closed()
    {
        logger.log(&format!(
            "stream {id}: the stream/end could not be sent: {err}"
        ));
    }
}

#[cfg(test)]
mod tests;
