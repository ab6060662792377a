//! OAuth 2.1 authorization for HTTP servers (MCP 2025-11-25 "Authorization"), as the client
//! side: what happens when a server answers `401 Unauthorized`.
//!
//! It **is**: discovery (the `WWW-Authenticate` challenge, RFC 9728 protected resource
//! metadata, RFC 8414 / OpenID Connect authorization server metadata, the 2025-03-26
//! fallbacks); the client's identity (pre-registered credentials, a Client ID Metadata
//! Document URL, Dynamic Client Registration); the authorization code flow with PKCE `S256`,
//! `state`, the resource indicator (RFC 8707) and the RFC 9207 `iss` check, through a loopback
//! redirect listener; token endpoint client authentication; refresh, and step-up on
//! `403 insufficient_scope`; and a [`TokenStore`] that keeps tokens and registrations between
//! runs. It is used by the HTTP transport through an [`Authorizer`] given to the server's
//! [`ServerSpec`](crate::ServerSpec); [`login`], [`logout`] and [`status`] are the same work
//! run on purpose.
//!
//! It is **not**: an authorization server, a browser, or a general OAuth library: it does what
//! an MCP client needs, and asks a person only through [`Interaction`].

mod callback;
pub(crate) mod challenge;
mod discovery;
mod dpop;
mod fetch;
mod flow;
mod grants;
mod jwt;
mod login;
mod members;
mod registration;
mod scope;
pub(crate) mod session;
mod token;

/// The fuzz target's way in to the private parsers (see `crate::fuzz`).
#[doc(hidden)]
pub(crate) mod fuzzing {
    use super::challenge::Challenge;
    use super::discovery::{
        ResourceMetadata, ServerMetadata, resource_covers, server_metadata_candidates,
    };

    /// Reads `document` as both metadata kinds and runs what uses them.
    pub(crate) fn documents(challenge: &Challenge, document: &[u8]) {
        if let Ok(resource) = serde_json::from_slice::<ResourceMetadata>(document) {
            let server = url::Url::parse("https://mcp.example.com/mcp").expect("a URL");
            let _ = resource_covers(&resource.resource, &server);
            let chosen =
                super::scope::initial(None, challenge, resource.scopes_supported.as_deref(), true);
            if let Some(chosen) = chosen {
                assert!(!chosen.split(' ').any(str::is_empty));
            }
            for issuer in resource.authorization_servers.iter().take(4) {
                if let Ok(urls) = server_metadata_candidates(issuer) {
                    assert!((2..=3).contains(&urls.len()));
                }
            }
        }
        if let Ok(metadata) = serde_json::from_slice::<ServerMetadata>(document) {
            let _ = server_metadata_candidates(&metadata.issuer);
        }
    }
}

pub use crate::credentials::{
    AuthorizationPrompt, Authorizer, DEFAULT_AUTH_REQUEST_TIMEOUT, DEFAULT_CALLBACK_TIMEOUT,
    DEFAULT_CLIENT_NAME, Interaction,
};
// The credential types' modules, under the names this module's files use (`super::types`).
pub(crate) use crate::credentials::{settings, types};
pub(crate) use crate::error::auth as failure;

pub use self::callback::{
    MAX_CONNECTIONS as MAX_CALLBACK_CONNECTIONS, MAX_REQUESTS as MAX_CALLBACK_REQUESTS,
};
pub use self::dpop::{MAX_DPOP_NONCE_BYTES, MAX_DPOP_NONCE_ORIGINS};
pub use self::fetch::MAX_AUTH_BODY;
pub use self::grants::MAX_TOKEN_LIFETIME;
pub use self::jwt::MAX_ASSERTION_BYTES;
pub use self::login::{AuthStatus, LoginOutcome, login, logout, status, store_key};
pub use self::members::{MAX_ANSWER_TEXT_BYTES, MAX_CREDENTIAL_BYTES};
pub use self::session::{
    MAX_AUTHORIZATIONS, MAX_NONCE_RETRIES, MAX_RETRIES, REFRESH_MARGIN, STORE_LOCK_WAIT,
};
pub use crate::credentials::file_store::{
    FileStore, MAX_STORED_NAME_CHARS, MAX_STORED_RECORD_BYTES, MAX_STORED_RECORDS,
};
pub use crate::credentials::settings::{
    AssertionSource, ClientAuthMethod, DpopPolicy, Grant, OAuthSettings,
};
pub use crate::credentials::store::{MemoryStore, StoreGuard, TokenStore};
pub use crate::credentials::types::{
    ClientRegistration, RegistrationSource, Secret, StoreKey, StoredAuth, Tokens,
};
pub use crate::error::auth::AuthErrorKind;
pub(crate) use crate::error::auth::AuthFailure;
