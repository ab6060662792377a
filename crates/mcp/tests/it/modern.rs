//! The modern era (2026-07-28) over in-process byte streams: how a connection picks its era,
//! the `_meta` envelope on every request, `-32022` renegotiation, multi-round-trip requests
//! (MRTR) and their caps, `x-mcp-header` validation, and the listing, call, progress,
//! cancellation and timeout behaviour where the era changes the path. The servers are scripted
//! here ([`scripted`]: every request recorded, each answer chosen by the test) or
//! sidewire-mcp-server's `Toolbox`.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Map, Value, json};
use sidewire_jsonrpc::{RequestContext, Router};
use sidewire_mcp::{
    CallToolResult, Client, ClientHandler, ElicitParams, ElicitResult, Era, EraChoice, ErrorObject,
    LogLevel, NoHandler, Root, ServerSpec, Stage, ToolCallOptions,
};
use sidewire_mcp_server::Toolbox;

use crate::peers::{Handler, Yes};
use crate::support::{MockState, connect_piped_framed, eventually, lock, mock_with, within};

/// One request a scripted server saw.
#[derive(Debug, Clone)]
pub(crate) struct Seen {
    pub(crate) method: String,
    /// The JSON-RPC id as sent.
    pub(crate) id: Value,
    pub(crate) params: Value,
}

/// How a scripted server answers one request.
pub(crate) enum Reply {
    Result(Value),
    Error(ErrorObject),
    /// Never answers.
    Never,
}

/// What a scripted server saw.
#[derive(Default)]
pub(crate) struct Wire {
    seen: Mutex<Vec<Seen>>,
    notes: Mutex<Vec<(String, Value)>>,
}

impl Wire {
    pub(crate) fn requests(&self, method: &str) -> Vec<Seen> {
        lock(&self.seen)
            .iter()
            .filter(|seen| seen.method == method)
            .cloned()
            .collect()
    }

    pub(crate) fn all(&self) -> Vec<Seen> {
        lock(&self.seen).clone()
    }

    pub(crate) fn count(&self, method: &str) -> usize {
        self.requests(method).len()
    }

    pub(crate) fn notified(&self, method: &str) -> Vec<Value> {
        lock(&self.notes)
            .iter()
            .filter(|(m, _)| m == method)
            .map(|(_, params)| params.clone())
            .collect()
    }
}

/// Connects a client over an in-process pipe to a server that answers each request with
/// `script` (which sees the request and what came before it); both drivers are spawned.
pub(crate) async fn scripted(
    spec: ServerSpec,
    handler: impl ClientHandler,
    script: impl Fn(&Seen, &Wire) -> Reply + Send + Sync + 'static,
) -> (Result<Client, sidewire_mcp::Error>, Arc<Wire>) {
    scripted_framed(spec, handler, script, 1024 * 1024).await
}

/// [`scripted`], the server's frames up to `max_frame` bytes.
pub(crate) async fn scripted_framed(
    spec: ServerSpec,
    handler: impl ClientHandler,
    script: impl Fn(&Seen, &Wire) -> Reply + Send + Sync + 'static,
    max_frame: usize,
) -> (Result<Client, sidewire_mcp::Error>, Arc<Wire>) {
    let wire = Arc::new(Wire::default());
    let script = Arc::new(script);
    let on_request = Arc::clone(&wire);
    let on_note = Arc::clone(&wire);
    let router = Router::new()
        .request_fallback(move |method, params, ctx: RequestContext| {
            let params = params.map_or(Value::Null, |raw| {
                serde_json::from_str(raw.get()).unwrap_or(Value::Null)
            });
            let seen = Seen {
                method: method.to_owned(),
                id: serde_json::from_str(&ctx.id().to_json()).unwrap_or(Value::Null),
                params,
            };
            lock(&on_request.seen).push(seen.clone());
            let reply = script(&seen, &on_request);
            Ok(async move {
                match reply {
                    Reply::Result(value) => Ok(value),
                    Reply::Error(error) => Err(error),
                    Reply::Never => std::future::pending().await,
                }
            })
        })
        .notification_fallback(move |method, params| {
            let params = params.map_or(Value::Null, |raw| {
                serde_json::from_str(raw.get()).unwrap_or(Value::Null)
            });
            lock(&on_note.notes).push((method.to_owned(), params));
        });
    let (client, _peer) = connect_piped_framed(router, &spec, handler, max_frame).await;
    (client, wire)
}

fn spec() -> ServerSpec {
    ServerSpec::stdio("modern", "unused")
}

/// `result` with `resultType: "complete"`.
fn complete(mut result: Value) -> Reply {
    result["resultType"] = json!("complete");
    Reply::Result(result)
}

