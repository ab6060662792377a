//! Token requests, written by hand: the form, the client authentication of a token request
//! ([`ClientAuthHeaders`]), DPoP at the token endpoint with its one nonce retry, and the one
//! token response decoder ([`TokenResponse`]) and error reading that every token request
//! shares (the code flow's, the refresh's and client credentials in `token.rs` too). The grants
//! themselves here are the ones beyond RFC 6749: the RFC 7523 JWT bearer grant of workload
//! identity and the RFC 8693 token exchange of enterprise-managed authorization.
//!
//! Every request goes through [`AuthHttp`] (bounded in time and size); no grant is ever
//! retried, except for the one DPoP nonce round trip RFC 9449 §8 defines, which is a part of
//! the same request, not a second attempt.

use std::time::Duration;

use bytes::Bytes;
use http::Method;
use http::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderValue};
use serde::Deserialize;
use url::Url;

use super::Authorizer;
use super::discovery::Discovered;
use super::dpop::{DPOP, DpopKey, is_use_dpop_nonce};
use super::failure::{AuthFailure, fail};
use super::fetch::{AuthHttp, Fetched, require_tls};
use super::jwt::{client_assertion, read_assertion};
use super::members::{MAX_ANSWER_TEXT_BYTES, MAX_CREDENTIAL_BYTES, Members};
use super::settings::{ClientAuthMethod, Grant, OAuthSettings};
use super::types::{ClientRegistration, Secret, Tokens, unix_now};

/// `grant_type` of the JWT authorization grant (RFC 7523 §2.1).
pub(crate) const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
/// `grant_type` of a token exchange (RFC 8693 §2.1).
pub(crate) const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
/// The token type of an Identity Assertion JWT Authorization Grant.
pub(crate) const ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";
/// The token type of an OpenID Connect ID token (RFC 8693 §3).
pub(crate) const ID_TOKEN: &str = "urn:ietf:params:oauth:token-type:id_token";
/// `client_assertion_type` of `private_key_jwt` (RFC 7523 §2.2).
pub(crate) const CLIENT_ASSERTION_TYPE: &str =
    "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// The longest `error_description` of a token error kept in a message.
const MAX_ERROR_DESCRIPTION: usize = 300;

/// How a token request authenticates the client: form fields and an `Authorization` header,
/// made once per request (a `private_key_jwt` assertion has its own `jti`). `Debug` hides the
/// values.
#[derive(Clone, Default)]
pub(crate) struct ClientAuthHeaders {
    /// Form fields: `client_id`, `client_secret`, `client_assertion_type`, `client_assertion`.
    pub(crate) form: Vec<(&'static str, String)>,
    /// `Authorization: Basic ...`, for `client_secret_basic`.
    pub(crate) authorization: Option<HeaderValue>,
    /// The credentials inside, to scrub from error messages.
    pub(crate) secrets: Vec<String>,
}

impl std::fmt::Debug for ClientAuthHeaders {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let fields: Vec<&str> = self.form.iter().map(|(name, _)| *name).collect();
        f.debug_struct("ClientAuthHeaders")
            .field("form", &fields)
            .field("basic", &self.authorization.is_some())
            .finish()
    }
}

impl ClientAuthHeaders {
    /// No client authentication and no `client_id` (a workload whose assertion names it).
    pub(crate) fn anonymous() -> Self {
        ClientAuthHeaders::default()
    }

