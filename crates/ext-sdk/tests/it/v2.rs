//! The tables a V2 connection follows after its handshake (spec delta §1.4 P1), replayed with
//! v2 frames beside the same frames on a V1 connection: `timeoutMillis` 0 (§2.3, §2.2),
//! `"paths":[]` (§2.2), stream numbering and the stream members `generation`/`epoch` (§2.11).

use std::time::Duration;

use futures_util::stream;
use serde_json::{Value, json};
use sidewire_ext_protocol::v2::{CapabilityWire, RequirementWire};
use sidewire_ext_protocol::{
    ChunkType, InputPayload, ProviderChunk, ProviderDescriptor, Reason, StreamOpenParams,
};
use sidewire_ext_sdk::{
    ChunkStream, Decision, Error, Extension, HostHandle, Provider, StreamContext, point,
};
use tokio::sync::mpsc;

use crate::support::{Sidecar, assert_error, init_params, intercept, within};

/// `InitializeParams` of a v2 host (the same session as [`init_params`]).
fn v2_init_params(intercepts: &[&str], capabilities: &[&str]) -> Value {
    let mut params = init_params(intercepts, capabilities);
    params["protocolId"] = json!("reasonix.extension.v2");
    params["protocolVersion"] = json!("2");
    params["capabilities"]["protocolVersion"] = json!("2");
    params["dependencySchemaVersion"] = json!(1);
    params
}

/// The handshake in `profile` ("1" or "2").
async fn handshake(sidecar: &mut Sidecar, v2: bool, intercepts: &[&str], capabilities: &[&str]) {
    let params = if v2 {
        v2_init_params(intercepts, capabilities)
    } else {
        init_params(intercepts, capabilities)
    };
    let answer = sidecar.host.call(1, "extension/initialize", params).await;
    let version = if v2 { "2" } else { "1" };
    assert_eq!(answer["result"]["protocolVersion"], version, "{answer}");
    sidecar
        .host
        .notify("extension/initialized", json!({}))
        .await;
}

/// An interceptor that reports its context's budget.
fn budget_probe() -> (Extension, mpsc::UnboundedReceiver<Option<Duration>>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let extension = Extension::new("probe", "1").on_intercept(
        point::INPUT_RECEIVE,
        move |ctx: sidewire_ext_sdk::Context, _input: InputPayload| {
            let tx = tx.clone();
            async move {
                tx.send(ctx.budget()).unwrap();
                Ok(Decision::Continue)
            }
        },
    );
    (extension, rx)
}

#[tokio::test]
async fn a_zero_intercept_timeout_means_no_deadline_on_v2_and_is_invalid_on_v1() {
    // Checklist item 9 (intercept half).
    let (extension, mut budgets) = budget_probe();
    let mut sidecar = Sidecar::start(extension);
    handshake(&mut sidecar, true, &["input.receive"], &["interceptors"]).await;
    let params = intercept("input.receive", 1, json!({"text": "hi"}), 0);
    let answer = sidecar.host.call(2, "extension/intercept", params).await;
    assert_eq!(
        answer["result"],
        json!({"decision": "continue"}),
        "{answer}"
    );
    assert_eq!(within("the callback", budgets.recv()).await, Some(None));
    let params = intercept("input.receive", 2, json!({"text": "hi"}), 5000);
    sidecar.host.call(3, "extension/intercept", params).await;
    assert_eq!(
        within("the callback", budgets.recv()).await,
        Some(Some(Duration::from_millis(5000)))
    );
    sidecar.finish().await;

    let (extension, mut budgets) = budget_probe();
    let mut sidecar = Sidecar::start(extension);
    handshake(&mut sidecar, false, &["input.receive"], &["interceptors"]).await;
    let params = intercept("input.receive", 1, json!({"text": "hi"}), 0);
    let answer = sidecar.host.call(2, "extension/intercept", params).await;
    assert_error(&answer, &json!(2), Reason::InvalidParams);
    sidecar.finish().await;
    assert!(budgets.try_recv().is_err(), "the callback never ran");
}

