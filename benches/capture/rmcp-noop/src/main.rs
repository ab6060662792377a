//! A no-op MCP server on rmcp 3.11: one tool, `noop`, no arguments, answering the text "ok",
//! on stdin/stdout. Run by `benches/capture/drive.py` to capture its answers (see
//! `benches/capture/README.md`); not part of sidewire's workspace.

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer, ServiceExt as _};
use rmcp::{ErrorData, ServerHandler};

struct Noop;

impl ServerHandler for Noop {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("noop", "0"))
    }

    async fn list_tools(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let schema = serde_json::json!({"type": "object"});
        let serde_json::Value::Object(schema) = schema else {
            unreachable!("an object")
        };
        Ok(ListToolsResult::with_all_items(vec![Tool::new(
            "noop",
            "Does nothing.",
            schema,
        )]))
    }

    async fn call_tool(
        &self,
        _: CallToolRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        Ok(CallToolResult::success(vec![ContentBlock::text("ok")]).into())
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let service = Noop
        .serve(rmcp::transport::stdio())
        .await
        .expect("the client initializes");
    let _ = service.waiting().await;
}