    /// The client authentication `method` needs: `none` puts `client_id` in the form;
    /// `client_secret_basic` sends `Authorization: Basic` with the form-urlencoded id and
    /// secret (RFC 6749 §2.3.1); `client_secret_post` puts both in the form;
    /// `private_key_jwt` signs a client assertion with `key` (algorithm `key_alg`, else the
    /// key's) for `audience`, the authorization server's issuer (RFC 7523 §3).
    pub(crate) fn new(
        method: ClientAuthMethod,
        client_id: &str,
        secret: Option<&Secret>,
        key: Option<&Secret>,
        key_alg: Option<&str>,
        audience: &str,
    ) -> Result<Self, AuthFailure> {
        let need_secret = || {
            secret.ok_or_else(|| {
                fail!(
                    Registration,
                    "token endpoint auth method `{}` needs a client secret, and none is configured",
                    method.as_str()
                )
            })
        };
        let mut auth = ClientAuthHeaders::default();
        match method {
            ClientAuthMethod::None => auth.form.push(("client_id", client_id.to_owned())),
            ClientAuthMethod::ClientSecretBasic => {
                let secret = need_secret()?;
                let encode = |s: &str| {
                    url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>()
                };
                let pair = format!("{}:{}", encode(client_id), encode(secret.expose()));
                let encoded =
                    base64::Engine::encode(&base64::engine::general_purpose::STANDARD, pair);
                let mut value =
                    HeaderValue::try_from(format!("Basic {encoded}")).map_err(|_| {
                        fail!(
                            Registration,
                            "the client credentials are not a valid header"
                        )
                    })?;
                value.set_sensitive(true);
                auth.authorization = Some(value);
                auth.secrets.push(secret.expose().to_owned());
                auth.secrets.push(encoded);
            }
            ClientAuthMethod::ClientSecretPost => {
                let secret = need_secret()?;
                auth.form.push(("client_id", client_id.to_owned()));
                auth.form
                    .push(("client_secret", secret.expose().to_owned()));
                auth.secrets.push(secret.expose().to_owned());
            }
            ClientAuthMethod::PrivateKeyJwt => {
                let key = key.ok_or_else(|| {
                    fail!(
                        Registration,
                        "token endpoint auth method `private_key_jwt` needs a client private key, \
                         and none is configured"
                    )
                })?;
                let assertion = client_assertion(key, key_alg, client_id, audience)?;
                auth.form
                    .push(("client_assertion_type", CLIENT_ASSERTION_TYPE.to_owned()));
                auth.form.push(("client_assertion", assertion.clone()));
                auth.secrets.push(assertion);
            }
        }
        Ok(auth)
    }

    /// Whether the form already names the client.
    fn has_client_id(&self) -> bool {
        self.form.iter().any(|(name, _)| *name == "client_id")
    }
}

/// The longest access token lifetime believed (one year): a larger `expires_in` counts as this
/// much, so a token that claims to live for ever is still refreshed once a year.
pub const MAX_TOKEN_LIFETIME: Duration = Duration::from_secs(365 * 24 * 60 * 60);

/// A token endpoint's successful answer (RFC 6749 §5.1, RFC 8693 §2.2.1): the one decoder of
/// every token answer, the code flow's and the refresh's included. `Debug` hides the tokens.
#[derive(Debug, Clone)]
pub(crate) struct TokenResponse {
    pub(crate) access_token: Secret,
    /// `Bearer`, `DPoP`, or `N_A` for a token exchange's assertion.
    pub(crate) token_type: Option<String>,
    /// Seconds, at most [`MAX_TOKEN_LIFETIME`] (see [`TokenResponse::decode`]).
    pub(crate) expires_in: Option<u64>,
    pub(crate) refresh_token: Option<Secret>,
    pub(crate) scope: Option<String>,
    pub(crate) issued_token_type: Option<String>,
}

