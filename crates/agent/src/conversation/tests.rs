use sidewire_ext_host::protocol::{ProviderMessage, ProviderRole, ProviderToolCall};

use super::*;

fn message(role: ProviderRole, content: &str) -> ProviderMessage {
    ProviderMessage {
        role: Some(role),
        content: content.to_owned(),
        ..ProviderMessage::default()
    }
}

/// One exchange: the input, an answer asking for a tool, its result, the final answer.
fn exchange(n: usize) -> Vec<ProviderMessage> {
    vec![
        message(ProviderRole::User, &format!("q{n}")),
        ProviderMessage {
            tool_calls: vec![ProviderToolCall {
                id: format!("c{n}"),
                name: "t".to_owned(),
                arguments: "{}".to_owned(),
                thought_signature: String::new(),
            }],
            ..message(ProviderRole::Assistant, "")
        },
        ProviderMessage {
            tool_call_id: format!("c{n}"),
            ..message(ProviderRole::Tool, "r")
        },
        message(ProviderRole::Assistant, &format!("a{n}")),
    ]
}

fn contents(conversation: &Conversation) -> Vec<String> {
    conversation
        .messages()
        .map(|m| format!("{}:{}", m.role.map_or("?", |r| r.as_str()), m.content))
        .collect()
}

#[test]
fn past_the_message_bound_whole_exchanges_go_oldest_first() {
    let mut conversation = Conversation::with_limits(6, usize::MAX);
    conversation.extend(exchange(1));
    assert_eq!(conversation.len(), 4);
    conversation.extend(exchange(2));
    // Eight messages over a bound of six: dropping two would leave a tool result first, so the
    // whole first exchange goes.
    assert_eq!(
        contents(&conversation),
        ["user:q2", "assistant:", "tool:r", "assistant:a2"]
    );
    assert_eq!(conversation.dropped(), 4);
    assert_eq!(
        conversation.bytes(),
        exchange(2).iter().map(message_bytes).sum::<usize>()
    );
}

#[test]
fn past_the_byte_bound_the_oldest_go_and_the_bytes_are_kept_exactly() {
    let mut conversation = Conversation::with_limits(usize::MAX, 10);
    conversation.extend([message(ProviderRole::User, "12345")]);
    conversation.extend([message(ProviderRole::Assistant, "67890")]);
    assert_eq!(conversation.bytes(), 10);
    conversation.extend([message(ProviderRole::User, "x")]);
    assert_eq!(contents(&conversation), ["user:x"]);
    assert_eq!(conversation.bytes(), 1);
    assert_eq!(conversation.dropped(), 2);
}

#[test]
fn bytes_count_every_text_member() {
    let mut m = message(ProviderRole::Assistant, "ab");
    m.reasoning_content = "cde".to_owned();
    m.tool_calls = vec![ProviderToolCall {
        id: "i".to_owned(),
        name: "nn".to_owned(),
        arguments: "{}".to_owned(),
        thought_signature: String::new(),
    }];
    m.images = vec!["img".to_owned()];
    assert_eq!(message_bytes(&m), 2 + 3 + 1 + 2 + 2 + 3);
}

#[test]
fn a_turn_larger_than_the_bounds_by_itself_leaves_nothing() {
    let mut conversation = Conversation::with_limits(3, usize::MAX);
    conversation.extend(exchange(1));
    assert!(conversation.is_empty());
    assert_eq!(conversation.bytes(), 0);
    // And it is usable afterwards.
    conversation.extend([message(ProviderRole::User, "again")]);
    assert_eq!(contents(&conversation), ["user:again"]);
}

#[test]
fn within_the_bounds_nothing_is_dropped_and_clear_empties_it() {
    let mut conversation = Conversation::new();
    for n in 0..10 {
        conversation.extend(exchange(n));
    }
    assert_eq!(conversation.len(), 40);
    assert_eq!(conversation.dropped(), 0);
    conversation.clear();
    assert!(conversation.is_empty());
    assert_eq!(conversation.bytes(), 0);
}
