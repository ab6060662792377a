//! How the HTTP transport authorizes its requests, seen from the transport: a trait it defines
//! and `crate::auth` implements (OAuth), so this module names nothing of the authorization
//! itself. A connection whose spec has no authorizer has none: a 401 is then an error.

use std::fmt;
use std::future::Future;
use std::pin::Pin;

use http::{HeaderMap, Method, StatusCode};
use url::Url;

use crate::error::auth::AuthFailure;

/// A boxed future borrowing the authorizer and the request.
pub(crate) type AuthFuture<'a, T> =
    Pin<Box<dyn Future<Output = Result<T, AuthFailure>> + Send + 'a>>;

/// What the HTTP transport asks of an authorizer: put the credentials on a request, say
/// whether an answer is a refusal that new credentials may cure, and get new ones after one.
pub(crate) trait Authorize: fmt::Debug + Send + Sync + 'static {
    /// Puts the current credentials on a request to `url` (obtaining or refreshing them first
    /// when they are missing or about to expire); returns their generation, which
    /// [`refused`](Authorize::refused) gets back.
    fn apply<'a>(
        &'a self,
        method: &'a Method,
        url: &'a Url,
        headers: &'a mut HeaderMap,
    ) -> AuthFuture<'a, u64>;

    /// Whether an answer refuses the credentials (a 401, or a 403 asking for more scope):
    /// anything else is the server's answer, returned as it is.
    fn is_refusal(&self, status: StatusCode, headers: &HeaderMap) -> bool;

    /// After a refusal of the credentials of generation `sent`: new credentials are in place
    /// ([`Decision::Retry`]), or the answer stands; within the request's `budget`.
    fn refused<'a>(
        &'a self,
        status: StatusCode,
        headers: &'a HeaderMap,
        sent: u64,
        budget: &'a mut Budget,
    ) -> AuthFuture<'a, Decision>;
}

/// What one request may still spend on refusals (kept by the transport per request, spent by
/// the authorizer).
#[derive(Debug, Default)]
pub(crate) struct Budget {
    pub(crate) authorizations: u32,
    pub(crate) refreshed: bool,
    pub(crate) nonce_retries: u32,
    pub(crate) retries: u32,
}

/// What to do after a refusal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decision {
    /// Send the request again: the credentials changed.
    Retry,
    /// Not an authorization matter (a 403 for another reason): the answer stands.
    Stand,
}
