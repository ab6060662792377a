//! The host handle: how extension code calls the host (`host/ui/publish`, `host/ui/request`,
//! `host/content/read`), passed explicitly to every callback.
//!
//! Every call checks the state first and fails locally with [`Error::NotReady`], writing
//! nothing, before the connection is ready (§6.5). Values the extension builds are checked
//! against the protocol's strict decoding before they are sent, so a mistake is reported to the
//! author with its JSON path rather than by the host. The handle holds no ambient state: it is
//! an `Arc` around one connection.

use std::fmt;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde_json::Value;
use sidewire_ext_protocol::methods::{ContentRead, RequestMethod, UiPublish, UiRequest};
use sidewire_ext_protocol::v2::ui::{self as v2ui, PanelPayload, ViewPayload};
use sidewire_ext_protocol::{
    CALL_TIMEOUT, CardPayload, ContentReadParams, Dto, ExternalizedField, FieldKind,
    HostCapabilities, InitializeParams, ManifestExpectation, NotificationPayload, ProtocolProfile,
    Reason, SessionContext, StatusPayload, SurfacePayload, Target, UiActionDecl, UiFormField,
    UiFormPayload, UiPublishParams, UiPublishResult, UiRequestParams, UiRequestResult, decode,
    decode_result,
};
use sidewire_jsonrpc::{CallOptions, Peer};

use crate::Error;
use crate::content::Reassembly;
use crate::log::Logger;
use crate::state::StateCell;

/// The handle for calling the host. Cheap to clone; every clone talks to the same connection.
#[derive(Clone)]
pub struct HostHandle {
    pub(crate) inner: Arc<HostInner>,
}

pub(crate) struct HostInner {
    /// Set right after the connection is made, before its driver first runs.
    pub(crate) peer: OnceLock<Peer>,
    pub(crate) state: StateCell,
    /// Set while `extension/initialize` is handled.
    pub(crate) handshake: OnceLock<Handshake>,
    pub(crate) logger: Logger,
}

/// What the handshake established.
#[derive(Debug)]
pub(crate) struct Handshake {
    /// The params as extension code sees them in any profile.
    pub(crate) params: InitializeParams,
    /// The profile the host picked.
    pub(crate) profile: ProtocolProfile,
    /// The `uiActions` this extension declared; card actions must be among them (§10.2).
    pub(crate) ui_actions: Vec<UiActionDecl>,
}

/// A payload that can be published as a surface (§10.2): [`StatusPayload`], [`CardPayload`],
/// [`UiFormPayload`] (a form), [`NotificationPayload`], or a [`SurfacePayload`].
pub trait Surface: sealed::Sealed {
    /// The payload as the enum the wire DTO holds.
    #[doc(hidden)]
    fn into_surface(self) -> SurfacePayload;
}

mod sealed {
    pub trait Sealed {}
}

macro_rules! surface {
    ($($ty:ident => $variant:ident),+ $(,)?) => {$(
        impl sealed::Sealed for $ty {}

        impl Surface for $ty {
            fn into_surface(self) -> SurfacePayload {
                SurfacePayload::$variant(self)
            }
        }
    )+};
}

surface! {
    StatusPayload => Status,
    CardPayload => Card,
    UiFormPayload => Form,
    NotificationPayload => Notification,
}

impl sealed::Sealed for SurfacePayload {}

impl Surface for SurfacePayload {
    fn into_surface(self) -> SurfacePayload {
        self
    }
}

/// `host/ui/request` waits for the user and has no deadline of its own (§2.5); it ends with the
/// connection. Tokio treats an unrepresentable deadline as "never".
const NO_DEADLINE: Duration = Duration::MAX;

impl HostHandle {
    pub(crate) fn new(logger: Logger) -> Self {
        HostHandle {
            inner: Arc::new(HostInner {
                peer: OnceLock::new(),
                state: StateCell::new(),
                handshake: OnceLock::new(),
                logger,
            }),
        }
    }

