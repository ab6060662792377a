//! The handshake and the state machine (spec §6.1, §6.2, §6.5, §7.2): the version checks each on
//! a fresh process (answer, then exit non-zero on its own), requests in the states `new`,
//! `handshake`, `ready` and `shutdown`, and a handshake against a narrower manifest than the
//! sidecar's own.

use serde_json::{Value, json};
use sidewire_ext_protocol::{PROTOCOL_ID, Reason, decode_initialize_result_in};

use super::super::report::Findings;
use super::super::session::{Checked, Ctx, Session, UNKNOWN_METHOD};
use super::framing::tail_of;
use super::{bare, ready, sample_payload};

/// Items 13 and 32: what each state serves.
pub(super) async fn states(ctx: &Ctx) -> Findings {
    let mut s = match bare(ctx, &["13", "32"]) {
        Ok(s) => s,
        Err(findings) => return findings,
    };
    // The kit drives the states by hand: nothing the sidecar writes is a barrier violation.
    s.set_ready();
    let intercept = json!({
        "event": "input.receive",
        "seq": 1,
        "payload": sample_payload(sidewire_ext_protocol::HookPoint::InputReceive, 0),
        "timeoutMillis": 5000,
    });
    let mut unknown = Vec::new();
    let mut protocol = Vec::new();
    let mut probe = async |s: &mut Session<'_>, state: &str| -> Result<(), String> {
        s.mark();
        // In state `new` the sidecar may still be starting.
        let msg = if state == "new" {
            s.call_starting(UNKNOWN_METHOD, json!({})).await?
        } else {
            s.call(UNKNOWN_METHOD, json!({})).await?
        };
        if !msg.is_error(Reason::UnknownMethod) {
            unknown.push(format!(
                "in state {state} an unregistered method was answered with {}",
                msg.describe()
            ));
        }
        if state != "ready" {
            let msg = s.call("extension/intercept", intercept.clone()).await?;
            if !msg.is_error(Reason::ProtocolError) {
                protocol.push(format!(
                    "in state {state} extension/intercept was answered with {} instead of protocol_error",
                    msg.describe()
                ));
            }
        }
        Ok(())
    };
    let result: Result<(), String> = async {
        probe(&mut s, "new").await?;
        let params = s.ctx.initialize_params();
        let answer = s.initialize(params).await?;
        if answer.result().is_none() {
            return Err(format!(
                "extension/initialize was answered with {}",
                answer.describe()
            ));
        }
        probe(&mut s, "handshake").await?;
        s.send(&json!({"jsonrpc": "2.0", "method": "extension/initialized", "params": {}}))
            .await?;
        probe(&mut s, "ready").await?;
        let answer = s
            .call("extension/shutdown", json!({"timeoutMillis": 5000}))
            .await?;
        if answer.result().is_none() {
            return Err(format!(
                "extension/shutdown was answered with {}",
                answer.describe()
            ));
        }
        probe(&mut s, "shutdown").await
    }
    .await;
    match result {
        Err(why) => {
            s.fail("13", why.clone());
            s.fail("32", why);
        }
        Ok(()) => {
            s.verdict("13", unknown.first().cloned());
            s.verdict("32", protocol.first().cloned());
        }
    }
    s.finish()
}

/// One version case: the initialize params to change, the reason expected, the statement.
struct Case {
    id: &'static str,
    what: &'static str,
    reason: Reason,
    change: fn(&mut Value),
    /// Whether the exit must follow (every error answer to initialize; item 20 checks only the
    /// reason).
    exit: bool,
}

fn set(params: &mut Value, key: &str, value: Value) {
    params[key] = value;
}

fn remove(params: &mut Value, key: &str) {
    params.as_object_mut().expect("an object").remove(key);
}

const CASES: &[Case] = &[
    Case {
        id: "22",
        what: "protocolId reasonix.extension.v2",
        reason: Reason::UnsupportedVersion,
        change: |p| set(p, "protocolId", json!("reasonix.extension.v2")),
        exit: true,
    },
    Case {
        id: "23",
        what: "protocolVersion \"2\"",
        reason: Reason::UnsupportedVersion,
        change: |p| set(p, "protocolVersion", json!("2")),
        exit: true,
    },
    Case {
        id: "23",
        what: "protocolVersion \"0\"",
        reason: Reason::UnsupportedVersion,
        change: |p| set(p, "protocolVersion", json!("0")),
        exit: true,
    },
    Case {
        id: "23",
        what: "no protocolId",
        reason: Reason::UnsupportedVersion,
        change: |p| remove(p, "protocolId"),
        exit: true,
    },
    Case {
        id: "23",
        what: "protocolVersion \"x\"",
        reason: Reason::ProtocolError,
        change: |p| set(p, "protocolVersion", json!("x")),
        exit: true,
    },
    Case {
        id: "23",
        what: "protocolVersion \"\"",
        reason: Reason::ProtocolError,
        change: |p| set(p, "protocolVersion", json!("")),
        exit: true,
    },
    Case {
        id: "23",
        what: "protocolVersion \"01\"",
        reason: Reason::ProtocolError,
        change: |p| set(p, "protocolVersion", json!("01")),
        exit: true,
    },
    Case {
        id: "23",
        what: "protocolVersion 1 (a number)",
        reason: Reason::ProtocolError,
        change: |p| set(p, "protocolVersion", json!(1)),
        exit: true,
    },
    Case {
        id: "23",
        what: "no protocolVersion",
        reason: Reason::ProtocolError,
        change: |p| remove(p, "protocolVersion"),
        exit: true,
    },
    Case {
        id: "24",
        what: "a foreign protocolId and an unknown member",
        reason: Reason::UnsupportedVersion,
        change: |p| {
            set(p, "protocolId", json!("com.example.other.v1"));
            set(p, "conformanceExtra", json!(true));
        },
        exit: true,
    },
    Case {
        id: "20",
        what: "a sessionId of only U+3000",
        reason: Reason::InvalidParams,
        change: |p| p["session"]["sessionId"] = json!("\u{3000}"),
        exit: false,
    },
];

