//! The legacy HTTP+SSE transport (2024-11-05).
//!
//! A GET opens the event stream; its first meaningful event is `endpoint`, whose data is the
//! URL to POST messages to, resolved against the stream's final URL and refused when it is on
//! another origin (the configured headers, credentials included, go with every POST). Every
//! server message, responses included, then arrives as a `message` event on the stream; a
//! POST's own answer (202 and a short body) is only checked for its status. When the stream
//! ends the connection is over.
//!
//! The automatic mode lands here from Streamable HTTP ([`fall_back`]) when the initialize POST
//! gets 400, 404 or 405, or its stream announces an `endpoint`.

use std::sync::Arc;

use bytes::Bytes;
use http::Method;

use crate::http::client::{self, ReadError, SseBody, ensure_success, error_body, is_event_stream};
use crate::http::{Ctx, Mode};
use crate::sync::lock;
use crate::transport::Cause;

/// Switches a connection to the legacy transport and sends `frame` (the initialize request)
/// that way.
pub(crate) async fn fall_back(ctx: &Arc<Ctx>, frame: &Bytes) -> Result<(), Cause> {
    *lock(&ctx.state.mode) = Mode::Legacy;
    ctx.run(Box::pin(stream(Arc::clone(ctx))));
    post(ctx, frame).await
}

/// POSTs one message to the announced endpoint, waiting for the announcement.
pub(crate) async fn post(ctx: &Arc<Ctx>, frame: &Bytes) -> Result<(), Cause> {
    let state = &ctx.state;
    let mut endpoint = state.endpoint.subscribe();
    let endpoint = endpoint
        .wait_for(Option::is_some)
        .await
        .map_err(|_| Cause::Unanswered("the transport ended".to_owned()))?
        .clone()
        .expect("waited for Some");
    let endpoint = endpoint.map_err(Cause::Unanswered)?;
    let headers = state.post_headers(None);
    let (_, mut response) = state
        .client
        .send(Method::POST, &endpoint, &headers, frame.clone())
        .await?;
    ensure_success(&mut response).await?;
    // The answer arrives on the stream; the body is at most an acknowledgement.
    drop(error_body(response.body_mut()).await);
    Ok(())
}

/// Sets the endpoint (or why there is none) unless it is already set.
fn announce(ctx: &Ctx, endpoint: Result<url::Url, String>) {
    ctx.state.endpoint.send_if_modified(|current| {
        if current.is_some() {
            return false;
        }
        *current = Some(endpoint);
        true
    });
}

/// The event stream: the endpoint announcement, then every server message. Ends the transport
/// when it ends after an announcement; before one, the waiting POST reports why.
pub(crate) async fn stream(ctx: Arc<Ctx>) {
    let state = &ctx.state;
    let headers = state.get_headers(None);
    let response = state
        .client
        .send(Method::GET, &state.url, &headers, Bytes::new())
        .await;
    let (final_url, mut response) = match response {
        Ok(ok) => ok,
        Err(err) => {
            announce(
                &ctx,
                Err(format!("opening the SSE stream failed: {}", err.0)),
            );
            return;
        }
    };
    if client::is_failure(response.status()) || !is_event_stream(&response) {
        let status = response.status();
        let body = error_body(response.body_mut()).await;
        announce(
            &ctx,
            Err(format!(
                "the SSE endpoint answered {status} without an event stream: {body}"
            )),
        );
        return;
    }
    let mut events = SseBody::new(response.into_body(), state.cap);
    loop {
        match events.next().await {
            Ok(Some(event)) if event.event == "endpoint" => {
                let announced = match final_url.join(event.data.trim()) {
                    Ok(url) if client::same_origin(&url, &final_url) => Ok(url),
                    Ok(url) => Err(format!(
                        "the server announced a cross-origin endpoint ({url}); refused"
                    )),
                    Err(err) => Err(format!("the server announced an invalid endpoint: {err}")),
                };
                announce(&ctx, announced);
            }
            Ok(Some(event)) => {
                if !event.data.trim().is_empty() {
                    ctx.deliver(Bytes::from(event.data)).await;
                }
            }
            Ok(None) | Err(ReadError::Net(_)) => break,
            Err(ReadError::TooLarge(cap)) => {
                tracing::warn!(server = %state.server, cap, "skipped an oversized SSE event");
            }
        }
    }
    let had_endpoint = matches!(*state.endpoint.borrow(), Some(Ok(_)));
    announce(
        &ctx,
        Err("the SSE stream ended before announcing an endpoint".to_owned()),
    );
    if had_endpoint {
        tracing::debug!(server = %state.server, "the legacy SSE stream ended");
        let _ = ctx.end.send(true);
    }
}
