//! Provider extensions on the host (spec §14): sidecars that serve models.
//!
//! * **Catalog** ([`catalog`]): each connection whose manifest declares capability `providers`
//!   has a list of [`ProviderDescriptor`]s, the handshake's `providers` at first (§6.3 checks 6
//!   and 7 already held), replaced by [`ExtensionHost::refresh_providers`](crate::ExtensionHost::refresh_providers) when
//!   `extension/provider/catalog` answers a list that passes §14.2 (unique refs, each with the
//!   plugin's prefix); a violating list is rejected whole with a warning.
//! * **Routing**: a stream is opened only for a ref in the current catalog, and only on the
//!   connection whose list holds it; any other ref fails before a frame is written
//!   (`invalid_params`, host-local). Connections without capability `providers` get no stream
//!   handlers at all, so their stream notifications are dropped.
//! * **Streams** ([`stream`]): the host mints `streamId`, registers the stream before writing
//!   `stream/open` (`seqBase` 0, or 1 on a v2 connection; the 30 s deadline of §2.5), and reorders, checks and delivers
//!   the chunks through the sans-IO [`reorder`] state machine to a [`ProviderStream`]. A
//!   stream that goes idle (nothing new within its idle bound, 60 s by default, the host's own
//!   rule) fails `Error::is_stream_idle` and is cancelled on the sidecar; a chunk that does not
//!   decode fails its stream naming it, instead of leaving a gap.

pub(crate) mod catalog;
pub(crate) mod reorder;
pub(crate) mod stream;

use std::sync::Arc;
use std::time::Duration;

use sidewire_ext_protocol::{
    Method, ProtocolProfile, ProviderDescriptor, ProviderRequest, Reason, StreamOpenParams,
    StreamOpenResult, decode_result,
};
use tokio::sync::OwnedRwLockReadGuard;

pub use self::catalog::CatalogEntry;
pub use self::stream::ProviderStream;
use crate::error::{Error, ProviderFailure};
use crate::generation::Generation;

/// What to stream from a provider: the ref the user selected, optional model and effort
/// overrides, and the request.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct StreamRequest {
    /// The selected provider ref (`plugin/<pluginId>/<provider>/<model>`).
    pub provider_ref: String,
    /// A model override; empty for none.
    pub model: String,
    /// A reasoning effort; empty for none.
    pub effort: String,
    /// The request.
    pub request: ProviderRequest,
    /// How long the stream may go with nothing arriving (counted from the open's answer, reset
    /// by each new chunk) before it fails [`Error::is_stream_idle`] and is cancelled on the
    /// sidecar; `None`: the host's [`HostConfig::stream_idle_timeout`](crate::HostConfig::stream_idle_timeout).
    pub idle_timeout: Option<Duration>,
}

impl StreamRequest {
    /// A request for `provider_ref`, with no model or effort override.
    pub fn new(provider_ref: impl Into<String>, request: ProviderRequest) -> Self {
        StreamRequest {
            provider_ref: provider_ref.into(),
            model: String::new(),
            effort: String::new(),
            request,
            idle_timeout: None,
        }
    }

    /// With a model override.
    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.model = model.into();
        self
    }

    /// With a reasoning effort.
    pub fn effort(mut self, effort: impl Into<String>) -> Self {
        self.effort = effort.into();
        self
    }

    /// With an idle bound of its own (at least 1 ms) instead of the host's.
    pub fn idle_timeout(mut self, timeout: Duration) -> Self {
        self.idle_timeout = Some(timeout.max(MIN_IDLE_TIMEOUT));
        self
    }
}

/// The shortest idle bound a stream can have.
pub(crate) const MIN_IDLE_TIMEOUT: Duration = Duration::from_millis(1);

/// A provider failure that names no plugin: the ref is not in the catalog.
fn unknown_ref(reference: &str) -> Error {
    Error::Provider(Box::new(ProviderFailure {
        plugin: None,
        provider_ref: reference.to_owned(),
        reason: Reason::InvalidParams,
        message: format!(
            "no running extension serves provider {reference:?} (not in the provider catalog)"
        ),
        idle_timeout: None,
    }))
}

/// Opens a stream for `request` on the connection of `generation` whose catalog lists its ref.
///
/// # Cancel safety
///
/// Dropping the future after the open was written drops the stream, which cancels it.
pub(crate) async fn open(
    generation: &Generation,
    turn: &Arc<OwnedRwLockReadGuard<()>>,
    request: StreamRequest,
) -> Result<ProviderStream, Error> {
    let Some(conn) = catalog::route(generation, &request.provider_ref) else {
        return Err(unknown_ref(&request.provider_ref));
    };
    let plugin = conn.plugin.id.clone();
    let fail = |reason: Reason, message: String| {
        Error::Provider(Box::new(ProviderFailure {
            plugin: Some(plugin.clone()),
            provider_ref: request.provider_ref.clone(),
            reason,
            message,
            idle_timeout: None,
        }))
    };
    let idle_timeout = request
        .idle_timeout
        .unwrap_or_else(|| conn.shared.config.get_stream_idle_timeout());
    let id = conn.streams.register(idle_timeout).map_err(|reason| {
        let why = if reason == Reason::ProviderFailed {
            format!("already has {} open streams", stream::MAX_STREAMS)
        } else {
            "is not running".to_owned()
        };
        fail(reason, format!("extension {plugin} {why}"))
    })?;
    let stream = ProviderStream::new(
        Arc::clone(conn),
        id.clone(),
        request.provider_ref.clone(),
        Arc::clone(turn),
    );
    let params = StreamOpenParams {
        stream_id: id,
        provider_ref: request.provider_ref.clone(),
        model: request.model,
        effort: request.effort,
        request: request.request,
        // v1 numbers chunks from `seqBase + 1` and hosts send 0; a v2 host sends 1 and
        // expects the first chunk to be 1 (spec delta §2.11): the first seq is 1 either way.
        seq_base: match conn.profile() {
            ProtocolProfile::V2 => 1,
            _ => 0,
        },
    };
    let timeout = conn.shared.config.get_provider_call_timeout();
    let what = Method::StreamOpen.as_str();
    let answer = conn.call(Method::StreamOpen, &params, timeout, what).await;
    let refused = match answer {
        Ok(raw) => match decode_result::<StreamOpenResult>(raw.get()) {
            Ok(StreamOpenResult { accepted: true }) => {
                conn.streams.opened(stream.stream_id());
                return Ok(stream);
            }
            Ok(StreamOpenResult { accepted: false }) => fail(
                Reason::ProviderFailed,
                format!(
                    "extension {plugin} refused to open a stream of provider {} \
                     (accepted: false)",
                    request.provider_ref
                ),
            ),
            Err(err) => fail(
                Reason::ProtocolError,
                conn.shared.redact(&format!(
                    "extension {plugin} sent an invalid {what} result: {err}"
                )),
            ),
        },
        Err(failure) => fail(failure.reason, failure.message),
    };
    if refused.reason() == Some(Reason::InterceptTimeout) {
        // The sidecar may still accept late and stream: dropping the stream cancels it.
        drop(stream);
    } else {
        stream.opened_not();
    }
    Err(refused)
}

/// The descriptors of one connection, shared cheaply.
pub(crate) type Catalog = Arc<[ProviderDescriptor]>;

#[cfg(test)]
mod tests;
