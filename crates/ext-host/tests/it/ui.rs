//! The UI hub: the `host/ui/*` gate, staleness, prompts, card actions and form submissions.

use std::collections::BTreeMap;

use serde_json::{Value, json};
use sidewire_ext_host::HostEvent;
use sidewire_ext_protocol::{FieldKind, HookPoint, Reason, SurfacePayload, UiHost};

use crate::support::*;

fn publish(
    id: u64,
    surface: &str,
    generation: u64,
    session: &str,
    kind: &str,
    payload: Value,
) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"host/ui/publish","params":{
        "surfaceId":surface,"sessionId":session,"generation":generation,"kind":kind,"payload":payload}})
}

fn request(
    id: u64,
    surface: &str,
    generation: u64,
    session: &str,
    kind: &str,
    fields: Value,
) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"host/ui/request","params":{
        "surfaceId":surface,"sessionId":session,"generation":generation,"kind":kind,
        "payload":{"title":"Q","fields":fields}}})
}

/// The answer the sidecar recorded for its request `id`.
async fn answer(env: &Env, file: &str, id: u64) -> Value {
    let mut found = None;
    eventually(&format!("the answer to request {id}"), || {
        found = recorded(env, file)
            .into_iter()
            .find(|f| f["id"] == id && f.get("method").is_none());
        found.is_some()
    })
    .await;
    found.unwrap()
}

pub(crate) async fn the_gate_checks_capability_params_ui_and_staleness() {
    let env = Env::new();
    // 62: no capability `ui`.
    env.plugin("no-ui")
        .script(
            "after_init",
            json!([publish(1, "s", 1, "s-test", "status", json!({"label":"x"}))]),
        )
        .record("no-ui.jsonl")
        .install();
    env.plugin("ui")
        .capabilities(&["ui"])
        .script(
            "after_init",
            json!([
                // 65: a status without label.
                publish(1, "s", 1, "s-test", "status", json!({"detail":"x"})),
                // 63: stale generation and stale session.
                publish(2, "s", 7, "s-test", "status", json!({"label":"future"})),
                publish(
                    3,
                    "s",
                    1,
                    "s-other",
                    "status",
                    json!({"label":"other session"})
                ),
                request(4, "q", 1, "s-other", "confirm", json!([])),
                // 66: a card action not declared.
                publish(
                    5,
                    "c",
                    1,
                    "s-test",
                    "card",
                    json!({"actions":[{"actionId":"undeclared","label":"Go"}]})
                ),
                // Live: shown.
                publish(
                    6,
                    "s",
                    1,
                    "s-test",
                    "status",
                    json!({"label":"Bearer tok ok"})
                ),
            ]),
        )
        .record("ui.jsonl")
        .install();
    let (runtime, mut events) = env.boot().await;
    let reason = |a: &Value| a["error"]["data"]["reason"].as_str().map(str::to_owned);
    assert_eq!(
        reason(&answer(&env, "no-ui.jsonl", 1).await).as_deref(),
        Some("capability_not_declared")
    );
    assert_eq!(
        reason(&answer(&env, "ui.jsonl", 1).await).as_deref(),
        Some("invalid_params")
    );
    assert_eq!(
        answer(&env, "ui.jsonl", 2).await["result"],
        json!({"accepted":false})
    );
    assert_eq!(
        answer(&env, "ui.jsonl", 3).await["result"],
        json!({"accepted":false})
    );
    assert_eq!(
        answer(&env, "ui.jsonl", 4).await["result"],
        json!({"cancelled":true})
    );
    assert_eq!(
        reason(&answer(&env, "ui.jsonl", 5).await).as_deref(),
        Some("invalid_params")
    );
    assert_eq!(
        answer(&env, "ui.jsonl", 6).await["result"],
        json!({"accepted":true})
    );
    let surface = next_event(&mut events, "the live surface", |e| match e {
        HostEvent::Surface(s) => Some(s),
        _ => None,
    })
    .await;
    let SurfacePayload::Status(status) = surface.payload else {
        panic!()
    };
    assert_eq!(status.label, "Bearer [REDACTED] ok");
    env.finish(runtime).await;

    // 65: a headless host has no UI.
    let env = Env::new();
    env.plugin("ui")
        .capabilities(&["ui"])
        .script(
            "after_init",
            json!([publish(1, "s", 1, "s-test", "status", json!({"label":"x"}))]),
        )
        .record("ui.jsonl")
        .install();
    let (runtime, _events) = env
        .boot_with(env.config().ui_host(UiHost::Headless))
        .await
        .unwrap();
    assert_eq!(
        reason(&answer(&env, "ui.jsonl", 1).await).as_deref(),
        Some("unknown_method")
    );
    env.finish(runtime).await;
}

