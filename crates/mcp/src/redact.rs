//! A server URL fit to show: the one redaction every error message, log line and view that
//! names a server's URL goes through.
//!
//! A URL may hold secrets: a user's `?key=...` or `user:password@`, and whatever a config file
//! expanded into it from a variable or an input (`https://host/${TOKEN}/mcp`). It is shown with
//! its userinfo replaced by `REDACTED`, every query value replaced by `REDACTED` (a bare
//! `?word` whole, since the word may be the secret), its fragment dropped, and every value that
//! was expanded into its path replaced by `REDACTED` wherever it appears. Scheme, host, port
//! and the rest of the path stay, so a message still says where: a variable that gives the
//! whole URL or its host (`${MCP_URL}`, `https://${TENANT}.example.com/mcp`) is shown as
//! expanded, its query and userinfo redacted like any other.
//!
//! The same secrets are scrubbed from free text about the URL ([`UrlSecrets::scrub`]): a
//! server's error body that echoes the request's path, an authorization message that names a
//! metadata URL derived from the server's, a reason a connection ended. Values shorter than
//! [`MIN_SECRET_BYTES`] are not scrubbed from free text (they would blank out unrelated
//! words); they are still redacted where the URL holds them.

use std::borrow::Cow;
use std::fmt;

use url::Url;

/// What a secret is replaced with. Plain letters, so a shown URL is still a URL.
pub(crate) const REDACTED: &str = "REDACTED";

/// The shortest value scrubbed from free text (the same bound as the authorizer's redactor).
pub(crate) const MIN_SECRET_BYTES: usize = 4;

/// The secrets of one server URL: each as the text to find and the text to put instead,
/// longest first, so a secret that contains another is replaced whole.
///
/// Its `Debug` shows how many there are, never what they are.
#[derive(Clone, Default, PartialEq, Eq)]
pub(crate) struct UrlSecrets {
    pairs: Vec<(String, String)>,
}

impl fmt::Debug for UrlSecrets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "UrlSecrets({})", self.pairs.len())
    }
}

impl UrlSecrets {
    /// The values a config file expanded into the path of the server URL `url` (from the
    /// environment, a default or an input), each found as written and as the URL encodes it.
    /// Values that are not in its path (the whole URL, its host, a query value, which is
    /// redacted anyway) are left out; when `url` is not a URL (`None`), every value is kept.
    pub(crate) fn expanded(url: Option<&Url>, values: impl IntoIterator<Item = String>) -> Self {
        let mut secrets = UrlSecrets::default();
        for value in values {
            let forms = encoded_forms(&value);
            let in_path = url.is_none_or(|url| {
                (forms.iter()).any(|form| !form.is_empty() && url.path().contains(form.as_str()))
            });
            if in_path {
                for form in forms {
                    secrets.add(form, REDACTED.to_owned());
                }
            }
        }
        secrets.sort();
        secrets
    }

    /// These secrets and those `url` holds itself: its userinfo and its query (whole, and
    /// each value as written and decoded) and its fragment.
    pub(crate) fn with_url(&self, url: &Url) -> Self {
        let mut secrets = self.clone();
        if let Some(userinfo) = userinfo(url) {
            secrets.add(format!("{userinfo}@"), format!("{REDACTED}@"));
            for part in [url.username(), url.password().unwrap_or("")] {
                secrets.add_value(part);
            }
        }
        if let Some(query) = url.query().filter(|query| !query.is_empty()) {
            secrets.add(format!("?{query}"), format!("?{}", shown_query(query)));
            for piece in query.split('&') {
                let value = piece.split_once('=').map_or(piece, |(_, value)| value);
                secrets.add_value(value);
            }
        }
        if let Some(fragment) = url.fragment().filter(|fragment| !fragment.is_empty()) {
            secrets.add(format!("#{fragment}"), String::new());
        }
        secrets.sort();
        secrets
    }

    /// `url` fit to show (see the module docs).
    pub(crate) fn show(&self, url: &Url) -> String {
        let mut shown = url.clone();
        if userinfo(url).is_some()
            && (shown.set_username(REDACTED).is_err() || shown.set_password(None).is_err())
        {
            // No URL of a scheme this client speaks gets here; show nothing rather than the
            // credentials.
            return format!("{}:{REDACTED}", url.scheme());
        }
        if let Some(query) = url.query().filter(|query| !query.is_empty()) {
            shown.set_query(Some(&shown_query(query)));
        }
        shown.set_fragment(None);
        self.scrub(shown.as_str()).into_owned()
    }

    /// `text` with every secret replaced.
    pub(crate) fn scrub<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut out = Cow::Borrowed(text);
        for (secret, instead) in &self.pairs {
            if out.contains(secret.as_str()) {
                out = Cow::Owned(out.replace(secret.as_str(), instead));
            }
        }
        out
    }

    /// A value (a password, a query value) to find as written and decoded (`%XX`, and a
    /// query's `+` as a space).
    fn add_value(&mut self, value: &str) {
        self.add(value.to_owned(), REDACTED.to_owned());
        self.add(percent_decode(value), REDACTED.to_owned());
        self.add(
            percent_decode(&value.replace('+', " ")),
            REDACTED.to_owned(),
        );
    }

    fn add(&mut self, secret: String, instead: String) {
        let long_enough = secret.len() >= MIN_SECRET_BYTES || instead != REDACTED;
        if long_enough && !secret.is_empty() && !self.pairs.iter().any(|(s, _)| *s == secret) {
            self.pairs.push((secret, instead));
        }
    }

    fn sort(&mut self) {
        self.pairs
            .sort_by_key(|(secret, _)| std::cmp::Reverse(secret.len()));
    }
}

