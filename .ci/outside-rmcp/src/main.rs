//! Nothing: this crate exists to be resolved (`cargo tree`), not run.
fn main() {}
