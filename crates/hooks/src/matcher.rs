//! [`Matcher`]: which tools a group of hooks applies to, as Claude Code reads `matcher`.

use regex_lite::Regex;

/// The longest matcher taken (a pattern is compiled once per file read).
pub const MAX_MATCHER_BYTES: usize = 1024;

/// Which tool names a group of hooks applies to. Claude Code's rule: no matcher, `""` or `"*"`
/// match every tool; anything else is a regular expression matched against the whole tool
/// name (so a plain name such as `Bash` matches exactly that tool, `Edit|Write` either, and
/// `mcp__github__.*` every tool of one MCP server). Case-sensitive.
#[derive(Debug, Clone)]
pub struct Matcher {
    /// `None`: every tool.
    pattern: Option<Regex>,
    text: String,
}

impl Matcher {
    /// The matcher as the file wrote it (`""` for none).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Every tool.
    pub fn any() -> Matcher {
        Matcher {
            pattern: None,
            text: String::new(),
        }
    }

    /// The matcher `text` stands for.
    ///
    /// # Errors
    ///
    /// Why `text` is not a pattern (over [`MAX_MATCHER_BYTES`], or not a regular expression).
    pub fn new(text: &str) -> Result<Matcher, String> {
        if text.is_empty() || text == "*" {
            return Ok(Matcher {
                pattern: None,
                text: text.to_owned(),
            });
        }
        if text.len() > MAX_MATCHER_BYTES {
            return Err(format!(
                "a matcher of {} bytes is over the {MAX_MATCHER_BYTES}-byte bound",
                text.len()
            ));
        }
        let pattern = Regex::new(&format!("^(?:{text})$"))
            .map_err(|err| format!("not a regular expression: {err}"))?;
        Ok(Matcher {
            pattern: Some(pattern),
            text: text.to_owned(),
        })
    }

    /// Whether it applies to the tool `name`.
    pub fn matches(&self, name: &str) -> bool {
        self.pattern
            .as_ref()
            .is_none_or(|pattern| pattern.is_match(name))
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
}
