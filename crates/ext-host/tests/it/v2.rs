//! Extension Protocol v2 plugins (spec delta §1.4 P2, §2.2, §5.3): a sidecar that replays the
//! reference Go SDK's exact answers, byte for byte, behind a `reasonix.io/plugin/v2` manifest;
//! the frames the host sends it are compared with the reference host's; and a v1 and a v2
//! sidecar serve the same point in one host.

use serde_json::{Value, json};
use sidewire_ext_host::{Error, HostConfig, HostEvent, InactiveReason, StartupStage};
use sidewire_ext_protocol::{HookPayload, HookPoint, PermissionPayload, Reason, UiHost, Verdict};

use crate::support::*;

/// The Go SDK's answers of §5.3, verbatim (`@id` is the request's id).
const STARTER_RESULT: &str = r#"{"jsonrpc":"2.0","id":@id,"result":{"protocolVersion":"2","name":"starter-extension","version":"0.1.0","subscriptions":["input.receive"],"stateSchemaVersion":0}}"#;
const STARTER_REPLACE: &str = r#"{"jsonrpc":"2.0","id":@id,"result":{"decision":"replace","replacement":{"text":"explain protocols [rewritten by starter-extension]"}}}"#;
const CONTINUE: &str = r#"{"jsonrpc":"2.0","id":@id,"result":{"decision":"continue"}}"#;
const SHUTDOWN: &str = r#"{"jsonrpc":"2.0","id":@id,"result":{"accepted":true}}"#;
const ALLOW_ALL_RESULT: &str = r#"{"jsonrpc":"2.0","id":@id,"result":{"protocolVersion":"2","name":"allow-all","version":"0.1.0","subscriptions":["permission.decision"],"stateSchemaVersion":0}}"#;
const ALLOW: &str = r#"{"jsonrpc":"2.0","id":@id,"result":{"decision":"allow"}}"#;

/// What the reference host sends (§5.3), with `/home/dev/project` as the workspace root.
const STARTER_HOST: [&str; 6] = [
    r#"{"jsonrpc":"2.0","id":1,"method":"extension/initialize","params":{"protocolVersion":"2","protocolId":"reasonix.extension.v2","manifest":{"intercepts":["input.receive"],"capabilities":["interceptors"]},"session":{"sessionId":"s-7f3a","workspaceRoot":"/home/dev/project","generation":1},"capabilities":{"contentRefs":true,"uiHost":"headless","protocolVersion":"2","dependencySchemaVersion":1},"dependencySchemaVersion":1}}"#,
    r#"{"jsonrpc":"2.0","method":"extension/initialized","params":{}}"#,
    r#"{"jsonrpc":"2.0","id":2,"method":"extension/intercept","params":{"event":"input.receive","seq":1,"payload":{"text":"starter: explain protocols"},"timeoutMillis":5000}}"#,
    r#"{"jsonrpc":"2.0","id":3,"method":"extension/intercept","params":{"event":"input.receive","seq":2,"payload":{"text":"hello there"},"timeoutMillis":5000}}"#,
    r#"{"jsonrpc":"2.0","method":"extension/event","params":{"event":"input.receive","payload":{"text":"starter: an event"}}}"#,
    r#"{"jsonrpc":"2.0","id":4,"method":"extension/shutdown","params":{"timeoutMillis":5000}}"#,
];

const ALLOW_ALL_HOST: [&str; 3] = [
    r#"{"jsonrpc":"2.0","id":1,"method":"extension/initialize","params":{"protocolVersion":"2","protocolId":"reasonix.extension.v2","manifest":{"intercepts":["permission.decision"],"capabilities":["interceptors"]},"session":{"sessionId":"s-7f3a","workspaceRoot":"/home/dev/project","generation":1},"capabilities":{"contentRefs":true,"uiHost":"headless","protocolVersion":"2","dependencySchemaVersion":1},"dependencySchemaVersion":1}}"#,
    r#"{"jsonrpc":"2.0","method":"extension/initialized","params":{}}"#,
    r#"{"jsonrpc":"2.0","id":2,"method":"extension/intercept","params":{"event":"permission.decision","seq":1,"payload":{"name":"shell","arguments":"{\"cmd\":\"rm -rf build\"}","hostDecision":"deny"},"timeoutMillis":5000}}"#,
];

