//! Extension tools (`extension/tool/call`, spec delta §2.5, checklist item 15; item 8 for the
//! V1 side): served on V2 connections only.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use sidewire_ext_protocol::Reason;
use sidewire_ext_sdk::{Error, Extension};

use crate::support::{Sidecar, assert_error, init_params};

/// A V2 `extension/initialize` whose manifest declares `tools` (and capability `tools` when
/// `capable`).
fn v2_params(tools: &[&str], capable: bool) -> Value {
    let mut manifest = serde_json::Map::new();
    if capable {
        manifest.insert("capabilities".into(), json!(["tools"]));
    }
    if !tools.is_empty() {
        manifest.insert("tools".into(), json!(tools));
    }
    json!({
        "protocolId": "reasonix.extension.v2",
        "protocolVersion": "2",
        "manifest": manifest,
        "session": {"sessionId": "s-1", "workspaceRoot": "/work", "generation": 1},
        "capabilities": {"contentRefs": true, "uiHost": "headless", "protocolVersion": "2",
            "dependencySchemaVersion": 1},
        "dependencySchemaVersion": 1
    })
}

type Seen = Arc<Mutex<Vec<Value>>>;

/// Serves `echo` (answers the arguments' JSON), `fail` (an error) and `slow` (never ends);
/// every argument a callback receives is recorded in the returned list.
fn toolbox() -> (Extension, Seen) {
    let seen: Seen = Arc::default();
    let (echo_seen, fail_seen) = (Arc::clone(&seen), Arc::clone(&seen));
    let extension = Extension::new("toolbox", "1.0.0")
        .tool("fail", move |_, arguments| {
            fail_seen.lock().unwrap().push(arguments);
            async { Err(Error::callback("the disk is full")) }
        })
        .tool("echo", move |_, arguments: Value| {
            echo_seen.lock().unwrap().push(arguments.clone());
            async move { Ok(arguments.to_string()) }
        })
        .tool("slow", |_, _| std::future::pending());
    (extension, seen)
}

async fn ready_v2(extension: Extension, tools: &[&str], capable: bool) -> (Sidecar, Value) {
    let mut sidecar = Sidecar::start(extension);
    let answer = sidecar
        .host
        .call(1, "extension/initialize", v2_params(tools, capable))
        .await;
    sidecar
        .host
        .notify("extension/initialized", json!({}))
        .await;
    (sidecar, answer)
}

fn call(name: Value, arguments: Option<Value>, timeout: Value) -> Value {
    let mut params = json!({"name": name, "timeoutMillis": timeout});
    if let Some(arguments) = arguments {
        params["arguments"] = arguments;
    }
    params
}

#[tokio::test]
async fn served_tools_answer_content_and_errors_and_take_any_arguments() {
    let (extension, seen) = toolbox();
    let (mut sidecar, answer) = ready_v2(extension, &["echo", "fail", "slow", "other"], true).await;
    // The handshake offers the served tools the manifest declares, sorted.
    assert_eq!(
        answer["result"]["tools"],
        json!(["echo", "fail", "slow"]),
        "{answer}"
    );

    let mut id = 10;
    for arguments in [
        json!(null),
        json!({}),
        json!([]),
        json!("text"),
        json!(7),
        json!(true),
    ] {
        id += 1;
        let params = call(json!("echo"), Some(arguments.clone()), json!(0));
        let answer = sidecar.host.call(id, "extension/tool/call", params).await;
        assert_eq!(
            answer["result"],
            json!({"content": arguments.to_string()}),
            "{answer}"
        );
        assert_eq!(seen.lock().unwrap().last(), Some(&arguments));
    }

    let params = call(json!("fail"), Some(json!({"x": 1})), json!(5000));
    let answer = sidecar.host.call(20, "extension/tool/call", params).await;
    let result = &answer["result"];
    assert_eq!(result["isError"], true, "{answer}");
    assert!(
        result["content"]
            .as_str()
            .unwrap()
            .contains("the disk is full")
    );

    let params = call(json!("nope"), Some(json!({})), json!(0));
    let answer = sidecar.host.call(21, "extension/tool/call", params).await;
    assert_error(&answer, &json!(21), Reason::UnknownMethod);
    // Declared by the manifest but not served: unknown too.
    let params = call(json!("other"), Some(json!({})), json!(0));
    let answer = sidecar.host.call(22, "extension/tool/call", params).await;
    assert_error(&answer, &json!(22), Reason::UnknownMethod);
    sidecar.finish().await;
}

#[tokio::test]
async fn invalid_params_never_run_the_callback() {
    let (extension, seen) = toolbox();
    let (mut sidecar, _) = ready_v2(extension, &["echo", "fail"], true).await;
    let cases = [
        call(json!("echo"), None, json!(0)),
        json!({"arguments": {}, "timeoutMillis": 0}),
        call(json!("echo"), Some(json!({})), json!(-1)),
        call(json!(""), Some(json!({})), json!(0)),
        json!({"name": "echo", "arguments": {}, "timeoutMillis": 0, "extra": 1}),
        json!({"name": "echo", "arguments": {}}),
    ];
    for (i, params) in cases.into_iter().enumerate() {
        let id = 30 + i as u64;
        let answer = sidecar.host.call(id, "extension/tool/call", params).await;
        assert_error(&answer, &json!(id), Reason::InvalidParams);
    }
    assert!(seen.lock().unwrap().is_empty());
    sidecar.finish().await;
}

