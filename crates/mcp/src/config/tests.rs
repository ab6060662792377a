//! Unit tests of `mcpServers` parsing.

use std::time::Duration;

use super::*;

#[test]
fn parses_the_common_shapes() {
    let specs = parse_mcp_servers(
        r#"{
          "mcpServers": {
            "files": {"command": "npx", "args": ["-y", "pkg@latest"], "env": {"A": "1"}, "cwd": "/tmp"},
            "remote": {"type": "http", "url": "https://example.com/mcp", "headers": {"Authorization": "Bearer x"}},
            "legacy": {"type": "sse", "url": "http://localhost:3000/sse"},
            "inferred": {"url": "https://example.com/mcp"},
            "explicit": {"type": "stdio", "command": "/bin/server", "disabled": false, "alwaysAllow": []}
          },
          "name": "a plugin manifest may carry other members"
        }"#,
    )
    .unwrap();
    let by_name = |name: &str| specs.iter().find(|s| s.name() == name).unwrap();
    assert_eq!(specs.len(), 5);
    let files = by_name("files");
    assert_eq!(files.transport(), Transport::Stdio);
    assert_eq!(files.command(), "npx");
    assert_eq!(files.arguments(), ["-y", "pkg@latest"]);
    assert_eq!(files.environment().get("A").map(String::as_str), Some("1"));
    assert_eq!(files.working_dir(), Some(Path::new("/tmp")));
    assert_eq!(files.startup_budget(), Duration::from_secs(30));
    let remote = by_name("remote");
    assert_eq!(remote.transport(), Transport::StreamableHttp);
    assert_eq!(remote.url(), "https://example.com/mcp");
    assert_eq!(remote.headers().len(), 1);
    assert_eq!(by_name("legacy").transport(), Transport::Sse);
    assert_eq!(by_name("inferred").transport(), Transport::StreamableHttp);
    assert_eq!(by_name("explicit").command(), "/bin/server");
}

fn error(text: &str) -> String {
    let err = parse_mcp_servers(text).unwrap_err();
    assert!(err.is_config(), "{err:?}");
    err.to_string()
}

