//! Unit tests of the error type: predicates, mapping from jsonrpc, and the display text.

use std::sync::Arc;
use std::time::Duration;

use sidewire_jsonrpc::{CloseReason, ErrorObject};

use super::*;

#[test]
fn display_names_server_stage_exit_and_stderr() {
    let server: Arc<str> = "files".into();
    let err = Error::rpc(
        "initialize",
        sidewire_jsonrpc::Error::Closed(CloseReason::Eof),
    )
    .with_server(&server)
    .with_stage(Stage::Initialize, Duration::from_millis(1500))
    .with_diagnostics(
        Some("exited with status 3".to_owned()),
        Some("boom\n".to_owned()),
    );
    assert!(err.is_closed());
    assert_eq!(err.server(), Some("files"));
    assert_eq!(err.stage().map(|(stage, _)| stage), Some(Stage::Initialize));
    assert_eq!(err.exit_status(), Some("exited with status 3"));
    assert_eq!(err.stderr_tail(), Some("boom\n"));
    let text = err.to_string();
    assert!(text.starts_with("MCP server `files`: startup initialize failed after 1.5 s: initialize: the server closed the connection"), "{text}");
    assert!(
        text.ends_with("; the process exited with status 3; stderr: boom"),
        "{text}"
    );
}

#[test]
fn the_display_shows_only_the_end_of_a_long_tail() {
    let tail = format!("{}END", "é".repeat(4000));
    let err = Error::config("x").with_diagnostics(None, Some(tail.clone()));
    assert_eq!(err.stderr_tail(), Some(tail.as_str()));
    let text = err.to_string();
    assert!(text.ends_with("END"));
    assert!(text.contains("stderr: ..."));
    assert!(text.len() < 2200, "{}", text.len());
}

#[test]
fn blank_tails_are_not_attached_and_first_context_wins() {
    let a: Arc<str> = "a".into();
    let b: Arc<str> = "b".into();
    let err = Error::config("x")
        .with_diagnostics(None, Some("  \n".to_owned()))
        .with_server(&a)
        .with_server(&b)
        .with_stage(Stage::Launch, Duration::ZERO)
        .with_stage(Stage::ListTools, Duration::ZERO);
    assert_eq!(err.stderr_tail(), None);
    assert_eq!(err.server(), Some("a"));
    assert_eq!(err.stage().unwrap().0, Stage::Launch);
}

#[test]
fn jsonrpc_errors_map_to_predicates() {
    let remote = Error::rpc(
        "tools/call",
        sidewire_jsonrpc::Error::Remote {
            method: "tools/call".to_owned(),
            error: ErrorObject::invalid_params("nope"),
        },
    );
    assert!(remote.is_remote());
    assert_eq!(remote.remote().unwrap().code, -32602);
    let timeout = Error::rpc(
        "ping",
        sidewire_jsonrpc::Error::Timeout {
            method: "ping".to_owned(),
            after: Duration::from_millis(5),
            idle: false,
        },
    );
    assert!(timeout.is_timeout());
    assert!(timeout.to_string().contains("ping timed out after 5 ms"));
    let large = Error::rpc(
        "tools/call",
        sidewire_jsonrpc::Error::ResponseTooLarge {
            method: "tools/call".to_owned(),
            limit: 10,
        },
    );
    assert!(large.is_too_large());
    for err in [&remote, &timeout, &large] {
        assert!(!err.is_closed() && !err.is_config() && !err.is_spawn());
    }
}

#[test]
fn every_kind_has_its_predicate() {
    let cases = [
        (
            Error::new(Kind::Spawn {
                message: String::new(),
            }),
            Error::is_spawn as fn(&Error) -> bool,
        ),
        (
            Error::new(Kind::Incompatible {
                got: "1".into(),
                offered: "2",
                supported: String::new(),
            }),
            Error::is_incompatible_version,
        ),
        (
            Error::new(Kind::InvalidResponse(String::new())),
            Error::is_invalid_response,
        ),
        (
            Error::new(Kind::NotFound(String::new())),
            Error::is_not_found,
        ),
        (
            Error::new(Kind::AlreadyExists(String::new())),
            Error::is_already_exists,
        ),
        (
            Error::new(Kind::ShutDown(String::new())),
            Error::is_shut_down,
        ),
        (
            Error::new(Kind::StartFailed(String::new())),
            Error::is_start_failed,
        ),
        (
            Error::new(Kind::Unsupported(String::new())),
            Error::is_unsupported,
        ),
        (
            Error::new(Kind::SubscriptionLimit(String::new())),
            Error::is_subscription_limit,
        ),
        (Error::config(""), Error::is_config),
    ];
    for (err, predicate) in &cases {
        assert!(predicate(err), "{err:?}");
        let others = cases.iter().filter(|(_, p)| p(err)).count();
        assert_eq!(others, 1, "{err:?} matches more than one predicate");
    }
}

#[test]
fn a_refused_listed_version_is_an_incompatible_version() {
    let err = Error::new(Kind::VersionRefused {
        version: "2026-07-28",
    });
    assert!(err.is_incompatible_version(), "{err}");
    assert!(!err.is_remote() && !err.is_invalid_response(), "{err}");
}

#[test]
fn a_spawn_failure_names_its_os_error_once_in_a_chain() {
    let os = std::io::Error::from(std::io::ErrorKind::NotFound);
    let err = Error::new(Kind::Spawn {
        message: format!("cannot start /no/such: {os}"),
    });
    assert!(err.is_spawn());
    // The OS error is in the message; returning it as the source too would print it twice.
    assert!(std::error::Error::source(&err).is_none());
    assert_eq!(err.to_string().matches(&os.to_string()).count(), 1);
}

#[test]
fn a_signalled_exit_reads_as_a_sentence() {
    let err = Error::config("x").with_diagnostics(Some("killed by signal 9".to_owned()), None);
    assert_eq!(err.exit_status(), Some("killed by signal 9"));
    assert!(
        err.to_string()
            .ends_with("; the process was killed by signal 9"),
        "{err}"
    );
}

#[test]
fn an_errors_own_text_is_bounded_whatever_built_it() {
    let server: Arc<str> = "files".into();
    let huge = "z".repeat(1024 * 1024);
    let own = format!("the result: {huge}; end");
    let all = own.len();
    let err = Error::new(Kind::InvalidResponse(own))
        .with_server(&server)
        .with_diagnostics(None, Some("the tail".to_owned()));
    let text = err.to_string();
    assert!(
        text.len() < crate::text::ERROR_TEXT_BYTES + 200,
        "{} bytes",
        text.len()
    );
    assert!(
        text.contains(&format!("… ({all} bytes in all)")),
        "{}",
        &text[text.len() - 200..]
    );
    // What is around the error's own text is still there.
    assert!(text.starts_with("MCP server `files`: the result: zzz"));
    assert!(
        text.ends_with("; stderr: the tail"),
        "{}",
        &text[text.len() - 100..]
    );
    assert!(err.reason().len() < crate::text::ERROR_TEXT_BYTES + 100);
}

#[test]
fn error_line_joins_an_error_and_each_cause_once() {
    #[derive(Debug)]
    struct Outer(std::io::Error);
    impl fmt::Display for Outer {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("the call failed")
        }
    }
    impl std::error::Error for Outer {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }
    let err = Outer(std::io::Error::other("the pipe broke"));
    assert_eq!(error_line(&err), "the call failed: the pipe broke");
    assert_eq!(error_line(&err.0), "the pipe broke");
}
