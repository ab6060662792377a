//! Misbehaving sidecars: crashes, grandchildren, junk and over-cap frames, stalls, ignored
//! shutdowns, stderr floods, malformed envelopes, saturation.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use sidewire_ext_host::{HostEvent, TraceResult};
use sidewire_ext_protocol::{ContextPayload, FRAME_BYTES, HookPayload, HookPoint, Reason};

use crate::support::*;

fn crash_events(events: &mut sidewire_ext_host::HostEvents) -> Vec<(String, String, String)> {
    drain(events)
        .into_iter()
        .filter_map(|e| match e {
            HostEvent::Crashed {
                plugin,
                cause,
                stderr_tail,
                ..
            } => Some((plugin, cause, stderr_tail)),
            _ => None,
        })
        .collect()
}

pub(crate) async fn a_crash_fails_pending_and_later_calls_and_is_handled_once() {
    let env = Env::new();
    env.plugin("crashy")
        .required()
        .intercepts(&["input.receive"])
        .on("input.receive", json!("exit:3"))
        .script("stderr", json!("about to crash"))
        .install();
    let (runtime, mut events) = env.boot().await;
    let started = Instant::now();
    let err = runtime
        .intercept(HookPoint::InputReceive, input("x"))
        .await
        .unwrap_err();
    assert_eq!(err.reason(), Some(Reason::ProviderInterrupted), "{err}");
    assert!(started.elapsed() < Duration::from_secs(3));
    let (plugin, cause, tail) = next_event(&mut events, "the crash", |e| match e {
        HostEvent::Crashed {
            plugin,
            cause,
            stderr_tail,
            ..
        } => Some((plugin, cause, stderr_tail)),
        _ => None,
    })
    .await;
    assert_eq!(plugin, "crashy");
    assert!(
        cause == "exited with status 3" || cause.contains("closed"),
        "{cause}"
    );
    assert!(tail.contains("about to crash"));
    // Later calls fail at once, without a restart.
    let started = Instant::now();
    let err = runtime
        .intercept(HookPoint::InputReceive, input("y"))
        .await
        .unwrap_err();
    assert_eq!(err.reason(), Some(Reason::ProviderInterrupted));
    assert!(err.to_string().contains("crashed"), "{err}");
    assert!(started.elapsed() < Duration::from_millis(200));
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        crash_events(&mut events).is_empty(),
        "crash handling ran twice"
    );
    assert!(!runtime.sidecars()[0].ready);
    env.assert_no_processes();
    env.finish(runtime).await;
}

pub(crate) async fn an_exit_is_a_crash_at_once_even_when_a_grandchild_holds_stdout() {
    let env = Env::new();
    env.plugin("parent")
        .required()
        .intercepts(&["context.prepare"])
        .script("grandchild", json!(true))
        .on("context.prepare", json!("exit:4"))
        .install();
    let (runtime, mut events) = env.boot().await;
    assert_eq!(env.pids().len(), 2, "the sidecar and its grandchild");
    let started = Instant::now();
    let err = runtime
        .intercept(
            HookPoint::ContextPrepare,
            HookPayload::Context(ContextPayload { messages: vec![] }),
        )
        .await
        .unwrap_err();
    assert_eq!(err.reason(), Some(Reason::ProviderInterrupted), "{err}");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    let cause = next_event(&mut events, "the crash", |e| match e {
        HostEvent::Crashed { cause, .. } => Some(cause),
        _ => None,
    })
    .await;
    assert_eq!(cause, "exited with status 4");
    // The grandchild died with the group.
    env.assert_no_processes();
    env.finish(runtime).await;
}