// Paused time: the clock jumps to the next timer whenever every task waits, so a deadline that
// should not exist would fire here before the gate opens, deterministically.
#[tokio::test(start_paused = true)]
async fn a_timeout_bounds_the_callback_and_zero_means_none() {
    let (extension, _) = toolbox();
    let gate = Arc::new(tokio::sync::Semaphore::new(0));
    let held = Arc::clone(&gate);
    let extension = extension.tool("gated", move |_, _| {
        let held = Arc::clone(&held);
        async move {
            let _permit = held.acquire().await;
            Ok("released".to_owned())
        }
    });
    let (mut sidecar, _) = ready_v2(extension, &["slow", "echo", "gated"], true).await;
    let params = call(json!("slow"), Some(json!({})), json!(20));
    let answer = sidecar.host.call(40, "extension/tool/call", params).await;
    assert_error(&answer, &json!(40), Reason::InterceptTimeout);
    // With 0 there is no deadline: the call waits for its gate however long that takes.
    let params = call(json!("gated"), Some(json!({})), json!(0));
    sidecar
        .host
        .send_json(
            &json!({"jsonrpc": "2.0", "id": 41, "method": "extension/tool/call",
            "params": params}),
        )
        .await;
    let params = call(json!("echo"), Some(json!(1)), json!(0));
    let answer = sidecar.host.call(42, "extension/tool/call", params).await;
    assert_eq!(answer["result"]["content"], "1", "{answer}");
    tokio::time::sleep(std::time::Duration::from_secs(3600)).await;
    gate.add_permits(1);
    let answer = sidecar.host.recv().await;
    assert_eq!(answer["id"], 41, "{answer}");
    assert_eq!(answer["result"]["content"], "released", "{answer}");
    sidecar.finish().await;
}

#[tokio::test]
async fn without_capability_tools_nothing_is_offered_and_calls_are_unknown() {
    let (extension, seen) = toolbox();
    let (mut sidecar, answer) = ready_v2(extension, &["echo"], false).await;
    assert!(answer["result"].get("tools").is_none(), "{answer}");
    let params = call(json!("echo"), Some(json!({})), json!(0));
    let answer = sidecar.host.call(50, "extension/tool/call", params).await;
    assert_error(&answer, &json!(50), Reason::UnknownMethod);
    assert!(seen.lock().unwrap().is_empty());
    assert!(sidecar.logs().iter().any(|l| l.contains("\"tools\"")));
    sidecar.finish().await;
}

#[tokio::test]
async fn on_v1_the_method_is_unregistered_and_no_tool_is_offered() {
    // Checklist 8 (S): the answer is exactly what any unregistered method gets, before and
    // after the handshake.
    let (extension, seen) = toolbox();
    let mut sidecar = Sidecar::start(extension);
    let params = call(json!("echo"), Some(json!({})), json!(0));
    let before = sidecar
        .host
        .call(60, "extension/tool/call", params.clone())
        .await;
    let unknown = sidecar.host.call(61, "nope/nothing", params.clone()).await;
    assert_error(&before, &json!(60), Reason::UnknownMethod);
    assert_eq!(before["error"], unknown["error"]);
    let answer = sidecar
        .host
        .call(1, "extension/initialize", init_params(&[], &[]))
        .await;
    let result = &answer["result"];
    assert_eq!(result["protocolVersion"], "1", "{answer}");
    assert!(result.get("tools").is_none(), "{answer}");
    sidecar
        .host
        .notify("extension/initialized", json!({}))
        .await;
    let after = sidecar.host.call(62, "extension/tool/call", params).await;
    assert_eq!(after["error"], unknown["error"]);
    assert!(seen.lock().unwrap().is_empty());
    assert!(
        sidecar
            .logs()
            .iter()
            .any(|l| l.contains("Extension Protocol v1"))
    );
    sidecar.finish().await;
}

#[test]
fn bad_tool_names_are_configuration_errors() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    for extension in [
        Extension::new("t", "1").tool("a b", |_, _| async { Ok(String::new()) }),
        Extension::new("t", "1").tool("", |_, _| async { Ok(String::new()) }),
        Extension::new("t", "1")
            .tool("x", |_, _| async { Ok(String::new()) })
            .tool("x", |_, _| async { Ok(String::new()) }),
    ] {
        let (a, _b) = tokio::io::duplex(64);
        let (_c, d) = tokio::io::duplex(64);
        let outcome = runtime.block_on(sidewire_ext_sdk::serve_io(
            extension,
            sidewire_ext_sdk::Options::new(),
            a,
            d,
        ));
        assert!(matches!(outcome, Err(Error::Config(_))), "{outcome:?}");
    }
}
