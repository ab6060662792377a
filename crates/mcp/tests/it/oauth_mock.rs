//! An in-process OAuth 2.1 authorization server ([`AuthServer`]) and a protected MCP server
//! ([`Resource`]) on two loopback ports, so two origins, plus [`OtherOrigin`], a third server
//! that only records what reaches it (a token must never). All three are [`Mock`]s whose
//! script answers first; the resource lets an authorized request through to the mock's
//! default MCP behaviour (sessions, `tools/list` with `echo`, `tools/call`). Nothing here
//! sleeps or reads a clock: a token is invalid only once a test revokes it, and `expires_in`
//! is only what the token response says (what drives a client's proactive refresh).
//!
//! ```text
//! let auth = AuthServer::start(AsOptions::default()).await;          // DCR on, S256, `none`
//! let resource = Resource::start(&auth, ResourceOptions::default()).await;
//! // Point the client at `resource.url()`: its first POST gets 401 with
//! // `WWW-Authenticate: Bearer resource_metadata="<resource.prm_url()>"`, the PRM names
//! // `auth.issuer()`, whose metadata is at `auth.metadata_url()`.
//! assert_eq!(auth.registration_count(), 1);
//! let issued = auth.issued();
//! assert_eq!(issued[0].resource.as_deref(), Some(resource.url().as_str()));
//! resource.revoke_all(); // the next request gets 401 invalid_token: the client refreshes once
//! assert_eq!(auth.issued().last().unwrap().grant, Grant::RefreshToken);
//! ```
//!
//! Recipes (conformance scenario → options):
//! - metadata variants: [`AsOptions::metadata_at`] + [`AsOptions::route_prefix`] (`"/tenant1"`)
//!   and [`ResourceOptions::prm_at`] / [`ResourceOptions::challenge`] ([`Challenge::Bare`]: the
//!   client must probe the well-known PRM paths);
//! - 2025-03-26 back-compat: [`ResourceOptions::co_host_auth`] with [`PrmAt::Nowhere`], and
//!   [`MetadataAt::Nowhere`] for the default-endpoint fallback (`/authorize`, `/token`,
//!   `/register` on the MCP server's origin);
//! - client identity: [`AsOptions::clients`] (pre-registration),
//!   [`AsOptions::client_id_metadata_document_supported`] (CIMD), DCR by default;
//!   [`AsOptions::token_endpoint_auth_methods_supported`] for basic / post / none;
//! - scopes: [`ResourceOptions::challenge_scope`], `scopes_supported` on either side,
//!   [`ResourceOptions::required_scopes`] (step-up), [`ResourceOptions::always_insufficient`]
//!   (retry limit);
//! - refresh: [`AsOptions::expires_in`] (proactive), [`Resource::revoke_all`] (refresh once
//!   on 401), [`Refresh::Reject`] (re-authorize), [`AuthServer::fail_next_token_requests`];
//! - broken token answers: [`AuthServer::answer_next_token_requests`] (any status and body),
//!   [`AsOptions::extra_token_members`] (e.g. `expires_in` as a string), and
//!   [`AsOptions::extra_registration_members`] for registration answers;
//! - checks the client must make: [`AsOptions::issuer`] (issuer mismatch),
//!   [`AsOptions::code_challenge_methods_supported`] (no S256), [`IssParam`] (RFC 9207),
//!   [`ResourceOptions::resource`] (resource mismatch), [`ResourceOptions::redirect_to`],
//!   [`ResourceOptions::metadata_url`] and [`AsOptions::extra_metadata`] pointing at an
//!   [`OtherOrigin`] (a token never leaves the resource's origin).
//!
//! The fixture keeps every request, code, token and registration it saw (tests are short):
//! it is not bounded, unlike the code under test.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use http::{Method, Response};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::http_mock::{Body, Mock, Seen, json_response, status};
use crate::support::lock;

/// The resource's MCP endpoint path: [`Resource::url`] is `http://127.0.0.1:PORT/mcp`.
pub(crate) const MCP_PATH: &str = "/mcp";

// ---------------------------------------------------------------------------------------------
// Request helpers
// ---------------------------------------------------------------------------------------------

impl Seen {
    /// The path without its query.
    pub(crate) fn path_only(&self) -> &str {
        self.path
            .split_once('?')
            .map_or(&self.path, |(path, _)| path)
    }

    /// The decoded query pairs, in order.
    pub(crate) fn query(&self) -> Vec<(String, String)> {
        self.path
            .split_once('?')
            .map(|(_, query)| pairs(query.as_bytes()))
            .unwrap_or_default()
    }

    /// The first query parameter `name`, decoded.
    pub(crate) fn query_param(&self, name: &str) -> Option<String> {
        first(&self.query(), name)
    }

    /// The decoded `application/x-www-form-urlencoded` body pairs, in order.
    pub(crate) fn form(&self) -> Vec<(String, String)> {
        pairs(&self.raw)
    }

    /// The first form field `name`, decoded.
    pub(crate) fn form_param(&self, name: &str) -> Option<String> {
        first(&self.form(), name)
    }

    /// The token of an `Authorization: Bearer` header.
    pub(crate) fn bearer(&self) -> Option<&str> {
        let value = self.header("authorization")?;
        let (scheme, token) = value.split_once(' ')?;
        scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
    }
}

fn pairs(raw: &[u8]) -> Vec<(String, String)> {
    url::form_urlencoded::parse(raw).into_owned().collect()
}

fn first(pairs: &[(String, String)], name: &str) -> Option<String> {
    pairs
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.clone())
}

/// `application/x-www-form-urlencoded` decoding of one component (RFC 6749 §2.3.1 encodes
/// the id and the secret of `Authorization: Basic` this way): `+` is a space, `%XX` a byte.
fn form_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 2;
            }
            byte => out.push(byte),
        }
        i += 1;
    }
    String::from_utf8(out).ok()
}

/// `application/x-www-form-urlencoded` encoding of one component, for tests that build an
/// `Authorization: Basic` header by hand.
pub(crate) fn form_encode(text: &str) -> String {
    url::form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

/// The PKCE S256 challenge of a verifier: base64url (no padding) of its SHA-256.
pub(crate) fn s256(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// An RFC 6749 §5.2 error answer: `{"error": code, "error_description": ...}`.
fn oauth_error(status_code: u16, code: &str, description: &str) -> Response<Body> {
    let mut response = json_response(&json!({ "error": code, "error_description": description }));
    *response.status_mut() = http::StatusCode::from_u16(status_code).unwrap();
    response
        .headers_mut()
        .insert("cache-control", "no-store".parse().unwrap());
    response
}

fn with_status(mut response: Response<Body>, code: u16) -> Response<Body> {
    *response.status_mut() = http::StatusCode::from_u16(code).unwrap();
    response
}

fn redirect(location: &str, code: u16) -> Response<Body> {
    let mut response = status(code, "");
    response
        .headers_mut()
        .insert("location", location.parse().unwrap());
    response
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

// ---------------------------------------------------------------------------------------------
// The authorization server
// ---------------------------------------------------------------------------------------------

/// Where the authorization server serves its metadata document (every other well-known path
/// answers 404). The route prefix of [`AsOptions::route_prefix`] is the issuer's path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum MetadataAt {
    /// RFC 8414 with path insertion: `/.well-known/oauth-authorization-server` + prefix
    /// (`/.well-known/oauth-authorization-server/tenant1`; the root path with no prefix).
    OAuth,
    /// OpenID discovery with path insertion: `/.well-known/openid-configuration` + prefix.
    OpenIdInserted,
    /// OpenID Connect Discovery 1.0 as written: prefix + `/.well-known/openid-configuration`
    /// (`/tenant1/.well-known/openid-configuration`).
    OpenIdAppended,
    /// Exactly this path.
    Path(String),
    /// Nowhere: the 2025-03-26 fallback to the default endpoints `/authorize`, `/token`,
    /// `/register` (use an empty route prefix, the default).
    Nowhere,
}

impl MetadataAt {
    /// The path this serves at under `prefix`, `None` for [`MetadataAt::Nowhere`].
    pub(crate) fn path(&self, prefix: &str) -> Option<String> {
        match self {
            MetadataAt::OAuth => Some(format!("/.well-known/oauth-authorization-server{prefix}")),
            MetadataAt::OpenIdInserted => {
                Some(format!("/.well-known/openid-configuration{prefix}"))
            }
            MetadataAt::OpenIdAppended => {
                Some(format!("{prefix}/.well-known/openid-configuration"))
            }
            MetadataAt::Path(path) => Some(path.clone()),
            MetadataAt::Nowhere => None,
        }
    }
}

/// What `GET /authorize` does with a valid request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Consent {
    /// 302 to `redirect_uri?code=…&state=…(&iss=…)`.
    Grant,
    /// 302 to `redirect_uri?error=access_denied&state=…(&iss=…)`.
    Deny,
}

/// The RFC 9207 `iss` parameter the authorization response carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum IssParam {
    /// The issuer when the metadata advertises
    /// `authorization_response_iss_parameter_supported`, else none.
    Auto,
    /// Always the issuer.
    Correct,
    /// Always this value.
    Wrong(String),
    /// Never.
    Omitted,
}

/// What a `refresh_token` grant does. The access token it replaces stays valid until
/// revoked; the new one keeps the old grant's scope and resource unless the request names
/// others.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refresh {
    /// Issues a new access and refresh token; the used refresh token is invalid from then on.
    Rotate,
    /// Issues a new access and refresh token; the used refresh token stays valid.
    RotateKeepOld,
    /// Answers 400 `invalid_grant` (the client must authorize again).
    Reject,
}

