//! MCP wire types of the legacy era (2024-11-05 … 2025-11-25) that a client sends or receives.
//!
//! Plain serde data: no behaviour beyond small accessors. Types the client only receives are
//! `#[non_exhaustive]` (new optional members will keep arriving); types a handler builds have
//! constructors. Schemas, annotations and `_meta` stay JSON: they are opaque to the client and
//! handed through unchanged (a tool's are kept as their text, [`RawJson`], which a host caching
//! thousands of tools holds at a fraction of a `serde_json::Value`'s size). Unknown content kinds are kept whole as
//! [`Content::Other`] rather than failing the message.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

pub use crate::protocol::icon::Icon;

/// The protocol version this client offers.
pub const LATEST_PROTOCOL_VERSION: &str = "2025-11-25";

/// Every version this client accepts as a server's answer, newest first.
pub const SUPPORTED_PROTOCOL_VERSIONS: &[&str] =
    &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// A client or server's name and version (`clientInfo`, `serverInfo`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Implementation {
    /// The program's name.
    #[serde(default)]
    pub name: String,
    /// Its version.
    #[serde(default)]
    pub version: String,
    /// A display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its website (2025-11-25), as sent. Peer text.
    #[serde(
        default,
        rename = "websiteUrl",
        skip_serializing_if = "Option::is_none"
    )]
    pub website_url: Option<String>,
    /// Its icons (2025-11-25), as sent; see [`Icon`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub icons: Vec<Icon>,
}

impl Implementation {
    pub(crate) fn new(name: &str, version: &str) -> Self {
        Implementation {
            name: name.to_owned(),
            version: version.to_owned(),
            title: None,
            description: None,
            website_url: None,
            icons: Vec::new(),
        }
    }
}

/// A capability that may announce list changes (`tools`, `prompts`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ListCapability {
    /// The server sends `notifications/<list>/list_changed`.
    #[serde(default, deserialize_with = "lenient_bool")]
    pub list_changed: bool,
}

/// The `resources` capability.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ResourcesCapability {
    /// The server supports `resources/subscribe`.
    #[serde(default, deserialize_with = "lenient_bool")]
    pub subscribe: bool,
    /// The server sends `notifications/resources/list_changed`.
    #[serde(default, deserialize_with = "lenient_bool")]
    pub list_changed: bool,
}

/// What a server said it supports in its `initialize` result. A present member means support.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ServerCapabilities {
    /// Tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<ListCapability>,
    /// Prompts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts: Option<ListCapability>,
    /// Resources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourcesCapability>,
    /// Log messages (`logging/setLevel`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logging: Option<Value>,
    /// Argument completion (`completion/complete`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completions: Option<Value>,
    /// Experimental capabilities, verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<Value>,
    /// Tasks (2025-11-25): which task operations and task-augmented requests it supports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<crate::protocol::tasks::TasksCapability>,
}

/// A `bool` that also reads `null` as false: some servers send `"listChanged": null`.
fn lenient_bool<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<bool, D::Error> {
    Ok(Option::<bool>::deserialize(deserializer)?.unwrap_or(false))
}

/// The `initialize` result (internal: [`Client`](crate::Client)'s getters hand out its parts).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct InitializeResult {
    /// The version the server chose.
    pub(crate) protocol_version: String,
    /// What it supports.
    #[serde(default)]
    pub(crate) capabilities: ServerCapabilities,
    /// Who it is.
    #[serde(default)]
    pub(crate) server_info: Implementation,
    /// Usage hints for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) instructions: Option<String>,
}

/// The `initialize` params.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct InitializeParams {
    pub(crate) protocol_version: String,
    pub(crate) capabilities: Value,
    pub(crate) client_info: Implementation,
}

/// A JSON value kept verbatim as its text: a tool's schemas, annotations and `_meta`, which the
/// client hands through without reading. About the size of its text (a `serde_json::Value` of
/// a small schema takes several times more: each object is a tree node of some 600 bytes).
/// Equality compares the text.
#[derive(Clone)]
pub struct RawJson(Box<RawValue>);

impl RawJson {
    /// The JSON text.
    pub fn get(&self) -> &str {
        self.0.get()
    }

    /// The value, parsed.
    pub fn to_value(&self) -> Value {
        serde_json::from_str(self.get()).unwrap_or(Value::Null)
    }
}

impl From<&Value> for RawJson {
    fn from(value: &Value) -> Self {
        // A `Value` always serialises; the fallback is never taken.
        RawJson(
            serde_json::value::to_raw_value(value).unwrap_or_else(|_| RawValue::NULL.to_owned()),
        )
    }
}

impl From<Value> for RawJson {
    fn from(value: Value) -> Self {
        RawJson::from(&value)
    }
}

