//! Interceptor chains: order, decisions, replacements, timeouts, failure policy, slots,
//! events, sequence numbers, audit and redaction.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use sidewire_ext_host::{HostEvent, TraceResult, TraceRole};
use sidewire_ext_protocol::{
    CompactionPreparePayload, ContextPayload, DecisionKind, HookPayload, HookPoint, Reason,
    SessionPayload, SessionPhase, ToolBeforePayload, Verdict,
};

use crate::support::*;

fn warnings(events: &mut sidewire_ext_host::HostEvents) -> Vec<(Option<String>, String)> {
    drain(events)
        .into_iter()
        .filter_map(|e| match e {
            HostEvent::Warning {
                plugin, message, ..
            } => Some((plugin, message)),
            _ => None,
        })
        .collect()
}

pub(crate) async fn members_run_by_priority_then_id_each_seeing_its_predecessor() {
    let env = Env::new();
    for (name, priority) in [("zeta", 0), ("five", 5), ("minus", -3), ("alpha", 0)] {
        env.plugin(name)
            .intercepts(&["input.receive"])
            .priority(priority)
            .on("input.receive", json!("tag"))
            .install();
    }
    let (runtime, _events) = env.boot().await;
    let outcome = runtime
        .intercept(HookPoint::InputReceive, input("start"))
        .await
        .unwrap();
    assert_eq!(text_of(&outcome.payload), "start|minus|alpha|zeta|five");
    assert_eq!(outcome.applied, ["minus", "alpha", "zeta", "five"]);
    let order: Vec<&str> = outcome.trace.iter().map(|t| t.plugin.as_str()).collect();
    assert_eq!(order, ["minus", "alpha", "zeta", "five"]);
    assert!(
        outcome.trace.iter().all(|t| t.role == TraceRole::Chain
            && t.result == TraceResult::Decided(DecisionKind::Replace))
    );
    env.finish(runtime).await;
}

/// Item 71 for the host's own environment: `Redactor::from_process_env` at boot, observed in a
/// host process started with `FOO_TOKEN` set (the test process cannot change its own).
pub(crate) async fn secrets_of_the_hosts_environment_are_redacted() {
    let env = Env::new();
    env.plugin("leaky")
        .intercepts(&["input.receive"])
        .on(
            "input.receive",
            json!({"decision":"block","reason":"t=host-secret-777 s=short-1 Bearer x"}),
        )
        .install();
    let out = tokio::process::Command::new(std::env::current_exe().unwrap())
        .env(crate::sidecar::ROLE, "host")
        .env("SIDEWIRE_TEST_STATE", &env.state)
        .env("FOO_TOKEN", "host-secret-777")
        .env("BAR_TOKEN", "short-1")
        .kill_on_drop(true)
        .output();
    let out = within(WAIT, "the host process", out).await.unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    // Eight characters or more are secret; shorter values are too weak to match safely.
    assert_eq!(text.trim(), "t=[REDACTED] s=short-1 Bearer [REDACTED]");
    env.assert_no_processes();
}

pub(crate) async fn block_stops_the_walk_with_a_redacted_reason() {
    let env = Env::new();
    env.plugin("first")
        .intercepts(&["tool.before"])
        .priority(-1)
        .runtime("env", json!({"FOO_TOKEN": "tok-secret-42"}))
        .on(
            "tool.before",
            json!({"decision":"block","reason":"no: Bearer x and tok-secret-42"}),
        )
        .install();
    env.plugin("second")
        .intercepts(&["tool.before"])
        .record("second.jsonl")
        .install();
    let (runtime, _events) = env.boot().await;
    let outcome = runtime
        .intercept(HookPoint::ToolBefore, tool("shell", "", "c1"))
        .await
        .unwrap();
    let blocked = outcome.blocked.clone().unwrap();
    assert_eq!(blocked.plugin, "first");
    assert_eq!(blocked.reason, "no: Bearer [REDACTED] and [REDACTED]");
    assert!(!outcome.proceeds());
    assert_eq!(outcome.trace.len(), 1);
    env.finish(runtime).await;
    let intercepts = recorded(&env, "second.jsonl")
        .into_iter()
        .filter(|f| f["method"] == "extension/intercept")
        .count();
    assert_eq!(intercepts, 0, "a member after the blocker was called");
}

