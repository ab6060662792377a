//! Differential tests of the one-pass decoder against the reference decoder: generated valid
//! and near-valid `stream/chunk` and `stream/end` params (repeated and unknown members at every
//! level, wrong types, floats for integers, blank strings, missing members, the chunk rules)
//! must get the same answer from both, and the one-pass decoder must accept every valid one.

use proptest::prelude::*;
use proptest::sample::Index;

use crate::decode::OnePassText;
use crate::error::Target;
use crate::{Dto, Error, StreamChunkParams, StreamEndParams, decode};

/// Both decoders' verdicts agree (see `crate::fuzz::chunk_decode`); whether it was accepted.
fn agree<T: Dto + PartialEq + std::fmt::Debug>(text: &str) -> bool {
    crate::fuzz::one_pass_agrees::<T>(text)
}

/// A JSON text with objects kept as member lists, so that a name can repeat.
#[derive(Debug, Clone)]
enum Node {
    /// A JSON text as written.
    Raw(String),
    /// An object's members in order.
    Obj(Vec<(String, Node)>),
}

impl Node {
    fn render(&self, out: &mut String) {
        match self {
            Node::Raw(text) => out.push_str(text),
            Node::Obj(members) => {
                out.push('{');
                for (i, (name, value)) in members.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&serde_json::Value::from(name.as_str()).to_string());
                    out.push(':');
                    value.render(out);
                }
                out.push('}');
            }
        }
    }

    /// The paths (member indices) of every object, this one first.
    fn objects(&self, at: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        if let Node::Obj(members) = self {
            out.push(at.clone());
            for (i, (_, value)) in members.iter().enumerate() {
                at.push(i);
                value.objects(at, out);
                at.pop();
            }
        }
    }

    fn members_at(&mut self, path: &[usize]) -> &mut Vec<(String, Node)> {
        let Node::Obj(members) = self else {
            unreachable!("paths lead to objects")
        };
        match path.split_first() {
            None => members,
            Some((&i, rest)) => members[i].1.members_at(rest),
        }
    }
}

fn raw(text: impl Into<String>) -> Node {
    Node::Raw(text.into())
}

fn obj(members: Vec<(&str, Node)>) -> Node {
    Node::Obj(
        members
            .into_iter()
            .map(|(name, value)| (name.to_owned(), value))
            .collect(),
    )
}

/// Values that break one rule or another (or none), for every member kind.
const ODD_VALUES: &[&str] = &[
    "null",
    "true",
    "false",
    "0",
    "1",
    "-1",
    "-0",
    "1.0",
    "1e3",
    "0.5",
    "9007199254740991",
    "9007199254740992",
    "18446744073709551616",
    "\"\"",
    "\" \"",
    "\"\\u3000\\n\"",
    "\"\\u0085\"",
    "\"x\"",
    "\"\\u0078\"",
    "\"text\"",
    "\"error\"",
    "\"done\"",
    "\"provider_failed\"",
    "[]",
    "{}",
    "{\"a\":1}",
    "{\"id\":\"c\",\"name\":\"n\",\"arguments\":\"\"}",
];

/// Member names the DTOs have, and some they do not.
const NAMES: &[&str] = &[
    "streamId",
    "seq",
    "lastSeq",
    "chunk",
    "error",
    "interrupted",
    "type",
    "text",
    "signature",
    "toolCall",
    "argChars",
    "usage",
    "id",
    "name",
    "arguments",
    "thought_signature",
    "promptTokens",
    "finishReason",
    "code",
    "message",
    "extra",
    "Type",
    "seq ",
    "s\u{e9}q",
];

const CHUNK_TYPES: &[&str] = &[
    "text",
    "reasoning",
    "tool_call_start",
    "tool_call_args_delta",
    "tool_call",
    "usage",
    "done",
    "error",
];

fn text_value() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("\"x\"".to_owned()),
        Just("\" word7\"".to_owned()),
        Just("\"\\u00e9\\\"\\n\"".to_owned()),
        Just("\"\"".to_owned()),
        Just("\" \"".to_owned()),
        "[a-z \u{e9}\u{3000}]{0,6}".prop_map(|s| serde_json::Value::from(s).to_string()),
    ]
}

fn uint_value() -> impl Strategy<Value = String> {
    prop_oneof![
        (0u64..1000).prop_map(|n| n.to_string()),
        Just("9007199254740991".to_owned()),
        Just("0".to_owned()),
    ]
}

fn tool_call() -> impl Strategy<Value = Node> {
    (text_value(), text_value(), text_value(), any::<bool>()).prop_map(
        |(id, name, arguments, signed)| {
            let mut members = vec![
                ("id", raw(id)),
                ("name", raw(name)),
                ("arguments", raw(arguments)),
            ];
            if signed {
                members.push(("thought_signature", raw("\"sig\"")));
            }
            obj(members)
        },
    )
}

