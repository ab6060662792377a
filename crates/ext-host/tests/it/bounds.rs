//! Every bound the host promises, held against a hostile or careless sidecar: each test hits a
//! bound, checks the host stayed within it (in count or bytes), and checks it keeps working.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
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
            ..
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

fn publish(id: u64, surface: &str, label: &str) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"host/ui/publish","params":{
        "surfaceId":surface,"sessionId":"s-test","generation":"@gen","kind":"status",
        "payload":{"label":label}}})
}

fn prompt_request(id: u64, surface: &str) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"host/ui/request","params":{
        "surfaceId":surface,"sessionId":"s-test","generation":"@gen","kind":"confirm",
        "payload":{"title":"Q","fields":[]}}})
}

/// The host's answers to the sidecar's request `id`, in the order recorded, once there are
/// `count` of them.
async fn answers(env: &Env, file: &str, id: u64, count: usize) -> Vec<Value> {
    let mut found = Vec::new();
    eventually(&format!("{count} answer(s) to request {id}"), || {
        found = recorded(env, file)
            .into_iter()
            .filter(|f| f["id"] == id && f.get("method").is_none())
            .collect();
        found.len() >= count
    })
    .await;
    found
}

fn reason(answer: &Value) -> Option<&str> {
    answer["error"]["data"]["reason"].as_str()
}

pub(crate) async fn surfaces_are_capped_per_plugin_and_in_id_length() {
    // 63 short ids and one of exactly 256 bytes fill the plugin's 64 places; a 65th new id is
    // refused, replacing an existing one is fine, and ids (of surfaces and prompts) over 256
    // bytes are refused. The frames are sent when `input.receive` is intercepted, so the
    // second generation sends them once it is live.
    let mut frames: Vec<Value> = (1..=63)
        .map(|i| publish(i, &format!("g@gen-s{i}"), "x"))
        .collect();
    frames.push(publish(64, &"l".repeat(256), "x"));
    frames.push(publish(65, "g@gen-s65", "x"));
    frames.push(publish(66, "g@gen-s1", "replaced"));
    frames.push(publish(67, &"l".repeat(257), "x"));
    frames.push(prompt_request(68, &"l".repeat(257)));
    let env = Env::new();
    env.plugin("ui")
        .capabilities(&["interceptors", "ui"])
        .intercepts(&["input.receive", "frontend.event"])
        .on(
            "input.receive",
            json!({"send": frames, "then": {"decision":"continue"}}),
        )
        .on("frontend.event", json!("exit:3"))
        .record("ui.jsonl")
        .install();
    let (runtime, mut events) = env.boot().await;
    let check = |answers: Vec<Vec<Value>>| {
        for (i, all) in answers.iter().enumerate() {
            let id = i + 1;
            let answer = all.last().unwrap();
            match id {
                65 | 67 | 68 => {
                    assert_eq!(reason(answer), Some("invalid_params"), "{id}: {answer}")
                }
                _ => assert_eq!(answer["result"], json!({"accepted":true}), "{id}: {answer}"),
            }
        }
    };
    for round in 1..=2 {
        runtime
            .intercept(HookPoint::InputReceive, input("publish"))
            .await
            .unwrap();
        let mut all = Vec::new();
        for id in 1..=68 {
            all.push(answers(&env, "ui.jsonl", id, round).await);
        }
        check(all);
        let shown: Vec<_> = drain(&mut events)
            .into_iter()
            .filter_map(|e| match e {
                HostEvent::Surface(s) => Some(s),
                _ => None,
            })
            .collect();
        assert_eq!(shown.len(), 65, "64 surfaces and one replacement");
        assert!(shown.iter().all(|s| s.generation == round as u64));
        if round == 1 {
            // Crash it: its surfaces are stale, and after a reload the new sidecar finds all
            // 64 places free again (the stale records made room).
            let crash = HookPayload::FrontendEvent(FrontendEventPayload {
                kind: "k".into(),
                text: String::new(),
                detail: String::new(),
            });
            let _ = runtime.intercept(HookPoint::FrontendEvent, crash).await;
            next_event(&mut events, "the stale surfaces", |e| match e {
                HostEvent::SurfacesStale { plugin, generation } => Some((plugin, generation)),
                _ => None,
            })
            .await;
            let report = within(WAIT, "reload", runtime.reload()).await.unwrap();
            assert_eq!(report.started, ["ui"]);
        }
    }
    env.finish(runtime).await;
}

