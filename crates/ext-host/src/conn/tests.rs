//! A payload's text as written from its parts, against serde's text of it.

use proptest::prelude::*;
use sidewire_ext_protocol::{AgentStartPayload, HookPayload, InputPayload};

use super::PayloadText;

fn input(text: &str) -> HookPayload {
    HookPayload::Input(InputPayload {
        text: text.to_owned(),
    })
}

/// A payload's text is serde_json's, whether written from its parts (an input text that
/// needs no escape, or none) or by serde (anything else).
#[test]
fn payload_text_is_serdes() {
    let mut payloads: Vec<HookPayload> = [
        "",
        "hello",
        "a \"quoted\" line\n",
        "back\\slash",
        "\u{1}\u{1f}",
        "é🦀 \u{7f}",
    ]
    .map(input)
    .into();
    payloads.push(input(&"x".repeat(100_000)));
    payloads.push(HookPayload::AgentStart(AgentStartPayload {
        model: "m\"1".into(),
        ..AgentStartPayload::default()
    }));
    for payload in payloads {
        let expected = serde_json::to_string(&payload).unwrap();
        assert_eq!(PayloadText::of(&payload).get(), expected);
    }
}

proptest! {
    #[test]
    fn any_input_payload_text_is_serdes(text in any::<String>()) {
        let payload = input(&text);
        let text = PayloadText::of(&payload);
        prop_assert_eq!(text.get(), serde_json::to_string(&payload).unwrap());
    }
}