/// Boots a required plugin answering `input.receive` with `action`; returns the outcome of one
/// intercept and the crash cause, if it crashed.
async fn answer_with(
    action: Value,
) -> (
    Result<sidewire_ext_host::Outcome, sidewire_ext_host::Error>,
    Option<String>,
) {
    let env = Env::new();
    // The sidecar outlives stdin EOF: when the host kills it (an oversized frame), the check
    // that no process is left proves the kill, not a polite exit.
    env.plugin("talker")
        .required()
        .intercepts(&["input.receive"])
        .on("input.receive", action)
        .script("eof", json!("linger"))
        .install();
    let (runtime, mut events) = env.boot().await;
    let result = within(
        WAIT,
        "the intercept",
        runtime.intercept(HookPoint::InputReceive, input("x")),
    )
    .await;
    let crashed = if result.is_err() {
        Some(
            next_event(&mut events, "the crash", |e| match e {
                HostEvent::Crashed { cause, .. } => Some(cause),
                _ => None,
            })
            .await,
        )
    } else {
        None
    };
    env.finish(runtime).await;
    (result, crashed)
}

pub(crate) async fn junk_blank_lines_boms_and_repeated_members_are_fatal() {
    for raw in [
        "hello from a debug print",
        "",
        "   ",
        "\u{feff}{\"jsonrpc\":\"2.0\",\"id\":@id,\"result\":{\"decision\":\"continue\"}}",
        "{\"jsonrpc\":\"2.0\",\"id\":@id,\"id\":@id,\"result\":{\"decision\":\"continue\"}}",
        "[1,2]",
    ] {
        let (result, crashed) = answer_with(json!({"raw": raw})).await;
        let err = result.unwrap_err();
        assert_eq!(
            err.reason(),
            Some(Reason::ProviderInterrupted),
            "{raw:?}: {err}"
        );
        let cause = crashed.unwrap();
        assert!(cause.contains("malformed"), "{raw:?}: {cause}");
    }
    // A CR before the LF is JSON white space.
    let (result, _) = answer_with(json!({
        "raw": "{\"jsonrpc\":\"2.0\",\"id\":@id,\"result\":{\"decision\":\"continue\"}}\r"
    }))
    .await;
    result.unwrap();
}

pub(crate) async fn a_frame_of_exactly_the_cap_passes_and_one_more_byte_kills() {
    let template = "{\"jsonrpc\":\"2.0\",\"id\":@id,\"result\":{\"decision\":\"continue\",\"reason\":\"@fill\"}}";
    let (result, _) = answer_with(json!({"raw_sized": template, "bytes": FRAME_BYTES})).await;
    let outcome = result.unwrap();
    assert!(outcome.proceeds());
    let (result, crashed) =
        answer_with(json!({"raw_sized": template, "bytes": FRAME_BYTES + 1})).await;
    assert_eq!(
        result.unwrap_err().reason(),
        Some(Reason::ProviderInterrupted)
    );
    assert!(crashed.unwrap().contains("frame limit"));
}

pub(crate) async fn a_sidecar_that_stops_reading_is_killed_after_the_write_stall() {
    let env = Env::new();
    env.plugin("deaf")
        .required()
        .intercepts(&["input.receive"])
        .runtime("timeoutMillis", json!(60_000))
        .script("stdin", json!("never"))
        .install();
    let (runtime, mut events) = env.boot().await;
    // 60 KiB payloads (inline, below the externalization limit) fill the pipe quickly.
    let text = "x".repeat(60_000);
    let started = Instant::now();
    let mut calls = Vec::new();
    for _ in 0..8 {
        let runtime = runtime.clone();
        let text = text.clone();
        calls.push(tokio::spawn(async move {
            runtime
                .intercept(HookPoint::InputReceive, input(&text))
                .await
        }));
    }
    for call in calls {
        let err = within(Duration::from_secs(30), "a stalled call", call)
            .await
            .unwrap()
            .unwrap_err();
        assert_eq!(err.reason(), Some(Reason::ProviderInterrupted), "{err}");
    }
    let elapsed = started.elapsed();
    assert!(
        elapsed >= Duration::from_secs(9) && elapsed < Duration::from_secs(20),
        "{elapsed:?}"
    );
    let cause = next_event(&mut events, "the crash", |e| match e {
        HostEvent::Crashed { cause, .. } => Some(cause),
        _ => None,
    })
    .await;
    assert!(cause.contains("no progress"), "{cause}");
    env.finish(runtime).await;
}

