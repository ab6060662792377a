//! What the host tells the embedding application, outside any call: warnings, crashes, UI
//! surfaces and prompts, dismissals and audited overrides.
//!
//! Everything arrives in order through one bounded [`HostEvents`] stream: at most 1,024 events
//! and 16 MiB (what the events hold, accounted when sent and given back when received). The
//! host never waits for the application: when the stream is full in either measure, a warning
//! is dropped, a surface is answered `{"accepted":false}` (it was not shown) and a prompt
//! `{"cancelled":true}`. Every string a sidecar supplied is already redacted.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;
use sidewire_ext_protocol::{
    FieldKind, Reason, SurfaceKind, SurfacePayload, UiFormField, UiRequestResult,
};
use tokio::sync::{mpsc, oneshot};

use crate::Error;
use crate::audit::AuditRecord;

/// How many events wait for the application before new ones are dropped.
pub(crate) const EVENT_STREAM_CAPACITY: usize = 1024;
/// How many bytes the waiting events may hold (their strings and payloads, measured as
/// serialized JSON) before new ones are dropped: a sidecar's largest surface (one 8 MiB
/// frame) fits, but the stream cannot pin 1,024 of them.
pub(crate) const EVENT_STREAM_BYTES: usize = 16 * 1024 * 1024;

/// One thing the host reports.
#[derive(Debug)]
#[non_exhaustive]
pub enum HostEvent {
    /// Something went wrong that did not fail an operation (an optional plugin's failure, a
    /// dropped event, a sidecar killed at shutdown). Emitted once per plugin and kind.
    Warning {
        /// The plugin, when one is to blame.
        plugin: Option<String>,
        /// What happened.
        message: String,
        /// The protocol reason, when there is one: `shutdown_timeout` for a sidecar whose
        /// shutdown hook overran (it answered `extension/shutdown` so) or that was killed at
        /// shutdown.
        reason: Option<Reason>,
    },
    /// A sidecar crashed after its handshake (§13.4); emitted exactly once per connection. It
    /// is not restarted until a reload.
    Crashed {
        /// The plugin id.
        plugin: String,
        /// The generation that started it.
        generation: u64,
        /// What happened (`exited with status 3`, `the sidecar wrote a malformed frame`, …).
        cause: String,
        /// Its redacted stderr tail.
        stderr_tail: String,
    },
    /// A surface to show (or replace, for an existing `surface_id`).
    Surface(PublishedSurface),
    /// A blocking prompt; answer or cancel it through [`UiPrompt`].
    Prompt(UiPrompt),
    /// A prompt was dismissed because its sidecar went away or its deadline passed; remove it
    /// from the screen (an answer to it is ignored).
    PromptDismissed {
        /// The plugin id.
        plugin: String,
        /// The prompt's id.
        prompt: u64,
    },
    /// Every surface of this plugin's connection is now stale (crashed or retired).
    SurfacesStale {
        /// The plugin id.
        plugin: String,
        /// The generation its connection was started in.
        generation: u64,
    },
    /// A host `deny` was turned into `allow` (§11); the record was written to the audit log.
    Audited(AuditRecord),
}

/// A surface published by a sidecar (§10.2).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct PublishedSurface {
    /// The plugin id (surface ids are scoped per plugin).
    pub plugin: String,
    /// The surface id.
    pub surface_id: String,
    /// The generation the publishing connection was started in.
    pub generation: u64,
    /// The kind.
    pub kind: SurfaceKind,
    /// The payload, strictly decoded for its kind, strings redacted.
    pub payload: SurfacePayload,
}

/// A blocking prompt from `host/ui/request` (§10.3). The sidecar waits until it is answered,
/// cancelled or dropped (dropping cancels), or until the prompt deadline
/// ([`HostConfig::prompt_timeout`](crate::HostConfig::prompt_timeout), 5 minutes) dismisses it
/// ([`HostEvent::PromptDismissed`]).
#[derive(Debug)]
#[non_exhaustive]
pub struct UiPrompt {
    /// A host-unique id.
    pub id: u64,
    /// The plugin id.
    pub plugin: String,
    /// The surface id the sidecar gave it.
    pub surface_id: String,
    /// The request's kind (informational when there are fields).
    pub kind: FieldKind,
    /// The title (redacted).
    pub title: String,
    /// The message (redacted).
    pub message: String,
    /// The fields to show, never empty: a request without fields is shown as one field of the
    /// request's kind keyed `value`.
    pub fields: Vec<UiFormField>,
    pub(crate) reply: Option<oneshot::Sender<UiRequestResult>>,
}

