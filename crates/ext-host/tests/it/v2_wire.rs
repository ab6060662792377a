//! The per-connection tables of a V2 connection after its handshake (spec delta §1.4 P1): the
//! reason table (§3.1), provider streams (§2.11), externalized replacements (§2.9), the v2 UI
//! kinds (§2.7) and the browser methods (§2.4), each against a scripted v2 sidecar, with the
//! same traffic on a V1 connection where the tables differ.
//!
//! | Delta §6 item | Test (and unit tests beside it) |
//! | --- | --- |
//! | 8 (H) | `browser_requests_are_v2_only_and_refused`; `sidewire-ext-protocol`'s `v2::browser::tests` |
//! | 16 | `browser_requests_are_v2_only_and_refused`, `conn::router::tests::params_first_then_the_requirement_then_unavailable` (the `browser_unavailable` case: such a plugin is Inactive, never spawned) |
//! | 18 | `externalized_replacements_are_resolved_in_order` |
//! | 19, 20, 29 | `v2_panels_and_views_are_shown_and_checked`; `v2::ui::tests` in `sidewire-ext-protocol` (every view limit at and past it) |
//! | 21 | `v2_streams_open_with_seq_base_one` |
//! | 23 | `chunks_of_a_superseded_generation_are_dropped` |
//! | 25 (H), 26 | `peer_errors_are_read_with_the_connections_reason_table` |

use serde_json::{Value, json};
use sidewire_ext_host::HostConfig;
use sidewire_ext_protocol::{HookPoint, Reason, UiHost};

use crate::support::*;

/// A headless host in session `s-7f3a`, as in the delta's §5.3.
fn config(env: &Env) -> HostConfig {
    HostConfig::new(&env.state, "s-7f3a", env.tmp.path()).ui_host(UiHost::Headless)
}

/// A scripted plugin with a v2 manifest whose handshake answers in v2, intercepting `point`.
fn v2_plugin<'a>(env: &'a Env, name: &str, point: &str) -> PluginBuilder<'a> {
    env.plugin(name)
        .manifest("apiVersion", json!("reasonix.io/plugin/v2"))
        .manifest("version", json!("0.1.0"))
        .intercepts(&[point])
        .script("initialize", json!({"result": {"protocolVersion": "2"}}))
}

/// The reason a required plugin's intercept failed with, when it answers `error`; the
/// connection must survive the answer.
async fn failed_with(v2: bool, error: Value) -> Option<Reason> {
    let env = Env::new();
    let plugin = if v2 {
        v2_plugin(&env, "talker", "input.receive")
    } else {
        env.plugin("talker").intercepts(&["input.receive"])
    };
    plugin
        .required()
        .on("input.receive", json!({ "error": error }))
        .install();
    let (runtime, _events) = env.boot_with(config(&env)).await.unwrap();
    let err = within(
        WAIT,
        "the intercept",
        runtime.intercept(HookPoint::InputReceive, input("x")),
    )
    .await
    .expect_err("a required member's error fails the intercept");
    // An error answer never crashes the connection (item 26).
    assert_eq!(runtime.sidecars().len(), 1);
    assert!(runtime.sidecars()[0].ready, "{err}");
    env.finish(runtime).await;
    err.reason()
}

/// Checklist items 25 (host side) and 26: the V2 table's 28 reasons, read per connection.
pub(crate) async fn peer_errors_are_read_with_the_connections_reason_table() {
    let carrying = |reason: &str, retryable: bool| json!({"code": -32000, "message": "m", "data": {"reason": reason, "retryable": retryable}});
    // A v2-only reason with its table flag is understood on V2 ...
    assert_eq!(
        failed_with(true, carrying("browser_unavailable", true)).await,
        Some(Reason::BrowserUnavailable)
    );
    assert_eq!(
        failed_with(true, carrying("dependency_cycle", false)).await,
        Some(Reason::DependencyCycle)
    );
    // ... is no reason with the wrong flag (an error without a reason fails as `internal`) ...
    assert_eq!(
        failed_with(true, carrying("browser_unavailable", false)).await,
        Some(Reason::Internal)
    );
    // ... and no reason on a V1 connection.
    assert_eq!(
        failed_with(false, carrying("browser_unavailable", true)).await,
        Some(Reason::Internal)
    );
    // v1's reasons keep working on V2.
    assert_eq!(
        failed_with(true, carrying("intercept_timeout", true)).await,
        Some(Reason::InterceptTimeout)
    );
    // Item 26: the Go SDK's transport-local errors carry no reason and crash nothing.
    assert_eq!(
        failed_with(true, json!({"code": -32099, "message": "server busy"})).await,
        Some(Reason::Internal)
    );
    assert_eq!(
        failed_with(
            true,
            json!({"code": -32603, "message": "response exceeds frame size limit"})
        )
        .await,
        Some(Reason::Internal)
    );
}

