//! The credential redactor: one set of rules for everything a child process (or a peer) can make
//! a host show or log.
//!
//! Two kinds of rules, applied in this order:
//!
//! 1. **Known secrets.** The values of credential-named environment variables (names ending in
//!    `_KEY`, `_TOKEN`, `_SECRET` or `_PASSWORD`, any case) of at least 8 characters, taken from
//!    the host's environment and from whatever environment the host gives its children. Shorter
//!    values are left alone: they would hide ordinary words. These go first and over the whole
//!    text, so a multi-line secret (a PEM key) is caught, and no later rule can split a secret
//!    and leave half of it visible.
//! 2. **Token patterns**, line by line: `user:password@` in URLs; `name=value`, `name: value`
//!    and `"name": "value"` whose name says secret; `Bearer <token>`; and tokens of well-known
//!    formats (`sk-`, `ghp_`, `xoxb-`, `AKIA`, ...).
//!
//! It is a best-effort filter over text, not a secret scanner: it knows the secrets it was given
//! and the shapes that commonly leak, and it errs on the side of hiding.

use std::borrow::Cow;
use std::sync::Arc;

/// What a redacted secret becomes.
pub const REDACTED: &str = "[REDACTED]";

/// Environment variable name suffixes whose values are secrets.
const SECRET_SUFFIXES: &[&str] = &["_KEY", "_TOKEN", "_SECRET", "_PASSWORD"];

/// Values shorter than this are not redacted: they would hide ordinary words.
const MIN_SECRET_CHARS: usize = 8;

/// Prefixes of well-known token formats, and how many token characters must follow for the
/// match to count (so ordinary words like `sk-learn` are left alone).
const TOKEN_PREFIXES: &[(&str, usize)] = &[
    ("sk-", 12),
    ("sk_live_", 8),
    ("sk_test_", 8),
    ("rk_live_", 8),
    ("ghp_", 16),
    ("gho_", 16),
    ("ghu_", 16),
    ("ghs_", 16),
    ("ghr_", 16),
    ("github_pat_", 16),
    ("glpat-", 16),
    ("xoxb-", 8),
    ("xoxp-", 8),
    ("xoxa-", 8),
    ("xoxs-", 8),
    ("AKIA", 16),
    ("ASIA", 16),
    ("AIza", 30),
    ("hf_", 20),
    ("npm_", 20),
];

/// Replaces credentials with [`REDACTED`]. Cheap to clone; `Default` knows no secrets and
/// applies the token patterns only.
#[derive(Clone, Default)]
pub struct Redactor {
    /// Secret values, longest first, so a secret that contains another is replaced whole.
    secrets: Arc<[String]>,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print the secrets themselves.
        f.debug_struct("Redactor")
            .field("secrets", &self.secrets.len())
            .finish()
    }
}

/// Whether an environment variable name marks its value as a secret.
pub fn is_secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    SECRET_SUFFIXES.iter().any(|suffix| upper.ends_with(suffix))
}