/// A client the authorization server knows without a registration (the "pre-registered
/// credentials from config" case; read once, at [`AuthServer::start`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PreRegistered {
    pub(crate) client_id: String,
    /// `None`: a public client, which must authenticate with `none`.
    pub(crate) client_secret: Option<String>,
    /// The one token endpoint auth method it must use; `None`: any advertised method that
    /// fits its secret.
    pub(crate) auth_method: Option<String>,
    /// The redirect URIs `/authorize` accepts; empty: any.
    pub(crate) redirect_uris: Vec<String>,
}

/// How the authorization server behaves. Every field has a default (see each); change a
/// running server's options with [`AuthServer::update`].
#[derive(Debug, Clone)]
pub(crate) struct AsOptions {
    /// Default [`MetadataAt::OAuth`].
    pub(crate) metadata_at: MetadataAt,
    /// The issuer's path: endpoints are `{prefix}/authorize`, `{prefix}/token`,
    /// `{prefix}/register`. Default `""`; e.g. `"/tenant1"`.
    pub(crate) route_prefix: String,
    /// The metadata's `issuer` and the `iss` of [`IssParam::Correct`]. Default `None`: the
    /// server's own base URL + prefix (`http://127.0.0.1:PORT/tenant1`); set it to another
    /// value to test the client's issuer check.
    pub(crate) issuer: Option<String>,
    /// Default `None` (omitted from the metadata).
    pub(crate) scopes_supported: Option<Vec<String>>,
    /// Default `Some(["S256"])`; `None` omits it. `/authorize` accepts `S256` always and
    /// `plain` only when it is listed here.
    pub(crate) code_challenge_methods_supported: Option<Vec<String>>,
    /// What the token endpoint accepts and the metadata lists. Default `["none"]`; also
    /// `client_secret_basic`, `client_secret_post`.
    pub(crate) token_endpoint_auth_methods_supported: Vec<String>,
    /// Advertises `client_id_metadata_document_supported: true` and accepts an `http(s)`
    /// URL as an unregistered public client id (the document is not fetched). Default false.
    pub(crate) client_id_metadata_document_supported: bool,
    /// Serves `POST {prefix}/register` and lists it. Default true.
    pub(crate) registration: bool,
    /// Advertises `authorization_response_iss_parameter_supported: true`. Default false.
    pub(crate) iss_parameter_supported: bool,
    /// Default [`IssParam::Auto`].
    pub(crate) iss_param: IssParam,
    /// Listed in the metadata and enforced by the token endpoint. Default
    /// `["authorization_code", "refresh_token", "client_credentials"]`.
    pub(crate) grant_types_supported: Vec<String>,
    /// Default [`Consent::Grant`].
    pub(crate) consent: Consent,
    /// The `expires_in` of each token issued from now on. Default `Some(3600)`; `None` omits
    /// it. Nothing expires by itself: see [`AuthServer::revoke_all`].
    pub(crate) expires_in: Option<u64>,
    /// Issue a refresh token with each code grant and refresh. Default true.
    pub(crate) refresh_tokens: bool,
    /// Default [`Refresh::Rotate`].
    pub(crate) refresh: Refresh,
    /// Default none.
    pub(crate) clients: Vec<PreRegistered>,
    /// Merged into the metadata document last, overriding what is there (e.g. a
    /// `token_endpoint` on another origin). Default empty.
    pub(crate) extra_metadata: Map<String, Value>,
    /// Merged into each successful token answer last, overriding what is there (e.g.
    /// `"expires_in": "3600"`). Default empty.
    pub(crate) extra_token_members: Map<String, Value>,
    /// Merged into each registration answer last, overriding what is there (the client is
    /// registered as the server made it). Default empty.
    pub(crate) extra_registration_members: Map<String, Value>,
}

impl Default for AsOptions {
    fn default() -> AsOptions {
        AsOptions {
            metadata_at: MetadataAt::OAuth,
            route_prefix: String::new(),
            issuer: None,
            scopes_supported: None,
            code_challenge_methods_supported: Some(strings(&["S256"])),
            token_endpoint_auth_methods_supported: strings(&["none"]),
            client_id_metadata_document_supported: false,
            registration: true,
            iss_parameter_supported: false,
            iss_param: IssParam::Auto,
            grant_types_supported: strings(&[
                "authorization_code",
                "refresh_token",
                "client_credentials",
            ]),
            consent: Consent::Grant,
            expires_in: Some(3600),
            refresh_tokens: true,
            refresh: Refresh::Rotate,
            clients: Vec::new(),
            extra_metadata: Map::new(),
            extra_token_members: Map::new(),
            extra_registration_members: Map::new(),
        }
    }
}

/// A valid `/authorize` request the server accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Authorization {
    pub(crate) client_id: String,
    pub(crate) redirect_uri: String,
    pub(crate) state: Option<String>,
    pub(crate) scope: Option<String>,
    /// The RFC 8707 `resource` parameter.
    pub(crate) resource: Option<String>,
    pub(crate) code_challenge: String,
    pub(crate) code_challenge_method: String,
}

/// How a token was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Grant {
    AuthorizationCode,
    RefreshToken,
    ClientCredentials,
    /// RFC 7523 §2.1 with an `assertion` (not verified: any non-empty one is accepted).
    JwtBearer,
}

/// A token the server issued, in issue order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Issued {
    /// Opaque and unique: `mock-at-PORT-N`.
    pub(crate) access_token: String,
    /// `mock-rt-PORT-N`, when [`AsOptions::refresh_tokens`] (never for client credentials).
    pub(crate) refresh_token: Option<String>,
    pub(crate) client_id: String,
    pub(crate) grant: Grant,
    /// The granted scope (the requested one, echoed in the token response).
    pub(crate) scope: Option<String>,
    /// The resource it is for: the token request's `resource`, else the authorization's.
    pub(crate) resource: Option<String>,
    pub(crate) expires_in: Option<u64>,
    /// Set by [`AuthServer::revoke_all`] / [`AuthServer::revoke`]: the resource refuses it.
    pub(crate) revoked: bool,
}

impl Issued {
    /// Whether the granted scope contains `scope`.
    pub(crate) fn has_scope(&self, scope: &str) -> bool {
        self.scope
            .as_deref()
            .is_some_and(|s| s.split_whitespace().any(|s| s == scope))
    }
}

#[derive(Debug, Clone)]
struct ClientRecord {
    secret: Option<String>,
    auth_method: Option<String>,
    redirect_uris: Vec<String>,
}

#[derive(Debug)]
struct Code {
    authorization: Authorization,
    used: bool,
}

#[derive(Debug)]
struct RefreshRecord {
    client_id: String,
    scope: Option<String>,
    resource: Option<String>,
    valid: bool,
}

#[derive(Debug)]
struct AsState {
    options: AsOptions,
    /// The listening port, in every issued value so values of two servers never collide.
    tag: u16,
    counter: u64,
    clients: HashMap<String, ClientRecord>,
    codes: HashMap<String, Code>,
    refresh: HashMap<String, RefreshRecord>,
    issued: Vec<Issued>,
    registrations: Vec<Value>,
    authorizations: Vec<Authorization>,
    /// Token requests still to fail, with which status, and whether the error reflects the
    /// request.
    fail_token: (usize, u16, bool),
    /// Token requests still to answer with this status and raw body (`application/json`),
    /// before anything else is checked.
    raw_token: (usize, u16, String),
}

/// The authorization server's routes and state, shared by its own listener and by a
/// resource that co-hosts it ([`ResourceOptions::co_host_auth`]). It holds no `Mock`, so the
/// scripts do not keep themselves alive.
#[derive(Debug, Clone)]
struct AsCore(Arc<Mutex<AsState>>);

/// A running authorization server on its own port. Cheap to clone; clones share state.
#[derive(Clone)]
pub(crate) struct AuthServer {
    /// The listener: every request is in `mock.seen()`.
    pub(crate) mock: Mock,
    core: AsCore,
}

impl AuthServer {
    /// Starts one on 127.0.0.1 with a free port; it runs until the test's runtime ends.
    pub(crate) async fn start(options: AsOptions) -> AuthServer {
        let mock = Mock::start().await;
        let clients = options
            .clients
            .iter()
            .map(|c| {
                let record = ClientRecord {
                    secret: c.client_secret.clone(),
                    auth_method: c.auth_method.clone(),
                    redirect_uris: c.redirect_uris.clone(),
                };
                (c.client_id.clone(), record)
            })
            .collect();
        let core = AsCore(Arc::new(Mutex::new(AsState {
            options,
            tag: mock.addr.port(),
            counter: 0,
            clients,
            codes: HashMap::new(),
            refresh: HashMap::new(),
            issued: Vec::new(),
            registrations: Vec::new(),
            authorizations: Vec::new(),
            fail_token: (0, 500, false),
            raw_token: (0, 200, String::new()),
        })));
        let routes = core.clone();
        mock.script(move |seen, mock| {
            Some(
                routes
                    .route(seen, &mock.url(""))
                    .unwrap_or_else(|| status(404, "")),
            )
        });
        AuthServer { mock, core }
    }

    /// `http://127.0.0.1:PORT` + `path`.
    pub(crate) fn url(&self, path: &str) -> String {
        self.mock.url(path)
    }

    /// The issuer its metadata names (see [`AsOptions::issuer`]).
    pub(crate) fn issuer(&self) -> String {
        lock(&self.core.0).issuer(&self.mock.url(""))
    }

    /// Where the metadata is served, `None` for [`MetadataAt::Nowhere`].
    pub(crate) fn metadata_url(&self) -> Option<String> {
        let state = lock(&self.core.0);
        let path = state
            .options
            .metadata_at
            .path(&state.options.route_prefix)?;
        Some(self.url(&path))
    }

