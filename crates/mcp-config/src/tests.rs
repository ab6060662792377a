//! Unit tests of config parsing: every dialect, expansion, envFile, inputs, warnings, errors.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use sidewire_mcp::auth::{ClientAuthMethod, Grant, OAuthSettings};
use sidewire_mcp::{EraChoice, Restart, Root, ServerSpec, Transport};

use super::*;
use crate::entry::shown;
use crate::jsonc;

/// Parses an `mcpServers` text with `env` as the environment.
fn parse_with_env(
    text: &str,
    env: &(dyn Fn(&str) -> Option<String> + Send + Sync),
) -> Result<Vec<ServerSpec>, Error> {
    let pairs: Vec<(String, String)> = ["A", "EMPTY", "SECRET", "UNSET", "APP_SECRET"]
        .iter()
        .filter_map(|name| env(name).map(|value| ((*name).to_owned(), value)))
        .collect();
    ConfigLoader::new()
        .env(move |name| {
            pairs
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        })
        .parse(text, None)
        .map(McpConfig::into_specs)
}

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

/// Whether exactly one of the kind predicates holds, as for every error.
fn one_kind(err: &Error) -> bool {
    let kinds = [
        err.is_read(),
        err.is_syntax(),
        err.is_invalid(),
        err.is_unexpanded(),
        err.is_unknown_dialect(),
    ];
    kinds.iter().filter(|&&kind| kind).count() == 1
}

fn error(text: &str) -> String {
    let err = parse_mcp_servers(text).unwrap_err();
    assert!(one_kind(&err), "{err:?}");
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
    assert_eq!(
        error("{}"),
        "missing the `mcpServers` member (or `servers` for VS Code, `mcp` for opencode)"
    );
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
    assert_eq!(
        specs[2].startup_budget(),
        sidewire_mcp::DEFAULT_STARTUP_TIMEOUT
    );
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
        assert!(err.is_invalid(), "{entry}: {err}");
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
    assert_eq!(
        specs[1].list_item_cap(),
        sidewire_mcp::DEFAULT_MAX_LIST_ITEMS
    );
    assert_eq!(
        specs[1].list_byte_cap(),
        sidewire_mcp::DEFAULT_MAX_LIST_BYTES
    );
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
    assert!(one_kind(&err), "{err:?}");
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

/// The fixture folder of one dialect.
fn fixture(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(relative)
}

/// A loader whose environment is `pairs` only.
fn loader(pairs: &[(&str, &str)]) -> ConfigLoader {
    let pairs: Vec<(String, String)> = pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    ConfigLoader::new().env(move |name| {
        pairs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    })
}

fn server<'a>(config: &'a McpConfig, name: &str) -> &'a ConfiguredServer {
    config
        .servers
        .iter()
        .find(|s| s.spec.name() == name)
        .unwrap_or_else(|| panic!("no server {name}"))
}

fn load_error(loader: &ConfigLoader, path: &Path) -> String {
    let err = loader.load(path).unwrap_err();
    assert!(one_kind(&err), "{err:?}");
    err.to_string()
}

#[test]
fn claude_code_expands_with_defaults_and_reads_the_timeout_in_ms() {
    let path = fixture("claude-code/.mcp.json");
    let config = loader(&[("API_KEY", "sk-secret"), ("HOME", "/home/ana")])
        .load(&path)
        .unwrap();
    assert_eq!(config.dialect, Dialect::ClaudeCode);
    let api = server(&config, "api");
    assert_eq!(api.spec.url(), "https://api.example.com/mcp");
    assert_eq!(api.spec.headers()["Authorization"], "Bearer sk-secret");
    assert_eq!(api.spec.default_call_timeout(), Duration::from_secs(20));
    assert_eq!(api.shown_headers["Authorization"], "Bearer ${API_KEY}");
    let fields: Vec<&str> = api.expansions.iter().map(|e| e.field.as_str()).collect();
    assert_eq!(
        fields,
        ["mcpServers.api.url", "mcpServers.api.headers.Authorization"]
    );
    assert_eq!(
        api.expansions[0].variables[0].source,
        VariableSource::Default
    );
    let files = server(&config, "files");
    assert_eq!(files.spec.arguments()[2], "/home/ana/projects");
    assert_eq!(files.spec.environment()["LOG_LEVEL"], "info");
    // Unset without a default: the variable, the server and the field are named.
    let text = load_error(&loader(&[("HOME", "/h")]), &path);
    assert!(
        text.ends_with(
            "mcpServers.api.headers.Authorization: the environment variable API_KEY is not set"
        ),
        "{text}"
    );
    assert!(text.starts_with(&path.display().to_string()), "{text}");
}

