//! Fuzzing the Streamable HTTP answer path (content type and body to frames): the sans-IO
//! decision `http::answer` makes for a POST's 2xx answer to one of our requests, on arbitrary
//! bytes. The first byte chooses the content type (JSON, an event stream, HTML with control
//! characters in its parameters, none, or raw header bytes taken from the input), and whether
//! the body broke off; the rest is the body.
//!
//! Invariants: no panic; every frame is no longer than the body (a whole body) or the event
//! cap (an event stream) and is valid JSON (a whole body); `Answered` only when a frame is the
//! response; `Empty` only for a blank, complete body; a quoted prefix and a described content
//! type are bounded and carry no control characters.
//!
//! "Valid JSON" is the grammar (RFC 8259), which sets no limit on a number's magnitude: a frame
//! whose id is `2777777777777e0777777777777777` is valid JSON that `serde_json::Value` cannot hold
//! (its numbers are `f64` or 64-bit integers). The client compares ids by their JSON text, so
//! such an id is one it never sent: the frame is passed on like any other, the POST has no
//! response (`Why::NoResponse`), and the JSON-RPC peer drops the frame as it drops any
//! response whose id is not one of its integers. The check here reads the grammar and the id's
//! text the same way, never through `Value`.

use bytes::BytesMut;
use sidewire_framing::SseCodec;
use tokio_util::codec::Decoder;

use crate::http::answer::{self, ContentType, Event, QUOTE_BYTES, Verdict};
use crate::transport::RequestId;

/// The event cap the stream case decodes under: small, so the fuzzer reaches it.
const EVENT_CAP: usize = 256;

/// Runs the Streamable HTTP answer path (content type and body to frames) on `data` and checks its invariants.
pub fn http_answer(data: &[u8]) {
    let Some((&choice, mut body)) = data.split_first() else {
        return;
    };
    let complete = choice & 0x80 == 0;
    let content_type = match choice % 5 {
        0 => ContentType::parse(Some(b"application/json")),
        1 => ContentType::parse(Some(b"text/event-stream; charset=utf-8")),
        2 => ContentType::parse(Some(b"text/html; charset=\x1b[31mutf-8\r\n")),
        3 => ContentType::parse(None),
        _ => {
            let (header, rest) = body.split_at(body.len().min(16));
            body = rest;
            ContentType::parse(Some(header))
        }
    };
    check_text(&content_type.describe());
    let want = RequestId::from_json("1");
    if content_type == ContentType::EventStream {
        return event_stream(body, &want);
    }
    let decoded = answer::decode_body(&content_type, body, complete, &want);
    let mut answered = false;
    for frame in &decoded.frames {
        assert!(frame.len() <= body.len(), "a frame longer than its body");
        serde_json::from_slice::<serde::de::IgnoredAny>(frame).expect("a frame is valid JSON");
        let members: Members<'_> =
            serde_json::from_slice(frame).expect("a frame is a JSON-RPC object");
        answered |=
            members.id.is_some_and(|id| id.get() == want.as_json()) && members.method.is_none();
    }
    match decoded.verdict {
        Verdict::Answered => assert!(answered, "answered without the response"),
        Verdict::Empty => assert!(complete && body.trim_ascii().is_empty()),
        Verdict::Unexpected(unexpected) => {
            check_text(&unexpected.quote);
            check_text(&unexpected.content_type);
        }
    }
}

/// The members of a frame that say whether it is the response, as their JSON text.
#[derive(serde::Deserialize)]
struct Members<'a> {
    #[serde(borrow)]
    id: Option<&'a serde_json::value::RawValue>,
    #[serde(borrow)]
    method: Option<&'a serde_json::value::RawValue>,
}

/// An event stream, event by event as the transport reads it.
fn event_stream(body: &[u8], want: &RequestId) {
    let mut codec = SseCodec::new(EVENT_CAP);
    let mut buf = BytesMut::from(body);
    // Each round takes an event or a skip out of the input, so this many rounds is plenty; a
    // codec that stopped making progress fails here rather than hanging the fuzzer.
    for _ in 0..=body.len() + 2 {
        let event = match codec.decode(&mut buf) {
            Ok(Some(event)) => event,
            Ok(None) => match codec.decode_eof(&mut buf) {
                Ok(Some(event)) => event,
                Ok(None) => return,
                Err(err) if err.is_too_large() => continue,
                Err(_) => return,
            },
            // An oversized event is skipped and the stream goes on.
            Err(err) if err.is_too_large() => continue,
            Err(_) => return,
        };
        if let Event::Deliver { frame, .. } = answer::event_frame(event.data, want) {
            assert!(frame.len() <= EVENT_CAP, "an event over the cap");
        }
    }
    panic!("the event stream decoder made no progress");
}

/// Text that is safe to show: bounded, and no control characters.
fn check_text(text: &str) {
    assert!(
        text.len() <= QUOTE_BYTES + crate::text::CUT_MARK_BYTES,
        "quoted text of {} bytes",
        text.len()
    );
    assert!(
        !text.chars().any(char::is_control),
        "a control character in {text:?}"
    );
}

#[cfg(test)]
mod tests {
    /// The checked-in seeds (among them the inputs the fuzzer found) and every prefix of each
    /// pass the checks in every `cargo test`.
    #[test]
    fn the_seeds_and_their_prefixes_hold() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fuzz/seeds/mcp_http_answer");
        let mut seen = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let seed = std::fs::read(entry.unwrap().path()).unwrap();
            for end in 0..=seed.len() {
                super::http_answer(&seed[..end]);
            }
            seen += 1;
        }
        assert!(seen >= 8, "{seen} seeds");
    }

    /// A response whose id is a number no `f64` holds is valid JSON and a response to an id the
    /// client never sent: passed on, and not the answer.
    #[test]
    fn an_id_out_of_any_numbers_range_is_an_id_never_sent() {
        use crate::http::answer::{ContentType, Verdict, Why, decode_body};
        let body = br#"{"jsonrpc":"2.0","id":2777777777777e0777777777777777,"result":{}}"#;
        let json = ContentType::parse(Some(b"application/json"));
        let decoded = decode_body(
            &json,
            body,
            true,
            &crate::transport::RequestId::from_json("1"),
        );
        assert_eq!(decoded.frames.len(), 1);
        match decoded.verdict {
            Verdict::Unexpected(unexpected) => assert_eq!(unexpected.why, Why::NoResponse),
            other => panic!("{other:?}"),
        }
    }
}
