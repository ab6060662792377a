//! The no-op MCP server that the `mcp_stdio` bench and the `hot_path` test both run (the bench
//! binary or test re-executed): `initialize`, `server/discover`, `tools/list` with one tool,
//! `tools/call` answering "ok" and `ping`, each with the modern result fields when the request
//! carries the 2026-07-28 envelope. One definition, so the allocation counts of the test are
//! those of the server the bench times.
//!
//! `tools/call`, the one method the benches time, does as little as a server can: its params
//! are read borrowed, for the envelope's protocol version only, and its answer is one of two
//! pre-encoded results, so the server's share of every row (sidewire's, rmcp's, the floor's)
//! is the JSON-RPC envelope and the pipes. The other methods answer once per connection and
//! build their results as `Value`s.

use std::sync::OnceLock;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use sidewire_jsonrpc::{Config, Profile, Router};

/// Serves the no-op MCP server on stdin/stdout (non-blocking pipes) until stdin closes.
pub async fn serve() {
    let config = Config::new(Profile::Lenient, 8 * 1024 * 1024);
    let (reader, writer) = crate::stdio_pipes();
    let (stream, sink) = sidewire_jsonrpc::ndjson(reader, writer, &config);
    let router = Router::new()
        .request_untyped::<Value, Value, _, _>("initialize", |params: Value, _| async move {
            let version = params["protocolVersion"]
                .as_str()
                .unwrap_or("2025-06-18")
                .to_owned();
            Ok(json!({
                "protocolVersion": version,
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "noop", "version": "0"}
            }))
        })
        .request_untyped::<Value, Value, _, _>("server/discover", |_: Value, _| async {
            Ok(json!({
                "supportedVersions": ["2026-07-28"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "noop", "version": "0"},
                "resultType": "complete", "ttlMs": 0, "cacheScope": "private"
            }))
        })
        .request_untyped::<Value, Value, _, _>("tools/list", |params: Value, _| async move {
            let tools = json!({"tools": [{"name": "noop", "inputSchema": {"type": "object"}}]});
            Ok(modern_result(&params, tools, true))
        })
        .request_raw("tools/call", |params, _| {
            let modern = params
                .and_then(|params| serde_json::from_str::<Probe>(params.get()).ok())
                .and_then(|probe| probe.meta)
                .is_some_and(|meta| meta.version == Some(Version::Modern));
            Ok(std::future::ready(Ok(call_answer(modern))))
        })
        .request_untyped::<Value, Value, _, _>("ping", |params: Value, _| async move {
            Ok(modern_result(&params, json!({}), false))
        });
    let (_peer, driver) = sidewire_jsonrpc::connect(stream, sink, router, config);
    let _ = driver.await;
}

/// A `tools/call`'s params, read for the one thing the answer depends on.
#[derive(Deserialize)]
struct Probe {
    #[serde(rename = "_meta")]
    meta: Option<MetaProbe>,
}

#[derive(Deserialize)]
struct MetaProbe {
    #[serde(rename = "io.modelcontextprotocol/protocolVersion")]
    version: Option<Version>,
}

#[derive(Deserialize, PartialEq)]
enum Version {
    #[serde(rename = "2026-07-28")]
    Modern,
    #[serde(other)]
    Other,
}

/// The `tools/call` result ("ok"), pre-encoded once per process: with the modern result
/// fields or without.
fn call_answer(modern: bool) -> &'static RawValue {
    static ANSWERS: OnceLock<[Box<RawValue>; 2]> = OnceLock::new();
    let answers = ANSWERS.get_or_init(|| {
        let legacy = json!({"content": [{"type": "text", "text": "ok"}]});
        let modern = modern_result(
            &json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}),
            legacy.clone(),
            false,
        );
        [legacy, modern].map(|answer| RawValue::from_string(answer.to_string()).expect("JSON text"))
    });
    &answers[usize::from(modern)]
}

/// `result` with the modern result fields when `params` carries the modern envelope
/// (`resultType`; `ttlMs` and `cacheScope` too on a `listing`).
fn modern_result(params: &Value, mut result: Value, listing: bool) -> Value {
    let modern = params["_meta"]["io.modelcontextprotocol/protocolVersion"] == "2026-07-28";
    if modern && let Value::Object(members) = &mut result {
        members.insert("resultType".into(), json!("complete"));
        if listing {
            members.insert("ttlMs".into(), json!(0));
            members.insert("cacheScope".into(), json!("private"));
        }
    }
    result
}