#[test]
fn claude_desktop_keeps_a_disabled_server_as_disabled() {
    let config = loader(&[])
        .load(&fixture("claude-desktop/claude_desktop_config.json"))
        .unwrap();
    assert_eq!(config.dialect, Dialect::ClaudeDesktop);
    assert!(server(&config, "memory").spec.is_enabled());
    assert!(!server(&config, "old-notes").spec.is_enabled());
}

#[test]
fn cursor_reads_env_references_builtins_and_the_env_file() {
    let path = fixture("cursor/.cursor/mcp.json");
    let config = loader(&[
        ("GITHUB_TOKEN", "ghp_secret"),
        ("HOME", "/home/ana"),
        ("REMOTE_KEY", "rk"),
    ])
    .load(&path)
    .unwrap();
    assert_eq!(config.dialect, Dialect::Cursor);
    let github = server(&config, "github");
    let env = github.spec.environment();
    assert_eq!(env["GITHUB_PERSONAL_ACCESS_TOKEN"], "ghp_secret");
    assert_eq!(env["GITHUB_HOST"], "github.example.com");
    assert_eq!(env["GITHUB_ORG"], "acme corp");
    assert_eq!(env["GITHUB_NOTE"], "two words # not a comment");
    assert_eq!(
        github.shown_env["GITHUB_PERSONAL_ACCESS_TOKEN"],
        "${env:GITHUB_TOKEN}"
    );
    assert_eq!(github.shown_env["GITHUB_ORG"], "[envFile]");
    // The project directory is the folder holding `.cursor`.
    let project = fixture("cursor");
    let docs = server(&config, "local-docs");
    assert_eq!(docs.spec.command(), "/home/ana/bin/docs-server");
    assert_eq!(
        docs.spec.arguments()[1],
        format!("{}/docs", project.display())
    );
    let remote = server(&config, "remote");
    assert_eq!(remote.spec.transport(), Transport::StreamableHttp);
    assert_eq!(remote.spec.url(), "https://mcp.example.com/mcp?api_key=rk");
    assert_eq!(
        remote.shown_url,
        "https://mcp.example.com/mcp?api_key=REDACTED"
    );
}

#[test]
fn copilot_reads_local_servers_and_the_tools_allow_list() {
    let config = loader(&[("ISSUES_TOKEN", "t")])
        .load(&fixture("copilot/mcp-config.json"))
        .unwrap();
    assert_eq!(config.dialect, Dialect::Copilot);
    let issues = server(&config, "issues");
    assert_eq!(issues.spec.transport(), Transport::Stdio);
    let filter = issues.spec.tools_exposed();
    assert!(filter.allows("get_issue") && !filter.allows("delete_issue"));
    assert!(server(&config, "everything").spec.tools_exposed().is_all());
}

#[test]
fn cline_reads_its_timeout_in_seconds_and_transport_type() {
    let config = loader(&[])
        .load(&fixture("cline/cline_mcp_settings.json"))
        .unwrap();
    assert_eq!(config.dialect, Dialect::Cline);
    let weather = server(&config, "weather");
    assert!(weather.spec.is_enabled());
    assert_eq!(weather.spec.default_call_timeout(), Duration::from_secs(90));
    let events = server(&config, "events");
    assert_eq!(events.spec.transport(), Transport::Sse);
    assert!(!events.spec.is_enabled());
}

#[test]
fn gemini_reads_http_url_sse_url_bare_env_references_and_tool_filters() {
    let path = fixture("gemini/.gemini/settings.json");
    let env = [
        ("DB_CONNECTION_STRING", "postgres://db"),
        ("EXTERNAL_API_KEY", "k"),
    ];
    let config = loader(&env).load(&path).unwrap();
    assert_eq!(config.dialect, Dialect::Gemini);
    let tools = server(&config, "python-tools");
    assert_eq!(tools.spec.environment()["DATABASE_URL"], "postgres://db");
    assert_eq!(tools.spec.environment()["API_KEY"], "k");
    assert_eq!(tools.spec.default_call_timeout(), Duration::from_secs(15));
    assert_eq!(
        tools.spec.working_dir(),
        Some(Path::new("./mcp-servers/python"))
    );
    let filter = tools.spec.tools_exposed();
    assert!(filter.allows("safe_tool"));
    assert!(!filter.allows("risky_tool"), "the deny list wins");
    assert!(!filter.allows("other"));
    let stream = server(&config, "stream");
    assert_eq!(stream.spec.transport(), Transport::StreamableHttp);
    assert_eq!(
        stream.spec.headers()["Authorization"],
        "Bearer $NOT_EXPANDED_IN_HEADERS"
    );
    assert_eq!(server(&config, "legacy").spec.transport(), Transport::Sse);
    let text = load_error(&loader(&[("EXTERNAL_API_KEY", "k")]), &path);
    assert!(
        text.ends_with("mcpServers.python-tools.env.DATABASE_URL: the environment variable DB_CONNECTION_STRING is not set"),
        "{text}"
    );
}

