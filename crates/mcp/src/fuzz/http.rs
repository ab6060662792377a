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
        let value: serde_json::Value =
            serde_json::from_slice(frame).expect("a frame is valid JSON");
        answered |= value.get("id") == Some(&serde_json::json!(1)) && value.get("method").is_none();
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
