//! What the embedding application answers for servers: sampling, elicitation, and the
//! notifications it may want to see. [`ClientHandler`] is the public trait (RPITIT); a private
//! object-safe adapter boxes its futures so one handler can serve many connections.
//!
//! `ping` and `roots/list` are answered by the client itself (roots come from the spec, or
//! [`Client::set_roots`](crate::Client::set_roots)) and every other server request gets
//! `-32601`; the handler is never asked about those. A request the server cancels
//! (`notifications/cancelled`) while the handler works on it has its handler future dropped,
//! and no answer is sent.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::{Map, Value};
use sidewire_jsonrpc::ErrorObject;

use crate::protocol::elicit_url::UrlElicitation;
use crate::protocol::types::{
    CreateMessageParams, CreateMessageResult, ElicitAction, ElicitParams, ElicitResult, LogLevel,
    LogMessage,
};

/// Answers the requests a server sends to the client, and hears its notifications.
///
/// Every method has a default: sampling and elicitation are not offered (not advertised, and
/// answered `-32601` if a server asks anyway), log messages go to `tracing`, resource updates
/// are ignored. `server` is the server's name as in its spec.
///
/// The notification methods run on the connection's driver, in arrival order: they must not
/// block (hand work to a channel).
pub trait ClientHandler: Send + Sync + 'static {
    /// Advertise `sampling` and route `sampling/createMessage` to
    /// [`create_message`](ClientHandler::create_message).
    fn supports_sampling(&self) -> bool {
        false
    }

    /// Advertise `elicitation` (form mode) and route `elicitation/create` to
    /// [`elicit`](ClientHandler::elicit).
    fn supports_elicitation(&self) -> bool {
        false
    }

    /// Advertise `sampling.tools` (2025-11-25): the server may send `tools` and `toolChoice`
    /// in `sampling/createMessage`, and the answer may hold [`Content::ToolUse`] items
    /// ([`CreateMessageResult::tool_use`]). Without it a request carrying tools is refused
    /// with `-32602` before [`create_message`](ClientHandler::create_message) sees it.
    /// Only read when [`supports_sampling`](ClientHandler::supports_sampling) is true.
    ///
    /// [`Content::ToolUse`]: crate::Content::ToolUse
    fn supports_sampling_tools(&self) -> bool {
        false
    }

    /// Advertise `roots` even when the spec has none, because
    /// [`list_roots`](ClientHandler::list_roots) answers (a gateway passing its clients' roots
    /// on).
    fn supports_roots(&self) -> bool {
        false
    }

    /// Advertise `elicitation.url` (2025-11-25) and route URL-mode `elicitation/create` to
    /// [`elicit_url`](ClientHandler::elicit_url). Without it a URL-mode request is refused
    /// with `-32602`.
    fn supports_url_elicitation(&self) -> bool {
        false
    }

    /// Answers a server's `sampling/createMessage`. An `Err` is sent as the JSON-RPC error.
    fn create_message(
        &self,
        server: &str,
        params: CreateMessageParams,
    ) -> impl Future<Output = Result<CreateMessageResult, ErrorObject>> + Send {
        let _ = (server, params);
        async { Err(not_offered("sampling")) }
    }

    /// Answers a server's `elicitation/create`. On `accept`, fields the content leaves out
    /// are filled from the requested schema's `default`s before the answer is sent.
    fn elicit(
        &self,
        server: &str,
        params: ElicitParams,
    ) -> impl Future<Output = Result<ElicitResult, ErrorObject>> + Send {
        let _ = (server, params);
        async { Err(not_offered("elicitation")) }
    }

    /// Answers a URL-mode elicitation: ask the user whether to open
    /// [`request.url`](UrlElicitation::url) (show it escaped, with
    /// [`request.host()`](UrlElicitation::host) apart), and open it only on their yes.
    /// [`ElicitAction::Accept`] means the user agreed to go (the outcome arrives later, as
    /// [`on_elicitation_complete`](ClientHandler::on_elicitation_complete));
    /// [`ElicitAction::Decline`] and [`ElicitAction::Cancel`] mean they did not. The URL was
    /// checked before this is called: absolute, `https:` or `http:`, with a host.
    ///
    /// Also called by [`Client::offer_url_elicitations`](crate::Client::offer_url_elicitations)
    /// for the elicitations of a `-32042` error.
    fn elicit_url(
        &self,
        server: &str,
        request: UrlElicitation,
    ) -> impl Future<Output = Result<ElicitAction, ErrorObject>> + Send {
        let _ = (server, request);
        async { Err(not_offered("URL elicitation")) }
    }

    /// Answers a server's `roots/list` in place of the connection's own roots (its spec's, or
    /// the host's [`set_roots`](crate::McpHost::set_roots)): `None`, the default, answers with
    /// those. A gateway asks the client whose call is in flight on that server. An `Err` is
    /// sent as the JSON-RPC error.
    fn list_roots(
        &self,
        server: &str,
    ) -> impl Future<Output = Option<Result<Vec<crate::Root>, ErrorObject>>> + Send {
        let _ = server;
        async { None }
    }

    /// A `notifications/elicitation/complete`: the out-of-band step of the URL elicitation
    /// `elicitation_id` (peer text) is done; a request that failed with `-32042` may be sent
    /// again.
    fn on_elicitation_complete(&self, server: &str, elicitation_id: &str) {
        let _ = (server, elicitation_id);
    }

    /// A `notifications/message` from the server. The default logs it through `tracing`
    /// (target `sidewire_mcp::server_log`) at the matching level.
    fn on_log(&self, server: &str, message: &LogMessage) {
        log_to_tracing(server, message);
    }

    /// A `notifications/resources/updated` for a subscribed resource.
    fn on_resource_updated(&self, server: &str, uri: &str) {
        let _ = (server, uri);
    }

    /// The server sent a request this client does not offer (`method`, peer text: a
    /// `sampling/createMessage` or `elicitation/create` it was not offered, or anything
    /// unknown); it is answered `-32601`. A host can tell its user why the server's work may
    /// now fail. Runs on the connection's driver: must not block.
    fn on_unoffered_request(&self, server: &str, method: &str) {
        tracing::debug!(
            server,
            method,
            "refused a server request this client does not offer"
        );
    }
}

