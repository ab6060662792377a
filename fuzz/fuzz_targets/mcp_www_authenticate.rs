//! Invariants of the OAuth client's challenge and metadata parsers for arbitrary bytes (see `sidewire_mcp::fuzz::www_authenticate`).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| sidewire_mcp::fuzz::www_authenticate(data));
