//! Intercept answers and UI actions (spec §7.5, §7.8, §10): for each subscribed point, an
//! intercept with a valid payload must come back with a decision legal at that point for the
//! caller the sidecar is there (chain member or slot owner), and a `replace` with a replacement
//! valid for the point's DTO; each declared UI action must be answered with a valid
//! `UIActionResult`. UI calls the sidecar makes meanwhile are checked by the session.

use serde_json::json;
use sidewire_ext_protocol::{
    Caller, InterceptResult, ProtocolProfile, Reason, UiActionResult, decode_result, v2,
};

use super::super::report::Findings;
use super::super::session::{Checked, Ctx, Msg, Session};
use super::envelope::ui_action_params;
use super::{ready, sample_payload, timeout_millis};

pub(super) async fn run(ctx: &Ctx) -> Findings {
    let mut s = match ready(ctx, &["S-intercept", "S-ui"]).await {
        Ok(s) => s,
        Err(findings) => return findings,
    };
    let points = s.subscribed();
    if points.is_empty() {
        s.not_applicable("S-intercept", "the handshake subscribes to no point");
    }
    let mut seq = 0;
    for point in points {
        s.mark();
        seq += 1;
        let payload = sample_payload(point, 0);
        let params = json!({
            "event": point.as_str(),
            "seq": seq,
            "payload": payload,
            "timeoutMillis": timeout_millis(ctx, point),
        });
        let checked = match s.call("extension/intercept", params).await {
            Err(why) => Checked::Fail(format!("the intercept at {}: {why}", point.as_str())),
            Ok(msg) => judge(&s, point, &payload, &msg),
        };
        s.record("S-intercept", checked);
    }
    let actions = s
        .handshake
        .as_ref()
        .map(|h| h.ui_actions.clone())
        .unwrap_or_default();
    for action in actions {
        s.mark();
        let checked = match s
            .call("extension/ui/action", ui_action_params(&action.action_id))
            .await
        {
            Err(why) => Checked::Fail(format!("the action {}: {why}", action.action_id)),
            Ok(msg) => match msg.result() {
                Some(result) => decode_result::<UiActionResult>(&result.to_string())
                    .err()
                    .map(|err| {
                        format!(
                            "the action {} was answered with an invalid result: {err}",
                            action.action_id
                        )
                    })
                    .into(),
                None if msg
                    .reason()
                    .and_then(|wire| Reason::parse_in(wire, s.ctx.profile))
                    .is_some() =>
                {
                    Checked::Pass
                }
                None => Checked::Fail(format!(
                    "the action {} was answered with {}",
                    action.action_id,
                    msg.describe()
                )),
            },
        };
        s.record("S-ui", checked);
    }
    // Let a publish made on ready or by an action arrive and be checked.
    let _ = s.sync().await;
    if !s.ctx.has(sidewire_ext_protocol::Capability::Ui) {
        s.not_applicable(
            "S-ui",
            "the manifest does not declare capability ui and the sidecar made no UI call",
        );
    } else {
        s.not_applicable("S-ui", "the sidecar declared no action and made no UI call");
    }
    s.not_applicable("69", "the sidecar sent no host/ui/request during the run");
    s.finish()
}

/// Judges an intercept answer at `point` for a payload the sidecar was sent.
fn judge(
    s: &Session<'_>,
    point: sidewire_ext_protocol::HookPoint,
    payload: &serde_json::Value,
    msg: &Msg,
) -> Checked {
    let Some(result) = msg.result() else {
        // An error answer is a failure for the host's policy, but legal on the wire when its
        // reason is one of §3's (item 15 checks that).
        return if msg
            .reason()
            .and_then(|wire| Reason::parse_in(wire, s.ctx.profile))
            .is_some()
        {
            Checked::Pass
        } else {
            Checked::Fail(format!(
                "the intercept at {} was answered with {}",
                point.as_str(),
                msg.describe()
            ))
        };
    };
    // A v2 answer may externalize its replacement (spec delta §2.9): the decision is judged,
    // the replacement only when inline.
    let decoded: Result<InterceptResult, _> = match s.ctx.profile {
        ProtocolProfile::V2 => {
            decode_result::<v2::InterceptResult>(&result.to_string()).map(|r| InterceptResult {
                decision: r.decision,
                reason: r.reason,
                replacement: r.replacement,
            })
        }
        _ => decode_result(&result.to_string()),
    };
    let decoded: InterceptResult = match decoded {
        Ok(decoded) => decoded,
        Err(err) => {
            return Checked::Fail(format!(
                "the answer at {} does not decode: {err}",
                point.as_str()
            ));
        }
    };
    let caller = if s.owns_slot_at(point) {
        Caller::SlotOwner
    } else {
        Caller::Chain
    };
    let role = match caller {
        Caller::SlotOwner => "the slot owner",
        _ => "a chain member",
    };
    if !point.allows(decoded.decision, caller) {
        return Checked::Fail(format!(
            "{} is not legal at {} for {role}",
            decoded.decision.as_str(),
            point.as_str()
        ));
    }
    if let Some(replacement) = &decoded.replacement {
        let received = point
            .decode_payload(&payload.to_string())
            .expect("the sample payload decodes");
        if let Err(err) = point.validate_replacement(replacement, &received, caller) {
            return Checked::Fail(format!(
                "the replacement at {} is invalid: {err}",
                point.as_str()
            ));
        }
    }
    Checked::Pass
}
