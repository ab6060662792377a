//! Interceptors and observers (§7, §8): decisions, the checks on them, budgets, frame limits.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::json;
use sidewire_ext_protocol::{
    FRAME_BYTES, FrontendEventPayload, HookPayload, HookPoint, InputPayload, PermissionPayload,
    Reason, Slot, ToolBeforePayload, Verdict,
};
use sidewire_ext_sdk::{Decision, Extension, Options, Point, point, samples};
use tokio::sync::{Notify, mpsc};

use crate::support::{Sidecar, assert_error, intercept, within};

async fn ready(extension: Extension, intercepts: &[&str]) -> Sidecar {
    let mut sidecar = Sidecar::start(extension);
    sidecar
        .host
        .handshake(intercepts, &["interceptors", "strategies", "ui"])
        .await;
    sidecar
}

#[tokio::test]
async fn the_samples_decide_as_documented() {
    let mut sidecar = ready(samples::starter(), &["input.receive"]).await;
    let answer = sidecar
        .host
        .call(
            2,
            "extension/intercept",
            intercept(
                "input.receive",
                1,
                json!({"text": "starter: fix teh tests"}),
                5000,
            ),
        )
        .await;
    assert_eq!(
        answer["result"],
        json!({"decision": "replace", "replacement": {"text": "fix teh tests [rewritten by starter-extension]"}})
    );
    let answer = sidecar
        .host
        .call(
            3,
            "extension/intercept",
            intercept("input.receive", 2, json!({"text": "plain"}), 5000),
        )
        .await;
    assert_eq!(answer["result"], json!({"decision": "continue"}));
    sidecar.finish().await;

    let mut sidecar = ready(samples::allow_all(), &["permission.decision"]).await;
    let payload = json!({"name": "bash", "arguments": "{\"cmd\":\"ls\"}", "hostDecision": "deny"});
    let answer = sidecar
        .host
        .call(
            2,
            "extension/intercept",
            intercept("permission.decision", 1, payload, 5000),
        )
        .await;
    assert_eq!(
        answer["result"],
        json!({"decision": "allow", "reason": "allowed by the allow-all extension"})
    );
    sidecar.finish().await;
}

#[tokio::test]
async fn allow_all_as_the_permission_slot_owner_replaces_instead() {
    let mut sidecar = Sidecar::start(samples::allow_all().replaces(Slot::Permission));
    let mut params = crate::support::init_params(&[], &["strategies"]);
    params["manifest"]["replaces"] = json!(["permission"]);
    let answer = sidecar.host.call(1, "extension/initialize", params).await;
    assert_eq!(
        answer["result"]["replaces"],
        json!(["permission"]),
        "{answer}"
    );
    sidecar
        .host
        .notify("extension/initialized", json!({}))
        .await;
    let payload = json!({"name": "bash", "hostDecision": "deny"});
    let answer = sidecar
        .host
        .call(
            2,
            "extension/intercept",
            intercept("permission.decision", 1, payload, 5000),
        )
        .await;
    assert_eq!(
        answer["result"],
        json!({"decision": "replace", "replacement": {"name": "bash", "hostDecision": "allow"}})
    );
    sidecar.finish().await;
}

#[tokio::test]
async fn an_intercept_without_a_live_handler_continues() {
    // Checklist 49 (second half): no handler, or a handler the manifest does not back.
    let called = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&called);
    let extension = Extension::new("x", "1").on_intercept(
        point::TOOL_BEFORE,
        move |_, _: ToolBeforePayload| {
            counter.fetch_add(1, Ordering::SeqCst);
            async { Ok(Decision::block("no")) }
        },
    );
    let mut sidecar = ready(extension, &["input.receive"]).await;
    let answer = sidecar
        .host
        .call(
            2,
            "extension/intercept",
            intercept("input.receive", 1, json!({"text": "a"}), 5000),
        )
        .await;
    assert_eq!(answer["result"], json!({"decision": "continue"}));
    let answer = sidecar
        .host
        .call(
            3,
            "extension/intercept",
            intercept("tool.before", 2, json!({"name": "bash"}), 5000),
        )
        .await;
    assert_eq!(answer["result"], json!({"decision": "continue"}));
    assert_eq!(called.load(Ordering::SeqCst), 0);
    sidecar.finish().await;
}

