//! The host's handlers for E→H messages (spec §5): the requests `host/ui/publish`,
//! `host/ui/request` and `host/content/read`, and, for a connection whose manifest declares
//! capability `providers`, the notifications `extension/provider/stream/chunk` and `…/end`
//! (§14), handled on the driver in arrival order. Everything else a sidecar sends as a request
//! is answered `-32601` by the router; other notifications (and stream notifications of a
//! connection without `providers`) are dropped.

use std::sync::{Arc, Weak};

use sidewire_ext_protocol::{ContentReadParams, Method, Reason, decode_params};
use sidewire_jsonrpc::{ErrorObject, Router};

use super::Connection;
use crate::provider::stream::{Overflow, Streams};
use crate::ui;
use crate::util::lock;

fn gone() -> ErrorObject {
    Reason::ProviderInterrupted.error_object_with("the connection is closing")
}

fn upgrade(weak: &Weak<Connection>) -> Result<Arc<Connection>, ErrorObject> {
    weak.upgrade().ok_or_else(gone)
}

pub(super) fn router(weak: Weak<Connection>, streams: Option<Arc<Streams>>) -> Router {
    let publish = weak.clone();
    let request = weak.clone();
    let content = weak.clone();
    let router = Router::new()
        .request_raw(Method::UiPublish.as_str(), move |params, _ctx| {
            ui::publish(upgrade(&publish)?, params)
        })
        .request_raw(Method::UiRequest.as_str(), move |params, _ctx| {
            ui::request(upgrade(&request)?, params)
        })
        .request_raw(Method::ContentRead.as_str(), move |params, _ctx| {
            let conn = upgrade(&content)?;
            let params: ContentReadParams =
                decode_params(params.map(|p| p.get())).map_err(|err| err.to_error_object())?;
            let page = lock(&conn.content).read(&params);
            Ok(std::future::ready(page))
        });
    let Some(streams) = streams else {
        return router;
    };
    let ends = Arc::clone(&streams);
    router
        .notification_raw(Method::StreamChunk.as_str(), move |params| {
            if let Err(Overflow(cause)) = streams.on_chunk(params)
                && let Some(conn) = weak.upgrade()
            {
                // Ordered data is never dropped for lack of room: the connection fails (§14.5).
                conn.crash(cause);
            }
        })
        .notification_raw(Method::StreamEnd.as_str(), move |params| {
            ends.on_end(params)
        })
}
