//! Table-driven test helpers shared by the module tests: decode/reject checks with exact error
//! paths, round trips, and a schema-guided mutation run that derives rejection cases for every
//! member of a DTO fixture from the generated schema.
//!
//! The mutation run is what keeps the decoder and the schema honest with each other: for each
//! member the schema calls required, non-nullable, an integer in a range, an enum, non-empty or a
//! sha256, it builds the violating document and checks that decoding fails with the right error
//! at the right path. It is test-only code and not part of the crate's API.

use serde_json::{Map, Value, json};
use std::fmt::Debug;
use std::sync::OnceLock;

use crate::decode::Dto;
use crate::error::{Error, Target};

/// An error-kind predicate such as [`Error::is_missing`].
pub(crate) type Predicate = fn(&Error) -> bool;

/// Decodes `json` as params of type `T`.
pub(crate) fn decode_params<T: Dto>(json: &str) -> Result<T, Error> {
    crate::decode::decode(json, Target::Params)
}

/// Asserts that `json` decodes as `T` and returns the value.
#[track_caller]
pub(crate) fn accepts<T: Dto + Debug>(json: &str) -> T {
    match decode_params::<T>(json) {
        Ok(value) => value,
        Err(err) => panic!("{} rejected {json}: {err}", T::NAME),
    }
}

/// Asserts that `json` fails to decode as `T` with an error at exactly `path`; returns it.
#[track_caller]
pub(crate) fn rejects<T: Dto + Debug>(json: &str, path: &str) -> Error {
    match decode_params::<T>(json) {
        Ok(value) => panic!("{} accepted {json} as {value:?}", T::NAME),
        Err(err) => {
            assert_eq!(err.path(), path, "{} on {json}: {err}", T::NAME);
            err
        }
    }
}

/// Table form of [`rejects`]: each case is `(json, path, predicate)`.
#[track_caller]
pub(crate) fn check_rejects<T: Dto + Debug>(cases: &[(&str, &str, Predicate)]) {
    for (json, path, predicate) in cases {
        let err = rejects::<T>(json, path);
        assert!(
            predicate(&err),
            "{} on {json}: wrong kind of error: {err:?}",
            T::NAME
        );
    }
}

/// Asserts decode → encode gives back the same JSON value and decode again the same DTO.
#[track_caller]
pub(crate) fn round_trip<T: Dto + Debug + PartialEq>(json: &str) -> T {
    let value = accepts::<T>(json);
    let encoded = serde_json::to_value(&value).expect("DTOs serialize");
    let expected: Value = serde_json::from_str(json).expect("fixtures are JSON");
    assert!(
        same_json(&encoded, &expected),
        "{}: encoding differs from the fixture\n  encoded: {encoded}\n  fixture: {expected}",
        T::NAME
    );
    let again = accepts::<T>(&encoded.to_string());
    assert_eq!(again, value, "{}: decode(encode(x)) != x", T::NAME);
    value
}

/// JSON equality where numbers compare by value, since `f64` members encode `1` as `1.0`.
fn same_json(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_json(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_json(v, w)))
        }
        _ => a == b,
    }
}

/// The generated schema, built once per test binary.
pub(crate) fn schema() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(crate::schema::protocol_schema)
}

/// Round-trips the `full` and `minimal` fixtures of `T`, checks `T` is in the schema, and runs
/// every schema-derived mutation of `full`. Returns the number of mutations checked.
#[track_caller]
pub(crate) fn check_dto<T: Dto + Debug + PartialEq>(full: &str, minimal: &str) -> usize {
    assert!(
        schema()["$defs"].get(T::NAME).is_some(),
        "{} is missing from the schema",
        T::NAME
    );
    round_trip::<T>(full);
    round_trip::<T>(minimal);
    let value: Value = serde_json::from_str(full).expect("fixtures are JSON");
    let mut cases = Vec::new();
    let root = json!({"$ref": format!("#/$defs/{}", T::NAME)});
    walk(&root, &value, &[], &mut cases);
    for case in &cases {
        run::<T>(&value, case);
    }
    cases.len()
}

