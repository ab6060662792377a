//! The sidecar-side items of the v2 delta's §6 checklist (ids `D<n>`), run on v2 connections:
//! the version pairs (D4, D5), the v2 initialize params (D6), zero timeouts (D9) and tool calls
//! (D15). Stream numbering (D22) is with the provider checks; the v2 reason table (D25) is
//! checked on every error answer of every v2 connection.

use serde_json::{Value, json};
use sidewire_ext_protocol::{ProtocolProfile, Reason, ToolCallResult, decode_result};

use super::super::report::Findings;
use super::super::session::{Checked, Ctx, Msg, Session};
use super::{bare, ready, sample_payload};

/// A name no manifest declares as a tool.
const UNSERVED_TOOL: &str = "conformance-unserved-tool";

/// One initialize case on a fresh process.
struct Case {
    id: &'static str,
    what: &'static str,
    /// The profile of the params the change starts from.
    base: ProtocolProfile,
    change: fn(&mut Value),
    /// What must come back.
    expect: Expect,
}

enum Expect {
    /// A result with this `protocolVersion`.
    Version(&'static str),
    /// A result with this `protocolVersion`, or (a sidecar restricted to another profile)
    /// `unsupported_version` followed by a non-zero exit.
    VersionOrRefused(&'static str),
    /// This error, followed by a non-zero exit.
    Fatal(Reason),
    /// This error (an SDK may keep running after it: the reference does, delta §1.3).
    Error(Reason),
}

const VERSION_CASES: &[Case] = &[
    Case {
        id: "D4",
        what: "the v2 id and \"2\"",
        base: ProtocolProfile::V2,
        change: |_| {},
        expect: Expect::Version("2"),
    },
    Case {
        id: "D4",
        what: "the v1 id and \"1\"",
        base: ProtocolProfile::V1,
        change: |_| {},
        expect: Expect::VersionOrRefused("1"),
    },
    Case {
        id: "D5",
        what: "the v2 id and \"1\"",
        base: ProtocolProfile::V2,
        change: |p| p["protocolVersion"] = json!("1"),
        expect: Expect::Fatal(Reason::UnsupportedVersion),
    },
    Case {
        id: "D5",
        what: "the v1 id and \"2\"",
        base: ProtocolProfile::V1,
        change: |p| p["protocolVersion"] = json!("2"),
        expect: Expect::Fatal(Reason::UnsupportedVersion),
    },
    Case {
        id: "D5",
        what: "a third protocolId",
        base: ProtocolProfile::V2,
        change: |p| p["protocolId"] = json!("com.example.other.v2"),
        expect: Expect::Fatal(Reason::UnsupportedVersion),
    },
];

const PARAMS_CASES: &[Case] = &[
    Case {
        id: "D6",
        what: "every optional member",
        base: ProtocolProfile::V2,
        change: |p| {
            p["session"]["epoch"] = json!("conformance-epoch");
            let manifest = &mut p["manifest"];
            for (key, value) in [
                ("providers", json!(["plugin/conformance/none"])),
                ("uiActions", json!(["conformance-none"])),
                (
                    "requires",
                    json!([{"namespace": "example", "kind": "service", "id": "none",
                            "versionRange": ">=1.0.0", "optional": true}]),
                ),
                (
                    "provides",
                    json!([{"namespace": "plugin/conformance", "kind": "service",
                            "id": "none", "version": "1.0.0", "schemaHash": "sha256:00"}]),
                ),
            ] {
                if manifest.get(key).is_none() {
                    manifest[key] = value;
                }
            }
        },
        expect: Expect::Version("2"),
    },
    Case {
        id: "D6",
        what: "no capabilities.protocolVersion",
        base: ProtocolProfile::V2,
        change: |p| {
            if let Some(capabilities) = p["capabilities"].as_object_mut() {
                capabilities.remove("protocolVersion");
            }
        },
        expect: Expect::Error(Reason::InvalidParams),
    },
    Case {
        id: "D6",
        what: "an unknown member",
        base: ProtocolProfile::V2,
        change: |p| p["conformanceExtra"] = json!(true),
        expect: Expect::Error(Reason::InvalidParams),
    },
];

/// Items D4 and D5: each case on a fresh process.
pub(super) async fn versions(ctx: &Ctx) -> Findings {
    cases(ctx, VERSION_CASES).await
}

/// Item D6: each case on a fresh process. `manifest.tools` is sent only when the manifest
/// declares `runtime.tools` (a host never sends it otherwise, delta §2.2), so it is not one of
/// the optional members added here.
pub(super) async fn params(ctx: &Ctx) -> Findings {
    cases(ctx, PARAMS_CASES).await
}

async fn cases(ctx: &Ctx, cases: &[Case]) -> Findings {
    let mut findings = Findings::default();
    for case in cases {
        findings.extend(one_case(ctx, case).await);
    }
    findings
}

async fn one_case(ctx: &Ctx, case: &Case) -> Findings {
    let mut s = match bare(ctx, &[case.id]) {
        Ok(s) => s,
        Err(findings) => return findings,
    };
    let mut params = ctx.initialize_params_in(case.base);
    (case.change)(&mut params);
    s.mark();
    let checked = match s.initialize(params).await {
        Err(why) => Checked::Fail(format!("initialize with {}: {why}", case.what)),
        Ok(msg) => judge(&mut s, case, &msg).await,
    };
    s.record(case.id, checked);
    s.finish()
}

async fn judge(s: &mut Session<'_>, case: &Case, msg: &Msg) -> Checked {
    let version = msg
        .result()
        .and_then(|r| r.get("protocolVersion"))
        .and_then(Value::as_str);
    let answered = || {
        format!(
            "initialize with {} was answered with {}",
            case.what,
            msg.describe()
        )
    };
    match case.expect {
        Expect::Version(want) if version == Some(want) => Checked::Pass,
        Expect::VersionOrRefused(want) if version == Some(want) => Checked::Pass,
        Expect::VersionOrRefused(_) if msg.is_error(Reason::UnsupportedVersion) => {
            super::lifecycle::exits_non_zero(s, case.what).await
        }
        Expect::Fatal(reason) if msg.is_error(reason) => {
            super::lifecycle::exits_non_zero(s, case.what).await
        }
        Expect::Error(reason) if msg.is_error(reason) => Checked::Pass,
        _ => Checked::Fail(answered()),
    }
}

/// Item D9: `timeoutMillis` 0 (no deadline) is accepted in an intercept and in shutdown.
pub(super) async fn zero_timeouts(ctx: &Ctx) -> Findings {
    const ID: &str = "D9";
    let mut s = match ready(ctx, &[ID]).await {
        Ok(s) => s,
        Err(findings) => return findings,
    };
    s.mark();
    let checked = zero_steps(&mut s).await.unwrap_or_else(Checked::Fail);
    s.record(ID, checked);
    s.finish()
}

async fn zero_steps(s: &mut Session<'_>) -> Result<Checked, String> {
    // Any point: one without a subscription is answered `continue` all the same.
    let point = s
        .subscribed()
        .first()
        .copied()
        .unwrap_or(sidewire_ext_protocol::HookPoint::InputReceive);
    let params = json!({
        "event": point.as_str(),
        "seq": 1,
        "payload": sample_payload(point, 0),
        "timeoutMillis": 0,
    });
    let msg = s.call("extension/intercept", params).await?;
    if msg.result().and_then(|r| r.get("decision")).is_none() {
        return Ok(Checked::Fail(format!(
            "an intercept at {} with timeoutMillis 0 was answered with {}",
            point.as_str(),
            msg.describe()
        )));
    }
    let msg = s
        .call("extension/shutdown", json!({"timeoutMillis": 0}))
        .await?;
    let accepted = msg
        .result()
        .and_then(|r| r.get("accepted"))
        .and_then(Value::as_bool);
    Ok((accepted != Some(true))
        .then(|| {
            format!(
                "extension/shutdown with timeoutMillis 0 was answered with {}",
                msg.describe()
            )
        })
        .into())
}

/// Item D15: tool calls (spec delta §2.5).
pub(super) async fn tools(ctx: &Ctx) -> Findings {
    const ID: &str = "D15";
    let mut s = match ready(ctx, &[ID]).await {
        Ok(s) => s,
        Err(findings) => return findings,
    };
    s.mark();
    let checked = tool_steps(&mut s).await.unwrap_or_else(Checked::Fail);
    s.record(ID, checked);
    s.finish()
}

async fn tool_steps(s: &mut Session<'_>) -> Result<Checked, String> {
    let served = s.tools.clone();
    let mut sorted = served.clone();
    sorted.sort();
    sorted.dedup();
    if sorted != served {
        return Ok(Checked::Fail(format!(
            "the handshake's tools {served:?} are not sorted without duplicates"
        )));
    }
    // An unserved name: `unknown_method`.
    let msg = s
        .call("extension/tool/call", tool_params(UNSERVED_TOOL, json!({})))
        .await?;
    if !msg.is_error(Reason::UnknownMethod) {
        return Ok(Checked::Fail(format!(
            "a call of the unserved tool {UNSERVED_TOOL:?} was answered with {}",
            msg.describe()
        )));
    }
    // Invalid params, refused before any callback runs. A sidecar that serves no tool may not
    // register the method at all (the reference SDK before tools did not): `unknown_method`
    // is then its answer to every call.
    let name = served.first().map_or(UNSERVED_TOOL, String::as_str);
    let mut no_name = tool_params(name, json!({}));
    no_name.as_object_mut().expect("an object").remove("name");
    let mut no_arguments = tool_params(name, json!({}));
    no_arguments
        .as_object_mut()
        .expect("an object")
        .remove("arguments");
    let mut negative = tool_params(name, json!({}));
    negative["timeoutMillis"] = json!(-1);
    for (params, what) in [
        (no_name, "without `name`"),
        (no_arguments, "without `arguments`"),
        (negative, "with timeoutMillis -1"),
    ] {
        let msg = s.call("extension/tool/call", params).await?;
        let unregistered = served.is_empty() && msg.is_error(Reason::UnknownMethod);
        if !msg.is_error(Reason::InvalidParams) && !unregistered {
            return Ok(Checked::Fail(format!(
                "a tool call {what} was answered with {}",
                msg.describe()
            )));
        }
    }
    if served.is_empty() {
        return Ok(Checked::NotApplicable(
            "the sidecar serves no tools; only the refusals were checked".to_owned(),
        ));
    }
    // Served tools are called only when the manifest marks them read-only: the kit never runs
    // a tool that may change something.
    let declared = s.ctx.declared_v2();
    let read_only: Vec<String> = (declared.tools.iter())
        .filter(|tool| tool.read_only && served.contains(&tool.name))
        .map(|tool| tool.name.clone())
        .collect();
    for name in &read_only {
        for arguments in [
            json!({}),
            Value::Null,
            json!([]),
            json!("text"),
            json!(7),
            json!(true),
        ] {
            let msg = s
                .call("extension/tool/call", tool_params(name, arguments.clone()))
                .await?;
            if let Some(failure) = tool_result_failure(&msg) {
                return Ok(Checked::Fail(format!(
                    "a call of {name:?} with arguments {arguments}: {failure}"
                )));
            }
        }
    }
    Ok(Checked::Pass)
}

fn tool_params(name: &str, arguments: Value) -> Value {
    json!({"name": name, "arguments": arguments, "timeoutMillis": 5000})
}

/// Why `msg` is not a `ToolCallResult` (strictly decoded: `content` a string, `isError` a
/// boolean when present, nothing else), or `None`.
fn tool_result_failure(msg: &Msg) -> Option<String> {
    let Some(result) = msg.result() else {
        return Some(format!("answered with {}", msg.describe()));
    };
    decode_result::<ToolCallResult>(&result.to_string())
        .err()
        .map(|err| format!("the result does not decode: {err}"))
}
