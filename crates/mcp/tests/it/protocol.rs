//! Protocol edge cases against the in-process mock server.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use sidewire_mcp::{
    ClientHandler, CompletionRef, Content, CreateMessageParams, CreateMessageResult, ElicitParams,
    ElicitResult, ErrorObject, LogLevel, LogMessage, NoHandler, Root, ServerSpec, Stage,
    ToolCallOptions,
};

use crate::support::*;

fn spec() -> ServerSpec {
    ServerSpec::stdio("mock", "unused")
}

#[tokio::test]
async fn the_handshake_offers_the_latest_version_then_says_initialized() {
    let spec = spec().root(Root::dir("/work/project"));
    let (client, mock) = mock(spec, NoHandler).await;
    let requests = lock(&mock.state.requests).clone();
    let (method, _, params) = &requests[0];
    assert_eq!(method, "initialize");
    assert_eq!(params["protocolVersion"], "2025-11-25");
    assert_eq!(params["clientInfo"]["name"], "sidewire");
    assert!(params["clientInfo"]["version"].is_string());
    assert_eq!(
        params["capabilities"],
        json!({"roots": {"listChanged": true}})
    );
    eventually("notifications/initialized", || {
        !mock.state.notified("notifications/initialized").is_empty()
    })
    .await;
    assert_eq!(client.protocol_version(), "2025-11-25");
    assert_eq!(client.server_info().name, "mock");
    assert_eq!(client.instructions(), Some("be nice"));
    assert!(client.capabilities().tools.unwrap().list_changed);
}

#[tokio::test]
async fn older_versions_are_accepted_and_unknown_ones_refused() {
    for version in ["2025-06-18", "2025-03-26", "2024-11-05"] {
        let state = MockState::default();
        *lock(&state.version) = Some(version.to_owned());
        let (client, _mock) = mock_with(state, spec(), NoHandler).await;
        assert_eq!(client.unwrap().protocol_version(), version);
    }
    let state = MockState::default();
    *lock(&state.version) = Some("1999-01-01".to_owned());
    let (client, mock) = mock_with(state, spec(), NoHandler).await;
    let err = client.unwrap_err();
    assert!(err.is_incompatible_version(), "{err:?}");
    assert_eq!(err.stage().unwrap().0, Stage::Initialize);
    let text = err.to_string();
    assert!(
        text.contains("\"1999-01-01\"") && text.contains("2024-11-05"),
        "{text}"
    );
    // The client disconnected instead of going on.
    within("the mock to see the disconnect", mock.peer.closed()).await;
    assert!(mock.state.notified("notifications/initialized").is_empty());
}

#[tokio::test]
async fn server_requests_during_initialize_are_answered() {
    let state = MockState::default();
    *lock(&state.call_during_initialize) = true;
    let spec = spec().root(Root {
        uri: "file:///r".into(),
        name: Some("r".into()),
    });
    let (client, mock) = mock_with(state, spec, NoHandler).await;
    client.unwrap();
    let answers = lock(&mock.state.during_initialize).clone();
    assert_eq!(answers[0], Ok(json!({})), "ping");
    assert_eq!(
        answers[1],
        Ok(json!({"roots": [{"uri": "file:///r", "name": "r"}]}))
    );
    assert_eq!(
        answers[2].as_ref().unwrap_err().code,
        ErrorObject::METHOD_NOT_FOUND
    );
}

#[tokio::test]
async fn listing_follows_cursors_to_the_end() {
    let state = MockState::default();
    *lock(&state.tool_pages) = vec![
        vec!["a".into(), "b".into()],
        vec!["c".into()],
        vec!["d".into(), "a".into()],
    ];
    let (client, mock) = mock_with(state, spec(), NoHandler).await;
    let client = client.unwrap();
    let tools = client.list_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    // The repeated "a" on page 3 is dropped.
    assert_eq!(names, ["a", "b", "c", "d"]);
    assert_eq!(mock.state.count("tools/list"), 3);
    assert_eq!(client.tools().len(), 4);
}

#[tokio::test]
async fn a_repeating_cursor_stops_the_listing() {
    let state = MockState::default();
    *lock(&state.cursors) = Cursors::Repeat;
    let (client, mock) = mock_with(state, spec(), NoHandler).await;
    let tools = within("a listing", client.unwrap().list_tools())
        .await
        .unwrap();
    assert_eq!(tools.len(), 5);
    // Page one, then "same" once; the second "same" ends it.
    assert_eq!(mock.state.count("tools/list"), 2);
}

