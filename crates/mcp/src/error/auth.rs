//! Why an authorization failed: a typed step ([`AuthErrorKind`]) and a message for people,
//! already redacted.

use std::fmt;

/// Which part of an authorization failed ([`Error::auth_error`](crate::Error::auth_error)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AuthErrorKind {
    /// A new authorization is needed and nobody can complete it ([`Interaction::Never`](crate::auth::Interaction::Never)).
    LoginRequired,
    /// Discovering the protected resource or authorization server metadata failed.
    Discovery,
    /// The metadata is unusable: an issuer that does not match, no `S256` PKCE, missing
    /// endpoints.
    Metadata,
    /// The protected resource metadata names a different resource than the server's URL.
    ResourceMismatch,
    /// Registering the client failed, or no way to identify the client was available.
    Registration,
    /// The authorization server (or the person) refused the authorization request.
    Denied,
    /// The authorization response was invalid (`state` or `iss` mismatch, no code) or never
    /// came (the listener timed out).
    Callback,
    /// A token request failed (the error and description the server sent are in the message).
    Token,
    /// The server kept refusing access after the bounded number of authorization attempts
    /// (`401`, or `403 insufficient_scope` step-ups).
    StillRefused,
    /// The token store could not be read or written.
    Store,
    /// The server needs something this client does not do.
    Unsupported,
    /// An authorization server endpoint (its metadata, authorization, token or registration
    /// endpoint, an identity provider's token endpoint) is plain `http://` on a host that is
    /// not loopback: refused before anything is sent to it (MCP requires HTTPS there).
    Insecure,
}

impl AuthErrorKind {
    /// A short name for the step (`discovery`, `token`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            AuthErrorKind::LoginRequired => "login required",
            AuthErrorKind::Discovery => "discovery",
            AuthErrorKind::Metadata => "metadata",
            AuthErrorKind::ResourceMismatch => "resource mismatch",
            AuthErrorKind::Registration => "registration",
            AuthErrorKind::Denied => "denied",
            AuthErrorKind::Callback => "callback",
            AuthErrorKind::Token => "token",
            AuthErrorKind::StillRefused => "still refused",
            AuthErrorKind::Store => "store",
            AuthErrorKind::Unsupported => "unsupported",
            AuthErrorKind::Insecure => "insecure endpoint",
        }
    }
}

/// A failed authorization: its kind and what happened (no credential in it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AuthFailure {
    pub(crate) kind: AuthErrorKind,
    pub(crate) message: String,
}

impl AuthFailure {
    pub(crate) fn new(kind: AuthErrorKind, message: impl Into<String>) -> Self {
        AuthFailure {
            kind,
            message: message.into(),
        }
    }
}

impl fmt::Display for AuthFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "authorization failed ({}): {}",
            self.kind.as_str(),
            self.message
        )
    }
}

impl std::error::Error for AuthFailure {}

/// Shorthands for building failures.
macro_rules! fail {
    ($kind:ident, $($arg:tt)*) => {
        $crate::error::auth::AuthFailure::new(
            $crate::error::auth::AuthErrorKind::$kind,
            format!($($arg)*),
        )
    };
}
pub(crate) use fail;