#[test]
fn vscode_asks_the_resolver_for_inputs_once_and_fails_without_one() {
    let path = fixture("vscode/.vscode/mcp.json");
    let env = [("FETCH_TOKEN", "fetch-secret")];
    let asked = Arc::new(std::sync::Mutex::new(Vec::new()));
    let record = Arc::clone(&asked);
    let config = loader(&env)
        .inputs(move |input: &ConfigInput| {
            record
                .lock()
                .unwrap()
                .push((input.id.clone(), input.password));
            Some("pplx-secret".to_owned())
        })
        .load(&path)
        .unwrap();
    assert_eq!(config.dialect, Dialect::VsCode);
    assert_eq!(
        *asked.lock().unwrap(),
        [("perplexity-key".to_owned(), true)]
    );
    let perplexity = server(&config, "perplexity");
    assert_eq!(
        perplexity.spec.environment()["PERPLEXITY_API_KEY"],
        "pplx-secret"
    );
    assert_eq!(perplexity.spec.environment()["PERPLEXITY_REGION"], "eu");
    assert_eq!(
        perplexity.shown_env["PERPLEXITY_API_KEY"],
        "${input:perplexity-key}"
    );
    let fetch = server(&config, "fetch");
    assert_eq!(fetch.spec.headers()["Authorization"], "Bearer fetch-secret");
    // No resolver (no terminal): the input is named.
    let text = load_error(&loader(&env), &path);
    assert!(
        text.contains(
            "servers.perplexity.env.PERPLEXITY_API_KEY: the input perplexity-key needs an answer"
        ),
        "{text}"
    );
    // A declined answer, and an unknown input.
    let declined = loader(&env)
        .inputs(|_: &ConfigInput| None)
        .load(&path)
        .unwrap_err();
    assert!(
        declined.to_string().contains("was not answered"),
        "{declined}"
    );
    let text = loader(&[])
        .parse(r#"{"servers": {"s": {"command": "${input:nope}"}}}"#, None)
        .unwrap_err()
        .to_string();
    assert_eq!(
        text,
        "servers.s.command: `${input:nope}` names no entry of `inputs`"
    );
}

#[test]
fn opencode_reads_command_arrays_environment_and_env_references() {
    let path = fixture("opencode/opencode.json");
    let env = [
        ("SEARCH_INDEX", "main"),
        ("SEARCH_TOKEN", "st"),
        ("CONTEXT_KEY", "ck"),
    ];
    let config = loader(&env).load(&path).unwrap();
    assert_eq!(config.dialect, Dialect::Opencode);
    let search = server(&config, "local-search");
    assert_eq!(search.spec.command(), "bun");
    assert_eq!(
        search.spec.arguments(),
        ["x", "search-mcp", "--index", "main"]
    );
    assert_eq!(search.spec.environment()["SEARCH_TOKEN"], "st");
    assert_eq!(search.spec.startup_budget(), Duration::from_secs(8));
    let context = server(&config, "context");
    assert!(!context.spec.is_enabled());
    assert_eq!(context.spec.headers()["Authorization"], "Bearer ck");
    assert_eq!(
        context.shown_headers["Authorization"],
        "Bearer {env:CONTEXT_KEY}"
    );
    let text = load_error(&loader(&env[..2]), &path);
    assert!(
        text.ends_with(
            "mcp.context.headers.Authorization: the environment variable CONTEXT_KEY is not set"
        ),
        "{text}"
    );
}

#[test]
fn codex_reads_its_tables_with_toml_paths() {
    let path = fixture("codex/config.toml");
    let env = [
        ("DOCS_TOKEN", "dt"),
        ("PATH_EXTRA", "/opt"),
        ("FIGMA_TOKEN", "fg-secret"),
        ("FIGMA_REGION", "eu"),
    ];
    let config = loader(&env).load(&path).unwrap();
    assert_eq!(config.dialect, Dialect::Codex);
    let docs = server(&config, "docs");
    assert_eq!(docs.spec.environment()["DOCS_TOKEN"], "dt");
    assert_eq!(docs.spec.environment()["DOCS_LANG"], "en");
    assert_eq!(docs.spec.environment()["PATH_EXTRA"], "/opt");
    assert_eq!(docs.spec.working_dir(), Some(Path::new("/srv/docs")));
    assert_eq!(docs.spec.startup_budget(), Duration::from_secs(20));
    assert_eq!(docs.spec.default_call_timeout(), Duration::from_secs(45));
    let filter = docs.spec.tools_exposed();
    assert!(filter.allows("search") && !filter.allows("open") && !filter.allows("x"));
    let figma = server(&config, "figma");
    assert_eq!(figma.spec.headers()["Authorization"], "Bearer fg-secret");
    assert_eq!(figma.spec.headers()["X-Figma-Region"], "eu");
    assert_eq!(figma.spec.headers()["X-Client"], "codex");
    assert_eq!(
        figma.shown_headers["Authorization"],
        "Bearer ${FIGMA_TOKEN}"
    );
    assert_eq!(figma.spec.startup_budget(), Duration::from_secs(5));
    assert!(!server(&config, "off").spec.is_enabled());
    let text = load_error(&loader(&env[..3]), &path);
    assert!(
        text.ends_with("mcp_servers.figma.env_http_headers.X-Figma-Region: the environment variable FIGMA_REGION is not set"),
        "{text}"
    );
}

#[test]
fn a_toml_error_on_a_huge_line_quotes_it_cut() {
    let huge = "x".repeat(200 * 1024);
    let text = format!("[mcp_servers.a]\ncommand = \"{huge}\" junk\n");
    let err = loader(&[])
        .parse(&text, Some(Path::new("config.toml")))
        .unwrap_err();
    assert!(err.is_syntax(), "{err}");
    let message = err.to_string();
    assert!(
        message.len() < 2048,
        "{} bytes: {}",
        message.len(),
        &message[..200]
    );
    assert!(
        message.starts_with("invalid TOML at line 2 column "),
        "{message}"
    );
    assert!(message.contains("bytes in all)"), "{message}");
    // A huge server name in a JSON file is cut in the paths that name it too.
    let json = format!(r#"{{"mcpServers": {{"{huge}": {{"command": 3}}}}}}"#);
    let message = parse_mcp_servers(&json).unwrap_err().to_string();
    assert!(message.len() < 2048, "{} bytes", message.len());
    assert!(message.contains("bytes in all)"), "{message}");
}

#[test]
fn codex_type_errors_keep_their_toml_paths() {
    let parse = |text: &str| {
        loader(&[])
            .parse(text, Some(Path::new("config.toml")))
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        parse("[mcp_servers.a]\ncommand = \"x\"\nargs = [\"ok\", 3]\n"),
        "mcp_servers.a.args[1]: expected a string, got a number"
    );
    assert_eq!(
        parse("[mcp_servers.a]\ncommand = \"x\"\nenabled = \"no\"\n"),
        "mcp_servers.a.enabled: expected a boolean, got a string"
    );
    assert_eq!(
        parse("[mcp_servers.a]\ncommand = \"x\"\nstartup_timeout_sec = -1\n"),
        "mcp_servers.a.startup_timeout_sec: expected a positive number, got -1"
    );
    assert_eq!(
        parse("[mcp_servers.a]\nurl = \"https://x\"\nbearer_token_env_var = \"A B\"\n"),
        "mcp_servers.a.bearer_token_env_var: \"A B\" is not an environment variable name"
    );
    assert!(parse("[mcp_servers.a\n").starts_with("invalid TOML"));
    assert_eq!(
        parse("model = \"x\"\n"),
        "missing the `[mcp_servers.NAME]` tables"
    );
    // With no file name, text that is not JSON is read as TOML.
    let specs = parse_mcp_servers("[mcp_servers.a]\ncommand = \"x\"\n").unwrap();
    assert_eq!(specs[0].command(), "x");
}

#[test]
fn detection_picks_by_name_before_shape_and_the_dialect_can_be_forced() {
    let text = r#"{"mcpServers": {"s": {"url": "https://x/mcp"}}}"#;
    let dialect = |name: &str| loader(&[]).parse(text, Some(Path::new(name))).unwrap();
    // Gemini's file: `url` is SSE even without `httpUrl`.
    let gemini = dialect("/p/.gemini/settings.json");
    assert_eq!(gemini.dialect, Dialect::Gemini);
    assert_eq!(gemini.servers[0].spec.transport(), Transport::Sse);
    let claude = dialect("/p/.mcp.json");
    assert_eq!(claude.dialect, Dialect::ClaudeCode);
    assert_eq!(
        claude.servers[0].spec.transport(),
        Transport::StreamableHttp
    );
    // Shape, when the name says nothing.
    let shaped = loader(&[])
        .parse(
            r#"{"mcpServers": {"s": {"httpUrl": "https://x/mcp"}}}"#,
            Some(Path::new("/p/x.json")),
        )
        .unwrap();
    assert_eq!(shaped.dialect, Dialect::Gemini);
    let forced = loader(&[]).dialect(Dialect::Cline);
    let cline = forced
        .parse(
            r#"{"mcpServers": {"s": {"command": "x", "timeout": 2}}}"#,
            None,
        )
        .unwrap();
    assert_eq!(cline.dialect, Dialect::Cline);
    assert_eq!(
        cline.servers[0].spec.default_call_timeout(),
        Duration::from_secs(2)
    );
    assert_eq!("vscode".parse::<Dialect>().unwrap(), Dialect::VsCode);
    let err = "nope".parse::<Dialect>().unwrap_err();
    assert!(err.is_unknown_dialect(), "{err:?}");
    assert_eq!(
        err.to_string(),
        "unknown config dialect \"nope\"; expected one of claude-code, claude-desktop, cursor, \
         copilot, cline, gemini, vscode, opencode, codex"
    );
}

#[test]
fn expansion_is_single_pass_and_bounded() {
    let long = "x".repeat(40 * 1024);
    let env = [("A", "${B}"), ("B", "no"), ("LONG", long.as_str())];
    let parse = |command: &str| {
        loader(&env)
            .parse(
                &format!(r#"{{"mcpServers": {{"s": {{"command": "{command}"}}}}}}"#),
                None,
            )
            .map(|config| config.servers[0].spec.command().to_owned())
    };
    // A value's own `${B}` is not expanded again.
    assert_eq!(parse("${A}").unwrap(), "${B}");
    assert_eq!(parse("${LONG}").unwrap().len(), 40 * 1024);
    let err = parse("${LONG}${LONG}").unwrap_err().to_string();
    assert_eq!(
        err,
        "mcpServers.s.command: the expanded value is longer than 64 KiB"
    );
    let err = parse("${A:-${B}}").unwrap_err().to_string();
    assert!(err.contains("nests a reference"), "{err}");
    let err = parse("${userHome}").unwrap_err().to_string();
    assert!(err.contains("HOME"), "{err}");
}

#[test]
fn a_bad_env_file_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join(".mcp.json");
    let write = |env_file: &str| {
        std::fs::write(
            &config,
            format!(r#"{{"mcpServers": {{"s": {{"command": "x", "envFile": "{env_file}"}}}}}}"#),
        )
        .unwrap();
    };
    write("missing.env");
    let text = load_error(&loader(&[]), &config);
    assert!(text.contains("mcpServers.s.envFile: cannot read"), "{text}");
    write("bad.env");
    std::fs::write(
        dir.path().join("bad.env"),
        "OK=1\nthis line has no equals sign\n",
    )
    .unwrap();
    let text = load_error(&loader(&[]), &config);
    assert!(
        text.contains("mcpServers.s.envFile") && text.contains("line 2: expected KEY=VALUE"),
        "{text}"
    );
    std::fs::write(dir.path().join("bad.env"), "A=\"open\n").unwrap();
    assert!(load_error(&loader(&[]), &config).contains("quote is not closed"));
    // Past the cap.
    std::fs::write(
        dir.path().join("bad.env"),
        "A=".to_owned() + &"x".repeat(MAX_ENV_FILE_BYTES),
    )
    .unwrap();
    let text = load_error(&loader(&[]), &config);
    assert!(text.contains("larger than 1024 KiB"), "{text}");
    // An explicit `env` entry wins over the file's.
    std::fs::write(dir.path().join("good.env"), "A=file\nB=file\n").unwrap();
    std::fs::write(
        &config,
        r#"{"mcpServers": {"s": {"command": "x", "envFile": "good.env", "env": {"A": "explicit"}}}}"#,
    )
    .unwrap();
    let loaded = loader(&[]).load(&config).unwrap();
    let env = loaded.servers[0].spec.environment();
    assert_eq!((env["A"].as_str(), env["B"].as_str()), ("explicit", "file"));
}

/// `load_error` on another thread, so that a load that blocks fails the test instead of
/// hanging it.
fn load_error_at_once(path: &Path) -> String {
    let (tx, rx) = std::sync::mpsc::channel();
    let path = path.to_path_buf();
    std::thread::spawn(move || {
        let _ = tx.send(load_error(&loader(&[]), &path));
    });
    rx.recv_timeout(Duration::from_secs(30))
        .expect("the load returns instead of blocking")
}

#[test]
fn a_fifo_as_the_config_or_its_env_file_fails_at_once_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let mkfifo = |path: &Path| {
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            path,
            rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
        )
        .unwrap();
    };
    let config = dir.path().join(".mcp.json");
    mkfifo(&config);
    let text = load_error_at_once(&config);
    assert!(text.contains(&*config.to_string_lossy()), "{text}");
    assert!(text.contains("FIFO"), "{text}");
    std::fs::remove_file(&config).unwrap();
    mkfifo(&dir.path().join("fifo.env"));
    std::fs::write(
        &config,
        r#"{"mcpServers": {"s": {"command": "x", "envFile": "fifo.env"}}}"#,
    )
    .unwrap();
    let text = load_error_at_once(&config);
    assert!(text.contains("mcpServers.s.envFile"), "{text}");
    assert!(text.contains("fifo.env") && text.contains("FIFO"), "{text}");
}

#[test]
fn the_config_file_is_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join(".mcp.json");
    std::fs::write(&config, " ".repeat(MAX_CONFIG_BYTES + 1)).unwrap();
    assert!(load_error(&loader(&[]), &config).contains("larger than"));
}