fn usage() -> impl Strategy<Value = Node> {
    (prop::collection::vec(uint_value(), 6), any::<bool>()).prop_map(|(counts, finish)| {
        let names = [
            "promptTokens",
            "completionTokens",
            "totalTokens",
            "cacheHitTokens",
            "cacheMissTokens",
            "reasoningTokens",
        ];
        let mut members: Vec<(&str, Node)> =
            names.into_iter().zip(counts.into_iter().map(raw)).collect();
        if finish {
            members.push(("finishReason", raw("\"stop\"")));
        }
        obj(members)
    })
}

fn provider_error() -> impl Strategy<Value = Node> {
    (
        prop_oneof![Just("provider_failed"), Just("provider_interrupted")],
        text_value(),
    )
        .prop_map(|(code, message)| {
            obj(vec![
                ("code", raw(format!("\"{code}\""))),
                ("message", raw(message)),
            ])
        })
}

/// A chunk of any type with the member its type needs (and some it may not).
fn chunk() -> impl Strategy<Value = Node> {
    (
        prop::sample::select(CHUNK_TYPES),
        text_value(),
        prop::option::of(text_value()),
        tool_call(),
        uint_value(),
        usage(),
        provider_error(),
        any::<u8>(),
    )
        .prop_map(
            |(kind, text, signature, call, args, usage, error, extras)| {
                let mut members = vec![("type", raw(format!("\"{kind}\"")))];
                match kind {
                    "text" | "reasoning" => members.push(("text", raw(text))),
                    "tool_call_start" | "tool_call" => members.push(("toolCall", call)),
                    "tool_call_args_delta" => members.push(("argChars", raw(args))),
                    "usage" => members.push(("usage", usage)),
                    "error" => members.push(("error", error)),
                    _ => {}
                }
                if let Some(signature) = signature.filter(|_| extras & 1 != 0) {
                    members.push(("signature", raw(signature)));
                }
                if extras & 2 != 0 && kind != "text" && kind != "reasoning" {
                    members.push(("text", raw("\"also\"")));
                }
                if extras & 4 != 0 {
                    members.reverse();
                }
                obj(members)
            },
        )
}

fn chunk_params() -> impl Strategy<Value = Node> {
    (text_value(), uint_value(), chunk(), any::<bool>()).prop_map(|(sid, seq, chunk, reversed)| {
        let mut members = vec![("streamId", raw(sid)), ("seq", raw(seq)), ("chunk", chunk)];
        if reversed {
            members.reverse();
        }
        obj(members)
    })
}

fn end_params() -> impl Strategy<Value = Node> {
    (
        text_value(),
        uint_value(),
        prop::option::of(text_value()),
        prop::option::of(any::<bool>()),
    )
        .prop_map(|(sid, last, error, interrupted)| {
            let mut members = vec![("streamId", raw(sid)), ("lastSeq", raw(last))];
            if let Some(error) = error {
                members.push(("error", raw(error)));
            }
            if let Some(interrupted) = interrupted {
                members.push(("interrupted", raw(interrupted.to_string())));
            }
            obj(members)
        })
}

/// One change to one object of the tree.
#[derive(Debug, Clone)]
enum Mutation {
    /// Repeat member `member` (with value `value`, or its own).
    Repeat { member: Index, value: Option<Index> },
    /// Add member `name` with value `value`.
    Add { name: Index, value: Index },
    /// Replace the value of `member`.
    Retype { member: Index, value: Index },
    /// Remove `member`.
    Remove { member: Index },
    /// Replace the value of `member` with a whole chunk-shaped object.
    Nest { member: Index, chunk: Node },
}

fn mutation() -> impl Strategy<Value = (Index, Mutation)> {
    let mutation = prop_oneof![
        (any::<Index>(), prop::option::of(any::<Index>()))
            .prop_map(|(member, value)| Mutation::Repeat { member, value }),
        (any::<Index>(), any::<Index>()).prop_map(|(name, value)| Mutation::Add { name, value }),
        (any::<Index>(), any::<Index>())
            .prop_map(|(member, value)| Mutation::Retype { member, value }),
        any::<Index>().prop_map(|member| Mutation::Remove { member }),
        (any::<Index>(), chunk()).prop_map(|(member, chunk)| Mutation::Nest { member, chunk }),
    ];
    (any::<Index>(), mutation)
}

