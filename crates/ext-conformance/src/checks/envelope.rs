//! The envelope rules on one ready connection (spec §2.2, §2.3, §4, §6.5, §8): CR before LF,
//! repeated params members, `jsonrpc`, ids (echoed byte for byte, or `null`), notifications
//! that must produce nothing, unknown and wrong-direction methods, the UI methods without a UI
//! handler, strict params decoding, a second initialize, the `continue` of a point without a
//! handler, and events that are never answered.

use serde_json::{Value, json};
use sidewire_ext_protocol::{Capability, HookPoint, Reason};

use super::super::report::Findings;
use super::super::session::{
    Checked, Ctx, GENERATION, Msg, SESSION_ID, Session, UNKNOWN_METHOD, short,
};
use super::{ready, sample_payload, unsubscribed_point};

const IDS: &[&str] = &[
    "6", "7", "8", "9", "10", "12", "13", "14", "20", "32", "49", "S-events",
];

pub(super) async fn run(ctx: &Ctx) -> Findings {
    let mut s = match ready(ctx, IDS).await {
        Ok(s) => s,
        Err(findings) => return findings,
    };
    // Each step fails only its own statement; a step that cannot even write ends the run of
    // this group (the process is gone).
    let steps: [(&'static str, Step); 12] = [
        ("6", cr_before_lf),
        ("7", repeated_params_member),
        ("8", missing_jsonrpc),
        ("9", odd_ids),
        ("10", string_id),
        ("12", silent_notifications),
        ("13", unknown_methods),
        ("14", ui_without_handler),
        ("20", strict_params),
        ("32", second_initialize),
        ("49", no_handler_continues),
        // Last: a sidecar that answers events wrongly enough may break the connection.
        ("S-events", events),
    ];
    let ids: Vec<&'static str> = steps.iter().map(|(id, _)| *id).collect();
    for (at, (id, step)) in steps.into_iter().enumerate() {
        s.mark();
        let checked = step(&mut s).await.unwrap_or_else(Checked::Fail);
        s.record(id, checked);
        // Whatever a step provoked must be read before the next one starts.
        if let Err(why) = s.sync().await {
            // This step broke the connection; the steps after it cannot run.
            s.fail(id, format!("the connection broke: {why}"));
            for later in &ids[at + 1..] {
                s.fail(
                    later,
                    format!("not run: the connection broke during the check of {id}: {why}"),
                );
            }
            return s.finish();
        }
    }
    s.finish()
}

type StepFuture<'a> =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<Checked, String>> + Send + 'a>>;
type Step = for<'a, 'c> fn(&'a mut Session<'c>) -> StepFuture<'a>;

macro_rules! step {
    ($name:ident, |$s:ident| $body:block) => {
        fn $name<'a, 'c>($s: &'a mut Session<'c>) -> StepFuture<'a> {
            Box::pin(async move $body)
        }
    };
}

/// Sends `frame` (raw bytes, LF added) and waits for the response whose id is written `id`.
async fn raw(s: &mut Session<'_>, frame: &str, id: &str) -> Result<Msg, String> {
    let mut bytes = frame.as_bytes().to_vec();
    bytes.push(b'\n');
    s.send_raw(&bytes).await?;
    s.response(id).await
}

/// An intercept's params at a point with a valid payload, as a JSON text fragment.
fn intercept_params(point: HookPoint) -> Value {
    json!({
        "event": point.as_str(),
        "seq": 1,
        "payload": sample_payload(point, 0),
        "timeoutMillis": 5000,
    })
}

fn expect(msg: &Msg, reason: Reason, what: &str) -> Option<String> {
    (!msg.is_error(reason)).then(|| {
        format!(
            "{what} was answered with {} instead of {} ({})",
            msg.describe(),
            reason.code(),
            reason.as_str()
        )
    })
}

step!(cr_before_lf, |s| {
    let msg = raw(
        s,
        &format!("{{\"jsonrpc\":\"2.0\",\"id\":90,\"method\":\"{UNKNOWN_METHOD}\"}}\r"),
        "90",
    )
    .await
    .map_err(|why| format!("a frame ending in CR LF: {why}"))?;
    let _ = msg;
    Ok(Checked::Pass)
});

step!(repeated_params_member, |s| {
    let frame = "{\"jsonrpc\":\"2.0\",\"id\":91,\"method\":\"extension/intercept\",\"params\":{\"event\":\"input.receive\",\"seq\":1,\"seq\":2,\"payload\":{\"text\":\"x\"},\"timeoutMillis\":5000}}";
    let msg = raw(s, frame, "91").await?;
    Ok(expect(&msg, Reason::InvalidParams, "params repeating `seq`").into())
});

