//! Unit tests of the protocol core's pure parts: wire types, leniency, defaults, hooks.

use bytes::Bytes;
use serde_json::{Value, json};
use sidewire_jsonrpc::{Cancelled, ErrorObject, Hooks, Id};

use crate::Error;
use crate::http::Cause;
use crate::protocol::bridge::classify;
use crate::protocol::handler::fill_defaults;
use crate::protocol::headers::ToolHeaders;
use crate::protocol::listing::Collector;
use crate::protocol::methods::ListTools;
use crate::protocol::session::McpHooks;
use crate::protocol::types::*;
use crate::transport::{Message, RequestId};
use crate::{List, ListLimit, Truncation};

#[test]
fn every_content_kind_decodes_and_unknown_kinds_are_kept() {
    let result: CallToolResult = serde_json::from_value(json!({
        "content": [
            {"type": "text", "text": "hi"},
            {"type": "image", "data": "aW1n", "mimeType": "image/png"},
            {"type": "audio", "data": "YXVk", "mimeType": "audio/wav", "annotations": {"priority": 1}},
            {"type": "resource_link", "uri": "file:///a", "name": "a", "mimeType": "text/plain"},
            {"type": "resource", "resource": {"uri": "mem://b", "text": "body"}},
            {"type": "resource", "resource": {"uri": "mem://c", "blob": "AAEC", "mimeType": "application/octet-stream"}},
            {"type": "hologram", "frames": 3}
        ],
        "structuredContent": {"temperature": 21.5},
        "isError": true
    }))
    .unwrap();
    assert!(result.is_error);
    assert_eq!(
        result.structured_content,
        Some(json!({"temperature": 21.5}))
    );
    assert_eq!(result.joined_text(), "hi");
    assert!(
        matches!(&result.content[1], Content::Image { mime_type, .. } if mime_type == "image/png")
    );
    assert!(matches!(
        &result.content[2],
        Content::Audio {
            annotations: Some(_),
            ..
        }
    ));
    assert!(
        matches!(&result.content[3], Content::ResourceLink(link) if link.uri == "file:///a" && link.name == "a")
    );
    assert!(
        matches!(&result.content[4], Content::Resource { resource, .. } if resource.text.as_deref() == Some("body"))
    );
    assert!(
        matches!(&result.content[5], Content::Resource { resource, .. } if resource.blob.as_deref() == Some("AAEC"))
    );
    assert!(matches!(&result.content[6], Content::Other(v) if v["frames"] == 3));
    // Round trip: what decodes encodes back to the same JSON.
    let again: CallToolResult =
        serde_json::from_value(serde_json::to_value(&result).unwrap()).unwrap();
    assert_eq!(again, result);
}

#[test]
fn a_kept_content_block_re_sends_as_what_it_was() {
    // "type" twice (audio, then text) with no mimeType: not a readable audio block. Kept whole, it
    // would re-send as a text block (serde_json keeps the last name), so it is refused instead.
    let text = r#"{"content":[{"type":"audio","data":"YXVk","type":"text","text":"t"}]}"#;
    assert!(serde_json::from_str::<CallToolResult>(text).is_err());
    // A repeated name deeper in an unknown block is refused too; unique names are kept.
    let text = r#"{"content":[{"type":"x","v":{"a":1,"a":2}}]}"#;
    assert!(serde_json::from_str::<CallToolResult>(text).is_err());
    let text = r#"{"content":[{"type":"x","v":{"a":1,"b":2}}]}"#;
    let result: CallToolResult = serde_json::from_str(text).unwrap();
    assert!(matches!(&result.content[0], Content::Other(v) if v["v"]["b"] == 2));
    // The fuzz target's invariant on the input that broke it.
    crate::fuzz::call_tool_result(include_bytes!(
        "../../../../fuzz/seeds/mcp_call_result/regression-repeated-type"
    ));
}

#[test]
fn results_tolerate_missing_and_null_members() {
    let result: CallToolResult = serde_json::from_value(json!({"isError": null})).unwrap();
    assert!(!result.is_error && result.content.is_empty());
    let init: InitializeResult = serde_json::from_value(json!({
        "protocolVersion": "2025-06-18",
        "capabilities": {"tools": {"listChanged": null}, "resources": {"subscribe": true}},
    }))
    .unwrap();
    assert_eq!(init.capabilities.tools, Some(ListCapability::default()));
    assert!(init.capabilities.resources.unwrap().subscribe);
    assert!(init.capabilities.prompts.is_none());
    assert_eq!(init.server_info.name, "");
}

