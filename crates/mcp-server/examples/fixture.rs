//! The conformance fixture: an MCP server offering the tools, prompts and resources the
//! official conformance suite's server scenarios call (`@modelcontextprotocol/conformance`,
//! `conformance server --url …`), in both eras. `.ci/conformance/server.sh` runs the suite
//! against it, and `.ci/mcp-server-clients.sh` drives it with real clients over stdio and HTTP.
//!
//! ```text
//! cargo run -p sidewire-mcp-server --example fixture                   # stdio
//! cargo run -p sidewire-mcp-server --example fixture -- --http 127.0.0.1:3000   # http://127.0.0.1:3000/mcp
//! ```
//!
//! With `--http`, the first line on stdout is `listening on http://ADDRESS/mcp` (port 0 picks a
//! free port).

use std::time::Duration;

use serde_json::{Map, Value, json};
use sidewire_mcp_server::http::{HttpConfig, serve};
use sidewire_mcp_server::{
    CallToolResult, Capabilities, CompleteRequest, Completion, Error, GetPromptResult, Handler,
    HandlerContext, Implementation, InputRequest, InputRequired, ListKind, LogLevel, Prompt,
    PromptGet, ReadResourceResult, Reply, Resource, ResourceTemplate, Server, Tool,
    ToolCallRequest,
};

/// A 1×1 PNG.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
/// A 44-byte WAVE.
const WAV: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

struct Fixture;

fn decode<T: serde::de::DeserializeOwned>(value: Value) -> Result<T, Error> {
    serde_json::from_value(value).map_err(|err| Error::internal(err.to_string()))
}

fn text(text: impl Into<String>) -> Result<Reply<CallToolResult>, Error> {
    Ok(Reply::Complete(CallToolResult::text(text)))
}

