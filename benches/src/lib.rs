//! Shared inputs for sidewire's criterion benchmarks (`benches/*.rs`); not a library for users.