/// A headless host in session `s-7f3a`, as in §5.3.
fn config(env: &Env) -> HostConfig {
    HostConfig::new(&env.state, "s-7f3a", env.tmp.path()).ui_host(UiHost::Headless)
}

/// A scripted plugin with a v2 manifest: `name`, version 0.1.0, intercepting `point`.
fn v2_plugin<'a>(env: &'a Env, name: &str, point: &str) -> PluginBuilder<'a> {
    env.plugin(name)
        .manifest("apiVersion", json!("reasonix.io/plugin/v2"))
        .manifest("version", json!("0.1.0"))
        .intercepts(&[point])
}

/// The reference host's frames, with this test's workspace root.
fn expected(env: &Env, frames: &[&str]) -> Vec<Value> {
    let root = env.tmp.path().display().to_string();
    frames
        .iter()
        .map(|frame| {
            let mut frame: Value = serde_json::from_str(frame).unwrap();
            if frame["method"] == "extension/initialize" {
                frame["params"]["session"]["workspaceRoot"] = json!(root);
            }
            frame
        })
        .collect()
}

pub(crate) async fn the_go_starter_replay_is_served_in_v2() {
    let env = Env::new();
    v2_plugin(&env, "starter-extension", "input.receive")
        .script("initialize", json!({ "raw": STARTER_RESULT }))
        .on(
            "input.receive",
            json!([{ "raw": STARTER_REPLACE }, { "raw": CONTINUE }]),
        )
        .script("shutdown", json!({ "raw": SHUTDOWN }))
        .record("starter.jsonl")
        .install();
    let (runtime, _events) = env.boot_with(config(&env)).await.unwrap();
    assert_eq!(runtime.sidecars().len(), 1);
    let outcome = runtime
        .intercept(HookPoint::InputReceive, input("starter: explain protocols"))
        .await
        .unwrap();
    assert_eq!(
        text_of(&outcome.payload),
        "explain protocols [rewritten by starter-extension]"
    );
    assert_eq!(outcome.applied, ["starter-extension"]);
    let outcome = runtime
        .intercept(HookPoint::InputReceive, input("hello there"))
        .await
        .unwrap();
    assert_eq!(text_of(&outcome.payload), "hello there");
    assert!(outcome.applied.is_empty());
    runtime.event(HookPoint::InputReceive, &input("starter: an event"));
    env.finish(runtime).await;
    assert_eq!(
        recorded(&env, "starter.jsonl"),
        expected(&env, &STARTER_HOST)
    );
}

pub(crate) async fn the_go_allow_all_replay_overrides_a_denial_and_is_audited() {
    let env = Env::new();
    v2_plugin(&env, "allow-all", "permission.decision")
        .script("initialize", json!({ "raw": ALLOW_ALL_RESULT }))
        .on("permission.decision", json!({ "raw": ALLOW }))
        .script("shutdown", json!({ "raw": SHUTDOWN }))
        .record("allow.jsonl")
        .install();
    let (runtime, _events) = env.boot_with(config(&env)).await.unwrap();
    let denied = HookPayload::Permission(PermissionPayload {
        name: "shell".to_owned(),
        arguments: r#"{"cmd":"rm -rf build"}"#.to_owned(),
        read_only: None,
        host_decision: Verdict::Deny,
    });
    let outcome = runtime
        .intercept(HookPoint::PermissionDecision, denied)
        .await
        .unwrap();
    assert_eq!(outcome.permission, Some(Verdict::Allow));
    let audit = outcome.audit.clone().expect("audited");
    assert_eq!(audit.plugin, "allow-all");
    assert_eq!(audit.extension_decision, "allow");
    let log = std::fs::read_to_string(env.state.join("audit.jsonl")).unwrap();
    assert_eq!(log.lines().count(), 1);
    let record: Value = serde_json::from_str(log.trim()).unwrap();
    assert_eq!(record["plugin"], "allow-all");
    assert_eq!(record["point"], "permission.decision");
    assert_eq!(record["hostDecision"], "deny");
    assert_eq!(record["extensionDecision"], "allow");
    env.finish(runtime).await;
    let frames = recorded(&env, "allow.jsonl");
    assert_eq!(frames[..3], expected(&env, &ALLOW_ALL_HOST));
    assert_eq!(frames[3]["method"], "extension/shutdown");
}

