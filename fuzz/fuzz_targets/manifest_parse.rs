//! Invariants of the manifest parser for arbitrary bytes (see `sidewire_ext_protocol::fuzz::manifest_parse`).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| sidewire_ext_protocol::fuzz::manifest_parse(data));
