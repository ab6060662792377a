#!/usr/bin/env node
// A one-tool no-op MCP server on the TypeScript SDK v2 (npm `@modelcontextprotocol/server@2.4.0`,
// plus `@modelcontextprotocol/node@2.1.2` for HTTP), the TypeScript peer of `--bench mcp_server`.
// The tool takes no arguments and answers {content: [{type: "text", text: "ok"}]}.
// Run it from a directory whose node_modules holds those packages (ESM resolves imports from the
// script's own directory): the bench copies it next to a link to the node_modules that
// .ci/mcp-peers/install.sh makes ($SIDEWIRE_MCP_PEERS/ts2/node_modules). Node >= 20.
//
// Usage:
//   node ts_noop_server.mjs [--tool NAME] stdio
//   node ts_noop_server.mjs [--tool NAME] http PORT [--stateful] [--json]
//
// stdio: serveStdio(factory): the opening message picks the era (initialize -> 2025-11-25 pinned
//        instance; a 2026-07-28 `_meta` request or server/discover -> modern). A bare
//        StdioServerTransport would answer server/discover with -32601.
// http:  http://127.0.0.1:PORT/mcp on node:http.
//        default:    createMcpHandler(factory) -> 2026-07-28 per request, and 2025-era traffic
//                    served statelessly (no Mcp-Session-Id; GET/DELETE answer 405).
//        --stateful: 2025-era traffic gets real sessions (NodeStreamableHTTPServerTransport with
//                    a session id, one McpServer per session); 2026-07-28 traffic goes to
//                    createMcpHandler(factory, {legacy: 'reject'}); routed by isLegacyRequest().
//        --json:     JSON bodies instead of SSE (modern responseMode 'json'; legacy
//                    enableJsonResponse).
// --tool NAME: the tool's name (default `noop`; `test_simple_text` for the client scripts).
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';

import { createMcpHandler, isLegacyRequest, McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { NodeStreamableHTTPServerTransport, localhostHostValidation, toNodeHandler, toWebRequest } from '@modelcontextprotocol/node';

const argv = process.argv.slice(2);
let tool = 'noop';
if (argv[0] === '--tool') { tool = argv[1]; argv.splice(0, 2); }
const [mode, portArg, ...flags] = argv;
const stateful = flags.includes('--stateful');
const json = flags.includes('--json');

function factory() {
  const server = new McpServer({ name: 'ts-noop', version: '2.4.0' });
  server.registerTool(tool, { description: 'Does nothing.' }, async () => ({
    content: [{ type: 'text', text: 'ok' }],
  }));
  return server;
}

if (mode === 'stdio') {
  serveStdio(factory, { onerror: (e) => console.error('ts-noop:', e) });
} else if (mode === 'http' && portArg) {
  const port = Number(portArg);
  const hostOk = localhostHostValidation();
  const onerror = (e) => console.error('ts-noop:', e);
  const responseMode = json ? 'json' : 'auto';
  let handle;
  if (!stateful) {
    handle = toNodeHandler(createMcpHandler(factory, { onerror, responseMode }), { onerror });
  } else {
    const modern = toNodeHandler(createMcpHandler(factory, { legacy: 'reject', onerror, responseMode }), { onerror });
    const sessions = new Map();
    const legacy = async (req, res, body) => {
      const sid = req.headers['mcp-session-id'];
      let transport = sid ? sessions.get(sid) : undefined;
      if (!transport) {
        if (sid || req.method !== 'POST' || body?.method !== 'initialize') {
          res.writeHead(sid ? 404 : 400, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: sid ? -32001 : -32000, message: sid ? 'Session not found' : 'Bad Request: Session ID required' } }));
          return;
        }
        transport = new NodeStreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          enableJsonResponse: json,
          onsessioninitialized: (id) => sessions.set(id, transport),
        });
        transport.onclose = () => transport.sessionId && sessions.delete(transport.sessionId);
        await factory().connect(transport);
      }
      await transport.handleRequest(req, res, body);
    };
    handle = async (req, res) => {
      // Read the body once; both legs take it parsed.
      let body;
      if (req.method === 'POST') {
        const chunks = [];
        for await (const c of req) chunks.push(c);
        const text = Buffer.concat(chunks).toString('utf8');
        try { body = text ? JSON.parse(text) : undefined; } catch { body = text; }
      }
      const probe = await toWebRequest(req, body);
      if (await isLegacyRequest(probe, body)) await legacy(req, res, body);
      else await modern(req, res, body);
    };
  }
  createServer(async (req, res) => {
    const path = new URL(req.url, 'http://x').pathname;
    if (path !== '/mcp') { res.writeHead(404).end(); return; }
    if (!hostOk(req, res)) return; // answered 403 already
    try { await handle(req, res); } catch (e) {
      onerror(e);
      if (!res.headersSent) res.writeHead(500).end();
    }
  }).listen(port, '127.0.0.1', () => console.error(`ts-noop listening on http://127.0.0.1:${port}/mcp (${stateful ? 'stateful legacy' : 'stateless legacy'}, ${json ? 'json' : 'auto'} responses)`));
} else {
  console.error('usage: ts_noop_server.mjs [--tool NAME] (stdio | http PORT [--stateful] [--json])');
  process.exit(2);
}
