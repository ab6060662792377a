//! A server's own authorization settings (`oauth` in its `mcpServers` entry): pre-registered
//! credentials, scopes, the callback port, and which grant to use.

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
    /// Client credentials (RFC 6749 §4.4): a machine client with its own credentials.
    ClientCredentials,
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
    /// The grant to use.
    pub grant: Grant,
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

    /// The grant.
    pub fn grant(mut self, grant: Grant) -> Self {
        self.grant = grant;
        self
    }

    /// Every secret in these settings, for the redactor.
    pub(crate) fn secrets(&self) -> impl Iterator<Item = &str> {
        [&self.client_secret, &self.client_private_key]
            .into_iter()
            .flatten()
            .map(Secret::expose)
    }
}