const REF: &str = "plugin/prov/echo/m1";

/// A v2 provider sidecar answering its stream opens as `opens` say.
fn v2_provider<'a>(env: &'a Env, opens: &[Value]) -> PluginBuilder<'a> {
    let mut plugin = v2_plugin(env, "prov", "input.receive").providers(&[REF]);
    for open in opens {
        plugin = plugin.open(open.clone());
    }
    plugin.record("prov.jsonl")
}

/// Checklist item 21: a V2 stream opens with `seqBase` 1 and is complete when its chunks
/// start at 1; a sidecar that starts at 2 (v1's numbering behind a v2 host) leaves a gap.
pub(crate) async fn v2_streams_open_with_seq_base_one() {
    use sidewire_ext_host::StreamRequest;
    let env = Env::new();
    v2_provider(
        &env,
        &[
            json!({"after": [{"stream": 2}]}),
            json!({"after": [{"c": 2}, {"c": 3}, {"end": 3}]}),
        ],
    )
    .install();
    let (runtime, _events) = env.boot_with(config(&env)).await.unwrap();
    let mut stream = runtime
        .open_stream(StreamRequest::new(REF, ask("hello")))
        .await
        .expect("the stream opens");
    let (chunks, error) = read_stream(&mut stream).await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(texts(&chunks), ["w1", "w2"]);
    let mut stream = runtime
        .open_stream(StreamRequest::new(REF, ask("hello")))
        .await
        .expect("the stream opens");
    let (chunks, error) = read_stream(&mut stream).await;
    assert!(chunks.is_empty());
    assert_eq!(error.and_then(|e| e.reason()), Some(Reason::StreamGap));
    env.finish(runtime).await;
    let opens: Vec<Value> = recorded(&env, "prov.jsonl")
        .into_iter()
        .filter(|f| f["method"] == "extension/provider/stream/open")
        .collect();
    assert_eq!(opens.len(), 2);
    for open in opens {
        assert_eq!(open["params"]["seqBase"], 1, "{open}");
        assert!(open["params"].get("generation").is_none(), "{open}");
    }
}

/// Checklist item 23: a chunk naming a superseded generation is dropped; one without a
/// generation (or with the current one) is accepted. The sidecar starts in generation 2, so
/// generation 1 is superseded for it.
pub(crate) async fn chunks_of_a_superseded_generation_are_dropped() {
    use sidewire_ext_host::StreamRequest;
    let env = Env::new();
    let (runtime, _events) = env.boot_with(config(&env)).await.unwrap();
    let chunk = |seq: u64, text: &str, outer: Option<u64>, inner: Option<u64>| {
        let mut chunk = json!({"type": "text", "text": text});
        if let Some(generation) = inner {
            chunk["generation"] = json!(generation);
        }
        let mut params = json!({"streamId": "@sid", "seq": seq, "chunk": chunk});
        if let Some(generation) = outer {
            params["generation"] = json!(generation);
        }
        json!({"jsonrpc": "2.0", "method": "extension/provider/stream/chunk", "params": params})
            .to_string()
    };
    let frames = [
        chunk(1, "stale", Some(1), None),
        chunk(1, "stale inside", None, Some(1)),
        chunk(1, "w1", None, None),
        chunk(2, "stale again", Some(1), Some(2)),
        chunk(2, "w2", Some(2), Some(1)),
        chunk(3, "w3", Some(0), Some(0)),
    ];
    v2_provider(
        &env,
        &[json!({"after": [frames[0], frames[1], frames[2], frames[3], frames[4], frames[5], {"end": 3}]})],
    )
    .install();
    let report = within(WAIT, "reload", runtime.reload()).await.unwrap();
    drop(report);
    assert_eq!(runtime.sidecars()[0].generation, 2);
    let mut stream = runtime
        .open_stream(StreamRequest::new(REF, ask("hello")))
        .await
        .expect("the stream opens");
    let (chunks, error) = read_stream(&mut stream).await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(texts(&chunks), ["w1", "w2", "w3"]);
    drop(stream);
    env.finish(runtime).await;
}

/// The outcome of one intercept of a payload over 64 KiB (so it travels externalized) at a
/// required plugin answering `action`, on a v2 or a v1 connection.
async fn externalized_answer(
    v2: bool,
    action: Value,
) -> Result<sidewire_ext_host::Outcome, sidewire_ext_host::Error> {
    let env = Env::new();
    let plugin = if v2 {
        v2_plugin(&env, "talker", "input.receive")
    } else {
        env.plugin("talker").intercepts(&["input.receive"])
    };
    plugin.required().on("input.receive", action).install();
    let (runtime, _events) = env.boot_with(config(&env)).await.unwrap();
    let big = "x".repeat(70_000);
    let outcome = within(
        WAIT,
        "the intercept",
        runtime.intercept(HookPoint::InputReceive, input(&big)),
    )
    .await;
    if let Ok(outcome) = &outcome {
        assert_eq!(text_of(&outcome.payload), big);
    }
    env.finish(runtime).await;
    outcome
}