/// The userinfo as the URL writes it (`user`, `user:password`), when there is any.
fn userinfo(url: &Url) -> Option<String> {
    match (url.username(), url.password()) {
        ("", None) => None,
        (user, None) => Some(user.to_owned()),
        (user, Some(password)) => Some(format!("{user}:{password}")),
    }
}

/// A query with each value replaced (`key=REDACTED`); a piece without `=` is replaced whole.
fn shown_query(query: &str) -> String {
    let pieces: Vec<Cow<'_, str>> = query
        .split('&')
        .map(|piece| match piece.split_once('=') {
            Some((key, _)) => Cow::Owned(format!("{key}={REDACTED}")),
            None if piece.is_empty() => Cow::Borrowed(piece),
            None => Cow::Borrowed(REDACTED),
        })
        .collect();
    pieces.join("&")
}

/// `text` with its `%XX` escapes decoded (invalid UTF-8 replaced).
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        let hex = bytes
            .get(at + 1..at + 3)
            .filter(|hex| hex.iter().all(u8::is_ascii_hexdigit))
            .and_then(|hex| std::str::from_utf8(hex).ok())
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match (bytes[at], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                at += 3;
            }
            (byte, _) => {
                out.push(byte);
                at += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A value as written, and as a URL's path and query encode it.
fn encoded_forms(value: &str) -> Vec<String> {
    let mut forms = vec![value.to_owned()];
    if let Ok(mut scratch) = Url::parse("http://h/") {
        scratch.set_path(value);
        let path = scratch.path();
        // `set_path` adds the leading `/` of an absolute path.
        let path = if value.starts_with('/') {
            path
        } else {
            path.strip_prefix('/').unwrap_or(path)
        };
        forms.push(path.to_owned());
        scratch.set_query(Some(value));
        forms.push(scratch.query().unwrap_or_default().to_owned());
    }
    forms.dedup();
    forms
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(text: &str, expanded: &[&str]) -> String {
        let url = Url::parse(text).unwrap();
        UrlSecrets::expanded(Some(&url), expanded.iter().map(|v| (*v).to_owned()))
            .with_url(&url)
            .show(&url)
    }

    #[test]
    fn userinfo_query_values_and_fragment_go_and_the_rest_stays() {
        assert_eq!(
            shown("https://user:pw@example.com/mcp?key=abc&x=1", &[]),
            "https://REDACTED@example.com/mcp?key=REDACTED&x=REDACTED"
        );
        assert_eq!(
            shown("http://127.0.0.1:8080/a/b?sk-live-token&x=&&y=2#frag", &[]),
            "http://127.0.0.1:8080/a/b?REDACTED&x=REDACTED&&y=REDACTED"
        );
        assert_eq!(
            shown("https://example.com/mcp", &[]),
            "https://example.com/mcp"
        );
        let spec = |url: &str| crate::ServerSpec::http("s", url);
        assert_eq!(spec("not a url").shown_url(), None);
        let err = spec("ftp://u:pw@host/?k=abcdef").validate().unwrap_err();
        assert!(err.is_config(), "{err}");
        assert!(
            !err.to_string().contains("abcdef") && !err.to_string().contains("pw"),
            "{err}"
        );
    }

    #[test]
    fn an_expanded_value_is_redacted_in_the_path_as_written_and_encoded() {
        assert_eq!(
            shown("https://example.com/t0ps3cret/mcp", &["t0ps3cret"]),
            "https://example.com/REDACTED/mcp"
        );
        assert_eq!(
            shown("https://example.com/a%20b%22c/mcp", &["a b\"c"]),
            "https://example.com/REDACTED/mcp"
        );
        // Too short to scrub from text, and not a secret anyone could use.
        assert_eq!(
            shown("https://example.com/v1/mcp", &["v1"]),
            "https://example.com/v1/mcp"
        );
        // A variable that is the whole URL, or its host, is not in the path: shown.
        let whole = "https://example.com/mcp?k=abcd";
        assert_eq!(shown(whole, &[whole]), "https://example.com/mcp?k=REDACTED");
        assert_eq!(
            shown("https://tenant1.example.com/mcp", &["tenant1"]),
            "https://tenant1.example.com/mcp"
        );
    }

    #[test]
    fn free_text_loses_the_same_secrets() {
        let url = Url::parse("https://u:hunter22@example.com/t0ps3cret/mcp?key=abc#f").unwrap();
        let secrets = UrlSecrets::expanded(Some(&url), ["t0ps3cret".to_owned()]).with_url(&url);
        let text = format!("GET {url} failed: no route /t0ps3cret/mcp, password hunter22");
        let scrubbed = secrets.scrub(&text);
        for secret in ["t0ps3cret", "hunter22", "abc", "u:", "#f"] {
            assert!(!scrubbed.contains(secret), "{secret} in {scrubbed}");
        }
        assert!(
            scrubbed.contains("example.com/REDACTED/mcp?key=REDACTED"),
            "{scrubbed}"
        );
        assert!(matches!(secrets.scrub("nothing here"), Cow::Borrowed(_)));
        assert_eq!(format!("{secrets:?}").matches("hunter").count(), 0);
    }
}
