//! OAuth 2.1 end to end against the in-process authorization server and protected resource of
//! [`crate::oauth_mock`]: one test per rule of the client (the code flow, discovery and its
//! refusals, the token's origin, scopes, step-up, refresh, reuse by a later connection, login
//! outside a connection, credentials kept out of errors and logs, concurrency, token endpoint
//! client authentication). Each asserts typed reasons and what the fixtures logged, never
//! message text (except that no credential appears in any).

use std::io::Write;
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use http::Response;
use sidewire_mcp::auth::{
    self, AuthErrorKind, Authorizer, Interaction, LoginOutcome, MAX_AUTHORIZATIONS, OAuthSettings,
};
use sidewire_mcp::{Client, Error, NoHandler, ServerSpec};

use crate::http::echo;
use crate::http_mock::{Body, Seen, status};
use crate::oauth_mock::{
    AsOptions, AuthServer, Challenge, Consent, Grant, IssParam, MCP_PATH, MetadataAt, OtherOrigin,
    PreRegistered, PrmAt, Refresh, Resource, ResourceOptions,
};
use crate::support::{lock, within};

const SERVER: &str = "secure";
const PRM_INSERTED: &str = "/.well-known/oauth-protected-resource/mcp";
const PRM_ROOT: &str = "/.well-known/oauth-protected-resource";
const AS_OAUTH: &str = "/.well-known/oauth-authorization-server";
const AS_OPENID: &str = "/.well-known/openid-configuration";

fn headless() -> Authorizer {
    Authorizer::in_memory().interaction(Interaction::Headless)
}

/// The legacy era: these tests count the handshake's requests (`initialize`); the modern
/// era's authorization is covered by the conformance suite's 2026-07-28 auth scenarios.
fn spec(resource: &Resource, authorizer: &Authorizer) -> ServerSpec {
    ServerSpec::http(SERVER, resource.url())
        .authorizer(authorizer.clone())
        .era(sidewire_mcp::EraChoice::Legacy)
}

async fn try_connect(spec: &ServerSpec) -> Result<Client, Error> {
    let (client, driver) = within("connect", Client::connect(spec, NoHandler)).await?;
    tokio::spawn(driver);
    Ok(client)
}

async fn connect(spec: &ServerSpec) -> Client {
    try_connect(spec)
        .await
        .unwrap_or_else(|err| panic!("connect failed: {err:?}"))
}

async fn servers(as_options: AsOptions, options: ResourceOptions) -> (AuthServer, Resource) {
    let auth = AuthServer::start(as_options).await;
    let resource = Resource::start(&auth, options).await;
    (auth, resource)
}

/// Default servers and a connection that authorized and made one call.
async fn connected() -> (AuthServer, Resource, Client) {
    connected_with(AsOptions::default(), ResourceOptions::default()).await
}

/// Servers with these options and a connection that authorized and made one call.
async fn connected_with(
    as_options: AsOptions,
    options: ResourceOptions,
) -> (AuthServer, Resource, Client) {
    let (auth, resource) = servers(as_options, options).await;
    let client = connect(&spec(&resource, &headless())).await;
    assert_eq!(echo(&client, "x").await.unwrap(), "echo: x");
    (auth, resource, client)
}

