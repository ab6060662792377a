//! Externalized payloads (spec §9, §2.3, §2.4, §7.9), on a subscribed point: a payload read
//! back over two pages, descriptor combinations that must be refused, tampered content that
//! must be refused, and, with reads held by the kit, a reused pending id, 32 callbacks waiting
//! at once, and a callback that overruns `timeoutMillis`. Item 19 (slow) holds a read for 30 s.

use std::time::Duration;

use serde_json::{Value, json};
use sidewire_ext_protocol::{CONTENT_CHUNK_BYTES, HookPoint, Reason};
use tokio::time::Instant;

use super::super::report::Findings;
use super::super::session::{Checked, Content, Ctx, Msg, Session, UNKNOWN_METHOD};
use super::{ready, sample_payload, timeout_millis};

const IDS: &[&str] = &["11", "16", "49", "59", "60", "S-content"];

fn skip_all(s: &mut Session<'_>, why: &str) {
    for id in IDS {
        s.not_applicable(id, why.to_owned());
    }
}

pub(super) async fn run(ctx: &Ctx) -> Findings {
    let mut s = match ready(ctx, IDS).await {
        Ok(s) => s,
        Err(findings) => return findings,
    };
    let Some(point) = s.subscribed().first().copied() else {
        skip_all(
            &mut s,
            "the sidecar subscribes to no point, so no callback reads content",
        );
        return s.finish();
    };
    let steps: [(&'static str, Step); 5] = [
        ("60", rehydrated),
        ("59", tampered),
        ("11", reused_pending_id),
        ("16", thirty_two_waiting),
        ("49", overrun),
    ];
    let ids: Vec<&'static str> = steps.iter().map(|(id, _)| *id).collect();
    for (at, (id, step)) in steps.into_iter().enumerate() {
        s.mark();
        let checked = step(&mut s, point).await.unwrap_or_else(Checked::Fail);
        s.record(id, checked);
        // Whatever is still held is answered, and everything provoked read, before going on.
        s.hold_reads = false;
        s.release().await;
        let deadline = Instant::now() + Duration::from_millis(200);
        let _ = s.drain_until(deadline).await;
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

/// Changes a stored object's descriptor and what its pages echo.
type Tamper = Box<dyn FnOnce(&mut Value, &mut Content) + Send>;

type StepFuture<'a> =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<Checked, String>> + Send + 'a>>;
type Step = for<'a, 'c> fn(&'a mut Session<'c>, HookPoint) -> StepFuture<'a>;

/// Intercept params at `point` whose payload is externalized with `descriptor`.
fn params(s: &Session<'_>, point: HookPoint, descriptors: Value, timeout: u64) -> Value {
    let _ = s;
    json!({
        "event": point.as_str(),
        "seq": 1,
        "payload": null,
        "timeoutMillis": timeout,
        "externalized": descriptors,
    })
}

/// Stores `point`'s sample payload (with `pad` filler) and returns its descriptor.
fn store(
    s: &mut Session<'_>,
    point: HookPoint,
    pad: usize,
    tamper: impl FnOnce(&mut Value, &mut Content),
) -> Value {
    let payload = sample_payload(point, pad).to_string().into_bytes();
    s.externalize(payload, tamper)
}

fn rehydrated<'a, 'c>(s: &'a mut Session<'c>, point: HookPoint) -> StepFuture<'a> {
    Box::pin(async move {
        let reads_before = s.content_reads();
        let descriptor = store(s, point, CONTENT_CHUNK_BYTES + 1000, |_, _| {});
        let timeout = timeout_millis(s.ctx, point);
        let msg = s
            .call(
                "extension/intercept",
                params(s, point, json!([descriptor]), timeout),
            )
            .await?;
        let reads = s.content_reads() - reads_before;
        if reads < 2 {
            return Ok(Checked::Fail(format!(
                "a payload of two pages was answered after {reads} content read(s)"
            )));
        }
        if msg.result().is_none() {
            return Ok(Checked::Fail(format!(
                "an externalized payload was answered with {}",
                msg.describe()
            )));
        }
        // Descriptor combinations other than exactly one `/payload` pointer.
        let one = store(s, point, 0, |_, _| {});
        let two = store(s, point, 0, |_, _| {});
        let mut inner = store(s, point, 0, |_, _| {});
        inner["jsonPointer"] = json!("/payload/text");
        let inline = sample_payload(point, 0);
        let variants = [
            (
                params(s, point, json!([one.clone(), two]), timeout),
                "two /payload descriptors",
            ),
            (
                params(s, point, json!([inner]), timeout),
                "a descriptor pointing below /payload",
            ),
            (
                {
                    let mut p = params(s, point, json!([one]), timeout);
                    p["payload"] = inline;
                    p
                },
                "an inline payload plus a descriptor",
            ),
        ];
        for (params, what) in variants {
            let msg = s.call("extension/intercept", params).await?;
            if !msg.is_error(Reason::InvalidParams) {
                return Ok(Checked::Fail(format!(
                    "an intercept with {what} was answered with {} instead of invalid_params",
                    msg.describe()
                )));
            }
        }
        Ok(Checked::Pass)
    })
}

fn tampered<'a, 'c>(s: &'a mut Session<'c>, point: HookPoint) -> StepFuture<'a> {
    Box::pin(async move {
        let timeout = timeout_millis(s.ctx, point);
        let wrong_sha = "0".repeat(64);
        let cases: [(&str, Tamper); 4] = [
            (
                "content whose SHA-256 differs from the descriptor's",
                Box::new({
                    let wrong_sha = wrong_sha.clone();
                    move |d: &mut Value, c: &mut Content| {
                        d["sha256"] = json!(wrong_sha);
                        c.echo_sha = wrong_sha;
                    }
                }),
            ),
            (
                "content shorter than the descriptor's totalBytes",
                Box::new(|d: &mut Value, c: &mut Content| {
                    let total = c.data.len() as u64 + 1;
                    d["totalBytes"] = json!(total);
                    c.echo_total = total;
                }),
            ),
            (
                "a page echoing another totalBytes",
                Box::new(|_: &mut Value, c: &mut Content| c.echo_total += 1),
            ),
            (
                "a page echoing another sha256",
                Box::new(move |_: &mut Value, c: &mut Content| c.echo_sha = wrong_sha),
            ),
        ];
        for (what, tamper) in cases {
            let descriptor = store(s, point, 0, tamper);
            let msg = s
                .call(
                    "extension/intercept",
                    params(s, point, json!([descriptor]), timeout),
                )
                .await?;
            if !msg.is_error(Reason::ProtocolError) {
                return Ok(Checked::Fail(format!(
                    "an intercept whose payload came back as {what} was answered with {} instead of protocol_error",
                    msg.describe()
                )));
            }
        }
        Ok(Checked::Pass)
    })
}

/// Sends an intercept with id `id` whose payload read will be held.
async fn held_intercept(
    s: &mut Session<'_>,
    point: HookPoint,
    id: &str,
    timeout: u64,
) -> Result<(), String> {
    let descriptor = store(s, point, 0, |_, _| {});
    let params = params(s, point, json!([descriptor]), timeout);
    s.send(&json!({"jsonrpc": "2.0", "id": serde_json::from_str::<Value>(id).expect("a JSON id"), "method": "extension/intercept", "params": params}))
        .await
}

fn reused_pending_id<'a, 'c>(s: &'a mut Session<'c>, point: HookPoint) -> StepFuture<'a> {
    Box::pin(async move {
        s.hold_reads = true;
        let timeout = timeout_millis(s.ctx, point);
        held_intercept(s, point, "500", timeout).await?;
        if s.await_held(1).await < 1 {
            return Ok(Checked::Fail(
                "the externalized intercept's content was never read".to_owned(),
            ));
        }
        // The intercept is now pending (its callback waits for the read): reuse its id.
        s.send(&json!({"jsonrpc": "2.0", "id": 500, "method": UNKNOWN_METHOD}))
            .await?;
        let first = s.response("500").await?;
        if !first.is_error(Reason::ProtocolError) {
            return Ok(Checked::Fail(format!(
                "a request reusing a pending id was answered with {} instead of -32600",
                first.describe()
            )));
        }
        s.hold_reads = false;
        s.release().await;
        let second = s
            .response("500")
            .await
            .map_err(|why| format!("the first request with the reused id: {why}"))?;
        Ok((second.result().is_none())
            .then(|| {
                format!(
                    "the first request with the reused id was answered with {}",
                    second.describe()
                )
            })
            .into())
    })
}

