use super::*;

#[test]
fn starter_rewrite_strips_the_prefix_and_appends_the_mark() {
    assert_eq!(
        starter_rewrite("starter: fix teh tests").as_deref(),
        Some("fix teh tests [rewritten by starter-extension]")
    );
    assert_eq!(
        starter_rewrite("starter: ").as_deref(),
        Some(" [rewritten by starter-extension]")
    );
    assert_eq!(starter_rewrite("fix the tests"), None);
    // The prefix must start the text and is case-sensitive.
    assert_eq!(starter_rewrite(" starter: x"), None);
    assert_eq!(starter_rewrite("Starter: x"), None);
    assert_eq!(starter_rewrite("starter:x"), None);
}

#[test]
fn samples_are_well_formed() {
    for extension in [starter(), allow_all(), status_card(), scripted_model()] {
        extension
            .check()
            .expect("the samples register nothing twice");
        assert_eq!(extension.version, SAMPLE_VERSION);
    }
    assert_eq!(starter().name, STARTER_NAME);
    assert_eq!(allow_all().name, ALLOW_ALL_NAME);
    assert_eq!(status_card().name, STATUS_CARD_NAME);
}

fn request(messages: &[(ProviderRole, &str)], tools: &[&str]) -> ProviderRequest {
    ProviderRequest {
        messages: messages
            .iter()
            .map(|(role, content)| sidewire_ext_protocol::ProviderMessage {
                role: Some(*role),
                content: (*content).to_owned(),
                ..Default::default()
            })
            .collect(),
        tools: tools
            .iter()
            .map(|name| sidewire_ext_protocol::ProviderToolSchema {
                name: (*name).to_owned(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

fn shape(chunks: &[ProviderChunk]) -> Vec<(&'static str, String)> {
    chunks
        .iter()
        .map(|c| (c.kind.as_str(), c.text.clone()))
        .collect()
}

#[test]
fn the_scripted_model_echoes_with_reasoning() {
    let chunks = scripted_chunks(&request(&[(ProviderRole::User, "hello  there")], &[]));
    let shape = shape(&chunks);
    assert_eq!(shape[0].0, "reasoning");
    let text: String = shape
        .iter()
        .filter(|(kind, _)| *kind == "text")
        .map(|(_, t)| t.as_str())
        .collect();
    assert_eq!(text, "You said: hello there");
    assert_eq!(shape.len(), 1 + 4 + 2, "reasoning, four words, usage, done");
    let usage = chunks[chunks.len() - 2].usage.clone().expect("usage");
    assert_eq!(usage.prompt_tokens, 2);
    assert_eq!(usage.finish_reason, "stop");
    assert_eq!(shape.last().unwrap().0, "done");
}

#[test]
fn the_scripted_model_calls_an_add_tool_when_asked_and_offered() {
    let asked = [(ProviderRole::User, "Could you add 2 and -40?")];
    let chunks = scripted_chunks(&request(&asked, &["notes", "mcp__calc__add"]));
    let kinds: Vec<_> = chunks.iter().map(|c| c.kind.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "reasoning",
            "tool_call_start",
            "tool_call_args_delta",
            "tool_call",
            "usage",
            "done"
        ]
    );
    assert_eq!(
        chunks[0].text,
        "The user wants 2 + -40; I will call mcp__calc__add."
    );
    let call = chunks[3].tool_call.clone().expect("a tool call");
    assert_eq!(call.id, SCRIPTED_CALL_ID);
    assert_eq!(call.name, "mcp__calc__add");
    assert_eq!(call.arguments, r#"{"a":2,"b":-40}"#);
    assert_eq!(chunks[2].arg_chars, Some(call.arguments.len() as u64));
    assert_eq!(
        chunks[4].usage.as_ref().unwrap().finish_reason,
        "tool_calls"
    );
    // Without an add tool, or without two integers, it only echoes.
    for chunks in [
        scripted_chunks(&request(&asked, &["notes"])),
        scripted_chunks(&request(&[(ProviderRole::User, "add two and 3")], &["add"])),
    ] {
        assert!(chunks.iter().all(|c| c.tool_call.is_none()));
    }
}

#[test]
fn the_scripted_model_reports_a_tool_result() {
    let chunks = scripted_chunks(&request(
        &[
            (ProviderRole::User, "add 2 and 3"),
            (ProviderRole::Tool, " 5 "),
        ],
        &["add"],
    ));
    let text: String = chunks
        .iter()
        .filter(|c| c.kind == ChunkType::Text)
        .map(|c| c.text.as_str())
        .collect();
    assert_eq!(text, "The tool said: 5.");
    assert!(chunks.iter().all(|c| c.kind != ChunkType::Reasoning));
}

#[test]
fn the_scripted_model_lists_one_ref_under_its_plugin() {
    let model = ScriptedModel::new("acme");
    assert_eq!(model.provider_ref(), "plugin/acme/scripted/echo-1");
    let descriptor = model.descriptor();
    assert_eq!(descriptor.reference, model.provider_ref());
    assert_eq!(
        (descriptor.tools, descriptor.reasoning),
        (Some(true), Some(true))
    );
    assert!(!descriptor.display_name.is_empty());
    let extension = scripted_model();
    extension.check().expect("well formed");
    assert_eq!(extension.name, SCRIPTED_MODEL_NAME);
    assert!(extension.provider.is_some());
}
