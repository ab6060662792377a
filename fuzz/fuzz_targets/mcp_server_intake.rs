//! Invariants of the server's message intake and session state table for a client's frames (see `sidewire_mcp_server::fuzz::intake`).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| sidewire_mcp_server::fuzz::intake(data));
