//! The built examples as real processes, the way a host runs them: exit statuses, stderr, and
//! their manifests.

use serde_json::json;
use sidewire_ext_protocol::{
    Capability, FRAME_BYTES, HookPoint, MANIFEST_FILE, Manifest, PLUGIN_ROOT_PLACEHOLDER, Reason,
    SDK_STDERR_PREFIX,
};
use sidewire_ext_sdk::samples;

use crate::support::{Process, assert_error, init_params, intercept};

#[tokio::test]
async fn the_starter_example_serves_and_exits_zero() {
    let mut process = Process::spawn("starter");
    let host = &mut process.host;
    let result = host.handshake(&["input.receive"], &["interceptors"]).await;
    assert_eq!(result["name"], "starter-extension");
    assert_eq!(result["subscriptions"], json!(["input.receive"]));
    let answer = host
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
        answer["result"]["replacement"]["text"],
        "fix teh tests [rewritten by starter-extension]"
    );
    let answer = host
        .call(3, "extension/shutdown", json!({"timeoutMillis": 5000}))
        .await;
    assert_eq!(answer["result"], json!({"accepted": true}));
    host.close_input();
    let (code, stderr) = process.exit().await;
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stderr, "");
}

#[tokio::test]
async fn the_allow_all_example_allows() {
    let mut process = Process::spawn("allow_all");
    let host = &mut process.host;
    host.handshake(&["permission.decision"], &["interceptors"])
        .await;
    let payload = json!({"name": "bash", "arguments": "{}", "hostDecision": "deny"});
    let answer = host
        .call(
            2,
            "extension/intercept",
            intercept("permission.decision", 1, payload, 5000),
        )
        .await;
    assert_eq!(answer["result"]["decision"], "allow");
    host.close_input();
    let (code, stderr) = process.exit().await;
    assert_eq!(code, 0, "{stderr}");
}

#[tokio::test]
async fn the_status_card_example_publishes_once_ready() {
    let mut process = Process::spawn("status_card");
    let host = &mut process.host;
    let result = host.initialize(&[], &["ui"]).await;
    assert_eq!(result["result"]["uiActions"][0]["actionId"], "refresh");
    host.silent().await;
    host.notify("extension/initialized", json!({})).await;
    let publish = host.recv().await;
    assert_eq!(publish["method"], "host/ui/publish");
    assert_eq!(publish["params"]["payload"]["label"], "status-card ready");
    host.reply(&publish, json!({"accepted": true})).await;
    host.close_input();
    let (code, stderr) = process.exit().await;
    assert_eq!(code, 0, "{stderr}");
}

#[tokio::test]
async fn an_oversized_frame_exits_non_zero_with_frame_on_stderr() {
    // Checklist 2.
    let mut process = Process::spawn("starter");
    process
        .host
        .handshake(&["input.receive"], &["interceptors"])
        .await;
    // The sidecar gives up once the cap is read without an LF, and may exit mid-write.
    let _ = process
        .host
        .try_send_bytes(&vec![b'x'; FRAME_BYTES + 1024])
        .await;
    let (code, stderr) = process.exit().await;
    assert_ne!(code, 0);
    assert!(stderr.contains("frame"), "{stderr}");
    assert!(stderr.starts_with(SDK_STDERR_PREFIX), "{stderr}");
}

#[tokio::test]
async fn a_foreign_protocol_exits_non_zero_while_stdin_is_still_open() {
    // Checklist 22, as a process: the answer, then exit 1 without waiting for end of input.
    let mut process = Process::spawn("starter");
    let mut params = init_params(&[], &[]);
    params["protocolId"] = json!("reasonix.extension.v2");
    let answer = process.host.call(1, "extension/initialize", params).await;
    assert_error(&answer, &json!(1), Reason::UnsupportedVersion);
    let (code, stderr) = process.exit().await;
    assert_eq!(code, 1);
    assert!(stderr.contains("unsupported_version"), "{stderr}");
}

