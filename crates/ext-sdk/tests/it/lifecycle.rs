//! The handshake, the state machine's gates and shutdown (§6), in-process.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use sidewire_ext_protocol::{InputPayload, ProtocolProfile, Reason, StatusPayload};
use sidewire_ext_sdk::{Decision, Error, Extension, Options, point, samples};
use tokio::sync::{Notify, mpsc};

use crate::support::{Sidecar, assert_error, init_params, intercept, within};

#[tokio::test]
async fn the_handshake_answers_and_nothing_is_written_before_initialized() {
    let mut sidecar = Sidecar::start(samples::status_card());
    let answer = sidecar.host.initialize(&[], &["ui"]).await;
    assert_eq!(
        answer["result"],
        json!({
            "protocolVersion": "1",
            "name": "status-card",
            "version": "0.1.0",
            "uiActions": [{"actionId": "refresh", "label": "Refresh"}],
            "stateSchemaVersion": 0
        })
    );
    // The ready hook publishes, but only once the host has said the connection is ready.
    sidecar.host.silent().await;
    sidecar
        .host
        .notify("extension/initialized", json!({}))
        .await;
    let publish = sidecar.host.recv().await;
    assert_eq!(publish["method"], "host/ui/publish");
    assert_eq!(
        publish["params"],
        json!({
            "surfaceId": "status", "sessionId": "s-1", "generation": 1, "kind": "status",
            "payload": {"label": "status-card ready", "severity": "info"}
        })
    );
    sidecar
        .host
        .reply(&publish, json!({"accepted": true}))
        .await;
    sidecar.finish().await;
}

/// The reference host's first frame, byte for byte (issue 11): its `capabilities` carry
/// `protocolVersion`, which the spec's HostCapabilities table does not list.
const REFERENCE_HOST_FIRST_FRAME: &str = r#"{"jsonrpc":"2.0","id":1,"method":"extension/initialize","params":{"protocolId":"reasonix.extension.v1","protocolVersion":"1","manifest":{"intercepts":["input.receive"],"capabilities":["interceptors"]},"session":{"sessionId":"5d9d21234425b47b3c28c573dc8144a9","workspaceRoot":"/home/user/project","generation":1},"capabilities":{"contentRefs":true,"uiHost":"headless","protocolVersion":"1"}}}"#;

#[tokio::test]
async fn the_reference_hosts_first_frame_is_answered_and_the_session_runs() {
    let mut sidecar = Sidecar::start(samples::starter());
    sidecar.host.send(REFERENCE_HOST_FIRST_FRAME).await;
    let answer = sidecar.host.recv().await;
    assert_eq!(
        answer,
        json!({"jsonrpc": "2.0", "id": 1, "result": {
            "protocolVersion": "1",
            "name": samples::STARTER_NAME,
            "version": samples::SAMPLE_VERSION,
            "subscriptions": ["input.receive"],
            "stateSchemaVersion": 0
        }})
    );
    // Past the handshake, the sidecar serves that host like any other.
    sidecar
        .host
        .notify("extension/initialized", json!({}))
        .await;
    let text = format!("{}fix it", samples::STARTER_PREFIX);
    let params = intercept("input.receive", 1, json!({"text": text}), 5000);
    let answer = sidecar.host.call(2, "extension/intercept", params).await;
    assert_eq!(answer["result"]["decision"], "replace", "{answer}");
    let answer = sidecar
        .host
        .call(3, "extension/shutdown", json!({"timeoutMillis": 1000}))
        .await;
    assert_eq!(answer["result"], json!({"accepted": true}));
    sidecar.finish().await;
}

