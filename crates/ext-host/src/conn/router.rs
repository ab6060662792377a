//! The host's handlers for E→H messages (spec §5): the requests `host/ui/publish`,
//! `host/ui/request` and `host/content/read`, and, for a connection whose manifest declares
//! capability `providers`, the notifications `extension/provider/stream/chunk` and `…/end`
//! (§14), handled on the driver in arrival order; on a V2 connection also the five
//! `host/browser/tab/*` requests (spec delta §2.4), which this host, having no browser, refuses.
//! Everything else a sidecar sends as a request is answered `-32601` by the router; other
//! notifications (and stream notifications of a connection without `providers`) are dropped.

use std::sync::{Arc, Weak};

use serde_json::Value;
use sidewire_ext_protocol::v2::CapabilityRef;
use sidewire_ext_protocol::v2::browser::{BrowserMethod, requires_browser};
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

/// The router of one connection; `browser` registers the five `host/browser/tab/*` requests
/// (a V2 connection's registry, spec delta §2.4).
pub(super) fn router(
    weak: Weak<Connection>,
    streams: Option<Arc<Streams>>,
    browser: bool,
) -> Router {
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
    let router = if browser {
        browser_methods(router, &weak)
    } else {
        router
    };
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

/// The browser requests of a V2 connection (spec delta §2.4): this host has no browser, so
/// after strict decoding with the per-type rules (`invalid_params`) the answer is
/// `capability_not_declared` for a plugin whose installed manifest lacks the non-optional
/// `reasonix/browser/companion` requirement, else `browser_unavailable`.
fn browser_methods(mut router: Router, weak: &Weak<Connection>) -> Router {
    for method in BrowserMethod::ALL.iter().copied() {
        let weak = weak.clone();
        router = router.request_raw(method.as_str(), move |params, _ctx| {
            let conn = upgrade(&weak)?;
            let requires = conn
                .plugin
                .v2
                .as_ref()
                .map_or(&[][..], |v2| &v2.requires[..]);
            let refusal = browser_refusal(method, params.map(|p| p.get()), requires);
            Ok(std::future::ready(Err::<Value, _>(refusal)))
        });
    }
    router
}

/// The answer of a host without a browser to a browser request, in the reference's order:
/// params that fail the per-type rules are `invalid_params`; then a plugin whose installed
/// manifest lacks the non-optional `reasonix/browser/companion` requirement is
/// `capability_not_declared`; any other is `browser_unavailable`.
pub(crate) fn browser_refusal(
    method: BrowserMethod,
    params: Option<&str>,
    requires: &[CapabilityRef],
) -> ErrorObject {
    if let Err(err) = method.check_params(params) {
        return err.to_error_object();
    }
    if requires_browser(requires) {
        Reason::BrowserUnavailable.error_object_with("this host has no browser")
    } else {
        Reason::CapabilityNotDeclared.error_object_with(
            "the plugin's installed manifest does not require reasonix/browser/companion",
        )
    }
}

#[cfg(test)]
mod tests;
