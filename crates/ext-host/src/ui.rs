//! The UI hub (spec §10): the gate for `host/ui/*` (§10.5), published surfaces and prompts, and
//! user actions and form submissions sent back to sidecars (§10.4) with host-side staleness
//! refusal.
//!
//! A connection's standing is its [`UiState`]: staged connections (a reload in progress) have
//! their calls held until the swap, retired and crashed ones are stale. Surfaces remember the
//! connection that published them (weakly), so a submission to a form of a retired or crashed
//! connection is refused with `stale_generation` and never forwarded, while surfaces of adopted
//! connections stay live. Rendering is the application's: it receives [`HostEvent`]s.
//!
//! Everything here is bounded against a sidecar that publishes or asks without end: a surface
//! id has at most [`SURFACE_ID_BYTES`] bytes, a plugin has at most [`SURFACES_PER_PLUGIN`]
//! surfaces (a new id over that is refused with `invalid_params`; replacing an existing id is
//! fine), and a connection has at most 4 prompts open (`HostConfig::prompts_per_connection`;
//! one more is refused with `invalid_params`), each for at most the prompt deadline
//! (`HostConfig::prompt_timeout`, 5 minutes). The hub keeps no payloads, and a connection's records
//! go when the connection does (or, at the cap, when a newer connection of the plugin needs the
//! room).

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};

use serde_json::Value;
use serde_json::value::RawValue;
use sidewire_ext_protocol::v2::{
    self,
    ui::{NodeKind, UiNode, ViewPayload},
};
use sidewire_ext_protocol::{
    Capability, CardAction, CardPayload, HELD_UI_CALLS_PER_CONNECTION, Method, ProtocolProfile,
    Reason, SurfaceKind, SurfacePayload, UiActionParams, UiActionResult, UiFormField, UiHost,
    UiPublishParams, UiPublishResult, UiRequestParams, UiRequestResult, UiSubmitParams,
    UiSubmitResult, decode_params, decode_result,
};
use sidewire_jsonrpc::ErrorObject;
use tokio::sync::oneshot;

use crate::Error;
use crate::Redactor;
use crate::conn::{Connection, UiState};
use crate::events::{HostEvent, PublishedSurface, UiPrompt};
use crate::util::lock;

/// The most surfaces one plugin may have published at once (all its connections together).
pub(crate) const SURFACES_PER_PLUGIN: usize = 64;
/// The longest `surfaceId`, in bytes, of a surface or a prompt.
pub(crate) const SURFACE_ID_BYTES: usize = 256;

struct SurfaceRecord {
    conn: Weak<Connection>,
    kind: SurfaceKind,
    /// The card's action ids, each once: they are handshake-declared, so this is bounded by
    /// the declaration, not by what the card repeats.
    card_actions: Vec<String>,
}

/// Published surfaces, keyed by (plugin id, surface id).
#[derive(Default)]
pub(crate) struct Hub {
    surfaces: Mutex<HashMap<(String, String), SurfaceRecord>>,
    next_prompt: AtomicU64,
}

impl std::fmt::Debug for Hub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hub")
            .field("surfaces", &lock(&self.surfaces).len())
            .finish_non_exhaustive()
    }
}

impl Hub {
    /// A connection was retired or crashed: its prompts are dismissed and its surfaces go
    /// stale.
    pub(crate) fn connection_gone(&self, conn: &Connection) {
        let shared = &conn.shared;
        for prompt in std::mem::take(&mut *lock(&conn.prompts)) {
            shared.notify(HostEvent::PromptDismissed {
                plugin: conn.plugin.id.clone(),
                prompt,
            });
        }
        let had_surfaces = lock(&self.surfaces)
            .values()
            .any(|s| std::ptr::eq(s.conn.as_ptr(), conn));
        if had_surfaces {
            shared.notify(HostEvent::SurfacesStale {
                plugin: conn.plugin.id.clone(),
                generation: conn.generation,
            });
        }
    }

    /// Forgets the surfaces of a connection that is being dropped. Called from its `Drop`, so
    /// nothing may drop a `Connection` while holding the surface lock: records hold weak
    /// references only, and `publisher` upgrades outside the lock.
    pub(crate) fn forget(&self, conn: *const Connection) {
        lock(&self.surfaces).retain(|_, s| !std::ptr::eq(s.conn.as_ptr(), conn));
    }