#[tokio::test]
async fn a_capabilities_version_that_is_not_the_negotiated_one_is_refused_and_fatal() {
    // The reference host's member, checked like the top-level version (§1): another major is
    // unsupported_version, a non-canonical or non-string one protocol_error.
    for (version, reason) in [
        (json!("2"), Reason::UnsupportedVersion),
        (json!("01"), Reason::ProtocolError),
        (json!(1), Reason::ProtocolError),
    ] {
        let mut sidecar = Sidecar::start(samples::starter());
        let mut params = init_params(&["input.receive"], &["interceptors"]);
        params["capabilities"]["protocolVersion"] = version.clone();
        let answer = sidecar.host.call(1, "extension/initialize", params).await;
        assert_error(&answer, &json!(1), reason);
        sidecar.host.output_ends().await;
        let err = sidecar.outcome().await.unwrap_err();
        assert!(err.is_fatal(), "{version}: {err}");
        assert_eq!(err.reason(), Some(reason), "{version}");
    }
}

#[tokio::test]
async fn the_reference_hosts_v1_era_manifest_lists_are_accepted_and_nothing_else_is() {
    let mut sidecar = Sidecar::start(samples::starter());
    let mut params = init_params(&["input.receive"], &["interceptors"]);
    params["manifest"]["providers"] = json!(["acme/fast"]);
    params["manifest"]["uiActions"] = json!(["refresh"]);
    let answer = sidecar.host.call(1, "extension/initialize", params).await;
    // Informational only: the handshake still follows the handlers and the `ui` capability.
    assert_eq!(answer["result"]["subscriptions"], json!(["input.receive"]));
    assert!(answer["result"].get("uiActions").is_none(), "{answer}");
    sidecar.finish().await;

    // Any other member the spec does not list is still refused.
    let mut sidecar = Sidecar::start(samples::starter());
    let mut params = init_params(&["input.receive"], &["interceptors"]);
    params["manifest"]["requires"] = json!([]);
    let answer = sidecar.host.call(1, "extension/initialize", params).await;
    assert_error(&answer, &json!(1), Reason::InvalidParams);
    let err = sidecar.outcome().await.unwrap_err();
    assert_eq!(err.reason(), Some(Reason::InvalidParams));
}

#[tokio::test]
async fn a_foreign_protocol_id_is_unsupported_version_and_fatal() {
    // Checklist 22 and 24: the identity check runs before strict decoding. With both
    // profiles (the default) `reasonix.extension.v2` is a profile, so item 22 holds for a
    // sidecar restricted to v1 (spec delta §1.4 P6), and for an id of no profile.
    for (id, options) in [
        (
            "reasonix.extension.v2",
            Options::new().protocols(&[ProtocolProfile::V1]),
        ),
        ("reasonix.extension.v3", Options::new()),
    ] {
        let mut sidecar = Sidecar::start_with(samples::starter(), options);
        let mut params = init_params(&["input.receive"], &["interceptors"]);
        params["protocolId"] = json!(id);
        params["unknownExtra"] = json!(true);
        let answer = sidecar.host.call(1, "extension/initialize", params).await;
        assert_error(&answer, &json!(1), Reason::UnsupportedVersion);
        sidecar.host.output_ends().await;
        let err = sidecar.outcome().await.unwrap_err();
        assert!(err.is_fatal(), "{err}");
        assert_eq!(err.reason(), Some(Reason::UnsupportedVersion));
    }
}

/// The reference v2 host's first frames to the starter and allow-all examples (spec delta
/// §5.3), verbatim but for the manifest lists, which differ per example.
fn reference_v2_initialize(intercepts: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"extension/initialize","params":{{"protocolVersion":"2","protocolId":"reasonix.extension.v2","manifest":{{"intercepts":["{intercepts}"],"capabilities":["interceptors"]}},"session":{{"sessionId":"s-7f3a","workspaceRoot":"/home/dev/project","generation":1}},"capabilities":{{"contentRefs":true,"uiHost":"headless","protocolVersion":"2","dependencySchemaVersion":1}},"dependencySchemaVersion":1}}}}"#
    )
}

