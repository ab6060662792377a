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
//!
//! [`serve_replay`] is the same server answering `tools/call` in a real SDK's bytes instead
//! ([`Shape`]): the frame captured from that SDK's own no-op server, replayed with only the
//! `id` changed (see [`crate::replay`]). Its other answers are this server's, written in
//! sidewire-jsonrpc's shape; a legacy-only SDK's replay refuses `server/discover`, as the SDK
//! does.

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
            Ok(initialize_result(&params))
        })
        .request_untyped::<Value, Value, _, _>("server/discover", |_: Value, _| async {
            Ok(discover_result())
        })
        .request_untyped::<Value, Value, _, _>("tools/list", |params: Value, _| async move {
            Ok(tools_list_result(&params))
        })
        .request_raw("tools/call", |params, _| {
            Ok(std::future::ready(Ok(call_answer(is_modern(params)))))
        })
        .request_untyped::<Value, Value, _, _>("ping", |params: Value, _| async move {
            Ok(modern_result(&params, json!({}), false))
        });
    let (_peer, driver) = sidewire_jsonrpc::connect(stream, sink, router, config);
    let _ = driver.await;
}

fn initialize_result(params: &Value) -> Value {
    let version = params["protocolVersion"].as_str().unwrap_or("2025-06-18");
    json!({
        "protocolVersion": version,
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "noop", "version": "0"}
    })
}

fn discover_result() -> Value {
    json!({
        "supportedVersions": ["2026-07-28"],
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "noop", "version": "0"},
        "resultType": "complete", "ttlMs": 0, "cacheScope": "private"
    })
}

fn tools_list_result(params: &Value) -> Value {
    let tools = json!({"tools": [{"name": "noop", "inputSchema": {"type": "object"}}]});
    modern_result(params, tools, true)
}

/// Whether a `tools/call`'s params carry the modern envelope (read borrowed).
fn is_modern(params: Option<&RawValue>) -> bool {
    params
        .and_then(|params| serde_json::from_str::<Probe>(params.get()).ok())
        .and_then(|probe| probe.meta)
        .is_some_and(|meta| meta.version == Some(Version::Modern))
}

/// The byte shape of a replayed `tools/call` answer: whose no-op server it was captured from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// This module's own server ([`serve`]), captured like the others: sidewire-jsonrpc's
    /// envelope (`jsonrpc`, `id`, `result`) around a `serde_json` map (members sorted).
    Own,
    /// The TypeScript SDK 1.x, `@modelcontextprotocol/sdk` 1.32.2 (legacy era only).
    Ts1,
    /// The TypeScript SDK 2.x, `@modelcontextprotocol/server` 2.4.0.
    Ts2,
    /// The Python SDK, `mcp` 2.3.0 (`MCPServer`).
    Py,
    /// rmcp 3.11.0.
    Rmcp,
}

/// Set (to a [`Shape::name`]) in the environment of a re-executed no-op server: serve
/// [`serve_replay`] in that shape.
pub const SHAPE_ENV: &str = "SIDEWIRE_BENCH_SHAPE";

impl Shape {
    /// Every shape, in the order the bench runs them.
    pub const ALL: [Shape; 5] = [Shape::Own, Shape::Ts1, Shape::Ts2, Shape::Py, Shape::Rmcp];

    /// The name in bench ids and in [`SHAPE_ENV`].
    pub fn name(self) -> &'static str {
        match self {
            Shape::Own => "own",
            Shape::Ts1 => "ts1",
            Shape::Ts2 => "ts2",
            Shape::Py => "py",
            Shape::Rmcp => "rmcp",
        }
    }

    /// The shape named `name`.
    pub fn from_name(name: &str) -> Option<Shape> {
        Shape::ALL.into_iter().find(|shape| shape.name() == name)
    }

    /// The captured `tools/call` answers (`benches/fixtures/real/`): the legacy era's, and the
    /// modern era's when the SDK speaks it.
    pub fn captured(self) -> (&'static str, Option<&'static str>) {
        macro_rules! real {
            ($file:literal) => {
                include_str!(concat!("../fixtures/real/", $file))
            };
        }
        match self {
            Shape::Own => (
                real!("sidewire-noop.tools_call.json"),
                Some(real!("sidewire-noop.tools_call.modern.json")),
            ),
            Shape::Ts1 => (real!("ts-sdk-1.32.2.tools_call.json"), None),
            Shape::Ts2 => (
                real!("ts-server-2.4.0.tools_call.json"),
                Some(real!("ts-server-2.4.0.tools_call.modern.json")),
            ),
            Shape::Py => (
                real!("python-mcp-2.3.0.tools_call.json"),
                Some(real!("python-mcp-2.3.0.tools_call.modern.json")),
            ),
            Shape::Rmcp => (
                real!("rmcp-3.11.0.tools_call.json"),
                Some(real!("rmcp-3.11.0.tools_call.modern.json")),
            ),
        }
    }

    /// Whether the SDK speaks the modern era (its `server/discover` was captured).
    pub fn has_modern(self) -> bool {
        self.captured().1.is_some()
    }
}

/// Serves the no-op MCP server on stdin/stdout (non-blocking pipes) until stdin closes,
/// answering `tools/call` with `shape`'s captured frames. A failed read or write ends it.
pub async fn serve_replay(shape: Shape) {
    let (reader, writer) = crate::stdio_pipes();
    let _ = replay_on(shape, reader, writer).await;
}

/// [`serve_replay`] on `reader` and `writer`.
///
/// # Errors
///
/// A read or a write failing.
pub async fn replay_on<R, W>(shape: Shape, reader: R, writer: W) -> std::io::Result<()>
where
    R: tokio::io::AsyncRead + Unpin,
    W: tokio::io::AsyncWrite + Unpin,
{
    use crate::replay::{Flow, Frame, Incoming, write_error, write_result};
    let (legacy, modern) = shape.captured();
    let legacy = Frame::split(legacy);
    let modern = modern.map(Frame::split);
    let params = |incoming: &Incoming<'_>| -> Value {
        incoming
            .params
            .and_then(|params| serde_json::from_str(params.get()).ok())
            .unwrap_or(Value::Null)
    };
    crate::replay::serve_requests(reader, writer, |id, method, incoming, out| {
        match (method, modern) {
            ("tools/call", Some(modern)) if is_modern(incoming.params) => modern.write(id, out),
            ("tools/call", _) => legacy.write(id, out),
            ("initialize", _) => write_result(id, &initialize_result(&params(incoming)), out),
            ("server/discover", Some(_)) => write_result(id, &discover_result(), out),
            ("tools/list", _) => write_result(id, &tools_list_result(&params(incoming)), out),
            ("ping", _) => {
                write_result(id, &modern_result(&params(incoming), json!({}), false), out)
            }
            _ => write_error(id, -32601, "Method not found", out),
        }
        Flow::Continue
    })
    .await
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
