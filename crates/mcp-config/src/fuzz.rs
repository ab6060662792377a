//! The invariant checks behind the `mcp_servers_config` fuzz target: the config loader
//! ([`crate::ConfigLoader`], behind [`crate::parse_mcp_servers`]) on arbitrary bytes, every
//! dialect, expansion included.
//!
//! Kept in the library so it compiles with every build; the fuzz target is a one-line call.
//! Not a public API: hidden from the docs and free to change.

use sidewire_mcp::Transport;

use crate::text::ERROR_TEXT_BYTES;
use crate::{ConfigLoader, Dialect, MAX_EXPANDED_BYTES, parse_mcp_servers};

/// Parses `data` (when it is UTF-8) as a config document, detected from its shape, then forced
/// to the dialect its length picks, with a fixed environment (`A`, `HOME`) and an input
/// resolver answering every input. Invariants: no panic; a failure's message is bounded; every
/// spec parsed has a non-empty name, is sorted by it, passes its own validation, has a
/// non-empty command (stdio) or a URL (HTTP), a positive startup budget, and no expanded value
/// past [`MAX_EXPANDED_BYTES`].
pub fn mcp_servers(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let env = |name: &str| match name {
        "A" => Some("alpha".to_owned()),
        "HOME" => Some("/home/fuzz".to_owned()),
        _ => None,
    };
    let loader = ConfigLoader::new()
        .env(env)
        .inputs(|_: &crate::ConfigInput| Some("answer".to_owned()));
    let forced = loader
        .clone()
        .dialect(Dialect::ALL[data.len() % Dialect::ALL.len()]);
    let detected = parse_mcp_servers(text);
    for result in [
        detected,
        loader.parse(text, None).map(crate::McpConfig::into_specs),
        forced.parse(text, None).map(crate::McpConfig::into_specs),
    ] {
        let specs = match result {
            Ok(specs) => specs,
            Err(err) => {
                // The cut mark may add a few bytes to the bound.
                assert!(err.to_string().len() <= ERROR_TEXT_BYTES + 64, "{err}");
                continue;
            }
        };
        for pair in specs.windows(2) {
            assert!(pair[0].name() <= pair[1].name());
        }
        for spec in &specs {
            assert!(!spec.name().trim().is_empty());
            assert!(!spec.startup_budget().is_zero());
            let values = (spec.arguments().iter())
                .chain(spec.environment().values())
                .chain(spec.headers().values());
            for value in values {
                assert!(value.len() <= MAX_EXPANDED_BYTES);
            }
            match spec.transport() {
                Transport::Stdio => assert!(!spec.command().trim().is_empty()),
                _ => {
                    assert!(!spec.url().is_empty());
                    spec.validate().expect("a parsed HTTP spec validates");
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    /// The checked-in seeds (one per dialect) and every prefix of each pass the checks in every
    /// `cargo test`; each whole seed parses.
    #[test]
    fn the_seeds_and_their_prefixes_hold() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fuzz/seeds/mcp_servers_config");
        let mut seen = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let seed = std::fs::read(&path).unwrap();
            for end in 0..=seed.len() {
                super::mcp_servers(&seed[..end]);
            }
            let text = std::str::from_utf8(&seed).unwrap();
            let parsed = crate::ConfigLoader::new()
                .env(|_| Some("v".to_owned()))
                .inputs(|_: &crate::ConfigInput| Some("answer".to_owned()))
                .parse(text, None);
            assert!(parsed.is_ok(), "{}: {:?}", path.display(), parsed.err());
            seen += 1;
        }
        assert!(seen >= 9, "{seen} seeds");
    }
}