fn tool(name: &str, arguments: &str, call_id: &str) -> HookPayload {
    HookPayload::ToolBefore(ToolBeforePayload {
        name: name.to_owned(),
        arguments: arguments.to_owned(),
        call_id: call_id.to_owned(),
    })
}

pub(crate) async fn a_replacement_omitting_a_member_leaves_it_absent() {
    let env = Env::new();
    env.plugin("a")
        .intercepts(&["tool.before"])
        .on(
            "tool.before",
            json!({"decision":"replace","replacement":{"name":"shell"}}),
        )
        .install();
    env.plugin("b")
        .intercepts(&["tool.before"])
        .record("b.jsonl")
        .install();
    let (runtime, _events) = env.boot().await;
    let outcome = runtime
        .intercept(HookPoint::ToolBefore, tool("shell", r#"{"x":1}"#, "call-1"))
        .await
        .unwrap();
    assert_eq!(outcome.payload, tool("shell", "", ""));
    env.finish(runtime).await;
    let seen = recorded(&env, "b.jsonl");
    let intercept = seen
        .iter()
        .find(|f| f["method"] == "extension/intercept")
        .unwrap();
    assert_eq!(intercept["params"]["payload"], json!({"name":"shell"}));
}

pub(crate) async fn history_payloads_always_carry_messages() {
    let env = Env::new();
    env.plugin("rec")
        .intercepts(&["context.prepare", "compaction.prepare"])
        .record("rec.jsonl")
        .install();
    let (runtime, _events) = env.boot().await;
    runtime
        .intercept(
            HookPoint::ContextPrepare,
            HookPayload::Context(ContextPayload { messages: vec![] }),
        )
        .await
        .unwrap();
    runtime
        .intercept(
            HookPoint::CompactionPrepare,
            HookPayload::CompactionPrepare(CompactionPreparePayload {
                messages: vec![],
                guidance: String::new(),
            }),
        )
        .await
        .unwrap();
    env.finish(runtime).await;
    let payloads: Vec<Value> = recorded(&env, "rec.jsonl")
        .into_iter()
        .filter(|f| f["method"] == "extension/intercept")
        .map(|f| f["params"]["payload"].clone())
        .collect();
    assert_eq!(payloads, [json!({"messages":[]}), json!({"messages":[]})]);
}

pub(crate) async fn invalid_replacements_warn_once_when_optional_and_fail_when_required() {
    let env = Env::new();
    // 45: an input replacement with empty text; a session.save replacement with phase load.
    env.plugin("opt")
        .intercepts(&["input.receive", "session.save"])
        .on(
            "input.receive",
            json!({"decision":"replace","replacement":{"text":""}}),
        )
        .on(
            "session.save",
            json!({"decision":"replace","replacement":{"phase":"load"}}),
        )
        .install();
    let (runtime, mut events) = env.boot().await;
    for _ in 0..3 {
        let outcome = runtime
            .intercept(HookPoint::InputReceive, input("keep"))
            .await
            .unwrap();
        assert_eq!(text_of(&outcome.payload), "keep");
        let TraceResult::Failed { reason, message } = &outcome.trace[0].result else {
            panic!("{outcome:?}");
        };
        assert_eq!(*reason, Reason::ProtocolError);
        assert!(message.contains("invalid replacement"), "{message}");
    }
    let save = HookPayload::Session(SessionPayload {
        session_path: "/s".into(),
        phase: Some(SessionPhase::Save),
    });
    let outcome = runtime
        .intercept(HookPoint::SessionSave, save.clone())
        .await
        .unwrap();
    assert_eq!(outcome.payload, save);
    assert!(matches!(
        outcome.trace[0].result,
        TraceResult::Failed { .. }
    ));
    // Give the event stream a moment, then count: one warning for the plugin, not four.
    tokio::time::sleep(Duration::from_millis(50)).await;
    let warned = warnings(&mut events)
        .into_iter()
        .filter(|(p, _)| p.as_deref() == Some("opt"))
        .count();
    assert_eq!(warned, 1);
    env.finish(runtime).await;

    let env = Env::new();
    env.plugin("req")
        .required()
        .intercepts(&["input.receive"])
        .on(
            "input.receive",
            json!({"decision":"replace","replacement":{"text":" \u{3000}"}}),
        )
        .install();
    let (runtime, _events) = env.boot().await;
    let err = runtime
        .intercept(HookPoint::InputReceive, input("x"))
        .await
        .unwrap_err();
    let failure = err.operation().unwrap();
    assert_eq!(failure.plugin, "req");
    assert_eq!(failure.point, HookPoint::InputReceive);
    assert_eq!(failure.reason, Some(Reason::ProtocolError));
    env.finish(runtime).await;
}

pub(crate) async fn allow_and_deny_are_legal_only_at_permission_decision() {
    let env = Env::new();
    env.plugin("rogue")
        .required()
        .intercepts(&["tool.before"])
        .on("tool.before", json!({"decision":"allow"}))
        .install();
    let (runtime, _events) = env.boot().await;
    let err = runtime
        .intercept(HookPoint::ToolBefore, tool("x", "", ""))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("not allowed"), "{err}");
    env.finish(runtime).await;
}

pub(crate) async fn the_first_permission_verdict_is_terminal_and_audited_once() {
    let env = Env::new();
    env.plugin("a-cont")
        .intercepts(&["permission.decision"])
        .priority(-2)
        .install();
    env.plugin("b-allow")
        .intercepts(&["permission.decision"])
        .priority(-1)
        .on(
            "permission.decision",
            json!({"decision":"allow","reason":"read-only git"}),
        )
        .install();
    env.plugin("c-deny")
        .intercepts(&["permission.decision"])
        .on(
            "permission.decision",
            json!({"decision":"deny","reason":"never"}),
        )
        .install();
    let (runtime, _events) = env.boot().await;
    let outcome = runtime
        .intercept(HookPoint::PermissionDecision, permission(Verdict::Deny))
        .await
        .unwrap();
    assert_eq!(outcome.permission, Some(Verdict::Allow));
    assert_eq!(
        outcome.trace.len(),
        2,
        "c-deny was called after a terminal verdict"
    );
    let audit = outcome.audit.unwrap();
    assert_eq!(
        (
            audit.plugin.as_str(),
            audit.extension_decision.as_str(),
            audit.reason.as_str()
        ),
        ("b-allow", "allow", "read-only git")
    );
    let audit_log = || std::fs::read_to_string(env.state.join("audit.jsonl")).unwrap_or_default();
    assert_eq!(audit_log().lines().count(), 1);
    // Allow over a host allow writes nothing.
    let outcome = runtime
        .intercept(HookPoint::PermissionDecision, permission(Verdict::Allow))
        .await
        .unwrap();
    assert!(outcome.audit.is_none());
    assert_eq!(audit_log().lines().count(), 1);
    env.finish(runtime).await;

    // Everybody continues: the host verdict stands.
    let env = Env::new();
    env.plugin("idle")
        .intercepts(&["permission.decision"])
        .install();
    let (runtime, _events) = env.boot().await;
    let outcome = runtime
        .intercept(HookPoint::PermissionDecision, permission(Verdict::Deny))
        .await
        .unwrap();
    assert_eq!(outcome.permission, Some(Verdict::Deny));
    assert!(!outcome.proceeds());
    assert!(!env.state.join("audit.jsonl").exists());
    env.finish(runtime).await;
}

pub(crate) async fn host_decision_belongs_to_the_slot_owner() {
    let perm = |host: &str| json!({"name":"shell","arguments":"","hostDecision":host});
    let env = Env::new();
    env.plugin("chainer")
        .required()
        .intercepts(&["permission.decision"])
        .on(
            "permission.decision",
            json!({"decision":"replace","replacement":perm("allow")}),
        )
        .install();
    let (runtime, _events) = env.boot().await;
    let err = runtime
        .intercept(HookPoint::PermissionDecision, permission(Verdict::Deny))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("hostDecision"), "{err}");
    env.finish(runtime).await;

    let env = Env::new();
    env.plugin("owner")
        .replaces(&["permission"])
        .on(
            "permission.decision",
            json!({"decision":"replace","replacement":perm("allow"),"reason":"owner says"}),
        )
        .install();
    let (runtime, _events) = env.boot().await;
    let outcome = runtime
        .intercept(HookPoint::PermissionDecision, permission(Verdict::Deny))
        .await
        .unwrap();
    assert_eq!(outcome.permission, Some(Verdict::Allow));
    let audit = outcome.audit.unwrap();
    assert_eq!(audit.extension_decision, "replace");
    assert_eq!(audit.plugin, "owner");
    assert_eq!(outcome.trace[0].role, TraceRole::SlotOwner);
    env.finish(runtime).await;

    let env = Env::new();
    env.plugin("owner")
        .replaces(&["permission"])
        .on(
            "permission.decision",
            json!({"decision":"replace","replacement":{"name":"shell"}}),
        )
        .install();
    let (runtime, _events) = env.boot().await;
    let err = runtime
        .intercept(HookPoint::PermissionDecision, permission(Verdict::Deny))
        .await
        .unwrap_err();
    assert_eq!(err.reason(), Some(Reason::ProtocolError), "{err}");
    env.finish(runtime).await;
}

