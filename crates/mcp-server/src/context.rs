//! [`HandlerContext`]: what a handler method gets besides its params.

use std::sync::Arc;

use serde_json::{Map, Value, json};
use sidewire_mcp::LogLevel;
use tokio::sync::mpsc;

use crate::core::Client;
use crate::era::Era;
use crate::wire;

/// A message on its way to the client.
#[derive(Debug)]
pub(crate) enum Out {
    /// A notification or a request of ours.
    Message(Value),
    /// The request's response: the last message of its stream.
    Final(Value),
    /// Close the HTTP stream now; the rest goes to the client's next `GET` with
    /// `Last-Event-ID` (SSE polling). Nothing over stdio.
    CloseStream,
}

/// Where one request's messages go: its POST's stream, or the stdio writer.
pub(crate) type Outbox = mpsc::Sender<Out>;

/// What a handler method gets besides its params: who asks, in which era, the client's
/// answers to earlier input requests, and the way to report progress and log.
#[derive(Clone)]
pub struct HandlerContext {
    pub(crate) era: Era,
    pub(crate) client: Arc<Client>,
    pub(crate) progress_token: Option<Value>,
    pub(crate) out: Outbox,
    pub(crate) responses: Arc<Map<String, Value>>,
    pub(crate) state: Option<Value>,
    pub(crate) notifier: crate::Notifier,
    pub(crate) session: Option<crate::SessionKey>,
    /// A legacy session's way to ask its client mid-request (none in the modern era).
    pub(crate) asker: Option<crate::server::Asker>,
}

impl std::fmt::Debug for HandlerContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HandlerContext")
            .field("era", &self.era)
            .field("progress_token", &self.progress_token)
            .field("responses", &self.responses.len())
            .finish_non_exhaustive()
    }
}

impl HandlerContext {
    /// Sends `request` to the client now, on this request's stream, and waits for its answer
    /// (within [`Limits::input_timeout`](crate::Limits::input_timeout)): the way a handler
    /// whose answer depends on another party (a gateway passing on its upstream's sampling or
    /// elicitation) asks mid-call. Only a legacy session can; a modern request's handler
    /// returns [`Reply::InputRequired`](crate::Reply::InputRequired) instead.
    ///
    /// # Errors
    ///
    /// [`Error::MissingCapability`](crate::Error::MissingCapability) when the client did not
    /// declare what the request needs; [`Error::InputRefused`](crate::Error::InputRefused)
    /// in the modern era, or when the client answers with an error;
    /// [`Error::InputTimeout`](crate::Error::InputTimeout), a limit, or
    /// [`Error::Closed`](crate::Error::Closed) otherwise.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future forgets the request (a late answer is ignored).
    pub async fn ask(&self, request: &crate::InputRequest) -> Result<Value, crate::Error> {
        if !self.client_has(request.capability()) {
            return Err(crate::Error::MissingCapability(request.capability()));
        }
        let Some(asker) = &self.asker else {
            return Err(crate::Error::InputRefused {
                method: request.method().to_owned(),
                message: "a modern request cannot be asked mid-call; answer input_required"
                    .to_owned(),
            });
        };
        asker.ask(&self.out, request).await
    }

    /// The era the request is served in.
    pub fn era(&self) -> Era {
        self.era
    }

    /// The client's capabilities (from `initialize`, or the modern request's `_meta`).
    pub fn client_capabilities(&self) -> &Map<String, Value> {
        &self.client.capabilities
    }

    /// Whether the client announced `capability` (`"elicitation"`, `"sampling.tools"`, ...).
    pub fn client_has(&self, capability: &str) -> bool {
        crate::era::has_capability(&self.client.capabilities, capability)
    }

    /// The session the request belongs to: its legacy session, or its stdio connection (in
    /// either era); `None` for a modern-era request over HTTP, which belongs to no session.
    pub fn session(&self) -> Option<crate::SessionKey> {
        self.session
    }

    /// `clientInfo`, as the client sent it.
    pub fn client_info(&self) -> Option<&Value> {
        self.client.info.as_ref()
    }

    /// Announces list changes and resource updates to every client of this server.
    pub fn notifier(&self) -> &crate::Notifier {
        &self.notifier
    }

    /// The client's answers to the input requests of the previous round, by key (empty on the
    /// first).
    pub fn input_responses(&self) -> &Map<String, Value> {
        &self.responses
    }

    /// The state the previous round returned in its [`crate::InputRequired`].
    pub fn request_state(&self) -> Option<&Value> {
        self.state.as_ref()
    }

    /// The request's progress token, when the client asked for progress.
    pub fn progress_token(&self) -> Option<&Value> {
        self.progress_token.as_ref()
    }

    /// Sends `notifications/progress` for this request, when the client asked for progress.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future before it completes sends nothing.
    pub async fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        let Some(token) = &self.progress_token else {
            return;
        };
        let mut params = json!({ "progressToken": token, "progress": progress });
        if let Some(total) = total {
            params["total"] = json!(total);
        }
        if let Some(message) = message {
            params["message"] = json!(message);
        }
        self.notify("notifications/progress", params).await;
    }

    /// Sends `notifications/message` on this request's stream, when `level` is at or above
    /// the level the client asked for. A legacy client that asked for none gets every level; a
    /// modern request that names no `logLevel` gets none.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future before it completes sends nothing.
    pub async fn log(&self, level: LogLevel, logger: Option<&str>, data: Value) {
        match self.client.log_level {
            Some(floor) if level < floor => return,
            None if self.era.is_modern() => return,
            _ => {}
        }
        let mut params = json!({ "level": level, "data": data });
        if let Some(logger) = logger {
            params["logger"] = json!(logger);
        }
        self.notify("notifications/message", params).await;
    }

    /// Closes this request's HTTP event stream now, without ending the request: the client
    /// reconnects with `GET` and `Last-Event-ID` after the stream's `retry` and gets the rest
    /// (SSE polling, 2025-11-25). Does nothing over stdio, in the modern era, or when the
    /// answer is plain JSON.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future before it completes closes nothing.
    pub async fn close_stream(&self) {
        if !self.era.is_modern() {
            let _ = self.out.send(Out::CloseStream).await;
        }
    }

    /// Sends any notification on this request's stream (a closed stream drops it: the
    /// request is ending anyway).
    ///
    /// # Cancel safety
    ///
    /// Dropping the future before it completes sends nothing.
    pub async fn notify(&self, method: &str, params: Value) {
        let _ = self
            .out
            .send(Out::Message(wire::notification(method, params)))
            .await;
    }
}
