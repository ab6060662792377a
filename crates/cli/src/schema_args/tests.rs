//! The conversions, table-driven, and each error with the argument it names.

use serde_json::json;

use super::*;

fn pairs(words: &[&str]) -> Vec<(String, String)> {
    let words: Vec<String> = words.iter().map(|w| (*w).to_owned()).collect();
    split_pairs(&words).expect("key=value words")
}

fn args(schema: &Value, words: &[&str]) -> Result<Value, ArgError> {
    arguments(schema, &pairs(words)).map(Value::Object)
}

/// A tool's schema with one property `x` of schema `property`.
fn one(property: Value) -> Value {
    json!({ "type": "object", "properties": { "x": property } })
}

#[test]
fn values_become_the_type_the_property_says() {
    let defs = json!({
        "type": "object",
        "$defs": { "Unit": { "type": "string", "enum": ["celsius", "fahrenheit"] } },
        "properties": { "x": { "$ref": "#/$defs/Unit" } }
    });
    let cases: Vec<(Value, &str, Value)> = vec![
        // The issue's case: server-everything's echo takes a string.
        (json!({"type": "string"}), "123", json!("123")),
        (json!({"type": "string"}), "true", json!("true")),
        (json!({"type": "string"}), "", json!("")),
        (json!({"type": "string"}), "a=b", json!("a=b")),
        (json!({"type": "string"}), "{\"a\":1}", json!("{\"a\":1}")),
        (json!({"type": "integer"}), "42", json!(42)),
        (json!({"type": "integer"}), "-7", json!(-7)),
        (json!({"type": "integer"}), "3.0", json!(3)),
        (
            json!({"type": "integer"}),
            "18446744073709551615",
            json!(18_446_744_073_709_551_615_u64),
        ),
        (json!({"type": "number"}), "2.5", json!(2.5)),
        (json!({"type": "number"}), "40", json!(40)),
        (json!({"type": "number"}), "1e3", json!(1000.0)),
        (json!({"type": "boolean"}), "true", json!(true)),
        (json!({"type": "boolean"}), "False", json!(false)),
        (json!({"type": "null"}), "null", json!(null)),
        (json!({"enum": ["a", "b"]}), "b", json!("b")),
        (json!({"enum": [1, 2, 3]}), "2", json!(2)),
        (json!({"type": "integer", "enum": [1, 2]}), "1", json!(1)),
        (json!({"const": "only"}), "only", json!("only")),
        (
            json!({"type": "array", "items": {"type": "string"}}),
            "a",
            json!(["a"]),
        ),
        (
            json!({"type": "array", "items": {"type": "integer"}}),
            "[1,2]",
            json!([1, 2]),
        ),
        (
            json!({"type": "array", "items": {"type": "integer"}}),
            "5",
            json!([5]),
        ),
        (json!({"type": "array"}), "[1,\"a\"]", json!([1, "a"])),
        (json!({"type": "object"}), "{\"a\":[1]}", json!({"a": [1]})),
        (
            json!({"type": "object", "properties": {"n": {"type": "integer"}}}),
            "{\"n\":1,\"other\":\"x\"}",
            json!({"n": 1, "other": "x"}),
        ),
        // Several alternatives: typed readings before text.
        (
            json!({"anyOf": [{"type": "string"}, {"type": "integer"}]}),
            "7",
            json!(7),
        ),
        (
            json!({"anyOf": [{"type": "string"}, {"type": "integer"}]}),
            "7a",
            json!("7a"),
        ),
        (
            json!({"anyOf": [{"type": "string"}, {"type": "integer"}]}),
            "007",
            json!("007"),
        ),
        (json!({"type": ["string", "null"]}), "null", json!(null)),
        (json!({"type": ["string", "null"]}), "x", json!("x")),
        (
            json!({"oneOf": [{"type": "boolean"}, {"type": "number"}]}),
            "1.5",
            json!(1.5),
        ),
        (
            json!({"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}),
            "x",
            json!("x"),
        ),
        (
            json!({"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}),
            "[\"x\"]",
            json!(["x"]),
        ),
        (
            json!({"allOf": [{"description": "d"}, {"type": "integer"}]}),
            "4",
            json!(4),
        ),
        // Untyped: JSON when it parses, else the text.
        (json!({}), "12", json!(12)),
        (json!({}), "hi", json!("hi")),
        (json!(true), "[1]", json!([1])),
        (json!({"$ref": "#/nowhere"}), "x", json!("x")),
    ];
    for (property, text, want) in cases {
        let word = format!("x={text}");
        let got = args(&one(property.clone()), &[&word]);
        assert_eq!(got, Ok(json!({ "x": want })), "{property} with {text:?}");
    }
    assert_eq!(args(&defs, &["x=celsius"]), Ok(json!({"x": "celsius"})));
}

#[test]
fn the_issues_echo_call_sends_a_string() {
    // server-everything's echo tool, as it lists it.
    let echo = json!({
        "type": "object",
        "properties": { "message": { "type": "string", "description": "Message to echo" } },
        "required": ["message"],
        "additionalProperties": false,
        "$schema": "http://json-schema.org/draft-07/schema#"
    });
    assert_eq!(args(&echo, &["message=123"]), Ok(json!({"message": "123"})));
}

#[test]
fn values_that_cannot_be_read_name_the_argument_and_the_type() {
    let cases: Vec<(Value, &str, &str)> = vec![
        (json!({"type": "integer"}), "abc", "integer"),
        (json!({"type": "integer"}), "2.5", "integer"),
        (json!({"type": "integer"}), " 2", "integer"),
        (json!({"type": "integer"}), "", "integer"),
        (json!({"type": "number"}), "NaN", "number"),
        (json!({"type": "number"}), "0x10", "number"),
        (json!({"type": "boolean"}), "yes", "boolean (true or false)"),
        (json!({"type": "null"}), "nil", "null"),
        (json!({"enum": ["a", "b"]}), "c", "one of a, b"),
        (json!({"type": "object"}), "[1]", "object (as JSON)"),
        (json!({"type": "object"}), "a", "object (as JSON)"),
        (
            json!({"type": "array", "items": {"type": "integer"}}),
            "[\"a\"]",
            "array of integer (repeat the key, or a JSON array)",
        ),
        (
            json!({"type": "array", "items": {"type": "integer"}}),
            "[1,",
            "array of integer (repeat the key, or a JSON array)",
        ),
        (json!({"type": ["integer", "null"]}), "x", "integer or null"),
        (
            json!({"anyOf": [{"type": "integer"}, {"type": "boolean"}]}),
            "x",
            "integer or boolean (true or false)",
        ),
        (false_schema(), "x", "nothing (the schema allows no value)"),
    ];
    for (property, text, expected) in cases {
        let word = format!("x={text}");
        let err = args(&one(property.clone()), &[&word]).expect_err(&word);
        assert!(err.is_invalid(), "{err:?}");
        assert_eq!(
            err,
            ArgError::Invalid {
                name: "x".into(),
                expected: expected.into(),
                value: text.into(),
            },
            "{property} with {text:?}"
        );
    }
}

fn false_schema() -> Value {
    json!(false)
}

#[test]
fn repeated_keys_are_the_items_of_an_array() {
    let schema = json!({
        "type": "object",
        "properties": {
            "tags": { "type": "array", "items": { "type": "string" } },
            "ns": { "type": "array", "items": { "type": "integer" } },
            "one": { "type": "string" }
        }
    });
    assert_eq!(
        args(&schema, &["tags=a", "one=x", "tags=1", "ns=1", "ns=2"]),
        Ok(json!({"tags": ["a", "1"], "one": "x", "ns": [1, 2]}))
    );
    let err = args(&schema, &["ns=1", "ns=b"]).expect_err("b is no integer");
    assert_eq!(
        err,
        ArgError::Invalid {
            name: "ns[1]".into(),
            expected: "integer".into(),
            value: "b".into()
        }
    );
    let err = args(&schema, &["one=a", "one=b"]).expect_err("not an array");
    assert!(err.is_repeated(), "{err:?}");
    assert_eq!(err.name(), Some("one"));
    // An untyped key given twice is an array of what each reads as.
    assert_eq!(
        args(&json!({}), &["k=1", "k=x"]),
        Ok(json!({"k": [1, "x"]}))
    );
}

#[test]
fn a_missing_required_argument_is_named_with_its_type() {
    let schema = json!({
        "type": "object",
        "properties": { "a": { "type": "number" }, "b": { "type": "number" } },
        "required": ["a", "b"]
    });
    assert_eq!(
        args(&schema, &["a=2", "b=40"]),
        Ok(json!({"a": 2, "b": 40}))
    );
    let err = args(&schema, &["a=2"]).expect_err("b is required");
    assert!(err.is_missing());
    assert_eq!(
        err,
        ArgError::Missing {
            name: "b".into(),
            expected: "number".into()
        }
    );
}

#[test]
fn unknown_keys_fail_only_when_the_schema_forbids_extra_properties() {
    let closed = json!({
        "type": "object",
        "properties": { "message": { "type": "string" } },
        "additionalProperties": false
    });
    let err = args(&closed, &["message=hi", "mesage=x"]).expect_err("typo");
    assert!(err.is_unknown());
    assert_eq!(
        err,
        ArgError::Unknown {
            name: "mesage".into(),
            known: "message".into()
        }
    );
    // Open schemas keep extra keys, typed by additionalProperties when it is a schema.
    let open = json!({"type": "object", "properties": {}});
    assert_eq!(args(&open, &["n=1"]), Ok(json!({"n": 1})));
    let typed = json!({"type": "object", "additionalProperties": {"type": "string"}});
    assert_eq!(args(&typed, &["n=1"]), Ok(json!({"n": "1"})));
    // Pattern properties are not matched, so they never make a key unknown.
    let patterned = json!({
        "type": "object",
        "patternProperties": { "^x_": { "type": "string" } },
        "additionalProperties": false
    });
    assert_eq!(args(&patterned, &["x_a=1"]), Ok(json!({"x_a": 1})));
    // No arguments to an empty closed schema: the list says so.
    let none = json!({"type": "object", "additionalProperties": false});
    let err = args(&none, &["a=1"]).expect_err("takes nothing");
    assert_eq!(
        err,
        ArgError::Unknown {
            name: "a".into(),
            known: "(no arguments)".into()
        }
    );
}

#[test]
fn words_without_an_equals_sign_or_a_key_are_not_pairs() {
    for word in ["message", "=value"] {
        let err = split_pairs(&[word.to_owned()]).expect_err(word);
        assert!(err.is_not_a_pair());
        assert_eq!(err.name(), None);
    }
    assert_eq!(pairs(&["a=b=c"]), vec![("a".to_owned(), "b=c".to_owned())]);
}

#[test]
fn a_cyclic_ref_is_followed_only_to_the_depth_bound() {
    let cyclic = json!({
        "type": "object",
        "$defs": { "A": { "$ref": "#/$defs/B" }, "B": { "$ref": "#/$defs/A" } },
        "properties": { "x": { "$ref": "#/$defs/A" } }
    });
    assert_eq!(args(&cyclic, &["x=1"]), Ok(json!({"x": 1})));
    // Nested anyOfs deeper than the bound count as untyped.
    let mut deep = json!({"type": "integer"});
    for _ in 0..MAX_DEPTH + 4 {
        deep = json!({ "anyOf": [deep] });
    }
    assert_eq!(
        args(&one(deep.clone()), &["x=abc"]),
        Ok(json!({"x": "abc"}))
    );
    // Within the bound, the type holds.
    let mut shallow = json!({"type": "integer"});
    for _ in 0..MAX_DEPTH - 2 {
        shallow = json!({ "anyOf": [shallow] });
    }
    assert!(args(&one(shallow), &["x=abc"]).is_err());
}

#[test]
fn alternatives_and_listed_names_are_bounded() {
    // More alternatives than the bound: the ones past it are not tried.
    let mut branches: Vec<Value> = (0..MAX_ALTERNATIVES)
        .map(|_| json!({"type": "null"}))
        .collect();
    branches.push(json!({"type": "string"}));
    let err = args(&one(json!({ "anyOf": branches })), &["x=a"]).expect_err("past the bound");
    assert!(err.is_invalid());
    // Errors list at most MAX_LISTED members or names, and say how many more.
    let members: Vec<Value> = (0..MAX_LISTED + 3)
        .map(|i| json!(format!("m{i}")))
        .collect();
    let ArgError::Invalid { expected, .. } =
        args(&one(json!({ "enum": members })), &["x=z"]).expect_err("no member")
    else {
        panic!("not invalid");
    };
    assert!(expected.ends_with(" and 3 more"), "{expected}");
    assert_eq!(expected.matches(", ").count(), MAX_LISTED - 1, "{expected}");
    let properties: Map<String, Value> = (0..MAX_LISTED + 1)
        .map(|i| (format!("p{i:02}"), json!({})))
        .collect();
    let closed = json!({"type": "object", "properties": properties, "additionalProperties": false});
    let ArgError::Unknown { known, .. } = args(&closed, &["q=1"]).expect_err("unknown") else {
        panic!("not unknown");
    };
    assert!(known.ends_with(" and 1 more"), "{known}");
}