fn discover_result(versions: &[&str]) -> Reply {
    complete(json!({
        "supportedVersions": versions,
        "capabilities": {"tools": {"listChanged": true}, "prompts": {}, "resources": {}},
        "serverInfo": {"name": "scripted", "version": "7"},
        "ttlMs": 0,
        "cacheScope": "private",
    }))
}

fn echo_result(seen: &Seen) -> Value {
    let text = seen.params["arguments"]["message"].as_str().unwrap_or("");
    json!({"content": [{"type": "text", "text": format!("echo: {text}")}]})
}

/// A modern-only server: `server/discover`, the listings, `tools/call` (echo), `{}` for the
/// rest, each result `complete`; `initialize` is unknown.
fn modern(seen: &Seen) -> Reply {
    match seen.method.as_str() {
        "server/discover" => discover_result(&["2026-07-28"]),
        "initialize" => Reply::Error(ErrorObject::new(-32601, "Method not found")),
        "tools/list" => complete(json!({"tools": [
            {"name": "echo", "inputSchema": {"type": "object"}},
        ], "ttlMs": 0, "cacheScope": "private"})),
        "tools/call" => complete(echo_result(seen)),
        "prompts/get" => complete(json!({"messages": []})),
        "resources/read" => complete(json!({"contents": []})),
        _ => complete(json!({})),
    }
}