#[tokio::test]
async fn a_callback_overrunning_its_budget_is_intercept_timeout() {
    // Checklist 49 (first half).
    let extension = Extension::new("x", "1").on_intercept(
        point::INPUT_RECEIVE,
        |ctx, _: InputPayload| async move {
            assert_eq!(ctx.budget(), Some(Duration::from_millis(150)));
            assert_eq!(ctx.seq(), Some(4));
            tokio::time::sleep(Duration::from_secs(30)).await;
            Ok(Decision::Continue)
        },
    );
    let mut sidecar = ready(extension, &["input.receive"]).await;
    let started = tokio::time::Instant::now();
    let answer = sidecar
        .host
        .call(
            2,
            "extension/intercept",
            intercept("input.receive", 4, json!({"text": "a"}), 150),
        )
        .await;
    assert_error(&answer, &json!(2), Reason::InterceptTimeout);
    assert!(started.elapsed() >= Duration::from_millis(150));
    sidecar.finish().await;
}

#[tokio::test]
async fn events_reach_observers_only_and_unbacked_handlers_are_reported() {
    // Checklist 50.
    let (tx, mut rx) = mpsc::unbounded_channel();
    let extension = Extension::new("x", "1")
        .on_intercept(point::INPUT_RECEIVE, |_, _: InputPayload| async {
            Ok(Decision::Continue)
        })
        .on_event(
            point::FRONTEND_EVENT,
            move |ctx, event: FrontendEventPayload| {
                let tx = tx.clone();
                async move {
                    assert!(ctx.is_event());
                    tx.send(event.kind).unwrap();
                    Ok(())
                }
            },
        )
        .on_intercept(point::TOOL_BEFORE, |_, _: ToolBeforePayload| async {
            Ok(Decision::Continue)
        });
    let mut sidecar = Sidecar::start(extension);
    let result = sidecar
        .host
        .handshake(&["input.receive", "frontend.event"], &["interceptors"])
        .await;
    assert_eq!(
        result["subscriptions"],
        json!(["input.receive", "frontend.event"])
    );
    let logs = sidecar.logs();
    assert!(
        logs.iter()
            .any(|l| l.contains("tool.before") && l.contains("not subscribed")),
        "{logs:?}"
    );
    // An event for a point with only an interceptor is dropped; observers see theirs in order.
    sidecar
        .host
        .notify(
            "extension/event",
            json!({"event": "input.receive", "payload": {"text": "a"}}),
        )
        .await;
    for kind in ["turn_started", "turn_finished"] {
        sidecar
            .host
            .notify(
                "extension/event",
                json!({"event": "frontend.event", "payload": {"kind": kind}}),
            )
            .await;
    }
    assert_eq!(within("an event", rx.recv()).await.unwrap(), "turn_started");
    assert_eq!(
        within("an event", rx.recv()).await.unwrap(),
        "turn_finished"
    );
    sidecar.host.silent().await;
    assert!(rx.try_recv().is_err());
    sidecar.finish().await;
}

#[tokio::test]
async fn resource_changes_reach_their_observer_once_ready() {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let extension = Extension::new("x", "1").on_resources_changed(move |host, paths| {
        let tx = tx.clone();
        async move {
            assert!(host.is_ready());
            tx.send(paths).unwrap();
            Ok(())
        }
    });
    let mut sidecar = Sidecar::start(extension);
    let changed = json!({"paths": ["/work/.skills/a.md"]});
    // Dropped before the connection is ready, and when its params do not decode.
    sidecar
        .host
        .notify("extension/resources/changed", changed.clone())
        .await;
    sidecar.host.handshake(&[], &[]).await;
    sidecar
        .host
        .notify("extension/resources/changed", json!({"paths": []}))
        .await;
    sidecar
        .host
        .notify("extension/resources/changed", changed)
        .await;
    let paths = within("the observer", rx.recv()).await.unwrap();
    assert_eq!(paths, ["/work/.skills/a.md"]);
    sidecar.host.silent().await;
    assert!(rx.try_recv().is_err());
    sidecar.finish().await;
}