impl PartialEq for RawJson {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

impl PartialEq<Value> for RawJson {
    fn eq(&self, other: &Value) -> bool {
        self.to_value() == *other
    }
}

impl fmt::Debug for RawJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.get())
    }
}

impl Serialize for RawJson {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for RawJson {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Box::<RawValue>::deserialize(deserializer).map(RawJson)
    }
}

/// A tool a server offers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Tool {
    /// Its name on the server (what goes on the wire).
    pub name: String,
    /// A display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The JSON Schema of its arguments, verbatim.
    #[serde(default = "empty_object_schema")]
    pub input_schema: RawJson,
    /// The JSON Schema of its `structuredContent`, verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<RawJson>,
    /// Hints (`readOnlyHint`, `destructiveHint`, ...), verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<RawJson>,
    /// `_meta`, verbatim.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<RawJson>,
    /// How it runs (`execution`: whether it may or must run as a task); see
    /// [`Tool::task_support`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution: Option<crate::protocol::tasks::ToolExecution>,
    /// Its icons (2025-11-25), as sent; see [`Icon`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub icons: Vec<Icon>,
}

fn empty_object_schema() -> RawJson {
    RawJson::from(serde_json::json!({"type": "object"}))
}

impl Tool {
    /// A tool with this name, description and input schema (for mock servers and tests).
    pub fn new(name: &str, description: &str, input_schema: Value) -> Self {
        Tool {
            name: name.to_owned(),
            title: None,
            description: Some(description.to_owned()),
            input_schema: RawJson::from(input_schema),
            output_schema: None,
            annotations: None,
            meta: None,
            execution: None,
            icons: Vec::new(),
        }
    }

    /// A boolean hint of its annotations (`readOnlyHint`, ...), when present.
    pub fn hint(&self, key: &str) -> Option<bool> {
        self.annotations.as_ref()?.to_value().get(key)?.as_bool()
    }

    /// The server says the tool does not change its environment.
    pub fn is_read_only(&self) -> bool {
        self.hint("readOnlyHint") == Some(true) && !self.is_destructive()
    }

    /// The server says the tool may destroy things (the spec's default when not read-only).
    pub fn is_destructive(&self) -> bool {
        self.hint("destructiveHint") == Some(true)
    }
}

/// One piece of content in a tool result, prompt message or sampling message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Content {
    /// Text.
    Text {
        /// The text.
        text: String,
        /// Audience and priority hints, verbatim.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Value>,
    },
    /// A base64 image.
    Image {
        /// The base64 data.
        data: String,
        /// Its MIME type.
        #[serde(rename = "mimeType")]
        mime_type: String,
        /// Audience and priority hints, verbatim.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Value>,
    },
    /// Base64 audio.
    Audio {
        /// The base64 data.
        data: String,
        /// Its MIME type.
        #[serde(rename = "mimeType")]
        mime_type: String,
        /// Audience and priority hints, verbatim.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Value>,
    },
    /// A link to a resource the client may read.
    ResourceLink(Resource),
    /// A resource embedded in the result.
    Resource {
        /// The resource's contents.
        resource: ResourceContents,
        /// Audience and priority hints, verbatim.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Value>,
    },
    /// A model's request to run a tool (sampling with tools, 2025-11-25: in a
    /// `sampling/createMessage` answer, and in the conversation a server sends back).
    ToolUse {
        /// The tool use's id, which its [`ToolResult`](Content::ToolResult) names.
        id: String,
        /// The tool's name.
        name: String,
        /// The arguments object.
        #[serde(default)]
        input: Value,
        /// `_meta`, verbatim.
        #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
        meta: Option<Value>,
    },
    /// What a tool use gave (sampling with tools, 2025-11-25).
    ToolResult {
        /// The id of the [`ToolUse`](Content::ToolUse) it answers.
        #[serde(rename = "toolUseId")]
        tool_use_id: String,
        /// The result's content.
        #[serde(default)]
        content: Vec<Content>,
        /// Its structured content, verbatim.
        #[serde(
            default,
            rename = "structuredContent",
            skip_serializing_if = "Option::is_none"
        )]
        structured_content: Option<Value>,
        /// The tool failed.
        #[serde(default, rename = "isError", skip_serializing_if = "Option::is_none")]
        is_error: Option<bool>,
        /// `_meta`, verbatim.
        #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
        meta: Option<Value>,
    },
    /// A kind this client does not know, or a known kind it cannot read, kept whole. A member
    /// name repeated anywhere in such a block fails the decode (the kept block would otherwise
    /// re-send as something else: `Value` keeps the last of a repeated name).
    #[serde(untagged, deserialize_with = "sidewire_jsonrpc::unique_value")]
    Other(Value),
}

impl Content {
    /// Text content.
    pub fn text(text: impl Into<String>) -> Self {
        Content::Text {
            text: text.into(),
            annotations: None,
        }
    }

