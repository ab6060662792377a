//! The names a gateway gives what its upstreams offer: `<alias>__<name>` for tools and
//! prompts, `<alias>+<uri>` for resources and URI templates, or the upstream's own names in
//! bridge mode (one server, no prefix).
//!
//! Rules (each tested below):
//! - an alias is `[a-z][a-z0-9-]{0,15}`, chosen by the user or made from the config name
//!   ([`Alias::from_server_name`]); two servers with one alias fail the start;
//! - every name is prefixed, even with one server, so names do not change when a second server
//!   is added;
//! - a tool name fits `^[A-Za-z0-9_-]+$` and the length left by the client's own prefix
//!   (`mcp__<gateway name>__`, Claude Code's form) within [`MAX_CLIENT_TOOL_NAME`]: a name
//!   that had to change (a character outside the set, or too long) is cut and given a suffix
//!   of 8 hex digits of a stable hash of the upstream name, so the same upstream name always
//!   gives the same gateway name;
//! - a resource URI `u` of alias `a` is `a+u`, which is a URI again (its scheme gains the
//!   alias) and is undone exactly.

use std::fmt;

use crate::error::Error;

/// The longest tool name a client takes, its own prefix included (the Anthropic API's rule,
/// which Claude Code and Claude Desktop apply to `mcp__<server>__<tool>`).
pub const MAX_CLIENT_TOOL_NAME: usize = 64;

/// The longest alias.
pub const MAX_ALIAS: usize = 16;

/// The shortest length a tool name is given, however long the gateway's own name is.
const MIN_BUDGET: usize = 16;

/// A server's short, stable name in the gateway's names: `[a-z][a-z0-9-]{0,15}`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Alias(String);

impl Alias {
    /// The alias `alias`, when it follows the rule.
    ///
    /// # Errors
    ///
    /// [`Error::is_config`] naming the rule.
    pub fn new(alias: &str) -> Result<Alias, Error> {
        let ok = (1..=MAX_ALIAS).contains(&alias.len())
            && alias.starts_with(|c: char| c.is_ascii_lowercase())
            && (alias.bytes()).all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
        if ok {
            Ok(Alias(alias.to_owned()))
        } else {
            Err(Error::config(format!(
                "alias {alias:?} is not [a-z][a-z0-9-]{{0,{}}}",
                MAX_ALIAS - 1
            )))
        }
    }

    /// The default alias of a server named `name` in the config: lowercased, each run of other
    /// characters made one `-`, cut to [`MAX_ALIAS`]; `s` is put first when it would not start
    /// with a letter, and `server` stands for a name with nothing usable.
    pub fn from_server_name(name: &str) -> Alias {
        let mut alias = String::new();
        for c in name.chars() {
            let c = c.to_ascii_lowercase();
            if c.is_ascii_lowercase() || c.is_ascii_digit() {
                alias.push(c);
            } else if !alias.is_empty() && !alias.ends_with('-') {
                alias.push('-');
            }
        }
        let mut alias = alias.trim_end_matches('-').to_owned();
        if alias.is_empty() {
            alias = "server".to_owned();
        }
        if !alias.starts_with(|c: char| c.is_ascii_lowercase()) {
            alias.insert(0, 's');
        }
        alias.truncate(MAX_ALIAS);
        Alias(alias.trim_end_matches('-').to_owned())
    }

    /// The alias as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Alias {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// How the gateway names things: prefixed with a length budget, or as the upstream does
/// (bridge mode).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Naming {
    /// `<alias>__<name>`, tool names at most `budget` long.
    Prefixed {
        /// The longest tool name: [`MAX_CLIENT_TOOL_NAME`] less the client's prefix.
        budget: usize,
    },
    /// The upstream's names, unchanged (exactly one server).
    Bridge,
}

impl Naming {
    /// Prefixed names for a gateway its clients know as `gateway_name`.
    pub(crate) fn prefixed(gateway_name: &str) -> Naming {
        // `mcp__` + the client's form of the gateway's name + `__`.
        let client_prefix = 5 + gateway_name.len() + 2;
        Naming::Prefixed {
            budget: MAX_CLIENT_TOOL_NAME
                .saturating_sub(client_prefix)
                .max(MIN_BUDGET),
        }
    }

