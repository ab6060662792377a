//! The values authorization keeps: secrets that never print, the tokens and client
//! registration of one server, and the record a [`TokenStore`](super::TokenStore) saves.

use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

/// A credential (an access or refresh token, a client secret, a private key): its `Debug` and
/// `Display` show `[REDACTED]`, so it cannot reach a log or an error message by accident. It
/// serializes as its plain value, for the token store only.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Secret(String);

impl Secret {
    /// Wraps a credential.
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }

    /// The credential itself, for the one place that sends it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[REDACTED]")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[REDACTED]")
    }
}

impl From<&str> for Secret {
    fn from(value: &str) -> Self {
        Secret::new(value)
    }
}

impl From<String> for Secret {
    fn from(value: String) -> Self {
        Secret::new(value)
    }
}

/// Seconds since the Unix epoch, the time unit of stored expiries.
pub(crate) fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs())
}

/// The tokens an authorization server issued for one resource.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Tokens {
    /// The access token sent to the resource.
    pub access_token: Secret,
    /// `Bearer` or `DPoP` (as the token response said; compared without case).
    pub token_type: String,
    /// The refresh token, when one was issued.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<Secret>,
    /// When the access token expires (Unix seconds), when the server said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
    /// When the tokens were issued (Unix seconds), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issued_at: Option<u64>,
    /// The scopes granted (space-separated), as the server said, else as requested.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// The resource (RFC 8707) the tokens were requested for.
    pub resource: String,
}

impl Tokens {
    /// Whether the access token is a DPoP-bound one (RFC 9449).
    pub fn is_dpop(&self) -> bool {
        self.token_type.eq_ignore_ascii_case("dpop")
    }

    /// Whether the access token expires within `margin` of `now` (Unix seconds). A token
    /// without an expiry never does.
    pub fn expires_within(&self, margin: Duration, now: u64) -> bool {
        self.expires_at
            .is_some_and(|at| at <= now.saturating_add(margin.as_secs()))
    }

    /// Whether the access token should be refreshed before use at `now`: it expires within
    /// `margin`, or within half its lifetime when that is shorter (a token that lives 20 s is
    /// refreshed after 10 s, not before every request).
    pub fn refresh_due(&self, margin: Duration, now: u64) -> bool {
        let margin = match (self.issued_at, self.expires_at) {
            (Some(issued), Some(expires)) => {
                margin.min(Duration::from_secs(expires.saturating_sub(issued) / 2))
            }
            _ => margin,
        };
        self.expires_within(margin, now)
    }

    /// The granted scopes, one by one.
    pub fn scopes(&self) -> impl Iterator<Item = &str> {
        self.scope.as_deref().unwrap_or("").split_whitespace()
    }
}

/// How this client is known to an authorization server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ClientRegistration {
    /// The authorization server's issuer this registration belongs to.
    pub issuer: String,
    /// The client id (a Client ID Metadata Document URL is one too).
    pub client_id: String,
    /// The client secret, for confidential clients.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<Secret>,
    /// How the client authenticates at the token endpoint (`none`, `client_secret_basic`,
    /// `client_secret_post`, `private_key_jwt`).
    pub token_endpoint_auth_method: String,
    /// Where the registration came from.
    pub source: RegistrationSource,
    /// The authorization server's token endpoint, for refreshing in a later run without
    /// discovering again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint: Option<String>,
    /// When a dynamically registered secret expires (Unix seconds; RFC 7591
    /// `client_secret_expires_at`, 0 meaning never), when the server said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
    /// The loopback redirect URI a dynamic registration was made with. A later authorization
    /// listens on its port again, and reuses the registration only with that URI: servers
    /// may compare redirect URIs exactly (RFC 8252 §7.3 notwithstanding).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redirect_uri: Option<String>,
}

impl ClientRegistration {
    /// Whether the registration is still usable at `now` (Unix seconds).
    pub fn is_current(&self, now: u64) -> bool {
        self.expires_at.is_none_or(|at| at == 0 || at > now)
    }
}

/// Where a client registration came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum RegistrationSource {
    /// Credentials from the server's configuration.
    PreRegistered,
    /// A Client ID Metadata Document URL used as the client id.
    MetadataDocument,
    /// Dynamic Client Registration (RFC 7591).
    Dynamic,
}

/// What the store keeps for one server and resource: the client registration and the tokens,
/// so that a login survives a restart.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct StoredAuth {
    /// The format's version ([`StoredAuth::VERSION`]); other versions are refused on load.
    pub version: u32,
    /// The server's configured name.
    pub server: String,
    /// The canonical resource URL (the server's URL without fragment).
    pub resource: String,
    /// The client registration, once there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<ClientRegistration>,
    /// The tokens, once authorized.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<Tokens>,
}

impl StoredAuth {
    /// The current format version.
    pub const VERSION: u32 = 1;

    /// An empty record for `key`.
    pub fn new(key: &StoreKey) -> Self {
        StoredAuth {
            version: StoredAuth::VERSION,
            server: key.server.clone(),
            resource: key.resource.clone(),
            client: None,
            tokens: None,
        }
    }
}

/// Which record of a store: one per server name and resource URL (a server whose URL changes
/// logs in again).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StoreKey {
    /// The server's configured name.
    pub server: String,
    /// The canonical resource URL.
    pub resource: String,
}

impl StoreKey {
    /// The key of `server` at `resource`.
    pub fn new(server: impl Into<String>, resource: impl Into<String>) -> Self {
        StoreKey {
            server: server.into(),
            resource: resource.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(issued_at: Option<u64>, expires_at: Option<u64>) -> Tokens {
        Tokens {
            access_token: Secret::new("a"),
            token_type: "Bearer".into(),
            refresh_token: None,
            expires_at,
            issued_at,
            scope: None,
            resource: "https://r".into(),
        }
    }

    #[test]
    fn a_short_lived_token_is_due_after_half_its_life_not_at_once() {
        let margin = Duration::from_secs(30);
        // Lives 20 s: due from 10 s on, not right after it was issued.
        let short = tokens(Some(1_000), Some(1_020));
        assert!(!short.refresh_due(margin, 1_000));
        assert!(!short.refresh_due(margin, 1_009));
        assert!(short.refresh_due(margin, 1_010));
        // Lives an hour: due in the last 30 s.
        let long = tokens(Some(1_000), Some(4_600));
        assert!(!long.refresh_due(margin, 4_569));
        assert!(long.refresh_due(margin, 4_570));
        // No issue time known: the margin alone.
        assert!(tokens(None, Some(1_020)).refresh_due(margin, 1_000));
        // No expiry: never.
        assert!(!tokens(Some(1_000), None).refresh_due(margin, u64::MAX / 2));
    }
}