    /// The text, when this is text content.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Content::Text { text, .. } => Some(text),
            _ => None,
        }
    }
}

/// A resource's contents: text or a base64 blob.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ResourceContents {
    /// The resource's URI.
    pub uri: String,
    /// Its MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Text contents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Base64 binary contents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blob: Option<String>,
    /// `_meta`, verbatim.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
}

impl ResourceContents {
    /// Text contents for `uri` (for mock servers and tests).
    pub fn text(uri: &str, text: &str) -> Self {
        ResourceContents {
            uri: uri.to_owned(),
            mime_type: Some("text/plain".to_owned()),
            text: Some(text.to_owned()),
            blob: None,
            meta: None,
        }
    }
}

/// The result of `tools/call`. A tool's own failure is `is_error: true` here, not an `Err`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CallToolResult {
    /// The content.
    #[serde(default)]
    pub content: Vec<Content>,
    /// Structured output (matching the tool's output schema), verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// The tool failed; the content says why.
    #[serde(default, deserialize_with = "lenient_bool")]
    pub is_error: bool,
    /// `_meta`, verbatim.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
}

impl CallToolResult {
    /// A successful result with this text (for mock servers and tests).
    pub fn text(text: impl Into<String>) -> Self {
        CallToolResult {
            content: vec![Content::text(text)],
            ..CallToolResult::default()
        }
    }

    /// The text parts joined with newlines.
    pub fn joined_text(&self) -> String {
        let parts: Vec<&str> = self.content.iter().filter_map(Content::as_text).collect();
        parts.join("\n")
    }
}

/// A prompt template a server offers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Prompt {
    /// Its name on the server.
    pub name: String,
    /// A display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its arguments.
    #[serde(default)]
    pub arguments: Vec<PromptArgument>,
    /// Its icons (2025-11-25), as sent; see [`Icon`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub icons: Vec<Icon>,
}

impl Prompt {
    /// A prompt with this name and no arguments (for mock servers and tests).
    pub fn new(name: &str) -> Self {
        Prompt {
            name: name.to_owned(),
            title: None,
            description: None,
            arguments: Vec::new(),
            icons: Vec::new(),
        }
    }
}

/// One argument of a prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PromptArgument {
    /// Its name.
    pub name: String,
    /// A display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// It must be given.
    #[serde(default, deserialize_with = "lenient_bool")]
    pub required: bool,
}

/// Who speaks a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MessageRole {
    /// The user.
    User,
    /// The assistant.
    Assistant,
}

/// One message of a prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PromptMessage {
    /// The speaker.
    pub role: MessageRole,
    /// The content.
    pub content: Content,
}

impl PromptMessage {
    /// A message (for mock servers and tests).
    pub fn new(role: MessageRole, content: Content) -> Self {
        PromptMessage { role, content }
    }
}

/// The result of `prompts/get`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct GetPromptResult {
    /// A description of the filled-in prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The messages.
    #[serde(default)]
    pub messages: Vec<PromptMessage>,
}

impl GetPromptResult {
    /// A result with these messages (for mock servers and tests).
    pub fn new(messages: Vec<PromptMessage>) -> Self {
        GetPromptResult {
            description: None,
            messages,
        }
    }
}

/// A resource a server lists (also the body of a `resource_link` content item).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Resource {
    /// Its URI.
    pub uri: String,
    /// Its name.
    #[serde(default)]
    pub name: String,
    /// A display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Its size in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Audience and priority hints, verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
    /// Its icons (2025-11-25), as sent; see [`Icon`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub icons: Vec<Icon>,
}

impl Resource {
    /// A resource with this URI and name (for mock servers and tests).
    pub fn new(uri: &str, name: &str) -> Self {
        Resource {
            uri: uri.to_owned(),
            name: name.to_owned(),
            title: None,
            description: None,
            mime_type: None,
            size: None,
            annotations: None,
            icons: Vec::new(),
        }
    }
}

/// A parameterised resource (RFC 6570 URI template).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ResourceTemplate {
    /// The URI template.
    pub uri_template: String,
    /// Its name.
    #[serde(default)]
    pub name: String,
    /// A display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The MIME type of what it yields.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Its icons (2025-11-25), as sent; see [`Icon`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub icons: Vec<Icon>,
}

/// The result of `resources/read`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ReadResourceResult {
    /// The contents (a resource may have several parts).
    #[serde(default)]
    pub contents: Vec<ResourceContents>,
}

/// The severity of a log message (`logging/setLevel`, `notifications/message`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[allow(missing_docs)]
pub enum LogLevel {
    Debug,
    Info,
    Notice,
    Warning,
    Error,
    Critical,
    Alert,
    Emergency,
}

/// A `notifications/message` from a server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct LogMessage {
    /// Its severity.
    pub level: LogLevel,
    /// The server-side logger's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logger: Option<String>,
    /// The payload: a string or any JSON.
    #[serde(default)]
    pub data: Value,
}