    /// `{base}{prefix}/authorize`, `…/token`, `…/register`: `endpoint("/token")`.
    pub(crate) fn endpoint(&self, name: &str) -> String {
        let prefix = lock(&self.core.0).options.route_prefix.clone();
        self.url(&format!("{prefix}{name}"))
    }

    /// Changes the options of the running server (clients excepted); takes effect on the
    /// next request.
    pub(crate) fn update(&self, change: impl FnOnce(&mut AsOptions)) {
        change(&mut lock(&self.core.0).options);
    }

    /// Every request it got, in order (its own listener only, not a co-hosting resource's).
    pub(crate) fn seen(&self) -> Vec<Seen> {
        self.mock.seen()
    }

    /// The requests whose path (without query) ends with `suffix`, e.g. `"/token"`.
    pub(crate) fn seen_at(&self, suffix: &str) -> Vec<Seen> {
        self.seen()
            .into_iter()
            .filter(|s| s.path_only().ends_with(suffix))
            .collect()
    }

    /// Every token issued, in order, with its revocation state.
    pub(crate) fn issued(&self) -> Vec<Issued> {
        lock(&self.core.0).issued.clone()
    }

    /// The issued token `access_token` if it is not revoked.
    pub(crate) fn valid_token(&self, access_token: &str) -> Option<Issued> {
        self.core.valid_token(access_token)
    }

    /// Every `/authorize` request it accepted, in order.
    pub(crate) fn authorizations(&self) -> Vec<Authorization> {
        lock(&self.core.0).authorizations.clone()
    }

    /// The DCR request bodies, in order.
    pub(crate) fn registrations(&self) -> Vec<Value> {
        lock(&self.core.0).registrations.clone()
    }

    /// How many clients registered (a client that reuses its registration adds none).
    pub(crate) fn registration_count(&self) -> usize {
        lock(&self.core.0).registrations.len()
    }

    /// Revokes every token issued so far ("every token expired now"): the resource answers
    /// 401 `invalid_token` to them. Refresh tokens stay valid.
    pub(crate) fn revoke_all(&self) {
        for issued in &mut lock(&self.core.0).issued {
            issued.revoked = true;
        }
    }

    /// Revokes one access token.
    pub(crate) fn revoke(&self, access_token: &str) {
        for issued in &mut lock(&self.core.0).issued {
            if issued.access_token == access_token {
                issued.revoked = true;
            }
        }
    }

    /// The next `n` token requests (any grant) answer `status` with
    /// `{"error":"server_error"}` before anything else is checked.
    pub(crate) fn fail_next_token_requests(&self, n: usize, status: u16) {
        lock(&self.core.0).fail_token = (n, status, false);
    }

    /// Like [`AuthServer::fail_next_token_requests`], but the `error_description` reflects
    /// the request: its form body and its `Authorization` header (a careless server; the
    /// client must redact what it shows of the answer).
    pub(crate) fn fail_next_token_requests_echoing(&self, n: usize, status: u16) {
        lock(&self.core.0).fail_token = (n, status, true);
    }

    /// The next `n` token requests (any grant) are answered `status` with exactly `body`
    /// (declared `application/json`, whatever it is) before anything else is checked: a
    /// broken server.
    pub(crate) fn answer_next_token_requests(&self, n: usize, status: u16, body: &str) {
        lock(&self.core.0).raw_token = (n, status, body.to_owned());
    }
}

impl AsState {
    fn issuer(&self, base: &str) -> String {
        self.options
            .issuer
            .clone()
            .unwrap_or_else(|| format!("{base}{}", self.options.route_prefix))
    }

    fn next(&mut self) -> u64 {
        self.counter += 1;
        self.counter
    }

    /// The client record of `client_id`, accepting a CIMD URL when supported.
    fn client(&mut self, client_id: &str) -> Option<ClientRecord> {
        if let Some(record) = self.clients.get(client_id) {
            return Some(record.clone());
        }
        let is_url = client_id.starts_with("https://") || client_id.starts_with("http://");
        (self.options.client_id_metadata_document_supported && is_url).then(|| ClientRecord {
            secret: None,
            auth_method: Some("none".to_owned()),
            redirect_uris: Vec::new(),
        })
    }
}

impl AsCore {
    fn valid_token(&self, access_token: &str) -> Option<Issued> {
        lock(&self.0)
            .issued
            .iter()
            .find(|i| i.access_token == access_token && !i.revoked)
            .cloned()
    }

    /// Answers a request to one of its routes, `None` for any other path.
    fn route(&self, seen: &Seen, base: &str) -> Option<Response<Body>> {
        let mut state = lock(&self.0);
        let path = seen.path_only();
        let prefix = state.options.route_prefix.clone();
        if state.options.metadata_at.path(&prefix).as_deref() == Some(path) {
            return Some(match seen.method {
                Method::GET => json_response(&metadata(&state, base)),
                _ => status(405, ""),
            });
        }
        let endpoint = path.strip_prefix(prefix.as_str())?;
        let expected = match endpoint {
            "/authorize" => Method::GET,
            "/token" => Method::POST,
            "/register" if state.options.registration => Method::POST,
            _ => return None,
        };
        if seen.method != expected {
            return Some(status(405, ""));
        }
        Some(match endpoint {
            "/authorize" => authorize(&mut state, seen, base),
            "/token" => token(&mut state, seen),
            _ => register(&mut state, seen),
        })
    }
}

fn metadata(state: &AsState, base: &str) -> Value {
    let options = &state.options;
    let at = |name: &str| format!("{base}{}{name}", options.route_prefix);
    let mut doc = json!({
        "issuer": state.issuer(base),
        "authorization_endpoint": at("/authorize"),
        "token_endpoint": at("/token"),
        "response_types_supported": ["code"],
        "grant_types_supported": options.grant_types_supported,
        "token_endpoint_auth_methods_supported": options.token_endpoint_auth_methods_supported,
    });
    let map = doc.as_object_mut().unwrap();
    if options.registration {
        map.insert("registration_endpoint".into(), at("/register").into());
    }
    if let Some(methods) = &options.code_challenge_methods_supported {
        map.insert("code_challenge_methods_supported".into(), json!(methods));
    }
    if let Some(scopes) = &options.scopes_supported {
        map.insert("scopes_supported".into(), json!(scopes));
    }
    if options.client_id_metadata_document_supported {
        map.insert("client_id_metadata_document_supported".into(), true.into());
    }
    if options.iss_parameter_supported {
        map.insert(
            "authorization_response_iss_parameter_supported".into(),
            true.into(),
        );
    }
    for (key, value) in &options.extra_metadata {
        map.insert(key.clone(), value.clone());
    }
    doc
}

/// `GET /authorize`: a bad client or redirect URI is a 400 here (never a redirect), anything
/// else a 302 to the redirect URI.
fn authorize(state: &mut AsState, seen: &Seen, base: &str) -> Response<Body> {
    let q = seen.query();
    let Some(client_id) = first(&q, "client_id") else {
        return oauth_error(400, "invalid_request", "client_id is missing");
    };
    let Some(client) = state.client(&client_id) else {
        return oauth_error(400, "invalid_client", "unknown client_id");
    };
    let Some(redirect_uri) = first(&q, "redirect_uri") else {
        return oauth_error(400, "invalid_request", "redirect_uri is missing");
    };
    if !client.redirect_uris.is_empty() && !client.redirect_uris.contains(&redirect_uri) {
        return oauth_error(400, "invalid_request", "redirect_uri is not registered");
    }
    let Ok(mut location) = url::Url::parse(&redirect_uri) else {
        return oauth_error(400, "invalid_request", "redirect_uri is not a URL");
    };
    if first(&q, "response_type").as_deref() != Some("code") {
        return oauth_error(
            400,
            "unsupported_response_type",
            "response_type must be code",
        );
    }
    let Some(code_challenge) = first(&q, "code_challenge") else {
        return oauth_error(400, "invalid_request", "code_challenge is missing");
    };
    let method = first(&q, "code_challenge_method").unwrap_or_else(|| "plain".to_owned());
    let plain_ok = state
        .options
        .code_challenge_methods_supported
        .as_ref()
        .is_some_and(|m| m.iter().any(|m| m == "plain"));
    if !(method == "S256" || method == "plain" && plain_ok) {
        return oauth_error(
            400,
            "invalid_request",
            "code_challenge_method not supported",
        );
    }
    let authorization = Authorization {
        client_id,
        redirect_uri,
        state: first(&q, "state"),
        scope: first(&q, "scope"),
        resource: first(&q, "resource"),
        code_challenge,
        code_challenge_method: method,
    };
    state.authorizations.push(authorization.clone());
    {
        let mut params = location.query_pairs_mut();
        match state.options.consent {
            Consent::Grant => {
                let n = state.next();
                let code = format!("mock-code-{}-{n}", state.tag);
                params.append_pair("code", &code);
                state.codes.insert(
                    code,
                    Code {
                        authorization: authorization.clone(),
                        used: false,
                    },
                );
            }
            Consent::Deny => {
                params.append_pair("error", "access_denied");
            }
        }
        if let Some(s) = &authorization.state {
            params.append_pair("state", s);
        }
        let iss = match &state.options.iss_param {
            IssParam::Auto if state.options.iss_parameter_supported => Some(state.issuer(base)),
            IssParam::Auto | IssParam::Omitted => None,
            IssParam::Correct => Some(state.issuer(base)),
            IssParam::Wrong(wrong) => Some(wrong.clone()),
        };
        if let Some(iss) = iss {
            params.append_pair("iss", &iss);
        }
    }
    redirect(location.as_str(), 302)
}