/// Items 20 (the non-empty rule), 22, 23, 24: each case on a fresh process.
pub(super) async fn versions(ctx: &Ctx) -> Findings {
    let runs = CASES.iter().map(|case| version_case(ctx, case));
    let mut findings = Findings::default();
    // The cases run one after another inside this group (the group is one of the parallel
    // units); each process lives only for its case.
    for run in runs {
        findings.extend(run.await);
    }
    findings
}

async fn version_case(ctx: &Ctx, case: &Case) -> Findings {
    let mut s = match bare(ctx, &[case.id]) {
        Ok(s) => s,
        Err(findings) => return findings,
    };
    let mut params = ctx.initialize_params();
    (case.change)(&mut params);
    debug_assert!(params.get("protocolId").is_none_or(|id| id != PROTOCOL_ID) || case.id != "22");
    s.mark();
    let checked = match s.initialize(params).await {
        Err(why) => Checked::Fail(format!("initialize with {}: {why}", case.what)),
        Ok(msg) if !msg.is_error(case.reason) => Checked::Fail(format!(
            "initialize with {} was answered with {} instead of {}",
            case.what,
            msg.describe(),
            case.reason.as_str()
        )),
        Ok(_) if !case.exit => Checked::Pass,
        Ok(_) => exits_non_zero(&mut s, case.what).await,
    };
    s.record(case.id, checked);
    s.finish()
}

/// After the sidecar refused `extension/initialize` with `what`: it must exit, non-zero (§6.5),
/// within the reply timeout. On v2 the kit closes stdin first: the reference SDK stops once its
/// input ends, not when it refuses (its read is not woken; the spec delta's §1.3 says it exits
/// 1, which it does then), and a v2 host kills a refused sidecar anyway (§1.3).
pub(super) async fn exits_non_zero(s: &mut Session<'_>, what: &str) -> Checked {
    if s.ctx.profile == sidewire_ext_protocol::ProtocolProfile::V2 {
        s.close_stdin();
    }
    match s.exit_within(s.ctx.options.reply_timeout).await {
        None => Checked::Fail(format!(
            "after refusing initialize with {what} the sidecar did not exit"
        )),
        Some(exit) if exit.success() => Checked::Fail(format!(
            "after refusing initialize with {what} the sidecar exited 0"
        )),
        Some(_) => Checked::Pass,
    }
}

/// Item 50: against a manifest expectation without intercepts, replaces or capabilities, the
/// handshake claims nothing, and a sidecar that subscribed to something under its own manifest
/// says on stderr that it left handlers out.
pub(super) async fn narrower(ctx: &Ctx) -> Findings {
    // Its full handshake first, to know whether it has handlers at all.
    let full = match ready(ctx, &["50"]).await {
        Ok(s) => s,
        Err(findings) => return findings,
    };
    let claims_something = full.handshake.as_ref().is_some_and(|h| {
        !h.subscriptions.is_empty() || !h.replaces.is_empty() || !h.ui_actions.is_empty()
    });
    let mut findings = full.finish();
    let mut s = match bare(ctx, &["50"]) {
        Ok(s) => s,
        Err(f) => {
            findings.extend(f);
            return findings;
        }
    };
    let mut params = ctx.initialize_params();
    params["manifest"] = json!({});
    s.mark();
    let checked = match s.initialize(params).await {
        Err(why) => Checked::Fail(format!("initialize with an empty manifest: {why}")),
        Ok(msg) => match msg.result() {
            None => Checked::Fail(format!(
                "initialize with an empty manifest was answered with {}",
                msg.describe()
            )),
            Some(result) => match decode_initialize_result_in(&result.to_string(), ctx.profile)
                .map(|r| r.common())
            {
                Err(err) => Checked::Fail(format!("the initialize result: {err}")),
                Ok(r)
                    if !r.subscriptions.is_empty()
                        || !r.replaces.is_empty()
                        || !r.ui_actions.is_empty() =>
                {
                    Checked::Fail(format!(
                        "against a manifest with no intercepts, replaces or capabilities the handshake still claims {}",
                        super::super::session::short(result)
                    ))
                }
                Ok(_) if !claims_something => Checked::Pass,
                Ok(_) => {
                    s.close_stdin();
                    let (_, stderr) = s.finish_within(ctx.options.reply_timeout).await;
                    if stderr.trim().is_empty() {
                        Checked::Fail(
                            "handlers left out of the handshake were not logged on stderr"
                                .to_owned(),
                        )
                    } else {
                        let _ = tail_of(&stderr);
                        Checked::Pass
                    }
                }
            },
        },
    };
    s.record("50", checked);
    findings.extend(s.finish());
    findings
}
