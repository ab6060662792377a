//! The protocol core's side of the transport seam: the jsonrpc peer, connected over a
//! transport's typed stream and sink.
//!
//! Outbound, a transport that wants each frame's id and method (HTTP) gets every frame the
//! jsonrpc driver writes classified once here ([`classify`]). Inbound, messages go to the
//! driver as they are, and a transport's [`Inbound::Failed`] never becomes a frame: it fails
//! that request through [`Peer::fail_request`] with the typed [`Error`] its [`Cause`] stands
//! for, which [`Error::rpc`] takes back out of the caller's `jsonrpc::Error::Local` (so
//! `Error::is_http`, `Error::http_status` and `Error::is_too_large` hold as for any error).
//! Nothing a server sends can imitate such a failure. Nor can it imitate
//! [`Inbound::SessionRenewed`] (HTTP started a new session after the old one expired), which
//! the bridge hands to the `renewed` hook [`connect`] takes: the connection marks every list
//! it caches stale and wakes its refresh (see `Shared::session_renewed`).
//!
//! The stream needs the peer that [`sidewire_jsonrpc::connect`] makes from it, so [`connect`]
//! binds it late: in a `OnceLock` set right after `connect` returns, before the driver first
//! polls the stream (nothing reads the stream before that). A failure names its request by
//! the id the request was sent with, and is handled in stream order with the frames around
//! it; our ids are never reused, so it fails that request or, when the request has ended
//! already, nothing.
//!
//! [`Cause`]: crate::transport::Cause
//! [`Error`]: crate::Error
//! [`Error::rpc`]: crate::Error::rpc

use std::borrow::Cow;
use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use futures_util::{SinkExt, TryStreamExt, future};
use serde::Deserialize;
use serde_json::value::RawValue;
use sidewire_jsonrpc::{Config, Driver, Id, Peer, Router};

use crate::protocol::headers::ToolHeaders;
use crate::transport::{
    FrameSink, Inbound, InboundStream, Message, ModernHeaders, Outbound, Outlet, RequestFailed,
    RequestId,
};

/// What an outgoing frame is: a request (with its id and method), a notification, or our
/// response to a server's request; and, for a modern-era request, the headers that go with it
/// (`tools` gives the `Mcp-Param-*` designations of the listed tools).
pub(crate) fn classify(frame: Bytes, tools: &ToolHeaders) -> Outbound {
    #[derive(Deserialize)]
    struct Peek<'a> {
        #[serde(borrow)]
        id: Option<&'a RawValue>,
        method: Option<String>,
        #[serde(borrow)]
        params: Option<&'a RawValue>,
    }
    #[derive(Deserialize)]
    struct PeekParams<'a> {
        #[serde(borrow, rename = "_meta")]
        meta: Option<PeekMeta<'a>>,
        name: Option<Cow<'a, str>>,
        uri: Option<Cow<'a, str>>,
        #[serde(borrow)]
        arguments: Option<&'a RawValue>,
    }
    #[derive(Deserialize)]
    struct PeekMeta<'a> {
        #[serde(borrow, rename = "io.modelcontextprotocol/protocolVersion")]
        version: Option<Cow<'a, str>>,
    }
    let Ok(peek) = serde_json::from_slice::<Peek<'_>>(&frame) else {
        return Outbound {
            frame,
            message: Message::Response,
            modern: None,
        };
    };
    // The params are read apart, so params of an unexpected shape cannot hide the request.
    let params = peek
        .params
        .and_then(|params| serde_json::from_str::<PeekParams<'_>>(params.get()).ok());
    let modern = match (&peek.method, &params) {
        (Some(method), Some(params)) => params
            .meta
            .as_ref()
            .and_then(|meta| meta.version.as_deref())
            .map(|version| {
                let name = match method.as_str() {
                    "tools/call" | "prompts/get" => params.name.as_deref(),
                    "resources/read" => params.uri.as_deref(),
                    _ => None,
                };
                let mut headers = ModernHeaders {
                    version: version.to_owned(),
                    method: method.clone(),
                    name: name.map(crate::protocol::headers::encode),
                    params: Vec::new(),
                };
                if method == "tools/call"
                    && let (Some(tool), Some(arguments)) = (&params.name, params.arguments)
                    && let Some(designations) = tools.get(tool)
                    && let Ok(arguments) =
                        serde_json::from_str::<serde_json::Value>(arguments.get())
                {
                    headers.params =
                        crate::protocol::headers::param_headers(&designations, &arguments);
                }
                Box::new(headers)
            }),
        _ => None,
    };
    let message = match peek {
        Peek {
            id: Some(id),
            method: Some(method),
            ..
        } => Message::Request {
            id: RequestId::from_json(id.get()),
            method,
        },
        Peek {
            id: None,
            method: Some(method),
            ..
        } => Message::Notification { method },
        _ => Message::Response,
    };
    Outbound {
        frame,
        message,
        modern,
    }
}

