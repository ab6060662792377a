// One era of a TypeScript SDK client against an MCP server: the checks of a plan (plan-*.json
// here) that .ci/mcp-server-clients.sh tabulates. `--sdk 2` is the v2 client (npm
// `@modelcontextprotocol/client` 2.4.0), `--sdk 1` the v1 SDK's (npm `@modelcontextprotocol/sdk`
// 1.32.2, which speaks only the legacy era: its LATEST_PROTOCOL_VERSION is 2025-11-25).
//
// Usage: node ts_client.mjs --sdk 1|2 --era legacy|modern --plan PLAN (URL | -- COMMAND [ARG...])
//
// Node resolves an ES module's imports from the module's own directory, so this file runs from a
// copy next to the node_modules that holds the packages (the CI script copies it there).
// A URL means StreamableHTTPClientTransport, `-- COMMAND` StdioClientTransport. `legacy` is the
// `initialize` handshake at 2025-11-25 (v2: versionNegotiation mode 'legacy', its default);
// `modern` (v2 only) is mode {pin: '2026-07-28'}: a server/discover at connect that must offer
// 2026-07-28, then the per-request `_meta` envelope, with no fallback. Over one connection it runs
// each server's checks in the plan, each time-bound (tool names are the server's `prefix` + the
// plan's):
//
//   tools        tools/list (every page) names each of `names`
//   text         tools/call answers exactly `expect`
//   progress     tools/call with `onprogress`: at least one notifications/progress arrives, and
//                the result is not an error
//   sampling     tools/call with a sampling/createMessage handler: the server asks once, its last
//                message's text is `question` (legacy: a server-to-client request; modern: an
//                input_required result the client fulfils through the same handler and
//                retries), and the canned answer comes back in the result
//   elicitation  tools/call with an elicitation/create handler that accepts with `content`: the
//                server asks once with `message`, and the result's text holds `expect`
//   cancel       tools/call of a slow tool with `onprogress` and an AbortSignal; at the first
//                progress the client aborts (the SDK sends notifications/cancelled, or closes the
//                request's stream); the call must end rejected, not answered; then the server's
//                `text` call must answer again
//
// Each check prints one line, `check SERVER:NAME pass|fail DETAIL`. Exit status 0 when all pass.
import { readFileSync } from 'node:fs';

const KINDS = ['tools', 'text', 'progress', 'sampling', 'elicitation', 'cancel'];
const timeout = 15000;

const argv = process.argv.slice(2);
const usage = 'usage: ts_client.mjs --sdk 1|2 --era legacy|modern --plan PLAN (URL | -- COMMAND [ARG...])';
const [sdkFlag, sdk, eraFlag, era, planFlag, planFile, ...rest] = argv;
const eras = { 1: ['legacy'], 2: ['legacy', 'modern'] };
if (sdkFlag !== '--sdk' || !(sdk in eras) || eraFlag !== '--era' || !eras[sdk].includes(era) || planFlag !== '--plan') {
  console.error(usage);
  process.exit(2);
}
const plan = JSON.parse(readFileSync(planFile, 'utf8'));
const ANSWER = `sampled by the typescript client v${sdk}`;

