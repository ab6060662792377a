//! Fuzzing the session core's intake: a client's frames through [`wire::parse`] and, when
//! read, through one [`SessionCore`], checked against the state table in `core.rs`'s docs.

use serde_json::{Value, json};

use crate::core::{Offer, Phase, SessionCore, Step};
use crate::era::{self, Era};
use crate::error::{INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR};
use crate::wire::{self, Inbound, MAX_METHOD_BYTES};

/// A frame that is not read but ends the session ([`SessionCore::close`], as `DELETE` or EOF
/// does).
const CLOSE: &[u8] = b"close";

/// Splits `data` on newlines and feeds each frame, in order, to one [`SessionCore::new`] and
/// then to one [`SessionCore::stateless`], with a fixed [`Offer`]; a frame that is exactly
/// `close` closes the core instead.
///
/// Invariants: no panic; a frame [`wire::parse`] refuses is answered with a JSON-RPC error
/// (`-32700` exactly when it is not JSON, else `-32600`) under the frame's id when it had a
/// usable one, else `null`, and `wire::from_value` reads a JSON frame the same way; every
/// [`Step::Answer`] is a JSON object with `jsonrpc: "2.0"`, the request's id and exactly one
/// of `result` and `error` (an object with an integer `code` and a string `message`); each
/// step is the one the state table gives for the phase and the message; the phase only moves
/// along the table (`Fresh` → `Initializing(v)` on an `initialize` answered with `v`,
/// `Initializing(v)` → `Ready(v)` on `notifications/initialized`, never back, `Closed` only
/// through `close()`), and a stateless core never leaves `Fresh` but to close.
pub fn intake(data: &[u8]) {
    let offer = offer();
    for stateless in [false, true] {
        let mut core = if stateless {
            SessionCore::stateless()
        } else {
            SessionCore::new()
        };
        for frame in data.split(|&byte| byte == b'\n') {
            if frame == CLOSE {
                core.close();
                assert_eq!(core.phase(), &Phase::Closed);
                continue;
            }
            let before = core.phase().clone();
            match wire::parse(frame) {
                Err(rejection) => check_rejection(frame, &rejection),
                Ok(message) => {
                    check_inbound(&message);
                    let step = core.step(message.clone(), &offer);
                    check_step(&core, stateless, &before, &message, &step, &offer);
                }
            }
            let after = core.phase();
            assert!(
                moves_along_the_table(&before, after),
                "{before:?} -> {after:?} on {:?}",
                String::from_utf8_lossy(frame)
            );
            if stateless {
                assert!(
                    matches!(after, Phase::Fresh | Phase::Closed),
                    "a stateless core in {after:?}"
                );
            }
        }
    }
}

/// The server the cores answer for.
fn offer() -> Offer {
    Offer {
        info: json!({ "name": "fuzz", "version": "0.0.0" }),
        capabilities: json!({
            "tools": { "listChanged": true },
            "resources": { "subscribe": true },
            "logging": {},
        }),
        instructions: Some("Fuzzing.".to_owned()),
    }
}

/// Whether a message may move a core from `before` to `after`; `close()` is checked where it
/// is called.
fn moves_along_the_table(before: &Phase, after: &Phase) -> bool {
    before == after
        || matches!((before, after), (Phase::Fresh, Phase::Initializing(_)))
        || matches!(
            (before, after),
            (Phase::Initializing(a), Phase::Ready(b)) if a == b
        )
}

fn valid_id(id: &Value) -> bool {
    id.is_string() || id.is_i64() || id.is_u64()
}

fn check_method(method: &str) {
    assert!(!method.is_empty() && method.len() <= MAX_METHOD_BYTES);
}