/// What the bridge runs when the transport renewed its session.
pub(crate) type Renewed = Box<dyn Fn() + Send + Sync + 'static>;

/// Connects the jsonrpc peer over a transport's stream and sink; `renewed` runs (on the
/// driver, in stream order) each time the transport says it started a new session.
pub(crate) fn connect(
    stream: InboundStream,
    outlet: Outlet,
    router: Router,
    config: Config,
    renewed: Renewed,
    tools: Arc<ToolHeaders>,
) -> (Peer, Driver<InboundFrames, FrameSink>) {
    let bound = Arc::new(OnceLock::new());
    let (stream, sink) = frames(stream, outlet, Arc::clone(&bound), renewed, tools);
    let (peer, driver) = sidewire_jsonrpc::connect(stream, sink, router, config);
    // Before anything polls the driver, so before the stream yields its first item.
    let _ = bound.set(peer.clone());
    (peer, driver)
}

/// The jsonrpc driver's stream and sink over a transport's; failures go to the peer bound
/// in `peer`.
fn frames(
    stream: InboundStream,
    outlet: Outlet,
    peer: Arc<OnceLock<Peer>>,
    renewed: Renewed,
    tools: Arc<ToolHeaders>,
) -> (InboundFrames, FrameSink) {
    let stream = Box::pin(stream.try_filter_map(move |item| {
        future::ready(Ok(match item {
            Inbound::Frame(frame) => Some(frame),
            Inbound::Failed(failed) => {
                fail(peer.get(), failed);
                None
            }
            Inbound::SessionRenewed => {
                renewed();
                None
            }
        }))
    }));
    let sink = match outlet {
        Outlet::Frames(sink) => sink,
        Outlet::Messages(sink) => {
            Box::pin(sink.with(move |frame| future::ready(Ok(classify(frame, &tools)))))
                as FrameSink
        }
    };
    (stream, sink)
}

/// Fails the request a transport could not deliver or get answered, with its typed error.
fn fail(peer: Option<&Peer>, failed: RequestFailed) {
    let RequestFailed { id, method, error } = failed;
    let failed = match (peer, jsonrpc_id(&id)) {
        (Some(peer), Some(wire)) => peer.fail_request(&wire, Box::new(error)),
        _ => false,
    };
    if !failed {
        // Its caller gave up already (a timeout, a cancel), as for a late response.
        tracing::debug!(id = id.as_json(), %method, "a transport failure for a request no longer pending");
    }
}

/// The jsonrpc id a request of ours was sent with: ours are integers, so no other id is one.
fn jsonrpc_id(id: &RequestId) -> Option<Id> {
    id.as_json().parse().ok().map(Id::int)
}

/// The inbound frames the jsonrpc driver reads.
pub(crate) type InboundFrames = std::pin::Pin<
    Box<dyn futures_core::Stream<Item = Result<Bytes, sidewire_framing::Error>> + Send + 'static>,
>;