#[tokio::test]
async fn a_zero_shutdown_timeout_puts_no_bound_on_the_hook_on_v2_only() {
    // Checklist item 9 (shutdown half). The hook takes a while: with 0 read as a bound it
    // would overrun at once.
    let hook = || {
        Extension::new("x", "1").on_shutdown(|_host| async {
            tokio::time::sleep(Duration::from_millis(50)).await;
            Ok(())
        })
    };
    let mut sidecar = Sidecar::start(hook());
    handshake(&mut sidecar, true, &[], &[]).await;
    let answer = sidecar
        .host
        .call(2, "extension/shutdown", json!({"timeoutMillis": 0}))
        .await;
    assert_eq!(answer["result"], json!({"accepted": true}), "{answer}");
    sidecar.finish().await;

    let mut sidecar = Sidecar::start(hook());
    handshake(&mut sidecar, false, &[], &[]).await;
    let answer = sidecar
        .host
        .call(2, "extension/shutdown", json!({"timeoutMillis": 0}))
        .await;
    assert_error(&answer, &json!(2), Reason::InvalidParams);
    sidecar.finish().await;
}

#[tokio::test]
async fn empty_resource_paths_reach_the_callback_on_v2() {
    // Checklist item 24.
    let (tx, mut rx) = mpsc::unbounded_channel();
    let extension = Extension::new("x", "1").on_resources_changed(move |_host, paths| {
        let tx = tx.clone();
        async move {
            tx.send(paths).unwrap();
            Ok(())
        }
    });
    let mut sidecar = Sidecar::start(extension);
    handshake(&mut sidecar, true, &[], &[]).await;
    sidecar
        .host
        .notify("extension/resources/changed", json!({"paths": []}))
        .await;
    assert_eq!(
        within("the observer", rx.recv()).await,
        Some(Vec::<String>::new())
    );
    sidecar.finish().await;
}

const REF: &str = "plugin/test/scripted/m1";

/// Streams as many text chunks as the last message says.
struct Counter;

impl Provider for Counter {
    async fn catalog(&self, _host: &HostHandle) -> Result<Vec<ProviderDescriptor>, Error> {
        Ok(vec![ProviderDescriptor {
            reference: REF.to_owned(),
            ..ProviderDescriptor::default()
        }])
    }

    async fn open(
        &self,
        _ctx: StreamContext,
        params: StreamOpenParams,
    ) -> Result<ChunkStream, Error> {
        let n: usize = params.request.messages[0].content.parse().unwrap();
        Ok(Box::pin(stream::iter((1..=n).map(|i| {
            let mut chunk = ProviderChunk::new(ChunkType::Text);
            chunk.text = format!("w{i}");
            Ok(chunk)
        }))))
    }
}

fn open_params(stream_id: &str, seq_base: u64, chunks: usize) -> Value {
    json!({
        "streamId": stream_id,
        "providerRef": REF,
        "request": {"messages": [{"role": "user", "content": chunks.to_string()}], "tools": [], "maxTokens": 10},
        "seqBase": seq_base
    })
}

/// Opens a stream and reads it to its end: (the chunks' seqs, the end's `lastSeq`).
async fn stream_of(sidecar: &mut Sidecar, id: u64, params: Value) -> (Vec<u64>, u64) {
    let stream_id = params["streamId"].clone();
    let answer = sidecar
        .host
        .call(id, "extension/provider/stream/open", params)
        .await;
    assert_eq!(answer["result"], json!({"accepted": true}), "{answer}");
    let mut seqs = Vec::new();
    loop {
        let frame = sidecar.host.recv().await;
        assert_eq!(frame["params"]["streamId"], stream_id, "{frame}");
        match frame["method"].as_str() {
            Some("extension/provider/stream/chunk") => {
                seqs.push(frame["params"]["seq"].as_u64().unwrap())
            }
            Some("extension/provider/stream/end") => {
                return (seqs, frame["params"]["lastSeq"].as_u64().unwrap());
            }
            _ => panic!("not a stream frame: {frame}"),
        }
    }
}

