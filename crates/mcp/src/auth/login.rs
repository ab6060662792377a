//! Authorization on purpose, outside a connection: [`login`], [`logout`] and [`status`].

use std::time::Duration;

use super::types::{StoreKey, StoredAuth, unix_now};
use super::{Authorizer, failure::AuthErrorKind};
use crate::error::Kind;
use crate::{Error, ServerSpec};

/// What [`login`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LoginOutcome {
    /// A new authorization completed and its tokens were stored.
    Authorized {
        /// The authorization server's issuer.
        issuer: String,
        /// The scopes granted.
        scope: Option<String>,
    },
    /// The server answered without asking for authorization: nothing to do.
    NotRequired,
}

/// One stored authorization, as [`status`] shows it (no credential in it).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AuthStatus {
    /// The server's name.
    pub server: String,
    /// The resource URL.
    pub resource: String,
    /// The authorization server's issuer, when a client is registered.
    pub issuer: Option<String>,
    /// The client id, when a client is registered.
    pub client_id: Option<String>,
    /// Whether an access token is stored.
    pub has_token: bool,
    /// Whether a refresh token is stored.
    pub can_refresh: bool,
    /// How long until the access token expires (`Some(ZERO)` when it has), when known.
    pub expires_in: Option<Duration>,
    /// The scopes granted.
    pub scope: Option<String>,
}

impl AuthStatus {
    fn of(record: &StoredAuth, now: u64) -> Self {
        let tokens = record.tokens.as_ref();
        AuthStatus {
            server: record.server.clone(),
            resource: record.resource.clone(),
            issuer: record.client.as_ref().map(|client| client.issuer.clone()),
            client_id: record
                .client
                .as_ref()
                .map(|client| client.client_id.clone()),
            has_token: tokens.is_some(),
            can_refresh: tokens.is_some_and(|tokens| tokens.refresh_token.is_some()),
            expires_in: tokens
                .and_then(|tokens| tokens.expires_at)
                .map(|at| Duration::from_secs(at.saturating_sub(now))),
            scope: tokens.and_then(|tokens| tokens.scope.clone()),
        }
    }
}

/// The store key of an HTTP server spec.
pub fn store_key(spec: &ServerSpec) -> StoreKey {
    StoreKey::new(
        spec.credentials_name(),
        super::session::canonical_resource(spec.url()),
    )
}

fn authorizer_of(spec: &ServerSpec) -> Result<&Authorizer, Error> {
    spec.authorizer_ref().ok_or_else(|| {
        Error::config(format!(
            "server `{}` has no authorizer: OAuth is not enabled for it",
            spec.name()
        ))
    })
}

fn store_error(err: std::io::Error) -> Error {
    Error::new(Kind::Auth(super::AuthFailure::new(
        AuthErrorKind::Store,
        err.to_string(),
    )))
}

/// Authorizes with `spec`'s server now, through its authorizer's [`Interaction`](super::Interaction)
/// (which must not be `Never`), and stores the tokens: what `sidewire mcp login` does. An
/// existing login is replaced.
///
/// Cancel safety: dropping the future abandons the authorization (the loopback listener
/// closes); nothing is stored until the tokens arrive.
pub async fn login(spec: &ServerSpec) -> Result<LoginOutcome, Error> {
    super::session::login(spec).await
}

/// Forgets the stored tokens and registration of `spec`'s server; `Ok(false)` when there
/// were none.
pub fn logout(spec: &ServerSpec) -> Result<bool, Error> {
    let authorizer = authorizer_of(spec)?;
    authorizer
        .store
        .remove(&store_key(spec))
        .map_err(store_error)
}

/// Every stored authorization of `authorizer`'s store.
pub fn status(authorizer: &Authorizer) -> Result<Vec<AuthStatus>, Error> {
    let now = unix_now();
    let records = authorizer.store.list().map_err(store_error)?;
    Ok(records
        .iter()
        .map(|record| AuthStatus::of(record, now))
        .collect())
}
