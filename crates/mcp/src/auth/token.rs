//! Token endpoint requests of the grants `oauth2` knows (authorization code with PKCE, refresh,
//! client credentials), with the client authentication the registration dictates, the
//! resource indicator (RFC 8707) on every request, and DPoP proofs (RFC 9449) when the
//! connection uses them. `oauth2` builds the requests and reads the answers; they travel over
//! the connection's own HTTP client through [`AuthHttp`], which adds the proof and retries once
//! when the server asks for a DPoP nonce.

use std::borrow::Cow;
use std::sync::Arc;

use bytes::Bytes;
use oauth2::basic::{BasicClient, BasicErrorResponse, BasicTokenResponse};
use oauth2::{
    AuthType, AuthorizationCode, ClientId, ClientSecret, EndpointNotSet, EndpointSet,
    PkceCodeVerifier, RedirectUrl, RefreshToken, RequestTokenError, Scope, TokenResponse, TokenUrl,
};
use url::Url;

use super::Authorizer;
use super::dpop::DpopKey;
use super::failure::{AuthFailure, fail};
use super::fetch::AuthHttp;
use super::settings::{ClientAuthMethod, OAuthSettings};
use super::types::{ClientRegistration, Secret, Tokens, unix_now};

/// What one token request needs.
pub(crate) struct TokenCall<'a> {
    pub(crate) http: &'a AuthHttp,
    pub(crate) authorizer: &'a Authorizer,
    pub(crate) settings: &'a OAuthSettings,
    pub(crate) client: &'a ClientRegistration,
    pub(crate) token_endpoint: &'a str,
    /// The resource indicator, as the metadata wrote it.
    pub(crate) resource: &'a str,
    /// The authorization server's issuer (the audience of a client assertion).
    pub(crate) issuer: &'a str,
    pub(crate) prover: Option<Arc<DpopKey>>,
}

/// The error of the HTTP client handed to `oauth2`.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct Transfer(String);

/// The HTTP client handed to `oauth2`: [`TokenCall::send`], boxed as a `Send` future.
struct OAuthHttp<'a, 'b>(&'a TokenCall<'b>);

impl<'c> oauth2::AsyncHttpClient<'c> for OAuthHttp<'_, '_> {
    type Error = Transfer;
    type Future = std::pin::Pin<
        Box<dyn std::future::Future<Output = Result<oauth2::HttpResponse, Transfer>> + Send + 'c>,
    >;

    fn call(&'c self, request: oauth2::HttpRequest) -> Self::Future {
        Box::pin(self.0.send(request))
    }
}

type Configured =
    BasicClient<EndpointNotSet, EndpointNotSet, EndpointNotSet, EndpointNotSet, EndpointSet>;

