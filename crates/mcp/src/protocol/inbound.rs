//! The server→client requests a handler is working on, so a server's own
//! `notifications/cancelled` can stop one: its handler future is dropped and no answer is sent
//! (the spec forbids answering a cancelled request).
//!
//! One entry per running handler, removed when it ends however it ends; so the table holds at
//! most as many entries as the jsonrpc peer runs requests at once (its concurrency limit). A
//! notice naming no running request (finished, never sent, or ours) is ignored.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;
use sidewire_jsonrpc::{Id, lock};
use tokio::sync::oneshot;

/// The running handlers of one connection, by request id (its wire form).
#[derive(Default)]
pub(crate) struct Inbound {
    running: Mutex<HashMap<String, oneshot::Sender<()>>>,
}

/// The key of an id: an integer's decimal form, a string's JSON literal.
fn key_of_id(id: &Id) -> String {
    match (id.as_i64(), id.as_string()) {
        (Some(n), _) => n.to_string(),
        (None, Some(text)) => Value::String(text).to_string(),
        _ => id.to_json().into_owned(),
    }
}

/// The key of a `requestId` as a cancel notice carries it.
fn key_of_value(value: &Value) -> Option<String> {
    match value {
        Value::Number(n) => n.as_i64().map(|n| n.to_string()),
        Value::String(_) => Some(value.to_string()),
        _ => None,
    }
}

/// Removes a handler's entry when it ends.
struct Entry {
    inbound: Arc<Inbound>,
    key: String,
}

impl Drop for Entry {
    fn drop(&mut self) {
        lock(&self.inbound.running).remove(&self.key);
    }
}

impl Inbound {
    /// Runs `work` as the handler of request `id`: `Some` with its outcome, or `None` when
    /// the server cancelled the request first (`work` is dropped unfinished). A request id
    /// already running (which the jsonrpc peer refuses before a handler starts) replaces the
    /// older entry.
    pub(crate) fn run<T, F>(
        self: &Arc<Self>,
        id: &Id,
        work: F,
    ) -> impl Future<Output = Option<T>> + Send + use<T, F>
    where
        F: Future<Output = T> + Send + 'static,
        T: Send + 'static,
    {
        let key = key_of_id(id);
        let (cancel, cancelled) = oneshot::channel();
        lock(&self.running).insert(key.clone(), cancel);
        let entry = Entry {
            inbound: Arc::clone(self),
            key,
        };
        async move {
            let _entry = entry;
            tokio::select! {
                biased;
                // A closed sender (the entry replaced) is not a cancel.
                Ok(()) = cancelled => None,
                outcome = work => Some(outcome),
            }
        }
    }

    /// A `notifications/cancelled` from the server: stops the handler it names, if one runs.
    pub(crate) fn cancel(&self, params: Option<&RawValue>) -> bool {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Params {
            request_id: Value,
        }
        let Some(key) = params
            .and_then(|raw| serde_json::from_str::<Params>(raw.get()).ok())
            .and_then(|params| key_of_value(&params.request_id))
        else {
            return false;
        };
        match lock(&self.running).remove(&key) {
            Some(cancel) => cancel.send(()).is_ok(),
            None => false,
        }
    }

    /// How many handlers run.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        lock(&self.running).len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_owned()).unwrap()
    }

    #[tokio::test]
    async fn a_cancel_drops_the_work_and_answers_nothing() {
        let inbound = Arc::new(Inbound::default());
        let (dropped_tx, dropped_rx) = oneshot::channel::<()>();
        let work = async move {
            let _guard = dropped_tx;
            std::future::pending::<()>().await;
        };
        let run = inbound.run(&Id::int(7), work);
        tokio::pin!(run);
        // Not cancelled yet: still running.
        assert!(futures_util::FutureExt::now_or_never(run.as_mut()).is_none());
        assert_eq!(inbound.len(), 1);
        // Another id, or a malformed notice, changes nothing.
        assert!(!inbound.cancel(Some(&raw(r#"{"requestId": 8}"#))));
        assert!(!inbound.cancel(Some(&raw(r#"{"requestId": "7"}"#))));
        assert!(!inbound.cancel(None));
        assert!(inbound.cancel(Some(&raw(r#"{"requestId": 7, "reason": "x"}"#))));
        assert_eq!(run.await, None);
        // The work was dropped, and the entry is gone.
        assert!(dropped_rx.await.is_err());
        assert_eq!(inbound.len(), 0);
    }

    #[tokio::test]
    async fn string_ids_match_and_finished_work_leaves_no_entry() {
        let inbound = Arc::new(Inbound::default());
        assert_eq!(inbound.run(&Id::string("a"), async { 5 }).await, Some(5));
        assert_eq!(inbound.len(), 0);
        let run = inbound.run(&Id::string("a"), std::future::pending::<()>());
        tokio::pin!(run);
        assert!(futures_util::FutureExt::now_or_never(run.as_mut()).is_none());
        assert!(inbound.cancel(Some(&raw(r#"{"requestId": "a"}"#))));
        assert_eq!(run.await, None);
    }
}
