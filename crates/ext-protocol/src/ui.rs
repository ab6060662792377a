//! Structured UI DTOs (§10): surfaces published by an extension (`host/ui/publish`), blocking
//! prompts (`host/ui/request`), and user actions and form submissions sent back
//! (`extension/ui/action`, `extension/ui/submit`).
//!
//! A publish payload is decoded as the DTO of its `kind`, so a `status` without `label` fails
//! strict decoding. Staleness, the host gate of §10.5 and rendering are host behaviour, not part
//! of this module; the one semantic check that needs only the handshake (card actions must be
//! declared) is offered as [`UiPublishParams::check_card_actions`].

use serde::Serialize;
use serde_json::{Value, json};
use std::collections::BTreeMap;

use crate::decode::{
    ACTION_ID, Any, Bool, Dto, Enum, Fields, Kind, List, MapOf, NonBlank, Number, Obj, Pattern,
    Seg, Str, Uint, WireEnum, member, rule,
};
use crate::error::{Error, Target};
use crate::lifecycle::UiActionDecl;
use crate::schema::Defs;

/// The kind of a published surface.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SurfaceKind {
    /// A status line ([`StatusPayload`]).
    Status,
    /// A card ([`CardPayload`]).
    Card,
    /// A form ([`UiFormPayload`]), answered by `extension/ui/submit`.
    Form,
    /// A notification ([`NotificationPayload`]).
    Notification,
}

wire_enum!(SurfaceKind, "SurfaceKind", {
    Status => "status",
    Card => "card",
    Form => "form",
    Notification => "notification",
});

/// The kind of a form field, and of a `host/ui/request`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FieldKind {
    /// Yes or no; the answer is a boolean.
    Confirm,
    /// Free text; the answer is a string.
    Input,
    /// One of `options`; the answer is a string.
    Select,
    /// Some of `options`; the answer is an array of strings.
    Multiselect,
}

wire_enum!(FieldKind, "FieldKind", {
    Confirm => "confirm",
    Input => "input",
    Select => "select",
    Multiselect => "multiselect",
});

/// The severity of a status or notification.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Severity {
    /// `info`.
    Info,
    /// `warn`.
    Warn,
    /// `error`.
    Error,
}

wire_enum!(Severity, "Severity", {
    Info => "info",
    Warn => "warn",
    Error => "error",
});

/// `UIPublishParams` (E→H).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UiPublishParams {
    /// The surface id, scoped to the plugin; publishing it again replaces the surface.
    pub surface_id: String,
    /// The session the surface belongs to.
    pub session_id: String,
    /// The generation the extension was started in.
    pub generation: u64,
    /// The surface kind.
    pub kind: SurfaceKind,
    /// The payload, decoded as the DTO of `kind`.
    pub payload: SurfacePayload,
}

impl UiPublishParams {
    /// Checks that every card action is declared in the handshake `uiActions` (§10.2); the
    /// error (`invalid_params`) names the first undeclared action.
    pub fn check_card_actions(&self, declared: &[UiActionDecl]) -> Result<(), Error> {
        let SurfacePayload::Card(card) = &self.payload else {
            return Ok(());
        };
        let root = Seg::Root(Target::Params);
        let payload = root.key("payload");
        let actions = payload.key("actions");
        for (i, action) in card.actions.iter().enumerate() {
            if !declared.iter().any(|d| d.action_id == action.action_id) {
                let at = actions.index(i);
                return Err(rule(
                    &at.key("actionId"),
                    "is not declared in the handshake uiActions",
                ));
            }
        }
        Ok(())
    }
}

impl Dto for UiPublishParams {
    const NAME: &'static str = "UIPublishParams";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        let surface_id = f.req("surfaceId", NonBlank)?;
        let session_id = f.req("sessionId", NonBlank)?;
        let generation = f.req("generation", Uint::ANY)?;
        let kind = f.req("kind", Enum::new())?;
        let payload = f.req("payload", SurfacePayloadOf(kind))?;
        f.schema_rule(|defs| {
            let rules: Vec<Value> = SurfaceKind::ALL
                .iter()
                .map(|kind| {
                    json!({
                        "if": {"properties": {"kind": {"const": kind.as_str()}}},
                        "then": {"properties": {"payload": surface_schema(*kind, defs)}}
                    })
                })
                .collect();
            json!({"allOf": rules})
        });
        Ok(UiPublishParams {
            surface_id,
            session_id,
            generation,
            kind,
            payload,
        })
    }
}

/// A publish payload, typed by the surface kind. It encodes as the bare DTO object.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum SurfacePayload {
    /// `status`.
    Status(StatusPayload),
    /// `card`.
    Card(CardPayload),
    /// `form`.
    Form(UiFormPayload),
    /// `notification`.
    Notification(NotificationPayload),
}

impl SurfacePayload {
    /// The surface kind this payload belongs to.
    pub fn kind(&self) -> SurfaceKind {
        match self {
            SurfacePayload::Status(_) => SurfaceKind::Status,
            SurfacePayload::Card(_) => SurfaceKind::Card,
            SurfacePayload::Form(_) => SurfaceKind::Form,
            SurfacePayload::Notification(_) => SurfaceKind::Notification,
        }
    }
}