impl Redactor {
    /// A redactor for the secrets among `vars` (name, value pairs), e.g. a child's `env`.
    pub fn new<I, K, V>(vars: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<str>,
        V: AsRef<str>,
    {
        Redactor::from_values(
            vars.into_iter()
                .filter(|(name, _)| is_secret_name(name.as_ref()))
                .map(|(_, value)| value.as_ref().to_owned()),
        )
    }

    fn from_values(values: impl Iterator<Item = String>) -> Self {
        let mut secrets: Vec<String> = values
            .filter(|value| value.chars().count() >= MIN_SECRET_CHARS)
            .collect();
        secrets.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        secrets.dedup();
        Redactor {
            secrets: secrets.into(),
        }
    }

    /// A redactor for the current process's own environment (variables that are not UTF-8 are
    /// skipped).
    pub fn from_process_env() -> Self {
        Redactor::new(std::env::vars_os().filter_map(|(name, value)| {
            Some((name.into_string().ok()?, value.into_string().ok()?))
        }))
    }

    /// This redactor plus the secrets among `vars`.
    pub fn with<I, K, V>(&self, vars: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<str>,
        V: AsRef<str>,
    {
        let extra = Redactor::new(vars);
        Redactor::from_values(self.secrets.iter().chain(extra.secrets.iter()).cloned())
    }

    /// How many secret values this redactor knows.
    pub fn secret_count(&self) -> usize {
        self.secrets.len()
    }

    /// `text` with every known secret and every token pattern replaced.
    pub fn redact(&self, text: &str) -> String {
        let mut out = None::<String>;
        for secret in self.secrets.iter() {
            let current = out.as_deref().unwrap_or(text);
            if current.contains(secret.as_str()) {
                out = Some(current.replace(secret.as_str(), REDACTED));
            }
        }
        let text = out.as_deref().unwrap_or(text);
        let mut result = String::with_capacity(text.len());
        for (i, line) in text.split('\n').enumerate() {
            if i > 0 {
                result.push('\n');
            }
            result.push_str(&redact_line(line));
        }
        result
    }
}

/// The token patterns over one line. Each pass first checks cheaply whether it can match at
/// all, so a line without secrets costs a few scans and one copy.
fn redact_line(line: &str) -> Cow<'_, str> {
    let mut line = Cow::Borrowed(line);
    if line.contains("://") {
        line = Cow::Owned(url_userinfo(&line));
    }
    if line.bytes().any(|b| b == b'=' || b == b':') {
        line = Cow::Owned(key_values(&line));
    }
    if line.len() > 6 {
        line = Cow::Owned(bearer(&line));
    }
    if line.bytes().any(|b| PREFIX_FIRST_BYTES[usize::from(b)]) {
        line = Cow::Owned(prefixed_tokens(&line));
    }
    line
}

/// The first bytes of [`TOKEN_PREFIXES`], as a table: most positions of a line start none.
const PREFIX_FIRST_BYTES: [bool; 256] = {
    let mut table = [false; 256];
    let mut i = 0;
    while i < TOKEN_PREFIXES.len() {
        table[TOKEN_PREFIXES[i].0.as_bytes()[0] as usize] = true;
        i += 1;
    }
    table
};

fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

fn is_ident_byte(b: u8) -> bool {
    is_token_byte(b) || b == b'.'
}

/// Whether an identifier (a key in `key=value`) names a secret.
fn sensitive(ident: &str) -> bool {
    let id = ident.to_ascii_lowercase();
    const CONTAINS: &[&str] = &[
        "secret",
        "password",
        "passwd",
        "api_key",
        "apikey",
        "api-key",
        "private_key",
        "access_key",
        "credential",
    ];
    CONTAINS.iter().any(|word| id.contains(word))
        || id.ends_with("token")
        || id.ends_with("_key")
        || matches!(id.as_str(), "authorization" | "auth" | "cookie" | "pwd")
}

/// `user:password@` in `scheme://user:password@host`.
fn url_userinfo(line: &str) -> String {
    let bytes = line.as_bytes();
    let mut out = String::with_capacity(line.len());
    let mut copied = 0;
    let mut search = 0;
    while let Some(found) = line[search..].find("://") {
        let start = search + found + 3;
        let end = bytes[start..]
            .iter()
            .position(|&b| {
                matches!(b, b'/' | b'?' | b'#' | b'"' | b'\'') || b.is_ascii_whitespace()
            })
            .map_or(bytes.len(), |i| start + i);
        if let Some(at) = line[start..end].rfind('@') {
            out.push_str(&line[copied..start]);
            out.push_str(REDACTED);
            copied = start + at;
        }
        search = end.max(start);
    }
    out.push_str(&line[copied..]);
    out
}

/// `name=value`, `name: value`, `"name": "value"` where `name` names a secret.
fn key_values(line: &str) -> String {
    let bytes = line.as_bytes();
    let mut out = String::with_capacity(line.len());
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        if !is_ident_byte(bytes[i]) || (i > 0 && is_ident_byte(bytes[i - 1])) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && is_ident_byte(bytes[i]) {
            i += 1;
        }
        let ident = &line[start..i];
        let mut j = i;
        if j < bytes.len() && bytes[j] == b'"' {
            j += 1;
        }
        while j < bytes.len() && bytes[j] == b' ' {
            j += 1;
        }
        if j >= bytes.len() || !(bytes[j] == b'=' || bytes[j] == b':') || !sensitive(ident) {
            continue;
        }
        j += 1;
        while j < bytes.len() && bytes[j] == b' ' {
            j += 1;
        }
        let quote = match bytes.get(j) {
            Some(&q @ (b'"' | b'\'')) => {
                j += 1;
                Some(q)
            }
            _ => None,
        };
        // `Authorization: Bearer xyz` keeps the scheme word and hides the credential.
        for scheme in ["bearer ", "basic ", "token "] {
            let rest = &bytes[j..];
            if rest.len() > scheme.len()
                && rest[..scheme.len()].eq_ignore_ascii_case(scheme.as_bytes())
            {
                j += scheme.len();
                while j < bytes.len() && bytes[j] == b' ' {
                    j += 1;
                }
                break;
            }
        }
        let value_start = j;
        while j < bytes.len() {
            let b = bytes[j];
            let end = match quote {
                Some(q) => b == q,
                None => {
                    b.is_ascii_whitespace() || matches!(b, b',' | b';' | b'&' | b'}' | b']' | b')')
                }
            };
            if end {
                break;
            }
            j += 1;
        }
        let value = &line[value_start..j];
        if !value.is_empty() && value != REDACTED {
            out.push_str(&line[copied..value_start]);
            out.push_str(REDACTED);
            copied = j;
        }
        i = j;
    }
    out.push_str(&line[copied..]);
    out
}