pub(crate) async fn a_sidecar_ignoring_shutdown_is_killed_on_budget_and_reaped() {
    let env = Env::new();
    env.plugin("stubborn")
        .intercepts(&["input.receive"])
        .script("shutdown", json!("ignore"))
        .install();
    let config = env.config().shutdown_timeout_millis(1000);
    let (runtime, mut events) = env.boot_with(config).await.unwrap();
    let pid = runtime.sidecars()[0].pid;
    let started = Instant::now();
    within(Duration::from_secs(15), "shutdown", runtime.shutdown()).await;
    let elapsed = started.elapsed();
    // 1,000 ms + 500 ms for the answer, then 750 ms after stdin closes, then the kill and reap.
    assert!(
        elapsed >= Duration::from_millis(2200) && elapsed < Duration::from_millis(2250 + 5000),
        "{elapsed:?}"
    );
    assert!(!alive(pid));
    let warned = drain(&mut events).into_iter().any(|e| {
        matches!(
            e,
            HostEvent::Warning {
                reason: Some(Reason::ShutdownTimeout),
                ..
            }
        )
    });
    assert!(warned);
    env.finish(runtime).await;
}

pub(crate) async fn shutdown_is_idempotent_and_reads_a_late_shutdown_timeout_answer() {
    let env = Env::new();
    env.plugin("polite")
        .intercepts(&["context.prepare"])
        .on("context.prepare", json!("hang"))
        .record("polite.jsonl")
        .script(
            "shutdown",
            json!({"delay_ms": 1000, "error": {"code":-32000,"message":"hook overran","data":{"reason":"shutdown_timeout","retryable":true}}}),
        )
        .install();
    let config = env.config().shutdown_timeout_millis(1000);
    let (runtime, mut events) = env.boot_with(config).await.unwrap();
    // A call left pending when the reader ends during shutdown fails with provider_interrupted.
    let pending = {
        let runtime = runtime.clone();
        tokio::spawn(async move {
            runtime
                .intercept(
                    HookPoint::ContextPrepare,
                    HookPayload::Context(ContextPayload { messages: vec![] }),
                )
                .await
        })
    };
    // The call is pending once the sidecar has read it.
    eventually("the intercept to reach the sidecar", || {
        recorded(&env, "polite.jsonl")
            .iter()
            .any(|f| f["method"] == "extension/intercept")
    })
    .await;
    let started = Instant::now();
    let shutdowns: Vec<_> = (0..32)
        .map(|_| {
            let runtime = runtime.clone();
            tokio::spawn(async move { runtime.shutdown().await })
        })
        .collect();
    for shutdown in shutdowns {
        within(Duration::from_secs(15), "a shutdown", shutdown)
            .await
            .unwrap();
    }
    let elapsed = started.elapsed();
    // The answer sent at 1,000 ms was read: the host reports the overrun hook exactly once (a
    // host that gave up at 1,000 ms would report nothing), closed stdin right after it (no
    // 1,500 ms wait), and did not kill (a kill comes after 2,250 ms, with a second report).
    assert!(elapsed < Duration::from_millis(1450), "{elapsed:?}");
    let overran: Vec<_> = drain(&mut events)
        .into_iter()
        .filter_map(|e| match e {
            HostEvent::Warning {
                plugin,
                reason: Some(Reason::ShutdownTimeout),
                ..
            } => Some(plugin),
            _ => None,
        })
        .collect();
    assert_eq!(overran, [Some("polite".to_owned())]);
    // The plugin is optional, so the walk goes on; its trace entry tells what happened.
    let outcome = within(WAIT, "the pending call", pending)
        .await
        .unwrap()
        .unwrap();
    assert!(
        matches!(
            &outcome.trace[0].result,
            TraceResult::Failed {
                reason: Reason::ProviderInterrupted,
                ..
            }
        ),
        "{outcome:?}"
    );
    env.finish(runtime).await;
}

