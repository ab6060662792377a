//! Shutdown and end of input (spec §6.6): `extension/shutdown` answered `{"accepted":true}`, a
//! callback still running cancelled without an answer, exit 0 within the host's budget once
//! stdin closes; end of input in states `new` and `ready` exits 0; end of input after a partial
//! line exits non-zero.

use std::time::Duration;

use serde_json::json;
use sidewire_ext_protocol::{ShutdownResult, decode_result};
use tokio::time::Instant;

use super::super::report::Findings;
use super::super::session::{Checked, Ctx, Session};
use super::{bare, ready, timeout_millis};

/// How long the kit watches for an answer to a cancelled callback.
const QUIET: Duration = Duration::from_millis(300);

pub(super) async fn shutdown(ctx: &Ctx) -> Findings {
    let mut s = match ready(ctx, &["88"]).await {
        Ok(s) => s,
        Err(findings) => return findings,
    };
    s.mark();
    let checked = match shutdown_steps(&mut s).await {
        Ok(checked) => checked,
        Err(why) => Checked::Fail(why),
    };
    s.record("88", checked);
    s.finish()
}

async fn shutdown_steps(s: &mut Session<'_>) -> Result<Checked, String> {
    // A callback kept running: its payload's read is held.
    let pending = match s.subscribed().first().copied() {
        Some(point) => {
            s.hold_reads = true;
            let descriptor = s.externalize(
                super::sample_payload(point, 0).to_string().into_bytes(),
                |_, _| {},
            );
            let timeout = timeout_millis(s.ctx, point);
            s.send(
                &json!({"jsonrpc": "2.0", "id": 800, "method": "extension/intercept", "params": {
                    "event": point.as_str(), "seq": 1, "payload": null, "timeoutMillis": timeout,
                    "externalized": [descriptor],
                }}),
            )
            .await?;
            (s.await_held(1).await == 1).then_some("800")
        }
        None => None,
    };
    let answer = s
        .call("extension/shutdown", json!({"timeoutMillis": 5000}))
        .await?;
    let accepted = answer
        .result()
        .and_then(|r| decode_result::<ShutdownResult>(&r.to_string()).ok())
        .is_some_and(|r| r.accepted);
    if !accepted {
        return Ok(Checked::Fail(format!(
            "extension/shutdown was answered with {} instead of {{\"accepted\":true}}",
            answer.describe()
        )));
    }
    if let Some(id) = pending {
        // Answer the held read now: a cancelled callback must still not answer.
        s.hold_reads = false;
        s.release().await;
        let seen = s.drain_until(Instant::now() + QUIET).await;
        if let Some(msg) = seen.iter().find(|m| m.id.as_deref() == Some(id)) {
            return Ok(Checked::Fail(format!(
                "a callback running at shutdown was answered afterwards with {}",
                msg.describe()
            )));
        }
    }
    Ok(exits_zero(s, "after extension/shutdown", s.ctx.options.exit_budget).await)
}

/// Closes stdin and checks for exit 0 within `budget`.
async fn exits_zero(s: &mut Session<'_>, when: &str, budget: Duration) -> Checked {
    s.close_stdin();
    match s.exit_within(budget).await {
        None => Checked::Fail(format!(
            "{when}, the sidecar did not exit within {} ms of stdin closing",
            budget.as_millis()
        )),
        Some(exit) if !exit.success() => Checked::Fail(format!("{when}, end of input: {exit}")),
        Some(_) => Checked::Pass,
    }
}

/// End of input in `new` and `ready` exits 0; after a partial line, non-zero.
pub(super) async fn eof(ctx: &Ctx) -> Findings {
    let mut findings = Findings::default();
    // In state `new` the sidecar may still be starting: the budget is the start timeout.
    match bare(ctx, &["88"]) {
        Err(f) => findings.extend(f),
        Ok(mut s) => {
            s.mark();
            let checked = exits_zero(&mut s, "in state new", ctx.options.start_timeout).await;
            s.record("88", checked);
            findings.extend(s.finish());
        }
    }
    match ready(ctx, &["88"]).await {
        Err(f) => findings.extend(f),
        Ok(mut s) => {
            s.mark();
            let checked = exits_zero(&mut s, "in state ready", ctx.options.exit_budget).await;
            s.record("88", checked);
            findings.extend(s.finish());
        }
    }
    match ready(ctx, &["88"]).await {
        Err(f) => findings.extend(f),
        Ok(mut s) => {
            s.mark();
            let checked = match s.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":801,\"meth").await {
                Err(why) => Checked::Fail(why),
                Ok(()) => {
                    s.close_stdin();
                    match s.exit_within(ctx.options.reply_timeout).await {
                        None => Checked::Fail(
                            "after a partial line and end of input the sidecar did not exit"
                                .to_owned(),
                        ),
                        Some(exit) if exit.success() => Checked::Fail(
                            "after a partial line and end of input the sidecar exited 0".to_owned(),
                        ),
                        Some(_) => Checked::Pass,
                    }
                }
            };
            s.record("88", checked);
            findings.extend(s.finish());
        }
    }
    findings
}
