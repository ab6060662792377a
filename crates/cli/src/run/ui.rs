//! What the extensions show while `run` runs: their surfaces (status, card, form, notification)
//! rendered readably, crashes and warnings, and their prompts (asked field by field on a
//! terminal, cancelled otherwise).
//!
//! Surfaces are coalesced: each publish replaces its surface's latest state in a map (one entry
//! per plugin and surface id, which the host caps per plugin), and a render tick
//! ([`RENDER_EVERY`]) prints the surfaces that changed since the last tick, once each. A
//! sidecar that publishes a status a million times in a few seconds costs a handful of lines.
//! Surfaces of a connection that crashed or was retired are dropped (`SurfacesStale`), and one
//! that changed and went stale within a tick is never printed.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::{Value, json};
use sidewire_ext_host::{HostEvent, HostEvents, PublishedSurface, UiPrompt};
use sidewire_ext_sdk::protocol::{FieldKind, Severity, SurfacePayload, UiFormPayload};

use crate::out::Out;
use crate::safe;

/// How often changed surfaces are printed: four times a second.
pub(super) const RENDER_EVERY: Duration = Duration::from_millis(250);

/// A surface's key: (plugin, surface id).
type Key = (String, String);

/// A surface as last published.
#[derive(Debug, Clone)]
pub(super) struct Shown {
    pub(super) plugin: String,
    pub(super) surface_id: String,
    /// The generation of the connection that published it.
    pub(super) generation: u64,
    pub(super) payload: SurfacePayload,
}

impl From<PublishedSurface> for Shown {
    fn from(surface: PublishedSurface) -> Shown {
        Shown {
            plugin: surface.plugin,
            surface_id: surface.surface_id,
            generation: surface.generation,
            payload: surface.payload,
        }
    }
}

/// The published surfaces, latest state only, and which changed since the last render.
#[derive(Debug, Default)]
pub(super) struct Surfaces {
    latest: BTreeMap<Key, Shown>,
    changed: BTreeSet<Key>,
}

impl Surfaces {
    /// Keeps `surface` as its key's latest state.
    fn publish(&mut self, surface: Shown) {
        let key = (surface.plugin.clone(), surface.surface_id.clone());
        self.changed.insert(key.clone());
        self.latest.insert(key, surface);
    }

    /// Forgets the surfaces that `plugin`'s connection of `generation` published (it crashed
    /// or was retired); returns how many.
    fn drop_stale(&mut self, plugin: &str, generation: u64) -> usize {
        let before = self.latest.len();
        self.latest
            .retain(|(p, _), s| !(p == plugin && s.generation == generation));
        let latest = &self.latest;
        self.changed.retain(|key| latest.contains_key(key));
        before - self.latest.len()
    }

    /// The surfaces that changed since the last call, in their latest state.
    fn take_changed(&mut self) -> Vec<Shown> {
        let changed = std::mem::take(&mut self.changed);
        changed
            .iter()
            .filter_map(|key| self.latest.get(key).cloned())
            .collect()
    }

    /// Every surface, for `/ui`.
    pub(super) fn all(&self) -> impl Iterator<Item = &Shown> {
        self.latest.values()
    }

    /// The form `plugin` published as `surface`, in its latest state, if it is one.
    pub(super) fn form(&self, plugin: &str, surface: &str) -> Option<UiFormPayload> {
        let shown = self.latest.get(&(plugin.to_owned(), surface.to_owned()))?;
        match &shown.payload {
            SurfacePayload::Form(form) => Some(form.clone()),
            _ => None,
        }
    }
}

/// Whether an answer says nothing: an empty text, no option chosen, `null`.
pub(super) fn is_empty_answer(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(text) => text.trim().is_empty(),
        Value::Array(items) => items.is_empty(),
        _ => false,
    }
}

/// A `/submit` that leaves out a required field of the form, or gives it an empty value
/// (`name=`): named, and nothing is sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct RequiredField(pub(super) String);

impl std::fmt::Display for RequiredField {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the form's field {} is required: give {}=VALUE; nothing was submitted",
            safe::line(&self.0),
            safe::line(&self.0)
        )
    }
}

impl std::error::Error for RequiredField {}

/// Checks `values` against `form`'s required fields (the sidecar has the last word on
/// everything else).
pub(super) fn check_submission(
    form: &UiFormPayload,
    values: &BTreeMap<String, Value>,
) -> Result<(), RequiredField> {
    let missing = form.fields.iter().find(|field| {
        field.required == Some(true) && values.get(&field.key).is_none_or(is_empty_answer)
    });
    match missing {
        Some(field) => Err(RequiredField(field.key.clone())),
        None => Ok(()),
    }
}

