//! Invariants of the strict decoder on any method's params or result for arbitrary bytes (see `sidewire_ext_protocol::fuzz::protocol_decode`).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| sidewire_ext_protocol::fuzz::protocol_decode(data));
