use super::{Garbage, Inbound, Outcome, classify, is_integer_token, pending_key};
use crate::{ErrorObject, Profile};

/// A short, comparable description of how a frame was classified.
fn kind(frame: &str, profile: Profile) -> String {
    match classify(frame, profile) {
        Err(Garbage::NotAnObject(_)) => "garbage".into(),
        Err(Garbage::DuplicateMember) => "garbage:duplicate".into(),
        Ok(Inbound::Request { id, method, params }) => {
            format!("request {id} {method} {}", params.map_or("-", |p| p.get()))
        }
        Ok(Inbound::Notification { method, params }) => {
            format!("notification {method} {}", params.map_or("-", |p| p.get()))
        }
        Ok(Inbound::Response {
            id,
            outcome: Outcome::Result(r),
        }) => format!("result {id} {}", r.get()),
        Ok(Inbound::Response {
            id,
            outcome: Outcome::Error(e),
        }) => format!("error {id} {}", e.code),
        Ok(Inbound::BadResponse { id, .. }) => format!("bad-response {id}"),
        Ok(Inbound::Reject { id, error }) => {
            assert_eq!(error.code, ErrorObject::INVALID_REQUEST);
            format!("reject {}", id.map_or("null".into(), |id| id.to_string()))
        }
        Ok(Inbound::Drop { .. }) => "drop".into(),
    }
}

fn check(cases: &[(&str, &str, &str)]) {
    for (frame, strict, lenient) in cases {
        assert_eq!(&kind(frame, Profile::Strict), strict, "strict: {frame}");
        assert_eq!(&kind(frame, Profile::Lenient), lenient, "lenient: {frame}");
    }
}

#[test]
fn well_formed_messages() {
    check(&[
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"a/b","params":{"x":1}}"#,
            r#"request 1 a/b {"x":1}"#,
            r#"request 1 a/b {"x":1}"#,
        ),
        (
            r#"{"jsonrpc":"2.0","id":"s","method":"m"}"#,
            r#"request "s" m -"#,
            r#"request "s" m -"#,
        ),
        (
            r#"{"jsonrpc":"2.0","method":"n","params":{}}"#,
            "notification n {}",
            "notification n {}",
        ),
        (
            r#"{"jsonrpc":"2.0","id":3,"result":[1, 2]}"#,
            "result 3 [1, 2]",
            "result 3 [1, 2]",
        ),
        (
            r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32000,"message":"m","data":{"reason":"x"}}}"#,
            "error 4 -32000",
            "error 4 -32000",
        ),
        // Unknown envelope members are tolerated.
        (
            r#"{"jsonrpc":"2.0","id":5,"method":"m","extra":true}"#,
            "request 5 m -",
            "request 5 m -",
        ),
        // An escaped method name is decoded.
        (
            r#"{"jsonrpc":"2.0","method":"a\/b"}"#,
            "notification a/b -",
            "notification a/b -",
        ),
    ]);
}

#[test]
fn ids_are_kept_verbatim() {
    check(&[
        (
            r#"{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"m"}"#,
            "request 123456789012345678901234567890 m -",
            "request 123456789012345678901234567890 m -",
        ),
        (
            r#"{"jsonrpc":"2.0","id":-0,"method":"m"}"#,
            "request -0 m -",
            "request -0 m -",
        ),
        (
            r#"{"jsonrpc":"2.0","id":"\u0041","method":"m"}"#,
            r#"request "\u0041" m -"#,
            r#"request "\u0041" m -"#,
        ),
    ]);
}

#[test]
fn invalid_request_ids_are_answered_with_null() {
    check(&[
        (
            r#"{"jsonrpc":"2.0","id":null,"method":"m"}"#,
            "reject null",
            "reject null",
        ),
        (
            r#"{"jsonrpc":"2.0","id":true,"method":"m"}"#,
            "reject null",
            "reject null",
        ),
        (
            r#"{"jsonrpc":"2.0","id":[1],"method":"m"}"#,
            "reject null",
            "reject null",
        ),
        (
            r#"{"jsonrpc":"2.0","id":{"a":1},"method":"m"}"#,
            "reject null",
            "reject null",
        ),
        // Fractions and exponents: invalid in the strict profile, echoed in the lenient one.
        (
            r#"{"jsonrpc":"2.0","id":1.5,"method":"m"}"#,
            "reject null",
            "request 1.5 m -",
        ),
        (
            r#"{"jsonrpc":"2.0","id":1e3,"method":"m"}"#,
            "reject null",
            "request 1e3 m -",
        ),
        (
            r#"{"jsonrpc":"2.0","id":01,"method":"m"}"#,
            "garbage",
            "garbage",
        ),
    ]);
}

