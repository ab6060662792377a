#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]
//!
//! # Main types
//!
//! [`Client`] (one server's connection), [`McpHost`] (many servers, namespaced
//! names) and [`ServerSpec`] (how to reach a server). Names are chosen so a program that also
//! imports `sidewire-ext-host` or `sidewire-jsonrpc` needs no alias ([`ToolCallOptions`], not
//! `CallOptions`; [`MessageRole`], not `Role`).
//!
//! OAuth 2.1 authorization for HTTP servers is in [`auth`]: give a server an
//! [`auth::Authorizer`] ([`ServerSpec::authorizer`]) and a 401 starts discovery, registration,
//! the PKCE sign-in (through the authorizer's [`auth::Interaction`]), and the token is sent on
//! every later request, refreshed before it expires and once on a 401, stepped up on a
//! `403 insufficient_scope`; [`auth::login`], [`auth::logout`] and [`auth::status`] do the same
//! on purpose. Tokens live in a [`auth::TokenStore`]: [`auth::MemoryStore`], or
//! [`auth::FileStore`] (a directory of `0600` JSON records replaced atomically, with a
//! cross-process lock per server; the CLI's is `$SIDEWIRE_HOME/mcp/oauth/`). A spec's
//! [`auth::OAuthSettings`] are set with [`ServerSpec::oauth`] (`sidewire-mcp-config` reads them
//! from an `mcpServers` entry's `oauth` object).
//!
//! The skills extension ([`SKILLS_EXTENSION`]) has its client part: [`Client::list_skills`]
//! lists a server's skills without reading any of their files, and [`Client::load_skill`] /
//! [`Client::read_skill_file`] read a file only when asked, handing its text out only once its
//! size, SHA-256 digest and (for `SKILL.md`) YAML frontmatter match the listing entry
//! ([`Error::is_skill_unverified`] otherwise).
//!
//! Tasks (MCP 2025-11-25, experimental in the spec) are supported on the client side: a
//! tool's `execution.taskSupport` is kept from its listing ([`Tool::task_support`]), the
//! server's `tasks` capability is read ([`ServerCapabilities::tasks`]), and
//! [`Client::call_tool`] runs a `required` tool (an `optional` one when asked) as a task,
//! following it to its result; [`Client::get_task`], [`Client::task_result`],
//! [`Client::list_tasks`] and [`Client::cancel_task`] do the rest by hand (see
//! [Tasks](#tasks)).
//!
//! # MCP 2025-11-25 client features
//!
//! What the client supports of the 2025-11-25 revision's client side, and how:
//!
//! - **Structured output**: a result's `structuredContent` is checked against the tool's
//!   `outputSchema` as last listed (JSON Schema draft 2020-12 unless `$schema` names another,
//!   compiled offline once per listing and cached; a remote `$ref` is never fetched). A
//!   mismatch is an `Err` ([`Error::is_output_schema_mismatch`], the instance paths and
//!   keywords in [`Error::schema_violations`], the result still in [`Error::call_result`]), so
//!   a caller passing results to a model with `?` never passes on data that breaks the tool's
//!   contract. A schema that does not compile is [`Error::is_schema_invalid`] on the call,
//!   never a failed listing. With [`ToolCallOptions::validate_arguments`] the arguments are
//!   checked against `inputSchema` before sending ([`Error::is_invalid_arguments`]).
//! - **URL-mode elicitation**: `elicitation.url` is advertised when the handler says
//!   [`ClientHandler::supports_url_elicitation`]; `elicitation/create` with `mode: "url"` goes
//!   to [`ClientHandler::elicit_url`] as a [`UrlElicitation`] whose URL was checked (absolute,
//!   `https:`/`http:`, with a host, shown apart by [`UrlElicitation::host`]), anything else
//!   `-32602`; `notifications/elicitation/complete` reaches
//!   [`ClientHandler::on_elicitation_complete`]. A request refused with `-32042` is
//!   [`Error::is_url_elicitation_required`] with its [`Error::url_elicitations`];
//!   [`Client::offer_url_elicitations`] offers them to the handler, and the caller sends the
//!   request again once the user is done (the client never retries by itself).
//! - **Sampling with tools**: [`ClientHandler::supports_sampling_tools`] advertises
//!   `sampling.tools`; the request's `tools` and `toolChoice` are typed
//!   ([`CreateMessageParams`]), [`Content::ToolUse`] and [`Content::ToolResult`] are content
//!   kinds, and [`CreateMessageResult::tool_use`] answers with tool uses. A request with tools
//!   to a handler that does not offer them is refused `-32602`.
//! - **Cancellation by the server**: a `notifications/cancelled` for a sampling or elicitation
//!   request the server sent us drops the handler's future, and no answer is sent.
//! - **Roots that change**: [`Client::set_roots`] replaces the roots and sends
//!   `notifications/roots/list_changed` (`roots.listChanged` is advertised when the spec has
//!   roots); [`McpHost::set_roots`] does it for every running server and keeps the new roots
//!   for every server started or restarted afterwards.
//! - **Progress and `_meta` on any request**: [`ToolCallOptions::on_progress`] and
//!   [`ToolCallOptions::meta`] work on `tools/call` and, through [`Client::get_prompt_with`],
//!   [`Client::read_resource_with`] and [`Client::complete_with`], on the other requests; a
//!   caller's `_meta` key the client or the spec reserves is refused
//!   ([`Error::is_reserved_meta`]).
//! - **Icons**: `icons` are kept on [`Tool`], [`Prompt`], [`Resource`], [`ResourceTemplate`]
//!   and [`Implementation`] (with its `description` and `websiteUrl`), as [`Icon`]s, never
//!   fetched.
//! - **Capping a result for a model**: [`CallToolResult::capped`] cuts a result to a byte
//!   budget (text on a character boundary, media summarised, structured content dropped when
//!   it does not fit) with a [`CutNote`] of what was cut.
//!
//! It is **not** (yet): Windows process handling. It is not an MCP *server* either: that is
//! `sidewire-mcp-server`, which shares this crate's wire types. It never runs a server through
//! a shell and never spawns a task:
//! [`Client::connect`] and [`McpHost::new`] hand back a driver future for the caller to run, and
//! everything a connection does (hyper's HTTP connections included) happens inside it.
//!
//! # Tasks
//!
//! A tool listed with `execution.taskSupport: "required"` (or `"optional"`, with
//! [`ToolCallOptions::as_task`]) on a server whose capabilities include
//! `tasks.requests.tools.call` is called as a task by [`Client::call_tool`] and
//! [`McpHost::call_tool`]: `tools/call` with `task` (and the progress token, so progress
//! reports keep coming for the whole task), then the task is followed by
//! `notifications/tasks/status` and by `tasks/get` at the server's `pollInterval` clamped to
//! [`MIN_POLL_INTERVAL`]..[`MAX_POLL_INTERVAL`] ([`DEFAULT_POLL_INTERVAL`] when it gives
//! none), and `tasks/result` fetches the tool's result once it is `completed`, `failed` or
//! `input_required` (the server's elicitation and sampling requests on the way reach the
//! [`ClientHandler`]). The caller gets the result as from an ordinary call; a status callback
//! ([`ToolCallOptions::on_task_status`]) sees each change. The call's idle timeout and
//! absolute cap cover the whole task; giving up or dropping the call sends `tasks/cancel`
//! (when the server announces `tasks.cancel`; one frame queued from the drop, nothing
//! spawned). A connection follows at most [`MAX_TRACKED_TASKS`] tasks at once
//! ([`Error::is_task_limit`]); a task that ends `failed` with no result to fetch is
//! [`Error::is_task_failed`], one cancelled by someone else [`Error::is_task_cancelled`]. A
//! status or `taskSupport` value this client does not know is kept ([`TaskStatus::Unknown`],
//! [`TaskSupport::Unknown`]): an unknown status is followed like `working`, an unknown
//! support is called the ordinary way; a tool with no `execution` is never a task.
//!
//! What is not supported: the client's own `tasks` capability (it never runs a server's
//! sampling or elicitation as a task, and does not offer it), and tasks in the modern era,
//! where they left the core for the `io.modelcontextprotocol/tasks` extension: over a modern
//! connection `call_tool` never asks for a task and the explicit task requests fail with
//! [`Error::is_unsupported`].
//!
//! # Protocol eras
//!
//! Each connection speaks one era, chosen per server ([`ServerSpec::era`]) and told by
//! [`Client::era`]; a caller does not need to know which. [`EraChoice::Auto`] (the default)
//! probes with one `server/discover` carrying the modern envelope and waits at most
//! [`ServerSpec::probe_timeout`] ([`DEFAULT_PROBE_TIMEOUT`]): a result naming a modern version
//! this client speaks is the modern era; `-32601`, any other JSON-RPC error, an HTTP error
//! whose body is not a modern error, or no answer in time fall back to `initialize` (and over
//! HTTP, from there to HTTP+SSE as before); a `-32022` naming a version we speak probes once
//! more, and a second `-32022` that still lists the version sent is
//! [`Error::is_incompatible_version`], said as the server refusing a version it lists (with
//! `auto`, a server whose answer also names a legacy version we speak is initialized with).
//! The verdict holds for the connection. [`EraChoice::Legacy`] never probes;
//! [`EraChoice::Modern`] never initializes, and a server that does not speak it fails the
//! connection with [`Error::is_incompatible_version`]. HTTP+SSE servers are legacy. What the
//! modern era changes:
//!
//! - Every request carries `_meta` with `io.modelcontextprotocol/protocolVersion`,
//!   `clientCapabilities`, `clientInfo` and, once [`Client::set_log_level`] set one,
//!   `logLevel` (no `logging/setLevel` is sent); [`Client::ping`] sends `server/discover`.
//!   A `-32022` sends the request again once at a version the server names; a second one is
//!   [`Error::is_incompatible_version`].
//! - No `initialize`, no session, no GET stream, no `DELETE` on close. Over HTTP each POST
//!   carries `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and the `Mcp-Param-*` mirrors of
//!   the arguments a tool's schema designates (`x-mcp-header`); a tool whose designations are
//!   invalid is left out of the listing. A request whose `Mcp-Name` or `Mcp-Param-*` value
//!   would be over [`MAX_HEADER_VALUE_BYTES`] (8 KiB, as sent) is refused before anything is
//!   sent ([`Error::is_too_large`]). An error status whose body is a JSON-RPC error is
//!   the server's answer ([`Error::is_remote`]), never a session expiry.
//! - Servers do not send requests: they ask for sampling, elicitation or roots inside a result
//!   (`resultType: "input_required"`). The same [`ClientHandler`] answers, and the request
//!   goes again with a new id, the answers and the server's `requestState` (at most 10 rounds
//!   of at most 16 inputs, else [`Error::is_invalid_response`]; a refusal is
//!   [`Error::is_input_refused`]; an unknown `resultType` is [`Error::is_invalid_response`]).
//! - Cancelling (dropping a call, a timeout) sends `notifications/cancelled` over stdio as
//!   before; over HTTP it closes the call's response stream instead, and nothing is POSTed.
//!   A stream that breaks off is not resumed: it fails the request, except an idempotent one
//!   (a listing, `server/discover`, `resources/read`, `prompts/get`, `completion/complete`),
//!   sent again once with a new id. Progress, timeouts and listings behave as below in both
//!   eras (over HTTP, progress arrives on the call's own stream).
//!
//! # Transports
//!
//! - **stdio** ([`ServerSpec::stdio`]): newline-delimited JSON with a child process; see the
//!   table below for how the process is looked after.
//! - **Streamable HTTP** ([`ServerSpec::http`], `type: "http"`, or a bare `url`; MCP
//!   2025-11-25 as described here; the modern era drops the session parts, see above): one
//!   POST per message (`Accept: application/json, text/event-stream`, the
//!   configured headers over the defaults), JSON and SSE answers, server requests on a POST's
//!   stream answered by separate POSTs, `Mcp-Session-Id` from any response on every later
//!   request, `MCP-Protocol-Version` after initialize, the optional GET stream (none on
//!   404/405/406), `DELETE` of the session on [`Client::close`] (not when the client is merely
//!   dropped: that needs no runtime and sends nothing). A 404 to a request carrying a session id,
//!   or a 400 whose body names the session (what real servers answer after a restart), is
//!   expiry: the transport re-runs the same initialize once (however many requests saw it),
//!   retries each request once, reopens the GET stream and has the cached tool, prompt and
//!   resource lists fetched again. A 2xx answer to a request that is not its response (an HTML
//!   page, a non-JSON or truncated body, a notification alone, another id) fails that request
//!   at once ([`Error::is_unexpected_answer`], quoting the content type and the first 200
//!   bytes, escaped) after delivering any JSON-RPC messages in it; an empty answer or a 202
//!   waits for the response on the GET stream only while one is open, else fails at once.
//!   Requests wait for `notifications/initialized`'s answer (at most 5 s), so none overtakes
//!   it. Initialize is retried on 502, 503, 504 and a refused connection (`Retry-After`
//!   honoured, 5 attempts, within [`ServerSpec::startup_timeout`]). A
//!   POST stream that ends before its response is resumed with `GET` + `Last-Event-ID` after
//!   the server's `retry` (1 s by default; 3 attempts, growing 1.5x, at most 30 s).
//!   When the initialize POST gets 400, 404 or 405, or its stream announces an `endpoint`, the
//!   connection falls back to legacy HTTP+SSE.
//! - **Legacy HTTP+SSE** ([`ServerSpec::sse`], `type: "sse"`; MCP 2024-11-05): a GET stream
//!   whose `endpoint` event (relative URLs resolved; another origin refused) names where to POST;
//!   answers arrive as `message` events. When the stream ends after it had worked, it is
//!   reopened under the spec's [`Restart`] policy (the same attempts, window and backoff as a
//!   host's restarts; [`Restart::Never`]: the connection ends with it), and the recorded
//!   initialize and `notifications/initialized` are replayed on the new endpoint (a new session
//!   on most servers) before other POSTs go; requests whose answers were due on the lost stream
//!   fail at once with [`Error::is_http`] (up to 1,024 tracked; older ones wait for their
//!   timeouts). Once the attempts are spent the connection ends and pending calls fail
//!   [`Error::is_closed`].
//!
//! # Change notices and list caching (modern era)
//!
//! A 2026-07-28 server sends notices only on a `subscriptions/listen` request: the connection
//! keeps one open (inside its driver) for the lists it has listed whose capability announces
//! `listChanged`, and for the URIs given to [`Client::subscribe`] (at most 256, each at most
//! 4 KiB; past that [`Error::is_subscription_limit`]), and opens it again when that set
//! changes, or 1 s doubling to 30 s after it ends, re-listing what it covered (there is no
//! replay). A server without the listen (`-32601`) is asked once. `subscribe` returns once the
//! server acknowledged a listen naming the URI. A listing's `ttlMs` re-lists it when it runs
//! out (at most once a second per list; 0 or absent: only on a notice). The cached lists are
//! per connection, so per credentials: a `cacheScope` of `private` or `public` is honoured
//! alike.
//!
//! # Restarts
//!
//! An [`McpHost`] restarts a server that had started and whose connection then ended by
//! itself (the process exited or the connection died; not [`Client::close`],
//! [`McpHost::remove`] or [`McpHost::shutdown`]) under its [`Restart`] policy
//! ([`ServerSpec::restart`], config `"restart"`; by default [`DEFAULT_MAX_RESTARTS`] attempts
//! within [`DEFAULT_RESTART_WINDOW`], the backoff starting at [`DEFAULT_RESTART_BACKOFF`] and
//! doubling to [`DEFAULT_MAX_RESTART_BACKOFF`]). The restart reconnects and lists again, and
//! shows in [`McpHost::status`] ([`ServerState::Restarting`], [`ServerStatus::restarts`],
//! [`ServerStatus::last_exit`] with the exit status and stderr tail; [`ServerState::GaveUp`]
//! once the attempts are spent), with a `tracing` warning per attempt. Calls in flight at the
//! crash fail at once with its exit status and stderr tail; calls made while it restarts wait
//! for it within their own timeout (one waiter per caller, no queue) and then use the new
//! connection, or fail with [`Error::is_closed`] carrying the last failure. A failed first
//! start is never restarted, and the restarts run inside the host's driver (nothing spawns);
//! `remove` and `shutdown` stop them and kill a restart's process.
//!
//! Over HTTP: hyper 1 (HTTP/1.1 and, over TLS, HTTP/2) with rustls and the webpki roots, https
//! verified; redirects are followed only within the same origin, so configured credentials
//! never leave it; each body and SSE event is capped ([`DEFAULT_MAX_HTTP_BODY_BYTES`], set with
//! [`ServerSpec::max_message_bytes`]); a non-2xx answer is a typed error
//! ([`Error::is_http`], [`Error::http_status`]) naming the server and the method, with up to
//! 4 KiB of the body; call timeouts are the same as over stdio.
//!
//! # Example
//!
//! ```no_run
//! # async fn demo() -> Result<(), sidewire_mcp::Error> {
//! use sidewire_mcp::{McpHost, NoHandler, ServerSpec, ToolCallOptions};
//!
//! let specs = vec![
//!     ServerSpec::stdio("everything", "npx").args(["-y", "@modelcontextprotocol/server-everything"]),
//! ];
//! let (host, driver) = McpHost::new(NoHandler);
//! tokio::spawn(driver);
//! for failure in host.start_available(specs).await {
//!     eprintln!("{} failed at {}: {}", failure.server, failure.stage, failure.error);
//! }
//! for tool in host.tools() {
//!     println!("{}", tool.name); // mcp__everything__echo, ...
//! }
//! let args = serde_json::json!({ "message": "hi" });
//! let result = host.call_tool("mcp__everything__echo", args, ToolCallOptions::new()).await?;
//! println!("{}", result.joined_text());
//! host.shutdown().await;
//! # Ok(()) }
//! ```
//!
//! # How it avoids the most reported MCP client problems
//!
//! | # | Problem | What this crate does |
//! |---|---------|----------------------|
//! | 1 | The child blocks once its stderr pipe fills, because nobody reads it. | stderr is always drained by the connection's driver into a 16 KiB tail, credentials redacted; lines can also be forwarded to `tracing` (each cut at 4 KiB). The tail and exit status are attached to startup and exit errors. |
//! | 2 | Orphaned and zombie servers, above all the grandchild of an `npx`/`uvx` wrapper. | Each server gets its own process group. Closing is stdin EOF → 750 ms → `SIGTERM` to the group → 2 s → `SIGKILL` to the group, bounded and idempotent; dropping the last [`Client`] kills the group synchronously (no runtime needed); when the server exits by itself, whatever is left of its group is killed; the child is always reaped, and gets `PR_SET_PDEATHSIG(SIGKILL)` (Linux) so a host killed outright takes it along. |
//! | 3 | A hung or dead server makes calls wait for ever. | Every call has a finite timeout (300 s default, per server, tool and call); an abandoned or timed-out call sends `notifications/cancelled` (never for `initialize`); when the server dies, every pending call fails at once with its exit status and stderr tail. |
//! | 4 | Expired HTTP sessions are reused for ever, and after a server restart its `400` "no valid session" leaves the client broken. | A 404, or a 400 whose body names the session (server-everything, FastMCP), to a request that carried a session id is expiry: one re-initialize however many calls are in flight, one retry each, the GET stream reopened and the cached lists fetched again; a second expiry is an ordinary, typed status error. |
//! | 5 | A fixed timeout kills long tools, and progress cannot extend it because the token is only sent with a callback. | Every tools/call carries a progress token; each progress report restarts the idle timeout, under an absolute cap (1 h default); a per-call callback sees the reports. |
//! | 6 | Windows: `spawn npx ENOENT` because `npx` is `npx.cmd`. | Not handled yet: the stdio transport is Unix-only for now. |
//! | 7 | A GUI-launched host has a thin `PATH`, so `npx`/`uvx` are not found. | A command not on the current (or the spec's) `PATH` is looked up on the login shell's `PATH`, probed once per process (`$SHELL -l -c`, 2 s), which the child then gets; a command found on `PATH` runs no shell; a missing command's error names the `PATH` searched and says how to fix it. |
//! | 8 | Non-JSON text on stdout kills the connection; an answer that does not decode leaves its call waiting for the timeout. | Such lines are skipped and counted ([`ClientStats::skipped_lines`]); the connection lives. A skipped line that names a pending call by its top-level `id` (not UTF-8, broken or cut-off JSON) fails that call at once with [`Error::is_invalid_response`]. |
//! | 9 | One huge line overflows a buffer or memory. | Each message is capped (8 MiB default, [`ServerSpec::max_message_bytes`]); an oversized line is discarded to its newline in bounded memory, the request it answers fails with [`Error::is_too_large`], and the connection lives. |
//! | 10 | Pagination ignored (tools past page one missing), or a cursor that never advances loops for ever. | Listings follow `nextCursor`, stop at a repeated cursor or after 100 pages with a warning, and keep what they got. |
//! | 11 | A server offering millions of tools makes the host hold gigabytes. | Each listing keeps at most 10,000 items and 32 MiB of item text (per server, and `maxListItems`/`maxListBytes` in config), decoded straight into their types with schemas kept as text; the cut is warned about and shown as a [`Truncation`] (see below). `sidewire mcp tools` on 10,000 tools peaks at about 20 MiB. |
//! | 12 | A 2xx answer that is not the response (a captive-portal page, a non-JSON or truncated body) makes a call wait its whole timeout. | That call fails at once ([`Error::is_unexpected_answer`]) quoting the content type and the first 200 bytes, escaped; an empty answer or 202 waits only while a GET stream is open. |
//! | 13 | `notifications/initialized` races the first request over HTTP, and servers that enforce the lifecycle reject the request. | Requests wait for the notification's answer (at most 5 s). |
//! | 14 | A crashed server stays dead for the session. | An [`McpHost`] restarts a server that had started, with bounded backoff (3 attempts in 60 s by default, [`ServerSpec::restart`], config `restart`), lists again and reports it in [`McpHost::status`]; calls made meanwhile wait within their timeout. The legacy HTTP+SSE event stream is reconnected the same way, its in-flight calls failed at once. |
//! | 15 | A `503` with `Retry-After` (a server still starting) at initialize is fatal. | Initialize is retried on 502/503/504 and on a refused connection, honouring `Retry-After`, at most 5 attempts within the startup timeout. |
//! | 16 | Startup ignores the time the user gave. | [`ServerSpec::startup_timeout`], `startup_timeout_sec`/`startup_timeout_ms` in config; the CLI's `--timeout` bounds startup too and `--startup-timeout` sets it alone. |
//! | 17 | A URL-mode elicitation reaches a form handler, which accepts it with empty content. | Each mode goes to its own handler method, and a mode the handler does not offer is answered `-32602` before any handler sees it; a URL that is not absolute `https:`/`http:` with a host is refused too. |
//! | 18 | A server that keeps answering `403 insufficient_scope` (or 401) makes the client re-authorize in a loop. | One request may cause at most [`auth::MAX_AUTHORIZATIONS`] authorizations, one refresh and [`auth::MAX_RETRIES`] sends; a step-up whose scopes the token already has is not tried; then [`Error::is_auth`] with [`auth::AuthErrorKind::StillRefused`]. |
//! | 19 | An access token reaches another host (a redirect, metadata or an endpoint on another origin). | Tokens are added for the server's origin only, redirects are followed only within it, resource metadata named on another origin is refused, and every credential is a [`auth::Secret`] that prints `[REDACTED]`; text from an authorization server is escaped and redacted. |
//! | 20 | Two processes refresh the same token at once; the rotated refresh token is spent twice and the login is lost. | A refresh holds the store's lock (a file lock in the CLI's store) from reading the token to saving the new one, and takes the other process's fresh tokens when they are there. |
//! | 21 | Discovery fails on a trailing slash or the wrong well-known order (`https://a` vs `https://a/`, the root URL tried for a tenant issuer). | Issuers and resources are kept and sent as the server wrote them; the well-known URLs follow the spec's order, and the root OAuth URL is never tried for an issuer with a path. |
//! | 22 | A headless run (CI, a service) waits for a browser that never comes. | With [`auth::Interaction::Never`] a needed sign-in fails at once with [`Error::is_login_required`] (the CLI names `sidewire mcp login`); the loopback listener of an interactive sign-in gives up after [`auth::DEFAULT_CALLBACK_TIMEOUT`]. |
//! | 23 | `${TOKEN}` in a config's `headers` is sent as it is (a 401), `"disabled": true` servers are started, the timeouts and tool filters in the file are ignored, and one tool's file is refused by another. | Every dialect in use is read by `sidewire-mcp-config`: `command`, `args`, `env`, `url` and `headers` are expanded, an unset variable being an error naming it, the server and the field. Here, a disabled spec ([`ServerSpec::enabled`]) is listed, never started ([`ServerState::Disabled`]); timeouts are honoured, and a tool its [`ToolFilter`] leaves out is neither listed nor callable. |
//! | 24 | A tool marked `taskSupport: "required"` can only fail with `-32601`, because the client drops the field and never runs it as a task. | The field is kept ([`Tool::task_support`], unknown values too) and such a tool runs as a task in [`Client::call_tool`], followed to its result within the call's timeouts, `tasks/cancel` sent when the call is dropped (see [Tasks](#tasks)). |
//!
//! # Listings are bounded
//!
//! A listing (tools, prompts, resources or resource templates, each alone) keeps at most
//! [`DEFAULT_MAX_LIST_ITEMS`] items and [`DEFAULT_MAX_LIST_BYTES`] of item JSON text as
//! received, over at most 100 pages ([`ServerSpec::max_list_items`],
//! [`ServerSpec::max_list_bytes`], or `maxListItems`/`maxListBytes` in `mcpServers`). Past a
//! cap it stops fetching, keeps the first items in server order, warns, and records a
//! [`Truncation`] ([`Client::truncations`], [`ServerStatus::truncated`]). Items are decoded
//! one by one from the page's text, so a malformed one is dropped alone; a tool's schemas,
//! annotations and `_meta` stay as their text ([`RawJson`]). One listing runs at a time per
//! connection, so a connection holds its four cached lists plus at most one being fetched;
//! [`McpHost::snapshot`] walks the cached lists without copying them.
//!
//! # Errors
//!
//! One opaque [`Error`] with predicates ([`Error::is_timeout`], [`Error::is_closed`],
//! [`Error::is_remote`], ...) and accessors for the server, startup [`Stage`], exit status and
//! stderr tail. A tool's own failure is not an error: it is a [`CallToolResult`] with
//! `is_error: true`.
//!
//! A server's URL appears in errors and log lines only redacted, as
//! [`ServerSpec::shown_url`] shows it: its userinfo, every query value and any value given to
//! [`ServerSpec::url_secrets`] (what a config file expanded into its path from a variable or an
//! input, `https://host/${TOKEN}/mcp`) become `REDACTED`, its fragment is dropped; scheme, host, port and the rest of the path
//! stay. Those secrets are also scrubbed from text that may quote the URL (an error body that
//! echoes the request's path, an authorization message), when they are at least 4 bytes long.
//!
//! Text a peer or a file wrote is quoted in errors and log lines escaped and cut: each piece
//! (a server's error message, a protocol version, an unknown `resultType`, a cursor) to
//! 1 KiB, a list to its first 8 items, and an error's own text to 16 KiB whatever built it,
//! each cut ending `… (N bytes in all)`. The data stays whole where the API hands it out
//! ([`Error::remote`]'s message, say).
//!
//! # Cancel safety
//!
//! Dropping a future is the way to cancel. Dropping a call's future removes its pending entry,
//! sends `notifications/cancelled` (modern era over HTTP: closes the call's response stream
//! instead), and drops a late answer. Dropping [`Client::connect`]
//! kills a process it already started (or drops the HTTP exchanges in flight). [`Client::close`] and [`McpHost::shutdown`] are
//! idempotent: dropping them stops the waiting, and the last handle's drop still kills the
//! process. Every `pub async fn` documents its own cancel safety. The drivers must be polled
//! for anything to happen; dropping one closes its connections.

