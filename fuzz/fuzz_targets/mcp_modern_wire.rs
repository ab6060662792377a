//! Invariants of the modern-era (2026-07-28) readers a server controls: `x-mcp-header` designations, header encoding, `resultType` (see `sidewire_mcp::fuzz::modern_wire`).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| sidewire_mcp::fuzz::modern_wire(data));
