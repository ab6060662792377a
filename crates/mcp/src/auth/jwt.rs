//! JWTs this client signs or passes on: the RFC 7523 `private_key_jwt` client assertion
//! (signed with the configured PEM key, on `jsonwebtoken` over `ring`), and the workload
//! identity assertion of the `jwt-bearer` grant, which comes from the environment and is only
//! read, checked for shape and size, and sent.

use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use ring::rand::{SecureRandom, SystemRandom};
use ring::signature::{
    ECDSA_P256_SHA256_FIXED_SIGNING, ECDSA_P384_SHA384_FIXED_SIGNING, EcdsaKeyPair, Ed25519KeyPair,
    RsaKeyPair,
};
use serde::Serialize;

use super::failure::{AuthFailure, fail};
use super::settings::AssertionSource;
use super::types::{Secret, unix_now};

/// How long a client assertion is valid after it is signed (RFC 7523 §3 wants a short
/// lifetime; the assertion is used once, at once).
pub(crate) const CLIENT_ASSERTION_LIFETIME: Duration = Duration::from_secs(120);

/// The largest assertion read from the environment or a file (a JWT is a few KiB at most).
pub const MAX_ASSERTION_BYTES: usize = 64 * 1024;

/// The claims of a client assertion (RFC 7523 §3).
#[derive(Serialize)]
struct AssertionClaims<'a> {
    iss: &'a str,
    sub: &'a str,
    aud: &'a str,
    iat: u64,
    exp: u64,
    jti: String,
}

/// A random, URL-safe identifier (128 bits), for `jti` claims.
pub(crate) fn random_id() -> Result<String, AuthFailure> {
    let mut bytes = [0u8; 16];
    SystemRandom::new()
        .fill(&mut bytes)
        .map_err(|_| fail!(Unsupported, "the system random number generator failed"))?;
    Ok(URL_SAFE_NO_PAD.encode(bytes))
}

/// The kind of private key a PEM holds, which decides the default algorithm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum KeyKind {
    P256,
    P384,
    Rsa,
    Ed25519,
}

impl KeyKind {
    fn default_alg(self) -> Algorithm {
        match self {
            KeyKind::P256 => Algorithm::ES256,
            KeyKind::P384 => Algorithm::ES384,
            KeyKind::Rsa => Algorithm::RS256,
            KeyKind::Ed25519 => Algorithm::EdDSA,
        }
    }

    fn allows(self, alg: Algorithm) -> bool {
        match self {
            KeyKind::P256 => alg == Algorithm::ES256,
            KeyKind::P384 => alg == Algorithm::ES384,
            KeyKind::Rsa => matches!(
                alg,
                Algorithm::RS256
                    | Algorithm::RS384
                    | Algorithm::RS512
                    | Algorithm::PS256
                    | Algorithm::PS384
                    | Algorithm::PS512
            ),
            KeyKind::Ed25519 => alg == Algorithm::EdDSA,
        }
    }
}

/// The label and DER body of the first PEM block in `pem`.
fn pem_block(pem: &str) -> Option<(&str, Vec<u8>)> {
    let start = pem.find("-----BEGIN ")?;
    let rest = &pem[start + "-----BEGIN ".len()..];
    let label_end = rest.find("-----")?;
    let label = &rest[..label_end];
    let body = &rest[label_end + 5..];
    let end = body.find("-----END ")?;
    let text: String = body[..end]
        .chars()
        .filter(|c| !c.is_ascii_whitespace())
        .collect();
    STANDARD.decode(text).ok().map(|der| (label, der))
}

/// A signing key read from PEM, with the algorithm it signs with.
struct SigningKey {
    key: EncodingKey,
    alg: Algorithm,
}