/// One step of a JSON path.
#[derive(Debug, Clone)]
enum Step {
    Key(String),
    Index(usize),
}

/// Renders a path the way `decode::Seg::render` does, rooted at `params`.
fn render(steps: &[Step]) -> String {
    let mut out = String::from("params");
    for step in steps {
        match step {
            Step::Key(key) => {
                if key
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '$'))
                    && !key.is_empty()
                {
                    out.push('.');
                    out.push_str(key);
                } else {
                    out.push_str(&format!("[{}]", Value::from(key.as_str())));
                }
            }
            Step::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

/// What a mutation does to the fixture.
#[derive(Debug, Clone)]
enum Edit {
    /// Replace the value at the path.
    Set(Value),
    /// Remove the member at the path.
    Remove,
    /// Add a member to the object at the path.
    Add(String, Value),
    /// Repeat the object's first member (text level).
    Repeat,
}

/// What decoding the mutated document must do.
#[derive(Debug, Clone, Copy)]
enum Expect {
    Reject(Predicate, &'static str),
    /// Accept, and equal the fixture with the member removed.
    SameAsRemoved,
}

#[derive(Debug, Clone)]
struct Case {
    at: Vec<Step>,
    edit: Edit,
    expect: Expect,
    /// The path the error must name.
    error_at: Vec<Step>,
}

fn resolve(schema: &Value) -> &Value {
    match schema.get("$ref").and_then(Value::as_str) {
        Some(reference) => {
            let name = reference.trim_start_matches("#/$defs/");
            schema_def(name)
        }
        None => schema,
    }
}

fn schema_def(name: &str) -> &'static Value {
    &schema()["$defs"][name]
}

/// The non-null branches of an `anyOf`, and whether it admits `null` / `""`.
fn any_of(schema: &Value) -> Option<(Vec<&Value>, bool, bool)> {
    let branches = schema.get("anyOf")?.as_array()?;
    let null = branches.iter().any(|b| b["type"] == "null");
    let empty = branches.iter().any(|b| b["const"] == "");
    let rest = branches
        .iter()
        .filter(|b| b["type"] != "null" && b["const"] != "")
        .collect();
    Some((rest, null, empty))
}

fn with(steps: &[Step], step: Step) -> Vec<Step> {
    let mut out = steps.to_vec();
    out.push(step);
    out
}

/// Collects the mutations of `value`, which `schema` describes, at `at`.
fn walk(schema: &Value, value: &Value, at: &[Step], cases: &mut Vec<Case>) {
    let mut schema = resolve(schema);
    if let Some((branches, _, _)) = any_of(schema) {
        match (branches.as_slice(), value.is_null()) {
            ([only], false) => schema = resolve(only),
            // Several possible DTOs (payloads): their fixtures are checked on their own.
            _ => return,
        }
    }
    match value {
        Value::Object(members) if schema.get("properties").is_some() => {
            walk_dto(schema, members, at, cases)
        }
        Value::Object(members) if schema["additionalProperties"].is_object() => {
            if !members.is_empty() {
                repeat_first(members, at, cases);
            }
            for (key, item) in members {
                let here = with(at, Step::Key(key.clone()));
                member_cases(&schema["additionalProperties"], &here, false, cases);
                walk(&schema["additionalProperties"], item, &here, cases);
            }
        }
        // `any` or an opaque object: only the parser's duplicate rule applies.
        Value::Object(members) if !members.is_empty() => repeat_first(members, at, cases),
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for (i, item) in items.iter().enumerate() {
                    let here = with(at, Step::Index(i));
                    member_cases(item_schema, &here, false, cases);
                    walk(item_schema, item, &here, cases);
                }
            }
        }
        _ => {}
    }
}

fn repeat_first(members: &Map<String, Value>, at: &[Step], cases: &mut Vec<Case>) {
    let first = members.keys().next().expect("non-empty").clone();
    cases.push(Case {
        at: at.to_vec(),
        edit: Edit::Repeat,
        expect: Expect::Reject(Error::is_duplicate, "duplicate"),
        error_at: with(at, Step::Key(first)),
    });
}

