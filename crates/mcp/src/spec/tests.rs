//! Unit tests of specs: transport names, defaults, timeout resolution, roots, validation.

use std::time::Duration;

use super::*;

#[test]
fn transport_names() {
    for (name, transport) in [
        (None, Transport::Stdio),
        (Some("stdio"), Transport::Stdio),
        (Some(" STDIO "), Transport::Stdio),
        (Some("http"), Transport::StreamableHttp),
        (Some("streamable-http"), Transport::StreamableHttp),
        (Some("streamable_http"), Transport::StreamableHttp),
        (Some("Streamable-HTTP"), Transport::StreamableHttp),
        (Some("sse"), Transport::Sse),
    ] {
        assert_eq!(Transport::from_type(name).unwrap(), transport, "{name:?}");
    }
    let err = Transport::from_type(Some("websocket")).unwrap_err();
    assert!(err.is_config());
    let text = err.to_string();
    assert!(text.contains("\"websocket\""), "{text}");
    for allowed in ["stdio", "http", "streamable-http", "streamable_http", "sse"] {
        assert!(text.contains(&format!("\"{allowed}\"")), "{text}");
    }
}

#[test]
fn defaults_and_timeout_resolution() {
    let spec = ServerSpec::stdio("s", "cmd")
        .call_timeout(Duration::from_secs(10))
        .tool_timeout("slow", Duration::from_secs(99));
    assert_eq!(spec.startup_budget(), Duration::from_secs(30));
    assert_eq!(spec.call_duration_cap(), Duration::from_secs(3600));
    assert_eq!(spec.message_cap(), 8 * 1024 * 1024);
    assert_eq!(spec.timeout_for_tool("slow"), Duration::from_secs(99));
    assert_eq!(spec.timeout_for_tool("fast"), Duration::from_secs(10));
    assert_eq!(
        ServerSpec::stdio("s", "c").default_call_timeout(),
        Duration::from_secs(300)
    );
}

#[test]
fn roots_are_file_uris() {
    let root = Root::dir("/tmp/a b/c%d");
    assert_eq!(root.uri, "file:///tmp/a%20b/c%25d");
    assert_eq!(root.name.as_deref(), Some("c%d"));
    let relative = Root::dir("x");
    assert!(relative.uri.starts_with("file:///") && relative.uri.ends_with("/x"));
}

#[test]
fn validation() {
    assert!(ServerSpec::stdio("s", "cmd").validate().is_ok());
    assert!(
        ServerSpec::stdio("", "cmd")
            .validate()
            .unwrap_err()
            .is_config()
    );
    assert!(
        ServerSpec::stdio("s", " ")
            .validate()
            .unwrap_err()
            .is_config()
    );
    assert!(ServerSpec::http("s", "https://x/mcp").validate().is_ok());
    assert!(ServerSpec::sse("s", "HTTP://x/sse").validate().is_ok());
    let err = ServerSpec::http("s", "ftp://x").validate().unwrap_err();
    assert!(err.to_string().contains("http:// or https://"), "{err}");
}

#[test]
fn url_secrets_are_redacted_wherever_the_url_is_shown() {
    let spec = ServerSpec::http("s", "https://u:pw@h.example/tn-9012/a%20b/mcp?key=k#f")
        .url_secrets(["tn-9012", "h.example", "a b"]);
    // The host is not in the path, so it stays; the value is found as the URL encodes it too.
    assert_eq!(
        spec.shown_url().unwrap(),
        "https://REDACTED@h.example/REDACTED/REDACTED/mcp?key=REDACTED"
    );
    let err = ServerSpec::http("s", "ftp://h.example/tn-9012")
        .url_secrets(["tn-9012"])
        .validate()
        .unwrap_err();
    assert!(!err.to_string().contains("tn-9012"), "{err}");
    assert_eq!(ServerSpec::http("s", "not a url").shown_url(), None);
}

#[test]
fn an_instance_is_the_same_server_under_another_name_with_the_same_credentials() {
    let spec = ServerSpec::http("notes", "https://notes.example.com/mcp")
        .header("x-team", "a")
        .call_timeout(Duration::from_secs(7));
    let one = spec.instance("notes#1");
    assert_eq!(one.name(), "notes#1");
    assert_eq!(one.credentials_name(), "notes");
    assert_eq!(spec.credentials_name(), "notes");
    // An instance of an instance keeps the configured name's credentials.
    assert_eq!(one.instance("notes#2").credentials_name(), "notes");
    assert_eq!(one.url(), spec.url());
    assert_eq!(one.headers(), spec.headers());
    assert_eq!(one.timeout_for_tool("any"), Duration::from_secs(7));
    #[cfg(feature = "auth")]
    assert_eq!(
        crate::auth::store_key(&one),
        crate::auth::store_key(&spec),
        "its tokens are the configured server's"
    );
}
