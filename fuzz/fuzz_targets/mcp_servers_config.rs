//! Invariants of the mcpServers config parser for arbitrary bytes (see `sidewire_mcp::fuzz::mcp_servers`).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| sidewire_mcp::fuzz::mcp_servers(data));
