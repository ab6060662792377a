//! What a server author implements: [`Handler`], and the types its methods take and give.
//!
//! One style serves both eras. A method that needs the client (sampling, elicitation, roots)
//! returns [`Reply::InputRequired`] with the requests and an optional state; it is then
//! called again with the client's answers in [`HandlerContext::input_responses`] and its state in
//! [`HandlerContext::request_state`]. In the modern era that is the wire's multi-round-trip request
//! (the state travels sealed, so a tampered one is refused); in the legacy era the server
//! sends each request to the client itself, waits within a bound, and calls again (the state
//! never leaves the server). A handler never learns which unless it asks ([`HandlerContext::era`]).

use std::future::Future;

use serde_json::{Map, Value, json};
use sidewire_mcp::{
    CallToolResult, Completion, CompletionRef, GetPromptResult, Implementation, Prompt,
    ReadResourceResult, Resource, ResourceTemplate, Tool,
};

use crate::Error;
pub use crate::context::HandlerContext;

/// What a server offers, announced in `initialize` and `server/discover`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Capabilities {
    /// `tools`.
    pub tools: bool,
    /// `prompts`.
    pub prompts: bool,
    /// `resources`.
    pub resources: bool,
    /// `resources.subscribe`.
    pub subscribe: bool,
    /// `completions`.
    pub completions: bool,
    /// `logging`.
    pub logging: bool,
    /// `listChanged` on each list offered: the server may announce changes
    /// ([`crate::Server::list_changed`]).
    pub list_changed: bool,
}

impl Capabilities {
    /// Offers tools.
    pub fn tools(mut self) -> Self {
        self.tools = true;
        self
    }

    /// Offers prompts.
    pub fn prompts(mut self) -> Self {
        self.prompts = true;
        self
    }

    /// Offers resources; `subscribe` also `resources/subscribe`.
    pub fn resources(mut self, subscribe: bool) -> Self {
        self.resources = true;
        self.subscribe = subscribe;
        self
    }

    /// Offers `completion/complete`.
    pub fn completions(mut self) -> Self {
        self.completions = true;
        self
    }

    /// Offers log messages (`logging/setLevel` in the legacy era).
    pub fn logging(mut self) -> Self {
        self.logging = true;
        self
    }

    /// Announces list changes.
    pub fn list_changed(mut self) -> Self {
        self.list_changed = true;
        self
    }

    /// The `capabilities` object.
    pub fn to_json(&self) -> Value {
        let mut caps = Map::new();
        let list = || {
            if self.list_changed {
                json!({ "listChanged": true })
            } else {
                json!({})
            }
        };
        if self.tools {
            caps.insert("tools".into(), list());
        }
        if self.prompts {
            caps.insert("prompts".into(), list());
        }
        if self.resources {
            let mut resources = list();
            if self.subscribe {
                resources["subscribe"] = json!(true);
            }
            caps.insert("resources".into(), resources);
        }
        if self.completions {
            caps.insert("completions".into(), json!({}));
        }
        if self.logging {
            caps.insert("logging".into(), json!({}));
        }
        Value::Object(caps)
    }
}

/// A result, or the requests to the client it needs first.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply<T> {
    /// The result.
    Complete(T),
    /// Ask the client first, then call again.
    InputRequired(InputRequired),
}

impl<T> From<T> for Reply<T> {
    fn from(result: T) -> Self {
        Reply::Complete(result)
    }
}

/// The requests to the client a result waits for, by key, and the state to come back with.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct InputRequired {
    /// The requests, by the key their answers come back under.
    pub requests: Vec<(String, InputRequest)>,
    /// The state the next call gets back in [`HandlerContext::request_state`].
    pub state: Option<Value>,
}

impl InputRequired {
    /// No requests yet.
    pub fn new() -> Self {
        InputRequired::default()
    }

    /// Adds a request under `key`.
    pub fn request(mut self, key: impl Into<String>, request: InputRequest) -> Self {
        self.requests.push((key.into(), request));
        self
    }

    /// Sets the state.
    pub fn state(mut self, state: Value) -> Self {
        self.state = Some(state);
        self
    }
}

/// A request to the client.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum InputRequest {
    /// `elicitation/create` (form or URL mode), with these params.
    Elicit(Value),
    /// `sampling/createMessage`, with these params.
    Sample(Value),
    /// `roots/list`.
    ListRoots,
}

impl InputRequest {
    /// Its JSON-RPC method.
    pub fn method(&self) -> &'static str {
        match self {
            InputRequest::Elicit(_) => "elicitation/create",
            InputRequest::Sample(_) => "sampling/createMessage",
            InputRequest::ListRoots => "roots/list",
        }
    }

    /// The client capability it needs (a URL-mode elicitation needs `elicitation.url`).
    pub fn capability(&self) -> &'static str {
        match self {
            InputRequest::Elicit(params) if params.get("mode") == Some(&json!("url")) => {
                "elicitation.url"
            }
            InputRequest::Elicit(_) => "elicitation",
            InputRequest::Sample(_) => "sampling",
            InputRequest::ListRoots => "roots",
        }
    }

    /// Its params.
    pub fn params(&self) -> Value {
        match self {
            InputRequest::Elicit(params) | InputRequest::Sample(params) => params.clone(),
            InputRequest::ListRoots => json!({}),
        }
    }

    /// The `{method, params}` object of an `inputRequests` entry.
    pub fn to_json(&self) -> Value {
        json!({ "method": self.method(), "params": self.params() })
    }
}