pub(crate) async fn timeouts_follow_the_point_and_the_clamped_manifest() {
    let env = Env::new();
    env.plugin("dflt")
        .intercepts(&["tool.before", "context.prepare"])
        .record("dflt.jsonl")
        .install();
    env.plugin("long")
        .intercepts(&["tool.before", "context.prepare"])
        .runtime("timeoutMillis", json!(90_000))
        .record("long.jsonl")
        .install();
    let (runtime, _events) = env.boot().await;
    runtime
        .intercept(HookPoint::ToolBefore, tool("x", "", ""))
        .await
        .unwrap();
    runtime
        .intercept(
            HookPoint::ContextPrepare,
            HookPayload::Context(ContextPayload { messages: vec![] }),
        )
        .await
        .unwrap();
    env.finish(runtime).await;
    let budgets = |file: &str| -> Vec<u64> {
        recorded(&env, file)
            .into_iter()
            .filter(|f| f["method"] == "extension/intercept")
            .map(|f| f["params"]["timeoutMillis"].as_u64().unwrap())
            .collect()
    };
    assert_eq!(budgets("dflt.jsonl"), [5_000, 30_000]);
    assert_eq!(budgets("long.jsonl"), [60_000, 60_000]);
}

pub(crate) async fn a_late_answer_is_a_timeout_and_policy_decides_what_follows() {
    let env = Env::new();
    env.plugin("slow-opt")
        .intercepts(&["input.receive"])
        .priority(-1)
        .runtime("timeoutMillis", json!(300))
        .on(
            "input.receive",
            json!({"delay_ms": 600, "then": {"decision":"replace","replacement":{"text":"late"}}}),
        )
        .install();
    env.plugin("after")
        .intercepts(&["input.receive"])
        .on("input.receive", json!("tag"))
        .install();
    let (runtime, mut events) = env.boot().await;
    for _ in 0..2 {
        let started = Instant::now();
        let outcome = runtime
            .intercept(HookPoint::InputReceive, input("t"))
            .await
            .unwrap();
        assert!(
            started.elapsed() < Duration::from_millis(550),
            "{:?}",
            started.elapsed()
        );
        // The walk went on with the payload unchanged, and the late answer was ignored.
        assert_eq!(text_of(&outcome.payload), "t|after");
        let TraceResult::Failed { reason, message } = &outcome.trace[0].result else {
            panic!("{outcome:?}");
        };
        assert_eq!(*reason, Reason::InterceptTimeout);
        assert_eq!(
            message,
            "extension slow-opt did not answer input.receive within 300 ms"
        );
        tokio::time::sleep(Duration::from_millis(400)).await;
    }
    let warned: Vec<_> = warnings(&mut events)
        .into_iter()
        .filter(|(p, _)| p.as_deref() == Some("slow-opt"))
        .collect();
    assert_eq!(warned.len(), 1, "{warned:?}");
    env.finish(runtime).await;

    let env = Env::new();
    env.plugin("slow-req")
        .required()
        .intercepts(&["tool.before"])
        .runtime("timeoutMillis", json!(200))
        .on("tool.before", json!("hang"))
        .install();
    let (runtime, _events) = env.boot().await;
    let err = runtime
        .intercept(HookPoint::ToolBefore, tool("x", "", ""))
        .await
        .unwrap_err();
    assert_eq!(err.reason(), Some(Reason::InterceptTimeout));
    assert_eq!(
        err.to_string(),
        "extension slow-req did not answer tool.before within 200 ms"
    );
    env.finish(runtime).await;
}

