//! The one-pass decoder of provider stream chunks and ends against the reference decoder, on
//! arbitrary bytes (see `sidewire_ext_protocol::fuzz::chunk_decode`).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| sidewire_ext_protocol::fuzz::chunk_decode(data));