#[tokio::test]
async fn invalid_answers_are_refused_locally() {
    // Replacement re-validation (§7.8) and decision legality (§7.5) on the SDK's side.
    let extension = Extension::new("x", "1")
        .on_intercept(point::INPUT_RECEIVE, |_, input: InputPayload| async move {
            Ok(match input.text.as_str() {
                "empty" => Decision::Replace(InputPayload {
                    text: "\u{3000}".to_owned(),
                }),
                "allow" => Decision::allow(),
                _ => Decision::Continue,
            })
        })
        .on_intercept(
            point::PERMISSION_DECISION,
            |_, p: PermissionPayload| async move {
                Ok(Decision::Replace(PermissionPayload {
                    host_decision: Verdict::Allow,
                    ..p
                }))
            },
        )
        .on_intercept(
            Point::any(HookPoint::ToolBefore),
            |_, _: HookPayload| async {
                // A payload of another point's DTO.
                Ok(Decision::Replace(HookPayload::Input(InputPayload {
                    text: "x".to_owned(),
                })))
            },
        )
        .on_intercept(point::CONTEXT_PREPARE, |_, _| async {
            Ok(Decision::block("no"))
        })
        .replaces(Slot::Context);
    let mut sidecar = Sidecar::start(extension);
    let mut params = crate::support::init_params(
        &["input.receive", "permission.decision", "tool.before"],
        &["interceptors", "strategies"],
    );
    params["manifest"]["replaces"] = json!(["context"]);
    sidecar.host.call(1, "extension/initialize", params).await;
    sidecar
        .host
        .notify("extension/initialized", json!({}))
        .await;
    let cases = [
        intercept("input.receive", 1, json!({"text": "empty"}), 5000),
        intercept("input.receive", 2, json!({"text": "allow"}), 5000),
        // A chain member must keep hostDecision.
        intercept(
            "permission.decision",
            3,
            json!({"name": "bash", "hostDecision": "deny"}),
            5000,
        ),
        intercept("tool.before", 4, json!({"name": "bash"}), 5000),
        // A strategy call may not block.
        intercept("context.prepare", 5, json!({"messages": []}), 5000),
    ];
    for (i, params) in cases.into_iter().enumerate() {
        let id = json!(10 + i);
        let answer = sidecar
            .host
            .call(10 + i as u64, "extension/intercept", params)
            .await;
        assert_error(&answer, &id, Reason::Internal);
        assert!(
            answer["error"]["message"]
                .as_str()
                .unwrap()
                .contains("refused"),
            "{answer}"
        );
    }
    assert_eq!(
        sidecar
            .logs()
            .iter()
            .filter(|l| l.contains("refused"))
            .count(),
        5
    );
    sidecar.finish().await;
}

#[tokio::test]
async fn a_failing_callback_is_internal() {
    let extension = Extension::new("x", "1").on_intercept(point::INPUT_RECEIVE, |_, _| async {
        Err::<Decision<InputPayload>, _>(sidewire_ext_sdk::Error::callback("database is down"))
    });
    let mut sidecar = ready(extension, &["input.receive"]).await;
    let answer = sidecar
        .host
        .call(
            2,
            "extension/intercept",
            intercept("input.receive", 1, json!({"text": "a"}), 5000),
        )
        .await;
    assert_error(&answer, &json!(2), Reason::Internal);
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("database is down")
    );
    sidecar.finish().await;
}

/// An input interceptor that replaces the text with `text` of the given length.
fn padding(len: usize) -> Extension {
    Extension::new("x", "1").on_intercept(
        point::INPUT_RECEIVE,
        move |_, _: InputPayload| async move {
            Ok(Decision::Replace(InputPayload {
                text: "y".repeat(len),
            }))
        },
    )
}

#[tokio::test]
async fn an_oversized_result_becomes_a_small_internal_error() {
    // Checklist 4.
    let mut sidecar = ready(padding(FRAME_BYTES), &["input.receive"]).await;
    let answer = sidecar
        .host
        .call(
            2,
            "extension/intercept",
            intercept("input.receive", 1, json!({"text": "a"}), 30_000),
        )
        .await;
    assert_error(&answer, &json!(2), Reason::Internal);
    assert_eq!(answer["error"]["code"], -32603);
    assert_eq!(
        answer["error"]["message"],
        "response exceeds frame size limit"
    );
    sidecar.finish().await;
}