/// A prompt waiting for the user's answer, with the answers to the fields asked so far.
type Question = (UiPrompt, BTreeMap<String, Value>);

/// Prompts waiting for the user's answer on a terminal, oldest first. The host bounds how many
/// prompts are open.
pub(super) type Pending = Arc<Questions>;

/// The queue of [`Pending`] prompts, and whether one waits (read by the line editor's prompt,
/// which must never wait for the queue's lock: it is drawn while output is printed).
#[derive(Debug, Default)]
pub(super) struct Questions {
    queue: Mutex<VecDeque<Question>>,
    waiting: Arc<AtomicBool>,
}

impl Questions {
    /// The queue, locked.
    pub(super) fn lock(&self) -> MutexGuard<'_, VecDeque<Question>> {
        crate::lock(&self.queue)
    }

    /// Records whether a question waits; called with the queue locked, after each change and
    /// before the next question is printed, so the prompt drawn under it is already right.
    pub(super) fn mark(&self, queue: &VecDeque<Question>) {
        self.waiting.store(!queue.is_empty(), Ordering::SeqCst);
    }

    /// The flag [`mark`](Self::mark) keeps, for the line editor's prompt.
    pub(super) fn waiting(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.waiting)
    }
}

/// Prints the host's events as they come (surfaces at the render tick), keeps the surfaces for
/// `/ui`, and queues prompts to be asked (when `interactive`) or cancels them. Once `quitting`
/// is set, surfaces that go away are dropped without a word (the session ends, so of course
/// the extensions stop).
///
/// Cancel safety: cancel safe (dropping it loses at most the changes of one tick).
pub(super) async fn print_events(
    mut events: HostEvents,
    surfaces: Arc<Mutex<Surfaces>>,
    pending: Pending,
    interactive: bool,
    quitting: Arc<AtomicBool>,
    out: Out,
) {
    let mut tick = tokio::time::interval(RENDER_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        // The tick first: a flood of events must not starve the rendering.
        let event = tokio::select! {
            biased;
            _ = tick.tick() => {
                render(&out, &crate::lock(&surfaces).take_changed());
                continue;
            }
            event = events.recv() => event,
        };
        let Some(event) = event else {
            render(&out, &crate::lock(&surfaces).take_changed());
            return;
        };
        match event {
            HostEvent::Surface(surface) => crate::lock(&surfaces).publish(surface.into()),
            HostEvent::SurfacesStale { plugin, generation } => {
                let gone = crate::lock(&surfaces).drop_stale(&plugin, generation);
                if gone > 0 && !quitting.load(Ordering::SeqCst) {
                    out.line(format!(
                        "[{}] {gone} surface(s) gone (the extension stopped)",
                        safe::line(&plugin)
                    ));
                    out.json_line(&json!({
                        "event": "uiStale", "plugin": plugin, "generation": generation, "surfaces": gone,
                    }));
                }
            }
            HostEvent::PromptDismissed { plugin, prompt } => {
                // The sidecar went away or the prompt's deadline passed: the host has answered
                // it already, so it leaves the queue unasked.
                let mut queue = pending.lock();
                if let Some(at) = queue.iter().position(|(p, _)| p.id == prompt) {
                    queue.remove(at);
                    pending.mark(&queue);
                    out.line(format!(
                        "[{}] the prompt was dismissed",
                        safe::line(&plugin)
                    ));
                    if at == 0
                        && let Some((next, _)) = queue.front()
                    {
                        ask(&out, next, 0);
                    }
                }
            }
            HostEvent::Prompt(prompt) if interactive => {
                let mut queue = pending.lock();
                let first = queue.is_empty();
                queue.push_back((prompt, BTreeMap::new()));
                // Marked before the question is printed: the prompt drawn again under it
                // already says an answer is expected.
                pending.mark(&queue);
                if first && let Some((prompt, _)) = queue.back() {
                    ask(&out, prompt, 0);
                }
            }
            HostEvent::Prompt(prompt) => {
                out.line(format!(
                    "[{}] asks: {} (cancelled: stdin is not a terminal)",
                    safe::line(&prompt.plugin),
                    safe::line(&prompt.title)
                ));
                out.json_line(&json!({
                    "event": "prompt", "plugin": prompt.plugin, "title": prompt.title, "cancelled": true,
                }));
                prompt.cancel();
            }
            HostEvent::Crashed { plugin, cause, .. } => {
                out.note(format!(
                    "extension {} crashed: {}",
                    safe::line(&plugin),
                    safe::block(&cause, "  ")
                ));
                out.json_line(&json!({ "event": "crashed", "plugin": plugin, "cause": cause }));
            }
            HostEvent::Warning {
                plugin, message, ..
            } => {
                out.note(format!(
                    "warning{}: {}",
                    plugin
                        .as_ref()
                        .map(|p| format!(" ({})", safe::line(p)))
                        .unwrap_or_default(),
                    safe::line(&message)
                ));
                out.json_line(&json!({ "event": "warning", "plugin": plugin, "message": message }));
            }
            _ => {}
        }
    }
}