#[test]
fn a_page_keeps_good_items_and_drops_bad_ones() {
    let mut collector = Collector::<ListTools>::new("s", 10, 1 << 20);
    let page = json!({
        "tools": [
            {"name": "a", "inputSchema": {"type": "object"}},
            {"description": "no name"},
            {"name": "a"},
            {"name": "b"}
        ],
        "nextCursor": "p2"
    });
    let next = collector.page(&page.to_string()).unwrap();
    assert_eq!(next.as_deref(), Some("p2"));
    let good = collector.items();
    assert_eq!(good.len(), 2);
    assert_eq!(good[1].input_schema, json!({"type": "object"}));
    // The bytes are the kept items' text as received.
    let expected =
        r#"{"inputSchema":{"type":"object"},"name":"a"}"#.len() + r#"{"name":"b"}"#.len();
    assert_eq!(collector.bytes(), expected);
    assert!(collector.finish().truncation.is_none());
}

fn tools_page(names: std::ops::Range<usize>, next: Option<&str>) -> String {
    let tools: Vec<_> = names.map(|i| json!({"name": format!("t{i}")})).collect();
    json!({"tools": tools, "nextCursor": next}).to_string()
}

#[test]
fn a_page_at_the_item_cap_is_kept_whole_and_one_more_is_cut() {
    let mut exact = Collector::<ListTools>::new("s", 3, 1 << 20);
    assert_eq!(exact.page(&tools_page(0..3, None)).unwrap(), None);
    let exact = exact.finish();
    assert_eq!((exact.items.len(), exact.truncation), (3, None));

    let mut over = Collector::<ListTools>::new("s", 3, 1 << 20);
    assert_eq!(over.page(&tools_page(0..4, Some("more"))).unwrap(), None);
    let over = over.finish();
    assert_eq!(over.items.len(), 3);
    assert_eq!(
        over.truncation,
        Some(Truncation {
            list: List::Tools,
            limit: ListLimit::Items(3),
            kept: 3
        })
    );
    // Full with another page announced: not fetched, reported as cut.
    let mut full = Collector::<ListTools>::new("s", 3, 1 << 20);
    assert_eq!(full.page(&tools_page(0..3, Some("more"))).unwrap(), None);
    assert_eq!(full.finish().truncation.unwrap().limit, ListLimit::Items(3));
}

#[test]
fn the_byte_cap_keeps_a_prefix() {
    let one = r#"{"name":"t0"}"#.len();
    let mut collector = Collector::<ListTools>::new("s", 100, 2 * one + 1);
    assert_eq!(collector.page(&tools_page(0..5, None)).unwrap(), None);
    let listing = collector.finish();
    let names: Vec<&str> = listing.items.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["t0", "t1"]);
    assert_eq!(
        listing.truncation.unwrap().limit,
        ListLimit::Bytes(2 * one + 1)
    );
}

#[test]
fn tool_hints() {
    let mut tool = Tool::new("t", "d", json!({}));
    assert!(!tool.is_read_only() && !tool.is_destructive());
    tool.annotations = Some(json!({"readOnlyHint": true}).into());
    assert!(tool.is_read_only());
    tool.annotations = Some(json!({"readOnlyHint": true, "destructiveHint": true}).into());
    assert!(!tool.is_read_only() && tool.is_destructive());
}

#[test]
fn elicitation_fills_omitted_fields_from_schema_defaults() {
    let schema = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "default": "anon"},
            "age": {"type": "integer", "default": 42},
            "ratio": {"type": "number", "default": 0.5},
            "pet": {"type": "string", "enum": ["cat", "dog"], "default": "dog"},
            "ok": {"type": "boolean", "default": true},
            "free": {"type": "string"}
        }
    });
    let mut content = serde_json::Map::new();
    content.insert("name".to_owned(), json!("Ada"));
    fill_defaults(&schema, &mut content);
    assert_eq!(
        Value::Object(content),
        json!({"name": "Ada", "age": 42, "ratio": 0.5, "pet": "dog", "ok": true})
    );
}