pub(crate) async fn a_v1_and_a_v2_sidecar_share_a_point() {
    let env = Env::new();
    env.plugin("alpha")
        .priority(-1)
        .intercepts(&["input.receive"])
        .on(
            "input.receive",
            json!({"decision":"replace","replacement":{"text":"from v1"}}),
        )
        .record("alpha.jsonl")
        .install();
    v2_plugin(&env, "beta", "input.receive")
        .script(
            "initialize",
            json!({ "raw": STARTER_RESULT.replace("starter-extension", "beta") }),
        )
        .on(
            "input.receive",
            json!({ "raw": r#"{"jsonrpc":"2.0","id":@id,"result":{"decision":"replace","replacement":{"text":"from v1 [v2]"}}}"# }),
        )
        .record("beta.jsonl")
        .install();
    let (runtime, _events) = env.boot_with(config(&env)).await.unwrap();
    assert_eq!(runtime.sidecars().len(), 2);
    let outcome = runtime
        .intercept(HookPoint::InputReceive, input("typed"))
        .await
        .unwrap();
    assert_eq!(text_of(&outcome.payload), "from v1 [v2]");
    assert_eq!(outcome.applied, ["alpha", "beta"]);
    env.finish(runtime).await;
    let alpha = recorded(&env, "alpha.jsonl");
    let beta = recorded(&env, "beta.jsonl");
    assert_eq!(alpha[0]["params"]["protocolId"], "reasonix.extension.v1");
    assert_eq!(alpha[0]["params"]["protocolVersion"], "1");
    assert_eq!(beta[0]["params"]["protocolId"], "reasonix.extension.v2");
    assert_eq!(beta[0]["params"]["protocolVersion"], "2");
    assert_eq!(beta[0]["params"]["dependencySchemaVersion"], 1);
    assert_eq!(alpha[2]["params"]["payload"]["text"], "typed");
    assert_eq!(beta[2]["params"]["payload"]["text"], "from v1");
}

/// Boots one v2 plugin whose handshake answer is `result` (members over a valid v2 result);
/// returns the startup failure, if any.
async fn v2_handshake(
    result: Value,
    shape: impl FnOnce(PluginBuilder<'_>) -> PluginBuilder<'_>,
) -> Option<sidewire_ext_host::StartupFailure> {
    let env = Env::new();
    let mut answer = json!({"protocolVersion":"2","name":"v","version":"1","stateSchemaVersion":0});
    for (key, value) in result.as_object().unwrap() {
        answer[key] = value.clone();
    }
    shape(v2_plugin(&env, "v", "input.receive").required())
        .script("initialize", json!({ "result": answer }))
        .install();
    let outcome = match env.boot_with(config(&env)).await {
        Ok((runtime, _events)) => {
            env.finish(runtime).await;
            None
        }
        Err(err) => Some(startup(&err).clone()),
    };
    env.assert_no_processes();
    outcome
}

pub(crate) async fn v2_handshakes_are_checked_in_the_v2_profile() {
    let refused = |failure: Option<sidewire_ext_host::StartupFailure>, reason: Reason| {
        let failure = failure.expect("the handshake is refused");
        assert_eq!(failure.stage, StartupStage::Handshake, "{failure}");
        assert_eq!(failure.reason, Some(reason), "{failure}");
    };
    // The v2 members are accepted; duplicate action ids are not fatal (the first wins).
    let ok = v2_handshake(
        json!({"componentId":"anything","requires":[{"namespace":"n","kind":"k","id":"i"}],
               "uiActions":[{"actionId":"a"},{"actionId":"a"}]}),
        |p| p.capabilities(&["interceptors", "ui"]),
    )
    .await;
    assert!(ok.is_none(), "{ok:?}");
    // Version and strict decoding.
    refused(
        v2_handshake(json!({"protocolVersion":"1"}), |p| p).await,
        Reason::UnsupportedVersion,
    );
    refused(
        v2_handshake(json!({"epoch":"x"}), |p| p).await,
        Reason::ProtocolError,
    );
    // Check 7: tools without the capability, or not in runtime.tools.
    refused(
        v2_handshake(json!({"tools":["t"]}), |p| p).await,
        Reason::CapabilityNotDeclared,
    );
    let tool = json!([{"name":"u","description":"d","inputSchema":{"type":"object"}}]);
    refused(
        v2_handshake(json!({"tools":["t"]}), |p| {
            p.capabilities(&["interceptors", "tools"])
                .runtime("tools", tool)
        })
        .await,
        Reason::CapabilityNotDeclared,
    );
    // Check 8: a provided capability outside the manifest's provides.
    let provides = json!([{"namespace":"n","kind":"k","id":"a","version":"1.0.0"}]);
    refused(
        v2_handshake(
            json!({"provides":[{"namespace":"n","kind":"k","id":"b"}]}),
            |p| p.manifest("provides", provides),
        )
        .await,
        Reason::CapabilityNotDeclared,
    );
}

/// Checklist item 32 and spec delta §4.1: v2's wider names install, boot and name their
/// provider refs and package directories; ids that differ only by case are refused; a v2
/// manifest without `version` installs.
pub(crate) async fn v2_names_wider_than_v1_install_and_start() {
    let env = Env::new();
    let root = v2_plugin(&env, "wide", "input.receive")
        .manifest("name", json!("Foo.Bar_1"))
        .without("version")
        .on(
            "input.receive",
            json!({"decision":"replace","replacement":{"text":"wide"}}),
        )
        .package();
    let store = env.store();
    let installed = store
        .install(&root, sidewire_ext_host::InstallOptions::link())
        .unwrap();
    assert_eq!(installed.id, "Foo.Bar_1");
    assert_eq!(installed.version, "", "a v2 manifest may omit its version");
    assert_eq!(store.list().unwrap()[0].id, "Foo.Bar_1");
    // A copy lands in a directory named by the id.
    let copied = store
        .install(&root, sidewire_ext_host::InstallOptions::copy().replacing())
        .unwrap();
    assert!(copied.root.ends_with("plugins/Foo.Bar_1"), "{copied:?}");
    store
        .install(&root, sidewire_ext_host::InstallOptions::link().replacing())
        .unwrap();
    // Another package whose name differs only by case is refused, linked or copied.
    let twin = v2_plugin(&env, "twin", "input.receive")
        .manifest("name", json!("foo.bar_1"))
        .package();
    for options in [
        sidewire_ext_host::InstallOptions::link(),
        sidewire_ext_host::InstallOptions::copy().replacing(),
    ] {
        let err = store.install(&twin, options).unwrap_err();
        assert!(err.is_install(), "{err:?}");
    }
    assert_eq!(store.list().unwrap().len(), 1);
    // Names outside the v2 pattern do not parse.
    for bad in ["-x", "a b", &"a".repeat(65), ".", ".."] {
        let root = v2_plugin(&env, "bad", "input.receive")
            .manifest("name", json!(bad))
            .package();
        let err = store
            .install(&root, sidewire_ext_host::InstallOptions::link())
            .unwrap_err();
        assert!(err.is_manifest(), "{bad:?}: {err:?}");
    }
    let (runtime, _events) = env.boot_with(config(&env)).await.unwrap();
    assert_eq!(runtime.sidecars()[0].plugin, "Foo.Bar_1");
    let outcome = runtime
        .intercept(HookPoint::InputReceive, input("x"))
        .await
        .unwrap();
    assert_eq!(outcome.applied, ["Foo.Bar_1"]);
    env.finish(runtime).await;
}

/// Checklist item 17 and spec delta §2.6: a v2 plugin with a non-optional requirement the host
/// cannot satisfy is Inactive, never spawned, and reported with the reference's reason; an
/// optional one only warns; a required plugin that is inactive fails the build unspawned.
pub(crate) async fn a_v2_plugin_with_an_unmet_requirement_is_inactive_and_never_spawned() {
    let env = Env::new();
    v2_plugin(&env, "browser-tool", "input.receive")
        .manifest(
            "requires",
            json!([{"namespace":"reasonix","kind":"browser","id":"companion"},
                   {"namespace":"acme","kind":"db","id":"main","versionRange":">=1.0.0,<2.0.0"}]),
        )
        .install();
    v2_plugin(&env, "hopeful", "input.receive")
        .manifest(
            "requires",
            json!([{"namespace":"reasonix","kind":"browser","id":"companion","optional":true}]),
        )
        .install();
    let (runtime, mut events) = env.boot_with(config(&env)).await.unwrap();
    let report = runtime.report();
    assert_eq!(report.started, ["hopeful"]);
    assert_eq!(report.inactive.len(), 1);
    let inactive = &report.inactive[0];
    assert_eq!(inactive.plugin, "browser-tool");
    assert_eq!(
        inactive.reason,
        InactiveReason::MissingCapabilities(vec![
            "reasonix/browser/companion".to_owned(),
            "acme/db/main".to_owned()
        ])
    );
    assert_eq!(
        inactive.reason.to_string(),
        "missing required capability reasonix/browser/companion; browser host is unavailable \
         on this frontend; missing required capability acme/db/main"
    );
    assert!(report.failed.is_empty());
    assert_eq!(report.unmet_optional.len(), 1);
    assert_eq!(report.unmet_optional[0].plugin, "hopeful");
    assert_eq!(
        report.unmet_optional[0].capability,
        "reasonix/browser/companion"
    );
    // Both were reported as warnings, naming the plugin.
    let warned: Vec<Option<String>> = drain(&mut events)
        .into_iter()
        .filter_map(|event| match event {
            HostEvent::Warning { plugin, .. } => Some(plugin),
            _ => None,
        })
        .collect();
    assert!(
        warned.contains(&Some("browser-tool".to_owned())),
        "{warned:?}"
    );
    assert!(warned.contains(&Some("hopeful".to_owned())), "{warned:?}");
    // Only the active plugin ever ran: one process recorded its pid.
    let running = runtime.sidecars();
    assert_eq!(running.len(), 1);
    assert_eq!(env.pids(), [running[0].pid]);
    // A reload keeps it inactive, still unspawned.
    let report = within(WAIT, "reload", runtime.reload()).await.unwrap();
    assert_eq!(report.inactive[0].plugin, "browser-tool");
    assert_eq!(env.pids().len(), 1);
    // A running linked plugin whose requirement becomes non-optional is retired at the next
    // reload and not started again.
    let hopeful = running[0].pid;
    v2_plugin(&env, "hopeful", "input.receive")
        .manifest(
            "requires",
            json!([{"namespace":"reasonix","kind":"browser","id":"companion"}]),
        )
        .package();
    let report = within(WAIT, "reload", runtime.reload()).await.unwrap();
    let inactive: Vec<&str> = report.inactive.iter().map(|p| p.plugin.as_str()).collect();
    assert_eq!(inactive, ["browser-tool", "hopeful"]);
    assert!(
        report.started.is_empty() && report.adopted.is_empty(),
        "{report:?}"
    );
    assert!(runtime.sidecars().is_empty());
    eventually("the retired sidecar exits", || !alive(hopeful)).await;
    assert_eq!(env.pids().len(), 1);
    env.finish(runtime).await;

    // A required plugin that is inactive fails the build, and nothing is spawned.
    let env = Env::new();
    v2_plugin(&env, "strict", "input.receive")
        .required()
        .manifest(
            "requires",
            json!([{"namespace":"reasonix","kind":"browser","id":"companion"}]),
        )
        .install();
    v2_plugin(&env, "bystander", "input.receive").install();
    let err = env.boot_with(config(&env)).await.unwrap_err();
    let failure = startup(&err);
    assert_eq!(failure.plugin, "strict");
    assert_eq!(failure.stage, StartupStage::Inactive);
    assert!(env.pids().is_empty(), "{:?}", env.pids());
}

/// Checklist item 38 and spec delta §2.8: `tool:` and `provider:` slots have one owner across
/// the plugins; a second claimant fails the build naming both, before anything is spawned; a
/// lone claim is accepted and reported as unused.
pub(crate) async fn v2_tool_and_provider_slots_have_one_owner() {
    for slot in ["tool:bash", "provider:openai/gpt-5"] {
        let env = Env::new();
        for name in ["first", "second"] {
            v2_plugin(&env, name, "input.receive")
                .runtime("replaces", json!([slot]))
                .install();
        }
        let err = env.boot_with(config(&env)).await.unwrap_err();
        assert!(err.is_slot_conflict(), "{err:?}");
        match &err {
            Error::SlotFormConflict {
                slot: claimed,
                first,
                second,
            } => {
                assert_eq!(
                    (claimed.as_str(), first.as_str(), second.as_str()),
                    (slot, "first", "second")
                );
            }
            other => panic!("{other:?}"),
        }
        assert!(env.pids().is_empty(), "{:?}", env.pids());
    }
    // One owner each: accepted, unused, and the named slots are not claimed by them.
    let env = Env::new();
    v2_plugin(&env, "first", "input.receive")
        .runtime("replaces", json!(["tool:bash"]))
        .install();
    v2_plugin(&env, "second", "input.receive")
        .runtime("replaces", json!(["provider:openai/gpt-5", "tool:grep"]))
        .install();
    let (runtime, _events) = env.boot_with(config(&env)).await.unwrap();
    let report = runtime.report();
    assert_eq!(report.started, ["first", "second"]);
    assert_eq!(
        report.unused_slots,
        [
            ("first".to_owned(), "tool:bash".to_owned()),
            ("second".to_owned(), "provider:openai/gpt-5".to_owned()),
            ("second".to_owned(), "tool:grep".to_owned()),
        ]
    );
    env.finish(runtime).await;
}

/// Checklist item 39 and spec delta §1.4 P2: a linked plugin whose manifest changes from v1 to
/// v2, nothing else changing, gets its sidecar restarted with the V2 profile at the next
/// reload.
pub(crate) async fn a_linked_plugin_moving_from_v1_to_v2_restarts_in_v2() {
    let env = Env::new();
    let plugin = || {
        env.plugin("mover")
            .intercepts(&["input.receive"])
            .record("mover.jsonl")
    };
    plugin().install();
    let (runtime, _events) = env.boot().await;
    let before = runtime.sidecars()[0].pid;
    let frames = recorded(&env, "mover.jsonl");
    assert_eq!(frames[0]["params"]["protocolId"], "reasonix.extension.v1");
    // Unchanged: adopted.
    let report = within(WAIT, "reload", runtime.reload()).await.unwrap();
    assert_eq!(report.adopted, ["mover"]);
    plugin()
        .manifest("apiVersion", json!("reasonix.io/plugin/v2"))
        .package();
    let report = within(WAIT, "reload", runtime.reload()).await.unwrap();
    assert_eq!(report.started, ["mover"]);
    assert!(report.adopted.is_empty());
    let after = runtime.sidecars()[0].pid;
    assert_ne!(after, before);
    assert!(!alive(before), "the v1 sidecar was shut down");
    let initializes: Vec<Value> = recorded(&env, "mover.jsonl")
        .into_iter()
        .filter(|f| f["method"] == "extension/initialize")
        .collect();
    assert_eq!(initializes.len(), 2);
    assert_eq!(
        initializes[1]["params"]["protocolId"],
        "reasonix.extension.v2"
    );
    assert_eq!(initializes[1]["params"]["protocolVersion"], "2");
    env.finish(runtime).await;
}

/// A v2 plugin `acme-notes` declaring the tools `search.all` (read-only; a name with a
/// character model APIs refuse) and `write`, whose handshake serves `search.all` only; its tool
/// calls are answered with `answers` in turn.
fn tool_plugin<'a>(env: &'a Env, answers: Value) -> PluginBuilder<'a> {
    let tools = json!([
        {"name": "search.all", "description": "Search the notes.", "readOnly": true,
         "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}}},
        {"name": "write", "description": "Write a note.", "inputSchema": {"type": "object"}}
    ]);
    env.plugin("acme-notes")
        .manifest("apiVersion", json!("reasonix.io/plugin/v2"))
        .manifest("version", json!("0.1.0"))
        .capabilities(&["tools"])
        .runtime("tools", tools)
        .script(
            "initialize",
            json!({"result": {"protocolVersion": "2", "name": "acme-notes", "version": "0.1.0",
                "tools": ["search.all"], "stateSchemaVersion": 0}}),
        )
        .script("tool", answers)
        .record("tools.jsonl")
}

pub(crate) async fn served_v2_tools_are_cataloged_and_called() {
    // Checklist items 12 and 14 (spec delta §2.5).
    let env = Env::new();
    let answers = json!([
        {"content": "found 2 notes"},
        {"content": "the index is locked", "isError": true},
        {"content": "x", "extra": 1},
        {"error": {"code": -32602, "message": "bad query",
                   "data": {"reason": "invalid_params", "retryable": false}}},
    ]);
    tool_plugin(&env, answers).install();
    let (runtime, _events) = env.boot_with(config(&env)).await.unwrap();
    let tools = runtime.tools();
    assert_eq!(tools.len(), 1, "{tools:?}");
    let tool = &tools[0];
    let name = sidewire_ext_host::tool_name("acme-notes", "search.all");
    assert!(sidewire_ext_host::is_model_tool_name(&name), "{name}");
    assert!(name.starts_with("ext__acme-notes__search_all_"), "{name}");
    assert_eq!(tool.name, name);
    assert_eq!(
        (tool.plugin.as_str(), tool.tool.as_str()),
        ("acme-notes", "search.all")
    );
    assert_eq!(tool.description, "Search the notes.");
    assert!(tool.read_only);
    assert_eq!(tool.input_schema["properties"]["q"]["type"], "string");

    // No arguments: `{}` is sent, with the host's budget.
    let result = runtime.call_tool(&name, None).await.unwrap();
    assert_eq!(
        (result.content.as_str(), result.is_error),
        ("found 2 notes", false)
    );
    // `isError` is a result, not a failure.
    let result = runtime
        .call_tool(&name, Some(json!({"q": "rust"})))
        .await
        .unwrap();
    assert!(result.is_error);
    // A result with an unknown member fails the call.
    let err = runtime.call_tool(&name, Some(json!({}))).await.unwrap_err();
    assert_eq!(err.reason(), Some(Reason::ProtocolError), "{err}");
    // A peer error keeps its reason.
    let err = runtime.call_tool(&name, Some(json!({}))).await.unwrap_err();
    assert_eq!(err.reason(), Some(Reason::InvalidParams), "{err}");
    // A tool that is declared but not served, or not declared at all, is not called.
    for unknown in [
        sidewire_ext_host::tool_name("acme-notes", "write"),
        "ext__acme-notes__nope".to_owned(),
    ] {
        let err = runtime.call_tool(&unknown, None).await.unwrap_err();
        assert!(
            matches!(err, sidewire_ext_host::Error::Tool { .. }),
            "{err}"
        );
        assert_eq!(err.reason(), Some(Reason::InvalidParams), "{err}");
    }
    env.finish(runtime).await;
    let calls: Vec<Value> = recorded(&env, "tools.jsonl")
        .into_iter()
        .filter(|f| f["method"] == "extension/tool/call")
        .map(|f| f["params"].clone())
        .collect();
    let budget = sidewire_ext_protocol::TOOL_CALL_TIMEOUT.as_millis() as u64;
    assert_eq!(budget, 300_000);
    assert_eq!(calls.len(), 4, "{calls:?}");
    assert_eq!(
        calls[0],
        json!({"name": "search.all", "arguments": {}, "timeoutMillis": budget})
    );
    assert_eq!(calls[1]["arguments"], json!({"q": "rust"}));
    // The initialize asked for the manifest's tools by name.
    let init = recorded(&env, "tools.jsonl")
        .into_iter()
        .find(|f| f["method"] == "extension/initialize")
        .unwrap();
    assert_eq!(
        init["params"]["manifest"]["tools"],
        json!(["search.all", "write"])
    );
}

pub(crate) async fn a_tool_call_is_bounded_and_a_crashed_sidecar_fails_fast() {
    let env = Env::new();
    tool_plugin(&env, json!(["hang", "exit:3"])).install();
    let budget = std::time::Duration::from_millis(200);
    let (runtime, mut events) = env
        .boot_with(config(&env).tool_call_timeout(budget))
        .await
        .unwrap();
    let name = sidewire_ext_host::tool_name("acme-notes", "search.all");
    let err = runtime.call_tool(&name, None).await.unwrap_err();
    assert_eq!(err.reason(), Some(Reason::InterceptTimeout), "{err}");
    let calls: Vec<Value> = recorded(&env, "tools.jsonl")
        .into_iter()
        .filter(|f| f["method"] == "extension/tool/call")
        .collect();
    assert_eq!(calls[0]["params"]["timeoutMillis"], 200);
    // A crash fails the call in flight, and later calls fail at once without being sent.
    let err = runtime.call_tool(&name, None).await.unwrap_err();
    assert_eq!(err.reason(), Some(Reason::ProviderInterrupted), "{err}");
    next_event(&mut events, "the crash", |e| match e {
        sidewire_ext_host::HostEvent::Crashed { .. } => Some(()),
        _ => None,
    })
    .await;
    assert!(runtime.tools().is_empty());
    let err = runtime.call_tool(&name, None).await.unwrap_err();
    assert_eq!(err.reason(), Some(Reason::ProviderInterrupted), "{err}");
    env.finish(runtime).await;
    let calls = recorded(&env, "tools.jsonl")
        .into_iter()
        .filter(|f| f["method"] == "extension/tool/call")
        .count();
    assert_eq!(calls, 2);
}