/// A legacy-only server: `initialize` (echoing the offered version), `-32601` to
/// `server/discover`, the same tools.
fn legacy(seen: &Seen) -> Reply {
    match seen.method.as_str() {
        "initialize" => Reply::Result(json!({
            "protocolVersion": seen.params["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "legacy", "version": "1"},
        })),
        "server/discover" => Reply::Error(ErrorObject::new(-32601, "Method not found")),
        "tools/list" => Reply::Result(json!({"tools": [
            {"name": "echo", "inputSchema": {"type": "object"}},
        ]})),
        "tools/call" => Reply::Result(echo_result(seen)),
        _ => Reply::Result(json!({})),
    }
}

/// A server of both eras: `server/discover` names the modern and the legacy versions, and
/// `initialize` works too.
fn dual(seen: &Seen) -> Reply {
    match seen.method.as_str() {
        "server/discover" => discover_result(&["2026-07-28", "2025-11-25"]),
        "initialize" => legacy(seen),
        _ => modern(seen),
    }
}

async fn connected(
    spec: ServerSpec,
    handler: impl ClientHandler,
    script: impl Fn(&Seen, &Wire) -> Reply + Send + Sync + 'static,
) -> (Client, Arc<Wire>) {
    let (client, wire) = within("connect", scripted(spec, handler, script)).await;
    (client.expect("the scripted server connects"), wire)
}

fn meta_version(seen: &Seen) -> &Value {
    &seen.params["_meta"]["io.modelcontextprotocol/protocolVersion"]
}

fn unsupported(supported: &[&str]) -> Reply {
    Reply::Error(
        ErrorObject::new(-32022, "Unsupported protocol version")
            .with_data(json!({"supported": supported, "requested": "2026-07-28"})),
    )
}

async fn echo(client: &Client) -> Result<String, sidewire_mcp::Error> {
    within(
        "tools/call",
        client.call_tool("echo", json!({"message": "hi"}), ToolCallOptions::new()),
    )
    .await
    .map(|result| result.joined_text())
}

#[tokio::test]
async fn auto_lands_on_modern_against_a_dual_era_server_with_one_probe() {
    let (client, wire) = connected(spec(), NoHandler, |seen, _| dual(seen)).await;
    assert_eq!(client.era(), Era::Modern);
    assert_eq!(client.protocol_version(), "2026-07-28");
    assert_eq!(client.server_info().name, "scripted");
    assert!(client.capabilities().tools.unwrap().list_changed);
    assert_eq!(wire.count("server/discover"), 1);
    assert_eq!(wire.count("initialize"), 0);
    assert!(wire.notified("notifications/initialized").is_empty());
    assert_eq!(echo(&client).await.unwrap(), "echo: hi");
}

#[tokio::test]
async fn auto_falls_back_to_initialize_against_a_legacy_server_after_one_probe() {
    let (client, wire) = connected(spec(), NoHandler, |seen, _| legacy(seen)).await;
    assert_eq!(client.era(), Era::Legacy);
    assert_eq!(client.protocol_version(), "2025-11-25");
    assert_eq!(wire.count("server/discover"), 1);
    assert_eq!(wire.count("initialize"), 1);
    eventually("notifications/initialized", || {
        !wire.notified("notifications/initialized").is_empty()
    })
    .await;
    assert_eq!(echo(&client).await.unwrap(), "echo: hi");
    // Legacy requests carry no envelope.
    let call = &wire.requests("tools/call")[0];
    assert!(meta_version(call).is_null(), "{call:?}");
    // The verdict holds: no second probe.
    client.ping().await.unwrap();
    assert_eq!(wire.count("server/discover"), 1);
    assert_eq!(wire.count("ping"), 1);
}

#[tokio::test]
async fn the_legacy_choice_never_probes() {
    let spec = spec().era(EraChoice::Legacy);
    let (client, wire) = connected(spec, NoHandler, |seen, _| dual(seen)).await;
    assert_eq!(client.era(), Era::Legacy);
    assert_eq!(wire.count("server/discover"), 0);
    assert_eq!(wire.all()[0].method, "initialize");
    assert_eq!(echo(&client).await.unwrap(), "echo: hi");
    assert_eq!(wire.count("server/discover"), 0);
}

#[tokio::test]
async fn the_modern_choice_against_a_legacy_server_fails_typed() {
    let spec = spec().era(EraChoice::Modern);
    let (client, wire) = within("connect", scripted(spec, NoHandler, |seen, _| legacy(seen))).await;
    let err = client.unwrap_err();
    assert!(err.is_incompatible_version(), "{err:?}");
    assert_eq!(err.stage().unwrap().0, Stage::Initialize);
    assert_eq!(wire.count("server/discover"), 1);
    assert_eq!(wire.count("initialize"), 0);
}

#[tokio::test]
async fn an_unanswered_probe_falls_back_to_initialize_after_the_probe_timeout() {
    // The probe's 200 ms is what keeps this well inside the 10 s startup budget: a client that
    // waited the whole budget on the probe would have no time left to initialize.
    let spec = spec()
        .probe_timeout(Duration::from_millis(200))
        .startup_timeout(Duration::from_secs(10));
    let script = |seen: &Seen, _: &Wire| match seen.method.as_str() {
        "server/discover" => Reply::Never,
        _ => legacy(seen),
    };
    let (client, wire) = connected(spec, NoHandler, script).await;
    assert_eq!(client.era(), Era::Legacy);
    assert_eq!(wire.count("server/discover"), 1);
    assert_eq!(wire.count("initialize"), 1);
    assert_eq!(echo(&client).await.unwrap(), "echo: hi");
}

#[tokio::test]
async fn unsupported_version_renegotiates_once_then_is_incompatible() {
    // Once: the request goes again and succeeds.
    let script = |seen: &Seen, wire: &Wire| match seen.method.as_str() {
        "tools/list" if wire.count("tools/list") == 1 => unsupported(&["2026-07-28"]),
        "tools/call" => unsupported(&["2026-07-28"]),
        "prompts/get" => unsupported(&["2030-01-01"]),
        _ => modern(seen),
    };
    let (client, wire) = connected(spec(), NoHandler, script).await;
    let tools = within("tools/list", client.list_tools()).await.unwrap();
    assert_eq!(tools.len(), 1);
    let lists = wire.requests("tools/list");
    assert_eq!(lists.len(), 2);
    assert_ne!(lists[0].id, lists[1].id);
    assert_eq!(meta_version(&lists[1]), "2026-07-28");
    // Twice: incompatible, after exactly one retry.
    let err = echo(&client).await.unwrap_err();
    assert!(err.is_incompatible_version(), "{err:?}");
    assert_eq!(wire.count("tools/call"), 2);
    // A version we do not speak: incompatible at once.
    let err = within("prompts/get", client.get_prompt("p", BTreeMap::new()))
        .await
        .unwrap_err();
    assert!(err.is_incompatible_version(), "{err:?}");
    assert_eq!(wire.count("prompts/get"), 1);
    // The connection lives on.
    within("tools/list", client.list_tools()).await.unwrap();
}

#[tokio::test]
async fn a_server_refusing_a_version_it_lists_is_told_apart_from_no_mutual_version() {
    for era in [EraChoice::Auto, EraChoice::Modern] {
        let script = |seen: &Seen, _: &Wire| match seen.method.as_str() {
            "server/discover" => unsupported(&["2026-07-28"]),
            _ => modern(seen),
        };
        let (client, wire) = within("connect", scripted(spec().era(era), NoHandler, script)).await;
        let err = client.unwrap_err();
        assert!(err.is_incompatible_version(), "{era:?}: {err:?}");
        // One renegotiation at the version it named, then the verdict: not the
        // contradiction "it speaks [2026-07-28], none of which this client speaks".
        assert_eq!(wire.count("server/discover"), 2, "{era:?}");
        assert_eq!(wire.count("initialize"), 0, "{era:?}");
        let text = err.to_string();
        assert!(!text.contains("none of which"), "{era:?}: {text}");
        assert!(text.contains("2026-07-28"), "{era:?}: {text}");
    }
    // A server that also names a legacy version is still initialized with, in `auto`.
    let script = |seen: &Seen, _: &Wire| match seen.method.as_str() {
        "server/discover" => unsupported(&["2026-07-28", "2025-11-25"]),
        _ => legacy(seen),
    };
    let (client, wire) = connected(spec(), NoHandler, script).await;
    assert_eq!(client.era(), Era::Legacy);
    assert_eq!(wire.count("server/discover"), 2);
}

/// The most bytes an error about a huge peer text may have: the text is cut to 1 KiB.
const BOUNDED_ERROR: usize = 4096;
/// The scripted server's frame cap where it sends huge texts: the client's own cap (8 MiB).
const BIG_FRAME: usize = 8 * 1024 * 1024;

#[tokio::test]
async fn an_unknown_result_type_of_any_size_is_quoted_cut() {
    let huge = "x".repeat(7 * 1024 * 1024);
    let script = move |seen: &Seen, _: &Wire| match seen.method.as_str() {
        "tools/call" => Reply::Result(json!({"resultType": huge, "content": []})),
        _ => modern(seen),
    };
    let (client, _wire) = within(
        "connect",
        scripted_framed(spec(), NoHandler, script, BIG_FRAME),
    )
    .await;
    let err = echo(&client.unwrap()).await.unwrap_err();
    assert!(err.is_invalid_response(), "{err:?}");
    let text = err.to_string();
    assert!(text.len() < BOUNDED_ERROR, "{} bytes", text.len());
    assert!(text.contains("… (7340032 bytes in all)"), "{text}");
}

#[tokio::test]
async fn a_32022_naming_200000_versions_is_named_cut() {
    let versions: Vec<String> = (0..200_000).map(|i| format!("2030-01-{i}")).collect();
    let script = move |seen: &Seen, _: &Wire| match seen.method.as_str() {
        "server/discover" => {
            let versions: Vec<&str> = versions.iter().map(String::as_str).collect();
            unsupported(&versions)
        }
        _ => modern(seen),
    };
    let spec = spec().era(EraChoice::Modern);
    let (client, _wire) = within(
        "connect",
        scripted_framed(spec, NoHandler, script, BIG_FRAME),
    )
    .await;
    let err = client.unwrap_err();
    assert!(err.is_incompatible_version(), "{err:?}");
    let text = err.to_string();
    assert!(text.len() < BOUNDED_ERROR, "{} bytes", text.len());
    assert!(text.contains("\"2030-01-0\""), "{text}");
    assert!(text.contains("… and 199992 more]"), "{text}");
    // The error does not hold the whole list either.
    assert!(format!("{err:?}").len() < BOUNDED_ERROR);
}

#[tokio::test]
async fn a_servers_error_message_of_any_size_is_quoted_cut() {
    let huge = "y".repeat(3 * 1024 * 1024);
    let script = move |seen: &Seen, _: &Wire| match seen.method.as_str() {
        "tools/call" => Reply::Error(ErrorObject::new(-32000, huge.clone())),
        _ => modern(seen),
    };
    let (client, _wire) = within(
        "connect",
        scripted_framed(spec(), NoHandler, script, BIG_FRAME),
    )
    .await;
    let err = echo(&client.unwrap()).await.unwrap_err();
    assert!(err.is_remote(), "{err:?}");
    // The error object itself is kept whole for the caller.
    assert_eq!(err.remote().unwrap().message.len(), 3 * 1024 * 1024);
    let text = err.to_string();
    assert!(text.len() < BOUNDED_ERROR, "{} bytes", text.len());
    assert!(text.contains("bytes in all) (code -32000)"), "{text}");
}

/// A handler offering elicitation and refusing every one.
struct Refusing;

impl ClientHandler for Refusing {
    fn supports_elicitation(&self) -> bool {
        true
    }

    async fn elicit(&self, _: &str, _: ElicitParams) -> Result<ElicitResult, ErrorObject> {
        Err(ErrorObject::new(-1, "the user said no"))
    }
}

fn answering() -> (Handler, Arc<Yes>) {
    let yes = Arc::new(Yes::default());
    (Handler(Arc::clone(&yes)), yes)
}

#[tokio::test]
async fn every_modern_request_carries_the_envelope() {
    let spec = spec().root(Root::dir("/work/project"));
    // What a legacy initialize declares is what every modern request must declare.
    let (legacy_client, legacy_wire) =
        connected(spec.clone(), answering().0, |seen, _| legacy(seen)).await;
    let declared = legacy_wire.requests("initialize")[0].params["capabilities"].clone();
    let client_info = legacy_wire.requests("initialize")[0].params["clientInfo"].clone();
    assert_eq!(client_info["name"], "sidewire");
    legacy_client.close().await;

    let (client, wire) = connected(spec, answering().0, |seen, _| modern(seen)).await;
    within("tools/list", client.list_tools()).await.unwrap();
    echo(&client).await.unwrap();
    within("set_log_level", client.set_log_level(LogLevel::Debug))
        .await
        .unwrap();
    echo(&client).await.unwrap();
    within("prompts/get", client.get_prompt("p", BTreeMap::new()))
        .await
        .unwrap();
    within("resources/read", client.read_resource("mem://a"))
        .await
        .unwrap();
    // No logging/setLevel in the modern era: the level rides in `_meta`.
    assert_eq!(wire.count("logging/setLevel"), 0);
    // The listen loop's `subscriptions/listen` goes at its own time: it carries the envelope
    // too, and is left out of the ordered checks below.
    let (listens, requests): (Vec<_>, Vec<_>) = wire
        .all()
        .into_iter()
        .partition(|seen| seen.method == "subscriptions/listen");
    for listen in &listens {
        let meta = &listen.params["_meta"];
        assert_eq!(
            meta["io.modelcontextprotocol/protocolVersion"],
            "2026-07-28"
        );
        assert_eq!(meta["io.modelcontextprotocol/clientCapabilities"], declared);
    }
    assert_eq!(requests.len(), 6, "{requests:?}");
    let mut level_set = false;
    for seen in &requests {
        let meta = &seen.params["_meta"];
        assert_eq!(
            meta["io.modelcontextprotocol/protocolVersion"],
            "2026-07-28"
        );
        assert_eq!(
            meta["io.modelcontextprotocol/clientCapabilities"], declared,
            "{seen:?}"
        );
        assert_eq!(meta["io.modelcontextprotocol/clientInfo"], client_info);
        let level = meta.get("io.modelcontextprotocol/logLevel");
        if level_set {
            assert_eq!(level, Some(&json!("debug")), "{seen:?}");
        } else {
            assert_eq!(level, None, "{seen:?}");
        }
        if seen.method == "tools/call" {
            assert!(meta["progressToken"].is_u64(), "{seen:?}");
            // The first call went before the level was set.
            level_set = true;
        }
    }
    assert!(wire.notified("notifications/initialized").is_empty());
}

#[tokio::test]
async fn ping_in_the_modern_era_is_a_discover() {
    let (client, wire) = connected(spec(), NoHandler, |seen, _| modern(seen)).await;
    within("ping", client.ping()).await.unwrap();
    assert_eq!(wire.count("ping"), 0);
    let discovers = wire.requests("server/discover");
    assert_eq!(discovers.len(), 2);
    assert_eq!(meta_version(&discovers[1]), "2026-07-28");
}

/// A `requestState` with everything a re-encoding could change: escapes, non-ASCII, spacing.
const STATE: &str = "{\"k\": \"v\\u00e9\",  \"n\":[1, 2]}\t\u{e9}\\/ end ";

fn input_required(requests: Value, state: Option<&str>) -> Reply {
    let mut result = json!({"resultType": "input_required", "inputRequests": requests});
    if requests.is_null() {
        result.as_object_mut().unwrap().remove("inputRequests");
    }
    if let Some(state) = state {
        result["requestState"] = json!(state);
    }
    Reply::Result(result)
}

fn elicitation() -> Value {
    json!({"method": "elicitation/create", "params": {
        "message": "name?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}
    }})
}

fn sampling() -> Value {
    json!({"method": "sampling/createMessage", "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": "2+2?"}}],
        "maxTokens": 5
    }})
}

