//! The HTTP transport's sans-IO parts: frame classification, failure records, origins, and the
//! resumption delay. Everything on the wire is tested in `tests/it/http.rs`.

use std::time::Duration;

use sidewire_jsonrpc::ErrorObject;
use url::Url;

use super::client::same_origin;
use super::streamable::retry_delay;
use super::{Failure, Failures, Outgoing, response_id};

#[test]
fn outgoing_frames_are_classified_by_id_and_method() {
    let request = Outgoing::of(br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{}}"#);
    assert!(
        matches!(request, Outgoing::Request { ref id, ref method } if id == "7" && method == "tools/call")
    );
    let note = Outgoing::of(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    assert!(matches!(note, Outgoing::Notification { .. }));
    let response = Outgoing::of(br#"{"jsonrpc":"2.0","id":"srv-1","result":{}}"#);
    assert!(matches!(response, Outgoing::Response));
    assert_eq!(
        response_id(br#"{"jsonrpc":"2.0","id":"srv-1","result":{}}"#).as_deref(),
        Some("\"srv-1\"")
    );
    assert_eq!(
        response_id(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
        None
    );
}

#[test]
fn a_recorded_failure_is_claimed_once_and_cannot_be_forged() {
    let failures = Failures::default();
    let kind = Failure::Status {
        status: 401,
        body: "no".to_owned(),
    }
    .into_kind("tools/call", &Url::parse("http://127.0.0.1:1/mcp").unwrap());
    let frame = failures.answer("3", kind);
    let value: serde_json::Value = serde_json::from_slice(&frame).unwrap();
    assert_eq!(value["id"], 3);
    let error: ErrorObject = serde_json::from_value(value["error"].clone()).unwrap();
    let typed = failures.take(&error).expect("the transport's own failure");
    assert_eq!(typed.http_status(), Some(401));
    assert!(failures.take(&error).is_none(), "claimed twice");
    // A server's error that imitates the shape names no entry.
    let forged: ErrorObject = serde_json::from_value(serde_json::json!({
        "code": -32000, "message": "x", "data": { "sidewireTransportFailure": 99 }
    }))
    .unwrap();
    assert!(failures.take(&forged).is_none());
}

#[test]
fn origins_compare_scheme_host_and_effective_port() {
    let url = |s: &str| Url::parse(s).unwrap();
    assert!(same_origin(
        &url("https://a.example/mcp"),
        &url("https://a.example:443/other")
    ));
    assert!(same_origin(
        &url("http://a.example/mcp"),
        &url("http://a.example:80/")
    ));
    assert!(!same_origin(
        &url("http://a.example/"),
        &url("https://a.example/")
    ));
    assert!(!same_origin(
        &url("http://127.0.0.1:1/"),
        &url("http://127.0.0.1:2/")
    ));
    assert!(!same_origin(
        &url("https://a.example/"),
        &url("https://b.example/")
    ));
}

#[test]
fn resumption_waits_the_servers_retry_then_backs_off_within_a_bound() {
    assert_eq!(retry_delay(Some(500), 1), Duration::from_millis(500));
    assert_eq!(retry_delay(None, 1), Duration::from_secs(1));
    assert_eq!(retry_delay(None, 2), Duration::from_millis(1500));
    assert_eq!(retry_delay(Some(20_000), 3), Duration::from_secs(30));
    assert_eq!(retry_delay(Some(u64::MAX), 1), Duration::from_secs(30));
}
