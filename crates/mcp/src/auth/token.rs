//! Token endpoint requests of the code flow and the session (authorization code with PKCE,
//! refresh, client credentials), with the client authentication the registration dictates, the
//! resource indicator (RFC 8707) on every request, and DPoP proofs (RFC 9449) when the
//! connection uses them. Each is the form of its RFC, posted by the grants' `post_grant` (client
//! authentication, DPoP with its one nonce retry) over the connection's own HTTP client; the
//! answer is read by the one token response decoder, `grants::TokenResponse`, whose errors
//! never quote the answer (it carries the tokens).

use std::sync::Arc;

use oauth2::PkceCodeVerifier;
use url::Url;

use super::Authorizer;
use super::dpop::DpopKey;
use super::failure::{AuthFailure, fail};
use super::fetch::AuthHttp;
use super::grants::{self, ClientAuthHeaders, TokenResponse};
use super::settings::{ClientAuthMethod, OAuthSettings};
use super::types::{ClientRegistration, Tokens, unix_now};

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

    /// The client authentication of one request (a `private_key_jwt` assertion is made anew
    /// for each), and the `client_id` the form must carry besides.
    ///
    /// A registration that names a secret method but holds no secret (a server answered
    /// `client_secret_basic` and issued none) authenticates as a public client, `client_id` in
    /// the form: the server decides whether that will do. A `private_key_jwt` form names the
    /// client too, as servers look the client up by `client_id` before reading the assertion.
    fn client_auth(&self) -> Result<(ClientAuthHeaders, Option<&str>), AuthFailure> {
        let method = match self.method()? {
            ClientAuthMethod::ClientSecretBasic | ClientAuthMethod::ClientSecretPost
                if self.client.client_secret.is_none() =>
            {
                ClientAuthMethod::None
            }
            method => method,
        };
        let auth = ClientAuthHeaders::new(
            method,
            &self.client.client_id,
            self.client.client_secret.as_ref(),
            self.settings.client_private_key.as_ref(),
            self.settings.client_key_alg.as_deref(),
            self.issuer,
        )?;
        for secret in &auth.secrets {
            self.authorizer.remember_secret(secret);
        }
        let client_id =
            (method == ClientAuthMethod::PrivateKeyJwt).then_some(self.client.client_id.as_str());
        Ok((auth, client_id))
    }

    /// Posts `form` (plus the resource indicator and the client authentication) and reads the
    /// answer as tokens for this resource. `sent` are the credentials in the form, kept out of
    /// an error message like every credential the authorizer knows.
    async fn post(
        &self,
        mut form: Vec<(&'static str, String)>,
        sent: &[&str],
        requested_scope: Option<&str>,
    ) -> Result<Tokens, AuthFailure> {
        let url = Url::parse(self.token_endpoint).map_err(|err| {
            fail!(
                Metadata,
                "invalid token endpoint {:?}: {err}",
                self.token_endpoint
            )
        })?;
        form.push(("resource", self.resource.to_owned()));
        let (auth, client_id) = self.client_auth()?;
        let answer = grants::post_grant(
            self.http,
            &url,
            form,
            client_id,
            &auth,
            self.prover.as_deref(),
            sent,
        )
        .await
        .map_err(|failure| {
            AuthFailure::new(failure.kind, self.authorizer.redact(&failure.message))
        })?;
        self.finish(answer, requested_scope)
    }

    /// Turns the token answer into tokens for this resource, every credential in it given to
    /// the authorizer's redactor first.
    fn finish(
        &self,
        answer: TokenResponse,
        requested_scope: Option<&str>,
    ) -> Result<Tokens, AuthFailure> {
        self.authorizer
            .remember_secret(answer.access_token.expose());
        if let Some(refresh) = &answer.refresh_token {
            self.authorizer.remember_secret(refresh.expose());
        }
        answer.into_tokens(self.resource, requested_scope, unix_now())
    }

    /// Exchanges an authorization code (RFC 6749 §4.1.3 with PKCE, RFC 7636 §4.5).
    pub(crate) async fn exchange_code(
        &self,
        code: &str,
        verifier: PkceCodeVerifier,
        redirect_uri: &str,
        requested_scope: Option<&str>,
    ) -> Result<Tokens, AuthFailure> {
        let form = vec![
            ("grant_type", "authorization_code".to_owned()),
            ("code", code.to_owned()),
            ("code_verifier", verifier.secret().to_owned()),
            ("redirect_uri", redirect_uri.to_owned()),
        ];
        self.post(form, &[code, verifier.secret()], requested_scope)
            .await
    }

    /// Refreshes (RFC 6749 §6), keeping the old refresh token when no new one is issued.
    pub(crate) async fn refresh(&self, tokens: &Tokens) -> Result<Tokens, AuthFailure> {
        let Some(refresh_token) = &tokens.refresh_token else {
            return Err(fail!(Token, "no refresh token"));
        };
        let form = vec![
            ("grant_type", "refresh_token".to_owned()),
            ("refresh_token", refresh_token.expose().to_owned()),
        ];
        let mut fresh = self
            .post(form, &[refresh_token.expose()], tokens.scope.as_deref())
            .await?;
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
        let mut form = vec![("grant_type", "client_credentials".to_owned())];
        let scopes: Vec<&str> = scope.unwrap_or("").split_whitespace().collect();
        if !scopes.is_empty() {
            form.push(("scope", scopes.join(" ")));
        }
        self.post(form, &[], scope).await
    }
}