#[tokio::test]
async fn input_ending_mid_line_exits_non_zero() {
    // Checklist 88 (second half).
    let mut process = Process::spawn("starter");
    process.host.handshake(&[], &[]).await;
    process.host.send_bytes(br#"{"jsonrpc":"2.0""#).await;
    process.host.close_input();
    let (code, stderr) = process.exit().await;
    assert_eq!(code, 1);
    assert!(stderr.contains("unterminated"), "{stderr}");
}

#[tokio::test]
async fn a_mismatched_launch_identity_is_reported_but_not_fatal() {
    let mut process = Process::spawn_with_env(
        "starter",
        &[
            ("REASONIX_PLUGIN_NAME", "someone-else"),
            ("REASONIX_PLUGIN_VERSION", "0.1.0"),
        ],
    );
    process
        .host
        .handshake(&["input.receive"], &["interceptors"])
        .await;
    process.host.close_input();
    let (code, stderr) = process.exit().await;
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("\"someone-else\""), "{stderr}");
    assert!(!stderr.contains("version"), "{stderr}");
}

#[tokio::test]
async fn the_provider_example_streams_the_scripted_model() {
    let mut process = Process::spawn_with_env("provider", &[("REASONIX_PLUGIN_NAME", "models")]);
    let host = &mut process.host;
    let result = host.handshake(&[], &["providers"]).await;
    let reference = "plugin/models/scripted/echo-1";
    assert_eq!(result["providers"][0]["ref"], reference, "{result}");
    let request = json!({
        "messages": [{"role": "user", "content": "Please add 2 and 40."}],
        "tools": [{"name": "calc__add", "parameters": {"type": "object"}}],
        "maxTokens": 100
    });
    let answer = host
        .call(
            2,
            "extension/provider/stream/open",
            json!({"streamId": "s1", "providerRef": reference, "request": request, "seqBase": 0}),
        )
        .await;
    assert_eq!(answer["result"], json!({"accepted": true}));
    let mut kinds = Vec::new();
    let end = loop {
        let frame = host.recv().await;
        if frame["method"] == "extension/provider/stream/end" {
            break frame;
        }
        assert_eq!(frame["params"]["seq"], kinds.len() + 1);
        let chunk = &frame["params"]["chunk"];
        if chunk["type"] == "tool_call" {
            assert_eq!(
                chunk["toolCall"],
                json!({"id": "call-1", "name": "calc__add", "arguments": "{\"a\":2,\"b\":40}"})
            );
        }
        kinds.push(chunk["type"].as_str().expect("a type").to_owned());
    };
    assert_eq!(
        kinds,
        [
            "reasoning",
            "tool_call_start",
            "tool_call_args_delta",
            "tool_call",
            "usage",
            "done"
        ]
    );
    assert_eq!(end["params"], json!({"streamId": "s1", "lastSeq": 6}));
    host.close_input();
    let (code, stderr) = process.exit().await;
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn the_example_manifests_are_valid_and_match_the_samples() {
    let cases = [
        (
            "starter",
            samples::STARTER_NAME,
            &[HookPoint::InputReceive][..],
            Capability::Interceptors,
        ),
        (
            "allow_all",
            samples::ALLOW_ALL_NAME,
            &[HookPoint::PermissionDecision][..],
            Capability::Interceptors,
        ),
        (
            "status_card",
            samples::STATUS_CARD_NAME,
            &[][..],
            Capability::Ui,
        ),
        (
            "provider",
            samples::SCRIPTED_MODEL_NAME,
            &[][..],
            Capability::Providers,
        ),
    ];
    for (example, name, intercepts, capability) in cases {
        let path = format!(
            "{}/examples/{example}/{MANIFEST_FILE}",
            env!("CARGO_MANIFEST_DIR")
        );
        let text = std::fs::read_to_string(&path).expect("the manifest exists");
        let manifest = Manifest::parse(&text).unwrap_or_else(|err| panic!("{path}: {err}"));
        assert_eq!(manifest.name, name);
        assert_eq!(manifest.version, samples::SAMPLE_VERSION);
        let runtime = manifest.runtime.expect("a code extension");
        assert_eq!(
            runtime.command,
            format!("{PLUGIN_ROOT_PLACEHOLDER}/bin/{example}")
        );
        assert_eq!(runtime.intercepts, intercepts);
        assert_eq!(runtime.capabilities, [capability]);
        assert!(!runtime.required);
    }
}

/// The Manifest v2 twin of each example's manifest: the same plugin, in `reasonix.io/plugin/v2`.
const V2_MANIFEST_FILE: &str = "reasonix-plugin.v2.json";

#[test]
fn each_example_has_a_v2_twin_of_its_manifest() {
    for example in ["starter", "allow_all", "status_card", "provider"] {
        let dir = format!("{}/examples/{example}", env!("CARGO_MANIFEST_DIR"));
        let read = |file: &str| {
            let path = format!("{dir}/{file}");
            let text = std::fs::read_to_string(&path).expect("the manifest exists");
            Manifest::parse(&text).unwrap_or_else(|err| panic!("{path}: {err}"))
        };
        let (v1, v2) = (read(MANIFEST_FILE), read(V2_MANIFEST_FILE));
        assert_eq!(v1.api_version, "reasonix.io/plugin/v1");
        assert_eq!(v2.api_version, "reasonix.io/plugin/v2");
        assert!(v2.v2.is_some(), "{example}");
        assert_eq!(
            (&v2.name, &v2.version),
            (&v1.name, &v1.version),
            "{example}"
        );
        assert_eq!(v2.runtime, v1.runtime, "{example}");
    }
}

#[test]
fn the_tools_example_manifest_declares_what_the_sample_serves() {
    let path = format!(
        "{}/examples/tools/{MANIFEST_FILE}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).expect("the manifest exists");
    let manifest = Manifest::parse(&text).unwrap_or_else(|err| panic!("{path}: {err}"));
    assert_eq!(manifest.name, samples::TEXT_TOOLS_NAME);
    assert_eq!(manifest.version, samples::SAMPLE_VERSION);
    let v2 = manifest.v2.expect("a v2 manifest");
    assert!(v2.has("tools"));
    let names: Vec<&str> = v2.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        [samples::WORD_COUNT_TOOL, samples::REVERSE_WORDS_TOOL]
    );
    assert_eq!(
        manifest.runtime.expect("a code extension").command,
        format!("{PLUGIN_ROOT_PLACEHOLDER}/bin/tools")
    );
}

#[tokio::test]
async fn the_tools_example_serves_its_tools_on_v2_and_none_on_v1() {
    let v2_init = json!({
        "protocolId": "reasonix.extension.v2",
        "protocolVersion": "2",
        "manifest": {"capabilities": ["tools"], "tools": ["word_count", "reverse_words"]},
        "session": {"sessionId": "s-1", "workspaceRoot": "/work", "generation": 1},
        "capabilities": {"contentRefs": true, "uiHost": "headless", "protocolVersion": "2"}
    });
    let mut process = Process::spawn("tools");
    let host = &mut process.host;
    let answer = host.call(1, "extension/initialize", v2_init).await;
    assert_eq!(
        answer["result"]["tools"],
        json!(["reverse_words", "word_count"]),
        "{answer}"
    );
    host.notify("extension/initialized", json!({})).await;
    let call = |name: &str, arguments: serde_json::Value| json!({"name": name, "arguments": arguments, "timeoutMillis": 300000});
    let answer = host
        .call(
            2,
            "extension/tool/call",
            call("word_count", json!({"text": "one two  three"})),
        )
        .await;
    assert_eq!(answer["result"], json!({"content": "3"}), "{answer}");
    let answer = host
        .call(
            3,
            "extension/tool/call",
            call("reverse_words", json!({"text": "a b c"})),
        )
        .await;
    assert_eq!(answer["result"], json!({"content": "c b a"}), "{answer}");
    let answer = host
        .call(4, "extension/tool/call", call("word_count", json!(7)))
        .await;
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    process.host.close_input();
    let (code, _) = process.exit().await;
    assert_eq!(code, 0);

    // On v1 nothing is offered and the method is unregistered.
    let mut process = Process::spawn("tools");
    let host = &mut process.host;
    let result = host.handshake(&[], &[]).await;
    assert!(result.get("tools").is_none(), "{result}");
    let answer = host
        .call(
            2,
            "extension/tool/call",
            call("word_count", json!({"text": "x"})),
        )
        .await;
    assert_error(&answer, &json!(2), Reason::UnknownMethod);
    process.host.close_input();
    let (code, _) = process.exit().await;
    assert_eq!(code, 0);
}
