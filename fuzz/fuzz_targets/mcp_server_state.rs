//! Invariants of the sealed requestState and cursor tokens a client hands back (see `sidewire_mcp_server::fuzz::state`).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| sidewire_mcp_server::fuzz::state(data));
