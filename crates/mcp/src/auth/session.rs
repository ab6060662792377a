//! One connection's authorization: the current tokens, what to do on a 401 or 403, and the
//! single flight that makes concurrent requests share one authorization.

use super::failure::fail;
use super::login::LoginOutcome;
use crate::error::Kind;
use crate::{Error, ServerSpec};

/// The resource identifier of a server URL (RFC 8707): the URL as configured, without its
/// fragment, kept as text (a `Url` would add a `/` to a bare origin, and servers compare the
/// string).
pub(crate) fn canonical_resource(url: &str) -> String {
    let url = url.trim();
    url.split('#').next().unwrap_or(url).to_owned()
}

/// See [`super::login`].
pub(crate) async fn login(spec: &ServerSpec) -> Result<LoginOutcome, Error> {
    Err(Error::new(Kind::Auth(fail!(
        Unsupported,
        "server `{}`: login is not built yet",
        spec.name()
    ))))
}