step!(missing_jsonrpc, |s| {
    let params = intercept_params(HookPoint::InputReceive);
    let frames = [
        (
            format!("{{\"id\":92,\"method\":\"{UNKNOWN_METHOD}\"}}"),
            "92",
            "a request without jsonrpc",
        ),
        (
            format!(
                "{{\"jsonrpc\":\"1.0\",\"id\":93,\"method\":\"extension/intercept\",\"params\":{params}}}"
            ),
            "93",
            "a request with \"jsonrpc\":\"1.0\"",
        ),
    ];
    for (frame, id, what) in frames {
        let msg = raw(s, &frame, id).await?;
        if let Some(failure) = expect(&msg, Reason::ProtocolError, what) {
            return Ok(Checked::Fail(failure));
        }
    }
    Ok(Checked::Pass)
});

step!(odd_ids, |s| {
    for id in ["{\"a\":1}", "1.0", "1e3"] {
        let frame = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"{UNKNOWN_METHOD}\"}}");
        let msg = raw(s, &frame, "null")
            .await
            .map_err(|why| format!("a request with id {id}: {why}"))?;
        if let Some(failure) = expect(
            &msg,
            Reason::ProtocolError,
            &format!("a request with id {id}"),
        ) {
            return Ok(Checked::Fail(failure));
        }
    }
    for id in ["-5", "0", "18446744073709551616"] {
        let frame = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"{UNKNOWN_METHOD}\"}}");
        if let Err(why) = raw(s, &frame, id).await {
            return Ok(Checked::Fail(format!(
                "the id {id} was not echoed byte for byte: {why}"
            )));
        }
    }
    let frame = "{\"jsonrpc\":\"2.0\",\"id\":94,\"method\":\"extension/intercept\",\"params\":[1]}";
    let msg = raw(s, frame, "94").await?;
    Ok(expect(&msg, Reason::ProtocolError, "a request with array params").into())
});

step!(string_id, |s| {
    let id = "\"conformance-\u{e9}-\u{65e5}-1\"";
    let frame = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"{UNKNOWN_METHOD}\"}}");
    match raw(s, &frame, id).await {
        Ok(_) => Ok(Checked::Pass),
        Err(why) => Ok(Checked::Fail(format!(
            "the string id {id} was not echoed byte for byte: {why}"
        ))),
    }
});

step!(silent_notifications, |s| {
    let frames = [
        format!("{{\"jsonrpc\":\"2.0\",\"method\":\"{UNKNOWN_METHOD}\",\"params\":{{}}}}"),
        "{\"jsonrpc\":\"2.0\",\"method\":\"extension/event\",\"params\":{\"event\":\"no.such.point\"}}".to_owned(),
        "{\"jsonrpc\":\"1.0\",\"method\":\"extension/event\"}".to_owned(),
        "{\"jsonrpc\":\"2.0\",\"method\":\"extension/intercept\",\"params\":{}}".to_owned(),
        "{\"jsonrpc\":\"2.0\",\"method\":\"extension/shutdown\",\"params\":{\"timeoutMillis\":5000}}".to_owned(),
        "{\"jsonrpc\":\"2.0\",\"id\":987654,\"result\":{}}".to_owned(),
        "{\"jsonrpc\":\"2.0\",\"id\":\"no-such-request\",\"error\":{\"code\":-32603,\"message\":\"x\"}}".to_owned(),
    ];
    for frame in &frames {
        let mut bytes = frame.as_bytes().to_vec();
        bytes.push(b'\n');
        s.send_raw(&bytes).await?;
    }
    let strays = s
        .sync()
        .await
        .map_err(|why| format!("after notifications and unknown responses: {why}"))?;
    Ok(strays
        .first()
        .map(|msg| {
            format!(
                "a notification or an unknown response was answered with {}",
                msg.describe()
            )
        })
        .into())
});

step!(unknown_methods, |s| {
    let frames = [
        (UNKNOWN_METHOD, json!({"x": 1}), "an unregistered method"),
        (
            "host/ui/publish",
            json!({}),
            "a host→extension request of the other direction (host/ui/publish)",
        ),
        (
            "extension/initialized",
            json!({}),
            "a notification-only method sent as a request (extension/initialized)",
        ),
        (
            "extension/event",
            json!({"bad": true}),
            "a notification-only method with invalid params (extension/event)",
        ),
        (
            "extension/provider/stream/chunk",
            json!({}),
            "a notification-only method (extension/provider/stream/chunk)",
        ),
    ];
    for (method, params, what) in frames {
        let msg = s.call(method, params).await?;
        if let Some(failure) = expect(&msg, Reason::UnknownMethod, what) {
            return Ok(Checked::Fail(failure));
        }
    }
    Ok(Checked::Pass)
});

