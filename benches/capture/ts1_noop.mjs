// A no-op MCP server on the TypeScript SDK 1.x (`@modelcontextprotocol/sdk`): one tool, `noop`,
// no arguments, answering the text "ok". Run by `drive.py` to capture its answers (README.md).
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";

const server = new McpServer({ name: "noop", version: "0" });
server.registerTool("noop", { description: "Does nothing." }, async () => ({
  content: [{ type: "text", text: "ok" }],
}));
await server.connect(new StdioServerTransport());