#[test]
fn jsonc_comments_and_trailing_commas_are_blanked() {
    let text =
        "{\n // a \"comment\"\n \"a\": [1, 2,], /* b */ \"s\": \"// kept, \\\" /* kept */\",\n}";
    let stripped = jsonc::strip(text);
    let value: Value = serde_json::from_str(&stripped.text).unwrap();
    assert_eq!(value["s"], "// kept, \" /* kept */");
    assert_eq!(value["a"], serde_json::json!([1, 2]));
    // Where the first of each was, for the dialects that refuse them.
    assert_eq!(jsonc::position(text, stripped.comment.unwrap()), (2, 2));
    assert_eq!(
        jsonc::position(text, stripped.trailing_comma.unwrap()),
        (3, 12)
    );
}

#[test]
fn disabled_and_enabled_must_agree_and_urls_are_redacted() {
    let err = parse_mcp_servers(
        r#"{"mcpServers": {"s": {"command": "x", "disabled": true, "enabled": true}}}"#,
    )
    .unwrap_err();
    assert!(
        err.to_string().starts_with("mcpServers.s.disabled: "),
        "{err}"
    );
    assert_eq!(
        ServerSpec::http("s", "https://user:pw@example.com/mcp?key=abc&x=1")
            .shown_url()
            .unwrap(),
        "https://REDACTED@example.com/mcp?key=REDACTED&x=REDACTED"
    );
    assert_eq!(shown("X-Api-Key", "abc", "abc", false), "[REDACTED]");
    assert_eq!(shown("X-Team", "t", "t", false), "t");
}