fn surface_schema(kind: SurfaceKind, defs: &mut Defs) -> Value {
    match kind {
        SurfaceKind::Status => defs.dto::<StatusPayload>(),
        SurfaceKind::Card => defs.dto::<CardPayload>(),
        SurfaceKind::Form => defs.dto::<UiFormPayload>(),
        SurfaceKind::Notification => defs.dto::<NotificationPayload>(),
    }
}

/// The kind of `UIPublishParams.payload`: the DTO of the surface kind.
#[derive(Debug, Clone, Copy)]
struct SurfacePayloadOf(SurfaceKind);

impl Kind for SurfacePayloadOf {
    type Out = SurfacePayload;

    fn decode(&self, value: Value, at: &Seg<'_>) -> Result<SurfacePayload, Error> {
        Ok(match self.0 {
            SurfaceKind::Status => SurfacePayload::Status(member(&Obj::new(), value, at)?),
            SurfaceKind::Card => SurfacePayload::Card(member(&Obj::new(), value, at)?),
            SurfaceKind::Form => SurfacePayload::Form(member(&Obj::new(), value, at)?),
            SurfaceKind::Notification => {
                SurfacePayload::Notification(member(&Obj::new(), value, at)?)
            }
        })
    }

    fn schema(&self, defs: &mut Defs) -> Value {
        let refs: Vec<Value> = SurfaceKind::all()
            .iter()
            .map(|kind| surface_schema(*kind, defs))
            .collect();
        json!({"anyOf": refs})
    }

    fn placeholder(&self) -> SurfacePayload {
        SurfacePayload::Card(CardPayload::default())
    }
}

/// The `status` payload.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct StatusPayload {
    /// The status text (non-empty).
    pub label: String,
    /// More detail.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub detail: String,
    /// The severity.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub severity: Option<Severity>,
    /// Progress in 0–1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub progress: Option<f64>,
}

impl Dto for StatusPayload {
    const NAME: &'static str = "StatusPayload";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(StatusPayload {
            label: f.req("label", NonBlank)?,
            detail: f.or_default("detail", Str)?,
            severity: f.opt("severity", Enum::new())?,
            progress: f.opt("progress", Number::FRACTION)?,
        })
    }
}

/// The `card` payload; every member is optional.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CardPayload {
    /// The title.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub title: String,
    /// Markdown, rendered by the frontend's sanitizing renderer.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub markdown: String,
    /// Plain text.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub text: String,
    /// Key/value rows.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub fields: Vec<CardField>,
    /// Progress in 0–1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub progress: Option<f64>,
    /// Buttons; each action must be declared in the handshake `uiActions`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub actions: Vec<CardAction>,
}

impl Dto for CardPayload {
    const NAME: &'static str = "CardPayload";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(CardPayload {
            title: f.or_default("title", Str)?,
            markdown: f.or_default("markdown", Str)?,
            text: f.or_default("text", Str)?,
            fields: f.or_default("fields", List(Obj::new()))?,
            progress: f.opt("progress", Number::FRACTION)?,
            actions: f.or_default("actions", List(Obj::new()))?,
        })
    }
}

/// A card row.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CardField {
    /// The key (non-empty).
    pub key: String,
    /// The value.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub value: String,
}

impl Dto for CardField {
    const NAME: &'static str = "CardField";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(CardField {
            key: f.req("key", NonBlank)?,
            value: f.or_default("value", Str)?,
        })
    }
}

/// A card button.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CardAction {
    /// The action invoked (non-empty; must be declared in `uiActions`).
    pub action_id: String,
    /// The button label (non-empty).
    pub label: String,
}

impl Dto for CardAction {
    const NAME: &'static str = "CardAction";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(CardAction {
            action_id: f.req("actionId", NonBlank)?,
            label: f.req("label", NonBlank)?,
        })
    }
}

/// `UIFormPayload`: a published form, or the prompt of a `host/ui/request`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct UiFormPayload {
    /// The title.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub title: String,
    /// An explanation.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// The fields; always sent. A request with no fields shows one field of the request's kind
    /// keyed `value` (§10.3).
    pub fields: Vec<UiFormField>,
}

impl Dto for UiFormPayload {
    const NAME: &'static str = "UIFormPayload";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(UiFormPayload {
            title: f.or_default("title", Str)?,
            message: f.or_default("message", Str)?,
            fields: f.req("fields", List(Obj::new()))?,
        })
    }
}

/// `UIFormField`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UiFormField {
    /// The key answers are filed under (non-empty).
    pub key: String,
    /// The label.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub label: String,
    /// The field kind; it governs the answer's type.
    pub kind: FieldKind,
    /// The choices of `select` and `multiselect`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<String>,
    /// The initial value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default: Option<Value>,
    /// Whether an answer is required.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
}

