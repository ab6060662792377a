use super::*;

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
fn credential_named_values_of_eight_or_more_chars_are_redacted() {
    let r = Redactor::new([
        ("FOO_TOKEN", "supersecret-1"),
        ("API_KEY", "short"),
        ("db_password", "hunter2hunter2"),
        ("PLAIN", "visible-value"),
    ]);
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