    pub(crate) fn peer(&self) -> &Peer {
        self.inner
            .peer
            .get()
            .expect("the peer is set before the connection's driver runs")
    }

    /// The session this sidecar serves (§6.2); `None` before `extension/initialize`.
    pub fn session(&self) -> Option<&SessionContext> {
        self.inner.handshake.get().map(|h| &h.params.session)
    }

    /// The protocol version the host picked for this connection (its `protocolId`); `None`
    /// before `extension/initialize`.
    pub fn profile(&self) -> Option<ProtocolProfile> {
        self.inner.handshake.get().map(|h| h.profile)
    }

    /// What the host offers (`contentRefs`, `uiHost`); `None` before `extension/initialize`.
    pub fn capabilities(&self) -> Option<&HostCapabilities> {
        self.inner.handshake.get().map(|h| &h.params.capabilities)
    }

    /// The installed manifest's `runtime` lists as the host sent them; `None` before
    /// `extension/initialize`.
    pub fn manifest(&self) -> Option<&ManifestExpectation> {
        self.inner.handshake.get().map(|h| &h.params.manifest)
    }

    /// Whether the host may be called now: the connection is ready (or was, before a
    /// shutdown that the host has not finished).
    pub fn is_ready(&self) -> bool {
        self.inner.state.may_call_host()
    }

    /// Writes a diagnostic line through the configured logger (by default stderr with the
    /// `reasonix-extension: ` prefix). Never use stdout: it belongs to the protocol.
    pub fn log(&self, message: impl fmt::Display) {
        self.inner.logger.log(&message.to_string());
    }

    /// Publishes (or replaces) surface `surface_id` in the session this sidecar serves
    /// (`host/ui/publish`, §10.2); `Ok(false)` when the host found it stale. Needs manifest
    /// capability `ui`; card actions must be declared (registered with
    /// [`Extension::on_action`](crate::Extension::on_action)).
    ///
    /// # Errors
    ///
    /// [`Error::NotReady`] before the connection is ready; [`Error::Invalid`] when the params
    /// fail the protocol's strict decoding or a card names an undeclared action (nothing is
    /// sent); [`Error::Call`] when the host answers an error, after 30 s without an answer
    /// (`intercept_timeout`), or when the frame would exceed the cap (`frame_too_large`,
    /// nothing written).
    ///
    /// # Cancel safety
    ///
    /// Dropping the future abandons the call; a late answer is ignored. The publish may still
    /// reach the host if it was already written.
    pub async fn publish(&self, surface_id: &str, payload: impl Surface) -> Result<bool, Error> {
        let method = UiPublish::METHOD.as_str();
        let handshake = self.handshake(method)?;
        let payload = payload.into_surface();
        let params = UiPublishParams {
            surface_id: surface_id.to_owned(),
            session_id: handshake.params.session.session_id.clone(),
            generation: handshake.params.session.generation,
            kind: payload.kind(),
            payload,
        };
        check_outbound(&params, "host/ui/publish params")?;
        params
            .check_card_actions(&handshake.ui_actions)
            .map_err(|err| invalid("host/ui/publish params", &err))?;
        let result = self.call::<UiPublish>(&params, CALL_TIMEOUT).await?;
        Ok(result.accepted)
    }

    /// Publishes (or updates in place) a v2 `panel` surface (spec delta §2.7.2); `Ok(false)`
    /// when the host found it stale. Its actions must be declared, as a card's.
    ///
    /// # Errors
    ///
    /// [`Error::NotInProfile`] on a v1 connection (nothing is sent); otherwise as for
    /// [`publish`](HostHandle::publish).
    ///
    /// # Cancel safety
    ///
    /// As for [`publish`](HostHandle::publish).
    pub async fn publish_panel(
        &self,
        surface_id: &str,
        panel: PanelPayload,
    ) -> Result<bool, Error> {
        self.publish_v2(
            surface_id,
            v2ui::SurfaceKind::Panel,
            v2ui::SurfacePayload::Panel(panel),
        )
        .await
    }

