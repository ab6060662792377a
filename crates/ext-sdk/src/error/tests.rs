use std::sync::Arc;
use std::time::Duration;

use sidewire_jsonrpc::ErrorObject;

use super::*;

#[test]
fn a_fatal_oversized_frame_says_frame() {
    let err = Error::Connection(CloseReason::FrameTooLarge { limit: 8_388_608 });
    let text = err.to_string();
    assert!(text.contains("frame_too_large"), "{text}");
    assert!(text.contains("frame limit"), "{text}");
    assert!(err.is_fatal());
    assert!(err.is_frame_too_large());
    assert_eq!(
        Error::Connection(CloseReason::Garbage(Arc::from("x"))).reason(),
        Some(Reason::ProtocolError)
    );
    assert_eq!(Error::Connection(CloseReason::Eof).reason(), None);
}

#[test]
fn host_call_failures_map_to_their_reasons() {
    let map = |err| Error::from_call("host/content/read", err, ProtocolProfile::V1);
    let remote = map(sidewire_jsonrpc::Error::Remote {
        method: "host/content/read".to_owned(),
        error: Reason::ContentRefExpired.error_object(),
    });
    assert_eq!(remote.reason(), Some(Reason::ContentRefExpired));
    assert!(remote.is_call());
    let bare = map(sidewire_jsonrpc::Error::Remote {
        method: "host/content/read".to_owned(),
        error: ErrorObject::new(-32000, "no data"),
    });
    assert_eq!(bare.reason(), None);
    assert!(bare.to_string().contains("no reason"), "{bare}");
    let timeout = map(sidewire_jsonrpc::Error::Timeout {
        method: "host/content/read".to_owned(),
        after: Duration::from_secs(30),
        idle: false,
    });
    assert!(timeout.is_timeout());
    let closed = map(sidewire_jsonrpc::Error::Closed(CloseReason::Eof));
    assert_eq!(closed.reason(), Some(Reason::ProviderInterrupted));
    let large = map(sidewire_jsonrpc::Error::FrameTooLarge {
        method: "host/ui/publish".to_owned(),
        limit: 8_388_608,
    });
    assert!(large.is_frame_too_large());
    assert!(!large.is_fatal());
    let invalid = map(sidewire_jsonrpc::Error::InvalidResponse {
        method: "host/ui/publish".to_owned(),
        reason: "both result and error".into(),
    });
    assert_eq!(invalid.reason(), Some(Reason::ProtocolError));
}

#[test]
fn host_errors_are_read_with_the_connection_profile() {
    let remote = |profile| {
        Error::from_call(
            "host/ui/publish",
            sidewire_jsonrpc::Error::Remote {
                method: "host/ui/publish".to_owned(),
                error: Reason::BrowserUnavailable.error_object(),
            },
            profile,
        )
    };
    // Spec delta §3.1: a v2-only reason is understood on V2 and is no reason on V1.
    assert_eq!(
        remote(ProtocolProfile::V2).reason(),
        Some(Reason::BrowserUnavailable)
    );
    assert_eq!(remote(ProtocolProfile::V1).reason(), None);
}

#[test]
fn local_errors_have_predicates() {
    assert!(
        Error::NotReady {
            method: "host/ui/publish"
        }
        .is_not_ready()
    );
    assert!(Error::Config("x".to_owned()).is_config());
    assert_eq!(Error::callback("boom").to_string(), "boom");
    assert_eq!(Error::callback("boom").reason(), None);
    let content = Error::Content {
        content_ref: "content_0".to_owned(),
        detail: "short".to_owned(),
    };
    assert!(content.is_content());
    assert_eq!(content.reason(), Some(Reason::ProtocolError));
}

#[test]
fn an_io_cause_is_named_once_in_a_chain() {
    let err = Error::from(std::io::Error::other("stdin is gone"));
    let mut text = err.to_string();
    let mut next = std::error::Error::source(&err);
    while let Some(cause) = next {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        next = cause.source();
    }
    assert_eq!(text.matches("stdin is gone").count(), 1, "{text}");
}