impl TokenResponse {
    /// Reads a token answer's body: the tokens at most [`MAX_CREDENTIAL_BYTES`] each, the other
    /// text members [`MAX_ANSWER_TEXT_BYTES`]. `expires_in` is a whole number of seconds however the
    /// server wrote it (`3600`, `3600.0` or `"3600"`); a negative one counts as 0 (expired on
    /// arrival: refreshed before its first use), a larger one than [`MAX_TOKEN_LIFETIME`] as
    /// that; a fraction or any other text is refused. The error names the member that is wrong
    /// and why, never a value (the answer carries the tokens).
    pub(crate) fn decode(body: &[u8]) -> Result<TokenResponse, String> {
        let members = Members::parse(body)?;
        Ok(TokenResponse {
            access_token: Secret::new(members.required_text("access_token", MAX_CREDENTIAL_BYTES)?),
            token_type: members.text("token_type", MAX_ANSWER_TEXT_BYTES)?,
            expires_in: members
                .whole_number("expires_in")?
                .map(|secs| secs.min(MAX_TOKEN_LIFETIME.as_secs())),
            refresh_token: members
                .text("refresh_token", MAX_CREDENTIAL_BYTES)?
                .map(Secret::new),
            scope: members.text("scope", MAX_ANSWER_TEXT_BYTES)?,
            issued_token_type: members.text("issued_token_type", MAX_ANSWER_TEXT_BYTES)?,
        })
    }

    /// The tokens to keep: `token_type` `Bearer` or `DPoP` (as sent, compared without case;
    /// `Bearer` when absent; any other type is refused), `expires_at` = `now` + `expires_in`,
    /// the granted `scope`, else the requested one.
    pub(crate) fn into_tokens(
        self,
        resource: &str,
        requested_scope: Option<&str>,
        now: u64,
    ) -> Result<Tokens, AuthFailure> {
        let token_type = match self.token_type.as_deref() {
            None => "Bearer",
            Some(sent) if sent.eq_ignore_ascii_case("bearer") => "Bearer",
            Some(sent) if sent.eq_ignore_ascii_case("dpop") => "DPoP",
            Some(other) => {
                return Err(fail!(
                    Token,
                    "the token endpoint issued a token of type `{}`, which this client does not use",
                    escaped(other, 40)
                ));
            }
        };
        Ok(Tokens {
            access_token: self.access_token,
            token_type: token_type.to_owned(),
            refresh_token: self.refresh_token,
            expires_at: self.expires_in.map(|secs| now.saturating_add(secs)),
            issued_at: Some(now),
            scope: self.scope.or_else(|| requested_scope.map(str::to_owned)),
            resource: resource.to_owned(),
        })
    }
}

/// `text` with control and non-ASCII characters escaped, at most `cap` characters of it.
fn escaped(text: &str, cap: usize) -> String {
    let mut out: String = text
        .chars()
        .take(cap)
        .flat_map(char::escape_default)
        .collect();
    if text.chars().count() > cap {
        out.push_str("...");
    }
    out
}

/// What an OAuth error answer says (RFC 6749 §5.2, RFC 7591 §3.2.2): `(HTTP 400,
/// invalid_client): description`, its `error` and `error_description` escaped and cut short, or
/// `(HTTP 400)` alone when the body is not such an error. The body itself is never quoted (it
/// might echo a credential).
pub(crate) fn refusal(fetched: &Fetched) -> String {
    #[derive(Deserialize)]
    struct ErrorBody {
        error: String,
        #[serde(default)]
        error_description: Option<String>,
    }
    let status = fetched.status.as_u16();
    match serde_json::from_slice::<ErrorBody>(&fetched.body) {
        Ok(body) => {
            let description = body
                .error_description
                .map(|d| format!(": {}", escaped(&d, MAX_ERROR_DESCRIPTION)))
                .unwrap_or_default();
            format!("(HTTP {status}, {}){description}", escaped(&body.error, 64))
        }
        Err(_) => format!("(HTTP {status})"),
    }
}

/// The failure a token endpoint's error answer means: see [`refusal`].
pub(crate) fn token_error(fetched: &Fetched) -> AuthFailure {
    fail!(
        Token,
        "the token endpoint refused the request {}",
        refusal(fetched)
    )
}

/// A successful answer as a [`TokenResponse`], or the error it is. Neither error quotes the
/// body (it carries tokens): a refusal says its `error` and `error_description`, a broken
/// answer which member is wrong.
pub(crate) fn token_response(fetched: &Fetched) -> Result<TokenResponse, AuthFailure> {
    if !fetched.status.is_success() {
        return Err(token_error(fetched));
    }
    TokenResponse::decode(&fetched.body).map_err(|why| {
        fail!(
            Token,
            "the token endpoint's answer (HTTP {}) is not a token response: {why}",
            fetched.status.as_u16()
        )
    })
}