#[tokio::test]
async fn an_endless_cursor_stops_at_the_page_cap() {
    let state = MockState::default();
    *lock(&state.cursors) = Cursors::Endless;
    let (client, mock) = mock_with(state, spec(), NoHandler).await;
    within("a listing", client.unwrap().list_tools())
        .await
        .unwrap();
    assert_eq!(mock.state.count("tools/list"), 100);
}

#[tokio::test]
async fn every_content_kind_and_is_error_come_through() {
    let (client, _mock) = mock(spec(), NoHandler).await;
    let result = client
        .call_tool("content", json!({}), ToolCallOptions::new())
        .await
        .unwrap();
    assert!(result.is_error);
    assert_eq!(result.structured_content, Some(json!({"ok": true})));
    assert_eq!(result.content.len(), 5);
    assert!(matches!(result.content[0], Content::Text { .. }));
    assert!(matches!(result.content[1], Content::Image { .. }));
    assert!(matches!(result.content[2], Content::Audio { .. }));
    assert!(matches!(result.content[3], Content::ResourceLink(_)));
    assert!(matches!(result.content[4], Content::Resource { .. }));
    let echo = client
        .call_tool("echo", json!({"message": "hi"}), ToolCallOptions::new())
        .await
        .unwrap();
    assert_eq!(echo.joined_text(), "hi");
    let err = client
        .call_tool("nope", Value::Null, ToolCallOptions::new())
        .await
        .unwrap_err();
    assert!(
        err.is_remote() && err.remote().unwrap().code == -32602,
        "{err:?}"
    );
}

#[tokio::test]
async fn every_tools_call_carries_a_fresh_progress_token() {
    let (client, mock) = mock(spec(), NoHandler).await;
    for _ in 0..2 {
        client
            .call_tool("echo", json!({"message": "x"}), ToolCallOptions::new())
            .await
            .unwrap();
    }
    let tokens: Vec<Value> = lock(&mock.state.requests)
        .iter()
        .filter(|(m, _, _)| m == "tools/call")
        .map(|(_, _, p)| p["_meta"]["progressToken"].clone())
        .collect();
    assert_eq!(tokens.len(), 2);
    assert!(tokens[0].is_u64() && tokens[0] != tokens[1], "{tokens:?}");
}

#[tokio::test]
async fn progress_reaches_the_callback_and_keeps_a_long_call_alive() {
    // Idle timeout 500 ms, but the call takes ~900 ms with a report every 100 ms.
    let (client, _mock) = mock(spec().call_timeout(Duration::from_millis(500)), NoHandler).await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    let options = ToolCallOptions::new()
        .on_progress(move |p| lock(&sink).push((p.progress, p.total, p.message)));
    let started = Instant::now();
    let result = within(
        "a call kept alive by progress",
        client.call_tool("progress", json!({"count": 9, "every_ms": 100}), options),
    )
    .await
    .unwrap();
    assert_eq!(result.joined_text(), "done");
    assert!(started.elapsed() >= Duration::from_millis(800));
    let seen = lock(&seen).clone();
    assert_eq!(seen.len(), 9);
    assert_eq!(seen[8], (9.0, Some(9.0), Some("step 9".to_owned())));
}

#[tokio::test]
async fn a_token_echoed_as_digits_reaches_the_callback_and_a_foreign_one_does_not() {
    let (client, _mock) = mock(spec(), NoHandler).await;
    for (echo, expected) in [("string", 2), ("foreign", 0)] {
        let seen = Arc::new(Mutex::new(0));
        let sink = Arc::clone(&seen);
        let options = ToolCallOptions::new().on_progress(move |_| *lock(&sink) += 1);
        let args = json!({"count": 2, "every_ms": 1, "echo_token": echo});
        within(
            "a call with progress",
            client.call_tool("progress", args, options),
        )
        .await
        .unwrap();
        assert_eq!(*lock(&seen), expected, "token echoed as {echo}");
    }
}

#[tokio::test]
async fn a_silent_call_times_out_idle_and_the_server_is_told() {
    let (client, mock) = mock(spec(), NoHandler).await;
    let options = ToolCallOptions::new().timeout(Duration::from_millis(200));
    let err = client
        .call_tool("sleep", json!({"ms": 5000}), options)
        .await
        .unwrap_err();
    assert!(err.is_timeout(), "{err:?}");
    assert!(err.to_string().contains("without progress"), "{err}");
    eventually("notifications/cancelled", || {
        !mock.state.notified("notifications/cancelled").is_empty()
    })
    .await;
    let cancelled = mock.state.notified("notifications/cancelled");
    let id = mock.state.ids("tools/call")[0].clone();
    assert_eq!(cancelled[0]["requestId"].to_string(), id);
    assert!(cancelled[0]["reason"].is_string());
}