#[test]
fn errors_name_the_field_path() {
    assert_eq!(
        error(r#"{"mcpServers": {"files": {"command": "npx", "args": ["-y", 3]}}}"#),
        "mcpServers.files.args[1]: expected a string, got a number"
    );
    assert_eq!(
        error(r#"{"mcpServers": {"files": {"command": "npx", "env": {"TOKEN": true}}}}"#),
        "mcpServers.files.env.TOKEN: expected a string, got a boolean"
    );
    assert_eq!(
        error(r#"{"mcpServers": {"my server": {"command": 7}}}"#),
        "mcpServers.\"my server\".command: expected a string, got a number"
    );
    assert_eq!(
        error(r#"{"mcpServers": {"files": {"args": []}}}"#),
        "mcpServers.files.command: a stdio server needs a non-empty string `command`"
    );
    assert_eq!(
        error(r#"{"mcpServers": {"files": []}}"#),
        "mcpServers.files: expected an object, got an array"
    );
    assert_eq!(
        error(r#"{"mcpServers": {"files": {"command": "x", "headers": "h"}}}"#),
        "mcpServers.files.headers: expected an object of strings, got a string"
    );
    let text = error(r#"{"mcpServers": {"w": {"type": "websocket", "url": "ws://x"}}}"#);
    assert!(
        text.starts_with("mcpServers.w.type: unknown transport type \"websocket\""),
        "{text}"
    );
    assert!(text.contains("\"sse\""), "{text}");
    let text = error(r#"{"mcpServers": {"w": {"type": "http"}}}"#);
    assert_eq!(text, "mcpServers.w.url: an http server needs a `url`");
    let text = error(r#"{"mcpServers": {"w": {"type": "http", "url": "ftp://x"}}}"#);
    assert!(text.starts_with("mcpServers.w.url: "), "{text}");
}

#[test]
fn document_level_errors() {
    assert_eq!(
        error("[]"),
        "expected a JSON object with an `mcpServers` member, got an array"
    );
    assert_eq!(error("{}"), "missing the `mcpServers` member");
    assert_eq!(
        error(r#"{"mcpServers": 1}"#),
        "mcpServers: expected an object, got a number"
    );
    let text = error("{\n  \"mcpServers\": {,}\n}");
    assert!(text.starts_with("invalid JSON at line 2 column"), "{text}");
    assert!(
        parse_mcp_servers(r#"{"mcpServers": {}}"#)
            .unwrap()
            .is_empty()
    );
}

#[test]
fn load_names_the_file() {
    let missing = Path::new("/nonexistent/sidewire/.mcp.json");
    let err = load_mcp_servers(missing).unwrap_err();
    assert!(
        err.to_string().contains("/nonexistent/sidewire/.mcp.json"),
        "{err}"
    );
    let dir = std::env::temp_dir().join(format!("sidewire-mcp-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(".mcp.json");
    std::fs::write(&path, r#"{"mcpServers": {"a": {"command": 1}}}"#).unwrap();
    let err = load_mcp_servers(&path).unwrap_err();
    assert!(
        err.to_string()
            .starts_with(&format!("{}: mcpServers.a.command", path.display())),
        "{err}"
    );
    std::fs::write(&path, r#"{"mcpServers": {"a": {"command": "x"}}}"#).unwrap();
    assert_eq!(load_mcp_servers(&path).unwrap().len(), 1);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_startup_timeout_is_read_in_seconds_or_milliseconds() {
    let specs = parse_mcp_servers(
        r#"{"mcpServers": {
            "a": {"command": "x", "startup_timeout_sec": 2.5},
            "b": {"command": "x", "startup_timeout_ms": 750},
            "c": {"command": "x", "startup_timeout_sec": null}
        }}"#,
    )
    .unwrap();
    assert_eq!(specs[0].startup_budget(), Duration::from_millis(2500));
    assert_eq!(specs[1].startup_budget(), Duration::from_millis(750));
    assert_eq!(specs[2].startup_budget(), crate::DEFAULT_STARTUP_TIMEOUT);
}

#[test]
fn a_bad_startup_timeout_names_its_field() {
    for (entry, member) in [
        (r#""startup_timeout_sec": 0"#, "startup_timeout_sec"),
        (r#""startup_timeout_sec": -1"#, "startup_timeout_sec"),
        (r#""startup_timeout_ms": "30""#, "startup_timeout_ms"),
        (r#""startup_timeout_sec": 1e300"#, "startup_timeout_sec"),
        (
            r#""startup_timeout_sec": 1, "startup_timeout_ms": 1"#,
            "startup_timeout_sec",
        ),
    ] {
        let text = format!(r#"{{"mcpServers": {{"s": {{"command": "x", {entry}}}}}}}"#);
        let err = parse_mcp_servers(&text).unwrap_err();
        assert!(err.is_config(), "{entry}: {err}");
        assert!(
            err.to_string()
                .starts_with(&format!("mcpServers.s.{member}: ")),
            "{entry}: {err}"
        );
    }
}

#[test]
fn restart_policies_parse_with_defaults() {
    let specs = parse_mcp_servers(
        r#"{"mcpServers": {
          "default": {"command": "a"},
          "never": {"command": "a", "restart": false},
          "on": {"command": "a", "restart": true},
          "tuned": {"command": "a", "restart": {"maxRestarts": 5, "withinMs": 1000, "initialBackoffMs": 10, "maxBackoffMs": 40}}
        }}"#,
    )
    .unwrap();
    let by_name = |name: &str| {
        specs
            .iter()
            .find(|s| s.name() == name)
            .unwrap()
            .restart_policy()
    };
    assert_eq!(by_name("default"), Restart::default());
    assert_eq!(by_name("on"), Restart::default());
    assert_eq!(by_name("never"), Restart::Never);
    let Restart::OnCrash(tuned) = by_name("tuned") else {
        panic!("expected a policy");
    };
    assert_eq!(tuned.max_restarts, 5);
    assert_eq!(tuned.within, Duration::from_secs(1));
    assert_eq!(tuned.initial_backoff, Duration::from_millis(10));
    assert_eq!(tuned.max_backoff, Duration::from_millis(40));
    assert_eq!(tuned.delay(1), Duration::from_millis(10));
    assert_eq!(tuned.delay(2), Duration::from_millis(20));
    assert_eq!(tuned.delay(5), Duration::from_millis(40));
    let Restart::OnCrash(default) = Restart::default() else {
        panic!("on by default");
    };
    assert_eq!(
        (
            default.max_restarts,
            default.within,
            default.initial_backoff
        ),
        (3, Duration::from_secs(60), Duration::from_millis(500))
    );
}

#[test]
fn restart_errors_name_the_field_path() {
    assert_eq!(
        error(r#"{"mcpServers": {"a": {"command": "a", "restart": "yes"}}}"#),
        "mcpServers.a.restart: expected a boolean or an object, got a string"
    );
    assert_eq!(
        error(r#"{"mcpServers": {"a": {"command": "a", "restart": {"maxRestarts": -1}}}}"#),
        "mcpServers.a.restart.maxRestarts: expected a non-negative integer, got a number"
    );
    assert_eq!(
        error(r#"{"mcpServers": {"a": {"command": "a", "restart": {"withinMs": "1s"}}}}"#),
        "mcpServers.a.restart.withinMs: expected a non-negative integer, got a string"
    );
}

#[test]
fn listing_caps_come_from_the_entry() {
    let specs = parse_mcp_servers(
        r#"{"mcpServers": {
            "capped": {"command": "x", "maxListItems": 50, "maxListBytes": 4096},
            "default": {"command": "x", "maxListItems": null}
        }}"#,
    )
    .unwrap();
    assert_eq!(specs[0].name(), "capped");
    assert_eq!(specs[0].list_item_cap(), 50);
    assert_eq!(specs[0].list_byte_cap(), 4096);
    assert_eq!(specs[1].list_item_cap(), crate::DEFAULT_MAX_LIST_ITEMS);
    assert_eq!(specs[1].list_byte_cap(), crate::DEFAULT_MAX_LIST_BYTES);
}

#[test]
fn bad_listing_caps_name_their_field() {
    let entry =
        |member: &str| format!(r#"{{"mcpServers": {{"s": {{"command": "x", {member}}}}}}}"#);
    assert_eq!(
        error(&entry(r#""maxListItems": 0"#)),
        "mcpServers.s.maxListItems: expected a positive integer, got 0"
    );
    assert_eq!(
        error(&entry(r#""maxListItems": -3"#)),
        "mcpServers.s.maxListItems: expected a positive integer, got -3"
    );
    assert_eq!(
        error(&entry(r#""maxListBytes": 1.5"#)),
        "mcpServers.s.maxListBytes: expected a positive integer, got 1.5"
    );
    assert_eq!(
        error(&entry(r#""maxListBytes": "32MiB""#)),
        "mcpServers.s.maxListBytes: expected a positive integer, got a string"
    );
}

/// Parses one HTTP server `s` whose entry has `oauth`, with `env` as the environment.
fn oauth_of(oauth: &str, env: &[(&str, &str)]) -> Result<OAuthSettings, Error> {
    let text = format!(
        r#"{{"mcpServers": {{"s": {{"url": "https://example.com/mcp", "oauth": {oauth}}}}}}}"#
    );
    let lookup = |name: &str| {
        env.iter()
            .find(|(key, _)| *key == name)
            .map(|(_, value)| (*value).to_owned())
    };
    let specs = parse_with_env(&text, &lookup)?;
    Ok(specs[0].oauth_settings().clone())
}

fn oauth_error(oauth: &str, env: &[(&str, &str)]) -> String {
    let err = oauth_of(oauth, env).expect_err("a config error");
    assert!(err.is_config(), "{err:?}");
    err.to_string()
}

#[test]
fn an_oauth_block_in_claude_codes_shape_sets_every_field() {
    let settings = oauth_of(
        r#"{"clientId": "app", "clientSecret": "${env:APP_SECRET}", "callbackPort": 8080,
            "scopes": "read  write", "authServerMetadataUrl": "https://auth.example.com/.well-known/oauth-authorization-server",
            "tokenEndpointAuthMethod": "client_secret_post", "grant": "client_credentials"}"#,
        &[("APP_SECRET", "s3cret-value")],
    )
    .expect("parses");
    let expected = OAuthSettings::new()
        .client_id("app")
        .client_secret("s3cret-value")
        .callback_port(8080)
        .scopes(["read", "write"])
        .auth_server_metadata_url("https://auth.example.com/.well-known/oauth-authorization-server")
        .token_endpoint_auth_method(ClientAuthMethod::ClientSecretPost)
        .grant(Grant::ClientCredentials);
    assert_eq!(settings, expected);
    // The secret is a `Secret`: it does not print.
    assert!(!format!("{settings:?}").contains("s3cret-value"));
}

#[test]
fn oauth_members_are_each_optional() {
    assert_eq!(oauth_of("{}", &[]).unwrap(), OAuthSettings::new());
    assert_eq!(oauth_of("null", &[]).unwrap(), OAuthSettings::new());
    assert_eq!(
        oauth_of(r#"{"clientId": "app"}"#, &[]).unwrap(),
        OAuthSettings::new().client_id("app")
    );
    assert_eq!(
        oauth_of(r#"{"callbackPort": 1}"#, &[]).unwrap(),
        OAuthSettings::new().callback_port(1)
    );
    assert_eq!(
        oauth_of(r#"{"scopes": ["a", "b:c"]}"#, &[]).unwrap(),
        OAuthSettings::new().scopes(["a", "b:c"])
    );
    assert_eq!(
        oauth_of(r#"{"grant": "authorization_code"}"#, &[]).unwrap(),
        OAuthSettings::new().grant(Grant::AuthorizationCode)
    );
    for (name, method) in [
        ("none", ClientAuthMethod::None),
        ("client_secret_basic", ClientAuthMethod::ClientSecretBasic),
        ("client_secret_post", ClientAuthMethod::ClientSecretPost),
        ("private_key_jwt", ClientAuthMethod::PrivateKeyJwt),
    ] {
        assert_eq!(
            oauth_of(&format!(r#"{{"tokenEndpointAuthMethod": "{name}"}}"#), &[]).unwrap(),
            OAuthSettings::new().token_endpoint_auth_method(method)
        );
    }
    // An entry without `oauth` has the default settings.
    let specs =
        parse_mcp_servers(r#"{"mcpServers": {"s": {"url": "https://example.com/mcp"}}}"#).unwrap();
    assert_eq!(specs[0].oauth_settings(), &OAuthSettings::new());
}

#[test]
fn the_client_secret_expands_each_dialects_references() {
    let env = [("A", "alpha"), ("EMPTY", "")];
    let secret = |text: &str| {
        oauth_of(&format!(r#"{{"clientSecret": "{text}"}}"#), &env)
            .unwrap()
            .client_secret
            .map(|s| s.expose().to_owned())
    };
    assert_eq!(secret("${env:A}").as_deref(), Some("alpha"));
    assert_eq!(secret("${A}").as_deref(), Some("alpha"));
    assert_eq!(secret("${UNSET:-fallback}").as_deref(), Some("fallback"));
    assert_eq!(secret("${EMPTY:-fallback}").as_deref(), Some("fallback"));
    assert_eq!(secret("${A:-fallback}").as_deref(), Some("alpha"));
    assert_eq!(secret("x-${A}-${env:A}").as_deref(), Some("x-alpha-alpha"));
    assert_eq!(secret("literal").as_deref(), Some("literal"));
}

#[test]
fn a_bad_client_secret_reference_names_the_field_not_the_value() {
    let env = [("EMPTY", ""), ("SECRET", "hidden-value")];
    let path = "mcpServers.s.oauth.clientSecret";
    for (text, what) in [
        ("${UNSET}", "the environment variable UNSET is not set"),
        ("${env:UNSET}", "the environment variable UNSET is not set"),
        ("${SECRET", "without its closing"),
        ("${}", "is not a variable reference"),
        ("${A B}", "is not a variable reference"),
        ("${EMPTY}", "the secret is empty"),
        ("", "the secret is empty"),
    ] {
        let message = oauth_error(&format!(r#"{{"clientSecret": "{text}"}}"#), &env);
        assert!(message.starts_with(path), "{text}: {message}");
        assert!(message.contains(what), "{text}: {message}");
        assert!(!message.contains("hidden-value"), "{message}");
    }
}

#[test]
fn oauth_errors_name_the_field_path() {
    let path = "mcpServers.s.oauth";
    for (oauth, expected) in [
        (
            r#""yes""#,
            format!("{path}: expected an object, got a string"),
        ),
        (
            r#"{"clientId": 3}"#,
            format!("{path}.clientId: expected a string, got a number"),
        ),
        (
            r#"{"clientId": " "}"#,
            format!("{path}.clientId: expected a non-empty string"),
        ),
        (
            r#"{"clientSecret": true}"#,
            format!("{path}.clientSecret: expected a string, got a boolean"),
        ),
        (
            r#"{"callbackPort": "80"}"#,
            format!("{path}.callbackPort: expected a port number, got a string"),
        ),
        (
            r#"{"callbackPort": 0}"#,
            format!("{path}.callbackPort: expected a port from 1 to 65535, got 0"),
        ),
        (
            r#"{"callbackPort": 65536}"#,
            format!("{path}.callbackPort: expected a port from 1 to 65535, got 65536"),
        ),
        (
            r#"{"callbackPort": 80.5}"#,
            format!("{path}.callbackPort: expected a port from 1 to 65535, got 80.5"),
        ),
        (
            r#"{"scopes": 1}"#,
            format!("{path}.scopes: expected a string or an array of strings, got a number"),
        ),
        (
            r#"{"scopes": ["a", 2]}"#,
            format!("{path}.scopes[1]: expected a string, got a number"),
        ),
        (
            r#"{"scopes": ["a b"]}"#,
            format!("{path}.scopes[0]: expected one scope, got \"a b\""),
        ),
        (
            r#"{"scopes": "  "}"#,
            format!("{path}.scopes: expected at least one scope"),
        ),
        (
            r#"{"scopes": []}"#,
            format!("{path}.scopes: expected at least one scope"),
        ),
        (
            r#"{"authServerMetadataUrl": 1}"#,
            format!("{path}.authServerMetadataUrl: expected a string, got a number"),
        ),
        (
            r#"{"authServerMetadataUrl": "ftp://x/y"}"#,
            format!("{path}.authServerMetadataUrl: expected an https:// URL, got a ftp: URL"),
        ),
        (
            r#"{"grant": 1}"#,
            format!("{path}.grant: expected a string, got a number"),
        ),
        (
            r#"{"clientPassword": "x"}"#,
            format!(
                "{path}.clientPassword: unknown member; `oauth` has clientId, clientSecret, callbackPort, scopes, authServerMetadataUrl, tokenEndpointAuthMethod, grant"
            ),
        ),
        (
            r#"{"a.b": 1}"#,
            format!(
                "{path}.\"a.b\": unknown member; `oauth` has clientId, clientSecret, callbackPort, scopes, authServerMetadataUrl, tokenEndpointAuthMethod, grant"
            ),
        ),
    ] {
        assert_eq!(oauth_error(oauth, &[]), expected, "{oauth}");
    }
    let message = oauth_error(r#"{"authServerMetadataUrl": "not a url"}"#, &[]);
    assert!(
        message.starts_with(&format!("{path}.authServerMetadataUrl: not a URL")),
        "{message}"
    );
    let message = oauth_error(r#"{"tokenEndpointAuthMethod": "basic"}"#, &[]);
    assert!(
        message.starts_with(&format!(
            "{path}.tokenEndpointAuthMethod: unknown method \"basic\""
        )),
        "{message}"
    );
    let message = oauth_error(r#"{"grant": "password"}"#, &[]);
    assert!(
        message.starts_with(&format!("{path}.grant: unknown grant \"password\"")),
        "{message}"
    );
}

#[test]
fn an_oauth_block_on_a_stdio_server_is_an_error() {
    assert_eq!(
        error(r#"{"mcpServers": {"files": {"command": "npx", "oauth": {"clientId": "x"}}}}"#),
        "mcpServers.files.oauth: `oauth` is for HTTP servers; this one is stdio"
    );
    // `null` is absent, on any server.
    parse_mcp_servers(r#"{"mcpServers": {"files": {"command": "npx", "oauth": null}}}"#)
        .expect("null oauth");
    // An SSE server may have one.
    let specs = parse_mcp_servers(
        r#"{"mcpServers": {"s": {"type": "sse", "url": "http://localhost:1/sse", "oauth": {"clientId": "x"}}}}"#,
    )
    .unwrap();
    assert_eq!(
        specs[0].oauth_settings(),
        &OAuthSettings::new().client_id("x")
    );
}

#[test]
fn the_era_member_picks_the_protocol_era() {
    let specs = parse_mcp_servers(
        r#"{"mcpServers": {
            "a-default": {"command": "x"},
            "b-auto": {"command": "x", "era": "auto"},
            "c-modern": {"command": "x", "era": "modern"},
            "d-version": {"type": "http", "url": "https://example.com/mcp", "era": "2026-07-28"},
            "e-legacy": {"command": "x", "era": "legacy"},
            "f-null": {"command": "x", "era": null}
        }}"#,
    )
    .unwrap();
    let eras: Vec<EraChoice> = specs.iter().map(ServerSpec::era_choice).collect();
    assert_eq!(
        eras,
        [
            EraChoice::Auto,
            EraChoice::Auto,
            EraChoice::Modern,
            EraChoice::Modern,
            EraChoice::Legacy,
            EraChoice::Auto,
        ]
    );
}

#[test]
fn a_bad_era_names_its_field() {
    let entry =
        |era: &str| format!(r#"{{"mcpServers": {{"s": {{"command": "x", "era": {era}}}}}}}"#);
    // A legacy version is not an era: which legacy version is the handshake's to choose.
    for bad in [r#""2025-11-25""#, r#""newest""#, r#""""#] {
        let text = error(&entry(bad));
        assert!(
            text.starts_with("mcpServers.s.era: unknown protocol era"),
            "{bad}: {text}"
        );
    }
    assert_eq!(
        error(&entry("2026")),
        "mcpServers.s.era: expected a string, got a number"
    );
}