fn check_rejection(frame: &[u8], rejection: &wire::Rejection) {
    let answer = rejection.to_response();
    let error = check_answer(&answer, &rejection.id).expect_err("a rejection is an error");
    assert_eq!(error["code"], json!(rejection.code));
    match serde_json::from_slice::<Value>(frame) {
        Err(_) => {
            assert_eq!(rejection.code, PARSE_ERROR);
            assert_eq!(rejection.id, Value::Null);
        }
        Ok(value) => {
            assert_eq!(rejection.code, INVALID_REQUEST);
            let sent = value.get("id").filter(|id| valid_id(id));
            assert!(
                rejection.id.is_null() || Some(&rejection.id) == sent,
                "answered under {} for {value}",
                rejection.id
            );
            assert_eq!(
                wire::from_value(value).as_ref(),
                Err(rejection),
                "parse and from_value disagree"
            );
        }
    }
}

fn check_inbound(message: &Inbound) {
    match message {
        Inbound::Request { id, method, .. } => {
            assert!(valid_id(id), "a request's id {id}");
            check_method(method);
        }
        Inbound::Notification { method, .. } => check_method(method),
        Inbound::Response { id, outcome } => {
            assert!(valid_id(id), "a response's id {id}");
            if let Err(error) = outcome {
                assert!(error.is_object());
            }
        }
    }
}

/// Checks a response's envelope; its result, or its error object.
fn check_answer<'a>(answer: &'a Value, id: &Value) -> Result<&'a Value, &'a Value> {
    let object = answer.as_object().expect("an answer is a JSON object");
    assert_eq!(object.get("jsonrpc"), Some(&json!("2.0")), "{answer}");
    assert_eq!(
        object.get("id"),
        Some(id),
        "answered under another id: {answer}"
    );
    assert_eq!(object.len(), 3, "{answer}");
    match (object.get("result"), object.get("error")) {
        (Some(result), None) => Ok(result),
        (None, Some(error)) => {
            let fields = error.as_object().expect("an error is an object");
            assert!(error["code"].is_i64(), "{error}");
            assert!(error["message"].is_string(), "{error}");
            assert!(
                fields
                    .keys()
                    .all(|key| ["code", "message", "data"].contains(&key.as_str())),
                "{error}"
            );
            Err(error)
        }
        _ => panic!("not exactly one of result and error: {answer}"),
    }
}

/// The error code of an error answer; `None` for a result.
fn code_of(outcome: Result<&Value, &Value>) -> Option<i64> {
    outcome
        .err()
        .map(|error| error["code"].as_i64().expect("checked"))
}