#[tokio::test]
async fn progress_cannot_extend_a_call_past_its_absolute_cap() {
    let (client, mock) = mock(spec(), NoHandler).await;
    // A report every 50 ms keeps the 400 ms idle timer from firing; the 1 s cap still ends
    // a call that would otherwise take 2.5 s.
    let options = ToolCallOptions::new()
        .timeout(Duration::from_millis(400))
        .max_duration(Duration::from_secs(1));
    let started = Instant::now();
    let err = client
        .call_tool("progress", json!({"count": 50, "every_ms": 50}), options)
        .await
        .unwrap_err();
    assert!(err.is_timeout(), "{err:?}");
    assert!(!err.to_string().contains("without progress"), "{err}");
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(950) && took < Duration::from_millis(2400),
        "{took:?}"
    );
    eventually("notifications/cancelled", || {
        mock.state
            .notified("notifications/cancelled")
            .iter()
            .any(|p| p["reason"] == "client deadline exceeded")
    })
    .await;
}

#[tokio::test]
async fn a_per_tool_timeout_applies() {
    let spec = spec().tool_timeout("hang", Duration::from_millis(100));
    let (client, _mock) = mock(spec, NoHandler).await;
    let started = Instant::now();
    let err = client
        .call_tool("hang", json!({}), ToolCallOptions::new())
        .await
        .unwrap_err();
    assert!(err.is_timeout());
    assert!(started.elapsed() < Duration::from_secs(2));
    // Other tools keep the server's timeout.
    client
        .call_tool("sleep", json!({"ms": 200}), ToolCallOptions::new())
        .await
        .unwrap();
}

#[tokio::test]
async fn dropping_a_call_cancels_it_on_the_server() {
    let (client, mock) = mock(spec(), NoHandler).await;
    let call = client.call_tool("hang", json!({}), ToolCallOptions::new());
    let outcome = tokio::time::timeout(Duration::from_millis(100), call).await;
    assert!(outcome.is_err(), "the call should still be running");
    eventually("notifications/cancelled", || {
        !mock.state.notified("notifications/cancelled").is_empty()
    })
    .await;
    let id = mock.state.ids("tools/call")[0].clone();
    assert_eq!(
        mock.state.notified("notifications/cancelled")[0]["requestId"].to_string(),
        id
    );
    // The connection is unharmed.
    client.ping().await.unwrap();
}

#[tokio::test]
async fn a_hanging_initialize_times_out_and_is_never_cancelled() {
    let state = MockState::default();
    *lock(&state.hang_initialize) = true;
    let spec = spec().startup_timeout(Duration::from_millis(300));
    let started = Instant::now();
    let (client, mock) = mock_with(state, spec, NoHandler).await;
    let err = client.unwrap_err();
    assert!(err.is_timeout(), "{err:?}");
    assert_eq!(err.stage().unwrap().0, Stage::Initialize);
    assert!(started.elapsed() < Duration::from_secs(3));
    within("the mock to see the disconnect", mock.peer.closed()).await;
    assert!(mock.state.notified("notifications/cancelled").is_empty());
}

#[tokio::test]
async fn a_hung_server_fails_calls_by_timeout_and_closes_in_bounded_time() {
    let (client, _mock) = mock(spec().call_timeout(Duration::from_millis(200)), NoHandler).await;
    let err = client
        .call_tool("hang", json!({}), ToolCallOptions::new())
        .await
        .unwrap_err();
    assert!(err.is_timeout());
    let started = Instant::now();
    within("close", client.close()).await;
    assert!(started.elapsed() < Duration::from_secs(2));
    assert!(client.is_closed());
    let err = client.ping().await.unwrap_err();
    assert!(err.is_closed(), "{err:?}");
    // Closing again is a no-op.
    within("a second close", client.close()).await;
}

#[derive(Default)]
struct Recorder {
    logs: Mutex<Vec<(String, LogLevel, Value)>>,
    updates: Mutex<Vec<String>>,
    samples: AtomicUsize,
}

struct Handler(Arc<Recorder>);

impl ClientHandler for Handler {
    fn supports_sampling(&self) -> bool {
        true
    }

    fn supports_elicitation(&self) -> bool {
        true
    }

