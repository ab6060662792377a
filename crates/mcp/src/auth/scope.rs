//! Which scopes to ask for (MCP 2025-11-25 "Scope Selection Strategy"): the configured ones;
//! else the challenge's `scope`; else every scope the resource lists; else none (the
//! parameter is left out). `offline_access` is added only when the authorization server lists
//! it. A step-up after `403 insufficient_scope` asks for what was asked before plus what the
//! challenge names.

use super::challenge::Challenge;

/// Space-joins scope tokens, dropping repeats and keeping the order; `None` when there are none.
fn join<'a>(scopes: impl IntoIterator<Item = &'a str>) -> Option<String> {
    let mut out: Vec<&str> = Vec::new();
    for scope in scopes {
        if !out.contains(&scope) {
            out.push(scope);
        }
    }
    (!out.is_empty()).then(|| out.join(" "))
}

/// The scopes of a first authorization.
pub(crate) fn initial(
    configured: Option<&[String]>,
    challenge: &Challenge,
    resource_scopes: Option<&[String]>,
    offline_access: bool,
) -> Option<String> {
    let chosen: Vec<&str> = if let Some(configured) = configured {
        configured
            .iter()
            .flat_map(|s| s.split_whitespace())
            .collect()
    } else if challenge
        .scope
        .as_deref()
        .is_some_and(|s| !s.trim().is_empty())
    {
        challenge.scopes().collect()
    } else if let Some(listed) = resource_scopes {
        listed.iter().map(String::as_str).collect()
    } else {
        Vec::new()
    };
    with_offline(chosen, offline_access)
}

/// The scopes of a step-up: `previous` (asked or granted before) with the challenge's.
pub(crate) fn step_up(
    previous: Option<&str>,
    challenge: &Challenge,
    offline_access: bool,
) -> Option<String> {
    let chosen: Vec<&str> = previous
        .unwrap_or("")
        .split_whitespace()
        .chain(challenge.scopes())
        .collect();
    with_offline(chosen, offline_access)
}

/// Whether the challenge asks only for scopes that `granted` already has: asking again would
/// get the same token.
pub(crate) fn already_granted(granted: Option<&str>, challenge: &Challenge) -> bool {
    let granted: Vec<&str> = granted.unwrap_or("").split_whitespace().collect();
    let mut wanted = challenge.scopes().peekable();
    wanted.peek().is_some() && wanted.all(|scope| granted.contains(&scope))
}

/// Each chosen item is split at whitespace first: a scope token has none (RFC 6749 §3.3), so a
/// metadata document listing `"  mcp:basic"` or `"a b"` still gives a well-formed parameter.
fn with_offline(chosen: Vec<&str>, offline_access: bool) -> Option<String> {
    let mut chosen: Vec<&str> = chosen.into_iter().flat_map(str::split_whitespace).collect();
    if offline_access && !chosen.is_empty() {
        chosen.push("offline_access");
    }
    join(chosen)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn challenge(scope: Option<&str>) -> Challenge {
        Challenge {
            scope: scope.map(str::to_owned),
            ..Challenge::default()
        }
    }

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn the_selection_order() {
        let listed = strings(&["mcp:basic", "mcp:read"]);
        let configured = strings(&["mine"]);
        // Configured wins over everything.
        assert_eq!(
            initial(
                Some(&configured),
                &challenge(Some("a")),
                Some(&listed),
                false
            )
            .as_deref(),
            Some("mine")
        );
        // Then the challenge.
        assert_eq!(
            initial(None, &challenge(Some("a b")), Some(&listed), false).as_deref(),
            Some("a b")
        );
        // Then everything the resource lists.
        assert_eq!(
            initial(None, &challenge(None), Some(&listed), false).as_deref(),
            Some("mcp:basic mcp:read")
        );
        // A listed scope with stray whitespace is read as its tokens (found by fuzzing).
        let untidy = strings(&["  mcp:basic", "a\tb ", ""]);
        assert_eq!(
            initial(None, &challenge(None), Some(&untidy), false).as_deref(),
            Some("mcp:basic a b")
        );
        let blank = strings(&[" ", ""]);
        assert_eq!(initial(None, &challenge(None), Some(&blank), true), None);
        // Else nothing at all (not even offline_access on its own).
        assert_eq!(initial(None, &challenge(None), None, true), None);
        assert_eq!(
            initial(None, &challenge(Some("a")), None, true).as_deref(),
            Some("a offline_access")
        );
    }

    #[test]
    fn step_up_keeps_what_was_asked_and_adds_the_challenge() {
        assert_eq!(
            step_up(Some("mcp:basic"), &challenge(Some("mcp:write")), false).as_deref(),
            Some("mcp:basic mcp:write")
        );
        assert_eq!(
            step_up(Some("a b"), &challenge(Some("b c")), false).as_deref(),
            Some("a b c")
        );
        assert!(already_granted(Some("a b"), &challenge(Some("b"))));
        assert!(!already_granted(Some("a"), &challenge(Some("b"))));
        assert!(!already_granted(Some("a"), &challenge(None)));
    }
}