#[tokio::test]
async fn v2_streams_number_from_max_seq_base_one() {
    // Checklist item 22.
    let mut sidecar = Sidecar::start(Extension::new("test", "0.1.0").provider(Counter));
    handshake(&mut sidecar, true, &[], &["providers"]).await;
    assert_eq!(
        stream_of(&mut sidecar, 2, open_params("es_1", 1, 3)).await,
        (vec![1, 2, 3], 3)
    );
    assert_eq!(
        stream_of(&mut sidecar, 3, open_params("es_2", 0, 2)).await,
        (vec![1, 2], 2)
    );
    assert_eq!(
        stream_of(&mut sidecar, 4, open_params("es_3", 7, 2)).await,
        (vec![7, 8], 8)
    );
    // No chunk: lastSeq is 0 (the last seq sent, none).
    assert_eq!(
        stream_of(&mut sidecar, 5, open_params("es_4", 1, 0)).await,
        (vec![], 0)
    );
    // The v2 members of the open are accepted.
    let mut open = open_params("es_5", 1, 1);
    open["generation"] = json!(1);
    open["epoch"] = json!("e");
    assert_eq!(stream_of(&mut sidecar, 6, open).await, (vec![1], 1));
    sidecar.finish().await;

    // The same opens on V1: from seqBase + 1, and the v2 members are unknown.
    let mut sidecar = Sidecar::start(Extension::new("test", "0.1.0").provider(Counter));
    handshake(&mut sidecar, false, &[], &["providers"]).await;
    assert_eq!(
        stream_of(&mut sidecar, 2, open_params("s1", 1, 3)).await,
        (vec![2, 3, 4], 4)
    );
    assert_eq!(
        stream_of(&mut sidecar, 3, open_params("s2", 1, 0)).await,
        (vec![], 1)
    );
    let mut open = open_params("s3", 0, 1);
    open["generation"] = json!(1);
    let answer = sidecar
        .host
        .call(4, "extension/provider/stream/open", open)
        .await;
    assert_error(&answer, &json!(4), Reason::InvalidParams);
    sidecar.finish().await;
}

/// An interceptor that publishes a panel and reports how that went.
fn panel_publisher() -> (Extension, mpsc::UnboundedReceiver<Result<bool, Error>>) {
    use sidewire_ext_protocol::v2::ui::PanelPayload;
    let (tx, rx) = mpsc::unbounded_channel();
    let extension = Extension::new("panels", "1").on_intercept(
        point::INPUT_RECEIVE,
        move |ctx: sidewire_ext_sdk::Context, _input: InputPayload| {
            let tx = tx.clone();
            async move {
                let panel = PanelPayload {
                    title: "Build".to_owned(),
                    progress: Some(0.5),
                    ..PanelPayload::default()
                };
                tx.send(ctx.host().publish_panel("build", panel).await)
                    .unwrap();
                Ok(Decision::Continue)
            }
        },
    );
    (extension, rx)
}

#[tokio::test]
async fn panels_are_published_on_v2_and_refused_locally_on_v1() {
    // Spec delta §1.4 P5, §2.7.2.
    let (extension, mut outcomes) = panel_publisher();
    let mut sidecar = Sidecar::start(extension);
    handshake(
        &mut sidecar,
        true,
        &["input.receive"],
        &["interceptors", "ui"],
    )
    .await;
    let params = intercept("input.receive", 1, json!({"text": "hi"}), 5000);
    sidecar
        .host
        .send_json(&json!({"jsonrpc":"2.0","id":2,"method":"extension/intercept","params":params}))
        .await;
    let publish = sidecar.host.recv().await;
    assert_eq!(publish["method"], "host/ui/publish", "{publish}");
    assert_eq!(
        publish["params"],
        json!({"surfaceId":"build","sessionId":"s-1","generation":1,"kind":"panel",
            "payload":{"title":"Build","progress":0.5}})
    );
    sidecar
        .host
        .reply(&publish, json!({"accepted": true}))
        .await;
    assert_eq!(sidecar.host.recv().await["result"]["decision"], "continue");
    assert!(
        within("the publish", outcomes.recv())
            .await
            .unwrap()
            .unwrap()
    );
    sidecar.finish().await;

    let (extension, mut outcomes) = panel_publisher();
    let mut sidecar = Sidecar::start(extension);
    handshake(
        &mut sidecar,
        false,
        &["input.receive"],
        &["interceptors", "ui"],
    )
    .await;
    let params = intercept("input.receive", 1, json!({"text": "hi"}), 5000);
    let answer = sidecar.host.call(2, "extension/intercept", params).await;
    // Nothing but the intercept's answer was written.
    assert_eq!(answer["result"]["decision"], "continue", "{answer}");
    let err = within("the publish", outcomes.recv())
        .await
        .unwrap()
        .unwrap_err();
    assert!(err.is_not_in_profile(), "{err}");
    sidecar.finish().await;
}