    async fn create_message(
        &self,
        server: &str,
        params: CreateMessageParams,
    ) -> Result<CreateMessageResult, ErrorObject> {
        assert_eq!(server, "mock");
        self.0.samples.fetch_add(1, Ordering::SeqCst);
        assert_eq!(params.max_tokens, 5);
        Ok(CreateMessageResult::text("test-model", "4"))
    }

    async fn elicit(
        &self,
        _server: &str,
        params: ElicitParams,
    ) -> Result<ElicitResult, ErrorObject> {
        assert_eq!(params.message, "name?");
        let mut content = Map::new();
        content.insert("name".into(), json!("Ada"));
        Ok(ElicitResult::accept(content))
    }

    fn on_log(&self, server: &str, message: &LogMessage) {
        lock(&self.0.logs).push((server.to_owned(), message.level, message.data.clone()));
    }

    fn on_resource_updated(&self, _server: &str, uri: &str) {
        lock(&self.0.updates).push(uri.to_owned());
    }
}

#[tokio::test]
async fn sampling_and_elicitation_go_through_the_handler_with_defaults_filled() {
    let recorder = Arc::new(Recorder::default());
    let (client, mock) = mock(spec(), Handler(Arc::clone(&recorder))).await;
    let params = lock(&mock.state.requests)[0].2.clone();
    assert_eq!(
        params["capabilities"],
        json!({"sampling": {}, "elicitation": {"form": {}}})
    );
    let result = within(
        "ask",
        client.call_tool("ask", json!({}), ToolCallOptions::new()),
    )
    .await
    .unwrap();
    let structured = result.structured_content.unwrap();
    assert_eq!(structured["sampling"]["ok"]["content"]["text"], "4");
    assert_eq!(structured["sampling"]["ok"]["model"], "test-model");
    assert_eq!(
        structured["elicitation"]["ok"],
        json!({"action": "accept", "content": {"name": "Ada", "age": 42, "pet": "dog"}})
    );
    assert_eq!(recorder.samples.load(Ordering::SeqCst), 1);
}

/// URL-mode elicitation is not offered, so a server that asks for it anyway gets `-32602`
/// and the form handler never sees it (it would panic on the message).
#[tokio::test]
async fn a_url_mode_elicitation_is_refused_before_the_form_handler() {
    let recorder = Arc::new(Recorder::default());
    let (client, _mock) = mock(spec(), Handler(Arc::clone(&recorder))).await;
    let result = within(
        "ask_url",
        client.call_tool("ask_url", json!({}), ToolCallOptions::new()),
    )
    .await
    .unwrap();
    let structured = result.structured_content.unwrap();
    assert_eq!(structured["elicitation"]["error"], -32602, "{structured}");
}

#[tokio::test]
async fn without_a_handler_sampling_and_elicitation_are_method_not_found() {
    let (client, mock) = mock(spec(), NoHandler).await;
    assert_eq!(lock(&mock.state.requests)[0].2["capabilities"], json!({}));
    let result = client
        .call_tool("ask", json!({}), ToolCallOptions::new())
        .await
        .unwrap();
    let structured = result.structured_content.unwrap();
    assert_eq!(structured["sampling"]["error"], -32601);
    assert_eq!(structured["elicitation"]["error"], -32601);
}

#[tokio::test]
async fn log_messages_and_resource_updates_reach_the_handler() {
    let recorder = Arc::new(Recorder::default());
    let (client, mock) = mock(spec(), Handler(Arc::clone(&recorder))).await;
    client.set_log_level(LogLevel::Debug).await.unwrap();
    client.subscribe("mem://a").await.unwrap();
    mock.notify(
        "notifications/message",
        Some(json!({"level": "warning", "logger": "x", "data": {"n": 1}})),
    )
    .await;
    mock.notify(
        "notifications/resources/updated",
        Some(json!({"uri": "mem://a"})),
    )
    .await;
    eventually("the notifications", || {
        !lock(&recorder.updates).is_empty() && !lock(&recorder.logs).is_empty()
    })
    .await;
    assert_eq!(
        lock(&recorder.logs)[0],
        ("mock".to_owned(), LogLevel::Warning, json!({"n": 1}))
    );
    assert_eq!(lock(&recorder.updates)[0], "mem://a");
    client.unsubscribe("mem://a").await.unwrap();
    assert_eq!(mock.state.count("logging/setLevel"), 1);
    assert_eq!(mock.state.count("resources/unsubscribe"), 1);
}

