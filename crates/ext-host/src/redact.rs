//! The credential redactor (spec §11.3): `Bearer <token>` sequences and the values of
//! credential-named environment variables are replaced by `[REDACTED]`.
//!
//! It is applied to everything a sidecar can make the host show or log: block and deny reasons,
//! peer error messages, UI strings, audit records, warnings and stderr tails. It is not a secret
//! scanner: it knows the secrets the host was given, nothing else.

use std::sync::Arc;

/// What a redacted secret becomes.
pub const REDACTED: &str = "[REDACTED]";

/// Environment variable name suffixes whose values are secrets (§11.3).
const SECRET_SUFFIXES: &[&str] = &["_KEY", "_TOKEN", "_SECRET", "_PASSWORD"];

/// Values shorter than this are not redacted: they would hide ordinary words (§11.3).
const MIN_SECRET_CHARS: usize = 8;

/// Replaces credentials with `[REDACTED]`. Cheap to clone.
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
pub(crate) fn is_secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    SECRET_SUFFIXES.iter().any(|suffix| upper.ends_with(suffix))
}

impl Redactor {
    /// A redactor for the secrets among `vars` (name, value pairs): the host's environment and
    /// every manifest `env`.
    pub fn new<I, K, V>(vars: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<str>,
        V: AsRef<str>,
    {
        let mut secrets: Vec<String> = vars
            .into_iter()
            .filter(|(name, value)| {
                is_secret_name(name.as_ref()) && value.as_ref().chars().count() >= MIN_SECRET_CHARS
            })
            .map(|(_, value)| value.as_ref().to_owned())
            .collect();
        secrets.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        secrets.dedup();
        Redactor {
            secrets: secrets.into(),
        }
    }

    /// A redactor for the host process's own environment.
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
        Redactor::new(
            self.secrets
                .iter()
                .chain(extra.secrets.iter())
                .map(|s| ("X_SECRET", s.as_str())),
        )
    }

    /// `text` with every known secret and every `Bearer <token>` replaced.
    pub fn redact(&self, text: &str) -> String {
        let mut out = redact_bearer(text);
        for secret in self.secrets.iter() {
            if out.contains(secret.as_str()) {
                out = out.replace(secret.as_str(), REDACTED);
            }
        }
        out
    }
}

/// Replaces the token after every case-insensitive `bearer` followed by white space.
fn redact_bearer(text: &str) -> String {
    const WORD: &[u8] = b"bearer";
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut i = 0;
    while i + WORD.len() < bytes.len() {
        if !bytes[i..i + WORD.len()].eq_ignore_ascii_case(WORD) {
            i += 1;
            continue;
        }
        let mut j = i + WORD.len();
        let space_start = j;
        while j < bytes.len() && (bytes[j] == b' ' || bytes[j] == b'\t') {
            j += 1;
        }
        let token_start = j;
        while j < bytes.len() && !bytes[j].is_ascii_whitespace() {
            j += 1;
        }
        if space_start == token_start || token_start == j {
            i += 1;
            continue;
        }
        // `token_start` and `j` sit on ASCII bytes or the ends, so both are char boundaries.
        out.push_str(&text[copied..token_start]);
        out.push_str(REDACTED);
        copied = j;
        i = j;
    }
    out.push_str(&text[copied..]);
    out
}

#[cfg(test)]
mod tests;