pub(crate) async fn a_stderr_flood_neither_blocks_nor_grows_the_tail() {
    let env = Env::new();
    env.plugin("noisy")
        .required()
        .intercepts(&["input.receive"])
        .runtime("env", json!({"FOO_TOKEN": "flood-secret-value"}))
        .script("stderr_flood", json!(2 * 1024 * 1024))
        .on("input.receive", json!("exit:5"))
        .install();
    let started = Instant::now();
    let (runtime, mut events) = env.boot().await;
    assert!(started.elapsed() < Duration::from_secs(10));
    let _ = runtime.intercept(HookPoint::InputReceive, input("x")).await;
    let tail = next_event(&mut events, "the crash", |e| match e {
        HostEvent::Crashed { stderr_tail, .. } => Some(stderr_tail),
        _ => None,
    })
    .await;
    assert!(tail.len() <= 16 * 1024, "{}", tail.len());
    assert!(tail.len() > 8 * 1024, "{}", tail.len());
    assert!(
        tail.starts_with("FOO_TOKEN=") || tail.starts_with("flood done"),
        "{:?}",
        &tail[..40]
    );
    assert!(tail.ends_with("flood done\n"));
    assert!(!tail.contains("flood-secret-value") && !tail.contains("flood-token"));
    env.finish(runtime).await;
}

