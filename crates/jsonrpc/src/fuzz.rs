//! Invariant checks behind the `jsonrpc_message` fuzz target and the message proptests.
//!
//! Kept in the library so it compiles with every build; the fuzz target is a one-line call.
//! Not a public API: hidden from the docs and free to change.

use bytes::BytesMut;
use serde_json::value::RawValue;

use crate::envelope::{Garbage, Inbound, Outcome, classify};
use crate::message::{encode_error, encode_notification, encode_request, encode_result};
use crate::{ErrorObject, Id, Profile};

/// A classification reduced to comparable owned data.
#[derive(Debug, PartialEq)]
pub enum Parsed {
    /// Not a message.
    Garbage,
    /// A request.
    Request {
        /// The id's wire form.
        id: String,
        /// The method.
        method: String,
        /// The params' text.
        params: Option<String>,
    },
    /// A notification.
    Notification {
        /// The method.
        method: String,
        /// The params' text.
        params: Option<String>,
    },
    /// A success response.
    Result {
        /// The id token.
        id: String,
        /// The result's text.
        result: String,
    },
    /// An error response.
    Error {
        /// The id token.
        id: String,
        /// The error object.
        error: ErrorObject,
    },
    /// Anything answered with an error, failed, or dropped.
    Other,
}

/// Classifies a frame into comparable data.
pub fn parse(frame: &str, profile: Profile) -> Parsed {
    let text = |raw: Option<&RawValue>| raw.map(|r| r.get().to_owned());
    match classify(frame, profile) {
        Err(Garbage::NotAnObject(_) | Garbage::DuplicateMember) => Parsed::Garbage,
        Ok(Inbound::Request { id, method, params }) => Parsed::Request {
            id: id.to_json().into_owned(),
            method: method.into_owned(),
            params: text(params),
        },
        Ok(Inbound::Notification { method, params }) => Parsed::Notification {
            method: method.into_owned(),
            params: text(params),
        },
        Ok(Inbound::Response {
            id,
            outcome: Outcome::Result(result),
        }) => Parsed::Result {
            id: id.to_owned(),
            result: result.get().to_owned(),
        },
        Ok(Inbound::Response {
            id,
            outcome: Outcome::Error(error),
        }) => Parsed::Error {
            id: id.to_owned(),
            error,
        },
        Ok(Inbound::BadResponse { .. } | Inbound::Reject { .. } | Inbound::Drop { .. }) => {
            Parsed::Other
        }
    }
}

/// Encodes a parsed message again with this crate's encoders (`None` for kinds that have no
/// encoding of their own, or when a raw value cannot be re-emitted on one line).
pub fn encode(parsed: &Parsed) -> Option<String> {
    let mut dst = BytesMut::new();
    let limit = usize::MAX;
    let raw = |text: &Option<String>| -> Option<Box<RawValue>> {
        text.as_ref()
            .map(|t| RawValue::from_string(t.clone()).expect("it was a raw value"))
    };
    let written = match parsed {
        Parsed::Request { id, method, params } => {
            let params = raw(params);
            encode_request(
                &mut dst,
                limit,
                &Id::from_token(id),
                method,
                params.as_deref(),
            )
        }
        Parsed::Notification { method, params } => {
            let params = raw(params);
            encode_notification(&mut dst, limit, method, params.as_deref())
        }
        Parsed::Result { id, result } => {
            let result = RawValue::from_string(result.clone()).expect("it was a raw value");
            encode_result(&mut dst, limit, &Id::from_token(id), &*result)
        }
        Parsed::Error { id, error } => {
            encode_error(&mut dst, limit, Some(&Id::from_token(id)), error)
        }
        Parsed::Garbage | Parsed::Other => return None,
    };
    written.ok()?;
    Some(String::from_utf8(dst.to_vec()).expect("encoders write UTF-8"))
}

/// The envelope parser's invariants for arbitrary bytes: no panic under either profile, and a
/// well-formed message parses, re-encodes and parses again to the same thing.
pub fn message(data: &[u8]) {
    let Ok(frame) = std::str::from_utf8(data) else {
        return;
    };
    for profile in [Profile::Strict, Profile::Lenient] {
        let parsed = parse(frame, profile);
        if let Some(again) = encode(&parsed) {
            assert_eq!(
                parse(&again, profile),
                parsed,
                "re-encoding changed {frame:?}"
            );
            // Our own encoding is stable: encoding it again gives the same bytes.
            assert_eq!(
                encode(&parse(&again, profile)).as_deref(),
                Some(again.as_str())
            );
        }
    }
}
