//! The sample extensions behind `examples/`, as library code so that other crates can embed
//! them (the `sidewire` CLI ships starter and allow-all as a built-in sidecar; ext-host's tests
//! run the built examples as real processes).
//!
//! Each function returns a ready [`Extension`]; the example binaries only serve it. Read them
//! as the reference for writing a sidecar: each is a few lines of the public API and nothing
//! else. The pure parts (the starter rewrite) are separate functions so they are testable on
//! their own. These are demonstrations, not policy: allow-all approves every tool call.
//!
//! Behind the `samples` feature (off by default): the examples require it, and the crate's own
//! tests, ext-host's tests and the CLI enable it.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use sidewire_ext_protocol::{
    InputPayload, PermissionPayload, Severity, StatusPayload, UiActionResult, Verdict,
};

use crate::point::{self, Decision};
use crate::{Extension, HostHandle};

/// The starter extension's plugin id (its manifest `name`).
pub const STARTER_NAME: &str = "starter-extension";
/// The allow-all extension's plugin id.
pub const ALLOW_ALL_NAME: &str = "allow-all";
/// The status-card extension's plugin id.
pub const STATUS_CARD_NAME: &str = "status-card";
/// The version every sample reports; the examples' manifests carry the same.
pub const SAMPLE_VERSION: &str = "0.1.0";

/// The input prefix the starter extension rewrites.
pub const STARTER_PREFIX: &str = "starter: ";
/// What the starter extension appends to a rewritten input.
pub const STARTER_SUFFIX: &str = " [rewritten by starter-extension]";

/// The starter rewrite: text starting with `starter: ` loses the prefix and gains
/// ` [rewritten by starter-extension]`; other text is left alone (`None`).
pub fn starter_rewrite(text: &str) -> Option<String> {
    text.strip_prefix(STARTER_PREFIX)
        .map(|rest| format!("{rest}{STARTER_SUFFIX}"))
}

/// `starter-extension`: intercepts `input.receive` and applies [`starter_rewrite`].
pub fn starter() -> Extension {
    Extension::new(STARTER_NAME, SAMPLE_VERSION).on_intercept(
        point::INPUT_RECEIVE,
        |_ctx, input: InputPayload| async move {
            Ok(match starter_rewrite(&input.text) {
                Some(text) => Decision::Replace(InputPayload { text }),
                None => Decision::Continue,
            })
        },
    )
}

/// `allow-all`: answers `allow` at `permission.decision`. Should the host call it as the
/// owner of the `permission` slot (it claims none, but a manifest could be edited), it
/// replaces the payload with `hostDecision: allow` instead, the owner's way of deciding.
pub fn allow_all() -> Extension {
    Extension::new(ALLOW_ALL_NAME, SAMPLE_VERSION).on_intercept(
        point::PERMISSION_DECISION,
        |ctx, payload: PermissionPayload| async move {
            if ctx.is_strategy_call() {
                return Ok(Decision::Replace(PermissionPayload {
                    host_decision: Verdict::Allow,
                    ..payload
                }));
            }
            Ok(Decision::Allow(
                "allowed by the allow-all extension".to_owned(),
            ))
        },
    )
}

/// The surface id of the status-card extension's status line.
pub const STATUS_SURFACE: &str = "status";
/// The status-card extension's action id.
pub const REFRESH_ACTION: &str = "refresh";

/// `status-card`: publishes a status surface as soon as the connection is ready, and offers a
/// `refresh` action that publishes it again with a count.
pub fn status_card() -> Extension {
    let refreshes = Arc::new(AtomicU64::new(0));
    Extension::new(STATUS_CARD_NAME, SAMPLE_VERSION)
        .on_ready(|host| async move {
            publish_status(&host, "status-card ready").await?;
            Ok(())
        })
        .on_action(REFRESH_ACTION, "Refresh", move |host, _params| {
            let refreshes = Arc::clone(&refreshes);
            async move {
                let n = refreshes.fetch_add(1, Ordering::Relaxed) + 1;
                let accepted = publish_status(&host, &format!("refreshed {n} times")).await?;
                Ok(UiActionResult {
                    accepted,
                    message: String::new(),
                })
            }
        })
}

async fn publish_status(host: &HostHandle, label: &str) -> Result<bool, crate::Error> {
    let status = StatusPayload {
        label: label.to_owned(),
        severity: Some(Severity::Info),
        ..StatusPayload::default()
    };
    host.publish(STATUS_SURFACE, status).await
}

#[cfg(test)]
mod tests;
