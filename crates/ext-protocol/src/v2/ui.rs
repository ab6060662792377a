//! The v2 UI kinds `panel` and `view` (spec delta §2.7): `host/ui/publish` of a v2 sidecar,
//! decoded strictly with the view tree's rules and limits. A v1 connection keeps v1's
//! [`UiPublishParams`](crate::UiPublishParams), which refuses both kinds as unknown enum
//! values.

use serde::Serialize;

use crate::decode::{
    Dto, Enum, Fields, Kind, List, NonBlank, Number, Obj, Seg, Str, Uint, member, rule,
};
use crate::error::{Error, Target};
use crate::lifecycle::UiActionDecl;
use crate::schema::Defs;
use crate::ui::{self, CardAction, CardField};

/// At most this many nodes in a view's whole tree.
pub const VIEW_MAX_NODES: usize = 200;
/// At most this deep a view's tree (top-level nodes are depth 1).
pub const VIEW_MAX_DEPTH: usize = 8;
/// At most this many bytes in a node's `value`.
pub const VIEW_VALUE_BYTES: usize = 4_000;
/// At most this many bytes in a node's `key` or `label`.
pub const VIEW_LABEL_BYTES: usize = 200;
/// At most this many bytes in a view's `slot`.
pub const VIEW_SLOT_BYTES: usize = 64;
/// At most this many bytes in a view's `anchor`.
pub const VIEW_ANCHOR_BYTES: usize = 128;
/// The prefix of a view's `anchor`: only tool calls can be anchored.
pub const ANCHOR_PREFIX: &str = "tool:";

/// The kind of a surface a v2 sidecar publishes: v1's four and `panel`, `view`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SurfaceKind {
    /// A status line.
    Status,
    /// A card.
    Card,
    /// A form.
    Form,
    /// A notification.
    Notification,
    /// A standing panel, updated in place by publishing its surface id again
    /// ([`PanelPayload`]).
    Panel,
    /// A surface composed of host primitives ([`ViewPayload`]).
    View,
}

wire_enum!(SurfaceKind, "SurfaceKindV2", {
    Status => "status",
    Card => "card",
    Form => "form",
    Notification => "notification",
    Panel => "panel",
    View => "view",
});

/// The `panel` payload; every member is optional and there is no `markdown`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PanelPayload {
    /// The title.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub title: String,
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

impl Dto for PanelPayload {
    const NAME: &'static str = "UIPanelPayload";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(PanelPayload {
            title: f.or_default("title", Str)?,
            text: f.or_default("text", Str)?,
            fields: f.or_default("fields", List(Obj::new()))?,
            progress: f.opt("progress", Number::FRACTION)?,
            actions: f.or_default("actions", List(Obj::new()))?,
        })
    }
}

/// The kind of a view node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NodeKind {
    /// Text (`value` required).
    Text,
    /// Markdown (`value` required).
    Markdown,
    /// Children side by side (at least one).
    Row,
    /// Children one under the other (at least one).
    Stack,
    /// `key` on the left, `value` on the right (`key` required).
    Kv,
    /// A fill of `progress` in 0–1 (required), annotated with `label`.
    Meter,
    /// A dot of `tone` (required).
    Pip,
    /// A button invoking `actionId` (declared in the handshake), named `label` (both required).
    Button,
    /// A separator.
    Divider,
}

wire_enum!(NodeKind, "UINodeKind", {
    Text => "text",
    Markdown => "markdown",
    Row => "row",
    Stack => "stack",
    Kv => "kv",
    Meter => "meter",
    Pip => "pip",
    Button => "button",
    Divider => "divider",
});

/// A node's tone: a meaning, not a colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Tone {
    /// `dim`.
    Dim,
    /// `strong`.
    Strong,
    /// `ok`.
    Ok,
    /// `warn`.
    Warn,
    /// `err`.
    Err,
    /// `accent`.
    Accent,
}

wire_enum!(Tone, "UITone", {
    Dim => "dim",
    Strong => "strong",
    Ok => "ok",
    Warn => "warn",
    Err => "err",
    Accent => "accent",
});

/// One node of a view.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UiNode {
    /// The kind; it decides which members are required.
    pub kind: NodeKind,
    /// Text of `text`/`markdown`, right side of `kv` (at most 4,000 bytes).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub value: String,
    /// Left side of `kv` (at most 200 bytes).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub key: String,
    /// A button's name, a meter's annotation (at most 200 bytes).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub label: String,
    /// The tone.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tone: Option<Tone>,
    /// A meter's fill in 0–1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub progress: Option<f64>,
    /// A button's action.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub action_id: String,
    /// The children of `row` and `stack`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<UiNode>,
}

