//! [`Matcher`]: which tools a group of hooks applies to, as the tool that owns the file reads
//! its `matcher`.

use regex_lite::Regex;

/// The longest matcher taken (a pattern is compiled once per file read).
pub const MAX_MATCHER_BYTES: usize = 1024;

/// Which tool names a group of hooks applies to. [`Matcher::new`] is Claude Code's rule: no
/// matcher, `""` or `"*"` match every tool; anything else is a regular expression matched
/// against the whole tool name (so a plain name such as `Bash` matches exactly that tool,
/// `Edit|Write` either, and `mcp__github__.*` every tool of one MCP server). Case-sensitive.
///
/// A Gemini CLI or Codex file's matcher is read by that tool's own rule (see
/// [`HookDialect`](crate::HookDialect)): Gemini CLI searches the tool name for the pattern
/// (unanchored), and Codex compares a plain name (letters, digits, `_` and `|`) exactly and
/// searches for any other pattern.
#[derive(Debug, Clone)]
pub struct Matcher {
    pattern: Pattern,
    text: String,
}

#[derive(Debug, Clone)]
enum Pattern {
    /// Every tool.
    Any,
    /// The tools whose whole name is one of these.
    Names(Vec<String>),
    /// The tools the expression matches (anchored or not, as the rule compiled it).
    Regex(Regex),
}

/// How a dialect reads a matcher that is neither empty nor `*`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MatchRule {
    /// Claude Code's: a regular expression over the whole tool name.
    Anchored,
    /// Gemini CLI's (`hookPlanner.ts`): the trimmed text as a regular expression searched for
    /// in the tool name; a pattern that does not compile is compared as the exact name.
    Search,
    /// Codex's (`codex-rs/hooks/src/events/common.rs`): only letters, digits, `_` and `|` is a
    /// list of exact names; anything else a regular expression searched for in the name.
    ExactOrSearch,
}

/// A matcher read by a dialect's rule: the matcher, and what to warn about it.
#[derive(Debug)]
pub(crate) struct Read {
    pub(crate) matcher: Matcher,
    /// Set when the pattern did not compile and was taken as the exact name instead.
    pub(crate) fell_back: Option<String>,
}

impl Matcher {
    /// The matcher as the file wrote it (`""` for none).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Every tool.
    pub fn any() -> Matcher {
        Matcher {
            pattern: Pattern::Any,
            text: String::new(),
        }
    }

    /// The matcher `text` stands for, by Claude Code's rule.
    ///
    /// # Errors
    ///
    /// Why `text` is not a pattern (over [`MAX_MATCHER_BYTES`], or not a regular expression).
    pub fn new(text: &str) -> Result<Matcher, String> {
        Matcher::read(text, MatchRule::Anchored).map(|read| read.matcher)
    }

    /// The matcher `text` stands for, by `rule`.
    pub(crate) fn read(text: &str, rule: MatchRule) -> Result<Read, String> {
        let done = |pattern| Read {
            matcher: Matcher {
                pattern,
                text: text.to_owned(),
            },
            fell_back: None,
        };
        // Gemini CLI trims the matcher before it reads it; the others take it as written.
        let pattern = if rule == MatchRule::Search {
            text.trim()
        } else {
            text
        };
        if pattern.is_empty() || pattern == "*" {
            return Ok(done(Pattern::Any));
        }
        if text.len() > MAX_MATCHER_BYTES {
            return Err(format!(
                "a matcher of {} bytes is over the {MAX_MATCHER_BYTES}-byte bound",
                text.len()
            ));
        }
        let plain = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '|';
        if rule == MatchRule::ExactOrSearch && pattern.chars().all(plain) {
            let names = pattern.split('|').map(str::to_owned).collect();
            return Ok(done(Pattern::Names(names)));
        }
        let source = match rule {
            MatchRule::Anchored => format!("^(?:{pattern})$"),
            MatchRule::Search | MatchRule::ExactOrSearch => pattern.to_owned(),
        };
        match Regex::new(&source) {
            Ok(regex) => Ok(done(Pattern::Regex(regex))),
            Err(err) if rule == MatchRule::Search => Ok(Read {
                fell_back: Some(err.to_string()),
                ..done(Pattern::Names(vec![pattern.to_owned()]))
            }),
            Err(err) => Err(format!("not a regular expression: {err}")),
        }
    }

    /// Whether it applies to the tool `name`.
    pub fn matches(&self, name: &str) -> bool {
        match &self.pattern {
            Pattern::Any => true,
            Pattern::Names(names) => names.iter().any(|candidate| candidate == name),
            Pattern::Regex(regex) => regex.is_match(name),
        }
    }

    /// The matcher as the file wrote it (`""` for every tool when it wrote none).
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matchers_read_as_claude_code_reads_them() {
        for every in ["", "*"] {
            assert!(Matcher::new(every).unwrap().matches("anything"));
        }
        let bash = Matcher::new("Bash").unwrap();
        assert!(bash.matches("Bash"));
        assert!(!bash.matches("BashOutput"), "a plain name matches exactly");
        assert!(!bash.matches("bash"), "case-sensitive");
        let either = Matcher::new("Edit|Write").unwrap();
        assert!(either.matches("Edit") && either.matches("Write") && !either.matches("Read"));
        let server = Matcher::new("mcp__github__.*").unwrap();
        assert!(server.matches("mcp__github__create_issue"));
        assert!(!server.matches("mcp__gitlab__create_issue"));
        assert!(Matcher::new("(").is_err());
        assert!(Matcher::new(&"a".repeat(MAX_MATCHER_BYTES + 1)).is_err());
    }

    #[test]
    fn gemini_cli_searches_the_name_and_takes_a_broken_pattern_as_the_name() {
        let read = |text| Matcher::read(text, MatchRule::Search).unwrap();
        let write = read("write_file").matcher;
        assert!(write.matches("write_file"));
        assert!(
            write.matches("mcp_fs_write_file_atomic"),
            "unanchored, as `new RegExp(m).test(name)`"
        );
        assert!(read("  *  ").matcher.matches("anything"), "trimmed");
        assert!(read(" read_.* ").matcher.matches("read_file"));
        let broken = read("write_(");
        assert!(broken.fell_back.is_some());
        assert!(broken.matcher.matches("write_("));
        assert!(!broken.matcher.matches("write_file"));
    }

    #[test]
    fn codex_compares_plain_names_exactly_and_searches_patterns() {
        let read = |text| Matcher::read(text, MatchRule::ExactOrSearch);
        let bash = read("Bash").unwrap().matcher;
        assert!(bash.matches("Bash") && !bash.matches("BashOutput"));
        let either = read("Edit|Write").unwrap().matcher;
        assert!(either.matches("Write") && !either.matches("Read"));
        assert!(
            !read("mcp__memory")
                .unwrap()
                .matcher
                .matches("mcp__memory__create_entities")
        );
        assert!(
            read("^Bash").unwrap().matcher.matches("BashOutput"),
            "a pattern is searched for, not anchored"
        );
        assert!(read("^Bash$").unwrap().matcher.matches("Bash"));
        assert!(read("[").is_err());
    }
}
