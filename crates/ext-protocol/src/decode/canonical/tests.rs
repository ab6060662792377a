//! The canonical-text reader against the reference decoder: every text it accepts, the
//! reference accepts to the same value; the host's own text of an input intercept is always
//! accepted, whatever its text holds; and any change to that text is either still canonical
//! and read alike, or left to the other readers.

use proptest::prelude::*;

use super::intercept_params;
use crate::hooks::{HookPayload, HookPoint, PayloadKind};
use crate::intercept::InterceptParams;
use crate::payloads::InputPayload;

/// `intercept_params(text)` holds to its contract (see the module docs), and the whole
/// decoder agrees with the reference; whether the canonical reader took the text.
fn canonical_and_sound(text: &str) -> bool {
    let taken = intercept_params(text);
    if let Some(params) = &taken {
        let reference =
            crate::decode::decode_reference::<InterceptParams>(text, crate::error::Target::Params);
        assert_eq!(reference.as_ref(), Ok(params), "{text}");
    }
    let _ = crate::fuzz::one_pass_sound::<InterceptParams>(text);
    taken.is_some()
}

/// The text a host writes for an input intercept.
fn written(event: HookPoint, seq: u64, text: &str, timeout_millis: u64) -> String {
    serde_json::to_string(&InterceptParams {
        event,
        seq,
        payload: Some(HookPayload::Input(InputPayload {
            text: text.to_owned(),
        })),
        timeout_millis,
        externalized: Vec::new(),
    })
    .unwrap()
}

fn input_points() -> Vec<HookPoint> {
    HookPoint::ALL
        .iter()
        .copied()
        .filter(|point| point.payload_kind() == PayloadKind::Input)
        .collect()
}

#[test]
fn the_hosts_text_is_read_whatever_it_holds() {
    assert!(!input_points().is_empty());
    for event in input_points() {
        for text in [
            "",
            "fix teh tests",
            "a \"quoted\"\nline\tand \\ back",
            "\u{1}\u{1f}\u{7f}",
            "é ✓ 🦀 \u{2028}",
            "</script>",
        ] {
            for (seq, timeout) in [(1, 1), (9_007_199_254_740_991, 9_007_199_254_740_991)] {
                let line = written(event, seq, text, timeout);
                assert!(canonical_and_sound(&line), "{line}");
            }
        }
    }
}

