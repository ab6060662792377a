//! Each cause is named once when an error's chain is printed.

use super::*;

/// The message and every source, joined as `anyhow`'s `{:#}` joins them.
fn chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut next = err.source();
    while let Some(cause) = next {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        next = cause.source();
    }
    text
}

#[test]
fn an_io_or_serialize_cause_is_named_once_in_a_chain() {
    let io = Error::from(std::io::Error::other("disk on fire"));
    assert!(io.is_io());
    assert_eq!(
        chain(&io).matches("disk on fire").count(),
        1,
        "{}",
        chain(&io)
    );
    let serde = serde_json::from_str::<u8>("300").unwrap_err();
    let detail = serde.to_string();
    let err = Error::Serialize(serde);
    assert_eq!(chain(&err).matches(&detail).count(), 1, "{}", chain(&err));
}
