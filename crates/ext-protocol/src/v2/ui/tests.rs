//! The v2 UI kinds (spec delta §2.7), beside v1's decoding of the same publish.

use serde_json::{Value, json};

use crate::v2::ui::{self, NodeKind, SurfaceKind, SurfacePayload, UiPublishParams};
use crate::{Reason, UiActionDecl, decode_params};

fn publish(kind: &str, payload: Value) -> String {
    json!({"surfaceId":"s","sessionId":"s-1","generation":1,"kind":kind,"payload":payload})
        .to_string()
}

fn v2(kind: &str, payload: Value) -> Result<UiPublishParams, crate::Error> {
    decode_params::<UiPublishParams>(Some(&publish(kind, payload)))
}

fn node(kind: &str) -> Value {
    json!({"kind": kind, "value": "v"})
}

#[test]
fn panels_are_v2_only_and_have_no_markdown() {
    // Checklist item 19 (the decoder's half).
    let panel = json!({"title":"Build","text":"running","fields":[{"key":"k","value":"v"}],
        "progress":0.5,"actions":[{"actionId":"stop","label":"Stop"}]});
    let params = v2("panel", panel.clone()).unwrap();
    assert_eq!(params.kind, SurfaceKind::Panel);
    let SurfacePayload::Panel(decoded) = &params.payload else {
        panic!("a panel")
    };
    assert_eq!(decoded.fields[0].key, "k");
    assert_eq!(params.action_ids(), ["stop"]);
    let mut markdown = panel.clone();
    markdown["markdown"] = json!("**x**");
    let err = v2("panel", markdown).unwrap_err();
    assert!(err.is_unknown(), "{err}");
    assert_eq!(err.reason(), Reason::InvalidParams);
    // V1 refuses both kinds as invalid enum values.
    for kind in ["panel", "view"] {
        let err =
            decode_params::<crate::UiPublishParams>(Some(&publish(kind, json!({})))).unwrap_err();
        assert!(err.is_enum(), "{kind}: {err}");
        assert_eq!(err.reason(), Reason::InvalidParams);
    }
    // v1's kinds still decode, as v1's.
    let card = v2("card", json!({"markdown":"x"})).unwrap();
    assert!(card.common().is_some());
}

#[test]
fn an_accepted_view_keeps_its_nested_tree() {
    let view = json!({"slot":"composer-trailing","body":[
        {"kind":"stack","children":[
            {"kind":"row","children":[{"kind":"pip","tone":"ok"},{"kind":"text","value":"green"}]},
            {"kind":"kv","key":"branch","value":"main"},
            {"kind":"meter","progress":1,"label":"done"},
            {"kind":"button","actionId":"refresh","label":"Refresh"},
            {"kind":"divider"},
            {"kind":"markdown","value":"*x*","tone":"dim"}
        ]}
    ]});
    let params = v2("view", view).unwrap();
    let SurfacePayload::View(view) = &params.payload else {
        panic!("a view")
    };
    assert_eq!(view.nodes().len(), 9);
    assert_eq!(view.nodes()[2].kind, NodeKind::Pip);
    assert_eq!(params.action_ids(), ["refresh"]);
    let declared = |id: &str| UiActionDecl {
        action_id: id.to_owned(),
        label: String::new(),
    };
    params.check_actions(&[declared("refresh")]).unwrap();
    let err = params.check_actions(&[declared("other")]).unwrap_err();
    assert_eq!(err.reason(), Reason::InvalidParams);
    // Anchored to a tool call.
    v2(
        "view",
        json!({"anchor":"tool:call_1","body":[node("text")]}),
    )
    .unwrap();
}

/// A chain of `depth` nested stacks ending in a text node.
fn nested(depth: usize) -> Value {
    let mut tree = node("text");
    for _ in 1..depth {
        tree = json!({"kind":"stack","children":[tree]});
    }
    tree
}

#[test]
fn view_rules_and_limits_are_invalid_params() {
    // Checklist item 20 (the decoder's half), each at its limit and one past it.
    let texts = |n: usize| Value::Array((0..n).map(|_| node("text")).collect());
    assert!(v2("view", json!({"body": texts(ui::VIEW_MAX_NODES)})).is_ok());
    assert!(v2("view", json!({"body": [nested(ui::VIEW_MAX_DEPTH)]})).is_ok());
    let at = |n: usize| "x".repeat(n);
    let value_node = |n| json!({"kind":"text","value":at(n)});
    assert!(v2("view", json!({"body":[value_node(ui::VIEW_VALUE_BYTES)]})).is_ok());
    let kv = |n| json!({"kind":"kv","key":at(n)});
    assert!(v2("view", json!({"body":[kv(ui::VIEW_LABEL_BYTES)]})).is_ok());
    assert!(
        v2(
            "view",
            json!({"slot":at(ui::VIEW_SLOT_BYTES),"body":[node("text")]})
        )
        .is_ok()
    );
    let anchor = |n: usize| format!("tool:{}", at(n - 5));
    assert!(
        v2(
            "view",
            json!({"anchor":anchor(ui::VIEW_ANCHOR_BYTES),"body":[node("text")]})
        )
        .is_ok()
    );
    let refused = [
        json!({"body": texts(ui::VIEW_MAX_NODES + 1)}),
        json!({"body": [nested(ui::VIEW_MAX_DEPTH + 1)]}),
        json!({"body": []}),
        json!({}),
        json!({"anchor":"tool:","body":[node("text")]}),
        json!({"anchor":"file:x","body":[node("text")]}),
        json!({"anchor":"tool:c","slot":"composer-trailing","body":[node("text")]}),
        json!({"anchor":anchor(ui::VIEW_ANCHOR_BYTES + 1),"body":[node("text")]}),
        json!({"slot":at(ui::VIEW_SLOT_BYTES + 1),"body":[node("text")]}),
        json!({"body":[{"kind":"text","value":"v","children":[node("text")]}]}),
        json!({"body":[{"kind":"meter","progress":1.5}]}),
        json!({"body":[{"kind":"meter"}]}),
        json!({"body":[{"kind":"pip"}]}),
        json!({"body":[{"kind":"pip","tone":"red"}]}),
        json!({"body":[value_node(ui::VIEW_VALUE_BYTES + 1)]}),
        json!({"body":[kv(ui::VIEW_LABEL_BYTES + 1)]}),
        json!({"body":[{"kind":"video"}]}),
        json!({"body":[{"kind":"text"}]}),
        json!({"body":[{"kind":"kv","value":"v"}]}),
        json!({"body":[{"kind":"button","label":"Go"}]}),
        json!({"body":[{"kind":"button","actionId":"go"}]}),
        json!({"body":[{"kind":"row"}]}),
        json!({"body":[{"kind":"stack","children":[]}]}),
        json!({"body":[{"kind":"text","value":"v","onClick":"x"}]}),
    ];
    for view in refused {
        let err = v2("view", view.clone()).unwrap_err();
        assert_eq!(err.reason(), Reason::InvalidParams, "{view}: {err}");
    }
}
