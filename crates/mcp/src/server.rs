//! A minimal MCP server: tools only, over any pair of pipes, in both protocol eras.
//!
//! It exists for the places sidewire needs the *other* end of MCP and nothing more: the
//! `sidewire demo` built-in server, benchmarks, and tests. ([`serve_paged_tools`], apart from
//! the rest, is a blocking stdio server of many tools over pages, for measuring listings.) It answers `initialize` (echoing a
//! supported version the client offers, else the newest), `ping`, `server/discover`,
//! `tools/list` (one page) and `tools/call`, reports progress when the call carries a progress
//! token, and answers anything else `-32601`. It is **not** a server SDK: no prompts,
//! resources, sampling, sessions, caching or input requests.
//!
//! Which era a request is in follows from the connection (the Python SDK's rule, cut down):
//!
//! | request | before `initialize` | after `initialize` |
//! |---|---|---|
//! | `initialize` | answered; the connection is legacy from then on | answered again |
//! | `ping` | `{}` | `{}` |
//! | `server/discover` | modern | modern |
//! | `tools/list`, `tools/call` | modern | legacy, as before the modern era |
//!
//! A modern request must carry `_meta` with `io.modelcontextprotocol/protocolVersion` and
//! `io.modelcontextprotocol/clientCapabilities` (else `-32602` naming what is missing), at a
//! version in [`MODERN_PROTOCOL_VERSIONS`] (else `-32022` with `data: {supported,
//! requested}`). Every modern result carries `resultType: "complete"`; `server/discover` and
//! `tools/list` also carry `ttlMs: 0` and `cacheScope: "private"` (fetch again at will, do not
//! share). `server/discover` names the modern versions and the legacy ones `initialize`
//! accepts ([`SUPPORTED_PROTOCOL_VERSIONS`]), the capabilities (`tools`) and `serverInfo`.
//! Progress goes out the same way in both eras.
//!
//! Behind the `server` feature, off by default: the CLI and this crate's tests enable it.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{Map, Value, json};
use sidewire_jsonrpc::{Config, ErrorObject, Peer, Profile, RequestContext, Router};
use tokio::io::{AsyncRead, AsyncWrite};

use crate::protocol::era::{META_CAPABILITIES, META_VERSION};
use crate::{
    CallToolResult, MODERN_PROTOCOL_VERSIONS, SUPPORTED_PROTOCOL_VERSIONS, Tool,
    UNSUPPORTED_PROTOCOL_VERSION,
};

mod paged;

pub use self::paged::serve_paged_tools;

type ToolFuture = Pin<Box<dyn Future<Output = CallToolResult> + Send>>;
type ToolHandler = Arc<dyn Fn(Value, ToolContext) -> ToolFuture + Send + Sync>;

/// What a tool handler gets besides its arguments: the way to report progress.
#[derive(Clone)]
pub struct ToolContext {
    peer: Peer,
    progress_token: Option<Value>,
}

impl std::fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolContext")
            .field("progress_token", &self.progress_token)
            .finish_non_exhaustive()
    }
}

impl ToolContext {
    /// Sends `notifications/progress` for this call, if the client asked for progress.
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
        // A closed connection ends the call anyway; nothing to report.
        let _ = self
            .peer
            .notify_untyped("notifications/progress", Some(&params))
            .await;
    }
}

/// A tools-only MCP server under construction.
pub struct Server {
    name: String,
    version: String,
    tools: Vec<(Tool, ToolHandler)>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let tools: Vec<&str> = self
            .tools
            .iter()
            .map(|(tool, _)| tool.name.as_str())
            .collect();
        f.debug_struct("Server")
            .field("name", &self.name)
            .field("version", &self.version)
            .field("tools", &tools)
            .finish()
    }
}