impl UiPrompt {
    /// Answers with values keyed by field key. Each value must have the type its field's kind
    /// governs (confirm: boolean; input, select: string; multiselect: array of strings), keys
    /// must be field keys, and required fields must be answered. An empty answer (nothing
    /// selected at all) is sent as `{"cancelled":true}`.
    ///
    /// # Errors
    ///
    /// [`Error::Ui`] with `invalid_params` for an answer that does not fit the fields (the
    /// prompt stays open), or when it was already answered.
    pub fn answer(&mut self, values: BTreeMap<String, Value>) -> Result<(), Error> {
        let invalid =
            |detail: String| Error::ui(sidewire_ext_protocol::Reason::InvalidParams, detail);
        if self.reply.is_none() {
            return Err(invalid("the prompt was already answered".to_owned()));
        }
        for (key, value) in &values {
            let Some(field) = self.fields.iter().find(|f| &f.key == key) else {
                return Err(invalid(format!("{key:?} is not a field of the prompt")));
            };
            let fits = match field.kind {
                FieldKind::Confirm => value.is_boolean(),
                FieldKind::Input | FieldKind::Select => value.is_string(),
                FieldKind::Multiselect => value
                    .as_array()
                    .is_some_and(|items| items.iter().all(Value::is_string)),
            };
            if !fits {
                return Err(invalid(format!(
                    "the answer to {key:?} does not fit a {} field",
                    field.kind.as_str()
                )));
            }
        }
        if !values.is_empty()
            && let Some(missing) = self
                .fields
                .iter()
                .find(|f| f.required == Some(true) && !values.contains_key(&f.key))
        {
            return Err(invalid(format!(
                "required field {:?} is unanswered",
                missing.key
            )));
        }
        let result = UiRequestResult {
            cancelled: values.is_empty(),
            values,
        };
        if let Some(reply) = self.reply.take() {
            // The sidecar may be gone already; then nobody waits for the answer.
            let _ = reply.send(result);
        }
        Ok(())
    }

    /// Dismisses the prompt: the sidecar gets `{"cancelled":true}`.
    pub fn cancel(mut self) {
        if let Some(reply) = self.reply.take() {
            let _ = reply.send(UiRequestResult {
                cancelled: true,
                values: BTreeMap::new(),
            });
        }
    }
}

impl HostEvent {
    /// What the event holds, for the stream's byte bound: its strings and payloads (measured
    /// as compact JSON, without allocating) plus the event itself.
    fn weight(&self) -> usize {
        use self::measure::Measure as _;
        let strings = match self {
            HostEvent::Warning {
                plugin, message, ..
            } => plugin.as_ref().map_or(0, String::len) + message.len(),
            HostEvent::Crashed {
                plugin,
                cause,
                stderr_tail,
                ..
            } => plugin.len() + cause.len() + stderr_tail.len(),
            HostEvent::Surface(surface) => {
                surface.plugin.len() + surface.surface_id.len() + surface.payload.measure()
            }
            HostEvent::Prompt(prompt) => {
                prompt.plugin.len()
                    + prompt.surface_id.len()
                    + prompt.title.len()
                    + prompt.message.len()
                    + prompt.fields.measure()
            }
            HostEvent::PromptDismissed { plugin, .. } | HostEvent::SurfacesStale { plugin, .. } => {
                plugin.len()
            }
            HostEvent::Audited(record) => record.measure(),
        };
        std::mem::size_of::<HostEvent>() + strings
    }
}

/// Measuring a value's compact JSON without building it.
mod measure {
    /// Counts bytes written.
    struct Count(usize);

    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    pub(super) trait Measure {
        fn measure(&self) -> usize;
    }

    impl<T: serde::Serialize> Measure for T {
        fn measure(&self) -> usize {
            let mut count = Count(0);
            // Writing to a counter cannot fail; a value that does not serialize weighs nothing
            // more than the event.
            let _ = serde_json::to_writer(&mut count, self);
            count.0
        }
    }
}

/// The sending side of the event stream: the channel and the byte budget it shares with
/// [`HostEvents`].
#[derive(Debug)]
pub(crate) struct EventSender {
    tx: mpsc::Sender<(HostEvent, usize)>,
    held: Arc<AtomicUsize>,
}

/// A new event stream: its sending side and the application's end.
pub(crate) fn stream() -> (EventSender, HostEvents) {
    let (tx, rx) = mpsc::channel(EVENT_STREAM_CAPACITY);
    let held = Arc::new(AtomicUsize::new(0));
    (
        EventSender {
            tx,
            held: Arc::clone(&held),
        },
        HostEvents { rx, held },
    )
}

impl EventSender {
    /// Sends without waiting; `false` when the stream is full in count or bytes, or nobody
    /// listens.
    pub(crate) fn try_send(&self, event: HostEvent) -> bool {
        let weight = event.weight();
        // Reserve the bytes first, so concurrent senders cannot together go over the budget.
        let reserved = self
            .held
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |held| {
                held.checked_add(weight)
                    .filter(|total| *total <= EVENT_STREAM_BYTES)
            });
        if reserved.is_err() {
            return false;
        }
        if self.tx.try_send((event, weight)).is_err() {
            self.held.fetch_sub(weight, Ordering::AcqRel);
            return false;
        }
        true
    }
}

/// The stream of [`HostEvent`]s. Keep reading it; when it is full, new events are dropped as
/// described in the module docs.
#[derive(Debug)]
pub struct HostEvents {
    rx: mpsc::Receiver<(HostEvent, usize)>,
    /// The bytes the waiting events hold; received events give theirs back.
    held: Arc<AtomicUsize>,
}

impl HostEvents {
    /// The next event, or `None` once the host is gone.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: no event is lost when the future is dropped.
    pub async fn recv(&mut self) -> Option<HostEvent> {
        let received = self.rx.recv().await;
        self.received(received)
    }

    /// The next event if one is waiting.
    pub fn try_recv(&mut self) -> Option<HostEvent> {
        let received = self.rx.try_recv().ok();
        self.received(received)
    }

    fn received(&self, received: Option<(HostEvent, usize)>) -> Option<HostEvent> {
        let (event, weight) = received?;
        self.held.fetch_sub(weight, Ordering::AcqRel);
        Some(event)
    }
}