/// Prints `surfaces`: text, or one `ui` event each with `--json`.
fn render(out: &Out, surfaces: &[Shown]) {
    for surface in surfaces {
        if out.json {
            out.json_line(&surface_json(surface));
        } else {
            out.line(surface_text(surface));
        }
    }
}

/// A surface as a `ui` event.
pub(super) fn surface_json(surface: &Shown) -> Value {
    json!({
        "event": "ui",
        "plugin": surface.plugin,
        "surface": surface.surface_id,
        "generation": surface.generation,
        "kind": surface.payload.kind().as_str(),
        "payload": surface.payload,
    })
}

/// `warning: ` or `error: ` for those severities.
fn severity(severity: Option<Severity>) -> &'static str {
    match severity {
        Some(Severity::Warn) => "warning: ",
        Some(Severity::Error) => "error: ",
        _ => "",
    }
}

/// ` (40%)` for a progress in 0–1.
fn percent(progress: Option<f64>) -> String {
    progress
        .filter(|p| p.is_finite())
        .map(|p| format!(" ({:.0}%)", (p * 100.0).clamp(0.0, 100.0)))
        .unwrap_or_default()
}

/// A surface as readable text: its plugin, then what it says; a card's text and rows and a
/// form's fields on indented lines. Every string is the peer's, escaped.
pub(super) fn surface_text(surface: &Shown) -> String {
    let plugin = safe::line(&surface.plugin);
    match &surface.payload {
        SurfacePayload::Status(status) => {
            let detail = if status.detail.is_empty() {
                String::new()
            } else {
                format!(" - {}", safe::line(&status.detail))
            };
            format!(
                "[{plugin}] {}{}{detail}{}",
                severity(status.severity),
                safe::line(&status.label),
                percent(status.progress)
            )
        }
        SurfacePayload::Notification(note) => {
            let body = if note.body.is_empty() {
                String::new()
            } else {
                format!("\n    {}", safe::block(&note.body, "    "))
            };
            format!(
                "[{plugin}] {}notification: {}{body}",
                severity(note.severity),
                safe::line(&note.title)
            )
        }
        SurfacePayload::Card(card) => {
            let mut text = format!(
                "[{plugin}] {}{}",
                if card.title.is_empty() {
                    safe::line(&surface.surface_id)
                } else {
                    safe::line(&card.title)
                },
                percent(card.progress)
            );
            for body in [&card.text, &card.markdown] {
                if !body.is_empty() {
                    text.push_str(&format!("\n    {}", safe::block(body, "    ")));
                }
            }
            for field in &card.fields {
                text.push_str(&format!(
                    "\n    {}: {}",
                    safe::line(&field.key),
                    safe::line(&field.value)
                ));
            }
            text
        }
        SurfacePayload::Form(form) => {
            let title = if form.title.is_empty() {
                safe::line(&surface.surface_id)
            } else {
                safe::line(&form.title)
            };
            let mut text = format!("[{plugin}] form: {title}");
            if !form.message.is_empty() {
                text.push_str(&format!("\n    {}", safe::block(&form.message, "    ")));
            }
            for field in &form.fields {
                let label = if field.label.is_empty() {
                    String::new()
                } else {
                    format!(" {}", safe::line(&field.label))
                };
                text.push_str(&format!(
                    "\n    {}:{label} ({}{})",
                    safe::line(&field.key),
                    kind_name(field.kind),
                    if field.required == Some(true) {
                        ", required"
                    } else {
                        ""
                    }
                ));
            }
            let keys: Vec<String> = form
                .fields
                .iter()
                .map(|f| format!("{}=...", safe::line(&f.key)))
                .collect();
            text.push_str(&format!(
                "\n    fill in: /submit {plugin}:{} {}",
                safe::line(&surface.surface_id),
                keys.join(" ")
            ));
            text
        }
    }
}