/// Client authentication at the token endpoint: the client id, or why it failed (a 401
/// `invalid_client`, see [`unauthorized_client`]).
fn authenticate(state: &mut AsState, seen: &Seen) -> Result<String, &'static str> {
    let basic = seen
        .header("authorization")
        .and_then(|h| h.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("basic"))
        .map(|(_, creds)| creds.trim().to_owned());
    let (method, client_id, secret) = if let Some(creds) = basic {
        let decoded = STANDARD
            .decode(creds)
            .ok()
            .and_then(|d| String::from_utf8(d).ok());
        let parts = decoded.as_deref().and_then(|d| d.split_once(':'));
        let decoded = parts.and_then(|(id, secret)| Some((form_decode(id)?, form_decode(secret)?)));
        let Some((id, secret)) = decoded else {
            return Err("malformed Basic credentials");
        };
        ("client_secret_basic", id, Some(secret))
    } else if let Some(secret) = seen.form_param("client_secret") {
        let Some(id) = seen.form_param("client_id") else {
            return Err("client_secret without client_id");
        };
        ("client_secret_post", id, Some(secret))
    } else if let Some(id) = seen.form_param("client_id") {
        ("none", id, None)
    } else {
        return Err("no client authentication");
    };
    let supported = &state.options.token_endpoint_auth_methods_supported;
    if !supported.iter().any(|m| m == method) {
        return Err("token endpoint auth method not supported");
    }
    let Some(client) = state.client(&client_id) else {
        return Err("unknown client");
    };
    if client.auth_method.as_deref().is_some_and(|m| m != method) {
        return Err("not the client's token endpoint auth method");
    }
    if client.secret != secret {
        return Err("wrong client secret");
    }
    Ok(client_id)
}

fn unauthorized_client(why: &str) -> Response<Body> {
    let mut response = oauth_error(401, "invalid_client", why);
    response
        .headers_mut()
        .insert("www-authenticate", "Basic realm=\"mock\"".parse().unwrap());
    response
}

/// `POST /token`.
fn token(state: &mut AsState, seen: &Seen) -> Response<Body> {
    if state.raw_token.0 > 0 {
        state.raw_token.0 -= 1;
        let (status, body) = (state.raw_token.1, state.raw_token.2.clone());
        return crate::http_mock::typed(status, "application/json", body);
    }
    if state.fail_token.0 > 0 {
        state.fail_token.0 -= 1;
        let description = match state.fail_token.2 {
            true => format!(
                "told to fail; got {} with {:?}",
                String::from_utf8_lossy(&seen.raw),
                seen.header("authorization")
            ),
            false => "told to fail".to_owned(),
        };
        return oauth_error(state.fail_token.1, "server_error", &description);
    }
    let client_id = match authenticate(state, seen) {
        Ok(client_id) => client_id,
        Err(why) => return unauthorized_client(why),
    };
    let grant_type = seen.form_param("grant_type").unwrap_or_default();
    if !state.options.grant_types_supported.contains(&grant_type) {
        return oauth_error(400, "unsupported_grant_type", "grant_type not supported");
    }
    match grant_type.as_str() {
        "authorization_code" => code_grant(state, seen, client_id),
        "refresh_token" => refresh_grant(state, seen, client_id),
        "client_credentials" => {
            let (scope, resource) = (seen.form_param("scope"), seen.form_param("resource"));
            issue(state, client_id, Grant::ClientCredentials, scope, resource)
        }
        "urn:ietf:params:oauth:grant-type:jwt-bearer"
            if seen.form_param("assertion").is_some_and(|a| !a.is_empty()) =>
        {
            let (scope, resource) = (seen.form_param("scope"), seen.form_param("resource"));
            issue(state, client_id, Grant::JwtBearer, scope, resource)
        }
        _ => oauth_error(400, "unsupported_grant_type", "grant_type not supported"),
    }
}

fn code_grant(state: &mut AsState, seen: &Seen, client_id: String) -> Response<Body> {
    let code = seen.form_param("code").unwrap_or_default();
    let Some(record) = state.codes.get_mut(&code) else {
        return oauth_error(400, "invalid_grant", "unknown code");
    };
    // A code is spent by its first use, even a failed one.
    if std::mem::replace(&mut record.used, true) {
        return oauth_error(400, "invalid_grant", "code already used");
    }
    let authorization = record.authorization.clone();
    if authorization.client_id != client_id {
        return oauth_error(400, "invalid_grant", "code issued to another client");
    }
    if seen.form_param("redirect_uri").as_deref() != Some(&authorization.redirect_uri) {
        return oauth_error(400, "invalid_grant", "redirect_uri differs");
    }
    let verifier = seen.form_param("code_verifier").unwrap_or_default();
    let well_formed = (43..=128).contains(&verifier.len())
        && verifier
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b));
    let matches = match authorization.code_challenge_method.as_str() {
        "S256" => s256(&verifier) == authorization.code_challenge,
        _ => verifier == authorization.code_challenge,
    };
    if !(well_formed && matches) {
        return oauth_error(400, "invalid_grant", "code_verifier does not match");
    }
    let resource = match (seen.form_param("resource"), authorization.resource) {
        (Some(asked), Some(authorized)) if asked != authorized => {
            return oauth_error(
                400,
                "invalid_target",
                "resource differs from the authorization",
            );
        }
        (asked, authorized) => asked.or(authorized),
    };
    issue(
        state,
        client_id,
        Grant::AuthorizationCode,
        authorization.scope,
        resource,
    )
}

fn refresh_grant(state: &mut AsState, seen: &Seen, client_id: String) -> Response<Body> {
    let rotation = state.options.refresh;
    let token = seen.form_param("refresh_token").unwrap_or_default();
    let Some(record) = state.refresh.get_mut(&token) else {
        return oauth_error(400, "invalid_grant", "unknown refresh token");
    };
    if rotation == Refresh::Reject || !record.valid || record.client_id != client_id {
        return oauth_error(400, "invalid_grant", "refresh token refused");
    }
    if rotation == Refresh::Rotate {
        record.valid = false;
    }
    let scope = seen.form_param("scope").or(record.scope.clone());
    let resource = seen.form_param("resource").or(record.resource.clone());
    issue(state, client_id, Grant::RefreshToken, scope, resource)
}

fn issue(
    state: &mut AsState,
    client_id: String,
    grant: Grant,
    scope: Option<String>,
    resource: Option<String>,
) -> Response<Body> {
    let n = state.next();
    let access_token = format!("mock-at-{}-{n}", state.tag);
    let refresh_token = (state.options.refresh_tokens
        && !matches!(grant, Grant::ClientCredentials | Grant::JwtBearer))
    .then(|| format!("mock-rt-{}-{n}", state.tag));
    let expires_in = state.options.expires_in;
    let mut body = json!({ "access_token": access_token, "token_type": "Bearer" });
    let map = body.as_object_mut().unwrap();
    if let Some(expires_in) = expires_in {
        map.insert("expires_in".into(), expires_in.into());
    }
    if let Some(refresh_token) = &refresh_token {
        map.insert("refresh_token".into(), refresh_token.clone().into());
        state.refresh.insert(
            refresh_token.clone(),
            RefreshRecord {
                client_id: client_id.clone(),
                scope: scope.clone(),
                resource: resource.clone(),
                valid: true,
            },
        );
    }
    if let Some(scope) = &scope {
        map.insert("scope".into(), scope.clone().into());
    }
    for (name, value) in &state.options.extra_token_members {
        map.insert(name.clone(), value.clone());
    }
    state.issued.push(Issued {
        access_token,
        refresh_token,
        client_id,
        grant,
        scope,
        resource,
        expires_in,
        revoked: false,
    });
    let mut response = json_response(&body);
    response
        .headers_mut()
        .insert("cache-control", "no-store".parse().unwrap());
    response
}

