//! The readiness barrier (spec §6.4) as a wrapper around a sidecar's stdout frames.
//!
//! Until the host marks the connection ready, the only frame a sidecar may write is the response
//! to `extension/initialize` (id 1, the first request of the connection). This stream lets that
//! one frame through and then yields nothing more until the handshake code opens the gate or
//! fails it, which is exactly "after reading the response it MUST NOT read the next frame until
//! it has marked the connection ready or failed the handshake". Any other frame before that is a
//! violation: it is recorded, and the stream ends with an error, which ends the jsonrpc driver
//! and fails the pending initialize, so the process is killed at once.
//!
//! Frames that are not JSON objects pass through untouched: the strict jsonrpc driver already
//! treats them as fatal `protocol_error`s.

use std::pin::Pin;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_core::Stream;
use futures_util::task::AtomicWaker;
use serde::Deserialize;
use serde_json::value::RawValue;
use sidewire_ext_protocol::READINESS_RULE;

const WAITING: u8 = 0;
const GATED: u8 = 1;
const OPEN: u8 = 2;
const FAILED: u8 = 3;

/// The handshake side of the barrier.
#[derive(Debug, Default)]
pub(crate) struct Gate {
    state: AtomicU8,
    waker: AtomicWaker,
    violation: OnceLock<String>,
}

impl Gate {
    /// Lets frames through from now on (the connection is ready).
    pub(crate) fn open(&self) {
        self.state.store(OPEN, Ordering::Release);
        self.waker.wake();
    }

    /// Ends the stream (the handshake failed).
    pub(crate) fn fail(&self) {
        self.state.store(FAILED, Ordering::Release);
        self.waker.wake();
    }

    /// The violation, when a frame broke the barrier.
    pub(crate) fn violation(&self) -> Option<&str> {
        self.violation.get().map(String::as_str)
    }
}

/// Just enough of an envelope to tell the initialize response from anything else.
#[derive(Deserialize)]
struct Peek<'a> {
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    method: Option<&'a RawValue>,
}

/// A frame stream behind the barrier.
pub(crate) struct Barrier<S> {
    inner: S,
    gate: Arc<Gate>,
}

impl<S> Barrier<S> {
    pub(crate) fn new(inner: S, gate: Arc<Gate>) -> Self {
        Barrier { inner, gate }
    }
}

impl<S, E> Stream for Barrier<S>
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
    E: Into<sidewire_framing::Error>,
{
    type Item = Result<Bytes, sidewire_framing::Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        match this.gate.state.load(Ordering::Acquire) {
            OPEN => {
                return Pin::new(&mut this.inner)
                    .poll_next(cx)
                    .map(|item| item.map(|r| r.map_err(Into::into)));
            }
            FAILED => return Poll::Ready(None),
            GATED => {
                this.waker_register(cx);
                // Re-check after registering, so an `open` in between is not missed.
                return match this.gate.state.load(Ordering::Acquire) {
                    GATED => Poll::Pending,
                    _ => Pin::new(this).poll_next(cx),
                };
            }
            WAITING => {}
            _ => unreachable!("the gate has four states"),
        }
        let frame = match Pin::new(&mut this.inner).poll_next(cx) {
            Poll::Ready(Some(Ok(frame))) => frame,
            other => return other.map(|item| item.map(|r| r.map_err(Into::into))),
        };
        let Ok(peek) = serde_json::from_slice::<Peek<'_>>(&frame) else {
            // Not a JSON object (or a repeated member): the driver's garbage policy is fatal.
            return Poll::Ready(Some(Ok(frame)));
        };
        let what = match (peek.method, peek.id) {
            (None, Some(id)) if id.get() == "1" => {
                this.gate.state.store(GATED, Ordering::Release);
                return Poll::Ready(Some(Ok(frame)));
            }
            (None, _) => "a response to a request the host never sent",
            (Some(_), Some(_)) => "a request",
            (Some(_), None) => "a notification",
        };
        let message = format!(
            "the sidecar wrote {what} {READINESS_RULE} (only the initialize response may come \
             first)"
        );
        let _ = this.gate.violation.set(message.clone());
        this.gate.state.store(FAILED, Ordering::Release);
        Poll::Ready(Some(Err(sidewire_framing::Error::Io(
            std::io::Error::other(message),
        ))))
    }
}

impl<S> Barrier<S> {
    fn waker_register(&self, cx: &mut Context<'_>) {
        self.gate.waker.register(cx.waker());
    }
}