/// `Bearer <token>` anywhere (case-insensitive, after spaces or tabs, whatever the token's
/// length); the token ends at white space, a quote, `,` or `;`.
fn bearer(line: &str) -> String {
    const WORD: &[u8] = b"bearer";
    let bytes = line.as_bytes();
    let mut out = String::with_capacity(line.len());
    let mut copied = 0;
    let mut i = 0;
    while i + WORD.len() < bytes.len() {
        if !bytes[i..i + WORD.len()].eq_ignore_ascii_case(WORD)
            || (i > 0 && bytes[i - 1].is_ascii_alphanumeric())
        {
            i += 1;
            continue;
        }
        let mut j = i + WORD.len();
        let spaces = bytes[j..]
            .iter()
            .take_while(|&&b| b == b' ' || b == b'\t')
            .count();
        if spaces == 0 {
            i += 1;
            continue;
        }
        j += spaces;
        let start = j;
        while j < bytes.len()
            && !bytes[j].is_ascii_whitespace()
            && !matches!(bytes[j], b'"' | b'\'' | b',' | b';')
        {
            j += 1;
        }
        // `start` and `j` sit on ASCII bytes or the ends, so both are char boundaries.
        if j > start && !line[start..].starts_with(REDACTED) {
            out.push_str(&line[copied..start]);
            out.push_str(REDACTED);
            copied = j;
        }
        i = j.max(i + 1);
    }
    out.push_str(&line[copied..]);
    out
}

/// Tokens of well-known formats (`sk-...`, `ghp_...`, `AKIA...`).
fn prefixed_tokens(line: &str) -> String {
    let bytes = line.as_bytes();
    let mut out = String::with_capacity(line.len());
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        if !PREFIX_FIRST_BYTES[usize::from(bytes[i])] || (i > 0 && is_token_byte(bytes[i - 1])) {
            i += 1;
            continue;
        }
        let hit = TOKEN_PREFIXES.iter().find_map(|&(prefix, min)| {
            if !bytes[i..].starts_with(prefix.as_bytes()) {
                return None;
            }
            let body = bytes[i + prefix.len()..]
                .iter()
                .take_while(|&&b| is_token_byte(b))
                .count();
            (body >= min).then_some((prefix.len(), body))
        });
        match hit {
            Some((prefix, body)) => {
                out.push_str(&line[copied..i + prefix]);
                out.push_str(REDACTED);
                i += prefix + body;
                copied = i;
            }
            None => i += 1,
        }
    }
    out.push_str(&line[copied..]);
    out
}

#[cfg(test)]
mod tests;
