//! The hand-written grants against an in-process token endpoint (hyper, 127.0.0.1, port 0)
//! that records every request and answers from a per-test script: the exact form fields and
//! headers of each grant and client authentication, DPoP proofs and the single nonce retry,
//! no retry after a refused grant, and no credential in any error message.

use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use bytes::Bytes;
use http::{HeaderMap, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use sidewire_jsonrpc::lock;
use sidewire_test_support::within;
use tokio::net::TcpListener;
use url::Url;

use super::*;
use crate::auth::AuthErrorKind;
use crate::auth::jwt::tests::{p256_pem, verify_assertion};
use crate::http::client::HttpClient;

const LIMIT: Duration = Duration::from_secs(20);

/// One request the endpoint saw.
#[derive(Debug, Clone)]
struct Seen {
    path: String,
    headers: HeaderMap,
    form: Vec<(String, String)>,
}

impl Seen {
    fn field(&self, name: &str) -> Option<&str> {
        self.form
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    fn names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.form.iter().map(|(k, _)| k.as_str()).collect();
        names.sort_unstable();
        names
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// An answer: status, extra headers, JSON body.
type Answer = (StatusCode, Vec<(&'static str, String)>, Value);
/// The script: the request and how many came before it.
type Script = Arc<dyn Fn(&Seen, usize) -> Answer + Send + Sync>;

struct Endpoint {
    base: Url,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Endpoint {
    async fn start(script: impl Fn(&Seen, usize) -> Answer + Send + Sync + 'static) -> Endpoint {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
        let script: Script = Arc::new(script);
        let log = Arc::clone(&seen);
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let log = Arc::clone(&log);
                let script = Arc::clone(&script);
                tokio::spawn(async move {
                    let service = service_fn(move |request: Request<Incoming>| {
                        let log = Arc::clone(&log);
                        let script = Arc::clone(&script);
                        async move {
                            let (parts, body) = request.into_parts();
                            let body = body.collect().await.unwrap().to_bytes();
                            let form = url::form_urlencoded::parse(&body).into_owned().collect();
                            let seen = Seen {
                                path: parts.uri.path().to_owned(),
                                headers: parts.headers,
                                form,
                            };
                            let before = {
                                let mut log = lock(&log);
                                log.push(seen.clone());
                                log.len() - 1
                            };
                            let (status, headers, body) = script(&seen, before);
                            let mut response = Response::builder()
                                .status(status)
                                .header("content-type", "application/json");
                            for (name, value) in headers {
                                response = response.header(name, value);
                            }
                            Ok::<_, Infallible>(
                                response
                                    .body(Full::new(Bytes::from(body.to_string())))
                                    .unwrap(),
                            )
                        }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Endpoint {
            base: Url::parse(&format!("http://{addr}")).unwrap(),
            seen,
        }
    }

    fn url(&self, path: &str) -> Url {
        self.base.join(path).unwrap()
    }

    fn seen(&self) -> Vec<Seen> {
        lock(&self.seen).clone()
    }
}

/// An [`AuthHttp`] whose connection futures run on the test runtime.
fn auth_http() -> AuthHttp {
    let (client, mut tasks) = HttpClient::new().unwrap();
    tokio::spawn(async move {
        while let Some(task) = tasks.recv().await {
            tokio::spawn(task);
        }
    });
    AuthHttp {
        client,
        timeout: Duration::from_secs(10),
    }
}

fn token(access: &str) -> Answer {
    (
        StatusCode::OK,
        vec![],
        json!({"access_token": access, "token_type": "Bearer", "expires_in": 3600}),
    )
}

fn refuse(description: &str) -> Answer {
    (
        StatusCode::BAD_REQUEST,
        vec![],
        json!({"error": "invalid_grant", "error_description": description}),
    )
}

const RESOURCE: &str = "http://localhost:9/mcp";

fn sorted(mut names: Vec<&str>) -> Vec<&str> {
    names.sort_unstable();
    names
}

/// Client authentication with a secret (`client_secret_basic` or `client_secret_post`).
fn with_secret(method: ClientAuthMethod, id: &str, secret: &str) -> ClientAuthHeaders {
    ClientAuthHeaders::new(method, id, Some(&Secret::new(secret)), None, None, "unused").unwrap()
}

/// `client_id` in the form, no secret.
fn public_client() -> ClientAuthHeaders {
    ClientAuthHeaders::new(ClientAuthMethod::None, "cid", None, None, None, "").unwrap()
}

/// A client credentials request to the endpoint's `/token`, within the test limit.
async fn cc(
    endpoint: &Endpoint,
    auth: &ClientAuthHeaders,
    scope: Option<&str>,
    dpop: Option<&DpopKey>,
) -> Result<TokenResponse, AuthFailure> {
    let url = endpoint.url("/token");
    within(
        LIMIT,
        "client credentials",
        client_credentials(&auth_http(), &url, auth, scope, RESOURCE, dpop),
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_secret_basic_urlencodes_then_base64s_and_sends_no_secret_in_the_form() {
    let endpoint = Endpoint::start(|_, _| token("cc-token-1")).await;
    let auth = with_secret(ClientAuthMethod::ClientSecretBasic, "a b:c", "s/é:x");
    let response = cc(&endpoint, &auth, Some("s1 s2"), None).await.unwrap();
    assert_eq!(response.access_token.expose(), "cc-token-1");
    let seen = endpoint.seen();
    assert_eq!(seen.len(), 1);
    let request = &seen[0];
    assert_eq!(request.path, "/token");
    assert_eq!(
        request.names(),
        sorted(vec!["grant_type", "resource", "scope"])
    );
    assert_eq!(request.field("grant_type"), Some("client_credentials"));
    assert_eq!(request.field("resource"), Some(RESOURCE));
    assert_eq!(request.field("scope"), Some("s1 s2"));
    let basic = request.header("authorization").unwrap();
    let decoded = STANDARD
        .decode(basic.strip_prefix("Basic ").unwrap())
        .unwrap();
    assert_eq!(
        String::from_utf8(decoded).unwrap(),
        "a+b%3Ac:s%2F%C3%A9%3Ax"
    );
    assert_eq!(
        request.header("content-type"),
        Some("application/x-www-form-urlencoded")
    );
    assert!(request.header("dpop").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_conformance_basic_credentials_are_plain_id_colon_secret() {
    let endpoint = Endpoint::start(|_, _| token("cc-token-2")).await;
    let auth = with_secret(
        ClientAuthMethod::ClientSecretBasic,
        "conformance-test-client",
        "conformance-test-secret",
    );
    cc(&endpoint, &auth, None, None).await.unwrap();
    let expected = format!(
        "Basic {}",
        STANDARD.encode("conformance-test-client:conformance-test-secret")
    );
    assert_eq!(
        endpoint.seen()[0].header("authorization"),
        Some(expected.as_str())
    );
    assert_eq!(
        endpoint.seen()[0].names(),
        sorted(vec!["grant_type", "resource"])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_secret_post_and_none_put_the_client_in_the_form() {
    let endpoint = Endpoint::start(|_, _| token("t")).await;
    let post = with_secret(ClientAuthMethod::ClientSecretPost, "cid", "the-secret");
    cc(&endpoint, &post, None, None).await.unwrap();
    cc(&endpoint, &public_client(), None, None).await.unwrap();
    let seen = endpoint.seen();
    assert_eq!(
        seen[0].names(),
        sorted(vec!["client_id", "client_secret", "grant_type", "resource"])
    );
    assert_eq!(seen[0].field("client_id"), Some("cid"));
    assert_eq!(seen[0].field("client_secret"), Some("the-secret"));
    assert!(seen[0].header("authorization").is_none());
    assert_eq!(
        seen[1].names(),
        sorted(vec!["client_id", "grant_type", "resource"])
    );
    assert!(seen[1].header("authorization").is_none());
}

#[test]
fn a_secret_method_without_a_secret_or_key_is_a_registration_failure() {
    for method in [
        ClientAuthMethod::ClientSecretBasic,
        ClientAuthMethod::ClientSecretPost,
        ClientAuthMethod::PrivateKeyJwt,
    ] {
        let err = ClientAuthHeaders::new(method, "cid", None, None, None, "aud").unwrap_err();
        assert_eq!(err.kind, AuthErrorKind::Registration, "{method:?}");
    }
    let auth = ClientAuthHeaders::new(
        ClientAuthMethod::ClientSecretPost,
        "cid",
        Some(&Secret::new("hidden-value")),
        None,
        None,
        "",
    )
    .unwrap();
    assert!(!format!("{auth:?}").contains("hidden-value"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn private_key_jwt_sends_a_signed_assertion_for_the_issuer() {
    let endpoint = Endpoint::start(|_, _| token("cc-token-3")).await;
    let (key, public) = p256_pem();
    let issuer = endpoint.base.as_str().trim_end_matches('/').to_owned();
    let auth = ClientAuthHeaders::new(
        ClientAuthMethod::PrivateKeyJwt,
        "conformance-test-client",
        None,
        Some(&key),
        Some("ES256"),
        &issuer,
    )
    .unwrap();
    cc(&endpoint, &auth, None, None).await.unwrap();
    let request = &endpoint.seen()[0];
    assert_eq!(
        request.names(),
        sorted(vec![
            "client_assertion",
            "client_assertion_type",
            "grant_type",
            "resource"
        ])
    );
    assert_eq!(
        request.field("client_assertion_type"),
        Some(CLIENT_ASSERTION_TYPE)
    );
    assert!(request.header("authorization").is_none());
    let claims = verify_assertion(
        request.field("client_assertion").unwrap(),
        &public,
        "conformance-test-client",
        &issuer,
    );
    assert_eq!(claims["sub"], "conformance-test-client");
    assert_eq!(claims["aud"], issuer.as_str());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_endpoint_on_plain_http_off_loopback_is_refused_before_sending() {
    // Nothing listens there: a request that was sent would fail as `Token`, not `Insecure`.
    let url = Url::parse("http://192.0.2.1:9/token").unwrap();
    let auth = with_secret(ClientAuthMethod::ClientSecretPost, "cid", "s3cret-value");
    let err = within(
        LIMIT,
        "client credentials",
        client_credentials(&auth_http(), &url, &auth, None, RESOURCE, None),
    )
    .await
    .unwrap_err();
    assert_eq!(err.kind, AuthErrorKind::Insecure, "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_jwt_bearer_grant_is_sent_once_and_its_error_hides_the_assertion() {
    let assertion = Secret::new("eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ3b3JrbG9hZCJ9.c2lnbmF0dXJl");
    let echoed = assertion.expose().to_owned();
    let endpoint =
        Endpoint::start(move |_, _| refuse(&format!("bad assertion {echoed}\u{1b}[31m"))).await;
    let err = within(
        LIMIT,
        "token",
        jwt_bearer(
            &auth_http(),
            &endpoint.url("/token"),
            &assertion,
            Some("conformance-wif-workload"),
            &ClientAuthHeaders::anonymous(),
            None,
            RESOURCE,
            None,
        ),
    )
    .await
    .unwrap_err();
    assert_eq!(err.kind, AuthErrorKind::Token);
    let shown = err.to_string();
    assert!(!shown.contains(assertion.expose()), "{shown}");
    assert!(shown.contains("invalid_grant"), "{shown}");
    assert!(!shown.contains('\u{1b}'), "escaped: {shown}");
    let seen = endpoint.seen();
    assert_eq!(seen.len(), 1, "never retried");
    let request = &seen[0];
    assert_eq!(
        request.names(),
        sorted(vec!["assertion", "client_id", "grant_type", "resource"])
    );
    assert_eq!(request.field("grant_type"), Some(JWT_BEARER));
    assert_eq!(request.field("assertion"), Some(assertion.expose()));
    assert_eq!(request.field("client_id"), Some("conformance-wif-workload"));
    assert!(request.header("authorization").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_enterprise_flow_exchanges_the_id_token_then_presents_the_id_jag_with_basic_auth() {
    let idp = Endpoint::start(|_, _| {
        (
            StatusCode::OK,
            vec![],
            json!({"access_token": "id.jag.jwt", "issued_token_type": ID_JAG, "token_type": "N_A"}),
        )
    })
    .await;
    let auth_server = Endpoint::start(|_, _| token("test-token-9")).await;
    let http = auth_http();
    let issuer = auth_server.base.as_str().trim_end_matches('/').to_owned();
    let id_token = Secret::new("idp.id.token");
    let jag = within(
        LIMIT,
        "exchange",
        token_exchange_id_jag(
            &http,
            &idp.url("/token"),
            &id_token,
            &issuer,
            RESOURCE,
            Some("mcp:read"),
            Some("conformance-test-idp-client"),
        ),
    )
    .await
    .unwrap();
    assert_eq!(jag.expose(), "id.jag.jwt");
    let exchange = &idp.seen()[0];
    assert_eq!(
        exchange.names(),
        sorted(vec![
            "audience",
            "client_id",
            "grant_type",
            "requested_token_type",
            "resource",
            "scope",
            "subject_token",
            "subject_token_type"
        ])
    );
    assert_eq!(exchange.field("grant_type"), Some(TOKEN_EXCHANGE));
    assert_eq!(exchange.field("requested_token_type"), Some(ID_JAG));
    assert_eq!(exchange.field("subject_token"), Some("idp.id.token"));
    assert_eq!(exchange.field("subject_token_type"), Some(ID_TOKEN));
    assert_eq!(exchange.field("audience"), Some(issuer.as_str()));
    assert_eq!(exchange.field("resource"), Some(RESOURCE));
    assert_eq!(
        exchange.field("client_id"),
        Some("conformance-test-idp-client")
    );

    let secret = Secret::new("conformance-test-xaa-secret");
    let auth = ClientAuthHeaders::new(
        ClientAuthMethod::ClientSecretBasic,
        "conformance-test-xaa-client",
        Some(&secret),
        None,
        None,
        &issuer,
    )
    .unwrap();
    let tokens = jwt_bearer(
        &http,
        &auth_server.url("/token"),
        &jag,
        None,
        &auth,
        None,
        RESOURCE,
        None,
    )
    .await
    .unwrap()
    .into_tokens(RESOURCE, None, 1000)
    .unwrap();
    assert_eq!(tokens.access_token.expose(), "test-token-9");
    let grant = &auth_server.seen()[0];
    assert_eq!(
        grant.names(),
        sorted(vec!["assertion", "grant_type", "resource"])
    );
    assert_eq!(grant.field("assertion"), Some("id.jag.jwt"));
    let expected = format!(
        "Basic {}",
        STANDARD.encode("conformance-test-xaa-client:conformance-test-xaa-secret")
    );
    assert_eq!(grant.header("authorization"), Some(expected.as_str()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_exchange_that_issues_something_else_is_refused() {
    let idp = Endpoint::start(|_, _| token("not-a-jag")).await;
    let err = token_exchange_id_jag(
        &auth_http(),
        &idp.url("/token"),
        &Secret::new("idp.id.token"),
        "http://as",
        RESOURCE,
        None,
        None,
    )
    .await
    .unwrap_err();
    assert_eq!(err.kind, AuthErrorKind::Token);
    assert!(!err.to_string().contains("not-a-jag"));
    assert!(!err.to_string().contains("idp.id.token"));
    assert_eq!(
        idp.seen()[0].names().len(),
        6,
        "no scope or client_id when absent"
    );
}

/// A token endpoint that wants `nonce` in every proof: `use_dpop_nonce` until it gets it.
fn nonce_endpoint(nonce: &'static str) -> impl Fn(&Seen, usize) -> Answer + Send + Sync {
    move |seen, _| {
        let proof = seen.header("dpop").unwrap_or("");
        let claims = proof
            .split('.')
            .nth(1)
            .and_then(|part| URL_SAFE_NO_PAD.decode(part).ok())
            .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok())
            .unwrap_or(Value::Null);
        if claims["nonce"] == nonce {
            (
                StatusCode::OK,
                vec![("dpop-nonce", "rotated".to_owned())],
                json!({"access_token": "dpop-token", "token_type": "DPoP", "expires_in": 60}),
            )
        } else {
            (
                StatusCode::BAD_REQUEST,
                vec![("dpop-nonce", nonce.to_owned())],
                json!({"error": "use_dpop_nonce", "error_description": "nonce required"}),
            )
        }
    }
}

fn proof_claims(proof: &str) -> Value {
    let part = proof.split('.').nth(1).unwrap();
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(part).unwrap()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_use_dpop_nonce_answer_is_retried_once_with_a_new_proof_carrying_the_nonce() {
    let endpoint = Endpoint::start(nonce_endpoint("as-nonce")).await;
    let key = DpopKey::generate().unwrap();
    let url = endpoint.url("/token");
    let tokens = cc(&endpoint, &public_client(), None, Some(&key))
        .await
        .unwrap()
        .into_tokens(RESOURCE, None, 100)
        .unwrap();
    assert!(tokens.is_dpop());
    assert_eq!(tokens.expires_at, Some(160));
    let seen = endpoint.seen();
    assert_eq!(seen.len(), 2, "one retry");
    let first = proof_claims(seen[0].header("dpop").unwrap());
    let second = proof_claims(seen[1].header("dpop").unwrap());
    assert!(first.get("nonce").is_none());
    assert_eq!(second["nonce"], "as-nonce");
    assert_ne!(first["jti"], second["jti"], "a new proof");
    assert_eq!(first["htm"], "POST");
    assert_eq!(first["htu"], url.as_str());
    assert!(first.get("ath").is_none(), "no token at the token endpoint");
    assert_eq!(seen[0].form, seen[1].form, "the same request");
    assert_eq!(
        key.nonce(&url).as_deref(),
        Some("rotated"),
        "the newest nonce is kept"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_use_dpop_nonce_is_the_answer() {
    let endpoint = Endpoint::start(|_, count| {
        (
            StatusCode::BAD_REQUEST,
            vec![("dpop-nonce", format!("nonce-{count}"))],
            json!({"error": "use_dpop_nonce"}),
        )
    })
    .await;
    let key = DpopKey::generate().unwrap();
    let err = within(
        LIMIT,
        "token",
        jwt_bearer(
            &auth_http(),
            &endpoint.url("/token"),
            &Secret::new("a.b.c"),
            None,
            &ClientAuthHeaders::anonymous(),
            None,
            RESOURCE,
            Some(&key),
        ),
    )
    .await
    .unwrap_err();
    assert_eq!(err.kind, AuthErrorKind::Token);
    assert!(err.message.contains("use_dpop_nonce"), "{err}");
    assert_eq!(endpoint.seen().len(), 2, "the nonce retry happens once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_error_without_a_nonce_is_not_retried_even_with_dpop() {
    let endpoint = Endpoint::start(|_, _| refuse("no")).await;
    let key = DpopKey::generate().unwrap();
    let err = cc(&endpoint, &ClientAuthHeaders::anonymous(), None, Some(&key))
        .await
        .unwrap_err();
    assert_eq!(err.kind, AuthErrorKind::Token);
    assert_eq!(endpoint.seen().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_secret_or_token_reaches_an_error_message() {
    // The server echoes the secret back in its description.
    let endpoint = Endpoint::start(|seen, _| {
        let echoed = seen.field("client_secret").unwrap_or("").to_owned();
        refuse(&format!("secret {echoed} rejected"))
    })
    .await;
    let auth = with_secret(
        ClientAuthMethod::ClientSecretPost,
        "cid",
        "post-secret-value",
    );
    let err = cc(&endpoint, &auth, None, None).await.unwrap_err();
    assert!(!err.to_string().contains("post-secret-value"), "{err}");

    // A 2xx answer that is not a token response (a token in a field of the wrong type).
    let broken = Endpoint::start(|_, _| {
        (
            StatusCode::OK,
            vec![],
            json!({"access_token": "tok-visible", "token_type": "Bearer", "scope": ["leaky-token-text"]}),
        )
    })
    .await;
    let err = cc(&broken, &auth, None, None).await.unwrap_err();
    let shown = err.to_string();
    assert!(
        !shown.contains("tok-visible") && !shown.contains("leaky-token-text"),
        "{shown}"
    );

    // A non-JSON error: only the status is told.
    let html = Endpoint::start(|_, _| {
        (
            StatusCode::UNAUTHORIZED,
            vec![],
            json!("<html>post-secret-value</html>"),
        )
    })
    .await;
    let err = cc(&html, &auth, None, None).await.unwrap_err();
    assert!(err.message.contains("401"), "{err}");
    assert!(!err.to_string().contains("post-secret-value"), "{err}");
}

fn decode(body: Value) -> Result<TokenResponse, String> {
    TokenResponse::decode(body.to_string().as_bytes())
}

#[test]
fn token_responses_become_tokens() {
    let response = decode(json!({
        "access_token": "a", "token_type": "dpop", "expires_in": "30",
        "refresh_token": "r", "scope": "x y"
    }))
    .unwrap();
    assert!(!format!("{response:?}").contains("\"a\""));
    let tokens = response.into_tokens(RESOURCE, Some("ignored"), 10).unwrap();
    assert_eq!(tokens.expires_at, Some(40));
    assert_eq!(tokens.token_type, "DPoP");
    assert_eq!(tokens.scope.as_deref(), Some("x y"));
    assert_eq!(tokens.refresh_token.as_ref().map(Secret::expose), Some("r"));
    assert_eq!(tokens.resource, RESOURCE);

    let bare = decode(json!({"access_token": "a"})).unwrap();
    let tokens = bare.into_tokens(RESOURCE, Some("asked"), 10).unwrap();
    assert_eq!(tokens.token_type, "Bearer");
    assert_eq!(tokens.expires_at, None);
    assert_eq!(tokens.scope.as_deref(), Some("asked"));

    let other = decode(json!({"access_token": "a", "token_type": "mac"})).unwrap();
    let err = other.into_tokens(RESOURCE, None, 10).unwrap_err();
    assert_eq!(err.kind, AuthErrorKind::Token);
}

#[test]
fn expires_in_is_read_leniently_and_clamped() {
    let expires_in = |value: Value| {
        decode(json!({"access_token": "a", "expires_in": value})).map(|r| r.expires_in)
    };
    // The ways servers write a number of seconds.
    assert_eq!(expires_in(json!(3600)), Ok(Some(3600)));
    assert_eq!(expires_in(json!(3600.0)), Ok(Some(3600)));
    assert_eq!(expires_in(json!("3600")), Ok(Some(3600)));
    assert_eq!(expires_in(json!(0)), Ok(Some(0)));
    assert_eq!(expires_in(Value::Null), Ok(None));
    // Absurd values are clamped: negative is expired on arrival, huge is a year.
    let year = MAX_TOKEN_LIFETIME.as_secs();
    assert_eq!(expires_in(json!(-5)), Ok(Some(0)));
    assert_eq!(expires_in(json!(-5.0)), Ok(Some(0)));
    assert_eq!(expires_in(json!(i64::MIN)), Ok(Some(0)));
    assert_eq!(expires_in(json!(year + 1)), Ok(Some(year)));
    assert_eq!(expires_in(json!(u64::MAX)), Ok(Some(year)));
    assert_eq!(expires_in(json!(1e300)), Ok(Some(year)));
    assert_eq!(expires_in(json!("9".repeat(400))), Ok(Some(year)));
    // A fraction or any other text is refused, naming the member and not the value.
    for refused in [
        json!(59.9),
        json!("59.9"),
        json!("3600.0"),
        json!("soon-7f3e"),
        json!("-5"),
        json!(""),
        json!(" 3600"),
        json!(true),
        json!([3600]),
        json!({"secs": 3600}),
    ] {
        let why = expires_in(refused.clone()).unwrap_err();
        assert!(why.contains("`expires_in`"), "{refused}: {why}");
        assert!(!why.contains("59.9") && !why.contains("7f3e"), "{why}");
    }
    // The cap holds however the tokens are made.
    let far = decode(json!({"access_token": "a", "expires_in": u64::MAX})).unwrap();
    let tokens = far.into_tokens(RESOURCE, None, 10).unwrap();
    assert_eq!(tokens.expires_at, Some(10 + year));
}

#[test]
fn token_answer_members_are_capped() {
    let with = |member: &str, len: usize| {
        let mut answer = json!({"access_token": "a", "refresh_token": "r", "scope": "s"});
        answer[member] = json!("x".repeat(len));
        decode(answer)
    };
    use crate::auth::{MAX_ANSWER_TEXT_BYTES, MAX_CREDENTIAL_BYTES};
    for (member, cap) in [
        ("access_token", MAX_CREDENTIAL_BYTES),
        ("refresh_token", MAX_CREDENTIAL_BYTES),
        ("scope", MAX_ANSWER_TEXT_BYTES),
        ("token_type", MAX_ANSWER_TEXT_BYTES),
        ("issued_token_type", MAX_ANSWER_TEXT_BYTES),
    ] {
        assert!(with(member, cap).is_ok(), "{member}");
        let why = with(member, cap + 1).unwrap_err();
        assert!(why.contains(&format!("`{member}`")), "{why}");
        assert!(!why.contains("xxxx"), "{why}");
    }
}

#[test]
fn a_broken_token_answer_names_the_member_never_a_value() {
    const ACCESS: &str = "at-secret-4d1c";
    const REFRESH: &str = "rt-secret-9e2b";
    let cases = [
        // Not JSON at all, a token in it.
        format!(r#"{{"access_token": "{ACCESS}", "refresh_token": "{REFRESH}", }}"#),
        format!(r#"{{"access_token": "{ACCESS}", "refresh_token": "{REFRESH}""#),
        // JSON, but a member of the wrong type holding a token.
        format!(r#"{{"access_token": ["{ACCESS}"], "refresh_token": "{REFRESH}"}}"#),
        format!(r#"{{"access_token": "{ACCESS}", "refresh_token": {{"v": "{REFRESH}"}}}}"#),
        format!(r#"{{"access_token": "{ACCESS}", "scope": 7, "refresh_token": "{REFRESH}"}}"#),
        format!(r#"{{"access_token": "{ACCESS}", "expires_in": "{REFRESH}"}}"#),
        // Not an object: a bare token.
        format!(r#""{ACCESS}""#),
        // No access token.
        format!(r#"{{"refresh_token": "{REFRESH}"}}"#),
    ];
    let members = ["access_token", "refresh_token", "scope", "expires_in"];
    for body in cases {
        let why = TokenResponse::decode(body.as_bytes()).unwrap_err();
        assert!(
            !why.contains(ACCESS) && !why.contains(REFRESH),
            "{body}: {why}"
        );
        if body.starts_with('{') && serde_json::from_str::<Value>(&body).is_ok() {
            assert!(
                members.iter().any(|m| why.contains(&format!("`{m}`"))),
                "{body}: {why}"
            );
        }
    }
}

#[test]
fn token_errors_are_escaped_and_cut_short() {
    let fetched = |status: u16, body: Value| Fetched {
        status: StatusCode::from_u16(status).unwrap(),
        headers: HeaderMap::new(),
        body: Bytes::from(body.to_string()),
    };
    let long = "d".repeat(5000);
    let err = token_error(&fetched(
        400,
        json!({"error": "invalid_client\n", "error_description": long}),
    ));
    assert_eq!(err.kind, AuthErrorKind::Token);
    assert!(err.message.contains("invalid_client\\n"), "{err}");
    assert!(
        err.message.len() < MAX_ERROR_DESCRIPTION + 200,
        "{}",
        err.message.len()
    );
    let err = token_error(&fetched(503, json!({"unexpected": true})));
    assert!(err.message.contains("503"));
}
