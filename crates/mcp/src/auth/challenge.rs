//! `WWW-Authenticate` (RFC 9110 §11.6.1, RFC 6750 §3): the challenges of a 401 or 403, sans
//! I/O. Tolerant of what servers send (several challenges in one header or several headers,
//! quoted or bare values, a token68), bounded: at most [`MAX_HEADER_BYTES`] of each header and
//! [`MAX_PARAMS`] parameters are read.

use http::HeaderMap;
use http::header::WWW_AUTHENTICATE;

/// How much of one `WWW-Authenticate` header is read.
pub(crate) const MAX_HEADER_BYTES: usize = 8 * 1024;
/// How many parameters (over all challenges) are kept.
pub(crate) const MAX_PARAMS: usize = 32;

/// What the server's challenges say, merged: the `Bearer` or `DPoP` challenge's parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Challenge {
    /// The schemes offered, lower case (`bearer`, `dpop`).
    pub(crate) schemes: Vec<String>,
    /// `error` (`invalid_token`, `insufficient_scope`, `use_dpop_nonce`).
    pub(crate) error: Option<String>,
    /// `error_description`.
    pub(crate) error_description: Option<String>,
    /// `scope`: what the resource needs.
    pub(crate) scope: Option<String>,
    /// `resource_metadata` (RFC 9728 §5.1).
    pub(crate) resource_metadata: Option<String>,
}

impl Challenge {
    /// The challenges of `headers`' `WWW-Authenticate` fields.
    pub(crate) fn from_headers(headers: &HeaderMap) -> Challenge {
        let mut challenge = Challenge::default();
        let mut params = 0;
        for value in headers.get_all(WWW_AUTHENTICATE) {
            let bytes = value.as_bytes();
            let text = String::from_utf8_lossy(&bytes[..bytes.len().min(MAX_HEADER_BYTES)]);
            challenge.read(&text, &mut params);
        }
        challenge
    }

    /// The challenge of one header value (for tests and fuzzing).
    pub(crate) fn parse(text: &str) -> Challenge {
        let mut challenge = Challenge::default();
        let mut params = 0;
        challenge.read(&text[..floor_boundary(text, MAX_HEADER_BYTES)], &mut params);
        challenge
    }

    /// Whether the server says the token lacks scope (RFC 6750 §3.1).
    pub(crate) fn is_insufficient_scope(&self) -> bool {
        self.error.as_deref() == Some("insufficient_scope")
    }

    /// Whether the server asks for a DPoP nonce (RFC 9449 §9).
    pub(crate) fn is_use_dpop_nonce(&self) -> bool {
        self.error.as_deref() == Some("use_dpop_nonce")
    }

    /// The scopes the challenge names, one by one.
    pub(crate) fn scopes(&self) -> impl Iterator<Item = &str> {
        self.scope.as_deref().unwrap_or("").split_whitespace()
    }

    fn read(&mut self, text: &str, params: &mut usize) {
        let mut rest = text;
        // Whether the current challenge is one of ours (Bearer or DPoP): only its parameters
        // count, and the first value of each wins.
        let mut ours = false;
        loop {
            rest = rest.trim_start_matches([' ', '\t', ',']);
            if rest.is_empty() || *params >= MAX_PARAMS {
                return;
            }
            let token_end = rest
                .find(|c: char| c == '=' || c == ',' || c.is_whitespace())
                .unwrap_or(rest.len());
            let token = &rest[..token_end];
            let after = rest[token_end..].trim_start_matches([' ', '\t']);
            if let Some(value_part) = after.strip_prefix('=')
                && !value_part.starts_with('=')
            {
                // An auth-param: name=value.
                let (value, tail) = read_value(value_part.trim_start_matches([' ', '\t']));
                *params += 1;
                if ours {
                    self.set(&token.to_ascii_lowercase(), value);
                }
                rest = tail;
            } else if token.is_empty() {
                // A stray `=` or a space other than ' ' and '\t': skip one character.
                let skip = rest.chars().next().map_or(1, char::len_utf8);
                rest = &rest[skip..];
            } else {
                // A new challenge's scheme (a token68 after it reads as a parameter-less
                // token and is skipped the same way).
                let scheme = token.to_ascii_lowercase();
                if after.starts_with('=') {
                    // token68 padding (`abc==`): not a scheme.
                    rest = after.trim_start_matches('=');
                    continue;
                }
                ours = scheme == "bearer" || scheme == "dpop";
                if ours && !self.schemes.contains(&scheme) {
                    self.schemes.push(scheme);
                }
                rest = &rest[token_end..];
            }
        }
    }

