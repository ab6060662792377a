//! A server's own authorization settings (`oauth` in its `mcpServers` entry): pre-registered
//! credentials, scopes, the callback port, which grant to use, and whether to use DPoP.

use std::path::PathBuf;

use super::types::Secret;

/// How the client authenticates at an authorization server's token endpoint (RFC 6749 §2.3,
/// RFC 7523 for `private_key_jwt`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ClientAuthMethod {
    /// A public client: `client_id` in the form, no secret.
    None,
    /// `Authorization: Basic` with the form-urlencoded id and secret.
    ClientSecretBasic,
    /// `client_id` and `client_secret` in the form.
    ClientSecretPost,
    /// A JWT client assertion signed with the configured private key.
    PrivateKeyJwt,
}

impl ClientAuthMethod {
    /// The method's registered name (`none`, `client_secret_basic`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            ClientAuthMethod::None => "none",
            ClientAuthMethod::ClientSecretBasic => "client_secret_basic",
            ClientAuthMethod::ClientSecretPost => "client_secret_post",
            ClientAuthMethod::PrivateKeyJwt => "private_key_jwt",
        }
    }

    /// The method named `name`, when it is one of these.
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "none" => ClientAuthMethod::None,
            "client_secret_basic" => ClientAuthMethod::ClientSecretBasic,
            "client_secret_post" => ClientAuthMethod::ClientSecretPost,
            "private_key_jwt" => ClientAuthMethod::PrivateKeyJwt,
            _ => return None,
        })
    }
}

/// Which OAuth grant obtains the tokens.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Grant {
    /// The authorization code flow with PKCE: a user signs in through a browser (the default).
    #[default]
    AuthorizationCode,
    /// Client credentials (RFC 6749 §4.4): a machine client with its own credentials
    /// (`client_secret_basic`, `client_secret_post` or `private_key_jwt`).
    ClientCredentials,
    /// Workload identity: the JWT authorization grant (RFC 7523 §2.1,
    /// `urn:ietf:params:oauth:grant-type:jwt-bearer`) with an assertion the platform issued
    /// to this workload (a Kubernetes service account token, a cloud identity token). The
    /// assertion is read where `assertion` says each time a token is requested; a refused
    /// assertion is never retried.
    JwtBearer {
        /// Where the assertion is read from.
        assertion: AssertionSource,
    },
    /// Enterprise-managed authorization (the Identity Assertion JWT Authorization Grant,
    /// "ID-JAG"): the user's ID token from the enterprise identity provider is exchanged there
    /// (RFC 8693 token exchange) for an ID-JAG naming this server's authorization server, which
    /// is then presented to that server with the `jwt-bearer` grant, authenticated as the
    /// configured client.
    TokenExchange {
        /// The identity provider's token endpoint.
        idp_token_endpoint: String,
        /// The user's ID token (the exchange's `subject_token`).
        subject_token: AssertionSource,
        /// The client id this client has at the identity provider, when it has one.
        idp_client_id: Option<String>,
        /// The `audience` of the exchange; by default the authorization server's issuer.
        audience: Option<String>,
    },
}

impl Grant {
    /// The workload identity grant with the assertion from `source`.
    pub fn jwt_bearer(assertion: AssertionSource) -> Self {
        Grant::JwtBearer { assertion }
    }

    /// The enterprise-managed grant: `subject_token` exchanged at `idp_token_endpoint`.
    pub fn token_exchange(
        idp_token_endpoint: impl Into<String>,
        subject_token: AssertionSource,
    ) -> Self {
        Grant::TokenExchange {
            idp_token_endpoint: idp_token_endpoint.into(),
            subject_token,
            idp_client_id: None,
            audience: None,
        }
    }

    /// The identity provider client id of a [`Grant::TokenExchange`] (no effect on others).
    pub fn idp_client_id(mut self, id: impl Into<String>) -> Self {
        if let Grant::TokenExchange { idp_client_id, .. } = &mut self {
            *idp_client_id = Some(id.into());
        }
        self
    }

    /// The exchange audience of a [`Grant::TokenExchange`] (no effect on others).
    pub fn audience(mut self, value: impl Into<String>) -> Self {
        if let Grant::TokenExchange { audience, .. } = &mut self {
            *audience = Some(value.into());
        }
        self
    }

    /// The secret this grant carries in the settings, if any.
    fn secret(&self) -> Option<&Secret> {
        match self {
            Grant::JwtBearer {
                assertion: AssertionSource::Value(secret),
            }
            | Grant::TokenExchange {
                subject_token: AssertionSource::Value(secret),
                ..
            } => Some(secret),
            _ => None,
        }
    }
}

/// Where an assertion (a workload identity token, an ID token) comes from. Read when a token
/// is requested, not when the settings are made, so a token the platform rotates is always the
/// current one; at most 64 KiB, surrounding whitespace dropped.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AssertionSource {
    /// The value of an environment variable.
    Env(String),
    /// The contents of a file (as platforms mount projected service account tokens).
    File(PathBuf),
    /// A value given directly.
    Value(Secret),
}

/// Whether to bind tokens to a key with DPoP (RFC 9449).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum DpopPolicy {
    /// Use DPoP when the authorization server lists `ES256` in its
    /// `dpop_signing_alg_values_supported` (the default): each connection makes an ephemeral
    /// P-256 key, and every token request and every request to the server carries a proof.
    #[default]
    Auto,
    /// Never use DPoP: tokens are bearer tokens.
    Off,
}

