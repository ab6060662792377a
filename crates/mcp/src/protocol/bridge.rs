//! The protocol core's side of the transport seam: what the jsonrpc peer runs on, built from a
//! transport's typed stream and sink.
//!
//! Outbound, a transport that wants each frame's id and method (HTTP) gets every frame the
//! jsonrpc driver writes classified once here ([`classify`]). Inbound, messages go to the
//! driver as they are, and a transport's [`Inbound::Failed`] becomes the typed error of that
//! request's caller.
//!
//! That last step is the one place a failure crosses into JSON-RPC: the jsonrpc peer ends a
//! pending request only when a response with its id arrives, so the failed request is answered
//! here with an error object whose `data` names an entry in [`Failures`], and the caller's
//! error is turned back into the typed [`Error`] (`Error::is_http`, `Error::http_status`) by
//! [`Failures::take`]. Entries are only created here, from the transport's typed items, and each
//! is claimed once, at once; an error object from the server that imitates the shape names no
//! entry and stays an ordinary remote error. (A jsonrpc API that fails a pending request with
//! a local cause would remove the table.)

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use futures_util::{SinkExt, TryStreamExt, future};
use serde::Deserialize;
use serde_json::json;
use serde_json::value::RawValue;
use sidewire_jsonrpc::ErrorObject;

use crate::Error;
use crate::sync::lock;
use crate::transport::{
    FrameSink, Inbound, InboundStream, Message, Outbound, Outlet, RequestFailed, RequestId,
};

/// What an outgoing frame is: a request (with its id and method), a notification, or our
/// response to a server's request.
pub(crate) fn classify(frame: Bytes) -> Outbound {
    #[derive(Deserialize)]
    struct Peek<'a> {
        #[serde(borrow)]
        id: Option<&'a RawValue>,
        method: Option<String>,
    }
    let message = match serde_json::from_slice::<Peek<'_>>(&frame) {
        Ok(Peek {
            id: Some(id),
            method: Some(method),
        }) => Message::Request {
            id: RequestId::from_json(id.get()),
            method,
        },
        Ok(Peek {
            id: None,
            method: Some(method),
        }) => Message::Notification { method },
        _ => Message::Response,
    };
    Outbound { frame, message }
}

/// The jsonrpc driver's stream and sink over a transport's.
pub(crate) fn frames(
    stream: InboundStream,
    outlet: Outlet,
    failures: Arc<Failures>,
) -> (InboundFrames, FrameSink) {
    let stream = Box::pin(stream.map_ok(move |item| match item {
        Inbound::Frame(frame) => frame,
        Inbound::Failed(failed) => failures.answer(failed),
    }));
    let sink = match outlet {
        Outlet::Frames(sink) => sink,
        Outlet::Messages(sink) => {
            Box::pin(sink.with(|frame| future::ready(Ok(classify(frame))))) as FrameSink
        }
    };
    (stream, sink)
}

/// The inbound frames the jsonrpc driver reads.
pub(crate) type InboundFrames = std::pin::Pin<
    Box<dyn futures_core::Stream<Item = Result<Bytes, sidewire_framing::Error>> + Send + 'static>,
>;

/// Failed requests answered here, waiting for their callers to claim the typed error; see the
/// module docs.
#[derive(Default)]
pub(crate) struct Failures {
    next: AtomicU64,
    table: Mutex<HashMap<u64, Error>>,
}

/// The `data` member that names a [`Failures`] entry.
const FAILURE_KEY: &str = "sidewireTransportFailure";
/// The most failures kept unclaimed (a caller that gave up never claims its entry).
const MAX_FAILURES: usize = 256;

impl Failures {
    /// Records the typed error of `failed` and returns the JSON-RPC error response that ends
    /// the request.
    pub(crate) fn answer(&self, failed: RequestFailed) -> Bytes {
        let RequestFailed {
            id,
            method,
            url,
            cause,
        } = failed;
        let error = cause.into_error(&method, &url);
        let key = self.next.fetch_add(1, Ordering::Relaxed);
        let message = error.to_string();
        {
            let mut table = lock(&self.table);
            if table.len() >= MAX_FAILURES {
                table.clear();
            }
            table.insert(key, error);
        }
        let id = RawValue::from_string(id.as_json().to_owned()).unwrap_or_else(|_| raw_null());
        let frame = json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": { "code": -32000, "message": message, "data": { FAILURE_KEY: key } },
        });
        Bytes::from(frame.to_string())
    }

    /// The typed failure an error object stands for, when this bridge made it.
    pub(crate) fn take(&self, error: &ErrorObject) -> Option<Error> {
        let key = error.data.as_ref()?.get(FAILURE_KEY)?.as_u64()?;
        lock(&self.table).remove(&key)
    }
}

fn raw_null() -> Box<RawValue> {
    RawValue::from_string("null".to_owned()).expect("null is JSON")
}
