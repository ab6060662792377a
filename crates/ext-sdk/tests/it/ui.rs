//! Structured UI (§10): publishing, prompts, actions and submissions.

use serde_json::{Value, json};
use sidewire_ext_protocol::{
    CardAction, CardPayload, FRAME_BYTES, Reason, StatusPayload, UiActionResult, UiSubmitResult,
};
use sidewire_ext_sdk::{Error, Extension, HostHandle, samples};
use tokio::sync::mpsc;

use crate::support::{Sidecar, assert_error, within};

type Report = mpsc::UnboundedSender<Result<Value, Error>>;

/// An extension whose action `go` runs `body` and reports what it returned.
fn acting<F, Fut>(body: F) -> (Extension, mpsc::UnboundedReceiver<Result<Value, Error>>)
where
    F: Fn(HostHandle) -> Fut + Send + Sync + Clone + 'static,
    Fut: std::future::Future<Output = Result<Value, Error>> + Send + 'static,
{
    let (tx, rx): (Report, _) = mpsc::unbounded_channel();
    let extension = Extension::new("x", "1").on_action("go", "Go", move |host, _params| {
        let (tx, body) = (tx.clone(), body.clone());
        async move {
            tx.send(body(host).await).unwrap();
            Ok(UiActionResult {
                accepted: true,
                message: String::new(),
            })
        }
    });
    (extension, rx)
}

async fn ready(extension: Extension) -> Sidecar {
    let mut sidecar = Sidecar::start(extension);
    sidecar.host.handshake(&[], &["ui"]).await;
    sidecar
}

fn action(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "extension/ui/action",
        "params": {"actionId": "go", "sessionId": "s-1", "generation": 1}})
}

#[tokio::test]
async fn without_a_ui_handler_ui_requests_are_unknown_method() {
    // Checklist 14: even when their params are invalid.
    let mut sidecar = ready(samples::starter()).await;
    for (id, method) in [(2, "extension/ui/action"), (3, "extension/ui/submit")] {
        let answer = sidecar.host.call(id, method, json!({"actionId": 5})).await;
        assert_error(&answer, &json!(id), Reason::UnknownMethod);
    }
    sidecar.finish().await;
    // Registered handlers without manifest capability `ui` are not live either.
    let (extension, _rx) = acting(|_| async { Ok(Value::Null) });
    let mut sidecar = Sidecar::start(extension);
    sidecar.host.handshake(&[], &[]).await;
    let answer = sidecar.host.call(2, "extension/ui/action", json!({})).await;
    assert_error(&answer, &json!(2), Reason::UnknownMethod);
    sidecar.finish().await;
}

#[tokio::test]
async fn actions_and_submissions_reach_their_callbacks() {
    let extension = samples::status_card().on_submit(|_host, params| async move {
        Ok(UiSubmitResult {
            accepted: params.values.get("ok") == Some(&json!(true)),
        })
    });
    let mut sidecar = Sidecar::start(extension);
    sidecar.host.handshake(&[], &["ui"]).await;
    let ready = sidecar.host.recv().await;
    sidecar.host.reply(&ready, json!({"accepted": true})).await;
    sidecar
        .host
        .send_json(
            &json!({"jsonrpc": "2.0", "id": 2, "method": "extension/ui/action",
            "params": {"actionId": "refresh", "sessionId": "s-1", "generation": 1,
                "args": {"surfaceId": "status"}}}),
        )
        .await;
    let publish = sidecar.host.recv().await;
    assert_eq!(publish["params"]["payload"]["label"], "refreshed 1 times");
    sidecar
        .host
        .reply(&publish, json!({"accepted": false}))
        .await;
    let answer = sidecar.host.recv().await;
    assert_eq!(answer["result"], json!({"accepted": false}));
    let answer = sidecar
        .host
        .call(
            3,
            "extension/ui/action",
            json!({"actionId": "other", "sessionId": "s-1", "generation": 1}),
        )
        .await;
    assert_error(&answer, &json!(3), Reason::InvalidParams);
    let answer = sidecar
        .host
        .call(
            4,
            "extension/ui/submit",
            json!({"surfaceId": "f", "sessionId": "s-1", "generation": 1, "values": {"ok": true}}),
        )
        .await;
    assert_eq!(answer["result"], json!({"accepted": true}));
    sidecar.finish().await;
}

