//! NDJSON decoder invariants for arbitrary bytes and splits (see `sidewire_framing::fuzz::ndjson`).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| sidewire_framing::fuzz::ndjson(data));