#[test]
fn anything_else_is_left_to_the_other_readers() {
    for text in [
        // Numbers out of range, or not plain integers.
        r#"{"event":"input.receive","seq":0,"payload":{"text":"a"},"timeoutMillis":5}"#,
        r#"{"event":"input.receive","seq":01,"payload":{"text":"a"},"timeoutMillis":5}"#,
        r#"{"event":"input.receive","seq":9007199254740992,"payload":{"text":"a"},"timeoutMillis":5}"#,
        r#"{"event":"input.receive","seq":12345678901234567890,"payload":{"text":"a"},"timeoutMillis":5}"#,
        r#"{"event":"input.receive","seq":1.0,"payload":{"text":"a"},"timeoutMillis":5}"#,
        r#"{"event":"input.receive","seq":1e2,"payload":{"text":"a"},"timeoutMillis":5}"#,
        r#"{"event":"input.receive","seq":-1,"payload":{"text":"a"},"timeoutMillis":5}"#,
        r#"{"event":"input.receive","seq":1,"payload":{"text":"a"},"timeoutMillis":0}"#,
        // Strings JSON does not allow, or escapes serde refuses.
        "{\"event\":\"input.receive\",\"seq\":1,\"payload\":{\"text\":\"a\nb\"},\"timeoutMillis\":5}",
        "{\"event\":\"input.receive\",\"seq\":1,\"payload\":{\"text\":\"\u{0}\"},\"timeoutMillis\":5}",
        "{\"event\":\"input.receive\",\"seq\":1,\"payload\":{\"text\":\"a\u{1f}\"},\"timeoutMillis\":5}",
        r#"{"event":"input.receive","seq":1,"payload":{"text":"a\qb"},"timeoutMillis":5}"#,
        r#"{"event":"input.receive","seq":1,"payload":{"text":"\ud800"},"timeoutMillis":5}"#,
        r#"{"event":"input.receive","seq":1,"payload":{"text":"a\"},"timeoutMillis":5}"#,
        // Other points, other shapes.
        r#"{"event":"tool.before","seq":1,"payload":{"text":"a"},"timeoutMillis":5}"#,
        r#"{"event":"input.receiv\u0065","seq":1,"payload":{"text":"a"},"timeoutMillis":5}"#,
        r#"{"event":"input.receive","seq":1,"payload":{"text":"a","text":"b"},"timeoutMillis":5}"#,
        r#"{"event":"input.receive","seq":1,"payload":null,"timeoutMillis":5}"#,
        r#"{"seq":1,"event":"input.receive","payload":{"text":"a"},"timeoutMillis":5}"#,
        r#"{"event":"input.receive","seq":1,"payload":{"text":"a"},"timeoutMillis":5,"seq":2}"#,
        r#"{"event":"input.receive","seq":1,"payload":{"text":"a"},"timeoutMillis":5} "#,
        r#"{"event":"input.receive","seq":1,"payload":{"text":"a"},"timeoutMillis":5}}"#,
        r#"{"event":"input.receive", "seq":1,"payload":{"text":"a"},"timeoutMillis":5}"#,
        r#"{"event":"input.receive","seq":1,"payload":{"text":"a"},"timeoutMillis":5"#,
    ] {
        assert!(!canonical_and_sound(text), "{text}");
    }
    // Escapes, read through serde's string reader, and an empty text, left out or not.
    for text in [
        r#"{"event":"input.receive","seq":1,"payload":{"text":"a\\b\u00e9\""},"timeoutMillis":5}"#,
        r#"{"event":"input.receive","seq":1,"payload":{"text":"a\\"},"timeoutMillis":5}"#,
        r#"{"event":"input.receive","seq":1,"payload":{},"timeoutMillis":5}"#,
        r#"{"event":"input.receive","seq":1,"payload":{"text":""},"timeoutMillis":5}"#,
    ] {
        assert!(canonical_and_sound(text), "{text}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Any text in a host's line is read as the host wrote it.
    #[test]
    fn any_text_is_read_as_written(
        point in 0usize..64,
        seq in 1u64..=9_007_199_254_740_991,
        text in any::<String>(),
        timeout in 1u64..=9_007_199_254_740_991,
    ) {
        let points = input_points();
        let event = points[point % points.len()];
        let line = written(event, seq, &text, timeout);
        let params = intercept_params(&line);
        prop_assert!(params.is_some(), "{line}");
        prop_assert!(canonical_and_sound(&line));
    }

    /// A host's line with one byte changed, cut or inserted: the canonical reader accepts
    /// nothing the reference does not, to the reference's value.
    #[test]
    fn a_changed_line_is_read_alike_or_left(
        text in "[a-z\"\\\\\u{0}-\u{20}é🦀]{0,12}",
        at in any::<prop::sample::Index>(),
        byte in prop::sample::select(b"\"\\{},:0123456789.-eEu \n\t\x00\x1fx".to_vec()),
        change in 0u8..3,
    ) {
        let line = written(HookPoint::InputReceive, 7, &text, 30_000);
        let mut bytes = line.into_bytes();
        let at = at.index(bytes.len() + 1);
        match change {
            0 if at < bytes.len() => bytes[at] = byte,
            1 if at < bytes.len() => { bytes.remove(at); }
            _ => bytes.insert(at, byte),
        }
        if let Ok(changed) = String::from_utf8(bytes) {
            let _ = canonical_and_sound(&changed);
        }
    }
}