/// Reads a PEM private key (PKCS#8 `PRIVATE KEY` for EC P-256/P-384, RSA and Ed25519, or
/// PKCS#1 `RSA PRIVATE KEY`) and picks the algorithm: `alg` when given (it must suit the
/// key), else ES256, ES384, RS256 or EdDSA by key type. No part of the key reaches an error.
fn signing_key(pem: &Secret, alg: Option<&str>) -> Result<SigningKey, AuthFailure> {
    let unreadable = || {
        fail!(
            Token,
            "the client private key is not a readable PEM private key"
        )
    };
    let (label, der) = pem_block(pem.expose()).ok_or_else(unreadable)?;
    let rng = SystemRandom::new();
    let (kind, key) = match label {
        "PRIVATE KEY" => {
            if EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &der, &rng).is_ok() {
                (KeyKind::P256, EncodingKey::from_ec_der(&der))
            } else if EcdsaKeyPair::from_pkcs8(&ECDSA_P384_SHA384_FIXED_SIGNING, &der, &rng).is_ok()
            {
                (KeyKind::P384, EncodingKey::from_ec_der(&der))
            } else if RsaKeyPair::from_pkcs8(&der).is_ok() {
                let key =
                    EncodingKey::from_rsa_pem(pem.expose().as_bytes()).map_err(|_| unreadable())?;
                (KeyKind::Rsa, key)
            } else if Ed25519KeyPair::from_pkcs8_maybe_unchecked(&der).is_ok() {
                (KeyKind::Ed25519, EncodingKey::from_ed_der(&der))
            } else {
                return Err(fail!(
                    Unsupported,
                    "the client private key is of a type this client cannot sign with \
                     (EC P-256/P-384, RSA or Ed25519 in PKCS#8 are supported)"
                ));
            }
        }
        "RSA PRIVATE KEY" => {
            RsaKeyPair::from_der(&der).map_err(|_| unreadable())?;
            (KeyKind::Rsa, EncodingKey::from_rsa_der(&der))
        }
        "EC PRIVATE KEY" => {
            return Err(fail!(
                Unsupported,
                "the client private key is a SEC1 `EC PRIVATE KEY`; convert it to PKCS#8 \
                 (`openssl pkcs8 -topk8 -nocrypt`)"
            ));
        }
        _ => return Err(unreadable()),
    };
    let alg = match alg {
        None => kind.default_alg(),
        Some(name) => {
            let parsed: Algorithm = name.parse().map_err(|_| {
                fail!(
                    Unsupported,
                    "client key algorithm {:?} is not a JWS algorithm this client signs with",
                    name.escape_debug().to_string()
                )
            })?;
            if !kind.allows(parsed) {
                return Err(fail!(
                    Unsupported,
                    "client key algorithm {name:?} does not suit the configured {kind:?} key"
                ));
            }
            parsed
        }
    };
    Ok(SigningKey { key, alg })
}

/// The RFC 7523 client assertion of `private_key_jwt`: `iss` = `sub` = `client_id`, `aud` =
/// the authorization server's issuer (as its metadata says it, verbatim), `iat` now, `exp` in
/// [`CLIENT_ASSERTION_LIFETIME`], and a random `jti`. Signed with `key_pem` using `alg`, or by
/// default ES256 for a P-256 key, ES384 for P-384, RS256 for RSA and EdDSA for Ed25519.
pub(crate) fn client_assertion(
    key_pem: &Secret,
    alg: Option<&str>,
    client_id: &str,
    audience: &str,
) -> Result<String, AuthFailure> {
    let key = signing_key(key_pem, alg)?;
    let now = unix_now();
    let claims = AssertionClaims {
        iss: client_id,
        sub: client_id,
        aud: audience,
        iat: now,
        exp: now + CLIENT_ASSERTION_LIFETIME.as_secs(),
        jti: random_id()?,
    };
    let mut header = Header::new(key.alg);
    header.typ = Some("JWT".to_owned());
    jsonwebtoken::encode(&header, &claims, &key.key).map_err(|err| {
        fail!(
            Token,
            "signing the client assertion failed: {}",
            err.kind_name()
        )
    })
}

/// What a `jsonwebtoken` error was, in words that cannot carry key material.
trait KindName {
    fn kind_name(&self) -> &'static str;
}

impl KindName for jsonwebtoken::errors::Error {
    fn kind_name(&self) -> &'static str {
        use jsonwebtoken::errors::ErrorKind as K;
        match self.kind() {
            K::InvalidEcdsaKey => "invalid EC key",
            K::InvalidRsaKey(_) => "invalid RSA key",
            K::RsaFailedSigning => "RSA signing failed",
            K::InvalidAlgorithm | K::InvalidAlgorithmName => "invalid algorithm",
            K::InvalidKeyFormat => "invalid key format",
            K::Crypto(_) => "cryptography error",
            _ => "error",
        }
    }
}

