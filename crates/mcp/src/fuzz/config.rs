//! Fuzzing the MCP config loader ([`crate::ConfigLoader`], behind [`crate::parse_mcp_servers`]):
//! every dialect, expansion included.

use crate::config::{ConfigLoader, Dialect, MAX_EXPANDED_BYTES};
use crate::{Transport, parse_mcp_servers};

/// Parses `data` (when it is UTF-8) as a config document, detected from its shape, then forced
/// to the dialect its length picks, with a fixed environment (`A`, `HOME`) and an input
/// resolver answering every input. Invariants: no panic; a failure is a config error; every
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
                assert!(err.is_config(), "{err}");
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