    fn set(&mut self, name: &str, value: String) {
        let slot = match name {
            "error" => &mut self.error,
            "error_description" => &mut self.error_description,
            "scope" => &mut self.scope,
            "resource_metadata" => &mut self.resource_metadata,
            _ => return,
        };
        if slot.is_none() {
            *slot = Some(value);
        }
    }
}

/// A parameter value (quoted string with `\` escapes, or a token) and the text after it.
fn read_value(text: &str) -> (String, &str) {
    if let Some(quoted) = text.strip_prefix('"') {
        let mut value = String::new();
        let mut chars = quoted.char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '\\' => {
                    if let Some((_, escaped)) = chars.next() {
                        value.push(escaped);
                    }
                }
                '"' => return (value, &quoted[i + 1..]),
                c => value.push(c),
            }
        }
        return (value, "");
    }
    let end = text
        .find(|c: char| c == ',' || c.is_whitespace())
        .unwrap_or(text.len());
    (text[..end].to_owned(), &text[end..])
}

/// The largest char boundary of `text` at or below `at`.
fn floor_boundary(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_bearer_parameters_the_spec_names() {
        let challenge = Challenge::parse(
            r#"Bearer error="invalid_token", error_description="Missing Authorization header", scope="mcp:basic mcp:write", resource_metadata="http://localhost:3/.well-known/oauth-protected-resource/mcp""#,
        );
        assert_eq!(challenge.schemes, ["bearer"]);
        assert_eq!(challenge.error.as_deref(), Some("invalid_token"));
        assert_eq!(
            challenge.scopes().collect::<Vec<_>>(),
            ["mcp:basic", "mcp:write"]
        );
        assert_eq!(
            challenge.resource_metadata.as_deref(),
            Some("http://localhost:3/.well-known/oauth-protected-resource/mcp")
        );
    }

    #[test]
    fn reads_a_dpop_challenge_and_skips_other_schemes() {
        let challenge = Challenge::parse(
            r#"Basic realm="x", DPoP error="use_dpop_nonce", resource_metadata="https://a/b", Newauth token68abc=="#,
        );
        assert_eq!(challenge.schemes, ["dpop"]);
        assert!(challenge.is_use_dpop_nonce());
        assert_eq!(challenge.resource_metadata.as_deref(), Some("https://a/b"));
        // Basic's realm is not ours.
        let basic = Challenge::parse(r#"Basic scope="admin""#);
        assert_eq!(basic.scope, None);
    }

    #[test]
    fn unquoted_values_escapes_and_several_headers() {
        let mut headers = HeaderMap::new();
        headers.append(WWW_AUTHENTICATE, "Basic realm=x".parse().unwrap());
        headers.append(
            WWW_AUTHENTICATE,
            r#"Bearer error=insufficient_scope, error_description="say \"hi\"""#
                .parse()
                .unwrap(),
        );
        let challenge = Challenge::from_headers(&headers);
        assert!(challenge.is_insufficient_scope());
        assert_eq!(challenge.error_description.as_deref(), Some(r#"say "hi""#));
    }

    #[test]
    fn garbage_and_huge_headers_end_without_panicking() {
        for text in [
            "",
            "=",
            "==,,",
            "Bearer =",
            "Bearer a=\"unterminated",
            "Bearer ,,,=",
        ] {
            let _ = Challenge::parse(text);
        }
        let huge = format!("Bearer {}", "a=b, ".repeat(10_000));
        let challenge = Challenge::parse(&huge);
        assert_eq!(challenge.schemes, ["bearer"]);
    }
}