/// Asserts that the tools/call requests carried these tokens, in order.
fn assert_call_bearers(resource: &Resource, tokens: &[&str]) {
    let calls: Vec<_> = resource.mock.posts("tools/call");
    let bearers: Vec<_> = calls.iter().map(Seen::bearer).collect();
    let expected: Vec<_> = tokens.iter().map(|t| Some(*t)).collect();
    assert_eq!(bearers, expected);
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

/// The `grant_type` of every token request the authorization server got, in order.
fn grants(auth: &AuthServer) -> Vec<String> {
    auth.seen_at("/token")
        .iter()
        .map(|s| s.form_param("grant_type").unwrap_or_default())
        .collect()
}

fn refreshes(auth: &AuthServer) -> usize {
    grants(auth)
        .iter()
        .filter(|g| *g == "refresh_token")
        .count()
}

fn paths(seen: &[Seen]) -> Vec<String> {
    seen.iter().map(|s| s.path_only().to_owned()).collect()
}

/// What reached the resource's origin other than its MCP endpoint (metadata, co-hosted AS
/// routes), in order.
fn side_paths(resource: &Resource) -> Vec<String> {
    paths(&resource.seen())
        .into_iter()
        .filter(|p| p != MCP_PATH)
        .collect()
}

/// The well-known paths the authorization server was asked for, in order.
fn metadata_probes(auth: &AuthServer) -> Vec<String> {
    paths(&auth.seen())
        .into_iter()
        .filter(|p| p.contains("/.well-known/"))
        .collect()
}

/// Every access and refresh token the server issued.
fn issued_credentials(auth: &AuthServer) -> Vec<String> {
    auth.issued()
        .into_iter()
        .flat_map(|i| [Some(i.access_token), i.refresh_token])
        .flatten()
        .collect()
}

fn auth_kind(result: Result<impl std::fmt::Debug, Error>) -> Option<AuthErrorKind> {
    let err = result.expect_err("must fail");
    assert!(err.is_auth(), "{err:?}");
    err.auth_error()
}

fn redirect(location: &str) -> Response<Body> {
    let mut response = status(302, "");
    response
        .headers_mut()
        .insert("location", location.parse().unwrap());
    response
}

// ---------------------------------------------------------------------------------------------
// 1. The happy path
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn a_401_leads_through_discovery_registration_and_the_code_flow_to_a_working_session() {
    let (auth, resource) = servers(AsOptions::default(), ResourceOptions::default()).await;
    let client = connect(&spec(&resource, &headless())).await;
    assert_eq!(client.list_tools().await.unwrap().len(), 1);
    assert_eq!(echo(&client, "hi").await.unwrap(), "echo: hi");

    // The PRM the challenge names, the AS metadata, DCR, the authorization request and the
    // code exchange: once each, in that order.
    assert_eq!(side_paths(&resource), [PRM_INSERTED]);
    assert_eq!(
        paths(&auth.seen()),
        [AS_OAUTH, "/register", "/authorize", "/token"]
    );
    let authorizations = auth.authorizations();
    assert_eq!(authorizations[0].code_challenge_method, "S256");
    assert_eq!(
        authorizations[0].resource.as_deref(),
        Some(resource.url().as_str())
    );
    assert!(authorizations[0].state.is_some());
    let issued = auth.issued();
    assert_eq!(issued.len(), 1);
    assert_eq!(issued[0].grant, Grant::AuthorizationCode);
    assert_eq!(
        auth.seen_at("/token")[0].form_param("resource").as_deref(),
        Some(resource.url().as_str())
    );

    // Only the first request went without the token; every one after it carries it.
    let bearers = resource.bearers();
    assert_eq!(bearers[0], None);
    assert!(bearers.len() >= 4, "{bearers:?}");
    let token = issued[0].access_token.as_str();
    assert!(
        bearers[1..].iter().all(|b| b.as_deref() == Some(token)),
        "{bearers:?}"
    );
    for method in ["initialize", "tools/list", "tools/call"] {
        let last = resource.mock.posts(method).pop().unwrap();
        assert_eq!(last.bearer(), Some(token), "{method}");
    }
}

// ---------------------------------------------------------------------------------------------
// 2. Discovery order and variants
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn without_a_named_url_the_resource_metadata_is_probed_path_inserted_then_at_the_root() {
    for (prm_at, expected) in [
        (PrmAt::PathInserted, vec![PRM_INSERTED]),
        (PrmAt::Root, vec![PRM_INSERTED, PRM_ROOT]),
    ] {
        let (auth, resource) = servers(
            AsOptions::default(),
            ResourceOptions {
                prm_at: prm_at.clone(),
                challenge: Challenge::Bare,
                ..ResourceOptions::default()
            },
        )
        .await;
        let client = connect(&spec(&resource, &headless())).await;
        assert_eq!(echo(&client, "x").await.unwrap(), "echo: x");
        assert_eq!(side_paths(&resource), expected, "{prm_at:?}");
        assert_eq!(auth.authorizations().len(), 1);
    }
}

#[tokio::test]
async fn authorization_server_metadata_is_looked_up_in_the_spec_order() {
    let tenant_oauth = format!("{AS_OAUTH}/tenant1");
    let tenant_openid = format!("{AS_OPENID}/tenant1");
    let tenant_appended = format!("/tenant1{AS_OPENID}");
    let cases = [
        ("", MetadataAt::OAuth, vec![AS_OAUTH.to_owned()]),
        (
            "",
            MetadataAt::OpenIdInserted,
            vec![AS_OAUTH.to_owned(), AS_OPENID.to_owned()],
        ),
        ("/tenant1", MetadataAt::OAuth, vec![tenant_oauth.clone()]),
        (
            "/tenant1",
            MetadataAt::OpenIdInserted,
            vec![tenant_oauth.clone(), tenant_openid.clone()],
        ),
        (
            "/tenant1",
            MetadataAt::OpenIdAppended,
            vec![tenant_oauth, tenant_openid, tenant_appended],
        ),
    ];
    for (prefix, metadata_at, expected) in cases {
        let (auth, _resource, _client) = connected_with(
            AsOptions {
                metadata_at: metadata_at.clone(),
                route_prefix: prefix.to_owned(),
                ..AsOptions::default()
            },
            ResourceOptions::default(),
        )
        .await;
        let probes = metadata_probes(&auth);
        assert_eq!(probes, expected, "{prefix:?} {metadata_at:?}");
        if !prefix.is_empty() {
            // The root URL belongs to another issuer.
            assert!(!probes.iter().any(|p| p == AS_OAUTH), "{probes:?}");
        }
        assert_eq!(auth.authorizations().len(), 1);
    }
}

#[tokio::test]
async fn without_resource_metadata_the_servers_own_origin_is_its_authorization_server() {
    // 2025-03-26: the metadata at the MCP server's origin; then no metadata at all, the
    // default endpoints there.
    for metadata_at in [MetadataAt::OAuth, MetadataAt::Nowhere] {
        let (auth, resource) = servers(
            AsOptions {
                metadata_at: metadata_at.clone(),
                ..AsOptions::default()
            },
            ResourceOptions {
                prm_at: PrmAt::Nowhere,
                challenge: Challenge::Bare,
                co_host_auth: true,
                ..ResourceOptions::default()
            },
        )
        .await;
        let client = connect(&spec(&resource, &headless())).await;
        assert_eq!(echo(&client, "x").await.unwrap(), "echo: x");
        assert_eq!(
            side_paths(&resource),
            [
                PRM_INSERTED,
                PRM_ROOT,
                AS_OAUTH,
                "/register",
                "/authorize",
                "/token"
            ],
            "{metadata_at:?}"
        );
        // The AS's own listener is another origin, never asked.
        assert!(auth.seen().is_empty(), "{metadata_at:?}");
        assert_eq!(auth.authorizations().len(), 1);
        assert_eq!(auth.registration_count(), 1);
    }
}

// ---------------------------------------------------------------------------------------------
// 3. Refusals
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn an_authorization_server_without_pkce_s256_is_refused_before_any_authorization() {
    for methods in [Some(strings(&["plain"])), None] {
        let (auth, resource) = servers(
            AsOptions {
                code_challenge_methods_supported: methods.clone(),
                ..AsOptions::default()
            },
            ResourceOptions::default(),
        )
        .await;
        let result = try_connect(&spec(&resource, &headless())).await;
        assert_eq!(
            auth_kind(result),
            Some(AuthErrorKind::Metadata),
            "{methods:?}"
        );
        assert!(auth.seen_at("/authorize").is_empty());
        assert_eq!(auth.registration_count(), 0);
    }
}

#[tokio::test]
async fn metadata_naming_another_issuer_is_refused() {
    let auth = AuthServer::start(AsOptions {
        issuer: Some("https://issuer.example".into()),
        ..AsOptions::default()
    })
    .await;
    let resource = Resource::start(
        &auth,
        ResourceOptions {
            authorization_servers: Some(vec![auth.url("")]),
            ..ResourceOptions::default()
        },
    )
    .await;
    let result = try_connect(&spec(&resource, &headless())).await;
    assert_eq!(auth_kind(result), Some(AuthErrorKind::Metadata));
    assert_eq!(metadata_probes(&auth), [AS_OAUTH]);
    assert!(auth.seen_at("/authorize").is_empty());
    assert_eq!(auth.registration_count(), 0);
}

#[tokio::test]
async fn resource_metadata_for_another_resource_is_refused() {
    let other = OtherOrigin::start().await;
    for named in [other.url(MCP_PATH), String::from("/elsewhere")] {
        let auth = AuthServer::start(AsOptions::default()).await;
        let resource = Resource::start(&auth, ResourceOptions::default()).await;
        let value = match named.starts_with('/') {
            true => resource.origin_url(&named),
            false => named.clone(),
        };
        resource.update(|o| o.resource = Some(value));
        let result = try_connect(&spec(&resource, &headless())).await;
        assert_eq!(
            auth_kind(result),
            Some(AuthErrorKind::ResourceMismatch),
            "{named}"
        );
        assert!(auth.seen().is_empty(), "{named}");
    }
    assert!(other.seen().is_empty());
}

#[tokio::test]
async fn a_resource_metadata_url_on_another_origin_is_not_fetched() {
    let other = OtherOrigin::start().await;
    let (auth, resource) = servers(
        AsOptions::default(),
        ResourceOptions {
            metadata_url: Some(other.url(PRM_ROOT)),
            ..ResourceOptions::default()
        },
    )
    .await;
    let result = try_connect(&spec(&resource, &headless())).await;
    assert_eq!(auth_kind(result), Some(AuthErrorKind::Discovery));
    assert!(other.seen().is_empty());
    assert!(auth.seen().is_empty());
}

#[tokio::test]
async fn the_iss_of_the_authorization_response_is_checked() {
    let wrong = IssParam::Wrong("https://issuer.example".into());
    let cases = [
        (true, IssParam::Omitted, Some(AuthErrorKind::Callback)),
        (true, wrong.clone(), Some(AuthErrorKind::Callback)),
        (false, wrong, Some(AuthErrorKind::Callback)),
        (true, IssParam::Auto, None),
        (false, IssParam::Auto, None),
    ];
    for (advertised, iss_param, expected) in cases {
        let (auth, resource) = servers(
            AsOptions {
                iss_parameter_supported: advertised,
                iss_param: iss_param.clone(),
                ..AsOptions::default()
            },
            ResourceOptions::default(),
        )
        .await;
        let result = try_connect(&spec(&resource, &headless())).await;
        let case = format!("{advertised} {iss_param:?}");
        assert_eq!(auth.authorizations().len(), 1, "{case}");
        match expected {
            Some(kind) => {
                assert_eq!(auth_kind(result), Some(kind), "{case}");
                assert!(auth.seen_at("/token").is_empty(), "{case}");
            }
            None => {
                let client = result.unwrap_or_else(|err| panic!("{case}: {err:?}"));
                assert_eq!(echo(&client, "x").await.unwrap(), "echo: x");
            }
        }
    }
}

#[tokio::test]
async fn an_authorization_response_with_another_state_is_refused() {
    // The authorization endpoint (on another origin, as it may be) answers with a code under
    // a state the client never sent.
    let forger = OtherOrigin::start().await;
    forger.mock.script(|seen, _| {
        let back = seen.query_param("redirect_uri")?;
        Some(redirect(&format!("{back}?code=forged&state=not-yours")))
    });
    let mut extra = serde_json::Map::new();
    extra.insert(
        "authorization_endpoint".into(),
        forger.url("/authorize").into(),
    );
    let (auth, resource) = servers(
        AsOptions {
            extra_metadata: extra,
            ..AsOptions::default()
        },
        ResourceOptions::default(),
    )
    .await;
    let result = try_connect(&spec(&resource, &headless())).await;
    assert_eq!(auth_kind(result), Some(AuthErrorKind::Callback));
    assert_eq!(forger.seen().len(), 1);
    assert!(auth.seen_at("/token").is_empty());
}

#[tokio::test]
async fn a_denied_authorization_fails_as_denied() {
    let (auth, resource) = servers(
        AsOptions {
            consent: Consent::Deny,
            ..AsOptions::default()
        },
        ResourceOptions::default(),
    )
    .await;
    let result = try_connect(&spec(&resource, &headless())).await;
    assert_eq!(auth_kind(result), Some(AuthErrorKind::Denied));
    assert_eq!(auth.seen_at("/authorize").len(), 1);
    assert!(auth.seen_at("/token").is_empty());
}

#[tokio::test]
async fn authorization_server_endpoints_on_plain_http_off_loopback_are_refused_before_use() {
    // Nothing listens at these: a request sent there would fail another way.
    for (member, url) in [
        ("token_endpoint", "http://example.invalid/token"),
        ("authorization_endpoint", "http://192.0.2.1/authorize"),
        ("registration_endpoint", "http://[2001:db8::1]/register"),
    ] {
        let mut options = AsOptions::default();
        options.extra_metadata.insert(member.into(), url.into());
        let (auth, resource) = servers(options, ResourceOptions::default()).await;
        let result = try_connect(&spec(&resource, &headless())).await;
        assert_eq!(auth_kind(result), Some(AuthErrorKind::Insecure), "{member}");
        // Refused with the metadata: no registration, authorization or token request.
        assert_eq!(auth.registration_count(), 0, "{member}");
        assert!(auth.authorizations().is_empty(), "{member}");
        assert!(auth.seen_at("/token").is_empty(), "{member}");
    }
    // An issuer, or a configured metadata URL, on plain http: its metadata is not fetched.
    let (auth, resource) = servers(
        AsOptions::default(),
        ResourceOptions {
            authorization_servers: Some(strings(&["http://example.invalid"])),
            ..ResourceOptions::default()
        },
    )
    .await;
    let result = try_connect(&spec(&resource, &headless())).await;
    assert_eq!(auth_kind(result), Some(AuthErrorKind::Insecure));
    let (auth2, resource2) = servers(AsOptions::default(), ResourceOptions::default()).await;
    let settings = OAuthSettings::new()
        .auth_server_metadata_url("http://example.invalid/.well-known/oauth-authorization-server");
    let result = try_connect(&spec(&resource2, &headless()).oauth(settings)).await;
    assert_eq!(auth_kind(result), Some(AuthErrorKind::Insecure));
    for auth in [auth, auth2] {
        assert_eq!(metadata_probes(&auth), Vec::<String>::new());
        assert_eq!(auth.registration_count(), 0);
    }
}

// ---------------------------------------------------------------------------------------------
// 4. The token stays at the resource's origin
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn the_token_never_leaves_the_resources_origin() {
    let other = OtherOrigin::start().await;
    let (auth, resource, client) = connected().await;
    // A refresh: requests to the AS while the client holds a token.
    resource.revoke_all();
    assert_eq!(echo(&client, "y").await.unwrap(), "echo: y");
    assert_eq!(refreshes(&auth), 1);

    resource.update(|o| o.redirect_to = Some(other.url(MCP_PATH)));
    let err = echo(&client, "moved").await.unwrap_err();
    assert!(other.authorizations().is_empty(), "{:?}", other.seen());
    assert_eq!(err.http_status(), Some(307), "{err:?}");
    assert!(
        resource
            .mock
            .posts("tools/call")
            .last()
            .unwrap()
            .bearer()
            .is_some()
    );

    // Nothing sent to the authorization server carries an access token.
    let tokens: Vec<String> = auth.issued().into_iter().map(|i| i.access_token).collect();
    for seen in auth.seen() {
        assert_eq!(seen.bearer(), None, "{seen:?}");
        let text = format!(
            "{} {} {:?}",
            seen.path,
            String::from_utf8_lossy(&seen.raw),
            seen.headers
        );
        assert!(!tokens.iter().any(|t| text.contains(t)), "{seen:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// 5. Scopes
// ---------------------------------------------------------------------------------------------

/// The scope of the one authorization a connection with these options makes.
async fn first_scope(
    as_options: AsOptions,
    options: ResourceOptions,
    settings: OAuthSettings,
) -> Option<String> {
    let (auth, resource) = servers(as_options, options).await;
    let client = connect(&spec(&resource, &headless()).oauth(settings)).await;
    assert_eq!(echo(&client, "x").await.unwrap(), "echo: x");
    let authorizations = auth.authorizations();
    assert_eq!(authorizations.len(), 1);
    authorizations[0].scope.clone()
}

#[tokio::test]
async fn scopes_come_from_the_configuration_the_challenge_or_the_resource_metadata() {
    let challenged = |scope: &str, listed: Option<&[&str]>| ResourceOptions {
        challenge_scope: (!scope.is_empty()).then(|| scope.to_owned()),
        scopes_supported: listed.map(strings),
        ..ResourceOptions::default()
    };
    let plain = AsOptions::default;
    let none = OAuthSettings::new;
    let cases = [
        // The challenge's scope, over the PRM's.
        (
            plain(),
            challenged("read write", Some(&["listed"])),
            none(),
            Some("read write"),
        ),
        // Else every scope the PRM lists.
        (
            plain(),
            challenged("", Some(&["a", "b"])),
            none(),
            Some("a b"),
        ),
        // Else none at all.
        (plain(), challenged("", None), none(), None),
        // Configured scopes win.
        (
            plain(),
            challenged("read", Some(&["listed"])),
            none().scopes(["mine"]),
            Some("mine"),
        ),
        // offline_access only when the AS lists it.
        (
            AsOptions {
                scopes_supported: Some(strings(&["read", "offline_access"])),
                ..AsOptions::default()
            },
            challenged("read", None),
            none(),
            Some("read offline_access"),
        ),
        (
            AsOptions {
                scopes_supported: Some(strings(&["read"])),
                ..AsOptions::default()
            },
            challenged("read", None),
            none(),
            Some("read"),
        ),
    ];
    for (i, (as_options, options, settings, expected)) in cases.into_iter().enumerate() {
        assert_eq!(
            first_scope(as_options, options, settings).await.as_deref(),
            expected,
            "case {i}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// 6. Step-up
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn a_403_insufficient_scope_authorizes_again_for_the_union_of_scopes() {
    let (auth, resource) = servers(
        AsOptions::default(),
        ResourceOptions {
            challenge_scope: Some("read".into()),
            required_scopes: [("tools/call".to_owned(), strings(&["write"]))]
                .into_iter()
                .collect(),
            ..ResourceOptions::default()
        },
    )
    .await;
    let client = connect(&spec(&resource, &headless())).await;
    assert_eq!(client.list_tools().await.unwrap().len(), 1);
    assert_eq!(auth.authorizations().len(), 1);
    assert_eq!(echo(&client, "x").await.unwrap(), "echo: x");
    let scopes: Vec<_> = auth.authorizations().into_iter().map(|a| a.scope).collect();
    assert_eq!(
        scopes,
        [Some("read".to_owned()), Some("read write".to_owned())]
    );
    let issued = auth.issued();
    assert_call_bearers(
        &resource,
        &[&issued[0].access_token, &issued[1].access_token],
    );
}

#[tokio::test]
async fn a_resource_that_keeps_answering_insufficient_scope_ends_the_call_still_refused() {
    let (auth, resource, client) = connected().await;
    let before = auth.authorizations().len();

    resource.update(|o| o.always_insufficient = Some("admin".into()));
    let err = echo(&client, "y").await.unwrap_err();
    assert_eq!(
        err.auth_error(),
        Some(AuthErrorKind::StillRefused),
        "{err:?}"
    );
    let spent = auth.authorizations().len() - before;
    assert!(
        (1..=MAX_AUTHORIZATIONS as usize).contains(&spent),
        "{spent} authorizations for one call"
    );

    // The connection still works once the server relents.
    resource.update(|o| o.always_insufficient = None);
    assert_eq!(echo(&client, "z").await.unwrap(), "echo: z");
}

// ---------------------------------------------------------------------------------------------
// 7. Refresh
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn a_401_to_a_current_token_refreshes_once_without_a_new_authorization() {
    let (auth, resource, client) = connected().await;
    resource.revoke_all();
    assert_eq!(echo(&client, "y").await.unwrap(), "echo: y");
    assert_eq!(grants(&auth), ["authorization_code", "refresh_token"]);
    assert_eq!(auth.authorizations().len(), 1);
    let issued = auth.issued();
    assert_eq!(issued[1].grant, Grant::RefreshToken);
    // The first call, the refused one, and its retry.
    let (old, new) = (&issued[0].access_token, &issued[1].access_token);
    assert_call_bearers(&resource, &[old, old, new]);
}

#[tokio::test]
async fn a_rejected_refresh_authorizes_again_once() {
    let (auth, resource, client) = connected().await;
    auth.update(|o| o.refresh = Refresh::Reject);
    resource.revoke_all();
    assert_eq!(echo(&client, "y").await.unwrap(), "echo: y");
    assert_eq!(
        grants(&auth),
        ["authorization_code", "refresh_token", "authorization_code"]
    );
    assert_eq!(auth.authorizations().len(), 2);
    assert_eq!(auth.registration_count(), 1);
}

#[tokio::test]
async fn a_token_about_to_expire_is_refreshed_before_the_request() {
    // A token that is already due (no lifetime left): every request refreshes first. (A
    // short-lived one is refreshed after half its lifetime: `Tokens::refresh_due`.)
    let (auth, resource, client) = connected_with(
        AsOptions {
            expires_in: Some(0),
            ..AsOptions::default()
        },
        ResourceOptions::default(),
    )
    .await;
    let before = refreshes(&auth);
    // Revoked, so a request sent with the old token would get a 401.
    resource.revoke_all();
    assert_eq!(echo(&client, "y").await.unwrap(), "echo: y");
    assert_eq!(refreshes(&auth), before + 1);
    // The second call was sent once, never refused, with the new token.
    let newest = auth.issued().pop().unwrap();
    assert_eq!(newest.grant, Grant::RefreshToken);
    let first = resource.mock.posts("tools/call")[0]
        .bearer()
        .unwrap()
        .to_owned();
    assert_call_bearers(&resource, &[&first, &newest.access_token]);
    assert_eq!(auth.authorizations().len(), 1);
}

// ---------------------------------------------------------------------------------------------
// 8. A later connection reuses what was stored
// ---------------------------------------------------------------------------------------------

/// Default servers, and a spec with its own authorizer that authorized in one connection,
/// made a call and closed.
async fn connected_once() -> (AuthServer, Resource, ServerSpec) {
    let (auth, resource) = servers(AsOptions::default(), ResourceOptions::default()).await;
    let spec = spec(&resource, &headless());
    let first = connect(&spec).await;
    assert_eq!(echo(&first, "x").await.unwrap(), "echo: x");
    within("close", first.close()).await;
    (auth, resource, spec)
}

#[tokio::test]
async fn a_later_connection_reuses_the_stored_token_and_registration() {
    let (auth, resource, spec) = connected_once().await;

    let second = connect(&spec).await;
    assert_eq!(echo(&second, "y").await.unwrap(), "echo: y");
    assert_eq!(auth.authorizations().len(), 1);
    assert_eq!(auth.registration_count(), 1);
    assert_eq!(grants(&auth), ["authorization_code"]);
    let inits = resource.mock.posts("initialize");
    assert_eq!(
        inits.len(),
        3,
        "bare, with the new token, with the stored one"
    );
    assert_eq!(
        inits[2].bearer(),
        Some(auth.issued()[0].access_token.as_str())
    );
    within("close", second.close()).await;

    // The token revoked and its refresh refused: authorized again, as the same client.
    auth.update(|o| o.refresh = Refresh::Reject);
    resource.revoke_all();
    let third = connect(&spec).await;
    assert_eq!(echo(&third, "z").await.unwrap(), "echo: z");
    let authorizations = auth.authorizations();
    assert_eq!(authorizations.len(), 2);
    assert_eq!(auth.registration_count(), 1);
    assert_eq!(authorizations[1].client_id, authorizations[0].client_id);
}

#[tokio::test]
async fn a_registration_whose_redirect_port_is_taken_is_replaced() {
    // The fixture compares redirect URIs exactly, so a registration is only good on the port
    // it was made with: when that is taken, the client registers again.
    let (auth, resource, spec) = connected_once().await;
    let registered = auth.registrations()[0]["redirect_uris"][0]
        .as_str()
        .unwrap()
        .to_owned();
    let port = url::Url::parse(&registered).unwrap().port().unwrap();
    let _taken = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .unwrap();

    auth.update(|o| o.refresh = Refresh::Reject);
    resource.revoke_all();
    let second = connect(&spec).await;
    assert_eq!(echo(&second, "y").await.unwrap(), "echo: y");
    assert_eq!(auth.registration_count(), 2);
    let authorizations = auth.authorizations();
    assert_eq!(authorizations[0].redirect_uri, registered);
    assert_ne!(authorizations[1].redirect_uri, registered);
    assert_ne!(authorizations[1].client_id, authorizations[0].client_id);
}

// ---------------------------------------------------------------------------------------------
// 9. Nobody to sign in; login, logout, status
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn with_nobody_to_sign_in_a_login_is_required_and_login_logout_status_manage_it() {
    let (auth, resource) = servers(AsOptions::default(), ResourceOptions::default()).await;
    let never = Authorizer::in_memory();
    let spec_never = spec(&resource, &never);
    let err = try_connect(&spec_never).await.unwrap_err();
    assert!(err.is_login_required(), "{err:?}");
    assert!(err.is_auth());
    assert!(auth.seen().is_empty(), "not even discovery");

    // Login through the same store, headless.
    let spec_login = spec(&resource, &never.clone().interaction(Interaction::Headless));
    let outcome = within("login", auth::login(&spec_login)).await.unwrap();
    assert!(
        matches!(outcome, LoginOutcome::Authorized { .. }),
        "{outcome:?}"
    );
    assert_eq!(auth.authorizations().len(), 1);

    let client = connect(&spec_never).await;
    assert_eq!(echo(&client, "x").await.unwrap(), "echo: x");
    // Nobody to sign in still refreshes.
    resource.revoke_all();
    assert_eq!(echo(&client, "y").await.unwrap(), "echo: y");
    assert_eq!(refreshes(&auth), 1);
    assert_eq!(auth.authorizations().len(), 1);
    within("close", client.close()).await;

    let shown = auth::status(&never).unwrap();
    assert_eq!(shown.len(), 1);
    assert_eq!(shown[0].server, SERVER);
    assert_eq!(shown[0].resource, resource.url());
    assert!(shown[0].has_token && shown[0].can_refresh);
    let text = format!("{shown:?}");
    for credential in issued_credentials(&auth) {
        assert!(!text.contains(&credential), "{text}");
    }

    assert!(auth::logout(&spec_never).unwrap());
    assert!(auth::status(&never).unwrap().is_empty());
    assert!(!auth::logout(&spec_never).unwrap());
    let err = try_connect(&spec_never).await.unwrap_err();
    assert!(err.is_login_required(), "{err:?}");
    assert_eq!(auth.authorizations().len(), 1);
}

// ---------------------------------------------------------------------------------------------
// 10. Credentials never shown
// ---------------------------------------------------------------------------------------------

/// A `tracing` writer into a shared buffer.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        lock(&self.0).extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    fn text(&self) -> String {
        String::from_utf8_lossy(&lock(&self.0)).into_owned()
    }
}

/// Every event of this thread at every level, kept while the guard lives. (A test runs on one
/// thread, the spawned driver included.)
fn capture_log() -> (Captured, tracing::subscriber::DefaultGuard) {
    let log = Captured::default();
    let writer = log.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(false)
        .finish();
    (log, tracing::subscriber::set_default(subscriber))
}

#[tokio::test]
async fn no_token_or_client_secret_reaches_an_error_a_debug_or_the_log() {
    const CLIENT: &str = "known-client";
    const SECRET: &str = "pre-registered-secret-4711";
    let (log, _log) = capture_log();

    let (auth, resource) = servers(
        AsOptions {
            token_endpoint_auth_methods_supported: strings(&["client_secret_post"]),
            clients: vec![PreRegistered {
                client_id: CLIENT.into(),
                client_secret: Some(SECRET.into()),
                auth_method: Some("client_secret_post".into()),
                redirect_uris: Vec::new(),
            }],
            ..AsOptions::default()
        },
        ResourceOptions::default(),
    )
    .await;
    let settings = OAuthSettings::new().client_id(CLIENT).client_secret(SECRET);
    let authorizer = headless();
    let spec = spec(&resource, &authorizer).oauth(settings.clone());
    let client = connect(&spec).await;
    assert_eq!(echo(&client, "x").await.unwrap(), "echo: x");

    let mut errors = Vec::new();
    // The refresh and the authorization after it fail, and the server reflects each request
    // (the refresh token, the secret) in its error.
    resource.revoke_all();
    auth.fail_next_token_requests_echoing(2, 400);
    let err = echo(&client, "y").await.unwrap_err();
    assert_eq!(err.auth_error(), Some(AuthErrorKind::Token), "{err:?}");
    errors.push(err);
    let failed = auth.seen_at("/token");
    let failed = &failed[failed.len() - 2..];
    assert_eq!(
        failed[0].form_param("refresh_token").as_deref(),
        auth.issued()[0].refresh_token.as_deref()
    );
    assert!(
        failed
            .iter()
            .all(|s| s.form_param("client_secret").as_deref() == Some(SECRET))
    );
    // A step-up that is refused.
    resource.update(|o| o.always_insufficient = Some("admin".into()));
    let err = echo(&client, "z").await.unwrap_err();
    assert_eq!(
        err.auth_error(),
        Some(AuthErrorKind::StillRefused),
        "{err:?}"
    );
    errors.push(err);

    let stored = authorizer
        .store()
        .load(&auth::store_key(&spec))
        .unwrap()
        .expect("a stored record");
    let newest = auth.issued().pop().unwrap();
    assert_eq!(
        stored.tokens.as_ref().map(|t| t.access_token.expose()),
        Some(newest.access_token.as_str())
    );
    let mut shown: Vec<String> = errors
        .iter()
        .flat_map(|err| [err.to_string(), format!("{err:?}")])
        .collect();
    shown.extend([
        format!("{authorizer:?}"),
        format!("{settings:?}"),
        format!("{stored:?}"),
        format!("{spec:?}"),
    ]);
    let log = log.text();
    assert!(!log.is_empty());
    shown.push(log);
    let mut credentials = issued_credentials(&auth);
    credentials.push(SECRET.to_owned());
    assert!(credentials.len() >= 5, "{credentials:?}");
    for text in &shown {
        for credential in &credentials {
            assert!(
                !text.contains(credential.as_str()),
                "{credential} in {text}"
            );
        }
    }
}

#[tokio::test]
async fn a_broken_token_answer_is_never_quoted_in_an_error_or_the_log() {
    const ACCESS: &str = "broken-answer-access-5c1d";
    const REFRESH: &str = "broken-answer-refresh-8a4f";
    let (log, _log) = capture_log();
    let (auth, resource) = servers(AsOptions::default(), ResourceOptions::default()).await;
    let spec = spec(&resource, &headless());
    let cut_short = format!(
        r#"{{"access_token":"{ACCESS}","token_type":"Bearer","refresh_token":"{REFRESH}","expires_in":"#
    );
    let mistyped = format!(
        r#"{{"access_token":"{ACCESS}","token_type":"Bearer","refresh_token":"{REFRESH}","expires_in":"{REFRESH}"}}"#
    );
    let mut shown = Vec::new();
    for body in [&cut_short, &mistyped] {
        // The code exchange gets the broken answer.
        auth.answer_next_token_requests(1, 200, body);
        let err = try_connect(&spec).await.map(|_| ()).unwrap_err();
        assert_eq!(err.auth_error(), Some(AuthErrorKind::Token), "{err:?}");
        shown.extend([err.to_string(), format!("{err:?}")]);
    }
    // The member that is wrong is named.
    assert!(shown[2].contains("`expires_in`"), "{}", shown[2]);
    // A refresh that gets one is logged, and the client authorizes again.
    let client = connect(&spec).await;
    assert_eq!(echo(&client, "x").await.unwrap(), "echo: x");
    resource.revoke_all();
    auth.answer_next_token_requests(1, 200, &cut_short);
    assert_eq!(echo(&client, "y").await.unwrap(), "echo: y");
    let grants = grants(&auth);
    assert_eq!(
        grants[grants.len() - 2..],
        ["refresh_token", "authorization_code"]
    );
    let log = log.text();
    assert!(log.contains(AuthErrorKind::Token.as_str()), "{log}");
    shown.push(log);
    for text in &shown {
        assert!(
            !text.contains(ACCESS) && !text.contains(REFRESH),
            "a token of the answer was shown: {text}"
        );
    }
}

#[tokio::test]
async fn a_broken_registration_answer_never_shows_its_client_secret() {
    const SECRET: &str = "broken-registration-secret-0e6a";
    let (log, _log) = capture_log();
    let mut options = AsOptions::default();
    for member in ["client_secret", "client_secret_expires_at"] {
        options
            .extra_registration_members
            .insert(member.into(), SECRET.into());
    }
    let (auth, resource) = servers(options, ResourceOptions::default()).await;
    let err = try_connect(&spec(&resource, &headless()))
        .await
        .map(|_| ())
        .unwrap_err();
    assert_eq!(
        err.auth_error(),
        Some(AuthErrorKind::Registration),
        "{err:?}"
    );
    assert_eq!(auth.registration_count(), 1);
    assert!(
        err.to_string().contains("`client_secret_expires_at`"),
        "{err}"
    );
    for text in [err.to_string(), format!("{err:?}"), log.text()] {
        assert!(
            !text.contains(SECRET),
            "the client secret was shown: {text}"
        );
    }
}

#[tokio::test]
async fn over_long_members_of_registration_and_token_answers_are_refused_and_never_stored() {
    // A 900 KB client id, within the answer cap (`MAX_AUTH_BODY`) but not the member cap.
    let mut options = AsOptions::default();
    options
        .extra_registration_members
        .insert("client_id".into(), "c".repeat(900 * 1024).into());
    let (_auth, resource) = servers(options, ResourceOptions::default()).await;
    let authorizer = headless();
    let err = try_connect(&spec(&resource, &authorizer))
        .await
        .map(|_| ())
        .unwrap_err();
    assert_eq!(
        err.auth_error(),
        Some(AuthErrorKind::Registration),
        "{err:?}"
    );
    assert!(err.to_string().contains("`client_id`"), "{err}");
    assert!(err.to_string().len() < 1024, "{err}");
    assert_eq!(authorizer.store().list().unwrap(), []);

    // Tokens one byte over their cap, and a scope over its own.
    let over = auth::MAX_CREDENTIAL_BYTES + 1;
    for (member, value) in [
        ("access_token", "a".repeat(over)),
        ("refresh_token", "r".repeat(over)),
        ("scope", "s".repeat(auth::MAX_ANSWER_TEXT_BYTES + 1)),
    ] {
        let mut options = AsOptions::default();
        options
            .extra_token_members
            .insert(member.into(), value.into());
        let (_auth, resource) = servers(options, ResourceOptions::default()).await;
        let authorizer = headless();
        let spec = spec(&resource, &authorizer);
        let err = try_connect(&spec).await.map(|_| ()).unwrap_err();
        assert_eq!(err.auth_error(), Some(AuthErrorKind::Token), "{err:?}");
        assert!(err.to_string().contains(&format!("`{member}`")), "{err}");
        let stored = authorizer.store().load(&auth::store_key(&spec)).unwrap();
        assert!(stored.is_some_and(|record| record.tokens.is_none()));
    }
}

#[tokio::test]
async fn expires_in_as_digits_or_an_integral_float_is_read_and_anything_else_is_named() {
    for (written, secs) in [
        (serde_json::json!("3600"), 3600),
        (serde_json::json!(3600.0), 3600),
        (serde_json::json!(3600), 3600),
        (serde_json::json!(-30), 0),
        (serde_json::json!(1e12), auth::MAX_TOKEN_LIFETIME.as_secs()),
    ] {
        let mut options = AsOptions::default();
        options
            .extra_token_members
            .insert("expires_in".into(), written.clone());
        let (_auth, resource) = servers(options, ResourceOptions::default()).await;
        let authorizer = headless();
        let spec = spec(&resource, &authorizer);
        let client = connect(&spec).await;
        assert_eq!(echo(&client, "x").await.unwrap(), "echo: x", "{written}");
        let stored = authorizer
            .store()
            .load(&auth::store_key(&spec))
            .unwrap()
            .and_then(|record| record.tokens)
            .expect("stored tokens");
        let lifetime = stored.expires_at.unwrap() - stored.issued_at.unwrap();
        assert_eq!(lifetime, secs, "{written}");
    }
    for written in [serde_json::json!("3600.5"), serde_json::json!("soon")] {
        let mut options = AsOptions::default();
        options
            .extra_token_members
            .insert("expires_in".into(), written.clone());
        let (_auth, resource) = servers(options, ResourceOptions::default()).await;
        let err = try_connect(&spec(&resource, &headless()))
            .await
            .map(|_| ())
            .unwrap_err();
        assert_eq!(err.auth_error(), Some(AuthErrorKind::Token), "{err:?}");
        assert!(err.to_string().contains("`expires_in`"), "{err}");
    }
}

// ---------------------------------------------------------------------------------------------
// 11. Concurrency
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn concurrent_calls_after_a_revocation_share_one_refresh() {
    let (auth, resource, client) = connected().await;
    resource.revoke_all();
    let calls = (0..8).map(|i| {
        let client = client.clone();
        async move { echo(&client, &format!("c{i}")).await }
    });
    let answers = futures_util::future::join_all(calls).await;
    for (i, answer) in answers.into_iter().enumerate() {
        assert_eq!(answer.unwrap(), format!("echo: c{i}"));
    }
    assert_eq!(grants(&auth), ["authorization_code", "refresh_token"]);
    assert_eq!(auth.authorizations().len(), 1);
    // They really were concurrent: more than one was refused with the revoked token.
    let revoked = auth.issued()[0].access_token.clone();
    let refused = resource
        .mock
        .posts("tools/call")
        .iter()
        .filter(|s| s.bearer() == Some(revoked.as_str()))
        .count();
    assert!(refused > 2, "{refused} calls sent with the revoked token");
}

/// Two processes (two connections, each with its own `FileStore` on one directory, nobody to
/// sign in) that share a login, against a server that rotates refresh tokens and refuses a
/// spent one, with tokens that live `expires_in` seconds: each round every issued token is
/// revoked, so each connection must refresh or take the other's new tokens.
async fn two_processes_share_rotating_refresh_tokens(expires_in: u64) {
    let dir = tempfile::tempdir().unwrap();
    let (auth, resource) = servers(
        AsOptions {
            expires_in: Some(expires_in),
            refresh: Refresh::Rotate,
            ..AsOptions::default()
        },
        ResourceOptions::default(),
    )
    .await;
    let process = || Authorizer::new(auth::FileStore::new(dir.path()));
    let login = spec(&resource, &process().interaction(Interaction::Headless));
    let outcome = within("login", auth::login(&login)).await.unwrap();
    assert!(matches!(outcome, LoginOutcome::Authorized { .. }));
    let a = connect(&spec(&resource, &process())).await;
    let b = connect(&spec(&resource, &process())).await;
    for round in 0..3 {
        auth.revoke_all();
        assert_eq!(echo(&a, "a").await.unwrap(), "echo: a", "round {round}");
        assert_eq!(echo(&b, "b").await.unwrap(), "echo: b", "round {round}");
    }
    assert_eq!(auth.authorizations().len(), 1);
    let spent: Vec<String> = auth
        .seen_at("/token")
        .iter()
        .filter_map(|seen| seen.form_param("refresh_token"))
        .collect();
    assert!(spent.len() >= 3, "{spent:?}");
    let unique: std::collections::HashSet<&String> = spent.iter().collect();
    assert_eq!(
        unique.len(),
        spent.len(),
        "a refresh token spent twice: {spent:?}"
    );
}

#[tokio::test]
async fn a_process_takes_the_tokens_another_refreshed_rather_than_spending_its_own_again() {
    // Tokens that live less than the refresh margin, refreshed on a 401: the second process
    // takes the first one's new tokens.
    two_processes_share_rotating_refresh_tokens(20).await;
}

#[tokio::test]
async fn a_process_refreshes_with_the_stored_refresh_token_when_the_stored_tokens_are_due() {
    // Tokens that are due at once: every request refreshes first, with the newest refresh
    // token, whichever process got it.
    two_processes_share_rotating_refresh_tokens(0).await;
}

// ---------------------------------------------------------------------------------------------
// 12. Token endpoint client authentication
// ---------------------------------------------------------------------------------------------

fn basic_credentials(seen: &Seen) -> Option<(String, String)> {
    let value = seen.header("authorization")?;
    let encoded = value.strip_prefix("Basic ")?;
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .ok()?;
    let (id, secret) = std::str::from_utf8(&decoded).ok()?.split_once(':')?;
    Some((id.to_owned(), secret.to_owned()))
}

#[tokio::test]
async fn token_requests_authenticate_the_client_as_registered() {
    for method in ["client_secret_basic", "client_secret_post"] {
        let supported = match method {
            "client_secret_basic" => strings(&["client_secret_basic", "client_secret_post"]),
            _ => strings(&["client_secret_post"]),
        };
        let (auth, resource) = servers(
            AsOptions {
                token_endpoint_auth_methods_supported: supported,
                clients: vec![PreRegistered {
                    client_id: "confidential".into(),
                    client_secret: Some("s3cret".into()),
                    auth_method: Some(method.into()),
                    redirect_uris: Vec::new(),
                }],
                ..AsOptions::default()
            },
            ResourceOptions::default(),
        )
        .await;
        let settings = OAuthSettings::new()
            .client_id("confidential")
            .client_secret("s3cret");
        let client = connect(&spec(&resource, &headless()).oauth(settings)).await;
        assert_eq!(echo(&client, "x").await.unwrap(), "echo: x");
        assert_eq!(auth.registration_count(), 0);
        let token = &auth.seen_at("/token")[0];
        let basic = basic_credentials(token);
        let posted = (
            token.form_param("client_id"),
            token.form_param("client_secret"),
        );
        match method {
            "client_secret_basic" => {
                assert_eq!(basic, Some(("confidential".into(), "s3cret".into())));
                assert_eq!(posted.1, None);
            }
            _ => {
                assert_eq!(token.header("authorization"), None);
                assert_eq!(posted, (Some("confidential".into()), Some("s3cret".into())));
            }
        }
    }

    // DCR where only client_secret_basic is accepted: a confidential registration, then Basic.
    let (auth, resource) = servers(
        AsOptions {
            token_endpoint_auth_methods_supported: strings(&["client_secret_basic"]),
            ..AsOptions::default()
        },
        ResourceOptions::default(),
    )
    .await;
    let client = connect(&spec(&resource, &headless())).await;
    assert_eq!(echo(&client, "x").await.unwrap(), "echo: x");
    let registrations = auth.registrations();
    assert_eq!(registrations.len(), 1);
    assert_eq!(
        registrations[0]["token_endpoint_auth_method"],
        "client_secret_basic"
    );
    let token = &auth.seen_at("/token")[0];
    let (id, secret) = basic_credentials(token).expect("Basic credentials");
    assert_eq!(id, auth.authorizations()[0].client_id);
    assert!(secret.starts_with("mock-secret-"), "{secret}");
    assert_eq!(token.form_param("client_secret"), None);
}