pub(crate) async fn prompts_are_answered_by_field_key_with_the_governing_type() {
    let env = Env::new();
    env.plugin("asker")
        .capabilities(&["ui"])
        .script(
            "after_init",
            json!([
                request(
                    1,
                    "one",
                    1,
                    "s-test",
                    "confirm",
                    json!([{"key":"name","kind":"input"}])
                ),
                request(2, "none", 1, "s-test", "multiselect", json!([])),
            ]),
        )
        .record("asker.jsonl")
        .install();
    let (runtime, mut events) = env.boot().await;
    for _ in 0..2 {
        let mut prompt = next_event(&mut events, "a prompt", |e| match e {
            HostEvent::Prompt(p) => Some(p),
            _ => None,
        })
        .await;
        assert_eq!(prompt.fields.len(), 1);
        let field = prompt.fields[0].clone();
        if prompt.surface_id == "one" {
            assert_eq!((field.key.as_str(), field.kind), ("name", FieldKind::Input));
            let wrong: BTreeMap<String, Value> = [("name".to_owned(), json!(true))].into();
            assert!(
                prompt.answer(wrong).is_err(),
                "a boolean for an input field"
            );
            prompt
                .answer([("name".to_owned(), json!("bob"))].into())
                .unwrap();
        } else {
            assert_eq!(
                (field.key.as_str(), field.kind),
                ("value", FieldKind::Multiselect)
            );
            prompt
                .answer([("value".to_owned(), json!(["a", "b"]))].into())
                .unwrap();
        }
    }
    assert_eq!(
        answer(&env, "asker.jsonl", 1).await["result"],
        json!({"cancelled":false,"values":{"name":"bob"}})
    );
    assert_eq!(
        answer(&env, "asker.jsonl", 2).await["result"],
        json!({"cancelled":false,"values":{"value":["a","b"]}})
    );
    env.finish(runtime).await;
}

