//! Fuzzing the `mcpServers` config parser ([`crate::parse_mcp_servers`]).

use crate::{Transport, parse_mcp_servers};

/// Parses `data` (when it is UTF-8) as an `mcpServers` document. Invariants: no panic; a
/// failure is a config error; every spec parsed has a non-empty name, is sorted by it, passes
/// its own validation, has a non-empty command (stdio) or a URL (HTTP), and a positive startup
/// budget.
pub fn mcp_servers(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let specs = match parse_mcp_servers(text) {
        Ok(specs) => specs,
        Err(err) => {
            assert!(err.is_config(), "{err}");
            return;
        }
    };
    for pair in specs.windows(2) {
        assert!(pair[0].name() <= pair[1].name());
    }
    for spec in &specs {
        assert!(!spec.name().trim().is_empty());
        assert!(!spec.startup_budget().is_zero());
        match spec.transport() {
            Transport::Stdio => assert!(!spec.command().trim().is_empty()),
            _ => {
                assert!(!spec.url().is_empty());
                spec.validate().expect("a parsed HTTP spec validates");
            }
        }
    }
}