#[tokio::test]
async fn input_requests_are_answered_by_the_handler_and_the_call_retried() {
    let (handler, yes) = answering();
    // The handler serves a legacy server's requests (sampling, then elicitation).
    let (legacy_client, _mock) =
        mock_with(MockState::default(), spec().root(Root::dir("/r")), handler).await;
    let legacy_client = legacy_client.unwrap();
    within(
        "legacy ask",
        legacy_client.call_tool("ask", json!({}), ToolCallOptions::new()),
    )
    .await
    .unwrap();
    assert_eq!(yes.samples.load(Ordering::SeqCst), 1);
    assert_eq!(lock(&yes.elicitations).len(), 1);

    let script = |seen: &Seen, _: &Wire| match seen.method.as_str() {
        "tools/call" if seen.params.get("inputResponses").is_none() => input_required(
            json!({"e": elicitation(), "s": sampling(), "r": {"method": "roots/list"}}),
            Some(STATE),
        ),
        _ => modern(seen),
    };
    let (client, wire) = connected(
        spec().root(Root::dir("/r")),
        Handler(Arc::clone(&yes)),
        script,
    )
    .await;
    let text = echo(&client).await.unwrap();
    assert_eq!(text, "echo: hi");
    assert_eq!(yes.samples.load(Ordering::SeqCst), 2);
    assert_eq!(lock(&yes.elicitations).len(), 2);
    assert_eq!(lock(&yes.elicitations)[1].message, "name?");
    let calls = wire.requests("tools/call");
    assert_eq!(calls.len(), 2);
    let (first, retry) = (&calls[0], &calls[1]);
    assert_ne!(first.id, retry.id);
    assert_eq!(retry.params["name"], "echo");
    assert_eq!(retry.params["arguments"], first.params["arguments"]);
    assert_eq!(retry.params["requestState"].as_str(), Some(STATE));
    assert_eq!(meta_version(retry), "2026-07-28");
    let responses = retry.params["inputResponses"].as_object().unwrap();
    let keys: Vec<&str> = responses.keys().map(String::as_str).collect();
    assert_eq!(keys, ["e", "r", "s"]);
    assert_eq!(
        responses["e"],
        json!({"action": "accept", "content": {"name": "Ada"}})
    );
    assert_eq!(responses["s"]["model"], "sidewire-test-model");
    assert_eq!(responses["r"]["roots"][0]["uri"], "file:///r");
}