fn thirty_two_waiting<'a, 'c>(s: &'a mut Session<'c>, point: HookPoint) -> StepFuture<'a> {
    Box::pin(async move {
        s.hold_reads = true;
        let timeout = timeout_millis(s.ctx, point);
        let ids: Vec<String> = (0..32).map(|i| (600 + i).to_string()).collect();
        for id in &ids {
            held_intercept(s, point, id, timeout).await?;
        }
        let held = s.await_held(32).await;
        if held < 32 {
            return Ok(Checked::Fail(format!(
                "only {held} of 32 intercepts read their content while the others waited"
            )));
        }
        s.hold_reads = false;
        s.release().await;
        let mut answered: Vec<Msg> = std::mem::take(&mut s.strays);
        let deadline = s.ctx.wait();
        while ids
            .iter()
            .any(|id| !answered.iter().any(|m| m.id.as_deref() == Some(id)))
        {
            match s.next(deadline).await {
                Ok(Some(msg)) => answered.push(msg),
                Ok(None) => {}
                Err(_) => break,
            }
        }
        let missing = ids
            .iter()
            .filter(|id| {
                !answered
                    .iter()
                    .any(|m| m.id.as_deref() == Some(id.as_str()) && m.result().is_some())
            })
            .count();
        Ok((missing > 0)
            .then(|| {
                format!(
                    "{missing} of 32 intercepts waiting for content were not answered with a result"
                )
            })
            .into())
    })
}

