//! The sans-IO half of a Streamable HTTP answer: what a POST's 2xx answer to one of our
//! requests is (its content type and body bytes), decided without any IO, as frames for the
//! protocol layer and a [`Verdict`].
//!
//! The body decides, the content type only chooses how to read it: `text/event-stream` is read
//! event by event ([`event_frame`]), anything else as one whole body ([`decode_body`]). A body
//! that holds the request's response answers it, whatever its declared type. Every valid
//! JSON-RPC message in it (a notification, a server request, a response to another id) is
//! delivered. A body that is empty keeps the request waiting for the GET stream (the spec lets
//! the response come there); any other body, a captive portal's `text/html` page, a non-JSON
//! or truncated body, a notification alone, fails the request at once with an
//! [`Unexpected`] that quotes the content type and the body's first [`QUOTE_BYTES`], control
//! characters escaped, so a mistake is visible rather than a timeout minutes later.

use bytes::Bytes;
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::transport::RequestId;

/// How many bytes of an unexpected body (and of its content type) an error quotes, after
/// escaping.
pub(crate) const QUOTE_BYTES: usize = 200;

/// A response's declared content type, as far as reading its body goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ContentType {
    /// `application/json` (or any `+json` type).
    Json,
    /// `text/event-stream`.
    EventStream,
    /// Something else (`text/html`, ...): the header, sanitised and bounded.
    Other(String),
    /// No `Content-Type` at all.
    Missing,
}

impl ContentType {
    /// The type a `Content-Type` header's bytes name.
    pub(crate) fn parse(header: Option<&[u8]>) -> ContentType {
        let Some(header) = header else {
            return ContentType::Missing;
        };
        let text = String::from_utf8_lossy(header);
        let essence = text
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        if essence == "text/event-stream" {
            ContentType::EventStream
        } else if essence == "application/json" || essence.ends_with("+json") {
            ContentType::Json
        } else {
            ContentType::Other(quote(header))
        }
    }

    /// The type in words, for an error.
    pub(crate) fn describe(&self) -> String {
        match self {
            ContentType::Json => "application/json".to_owned(),
            ContentType::EventStream => "text/event-stream".to_owned(),
            ContentType::Other(text) => text.clone(),
            ContentType::Missing => "none".to_owned(),
        }
    }
}

/// What a whole answer body came to.
#[derive(Debug)]
pub(crate) struct Decoded {
    /// The JSON-RPC messages in it, in order, each no longer than the body.
    pub(crate) frames: Vec<Bytes>,
    pub(crate) verdict: Verdict,
}

/// What a request's POST answer means for the request.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// The response is among the frames.
    Answered,
    /// Nothing in the body: the response may come on the GET stream.
    Empty,
    /// Not the response: fail the request at once.
    Unexpected(Unexpected),
}

/// An answer that was neither the request's response nor empty.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unexpected {
    pub(crate) why: Why,
    /// The declared content type, in words.
    pub(crate) content_type: String,
    /// The body's first bytes, sanitised (see [`quote`]).
    pub(crate) quote: String,
}

/// Why an answer is not the response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Why {
    /// Not JSON at all (an HTML page, plain text).
    NotJson,
    /// JSON, but not a JSON-RPC message.
    NotAMessage,
    /// JSON-RPC messages, none of them the response (a notification alone, another id).
    NoResponse,
    /// The body broke off before it was complete (a short read, JSON cut short).
    Truncated,
    /// Empty, and no GET stream is open to carry the response.
    EmptyWithoutStream,
}

impl Why {
    /// The reason in words.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Why::NotJson => "the body is not JSON",
            Why::NotAMessage => "the body is JSON but not a JSON-RPC message",
            Why::NoResponse => "the body holds no response to this request",
            Why::Truncated => "the body broke off before it was complete",
            Why::EmptyWithoutStream => {
                "the answer is empty and no GET stream is open to carry the response"
            }
        }
    }
}

impl Unexpected {
    pub(crate) fn new(why: Why, content_type: &ContentType, body: &[u8]) -> Self {
        Unexpected {
            why,
            content_type: content_type.describe(),
            quote: quote(body),
        }
    }
}

/// What one JSON value is, as a JSON-RPC message.
enum Shape {
    /// A response (result or error) to the request with this id.
    Response(RequestId),
    /// A request or a notification from the server.
    Message,
    /// Not a JSON-RPC message.
    Not,
}

