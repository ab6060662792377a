//! SSE decoder invariants for arbitrary bytes and splits (see `sidewire_framing::fuzz::sse`).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| sidewire_framing::fuzz::sse(data));
