use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::json;
use sidewire_ext_host::protocol::{ProviderMessage, ProviderRole};
use sidewire_test_support::within;

use super::*;
use crate::testing::{
    FakeModel, FakeTools, call, done, empty_host, endless, reasoning, text, usage,
};

/// What the callback saw, as short strings.
fn describe(event: &TurnEvent<'_>) -> String {
    match event {
        TurnEvent::Hook { round, point, .. } => format!("{round}:{}", point.as_str()),
        TurnEvent::Request { round, .. } => format!("{round}:request"),
        TurnEvent::Chunk { round, chunk } => format!("{round}:chunk {}", chunk.kind.as_str()),
        TurnEvent::Response { round, .. } => format!("{round}:response"),
        TurnEvent::ToolCall { round, report } => format!("{round}:tool {}", report.tool),
    }
}

/// Runs one turn of `input` on an empty host; returns the report and the events seen.
async fn turn(
    agent: &Agent,
    model: &FakeModel,
    tools: &FakeTools,
    conversation: &mut Conversation,
    input: &str,
) -> (Result<TurnReport, Error>, Vec<String>) {
    let (host, _dir) = empty_host().await;
    let pinned = within(Duration::from_secs(10), "a turn", host.turn()).await;
    let mut seen = Vec::new();
    let result = within(
        Duration::from_secs(10),
        "the turn",
        run(
            agent,
            &pinned,
            model,
            tools,
            conversation,
            input,
            &mut |event| {
                seen.push(describe(&event));
            },
        ),
    )
    .await;
    (result, seen)
}

fn roles(conversation: &Conversation) -> Vec<&'static str> {
    conversation
        .messages()
        .map(|m| m.role.map_or("?", |r| r.as_str()))
        .collect()
}

#[tokio::test]
async fn a_turn_without_tool_calls_streams_its_answer_and_keeps_input_and_answer() {
    let model = FakeModel::new(vec![vec![
        reasoning("thinking"),
        text("Hello"),
        text(" world"),
        usage(10),
        done(),
    ]]);
    let mut conversation = Conversation::new();
    let agent = Agent::new("plugin/p/m/1");
    let (report, seen) = turn(
        &agent,
        &model,
        &FakeTools::standard(),
        &mut conversation,
        "hi",
    )
    .await;
    let report = report.expect("the turn answers");
    assert_eq!(report.end, TurnEnd::Answered);
    assert_eq!(report.answer, "Hello world");
    assert_eq!((report.rounds, report.input.as_str()), (1, "hi"));
    assert_eq!(report.usage.map(|u| u.total_tokens), Some(10));
    assert_eq!(
        seen,
        [
            "0:input.receive",
            "1:context.prepare",
            "1:provider.request",
            "1:request",
            "1:chunk reasoning",
            "1:chunk text",
            "1:chunk text",
            "1:chunk usage",
            "1:chunk done",
            "1:provider.response",
            "1:response",
        ]
    );
    assert_eq!(roles(&conversation), ["user", "assistant"]);
    let answer = conversation.messages().nth(1).unwrap();
    assert_eq!(
        (answer.content.as_str(), answer.reasoning_content.as_str()),
        ("Hello world", "thinking")
    );
}

#[tokio::test]
async fn the_sdks_scripted_model_calls_the_add_tool_and_answers_with_its_result() {
    let model = FakeModel::scripted(vec![Box::new(|request: &ProviderRequest| {
        let chunks = sidewire_ext_sdk::samples::scripted_chunks(request);
        Box::pin(futures_util::stream::iter(chunks.into_iter().map(Ok)))
    })]);
    let tools = FakeTools::standard();
    let mut conversation = Conversation::new();
    let (report, _) = turn(
        &Agent::new("r"),
        &model,
        &tools,
        &mut conversation,
        "add 2 and 40",
    )
    .await;
    let report = report.expect("the turn answers");
    assert_eq!(report.answer, "The tool said: 42.");
    assert_eq!((report.rounds, report.end), (2, TurnEnd::Answered));
    assert_eq!(
        tools.calls(),
        [("mcp__t__add".to_owned(), json!({"a": 2, "b": 40}))]
    );
}