/// Checklist item 18: externalized replacements on V2, in the order of the delta's §2.9.
pub(crate) async fn externalized_replacements_are_resolved_in_order() {
    // The intercept's own payload, echoed back as the replacement: resolved, re-validated and
    // applied.
    let outcome = externalized_answer(true, json!({"echo_externalized": {}}))
        .await
        .unwrap();
    assert_eq!(outcome.applied, ["talker"]);
    let failed = |result: Result<sidewire_ext_host::Outcome, sidewire_ext_host::Error>| {
        result
            .map(|_| ())
            .expect_err("the required member fails")
            .reason()
    };
    let cases = [
        // 1. Inline plus a descriptor.
        (
            json!({"echo_externalized": {}, "inline": {"text": "x"}}),
            Reason::ProtocolError,
        ),
        // 2. The wrong pointer, or two descriptors.
        (
            json!({"echo_externalized": {"jsonPointer": "/payload"}}),
            Reason::ProtocolError,
        ),
        (
            json!({"echo_externalized": {}, "twice": true}),
            Reason::ProtocolError,
        ),
        // 3. Over 8 MiB (checked before the ref).
        (
            json!({"echo_externalized": {"totalBytes": 8_388_609, "contentRef": "cr_gone"}}),
            Reason::FrameTooLarge,
        ),
        // 4. A ref this connection does not hold (never minted, or evicted).
        (
            json!({"echo_externalized": {"contentRef": "cr_0123456789abcdef0123456789abcdef"}}),
            Reason::ContentRefExpired,
        ),
        // 5. The length or the SHA-256 does not match.
        (
            json!({"echo_externalized": {"sha256": "0".repeat(64)}}),
            Reason::ProtocolError,
        ),
        (
            json!({"echo_externalized": {"totalBytes": 12}}),
            Reason::ProtocolError,
        ),
    ];
    for (action, reason) in cases {
        assert_eq!(
            failed(externalized_answer(true, action.clone()).await),
            Some(reason),
            "{action}"
        );
    }
    // V1 keeps refusing the member.
    assert_eq!(
        failed(externalized_answer(false, json!({"echo_externalized": {}})).await),
        Some(Reason::ProtocolError)
    );
}

fn publish(id: u64, kind: &str, payload: Value) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"host/ui/publish","params":{
        "surfaceId":format!("s{id}"),"sessionId":"s-test","generation":1,"kind":kind,"payload":payload}})
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

fn reason(answer: &Value) -> Option<&str> {
    answer["error"]["data"]["reason"].as_str()
}