/// A `tools/call`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ToolCallRequest {
    /// The tool's name.
    pub name: String,
    /// The arguments (an empty object when absent).
    pub arguments: Map<String, Value>,
}

/// A `prompts/get`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct PromptGet {
    /// The prompt's name.
    pub name: String,
    /// Its arguments.
    pub arguments: Map<String, Value>,
}

/// A `completion/complete`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct CompleteRequest {
    /// What is completed.
    pub reference: CompletionRef,
    /// The argument's name.
    pub argument: String,
    /// What the user typed so far.
    pub value: String,
    /// The values of the other arguments (`context.arguments`).
    pub context: Map<String, Value>,
}

/// The server side of MCP, as its author writes it. Every method has a default: lists are
/// empty and the rest answer `-32601`, so a tools-only server implements three methods.
/// Only what [`Handler::capabilities`] announces is ever called.
///
/// Each method's future must be `Send`; a dropped future is a cancelled request (the client
/// cancelled, its stream closed, or the connection ended).
pub trait Handler: Send + Sync + 'static {
    /// `serverInfo`.
    fn info(&self) -> Implementation;

    /// What the server offers.
    fn capabilities(&self) -> Capabilities;

    /// `instructions` for the client's model.
    fn instructions(&self) -> Option<String> {
        None
    }

    /// A number that changes whenever what the list methods return may have changed: a
    /// cursor made in another generation is refused (`-32602`), so a client never pages
    /// through two different lists. Default: always 0 (cursors stay good for their
    /// lifetime, and a page is cut from the list as it is when asked).
    fn list_generation(&self) -> u64 {
        0
    }

    /// Told when a legacy session subscribes to `uri` (`true`) or stops (`false`: it
    /// unsubscribed, or it ended while subscribed), once per change: a repeated subscribe is
    /// not told again. A modern `subscriptions/listen` is told the same way: each of its
    /// resource URIs once as it opens, and once more as it ends. The server keeps each session's subscriptions itself and
    /// [`Notifier::resource_updated`](crate::Notifier::resource_updated) reaches the sessions
    /// subscribed, so the default does nothing; a gateway subscribes upstream here. Called on
    /// the transport's task, as the request is answered: it must not block.
    fn subscription_changed(&self, uri: &str, subscribed: bool) {
        let _ = (uri, subscribed);
    }

    /// Told once when a session ends (its client's `DELETE`, the idle reaper, a full table's
    /// eviction, the stdio connection's end): what the handler keeps for
    /// [`HandlerContext::session`] can go. Called on the transport's task: it must not block.
    fn session_ended(&self, session: crate::SessionKey) {
        let _ = session;
    }

    /// All tools (the server pages them).
    fn list_tools(
        &self,
        ctx: &HandlerContext,
    ) -> impl Future<Output = Result<Vec<Tool>, Error>> + Send {
        let _ = ctx;
        async { Ok(Vec::new()) }
    }

    /// Calls a tool. An unknown tool is [`Error::InvalidParams`]; a tool's own failure is a
    /// result with `is_error`.
    fn call_tool(
        &self,
        call: ToolCallRequest,
        ctx: HandlerContext,
    ) -> impl Future<Output = Result<Reply<CallToolResult>, Error>> + Send {
        let _ = ctx;
        async move {
            Err(Error::invalid_params(format!(
                "unknown tool: {}",
                call.name
            )))
        }
    }

    /// All prompts.
    fn list_prompts(
        &self,
        ctx: &HandlerContext,
    ) -> impl Future<Output = Result<Vec<Prompt>, Error>> + Send {
        let _ = ctx;
        async { Ok(Vec::new()) }
    }

    /// Renders a prompt.
    fn get_prompt(
        &self,
        get: PromptGet,
        ctx: HandlerContext,
    ) -> impl Future<Output = Result<Reply<GetPromptResult>, Error>> + Send {
        let _ = ctx;
        async move {
            Err(Error::invalid_params(format!(
                "unknown prompt: {}",
                get.name
            )))
        }
    }

    /// All resources.
    fn list_resources(
        &self,
        ctx: &HandlerContext,
    ) -> impl Future<Output = Result<Vec<Resource>, Error>> + Send {
        let _ = ctx;
        async { Ok(Vec::new()) }
    }

    /// All resource templates.
    fn list_resource_templates(
        &self,
        ctx: &HandlerContext,
    ) -> impl Future<Output = Result<Vec<ResourceTemplate>, Error>> + Send {
        let _ = ctx;
        async { Ok(Vec::new()) }
    }

    /// Reads a resource; an unknown one is [`Error::ResourceNotFound`].
    fn read_resource(
        &self,
        uri: String,
        ctx: HandlerContext,
    ) -> impl Future<Output = Result<Reply<ReadResourceResult>, Error>> + Send {
        let _ = ctx;
        async move { Err(Error::ResourceNotFound { uri }) }
    }

    /// Completes an argument.
    fn complete(
        &self,
        request: CompleteRequest,
        ctx: HandlerContext,
    ) -> impl Future<Output = Result<Completion, Error>> + Send {
        let _ = (request, ctx);
        async { Ok(Completion::default()) }
    }
}