/// `message` with every one of `secrets` replaced by `[REDACTED]`.
fn scrub(mut failure: AuthFailure, secrets: &[&str]) -> AuthFailure {
    for secret in secrets.iter().filter(|s| s.len() >= 4) {
        if failure.message.contains(secret) {
            failure.message = failure.message.replace(secret, sidewire_process::REDACTED);
        }
    }
    failure
}

/// Sends one token request (a form POST of `body`) with `headers`; with a DPoP `key`, it
/// carries a proof (`htm` POST, `htu` the endpoint, the endpoint origin's last nonce), every
/// answer's `DPoP-Nonce` is remembered, and a `use_dpop_nonce` answer is retried exactly once
/// with a new proof carrying the nonce. This is the DPoP hook of every token request,
/// the code flow's too.
///
/// Cancel safety: dropping the future abandons the request; nothing is kept but a nonce.
pub(crate) async fn send_token_request(
    http: &AuthHttp,
    url: &Url,
    mut headers: HeaderMap,
    body: Bytes,
    dpop: Option<&DpopKey>,
) -> Result<Fetched, AuthFailure> {
    // Every token request comes through here, a refresh with a token endpoint stored by an
    // earlier run and an identity provider's token exchange included.
    require_tls(url, "token endpoint")?;
    headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_static("application/x-www-form-urlencoded"),
    );
    headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
    let send = |headers: HeaderMap| {
        let body = body.clone();
        async move {
            http.send(Method::POST, url, headers, body)
                .await
                .map_err(|err| fail!(Token, "token request failed: {err}"))
        }
    };
    let Some(key) = dpop else {
        return send(headers).await;
    };
    let with_proof = |mut headers: HeaderMap| -> Result<HeaderMap, AuthFailure> {
        let proof = key.proof_for("POST", url, None)?;
        let value = HeaderValue::try_from(proof)
            .map_err(|_| fail!(Unsupported, "a DPoP proof is not a valid header"))?;
        headers.insert(DPOP, value);
        Ok(headers)
    };
    let fetched = send(with_proof(headers.clone())?).await?;
    key.remember_nonce(url, &fetched.headers);
    if !is_use_dpop_nonce(fetched.status.as_u16(), &fetched.headers, &fetched.body) {
        return Ok(fetched);
    }
    // RFC 9449 §8: the same request again, once, with a new proof carrying the nonce (just
    // remembered). A second `use_dpop_nonce` is the answer.
    let retried = send(with_proof(headers)?).await?;
    key.remember_nonce(url, &retried.headers);
    Ok(retried)
}

