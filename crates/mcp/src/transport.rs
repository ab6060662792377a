//! The seam between the protocol core and the transports.
//!
//! A transport yields a stream of [`Inbound`] items and a sink for outbound frames, plus a
//! [`Backend`] for its lifecycle (closing, killing, diagnostics) and an optional background
//! future (stdio: supervising the process; HTTP: the transport driver that runs the POSTs and
//! streams). The protocol core never looks past that, and the transports know nothing of it:
//! this module depends on no protocol code, the protocol core depends on it.
//!
//! Both directions are typed. Inbound, an item is a JSON-RPC message, or
//! [`Inbound::Failed`]: the exchange that carried one of our requests failed (an HTTP status,
//! a network failure, a body over the cap, a 2xx answer that is not the response), with the
//! request's id and the typed error of its [`Cause`] (made by the transport, which alone knows
//! which parts of its URL are secret: see `crate::redact`); or [`Inbound::SessionRenewed`]: the transport replaced
//! an expired session, so what the protocol core cached from the old one is stale.
//! Outbound, a transport that runs one exchange per message (HTTP) takes each frame as an
//! [`Outbound`] carrying its id and method, classified once by the protocol core; stdio and
//! caller streams take the bare frames.
//!
//! The backend's `farewell` covers the last handle dropped while a `notifications/cancelled` may
//! still be unwritten: the connection keeps running while the queue is written and the server's
//! stdin closed, within `CANCEL_FLUSH`, before what is left is killed.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use bytes::Bytes;
use futures_core::Stream;
use futures_util::{Sink, TryStreamExt};
use sidewire_jsonrpc::{Config, Peer};
use sidewire_process::{CloseBudgets, Process};
use tokio::io::{AsyncRead, AsyncWrite};

use crate::{CANCEL_FLUSH, Error};

/// What a transport yields, boxed so every transport drives the same jsonrpc driver type.
pub(crate) type InboundStream =
    Pin<Box<dyn Stream<Item = Result<Inbound, sidewire_framing::Error>> + Send + 'static>>;
/// Outbound frames, as the jsonrpc driver writes them.
pub(crate) type FrameSink =
    Pin<Box<dyn Sink<Bytes, Error = sidewire_framing::Error> + Send + 'static>>;
/// Outbound frames with their id and method.
pub(crate) type MessageSink =
    Pin<Box<dyn Sink<Outbound, Error = sidewire_framing::Error> + Send + 'static>>;
/// The boxed future a transport's background work runs as (process supervision, the HTTP
/// transport driver); also the shape of a connection's whole driver.
pub(crate) type Background = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// One item a transport hands the protocol core.
#[derive(Debug)]
pub(crate) enum Inbound {
    /// A JSON-RPC message.
    Frame(Bytes),
    /// The exchange that carried one of our requests failed; nothing else will answer it.
    Failed(RequestFailed),
    /// The transport started a new session after the old one expired (HTTP): whatever the
    /// protocol layer cached from the old one (the tool, prompt and resource lists) may be
    /// stale. Only the transport can say so; no frame a server sends imitates it.
    SessionRenewed,
}

/// A request of ours that its transport could not deliver or get answered.
#[derive(Debug)]
pub(crate) struct RequestFailed {
    pub(crate) id: RequestId,
    pub(crate) method: String,
    /// What the caller gets ([`Cause::into_error`]).
    pub(crate) error: Error,
}

/// A request id as the JSON text it is written as on the wire (`7`, `"srv-1"`), so ids of
/// either type compare exactly.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct RequestId(Box<str>);

impl RequestId {
    /// The id whose JSON text is `json`.
    pub(crate) fn from_json(json: &str) -> Self {
        RequestId(json.into())
    }

    /// The id's JSON text.
    pub(crate) fn as_json(&self) -> &str {
        &self.0
    }
}

/// An outgoing frame and what it is, for a transport that handles messages one by one.
#[derive(Debug, Clone)]
pub(crate) struct Outbound {
    pub(crate) frame: Bytes,
    pub(crate) message: Message,
    /// For a modern-era request (its `_meta` names the protocol version): the headers that
    /// must go with it over HTTP.
    pub(crate) modern: Option<Box<ModernHeaders>>,
}

/// The longest value of a header a modern-era request carries over HTTP besides our own
/// (`Mcp-Name`, each `Mcp-Param-*` mirror), as sent (after the base64 form where one is
/// needed): 8 KiB. A request with a longer one is refused before anything is sent
/// ([`Error::is_too_large`]).
///
/// The spec sets no bound, but servers do: nginx refuses a header line over its 8 KiB
/// buffer, Node.js (the TypeScript SDK's servers) all headers over 16 KiB, and many proxies
/// sit in between. A value past this cap would be refused somewhere on the way, as a 431 or a
/// dropped connection, after the request was sent.
pub const MAX_HEADER_VALUE_BYTES: usize = 8 * 1024;

/// The headers of a modern-era request besides the body (see `protocol::headers`): every
/// value already encoded for a header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ModernHeaders {
    /// `MCP-Protocol-Version`, equal to the body's `_meta` version.
    pub(crate) version: String,
    /// `Mcp-Method`.
    pub(crate) method: String,
    /// `Mcp-Name`: the tool or prompt name, or the resource URI.
    pub(crate) name: Option<String>,
    /// `Mcp-Param-{token}` and its value, one per designated argument present.
    pub(crate) params: Vec<(String, String)>,
}

impl ModernHeaders {
    /// The first header whose value is over [`MAX_HEADER_VALUE_BYTES`], and its length.
    pub(crate) fn oversized(&self) -> Option<(String, usize)> {
        let name = self.name.iter().map(|value| ("Mcp-Name", value));
        let params = (self.params.iter()).map(|(header, value)| (header.as_str(), value));
        name.chain(params)
            .find(|(_, value)| value.len() > MAX_HEADER_VALUE_BYTES)
            .map(|(header, value)| (header.to_owned(), value.len()))
    }
}

