//! One zero-sized type per MCP method, with its params and result types.
//!
//! These implement `sidewire_jsonrpc`'s `Request` and `Notification` so calls and handlers are
//! typed by method; they are crate-private because the client's own methods are the API.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;
use sidewire_jsonrpc::{Notification, Request};

use crate::Root;
use crate::protocol::skills::Skill;
use crate::protocol::types::{
    CallToolResult, Completion, CompletionRef, CreateMessageParams, CreateMessageResult,
    ElicitParams, ElicitResult, GetPromptResult, InitializeParams, InitializeResult, LogLevel,
    LogMessage, Prompt, ReadResourceResult, Resource, ResourceTemplate, StringMap, Tool,
};

/// Declares a request type. Kept private and small (see STYLE: no public macros).
macro_rules! request {
    ($(#[$doc:meta])* $name:ident, $method:literal, $params:ty => $result:ty) => {
        $(#[$doc])*
        pub(crate) struct $name;
        impl Request for $name {
            const METHOD: &'static str = $method;
            type Params = $params;
            type Result = $result;
        }
    };
}

macro_rules! notification {
    ($(#[$doc:meta])* $name:ident, $method:literal, $params:ty) => {
        $(#[$doc])*
        pub(crate) struct $name;
        impl Notification for $name {
            const METHOD: &'static str = $method;
            type Params = $params;
        }
    };
}

/// The params of every list method.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct PageParams {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) cursor: Option<String>,
}

/// A page of a listing as received: each item's JSON text borrowed from the result frame, and
/// the cursor of the next page. The listing decodes the items one by one straight into their
/// type, so one malformed item is dropped alone, nothing goes through a `serde_json::Value`,
/// and an item's size is the length of its text.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Page<'a> {
    #[serde(
        borrow,
        default,
        alias = "tools",
        alias = "prompts",
        alias = "resources",
        alias = "resourceTemplates",
        alias = "skills",
        alias = "tasks"
    )]
    pub(crate) items: Vec<&'a RawValue>,
    #[serde(default)]
    pub(crate) next_cursor: Option<String>,
    /// How long the list stays fresh (modern era), as sent.
    #[serde(borrow, default)]
    pub(crate) ttl_ms: Option<&'a RawValue>,
}

/// A list method: what it lists, and what the items are called in its result.
pub(crate) trait ListMethod {
    const METHOD: &'static str;
    /// Which list it is, for a [`Truncation`](crate::Truncation).
    const KIND: crate::List;
    type Item: Serialize + DeserializeOwned + Clone + Send + 'static;
    /// The item's identity, for dropping duplicates.
    fn key(item: &Self::Item) -> &str;
}

macro_rules! list_method {
    ($name:ident, $method:literal, $list:ident, $item:ty, $key:ident) => {
        pub(crate) struct $name;
        impl ListMethod for $name {
            const METHOD: &'static str = $method;
            const KIND: crate::List = crate::List::$list;
            type Item = $item;
            fn key(item: &$item) -> &str {
                &item.$key
            }
        }
    };
}

list_method!(ListTools, "tools/list", Tools, Tool, name);
list_method!(ListPrompts, "prompts/list", Prompts, Prompt, name);
list_method!(ListResources, "resources/list", Resources, Resource, uri);
list_method!(ListSkills, "skills/list", Skills, Skill, uri);
list_method!(
    ListResourceTemplates,
    "resources/templates/list",
    ResourceTemplates,
    ResourceTemplate,
    uri_template
);

request!(
    /// The handshake.
    Initialize, "initialize", InitializeParams => InitializeResult
);
request!(
    /// What a modern server is (its versions, capabilities, identity).
    Discover, "server/discover", Value => Value
);
request!(
    /// Liveness, either direction.
    Ping, "ping", Option<Value> => Value
);

/// The params of `tools/call`.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct CallToolParams {
    pub(crate) name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) arguments: Option<Value>,
    #[serde(rename = "_meta")]
    pub(crate) meta: ProgressMeta,
    /// Asks for the call to run as a task (see `protocol::tasks`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) task: Option<crate::protocol::tasks::TaskParams>,
}

