//! JWTs this client signs (placeholder until the jwt module lands).

use super::failure::{AuthFailure, fail};
use super::types::Secret;

/// A `private_key_jwt` client assertion (RFC 7523 §2.2).
pub(crate) fn client_assertion(
    _key_pem: &Secret,
    _alg: Option<&str>,
    _client_id: &str,
    _audience: &str,
) -> Result<String, AuthFailure> {
    Err(fail!(Unsupported, "private_key_jwt is not built yet"))
}