step!(ui_without_handler, |s| {
    if s.ctx.has(Capability::Ui) {
        return Ok(Checked::NotApplicable(
            "the manifest declares capability ui, so the sidecar may have a UI handler".to_owned(),
        ));
    }
    for method in ["extension/ui/action", "extension/ui/submit"] {
        let msg = s.call(method, json!({"bad": true})).await?;
        if let Some(failure) = expect(
            &msg,
            Reason::UnknownMethod,
            &format!("{method} with invalid params"),
        ) {
            return Ok(Checked::Fail(failure));
        }
    }
    Ok(Checked::Pass)
});

step!(strict_params, |s| {
    let good = intercept_params(HookPoint::InputReceive);
    let mut variants = Vec::new();
    let mut unknown = good.clone();
    unknown["conformanceExtra"] = json!(1);
    variants.push((unknown, "an unknown member"));
    let mut missing = good.clone();
    missing.as_object_mut().expect("an object").remove("seq");
    variants.push((missing, "a missing `seq`"));
    let mut null = good.clone();
    null["timeoutMillis"] = Value::Null;
    variants.push((null, "`timeoutMillis` null"));
    let mut fractional = good.clone();
    fractional["seq"] = json!(1.5);
    variants.push((fractional, "`seq` 1.5"));
    let mut null_payload = good.clone();
    null_payload["payload"] = Value::Null;
    variants.push((null_payload, "`payload` null without a descriptor"));
    for (params, what) in variants {
        let msg = s.call("extension/intercept", params).await?;
        if let Some(failure) = expect(
            &msg,
            Reason::InvalidParams,
            &format!("intercept params with {what}"),
        ) {
            return Ok(Checked::Fail(failure));
        }
    }
    Ok(Checked::Pass)
});

step!(second_initialize, |s| {
    let params = s.ctx.initialize_params();
    let msg = s.call("extension/initialize", params).await?;
    Ok(expect(
        &msg,
        Reason::ProtocolError,
        "a second extension/initialize in state ready",
    )
    .into())
});

step!(events, |s| {
    let mut points = s.subscribed();
    if points.is_empty() {
        points.push(HookPoint::InputReceive);
    }
    for point in points {
        let frame = json!({"jsonrpc": "2.0", "method": "extension/event", "params": {"event": point.as_str(), "payload": sample_payload(point, 0)}});
        s.send(&frame).await?;
        let bad = json!({"jsonrpc": "2.0", "method": "extension/event", "params": {"event": point.as_str(), "payload": {"conformanceExtra": true}}});
        s.send(&bad).await?;
    }
    s.send(&json!({"jsonrpc": "2.0", "method": "extension/resources/changed", "params": {"paths": ["/tmp/conformance/skills/a.md"]}}))
        .await?;
    s.send(&json!({"jsonrpc": "2.0", "method": "extension/resources/changed", "params": {"paths": []}}))
        .await?;
    let strays = s.sync().await?;
    Ok(strays
        .first()
        .map(|msg| format!("an event was answered with {}", msg.describe()))
        .into())
});

// Item 49, second half: an intercept for a point without a handler is answered `continue`.
step!(no_handler_continues, |s| {
    let Some(point) = unsubscribed_point(s) else {
        return Ok(Checked::NotApplicable(
            "the sidecar subscribes to every point".to_owned(),
        ));
    };
    let params = json!({
        "event": point.as_str(),
        "seq": 1,
        "payload": sample_payload(point, 0),
        "timeoutMillis": 5000,
    });
    let msg = s.call("extension/intercept", params).await?;
    let decision = msg
        .result()
        .and_then(|r| r.get("decision"))
        .and_then(Value::as_str);
    Ok((decision != Some("continue"))
        .then(|| {
            format!(
                "an intercept at {} (no subscription) was answered with {}",
                point.as_str(),
                msg.result().map_or_else(|| msg.describe(), short)
            )
        })
        .into())
});

// The UI action params the host would send, for the intercept group.
pub(super) fn ui_action_params(action_id: &str) -> Value {
    json!({"actionId": action_id, "sessionId": SESSION_ID, "generation": GENERATION})
}