#[tokio::test]
async fn a_state_only_round_goes_again_with_the_state_alone() {
    let script = |seen: &Seen, wire: &Wire| match seen.method.as_str() {
        "tools/call" if wire.count("tools/call") == 1 => input_required(Value::Null, Some("s1")),
        _ => modern(seen),
    };
    let (client, wire) = connected(spec(), NoHandler, script).await;
    assert_eq!(echo(&client).await.unwrap(), "echo: hi");
    let calls = wire.requests("tools/call");
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[1].params["requestState"], "s1");
    assert!(
        calls[1].params.get("inputResponses").is_none(),
        "{:?}",
        calls[1]
    );
    assert_ne!(calls[0].id, calls[1].id);
}

/// `MAX_ROUNDS` in `protocol::modern`.
const MAX_ROUNDS: usize = 10;
/// `MAX_INPUT_REQUESTS` in `protocol::modern`.
const MAX_INPUT_REQUESTS: usize = 16;

#[tokio::test]
async fn a_server_that_keeps_asking_stops_at_the_round_cap() {
    let script = |seen: &Seen, _: &Wire| match seen.method.as_str() {
        "tools/call" => input_required(json!({"r": {"method": "roots/list"}}), Some("again")),
        _ => modern(seen),
    };
    let (client, wire) = connected(spec(), NoHandler, script).await;
    let err = echo(&client).await.unwrap_err();
    assert!(err.is_invalid_response(), "{err:?}");
    // The request and one retry per answered round.
    assert_eq!(wire.count("tools/call"), MAX_ROUNDS + 1);
}