/// A handler that offers nothing beyond the defaults.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoHandler;

impl ClientHandler for NoHandler {}

fn not_offered(what: &str) -> ErrorObject {
    ErrorObject::new(
        ErrorObject::METHOD_NOT_FOUND,
        format!("this client does not offer {what}"),
    )
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// The object-safe face of a [`ClientHandler`], shared by every connection of a host.
pub(crate) trait DynHandler: Send + Sync + 'static {
    fn supports_sampling(&self) -> bool;
    fn supports_elicitation(&self) -> bool;
    fn supports_sampling_tools(&self) -> bool;
    fn supports_url_elicitation(&self) -> bool;
    fn supports_roots(&self) -> bool;
    fn elicit_url(
        &self,
        server: Arc<str>,
        request: UrlElicitation,
    ) -> BoxFuture<Result<ElicitAction, ErrorObject>>;
    fn on_elicitation_complete(&self, server: &str, elicitation_id: &str);
    fn list_roots(
        &self,
        server: Arc<str>,
    ) -> BoxFuture<Option<Result<Vec<crate::Root>, ErrorObject>>>;
    fn create_message(
        &self,
        server: Arc<str>,
        params: CreateMessageParams,
    ) -> BoxFuture<Result<CreateMessageResult, ErrorObject>>;
    fn elicit(
        &self,
        server: Arc<str>,
        params: ElicitParams,
    ) -> BoxFuture<Result<ElicitResult, ErrorObject>>;
    fn on_log(&self, server: &str, message: &LogMessage);
    fn on_resource_updated(&self, server: &str, uri: &str);
    fn on_unoffered_request(&self, server: &str, method: &str);
}

struct Adapter<H>(Arc<H>);

impl<H: ClientHandler> DynHandler for Adapter<H> {
    fn supports_sampling(&self) -> bool {
        self.0.supports_sampling()
    }