/// `POST /register` (RFC 7591): the requested `token_endpoint_auth_method` (default
/// `client_secret_basic`) if supported, else the first supported one; a secret unless `none`.
fn register(state: &mut AsState, seen: &Seen) -> Response<Body> {
    let Some(request) = seen.body.as_object() else {
        return oauth_error(
            400,
            "invalid_client_metadata",
            "the body is not a JSON object",
        );
    };
    let supported = &state.options.token_endpoint_auth_methods_supported;
    let requested = request
        .get("token_endpoint_auth_method")
        .and_then(Value::as_str)
        .unwrap_or("client_secret_basic");
    let method = if supported.iter().any(|m| m == requested) {
        requested.to_owned()
    } else {
        supported
            .first()
            .cloned()
            .unwrap_or_else(|| "none".to_owned())
    };
    let redirect_uris = request
        .get("redirect_uris")
        .and_then(Value::as_array)
        .map(|uris| {
            uris.iter()
                .filter_map(|u| u.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    let n = state.next();
    let client_id = format!("mock-client-{}-{n}", state.tag);
    let secret = (method != "none").then(|| format!("mock-secret-{}-{n}", state.tag));
    let mut answer = request.clone();
    answer.insert("client_id".into(), client_id.clone().into());
    answer.insert("client_id_issued_at".into(), 0.into());
    answer.insert("token_endpoint_auth_method".into(), method.clone().into());
    if let Some(secret) = &secret {
        answer.insert("client_secret".into(), secret.clone().into());
        answer.insert("client_secret_expires_at".into(), 0.into());
    }
    for (name, value) in &state.options.extra_registration_members {
        answer.insert(name.clone(), value.clone());
    }
    state.registrations.push(seen.body.clone());
    state.clients.insert(
        client_id,
        ClientRecord {
            secret,
            auth_method: Some(method),
            redirect_uris,
        },
    );
    with_status(json_response(&Value::Object(answer)), 201)
}

// ---------------------------------------------------------------------------------------------
// The protected resource
// ---------------------------------------------------------------------------------------------

/// Where the resource serves its Protected Resource Metadata (RFC 9728).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PrmAt {
    /// `/.well-known/oauth-protected-resource/mcp` (path insertion for `/mcp`).
    PathInserted,
    /// `/.well-known/oauth-protected-resource`.
    Root,
    /// Exactly this path.
    Path(String),
    /// Nowhere (every well-known path answers 404).
    Nowhere,
}

impl PrmAt {
    /// The path this serves at, `None` for [`PrmAt::Nowhere`].
    pub(crate) fn path(&self) -> Option<String> {
        match self {
            PrmAt::PathInserted => Some(format!("/.well-known/oauth-protected-resource{MCP_PATH}")),
            PrmAt::Root => Some("/.well-known/oauth-protected-resource".to_owned()),
            PrmAt::Path(path) => Some(path.clone()),
            PrmAt::Nowhere => None,
        }
    }
}

/// The `WWW-Authenticate` of a 401.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Challenge {
    /// `Bearer resource_metadata="<url>"` (+ `scope`, `error` as configured).
    WithMetadata,
    /// `Bearer` with no `resource_metadata` (+ `scope`, `error` as configured): the client
    /// must probe the well-known paths.
    Bare,
    /// No `WWW-Authenticate` at all.
    Absent,
}

/// How the resource behaves. Every field has a default (see each); change a running
/// resource's options with [`Resource::update`].
#[derive(Debug, Clone)]
pub(crate) struct ResourceOptions {
    /// Default [`PrmAt::PathInserted`].
    pub(crate) prm_at: PrmAt,
    /// Default [`Challenge::WithMetadata`].
    pub(crate) challenge: Challenge,
    /// The `resource_metadata` URL in the challenges. Default `None`: where `prm_at` serves
    /// (for [`PrmAt::Nowhere`], the path-inserted URL, which is 404).
    pub(crate) metadata_url: Option<String>,
    /// `scope="…"` on a 401. Default `None`.
    pub(crate) challenge_scope: Option<String>,
    /// `error="invalid_token"` on a 401 to a request whose Bearer token is not valid (none
    /// on a request without one). Default true.
    pub(crate) invalid_token_error: bool,
    /// The PRM's `resource`. Default `None`: [`Resource::url`]; another value makes the
    /// resource-mismatch case.
    pub(crate) resource: Option<String>,
    /// The PRM's `authorization_servers`. Default `None`: `[auth.issuer()]` (the resource's
    /// own origin when it co-hosts the AS).
    pub(crate) authorization_servers: Option<Vec<String>>,
    /// The PRM's `scopes_supported`. Default `None` (omitted).
    pub(crate) scopes_supported: Option<Vec<String>>,
    /// JSON-RPC method → scopes a valid token must hold, else 403
    /// `Bearer error="insufficient_scope", scope="<these>", resource_metadata="…"`.
    /// Default empty.
    pub(crate) required_scopes: HashMap<String, Vec<String>>,
    /// `Some(scope)`: every request with a valid token gets that 403 with `scope` (the
    /// step-up retry limit). Default `None`.
    pub(crate) always_insufficient: Option<String>,
    /// `Some(url)`: every request to `/mcp` is answered `307 Location: url` before any token
    /// check (a cross-origin redirect). Default `None`.
    pub(crate) redirect_to: Option<String>,
    /// The resource's origin also answers the AS's routes (metadata, `/authorize`, `/token`,
    /// `/register`; shared state, its own origin as base URL): the 2025-03-26 case where the
    /// MCP server is its own authorization server. Default false.
    pub(crate) co_host_auth: bool,
    /// Merged into the PRM last, overriding what is there. Default empty.
    pub(crate) extra_prm: Map<String, Value>,
}

impl Default for ResourceOptions {
    fn default() -> ResourceOptions {
        ResourceOptions {
            prm_at: PrmAt::PathInserted,
            challenge: Challenge::WithMetadata,
            metadata_url: None,
            challenge_scope: None,
            invalid_token_error: true,
            resource: None,
            authorization_servers: None,
            scopes_supported: None,
            required_scopes: HashMap::new(),
            always_insufficient: None,
            redirect_to: None,
            co_host_auth: false,
            extra_prm: Map::new(),
        }
    }
}

/// A running protected MCP server at `/mcp` on its own port, trusting the tokens of one
/// [`AuthServer`]: a request passes when it carries `Authorization: Bearer <t>` with `t`
/// issued by that server, not revoked, issued for this resource (its PRM `resource` value) or
/// for none, and holding the method's required scopes. Only requests to `/mcp` are checked
/// (any HTTP method; the required scopes are looked up by the JSON-RPC method, `""` for a
/// GET or DELETE); every other path is 404 unless it is the PRM or a co-hosted AS route. Cheap to clone; clones share state.
#[derive(Clone)]
pub(crate) struct Resource {
    /// The listener: every request is in `mock.seen()`; the mock's default MCP behaviour
    /// answers the authorized ones.
    pub(crate) mock: Mock,
    /// The authorization server it trusts.
    pub(crate) auth: AuthServer,
    options: Arc<Mutex<ResourceOptions>>,
}

impl Resource {
    /// Starts one on 127.0.0.1 with a free port; it runs until the test's runtime ends.
    pub(crate) async fn start(auth: &AuthServer, options: ResourceOptions) -> Resource {
        let mock = Mock::start().await;
        let options = Arc::new(Mutex::new(options));
        let (core, shared) = (auth.core.clone(), options.clone());
        let auth_base = auth.url("");
        mock.script(move |seen, mock| {
            let options = lock(&shared).clone();
            guard(&core, &options, &auth_base, seen, &mock.url(""))
        });
        Resource {
            mock,
            auth: auth.clone(),
            options,
        }
    }

    /// The MCP endpoint: `http://127.0.0.1:PORT/mcp`.
    pub(crate) fn url(&self) -> String {
        self.mock.url(MCP_PATH)
    }

    /// `http://127.0.0.1:PORT` + `path`.
    pub(crate) fn origin_url(&self, path: &str) -> String {
        self.mock.url(path)
    }

    /// The `resource_metadata` URL its challenges carry (see
    /// [`ResourceOptions::metadata_url`]).
    pub(crate) fn prm_url(&self) -> String {
        metadata_url(&lock(&self.options), &self.mock.url(""))
    }

    /// Changes the options of the running resource; takes effect on the next request.
    pub(crate) fn update(&self, change: impl FnOnce(&mut ResourceOptions)) {
        change(&mut lock(&self.options));
    }

    /// Every request it got, in order.
    pub(crate) fn seen(&self) -> Vec<Seen> {
        self.mock.seen()
    }

    /// The Bearer token of each request to `/mcp`, in order (`None`: sent without one).
    pub(crate) fn bearers(&self) -> Vec<Option<String>> {
        self.seen()
            .iter()
            .filter(|s| s.path_only() == MCP_PATH)
            .map(|s| s.bearer().map(str::to_owned))
            .collect()
    }

    /// Revokes every token issued so far (see [`AuthServer::revoke_all`]): the next request
    /// gets 401 `invalid_token`, and a client must refresh.
    pub(crate) fn revoke_all(&self) {
        self.auth.revoke_all();
    }
}

fn metadata_url(options: &ResourceOptions, base: &str) -> String {
    options.metadata_url.clone().unwrap_or_else(|| {
        let path = options
            .prm_at
            .path()
            .or_else(|| PrmAt::PathInserted.path())
            .unwrap_or_default();
        format!("{base}{path}")
    })
}

/// The resource's script: PRM, co-hosted AS routes, then the token check on `/mcp`; `None`
/// lets the mock's MCP behaviour answer.
fn guard(
    core: &AsCore,
    options: &ResourceOptions,
    auth_base: &str,
    seen: &Seen,
    base: &str,
) -> Option<Response<Body>> {
    let path = seen.path_only();
    let mcp_url = format!("{base}{MCP_PATH}");
    let resource = options.resource.clone().unwrap_or(mcp_url);
    if options.prm_at.path().as_deref() == Some(path) {
        if seen.method != Method::GET {
            return Some(status(405, ""));
        }
        let servers = options.authorization_servers.clone().unwrap_or_else(|| {
            let issuer_base = if options.co_host_auth {
                base
            } else {
                auth_base
            };
            vec![lock(&core.0).issuer(issuer_base)]
        });
        let mut prm = json!({ "resource": resource, "authorization_servers": servers });
        let map = prm.as_object_mut().unwrap();
        map.insert("bearer_methods_supported".into(), json!(["header"]));
        if let Some(scopes) = &options.scopes_supported {
            map.insert("scopes_supported".into(), json!(scopes));
        }
        for (key, value) in &options.extra_prm {
            map.insert(key.clone(), value.clone());
        }
        return Some(json_response(&prm));
    }
    if options.co_host_auth
        && let Some(response) = core.route(seen, base)
    {
        return Some(response);
    }
    if path != MCP_PATH {
        return Some(status(404, ""));
    }
    if let Some(to) = &options.redirect_to {
        return Some(redirect(to, 307));
    }
    let metadata = metadata_url(options, base);
    let Some(token) = seen.bearer() else {
        return Some(unauthorized(options, &metadata, false));
    };
    let Some(issued) = core.valid_token(token) else {
        return Some(unauthorized(options, &metadata, true));
    };
    if issued.resource.as_ref().is_some_and(|r| *r != resource) {
        return Some(unauthorized(options, &metadata, true));
    }
    if let Some(scope) = &options.always_insufficient {
        return Some(forbidden(scope, &metadata));
    }
    let required = options.required_scopes.get(seen.rpc_method());
    if let Some(required) = required
        && !required.iter().all(|s| issued.has_scope(s))
    {
        return Some(forbidden(&required.join(" "), &metadata));
    }
    None
}

fn unauthorized(options: &ResourceOptions, metadata: &str, bad_token: bool) -> Response<Body> {
    let mut response = status(401, "");
    let mut params = Vec::new();
    if options.challenge == Challenge::WithMetadata {
        params.push(format!("resource_metadata=\"{metadata}\""));
    }
    if let Some(scope) = &options.challenge_scope {
        params.push(format!("scope=\"{scope}\""));
    }
    if bad_token && options.invalid_token_error {
        params.push("error=\"invalid_token\"".to_owned());
    }
    if options.challenge != Challenge::Absent {
        let value = match params.is_empty() {
            true => "Bearer".to_owned(),
            false => format!("Bearer {}", params.join(", ")),
        };
        response
            .headers_mut()
            .insert("www-authenticate", value.parse().unwrap());
    }
    response
}

fn forbidden(scope: &str, metadata: &str) -> Response<Body> {
    let mut response = status(403, "");
    let value = format!(
        "Bearer error=\"insufficient_scope\", scope=\"{scope}\", resource_metadata=\"{metadata}\""
    );
    response
        .headers_mut()
        .insert("www-authenticate", value.parse().unwrap());
    response
}

// ---------------------------------------------------------------------------------------------
// Another origin
// ---------------------------------------------------------------------------------------------

/// A third server on its own port that answers 404 to everything and records it: a test
/// points a redirect or a metadata URL here and asserts no token arrived. Replace its answer
/// with `other.mock.script(...)`.
#[derive(Clone)]
pub(crate) struct OtherOrigin {
    pub(crate) mock: Mock,
}

impl OtherOrigin {
    /// Starts one on 127.0.0.1 with a free port; it runs until the test's runtime ends.
    pub(crate) async fn start() -> OtherOrigin {
        let mock = Mock::start().await;
        mock.script(|_, _| Some(status(404, "")));
        OtherOrigin { mock }
    }

    /// `http://127.0.0.1:PORT` + `path`.
    pub(crate) fn url(&self, path: &str) -> String {
        self.mock.url(path)
    }

    /// Every request it got, in order.
    pub(crate) fn seen(&self) -> Vec<Seen> {
        self.mock.seen()
    }

    /// Every `Authorization` header it got (a test asserts this is empty).
    pub(crate) fn authorizations(&self) -> Vec<String> {
        self.seen()
            .iter()
            .filter_map(|s| s.header("authorization").map(str::to_owned))
            .collect()
    }
}

// ---------------------------------------------------------------------------------------------
// Self-tests of the fixture, driven by a raw hyper client
// ---------------------------------------------------------------------------------------------

mod tests {
    use bytes::Bytes;
    use http::{HeaderMap, Request, StatusCode};
    use http_body_util::{BodyExt, Full};
    use hyper_util::rt::TokioIo;
    use tokio::net::TcpStream;

    use super::*;
    use crate::support::within;

    struct Answer {
        status: StatusCode,
        headers: HeaderMap,
        body: Bytes,
    }

    impl Answer {
        fn json(&self) -> Value {
            serde_json::from_slice(&self.body).unwrap_or(Value::Null)
        }

        fn header(&self, name: &str) -> Option<&str> {
            self.headers.get(name).and_then(|v| v.to_str().ok())
        }

        fn error(&self) -> Option<String> {
            self.json()
                .get("error")
                .and_then(Value::as_str)
                .map(str::to_owned)
        }
    }

    /// One request on a fresh HTTP/1.1 connection.
    async fn send(method: Method, url: &str, headers: &[(&str, &str)], body: &str) -> Answer {
        let uri: http::Uri = url.parse().unwrap();
        let authority = uri.authority().unwrap().clone();
        within("the fixture answers", async {
            let stream = TcpStream::connect(authority.as_str()).await.unwrap();
            let (mut sender, connection) =
                hyper::client::conn::http1::handshake(TokioIo::new(stream))
                    .await
                    .unwrap();
            tokio::spawn(connection);
            let mut request = Request::builder()
                .method(method)
                .uri(uri.path_and_query().unwrap().as_str())
                .header("host", authority.as_str());
            for (name, value) in headers {
                request = request.header(*name, *value);
            }
            let request = request
                .body(Full::new(Bytes::from(body.to_owned())))
                .unwrap();
            let response = sender.send_request(request).await.unwrap();
            let (parts, body) = response.into_parts();
            Answer {
                status: parts.status,
                headers: parts.headers,
                body: body.collect().await.unwrap().to_bytes(),
            }
        })
        .await
    }

    async fn get(url: &str) -> Answer {
        send(Method::GET, url, &[], "").await
    }

    async fn post_form(url: &str, headers: &[(&str, &str)], form: &[(&str, &str)]) -> Answer {
        let body: String = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(form)
            .finish();
        let mut all = vec![("content-type", "application/x-www-form-urlencoded")];
        all.extend_from_slice(headers);
        send(Method::POST, url, &all, &body).await
    }

    async fn post_json(url: &str, headers: &[(&str, &str)], body: &Value) -> Answer {
        let mut all = vec![
            ("content-type", "application/json"),
            ("accept", "application/json, text/event-stream"),
        ];
        all.extend_from_slice(headers);
        send(Method::POST, url, &all, &body.to_string()).await
    }

    const VERIFIER: &str = "verifier-0123456789-0123456789-0123456789-abc";
    const REDIRECT: &str = "http://127.0.0.1:9/callback";

    async fn register(auth: &AuthServer, method: &str) -> Value {
        let body = json!({
            "client_name": "fixture test",
            "redirect_uris": [REDIRECT],
            "token_endpoint_auth_method": method,
        });
        let answer = post_json(&auth.endpoint("/register"), &[], &body).await;
        assert_eq!(answer.status, 201);
        answer.json()
    }

    /// Runs `/authorize` for `client_id`; the redirect's query pairs.
    async fn authorize(
        auth: &AuthServer,
        client_id: &str,
        extra: &[(&str, &str)],
    ) -> Vec<(String, String)> {
        let mut query = url::form_urlencoded::Serializer::new(String::new());
        query.extend_pairs([
            ("response_type", "code"),
            ("client_id", client_id),
            ("redirect_uri", REDIRECT),
            ("code_challenge", &s256(VERIFIER)),
            ("code_challenge_method", "S256"),
            ("state", "st-1"),
        ]);
        query.extend_pairs(extra);
        let answer = get(&format!(
            "{}?{}",
            auth.endpoint("/authorize"),
            query.finish()
        ))
        .await;
        assert_eq!(answer.status, 302);
        let location = url::Url::parse(answer.header("location").unwrap()).unwrap();
        assert!(location.as_str().starts_with(REDIRECT));
        location.query_pairs().into_owned().collect()
    }

    async fn code(auth: &AuthServer, client_id: &str, extra: &[(&str, &str)]) -> String {
        first(&authorize(auth, client_id, extra).await, "code").unwrap()
    }

    fn basic(id: &str, secret: &str) -> String {
        let pair = format!("{}:{}", form_encode(id), form_encode(secret));
        format!("Basic {}", STANDARD.encode(pair))
    }

    #[tokio::test]
    async fn metadata_is_served_at_the_configured_path_only() {
        let candidates = |prefix: &str| {
            [
                MetadataAt::OAuth,
                MetadataAt::OpenIdInserted,
                MetadataAt::OpenIdAppended,
            ]
            .map(|m| m.path(prefix).unwrap())
        };
        for at in [
            MetadataAt::OAuth,
            MetadataAt::OpenIdInserted,
            MetadataAt::OpenIdAppended,
        ] {
            let auth = AuthServer::start(AsOptions {
                metadata_at: at.clone(),
                route_prefix: "/tenant1".into(),
                ..AsOptions::default()
            })
            .await;
            let served = at.path("/tenant1").unwrap();
            assert_eq!(auth.metadata_url(), Some(auth.url(&served)));
            for path in candidates("/tenant1").iter().chain(&candidates("")) {
                let answer = get(&auth.url(path)).await;
                if *path == served {
                    assert_eq!(answer.status, 200, "{at:?} at {path}");
                    let doc = answer.json();
                    assert_eq!(doc["issuer"], auth.url("/tenant1"));
                    assert_eq!(doc["token_endpoint"], auth.url("/tenant1/token"));
                    assert_eq!(doc["registration_endpoint"], auth.url("/tenant1/register"));
                    assert_eq!(doc["code_challenge_methods_supported"], json!(["S256"]));
                    assert_eq!(
                        doc["token_endpoint_auth_methods_supported"],
                        json!(["none"])
                    );
                } else {
                    assert_eq!(answer.status, 404, "{at:?} at {path}");
                }
            }
        }

        // Nowhere: every well-known path is 404; the default endpoints still work.
        let auth = AuthServer::start(AsOptions {
            metadata_at: MetadataAt::Nowhere,
            ..AsOptions::default()
        })
        .await;
        assert_eq!(auth.metadata_url(), None);
        for path in candidates("") {
            assert_eq!(get(&auth.url(&path)).await.status, 404);
        }
        let client = register(&auth, "none").await;
        assert_eq!(client["token_endpoint_auth_method"], "none");
        assert!(client.get("client_secret").is_none());
        let id = client["client_id"].as_str().unwrap();
        assert!(first(&authorize(&auth, id, &[]).await, "code").is_some());

        // Overrides: a wrong issuer, methods omitted, extra fields.
        let auth = AuthServer::start(AsOptions {
            issuer: Some("https://elsewhere.example".into()),
            code_challenge_methods_supported: None,
            registration: false,
            extra_metadata: [("token_endpoint".to_owned(), json!("http://other/token"))]
                .into_iter()
                .collect(),
            ..AsOptions::default()
        })
        .await;
        let doc = get(&auth.metadata_url().unwrap()).await.json();
        assert_eq!(doc["issuer"], "https://elsewhere.example");
        assert_eq!(doc["token_endpoint"], "http://other/token");
        assert!(doc.get("code_challenge_methods_supported").is_none());
        assert!(doc.get("registration_endpoint").is_none());
        let answer = post_json(&auth.endpoint("/register"), &[], &json!({})).await;
        assert_eq!(answer.status, 404);

        // A custom path.
        let auth = AuthServer::start(AsOptions {
            metadata_at: MetadataAt::Path("/meta/as.json".into()),
            ..AsOptions::default()
        })
        .await;
        assert_eq!(auth.metadata_url(), Some(auth.url("/meta/as.json")));
        assert_eq!(get(&auth.url("/meta/as.json")).await.status, 200);
        assert_eq!(
            get(&auth.url(&MetadataAt::OAuth.path("").unwrap()))
                .await
                .status,
            404
        );
    }

    #[tokio::test]
    async fn the_code_grant_checks_the_pkce_verifier() {
        let auth = AuthServer::start(AsOptions::default()).await;
        let id = register(&auth, "none").await["client_id"]
            .as_str()
            .unwrap()
            .to_owned();
        let resource = "http://127.0.0.1:1/mcp";
        let redirect = authorize(&auth, &id, &[("scope", "read"), ("resource", resource)]).await;
        assert_eq!(first(&redirect, "state").as_deref(), Some("st-1"));
        assert_eq!(first(&redirect, "iss"), None);
        let code = first(&redirect, "code").unwrap();
        let form = |code: &str, verifier: &str| {
            vec![
                ("grant_type", "authorization_code".to_owned()),
                ("code", code.to_owned()),
                ("redirect_uri", REDIRECT.to_owned()),
                ("code_verifier", verifier.to_owned()),
                ("client_id", id.clone()),
                ("resource", resource.to_owned()),
            ]
        };
        let token_url = auth.endpoint("/token");
        let post = |form: Vec<(&'static str, String)>| {
            let token_url = token_url.clone();
            async move {
                let form: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
                post_form(&token_url, &[], &form).await
            }
        };

        let wrong = post(form(&code, &format!("{VERIFIER}x"))).await;
        assert_eq!(
            (wrong.status, wrong.error().as_deref()),
            (StatusCode::BAD_REQUEST, Some("invalid_grant"))
        );
        // The failed attempt spent the code.
        let spent = post(form(&code, VERIFIER)).await;
        assert_eq!(spent.error().as_deref(), Some("invalid_grant"));
        assert!(auth.issued().is_empty());

        let code = self::code(&auth, &id, &[("scope", "read"), ("resource", resource)]).await;
        let ok = post(form(&code, VERIFIER)).await;
        assert_eq!(ok.status, 200);
        let body = ok.json();
        assert_eq!(body["token_type"], "Bearer");
        assert_eq!(body["scope"], "read");
        assert_eq!(body["expires_in"], 3600);
        let issued = auth.issued();
        assert_eq!(issued.len(), 1);
        assert_eq!(issued[0].access_token, body["access_token"]);
        assert_eq!(
            issued[0].refresh_token.as_deref(),
            body["refresh_token"].as_str()
        );
        assert_eq!(issued[0].resource.as_deref(), Some(resource));
        assert_eq!(issued[0].grant, Grant::AuthorizationCode);
        assert_eq!(auth.authorizations().len(), 2);
        assert_eq!(auth.authorizations()[1].scope.as_deref(), Some("read"));

        // Refresh rotates; the old refresh token is then refused.
        let refresh = body["refresh_token"].as_str().unwrap();
        let again = |rt: &str| {
            vec![
                ("grant_type", "refresh_token".to_owned()),
                ("refresh_token", rt.to_owned()),
                ("client_id", id.clone()),
            ]
        };
        let refreshed = post(again(refresh)).await;
        assert_eq!(refreshed.status, 200);
        assert_ne!(refreshed.json()["access_token"], body["access_token"]);
        assert_ne!(refreshed.json()["refresh_token"], body["refresh_token"]);
        assert_eq!(
            post(again(refresh)).await.error().as_deref(),
            Some("invalid_grant")
        );
        assert_eq!(auth.issued()[1].grant, Grant::RefreshToken);
        assert_eq!(auth.issued()[1].resource.as_deref(), Some(resource));

        // Told to fail, then to reject refreshes.
        auth.fail_next_token_requests(1, 503);
        let new_refresh = refreshed.json()["refresh_token"]
            .as_str()
            .unwrap()
            .to_owned();
        assert_eq!(post(again(&new_refresh)).await.status, 503);
        auth.update(|o| o.refresh = Refresh::Reject);
        assert_eq!(
            post(again(&new_refresh)).await.error().as_deref(),
            Some("invalid_grant")
        );
        assert_eq!(auth.seen_at("/token").len(), 7);

        // Rotation that keeps the old refresh token valid.
        auth.update(|o| o.refresh = Refresh::RotateKeepOld);
        let issued = auth.issued().len();
        assert_eq!(post(again(&new_refresh)).await.status, 200);
        assert_eq!(post(again(&new_refresh)).await.status, 200);
        assert_eq!(auth.issued().len(), issued + 2);
    }

    #[tokio::test]
    async fn client_secret_basic_and_post_are_enforced_as_registered() {
        let auth = AuthServer::start(AsOptions {
            token_endpoint_auth_methods_supported: strings(&[
                "client_secret_basic",
                "client_secret_post",
            ]),
            clients: vec![PreRegistered {
                client_id: "id:with&odd".into(),
                client_secret: Some("s3cr+t p%".into()),
                auth_method: None,
                redirect_uris: Vec::new(),
            }],
            ..AsOptions::default()
        })
        .await;
        let token_url = auth.endpoint("/token");
        let cc = [("grant_type", "client_credentials"), ("scope", "a b")];

        // A pre-registered client with any method: basic with form-encoded id and secret.
        let answer = post_form(
            &token_url,
            &[("authorization", &basic("id:with&odd", "s3cr+t p%"))],
            &cc,
        )
        .await;
        assert_eq!(answer.status, 200, "{:?}", answer.json());
        assert_eq!(answer.json()["scope"], "a b");
        assert!(answer.json().get("refresh_token").is_none());
        let wrong = post_form(
            &token_url,
            &[("authorization", &basic("id:with&odd", "nope"))],
            &cc,
        )
        .await;
        assert_eq!(
            (wrong.status, wrong.error().as_deref()),
            (StatusCode::UNAUTHORIZED, Some("invalid_client"))
        );
        let mut post = cc.to_vec();
        post.extend([("client_id", "id:with&odd"), ("client_secret", "s3cr+t p%")]);
        assert_eq!(post_form(&token_url, &[], &post).await.status, 200);
        // `none` is not supported here.
        let none = post_form(&token_url, &[], &[cc[0], ("client_id", "id:with&odd")]).await;
        assert_eq!(none.error().as_deref(), Some("invalid_client"));

        // A registered client must use the method it registered with.
        for (method, other) in [
            ("client_secret_basic", "client_secret_post"),
            ("client_secret_post", "client_secret_basic"),
        ] {
            let client = register(&auth, method).await;
            assert_eq!(client["token_endpoint_auth_method"], method);
            let id = client["client_id"].as_str().unwrap();
            let secret = client["client_secret"].as_str().unwrap();
            let by_basic =
                post_form(&token_url, &[("authorization", &basic(id, secret))], &cc).await;
            let mut form = cc.to_vec();
            form.extend([("client_id", id), ("client_secret", secret)]);
            let by_post = post_form(&token_url, &[], &form).await;
            let (right, wrong) = match method {
                "client_secret_basic" => (by_basic, by_post),
                _ => (by_post, by_basic),
            };
            assert_eq!(right.status, 200, "{method}");
            assert_eq!(
                (wrong.status, wrong.error().as_deref()),
                (StatusCode::UNAUTHORIZED, Some("invalid_client")),
                "{other}"
            );
        }
        // An unsupported request falls back to the first supported method.
        assert_eq!(
            register(&auth, "none").await["token_endpoint_auth_method"],
            "client_secret_basic"
        );
        assert_eq!(auth.registration_count(), 3);
        assert_eq!(
            auth.registrations()[2]["token_endpoint_auth_method"],
            "none"
        );
    }

    #[tokio::test]
    async fn authorize_answers_iss_and_denials_and_accepts_cimd_urls() {
        let auth = AuthServer::start(AsOptions {
            iss_parameter_supported: true,
            client_id_metadata_document_supported: true,
            ..AsOptions::default()
        })
        .await;
        let cimd = "https://client.example/metadata.json";
        let redirect = authorize(&auth, cimd, &[]).await;
        assert_eq!(first(&redirect, "iss"), Some(auth.issuer()));
        auth.update(|o| {
            o.iss_parameter_supported = false;
            o.iss_param = IssParam::Correct;
        });
        let redirect = authorize(&auth, cimd, &[]).await;
        assert_eq!(first(&redirect, "iss"), Some(auth.issuer()));
        auth.update(|o| o.iss_param = IssParam::Wrong("https://evil.example".into()));
        assert_eq!(
            first(&authorize(&auth, cimd, &[]).await, "iss").as_deref(),
            Some("https://evil.example")
        );
        auth.update(|o| {
            o.iss_param = IssParam::Omitted;
            o.consent = Consent::Deny;
        });
        let denied = authorize(&auth, cimd, &[]).await;
        let seen = auth.seen_at("/authorize");
        assert_eq!(seen[3].query_param("client_id").as_deref(), Some(cimd));
        assert_eq!(first(&denied, "error").as_deref(), Some("access_denied"));
        assert_eq!(first(&denied, "state").as_deref(), Some("st-1"));
        assert_eq!(first(&denied, "code"), None);
        assert_eq!(first(&denied, "iss"), None);

        // Unknown clients and a missing challenge are refused without a redirect.
        let q = format!(
            "response_type=code&client_id=unknown&redirect_uri={REDIRECT}&code_challenge=x&code_challenge_method=S256"
        );
        let unknown = get(&format!("{}?{q}", auth.endpoint("/authorize"))).await;
        assert_eq!(unknown.status, 400);
        let q = format!("response_type=code&client_id={cimd}&redirect_uri={REDIRECT}");
        assert_eq!(
            get(&format!("{}?{q}", auth.endpoint("/authorize")))
                .await
                .status,
            400
        );
        let q = format!(
            "response_type=code&client_id={cimd}&redirect_uri={REDIRECT}&code_challenge=x&code_challenge_method=plain"
        );
        assert_eq!(
            get(&format!("{}?{q}", auth.endpoint("/authorize")))
                .await
                .status,
            400
        );
    }

    async fn token_for(auth: &AuthServer, scope: &str, resource: &str) -> String {
        let id = register(auth, "none").await["client_id"]
            .as_str()
            .unwrap()
            .to_owned();
        let code = code(auth, &id, &[("scope", scope), ("resource", resource)]).await;
        let form = [
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", REDIRECT),
            ("code_verifier", VERIFIER),
            ("client_id", &id),
        ];
        let answer = post_form(&auth.endpoint("/token"), &[], &form).await;
        answer.json()["access_token"].as_str().unwrap().to_owned()
    }

    fn rpc(method: &str) -> Value {
        json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": {} })
    }

    #[tokio::test]
    async fn the_resource_challenges_with_401_and_serves_its_metadata() {
        let auth = AuthServer::start(AsOptions::default()).await;
        let resource = Resource::start(
            &auth,
            ResourceOptions {
                scopes_supported: Some(strings(&["read"])),
                ..ResourceOptions::default()
            },
        )
        .await;
        assert_ne!(resource.url(), auth.url("/mcp"));
        let prm_url = resource.origin_url("/.well-known/oauth-protected-resource/mcp");
        assert_eq!(resource.prm_url(), prm_url);

        let bare = post_json(&resource.url(), &[], &rpc("initialize")).await;
        assert_eq!(bare.status, 401);
        assert_eq!(
            bare.header("www-authenticate"),
            Some(&*format!("Bearer resource_metadata=\"{prm_url}\""))
        );
        let bad = post_json(
            &resource.url(),
            &[("authorization", "Bearer nope")],
            &rpc("initialize"),
        )
        .await;
        assert_eq!(
            bad.header("www-authenticate"),
            Some(&*format!(
                "Bearer resource_metadata=\"{prm_url}\", error=\"invalid_token\""
            ))
        );

        let prm = get(&prm_url).await;
        assert_eq!(prm.status, 200);
        assert_eq!(prm.json()["resource"], resource.url());
        assert_eq!(prm.json()["authorization_servers"], json!([auth.issuer()]));
        assert_eq!(prm.json()["scopes_supported"], json!(["read"]));
        assert_eq!(
            get(&resource.origin_url("/.well-known/oauth-protected-resource"))
                .await
                .status,
            404
        );

        let token = token_for(&auth, "read", &resource.url()).await;
        let bearer = format!("Bearer {token}");
        let ok = post_json(
            &resource.url(),
            &[("authorization", &bearer)],
            &rpc("initialize"),
        )
        .await;
        assert_eq!(ok.status, 200);
        assert_eq!(ok.json()["result"]["serverInfo"]["name"], "mock");
        assert_eq!(
            resource.bearers(),
            vec![None, Some("nope".to_owned()), Some(token.clone())]
        );

        // Revoked: 401 invalid_token again.
        assert!(auth.valid_token(&token).is_some());
        resource.revoke_all();
        assert!(auth.valid_token(&token).is_none());
        let revoked = post_json(
            &resource.url(),
            &[("authorization", &bearer)],
            &rpc("tools/list"),
        )
        .await;
        assert_eq!(revoked.status, 401);
        assert!(
            revoked
                .header("www-authenticate")
                .unwrap()
                .contains("error=\"invalid_token\"")
        );

        // One revoked token, another still good.
        let (one, two) = (
            token_for(&auth, "read", &resource.url()).await,
            token_for(&auth, "read", &resource.url()).await,
        );
        auth.revoke(&one);
        let with = |t: &str| format!("Bearer {t}");
        assert_eq!(
            post_json(
                &resource.url(),
                &[("authorization", &with(&one))],
                &rpc("tools/list")
            )
            .await
            .status,
            401
        );
        assert_eq!(
            post_json(
                &resource.url(),
                &[("authorization", &with(&two))],
                &rpc("tools/list")
            )
            .await
            .status,
            200
        );

        // A token for another resource is refused too.
        let elsewhere = token_for(&auth, "read", "http://127.0.0.1:1/mcp").await;
        let other = post_json(
            &resource.url(),
            &[("authorization", &format!("Bearer {elsewhere}"))],
            &rpc("tools/list"),
        )
        .await;
        assert_eq!(other.status, 401);

        // Root PRM, a bare challenge with a scope, no invalid_token error.
        resource.update(|o| {
            o.prm_at = PrmAt::Root;
            o.challenge = Challenge::Bare;
            o.challenge_scope = Some("read write".into());
            o.invalid_token_error = false;
        });
        assert_eq!(
            get(&resource.origin_url("/.well-known/oauth-protected-resource"))
                .await
                .status,
            200
        );
        assert_eq!(get(&prm_url).await.status, 404);
        let bare = post_json(
            &resource.url(),
            &[("authorization", &bearer)],
            &rpc("tools/list"),
        )
        .await;
        assert_eq!(
            bare.header("www-authenticate"),
            Some("Bearer scope=\"read write\"")
        );
        resource.update(|o| {
            o.challenge = Challenge::Absent;
            o.prm_at = PrmAt::Path("/prm.json".into());
        });
        assert_eq!(resource.prm_url(), resource.origin_url("/prm.json"));
        assert_eq!(get(&resource.prm_url()).await.status, 200);
        let absent = post_json(&resource.url(), &[], &rpc("tools/list")).await;
        assert_eq!(
            (absent.status, absent.header("www-authenticate")),
            (StatusCode::UNAUTHORIZED, None)
        );
    }

    #[tokio::test]
    async fn the_resource_answers_403_insufficient_scope() {
        let auth = AuthServer::start(AsOptions::default()).await;
        let resource = Resource::start(
            &auth,
            ResourceOptions {
                required_scopes: [("tools/call".to_owned(), strings(&["read", "write"]))]
                    .into_iter()
                    .collect(),
                ..ResourceOptions::default()
            },
        )
        .await;
        let bearer = format!("Bearer {}", token_for(&auth, "read", &resource.url()).await);
        let headers = [("authorization", bearer.as_str())];
        assert_eq!(
            post_json(&resource.url(), &headers, &rpc("tools/list"))
                .await
                .status,
            200
        );
        let call = post_json(&resource.url(), &headers, &rpc("tools/call")).await;
        assert_eq!(call.status, 403);
        let expected = format!(
            "Bearer error=\"insufficient_scope\", scope=\"read write\", resource_metadata=\"{}\"",
            resource.prm_url()
        );
        assert_eq!(call.header("www-authenticate"), Some(expected.as_str()));

        let bearer = format!(
            "Bearer {}",
            token_for(&auth, "read write", &resource.url()).await
        );
        let headers = [("authorization", bearer.as_str())];
        let call = post_json(&resource.url(), &headers, &rpc("tools/call")).await;
        assert_eq!(call.status, 200);

        resource.update(|o| o.always_insufficient = Some("admin".into()));
        let always = post_json(&resource.url(), &headers, &rpc("tools/list")).await;
        assert_eq!(always.status, 403);
        assert!(
            always
                .header("www-authenticate")
                .unwrap()
                .contains("scope=\"admin\"")
        );
    }

    #[tokio::test]
    async fn a_co_hosted_as_and_a_redirect_to_another_origin() {
        let auth = AuthServer::start(AsOptions::default()).await;
        let resource = Resource::start(
            &auth,
            ResourceOptions {
                prm_at: PrmAt::Nowhere,
                co_host_auth: true,
                ..ResourceOptions::default()
            },
        )
        .await;
        let doc = get(&resource.origin_url("/.well-known/oauth-authorization-server")).await;
        assert_eq!(doc.status, 200);
        assert_eq!(doc.json()["issuer"], resource.origin_url(""));
        assert_eq!(doc.json()["token_endpoint"], resource.origin_url("/token"));
        let client = post_json(
            &resource.origin_url("/register"),
            &[],
            &json!({ "redirect_uris": [REDIRECT] }),
        )
        .await;
        assert_eq!(client.status, 201);
        assert_eq!(auth.registration_count(), 1);
        assert!(auth.seen().is_empty());
        assert_eq!(
            get(&resource.origin_url("/.well-known/oauth-protected-resource/mcp"))
                .await
                .status,
            404
        );

        let other = OtherOrigin::start().await;
        resource.update(|o| o.redirect_to = Some(other.url("/mcp")));
        let moved = post_json(
            &resource.url(),
            &[("authorization", "Bearer t")],
            &rpc("tools/list"),
        )
        .await;
        assert_eq!(
            (moved.status, moved.header("location")),
            (StatusCode::TEMPORARY_REDIRECT, Some(&*other.url("/mcp")))
        );
        assert!(other.authorizations().is_empty());
        assert_eq!(
            post_json(
                &other.url("/mcp"),
                &[("authorization", "Bearer t")],
                &rpc("x")
            )
            .await
            .status,
            404
        );
        assert_eq!(other.authorizations(), vec!["Bearer t".to_owned()]);
    }
}
