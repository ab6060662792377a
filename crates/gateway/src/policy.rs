//! The host's policy: which tools the gateway shows, and its own verdict on each call (the
//! `hostDecision` that `permission.decision` starts from).

use sidewire_agent::ToolPolicy;

/// The host's verdict on a tool no list names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Mode {
    /// Every call is allowed by the host (an extension may still deny).
    Allow,
    /// Tools whose `readOnlyHint` is true are allowed; others are denied unless an extension
    /// allows the call (audited).
    #[default]
    ReadOnly,
    /// Every call is denied by the host unless an extension allows it (audited).
    Deny,
}

/// What the gateway shows and allows. Patterns are gateway names (`<alias>__<tool>`), exact,
/// or ending in `*` for every name that starts with what comes before it (`gh__*`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Policy {
    /// The verdict on tools neither list names.
    pub mode: Mode,
    /// Tools the host allows whatever the mode.
    pub allow: Vec<String>,
    /// Tools hidden: neither listed nor callable (a call is answered as for an unknown tool).
    /// Hiding wins over `allow`.
    pub deny: Vec<String>,
}

impl Policy {
    /// The policy `mode` with no lists.
    pub fn new(mode: Mode) -> Self {
        Policy {
            mode,
            ..Policy::default()
        }
    }

    /// Also allow the tools `pattern` names.
    #[must_use]
    pub fn allow(mut self, pattern: impl Into<String>) -> Self {
        self.allow.push(pattern.into());
        self
    }

    /// Also hide the tools `pattern` names.
    #[must_use]
    pub fn deny(mut self, pattern: impl Into<String>) -> Self {
        self.deny.push(pattern.into());
        self
    }

    /// Whether the tool `name` (a gateway name) is listed and callable.
    pub fn shows(&self, name: &str) -> bool {
        !self.deny.iter().any(|pattern| matches(pattern, name))
    }

    /// The host's policy for a call of the shown tool `name`.
    pub fn host_policy(&self, name: &str) -> ToolPolicy {
        if self.allow.iter().any(|pattern| matches(pattern, name)) {
            return ToolPolicy::AllowAll;
        }
        match self.mode {
            Mode::Allow => ToolPolicy::AllowAll,
            Mode::ReadOnly => ToolPolicy::ReadOnly,
            Mode::Deny => ToolPolicy::DenyAll,
        }
    }
}

fn matches(pattern: &str, name: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => pattern == name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_and_modes() {
        let policy = Policy::new(Mode::Deny)
            .allow("gh__search")
            .allow("fs__read*")
            .deny("gh__delete_repo")
            .deny("fs__*")
            .allow("fs__write");
        assert!(policy.shows("gh__search"));
        assert!(!policy.shows("gh__delete_repo"));
        assert!(!policy.shows("fs__read_file"), "hiding wins over allow");
        assert_eq!(policy.host_policy("gh__search"), ToolPolicy::AllowAll);
        assert_eq!(policy.host_policy("gh__search2"), ToolPolicy::DenyAll);
        let read_only = Policy::default();
        assert_eq!(read_only.host_policy("x__y"), ToolPolicy::ReadOnly);
        assert_eq!(
            Policy::new(Mode::Allow).host_policy("x__y"),
            ToolPolicy::AllowAll
        );
    }
}