fn kind_name(kind: FieldKind) -> &'static str {
    match kind {
        FieldKind::Confirm => "yes/no",
        FieldKind::Input => "text",
        FieldKind::Select => "one of the options",
        FieldKind::Multiselect => "options separated by commas",
    }
}

/// Shows field `index` of `prompt` as a question.
pub(super) fn ask(out: &Out, prompt: &UiPrompt, index: usize) {
    let Some(field) = prompt.fields.get(index) else {
        return;
    };
    let options = if field.options.is_empty() {
        String::new()
    } else {
        format!(
            " [{}]",
            field
                .options
                .iter()
                .map(|option| safe::line(option))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    let label = if field.label.is_empty() {
        prompt.title.as_str()
    } else {
        field.label.as_str()
    };
    out.line(format!(
        "[{}] {}{options} ({}; an empty line dismisses)",
        safe::line(&prompt.plugin),
        safe::line(label),
        kind_name(field.kind)
    ));
}

#[cfg(test)]
mod tests {
    use sidewire_ext_sdk::protocol::StatusPayload;

    use super::*;

    fn status(plugin: &str, id: &str, generation: u64, label: &str) -> Shown {
        Shown {
            plugin: plugin.to_owned(),
            surface_id: id.to_owned(),
            generation,
            payload: SurfacePayload::Status(StatusPayload {
                label: label.to_owned(),
                ..StatusPayload::default()
            }),
        }
    }

    #[test]
    fn a_flood_of_publishes_renders_each_surface_once_in_its_latest_state() {
        let mut surfaces = Surfaces::default();
        for n in 0..10_000 {
            surfaces.publish(status("a", "s", 1, &format!("step {n}")));
            surfaces.publish(status("b", "s", 1, &format!("other {n}")));
        }
        let shown: Vec<String> = surfaces.take_changed().iter().map(surface_text).collect();
        assert_eq!(shown, ["[a] step 9999", "[b] other 9999"]);
        assert!(surfaces.take_changed().is_empty(), "nothing changed since");
        assert_eq!(surfaces.all().count(), 2);
    }

    #[test]
    fn a_required_field_left_out_or_empty_is_named_and_others_pass() {
        let field = |key: &str, required: Option<bool>| sidewire_ext_sdk::protocol::UiFormField {
            key: key.to_owned(),
            label: String::new(),
            kind: FieldKind::Input,
            options: Vec::new(),
            default: None,
            required,
        };
        let form = UiFormPayload {
            fields: vec![field("name", Some(true)), field("note", None)],
            ..UiFormPayload::default()
        };
        let values = |pairs: &[(&str, Value)]| -> BTreeMap<String, Value> {
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), v.clone()))
                .collect()
        };
        let required = Err(RequiredField("name".to_owned()));
        assert_eq!(check_submission(&form, &values(&[])), required);
        assert_eq!(
            check_submission(&form, &values(&[("name", json!("  "))])),
            required
        );
        assert_eq!(
            check_submission(&form, &values(&[("name", json!([]))])),
            required
        );
        assert_eq!(
            check_submission(&form, &values(&[("name", json!("Ana"))])),
            Ok(())
        );
        assert!(
            !is_empty_answer(&json!(false)),
            "a confirm's no is an answer"
        );
    }

    #[test]
    fn stale_surfaces_of_one_connection_are_dropped_and_no_others() {
        let mut surfaces = Surfaces::default();
        for (plugin, id, generation) in [
            ("a", "s1", 1),
            ("a", "s2", 1),
            ("a", "s3", 2),
            ("b", "s1", 1),
        ] {
            surfaces.publish(status(plugin, id, generation, "x"));
        }
        assert_eq!(surfaces.drop_stale("a", 1), 2);
        // A surface that went stale before the tick is never shown.
        let changed: Vec<_> = surfaces
            .take_changed()
            .iter()
            .map(|s| format!("{}:{}", s.plugin, s.surface_id))
            .collect();
        assert_eq!(changed, ["a:s3", "b:s1"]);
        let left: Vec<_> = surfaces
            .all()
            .map(|s| format!("{}:{}", s.plugin, s.surface_id))
            .collect();
        assert_eq!(left, ["a:s3", "b:s1"]);
    }
}