pub(crate) async fn the_slot_owner_runs_after_the_chain_and_its_replace_is_final() {
    let env = Env::new();
    env.plugin("member")
        .intercepts(&["system_prompt.build"])
        .on(
            "system_prompt.build",
            json!({"decision":"replace","replacement":{"prompt":"from member","workspaceRoot":"/w"}}),
        )
        .install();
    env.plugin("owner")
        .replaces(&["system_prompt"])
        .intercepts(&["system_prompt.build"])
        .record("owner.jsonl")
        .on(
            "system_prompt.build",
            json!({"decision":"replace","replacement":{"prompt":"from owner","workspaceRoot":"/w"}}),
        )
        .install();
    let (runtime, _events) = env.boot().await;
    let payload = HookPayload::SystemPrompt(sidewire_ext_protocol::SystemPromptPayload {
        prompt: "host".into(),
        workspace_root: "/w".into(),
    });
    let outcome = runtime
        .intercept(HookPoint::SystemPromptBuild, payload)
        .await
        .unwrap();
    let HookPayload::SystemPrompt(p) = &outcome.payload else {
        panic!()
    };
    assert_eq!(p.prompt, "from owner");
    let roles: Vec<(&str, TraceRole)> = outcome
        .trace
        .iter()
        .map(|t| (t.plugin.as_str(), t.role))
        .collect();
    assert_eq!(
        roles,
        [
            ("member", TraceRole::Chain),
            ("owner", TraceRole::SlotOwner)
        ]
    );
    env.finish(runtime).await;
    // The owner subscribed to the point too, but is called once, as the strategy, seeing the
    // chain's result.
    let seen: Vec<Value> = recorded(&env, "owner.jsonl")
        .into_iter()
        .filter(|f| f["method"] == "extension/intercept")
        .collect();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0]["params"]["payload"]["prompt"], "from member");
}

