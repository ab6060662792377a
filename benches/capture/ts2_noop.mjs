// A no-op MCP server on the TypeScript SDK 2.x (`@modelcontextprotocol/server`): one tool,
// `noop`, no arguments, answering the text "ok". Served with `serveStdio`, which picks the era
// from the opening exchange (`StdioServerTransport` alone speaks only the legacy era). Run by
// `drive.py` to capture its answers (README.md).
import { McpServer } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";

serveStdio(() => {
  const server = new McpServer({ name: "noop", version: "0" });
  server.registerTool("noop", { description: "Does nothing." }, async () => ({
    content: [{ type: "text", text: "ok" }],
  }));
  return server;
});