// A build with only some features leaves parts of the shared core unused (a host's error kinds
// without `host`, the HTTP seam's variants without `http`); the all-features build, which CI
// lints, still finds code that is dead in every build.
#![cfg_attr(
    not(all(
        feature = "stdio",
        feature = "http",
        feature = "auth",
        feature = "structured",
        feature = "host"
    )),
    allow(dead_code)
)]

#[cfg(feature = "auth")]
#[cfg_attr(docsrs, doc(cfg(feature = "auth")))]
pub mod auth;
mod cap;
mod connect;
#[cfg(feature = "auth")]
mod credentials;
mod error;
#[doc(hidden)]
pub mod fuzz;
#[cfg(feature = "host")]
mod host;
#[cfg(feature = "http")]
mod http;
mod names;
mod protocol;
#[cfg(feature = "http")]
mod redact;
mod spec;
#[cfg(feature = "stdio")]
mod stdio;
mod text;
mod transport;

pub use sidewire_jsonrpc::ErrorObject;

pub use crate::cap::CutNote;
pub use crate::error::{Error, Handshake, Stage, error_line};
#[cfg(feature = "host")]
pub use crate::host::ServerExit;
#[cfg(feature = "host")]
pub use crate::host::{
    HostPrompt, HostResource, HostSnapshot, HostTool, MAX_PARALLEL_STARTS, McpHost, McpHostDriver,
    Named, ServerState, ServerStatus, StartFailure,
};
pub use crate::names::{MAX_NAME_LEN, is_valid_name, namespaced_name};