// What differs between the two SDKs: where the classes are, how a handler is registered (v1: by
// the request's schema; v2: by method name), and callTool's arguments (v1 takes a result schema).
let Client, StreamableHTTPClientTransport, StdioClientTransport, setHandler, callTool;
if (sdk === '1') {
  ({ Client } = await import('@modelcontextprotocol/sdk/client/index.js'));
  ({ StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js'));
  ({ StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js'));
  const types = await import('@modelcontextprotocol/sdk/types.js');
  const schemas = { 'sampling/createMessage': types.CreateMessageRequestSchema, 'elicitation/create': types.ElicitRequestSchema };
  setHandler = (client, method, handler) => client.setRequestHandler(schemas[method], handler);
  callTool = (client, params, options) => client.callTool(params, types.CallToolResultSchema, options);
} else {
  ({ Client, StreamableHTTPClientTransport } = await import('@modelcontextprotocol/client'));
  ({ StdioClientTransport } = await import('@modelcontextprotocol/client/stdio'));
  setHandler = (client, method, handler) => client.setRequestHandler(method, handler);
  callTool = (client, params, options) => client.callTool(params, options);
}

let transport;
if (rest[0] === '--' && rest.length > 1) {
  transport = new StdioClientTransport({ command: rest[1], args: rest.slice(2), stderr: 'inherit' });
} else if (rest.length === 1 && /^https?:\/\//.test(rest[0])) {
  transport = new StreamableHTTPClientTransport(new URL(rest[0]));
} else {
  console.error(usage);
  process.exit(2);
}

const options = { capabilities: { sampling: {}, elicitation: {} } };
if (sdk === '2') options.versionNegotiation = { mode: era === 'modern' ? { pin: '2026-07-28' } : 'legacy' };
const client = new Client({ name: `sidewire-ci-ts-client-v${sdk}`, version: sdk === '1' ? '1.32.2' : '2.4.0' }, options);
const questions = [];
const elicitations = [];
// What the elicitation handler accepts with: the running check's `content`.
let acceptWith = {};
setHandler(client, 'sampling/createMessage', async (request) => {
  questions.push(request.params.messages.at(-1)?.content?.text);
  return { model: 'canned', role: 'assistant', content: { type: 'text', text: ANSWER } };
});
setHandler(client, 'elicitation/create', async (request) => {
  elicitations.push(request.params.message);
  return { action: 'accept', content: acceptWith };
});

let failures = 0;
function report(name, ok, detail) {
  if (!ok) failures++;
  console.log(`check ${name} ${ok ? 'pass' : 'fail'} ${String(detail).replace(/\s+/g, ' ').slice(0, 300)}`);
}
const texts = (result) => result.content.filter((c) => c.type === 'text').map((c) => c.text).join(' ');
async function check(name, body) {
  let timer;
  const bound = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer in ${timeout} ms`)), timeout);
  });
  try {
    const [ok, detail] = await Promise.race([body(), bound]);
    report(name, ok, detail);
  } catch (err) {
    report(name, false, `${err?.name}: ${err?.message}`);
  } finally {
    clearTimeout(timer);
  }
}

// The check bodies of one server of the plan, by kind.
function checksOf(prefix, spec) {
  const call = (kind, more = {}) =>
    callTool(client, { name: prefix + spec[kind].tool, arguments: spec[kind].arguments }, { timeout, ...more });
  const text = async () => {
    const result = await call('text');
    const got = texts(result);
    return [got === spec.text.expect && !result.isError, JSON.stringify(got)];
  };
  return {
    tools: async () => {
      const names = [];
      let cursor;
      do {
        const page = await client.listTools(cursor ? { cursor } : undefined, { timeout });
        names.push(...page.tools.map((t) => t.name));
        cursor = page.nextCursor;
      } while (cursor);
      const missing = spec.tools.names.filter((n) => !names.includes(prefix + n));
      return [missing.length === 0, `${names.length} tools${missing.length ? `, missing ${JSON.stringify(missing)}` : ''}`];
    },
    text,
    progress: async () => {
      const seen = [];
      const result = await call('progress', { onprogress: (p) => seen.push(p.progress) });
      return [seen.length > 0 && !result.isError, `${seen.length} progress notifications`];
    },
    sampling: async () => {
      questions.length = 0;
      const result = await call('sampling');
      const got = texts(result);
      const ok = questions.length === 1 && questions[0] === spec.sampling.question && got.includes(ANSWER) && !result.isError;
      return [ok, `asked ${JSON.stringify(questions)}, result ${JSON.stringify(got)}`];
    },
    elicitation: async () => {
      elicitations.length = 0;
      acceptWith = spec.elicitation.content;
      const result = await call('elicitation');
      const got = texts(result);
      const ok = elicitations.length === 1 && elicitations[0] === spec.elicitation.message && got.includes(spec.elicitation.expect) && !result.isError;
      return [ok, `asked ${JSON.stringify(elicitations)}, result ${JSON.stringify(got)}`];
    },
    cancel: async () => {
      const abort = new AbortController();
      let progressed = 0;
      const outcome = await call('cancel', {
        signal: abort.signal,
        onprogress: () => {
          if (progressed++ === 0) abort.abort('cancelled by the CI client');
        },
      }).then(
        (result) => ({ result }),
        (error) => ({ error }),
      );
      if (!abort.signal.aborted) return [false, `ended before any progress: ${outcome.error?.message ?? 'answered'}`];
      if (!outcome.error) return [false, `the call was answered instead: ${JSON.stringify(outcome.result).slice(0, 200)}`];
      const [ok, detail] = await text();
      return [ok, `cancelled after its first progress (${outcome.error.name}: ${outcome.error.message}); then ${spec.text.tool}: ${detail}`];
    },
  };
}

try {
  await client.connect(transport, { timeout });
} catch (err) {
  for (const server of plan.servers) {
    for (const kind of KINDS.filter((k) => k in server.checks)) report(`${server.name}:${kind}`, false, `connect: ${err?.name}: ${err?.message}`);
  }
  process.exit(1);
}
// v1 keeps the negotiated version to itself (only its HTTP transport has it): the server instead.
console.log(
  sdk === '2'
    ? `connected: protocolVersion=${client.getNegotiatedProtocolVersion()} era=${client.getProtocolEra()}`
    : `connected: server=${JSON.stringify(client.getServerVersion())}`,
);
for (const server of plan.servers) {
  const bodies = checksOf(server.prefix, server.checks);
  for (const kind of KINDS.filter((k) => k in server.checks)) await check(`${server.name}:${kind}`, bodies[kind]);
}
try {
  await Promise.race([client.close(), new Promise((resolve) => setTimeout(resolve, 5000))]);
} catch (err) {
  console.log(`close: ${err?.name}: ${err?.message}`);
}
process.exit(failures ? 1 : 0);
