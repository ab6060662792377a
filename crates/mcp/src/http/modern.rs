//! Modern-era (2026-07-28) exchanges over Streamable HTTP.
//!
//! A modern request is one POST carrying, besides the body, `MCP-Protocol-Version` (the
//! version in the body's `_meta`), `Mcp-Method`, `Mcp-Name` (tool or prompt name, resource
//! URI) and the `Mcp-Param-*` mirrors (see `protocol::headers`), all computed once when the
//! frame was classified. There is no session, no GET stream, no `initialize` to wait for.
//!
//! The answer is a JSON body or an SSE stream up to the response, without resumption: a stream
//! that ends early fails the request (the protocol layer sends an idempotent one again with a
//! new id). A non-2xx answer whose body is a JSON-RPC error is the server's answer: it is
//! delivered as the response (so `-32022`, `-32020` or `-32601` reach the caller typed), except
//! for the era probe, where only the modern codes count, so that a legacy server's "not
//! initialized" 400 reads as the HTTP status that sends the client to `initialize`.
//!
//! Cancelling is closing the response stream: `notifications/cancelled` for a modern request
//! in flight never goes on the wire; the exchange is aborted instead ([`Aborts`]).
//!
//! Of the protocol core it uses only `protocol::era`: the [`Era`] and the modern error codes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use futures_util::future::{AbortHandle, Abortable};
use http::Method;
use http::header::{HeaderName, HeaderValue};
use serde::Deserialize;
use serde_json::value::RawValue;
use sidewire_jsonrpc::{Request as _, lock};

use super::Cause;
use crate::http::client::{BackgroundTask, error_body};
use crate::http::streamable::{read_response, send_initialize};
use crate::http::{Ctx, VERSION_HEADER};
use crate::protocol::era::{self, Era};
use crate::transport::{Message, ModernHeaders, Outbound, RequestId};

/// `Mcp-Method`.
const METHOD_HEADER: HeaderName = HeaderName::from_static("mcp-method");
/// `Mcp-Name`.
const NAME_HEADER: HeaderName = HeaderName::from_static("mcp-name");

/// The modern exchanges in flight, by request id, so a cancel can close one. Holds at most the
/// exchanges in flight (the driver's cap).
#[derive(Debug, Default)]
pub(crate) struct Aborts(Mutex<HashMap<RequestId, AbortHandle>>);

impl Aborts {
    /// Closes the exchange of `id`; whether there was one.
    fn abort(&self, id: &RequestId) -> bool {
        match lock(&self.0).remove(id) {
            Some(handle) => {
                handle.abort();
                true
            }
            None => false,
        }
    }
}

/// What the transport driver does with an outgoing frame in the modern era: `None` when it
/// was a cancel that closed a modern exchange (nothing to send), else the task to run (a modern
/// request's exchange), or the frame back for the ordinary path.
pub(crate) fn route(
    ctx: &Arc<Ctx>,
    outbound: Outbound,
) -> Result<Option<BackgroundTask>, Outbound> {
    if let Message::Notification { method } = &outbound.message
        && method == crate::protocol::methods::CANCELLED
        && let Some(id) = cancelled_id(&outbound.frame)
        && ctx.aborts.abort(&id)
    {
        tracing::debug!(server = %ctx.state.server, id = id.as_json(), "cancelled a request by closing its stream");
        return Ok(None);
    }
    let Outbound {
        frame,
        message,
        modern: Some(headers),
    } = outbound
    else {
        return Err(outbound);
    };
    let Message::Request { id, .. } = &message else {
        return Err(Outbound {
            frame,
            message,
            modern: Some(headers),
        });
    };
    let id = id.clone();
    let (handle, registration) = AbortHandle::new_pair();
    lock(&ctx.aborts.0).insert(id.clone(), handle);
    let ctx = Arc::clone(ctx);
    Ok(Some(Box::pin(async move {
        let work = Abortable::new(exchange(&ctx, &frame, &message, &headers), registration);
        let _aborted = work.await;
        lock(&ctx.aborts.0).remove(&id);
    })))
}

/// The request id a `notifications/cancelled` names.
fn cancelled_id(frame: &[u8]) -> Option<RequestId> {
    #[derive(Deserialize)]
    struct Peek<'a> {
        #[serde(borrow)]
        params: Params<'a>,
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Params<'a> {
        #[serde(borrow)]
        request_id: &'a RawValue,
    }
    let peek: Peek<'_> = serde_json::from_slice(frame).ok()?;
    Some(RequestId::from_json(peek.params.request_id.get()))
}

