//! Invariants of the server's HTTP request checks for a client's headers: Host and Origin, session id, Last-Event-ID, Mcp-Param-* (see `sidewire_mcp_server::fuzz::http`).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| sidewire_mcp_server::fuzz::http(data));