pub(crate) async fn malformed_requests_from_a_sidecar_get_the_right_answers() {
    let env = Env::new();
    let big = "18446744073709551616";
    let read = |id: &str, params: &str| {
        format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"host/content/read","params":{params}}}"#)
    };
    let ok_params = r#"{"contentRef":"content_000000000000000000000000","offset":0}"#;
    let frames = vec![
        // 8: no jsonrpc member.
        format!(r#"{{"id":11,"method":"host/content/read","params":{ok_params}}}"#),
        // 9: bad ids, echoed ids, array params.
        read(r#"{"a":1}"#, ok_params),
        read("1.0", ok_params),
        read("1e3", ok_params),
        read("-5", ok_params),
        read("0", ok_params),
        read(big, ok_params),
        read("12", "[]"),
        // 10: a string id.
        read(r#""abc""#, ok_params),
        // 12: notifications that must produce nothing.
        r#"{"jsonrpc":"2.0","method":"host/ui/publish","params":{}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","method":"no/such"}"#.to_owned(),
        r#"{"jsonrpc":"2.0","method":"extension/provider/stream/chunk","params":5}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":999,"result":{}}"#.to_owned(),
        // 13: unregistered, wrong direction, notification-only (bad params too).
        r#"{"jsonrpc":"2.0","id":13,"method":"nope","params":{"x":1}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":14,"method":"extension/intercept","params":{"x":1}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":15,"method":"extension/provider/stream/end","params":{"x":1}}"#
            .to_owned(),
        // 20 and 7: params failing strict decoding.
        read("21", r#"{"contentRef":"x","offset":0,"extra":1}"#),
        read("22", r#"{"offset":0}"#),
        read("23", r#"{"contentRef":null,"offset":0}"#),
        read("24", r#"{"contentRef":"x","offset":1.5}"#),
        read("25", r#"{"contentRef":"\u3000","offset":0}"#),
        read("26", r#"{"contentRef":"x","contentRef":"y","offset":0}"#),
    ];
    env.plugin("rude")
        .intercepts(&["input.receive"])
        .script("after_init", json!(frames))
        .record("rude.jsonl")
        .install();
    let (runtime, _events) = env.boot().await;
    let path = env.path("rude.jsonl");
    let answers = || -> Vec<String> {
        std::fs::read_to_string(&path)
            .unwrap_or_default()
            .lines()
            .filter(|l| l.contains("\"error\"") || l.contains("\"result\""))
            .map(str::to_owned)
            .collect()
    };
    eventually("18 answers", || answers().len() >= 18).await;
    // 12: the connection is still usable.
    let outcome = runtime
        .intercept(HookPoint::InputReceive, input("still here"))
        .await
        .unwrap();
    assert!(outcome.proceeds());
    env.finish(runtime).await;
    let answers = answers();
    assert_eq!(answers.len(), 18, "{answers:#?}");
    let parsed: Vec<Value> = answers
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let by_id = |id: Value| -> &Value {
        parsed
            .iter()
            .find(|a| a["id"] == id)
            .unwrap_or_else(|| panic!("no answer for {id}"))
    };
    let reason = |a: &Value| {
        a["error"]["data"]["reason"]
            .as_str()
            .unwrap_or("")
            .to_owned()
    };
    assert_eq!(reason(by_id(json!(11))), "protocol_error");
    assert_eq!(by_id(json!(11))["error"]["code"], -32600);
    let nulls = parsed.iter().filter(|a| a["id"].is_null()).count();
    assert_eq!(nulls, 3, "object, 1.0 and 1e3 ids");
    assert_eq!(reason(by_id(json!(-5))), "content_ref_expired");
    assert_eq!(reason(by_id(json!(0))), "content_ref_expired");
    assert!(
        answers.iter().any(|l| l.contains(&format!("\"id\":{big}"))),
        "{answers:#?}"
    );
    assert_eq!(reason(by_id(json!(12))), "protocol_error");
    assert_eq!(reason(by_id(json!("abc"))), "content_ref_expired");
    for id in [13, 14, 15] {
        assert_eq!(reason(by_id(json!(id))), "unknown_method", "{id}");
        assert_eq!(by_id(json!(id))["error"]["code"], -32601);
    }
    for id in 21..=26 {
        assert_eq!(reason(by_id(json!(id))), "invalid_params", "{id}");
    }
    // 15: every error carries its reason and the table's retryable flag.
    for answer in &parsed {
        let data = &answer["error"]["data"];
        let reason = Reason::parse(data["reason"].as_str().unwrap()).unwrap();
        assert_eq!(data["retryable"], json!(reason.retryable()), "{answer}");
    }
}

pub(crate) async fn saturated_prompts_do_not_stop_intercept_answers() {
    let env = Env::new();
    let prompts: Vec<String> = (0..32)
        .map(|i| {
            format!(
                r#"{{"jsonrpc":"2.0","id":{},"method":"host/ui/request","params":{{"surfaceId":"p{i}","sessionId":"s-test","generation":1,"kind":"confirm","payload":{{"fields":[]}}}}}}"#,
                100 + i
            )
        })
        .collect();
    // 11: a request reusing the id of a pending prompt.
    let mut frames = prompts.clone();
    frames.push(prompts[0].clone());
    env.plugin("asker")
        .capabilities(&["interceptors", "ui"])
        .intercepts(&["input.receive"])
        .script("after_init", json!(frames))
        .record("asker.jsonl")
        .install();
    // Item 16 asks for 32 open prompts; the host allows 4 per connection unless told more.
    let (runtime, mut events) = env
        .boot_with(env.config().prompts_per_connection(32))
        .await
        .unwrap();
    let mut open = Vec::new();
    while open.len() < 32 {
        let prompt = next_event(&mut events, "a prompt", |e| match e {
            HostEvent::Prompt(p) => Some(p),
            _ => None,
        })
        .await;
        open.push(prompt);
    }
    for _ in 0..3 {
        let outcome = runtime
            .intercept(HookPoint::InputReceive, input("through"))
            .await
            .unwrap();
        assert!(outcome.proceeds());
    }
    let duplicate = || {
        recorded(&env, "asker.jsonl")
            .into_iter()
            .any(|f| f["id"] == 100 && f["error"]["data"]["reason"] == "protocol_error")
    };
    eventually("the duplicate id's -32600", duplicate).await;
    // The first request with that id is still answered.
    let mut first = open.remove(0);
    first
        .answer([("value".to_owned(), json!(true))].into_iter().collect())
        .unwrap();
    let answered = || {
        recorded(&env, "asker.jsonl")
            .into_iter()
            .any(|f| f["id"] == 100 && f["result"]["values"]["value"] == true)
    };
    eventually("the first prompt's answer", answered).await;
    drop(open);
    env.finish(runtime).await;
}
