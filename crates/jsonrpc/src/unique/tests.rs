//! The unique-names reader against serde_json's `Value`, and the paths it gives.

use serde_json::{Value, json};

use super::*;

fn read(text: &str) -> Result<Value, serde_json::Error> {
    unique_value(&mut serde_json::Deserializer::from_str(text))
}

fn repeated(text: &str) -> Vec<PathStep> {
    match parse_unique(text) {
        Err(NotUnique::Repeated(path)) => path,
        other => panic!("{text}: {other:?}"),
    }
}

#[test]
fn reads_what_serde_json_reads_when_names_are_unique() {
    let text = r#"{"a":[1,-2,3.5,"s",null,true,{"b":{}}],"c":"\u00e9"}"#;
    let serde = serde_json::from_str::<Value>(text).unwrap();
    assert_eq!(read(text).unwrap(), serde);
    assert_eq!(parse_unique(text).unwrap(), serde);
    assert_eq!(read("7").unwrap(), json!(7));
}

#[test]
fn a_repeated_name_at_any_depth_fails() {
    assert!(read(r#"{"type":"audio","type":"text"}"#).is_err());
    assert!(read(r#"{"a":[{"x":1,"y":2,"x":3}]}"#).is_err());
    assert!(read(r#"{"a":{"b":1},"c":{"b":2}}"#).is_ok());
}

#[test]
fn the_path_leads_to_the_repeated_name() {
    use PathStep::{Index, Key};
    assert_eq!(
        repeated(r#"{"type":"audio","type":"text"}"#),
        [Key("type".into())]
    );
    assert_eq!(
        repeated(r#"{"a":[0,{"x":1,"y":2,"x":3}]}"#),
        [Key("a".into()), Index(1), Key("x".into())]
    );
    assert_eq!(
        repeated(r#"[[{"k":1,"k":2}]]"#),
        [Index(0), Index(0), Key("k".into())]
    );
}

#[test]
fn anything_else_is_serde_jsons_error() {
    for text in ["{", r#"{"a":1} x"#, r#"{"a":1,"a""#, ""] {
        match parse_unique(text) {
            // A name seen twice before the text broke off is still the repeated name.
            Err(NotUnique::Repeated(path)) => assert_eq!(text, r#"{"a":1,"a""#, "{path:?}"),
            Err(NotUnique::Syntax(_)) => {}
            Ok(value) => panic!("{text}: {value}"),
        }
    }
}