    fn supports_elicitation(&self) -> bool {
        self.0.supports_elicitation()
    }

    fn supports_sampling_tools(&self) -> bool {
        self.0.supports_sampling() && self.0.supports_sampling_tools()
    }

    fn supports_url_elicitation(&self) -> bool {
        self.0.supports_url_elicitation()
    }

    fn supports_roots(&self) -> bool {
        self.0.supports_roots()
    }

    fn elicit_url(
        &self,
        server: Arc<str>,
        request: UrlElicitation,
    ) -> BoxFuture<Result<ElicitAction, ErrorObject>> {
        let handler = Arc::clone(&self.0);
        Box::pin(async move { handler.elicit_url(&server, request).await })
    }

    fn on_elicitation_complete(&self, server: &str, elicitation_id: &str) {
        self.0.on_elicitation_complete(server, elicitation_id);
    }

    fn list_roots(
        &self,
        server: Arc<str>,
    ) -> BoxFuture<Option<Result<Vec<crate::Root>, ErrorObject>>> {
        let handler = Arc::clone(&self.0);
        Box::pin(async move { handler.list_roots(&server).await })
    }

    fn create_message(
        &self,
        server: Arc<str>,
        params: CreateMessageParams,
    ) -> BoxFuture<Result<CreateMessageResult, ErrorObject>> {
        let handler = Arc::clone(&self.0);
        Box::pin(async move { handler.create_message(&server, params).await })
    }

    fn elicit(
        &self,
        server: Arc<str>,
        params: ElicitParams,
    ) -> BoxFuture<Result<ElicitResult, ErrorObject>> {
        let handler = Arc::clone(&self.0);
        Box::pin(async move {
            let schema = params.requested_schema.clone();
            let mut result = handler.elicit(&server, params).await?;
            if result.action == ElicitAction::Accept {
                let content = result.content.get_or_insert_with(Map::new);
                if let Some(schema) = &schema {
                    fill_defaults(schema, content);
                }
            }
            Ok(result)
        })
    }

    fn on_log(&self, server: &str, message: &LogMessage) {
        self.0.on_log(server, message);
    }

    fn on_resource_updated(&self, server: &str, uri: &str) {
        self.0.on_resource_updated(server, uri);
    }

    fn on_unoffered_request(&self, server: &str, method: &str) {
        self.0.on_unoffered_request(server, method);
    }
}

/// Boxes a handler for sharing between connections.
pub(crate) fn share<H: ClientHandler>(handler: H) -> Arc<dyn DynHandler> {
    Arc::new(Adapter(Arc::new(handler)))
}

/// Fills each top-level property the content leaves out with the schema's `default`, as the
/// conformance suite's elicitation-defaults scenario requires (SEP-1034).
pub(crate) fn fill_defaults(schema: &Value, content: &mut Map<String, Value>) {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (name, property) in properties {
        if content.contains_key(name) {
            continue;
        }
        if let Some(default) = property.get("default") {
            content.insert(name.clone(), default.clone());
        }
    }
}

/// The most log text forwarded per server message.
const LOG_CAP: usize = 4096;

fn log_to_tracing(server: &str, message: &LogMessage) {
    let text = match &message.data {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    let text = cut(&text, LOG_CAP);
    let logger = cut(message.logger.as_deref().unwrap_or(""), LOG_CAP);
    match message.level {
        LogLevel::Debug => {
            tracing::debug!(target: "sidewire_mcp::server_log", server, logger, "{text}")
        }
        LogLevel::Info | LogLevel::Notice => {
            tracing::info!(target: "sidewire_mcp::server_log", server, logger, "{text}")
        }
        LogLevel::Warning => {
            tracing::warn!(target: "sidewire_mcp::server_log", server, logger, "{text}")
        }
        _ => tracing::error!(target: "sidewire_mcp::server_log", server, logger, "{text}"),
    }
}

/// `text` cut to at most `cap` bytes on a character boundary.
pub(crate) fn cut(text: &str, cap: usize) -> &str {
    if text.len() <= cap {
        return text;
    }
    let mut end = cap;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}
