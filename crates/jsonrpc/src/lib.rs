//! JSON-RPC 2.0 messages and a bidirectional peer (work in progress).

mod message;

pub use crate::message::ErrorObject;