#[tokio::test]
async fn views_are_checked_locally_before_they_are_sent() {
    use sidewire_ext_protocol::v2::ui::{NodeKind, UiNode, ViewPayload};
    let (tx, mut outcomes) = mpsc::unbounded_channel();
    let extension = Extension::new("views", "1").on_intercept(
        point::INPUT_RECEIVE,
        move |ctx: sidewire_ext_sdk::Context, _input: InputPayload| {
            let tx = tx.clone();
            async move {
                // A meter without progress breaks the view's rules.
                let view = ViewPayload {
                    body: vec![UiNode {
                        kind: NodeKind::Meter,
                        value: String::new(),
                        key: String::new(),
                        label: "half".to_owned(),
                        tone: None,
                        progress: None,
                        action_id: String::new(),
                        children: Vec::new(),
                    }],
                    ..ViewPayload::default()
                };
                tx.send(ctx.host().publish_view("v", view).await).unwrap();
                Ok(Decision::Continue)
            }
        },
    );
    let mut sidecar = Sidecar::start(extension);
    handshake(
        &mut sidecar,
        true,
        &["input.receive"],
        &["interceptors", "ui"],
    )
    .await;
    let params = intercept("input.receive", 1, json!({"text": "hi"}), 5000);
    let answer = sidecar.host.call(2, "extension/intercept", params).await;
    assert_eq!(answer["result"]["decision"], "continue", "{answer}");
    let err = within("the publish", outcomes.recv())
        .await
        .unwrap()
        .unwrap_err();
    assert!(err.is_invalid(), "{err}");
    assert_eq!(err.reason(), Some(Reason::InvalidParams));
    sidecar.finish().await;
}

fn capability(namespace: &str, kind: &str, id: &str) -> CapabilityWire {
    CapabilityWire {
        namespace: namespace.to_owned(),
        kind: kind.to_owned(),
        id: id.to_owned(),
        version: Some("1.0.0".to_owned()),
        schema_hash: None,
    }
}

fn declaring() -> Extension {
    Extension::new("deps", "1")
        .requires(RequirementWire {
            namespace: "reasonix".to_owned(),
            kind: "browser".to_owned(),
            id: "companion".to_owned(),
            version: None,
            version_range: Some(">=1.0.0".to_owned()),
            schema_hash: None,
            optional: Some(true),
        })
        .provides(capability("plugin/deps", "service", "a"))
        .provides(capability("plugin/deps", "service", "b"))
}

#[tokio::test]
async fn dependency_declarations_are_sent_on_v2_within_the_manifest_ceiling_only() {
    // Spec delta §2.2, §2.2.1 check 8, §1.4 P5.
    let requires = json!([{"namespace": "reasonix", "kind": "browser", "id": "companion",
                           "versionRange": ">=1.0.0", "optional": true}]);
    // A manifest that declares `provides`: only what it declares is claimed.
    let mut sidecar = Sidecar::start(declaring());
    let mut params = v2_init_params(&[], &[]);
    params["manifest"]["provides"] =
        json!([{"namespace": "plugin/deps", "kind": "service", "id": "a"}]);
    let answer = sidecar.host.call(1, "extension/initialize", params).await;
    assert_eq!(answer["result"]["requires"], requires, "{answer}");
    assert_eq!(
        answer["result"]["provides"],
        json!([{"namespace": "plugin/deps", "kind": "service", "id": "a", "version": "1.0.0"}]),
        "{answer}"
    );
    sidecar.finish().await;
    // No `provides` in the manifest: the host checks none, so all are sent.
    let mut sidecar = Sidecar::start(declaring());
    let answer = (sidecar.host)
        .call(1, "extension/initialize", v2_init_params(&[], &[]))
        .await;
    assert_eq!(
        answer["result"]["provides"].as_array().map(Vec::len),
        Some(2)
    );
    sidecar.finish().await;
    // A v1 host: v1 has no such members, so nothing is sent (and the SDK says so on stderr).
    let mut sidecar = Sidecar::start(declaring());
    let answer = (sidecar.host)
        .call(1, "extension/initialize", init_params(&[], &[]))
        .await;
    assert_eq!(answer["result"]["protocolVersion"], "1", "{answer}");
    let result = answer["result"].as_object().unwrap();
    assert!(
        !result.contains_key("requires") && !result.contains_key("provides"),
        "{answer}"
    );
    sidecar.finish().await;
}
