// One era of the TypeScript SDK v2 client (npm `@modelcontextprotocol/client` 2.4.0) against an
// MCP server: the checks that .ci/mcp-server-clients.sh tabulates.
//
// Usage: node ts_client.mjs --era legacy|modern (URL | -- COMMAND [ARG...])
//
// Node resolves an ES module's imports from the module's own directory, so this file runs from a
// copy next to the node_modules that holds the package (the CI script copies it there).
// A URL means StreamableHTTPClientTransport, `-- COMMAND` StdioClientTransport. `legacy` is
// versionNegotiation mode 'legacy' (the SDK's default: `initialize` at 2025-11-25); `modern` is
// mode {pin: '2026-07-28'}: a server/discover at connect that must offer 2026-07-28, then the
// per-request `_meta` envelope, with no fallback. Over one connection, each check time-bound:
//
//   tools     tools/list names test_simple_text
//   text      tools/call test_simple_text answers the fixture's text
//   progress  tools/call test_tool_with_progress with `onprogress`: at least one
//             notifications/progress arrives, and the result is not an error
//   sampling  tools/call test_sampling with a sampling/createMessage handler: the server's
//             question reaches the handler (legacy: a server-to-client request; modern: an
//             input_required result the client fulfils through the same handler and retries)
//             and the answer comes back in the result
//
// Each check prints one line, `check NAME pass|fail DETAIL`. Exit status 0 when all pass.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const MODES = { legacy: 'legacy', modern: { pin: '2026-07-28' } };
const SIMPLE_TEXT = 'This is a simple text response for testing.';
const ANSWER = 'sampled by the typescript client';
const timeout = 15000;

const argv = process.argv.slice(2);
const usage = 'usage: ts_client.mjs --era legacy|modern (URL | -- COMMAND [ARG...])';
if (argv[0] !== '--era' || !(argv[1] in MODES) || argv.length < 3) {
  console.error(usage);
  process.exit(2);
}
const era = argv[1];
const rest = argv.slice(2);
let transport;
if (rest[0] === '--' && rest.length > 1) {
  transport = new StdioClientTransport({ command: rest[1], args: rest.slice(2), stderr: 'inherit' });
} else if (rest.length === 1 && /^https?:\/\//.test(rest[0])) {
  transport = new StreamableHTTPClientTransport(new URL(rest[0]));
} else {
  console.error(usage);
  process.exit(2);
}

const client = new Client(
  { name: 'sidewire-ci-ts-client', version: '2.4.0' },
  { capabilities: { sampling: {} }, versionNegotiation: { mode: MODES[era] } },
);
const questions = [];
client.setRequestHandler('sampling/createMessage', async (request) => {
  questions.push(request.params.messages.at(-1)?.content?.text);
  return { model: 'canned', role: 'assistant', content: { type: 'text', text: ANSWER } };
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

try {
  await client.connect(transport, { timeout });
} catch (err) {
  for (const name of ['tools', 'text', 'progress', 'sampling']) report(name, false, `connect: ${err?.name}: ${err?.message}`);
  process.exit(1);
}
console.log(`connected: protocolVersion=${client.getNegotiatedProtocolVersion()} era=${client.getProtocolEra()}`);
await check('tools', async () => {
  const names = (await client.listTools(undefined, { timeout })).tools.map((t) => t.name);
  return [names.includes('test_simple_text'), `${names.length} tools`];
});
await check('text', async () => {
  const got = texts(await client.callTool({ name: 'test_simple_text', arguments: {} }, { timeout }));
  return [got === SIMPLE_TEXT, JSON.stringify(got)];
});
await check('progress', async () => {
  const progress = [];
  const result = await client.callTool(
    { name: 'test_tool_with_progress', arguments: {} },
    { timeout, onprogress: (p) => progress.push(p.progress) },
  );
  return [progress.length > 0 && !result.isError, `${progress.length} progress notifications`];
});
await check('sampling', async () => {
  const got = texts(await client.callTool({ name: 'test_sampling', arguments: { prompt: 'What is 2+2?' } }, { timeout }));
  const ok = questions.length === 1 && questions[0] === 'What is 2+2?' && got.includes(ANSWER);
  return [ok, `asked ${JSON.stringify(questions)}, result ${JSON.stringify(got)}`];
});
try {
  await Promise.race([client.close(), new Promise((resolve) => setTimeout(resolve, 5000))]);
} catch (err) {
  console.log(`close: ${err?.name}: ${err?.message}`);
}
process.exit(failures ? 1 : 0);