pub(crate) async fn strategy_failures_fail_the_operation_even_for_optional_plugins() {
    for answer in [
        json!({"decision":"block","reason":"nope"}),
        json!({"decision":"allow"}),
        json!({"decision":"deny"}),
        json!("hang"),
    ] {
        let env = Env::new();
        env.plugin("owner")
            .replaces(&["context"])
            .intercepts(&["tool.before"])
            .runtime("timeoutMillis", json!(300))
            .on("context.prepare", answer.clone())
            .on("tool.before", json!("hang"))
            .install();
        let (runtime, _events) = env.boot().await;
        let err = runtime
            .intercept(
                HookPoint::ContextPrepare,
                HookPayload::Context(ContextPayload { messages: vec![] }),
            )
            .await
            .unwrap_err();
        let failure = err.operation().unwrap_or_else(|| panic!("{answer}: {err}"));
        assert_eq!(failure.plugin, "owner");
        // The same plugin as an optional chain member elsewhere only warns.
        let outcome = runtime
            .intercept(HookPoint::ToolBefore, tool("x", "", ""))
            .await
            .unwrap();
        assert!(matches!(
            outcome.trace[0].result,
            TraceResult::Failed {
                reason: Reason::InterceptTimeout,
                ..
            }
        ));
        env.finish(runtime).await;
    }
}

pub(crate) async fn intercepts_reach_only_manifest_and_handshake_subscribers() {
    let env = Env::new();
    // Declared in the manifest but not subscribed in the handshake.
    env.plugin("declared-only")
        .intercepts(&["input.receive"])
        .script("initialize", json!({"result":{"subscriptions":null}}))
        .record("declared.jsonl")
        .install();
    env.plugin("both")
        .intercepts(&["input.receive"])
        .on("input.receive", json!("tag"))
        .install();
    let (runtime, _events) = env.boot().await;
    let outcome = runtime
        .intercept(HookPoint::InputReceive, input("x"))
        .await
        .unwrap();
    assert_eq!(text_of(&outcome.payload), "x|both");
    runtime.event(HookPoint::InputReceive, &input("e"));
    env.finish(runtime).await;
    let received = recorded(&env, "declared.jsonl")
        .into_iter()
        .filter(|f| f["method"] == "extension/intercept" || f["method"] == "extension/event")
        .count();
    assert_eq!(received, 0);
}