#[tokio::test]
async fn a_storm_of_list_changed_costs_one_extra_listing() {
    let (client, mock) = mock(spec(), NoHandler).await;
    client.list_tools().await.unwrap();
    assert_eq!(mock.state.count("tools/list"), 1);
    let before = client.list_revision();
    *lock(&mock.state.tool_pages) = vec![vec!["fresh".into()]];
    for _ in 0..100 {
        mock.notify("notifications/tools/list_changed", None).await;
    }
    let revision = within("the refresh", client.list_changed_since(before)).await;
    assert!(revision > before);
    assert_eq!(
        client
            .tools()
            .iter()
            .map(|t| t.name.as_str())
            .collect::<Vec<_>>(),
        ["fresh"]
    );
    // Nothing more follows.
    tokio::time::sleep(Duration::from_millis(1000)).await;
    assert_eq!(mock.state.count("tools/list"), 2);
    // Lists nobody asked for are not refreshed.
    mock.notify("notifications/prompts/list_changed", None)
        .await;
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(mock.state.count("prompts/list"), 0);
}

/// `prompts/list_changed` re-lists the prompts, `resources/list_changed` the resources and
/// their templates, each into the cache the getters read.
#[tokio::test]
async fn prompts_resources_and_templates_are_refreshed_on_list_changed() {
    let (client, mock) = mock(spec(), NoHandler).await;
    client.list_prompts().await.unwrap();
    client.list_resources().await.unwrap();
    client.list_resource_templates().await.unwrap();
    let names = |client: &sidewire_mcp::Client| {
        let prompts: Vec<String> = client.prompts().iter().map(|p| p.name.clone()).collect();
        let resources: Vec<String> = client.resources().iter().map(|r| r.uri.clone()).collect();
        let templates: Vec<String> = (client.resource_templates().iter())
            .map(|t| t.uri_template.clone())
            .collect();
        (prompts, resources, templates)
    };
    assert_eq!(names(&client).0, ["greet"]);

    let before = client.list_revision();
    mock.notify("notifications/prompts/list_changed", None)
        .await;
    within("the prompts refresh", client.list_changed_since(before)).await;
    assert_eq!(names(&client).0, ["greet", "greet2"]);
    assert_eq!(mock.state.count("resources/list"), 1);

    let before = client.list_revision();
    mock.notify("notifications/resources/list_changed", None)
        .await;
    within("the resources refresh", client.list_changed_since(before)).await;
    // The templates ride along with the resources, in the same refresh cycle (the revision
    // moves once both are stored).
    let (prompts, resources, templates) = names(&client);
    assert_eq!(prompts, ["greet", "greet2"]);
    assert_eq!(resources, ["mem://a", "mem://a2"]);
    assert_eq!(templates, ["mem://{x}", "mem2://{x}"]);
}

#[tokio::test]
async fn prompts_resources_completion_and_ping() {
    let (client, mock) = mock(spec(), NoHandler).await;
    let prompts = client.list_prompts().await.unwrap();
    assert_eq!(prompts[0].name, "greet");
    assert!(prompts[0].arguments[0].required);
    let got = client
        .get_prompt(
            "greet",
            BTreeMap::from([("who".to_owned(), "Ada".to_owned())]),
        )
        .await
        .unwrap();
    assert_eq!(got.messages[0].content.as_text(), Some("hello Ada"));
    let resources = client.list_resources().await.unwrap();
    assert_eq!(resources[0].uri, "mem://a");
    let templates = client.list_resource_templates().await.unwrap();
    assert_eq!(templates[0].uri_template, "mem://{x}");
    let read = client.read_resource("mem://a").await.unwrap();
    assert_eq!(read.contents[0].text.as_deref(), Some("contents"));
    let completion = client
        .complete(
            CompletionRef::Prompt {
                name: "greet".into(),
            },
            "who",
            "A",
            BTreeMap::new(),
        )
        .await
        .unwrap();
    assert_eq!(completion.values, ["A1"]);
    client.ping().await.unwrap();
    assert_eq!(mock.state.count("ping"), 1);
    assert_eq!(client.prompts().len(), 1);
    assert_eq!(client.resources().len(), 1);
}

#[tokio::test]
async fn calls_overlap_freely() {
    let (client, mock) = mock(spec(), NoHandler).await;
    let calls: Vec<_> = (0..16)
        .map(|_| client.call_tool("sleep", json!({"ms": 300}), ToolCallOptions::new()))
        .collect();
    let started = Instant::now();
    let results = within(
        "16 overlapping calls",
        futures_util::future::join_all(calls),
    )
    .await;
    assert!(results.iter().all(Result::is_ok));
    assert!(
        started.elapsed() < Duration::from_millis(2000),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(mock.state.in_flight.load(Ordering::SeqCst), 0);
}