impl Dto for UiNode {
    const NAME: &'static str = "UINode";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        let node = UiNode {
            kind: f.req("kind", Enum::new())?,
            value: f.or_default("value", Str)?,
            key: f.or_default("key", Str)?,
            label: f.or_default("label", Str)?,
            tone: f.opt("tone", Enum::new())?,
            progress: f.opt("progress", Number::ANY)?,
            action_id: f.or_default("actionId", Str)?,
            children: f.or_default("children", List(Obj::new()))?,
        };
        f.check(|at| node.check(at))?;
        Ok(node)
    }
}

impl UiNode {
    /// The per-kind rules and the byte limits of one node (its children are checked when they
    /// are decoded).
    fn check(&self, at: &Seg<'_>) -> Result<(), Error> {
        for (name, text, limit) in [
            ("value", &self.value, VIEW_VALUE_BYTES),
            ("key", &self.key, VIEW_LABEL_BYTES),
            ("label", &self.label, VIEW_LABEL_BYTES),
        ] {
            if text.len() > limit {
                return Err(rule(
                    &at.key(name),
                    format!("has {} bytes; at most {limit} are allowed", text.len()),
                ));
            }
        }
        let blank = |text: &str| text.trim().is_empty();
        let needs = |name: &str, missing: bool| {
            if missing {
                Err(rule(
                    &at.key(name),
                    format!("is required for a {} node", self.kind.as_str()),
                ))
            } else {
                Ok(())
            }
        };
        match self.kind {
            NodeKind::Text | NodeKind::Markdown => needs("value", blank(&self.value))?,
            NodeKind::Kv => needs("key", blank(&self.key))?,
            NodeKind::Pip => needs("tone", self.tone.is_none())?,
            NodeKind::Button => {
                needs("actionId", blank(&self.action_id))?;
                needs("label", blank(&self.label))?;
            }
            NodeKind::Meter => match self.progress {
                Some(p) if (0.0..=1.0).contains(&p) => {}
                Some(_) => return Err(rule(&at.key("progress"), "must be within 0 … 1")),
                None => needs("progress", true)?,
            },
            NodeKind::Row | NodeKind::Stack => needs("children", self.children.is_empty())?,
            NodeKind::Divider => {}
        }
        if !matches!(self.kind, NodeKind::Row | NodeKind::Stack) && !self.children.is_empty() {
            return Err(rule(
                &at.key("children"),
                format!("is not allowed on a {} node", self.kind.as_str()),
            ));
        }
        Ok(())
    }

    /// Every node of this subtree, depth first, this one first.
    pub fn walk(&self) -> Vec<&UiNode> {
        let mut nodes = vec![self];
        for child in &self.children {
            nodes.extend(child.walk());
        }
        nodes
    }
}

/// The `view` payload.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ViewPayload {
    /// A place name (at most 64 bytes); an unknown one falls back to the default place.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub slot: String,
    /// `tool:<callId>`: the view replaces the body of that tool call's card (at most 128
    /// bytes; exclusive with `slot`).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub anchor: String,
    /// The nodes (non-empty; at most 200 in the whole tree, depth at most 8).
    pub body: Vec<UiNode>,
}

impl Dto for ViewPayload {
    const NAME: &'static str = "UIViewPayload";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        let view = ViewPayload {
            slot: f.or_default("slot", Str)?,
            anchor: f.or_default("anchor", Str)?,
            body: f.req("body", List(Obj::new()))?,
        };
        f.check(|at| view.check(at))?;
        Ok(view)
    }
}

impl ViewPayload {
    fn check(&self, at: &Seg<'_>) -> Result<(), Error> {
        if self.slot.len() > VIEW_SLOT_BYTES {
            return Err(rule(
                &at.key("slot"),
                format!("has more than {VIEW_SLOT_BYTES} bytes"),
            ));
        }
        if self.anchor.len() > VIEW_ANCHOR_BYTES {
            return Err(rule(
                &at.key("anchor"),
                format!("has more than {VIEW_ANCHOR_BYTES} bytes"),
            ));
        }
        if !self.anchor.is_empty() {
            let call = self.anchor.strip_prefix(ANCHOR_PREFIX).unwrap_or("");
            if call.trim().is_empty() {
                return Err(rule(
                    &at.key("anchor"),
                    "must be \"tool:<callId>\" (only tool calls can be anchored)",
                ));
            }
            if !self.slot.is_empty() {
                return Err(rule(&at.key("anchor"), "is exclusive with slot"));
            }
        }
        if self.body.is_empty() {
            return Err(rule(&at.key("body"), "must hold at least one node"));
        }
        let nodes: usize = self.body.iter().map(|node| node.walk().len()).sum();
        if nodes > VIEW_MAX_NODES {
            return Err(rule(
                &at.key("body"),
                format!("has {nodes} nodes; at most {VIEW_MAX_NODES} are allowed"),
            ));
        }
        let depth = self.body.iter().map(depth).max().unwrap_or(0);
        if depth > VIEW_MAX_DEPTH {
            return Err(rule(
                &at.key("body"),
                format!("is {depth} deep; at most {VIEW_MAX_DEPTH} levels are allowed"),
            ));
        }
        Ok(())
    }

