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

#[test]
fn an_answer_body_is_the_response_empty_or_unexpected() {
    use super::answer::{ContentType, Verdict, Why, decode_body};
    let want = RequestId::from_json("7");
    let json = ContentType::parse(Some(b"application/json; charset=utf-8"));
    let verdict = |body: &[u8], complete| decode_body(&json, body, complete, &want).verdict;
    assert_eq!(
        verdict(br#"{"jsonrpc":"2.0","id":7,"result":{}}"#, true),
        Verdict::Answered
    );
    assert_eq!(verdict(b" \r\n", true), Verdict::Empty);
    let why = |body: &[u8], complete| match verdict(body, complete) {
        Verdict::Unexpected(unexpected) => unexpected.why,
        other => panic!("{other:?}"),
    };
    assert_eq!(why(b"<html>", true), Why::NotJson);
    assert_eq!(why(br#"{"a":1}"#, true), Why::NotAMessage);
    assert_eq!(
        why(br#"{"jsonrpc":"2.0","id":8,"result":{}}"#, true),
        Why::NoResponse
    );
    assert_eq!(
        why(br#"{"jsonrpc":"2.0","method":"x"}"#, true),
        Why::NoResponse
    );
    assert_eq!(
        why(br#"{"jsonrpc":"2.0","id":7,"res"#, true),
        Why::Truncated
    );
    assert_eq!(why(b"", false), Why::Truncated);
    // The messages in a batch are delivered, the non-messages dropped.
    let batch = br#"[{"jsonrpc":"2.0","method":"n"},{"x":1},{"jsonrpc":"2.0","id":7,"error":{"code":1,"message":"m"}}]"#;
    let decoded = decode_body(&json, batch, true, &want);
    assert_eq!(decoded.frames.len(), 2);
    assert_eq!(decoded.verdict, Verdict::Answered);
}

#[test]
fn a_quote_is_escaped_and_bounded() {
    use super::answer::{ContentType, QUOTE_BYTES, quote};
    assert_eq!(quote(b"a\x1b[31m\r\nb"), "a\\u{1b}[31m\\r\\nb");
    assert_eq!(quote("x\u{202e}y".as_bytes()), "x\\u{202e}y");
    let long = quote(&[b'\x07'; 10_000]);
    assert!(
        long.len() <= QUOTE_BYTES + crate::text::CUT_MARK_BYTES
            && long.ends_with("… (10000 bytes in all)"),
        "{long}"
    );
    assert_eq!(quote(b"\xff\xfe"), "\u{fffd}\u{fffd}");
    let html = ContentType::parse(Some(b"text/html;\x1b x"));
    assert_eq!(html.describe(), "text/html;\\u{1b} x");
    assert_eq!(
        ContentType::parse(Some(b"Text/Event-Stream")),
        ContentType::EventStream
    );
    assert_eq!(ContentType::parse(None).describe(), "none");
}

#[test]
fn retry_after_is_seconds_or_an_http_date() {
    use std::time::{Duration, UNIX_EPOCH};

    use super::streamable::retry_after;
    let now = UNIX_EPOCH + Duration::from_secs(784_111_777); // Sun, 06 Nov 1994 08:49:37 GMT
    assert_eq!(retry_after("0", now), Some(Duration::ZERO));
    assert_eq!(retry_after(" 3 ", now), Some(Duration::from_secs(3)));
    assert_eq!(
        retry_after("Sun, 06 Nov 1994 08:49:40 GMT", now),
        Some(Duration::from_secs(3))
    );
    assert_eq!(
        retry_after("Sun, 06 Nov 1994 08:00:00 GMT", now),
        Some(Duration::ZERO),
        "a date in the past is no wait"
    );
    assert_eq!(
        retry_after("Thu, 01 Mar 2001 00:00:00 GMT", UNIX_EPOCH),
        Some(Duration::from_secs(983_404_800)),
        "after a leap day"
    );
    for bad in [
        "",
        "-1",
        "soon",
        "Sun, 06 Nov 1994 08:49:37 PST",
        "Sun, 32 Nov 1994 08:49:37 GMT",
    ] {
        assert_eq!(retry_after(bad, now), None, "{bad:?}");
    }
}

#[test]
fn expiry_is_a_404_or_a_400_naming_the_session() {
    use http::StatusCode;

    use super::streamable::is_expiry;
    assert!(is_expiry(StatusCode::NOT_FOUND, ""));
    assert!(is_expiry(
        StatusCode::BAD_REQUEST,
        "Bad Request: No valid session ID provided"
    ));
    assert!(is_expiry(
        StatusCode::BAD_REQUEST,
        "Bad Request: no SESSION"
    ));
    assert!(!is_expiry(StatusCode::BAD_REQUEST, "invalid params"));
    assert!(!is_expiry(StatusCode::UNAUTHORIZED, "session"));
}