#[test]
fn the_cancel_hook_announces_everything_but_initialize() {
    let id = Id::int(7);
    let notice = McpHooks::default()
        .on_cancel(Cancelled {
            id: &id,
            method: "tools/call",
            timed_out: true,
            idle: false,
        })
        .unwrap();
    assert_eq!(notice.method, "notifications/cancelled");
    assert_eq!(
        notice.params,
        json!({"requestId": 7, "reason": "client deadline exceeded"})
    );
    let dropped = McpHooks::default()
        .on_cancel(Cancelled {
            id: &id,
            method: "prompts/get",
            timed_out: false,
            idle: false,
        })
        .unwrap();
    assert_eq!(dropped.params["requestId"], 7);
    // Each way of ending says its own reason.
    let idle = McpHooks::default()
        .on_cancel(Cancelled {
            id: &id,
            method: "tools/call",
            timed_out: true,
            idle: true,
        })
        .unwrap();
    let reasons = [&notice, &dropped, &idle].map(|n| n.params["reason"].clone());
    assert!(reasons.iter().all(Value::is_string), "{reasons:?}");
    assert_ne!(reasons[0], reasons[1]);
    assert_ne!(reasons[0], reasons[2]);
    assert_ne!(reasons[1], reasons[2]);
    assert!(
        McpHooks::default()
            .on_cancel(Cancelled {
                id: &id,
                method: "initialize",
                timed_out: true,
                idle: false,
            })
            .is_none()
    );
}

#[test]
fn handler_results_have_the_wire_shape() {
    assert_eq!(
        serde_json::to_value(CreateMessageResult::text("m", "hello")).unwrap(),
        json!({"role": "assistant", "content": {"type": "text", "text": "hello"}, "model": "m", "stopReason": "endTurn"})
    );
    assert_eq!(
        serde_json::to_value(ElicitResult::decline()).unwrap(),
        json!({"action": "decline"})
    );
    assert_eq!(
        serde_json::to_value(CompletionRef::Prompt { name: "p".into() }).unwrap(),
        json!({"type": "ref/prompt", "name": "p"})
    );
    let params: CreateMessageParams = serde_json::from_value(json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": "q"}},
                     {"role": "assistant", "content": [{"type": "text", "text": "a"}]}],
        "maxTokens": 10,
        "includeContext": "none"
    }))
    .unwrap();
    assert_eq!(params.max_tokens, 10);
    assert_eq!(params.extra["includeContext"], "none");
    assert!(matches!(
        params.messages[1].content,
        SamplingContent::Many(_)
    ));
}