impl Server {
    /// A server that introduces itself with this name and version.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Server {
            name: name.into(),
            version: version.into(),
            tools: Vec::new(),
        }
    }

    /// Offers a tool. `schema` is its input JSON Schema.
    pub fn tool<F, Fut>(mut self, name: &str, description: &str, schema: Value, handler: F) -> Self
    where
        F: Fn(Value, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = CallToolResult> + Send + 'static,
    {
        let tool = Tool::new(name, description, schema);
        self.tools.push((
            tool,
            Arc::new(move |args, ctx| Box::pin(handler(args, ctx))),
        ));
        self
    }

    /// Serves MCP over `reader`/`writer` (NDJSON) until the client closes its end.
    ///
    /// # Errors
    ///
    /// The reason the connection failed, when it did not simply end.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future closes the connection; calls in flight are abandoned.
    pub async fn serve<R, W>(
        self,
        reader: R,
        writer: W,
    ) -> Result<(), sidewire_jsonrpc::CloseReason>
    where
        R: AsyncRead + Unpin,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let config = Config::new(Profile::Lenient, crate::DEFAULT_MAX_MESSAGE_BYTES);
        let (stream, sink) = sidewire_jsonrpc::ndjson(reader, writer, &config);
        let (_peer, driver) = sidewire_jsonrpc::connect(stream, sink, self.router(), config);
        driver.await
    }

    fn router(self) -> Router {
        let info = json!({ "name": self.name, "version": self.version });
        let listing: Vec<Tool> = self.tools.iter().map(|(tool, _)| tool.clone()).collect();
        let handlers: Arc<Vec<(Tool, ToolHandler)>> = Arc::new(self.tools);
        // Set by the first `initialize`: from then on the connection is legacy (module docs).
        let legacy = Arc::new(AtomicBool::new(false));
        let initialized = Arc::clone(&legacy);
        let listed = Arc::clone(&legacy);
        let discover_info = info.clone();
        Router::new()
            .request_untyped("initialize", move |params: Value, _| {
                let info = info.clone();
                initialized.store(true, Ordering::SeqCst);
                async move {
                    let offered = params["protocolVersion"].as_str().unwrap_or_default();
                    let version = if SUPPORTED_PROTOCOL_VERSIONS.contains(&offered) {
                        offered.to_owned()
                    } else {
                        crate::LATEST_PROTOCOL_VERSION.to_owned()
                    };
                    Ok(json!({
                        "protocolVersion": version,
                        "capabilities": { "tools": {} },
                        "serverInfo": info,
                    }))
                }
            })
            .notification_raw("notifications/initialized", |_| {})
            .request_untyped("ping", |_: Value, _| async { Ok(json!({})) })
            .request_untyped("server/discover", move |params: Value, _| {
                let answer = check_envelope(&params).map(|()| {
                    let versions: Vec<&str> = MODERN_PROTOCOL_VERSIONS
                        .iter()
                        .chain(SUPPORTED_PROTOCOL_VERSIONS)
                        .copied()
                        .collect();
                    let result = json!({
                        "supportedVersions": versions,
                        "capabilities": { "tools": {} },
                        "serverInfo": discover_info,
                    });
                    complete(result, true)
                });
                async move { answer }
            })
            .request_untyped("tools/list", move |params: Value, _| {
                let result = json!({ "tools": listing });
                let answer = match listed.load(Ordering::SeqCst) {
                    true => Ok(result),
                    false => check_envelope(&params).map(|()| complete(result, true)),
                };
                async move { answer }
            })
            .request_untyped("tools/call", move |params: Value, ctx: RequestContext| {
                let handlers = Arc::clone(&handlers);
                let modern = !legacy.load(Ordering::SeqCst);
                let checked = if modern {
                    check_envelope(&params)
                } else {
                    Ok(())
                };
                async move {
                    checked?;
                    let name = params["name"].as_str().unwrap_or_default();
                    let Some((_, handler)) = handlers.iter().find(|(tool, _)| tool.name == name)
                    else {
                        return Err(ErrorObject::invalid_params(format!("unknown tool: {name}")));
                    };
                    let context = ToolContext {
                        peer: ctx.peer().clone(),
                        progress_token: params["_meta"]["progressToken"].as_null_or_value(),
                    };
                    let arguments = params
                        .get("arguments")
                        .cloned()
                        .unwrap_or_else(|| json!({}));
                    let result = serde_json::to_value(handler(arguments, context).await)
                        .map_err(|err| ErrorObject::internal(err.to_string()))?;
                    Ok(if modern {
                        complete(result, false)
                    } else {
                        result
                    })
                }
            })
    }
}

/// Checks a modern request's `_meta` (see the module docs).
fn check_envelope(params: &Value) -> Result<(), ErrorObject> {
    let meta = params.get("_meta").and_then(Value::as_object);
    let missing: Vec<&str> = [META_VERSION, META_CAPABILITIES]
        .into_iter()
        .filter(|key| meta.and_then(|meta| meta.get(*key)).is_none())
        .collect();
    if !missing.is_empty() {
        return Err(ErrorObject::invalid_params(format!(
            "missing _meta keys: {}",
            missing.join(", ")
        )));
    }
    let requested = meta.and_then(|meta| meta.get(META_VERSION));
    match requested.and_then(Value::as_str) {
        Some(version) if MODERN_PROTOCOL_VERSIONS.contains(&version) => Ok(()),
        _ => Err(
            ErrorObject::new(UNSUPPORTED_PROTOCOL_VERSION, "unsupported protocol version")
                .with_data(json!({
                    "supported": MODERN_PROTOCOL_VERSIONS,
                    "requested": requested.cloned().unwrap_or(Value::Null),
                })),
        ),
    }
}

/// A modern result: `result` with `resultType: "complete"`, and the cache hints when
/// `cacheable`.
fn complete(result: Value, cacheable: bool) -> Value {
    let mut result = match result {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    result.insert("resultType".to_owned(), json!("complete"));
    if cacheable {
        result.insert("ttlMs".to_owned(), json!(0));
        result.insert("cacheScope".to_owned(), json!("private"));
    }
    Value::Object(result)
}

/// `Some(value)` unless it is JSON `null` (absent members index as `null`).
trait NullOr {
    fn as_null_or_value(&self) -> Option<Value>;
}

impl NullOr for Value {
    fn as_null_or_value(&self) -> Option<Value> {
        (!self.is_null()).then(|| self.clone())
    }
}