/// A one-server document of `dialect` (JSON dialects only) whose servers member and entry each
/// end with a trailing comma, or which opens with a comment.
fn jsonc_document(dialect: Dialect, trailing_commas: bool) -> String {
    let entry = match dialect {
        Dialect::Opencode => r#"{"command": ["x", "a"]}"#,
        _ => r#"{"command": "x", "args": ["a"]}"#,
    };
    if trailing_commas {
        let entry = entry.replace("\"a\"]", "\"a\",],");
        format!(r#"{{"{}": {{"s": {entry}}},}}"#, dialect.servers_key())
    } else {
        format!(
            "// a comment\n{{\"{}\": {{\"s\": {entry}}} /* another */}}",
            dialect.servers_key()
        )
    }
}

#[test]
fn comments_and_trailing_commas_are_read_and_warned_of_where_the_dialects_tool_refuses_them() {
    for dialect in Dialect::ALL {
        if dialect == Dialect::Codex {
            continue;
        }
        let commas_ok = matches!(
            dialect,
            Dialect::ClaudeCode | Dialect::VsCode | Dialect::Opencode
        );
        let comments_ok = commas_ok || dialect == Dialect::Gemini;
        for (syntax, ok) in [
            (JsoncSyntax::TrailingComma, commas_ok),
            (JsoncSyntax::Comment, comments_ok),
        ] {
            let text = jsonc_document(dialect, syntax == JsoncSyntax::TrailingComma);
            // Read in every dialect: the file works here.
            let config = ConfigLoader::new()
                .dialect(dialect)
                .parse(&text, None)
                .unwrap();
            assert_eq!(server(&config, "s").spec.arguments(), ["a"], "{dialect}");
            let warned: Vec<&ConfigWarning> = config
                .warnings
                .iter()
                .filter(|w| w.kind == ConfigWarningKind::RefusedByItsTool { syntax, dialect })
                .collect();
            if ok {
                assert!(warned.is_empty(), "{dialect} {syntax:?}: {warned:?}");
            } else {
                // Where it is, and whose rule it breaks.
                assert_eq!(
                    warned.len(),
                    1,
                    "{dialect} {syntax:?}: {:?}",
                    config.warnings
                );
                assert!(warned[0].path.starts_with("line "), "{}", warned[0].path);
                assert!(
                    warned[0].to_string().contains(dialect.as_str()),
                    "{}",
                    warned[0]
                );
            }
        }
    }
}

#[test]
fn a_vscode_inputs_default_answers_it_when_nobody_does() {
    let text = r#"{
      "inputs": [{"type": "promptString", "id": "tz", "description": "Time zone", "default": "Europe/Oslo"}],
      "servers": {"s": {"command": "x", "env": {"TZ": "${input:tz}"}}}
    }"#;
    let tz = |config: &McpConfig| server(config, "s").spec.environment()["TZ"].clone();
    // No resolver (no terminal), or one that gives no answer: the default.
    let config = loader(&[]).parse(text, None).unwrap();
    assert_eq!(tz(&config), "Europe/Oslo");
    let config = loader(&[])
        .inputs(|_: &ConfigInput| None)
        .parse(text, None)
        .unwrap();
    assert_eq!(tz(&config), "Europe/Oslo");
    // An answer wins over the default.
    let config = loader(&[])
        .inputs(|_: &ConfigInput| Some("UTC".to_owned()))
        .parse(text, None)
        .unwrap();
    assert_eq!(tz(&config), "UTC");
}