#[test]
fn outgoing_frames_are_classified_by_id_and_method() {
    let tools = ToolHeaders::default();
    let request = classify(
        Bytes::from_static(br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{}}"#),
        &tools,
    );
    assert_eq!(
        request.message,
        Message::Request {
            id: RequestId::from_json("7"),
            method: "tools/call".to_owned()
        }
    );
    assert!(request.modern.is_none());
    let note = classify(
        Bytes::from_static(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
        &tools,
    );
    assert!(matches!(note.message, Message::Notification { .. }));
    let response = classify(
        Bytes::from_static(br#"{"jsonrpc":"2.0","id":"srv-1","result":{}}"#),
        &tools,
    );
    assert_eq!(response.message, Message::Response);
    // Params of an odd shape do not hide a request.
    let odd = classify(
        Bytes::from_static(br#"{"jsonrpc":"2.0","id":8,"method":"x","params":[1]}"#),
        &tools,
    );
    assert!(matches!(odd.message, Message::Request { .. }));
}

#[test]
fn modern_requests_carry_their_headers() {
    let tools = ToolHeaders::default();
    tools.replace([(
        "t".to_owned(),
        crate::protocol::headers::designations(&serde_json::json!({
            "type": "object",
            "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}
        }))
        .unwrap(),
    )]);
    let call = classify(
        Bytes::from_static(
            br#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"t","arguments":{"region":" eu"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
        ),
        &tools,
    );
    let modern = call.modern.expect("a modern request");
    assert_eq!(modern.version, "2026-07-28");
    assert_eq!(modern.method, "tools/call");
    assert_eq!(modern.name.as_deref(), Some("t"));
    assert_eq!(
        modern.params,
        vec![("Mcp-Param-Region".to_owned(), "=?base64?IGV1?=".to_owned())]
    );
    let read = classify(
        Bytes::from_static(
            br#"{"jsonrpc":"2.0","id":10,"method":"resources/read","params":{"uri":"file:///a","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
        ),
        &tools,
    );
    assert_eq!(read.modern.unwrap().name.as_deref(), Some("file:///a"));
}

#[test]
fn a_transport_failure_comes_back_typed_and_cannot_be_forged() {
    let failed = || {
        Cause::Status {
            status: 401,
            body: "no".to_owned(),
        }
        .into_error(
            "tools/call",
            &url::Url::parse("http://127.0.0.1:1/mcp").unwrap(),
            &crate::redact::UrlSecrets::default(),
        )
    };
    // What the bridge fails a request with, as its caller gets it from jsonrpc.
    let local = sidewire_jsonrpc::Error::Local {
        method: "tools/call".to_owned(),
        cause: Box::new(failed()),
    };
    let typed = Error::rpc("tools/call", local);
    assert!(typed.is_http(), "{typed:?}");
    assert_eq!(typed.http_status(), Some(401));
    assert_eq!(typed.to_string(), failed().to_string());
    // A server's error that imitates the old sentinel shape stays an ordinary remote error.
    let forged: ErrorObject = serde_json::from_value(serde_json::json!({
        "code": -32000, "message": "x", "data": { "sidewireTransportFailure": 0 }
    }))
    .unwrap();
    let remote = Error::rpc(
        "tools/call",
        sidewire_jsonrpc::Error::Remote {
            method: "tools/call".to_owned(),
            error: forged,
        },
    );
    assert!(remote.is_remote() && !remote.is_http(), "{remote:?}");
}

#[test]
fn the_cancel_notice_carries_the_envelope_in_the_modern_era() {
    let spec = crate::ServerSpec::stdio("s", "x");
    let shared = crate::protocol::session::Shared::new(
        &spec,
        crate::protocol::handler::share(crate::NoHandler),
    );
    let hooks = McpHooks::of(&shared);
    let id = Id::int(3);
    let cancelled = || Cancelled {
        id: &id,
        method: "tools/call",
        timed_out: false,
        idle: false,
    };
    let legacy = hooks.on_cancel(cancelled()).unwrap();
    assert!(legacy.params.get("_meta").is_none());
    shared.settle_era(crate::Era::Modern);
    let modern = hooks.on_cancel(cancelled()).unwrap();
    assert_eq!(modern.params["requestId"], 3);
    assert_eq!(
        modern.params["_meta"]["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    // The handshake is never cancelled, in either era.
    let discover = Cancelled {
        id: &id,
        method: "server/discover",
        timed_out: true,
        idle: false,
    };
    assert!(hooks.on_cancel(discover).is_none());
}

#[test]
fn tool_results_of_every_shape_hold_the_fuzz_invariants() {
    let cases = [
        r#"{"content":[{"type":"text","text":"ok"}]}"#,
        r#"{"content":[{"type":"text","text":"a"},{"type":"text","text":"b\n","annotations":{"priority":1}}],"isError":true}"#,
        r#"{"content":[{"type":"text","text":"a","annotations":null}],"isError":null,"resultType":"complete"}"#,
        r#"{"content":[],"structuredContent":{"n":1},"_meta":{"k":"v"}}"#,
        r#"{}"#,
        // Another kind, an unknown member, a bad text, repeats.
        r#"{"content":[{"type":"text","text":"a"},{"type":"image","data":"AA==","mimeType":"image/png"}]}"#,
        r#"{"content":[{"type":"text","text":"a","_meta":{}}]}"#,
        r#"{"content":[{"type":"text","text":5}]}"#,
        r#"{"content":[{"type":"text"}]}"#,
        r#"{"content":[{"text":"a","type":"text","type":"x"}]}"#,
        r#"{"content":[{"type":"audio","data":"YXVk","type":"text","text":"t"}]}"#,
        r#"{"content":[{"type":"x","v":{"a":1,"a":2}}]}"#,
        r#"{"content":[{"type":"text","text":"a"}],"content":[]}"#,
        r#"{"content":null}"#,
        r#"{"content":[{"type":"text","text":"a"}],"isError":"yes"}"#,
        r#"[]"#,
        r#"{"content":[{"type":"text","text":"a"}]"#,
    ];
    for text in cases {
        crate::fuzz::call_tool_result(text.as_bytes());
    }
}
