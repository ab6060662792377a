//! Every bound the host promises, held against a hostile or careless sidecar: each test hits a
//! bound, checks the host stayed within it (in count or bytes), and checks it keeps working.

use std::time::{Duration, Instant};

use serde_json::json;
use sidewire_ext_host::{HostEvent, TraceResult};
use sidewire_ext_protocol::{FrontendEventPayload, HookPayload, HookPoint};

use crate::support::*;

/// The intercept budget of the lane test, and the bound its answer must meet.
const INTERCEPT_BUDGET: Duration = Duration::from_millis(2000);

pub(crate) async fn an_intercept_overtakes_a_backed_up_event_queue() {
    // §8, checklist item 55: "a full event queue never delays an intercept". The sidecar
    // takes 15 ms per event, so events back up through every queue on the way (the
    // connection's 256, the writer's). With one shared FIFO the intercept would wait behind
    // ~290 event frames (over 4 s); with requests ahead of events it waits behind the few the
    // pipe and the writer's buffers already hold (about 100 ms).
    let env = Env::new();
    env.plugin("slow")
        .intercepts(&["frontend.event", "input.receive"])
        .runtime("timeoutMillis", json!(INTERCEPT_BUDGET.as_millis() as u64))
        .script("event_delay_ms", json!(15))
        .install();
    let (runtime, mut events) = env.boot().await;
    let payload = HookPayload::FrontendEvent(FrontendEventPayload {
        kind: "k".into(),
        text: "e".repeat(32 * 1024),
        detail: String::new(),
    });
    for _ in 0..1000 {
        runtime.event(HookPoint::FrontendEvent, &payload);
    }
    // The connection's event queue is full only once everything behind it is backed up too.
    next_event(&mut events, "the dropped-events warning", |e| match e {
        HostEvent::Warning {
            plugin: Some(p),
            message,
        } if p == "slow" && message.contains("event queue is full") => Some(()),
        _ => None,
    })
    .await;
    let started = Instant::now();
    let outcome = runtime
        .intercept(HookPoint::InputReceive, input("urgent"))
        .await
        .unwrap();
    let elapsed = started.elapsed();
    assert_eq!(outcome.trace.len(), 1);
    assert!(
        matches!(outcome.trace[0].result, TraceResult::Decided(_)),
        "the intercept was not answered within its budget: {:?}",
        outcome.trace[0].result
    );
    assert_eq!(text_of(&outcome.payload), "urgent");
    assert!(elapsed < INTERCEPT_BUDGET, "{elapsed:?}");
    env.finish(runtime).await;
}

pub(crate) async fn turns_start_while_a_reload_retires_old_sidecars() {
    // The retired sidecar takes 4 s to answer its shutdown. New turns pin the new generation,
    // so they must not wait for that: one is granted while the reload is still retiring.
    let env = Env::new();
    env.plugin("old")
        .intercepts(&["input.receive"])
        .on("input.receive", json!("tag"))
        .script(
            "shutdown",
            json!({"delay_ms": 4000, "error": {"code": -32603, "message": "slow",
                "data": {"reason": "internal", "retryable": true}}}),
        )
        .install();
    let (runtime, _events) = env.boot().await;
    // A changed runtime member restarts it at the reload; the new one shuts down at once.
    env.plugin("old")
        .intercepts(&["input.receive"])
        .priority(1)
        .on("input.receive", json!("tag"))
        .package();
    let mut reload = {
        let runtime = runtime.clone();
        tokio::spawn(async move { runtime.reload().await })
    };
    eventually("the new generation", || runtime.generation() == 2).await;
    let turn = within(
        Duration::from_secs(2),
        "a turn while the old sidecar shuts down",
        runtime.turn(),
    )
    .await;
    assert!(!reload.is_finished(), "the retirement is still running");
    assert_eq!(turn.generation(), 2);
    let outcome = turn
        .intercept(HookPoint::InputReceive, input("x"))
        .await
        .unwrap();
    assert_eq!(text_of(&outcome.payload), "x|old");
    drop(turn);
    let report = within(WAIT, "the reload", &mut reload)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(report.started, ["old"]);
    env.finish(runtime).await;
}
