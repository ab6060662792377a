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
fn a_serde_cause_is_named_once_in_a_chain() {
    let serde = || serde_json::from_str::<u8>("300").unwrap_err();
    let detail = serde().to_string();
    for err in [
        Error::Decode {
            method: "tools/list".to_owned(),
            error: serde(),
        },
        Error::Serialize {
            method: "tools/call".to_owned(),
            error: serde(),
        },
    ] {
        let text = chain(&err);
        assert_eq!(text.matches(&detail).count(), 1, "{text}");
    }
}

#[test]
fn a_local_cause_is_the_source_and_named_once() {
    let err = Error::Local {
        method: "tools/call".to_owned(),
        cause: "HTTP 401 from http://x/mcp".into(),
    };
    assert!(err.is_local() && !err.is_remote());
    let text = chain(&err);
    assert_eq!(
        text,
        "tools/call failed locally: HTTP 401 from http://x/mcp"
    );
    assert_eq!(text.matches("tools/call").count(), 1, "{text}");
}