#[test]
fn unknown_keys_of_every_dialects_entries_are_warned_of_with_their_path() {
    let cases = [
        (
            Dialect::ClaudeCode,
            r#"{"mcpServers": {"files": {"command": "x", "arg": ["a"], "alwaysAllow": [], "trust": true}}}"#,
            "mcpServers.files.arg",
        ),
        (
            Dialect::VsCode,
            r#"{"servers": {"files": {"command": "x", "dev": {}, "evn": {}}}}"#,
            "servers.files.evn",
        ),
        (
            Dialect::Opencode,
            r#"{"mcp": {"files": {"type": "local", "command": ["x"], "enviroment": {}}}}"#,
            "mcp.files.enviroment",
        ),
        (
            Dialect::Codex,
            "[mcp_servers.files]\ncommand = \"x\"\nagrs = [\"a\"]\n",
            "mcp_servers.files.agrs",
        ),
    ];
    for (dialect, text, path) in cases {
        let config = ConfigLoader::new()
            .dialect(dialect)
            .parse(text, None)
            .unwrap();
        let paths: Vec<&str> = config.warnings.iter().map(|w| w.path.as_str()).collect();
        assert_eq!(paths, [path], "{dialect}");
        assert_eq!(config.warnings[0].kind, ConfigWarningKind::UnknownKey);
        assert!(
            config.warnings[0].to_string().starts_with(path),
            "{dialect}"
        );
        assert_eq!(config.warnings_omitted, 0);
    }
    // Bounded: the first ones kept, the rest counted.
    let many: serde_json::Map<String, Value> = (0..MAX_CONFIG_WARNINGS + 5)
        .map(|n| (format!("typo{n:03}"), Value::Bool(true)))
        .chain([("command".to_owned(), Value::from("x"))])
        .collect();
    let text = serde_json::json!({"mcpServers": {"s": many}}).to_string();
    let config = parse_config(&text);
    assert_eq!(config.warnings.len(), MAX_CONFIG_WARNINGS);
    assert_eq!(config.warnings_omitted, 5);
}

