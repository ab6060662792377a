//! The host's handlers for E→H requests (spec §5): `host/ui/publish`, `host/ui/request` and
//! `host/content/read`. Everything else a sidecar sends as a request is answered `-32601` by
//! the router; notifications (the Provider part, which this host does not implement) are
//! dropped.

use std::sync::{Arc, Weak};

use sidewire_ext_protocol::{ContentReadParams, Method, Reason, decode_params};
use sidewire_jsonrpc::{ErrorObject, Router};

use super::Connection;
use crate::ui;
use crate::util::lock;

fn gone() -> ErrorObject {
    Reason::ProviderInterrupted.error_object_with("the connection is closing")
}

fn upgrade(weak: &Weak<Connection>) -> Result<Arc<Connection>, ErrorObject> {
    weak.upgrade().ok_or_else(gone)
}

pub(super) fn router(weak: Weak<Connection>) -> Router {
    let publish = weak.clone();
    let request = weak.clone();
    let content = weak;
    Router::new()
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
        })
}
