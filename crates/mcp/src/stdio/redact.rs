//! Credential redaction for server stderr before it is kept, logged or put in an error.
//!
//! Servers print their configuration, request headers and environment when they fail, and a
//! stderr tail ends up in logs and bug reports. This removes what commonly leaks: bearer
//! tokens, `key=value` / `"key": "value"` pairs whose key names a secret, well-known token
//! prefixes (`sk-`, `ghp_`, `xoxb-`, `AKIA`, ...) and `user:password@` in URLs. It is a
//! best-effort filter over text, not a guarantee; it errs on the side of hiding.

const REDACTED: &str = "[REDACTED]";

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

/// `line` with credentials replaced by `[REDACTED]`.
pub(crate) fn redact(line: &str) -> String {
    let line = url_userinfo(line);
    let line = key_values(&line);
    let line = bearer(&line);
    prefixed_tokens(&line)
}

fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

fn is_ident_byte(b: u8) -> bool {
    is_token_byte(b) || b == b'.'
}

/// Whether an identifier names a secret.
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

/// `Bearer <token>` anywhere (case-insensitive).
fn bearer(line: &str) -> String {
    let lower = line.to_ascii_lowercase();
    let bytes = line.as_bytes();
    let mut out = String::with_capacity(line.len());
    let mut copied = 0;
    let mut search = 0;
    while let Some(found) = lower[search..].find("bearer") {
        let at = search + found;
        let mut j = at + "bearer".len();
        search = j;
        if at > 0 && bytes[at - 1].is_ascii_alphanumeric() {
            continue;
        }
        let spaces = bytes[j..].iter().take_while(|&&b| b == b' ').count();
        if spaces == 0 {
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
        if j > start && !line[start..].starts_with(REDACTED) {
            out.push_str(&line[copied..start]);
            out.push_str(REDACTED);
            copied = j;
        }
        search = j;
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
        if i > 0 && is_token_byte(bytes[i - 1]) {
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