#[tokio::test]
async fn the_reference_v2_hosts_starter_session_replays() {
    // Spec delta §5.3, "Starter": the same frames the reference Go SDK sends back.
    let mut sidecar = Sidecar::start(samples::starter());
    sidecar
        .host
        .send(&reference_v2_initialize("input.receive"))
        .await;
    assert_eq!(
        sidecar.host.recv().await,
        json!({"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2","name":"starter-extension",
            "version":"0.1.0","subscriptions":["input.receive"],"stateSchemaVersion":0}})
    );
    sidecar
        .host
        .send(r#"{"jsonrpc":"2.0","method":"extension/initialized","params":{}}"#)
        .await;
    sidecar.host.send(r#"{"jsonrpc":"2.0","id":2,"method":"extension/intercept","params":{"event":"input.receive","seq":1,"payload":{"text":"starter: explain protocols"},"timeoutMillis":5000}}"#).await;
    assert_eq!(
        sidecar.host.recv().await,
        json!({"jsonrpc":"2.0","id":2,"result":{"decision":"replace",
            "replacement":{"text":"explain protocols [rewritten by starter-extension]"}}})
    );
    sidecar.host.send(r#"{"jsonrpc":"2.0","id":3,"method":"extension/intercept","params":{"event":"input.receive","seq":2,"payload":{"text":"hello there"},"timeoutMillis":5000}}"#).await;
    assert_eq!(
        sidecar.host.recv().await,
        json!({"jsonrpc":"2.0","id":3,"result":{"decision":"continue"}})
    );
    sidecar.host.send(r#"{"jsonrpc":"2.0","method":"extension/event","params":{"event":"input.receive","payload":{"text":"starter: an event"}}}"#).await;
    sidecar
        .host
        .send(r#"{"jsonrpc":"2.0","id":4,"method":"extension/shutdown","params":{"timeoutMillis":5000}}"#)
        .await;
    // The event wrote nothing: the next frame is the shutdown's answer.
    assert_eq!(
        sidecar.host.recv().await,
        json!({"jsonrpc":"2.0","id":4,"result":{"accepted":true}})
    );
    sidecar.finish().await;
}

#[tokio::test]
async fn the_reference_v2_hosts_allow_all_session_replays() {
    // Spec delta §5.3, "Allow-all": the reference host omits `readOnly`.
    let mut sidecar = Sidecar::start(samples::allow_all());
    sidecar
        .host
        .send(&reference_v2_initialize("permission.decision"))
        .await;
    assert_eq!(
        sidecar.host.recv().await,
        json!({"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2","name":"allow-all",
            "version":"0.1.0","subscriptions":["permission.decision"],"stateSchemaVersion":0}})
    );
    sidecar
        .host
        .send(r#"{"jsonrpc":"2.0","method":"extension/initialized","params":{}}"#)
        .await;
    sidecar.host.send(r#"{"jsonrpc":"2.0","id":2,"method":"extension/intercept","params":{"event":"permission.decision","seq":1,"payload":{"name":"shell","arguments":"{\"cmd\":\"rm -rf build\"}","hostDecision":"deny"},"timeoutMillis":5000}}"#).await;
    let answer = sidecar.host.recv().await;
    assert_eq!(answer["id"], 2, "{answer}");
    assert_eq!(answer["result"]["decision"], "allow", "{answer}");
    let answer = sidecar
        .host
        .call(3, "extension/shutdown", json!({"timeoutMillis": 5000}))
        .await;
    assert_eq!(answer["result"], json!({"accepted": true}));
    sidecar.finish().await;
}

#[tokio::test]
async fn a_sidecar_restricted_to_v2_refuses_a_v1_host_and_knows_its_profile() {
    let mut sidecar = Sidecar::start_with(
        samples::starter(),
        Options::new().protocols(&[ProtocolProfile::V2]),
    );
    let params = init_params(&["input.receive"], &["interceptors"]);
    let answer = sidecar.host.call(1, "extension/initialize", params).await;
    assert_error(&answer, &json!(1), Reason::UnsupportedVersion);
    sidecar.host.output_ends().await;
    assert!(sidecar.outcome().await.unwrap_err().is_fatal());

    // The profile the host picked is the extension's to read.
    let (seen_tx, mut seen) = mpsc::unbounded_channel();
    let extension = Extension::new("probe", "1.0.0").on_intercept(
        point::INPUT_RECEIVE,
        move |ctx: sidewire_ext_sdk::Context, _input: InputPayload| {
            let seen_tx = seen_tx.clone();
            async move {
                let _ = seen_tx.send(ctx.host().profile());
                Ok(Decision::Continue)
            }
        },
    );
    let mut sidecar = Sidecar::start(extension);
    sidecar
        .host
        .send(&reference_v2_initialize("input.receive"))
        .await;
    assert_eq!(sidecar.host.recv().await["result"]["protocolVersion"], "2");
    sidecar
        .host
        .notify("extension/initialized", json!({}))
        .await;
    let params = intercept("input.receive", 1, json!({"text": "hi"}), 5000);
    let answer = sidecar.host.call(2, "extension/intercept", params).await;
    assert_eq!(answer["result"]["decision"], "continue", "{answer}");
    assert_eq!(seen.recv().await, Some(Some(ProtocolProfile::V2)));
}

#[tokio::test]
async fn version_errors_are_answered_and_fatal() {
    // Checklist 23: each case on a fresh connection, each followed by exit non-zero.
    // (member, its value or `None` to leave it out, the reason answered)
    let cases = [
        (
            "protocolVersion",
            Some(json!("2")),
            Reason::UnsupportedVersion,
        ),
        (
            "protocolVersion",
            Some(json!("0")),
            Reason::UnsupportedVersion,
        ),
        ("protocolId", None, Reason::UnsupportedVersion),
        ("protocolVersion", Some(json!("x")), Reason::ProtocolError),
        ("protocolVersion", Some(json!("")), Reason::ProtocolError),
        ("protocolVersion", Some(json!("01")), Reason::ProtocolError),
        ("protocolVersion", Some(json!(1)), Reason::ProtocolError),
        ("protocolVersion", None, Reason::ProtocolError),
        (
            "session",
            Some(json!({"sessionId": "s", "workspaceRoot": "/", "generation": 0})),
            Reason::InvalidParams,
        ),
    ];
    for (member, value, reason) in cases {
        let what = format!("{member} = {value:?}");
        let mut sidecar = Sidecar::start(samples::starter());
        let mut params = init_params(&["input.receive"], &["interceptors"]);
        match value {
            Some(value) => params[member] = value,
            None => drop(params.as_object_mut().unwrap().remove(member)),
        }
        let answer = sidecar.host.call(1, "extension/initialize", params).await;
        assert_error(&answer, &json!(1), reason);
        let err = sidecar.outcome().await.unwrap_err();
        assert!(err.is_fatal(), "{what}: {err}");
        assert_eq!(err.reason(), Some(reason), "{what}");
    }
}

#[tokio::test]
async fn a_failing_initialize_hook_is_fatal() {
    let extension = Extension::new("x", "1")
        .on_initialize(|_host| async { Err(Error::callback("no configuration found")) });
    let mut sidecar = Sidecar::start(extension);
    let answer = sidecar.host.initialize(&[], &[]).await;
    assert_error(&answer, &json!(1), Reason::Internal);
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no configuration found")
    );
    let err = sidecar.outcome().await.unwrap_err();
    assert!(matches!(err, Error::Handshake { .. }), "{err}");
}

#[tokio::test]
async fn host_calls_before_ready_fail_locally_and_write_nothing() {
    // Checklist 33.
    let (tx, mut rx) = mpsc::unbounded_channel();
    let extension = Extension::new("x", "1").on_initialize(move |host| {
        let tx = tx.clone();
        async move {
            let status = StatusPayload {
                label: "too early".to_owned(),
                ..StatusPayload::default()
            };
            let published = host.publish("s", status).await;
            let confirmed = host.confirm("s", "sure?").await;
            tx.send((published, confirmed, host.session().cloned()))
                .unwrap();
            Ok(())
        }
    });
    let mut sidecar = Sidecar::start(extension);
    let answer = sidecar.host.initialize(&[], &["ui"]).await;
    assert!(answer.get("result").is_some(), "{answer}");
    let (published, confirmed, session) = within("the hook's report", rx.recv()).await.unwrap();
    assert!(published.unwrap_err().is_not_ready());
    assert!(confirmed.unwrap_err().is_not_ready());
    assert_eq!(session.unwrap().session_id, "s-1");
    sidecar.host.silent().await;
    sidecar.finish().await;
}

#[tokio::test]
async fn each_state_serves_only_its_requests() {
    // Checklist 32 (and 13 for `unknown_method` in every state).
    let mut sidecar = Sidecar::start(samples::starter());
    let host = &mut sidecar.host;
    // State `new`: intercept and ui/action (even without a UI handler) are protocol_error.
    let input = intercept("input.receive", 1, json!({"text": "x"}), 5000);
    let answer = host.call(2, "extension/intercept", input.clone()).await;
    assert_error(&answer, &json!(2), Reason::ProtocolError);
    let answer = host.call(3, "extension/ui/action", json!({})).await;
    assert_error(&answer, &json!(3), Reason::ProtocolError);
    let answer = host.call(4, "nope/nothing", json!({})).await;
    assert_error(&answer, &json!(4), Reason::UnknownMethod);
    // State `handshake`.
    let answer = host.initialize(&["input.receive"], &["interceptors"]).await;
    assert!(answer.get("result").is_some(), "{answer}");
    let answer = host.call(5, "extension/intercept", input.clone()).await;
    assert_error(&answer, &json!(5), Reason::ProtocolError);
    let answer = host
        .call(6, "extension/initialize", init_params(&[], &[]))
        .await;
    assert_error(&answer, &json!(6), Reason::ProtocolError);
    let answer = host.call(7, "nope/nothing", json!({})).await;
    assert_error(&answer, &json!(7), Reason::UnknownMethod);
    // State `ready`: a second initialize is refused; the connection stays usable.
    host.notify("extension/initialized", json!({})).await;
    let answer = host
        .call(8, "extension/initialize", init_params(&[], &[]))
        .await;
    assert_error(&answer, &json!(8), Reason::ProtocolError);
    let answer = host.call(9, "extension/intercept", input.clone()).await;
    assert_eq!(answer["result"]["decision"], "continue", "{answer}");
    let answer = host.call(10, "nope/nothing", json!({})).await;
    assert_error(&answer, &json!(10), Reason::UnknownMethod);
    // State `shutdown`: nothing is served.
    let answer = host
        .call(11, "extension/shutdown", json!({"timeoutMillis": 1000}))
        .await;
    assert_eq!(answer["result"], json!({"accepted": true}));
    for (id, method) in [(12, "extension/intercept"), (13, "extension/shutdown")] {
        let answer = host.call(id, method, json!({"timeoutMillis": 1000})).await;
        assert_error(&answer, &json!(id), Reason::ProtocolError);
    }
    let answer = host.call(14, "nope/nothing", json!({})).await;
    assert_error(&answer, &json!(14), Reason::UnknownMethod);
    sidecar.finish().await;
}

#[tokio::test]
async fn shutdown_accepts_cancels_callbacks_and_ends_at_end_of_input() {
    // Checklist 88: in-flight callbacks are cancelled without an answer; exit 0 at EOF.
    let started = Arc::new(Notify::new());
    let dropped = Arc::new(Notify::new());
    let (started2, dropped2) = (Arc::clone(&started), Arc::clone(&dropped));
    let extension =
        Extension::new("x", "1").on_intercept(point::INPUT_RECEIVE, move |_, _: InputPayload| {
            let (started, dropped) = (Arc::clone(&started2), Arc::clone(&dropped2));
            async move {
                // Notifies when the callback's future is dropped (cancelled).
                struct OnDrop(Arc<Notify>);
                impl Drop for OnDrop {
                    fn drop(&mut self) {
                        self.0.notify_one();
                    }
                }
                let _guard = OnDrop(dropped);
                started.notify_one();
                std::future::pending::<()>().await;
                Ok(Decision::Continue)
            }
        });
    let mut sidecar = Sidecar::start(extension);
    sidecar
        .host
        .handshake(&["input.receive"], &["interceptors"])
        .await;
    let input = intercept("input.receive", 1, json!({"text": "x"}), 60_000);
    sidecar
        .host
        .send_json(
            &json!({"jsonrpc": "2.0", "id": 2, "method": "extension/intercept", "params": input}),
        )
        .await;
    within("the callback to start", started.notified()).await;
    let answer = sidecar
        .host
        .call(3, "extension/shutdown", json!({"timeoutMillis": 5000}))
        .await;
    assert_eq!(answer["result"], json!({"accepted": true}));
    within("the callback to be cancelled", dropped.notified()).await;
    // The cancelled intercept is never answered.
    sidecar.host.silent().await;
    sidecar.finish().await;
}

#[tokio::test]
async fn the_shutdown_hook_runs_within_its_budget() {
    let extension = Extension::new("x", "1").on_shutdown(|_host| async {
        tokio::time::sleep(Duration::from_secs(60)).await;
        Ok(())
    });
    let mut sidecar = Sidecar::start(extension);
    sidecar.host.handshake(&[], &[]).await;
    let answer = sidecar
        .host
        .call(2, "extension/shutdown", json!({"timeoutMillis": 100}))
        .await;
    assert_error(&answer, &json!(2), Reason::ShutdownTimeout);
    sidecar.finish().await;

    let (tx, mut rx) = mpsc::unbounded_channel();
    let extension = Extension::new("x", "1").on_shutdown(move |host| {
        let tx = tx.clone();
        async move {
            // A hook may still call the host: the connection was ready.
            tx.send(host.is_ready()).unwrap();
            Ok(())
        }
    });
    let mut sidecar = Sidecar::start(extension);
    sidecar.host.handshake(&[], &[]).await;
    let answer = sidecar
        .host
        .call(2, "extension/shutdown", json!({"timeoutMillis": 1000}))
        .await;
    assert_eq!(answer["result"], json!({"accepted": true}));
    assert!(within("the hook", rx.recv()).await.unwrap());
    sidecar.finish().await;
}

#[tokio::test]
async fn shutdown_is_served_before_the_handshake() {
    let mut sidecar = Sidecar::start(samples::starter());
    let answer = sidecar
        .host
        .call(1, "extension/shutdown", json!({"timeoutMillis": 1000}))
        .await;
    assert_eq!(answer["result"], json!({"accepted": true}));
    let answer = sidecar
        .host
        .call(2, "extension/initialize", init_params(&[], &[]))
        .await;
    assert_error(&answer, &json!(2), Reason::ProtocolError);
    sidecar.finish().await;
}

#[tokio::test]
async fn end_of_input_is_orderly_in_every_state_but_mid_line() {
    // Checklist 88: EOF in any state is status 0, EOF after a partial line is not.
    Sidecar::start(samples::starter()).finish().await;
    let mut sidecar = Sidecar::start(samples::starter());
    sidecar.host.initialize(&[], &[]).await;
    sidecar.finish().await;
    let mut sidecar = Sidecar::start(samples::starter());
    sidecar.host.handshake(&[], &[]).await;
    sidecar.finish().await;

    let mut sidecar = Sidecar::start(samples::starter());
    sidecar.host.handshake(&[], &[]).await;
    sidecar.host.send_bytes(br#"{"jsonrpc":"2.0","#).await;
    sidecar.host.close_input();
    let err = sidecar.outcome().await.unwrap_err();
    assert!(err.is_fatal(), "{err}");
    assert!(err.to_string().contains("unterminated frame"), "{err}");
}