/// `_meta` carrying a progress token, and the caller's own members
/// ([`ToolCallOptions::meta`](crate::ToolCallOptions::meta), checked not to collide).
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ProgressMeta {
    pub(crate) progress_token: u64,
    #[serde(flatten)]
    pub(crate) extra: serde_json::Map<String, Value>,
}

request!(
    /// Runs a tool.
    CallTool, "tools/call", CallToolParams => CallToolResult
);

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct GetPromptParams {
    pub(crate) name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) arguments: Option<StringMap>,
}

request!(
    /// Fills in a prompt.
    GetPrompt, "prompts/get", GetPromptParams => GetPromptResult
);

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct UriParams {
    pub(crate) uri: String,
}

request!(
    /// Reads a resource.
    ReadResource, "resources/read", UriParams => ReadResourceResult
);
request!(
    /// Subscribes to a resource's updates.
    Subscribe, "resources/subscribe", UriParams => Value
);
request!(
    /// Ends a subscription.
    Unsubscribe, "resources/unsubscribe", UriParams => Value
);

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct SetLevelParams {
    pub(crate) level: LogLevel,
}

request!(
    /// Sets the server's log level.
    SetLevel, "logging/setLevel", SetLevelParams => Value
);

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct CompleteParams {
    #[serde(rename = "ref")]
    pub(crate) reference: CompletionRef,
    pub(crate) argument: CompleteArgument,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) context: Option<CompleteContext>,
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct CompleteArgument {
    pub(crate) name: String,
    pub(crate) value: String,
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct CompleteContext {
    pub(crate) arguments: StringMap,
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct CompleteResult {
    #[serde(default)]
    pub(crate) completion: Completion,
}

request!(
    /// Completes an argument.
    Complete, "completion/complete", CompleteParams => CompleteResult
);

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct ListRootsResult {
    pub(crate) roots: Vec<Root>,
}

request!(
    /// Server → client: the roots.
    ListRoots, "roots/list", Option<Value> => ListRootsResult
);
request!(
    /// Server → client: ask the client's model.
    CreateMessage, "sampling/createMessage", CreateMessageParams => CreateMessageResult
);
request!(
    /// Server → client: ask the user.
    Elicit, "elicitation/create", ElicitParams => ElicitResult
);

/// `notifications/progress` params.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ProgressParams {
    pub(crate) progress_token: Value,
    #[serde(default)]
    pub(crate) progress: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) total: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) message: Option<String>,
}

notification!(
    /// Progress of a request.
    ProgressNotification, "notifications/progress", ProgressParams
);
/// `notifications/elicitation/complete` params.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ElicitationCompleteParams {
    pub(crate) elicitation_id: String,
}

notification!(
    /// The out-of-band step of a URL elicitation is done (2025-11-25).
    ElicitationComplete, "notifications/elicitation/complete", ElicitationCompleteParams
);
notification!(
    /// The host's roots changed (client → server, legacy era).
    RootsListChanged, "notifications/roots/list_changed", Option<Value>
);
notification!(
    /// A server log message.
    LoggingMessage, "notifications/message", LogMessage
);
notification!(
    /// A subscribed resource changed.
    ResourceUpdated, "notifications/resources/updated", UriParams
);

/// The list-changed notifications and which cached list each one marks stale.
pub(crate) const LIST_CHANGED: [(&str, u8); 3] = [
    (
        "notifications/tools/list_changed",
        crate::protocol::session::TOOLS,
    ),
    (
        "notifications/prompts/list_changed",
        crate::protocol::session::PROMPTS,
    ),
    (
        "notifications/resources/list_changed",
        crate::protocol::session::RESOURCES,
    ),
];

/// Sent once after a successful `initialize`.
pub(crate) const INITIALIZED: &str = "notifications/initialized";
/// Sent when one of our requests is abandoned (never for `initialize`).
pub(crate) const CANCELLED: &str = "notifications/cancelled";
