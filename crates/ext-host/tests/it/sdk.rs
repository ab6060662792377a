//! The SDK's example sidecars as friendly, real processes.

use std::collections::BTreeMap;

use sidewire_ext_host::HostEvent;
use sidewire_ext_protocol::{HookPoint, SurfacePayload, Verdict};

use crate::support::*;

pub(crate) async fn the_starter_example_rewrites_input() {
    let env = Env::new();
    env.install_example("starter");
    let (runtime, _events) = env.boot().await;
    assert_eq!(runtime.sidecars().len(), 1);
    let outcome = runtime
        .intercept(HookPoint::InputReceive, input("starter: fix it"))
        .await
        .unwrap();
    assert_eq!(
        text_of(&outcome.payload),
        "fix it [rewritten by starter-extension]"
    );
    assert_eq!(outcome.applied, ["starter-extension"]);
    let outcome = runtime
        .intercept(HookPoint::InputReceive, input("plain"))
        .await
        .unwrap();
    assert_eq!(text_of(&outcome.payload), "plain");
    assert!(outcome.applied.is_empty());
    env.finish(runtime).await;
}

pub(crate) async fn the_allow_all_example_overrides_a_denial_and_is_audited() {
    let env = Env::new();
    env.install_example("allow_all");
    let (runtime, mut events) = env.boot().await;
    let outcome = runtime
        .intercept(HookPoint::PermissionDecision, permission(Verdict::Deny))
        .await
        .unwrap();
    assert_eq!(outcome.permission, Some(Verdict::Allow));
    let audit = outcome.audit.clone().expect("audited");
    assert_eq!(audit.plugin, "allow-all");
    assert_eq!(audit.extension_decision, "allow");
    let line = std::fs::read_to_string(env.state.join("audit.jsonl")).unwrap();
    assert_eq!(line.lines().count(), 1);
    let record: serde_json::Value = serde_json::from_str(line.trim()).unwrap();
    assert_eq!(record.as_object().unwrap().len(), 6, "{record}");
    for key in [
        "time",
        "plugin",
        "point",
        "hostDecision",
        "extensionDecision",
        "reason",
    ] {
        assert!(record[key].is_string(), "{key} in {record}");
    }
    assert_eq!(record["hostDecision"], "deny");
    assert_eq!(record["point"], "permission.decision");
    assert!(record["time"].as_str().unwrap().ends_with('Z'));
    next_event(&mut events, "the audit event", |e| match e {
        HostEvent::Audited(r) => Some(r),
        _ => None,
    })
    .await;
    // Allow over a host allow writes nothing.
    let outcome = runtime
        .intercept(HookPoint::PermissionDecision, permission(Verdict::Allow))
        .await
        .unwrap();
    assert_eq!(outcome.permission, Some(Verdict::Allow));
    assert!(outcome.audit.is_none());
    let line = std::fs::read_to_string(env.state.join("audit.jsonl")).unwrap();
    assert_eq!(line.lines().count(), 1);
    env.finish(runtime).await;
}

pub(crate) async fn the_status_card_example_publishes_at_once_and_answers_its_action() {
    let env = Env::new();
    env.install_example("status_card");
    let (runtime, mut events) = env.boot().await;
    let surface = next_event(&mut events, "the status surface", |e| match e {
        HostEvent::Surface(s) => Some(s),
        _ => None,
    })
    .await;
    assert_eq!(surface.plugin, "status-card");
    let SurfacePayload::Status(status) = &surface.payload else {
        panic!("{surface:?}");
    };
    assert_eq!(status.label, "status-card ready");
    let actions = runtime.ui_actions();
    assert_eq!(actions.len(), 1);
    assert_eq!(actions[0].1.action_id, "refresh");
    let result = runtime.ui_action("status-card", "refresh").await.unwrap();
    assert!(result.accepted);
    let surface = next_event(&mut events, "the refreshed surface", |e| match e {
        HostEvent::Surface(s) => Some(s),
        _ => None,
    })
    .await;
    let SurfacePayload::Status(status) = &surface.payload else {
        panic!("{surface:?}");
    };
    assert_eq!(status.label, "refreshed 1 times");
    let err = runtime.ui_action("status-card", "nope").await.unwrap_err();
    assert_eq!(
        err.reason(),
        Some(sidewire_ext_protocol::Reason::InvalidParams)
    );
    let _ = BTreeMap::<String, String>::new();
    env.finish(runtime).await;
}

/// Each example behind its Manifest v2 twin (`reasonix-plugin.v2.json`): the sidecar answers
/// the V2 handshake (a v1 answer would fail it) and serves as it does under v1.
pub(crate) async fn each_example_runs_behind_its_v2_manifest() {
    const V2: &str = "reasonix-plugin.v2.json";
    let env = Env::new();
    for example in ["starter", "allow_all", "status_card", "provider"] {
        env.install_example_with(example, V2);
    }
    let (runtime, mut events) = env.boot().await;
    let sidecars = runtime.sidecars();
    assert_eq!(sidecars.len(), 4, "{sidecars:?}");
    assert!(sidecars.iter().all(|s| s.ready), "{sidecars:?}");
    let outcome = runtime
        .intercept(HookPoint::InputReceive, input("starter: fix it"))
        .await
        .unwrap();
    assert_eq!(
        text_of(&outcome.payload),
        "fix it [rewritten by starter-extension]"
    );
    let outcome = runtime
        .intercept(HookPoint::PermissionDecision, permission(Verdict::Deny))
        .await
        .unwrap();
    assert_eq!(outcome.permission, Some(Verdict::Allow));
    assert!(outcome.audit.is_some());
    next_event(&mut events, "the status surface", |e| match e {
        HostEvent::Surface(s) if s.plugin == "status-card" => Some(s),
        _ => None,
    })
    .await;
    let refs: Vec<String> = (runtime.providers().iter())
        .map(|entry| entry.descriptor.reference.clone())
        .collect();
    assert_eq!(refs, ["plugin/scripted-model/scripted/echo-1"]);
    env.finish(runtime).await;
}

/// The tools example (a v2 plugin): its two tools are cataloged and answer.
pub(crate) async fn the_tools_example_serves_its_tools() {
    let env = Env::new();
    env.install_example("tools");
    let (runtime, _events) = env.boot().await;
    let tools = runtime.tools();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    // In the handshake's order (the SDK sorts it).
    assert_eq!(
        names,
        [
            "ext__text-tools__reverse_words",
            "ext__text-tools__word_count"
        ]
    );
    assert!(!tools[0].read_only && tools[1].read_only);
    let result = runtime
        .call_tool(
            "ext__text-tools__word_count",
            Some(serde_json::json!({"text": "one two three"})),
        )
        .await
        .unwrap();
    assert_eq!((result.content.as_str(), result.is_error), ("3", false));
    // No arguments: the host sends `{}`, which has no `text`: a tool error, not a failure.
    let result = runtime
        .call_tool("ext__text-tools__reverse_words", None)
        .await
        .unwrap();
    assert!(result.is_error, "{result:?}");
    env.finish(runtime).await;
}