/// How long past `timeoutMillis` an `intercept_timeout` answer may come.
const OVERRUN_SLACK: Duration = Duration::from_secs(2);
/// The `timeoutMillis` of the overrun check.
const OVERRUN_MILLIS: u64 = 300;

fn overrun<'a, 'c>(s: &'a mut Session<'c>, point: HookPoint) -> StepFuture<'a> {
    Box::pin(async move {
        s.hold_reads = true;
        let began = Instant::now();
        held_intercept(s, point, "700", OVERRUN_MILLIS).await?;
        let deadline = began + Duration::from_millis(OVERRUN_MILLIS) + OVERRUN_SLACK;
        match s.response_until("700", deadline).await {
            Err(_) => Ok(Checked::Fail(format!(
                "an intercept with timeoutMillis {OVERRUN_MILLIS} whose content read the kit never answered was not answered within {} ms",
                OVERRUN_MILLIS + OVERRUN_SLACK.as_millis() as u64
            ))),
            Ok(msg) => Ok((!msg.is_error(Reason::InterceptTimeout))
                .then(|| format!(
                    "an intercept that overran timeoutMillis was answered with {} instead of intercept_timeout",
                    msg.describe()
                ))
                .into()),
        }
    })
}

/// Item 19: a content read the host never answers fails with `intercept_timeout` after 30 s.
pub(super) async fn slow(ctx: &Ctx) -> Findings {
    let mut s = match ready(ctx, &["19"]).await {
        Ok(s) => s,
        Err(findings) => return findings,
    };
    let Some(point) = s.subscribed().first().copied() else {
        s.not_applicable(
            "19",
            "the sidecar subscribes to no point, so no callback reads content",
        );
        return s.finish();
    };
    s.mark();
    s.hold_reads = true;
    let began = Instant::now();
    let checked = match held_intercept(&mut s, point, "701", 60_000).await {
        Err(why) => Checked::Fail(why),
        Ok(()) => {
            let deadline = began + Duration::from_secs(40);
            match s.response_until("701", deadline).await {
                Err(why) => Checked::Fail(why),
                Ok(msg) if !msg.is_error(Reason::InterceptTimeout) => Checked::Fail(format!(
                    "an intercept whose content read was never answered was answered with {}",
                    msg.describe()
                )),
                Ok(_) if began.elapsed() < Duration::from_secs(29) => Checked::Fail(format!(
                    "the content read failed after {} ms, before its 30 s deadline",
                    began.elapsed().as_millis()
                )),
                Ok(_) => Checked::Pass,
            }
        }
    };
    s.record("19", checked);
    s.finish()
}
