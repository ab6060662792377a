//! Invariants of the OAuth client's parsers for arbitrary bytes: the `WWW-Authenticate`
//! reader, the metadata documents and the well-known URLs built from an issuer, and the scope
//! selection over what they give.

use crate::auth::challenge::Challenge;
use crate::auth::fuzzing;

/// Splits the input at the first NUL: a `WWW-Authenticate` value, then a JSON document read
/// both as protected resource and as authorization server metadata.
pub fn www_authenticate(data: &[u8]) {
    let (header, document) = match data.iter().position(|&b| b == 0) {
        Some(at) => (&data[..at], &data[at + 1..]),
        None => (data, &[][..]),
    };
    let text = String::from_utf8_lossy(header);
    let challenge = Challenge::parse(&text);
    // What is kept is bounded by what was read, and only the two schemes are kept.
    assert!(challenge.schemes.len() <= 2);
    for value in [
        &challenge.error,
        &challenge.error_description,
        &challenge.scope,
        &challenge.resource_metadata,
    ]
    .into_iter()
    .flatten()
    {
        assert!(value.len() <= text.len());
    }
    fuzzing::documents(&challenge, document);
}
