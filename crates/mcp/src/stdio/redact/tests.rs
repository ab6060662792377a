//! Unit tests of credential redaction.

use super::redact;

#[track_caller]
fn check(input: &str, expected: &str) {
    assert_eq!(redact(input), expected, "input: {input}");
}

#[test]
fn bearer_tokens() {
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
    ] {
        check(line, line);
    }
    check("日本 token=日本語 x", "日本 token=[REDACTED] x");
}