    /// Every node of the tree, depth first.
    pub fn nodes(&self) -> Vec<&UiNode> {
        self.body.iter().flat_map(UiNode::walk).collect()
    }
}

fn depth(node: &UiNode) -> usize {
    1 + node.children.iter().map(depth).max().unwrap_or(0)
}

/// A v2 publish payload, typed by the surface kind. It encodes as the bare DTO object.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum SurfacePayload {
    /// One of v1's four kinds.
    Common(ui::SurfacePayload),
    /// `panel`.
    Panel(PanelPayload),
    /// `view`.
    View(ViewPayload),
}

/// `UIPublishParams` of a v2 sidecar.
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

impl Dto for UiPublishParams {
    const NAME: &'static str = "UIPublishParams";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        let surface_id = f.req("surfaceId", NonBlank)?;
        let session_id = f.req("sessionId", NonBlank)?;
        let generation = f.req("generation", Uint::ANY)?;
        let kind = f.req("kind", Enum::new())?;
        let payload = f.req("payload", PayloadOf(kind))?;
        Ok(UiPublishParams {
            surface_id,
            session_id,
            generation,
            kind,
            payload,
        })
    }
}

impl UiPublishParams {
    /// The action ids the surface invokes: a card's or a panel's buttons, a view's `button`
    /// nodes, in order (repeats kept).
    pub fn action_ids(&self) -> Vec<&str> {
        match &self.payload {
            SurfacePayload::Common(ui::SurfacePayload::Card(card)) => {
                card.actions.iter().map(|a| a.action_id.as_str()).collect()
            }
            SurfacePayload::Panel(panel) => {
                panel.actions.iter().map(|a| a.action_id.as_str()).collect()
            }
            SurfacePayload::View(view) => view
                .nodes()
                .into_iter()
                .filter(|n| n.kind == NodeKind::Button)
                .map(|n| n.action_id.as_str())
                .collect(),
            SurfacePayload::Common(_) => Vec::new(),
        }
    }

    /// Checks that every action the surface invokes is declared in the handshake `uiActions`
    /// (v1 §10.2, kept for v2 by the delta's §2.7.4); the error (`invalid_params`) names the
    /// first undeclared one.
    pub fn check_actions(&self, declared: &[UiActionDecl]) -> Result<(), Error> {
        let root = Seg::Root(Target::Params);
        let payload = root.key("payload");
        for action in self.action_ids() {
            if !declared.iter().any(|d| d.action_id == action) {
                return Err(rule(
                    &payload,
                    format!("action {action:?} is not declared in the handshake uiActions"),
                ));
            }
        }
        Ok(())
    }

    /// The params as v1's type when the kind is one of v1's.
    pub fn common(&self) -> Option<ui::UiPublishParams> {
        let SurfacePayload::Common(payload) = &self.payload else {
            return None;
        };
        Some(ui::UiPublishParams {
            surface_id: self.surface_id.clone(),
            session_id: self.session_id.clone(),
            generation: self.generation,
            kind: payload.kind(),
            payload: payload.clone(),
        })
    }
}

/// The kind of a v2 publish payload: the DTO of the surface kind.
#[derive(Debug, Clone, Copy)]
struct PayloadOf(SurfaceKind);

impl Kind for PayloadOf {
    type Out = SurfacePayload;

    fn decode(&self, value: serde_json::Value, at: &Seg<'_>) -> Result<SurfacePayload, Error> {
        use ui::SurfacePayload as V1;
        Ok(match self.0 {
            SurfaceKind::Status => {
                SurfacePayload::Common(V1::Status(member(&Obj::new(), value, at)?))
            }
            SurfaceKind::Card => SurfacePayload::Common(V1::Card(member(&Obj::new(), value, at)?)),
            SurfaceKind::Form => SurfacePayload::Common(V1::Form(member(&Obj::new(), value, at)?)),
            SurfaceKind::Notification => {
                SurfacePayload::Common(V1::Notification(member(&Obj::new(), value, at)?))
            }
            SurfaceKind::Panel => SurfacePayload::Panel(member(&Obj::new(), value, at)?),
            SurfaceKind::View => SurfacePayload::View(member(&Obj::new(), value, at)?),
        })
    }

    fn schema(&self, _defs: &mut Defs) -> serde_json::Value {
        serde_json::json!({"type": "object"})
    }

    fn placeholder(&self) -> SurfacePayload {
        SurfacePayload::Panel(PanelPayload::default())
    }
}

#[cfg(test)]
mod tests;
