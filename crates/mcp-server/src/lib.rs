#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod context;
pub mod core;
pub mod era;
mod error;
#[doc(hidden)]
pub mod fuzz;
mod handler;
#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub mod http;
mod paged;
mod params;
mod seal;
mod server;
mod stdio;
mod toolbox;
pub mod wire;

pub use sidewire_mcp::{
    CallToolResult, Completion, CompletionRef, Content, GetPromptResult, Implementation, LogLevel,
    MessageRole, Prompt, PromptArgument, PromptMessage, ReadResourceResult, Resource,
    ResourceContents, ResourceTemplate, Tool,
};

pub use crate::error::{
    Error, INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR,
    RESOURCE_NOT_FOUND,
};
pub use crate::handler::{
    Capabilities, CompleteRequest, Handler, HandlerContext, InputRequest, InputRequired, PromptGet,
    Reply, ToolCallRequest,
};
pub use crate::paged::serve_paged_tools;
pub use crate::seal::{MAX_STATE_NESTING, MAX_TOKEN_BYTES, STATE_LIFETIME, SealingKey};
pub use crate::server::{Limits, ListKind, Notifier, SESSION_ID_LIFETIME, Server, SessionKey};
pub use crate::toolbox::Toolbox;