    /// Publishes (or replaces) a v2 `view` surface composed of host primitives (spec delta
    /// §2.7.3); `Ok(false)` when the host found it stale. The tree is checked locally against
    /// the view's rules and limits, and its buttons' actions must be declared.
    ///
    /// # Errors
    ///
    /// [`Error::NotInProfile`] on a v1 connection (nothing is sent); otherwise as for
    /// [`publish`](HostHandle::publish).
    ///
    /// # Cancel safety
    ///
    /// As for [`publish`](HostHandle::publish).
    pub async fn publish_view(&self, surface_id: &str, view: ViewPayload) -> Result<bool, Error> {
        self.publish_v2(
            surface_id,
            v2ui::SurfaceKind::View,
            v2ui::SurfacePayload::View(view),
        )
        .await
    }

    async fn publish_v2(
        &self,
        surface_id: &str,
        kind: v2ui::SurfaceKind,
        payload: v2ui::SurfacePayload,
    ) -> Result<bool, Error> {
        let method = UiPublish::METHOD.as_str();
        let handshake = self.handshake(method)?;
        if handshake.profile != ProtocolProfile::V2 {
            return Err(Error::NotInProfile {
                what: match kind {
                    v2ui::SurfaceKind::Panel => "host/ui/publish kind \"panel\"",
                    _ => "host/ui/publish kind \"view\"",
                },
                needs: ProtocolProfile::V2,
                profile: handshake.profile,
            });
        }
        let params = v2ui::UiPublishParams {
            surface_id: surface_id.to_owned(),
            session_id: handshake.params.session.session_id.clone(),
            generation: handshake.params.session.generation,
            kind,
            payload,
        };
        check_outbound(&params, "host/ui/publish params")?;
        params
            .check_actions(&handshake.ui_actions)
            .map_err(|err| invalid("host/ui/publish params", &err))?;
        let text = serde_json::value::to_raw_value(&params).map_err(|err| Error::Invalid {
            what: "host/ui/publish params",
            detail: err.to_string(),
            reason: Reason::InvalidParams,
        })?;
        let raw = self
            .peer()
            .call(method, Some(&*text), CallOptions::timeout(CALL_TIMEOUT))
            .await
            .map_err(|err| Error::from_call(method, err, ProtocolProfile::V2))?;
        let result = decode_result::<UiPublishResult>(raw.get()).map_err(|err| Error::Call {
            method,
            reason: Some(err.reason()),
            message: err.to_string(),
        })?;
        Ok(result.accepted)
    }

    /// Shows a blocking prompt (`host/ui/request`, §10.3) and waits for the user; there is no
    /// deadline. Answers are keyed by field key; a form without fields is answered under
    /// `value`.
    ///
    /// # Errors
    ///
    /// As for [`publish`](HostHandle::publish), without the timeout.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future abandons the prompt on this side; the host keeps showing it until
    /// the user answers or the connection ends.
    pub async fn request(
        &self,
        surface_id: &str,
        kind: FieldKind,
        payload: UiFormPayload,
    ) -> Result<UiRequestResult, Error> {
        let method = UiRequest::METHOD.as_str();
        let handshake = self.handshake(method)?;
        let params = UiRequestParams {
            surface_id: surface_id.to_owned(),
            session_id: handshake.params.session.session_id.clone(),
            generation: handshake.params.session.generation,
            kind,
            payload,
        };
        check_outbound(&params, "host/ui/request params")?;
        self.call::<UiRequest>(&params, NO_DEADLINE).await
    }