fn check_step(
    core: &SessionCore,
    stateless: bool,
    before: &Phase,
    message: &Inbound,
    step: &Step,
    offer: &Offer,
) {
    let after = core.phase();
    let (id, method, params) = match message {
        Inbound::Response { id, outcome } => {
            let reply = Step::Reply {
                id: id.clone(),
                outcome: outcome.clone(),
            };
            assert_eq!(step, &reply);
            assert_eq!(after, before);
            return;
        }
        Inbound::Notification { method, params } => {
            let cancelled = params.get("requestId").filter(|id| valid_id(id));
            match (method.as_str(), cancelled) {
                ("notifications/cancelled", Some(id)) => {
                    assert_eq!(step, &Step::Cancel { id: id.clone() });
                }
                _ => assert_eq!(step, &Step::Nothing),
            }
            match before {
                Phase::Initializing(version) if method == "notifications/initialized" => {
                    assert_eq!(after, &Phase::Ready(version));
                }
                _ => assert_eq!(after, before),
            }
            return;
        }
        Inbound::Request { id, method, params } => (id, method.as_str(), params),
    };
    let modern = params
        .get("_meta")
        .and_then(|meta| meta.get(era::META_VERSION))
        .is_some();
    let handshake = before == &Phase::Fresh && method == "initialize" && after != &Phase::Fresh;
    if !handshake {
        assert_eq!(after, before, "{method} moved the phase");
    }
    let answer = match step {
        Step::Answer(answer) => Some(check_answer(answer, id)),
        Step::Dispatch(call) => {
            assert_eq!(&call.id, id);
            assert_eq!(call.method, method);
            assert_eq!(&call.params, params);
            assert_eq!(call.param_headers, None);
            None
        }
        other => panic!("a request stepped to {other:?}"),
    };
    let dispatched_in = match step {
        Step::Dispatch(call) => Some(call.era),
        _ => None,
    };
    match (before, method) {
        (Phase::Closed, _) => {
            let answer = answer.expect("a closed session answers every request");
            assert_eq!(
                code_of(answer),
                Some(INVALID_REQUEST),
                "{method} when closed"
            );
        }
        (Phase::Fresh, "ping") if !modern => {
            assert_eq!(answer, Some(Ok(&json!({}))));
        }
        (Phase::Fresh, "initialize") if !stateless => {
            match answer.expect("initialize is answered") {
                Ok(result) => {
                    let requested = params.get("protocolVersion").and_then(Value::as_str);
                    let version = era::negotiate(requested);
                    assert_eq!(after, &Phase::Initializing(version));
                    assert!(era::legacy_versions().contains(&version));
                    assert_eq!(result["protocolVersion"], json!(version));
                    assert_eq!(result["capabilities"], offer.capabilities);
                    assert_eq!(result["serverInfo"], offer.info);
                    let instructions = offer.instructions.as_ref().map(|text| json!(text));
                    assert_eq!(result.get("instructions"), instructions.as_ref());
                }
                Err(error) => {
                    assert_eq!(error["code"], json!(INVALID_PARAMS));
                    assert_eq!(after, &Phase::Fresh);
                }
            }
        }
        (Phase::Fresh, _) => match (answer, dispatched_in) {
            (None, Some(Era::Modern(version))) => {
                let named = params["_meta"][era::META_VERSION].as_str();
                assert_eq!(named, Some(version));
                assert!(era::modern_versions().contains(&version));
            }
            (Some(answer), None) => {
                let code = code_of(answer);
                assert!(
                    code == Some(INVALID_PARAMS) || code == Some(era::UNSUPPORTED_PROTOCOL_VERSION),
                    "{method} before initialize answered {answer:?}"
                );
            }
            other => panic!("{method} before initialize: {other:?}"),
        },
        (Phase::Initializing(version) | Phase::Ready(version), _) => match method {
            "ping" => assert_eq!(answer, Some(Ok(&json!({})))),
            "initialize" => {
                assert_eq!(code_of(answer.expect("answered")), Some(INVALID_REQUEST));
            }
            "logging/setLevel" => match answer.expect("answered") {
                Ok(result) => {
                    assert_eq!(result, &json!({}));
                    let level = serde_json::from_value(params["level"].clone()).ok();
                    assert_eq!(core.client().log_level, level);
                }
                Err(error) => assert_eq!(error["code"], json!(INVALID_PARAMS)),
            },
            "resources/subscribe" | "resources/unsubscribe" => match answer.expect("answered") {
                Ok(result) => {
                    assert_eq!(result, &json!({}));
                    let uri = params["uri"].as_str().expect("a uri was read");
                    assert_eq!(core.is_subscribed(uri), method == "resources/subscribe");
                }
                Err(error) => {
                    let code = error["code"].as_i64();
                    assert!(
                        code == Some(INVALID_PARAMS)
                            || (code == Some(INTERNAL_ERROR) && method == "resources/subscribe"),
                        "{error}"
                    );
                }
            },
            _ => assert_eq!(dispatched_in, Some(Era::Legacy(version)), "{method}"),
        },
    }
}

#[cfg(test)]
mod tests {
    /// The committed seeds and every prefix of each pass the checks in every `cargo test`.
    #[test]
    fn the_seeds_and_their_prefixes_hold() {
        let seeds = super::super::seeds("mcp_server_intake");
        assert!(seeds.len() >= 4, "{} seeds", seeds.len());
        for (_, seed) in &seeds {
            for end in 0..=seed.len() {
                super::intake(&seed[..end]);
            }
        }
    }
}