#[tokio::test]
async fn the_request_carries_the_conversation_the_tools_and_max_tokens() {
    let model = FakeModel::new(vec![vec![text("ok"), done()]]);
    let mut conversation = Conversation::new();
    conversation.extend([
        ProviderMessage {
            role: Some(ProviderRole::User),
            content: "before".to_owned(),
            ..ProviderMessage::default()
        },
        ProviderMessage {
            role: Some(ProviderRole::Assistant),
            content: "earlier answer".to_owned(),
            ..ProviderMessage::default()
        },
    ]);
    let agent = Agent::new("plugin/p/m/1").max_tokens(77);
    let (report, _) = turn(
        &agent,
        &model,
        &FakeTools::standard(),
        &mut conversation,
        "now",
    )
    .await;
    report.expect("the turn answers");
    let requests = model.requests();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(request.max_tokens, 77);
    let contents: Vec<&str> = request
        .messages
        .iter()
        .map(|m| m.content.as_str())
        .collect();
    assert_eq!(contents, ["before", "earlier answer", "now"]);
    let tools: Vec<&str> = request.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(tools, ["mcp__t__add", "mcp__t__write"]);
    assert_eq!(request.tools[0].parameters["type"], "object");
    assert_eq!(conversation.len(), 4);
}

#[tokio::test]
async fn a_tool_call_goes_through_the_chain_and_its_result_back_to_the_model() {
    let model = FakeModel::new(vec![
        vec![call("call-1", "mcp__t__add", r#"{"a":2,"b":40}"#), done()],
        vec![text("The tool said: 42."), done()],
    ]);
    let tools = FakeTools::standard();
    let mut conversation = Conversation::new();
    let (report, seen) = turn(
        &Agent::new("r"),
        &model,
        &tools,
        &mut conversation,
        "add 2 and 40",
    )
    .await;
    let report = report.expect("the turn answers");
    assert_eq!(report.end, TurnEnd::Answered);
    assert_eq!(report.rounds, 2);
    assert_eq!(report.answer, "The tool said: 42.");
    assert_eq!(
        tools.calls(),
        [("mcp__t__add".to_owned(), json!({"a": 2, "b": 40}))]
    );
    let call = &report.tool_calls[0];
    assert!(call.is_complete());
    assert_eq!(call.call_id, "call-1");
    assert_eq!(
        call.policy.map(|p| p.why),
        Some(crate::PolicyReason::ReadOnly)
    );
    assert!(seen.contains(&"1:tool mcp__t__add".to_owned()), "{seen:?}");
    // The second request ends with the tool's result, paired with its call.
    let second = &model.requests()[1];
    let last = second.messages.last().unwrap();
    assert_eq!(last.role, Some(ProviderRole::Tool));
    assert_eq!(
        (last.tool_call_id.as_str(), last.content.as_str()),
        ("call-1", "42")
    );
    let asked = &second.messages[second.messages.len() - 2];
    assert_eq!(asked.tool_calls[0].id, "call-1");
    assert_eq!(
        roles(&conversation),
        ["user", "assistant", "tool", "assistant"]
    );
}

#[tokio::test]
async fn the_host_policy_denies_a_tool_that_is_not_read_only_unless_all_are_allowed() {
    let rounds = || {
        vec![
            vec![call("c", "mcp__t__write", "{}"), done()],
            vec![text("fine"), done()],
        ]
    };
    let tools = FakeTools::standard();
    let model = FakeModel::new(rounds());
    let (report, _) = turn(
        &Agent::new("r"),
        &model,
        &tools,
        &mut Conversation::new(),
        "go",
    )
    .await;
    let report = report.unwrap();
    assert!(matches!(report.tool_calls[0].stop, Some(ToolStop::Denied)));
    assert!(tools.calls().is_empty(), "a denied tool ran");
    let told = model.requests()[1].messages.last().unwrap().content.clone();
    assert!(told.contains("denied"), "{told}");

    let model = FakeModel::new(rounds());
    let agent = Agent::new("r").tool_policy(ToolPolicy::AllowAll);
    let (report, _) = turn(&agent, &model, &tools, &mut Conversation::new(), "go").await;
    assert!(report.unwrap().tool_calls[0].is_complete());
    assert_eq!(tools.calls().len(), 1);
}

#[tokio::test]
async fn the_round_bound_ends_the_turn_with_round_limit_after_running_the_last_calls() {
    let model = FakeModel::new(vec![vec![
        call("c", "mcp__t__add", r#"{"a":1,"b":1}"#),
        done(),
    ]]);
    let tools = FakeTools::standard();
    let mut conversation = Conversation::new();
    let agent = Agent::new("r").max_rounds(3);
    let (report, _) = turn(&agent, &model, &tools, &mut conversation, "loop").await;
    let report = report.expect("the bound is an end, not an error");
    assert_eq!(report.end, TurnEnd::RoundLimit { rounds: 3 });
    assert_eq!(report.rounds, 3);
    assert_eq!(model.requests().len(), 3);
    assert_eq!(tools.calls().len(), 3);
    // Every call has its result: the history stays one a provider accepts.
    assert_eq!(
        roles(&conversation),
        [
            "user",
            "assistant",
            "tool",
            "assistant",
            "tool",
            "assistant",
            "tool"
        ]
    );
    assert_eq!(Agent::new("r").get_max_rounds(), Agent::DEFAULT_MAX_ROUNDS);
    assert_eq!(Agent::new("r").max_rounds(0).get_max_rounds(), 1);
}

#[tokio::test]
async fn calls_past_the_per_round_bound_are_not_run_and_each_gets_an_answer() {
    let model = FakeModel::new(vec![
        vec![
            call("c1", "mcp__t__add", r#"{"a":1,"b":1}"#),
            call("c2", "mcp__t__add", r#"{"a":2,"b":2}"#),
            call("c3", "mcp__t__add", r#"{"a":3,"b":3}"#),
            done(),
        ],
        vec![text("done"), done()],
    ]);
    let tools = FakeTools::standard();
    let agent = Agent::new("r").max_tool_calls(2);
    let (report, _) = turn(&agent, &model, &tools, &mut Conversation::new(), "three").await;
    let report = report.unwrap();
    assert_eq!(tools.calls().len(), 2);
    assert!(matches!(
        report.tool_calls[2].stop,
        Some(ToolStop::TooMany { limit: 2 })
    ));
    let results: Vec<String> = (model.requests()[1].messages.iter())
        .filter(|m| m.role == Some(ProviderRole::Tool))
        .map(|m| m.tool_call_id.clone())
        .collect();
    assert_eq!(results, ["c1", "c2", "c3"]);
}

#[tokio::test]
async fn an_answer_past_the_byte_bound_cancels_the_stream_and_fails_the_turn() {
    let yielded = Arc::new(AtomicUsize::new(0));
    let dropped = Arc::new(AtomicUsize::new(0));
    let (y, d) = (Arc::clone(&yielded), Arc::clone(&dropped));
    let model = FakeModel::scripted(vec![Box::new(move |_| {
        endless(text(&"x".repeat(100)), Arc::clone(&y), Arc::clone(&d))
    })]);
    let mut conversation = Conversation::new();
    let agent = Agent::new("r").max_response_bytes(1000);
    let (report, _) = turn(
        &agent,
        &model,
        &FakeTools::standard(),
        &mut conversation,
        "talk",
    )
    .await;
    let err = report.expect_err("an endless answer fails the turn");
    assert!(err.is_response_too_large(), "{err}");
    // The 11th chunk crosses 1,000 bytes; nothing more is read, and the stream is dropped.
    assert_eq!(yielded.load(Ordering::SeqCst), 11);
    assert_eq!(dropped.load(Ordering::SeqCst), 1);
    assert!(
        conversation.is_empty(),
        "a failed turn changed the conversation"
    );
}

/// The chunk that takes the answer past the bound is never handed to the caller (who prints
/// it): a tool call whose arguments alone are over the bound fails the turn unseen.
#[tokio::test]
async fn the_chunk_past_the_byte_bound_is_never_shown() {
    let huge = format!("{{\"path\":\"{}\"}}", "a".repeat(4000));
    let model = FakeModel::new(vec![vec![
        text("let me look"),
        call("c1", "mcp__fs__read", &huge),
        done(),
    ]]);
    let mut conversation = Conversation::new();
    let agent = Agent::new("r").max_response_bytes(1000);
    let (report, seen) = turn(
        &agent,
        &model,
        &FakeTools::standard(),
        &mut conversation,
        "read it",
    )
    .await;
    let err = report.expect_err("the answer is over the bound");
    assert!(err.is_response_too_large(), "{err}");
    assert!(seen.contains(&"1:chunk text".to_owned()), "{seen:?}");
    assert!(
        !seen.iter().any(|event| event.contains("tool_call")),
        "the over-bound call was shown: {seen:?}"
    );
}

#[tokio::test]
async fn a_dropped_turn_drops_its_stream_and_leaves_the_conversation_unchanged() {
    let dropped = Arc::new(AtomicUsize::new(0));
    let d = Arc::clone(&dropped);
    let model = FakeModel::scripted(vec![Box::new(move |_| {
        // One chunk, then nothing ever again.
        let guard = endless(done(), Arc::new(AtomicUsize::new(0)), Arc::clone(&d));
        let first = futures_util::stream::iter([Ok(text("partial"))]);
        Box::pin(first.chain(futures_util::stream::pending()).chain(guard))
    })]);
    let (host, _dir) = empty_host().await;
    let pinned = within(Duration::from_secs(10), "a turn", host.turn()).await;
    let tools = FakeTools::standard();
    let mut conversation = Conversation::new();
    let agent = Agent::new("r");
    let seen = Arc::new(tokio::sync::Notify::new());
    let notify = Arc::clone(&seen);
    {
        let mut on_event = |event: TurnEvent<'_>| {
            if matches!(event, TurnEvent::Chunk { .. }) {
                notify.notify_one();
            }
        };
        let turn = run(
            &agent,
            &pinned,
            &model,
            &tools,
            &mut conversation,
            "hang",
            &mut on_event,
        );
        tokio::select! {
            _ = turn => panic!("the turn cannot end"),
            () = within(Duration::from_secs(10), "the first chunk", seen.notified()) => {}
        }
    }
    assert_eq!(
        dropped.load(Ordering::SeqCst),
        1,
        "the stream outlived its turn"
    );
    assert!(conversation.is_empty());
}

#[tokio::test]
async fn arguments_that_are_not_an_object_and_unknown_tools_run_nothing() {
    let model = FakeModel::new(vec![
        vec![
            call("c1", "mcp__t__add", "[1, 2]"),
            call("c2", "mcp__t__add", "not json"),
            call("c3", "mcp__t__nope", "{}"),
            call("c4", "mcp__t__add", ""),
            done(),
        ],
        vec![text("ok"), done()],
    ]);
    let tools = FakeTools::standard();
    let (report, _) = turn(
        &Agent::new("r"),
        &model,
        &tools,
        &mut Conversation::new(),
        "x",
    )
    .await;
    let report = report.unwrap();
    let stops: Vec<bool> = report.tool_calls.iter().map(|c| c.is_complete()).collect();
    assert_eq!(stops, [false, false, false, true]);
    assert!(
        matches!(&report.tool_calls[0].stop, Some(ToolStop::Failed(e)) if e.is_invalid_arguments())
    );
    assert!(
        matches!(&report.tool_calls[1].stop, Some(ToolStop::Failed(e)) if e.is_invalid_arguments())
    );
    assert!(matches!(
        report.tool_calls[2].stop,
        Some(ToolStop::UnknownTool)
    ));
    // Empty arguments are `{}`.
    assert_eq!(tools.calls(), [("mcp__t__add".to_owned(), json!({}))]);
}

#[tokio::test]
async fn a_long_tool_result_is_cut_for_the_model_but_kept_whole_in_the_report() {
    let model = FakeModel::new(vec![
        vec![call("c", "mcp__t__big", "{}"), done()],
        vec![text("ok"), done()],
    ]);
    let tools = FakeTools::new().tool("mcp__t__big", true, |_| CallToolResultExt::big());
    let agent = Agent::new("r").max_tool_result_bytes(100);
    let (report, _) = turn(&agent, &model, &tools, &mut Conversation::new(), "x").await;
    let report = report.unwrap();
    assert_eq!(
        report.tool_calls[0].result.as_ref().unwrap().text[0].len(),
        1000
    );
    let told = model.requests()[1].messages.last().unwrap().content.clone();
    assert!(told.starts_with(&"é".repeat(50)), "{told}");
    assert!(told.ends_with("[900 more bytes cut]"), "{told}");
}

struct CallToolResultExt;

impl CallToolResultExt {
    fn big() -> sidewire_mcp::CallToolResult {
        sidewire_mcp::CallToolResult::text("é".repeat(500))
    }
}

#[test]
fn cut_keeps_characters_whole() {
    assert_eq!(cut("abc".to_owned(), 3), "abc");
    assert_eq!(cut("abcd".to_owned(), 3), "abc\n[1 more bytes cut]");
    // "é" is two bytes: a cut inside it moves back to its start.
    assert_eq!(cut("éé".to_owned(), 3), "é\n[2 more bytes cut]");
}

#[test]
fn the_turn_future_is_send() {
    fn is_send<T: Send>(_: &T) {}
    let agent = Agent::new("r");
    let model = FakeModel::new(vec![]);
    let tools = FakeTools::new();
    let mut conversation = Conversation::new();
    let pinned: Option<&Turn> = None;
    if let Some(pinned) = pinned {
        let mut on_event = |_: TurnEvent<'_>| {};
        let future = run(
            &agent,
            pinned,
            &model,
            &tools,
            &mut conversation,
            "x",
            &mut on_event,
        );
        is_send(&future);
    }
}