/// What `completion/complete` completes an argument of.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum CompletionRef {
    /// A prompt's argument.
    #[serde(rename = "ref/prompt")]
    Prompt {
        /// The prompt's name on the server.
        name: String,
    },
    /// A resource template's variable.
    #[serde(rename = "ref/resource")]
    Resource {
        /// The URI template.
        uri: String,
    },
}

/// Completion suggestions.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Completion {
    /// The suggested values (at most 100).
    #[serde(default)]
    pub values: Vec<String>,
    /// How many there are in all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// More exist than were sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_more: Option<bool>,
}

/// A progress report for a running tools/call.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Progress {
    /// How far along (increases with every report; may be fractional).
    pub progress: f64,
    /// The total, when known.
    pub total: Option<f64>,
    /// What is happening.
    pub message: Option<String>,
}

/// The content of a sampling message: one item, or several (2025-11-25 tool use).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SamplingContent {
    /// Several items. (Tried first: `Content::Other` would take an array as one item.)
    Many(Vec<Content>),
    /// One item.
    One(Content),
}

/// One message a server wants the client's model to see.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SamplingMessage {
    /// The speaker.
    pub role: MessageRole,
    /// The content.
    pub content: SamplingContent,
}

/// A server's `sampling/createMessage` request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CreateMessageParams {
    /// The conversation.
    pub messages: Vec<SamplingMessage>,
    /// The largest answer the server wants.
    #[serde(default)]
    pub max_tokens: u64,
    /// A system prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Stop sequences.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_sequences: Option<Vec<String>>,
    /// Model preferences, verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_preferences: Option<Value>,
    /// The tools the model may use (2025-11-25; only sent to a client whose handler
    /// [supports sampling with tools](crate::ClientHandler::supports_sampling_tools)).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<Tool>,
    /// How the model must use them (`{"mode": "auto" | "required" | "none"}`), verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<Value>,
    /// Every other member (`includeContext`, `metadata`, `_meta`, ...), verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The client's answer to `sampling/createMessage`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CreateMessageResult {
    /// The speaker (normally the assistant).
    pub role: MessageRole,
    /// What the model said: one item, or several (2025-11-25: tool uses, which are
    /// [`Content::ToolUse`] items with the stop reason `toolUse`).
    pub content: SamplingContent,
    /// Which model said it.
    pub model: String,
    /// Why it stopped (`endTurn`, `stopSequence`, `maxTokens`, `toolUse`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
}

impl CreateMessageResult {
    /// An assistant text answer from `model` that ended its turn.
    pub fn text(model: &str, text: impl Into<String>) -> Self {
        CreateMessageResult {
            role: MessageRole::Assistant,
            content: SamplingContent::One(Content::text(text)),
            model: model.to_owned(),
            stop_reason: Some("endTurn".to_owned()),
        }
    }

    /// An assistant answer from `model` that asks to run tools: `uses` are
    /// [`Content::ToolUse`] items (text may come along); the stop reason is `toolUse`.
    pub fn tool_use(model: &str, uses: Vec<Content>) -> Self {
        CreateMessageResult {
            role: MessageRole::Assistant,
            content: SamplingContent::Many(uses),
            model: model.to_owned(),
            stop_reason: Some("toolUse".to_owned()),
        }
    }
}

/// A server's `elicitation/create` request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ElicitParams {
    /// What to ask the user.
    #[serde(default)]
    pub message: String,
    /// The form's flat object schema (form mode), verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested_schema: Option<Value>,
    /// Every other member (`mode`, `url`, `elicitationId`, `_meta`, ...), verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The user's choice in an elicitation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElicitAction {
    /// Submitted (with content in form mode).
    Accept,
    /// Said no.
    Decline,
    /// Dismissed the dialog.
    Cancel,
}

/// The client's answer to `elicitation/create`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ElicitResult {
    /// What the user did.
    pub action: ElicitAction,
    /// The submitted form (accept only). Fields the user left out are filled from the
    /// schema's defaults before the answer is sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Map<String, Value>>,
}

impl ElicitResult {
    /// The user submitted `content`.
    pub fn accept(content: Map<String, Value>) -> Self {
        ElicitResult {
            action: ElicitAction::Accept,
            content: Some(content),
        }
    }

    /// The user declined.
    pub fn decline() -> Self {
        ElicitResult {
            action: ElicitAction::Decline,
            content: None,
        }
    }

    /// The user dismissed the dialog.
    pub fn cancel() -> Self {
        ElicitResult {
            action: ElicitAction::Cancel,
            content: None,
        }
    }
}

/// A string-to-string map, the shape of prompt arguments.
pub(crate) type StringMap = BTreeMap<String, String>;