/// A server's authorization settings. Everything is optional: with none set, the client
/// discovers the authorization server and registers itself.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct OAuthSettings {
    /// A pre-registered client id (used instead of registering).
    pub client_id: Option<String>,
    /// Its secret, for a confidential client.
    pub client_secret: Option<Secret>,
    /// A PEM private key for `private_key_jwt` client authentication.
    pub client_private_key: Option<Secret>,
    /// The token endpoint auth method to use; by default the one the registration or the
    /// server's metadata dictates.
    pub token_endpoint_auth_method: Option<ClientAuthMethod>,
    /// Scopes to request instead of the server's (space-separated on the wire).
    pub scopes: Option<Vec<String>>,
    /// A fixed loopback port for the redirect (`http://127.0.0.1:PORT/callback`), for a
    /// pre-registered client whose redirect URI names one; by default any free port.
    pub callback_port: Option<u16>,
    /// The authorization server's metadata URL, skipping discovery.
    pub auth_server_metadata_url: Option<String>,
    /// The JWS algorithm of `private_key_jwt` assertions (`ES256`, `RS256`, ...); by default
    /// the key's own (ES256 for a P-256 key, RS256 for RSA).
    pub client_key_alg: Option<String>,
    /// The grant to use.
    pub grant: Grant,
    /// Whether to use DPoP.
    pub dpop: DpopPolicy,
}

impl OAuthSettings {
    /// No settings: discover and register.
    pub fn new() -> Self {
        OAuthSettings::default()
    }

    /// A pre-registered client id.
    pub fn client_id(mut self, id: impl Into<String>) -> Self {
        self.client_id = Some(id.into());
        self
    }

    /// The pre-registered client's secret.
    pub fn client_secret(mut self, secret: impl Into<Secret>) -> Self {
        self.client_secret = Some(secret.into());
        self
    }

    /// A PEM private key for `private_key_jwt`.
    pub fn client_private_key(mut self, pem: impl Into<Secret>) -> Self {
        self.client_private_key = Some(pem.into());
        self
    }

    /// The token endpoint auth method.
    pub fn token_endpoint_auth_method(mut self, method: ClientAuthMethod) -> Self {
        self.token_endpoint_auth_method = Some(method);
        self
    }

    /// Scopes to request.
    pub fn scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes = Some(scopes.into_iter().map(Into::into).collect());
        self
    }

    /// A fixed callback port.
    pub fn callback_port(mut self, port: u16) -> Self {
        self.callback_port = Some(port);
        self
    }

    /// The authorization server's metadata URL.
    pub fn auth_server_metadata_url(mut self, url: impl Into<String>) -> Self {
        self.auth_server_metadata_url = Some(url.into());
        self
    }

    /// The JWS algorithm of `private_key_jwt` assertions.
    pub fn client_key_alg(mut self, alg: impl Into<String>) -> Self {
        self.client_key_alg = Some(alg.into());
        self
    }

    /// The grant.
    pub fn grant(mut self, grant: Grant) -> Self {
        self.grant = grant;
        self
    }

    /// Whether to use DPoP ([`DpopPolicy::Auto`] by default).
    pub fn dpop(mut self, policy: DpopPolicy) -> Self {
        self.dpop = policy;
        self
    }

    /// Every secret in these settings, for the redactor.
    pub(crate) fn secrets(&self) -> impl Iterator<Item = &str> {
        [
            self.client_secret.as_ref(),
            self.client_private_key.as_ref(),
            self.grant.secret(),
        ]
        .into_iter()
        .flatten()
        .map(Secret::expose)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grants_and_dpop_default_to_the_code_flow_and_auto() {
        let settings = OAuthSettings::new();
        assert_eq!(settings.grant, Grant::AuthorizationCode);
        assert_eq!(settings.dpop, DpopPolicy::Auto);
        assert_eq!(settings.client_key_alg, None);
    }

    #[test]
    fn the_grant_builders_fill_their_variant_and_secrets_include_inline_assertions() {
        let grant = Grant::token_exchange(
            "http://idp/token",
            AssertionSource::Value(Secret::new("id-token-value")),
        )
        .idp_client_id("idp-client")
        .audience("http://as");
        assert_eq!(
            grant,
            Grant::TokenExchange {
                idp_token_endpoint: "http://idp/token".into(),
                subject_token: AssertionSource::Value(Secret::new("id-token-value")),
                idp_client_id: Some("idp-client".into()),
                audience: Some("http://as".into()),
            }
        );
        assert_eq!(
            Grant::ClientCredentials.audience("x"),
            Grant::ClientCredentials
        );
        let settings = OAuthSettings::new()
            .client_secret("the-secret")
            .client_key_alg("RS256")
            .dpop(DpopPolicy::Off)
            .grant(grant);
        let secrets: Vec<&str> = settings.secrets().collect();
        assert_eq!(secrets, ["the-secret", "id-token-value"]);
        assert!(!format!("{settings:?}").contains("id-token-value"));

        let wif =
            OAuthSettings::new().grant(Grant::jwt_bearer(AssertionSource::Env("TOKEN".into())));
        assert_eq!(
            wif.secrets().count(),
            0,
            "an env var's name is not a secret"
        );
    }
}