#[tokio::test]
async fn a_round_may_carry_at_most_the_input_request_cap() {
    let roots = |n: usize| {
        let map: Map<String, Value> = (0..n)
            .map(|i| (format!("r{i}"), json!({"method": "roots/list"})))
            .collect();
        Value::Object(map)
    };
    let script = move |seen: &Seen, _: &Wire| match seen.method.as_str() {
        "tools/call" if seen.params.get("inputResponses").is_none() => {
            let n = seen.params["arguments"]["n"].as_u64().unwrap() as usize;
            input_required(roots(n), None)
        }
        _ => modern(seen),
    };
    let (client, wire) = connected(spec(), NoHandler, script).await;
    let call = |n: usize| {
        client.call_tool(
            "echo",
            json!({"n": n, "message": "hi"}),
            ToolCallOptions::new(),
        )
    };
    within("at the cap", call(MAX_INPUT_REQUESTS))
        .await
        .unwrap();
    assert_eq!(wire.count("tools/call"), 2);
    let answered = wire.requests("tools/call")[1].params["inputResponses"].clone();
    assert_eq!(answered.as_object().unwrap().len(), MAX_INPUT_REQUESTS);
    let err = within("over the cap", call(MAX_INPUT_REQUESTS + 1))
        .await
        .unwrap_err();
    assert!(err.is_invalid_response(), "{err:?}");
    assert_eq!(wire.count("tools/call"), 3, "no retry over the cap");
}

