//! Invariant checks behind the `mcp_server_*` fuzz targets (`fuzz/fuzz_targets/mcp_server_*.rs`):
//! each drives what a client controls (its messages, its HTTP headers, the tokens it hands
//! back) through this crate's own sans-IO code and checks what must hold for any input.
//!
//! Kept in the library so it compiles with every build and reaches the crate's private checks
//! (`params::check`, `sse::parse_id`, `seal::Sealer`) without making them public; each fuzz
//! target is a one-line call, and the unit tests run the same checks on the committed seeds.
//! Not a public API: hidden from the docs and free to change.

#[cfg(feature = "http")]
mod http;
mod intake;
mod state;

#[cfg(feature = "http")]
pub use self::http::http;
pub use self::intake::intake;
pub use self::state::state;

/// The committed seeds of one target (`fuzz/seeds/<target>`), by file name.
#[cfg(test)]
fn seeds(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/seeds")
        .join(target);
    let mut seeds: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|err| panic!("{}: {err}", dir.display()))
        .map(|entry| {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&path).unwrap())
        })
        .collect();
    seeds.sort();
    seeds
}