pub(crate) async fn prompts_are_capped_per_connection_and_expire() {
    // Six prompts at once: four are shown (the cap), two are refused at once. Nobody answers
    // the four: at the deadline they are dismissed (the application is told) and the sidecar
    // gets `{"cancelled":true}`; then there is room for a new prompt.
    let deadline = Duration::from_millis(500);
    let env = Env::new();
    env.plugin("asker")
        .capabilities(&["interceptors", "ui"])
        .intercepts(&["input.receive"])
        .script(
            "after_init",
            json!(
                (1..=6)
                    .map(|i| prompt_request(i, &format!("q{i}")))
                    .collect::<Vec<_>>()
            ),
        )
        .on(
            "input.receive",
            json!({"send": [prompt_request(7, "q7")], "then": {"decision":"continue"}}),
        )
        .record("asker.jsonl")
        .install();
    let started = Instant::now();
    let (runtime, mut events) = env
        .boot_with(env.config().prompt_timeout(deadline))
        .await
        .unwrap();
    let mut open = Vec::new();
    while open.len() < 4 {
        open.push(
            next_event(&mut events, "a prompt", |e| match e {
                HostEvent::Prompt(p) => Some(p),
                _ => None,
            })
            .await,
        );
    }
    let mut refused = 0;
    let mut cancelled = 0;
    for id in 1..=6 {
        let answer = answers(&env, "asker.jsonl", id, 1).await.remove(0);
        if reason(&answer) == Some("invalid_params") {
            refused += 1;
        } else {
            assert_eq!(answer["result"], json!({"cancelled":true}), "{answer}");
            cancelled += 1;
        }
    }
    assert_eq!((refused, cancelled), (2, 4));
    assert!(started.elapsed() >= deadline);
    let mut dismissed = Vec::new();
    while dismissed.len() < 4 {
        dismissed.push(
            next_event(&mut events, "a dismissal", |e| match e {
                HostEvent::PromptDismissed { prompt, .. } => Some(prompt),
                HostEvent::Prompt(p) => panic!("a fifth prompt was shown: {}", p.surface_id),
                _ => None,
            })
            .await,
        );
    }
    let mut shown: Vec<u64> = open.iter().map(|p| p.id).collect();
    shown.sort_unstable();
    dismissed.sort_unstable();
    assert_eq!(dismissed, shown);
    drop(open);
    // The places are free again: a new prompt is shown and its answer reaches the sidecar.
    runtime
        .intercept(HookPoint::InputReceive, input("ask"))
        .await
        .unwrap();
    let mut prompt = next_event(&mut events, "the new prompt", |e| match e {
        HostEvent::Prompt(p) => Some(p),
        _ => None,
    })
    .await;
    assert_eq!(prompt.surface_id, "q7");
    prompt
        .answer([("value".to_owned(), json!(true))].into())
        .unwrap();
    let answer = answers(&env, "asker.jsonl", 7, 1).await.remove(0);
    assert_eq!(
        answer["result"],
        json!({"cancelled":false,"values":{"value":true}})
    );
    env.finish(runtime).await;
}

pub(crate) async fn the_event_stream_is_bounded_in_bytes() {
    // 24 surfaces of 1 MiB each while the application reads nothing: the stream takes what
    // fits in its 16 MiB and answers the rest `{"accepted":false}`; once read, it takes more.
    const MIB: usize = 1024 * 1024;
    const STREAM_BYTES: usize = 16 * MIB;
    let label = format!("@fill:{MIB}@");
    let env = Env::new();
    env.plugin("big")
        .capabilities(&["interceptors", "ui"])
        .intercepts(&["input.receive"])
        .script(
            "after_init",
            json!(
                (1..=24)
                    .map(|i| publish(i, &format!("s{i}"), &label))
                    .collect::<Vec<_>>()
            ),
        )
        .on(
            "input.receive",
            json!({"send": [publish(25, "s25", &label)], "then": {"decision":"continue"}}),
        )
        .record("big.jsonl")
        .install();
    let (runtime, mut events) = env.boot().await;
    let mut accepted = 0;
    for id in 1..=24 {
        let answer = answers(&env, "big.jsonl", id, 1).await.remove(0);
        if answer["result"] == json!({"accepted":true}) {
            accepted += 1;
        } else {
            assert_eq!(answer["result"], json!({"accepted":false}), "{answer}");
        }
    }
    assert!(
        (8..24).contains(&accepted),
        "{accepted} of 24 one-MiB surfaces were taken"
    );
    let labels: Vec<usize> = drain(&mut events)
        .into_iter()
        .filter_map(|e| match e {
            HostEvent::Surface(s) => match s.payload {
                sidewire_ext_protocol::SurfacePayload::Status(status) => Some(status.label.len()),
                _ => None,
            },
            _ => None,
        })
        .collect();
    assert_eq!(labels.len(), accepted);
    let held: usize = labels.iter().sum();
    assert!(held <= STREAM_BYTES, "the stream held {held} bytes");
    // Read: the bytes are given back, and the next surface is taken.
    runtime
        .intercept(HookPoint::InputReceive, input("again"))
        .await
        .unwrap();
    let answer = answers(&env, "big.jsonl", 25, 1).await.remove(0);
    assert_eq!(answer["result"], json!({"accepted":true}), "{answer}");
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