    /// Asks a yes/no question; `None` when dismissed. Sends the field-less `confirm` form of
    /// §10.3 with `title` as its title.
    ///
    /// # Errors
    ///
    /// As for [`request`](HostHandle::request), and [`Error::Call`] with `protocol_error` when the
    /// answer under `value` is not a boolean.
    ///
    /// # Cancel safety
    ///
    /// As for [`request`](HostHandle::request).
    pub async fn confirm(&self, surface_id: &str, title: &str) -> Result<Option<bool>, Error> {
        let answer = self
            .prompt(surface_id, FieldKind::Confirm, title, Vec::new())
            .await?;
        answer
            .map(|value| value.as_bool().ok_or_else(|| wrong_answer("a boolean")))
            .transpose()
    }

    /// Asks for a line of text; `None` when dismissed. Sends the field-less `input` form.
    ///
    /// # Errors
    ///
    /// As for [`confirm`](HostHandle::confirm), with a string answer.
    ///
    /// # Cancel safety
    ///
    /// As for [`request`](HostHandle::request).
    pub async fn input(&self, surface_id: &str, title: &str) -> Result<Option<String>, Error> {
        let answer = self
            .prompt(surface_id, FieldKind::Input, title, Vec::new())
            .await?;
        answer.map(into_string).transpose()
    }

    /// Asks for one of `options`; `None` when dismissed. Sends one `select` field keyed
    /// `value` with the options (§10.3).
    ///
    /// # Errors
    ///
    /// As for [`confirm`](HostHandle::confirm), with a string answer.
    ///
    /// # Cancel safety
    ///
    /// As for [`request`](HostHandle::request).
    pub async fn select(
        &self,
        surface_id: &str,
        title: &str,
        options: impl IntoIterator<Item = impl Into<String>>,
    ) -> Result<Option<String>, Error> {
        let options = options.into_iter().map(Into::into).collect();
        let answer = self
            .prompt(surface_id, FieldKind::Select, title, options)
            .await?;
        answer.map(into_string).transpose()
    }

    /// Asks for some of `options`; `None` when dismissed or nothing was selected. Sends one
    /// `multiselect` field keyed `value` with the options (§10.3).
    ///
    /// # Errors
    ///
    /// As for [`confirm`](HostHandle::confirm), with an array of strings as the answer.
    ///
    /// # Cancel safety
    ///
    /// As for [`request`](HostHandle::request).
    pub async fn multiselect(
        &self,
        surface_id: &str,
        title: &str,
        options: impl IntoIterator<Item = impl Into<String>>,
    ) -> Result<Option<Vec<String>>, Error> {
        let options = options.into_iter().map(Into::into).collect();
        let answer = self
            .prompt(surface_id, FieldKind::Multiselect, title, options)
            .await?;
        answer
            .map(|value| match value {
                Value::Array(items) => items
                    .into_iter()
                    .map(into_string)
                    .collect::<Result<Vec<_>, _>>(),
                _ => Err(wrong_answer("an array of strings")),
            })
            .transpose()
    }

    /// Sends the convenience prompt shapes of §10.3 and returns the answer under `value`.
    async fn prompt(
        &self,
        surface_id: &str,
        kind: FieldKind,
        title: &str,
        options: Vec<String>,
    ) -> Result<Option<Value>, Error> {
        // Confirm and input send a form without fields; select and multiselect need their
        // options, so they send one field keyed `value` of their own kind.
        let fields = match kind {
            FieldKind::Confirm | FieldKind::Input => Vec::new(),
            FieldKind::Select | FieldKind::Multiselect => vec![UiFormField {
                key: "value".to_owned(),
                label: String::new(),
                kind,
                options,
                default: None,
                required: None,
            }],
        };
        let payload = UiFormPayload {
            title: title.to_owned(),
            message: String::new(),
            fields,
        };
        let mut result = self.request(surface_id, kind, payload).await?;
        if result.cancelled {
            return Ok(None);
        }
        result
            .values
            .remove("value")
            .map(Some)
            .ok_or_else(|| wrong_answer("an answer under \"value\""))
    }