#[tokio::test]
async fn a_refused_input_request_fails_the_call_typed() {
    let script = |seen: &Seen, _: &Wire| match seen.method.as_str() {
        "tools/call" => input_required(json!({"e": elicitation()}), Some("x")),
        _ => modern(seen),
    };
    // The handler says no.
    let (client, wire) = connected(spec(), Refusing, script).await;
    let err = echo(&client).await.unwrap_err();
    assert!(err.is_input_refused(), "{err:?}");
    assert_eq!(err.remote().unwrap().code, -1);
    assert_eq!(wire.count("tools/call"), 1);
    // The client does not offer elicitation at all.
    let (client, wire) = connected(spec(), NoHandler, script).await;
    let err = echo(&client).await.unwrap_err();
    assert!(err.is_input_refused(), "{err:?}");
    assert_eq!(err.remote().unwrap().code, ErrorObject::METHOD_NOT_FOUND);
    assert_eq!(wire.count("tools/call"), 1);
}

#[tokio::test]
async fn an_unknown_result_type_is_an_invalid_response() {
    let script = |seen: &Seen, _: &Wire| match seen.method.as_str() {
        "tools/call" => Reply::Result(json!({"resultType": "task", "content": []})),
        _ => modern(seen),
    };
    let (client, wire) = connected(spec(), NoHandler, script).await;
    let err = echo(&client).await.unwrap_err();
    assert!(err.is_invalid_response(), "{err:?}");
    assert_eq!(wire.count("tools/call"), 1);
    // An absent resultType is complete (an older server).
    let script = |seen: &Seen, _: &Wire| match seen.method.as_str() {
        "tools/call" => Reply::Result(echo_result(seen)),
        _ => modern(seen),
    };
    let (client, _wire) = connected(spec(), NoHandler, script).await;
    assert_eq!(echo(&client).await.unwrap(), "echo: hi");
}

/// The names of the tools a listing returns.
async fn tool_names(client: &Client) -> Vec<String> {
    let tools = within("tools/list", client.list_tools()).await.unwrap();
    tools.into_iter().map(|tool| tool.name).collect()
}

fn header_tools() -> Value {
    json!({"tools": [
        {"name": "valid_tool", "inputSchema": {"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"}}}},
        {"name": "invalid_number_header", "inputSchema": {"type": "object", "properties": {
            "n": {"type": "number", "x-mcp-header": "N"}}}},
        {"name": "invalid_space_in_name", "inputSchema": {"type": "object", "properties": {
            "r": {"type": "string", "x-mcp-header": "My Region"}}}},
    ]})
}

#[tokio::test]
async fn tools_with_invalid_header_designations_are_dropped_in_the_modern_era_only() {
    let tools = |seen: &Seen, _: &Wire, era: Era| match (seen.method.as_str(), era) {
        ("tools/list", Era::Modern) => complete(header_tools()),
        ("tools/list", _) => Reply::Result(header_tools()),
        (_, Era::Modern) => modern(seen),
        _ => legacy(seen),
    };
    let (client, _wire) = connected(spec(), NoHandler, move |seen, wire| {
        tools(seen, wire, Era::Modern)
    })
    .await;
    let names = tool_names(&client).await;
    assert_eq!(names, ["valid_tool"]);
    let (client, _wire) = connected(spec(), NoHandler, move |seen, wire| {
        tools(seen, wire, Era::Legacy)
    })
    .await;
    assert_eq!(client.era(), Era::Legacy);
    let listed = within("tools/list", client.list_tools()).await.unwrap();
    assert_eq!(listed.len(), 3);
}

#[tokio::test]
async fn a_modern_listing_follows_cursors_with_the_envelope_on_every_page() {
    let script = |seen: &Seen, _: &Wire| match seen.method.as_str() {
        "tools/list" => {
            let page = match seen.params["cursor"].as_str() {
                None => {
                    json!({"tools": [{"name": "a", "inputSchema": {"type": "object"}}], "nextCursor": "c1"})
                }
                Some("c1") => {
                    json!({"tools": [{"name": "b", "inputSchema": {"type": "object"}}], "nextCursor": "c2"})
                }
                _ => {
                    json!({"tools": [{"name": "a", "inputSchema": {"type": "object"}}, {"name": "c", "inputSchema": {"type": "object"}}]})
                }
            };
            complete(page)
        }
        _ => modern(seen),
    };
    let (client, wire) = connected(spec(), NoHandler, script).await;
    let names = tool_names(&client).await;
    assert_eq!(names, ["a", "b", "c"]);
    let pages = wire.requests("tools/list");
    assert_eq!(pages.len(), 3);
    assert_eq!(pages[2].params["cursor"], "c2");
    for page in &pages {
        assert_eq!(meta_version(page), "2026-07-28", "{page:?}");
    }
    assert_eq!(client.tools().len(), 3);
}