    /// The gateway's name of the tool (or prompt) `name` of the server `alias`.
    pub(crate) fn name(&self, alias: &Alias, name: &str) -> String {
        let Naming::Prefixed { budget } = self else {
            return name.to_owned();
        };
        let prefix = format!("{alias}__");
        let clean: String = name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        if clean == name && prefix.len() + name.len() <= *budget {
            return prefix + name;
        }
        // Cut (at a char boundary: the clean name is ASCII) and made unique by the hash of
        // the name as the upstream gives it.
        let suffix = format!("_{:08x}", stable_hash(name));
        let room = budget.saturating_sub(prefix.len() + suffix.len());
        let cut = &clean[..clean.len().min(room)];
        format!("{prefix}{cut}{suffix}")
    }

    /// The gateway's URI of `uri` (or URI template) of the server `alias`.
    pub(crate) fn uri(&self, alias: &Alias, uri: &str) -> String {
        match self {
            Naming::Prefixed { .. } => format!("{alias}+{uri}"),
            Naming::Bridge => uri.to_owned(),
        }
    }

    /// The alias and upstream URI of a gateway URI (`None` in bridge mode: the caller knows
    /// the one server).
    pub(crate) fn split_uri<'a>(&self, uri: &'a str) -> Option<(&'a str, &'a str)> {
        match self {
            Naming::Prefixed { .. } => uri.split_once('+'),
            Naming::Bridge => None,
        }
    }
}

/// 32 bits of FNV-1a: stable across runs, platforms and versions (unlike `std`'s hasher),
/// which is what keeps a shortened name the same from one start to the next.
fn stable_hash(text: &str) -> u32 {
    let mut hash: u32 = 0x811c_9dc5;
    for byte in text.bytes() {
        hash ^= u32::from(byte);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alias(a: &str) -> Alias {
        Alias::new(a).unwrap()
    }

    #[test]
    fn aliases_follow_the_rule() {
        for bad in ["", "Gh", "1gh", "g_h", "g+h", "a-very-long-alias-x"] {
            assert!(Alias::new(bad).unwrap_err().is_config(), "{bad:?}");
        }
        assert_eq!(alias("gh-2").as_str(), "gh-2");
        let cases = [
            ("GitHub", "github"),
            ("my server.v2", "my-server-v2"),
            ("__x__", "x"),
            ("9lives", "s9lives"),
            ("日本", "server"),
            ("a-much-too-long-server-name", "a-much-too-long"),
        ];
        for (name, want) in cases {
            let made = Alias::from_server_name(name);
            assert_eq!(made.as_str(), want, "{name}");
            assert_eq!(
                Alias::new(made.as_str()).unwrap(),
                made,
                "a default is valid"
            );
        }
    }

    #[test]
    fn names_fit_the_clients_budget_and_are_stable() {
        let naming = Naming::prefixed("sidewire");
        // mcp__sidewire__ is 15 characters: 49 are left.
        assert_eq!(naming, Naming::Prefixed { budget: 49 });
        let gh = alias("gh");
        assert_eq!(naming.name(&gh, "search_issues"), "gh__search_issues");
        let long = "x".repeat(80);
        let named = naming.name(&gh, &long);
        assert_eq!(named.len(), 49);
        assert!(named.starts_with("gh__xxx"));
        assert_eq!(named, naming.name(&gh, &long), "deterministic");
        assert_ne!(
            named,
            naming.name(&gh, &"x".repeat(81)),
            "distinct names stay distinct"
        );
        // The characters a client refuses: changed, and the hash keeps `a.b` apart from `a_b`.
        let dotted = naming.name(&gh, "a.b");
        assert!(dotted.starts_with("gh__a_b_") && dotted.len() == "gh__a_b_".len() + 8);
        assert_ne!(dotted, naming.name(&gh, "a_b"));
        // Every name a client takes.
        for name in [named.as_str(), dotted.as_str()] {
            assert!(
                name.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
            );
            assert!("mcp__sidewire__".len() + name.len() <= MAX_CLIENT_TOOL_NAME);
        }
        // A very long gateway name still leaves room.
        assert_eq!(
            Naming::prefixed(&"g".repeat(70)),
            Naming::Prefixed { budget: MIN_BUDGET }
        );
    }

    #[test]
    fn uris_are_wrapped_reversibly() {
        let naming = Naming::prefixed("sidewire");
        let fs = alias("fs");
        for uri in [
            "file:///etc/hosts",
            "test://static/resource/1",
            "ui://x+y",
            "",
        ] {
            let wrapped = naming.uri(&fs, uri);
            assert_eq!(naming.split_uri(&wrapped), Some(("fs", uri)));
        }
        assert_eq!(Naming::Bridge.uri(&fs, "file:///a"), "file:///a");
        assert_eq!(Naming::Bridge.name(&fs, "a.b"), "a.b");
    }
}