fn walk_dto(schema: &Value, members: &Map<String, Value>, at: &[Step], cases: &mut Vec<Case>) {
    cases.push(Case {
        at: at.to_vec(),
        edit: Edit::Add("zzUnknown".into(), json!(1)),
        expect: Expect::Reject(Error::is_unknown, "unknown"),
        error_at: with(at, Step::Key("zzUnknown".into())),
    });
    if !members.is_empty() {
        repeat_first(members, at, cases);
    }
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    for (name, item) in members {
        let member_schema = &schema["properties"][name];
        assert!(
            !member_schema.is_null(),
            "fixture member {name} at {} is not in the schema",
            render(at)
        );
        let here = with(at, Step::Key(name.clone()));
        if required.contains(&name.as_str()) {
            cases.push(Case {
                at: here.clone(),
                edit: Edit::Remove,
                expect: Expect::Reject(Error::is_missing, "missing"),
                error_at: here.clone(),
            });
        }
        member_cases(member_schema, &here, true, cases);
        walk(member_schema, item, &here, cases);
    }
}

/// Mutations of one value (a DTO member, an array element or a map value) at `here`.
fn member_cases(schema: &Value, here: &[Step], is_member: bool, cases: &mut Vec<Case>) {
    let set = |value: Value, expect: Expect| Case {
        at: here.to_vec(),
        edit: Edit::Set(value),
        expect,
        error_at: here.to_vec(),
    };
    let reject = |value: Value, predicate: Predicate, what: &'static str| {
        set(value, Expect::Reject(predicate, what))
    };
    let mut schema = resolve(schema);
    let mut optional_enum = false;
    match any_of(schema) {
        Some((_, true, _)) => return, // Nullable: its rules are tested by hand.
        Some((branches, false, empty)) => {
            cases.push(reject(Value::Null, Error::is_null, "null"));
            match branches.as_slice() {
                [only] => {
                    schema = resolve(only);
                    optional_enum = empty;
                }
                _ => return,
            }
        }
        None => cases.push(reject(Value::Null, Error::is_null, "null")),
    }
    if optional_enum && is_member {
        cases.push(set(json!(""), Expect::SameAsRemoved));
    }
    if schema.get("enum").is_some() || schema.get("const").is_some() {
        cases.push(reject(json!("zz-not-a-value"), Error::is_enum, "enum"));
        cases.push(reject(json!(5), Error::is_type, "type"));
        return;
    }
    match schema["type"].as_str() {
        Some("integer") => {
            cases.push(reject(json!(1.0), Error::is_type, "1.0 for an integer"));
            cases.push(reject(json!(2.5), Error::is_type, "fraction"));
            cases.push(reject(json!("1"), Error::is_type, "string for an integer"));
            if let Some(min) = schema["minimum"].as_i64() {
                cases.push(reject(json!(min - 1), Error::is_range, "below minimum"));
            }
            if let Some(max) = schema["maximum"].as_i64() {
                cases.push(reject(json!(max + 1), Error::is_range, "above maximum"));
            }
        }
        Some("number") => {
            cases.push(reject(json!("1"), Error::is_type, "string for a number"));
            if let Some(min) = schema["minimum"].as_f64() {
                cases.push(reject(json!(min - 1.0), Error::is_range, "below minimum"));
            }
            if let Some(max) = schema["maximum"].as_f64() {
                cases.push(reject(json!(max + 1.0), Error::is_range, "above maximum"));
            }
        }
        Some("string") => {
            cases.push(reject(json!(5), Error::is_type, "number for a string"));
            match schema["pattern"].as_str() {
                Some(p) if p.starts_with("[^") => {
                    cases.push(reject(json!("\u{3000}"), Error::is_blank, "U+3000 only"));
                    cases.push(reject(json!(" \t\n"), Error::is_blank, "ASCII space only"));
                    cases.push(reject(json!(""), Error::is_blank, "empty"));
                }
                Some("^[0-9a-f]{64}$") => {
                    cases.push(reject(
                        json!("A".repeat(64)),
                        Error::is_pattern,
                        "uppercase",
                    ));
                    cases.push(reject(json!("a".repeat(63)), Error::is_pattern, "short"));
                }
                Some(_) => cases.push(reject(json!("Bad.Id"), Error::is_pattern, "pattern")),
                None => {}
            }
        }
        Some("boolean") => cases.push(reject(json!("true"), Error::is_type, "string for bool")),
        Some("array") => cases.push(reject(json!({}), Error::is_type, "object for an array")),
        Some("object") => cases.push(reject(json!([]), Error::is_type, "array for an object")),
        _ => {}
    }
}

