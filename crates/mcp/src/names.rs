//! Namespaced tool and prompt names: `mcp__<server>__<tool>`, made to fit the MCP tool-name
//! rule `^[a-zA-Z0-9_-]{1,64}$`.
//!
//! A name that already fits is used as is. Any other is sanitised (each character outside the
//! allowed set becomes `_`), cut to leave room, and given `_` plus 8 hex digits of the SHA-256
//! of the raw name, so two raw names that sanitise or truncate alike still differ. This module
//! only computes names; the host keeps the map back to the server's raw names (which are what
//! goes on the wire) and settles the one-in-four-billion hash clash.

use sha2::{Digest, Sha256};

/// The longest name the MCP tool-name rule allows.
pub const MAX_NAME_LEN: usize = 64;

/// `_` plus 8 hex digits.
const SUFFIX_LEN: usize = 9;

/// The namespaced name of `tool` on `server`: `mcp__<server>__<tool>` when that fits the MCP
/// tool-name rule, else its sanitised, truncated form with a short hash suffix.
///
/// ```text
/// ("files", "read")          -> mcp__files__read
/// ("my.server", "read file") -> mcp__my_server__read_file_<8 hex digits>
/// ```
pub fn namespaced_name(server: &str, tool: &str) -> String {
    let raw = format!("mcp__{server}__{tool}");
    if is_valid_name(&raw) {
        return raw;
    }
    with_suffix(&raw, &raw)
}

/// A namespaced name that is always hashed, over the raw name and a salt: the host's way out
/// when two different raw names still land on the same name.
pub(crate) fn namespaced_name_salted(server: &str, tool: &str, salt: u32) -> String {
    let raw = format!("mcp__{server}__{tool}");
    with_suffix(&raw, &format!("{raw}\u{0}{salt}"))
}

/// Whether `name` fits `^[a-zA-Z0-9_-]{1,64}$`.
pub fn is_valid_name(name: &str) -> bool {
    (1..=MAX_NAME_LEN).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

fn with_suffix(raw: &str, hashed: &str) -> String {
    let mut name: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    // Every character is ASCII now, so byte truncation cannot split one.
    name.truncate(MAX_NAME_LEN - SUFFIX_LEN);
    let digest = Sha256::digest(hashed.as_bytes());
    name.push('_');
    for byte in &digest[..4] {
        name.push_str(&format!("{byte:02x}"));
    }
    name
}

#[cfg(test)]
mod tests;
