//! Invariants of replacement re-validation at every point for arbitrary bytes (see `sidewire_ext_protocol::fuzz::replacement_validate`).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| sidewire_ext_protocol::fuzz::replacement_validate(data));