    /// The live connection that published `surface`, or why there is none.
    fn publisher(
        &self,
        plugin: &str,
        surface: &str,
    ) -> Result<(Arc<Connection>, SurfaceKind, Vec<String>), Error> {
        let (conn, kind, card_actions) = {
            let surfaces = lock(&self.surfaces);
            let record = surfaces
                .get(&(plugin.to_owned(), surface.to_owned()))
                .ok_or_else(|| {
                    Error::ui(
                        Reason::InvalidParams,
                        format!("extension {plugin} has no surface {surface:?}"),
                    )
                })?;
            (
                record.conn.clone(),
                record.kind,
                record.card_actions.clone(),
            )
        };
        // Upgraded outside the lock: dropping the last strong reference runs the connection's
        // `Drop`, which takes the lock to forget its surfaces.
        let live = conn
            .upgrade()
            .filter(|conn| *conn.ui_state.borrow() == UiState::Live && conn.is_ready());
        match live {
            Some(conn) => Ok((conn, kind, card_actions)),
            None => Err(Error::ui(
                Reason::StaleGeneration,
                format!(
                    "surface {surface:?} of extension {plugin} is stale: the connection that \
                     published it was retired or crashed"
                ),
            )),
        }
    }
}

/// Parses `raw`, redacts every string in it, and strictly decodes the result.
fn decode_redacted<T: sidewire_ext_protocol::Dto>(
    raw: Option<&RawValue>,
    redactor: &Redactor,
) -> Result<T, ErrorObject> {
    let text = raw.map_or("{}", RawValue::get);
    // Decode first so that repeated members and the like are judged on what was sent.
    decode_params::<T>(Some(text)).map_err(|err| err.to_error_object())?;
    let mut value: Value = serde_json::from_str(text)
        .map_err(|err| Reason::InvalidParams.error_object_with(format!("invalid params: {err}")))?;
    redact_strings(&mut value, redactor);
    let text = serde_json::to_string(&value).expect("a value serializes");
    decode_params::<T>(Some(&text)).map_err(|err| err.to_error_object())
}

