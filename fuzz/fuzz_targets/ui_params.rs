//! Invariants of the UI DTOs for arbitrary bytes (see `sidewire_ext_protocol::fuzz::ui_params`).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| sidewire_ext_protocol::fuzz::ui_params(data));