/// Applies `edit` at `at` in a copy of `value`, returning the JSON text.
fn apply(value: &Value, at: &[Step], edit: &Edit) -> String {
    if let Edit::Repeat = edit {
        let mut out = String::new();
        write_repeating(value, at, &mut out);
        return out;
    }
    let mut copy = value.clone();
    let (parent_steps, last) = match edit {
        Edit::Add(..) => (at, None),
        _ => (&at[..at.len() - 1], at.last()),
    };
    let mut node = &mut copy;
    for step in parent_steps {
        node = match step {
            Step::Key(key) => &mut node[key.as_str()],
            Step::Index(i) => &mut node[*i],
        };
    }
    match (edit, last) {
        (Edit::Add(key, v), _) => {
            node.as_object_mut()
                .expect("an object")
                .insert(key.clone(), v.clone());
        }
        (Edit::Remove, Some(Step::Key(key))) => {
            node.as_object_mut().expect("an object").remove(key);
        }
        (Edit::Set(v), Some(Step::Key(key))) => node[key.as_str()] = v.clone(),
        (Edit::Set(v), Some(Step::Index(i))) => node[*i] = v.clone(),
        other => panic!("cannot apply {other:?}"),
    }
    copy.to_string()
}

/// Writes `value` as JSON, repeating the first member of the object at `at`.
fn write_repeating(value: &Value, at: &[Step], out: &mut String) {
    match value {
        Value::Object(members) => {
            out.push('{');
            let mut first = true;
            for (key, item) in members {
                if !first {
                    out.push(',');
                }
                first = false;
                out.push_str(&Value::from(key.as_str()).to_string());
                out.push(':');
                match at.first() {
                    Some(Step::Key(k)) if k == key => write_repeating(item, &at[1..], out),
                    _ => out.push_str(&item.to_string()),
                }
            }
            if at.is_empty() {
                let (key, item) = members.iter().next().expect("non-empty");
                out.push(',');
                out.push_str(&Value::from(key.as_str()).to_string());
                out.push(':');
                out.push_str(&item.to_string());
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                match at.first() {
                    Some(Step::Index(j)) if *j == i => write_repeating(item, &at[1..], out),
                    _ => out.push_str(&item.to_string()),
                }
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

fn run<T: Dto + Debug + PartialEq>(value: &Value, case: &Case) {
    let text = apply(value, &case.at, &case.edit);
    match case.expect {
        Expect::Reject(predicate, what) => match decode_params::<T>(&text) {
            Ok(decoded) => panic!(
                "{}: {what} at {} was accepted\n  input: {text}\n  decoded: {decoded:?}",
                T::NAME,
                render(&case.at)
            ),
            Err(err) => {
                assert_eq!(
                    err.path(),
                    render(&case.error_at),
                    "{}: {what}: wrong path\n  input: {text}\n  error: {err}",
                    T::NAME
                );
                assert!(
                    predicate(&err),
                    "{}: {what}: wrong error kind\n  input: {text}\n  error: {err:?}",
                    T::NAME
                );
            }
        },
        Expect::SameAsRemoved => {
            let with_empty = accepts::<T>(&text);
            let removed = accepts::<T>(&apply(value, &case.at, &Edit::Remove));
            assert_eq!(with_empty, removed, "{}: \"\" is not absence", T::NAME);
        }
    }
}