/// Posts a token request form with the client authentication, and reads the answer as a
/// token response. Error messages never hold the assertion, secret or token sent.
pub(crate) async fn post_grant(
    http: &AuthHttp,
    url: &Url,
    mut form: Vec<(&'static str, String)>,
    client_id: Option<&str>,
    client_auth: &ClientAuthHeaders,
    dpop: Option<&DpopKey>,
    sent_secrets: &[&str],
) -> Result<TokenResponse, AuthFailure> {
    if let Some(id) = client_id
        && !client_auth.has_client_id()
    {
        form.push(("client_id", id.to_owned()));
    }
    form.extend(client_auth.form.iter().cloned());
    let body = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(form.iter().map(|(k, v)| (*k, v.as_str())))
        .finish();
    let mut headers = HeaderMap::new();
    if let Some(value) = &client_auth.authorization {
        headers.insert(AUTHORIZATION, value.clone());
    }
    let mut secrets: Vec<&str> = client_auth.secrets.iter().map(String::as_str).collect();
    secrets.extend_from_slice(sent_secrets);
    let result = match send_token_request(http, url, headers, Bytes::from(body), dpop).await {
        Ok(fetched) => token_response(&fetched),
        Err(failure) => Err(failure),
    };
    result.map_err(|failure| scrub(failure, &secrets))
}

/// The JWT authorization grant (RFC 7523 §2.1): `grant_type=…jwt-bearer`, `assertion`, the
/// optional `scope`, and `resource` (RFC 8707), with `client_id` when given and the client
/// authentication, plus a DPoP proof when `dpop` is given. A refused request is the answer:
/// the caller must not try again or fall back to another grant (a workload's assertion does
/// not improve).
///
/// Cancel safety: dropping the future abandons the request.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn jwt_bearer(
    http: &AuthHttp,
    token_endpoint: &Url,
    assertion: &Secret,
    client_id: Option<&str>,
    client_auth: &ClientAuthHeaders,
    scope: Option<&str>,
    resource: &str,
    dpop: Option<&DpopKey>,
) -> Result<TokenResponse, AuthFailure> {
    let mut form = vec![
        ("grant_type", JWT_BEARER.to_owned()),
        ("assertion", assertion.expose().to_owned()),
    ];
    if let Some(scope) = scope {
        form.push(("scope", scope.to_owned()));
    }
    form.push(("resource", resource.to_owned()));
    post_grant(
        http,
        token_endpoint,
        form,
        client_id,
        client_auth,
        dpop,
        &[assertion.expose()],
    )
    .await
}

/// The client credentials grant (RFC 6749 §4.4) with any client authentication, `scope` and
/// `resource`, DPoP when given: the shape the conformance suite checks, by which the tests pin
/// [`ClientAuthHeaders`]. (The session's client credentials post the same form through
/// `token.rs`.)
///
/// Cancel safety: dropping the future abandons the request.
#[cfg(test)]
pub(crate) async fn client_credentials(
    http: &AuthHttp,
    token_endpoint: &Url,
    client_auth: &ClientAuthHeaders,
    scope: Option<&str>,
    resource: &str,
    dpop: Option<&DpopKey>,
) -> Result<TokenResponse, AuthFailure> {
    let mut form = vec![("grant_type", "client_credentials".to_owned())];
    if let Some(scope) = scope {
        form.push(("scope", scope.to_owned()));
    }
    form.push(("resource", resource.to_owned()));
    post_grant(http, token_endpoint, form, None, client_auth, dpop, &[]).await
}

/// Step one of enterprise-managed authorization: exchanges the user's ID token at the
/// identity provider (RFC 8693) for an Identity Assertion JWT Authorization Grant naming
/// `audience` (the authorization server's issuer) and `resource`, to be presented with
/// [`jwt_bearer`]. The answer must say `issued_token_type` is an ID-JAG.
///
/// Cancel safety: dropping the future abandons the request.
pub(crate) async fn token_exchange_id_jag(
    http: &AuthHttp,
    idp_token_endpoint: &Url,
    subject_id_token: &Secret,
    audience: &str,
    resource: &str,
    scope: Option<&str>,
    idp_client_id: Option<&str>,
) -> Result<Secret, AuthFailure> {
    let mut form = vec![
        ("grant_type", TOKEN_EXCHANGE.to_owned()),
        ("requested_token_type", ID_JAG.to_owned()),
        ("subject_token", subject_id_token.expose().to_owned()),
        ("subject_token_type", ID_TOKEN.to_owned()),
        ("audience", audience.to_owned()),
        ("resource", resource.to_owned()),
    ];
    if let Some(scope) = scope {
        form.push(("scope", scope.to_owned()));
    }
    let response = post_grant(
        http,
        idp_token_endpoint,
        form,
        idp_client_id,
        &ClientAuthHeaders::anonymous(),
        None,
        &[subject_id_token.expose()],
    )
    .await
    .map_err(|failure| {
        AuthFailure::new(
            failure.kind,
            format!("identity provider: {}", failure.message),
        )
    })?;
    match response.issued_token_type.as_deref() {
        Some(ID_JAG) => Ok(response.access_token),
        other => Err(fail!(
            Token,
            "identity provider: the token exchange issued {} instead of an ID-JAG",
            other.map_or_else(
                || "no token type".to_owned(),
                |t| format!("`{}`", escaped(t, 100))
            )
        )),
    }
}

