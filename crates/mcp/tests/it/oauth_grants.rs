//! The grants beyond the code flow and DPoP, end to end through a connection against the
//! in-process authorization server and resource ([`crate::oauth_mock`]): workload identity
//! (`jwt-bearer` with an assertion read from a file at request time, never retried when
//! refused), and the DPoP proof on the code flow's token request when the server lists ES256.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};
use sidewire_mcp::auth::{
    AssertionSource, AuthErrorKind, Authorizer, DpopPolicy, Grant, Interaction, OAuthSettings,
};
use sidewire_mcp::{Client, NoHandler, ServerSpec};

use crate::http::connect;
use crate::oauth_mock::{self, AsOptions, AuthServer, PreRegistered, Resource, ResourceOptions};
use crate::support::*;

const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
/// A workload token's shape (the mock does not verify it).
const WORKLOAD_JWT: &str = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ3b3JrbG9hZCJ9.c2lnbmF0dXJl";

/// An authorization server for workloads: only the jwt-bearer grant, no registration, the
/// workload pre-registered as a public client.
async fn workload_server() -> (AuthServer, Resource) {
    let auth = AuthServer::start(AsOptions {
        registration: false,
        grant_types_supported: vec![JWT_BEARER.to_owned()],
        clients: vec![PreRegistered {
            client_id: "wif-workload".into(),
            client_secret: None,
            auth_method: None,
            redirect_uris: Vec::new(),
        }],
        ..AsOptions::default()
    })
    .await;
    let resource = Resource::start(&auth, ResourceOptions::default()).await;
    (auth, resource)
}

fn workload_spec(resource: &Resource, token_file: &std::path::Path) -> ServerSpec {
    let settings = OAuthSettings::new()
        .client_id("wif-workload")
        .grant(Grant::jwt_bearer(AssertionSource::File(token_file.into())));
    ServerSpec::http("wif", resource.url())
        .oauth(settings)
        .authorizer(Authorizer::in_memory())
}

#[tokio::test]
async fn a_workload_gets_its_token_with_the_jwt_bearer_grant() {
    let (auth, resource) = workload_server().await;
    let dir = tempfile::tempdir().unwrap();
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, format!("{WORKLOAD_JWT}\n")).unwrap();
    let client = connect(&workload_spec(&resource, &token_file)).await;
    assert_eq!(client.list_tools().await.unwrap().len(), 1);

    let requests = auth.seen_at("/token");
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(
        request.form_param("grant_type").as_deref(),
        Some(JWT_BEARER)
    );
    assert_eq!(
        request.form_param("assertion").as_deref(),
        Some(WORKLOAD_JWT)
    );
    assert_eq!(
        request.form_param("client_id").as_deref(),
        Some("wif-workload")
    );
    assert_eq!(request.form_param("resource"), Some(resource.url()));
    assert!(auth.authorizations().is_empty(), "no browser flow");
    let issued = auth.issued();
    assert_eq!(issued.len(), 1);
    assert_eq!(issued[0].grant, oauth_mock::Grant::JwtBearer);
    assert!(
        resource
            .bearers()
            .contains(&Some(issued[0].access_token.clone())),
        "the token was used"
    );
}

#[tokio::test]
async fn a_refused_workload_assertion_is_not_retried_and_the_error_hides_it() {
    let (auth, resource) = workload_server().await;
    auth.fail_next_token_requests(10, 400);
    let dir = tempfile::tempdir().unwrap();
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, WORKLOAD_JWT).unwrap();
    let spec = workload_spec(&resource, &token_file);
    let Err(err) = within("connect", Client::connect(&spec, NoHandler)).await else {
        panic!("the refused grant must fail the connection");
    };
    assert_eq!(err.auth_error(), Some(AuthErrorKind::Token), "{err}");
    assert!(!err.to_string().contains(WORKLOAD_JWT), "{err}");
    assert_eq!(
        auth.seen_at("/token").len(),
        1,
        "one token request, no retry"
    );
    assert!(
        auth.authorizations().is_empty(),
        "no fallback to the code flow"
    );
}

/// The claims of a proof, unverified (the unit tests verify signatures).
fn claims(proof: &str) -> Value {
    let part = proof.split('.').nth(1).expect("a JWT");
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(part).unwrap()).unwrap()
}

async fn code_flow_token_request(dpop: DpopPolicy) -> (AuthServer, Option<String>) {
    let mut extra = serde_json::Map::new();
    extra.insert(
        "dpop_signing_alg_values_supported".into(),
        json!(["RS256", "ES256"]),
    );
    let auth = AuthServer::start(AsOptions {
        extra_metadata: extra,
        ..AsOptions::default()
    })
    .await;
    let resource = Resource::start(&auth, ResourceOptions::default()).await;
    let spec = ServerSpec::http("dpop", resource.url())
        .oauth(OAuthSettings::new().dpop(dpop))
        .authorizer(Authorizer::in_memory().interaction(Interaction::Headless));
    let client = connect(&spec).await;
    client.list_tools().await.unwrap();
    let requests = auth.seen_at("/token");
    assert_eq!(requests.len(), 1);
    let proof = requests[0].header("dpop").map(str::to_owned);
    (auth, proof)
}

#[tokio::test]
async fn the_code_flows_token_request_carries_a_dpop_proof_when_the_server_lists_es256() {
    let (auth, proof) = code_flow_token_request(DpopPolicy::Auto).await;
    let proof = proof.expect("a DPoP header on the token request");
    let claims = claims(&proof);
    assert_eq!(claims["htm"], "POST");
    assert_eq!(claims["htu"], auth.endpoint("/token").as_str());
    assert!(claims["jti"].is_string());
    assert!(claims.get("ath").is_none());

    let (_, proof) = code_flow_token_request(DpopPolicy::Off).await;
    assert_eq!(proof, None, "DPoP off: a bearer token request");
}
