//! Invariant checks behind the MCP fuzz targets (`fuzz/fuzz_targets/mcp_*.rs`): each runs one
//! of this crate's own decoders on arbitrary bytes and checks what must hold for any input
//! (no panic, bounded output, the caps kept).
//!
//! Kept in the library so it compiles with every build; each fuzz target is a one-line call.
//! Not a public API: hidden from the docs and free to change.

#[cfg(feature = "auth")]
mod auth;
#[cfg(feature = "http")]
mod http;
mod listing;
mod modern;
mod results;

#[cfg(feature = "auth")]
pub use self::auth::www_authenticate;
#[cfg(feature = "http")]
pub use self::http::http_answer;
pub use self::listing::list_page;
pub use self::modern::modern_wire;
pub use self::results::call_tool_result;