/// What a session's jwt-bearer grant needs: the connection's HTTP client, authorizer and
/// settings, the client's registration, the discovered servers, and the DPoP key when the
/// authorization server does DPoP.
pub(crate) struct GrantCall<'a> {
    pub(crate) http: &'a AuthHttp,
    pub(crate) authorizer: &'a Authorizer,
    pub(crate) settings: &'a OAuthSettings,
    pub(crate) client: &'a ClientRegistration,
    pub(crate) discovered: &'a Discovered,
    pub(crate) dpop: Option<&'a DpopKey>,
}

/// Tokens from the settings' jwt-bearer grant: [`Grant::JwtBearer`] presents the workload's
/// assertion, read now; [`Grant::TokenExchange`] first exchanges the user's ID token at the
/// identity provider for an ID-JAG (audience the issuer unless configured, the discovered
/// resource) and presents that. Either way the client authenticates as its registration says
/// (`none`, a secret, or `private_key_jwt` for the issuer), and a refusal is final. Every
/// credential handled is given to the authorizer's redactor.
///
/// Cancel safety: dropping the future abandons the request in flight; nothing is stored.
pub(crate) async fn obtain(
    call: &GrantCall<'_>,
    scope: Option<&str>,
) -> Result<Tokens, AuthFailure> {
    let GrantCall {
        http,
        authorizer,
        settings,
        client,
        discovered,
        dpop,
    } = *call;
    let endpoint = discovered
        .metadata
        .token_endpoint
        .as_deref()
        .ok_or_else(|| fail!(Metadata, "the authorization server has no token endpoint"))?;
    let endpoint = Url::parse(endpoint)
        .map_err(|err| fail!(Metadata, "invalid token endpoint {endpoint:?}: {err}"))?;
    let method =
        ClientAuthMethod::from_name(&client.token_endpoint_auth_method).ok_or_else(|| {
            fail!(
                Unsupported,
                "the client's token endpoint auth method {:?} is not supported",
                client.token_endpoint_auth_method
            )
        })?;
    let auth = ClientAuthHeaders::new(
        method,
        &client.client_id,
        client.client_secret.as_ref(),
        settings.client_private_key.as_ref(),
        settings.client_key_alg.as_deref(),
        &discovered.issuer,
    )?;
    for secret in &auth.secrets {
        authorizer.remember_secret(secret);
    }
    let assertion = match &settings.grant {
        Grant::JwtBearer { assertion } => read_assertion(assertion)?,
        Grant::TokenExchange {
            idp_token_endpoint,
            subject_token,
            idp_client_id,
            audience,
        } => {
            let subject = read_assertion(subject_token)?;
            authorizer.remember_secret(subject.expose());
            let idp = Url::parse(idp_token_endpoint).map_err(|err| {
                fail!(Metadata, "invalid identity provider token endpoint: {err}")
            })?;
            token_exchange_id_jag(
                http,
                &idp,
                &subject,
                audience.as_deref().unwrap_or(&discovered.issuer),
                &discovered.resource,
                scope,
                idp_client_id.as_deref(),
            )
            .await?
        }
        _ => return Err(fail!(Unsupported, "not a jwt-bearer grant")),
    };
    authorizer.remember_secret(assertion.expose());
    let response = jwt_bearer(
        http,
        &endpoint,
        &assertion,
        None,
        &auth,
        scope,
        &discovered.resource,
        dpop,
    )
    .await?;
    authorizer.remember_secret(response.access_token.expose());
    if let Some(refresh) = &response.refresh_token {
        authorizer.remember_secret(refresh.expose());
    }
    response.into_tokens(&discovered.resource, scope, unix_now())
}

#[cfg(test)]
mod tests;