#[tokio::test]
async fn prompts_send_the_shapes_of_section_10_3() {
    // Checklist 69.
    let (extension, mut reports) = acting(|host| async move {
        let confirmed = host.confirm("p", "Proceed?").await?;
        let typed = host.input("p", "Name?").await?;
        let picked = host.select("p", "Pick", ["a", "b"]).await?;
        let several = host.multiselect("p", "Some", ["a", "b", "c"]).await?;
        let dismissed = host.confirm("p", "Again?").await?;
        Ok(json!([confirmed, typed, picked, several, dismissed]))
    });
    let mut sidecar = ready(extension).await;
    sidecar.host.send_json(&action(2)).await;
    let expected = [
        (
            json!({"kind": "confirm", "payload": {"title": "Proceed?", "fields": []}}),
            json!({"cancelled": false, "values": {"value": true}}),
        ),
        (
            json!({"kind": "input", "payload": {"title": "Name?", "fields": []}}),
            json!({"cancelled": false, "values": {"value": "Ada"}}),
        ),
        (
            json!({"kind": "select", "payload": {"title": "Pick", "fields": [{"key": "value", "kind": "select", "options": ["a", "b"]}]}}),
            json!({"cancelled": false, "values": {"value": "b"}}),
        ),
        (
            json!({"kind": "multiselect", "payload": {"title": "Some", "fields": [{"key": "value", "kind": "multiselect", "options": ["a", "b", "c"]}]}}),
            json!({"cancelled": false, "values": {"value": ["a", "c"]}}),
        ),
        (
            json!({"kind": "confirm", "payload": {"title": "Again?", "fields": []}}),
            json!({"cancelled": true}),
        ),
    ];
    for (shape, answer) in expected {
        let request = sidecar.host.recv().await;
        assert_eq!(request["method"], "host/ui/request");
        let params = &request["params"];
        assert_eq!(params["surfaceId"], "p");
        assert_eq!(params["sessionId"], "s-1");
        assert_eq!(params["generation"], 1);
        assert_eq!(params["kind"], shape["kind"], "{request}");
        assert_eq!(params["payload"], shape["payload"], "{request}");
        sidecar.host.reply(&request, answer).await;
    }
    let report = within("the action's report", reports.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(report, json!([true, "Ada", "b", ["a", "c"], null]));
    assert_eq!(
        sidecar.host.recv().await["result"],
        json!({"accepted": true})
    );

    // An answer of the wrong type is a protocol error.
    sidecar.host.send_json(&action(3)).await;
    let request = sidecar.host.recv().await;
    sidecar
        .host
        .reply(
            &request,
            json!({"cancelled": false, "values": {"value": "yes"}}),
        )
        .await;
    let err = within("the report", reports.recv())
        .await
        .unwrap()
        .unwrap_err();
    assert_eq!(err.reason(), Some(Reason::ProtocolError), "{err}");
    sidecar.host.recv().await;
    sidecar.finish().await;
}

#[tokio::test]
async fn an_oversized_publish_fails_locally_and_writes_nothing() {
    // Checklist 3.
    let (extension, mut reports) = acting(|host| async move {
        let status = StatusPayload {
            label: "x".repeat(FRAME_BYTES),
            ..StatusPayload::default()
        };
        host.publish("s", status).await.map(Value::from)
    });
    let mut sidecar = ready(extension).await;
    sidecar.host.send_json(&action(2)).await;
    let err = within("the report", reports.recv())
        .await
        .unwrap()
        .unwrap_err();
    assert!(err.is_frame_too_large(), "{err}");
    // The action's answer is the only frame.
    assert_eq!(sidecar.host.recv().await["id"], 2);
    sidecar.host.silent().await;
    sidecar.finish().await;
}

#[tokio::test]
async fn invalid_ui_payloads_are_refused_locally() {
    let (extension, mut reports) = acting(|host| async move {
        let blank = StatusPayload {
            label: " ".to_owned(),
            ..StatusPayload::default()
        };
        let blank = host.publish("s", blank).await;
        let too_far = StatusPayload {
            label: "x".to_owned(),
            progress: Some(1.5),
            ..StatusPayload::default()
        };
        let too_far = host.publish("s", too_far).await;
        let undeclared = CardPayload {
            actions: vec![CardAction {
                action_id: "nope".to_owned(),
                label: "Nope".to_owned(),
            }],
            ..CardPayload::default()
        };
        let undeclared = host.publish("", undeclared).await;
        for outcome in [blank, too_far, undeclared] {
            let err = outcome.unwrap_err();
            assert!(err.is_invalid(), "{err}");
            assert_eq!(err.reason(), Some(Reason::InvalidParams));
        }
        Ok(Value::Null)
    });
    let mut sidecar = ready(extension).await;
    sidecar.host.send_json(&action(2)).await;
    within("the report", reports.recv()).await.unwrap().unwrap();
    assert_eq!(sidecar.host.recv().await["id"], 2);
    sidecar.host.silent().await;
    sidecar.finish().await;
}

#[tokio::test]
async fn a_card_with_declared_actions_is_published() {
    let (extension, mut reports) = acting(|host| async move {
        let card = CardPayload {
            title: "Build".to_owned(),
            actions: vec![CardAction {
                action_id: "go".to_owned(),
                label: "Go again".to_owned(),
            }],
            ..CardPayload::default()
        };
        host.publish("card", card).await.map(Value::from)
    });
    let mut sidecar = ready(extension).await;
    sidecar.host.send_json(&action(2)).await;
    let publish = sidecar.host.recv().await;
    assert_eq!(publish["params"]["kind"], "card");
    sidecar
        .host
        .reply(&publish, json!({"accepted": true}))
        .await;
    assert_eq!(
        within("the report", reports.recv()).await.unwrap().unwrap(),
        json!(true)
    );
    sidecar.host.recv().await;
    sidecar.finish().await;
}
