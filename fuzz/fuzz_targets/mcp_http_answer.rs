//! Invariants of the Streamable HTTP answer path for arbitrary bytes (see `sidewire_mcp::fuzz::http_answer`).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| sidewire_mcp::fuzz::http_answer(data));