fn tools() -> Vec<Value> {
    let empty = json!({"type": "object", "properties": {}});
    let mut tools = vec![
        json!({"name": "test_simple_text", "description": "Returns simple text content", "inputSchema": empty}),
        json!({"name": "test_image_content", "description": "Returns image content", "inputSchema": empty}),
        json!({"name": "test_audio_content", "description": "Returns audio content", "inputSchema": empty}),
        json!({"name": "test_embedded_resource", "description": "Returns an embedded resource", "inputSchema": empty}),
        json!({"name": "test_multiple_content_types", "description": "Returns text, image and resource content", "inputSchema": empty}),
        json!({"name": "test_tool_with_logging", "description": "Logs three messages while it runs", "inputSchema": empty}),
        json!({"name": "test_tool_with_progress", "description": "Reports progress three times", "inputSchema": empty}),
        json!({"name": "test_error_handling", "description": "Always fails with a tool error", "inputSchema": empty}),
        json!({"name": "test_sampling", "description": "Asks the client's model", "inputSchema": {
            "type": "object", "properties": {"prompt": {"type": "string", "description": "The prompt"}}, "required": ["prompt"]}}),
        json!({"name": "test_elicitation", "description": "Asks the user", "inputSchema": {
            "type": "object", "properties": {"message": {"type": "string", "description": "The question"}}, "required": ["message"]}}),
        json!({"name": "test_elicitation_sep1034_defaults", "description": "Asks the user with defaults (SEP-1034)", "inputSchema": empty}),
        json!({"name": "test_elicitation_sep1330_enums", "description": "Asks the user with enums (SEP-1330)", "inputSchema": empty}),
        json!({"name": "test_reconnection", "description": "Closes its stream before answering (SSE polling)", "inputSchema": empty}),
        json!({"name": "json_schema_2020_12_tool", "description": "Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)", "inputSchema": {
            "$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
            "$defs": {"address": {"$anchor": "addressDef", "type": "object", "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
            "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}, "contactMethod": {"type": "string", "enum": ["phone", "email"]}, "phone": {"type": "string"}, "email": {"type": "string"}},
            "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
            "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
            "then": {"required": ["phone"]}, "else": {"required": ["email"]}, "additionalProperties": false}}),
    ];
    tools.extend(modern_tools());
    tools
}

/// The tools the 2026-07-28 scenarios call: multi-round-trip input requests, diagnostics,
/// and a tool with an `x-mcp-header` argument.
fn modern_tools() -> Vec<Value> {
    let empty = json!({"type": "object", "properties": {}});
    let mut tools: Vec<Value> = [
        ("test_missing_capability", "Needs the client's sampling capability"),
        ("test_streaming_elicitation", "Answers without asking the client anything"),
        ("test_logging_tool", "Logs only when the request names a log level"),
        ("test_trigger_tool_change", "Announces that the tool list changed"),
        ("test_trigger_prompt_change", "Announces that the prompt list changed"),
        ("test_input_required_result_elicitation", "Asks the user's name"),
        ("test_input_required_result_sampling", "Asks the client's model a question"),
        ("test_input_required_result_list_roots", "Asks the client's roots"),
        ("test_input_required_result_request_state", "Asks for a confirmation, carrying state"),
        ("test_input_required_result_multiple_inputs", "Asks three things at once"),
        ("test_input_required_result_multi_round", "Asks two things, one round each"),
        ("test_input_required_result_tampered_state", "Asks for a confirmation, carrying sealed state"),
        ("test_input_required_result_capabilities", "Asks only what the client can answer"),
    ]
    .into_iter()
    .map(|(name, description)| json!({"name": name, "description": description, "inputSchema": empty}))
    .collect();
    tools.push(json!({"name": "test_custom_header", "description": "Mirrors its region argument into Mcp-Param-Region",
        "inputSchema": {"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}, "required": ["region"]}}));
    tools
}

/// The content of an accepted elicitation answer under `key`.
fn accepted<'a>(answers: &'a Map<String, Value>, key: &str) -> Option<&'a Map<String, Value>> {
    let answer = answers.get(key)?.as_object()?;
    if answer.get("action")?.as_str()? != "accept" {
        return None;
    }
    answer.get("content")?.as_object()
}

fn elicit(message: &str, property: &str, kind: &str) -> InputRequest {
    InputRequest::Elicit(
        json!({"message": message, "requestedSchema": {"type": "object",
        "properties": {property: {"type": kind}}, "required": [property]}}),
    )
}

fn sample(text: &str, max_tokens: u32) -> InputRequest {
    InputRequest::Sample(
        json!({"messages": [{"role": "user", "content": {"type": "text", "text": text}}], "maxTokens": max_tokens}),
    )
}

fn ask(input: InputRequired) -> Result<Reply<CallToolResult>, Error> {
    Ok(Reply::InputRequired(input))
}

impl Handler for Fixture {
    fn info(&self) -> Implementation {
        let mut info = Implementation::default();
        info.name = "sidewire-conformance-fixture".to_owned();
        info.version = env!("CARGO_PKG_VERSION").to_owned();
        info
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::default()
            .tools()
            .prompts()
            .resources(true)
            .completions()
            .logging()
            .list_changed()
    }

    async fn list_tools(&self, _ctx: &HandlerContext) -> Result<Vec<Tool>, Error> {
        tools().into_iter().map(decode).collect()
    }

    async fn call_tool(
        &self,
        call: ToolCallRequest,
        ctx: HandlerContext,
    ) -> Result<Reply<CallToolResult>, Error> {
        let answers = ctx.input_responses();
        match call.name.as_str() {
            "test_simple_text" => text("This is a simple text response for testing."),
            "test_image_content" => Ok(Reply::Complete(decode(json!({
                "content": [{"type": "image", "data": PNG, "mimeType": "image/png"}]}))?)),
            "test_audio_content" => Ok(Reply::Complete(decode(json!({
                "content": [{"type": "audio", "data": WAV, "mimeType": "audio/wav"}]}))?)),
            "test_embedded_resource" => Ok(Reply::Complete(decode(json!({
                "content": [{"type": "resource", "resource": {"uri": "test://embedded-resource",
                    "mimeType": "text/plain", "text": "This is an embedded resource content."}}]}))?)),
            "test_multiple_content_types" => Ok(Reply::Complete(decode(json!({"content": [
                {"type": "text", "text": "Multiple content types test:"},
                {"type": "image", "data": PNG, "mimeType": "image/png"},
                {"type": "resource", "resource": {"uri": "test://mixed-content-resource",
                    "mimeType": "application/json", "text": "{\"test\":\"data\",\"value\":123}"}}]}))?)),
            "test_tool_with_logging" => {
                for (n, message) in [
                    "Tool execution started",
                    "Tool processing data",
                    "Tool execution completed",
                ]
                .into_iter()
                .enumerate()
                {
                    if n > 0 {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                    ctx.log(LogLevel::Info, None, json!(message)).await;
                }
                text("Tool with logging executed successfully")
            }
            "test_tool_with_progress" => {
                for step in [0.0, 50.0, 100.0] {
                    let message = format!("Completed step {step} of 100");
                    ctx.progress(step, Some(100.0), Some(&message)).await;
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                let token = match ctx.progress_token() {
                    Some(Value::String(token)) => token.clone(),
                    Some(other) => other.to_string(),
                    None => "no progress token".to_owned(),
                };
                text(token)
            }
            "test_error_handling" => {
                let mut result =
                    CallToolResult::text("This tool intentionally returns an error for testing");
                result.is_error = true;
                Ok(Reply::Complete(result))
            }
            "test_sampling" => match answers.get("sampling") {
                Some(answer) => text(format!(
                    "LLM response: {}",
                    answer["content"]["text"].as_str().unwrap_or_default()
                )),
                None => {
                    let prompt = call
                        .arguments
                        .get("prompt")
                        .and_then(Value::as_str)
                        .unwrap_or_default();
                    Ok(Reply::InputRequired(InputRequired::new().request(
                        "sampling",
                        InputRequest::Sample(json!({
                            "messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
                            "maxTokens": 100,
                        })),
                    )))
                }
            },
            "test_elicitation" => match answers.get("elicitation") {
                Some(answer) => text(format!(
                    "User response: action={}, content={}",
                    answer["action"].as_str().unwrap_or_default(),
                    answer["content"]
                )),
                None => {
                    let message = call
                        .arguments
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or_default();
                    Ok(Reply::InputRequired(InputRequired::new().request(
                        "elicitation",
                        InputRequest::Elicit(json!({
                            "message": message,
                            "requestedSchema": {"type": "object", "properties": {
                                "username": {"type": "string", "description": "User's response"},
                                "email": {"type": "string", "description": "User's email address"}},
                                "required": ["username", "email"]},
                        })),
                    )))
                }
            },
            "test_elicitation_sep1034_defaults" => elicit_then_report(
                answers,
                json!({
                    "message": "Please review and update the form fields with defaults",
                    "requestedSchema": {"type": "object", "properties": {
                        "name": {"type": "string", "description": "User name", "default": "John Doe"},
                        "age": {"type": "integer", "description": "User age", "default": 30},
                        "score": {"type": "number", "description": "User score", "default": 95.5},
                        "status": {"type": "string", "description": "User status", "enum": ["active", "inactive", "pending"], "default": "active"},
                        "verified": {"type": "boolean", "description": "Verification status", "default": true}},
                        "required": []},
                }),
            ),
            "test_elicitation_sep1330_enums" => elicit_then_report(
                answers,
                json!({
                    "message": "Please select options from the enum fields",
                    "requestedSchema": {"type": "object", "properties": {
                        "untitledSingle": {"type": "string", "description": "Select one option", "enum": ["option1", "option2", "option3"]},
                        "titledSingle": {"type": "string", "description": "Select one option with titles", "oneOf": [
                            {"const": "value1", "title": "First Option"}, {"const": "value2", "title": "Second Option"}, {"const": "value3", "title": "Third Option"}]},
                        "legacyEnum": {"type": "string", "description": "Select one option (legacy)", "enum": ["opt1", "opt2", "opt3"], "enumNames": ["Option One", "Option Two", "Option Three"]},
                        "untitledMulti": {"type": "array", "description": "Select multiple options", "minItems": 1, "maxItems": 3, "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
                        "titledMulti": {"type": "array", "description": "Select multiple options with titles", "minItems": 1, "maxItems": 3, "items": {"anyOf": [
                            {"const": "value1", "title": "First Choice"}, {"const": "value2", "title": "Second Choice"}, {"const": "value3", "title": "Third Choice"}]}}},
                        "required": []},
                }),
            ),
            "test_reconnection" => {
                ctx.close_stream().await;
                tokio::time::sleep(Duration::from_millis(100)).await;
                text(
                    "Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure.",
                )
            }
            "json_schema_2020_12_tool" => text(format!(
                "JSON Schema 2020-12 tool called with: {}",
                Value::Object(call.arguments)
            )),
            other => modern_call(other, &call, &ctx).await,
        }
    }

    async fn list_prompts(&self, _ctx: &HandlerContext) -> Result<Vec<Prompt>, Error> {
        [
            json!({"name": "test_simple_prompt", "title": "Simple Test Prompt", "description": "A simple prompt without arguments"}),
            json!({"name": "test_prompt_with_arguments", "title": "Prompt With Arguments", "description": "A prompt with required arguments", "arguments": [
                {"name": "arg1", "description": "First test argument", "required": true},
                {"name": "arg2", "description": "Second test argument", "required": true}]}),
            json!({"name": "test_prompt_with_embedded_resource", "title": "Prompt With Embedded Resource", "description": "A prompt that includes an embedded resource", "arguments": [
                {"name": "resourceUri", "description": "URI of the resource to embed", "required": true}]}),
            json!({"name": "test_prompt_with_image", "title": "Prompt With Image", "description": "A prompt that includes image content"}),
            json!({"name": "test_input_required_result_prompt", "title": "Prompt Asking For HandlerContext", "description": "A prompt that asks the user for context first"}),
        ]
        .into_iter()
        .map(decode)
        .collect()
    }

    async fn get_prompt(
        &self,
        get: PromptGet,
        _ctx: HandlerContext,
    ) -> Result<Reply<GetPromptResult>, Error> {
        let arg = |name: &str| {
            get.arguments
                .get(name)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        let messages = match get.name.as_str() {
            "test_simple_prompt" => {
                json!([{"role": "user", "content": {"type": "text", "text": "This is a simple prompt for testing."}}])
            }
            "test_prompt_with_arguments" => json!([{"role": "user", "content": {"type": "text",
                "text": format!("Prompt with arguments: arg1='{}', arg2='{}'", arg("arg1"), arg("arg2"))}}]),
            "test_prompt_with_embedded_resource" => json!([
                {"role": "user", "content": {"type": "resource", "resource": {"uri": arg("resourceUri"),
                    "mimeType": "text/plain", "text": "Embedded resource content for testing."}}},
                {"role": "user", "content": {"type": "text", "text": "Please process the embedded resource above."}}]),
            "test_prompt_with_image" => json!([
                {"role": "user", "content": {"type": "image", "data": PNG, "mimeType": "image/png"}},
                {"role": "user", "content": {"type": "text", "text": "Please analyze the image above."}}]),
            other => return modern_prompt(other, &get, &_ctx),
        };
        Ok(Reply::Complete(decode(json!({ "messages": messages }))?))
    }

    async fn list_resources(&self, _ctx: &HandlerContext) -> Result<Vec<Resource>, Error> {
        [
            json!({"uri": "test://static-text", "name": "static-text", "title": "Static Text Resource", "description": "A static text resource for testing", "mimeType": "text/plain"}),
            json!({"uri": "test://static-binary", "name": "static-binary", "title": "Static Binary Resource", "description": "A static binary resource (image) for testing", "mimeType": "image/png"}),
            json!({"uri": "test://watched-resource", "name": "watched-resource", "title": "Watched Resource", "description": "A resource clients may subscribe to", "mimeType": "text/plain"}),
        ]
        .into_iter()
        .map(decode)
        .collect()
    }

    async fn list_resource_templates(
        &self,
        _ctx: &HandlerContext,
    ) -> Result<Vec<ResourceTemplate>, Error> {
        Ok(vec![decode(
            json!({"uriTemplate": "test://template/{id}/data", "name": "template",
            "title": "Template Resource", "description": "A resource template with an id", "mimeType": "application/json"}),
        )?])
    }

    async fn read_resource(
        &self,
        uri: String,
        _ctx: HandlerContext,
    ) -> Result<Reply<ReadResourceResult>, Error> {
        let contents = match uri.as_str() {
            "test://static-text" => {
                json!({"uri": uri, "mimeType": "text/plain", "text": "This is the content of the static text resource."})
            }
            "test://static-binary" => json!({"uri": uri, "mimeType": "image/png", "blob": PNG}),
            "test://watched-resource" => {
                json!({"uri": uri, "mimeType": "text/plain", "text": "Watched resource content"})
            }
            _ => match uri
                .strip_prefix("test://template/")
                .and_then(|rest| rest.strip_suffix("/data"))
            {
                Some(id) if !id.is_empty() && !id.contains('/') => {
                    json!({"uri": uri, "mimeType": "application/json",
                    "text": json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")}).to_string()})
                }
                _ => return Err(Error::ResourceNotFound { uri }),
            },
        };
        Ok(Reply::Complete(decode(json!({ "contents": [contents] }))?))
    }

    async fn complete(
        &self,
        request: CompleteRequest,
        _ctx: HandlerContext,
    ) -> Result<Completion, Error> {
        let values: Vec<String> = ["testValue", "testValue2"]
            .into_iter()
            .filter(|value| value.starts_with(&request.value))
            .map(str::to_owned)
            .collect();
        decode(json!({"values": values, "total": values.len(), "hasMore": false}))
    }
}

/// Elicits with `params`, then reports the answer.
fn elicit_then_report(
    answers: &Map<String, Value>,
    params: Value,
) -> Result<Reply<CallToolResult>, Error> {
    match answers.get("elicitation") {
        Some(answer) => text(format!(
            "Elicitation completed: action={}, content={}",
            answer["action"].as_str().unwrap_or_default(),
            answer["content"]
        )),
        None => Ok(Reply::InputRequired(
            InputRequired::new().request("elicitation", InputRequest::Elicit(params)),
        )),
    }
}

async fn modern_call(
    name: &str,
    call: &ToolCallRequest,
    ctx: &HandlerContext,
) -> Result<Reply<CallToolResult>, Error> {
    let answers = ctx.input_responses();
    let state = ctx.request_state();
    match name {
        "test_missing_capability" => match ctx.client_has("sampling") {
            true => text("The client offers sampling"),
            false => Err(Error::MissingCapability("sampling")),
        },
        "test_streaming_elicitation" => text("Streaming complete"),
        "test_logging_tool" => {
            ctx.log(LogLevel::Info, None, json!("Logging evaluated"))
                .await;
            text("Logging evaluated")
        }
        "test_trigger_tool_change" => {
            ctx.notifier().list_changed(ListKind::Tools);
            text("Mutation triggered")
        }
        "test_trigger_prompt_change" => {
            ctx.notifier().list_changed(ListKind::Prompts);
            text("Mutation triggered")
        }
        "test_custom_header" => text(format!(
            "region={}",
            call.arguments
                .get("region")
                .and_then(Value::as_str)
                .unwrap_or_default()
        )),
        "test_input_required_result_elicitation" => {
            match accepted(answers, "user_name").and_then(|content| content.get("name")?.as_str()) {
                Some(name) => text(format!("Hello, {name}!")),
                None => ask(InputRequired::new()
                    .request("user_name", elicit("What is your name?", "name", "string"))),
            }
        }
        "test_input_required_result_sampling" => {
            match answers
                .get("capital_question")
                .and_then(|answer| answer["content"]["text"].as_str())
            {
                Some(answer) => text(format!("The model said: {answer}")),
                None => ask(InputRequired::new().request(
                    "capital_question",
                    sample("What is the capital of France?", 100),
                )),
            }
        }
        "test_input_required_result_list_roots" => {
            match answers
                .get("client_roots")
                .and_then(|answer| answer["roots"].as_array())
            {
                Some(roots) => text(format!("The client has {} root(s)", roots.len())),
                None => ask(InputRequired::new().request("client_roots", InputRequest::ListRoots)),
            }
        }
        "test_input_required_result_request_state"
        | "test_input_required_result_tampered_state" => {
            let want = json!({"step": "confirm", "tool": name});
            match (state, accepted(answers, "confirm")) {
                (Some(state), Some(_)) if *state == want => {
                    text("state-ok: requestState validated")
                }
                _ => ask(InputRequired::new()
                    .request("confirm", elicit("Please confirm", "ok", "boolean"))
                    .state(want)),
            }
        }
        "test_input_required_result_multiple_inputs" => {
            let name =
                accepted(answers, "user_name").and_then(|content| content.get("name")?.as_str());
            let greeting = answers
                .get("greeting")
                .and_then(|answer| answer["content"]["text"].as_str());
            let roots = answers
                .get("client_roots")
                .and_then(|answer| answer["roots"].as_array());
            match (name, greeting, roots) {
                (Some(name), Some(greeting), Some(roots)) => {
                    text(format!("{greeting} {name}, with {} root(s)", roots.len()))
                }
                _ => ask(InputRequired::new()
                    .request("user_name", elicit("What is your name?", "name", "string"))
                    .request("greeting", sample("Generate a greeting", 50))
                    .request("client_roots", InputRequest::ListRoots)
                    .state(json!({"step": "all"}))),
            }
        }
        "test_input_required_result_multi_round" => {
            let step = state.and_then(|state| state["step"].as_u64());
            match step {
                Some(1) => match accepted(answers, "step1")
                    .and_then(|content| content.get("name")?.as_str())
                {
                    Some(name) => ask(InputRequired::new()
                        .request(
                            "step2",
                            elicit("Step 2: What is your favorite color?", "color", "string"),
                        )
                        .state(json!({"step": 2, "name": name}))),
                    None => ask(InputRequired::new()
                        .request(
                            "step1",
                            elicit("Step 1: What is your name?", "name", "string"),
                        )
                        .state(json!({"step": 1}))),
                },
                Some(2) => {
                    let name = state
                        .and_then(|state| state["name"].as_str())
                        .unwrap_or_default();
                    match accepted(answers, "step2")
                        .and_then(|content| content.get("color")?.as_str())
                    {
                        Some(color) => {
                            text(format!("Multi-round complete for {name} who likes {color}"))
                        }
                        None => ask(InputRequired::new()
                            .request(
                                "step2",
                                elicit("Step 2: What is your favorite color?", "color", "string"),
                            )
                            .state(json!({"step": 2, "name": name}))),
                    }
                }
                _ => ask(InputRequired::new()
                    .request(
                        "step1",
                        elicit("Step 1: What is your name?", "name", "string"),
                    )
                    .state(json!({"step": 1}))),
            }
        }
        "test_input_required_result_capabilities" => {
            let mut input = InputRequired::new();
            if ctx.client_has("elicitation") && accepted(answers, "user_name").is_none() {
                input = input.request("user_name", elicit("What is your name?", "name", "string"));
            }
            if ctx.client_has("sampling") && !answers.contains_key("sample_input") {
                input = input.request("sample_input", sample("Sample request", 50));
            }
            if input.requests.is_empty() {
                text("Asked only what the client can answer")
            } else {
                ask(input)
            }
        }
        _ => Err(Error::invalid_params(format!("unknown tool: {name}"))),
    }
}

fn modern_prompt(
    name: &str,
    _get: &PromptGet,
    ctx: &HandlerContext,
) -> Result<Reply<GetPromptResult>, Error> {
    if name != "test_input_required_result_prompt" {
        return Err(Error::invalid_params(format!("unknown prompt: {name}")));
    }
    match accepted(ctx.input_responses(), "user_context")
        .and_then(|content| content.get("context")?.as_str())
    {
        Some(context) => Ok(Reply::Complete(decode(
            json!({"messages": [{"role": "user",
            "content": {"type": "text", "text": format!("Prompt with context: {context}")}}]}),
        )?)),
        None => Ok(Reply::InputRequired(InputRequired::new().request(
            "user_context",
            elicit("What context should the prompt use?", "context", "string"),
        ))),
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let server = Server::new(Fixture);
    match (args.next().as_deref(), args.next()) {
        (Some("--http"), Some(address)) => {
            let listener = tokio::net::TcpListener::bind(&address).await?;
            // The address as bound (port 0 picks a free one), for the scripts that start it.
            let bound = listener.local_addr()?;
            let mut stdout = std::io::stdout();
            std::io::Write::write_all(
                &mut stdout,
                format!("listening on http://{bound}/mcp\n").as_bytes(),
            )?;
            std::io::Write::flush(&mut stdout)?;
            serve(server, listener, HttpConfig::default()).await?;
        }
        (None, _) => {
            server
                .serve_stdio(tokio::io::stdin(), tokio::io::stdout())
                .await?
        }
        _ => return Err("usage: fixture [--http ADDRESS]".into()),
    }
    Ok(())
}
