//! The HTTP transport's sans-IO parts: response ids, origins, the resumption delay and the GET
//! stream's states. Everything on the wire is tested in `tests/it/http.rs`.

use std::time::Duration;

use url::Url;

use super::client::same_origin;
use super::response_id;
use super::streamable::{GetStream, retry_delay};
use crate::transport::RequestId;

#[test]
fn inbound_responses_are_recognised_by_their_id() {
    assert_eq!(
        response_id(br#"{"jsonrpc":"2.0","id":"srv-1","result":{}}"#),
        Some(RequestId::from_json("\"srv-1\""))
    );
    assert_eq!(
        response_id(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
        None
    );
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

#[test]
fn the_get_stream_is_due_after_initialize_and_started_once() {
    let mut get = GetStream::Off;
    assert_eq!(get.start(), None, "nothing is due before initialize");
    assert!(get.plan());
    assert!(!get.plan(), "planned once");
    assert!(get.waits());
    assert_eq!(get.start(), Some(0));
    assert_eq!(get, GetStream::Opening(0));
    assert_eq!(get.start(), None, "started once");
    assert!(get.waits());
    assert!(
        !get.answered(1, true),
        "another generation's answer changes nothing"
    );
    assert!(get.answered(0, true));
    assert!(!get.waits());
    assert_eq!(get, GetStream::Open(0));
    assert!(!get.answered(0, false), "answered once");
    assert!(get.closed(0));
    assert_eq!(get, GetStream::None(0));
}

#[test]
fn only_an_open_stream_carries_a_response() {
    use super::streamable::Carrier;
    for (get, carrier) in [
        (GetStream::Off, Carrier::None),
        (GetStream::Due, Carrier::None),
        (GetStream::Overdue, Carrier::None),
        (GetStream::Opening(0), Carrier::Unsettled),
        (GetStream::Pending(0), Carrier::Unsettled),
        (GetStream::Open(0), Carrier::Open),
        (GetStream::None(0), Carrier::None),
    ] {
        assert_eq!(get.carrier(), carrier, "{get:?}");
    }
    let mut refused = GetStream::Opening(1);
    assert!(refused.answered(1, false), "a 404/405/406 or a failure");
    assert_eq!(refused, GetStream::None(1));
    assert!(!refused.closed(1));
    let mut stale = GetStream::Open(2);
    assert!(!stale.closed(1), "an older stream's end changes nothing");
}

#[test]
fn a_request_that_waited_in_vain_lets_the_others_go() {
    let mut due = GetStream::Due;
    assert!(due.stop_waiting());
    assert_eq!(due, GetStream::Overdue);
    assert!(!due.waits());
    assert_eq!(due.start(), Some(0), "the stream still starts");
    assert_eq!(due, GetStream::Pending(0), "and nobody waits for it");
    let mut opening = GetStream::Opening(2);
    assert!(opening.stop_waiting());
    assert_eq!(opening, GetStream::Pending(2));
    assert!(!opening.stop_waiting());
    assert!(opening.answered(2, true), "its answer still counts");
    assert_eq!(opening, GetStream::Open(2));
}

#[test]
fn a_reinitialized_session_supersedes_the_stream() {
    assert_eq!(GetStream::Off.reopen(), None, "no stream, no new one");
    for (mut get, next) in [
        (GetStream::Due, 1),
        (GetStream::Overdue, 1),
        (GetStream::Opening(0), 1),
        (GetStream::Pending(0), 1),
        (GetStream::Open(3), 4),
        (GetStream::None(3), 4),
    ] {
        assert_eq!(get.reopen(), Some(next));
        assert_eq!(get, GetStream::Opening(next));
        assert!(get.waits());
    }
}
