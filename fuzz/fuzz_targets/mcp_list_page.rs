//! Invariants of a listing page and its items for arbitrary bytes (see `sidewire_mcp::fuzz::list_page`).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| sidewire_mcp::fuzz::list_page(data));
