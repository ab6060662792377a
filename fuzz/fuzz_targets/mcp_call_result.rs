//! Invariants of a tools/call result for arbitrary bytes (see `sidewire_mcp::fuzz::call_tool_result`).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| sidewire_mcp::fuzz::call_tool_result(data));