pub(crate) async fn seq_counts_written_intercepts_only() {
    let env = Env::new();
    env.plugin("counted")
        .intercepts(&["input.receive", "tool.before"])
        .record("counted.jsonl")
        .install();
    let (runtime, _events) = env.boot().await;
    runtime
        .intercept(HookPoint::InputReceive, input("one"))
        .await
        .unwrap();
    // Over 8 MiB: fails locally with frame_too_large and is never written.
    let huge = "x".repeat(sidewire_ext_protocol::CONTENT_OBJECT_BYTES + 1);
    let outcome = runtime
        .intercept(HookPoint::InputReceive, input(&huge))
        .await
        .unwrap();
    assert!(matches!(
        outcome.trace[0].result,
        TraceResult::Failed {
            reason: Reason::FrameTooLarge,
            ..
        }
    ));
    let turn = runtime.turn().await;
    let (a, b) = tokio::join!(
        turn.intercept(HookPoint::ToolBefore, tool("a", "", "")),
        turn.intercept(HookPoint::InputReceive, input("two")),
    );
    a.unwrap();
    b.unwrap();
    drop(turn);
    env.finish(runtime).await;
    let seqs: Vec<u64> = recorded(&env, "counted.jsonl")
        .into_iter()
        .filter(|f| f["method"] == "extension/intercept")
        .map(|f| f["params"]["seq"].as_u64().unwrap())
        .collect();
    assert_eq!(seqs, [1, 2, 3]);
}

pub(crate) async fn events_reach_every_recipient_once_as_notifications() {
    let env = Env::new();
    env.plugin("member")
        .intercepts(&["frontend.event"])
        .record("member.jsonl")
        .install();
    env.plugin("owner")
        .replaces(&["frontend_events"])
        .intercepts(&["frontend.event"])
        .record("owner.jsonl")
        .install();
    let (runtime, _events) = env.boot().await;
    let payload = HookPayload::FrontendEvent(sidewire_ext_protocol::FrontendEventPayload {
        kind: "turn_started".into(),
        text: "hi".into(),
        detail: String::new(),
    });
    runtime.event(HookPoint::FrontendEvent, &payload);
    env.finish(runtime).await;
    for file in ["member.jsonl", "owner.jsonl"] {
        let events: Vec<Value> = recorded(&env, file)
            .into_iter()
            .filter(|f| f["method"] == "extension/event")
            .collect();
        assert_eq!(events.len(), 1, "{file}");
        assert_eq!(events[0]["params"]["event"], "frontend.event");
        assert_eq!(events[0]["params"]["payload"]["kind"], "turn_started");
        assert!(events[0].get("id").is_none());
    }
}

pub(crate) async fn a_full_event_queue_drops_with_one_warning_and_delays_nothing() {
    let env = Env::new();
    env.plugin("busy")
        .intercepts(&["frontend.event", "input.receive"])
        .install();
    let (runtime, mut events) = env.boot().await;
    let payload = HookPayload::FrontendEvent(sidewire_ext_protocol::FrontendEventPayload {
        kind: "k".into(),
        text: "x".repeat(1000),
        detail: String::new(),
    });
    let started = Instant::now();
    for _ in 0..20_000 {
        runtime.event(HookPoint::FrontendEvent, &payload);
    }
    let emitting = started.elapsed();
    // On this current-thread runtime an emit that waited for the queue would never return (the
    // forwarder cannot run): finishing at all proves it never blocks. The bound is 10× the
    // time 20,000 serializations take on a loaded 2-core machine.
    assert!(
        emitting < Duration::from_secs(20),
        "emitting took {emitting:?}"
    );
    let started = Instant::now();
    let outcome = runtime
        .intercept(HookPoint::InputReceive, input("still fast"))
        .await
        .unwrap();
    assert_eq!(text_of(&outcome.payload), "still fast");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    let dropped: Vec<_> = warnings(&mut events)
        .into_iter()
        .filter(|(p, m)| p.as_deref() == Some("busy") && m.contains("event queue is full"))
        .collect();
    assert_eq!(dropped.len(), 1, "{dropped:?}");
    env.finish(runtime).await;
}