#[tokio::test]
async fn the_inbound_frame_cap_is_exact() {
    // Checklist 1: 8,388,608 bytes with the LF are served, one more byte is fatal.
    let mut sidecar = ready(samples::starter(), &["input.receive"]).await;
    let frame_of = |len: usize, id: u64| {
        let empty = json!({"jsonrpc": "2.0", "id": id, "method": "extension/intercept",
            "params": intercept("input.receive", id, json!({"text": ""}), 30_000)})
        .to_string();
        // The text fills the frame up to `len` bytes, counting the LF.
        let text = "z".repeat(len - empty.len() - 1);
        let line = empty.replace(r#""text":"""#, &format!(r#""text":"{text}""#));
        assert_eq!(line.len() + 1, len);
        line
    };
    sidecar.host.send(&frame_of(FRAME_BYTES, 2)).await;
    let answer = sidecar.host.recv().await;
    assert_eq!(answer["result"], json!({"decision": "continue"}));
    // The sidecar stops reading once the cap is crossed, so the write may fail part-way.
    let mut line = frame_of(FRAME_BYTES + 1, 3).into_bytes();
    line.push(b'\n');
    let _ = sidecar.host.try_send_bytes(&line).await;
    sidecar.host.output_ends().await;
    let err = sidecar.outcome().await.unwrap_err();
    assert!(err.is_frame_too_large(), "{err}");
    assert!(err.to_string().contains("frame"), "{err}");
}

#[tokio::test]
async fn callbacks_beyond_the_concurrency_wait_within_their_budget() {
    let running = Arc::new(AtomicUsize::new(0));
    let peak = Arc::new(AtomicUsize::new(0));
    let release = Arc::new(Notify::new());
    let (r, p, g) = (
        Arc::clone(&running),
        Arc::clone(&peak),
        Arc::clone(&release),
    );
    let extension =
        Extension::new("x", "1").on_intercept(point::INPUT_RECEIVE, move |_, _: InputPayload| {
            let (running, peak, gate) = (Arc::clone(&r), Arc::clone(&p), Arc::clone(&g));
            async move {
                let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                peak.fetch_max(now, Ordering::SeqCst);
                gate.notified().await;
                running.fetch_sub(1, Ordering::SeqCst);
                Ok(Decision::Continue)
            }
        });
    let mut sidecar = Sidecar::start_with(extension, Options::new().concurrency(2));
    sidecar
        .host
        .handshake(&["input.receive"], &["interceptors"])
        .await;
    for id in 2..5 {
        let params = intercept("input.receive", id, json!({"text": "a"}), 60_000);
        sidecar
            .host
            .send_json(&json!({"jsonrpc": "2.0", "id": id, "method": "extension/intercept", "params": params}))
            .await;
    }
    // A waiting callback does not hold up lifecycle requests or an unknown-method answer.
    let answer = sidecar.host.call(9, "nope/nothing", json!({})).await;
    assert_error(&answer, &json!(9), Reason::UnknownMethod);
    assert_eq!(peak.load(Ordering::SeqCst), 2);
    for _ in 0..3 {
        release.notify_one();
        let answer = sidecar.host.recv().await;
        assert_eq!(answer["result"]["decision"], "continue", "{answer}");
    }
    assert_eq!(peak.load(Ordering::SeqCst), 2);

    // A callback still waiting for a slot when its budget runs out is a timeout.
    for id in [10, 11] {
        let params = intercept("input.receive", id, json!({"text": "a"}), 60_000);
        sidecar
            .host
            .send_json(&json!({"jsonrpc": "2.0", "id": id, "method": "extension/intercept", "params": params}))
            .await;
    }
    let answer = sidecar
        .host
        .call(
            12,
            "extension/intercept",
            intercept("input.receive", 12, json!({"text": "a"}), 100),
        )
        .await;
    assert_error(&answer, &json!(12), Reason::InterceptTimeout);
    release.notify_one();
    release.notify_one();
    sidecar.host.recv().await;
    sidecar.host.recv().await;
    sidecar.finish().await;
}