fn redact_strings(value: &mut Value, redactor: &Redactor) {
    match value {
        Value::String(text) => {
            let redacted = redactor.redact(text);
            if redacted != *text {
                *text = redacted;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| redact_strings(v, redactor)),
        Value::Object(map) => map.values_mut().for_each(|v| redact_strings(v, redactor)),
        _ => {}
    }
}

/// A `surfaceId` over [`SURFACE_ID_BYTES`] is `invalid_params`.
fn check_surface_id(surface_id: &str) -> Result<(), ErrorObject> {
    if surface_id.len() > SURFACE_ID_BYTES {
        return Err(Reason::InvalidParams.error_object_with(format!(
            "surfaceId has {} bytes; at most {SURFACE_ID_BYTES} are allowed",
            surface_id.len()
        )));
    }
    Ok(())
}

/// §10.5 steps 1–3, which answer at once with an error.
fn gate_errors(conn: &Connection) -> Result<(), ErrorObject> {
    if !conn.plugin.runtime.has(Capability::Ui) {
        return Err(Reason::CapabilityNotDeclared
            .error_object_with("the plugin's manifest does not declare capability \"ui\""));
    }
    Ok(())
}

fn headless(conn: &Connection) -> Result<(), ErrorObject> {
    if conn.shared.config.get_ui_host() == UiHost::Headless {
        return Err(Reason::UnknownMethod.error_object_with("this host has no UI"));
    }
    Ok(())
}

/// §10.5 step 4: whether the call is live, holding it while the connection is staged.
async fn is_live(conn: &Connection, session_id: &str, generation: u64) -> bool {
    if session_id != conn.shared.config.get_session_id() {
        return false;
    }
    let mut state = conn.ui_state.subscribe();
    let current = *state.borrow_and_update();
    match current {
        UiState::Retired => return false,
        UiState::Live => {}
        UiState::Staged => {
            if conn.held_ui.fetch_add(1, Ordering::AcqRel) >= HELD_UI_CALLS_PER_CONNECTION {
                conn.held_ui.fetch_sub(1, Ordering::AcqRel);
                return false;
            }
            let after = state.wait_for(|s| *s != UiState::Staged).await.map(|s| *s);
            conn.held_ui.fetch_sub(1, Ordering::AcqRel);
            if !matches!(after, Ok(UiState::Live)) {
                return false;
            }
        }
    }
    (conn.generation..=conn.shared.published()).contains(&generation)
}

/// `host/ui/publish`: the gate, then the surface is handed to the application.
pub(crate) fn publish(
    conn: Arc<Connection>,
    raw: Option<&RawValue>,
) -> Result<impl Future<Output = Result<UiPublishResult, ErrorObject>> + Send + use<>, ErrorObject>
{
    gate_errors(&conn)?;
    let params = match conn.profile() {
        ProtocolProfile::V2 => {
            // v2's kinds `panel` and `view` (spec delta §2.7), every string redacted.
            let params: v2::ui::UiPublishParams = decode_redacted(raw, &conn.shared.redactor())?;
            check_surface_id(&params.surface_id)?;
            params
                .check_actions(&conn.handshake().ui_actions)
                .map_err(|err| err.to_error_object())?;
            shown_as_card(params)
        }
        _ => {
            let params: UiPublishParams = decode_redacted(raw, &conn.shared.redactor())?;
            check_surface_id(&params.surface_id)?;
            params
                .check_card_actions(&conn.handshake().ui_actions)
                .map_err(|err| err.to_error_object())?;
            params
        }
    };
    headless(&conn)?;
    Ok(async move {
        if !is_live(&conn, &params.session_id, params.generation).await {
            return Ok(UiPublishResult { accepted: false });
        }
        let mut card_actions: Vec<String> = match &params.payload {
            SurfacePayload::Card(card) => {
                card.actions.iter().map(|a| a.action_id.clone()).collect()
            }
            _ => Vec::new(),
        };
        card_actions.sort_unstable();
        card_actions.dedup();
        let plugin = conn.plugin.id.clone();
        let key = (plugin.clone(), params.surface_id.clone());
        let event = HostEvent::Surface(PublishedSurface {
            plugin: plugin.clone(),
            surface_id: params.surface_id,
            generation: conn.generation,
            kind: params.kind,
            payload: params.payload,
        });
        let me = Arc::downgrade(&conn);
        // One lock from the cap check to the insert, so concurrent publishes cannot both take
        // the last place. Only weak references are dropped under it (see `Hub::forget`).
        let mut surfaces = lock(&conn.shared.hub.surfaces);
        if !surfaces.contains_key(&key) {
            let count = |surfaces: &HashMap<(String, String), SurfaceRecord>| {
                surfaces.keys().filter(|(p, _)| *p == plugin).count()
            };
            if count(&surfaces) >= SURFACES_PER_PLUGIN {
                // Another connection of this plugin is retired or crashed by the time this one
                // publishes (§10.5): its stale records make room first.
                surfaces.retain(|(p, _), s| *p != plugin || Weak::ptr_eq(&s.conn, &me));
            }
            if count(&surfaces) >= SURFACES_PER_PLUGIN {
                return Err(Reason::InvalidParams.error_object_with(format!(
                    "extension {plugin} already has {SURFACES_PER_PLUGIN} surfaces, the most a \
                     plugin may publish; replace one (publish an existing surfaceId) instead"
                )));
            }
        }
        let shown = conn.shared.notify(event);
        if shown {
            surfaces.insert(
                key,
                SurfaceRecord {
                    conn: me,
                    kind: params.kind,
                    card_actions,
                },
            );
        }
        Ok(UiPublishResult { accepted: shown })
    })
}

/// A v2 publish as the application sees it: v1's kinds as they are; a `panel` as a card (it
/// is one, updated in place by publishing its surface id again, without `markdown`); a `view`
/// as a card whose text is the tree rendered as plain lines ([`view_lines`]) and whose actions
/// are its buttons. A view's `slot` and `anchor` have no place in this host's UI model: a slot
/// falls back to the default place as the delta says of unknown slots, and an anchored view is
/// shown on its own.
fn shown_as_card(params: v2::ui::UiPublishParams) -> UiPublishParams {
    use v2::ui::SurfacePayload as V2;
    let payload = match params.payload {
        V2::Common(payload) => payload,
        V2::Panel(panel) => SurfacePayload::Card(CardPayload {
            title: panel.title,
            markdown: String::new(),
            text: panel.text,
            fields: panel.fields,
            progress: panel.progress,
            actions: panel.actions,
        }),
        V2::View(view) => SurfacePayload::Card(CardPayload {
            text: view_lines(&view).join("\n"),
            actions: view
                .nodes()
                .into_iter()
                .filter(|node| node.kind == NodeKind::Button)
                .map(|node| CardAction {
                    action_id: node.action_id.clone(),
                    label: node.label.clone(),
                })
                .collect(),
            ..CardPayload::default()
        }),
    };
    UiPublishParams {
        surface_id: params.surface_id,
        session_id: params.session_id,
        generation: params.generation,
        kind: payload.kind(),
        payload,
    }
}

/// A view's tree as plain lines: each top-level node and each child of a `stack` on a line of
/// its own (indented by its depth), a `row`'s children side by side on one line. Bounded by
/// the view's limits (200 nodes of at most 4,000 bytes each).
pub(crate) fn view_lines(view: &ViewPayload) -> Vec<String> {
    let mut lines = Vec::new();
    for node in &view.body {
        push_lines(node, 0, &mut lines);
    }
    lines
}

fn push_lines(node: &UiNode, depth: usize, lines: &mut Vec<String>) {
    if node.kind == NodeKind::Stack {
        for child in &node.children {
            push_lines(child, depth + 1, lines);
        }
        return;
    }
    lines.push(format!("{}{}", "  ".repeat(depth), inline(node)));
}

/// One node on one line.
fn inline(node: &UiNode) -> String {
    let tone = node
        .tone
        .map(|t| format!("({}) ", t.as_str()))
        .unwrap_or_default();
    match node.kind {
        NodeKind::Text | NodeKind::Markdown => format!("{tone}{}", node.value),
        NodeKind::Kv => format!("{tone}{}: {}", node.key, node.value),
        NodeKind::Meter => {
            let percent = (node.progress.unwrap_or(0.0) * 100.0).round();
            format!("{tone}{} {percent}%", node.label)
                .trim_start()
                .to_owned()
        }
        NodeKind::Pip => format!("● {tone}{}", node.label).trim_end().to_owned(),
        NodeKind::Button => format!("[{}]", node.label),
        NodeKind::Divider => "────".to_owned(),
        NodeKind::Row | NodeKind::Stack => node
            .children
            .iter()
            .map(inline)
            .collect::<Vec<_>>()
            .join("  "),
    }
}

/// `host/ui/request`: the gate, then a [`UiPrompt`] the application answers.
pub(crate) fn request(
    conn: Arc<Connection>,
    raw: Option<&RawValue>,
) -> Result<impl Future<Output = Result<UiRequestResult, ErrorObject>> + Send + use<>, ErrorObject>
{
    gate_errors(&conn)?;
    let params: UiRequestParams = decode_redacted(raw, &conn.shared.redactor())?;
    check_surface_id(&params.surface_id)?;
    headless(&conn)?;
    Ok(async move {
        let cancelled = UiRequestResult {
            cancelled: true,
            values: BTreeMap::new(),
        };
        if !is_live(&conn, &params.session_id, params.generation).await {
            return Ok(cancelled);
        }
        let mut fields = params.payload.fields;
        if fields.is_empty() {
            // §10.3: a request without fields is one field of the request's kind keyed `value`.
            fields.push(UiFormField {
                key: "value".to_owned(),
                label: String::new(),
                kind: params.kind,
                options: Vec::new(),
                default: None,
                required: None,
            });
        }
        let id = conn.shared.hub.next_prompt.fetch_add(1, Ordering::Relaxed) + 1;
        {
            // The check and the registration under one lock, so the cap holds under
            // concurrent requests.
            let mut open = lock(&conn.prompts);
            let cap = conn.shared.config.get_prompts_per_connection();
            if open.len() >= cap {
                return Err(Reason::InvalidParams.error_object_with(format!(
                    "extension {} already has {cap} prompts open, the most a connection may \
                     have; ask again once one is answered",
                    conn.plugin.id
                )));
            }
            open.push(id);
        }
        let (reply, answer) = oneshot::channel();
        let shown = conn.shared.notify(HostEvent::Prompt(UiPrompt {
            id,
            plugin: conn.plugin.id.clone(),
            surface_id: params.surface_id,
            kind: params.kind,
            title: params.payload.title,
            message: params.payload.message,
            fields,
            reply: Some(reply),
        }));
        let result = if shown {
            // The spec sets no deadline for a prompt; ours keeps a forgotten one from holding
            // its slot (and the sidecar's call) for ever. On expiry the application is told
            // to take the prompt off the screen, and the sidecar sees a dismissal.
            match tokio::time::timeout(conn.shared.config.get_prompt_timeout(), answer).await {
                Ok(answer) => answer.unwrap_or(cancelled),
                Err(_) => {
                    conn.shared.notify(HostEvent::PromptDismissed {
                        plugin: conn.plugin.id.clone(),
                        prompt: id,
                    });
                    cancelled
                }
            }
        } else {
            cancelled
        };
        lock(&conn.prompts).retain(|p| *p != id);
        Ok(result)
    })
}

/// Sends a declared action to a connection of the current generation (§10.4).
pub(crate) async fn action(
    conn: &Connection,
    action_id: &str,
    args: BTreeMap<String, String>,
) -> Result<UiActionResult, Error> {
    if !conn
        .handshake()
        .ui_actions
        .iter()
        .any(|a| a.action_id == action_id)
    {
        return Err(Error::ui(
            Reason::InvalidParams,
            format!(
                "extension {} declared no action {action_id:?}",
                conn.plugin.id
            ),
        ));
    }
    let params = UiActionParams {
        action_id: action_id.to_owned(),
        session_id: conn.shared.config.get_session_id().to_owned(),
        generation: conn.shared.published(),
        args,
    };
    let what = format!("action {action_id}");
    let raw = conn
        .call(
            Method::UiAction,
            &params,
            conn.shared.config.get_ui_call_timeout(),
            &what,
        )
        .await
        .map_err(|err| Error::ui(err.reason, err.message))?;
    let mut result: UiActionResult = decode_result(raw.get()).map_err(|err| {
        Error::ui(
            Reason::ProtocolError,
            conn.shared.redact(&format!(
                "extension {} sent an invalid action result: {err}",
                conn.plugin.id
            )),
        )
    })?;
    result.message = conn.shared.redact(&result.message);
    Ok(result)
}

/// An action invoked from a card: the card must be live and list the action; its surface id
/// goes in `args.surfaceId`.
pub(crate) async fn card_action(
    hub: &Hub,
    plugin: &str,
    surface_id: &str,
    action_id: &str,
) -> Result<UiActionResult, Error> {
    let (conn, kind, actions) = hub.publisher(plugin, surface_id)?;
    if kind != SurfaceKind::Card || !actions.iter().any(|a| a == action_id) {
        return Err(Error::ui(
            Reason::InvalidParams,
            format!("surface {surface_id:?} of extension {plugin} offers no action {action_id:?}"),
        ));
    }
    let mut args = BTreeMap::new();
    args.insert("surfaceId".to_owned(), surface_id.to_owned());
    action(&conn, action_id, args).await
}

/// A form submission: the form must be live (§10.4).
pub(crate) async fn submit(
    hub: &Hub,
    plugin: &str,
    surface_id: &str,
    values: BTreeMap<String, Value>,
) -> Result<UiSubmitResult, Error> {
    let (conn, kind, _) = hub.publisher(plugin, surface_id)?;
    if kind != SurfaceKind::Form {
        return Err(Error::ui(
            Reason::InvalidParams,
            format!("surface {surface_id:?} of extension {plugin} is not a form"),
        ));
    }
    let params = UiSubmitParams {
        surface_id: surface_id.to_owned(),
        session_id: conn.shared.config.get_session_id().to_owned(),
        generation: conn.shared.published(),
        values,
    };
    let raw = conn
        .call(
            Method::UiSubmit,
            &params,
            conn.shared.config.get_ui_call_timeout(),
            "a form submission",
        )
        .await
        .map_err(|err| Error::ui(err.reason, err.message))?;
    decode_result(raw.get()).map_err(|err| {
        Error::ui(
            Reason::ProtocolError,
            conn.shared.redact(&format!(
                "extension {plugin} sent an invalid submit result: {err}"
            )),
        )
    })
}