/// Text a peer sent (a server's name, a tool's description, a body), fit to show a person or
/// put in a log line: invalid UTF-8 replaced, control and bidirectional-override characters
/// escaped (`\u{1b}`), and cut to `limit` bytes, in which case it ends with
/// `… (N bytes in all)`. Every error of this crate quotes peer text this way.
///
/// ```
/// let shown = sidewire_mcp::shown_text(b"ok\x1b[2J\xff", 64);
/// assert_eq!(shown, "ok\\u{1b}[2J\u{fffd}");
/// ```
pub fn shown_text(bytes: &[u8], limit: usize) -> String {
    text::quote(bytes, limit)
}
pub use crate::protocol::client::{CANCEL_FLUSH, Client, ClientDriver};
pub use crate::protocol::elicit_url::{
    MAX_ELICITATION_URL_BYTES, MAX_URL_ELICITATIONS, URL_ELICITATION_REQUIRED, UrlElicitation,
};
pub use crate::protocol::era::{
    Era, EraChoice, HEADER_MISMATCH, MISSING_REQUIRED_CLIENT_CAPABILITY, MODERN_PROTOCOL_VERSIONS,
    UNSUPPORTED_PROTOCOL_VERSION,
};
pub use crate::protocol::handler::{ClientHandler, NoHandler};
pub use crate::protocol::listing::{List, ListLimit, Truncation};
pub use crate::protocol::options::{ClientStats, ToolCallOptions};
pub use crate::protocol::skills::{SKILLS_EXTENSION, Skill, SkillFile};
pub use crate::protocol::structured::{
    MAX_CACHED_SCHEMAS, MAX_SCHEMA_BYTES, MAX_VIOLATIONS, SchemaViolation,
};
pub use crate::protocol::tasks::{
    DEFAULT_POLL_INTERVAL, MAX_POLL_INTERVAL, MAX_TRACKED_TASKS, MIN_POLL_INTERVAL, Task,
    TaskStatus, TaskSupport, TasksCapability, ToolExecution,
};
pub use crate::protocol::types::{
    CallToolResult, Completion, CompletionRef, Content, CreateMessageParams, CreateMessageResult,
    ElicitAction, ElicitParams, ElicitResult, GetPromptResult, Icon, Implementation,
    LATEST_PROTOCOL_VERSION, ListCapability, LogLevel, LogMessage, MessageRole, Progress, Prompt,
    PromptArgument, PromptMessage, RawJson, ReadResourceResult, Resource, ResourceContents,
    ResourceTemplate, ResourcesCapability, SUPPORTED_PROTOCOL_VERSIONS, SamplingContent,
    SamplingMessage, ServerCapabilities, Tool,
};
pub use crate::spec::{
    DEFAULT_CALL_TIMEOUT, DEFAULT_MAX_CALL_DURATION, DEFAULT_MAX_HTTP_BODY_BYTES,
    DEFAULT_MAX_LIST_BYTES, DEFAULT_MAX_LIST_ITEMS, DEFAULT_MAX_MESSAGE_BYTES,
    DEFAULT_PROBE_TIMEOUT, DEFAULT_STARTUP_TIMEOUT, Root, ServerSpec, ToolFilter, Transport,
};
pub use crate::spec::{
    DEFAULT_MAX_RESTART_BACKOFF, DEFAULT_MAX_RESTARTS, DEFAULT_RESTART_BACKOFF,
    DEFAULT_RESTART_WINDOW, Restart, RestartPolicy,
};
pub use crate::transport::MAX_HEADER_VALUE_BYTES;