fn mutate(mut tree: Node, mutations: &[(Index, Mutation)]) -> String {
    for (at, mutation) in mutations {
        let mut paths = Vec::new();
        tree.objects(&mut Vec::new(), &mut paths);
        let members = tree.members_at(&paths[at.index(paths.len())]);
        let odd = |value: &Index| raw(ODD_VALUES[value.index(ODD_VALUES.len())]);
        match mutation {
            Mutation::Add { name, value } => {
                members.push((NAMES[name.index(NAMES.len())].to_owned(), odd(value)));
            }
            _ if members.is_empty() => {}
            Mutation::Repeat { member, value } => {
                let (name, own) = members[member.index(members.len())].clone();
                members.push((name, value.as_ref().map_or(own, odd)));
            }
            Mutation::Retype { member, value } => {
                let i = member.index(members.len());
                members[i].1 = odd(value);
            }
            Mutation::Remove { member } => {
                let i = member.index(members.len());
                members.remove(i);
            }
            Mutation::Nest { member, chunk } => {
                let i = member.index(members.len());
                members[i].1 = chunk.clone();
            }
        }
    }
    let mut out = String::new();
    tree.render(&mut out);
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    #[test]
    fn generated_chunks_get_the_reference_answer(params in chunk_params()) {
        let mut text = String::new();
        params.render(&mut text);
        agree::<StreamChunkParams>(&text);
        agree::<StreamEndParams>(&text);
    }

    #[test]
    fn mutated_chunks_get_the_reference_answer(
        params in chunk_params(),
        mutations in prop::collection::vec(mutation(), 1..4),
    ) {
        let text = mutate(params, &mutations);
        agree::<StreamChunkParams>(&text);
    }

    #[test]
    fn mutated_ends_get_the_reference_answer(
        params in end_params(),
        mutations in prop::collection::vec(mutation(), 0..3),
    ) {
        let text = mutate(params, &mutations);
        agree::<StreamEndParams>(&text);
    }
}

#[test]
fn valid_params_take_the_one_pass_path() {
    for text in [
        r#"{"streamId":"s1","seq":17,"chunk":{"type":"text","text":" word7"}}"#,
        r#"{"chunk":{"text":"r","signature":"","type":"reasoning"},"seq":1,"streamId":""}"#,
        r#"{"streamId":"s","seq":2,"chunk":{"type":"tool_call","toolCall":{"id":"c","name":"n","arguments":""}}}"#,
        r#"{"streamId":"s","seq":3,"chunk":{"type":"tool_call_args_delta","argChars":0}}"#,
        r#"{"streamId":"s","seq":4,"chunk":{"type":"usage","usage":{"promptTokens":1,"completionTokens":2,"totalTokens":3,"cacheHitTokens":0,"cacheMissTokens":1,"reasoningTokens":0,"finishReason":"stop"}}}"#,
        r#"{"streamId":"s","seq":5,"chunk":{"type":"error","error":{"code":"provider_interrupted","message":"m"}}}"#,
        " {\"streamId\":\"s\",\"seq\":9007199254740991,\"chunk\":{\"type\":\"done\"}} \n",
    ] {
        assert!(agree::<StreamChunkParams>(text), "{text}");
    }
    for text in [
        r#"{"streamId":"s","lastSeq":0}"#,
        r#"{"streamId":"s","lastSeq":3,"error":"boom","interrupted":true}"#,
    ] {
        assert!(agree::<StreamEndParams>(text), "{text}");
    }
}

#[test]
fn rejections_are_the_reference_errors() {
    // Errors come from the reference decoder, so a duplicate after a type error is still
    // reported as the duplicate (the reference parses the whole text first).
    for (text, is) in [
        (
            r#"{"streamId":1,"seq":1,"chunk":{"type":"done"},"seq":2}"#,
            Error::is_duplicate as fn(&Error) -> bool,
        ),
        (
            r#"{"streamId":"s","seq":1.0,"chunk":{"type":"done"}}"#,
            Error::is_type,
        ),
        (
            r#"{"streamId":"s","seq":0,"chunk":{"type":"done"}}"#,
            Error::is_range,
        ),
        (
            r#"{"streamId":"s","seq":1,"chunk":{"type":"text"}}"#,
            Error::is_missing,
        ),
        (
            r#"{"streamId":"s","seq":1,"chunk":{"type":"text","text":""}}"#,
            Error::is_missing,
        ),
        (
            r#"{"streamId":"s","seq":1,"chunk":{"type":"done","error":{"code":"provider_failed","message":"m"}}}"#,
            Error::is_rule,
        ),
        (
            r#"{"streamId":"s","seq":1,"chunk":{"type":"error","error":{"code":"provider_failed","message":" "}}}"#,
            Error::is_blank,
        ),
        (
            r#"{"streamId":"s","seq":1,"chunk":{"type":"done","x":1}}"#,
            Error::is_unknown,
        ),
        (
            r#"{"streamId":"s","seq":1,"chunk":{"type":"done"}} x"#,
            Error::is_syntax,
        ),
    ] {
        assert!(!agree::<StreamChunkParams>(text), "{text}");
        let err = decode::<StreamChunkParams>(text, Target::Params).unwrap_err();
        assert!(is(&err), "{text}: {err}");
        assert_eq!(err.reason(), crate::Reason::InvalidParams);
    }
}