pub(crate) async fn a_point_without_subscribers_returns_the_payload_untouched() {
    let env = Env::new();
    env.plugin("other").intercepts(&["tool.after"]).install();
    let (runtime, _events) = env.boot().await;
    assert!(!runtime.has_subscribers(HookPoint::InputReceive));
    assert!(runtime.has_subscribers(HookPoint::ToolAfter));
    let outcome = runtime
        .intercept(HookPoint::InputReceive, input("same"))
        .await
        .unwrap();
    assert_eq!(text_of(&outcome.payload), "same");
    assert!(outcome.trace.is_empty() && outcome.proceeds());
    env.finish(runtime).await;
    let err = runtime_after_shutdown(&env).await;
    assert!(err.is_shut_down());
}

async fn runtime_after_shutdown(env: &Env) -> sidewire_ext_host::Error {
    let (runtime, _events) = env.boot().await;
    runtime.shutdown().await;
    let err = runtime
        .intercept(HookPoint::InputReceive, input("late"))
        .await
        .unwrap_err();
    drop(runtime);
    env.assert_no_processes();
    err
}

pub(crate) async fn results_with_externalized_or_errors_are_failures_with_redacted_messages() {
    let env = Env::new();
    env.plugin("ext")
        .intercepts(&["input.receive"])
        .priority(-1)
        .on(
            "input.receive",
            json!({"decision":"continue","externalized":[]}),
        )
        .install();
    env.plugin("err")
        .intercepts(&["input.receive"])
        .on(
            "input.receive",
            json!({"error":{"code":-32603,"message":"boom Bearer abc","data":{"reason":"internal","retryable":true}}}),
        )
        .install();
    let (runtime, _events) = env.boot().await;
    let outcome = runtime
        .intercept(HookPoint::InputReceive, input("x"))
        .await
        .unwrap();
    let failures: Vec<(Reason, String)> = outcome
        .trace
        .iter()
        .filter_map(|t| match &t.result {
            TraceResult::Failed { reason, message } => Some((*reason, message.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(failures.len(), 2, "{outcome:?}");
    assert_eq!(failures[0].0, Reason::ProtocolError);
    assert_eq!(failures[1].0, Reason::Internal);
    assert!(
        failures[1].1.contains("boom Bearer [REDACTED]"),
        "{}",
        failures[1].1
    );
    env.finish(runtime).await;
}

pub(crate) async fn big_events_are_externalized_and_resource_changes_reach_every_sidecar() {
    let env = Env::new();
    env.plugin("watcher")
        .intercepts(&["frontend.event"])
        .record("watcher.jsonl")
        .install();
    let (runtime, _events) = env.boot().await;
    let payload = HookPayload::FrontendEvent(sidewire_ext_protocol::FrontendEventPayload {
        kind: "big".into(),
        text: "x".repeat(70_000),
        detail: String::new(),
    });
    runtime.event(HookPoint::FrontendEvent, &payload);
    runtime.resources_changed(Vec::new());
    runtime.resources_changed(vec!["/w/skills/a.md".to_owned()]);
    let received = || {
        recorded(&env, "watcher.jsonl")
            .into_iter()
            .filter(|f| {
                f["method"] == "extension/event" || f["method"] == "extension/resources/changed"
            })
            .collect::<Vec<Value>>()
    };
    eventually("the event and the change", || received().len() >= 2).await;
    env.finish(runtime).await;
    let frames = received();
    assert_eq!(frames.len(), 2, "an empty change list is never sent");
    // The two travel through different queues, so their order is not fixed.
    let event = frames
        .iter()
        .find(|f| f["method"] == "extension/event")
        .unwrap();
    assert!(event["params"]["payload"].is_null());
    assert_eq!(
        event["params"]["externalized"][0]["jsonPointer"],
        "/payload"
    );
    assert_eq!(
        event["params"]["externalized"][0]["totalBytes"],
        70_000 + r#"{"kind":"big","text":""}"#.len()
    );
    let change = frames
        .iter()
        .find(|f| f["method"] == "extension/resources/changed")
        .unwrap();
    assert_eq!(change["params"], json!({"paths":["/w/skills/a.md"]}));
}