/// The shape of one JSON value.
fn shape(value: &RawValue) -> Shape {
    #[derive(Deserialize)]
    struct Peek<'a> {
        #[serde(borrow)]
        id: Option<&'a RawValue>,
        #[serde(borrow)]
        method: Option<&'a RawValue>,
        #[serde(borrow)]
        result: Option<&'a RawValue>,
        #[serde(borrow)]
        error: Option<&'a RawValue>,
    }
    match serde_json::from_str::<Peek<'_>>(value.get()) {
        Ok(Peek {
            method: Some(method),
            ..
        }) if method.get().starts_with('"') => Shape::Message,
        Ok(Peek {
            id: Some(id),
            method: None,
            result,
            error,
        }) if result.is_some() || error.is_some() => {
            Shape::Response(RequestId::from_json(id.get()))
        }
        _ => Shape::Not,
    }
}

/// Decides a whole (non-SSE) answer body to the request `want`; `complete` is false when the
/// body broke off before its end.
pub(crate) fn decode_body(
    content_type: &ContentType,
    body: &[u8],
    complete: bool,
    want: &RequestId,
) -> Decoded {
    let trimmed = body.trim_ascii();
    if trimmed.is_empty() {
        let verdict = if complete {
            Verdict::Empty
        } else {
            Verdict::Unexpected(Unexpected::new(Why::Truncated, content_type, body))
        };
        return Decoded {
            frames: Vec::new(),
            verdict,
        };
    }
    let fail = |why| Decoded {
        frames: Vec::new(),
        verdict: Verdict::Unexpected(Unexpected::new(why, content_type, body)),
    };
    // One message, or (as 2025-03-26 allowed) a batch of them.
    let values: Vec<&RawValue> = if trimmed.first() == Some(&b'[') {
        match serde_json::from_slice(trimmed) {
            Ok(values) => values,
            Err(err) => return fail(json_failure(&err, complete)),
        }
    } else {
        match serde_json::from_slice::<&RawValue>(trimmed) {
            Ok(value) => vec![value],
            Err(err) => return fail(json_failure(&err, complete)),
        }
    };
    let mut frames = Vec::with_capacity(values.len());
    let mut answered = false;
    for value in values {
        match shape(value) {
            Shape::Response(id) => answered |= id == *want,
            Shape::Message => {}
            Shape::Not => continue,
        }
        frames.push(Bytes::copy_from_slice(value.get().as_bytes()));
    }
    let verdict = if answered {
        Verdict::Answered
    } else if frames.is_empty() {
        Verdict::Unexpected(Unexpected::new(Why::NotAMessage, content_type, body))
    } else if !complete {
        Verdict::Unexpected(Unexpected::new(Why::Truncated, content_type, body))
    } else {
        Verdict::Unexpected(Unexpected::new(Why::NoResponse, content_type, body))
    };
    Decoded { frames, verdict }
}

/// Why JSON did not parse: cut short (an EOF inside it, or a body that broke off) or not JSON.
fn json_failure(err: &serde_json::Error, complete: bool) -> Why {
    if err.is_eof() || !complete {
        Why::Truncated
    } else {
        Why::NotJson
    }
}

/// What one SSE event's data on a request's stream is.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Event {
    /// No data (a priming event: it only sets the id).
    Skip,
    /// A frame for the protocol layer; `answered` when it is the response to the request.
    Deliver { frame: Bytes, answered: bool },
}

/// Decides one SSE event's data on the stream of the request `want`. A non-message is still
/// delivered: the protocol layer counts and skips what it cannot read, and the stream may yet
/// bring the response.
pub(crate) fn event_frame(data: String, want: &RequestId) -> Event {
    if data.trim().is_empty() {
        return Event::Skip;
    }
    let answered = serde_json::from_str::<&RawValue>(&data)
        .ok()
        .is_some_and(|value| matches!(shape(value), Shape::Response(id) if id == *want));
    Event::Deliver {
        frame: Bytes::from(data),
        answered,
    }
}

/// The first bytes of `bytes` as text that is safe to show: invalid UTF-8 replaced, control
/// and bidirectional-override characters escaped, cut to [`QUOTE_BYTES`] (then
/// `… (N bytes in all)`); see [`crate::text::quote`].
pub(crate) fn quote(bytes: &[u8]) -> String {
    crate::text::quote(bytes, QUOTE_BYTES)
}