/// Whether `text` has the shape of a compact JWS: three base64url parts, the first two
/// non-empty.
pub(crate) fn looks_like_jwt(text: &str) -> bool {
    let parts: Vec<&str> = text.split('.').collect();
    parts.len() == 3
        && !parts[0].is_empty()
        && !parts[1].is_empty()
        && parts.iter().all(|part| {
            part.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
}

/// Reads a workload identity assertion (or a subject token) where `source` says, at the time
/// of the request, so a token the platform rotates is always the current one. Surrounding
/// whitespace is dropped; the value must be a JWT of at most [`MAX_ASSERTION_BYTES`]. The
/// assertion is not verified here: the authorization server does that.
pub(crate) fn read_assertion(source: &AssertionSource) -> Result<Secret, AuthFailure> {
    let text = match source {
        AssertionSource::Value(secret) => secret.expose().to_owned(),
        AssertionSource::Env(name) => match std::env::var(name) {
            Ok(value) => value,
            Err(std::env::VarError::NotPresent) => {
                return Err(fail!(
                    Token,
                    "the assertion variable `{}` is not set",
                    name.escape_debug()
                ));
            }
            Err(std::env::VarError::NotUnicode(_)) => {
                return Err(fail!(
                    Token,
                    "the assertion variable `{}` is not UTF-8",
                    name.escape_debug()
                ));
            }
        },
        AssertionSource::File(path) => read_capped(path)?,
    };
    let trimmed = text.trim();
    if trimmed.len() > MAX_ASSERTION_BYTES {
        return Err(fail!(
            Token,
            "the assertion is larger than {MAX_ASSERTION_BYTES} bytes"
        ));
    }
    if !looks_like_jwt(trimmed) {
        return Err(fail!(Token, "the assertion is not a JWT"));
    }
    Ok(Secret::new(trimmed))
}

/// A file's text, refusing one larger than [`MAX_ASSERTION_BYTES`] (plus some whitespace)
/// without reading it all, through the hosts' one bounded read: a FIFO or a device at the path
/// fails at once instead of hanging the token request; a link (the path is the user's config)
/// is followed to a regular file only.
fn read_capped(path: &std::path::Path) -> Result<String, AuthFailure> {
    let shown = path.display().to_string();
    let cap = MAX_ASSERTION_BYTES + 1024;
    sidewire_process::file::read_to_string(path, cap, sidewire_process::file::Symlinks::Follow)
        .map_err(|err| {
            if err.is_too_large() {
                fail!(
                    Token,
                    "the assertion file {shown:?} is larger than {MAX_ASSERTION_BYTES} bytes"
                )
            } else {
                fail!(Token, "reading the assertion file: {err}")
            }
        })
}

#[cfg(test)]
pub(crate) mod tests {
    use jsonwebtoken::{DecodingKey, Validation};
    use ring::signature::KeyPair;
    use serde_json::Value;

    use super::*;
    use crate::auth::AuthErrorKind;

    /// A fresh P-256 key as PKCS#8 PEM, and its public point (uncompressed).
    pub(crate) fn p256_pem() -> (Secret, Vec<u8>) {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng)
            .unwrap();
        (
            Secret::new(pem("PRIVATE KEY", pkcs8.as_ref())),
            pair.public_key().as_ref().to_vec(),
        )
    }

    fn pem(label: &str, der: &[u8]) -> String {
        let body = STANDARD.encode(der);
        let mut out = format!("-----BEGIN {label}-----\n");
        for chunk in body.as_bytes().chunks(64) {
            out.push_str(std::str::from_utf8(chunk).unwrap());
            out.push('\n');
        }
        out.push_str(&format!("-----END {label}-----\n"));
        out
    }

    /// Verifies a client assertion made with the key whose public point is `public`.
    pub(crate) fn verify_assertion(jwt: &str, public: &[u8], client_id: &str, aud: &str) -> Value {
        let mut validation = Validation::new(Algorithm::ES256);
        validation.set_audience(&[aud]);
        validation.set_issuer(&[client_id]);
        validation.set_required_spec_claims(&["exp", "iat", "iss", "sub", "aud"]);
        let data =
            jsonwebtoken::decode::<Value>(jwt, &DecodingKey::from_ec_der(public), &validation)
                .unwrap();
        data.claims
    }

    #[test]
    fn a_client_assertion_is_es256_with_the_rfc_7523_claims() {
        let (key, public) = p256_pem();
        let jwt = client_assertion(&key, None, "client-1", "http://localhost:1").unwrap();
        let header = jsonwebtoken::decode_header(&jwt).unwrap();
        assert_eq!(header.alg, Algorithm::ES256);
        let claims = verify_assertion(&jwt, &public, "client-1", "http://localhost:1");
        assert_eq!(claims["sub"], "client-1");
        let iat = claims["iat"].as_u64().unwrap();
        let exp = claims["exp"].as_u64().unwrap();
        assert!((60..=300).contains(&(exp - iat)), "lifetime {}", exp - iat);
        let again = client_assertion(&key, None, "client-1", "http://localhost:1").unwrap();
        let again = verify_assertion(&again, &public, "client-1", "http://localhost:1");
        assert_ne!(
            claims["jti"], again["jti"],
            "every assertion has its own jti"
        );
    }

    #[test]
    fn the_configured_algorithm_must_suit_the_key() {
        let (key, public) = p256_pem();
        let jwt = client_assertion(&key, Some("ES256"), "c", "aud").unwrap();
        verify_assertion(&jwt, &public, "c", "aud");
        for wrong in ["RS256", "ES384", "HS256", "none", "bogus"] {
            let err = client_assertion(&key, Some(wrong), "c", "aud").unwrap_err();
            assert_eq!(err.kind, AuthErrorKind::Unsupported, "{wrong}");
        }
    }

    #[test]
    fn rsa_keys_in_pkcs8_and_pkcs1_sign_rs256_by_default() {
        // A 2048-bit key made for these tests only (`openssl genpkey -algorithm RSA`).
        let pkcs8 = include_str!("../../tests/fixtures/rsa-test-key.pem");
        let pkcs1 = include_str!("../../tests/fixtures/rsa-test-key.pkcs1.pem");
        let public = include_str!("../../tests/fixtures/rsa-test-key.pub.pem");
        let decoding = DecodingKey::from_rsa_pem(public.as_bytes()).unwrap();
        for (pem, alg, expected) in [
            (pkcs8, None, Algorithm::RS256),
            (pkcs1, None, Algorithm::RS256),
            (pkcs8, Some("PS256"), Algorithm::PS256),
        ] {
            let jwt = client_assertion(&Secret::new(pem), alg, "c", "aud").unwrap();
            let mut validation = Validation::new(expected);
            validation.set_audience(&["aud"]);
            let data = jsonwebtoken::decode::<Value>(&jwt, &decoding, &validation).unwrap();
            assert_eq!(data.header.alg, expected);
            assert_eq!(data.claims["iss"], "c");
        }
        let err = client_assertion(&Secret::new(pkcs8), Some("ES256"), "c", "aud").unwrap_err();
        assert_eq!(err.kind, AuthErrorKind::Unsupported);
    }

    #[test]
    fn an_unreadable_key_fails_without_showing_it() {
        let key =
            Secret::new("-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n");
        let err = client_assertion(&key, None, "c", "aud").unwrap_err();
        assert!(!err.to_string().contains("bm90IGEga2V5"), "{err}");
        let err =
            client_assertion(&Secret::new("garbage-key-material"), None, "c", "aud").unwrap_err();
        assert_eq!(err.kind, AuthErrorKind::Token);
        assert!(!err.to_string().contains("garbage-key-material"), "{err}");
        let sec1 =
            Secret::new("-----BEGIN EC PRIVATE KEY-----\nAAAA\n-----END EC PRIVATE KEY-----\n");
        let err = client_assertion(&sec1, None, "c", "aud").unwrap_err();
        assert_eq!(err.kind, AuthErrorKind::Unsupported);
    }

    #[test]
    fn assertions_are_read_at_request_time_and_checked_for_shape_and_size() {
        let jwt = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ3In0.c2ln";
        let value = read_assertion(&AssertionSource::Value(Secret::new(format!(" {jwt}\n"))));
        assert_eq!(value.unwrap().expose(), jwt);

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, format!("{jwt}\n")).unwrap();
        let source = AssertionSource::File(path.clone());
        assert_eq!(read_assertion(&source).unwrap().expose(), jwt);
        std::fs::write(&path, "a.b.c2").unwrap();
        assert_eq!(
            read_assertion(&source).unwrap().expose(),
            "a.b.c2",
            "read anew"
        );

        std::fs::write(&path, "x".repeat(MAX_ASSERTION_BYTES + 2048)).unwrap();
        let err = read_assertion(&source).unwrap_err();
        assert!(err.message.contains("larger than"), "{err}");
        std::fs::write(&path, format!("a.{}.c", "b".repeat(MAX_ASSERTION_BYTES))).unwrap();
        assert!(
            read_assertion(&source)
                .unwrap_err()
                .message
                .contains("larger than")
        );

        let not_jwt = read_assertion(&AssertionSource::Value(Secret::new("secret-opaque")));
        let err = not_jwt.unwrap_err();
        assert!(!err.to_string().contains("secret-opaque"), "{err}");
        let missing = read_assertion(&AssertionSource::Env(
            "SIDEWIRE_TEST_ASSERTION_THAT_IS_NEVER_SET".into(),
        ));
        assert_eq!(missing.unwrap_err().kind, AuthErrorKind::Token);
    }
}
