//! Invariants of the MCP config loader for arbitrary bytes (see `sidewire_mcp_config::fuzz::mcp_servers`).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| sidewire_mcp_config::fuzz::mcp_servers(data));
