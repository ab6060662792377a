#![doc = include_str!("../README.md")]
//!
//! # Main types
//!
//! [`GatewayConfig`] (the upstreams, their [`Alias`]es, the [`Policy`], the [`AuditSink`]),
//! [`Gateway`] (a `sidewire_mcp_server::Handler`: serve it with `Server::new(gateway)` over
//! stdio or HTTP) and its [`GatewayDriver`] (the upstream connections, to spawn), and
//! [`Gateway::watch`] (list changes told to the clients).
//!
//! # Cancel safety
//!
//! Every `pub async fn` documents its own. A client's cancel (its `notifications/cancelled`,
//! or a closed stream in the modern era) drops the handler's future, which cancels the one
//! upstream call it owns (the upstream gets `notifications/cancelled`), or the intercept in
//! flight.
#![cfg_attr(docsrs, feature(doc_cfg))]

mod audit;
mod error;
mod gateway;
mod instances;
mod names;
mod policy;
mod subscriptions;

pub use crate::audit::AuditSink;
pub use crate::error::Error;
pub use crate::gateway::{
    DEFAULT_NAME, Gateway, GatewayConfig, GatewayDriver, MAX_PASSED_URL_ELICITATIONS, Upstream,
};
pub use crate::instances::{DEFAULT_INSTANCE_IDLE, DEFAULT_MAX_INSTANCES};
pub use crate::names::{Alias, MAX_ALIAS, MAX_CLIENT_TOOL_NAME};
pub use crate::policy::{Mode, Policy};
pub use crate::subscriptions::MAX_HELD_URIS;
