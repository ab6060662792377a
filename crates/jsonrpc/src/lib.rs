#![doc = include_str!("../README.md")]
//!
//! # Main types
//!
//! [`Peer`] (the handle: calls and notifications), [`Driver`] (the future that moves the
//! frames) and [`Router`] (the handlers for what the other side sends). [`connect`] makes a
//! pair from a `Stream` and a `Sink` of frames; [`ndjson`] builds those for a pair of pipes.
//! Protocols bring their methods as types implementing [`Request`] or [`Notification`], and
//! their [`Hooks`].
//!
//! # Routing
//!
//! Each frame's envelope is parsed once, borrowed, with `params` and `result` kept as
//! `&RawValue` slices: nothing on the routing path builds a `serde_json::Value`; a handler
//! deserializes its own params and a caller its own result. Responses
//! and notifications are routed as they arrive; notifications run in arrival order on the
//! driver; requests run concurrently up to a limit (default 32), with up to 1,024 more waiting
//! in a FIFO and any beyond that answered `-32603` without running a handler. The limit never
//! stops the reader, so handlers may await calls of their own.
//!
//! # Strictness
//!
//! [`Profile::Strict`] is the extension protocol's (spec §2.2–2.3) and [`Profile::Lenient`]
//! plain JSON-RPC 2.0 (MCP). Under both:
//! - **A message without an id is never answered**, whatever is wrong with it. JSON-RPC 2.0
//!   asks for an error with `"id": null`, but answering garbage makes two peers that log to
//!   each other's input storm (rust-sdk #938); the extension protocol forbids it outright.
//!   For the same reason `-32700` is never sent: a frame that is not JSON is skipped and
//!   counted, or is fatal, per [`GarbagePolicy`].
//! - A request whose id is already in use by one of the sender's pending requests is answered
//!   `-32600`; the earlier request is unaffected.
//! - A response whose id matches nothing pending (late after a timeout or cancel) is dropped
//!   and counted in [`Stats`].
//! - **Batches are not supported**, under either profile (MCP dropped them; the extension
//!   protocol never had them): an inbound top-level array is garbage like a non-JSON frame,
//!   skipped and counted or fatal per [`GarbagePolicy`], and never answered.
//!
//! # Limits and failure
//!
//! One writer (the driver), fed by a bounded queue, coalesces: every frame queued is written
//! and then flushed once, and frames go out in the order they were queued. A write that makes no progress for the stall bound (default
//! 10 s) fails the connection. A response too large for a frame becomes a small `-32603` ("response exceeds
//! frame size limit"); an outgoing request or notification too large fails locally with
//! nothing written. When the connection ends, every pending request fails with the sticky
//! [`CloseReason`], and later calls fail at once with it.
//!
//! The connection's owner may know of a failure JSON-RPC cannot see (a transport that could not
//! deliver a request): [`Peer::fail_request`] fails one of our pending requests by its id with a
//! typed cause, without a frame. Its caller gets [`Error::Local`], whose `source` is that cause
//! (downcast it back), and a response that arrives for it later is late. No sentinel error object
//! stands in for it, so nothing a peer sends can imitate one.
//!
//! # Cancel safety
//!
//! Dropping the future of an outgoing request cancels it: the pending entry goes at once (an
//! O(1) map removal), the protocol's cancel hook runs, and a late response is dropped. Each
//! `pub async fn` documents its own cancel safety.
#![cfg_attr(docsrs, feature(doc_cfg))]

mod config;
mod driver;
mod envelope;
mod error;
#[doc(hidden)]
pub mod fuzz;
mod json;
mod message;
mod peer;
mod pending;
mod router;
mod scan;
mod sync;
mod unique;

use bytes::Bytes;
use futures_core::Stream;
use futures_util::Sink;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_util::codec::FramedWrite;

use sidewire_framing::{FrameReader, NdjsonCodec, Oversize};

pub use crate::config::{
    Cancelled, Config, GarbagePolicy, HookNotification, Hooks, LocalError, NoHooks, Profile,
};
pub use crate::driver::Driver;
pub use crate::error::{CloseReason, Error};
pub(crate) use crate::json::write_json;
pub use crate::message::{ErrorObject, Id, Notification, Request};
pub use crate::peer::{Activity, CallOptions, Peer, RawResult, Stats};
pub use crate::router::{RequestContext, Router};
pub use crate::sync::lock;
pub use crate::unique::{NotUnique, PathStep, parse_unique, unique_value};

/// Starts a connection over a stream of inbound frames and a sink for outbound ones.
///
/// Returns the handle and the driver; nothing happens until the driver is polled.
pub fn connect<S, K, E, F>(
    stream: S,
    sink: K,
    router: Router,
    config: Config,
) -> (Peer, Driver<S, K>)
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
    E: Into<sidewire_framing::Error>,
    K: Sink<Bytes, Error = F> + Unpin,
    F: Into<sidewire_framing::Error>,
{
    let (tx, rx) = tokio::sync::mpsc::channel(config.outbound_queue);
    let (background_tx, background_rx) = tokio::sync::mpsc::channel(config.background_queue);
    let peer = Peer::new(config, tx, background_tx);
    let lanes = driver::Lanes::new(rx, background_rx);
    let driver = Driver::new(peer.clone(), stream, sink, lanes, router);
    (peer, driver)
}

/// The stream and sink for NDJSON over a pair of pipes, with the codec set up for the profile:
/// oversized lines end the connection and blank lines and BOMs reach the JSON layer under
/// [`Profile::Strict`]; under [`Profile::Lenient`] oversized lines are skipped (failing the
/// request they answered, as a line that does not decode but names its request does) and blank
/// lines and BOMs are tolerated.
pub fn ndjson<R, W>(
    reader: R,
    writer: W,
    config: &Config,
) -> (FrameReader<R>, FramedWrite<W, NdjsonCodec>)
where
    R: AsyncRead + Unpin,
    W: AsyncWrite,
{
    let codec = match config.profile() {
        Profile::Strict => NdjsonCodec::new(config.max_frame(), Oversize::Terminate),
        Profile::Lenient => NdjsonCodec::new(config.max_frame(), Oversize::Skip)
            .skip_blank_lines(true)
            .strip_bom(true),
    };
    let mut sink = FramedWrite::new(writer, codec.clone());
    // Coalesce up to 64 KiB before the sink pushes back; the driver flushes once per batch.
    sink.set_backpressure_boundary(64 * 1024);
    (FrameReader::new(reader, codec), sink)
}
