//! [`Toolbox`]: a [`Handler`] made of closures, for a server that offers tools and nothing
//! else (the demo's built-in server, tests, benchmarks).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::Value;
use sidewire_mcp::{CallToolResult, Implementation, Tool};
use tokio::io::{AsyncRead, AsyncWrite};

use crate::{Capabilities, Error, Handler, HandlerContext, Reply, Server, ToolCallRequest};

type ToolFuture = Pin<Box<dyn Future<Output = CallToolResult> + Send>>;
type ToolFn = Arc<dyn Fn(Value, HandlerContext) -> ToolFuture + Send + Sync>;

/// A tools-only [`Handler`] built from closures.
///
/// ```
/// use sidewire_mcp_server::{CallToolResult, Toolbox};
/// use serde_json::json;
///
/// let toolbox = Toolbox::new("echo-server", "1.0.0").tool(
///     "echo",
///     "Echoes its text",
///     json!({"type": "object", "properties": {"text": {"type": "string"}}}),
///     |args, _ctx| async move { CallToolResult::text(args["text"].as_str().unwrap_or_default()) },
/// );
/// # let _ = toolbox;
/// ```
#[derive(Clone)]
pub struct Toolbox {
    info: Implementation,
    tools: Vec<(Tool, ToolFn)>,
}

impl std::fmt::Debug for Toolbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let tools: Vec<&str> = self
            .tools
            .iter()
            .map(|(tool, _)| tool.name.as_str())
            .collect();
        f.debug_struct("Toolbox")
            .field("info", &self.info)
            .field("tools", &tools)
            .finish()
    }
}

impl Toolbox {
    /// A server that introduces itself with this name and version.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        let mut info = Implementation::default();
        info.name = name.into();
        info.version = version.into();
        Toolbox {
            info,
            tools: Vec::new(),
        }
    }

    /// Offers a tool; `schema` is its input JSON Schema. A later tool of the same name
    /// replaces it.
    pub fn tool<F, Fut>(mut self, name: &str, description: &str, schema: Value, handler: F) -> Self
    where
        F: Fn(Value, HandlerContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = CallToolResult> + Send + 'static,
    {
        self.tools.retain(|(tool, _)| tool.name != name);
        let tool = Tool::new(name, description, schema);
        self.tools.push((
            tool,
            Arc::new(move |args, ctx| Box::pin(handler(args, ctx))),
        ));
        self
    }

    /// Serves these tools over `reader`/`writer` (NDJSON) until the client closes its end
    /// ([`Server::serve_stdio`]).
    ///
    /// # Errors
    ///
    /// As [`Server::serve_stdio`].
    ///
    /// # Cancel safety
    ///
    /// As [`Server::serve_stdio`].
    pub async fn serve<R, W>(self, reader: R, writer: W) -> Result<(), Error>
    where
        R: AsyncRead + Unpin,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        Server::new(self).serve_stdio(reader, writer).await
    }
}

impl Handler for Toolbox {
    fn info(&self) -> Implementation {
        self.info.clone()
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::default().tools()
    }

    async fn list_tools(&self, _ctx: &HandlerContext) -> Result<Vec<Tool>, Error> {
        Ok(self.tools.iter().map(|(tool, _)| tool.clone()).collect())
    }

    async fn call_tool(
        &self,
        call: ToolCallRequest,
        ctx: HandlerContext,
    ) -> Result<Reply<CallToolResult>, Error> {
        let Some((_, handler)) = self.tools.iter().find(|(tool, _)| tool.name == call.name) else {
            return Err(Error::invalid_params(format!(
                "unknown tool: {}",
                call.name
            )));
        };
        let handler = Arc::clone(handler);
        Ok(Reply::Complete(
            handler(Value::Object(call.arguments), ctx).await,
        ))
    }
}