/// One modern request's exchange, bounded by the request budget; a failure fails the request.
async fn exchange(ctx: &Arc<Ctx>, frame: &Bytes, message: &Message, headers: &ModernHeaders) {
    let budget = ctx.state.request_budget;
    let result = match tokio::time::timeout(budget, post(ctx, frame, message, headers)).await {
        Ok(result) => result,
        Err(_) => Err(Cause::Unanswered(format!(
            "no answer within {} ms",
            budget.as_millis()
        ))),
    };
    if let Err(cause) = result {
        let url = ctx.state.url.clone();
        ctx.fail(message, &url, cause).await;
    }
}

/// The POST and its answer.
async fn post(
    ctx: &Arc<Ctx>,
    frame: &Bytes,
    message: &Message,
    modern: &ModernHeaders,
) -> Result<(), Cause> {
    let state = &ctx.state;
    let Message::Request { id, method } = message else {
        return Err(Cause::Unanswered("not a request".to_owned()));
    };
    // Refused before anything is sent (see `MAX_HEADER_VALUE_BYTES`).
    if let Some((header, bytes)) = modern.oversized() {
        return Err(Cause::HeaderTooLarge { header, bytes });
    }
    let mut headers = state.post_headers(None);
    let header = |value: &str| {
        HeaderValue::from_str(value).map_err(|_| {
            Cause::Unanswered(format!(
                "\"{}\" cannot be sent as an HTTP header value",
                crate::text::peer(value)
            ))
        })
    };
    headers.insert(VERSION_HEADER, header(&modern.version)?);
    headers.insert(METHOD_HEADER, header(&modern.method)?);
    if let Some(name) = &modern.name {
        headers.insert(NAME_HEADER, header(name)?);
    }
    for (name, value) in &modern.params {
        let name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
            Cause::Unanswered(format!(
                "\"{}\" is not an HTTP header name",
                crate::text::peer(name)
            ))
        })?;
        headers.insert(name, header(value)?);
    }
    // The probe is the first request: like initialize, it waits for a server still starting.
    let mut response = if method == crate::protocol::methods::Discover::METHOD {
        send_initialize(state, &headers, frame).await?
    } else {
        state
            .send(Method::POST, &state.url, &headers, frame.clone())
            .await?
            .1
    };
    let status = response.status();
    if !status.is_success() {
        let body = error_body(response.body_mut()).await;
        return match server_error(&body, method) {
            Some(error) => {
                ctx.deliver(answer_frame(id, error)).await;
                Ok(())
            }
            None => Err(Cause::Status {
                status: status.as_u16(),
                body,
            }),
        };
    }
    read_response(ctx, response, id, false, Era::Modern)
        .await
        .map(drop)
}

/// The JSON-RPC error object of an error answer's body, when it is the server's answer to a
/// modern request (see the module docs).
fn server_error<'a>(body: &'a str, method: &str) -> Option<&'a RawValue> {
    #[derive(Deserialize)]
    struct Peek<'a> {
        #[serde(borrow)]
        error: &'a RawValue,
    }
    #[derive(Deserialize)]
    struct Code {
        code: i64,
    }
    let peek: Peek<'a> = serde_json::from_str(body).ok()?;
    let code = serde_json::from_str::<Code>(peek.error.get()).ok()?.code;
    let modern_code = matches!(
        code,
        era::HEADER_MISMATCH
            | era::MISSING_REQUIRED_CLIENT_CAPABILITY
            | era::UNSUPPORTED_PROTOCOL_VERSION
    );
    (modern_code || method != crate::protocol::methods::Discover::METHOD).then_some(peek.error)
}

/// A response to `id` carrying `error`.
fn answer_frame(id: &RequestId, error: &RawValue) -> Bytes {
    Bytes::from(format!(
        r#"{{"jsonrpc":"2.0","id":{},"error":{}}}"#,
        id.as_json(),
        error.get()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_bodies_are_answers_but_for_a_legacy_probe() {
        let not_initialized = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request: Server not initialized"}}"#;
        assert!(server_error(not_initialized, "server/discover").is_none());
        assert!(server_error(not_initialized, "tools/call").is_some());
        let unsupported = r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32022,"message":"u","data":{"supported":["2026-07-28"]}}}"#;
        assert!(server_error(unsupported, "server/discover").is_some());
        assert!(server_error("Not Found", "tools/call").is_none());
        let frame = answer_frame(
            &RequestId::from_json("7"),
            server_error(unsupported, "x").unwrap(),
        );
        let value: serde_json::Value = serde_json::from_slice(&frame).unwrap();
        assert_eq!(value["id"], 7);
        assert_eq!(value["error"]["code"], -32022);
    }

    #[test]
    fn a_cancel_names_its_request() {
        let frame = br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":12,"reason":"x"}}"#;
        assert_eq!(cancelled_id(frame), Some(RequestId::from_json("12")));
        assert_eq!(cancelled_id(b"{}"), None);
    }
}