#[test]
fn malformed_requests_echo_their_id() {
    check(&[
        (r#"{"id":7,"method":"m"}"#, "reject 7", "reject 7"),
        (
            r#"{"jsonrpc":"1.0","id":7,"method":"m"}"#,
            "reject 7",
            "reject 7",
        ),
        (
            r#"{"jsonrpc":"2.0","id":7,"method":5}"#,
            "reject 7",
            "reject 7",
        ),
        (
            r#"{"jsonrpc":"2.0","id":7,"method":"m","params":[1]}"#,
            "reject 7",
            "request 7 m [1]",
        ),
        (
            r#"{"jsonrpc":"2.0","id":7,"method":"m","params":"x"}"#,
            "reject 7",
            "reject 7",
        ),
        (
            r#"{"jsonrpc":"2.0","id":7,"method":"m","params":null}"#,
            "reject 7",
            "reject 7",
        ),
        (
            r#"{"jsonrpc":"2.0","id":7,"method":"m","result":1}"#,
            "reject 7",
            "reject 7",
        ),
        (
            r#"{"jsonrpc":"2.0","id":7,"method":"m","error":{}}"#,
            "reject 7",
            "reject 7",
        ),
    ]);
}

#[test]
fn malformed_messages_without_id_are_dropped() {
    check(&[
        (r#"{"method":"n"}"#, "drop", "drop"),
        (r#"{"jsonrpc":"2.0","method":3}"#, "drop", "drop"),
        (
            r#"{"jsonrpc":"2.0","method":"n","params":"x"}"#,
            "drop",
            "drop",
        ),
        (
            r#"{"jsonrpc":"2.0","method":"n","result":1}"#,
            "drop",
            "drop",
        ),
        (r#"{"jsonrpc":"2.0"}"#, "drop", "drop"),
        (r#"{}"#, "drop", "drop"),
    ]);
}

#[test]
fn malformed_responses_fail_their_request() {
    check(&[
        (r#"{"id":3,"result":1}"#, "bad-response 3", "bad-response 3"),
        (
            r#"{"jsonrpc":"2.0","id":3}"#,
            "bad-response 3",
            "bad-response 3",
        ),
        (
            r#"{"jsonrpc":"2.0","id":3,"result":1,"error":{"code":1,"message":"m"}}"#,
            "bad-response 3",
            "bad-response 3",
        ),
        (
            r#"{"jsonrpc":"2.0","id":3,"error":{"code":"x","message":"m"}}"#,
            "bad-response 3",
            "bad-response 3",
        ),
        (
            r#"{"jsonrpc":"2.0","id":3,"error":{"code":1.5,"message":"m"}}"#,
            "bad-response 3",
            "bad-response 3",
        ),
        (
            r#"{"jsonrpc":"2.0","id":3,"error":{"code":1}}"#,
            "bad-response 3",
            "bad-response 3",
        ),
    ]);
}

#[test]
fn non_objects_and_repeated_members_are_garbage() {
    check(&[
        ("", "garbage", "garbage"),
        ("   ", "garbage", "garbage"),
        ("not json", "garbage", "garbage"),
        ("42", "garbage", "garbage"),
        ("\"s\"", "garbage", "garbage"),
        ("null", "garbage", "garbage"),
        (r#"{"jsonrpc":"2.0"} trailing"#, "garbage", "garbage"),
        ("\u{feff}{}", "garbage", "garbage"),
        (
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"m"}"#,
            "garbage:duplicate",
            "request 2 m -",
        ),
        (
            r#"{"jsonrpc":"2.0","x":1,"x":2,"method":"n"}"#,
            "garbage:duplicate",
            "notification n -",
        ),
        // Names are compared unescaped, whether they are read in place or copied.
        (
            r#"{"jsonrpc":"2.0","\u0069d":1,"id":2,"method":"m"}"#,
            "garbage:duplicate",
            "request 2 m -",
        ),
        (
            r#"{"jsonrpc":"2.0","\u0078":1,"x":2,"method":"n"}"#,
            "garbage:duplicate",
            "notification n -",
        ),
        (
            r#"{"jsonrpc":"2.0","m\u0065thod":"n","x":1}"#,
            "notification n -",
            "notification n -",
        ),
    ]);
}

#[test]
fn integer_tokens() {
    for ok in ["0", "-0", "7", "-12", "123456789012345678901234567890"] {
        assert!(is_integer_token(ok), "{ok}");
    }
    for bad in ["", "-", "01", "1.0", "1e3", "+1", "1 ", "--1"] {
        assert!(!is_integer_token(bad), "{bad}");
    }
    assert_eq!(pending_key("17"), Some(17));
    assert_eq!(pending_key("\"17\""), None);
    assert_eq!(pending_key("-1"), None);
}