/// Checklist items 19, 20 and 29: panels and views from a V2 sidecar, shown as cards (a view
/// as its redacted lines), their rules enforced; V1 refuses both kinds; `ui` is still needed.
pub(crate) async fn v2_panels_and_views_are_shown_and_checked() {
    use sidewire_ext_host::HostEvent;
    use sidewire_ext_protocol::SurfacePayload;
    let env = Env::new();
    let texts =
        |n: usize| Value::Array((0..n).map(|_| json!({"kind":"text","value":"v"})).collect());
    v2_plugin(&env, "viewer", "input.receive")
        .capabilities(&["interceptors", "ui"])
        .script(
            "ui_actions",
            json!([{"actionId":"stop","label":"Stop"},{"actionId":"refresh","label":"Refresh"}]),
        )
        .script(
            "after_init",
            json!([
                publish(1, "panel", json!({"title":"Build","text":"running","progress":0.5,
                    "fields":[{"key":"k","value":"Bearer sekrit-token-value"}],
                    "actions":[{"actionId":"stop","label":"Stop"}]})),
                publish(2, "panel", json!({"markdown":"**x**"})),
                publish(3, "view", json!({"slot":"composer-trailing","body":[
                    {"kind":"stack","children":[
                        {"kind":"kv","key":"token","value":"Bearer sekrit-token-value"},
                        {"kind":"row","children":[{"kind":"pip","tone":"ok"},{"kind":"text","value":"green"}]},
                        {"kind":"button","actionId":"refresh","label":"Refresh"}
                    ]}]})),
                publish(4, "view", json!({"body": texts(201)})),
                publish(5, "view", json!({"body":[{"kind":"button","actionId":"undeclared","label":"Go"}]})),
                publish(6, "view", json!({"anchor":"tool:c","slot":"x","body":[{"kind":"divider"}]})),
                publish(7, "view", json!({"body":[{"kind":"meter","progress":1.5}]})),
                publish(8, "panel", json!({"actions":[{"actionId":"undeclared","label":"Go"}]})),
            ]),
        )
        .record("viewer.jsonl")
        .install();
    // V1 refuses the kinds; V2 without capability `ui` is refused before its params are read.
    env.plugin("classic")
        .capabilities(&["ui"])
        .script(
            "after_init",
            json!([publish(1, "panel", json!({"title":"x"}))]),
        )
        .record("classic.jsonl")
        .install();
    v2_plugin(&env, "no-ui", "input.receive")
        .script(
            "after_init",
            json!([publish(1, "panel", json!({"title":"x"}))]),
        )
        .record("no-ui.jsonl")
        .install();
    let (runtime, mut events) = env.boot().await;
    assert_eq!(
        answer(&env, "viewer.jsonl", 1).await["result"],
        json!({"accepted": true})
    );
    for id in [2, 4, 5, 6, 7, 8] {
        assert_eq!(
            reason(&answer(&env, "viewer.jsonl", id).await),
            Some("invalid_params"),
            "publish {id}"
        );
    }
    assert_eq!(
        answer(&env, "viewer.jsonl", 3).await["result"],
        json!({"accepted": true})
    );
    assert_eq!(
        reason(&answer(&env, "classic.jsonl", 1).await),
        Some("invalid_params")
    );
    assert_eq!(
        reason(&answer(&env, "no-ui.jsonl", 1).await),
        Some("capability_not_declared")
    );
    let mut shown = std::collections::BTreeMap::new();
    while shown.len() < 2 {
        let surface = next_event(&mut events, "a surface", |e| match e {
            HostEvent::Surface(s) => Some(s),
            _ => None,
        })
        .await;
        shown.insert(surface.surface_id.clone(), surface);
    }
    let SurfacePayload::Card(panel) = &shown["s1"].payload else {
        panic!("a panel is shown as a card: {:?}", shown["s1"])
    };
    assert_eq!(panel.title, "Build");
    assert_eq!(panel.progress, Some(0.5));
    assert_eq!(panel.actions[0].action_id, "stop");
    assert!(!panel.fields[0].value.contains("sekrit"), "{panel:?}");
    let SurfacePayload::Card(view) = &shown["s3"].payload else {
        panic!("a view is shown as a card: {:?}", shown["s3"])
    };
    let lines: Vec<&str> = view.text.lines().collect();
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert!(lines[0].starts_with("  token: Bearer "), "{lines:?}");
    assert!(
        !view.text.contains("sekrit"),
        "redacted at every leaf: {view:?}"
    );
    assert_eq!(lines[1], "  ● (ok)  green");
    assert_eq!(lines[2], "  [Refresh]");
    assert_eq!(view.actions[0].action_id, "refresh");
    env.finish(runtime).await;
}

/// Checklist items 8 and 16 (host side): the browser requests are registered on V2 only and
/// answered by this browser-less host in the reference's order.
pub(crate) async fn browser_requests_are_v2_only_and_refused() {
    let call = |id: u64, method: &str, params: Value| json!({"jsonrpc":"2.0","id":id,"method":method,"params":params});
    let frames = json!([
        call(1, "host/browser/tab/list", json!({})),
        call(
            2,
            "host/browser/tab/open",
            json!({"url":"ftp://x","disposition":"foreground"})
        ),
        call(
            3,
            "host/browser/tab/wait",
            json!({"tabId":"t","waitUntil":"soon"})
        ),
        call(
            4,
            "host/browser/tab/act",
            json!({"tabId":"t","expectedOrigin":"https://a.b","action":"press","key":"F13"})
        ),
        call(5, "host/browser/tab/snapshot", json!({"tabId":"t"})),
    ]);
    let env = Env::new();
    v2_plugin(&env, "browsing", "input.receive")
        .manifest(
            "requires",
            json!([{"namespace":"reasonix","kind":"browser","id":"companion","optional":true}]),
        )
        .script("after_init", frames.clone())
        .record("v2.jsonl")
        .install();
    env.plugin("classic")
        .script("after_init", frames)
        .record("v1.jsonl")
        .install();
    let (runtime, _events) = env.boot().await;
    let v2 = |id| answer(&env, "v2.jsonl", id);
    assert_eq!(reason(&v2(1).await), Some("capability_not_declared"));
    for id in [2, 3, 4] {
        assert_eq!(reason(&v2(id).await), Some("invalid_params"), "call {id}");
    }
    assert_eq!(reason(&v2(5).await), Some("capability_not_declared"));
    for id in 1..=5 {
        let answer = answer(&env, "v1.jsonl", id).await;
        assert_eq!(answer["error"]["code"], -32601, "{answer}");
        assert_eq!(reason(&answer), Some("unknown_method"), "{answer}");
    }
    assert_eq!(runtime.sidecars().len(), 2);
    env.finish(runtime).await;
}