impl TokenCall<'_> {
    fn method(&self) -> Result<ClientAuthMethod, AuthFailure> {
        ClientAuthMethod::from_name(&self.client.token_endpoint_auth_method).ok_or_else(|| {
            fail!(
                Unsupported,
                "the client's token endpoint auth method {:?} is not supported",
                self.client.token_endpoint_auth_method
            )
        })
    }

    fn oauth_client(&self) -> Result<Configured, AuthFailure> {
        let token_url = TokenUrl::new(self.token_endpoint.to_owned()).map_err(|err| {
            fail!(
                Metadata,
                "invalid token endpoint {:?}: {err}",
                self.token_endpoint
            )
        })?;
        let mut client =
            BasicClient::new(ClientId::new(self.client.client_id.clone())).set_token_uri(token_url);
        match self.method()? {
            ClientAuthMethod::ClientSecretBasic => {
                client = client.set_auth_type(AuthType::BasicAuth);
                if let Some(secret) = &self.client.client_secret {
                    client =
                        client.set_client_secret(ClientSecret::new(secret.expose().to_owned()));
                }
            }
            ClientAuthMethod::ClientSecretPost => {
                client = client.set_auth_type(AuthType::RequestBody);
                if let Some(secret) = &self.client.client_secret {
                    client =
                        client.set_client_secret(ClientSecret::new(secret.expose().to_owned()));
                }
            }
            ClientAuthMethod::None | ClientAuthMethod::PrivateKeyJwt => {
                client = client.set_auth_type(AuthType::RequestBody);
            }
        }
        Ok(client)
    }

    /// The client assertion parameters of `private_key_jwt` (RFC 7523 §2.2), when that is
    /// the method.
    fn assertion(&self) -> Result<Vec<(&'static str, String)>, AuthFailure> {
        if self.method()? != ClientAuthMethod::PrivateKeyJwt {
            return Ok(Vec::new());
        }
        let key = self.settings.client_private_key.as_ref().ok_or_else(|| {
            fail!(
                Registration,
                "private_key_jwt needs a private key (oauth.clientPrivateKey)"
            )
        })?;
        let jwt = super::jwt::client_assertion(
            key,
            self.settings.client_key_alg.as_deref(),
            &self.client.client_id,
            self.issuer,
        )?;
        self.authorizer.remember_secret(&jwt);
        Ok(vec![
            (
                "client_assertion_type",
                "urn:ietf:params:oauth:client-assertion-type:jwt-bearer".to_owned(),
            ),
            ("client_assertion", jwt),
        ])
    }

    /// Sends one `oauth2` request over [`AuthHttp`] through the grants' token request, which
    /// adds a DPoP proof when the connection has a key (again once with the server's nonce
    /// when it asks for one).
    async fn send(&self, request: oauth2::HttpRequest) -> Result<oauth2::HttpResponse, Transfer> {
        let (parts, body) = request.into_parts();
        let url = Url::parse(&parts.uri.to_string()).map_err(|err| Transfer(err.to_string()))?;
        let fetched = super::grants::send_token_request(
            self.http,
            &url,
            parts.headers,
            Bytes::from(body),
            self.prover.as_deref(),
        )
        .await
        .map_err(|err| Transfer(err.message))?;
        let mut response = http::Response::new(fetched.body.to_vec());
        *response.status_mut() = fetched.status;
        *response.headers_mut() = fetched.headers;
        Ok(response)
    }

    /// Turns `oauth2`'s answer into tokens for this resource.
    fn finish(
        &self,
        answer: Result<BasicTokenResponse, RequestTokenError<Transfer, BasicErrorResponse>>,
        requested_scope: Option<&str>,
    ) -> Result<Tokens, AuthFailure> {
        let response = answer.map_err(|err| self.describe(err))?;
        let token_type = match response.token_type() {
            oauth2::basic::BasicTokenType::Bearer => "Bearer".to_owned(),
            oauth2::basic::BasicTokenType::Extension(other)
                if other.eq_ignore_ascii_case("dpop") =>
            {
                "DPoP".to_owned()
            }
            other => {
                return Err(fail!(
                    Token,
                    "the token endpoint issued a token of type {:?}, which this client does not use",
                    other.as_ref()
                ));
            }
        };
        let access = response.access_token().secret().to_owned();
        self.authorizer.remember_secret(&access);
        let refresh = response.refresh_token().map(|token| {
            self.authorizer.remember_secret(token.secret());
            Secret::new(token.secret().to_owned())
        });
        let scope = response
            .scopes()
            .map(|scopes| {
                scopes
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .or_else(|| requested_scope.map(str::to_owned));
        Ok(Tokens {
            access_token: Secret::new(access),
            token_type,
            refresh_token: refresh,
            expires_at: response
                .expires_in()
                .map(|after| unix_now().saturating_add(after.as_secs())),
            issued_at: Some(unix_now()),
            scope,
            resource: self.resource.to_owned(),
        })
    }

    fn describe(&self, err: RequestTokenError<Transfer, BasicErrorResponse>) -> AuthFailure {
        let text = match err {
            RequestTokenError::ServerResponse(response) => {
                let mut text = format!("the token endpoint refused: {}", response.error().as_ref());
                if let Some(description) = response.error_description() {
                    text.push_str(" (");
                    text.push_str(&crate::http::answer::quote(description.as_bytes()));
                    text.push(')');
                }
                text
            }
            RequestTokenError::Request(err) => format!("the token request failed: {err}"),
            RequestTokenError::Parse(err, body) => format!(
                "the token endpoint's answer is invalid ({err}): {}",
                crate::http::answer::quote(&body)
            ),
            RequestTokenError::Other(text) => {
                format!("the token endpoint's answer is invalid: {text}")
            }
        };
        fail!(Token, "{}", self.authorizer.redact(&text))
    }

    fn resource_param(&self) -> (Cow<'_, str>, Cow<'_, str>) {
        (Cow::Borrowed("resource"), Cow::Borrowed(self.resource))
    }

    /// Exchanges an authorization code (RFC 6749 §4.1.3 with PKCE, RFC 7636 §4.5).
    pub(crate) async fn exchange_code(
        &self,
        code: &str,
        verifier: PkceCodeVerifier,
        redirect_uri: &str,
        requested_scope: Option<&str>,
    ) -> Result<Tokens, AuthFailure> {
        let redirect = RedirectUrl::new(redirect_uri.to_owned())
            .map_err(|err| fail!(Callback, "invalid redirect URI: {err}"))?;
        let client = self.oauth_client()?.set_redirect_uri(redirect);
        let assertion = self.assertion()?;
        let (name, value) = self.resource_param();
        let mut request = client
            .exchange_code(AuthorizationCode::new(code.to_owned()))
            .set_pkce_verifier(verifier)
            .add_extra_param(name, value);
        for (name, value) in &assertion {
            request = request.add_extra_param(*name, value.as_str());
        }
        let answer = request.request_async(&OAuthHttp(self)).await;
        self.finish(answer, requested_scope)
    }

    /// Refreshes (RFC 6749 §6), keeping the old refresh token when no new one is issued.
    pub(crate) async fn refresh(&self, tokens: &Tokens) -> Result<Tokens, AuthFailure> {
        let Some(refresh_token) = &tokens.refresh_token else {
            return Err(fail!(Token, "no refresh token"));
        };
        let client = self.oauth_client()?;
        let assertion = self.assertion()?;
        let token = RefreshToken::new(refresh_token.expose().to_owned());
        let (name, value) = self.resource_param();
        let mut request = client
            .exchange_refresh_token(&token)
            .add_extra_param(name, value);
        for (name, value) in &assertion {
            request = request.add_extra_param(*name, value.as_str());
        }
        let answer = request.request_async(&OAuthHttp(self)).await;
        let mut fresh = self.finish(answer, tokens.scope.as_deref())?;
        if fresh.refresh_token.is_none() {
            fresh.refresh_token = tokens.refresh_token.clone();
        }
        Ok(fresh)
    }

    /// The client credentials grant (RFC 6749 §4.4).
    pub(crate) async fn client_credentials(
        &self,
        scope: Option<&str>,
    ) -> Result<Tokens, AuthFailure> {
        let client = self.oauth_client()?;
        let assertion = self.assertion()?;
        let (name, value) = self.resource_param();
        let mut request = client
            .exchange_client_credentials()
            .add_extra_param(name, value);
        for scope in scope.unwrap_or("").split_whitespace() {
            request = request.add_scope(Scope::new(scope.to_owned()));
        }
        for (name, value) in &assertion {
            request = request.add_extra_param(*name, value.as_str());
        }
        let answer = request.request_async(&OAuthHttp(self)).await;
        self.finish(answer, scope)
    }
}