pub(crate) async fn card_actions_carry_the_surface_and_stale_surfaces_are_refused() {
    let env = Env::new();
    env.plugin("cards")
        .capabilities(&["interceptors", "ui"])
        .intercepts(&["input.receive"])
        .on("input.receive", json!("exit:7"))
        .script("ui_actions", json!([{"actionId":"go","label":"Go"}]))
        .script(
            "after_init",
            json!([
                publish(
                    1,
                    "card-1",
                    1,
                    "s-test",
                    "card",
                    json!({"title":"T","actions":[{"actionId":"go","label":"Go"}]})
                ),
                publish(
                    2,
                    "form-1",
                    1,
                    "s-test",
                    "form",
                    json!({"fields":[{"key":"k","kind":"input"}]})
                ),
            ]),
        )
        .record("cards.jsonl")
        .install();
    let (runtime, mut events) = env.boot().await;
    answer(&env, "cards.jsonl", 2).await;
    let result = runtime.card_action("cards", "card-1", "go").await.unwrap();
    assert!(result.accepted);
    let sent = recorded(&env, "cards.jsonl")
        .into_iter()
        .find(|f| f["method"] == "extension/ui/action")
        .unwrap();
    assert_eq!(sent["params"]["args"], json!({"surfaceId":"card-1"}));
    assert_eq!(sent["params"]["sessionId"], "s-test");
    assert_eq!(sent["params"]["generation"], 1);
    let err = runtime
        .card_action("cards", "card-1", "other")
        .await
        .unwrap_err();
    assert_eq!(err.reason(), Some(Reason::InvalidParams));
    let values: BTreeMap<String, Value> = [("k".to_owned(), json!("v"))].into();
    assert!(
        runtime
            .submit_form("cards", "form-1", values.clone())
            .await
            .unwrap()
            .accepted
    );
    // Crash the publisher: its surfaces are stale, refused host-side, never forwarded.
    let _ = runtime.intercept(HookPoint::InputReceive, input("x")).await;
    next_event(&mut events, "the stale surfaces", |e| match e {
        HostEvent::SurfacesStale { plugin, .. } => Some(plugin),
        _ => None,
    })
    .await;
    let err = runtime
        .submit_form("cards", "form-1", values)
        .await
        .unwrap_err();
    assert_eq!(err.reason(), Some(Reason::StaleGeneration), "{err}");
    let err = runtime
        .card_action("cards", "card-1", "go")
        .await
        .unwrap_err();
    assert_eq!(err.reason(), Some(Reason::StaleGeneration), "{err}");
    let forwarded = recorded(&env, "cards.jsonl")
        .into_iter()
        .filter(|f| f["method"] == "extension/ui/submit")
        .count();
    assert_eq!(forwarded, 1);
    env.finish(runtime).await;
}

pub(crate) async fn an_action_never_answered_times_out_on_the_ui_deadline() {
    // The spec's 30 s is the default (`HostConfig::ui_call_timeout`); lowered here so the test
    // takes a fraction of a second.
    let deadline = std::time::Duration::from_millis(300);
    let env = Env::new();
    env.plugin("mute")
        .capabilities(&["ui"])
        .script("ui_actions", json!([{"actionId":"go"}]))
        .script("ui_action", json!("hang"))
        .install();
    let (runtime, _events) = env
        .boot_with(env.config().ui_call_timeout(deadline))
        .await
        .unwrap();
    let started = std::time::Instant::now();
    let err = runtime.ui_action("mute", "go").await.unwrap_err();
    let elapsed = started.elapsed();
    assert_eq!(err.reason(), Some(Reason::InterceptTimeout), "{err}");
    assert!(
        elapsed >= deadline && elapsed < 10 * deadline,
        "{elapsed:?}"
    );
    assert_eq!(
        err.to_string(),
        "extension mute did not answer action go within 300 ms"
    );
    // The default is the spec's 30 s.
    assert_eq!(
        env.config().get_ui_call_timeout(),
        std::time::Duration::from_secs(30)
    );
    env.finish(runtime).await;
}

pub(crate) async fn a_crash_dismisses_open_prompts() {
    let env = Env::new();
    env.plugin("asker")
        .capabilities(&["interceptors", "ui"])
        .intercepts(&["input.receive"])
        .on("input.receive", json!("exit:2"))
        .script(
            "after_init",
            json!([request(1, "q", 1, "s-test", "confirm", json!([]))]),
        )
        .install();
    let (runtime, mut events) = env.boot().await;
    let prompt = next_event(&mut events, "the prompt", |e| match e {
        HostEvent::Prompt(p) => Some(p),
        _ => None,
    })
    .await;
    let _ = runtime.intercept(HookPoint::InputReceive, input("x")).await;
    let dismissed = next_event(&mut events, "the dismissal", |e| match e {
        HostEvent::PromptDismissed { prompt, .. } => Some(prompt),
        _ => None,
    })
    .await;
    assert_eq!(dismissed, prompt.id);
    env.finish(runtime).await;
}