/// `text` read as a `.mcp.json` in a temporary project.
fn parse_config(text: &str) -> McpConfig {
    loader(&[]).parse(text, None).unwrap()
}

#[test]
fn top_level_roots_are_expanded_relative_to_the_project_and_offered_by_every_server() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(".mcp.json");
    std::fs::write(
        &path,
        r#"{"roots": ["src", "${workspaceFolder}", "/abs/${NAME}"],
            "mcpServers": {"a": {"command": "x"}, "b": {"url": "https://example.com/mcp"}}}"#,
    )
    .unwrap();
    let config = loader(&[("NAME", "data")]).load(&path).unwrap();
    let uris: Vec<&str> = config.roots.iter().map(|r| r.uri.as_str()).collect();
    assert_eq!(
        uris,
        [
            Root::dir(dir.path().join("src")).uri.as_str(),
            Root::dir(dir.path()).uri.as_str(),
            "file:///abs/data",
        ]
    );
    for server in &config.servers {
        assert_eq!(server.spec.roots(), config.roots, "{}", server.spec.name());
    }
    // No roots: none offered (and no capability declared).
    let config = parse_config(r#"{"mcpServers": {"a": {"command": "x"}}}"#);
    assert!(config.roots.is_empty() && config.servers[0].spec.roots().is_empty());
    // Errors name the member; the count is bounded.
    let err = loader(&[])
        .parse(r#"{"roots": "src", "mcpServers": {}}"#, None)
        .unwrap_err();
    assert!(
        err.is_invalid() && err.to_string().starts_with("roots: "),
        "{err}"
    );
    let err = loader(&[])
        .parse(r#"{"roots": ["${UNSET_ROOT}"], "mcpServers": {}}"#, None)
        .unwrap_err();
    assert!(err.to_string().starts_with("roots[0]: "), "{err}");
    let roots: Vec<String> = (0..=MAX_CONFIG_ROOTS).map(|n| format!("d{n}")).collect();
    let text = serde_json::json!({"roots": roots, "mcpServers": {}}).to_string();
    let err = loader(&[]).parse(&text, None).unwrap_err();
    assert!(err.to_string().starts_with("roots: "), "{err}");
}

#[test]
fn the_resolver_is_shown_an_inputs_default() {
    let text = r#"{"inputs": [{"type": "promptString", "id": "tz", "default": "UTC"}],
                   "servers": {"s": {"command": "x", "env": {"TZ": "${input:tz}"}}}}"#;
    let seen = Arc::new(std::sync::Mutex::new(None));
    let record = Arc::clone(&seen);
    loader(&[])
        .inputs(move |input: &ConfigInput| {
            *record.lock().unwrap() = input.default.clone();
            None
        })
        .parse(text, None)
        .unwrap();
    assert_eq!(seen.lock().unwrap().as_deref(), Some("UTC"));
}

#[test]
fn each_fault_has_its_kind() {
    let parse = |text: &str| loader(&[]).parse(text, None).unwrap_err();
    assert!(parse("{").is_syntax());
    assert!(parse("[mcp_servers.a]\ncommand = ").is_syntax());
    assert!(parse(r#"{"mcpServers": {"a": {"command": 1}}}"#).is_invalid());
    assert!(parse(r#"["not", "an", "object"]"#).is_invalid());
    assert!(parse(r#"{"mcpServers": {"a": {"type": "http", "url": "ftp://x"}}}"#).is_invalid());
    let unset = parse(r#"{"mcpServers": {"a": {"command": "${NOPE}"}}}"#);
    assert!(unset.is_unexpanded(), "{unset:?}");
    assert_eq!(
        unset.to_string(),
        "mcpServers.a.command: the environment variable NOPE is not set"
    );
    let input = r#"{"servers": {"a": {"command": "x", "env": {"A": "${input:k}"}}},
                    "inputs": [{"id": "k"}]}"#;
    assert!(parse(input).is_unexpanded());
    let missing = loader(&[])
        .load(Path::new("/nonexistent/sidewire/.mcp.json"))
        .unwrap_err();
    assert!(missing.is_read(), "{missing:?}");
    // An `envFile` that cannot be read, or does not parse: named after its field.
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join(".mcp.json");
    std::fs::write(dir.path().join("bad.env"), "no equals sign\n").unwrap();
    for (file, read) in [("bad.env", false), ("none.env", true)] {
        let text = format!(r#"{{"mcpServers": {{"a": {{"command": "x", "envFile": "{file}"}}}}}}"#);
        std::fs::write(&config, text).unwrap();
        let err = loader(&[]).load(&config).unwrap_err();
        assert_eq!((err.is_read(), err.is_syntax()), (read, !read), "{err:?}");
        assert!(
            err.to_string()
                .starts_with(&format!("{}: mcpServers.a.envFile", config.display())),
            "{err}"
        );
    }
}

#[test]
fn an_errors_message_is_bounded_whatever_built_it() {
    // A key of 1 MiB is quoted cut, and the message as a whole stays bounded.
    let key = "k".repeat(1024 * 1024);
    let text = format!(r#"{{"mcpServers": {{"{key}": {{"command": 1}}}}}}"#);
    let message = parse_mcp_servers(&text).unwrap_err().to_string();
    assert!(message.len() < 2 * 1024, "{} bytes", message.len());
    assert!(message.contains("bytes in all)"), "{message}");
    let long = Error::invalid("x".repeat(1024 * 1024)).at("/a/file");
    assert!(long.to_string().len() < crate::text::ERROR_TEXT_BYTES + 64);
    assert!(long.to_string().starts_with("/a/file: xxx"));
}