impl Dto for UiFormField {
    const NAME: &'static str = "UIFormField";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(UiFormField {
            key: f.req("key", NonBlank)?,
            label: f.or_default("label", Str)?,
            kind: f.req("kind", Enum::new())?,
            options: f.or_default("options", List(Str))?,
            default: f.opt("default", Any)?,
            required: f.opt("required", Bool)?,
        })
    }
}

/// The `notification` payload.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct NotificationPayload {
    /// The title (non-empty).
    pub title: String,
    /// The body.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub body: String,
    /// The severity.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub severity: Option<Severity>,
}

impl Dto for NotificationPayload {
    const NAME: &'static str = "NotificationPayload";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(NotificationPayload {
            title: f.req("title", NonBlank)?,
            body: f.or_default("body", Str)?,
            severity: f.opt("severity", Enum::new())?,
        })
    }
}

/// `UIPublishResult`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct UiPublishResult {
    /// `false` when the publish was stale (§10.5).
    pub accepted: bool,
}

impl Dto for UiPublishResult {
    const NAME: &'static str = "UIPublishResult";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(UiPublishResult {
            accepted: f.req("accepted", Bool)?,
        })
    }
}

/// `UIRequestParams` (E→H): a blocking prompt.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UiRequestParams {
    /// The surface id (non-empty).
    pub surface_id: String,
    /// The session (non-empty).
    pub session_id: String,
    /// The generation the extension was started in.
    pub generation: u64,
    /// The prompt kind; it governs only a field-less form.
    pub kind: FieldKind,
    /// The prompt.
    pub payload: UiFormPayload,
}

impl Dto for UiRequestParams {
    const NAME: &'static str = "UIRequestParams";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(UiRequestParams {
            surface_id: f.req("surfaceId", NonBlank)?,
            session_id: f.req("sessionId", NonBlank)?,
            generation: f.req("generation", Uint::ANY)?,
            kind: f.req("kind", Enum::new())?,
            payload: f.req("payload", Obj::new())?,
        })
    }
}

/// `UIRequestResult`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct UiRequestResult {
    /// Whether the prompt was dismissed (or nothing was selected, or it was stale).
    pub cancelled: bool,
    /// Answers keyed by field key.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub values: BTreeMap<String, Value>,
}

impl Dto for UiRequestResult {
    const NAME: &'static str = "UIRequestResult";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(UiRequestResult {
            cancelled: f.req("cancelled", Bool)?,
            values: f.or_default(
                "values",
                MapOf {
                    value: Any,
                    non_blank_keys: false,
                },
            )?,
        })
    }
}

/// `UIActionParams` (H→E): the user invoked a declared action.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UiActionParams {
    /// The action, matching `^[a-z0-9-]{1,64}$`.
    pub action_id: String,
    /// The current session (non-empty).
    pub session_id: String,
    /// The current generation.
    pub generation: u64,
    /// Arguments; from a card, `surfaceId` holds the card's surface id.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub args: BTreeMap<String, String>,
}

impl Dto for UiActionParams {
    const NAME: &'static str = "UIActionParams";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(UiActionParams {
            action_id: f.req("actionId", Pattern(&ACTION_ID))?,
            session_id: f.req("sessionId", NonBlank)?,
            generation: f.req("generation", Uint::ANY)?,
            args: f.or_default(
                "args",
                MapOf {
                    value: Str,
                    non_blank_keys: false,
                },
            )?,
        })
    }
}

/// `UIActionResult`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UiActionResult {
    /// Whether the action was accepted.
    pub accepted: bool,
    /// A message for the user (redacted before display).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub message: String,
}

impl Dto for UiActionResult {
    const NAME: &'static str = "UIActionResult";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(UiActionResult {
            accepted: f.req("accepted", Bool)?,
            message: f.or_default("message", Str)?,
        })
    }
}

/// `UISubmitParams` (H→E): the user submitted a published form.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UiSubmitParams {
    /// The form's surface id (non-empty).
    pub surface_id: String,
    /// The current session (non-empty).
    pub session_id: String,
    /// The current generation.
    pub generation: u64,
    /// Answers keyed by field key; always sent.
    pub values: BTreeMap<String, Value>,
}

impl Dto for UiSubmitParams {
    const NAME: &'static str = "UISubmitParams";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(UiSubmitParams {
            surface_id: f.req("surfaceId", NonBlank)?,
            session_id: f.req("sessionId", NonBlank)?,
            generation: f.req("generation", Uint::ANY)?,
            values: f.req(
                "values",
                MapOf {
                    value: Any,
                    non_blank_keys: false,
                },
            )?,
        })
    }
}

/// `UISubmitResult`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct UiSubmitResult {
    /// Whether the submission was accepted.
    pub accepted: bool,
}

impl Dto for UiSubmitResult {
    const NAME: &'static str = "UISubmitResult";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(UiSubmitResult {
            accepted: f.req("accepted", Bool)?,
        })
    }
}

#[cfg(test)]
mod tests;