    /// Reads an externalized object through `host/content/read` (§9), page by page, and checks
    /// it against its descriptor: echoed ref and offset, `totalBytes`, `sha256`, page sizes,
    /// `nextOffset`, and at the end the length and SHA-256 of the bytes.
    ///
    /// The SDK calls this itself to rehydrate payloads before callbacks see them; it is public
    /// for extensions that want the raw bytes of a descriptor.
    ///
    /// # Errors
    ///
    /// [`Error::NotReady`] before the connection is ready; [`Error::Content`]
    /// (`protocol_error`) when the content does not match; [`Error::Call`] when a page fails
    /// (`content_ref_expired` from the host, or `intercept_timeout` after 30 s without an
    /// answer).
    ///
    /// # Cancel safety
    ///
    /// Dropping the future stops reading; nothing is kept.
    pub async fn read_content(&self, field: &ExternalizedField) -> Result<Vec<u8>, Error> {
        let method = ContentRead::METHOD.as_str();
        if !self.inner.state.may_call_host() {
            return Err(Error::NotReady { method });
        }
        let mut reader = Reassembly::new(field)?;
        while let Some(offset) = reader.next_offset() {
            let params = ContentReadParams {
                content_ref: field.content_ref.clone(),
                offset,
            };
            let page = self.call::<ContentRead>(&params, CALL_TIMEOUT).await?;
            reader.accept(&page)?;
        }
        reader.finish()
    }

    /// The handshake, once the host may be called.
    fn handshake(&self, method: &'static str) -> Result<&Handshake, Error> {
        if !self.inner.state.may_call_host() {
            return Err(Error::NotReady { method });
        }
        self.inner.handshake.get().ok_or(Error::NotReady { method })
    }

    /// One typed call with a deadline; the result is strictly decoded (§4: a bad result is
    /// `protocol_error`).
    async fn call<M: RequestMethod>(
        &self,
        params: &M::Params,
        timeout: Duration,
    ) -> Result<M::Result, Error> {
        let method = M::METHOD.as_str();
        if !self.inner.state.may_call_host() {
            return Err(Error::NotReady { method });
        }
        let raw = self
            .peer()
            .call(method, Some(params), CallOptions::timeout(timeout))
            .await
            .map_err(|err| {
                let profile = self.profile().unwrap_or(ProtocolProfile::V1);
                Error::from_call(method, err, profile)
            })?;
        decode_result::<M::Result>(raw.get()).map_err(|err| Error::Call {
            method,
            reason: Some(err.reason()),
            message: err.to_string(),
        })
    }
}

impl fmt::Debug for HostHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HostHandle")
            .field("state", &self.inner.state.get())
            .field("session", &self.session().map(|s| &s.session_id))
            .finish_non_exhaustive()
    }
}

/// Checks params the extension built against the protocol's strict decoding, so a mistake (a
/// blank label, a progress of 2) is reported locally with its path instead of by the host.
pub(crate) fn check_outbound<T: Dto>(params: &T, what: &'static str) -> Result<(), Error> {
    let text = serde_json::to_string(params).map_err(|err| Error::Invalid {
        what,
        detail: err.to_string(),
        reason: Reason::InvalidParams,
    })?;
    decode::<T>(&text, Target::Params)
        .map(drop)
        .map_err(|err| invalid(what, &err))
}

fn invalid(what: &'static str, err: &sidewire_ext_protocol::Error) -> Error {
    Error::Invalid {
        what,
        detail: err.to_string(),
        reason: err.reason(),
    }
}

fn wrong_answer(expected: &str) -> Error {
    Error::Call {
        method: UiRequest::METHOD.as_str(),
        reason: Some(Reason::ProtocolError),
        message: format!("the host's answer is not {expected}"),
    }
}

fn into_string(value: Value) -> Result<String, Error> {
    match value {
        Value::String(text) => Ok(text),
        _ => Err(wrong_answer("a string")),
    }
}
