//! The protocol core, transport-agnostic: wire types, the client, server→client handling.
//!
//! Everything here runs on a `sidewire-jsonrpc` peer over whatever stream and sink a transport
//! supplies; nothing here knows about processes or HTTP.

pub(crate) mod bridge;
pub(crate) mod client;
pub(crate) mod elicit_url;
pub(crate) mod era;
pub(crate) mod features;
pub(crate) mod handler;
pub(crate) mod headers;
pub(crate) mod icon;
pub(crate) mod inbound;
pub(crate) mod listen;
pub(crate) mod listing;
pub(crate) mod methods;
pub(crate) mod modern;
pub(crate) mod options;
pub(crate) mod session;
pub(crate) mod skills;
pub(crate) mod structured;
pub(crate) mod tasks;
pub(crate) mod tool_index;
pub(crate) mod types;

#[cfg(test)]
mod tests;
