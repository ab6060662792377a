//! JSON-RPC envelope parser invariants for arbitrary bytes (see `sidewire_jsonrpc::fuzz::message`).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| sidewire_jsonrpc::fuzz::message(data));
