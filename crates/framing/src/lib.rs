#![doc = include_str!("../README.md")]
//!
//! # Main types
//!
//! [`NdjsonCodec`] and [`SseCodec`] (the codecs), [`FrameReader`] (NDJSON over an `AsyncRead`)
//! and [`Error`] (what went wrong, with `is_*` predicates). Every constructor takes the cap;
//! there is no unbounded codec and no `Default`. The extension protocol's 8 MiB cap lives in
//! `sidewire-ext-protocol`, MCP's default in `sidewire-mcp`.
#![cfg_attr(docsrs, feature(doc_cfg))]

mod error;
#[doc(hidden)]
pub mod fuzz;
mod ndjson;
mod reader;
mod sse;

pub use bytes::{Bytes, BytesMut};

pub use crate::error::Error;
pub use crate::ndjson::{NdjsonCodec, Oversize};
pub use crate::reader::FrameReader;
pub use crate::sse::{SseCodec, SseEvent};

/// How many bytes of an oversized frame are kept in [`Error::TooLarge`]'s `prefix`.
pub const PREFIX_BYTES: usize = 1024;

/// The read chunk the buffer bound is stated in: a decoder's buffer never holds more than
/// `cap + READ_CHUNK` bytes of capacity.
pub const READ_CHUNK: usize = 64 * 1024;

/// After handing out a frame larger than this, the codec gives its large allocation back so a
/// single big message does not pin memory for the life of the connection.
pub const SHRINK_AFTER: usize = 1024 * 1024;