/// A modern server whose `tools/call` never answers.
async fn hanging() -> (Client, Arc<Wire>) {
    let script = |seen: &Seen, _: &Wire| match seen.method.as_str() {
        "tools/call" => Reply::Never,
        _ => modern(seen),
    };
    connected(spec(), NoHandler, script).await
}

/// Waits for the `notifications/cancelled` of the (one) `tools/call`.
async fn told_cancelled(wire: &Wire) {
    eventually("notifications/cancelled", || {
        !wire.notified("notifications/cancelled").is_empty()
    })
    .await;
    let cancelled = wire.notified("notifications/cancelled");
    assert_eq!(cancelled[0]["requestId"], wire.requests("tools/call")[0].id);
}

#[tokio::test]
async fn cancelling_a_modern_call_over_stdio_sends_cancelled() {
    let (client, wire) = hanging().await;
    // The call gets its own handle: this one keeps the connection open after the abort.
    let caller = client.clone();
    let call = tokio::spawn(async move { echo(&caller).await });
    eventually("the call to reach the server", || {
        wire.count("tools/call") == 1
    })
    .await;
    call.abort();
    told_cancelled(&wire).await;
}

#[tokio::test]
async fn a_silent_modern_call_times_out_idle_and_the_server_is_told() {
    let (client, wire) = hanging().await;
    let options = ToolCallOptions::new().timeout(Duration::from_millis(200));
    let err = within("the timeout", client.call_tool("echo", json!({}), options))
        .await
        .unwrap_err();
    assert!(err.is_timeout(), "{err:?}");
    told_cancelled(&wire).await;
}

#[tokio::test]
async fn a_call_dropped_with_the_last_client_handle_is_still_told_to_the_server() {
    // How an interrupted program ends: the call's future and the client go together, and the
    // cancel is only queued by then. The connection writes it before it closes
    // (`CANCEL_FLUSH`), in either era, every time (the driver used to be stopped first, at
    // random, when it was polled next).
    for era in [EraChoice::Modern, EraChoice::Legacy] {
        for run in 0..20 {
            let script = |seen: &Seen, _: &Wire| match seen.method.as_str() {
                "tools/call" => Reply::Never,
                _ => dual(seen),
            };
            let (client, wire) = connected(spec().era(era), NoHandler, script).await;
            // The task owns the only handle: aborting it drops the call, then the client.
            let call = tokio::spawn(async move { echo(&client).await });
            eventually("the call to reach the server", || {
                wire.count("tools/call") == 1
            })
            .await;
            call.abort();
            eventually(&format!("{era:?} run {run}: the cancel"), || {
                !wire.notified("notifications/cancelled").is_empty()
            })
            .await;
            let cancelled = wire.notified("notifications/cancelled");
            assert_eq!(cancelled[0]["requestId"], wire.requests("tools/call")[0].id);
        }
    }
}

#[tokio::test]
async fn the_built_in_server_speaks_both_eras_with_progress() {
    for (choice, era) in [
        (EraChoice::Auto, Era::Modern),
        (EraChoice::Modern, Era::Modern),
        (EraChoice::Legacy, Era::Legacy),
    ] {
        let server = Toolbox::new("built-in", "1").tool(
            "count",
            "Reports progress twice",
            json!({"type": "object"}),
            |_, context| async move {
                context.progress(1.0, Some(2.0), None).await;
                context.progress(2.0, Some(2.0), Some("done")).await;
                CallToolResult::text("counted")
            },
        );
        let (client_io, server_io) = tokio::io::duplex(64 * 1024);
        let (read, write) = tokio::io::split(server_io);
        tokio::spawn(server.serve(read, write));
        let (read, write) = tokio::io::split(client_io);
        let spec = spec().era(choice);
        let (client, driver) = within(
            "connect",
            Client::connect_streams(&spec, read, write, NoHandler),
        )
        .await
        .unwrap();
        tokio::spawn(driver);
        assert_eq!(client.era(), era, "{choice}");
        assert_eq!(client.server_info().name, "built-in");
        let listed = within("tools/list", client.list_tools()).await.unwrap();
        assert_eq!(listed.len(), 1);
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&seen);
        let options =
            ToolCallOptions::new().on_progress(move |report| lock(&sink).push(report.progress));
        let result = within("tools/call", client.call_tool("count", json!({}), options))
            .await
            .unwrap();
        assert_eq!(result.joined_text(), "counted");
        assert_eq!(*lock(&seen), [1.0, 2.0], "{choice}");
        within("ping", client.ping()).await.unwrap();
    }
}
