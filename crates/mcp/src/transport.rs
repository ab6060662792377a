//! The seam between the protocol core and the transports.
//!
//! A transport yields what the jsonrpc peer runs on, a stream of inbound frames and a sink for
//! outbound ones, plus a [`Backend`] for its lifecycle (closing, killing, diagnostics) and an
//! optional background future (stdio: supervising the process; HTTP: the transport driver that
//! runs the POSTs and streams). The protocol core never looks past that.

use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_core::Stream;
use futures_util::Sink;
use sidewire_jsonrpc::{Config, Peer};
use sidewire_process::{CloseBudgets, Process};
use tokio::io::{AsyncRead, AsyncWrite};

use crate::http::{Failures, HttpBackend};
use crate::protocol::session::Background;
use crate::{Error, ServerSpec, Transport};

/// Inbound frames, boxed so every transport drives the same jsonrpc driver type.
pub(crate) type FrameStream =
    Pin<Box<dyn Stream<Item = Result<Bytes, sidewire_framing::Error>> + Send + 'static>>;
/// Outbound frames.
pub(crate) type FrameSink =
    Pin<Box<dyn Sink<Bytes, Error = sidewire_framing::Error> + Send + 'static>>;

/// How long closing an in-process connection waits for its driver to flush and finish.
const STREAMS_CLOSE_BUDGET: Duration = Duration::from_millis(750);

/// An open transport, before the protocol runs on it.
pub(crate) struct Opened {
    pub(crate) stream: FrameStream,
    pub(crate) sink: FrameSink,
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
    /// Streamable HTTP or legacy HTTP+SSE.
    Http(HttpBackend),
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
            Backend::Http(http) => http.close(peer).await,
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
            Backend::Streams | Backend::Http(_) => (None, None),
            Backend::Stdio(process) => (
                process.exit().map(|exit| exit.to_string()),
                Some(process.stderr_tail()),
            ),
        }
    }

    /// The process id (also its process group id), for a stdio server.
    pub(crate) fn pid(&self) -> Option<u32> {
        match self {
            Backend::Streams | Backend::Http(_) => None,
            Backend::Stdio(process) => Some(process.pid()),
        }
    }

    /// Where an HTTP transport keeps the failures it answered requests with.
    pub(crate) fn failures(&self) -> Option<Arc<Failures>> {
        match self {
            Backend::Http(http) => Some(http.failures()),
            _ => None,
        }
    }
}

/// Opens the transport a spec names.
pub(crate) async fn open(spec: &ServerSpec, config: &Config) -> Result<Opened, Error> {
    match spec.transport {
        Transport::Stdio => crate::stdio::open(spec, config).await,
        Transport::StreamableHttp | Transport::Sse => crate::http::open(spec),
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
        stream: Box::pin(stream),
        sink: Box::pin(sink),
        backend: Backend::Streams,
        background: None,
    }
}
