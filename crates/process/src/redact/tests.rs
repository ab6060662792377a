//! Unit tests of the redactor: the environment-secret rules (from ext-host) and the token
//! patterns (from mcp's stdio), which now run together.

use super::*;

#[track_caller]
fn check(input: &str, expected: &str) {
    assert_eq!(
        Redactor::default().redact(input),
        expected,
        "input: {input}"
    );
}

#[test]
fn bearer_tokens_are_redacted_whatever_their_length_or_case() {
    let r = Redactor::default();
    assert_eq!(r.redact("Bearer x"), "Bearer [REDACTED]");
    assert_eq!(
        r.redact("auth: bearer abc.def-1 then"),
        "auth: bearer [REDACTED] then"
    );
    assert_eq!(r.redact("BEARER\tt0k"), "BEARER\t[REDACTED]");
    assert_eq!(r.redact("a bearer"), "a bearer");
    assert_eq!(r.redact("Bearer  "), "Bearer  ");
    assert_eq!(r.redact("héllo Bearer ü€"), "héllo Bearer [REDACTED]");
}

#[test]
fn bearer_tokens_in_headers_and_prose() {
    check(
        "Authorization: Bearer abc.def-123",
        "Authorization: Bearer [REDACTED]",
    );
    check(
        "sent header authorization=bearer xyz, ok",
        "sent header authorization=bearer [REDACTED], ok",
    );
    check("use a BEARER   tok3n now", "use a BEARER   [REDACTED] now");
    check("the bearer of bad news", "the bearer [REDACTED] bad news");
    check(r#"{"h": "Bearer abc"}"#, r#"{"h": "Bearer [REDACTED]"}"#);
}

#[test]
fn credential_named_values_of_eight_or_more_chars_are_redacted() {
    let r = Redactor::new([
        ("FOO_TOKEN", "supersecret-1"),
        ("API_KEY", "short"),
        ("db_password", "hunter2hunter2"),
        ("PLAIN", "visible-value"),
    ]);
    assert_eq!(r.secret_count(), 2);
    assert_eq!(
        r.redact("t=supersecret-1 k=short p=hunter2hunter2 v=visible-value"),
        "t=[REDACTED] k=short p=[REDACTED] v=visible-value"
    );
    let more = r.with([("X_SECRET", "another-one")]);
    assert_eq!(
        more.redact("another-one supersecret-1"),
        "[REDACTED] [REDACTED]"
    );
    assert!(!format!("{r:?}").contains("supersecret"));
}

#[test]
fn a_secret_containing_another_is_replaced_whole() {
    let r = Redactor::new([("A_TOKEN", "abcdefgh"), ("B_TOKEN", "abcdefghijkl")]);
    assert_eq!(r.redact("abcdefghijkl"), "[REDACTED]");
}

#[test]
fn known_secrets_go_first_so_no_pattern_splits_one() {
    // A URL-looking secret: the userinfo rule alone would leave its host part visible.
    let r = Redactor::new([("DB_PASSWORD", "p4ss://x:y@secret-host")]);
    assert_eq!(
        r.redact("dsn p4ss://x:y@secret-host/db"),
        "dsn [REDACTED]/db"
    );
    // A multi-line secret (a PEM key) is caught across its lines.
    let r = Redactor::new([("PRIVATE_KEY", "-----BEGIN-----\nabcdefgh\n-----END-----")]);
    assert_eq!(
        r.redact("key: -----BEGIN-----\nabcdefgh\n-----END-----\nnext"),
        "key: [REDACTED]\nnext"
    );
}

#[test]
fn key_value_pairs() {
    check("api_key=abc123 user=bob", "api_key=[REDACTED] user=bob");
    check("OPENAI_API_KEY=sk-x", "OPENAI_API_KEY=[REDACTED]");
    check(
        r#"{"password": "hunter 2", "user": "bob"}"#,
        r#"{"password": "[REDACTED]", "user": "bob"}"#,
    );
    check("GITHUB_TOKEN: ghx;rest", "GITHUB_TOKEN: [REDACTED];rest");
    check(
        "url?access_token=abc&x=1",
        "url?access_token=[REDACTED]&x=1",
    );
    check("client_secret='s3cr3t'", "client_secret='[REDACTED]'");
    check(
        "max_tokens=100 temperature=1",
        "max_tokens=100 temperature=1",
    );
    check("tokens: 5", "tokens: 5");
    check("secret=", "secret=");
}

#[test]
fn an_unclosed_quote_does_not_hide_the_following_lines() {
    check(
        "password: \"abc\nnext line\n",
        "password: \"[REDACTED]\nnext line\n",
    );
}

#[test]
fn known_token_prefixes() {
    check("key sk-proj-abcdefghijklmnop end", "key sk-[REDACTED] end");
    check("ghp_0123456789abcdefghij", "ghp_[REDACTED]");
    check("(xoxb-1234-5678-abcd)", "(xoxb-[REDACTED])");
    check("AKIAIOSFODNN7EXAMPLE", "AKIA[REDACTED]");
    check("sk-learn is a library", "sk-learn is a library");
    check("task-abcdefghijklmnopqrst", "task-abcdefghijklmnopqrst");
}

#[test]
fn url_credentials() {
    check(
        "connecting to postgres://admin:pw@db:5432/x",
        "connecting to postgres://[REDACTED]@db:5432/x",
    );
    check("see https://example.com/a@b", "see https://example.com/a@b");
    check(
        "https://user@host/ and http://x:y@z",
        "https://[REDACTED]@host/ and http://[REDACTED]@z",
    );
}

#[test]
fn text_without_secrets_is_unchanged_and_utf8_is_safe() {
    for line in [
        "",
        "plain log line",
        "é ü 日本 sk-",
        "key",
        "a=b c:d",
        "ünï=1 sk-ünïcødé",
        "two\nlines\n",
    ] {
        check(line, line);
    }
    check("日本 token=日本語 x", "日本 token=[REDACTED] x");
}

#[test]
fn secret_names_end_in_a_credential_suffix_in_any_case() {
    for name in ["FOO_KEY", "gh_token", "X_SECRET", "Db_Password"] {
        assert!(is_secret_name(name), "{name}");
    }
    for name in ["KEYS", "TOKEN_FILE", "PATH", "PASSWORD"] {
        assert!(!is_secret_name(name), "{name}");
    }
}