/// What an outgoing frame is, as far as a transport cares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Message {
    /// One of our requests: its id and method.
    Request {
        id: RequestId,
        method: String,
    },
    Notification {
        method: String,
    },
    /// Our answer to a server's request.
    Response,
}

impl Message {
    /// The method, or "a response".
    pub(crate) fn method(&self) -> &str {
        match self {
            Message::Request { method, .. } | Message::Notification { method } => method,
            Message::Response => "a response",
        }
    }
}

/// Where the protocol core's outbound frames go.
pub(crate) enum Outlet {
    /// Frames as they are (stdio, caller streams).
    Frames(FrameSink),
    /// Each frame with its id and method (HTTP: one exchange per message).
    Messages(MessageSink),
}

/// How long closing an in-process connection waits for its driver to flush and finish.
const STREAMS_CLOSE_BUDGET: Duration = Duration::from_millis(750);

/// An open transport, before the protocol runs on it.
pub(crate) struct Opened {
    pub(crate) stream: InboundStream,
    pub(crate) sink: Outlet,
    pub(crate) backend: Backend,
    pub(crate) background: Option<Background>,
}

/// A transport's lifecycle.
#[derive(Debug)]
pub(crate) enum Backend {
    /// Caller-supplied streams (in-process servers, tests): nothing to kill.
    Streams,
    /// A child process (the owning handle: dropping it kills the group).
    Stdio(Process),
    /// A connection to a remote server (Streamable HTTP or legacy HTTP+SSE, in `crate::http`),
    /// seen only through how it closes.
    Remote(Box<dyn Remote>),
}

/// The lifecycle of a transport that is no local process: a remote server's connection. The
/// transport implements it (`crate::http`); this seam names no transport.
pub(crate) trait Remote: std::fmt::Debug + Send + Sync + 'static {
    /// Ends the connection gracefully within bounded budgets; idempotent.
    fn close<'a>(&'a self, peer: &'a Peer) -> Pin<Box<dyn Future<Output = ()> + Send + 'a>>;
}

impl Backend {
    /// Ends the connection gracefully within bounded budgets; idempotent.
    pub(crate) async fn close(&self, peer: &Peer) {
        match self {
            Backend::Streams => {
                let _ =
                    tokio::time::timeout(STREAMS_CLOSE_BUDGET, peer.shutdown(Duration::ZERO)).await;
            }
            // Closing stdin goes through the jsonrpc shutdown, which flushes what is queued and
            // fails what is pending; then SIGTERM, then SIGKILL, each to the whole group.
            Backend::Stdio(process) => {
                process
                    .close(CloseBudgets::MCP_STDIO, async {
                        let _ = peer.shutdown(Duration::ZERO).await;
                    })
                    .await;
            }
            Backend::Remote(remote) => remote.close(peer).await,
        }
    }

    /// Says goodbye for the last client handle when a cancel notice may still be unwritten
    /// ([`CANCEL_FLUSH`]): the connection writes what is queued and closes (for stdio: the
    /// server's stdin), and a stdio server gets what is left of `CANCEL_FLUSH` to exit by
    /// itself before its group is killed, by the close sequence or, at the latest, by the drop
    /// of `self`. Over HTTP the transport's driver then finishes the notice's POST (bounded
    /// the same way, `http::streamable`).
    ///
    /// The connection's driver must be polled meanwhile (its writer writes the notice).
    pub(crate) async fn farewell(self, peer: &Peer) {
        match &self {
            Backend::Stdio(process) => {
                let budgets = CloseBudgets {
                    stdin: CANCEL_FLUSH,
                    term: None,
                    kill: Duration::ZERO,
                };
                process
                    .close(budgets, async {
                        peer.shutdown(Duration::ZERO).await;
                    })
                    .await;
            }
            Backend::Streams | Backend::Remote(_) => {
                let _ = tokio::time::timeout(CANCEL_FLUSH, peer.shutdown(Duration::ZERO)).await;
            }
        }
    }

    /// Kills at once, synchronously (for `Drop`).
    pub(crate) fn kill_now(&self) {
        if let Backend::Stdio(process) = self {
            process.kill();
        }
    }

    /// Waits up to `within` for the process to have exited and its stderr to be drained, so
    /// an error can carry the whole story.
    pub(crate) async fn settle(&self, within: Duration) {
        if let Backend::Stdio(process) = self {
            let _ = tokio::time::timeout(within, process.monitor().finished()).await;
        }
    }

    /// The exit status (in words) and the redacted stderr tail, when there are any.
    pub(crate) fn diagnostics(&self) -> (Option<String>, Option<String>) {
        match self {
            Backend::Streams | Backend::Remote(_) => (None, None),
            Backend::Stdio(process) => (
                process.exit().map(|exit| exit.to_string()),
                Some(process.stderr_tail()),
            ),
        }
    }

    /// The process id (also its process group id), for a stdio server.
    pub(crate) fn pid(&self) -> Option<u32> {
        match self {
            Backend::Streams | Backend::Remote(_) => None,
            Backend::Stdio(process) => Some(process.pid()),
        }
    }
}

/// NDJSON over caller-supplied byte streams.
pub(crate) fn streams<R, W>(reader: R, writer: W, config: &Config) -> Opened
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (stream, sink) = sidewire_jsonrpc::ndjson(reader, writer, config);
    Opened {
        stream: Box::pin(stream.map_ok(Inbound::Frame)),
        sink: Outlet::Frames(Box::pin(sink)),
        backend: Backend::Streams,
        background: None,
    }
}
