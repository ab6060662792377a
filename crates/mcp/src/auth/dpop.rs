//! DPoP (RFC 9449): an ephemeral P-256 key per connection, the proof JWT that goes with every
//! token request and every request to the server, and the nonces servers hand out
//! (`DPoP-Nonce`), remembered per origin within a small bound.
//!
//! The key lives in memory only: a DPoP-bound token is useless without it, so a restart means
//! a new token (the store keeps `token_type`, and the session re-authorizes when it holds a
//! DPoP token but no key).

use std::collections::VecDeque;
use std::fmt;
use std::sync::Mutex;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use http::header::{HeaderMap, HeaderName, WWW_AUTHENTICATE};
use jsonwebtoken::jwk::{
    AlgorithmParameters, CommonParameters, EllipticCurve, EllipticCurveKeyParameters,
    EllipticCurveKeyType, Jwk,
};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use ring::rand::SystemRandom;
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
use serde::Serialize;
use sha2::{Digest, Sha256};
use sidewire_jsonrpc::lock;
use url::Url;

use super::failure::{AuthFailure, fail};
use super::jwt::random_id;
use super::types::unix_now;

/// The request header that carries a proof.
pub(crate) const DPOP: HeaderName = HeaderName::from_static("dpop");
/// The response header that carries a server's nonce.
pub(crate) const DPOP_NONCE: HeaderName = HeaderName::from_static("dpop-nonce");

/// How many origins' nonces a connection remembers (its authorization server, its resource
/// server, and room for an identity provider); the least recently set one is forgotten first.
pub const MAX_DPOP_NONCE_ORIGINS: usize = 4;
/// The longest `DPoP-Nonce` value kept; a longer one is ignored.
pub const MAX_DPOP_NONCE_BYTES: usize = 1024;

/// The only proof algorithm this client signs with.
const PROOF_ALG: &str = "ES256";

/// Whether an authorization server's `dpop_signing_alg_values_supported` lets this client use
/// DPoP: it must list `ES256` (`none` is never a proof algorithm, and an empty or absent list
/// means the server does not do DPoP).
pub(crate) fn supported(metadata_algs: &[String]) -> bool {
    metadata_algs.iter().any(|alg| alg == PROOF_ALG)
}

/// The claims of a DPoP proof (RFC 9449 §4.2).
#[derive(Serialize)]
struct ProofClaims<'a> {
    jti: String,
    htm: &'a str,
    htu: String,
    iat: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    ath: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    nonce: Option<&'a str>,
}

/// One connection's DPoP key pair (P-256, made fresh, never stored) and the nonces its
/// servers sent. `Debug` shows the thumbprint only.
pub(crate) struct DpopKey {
    /// The PKCS#8 document of the private key, as `jsonwebtoken` signs with it.
    signing: EncodingKey,
    /// The public key as a JWK (`kty`, `crv`, `x`, `y`; no `d`).
    jwk: Jwk,
    /// The RFC 7638 thumbprint of the public key (base64url SHA-256).
    thumbprint: String,
    nonces: Mutex<DpopNonces>,
}

impl fmt::Debug for DpopKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DpopKey")
            .field("thumbprint", &self.thumbprint)
            .finish_non_exhaustive()
    }
}

impl DpopKey {
    /// A new ephemeral key.
    pub(crate) fn generate() -> Result<Self, AuthFailure> {
        let rng = SystemRandom::new();
        let failed = || fail!(Unsupported, "making a DPoP key failed");
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
            .map_err(|_| failed())?;
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng)
            .map_err(|_| failed())?;
        // An uncompressed point: 0x04, then x and y, 32 bytes each.
        let point = pair.public_key().as_ref();
        if point.len() != 65 || point[0] != 4 {
            return Err(failed());
        }
        let x = URL_SAFE_NO_PAD.encode(&point[1..33]);
        let y = URL_SAFE_NO_PAD.encode(&point[33..]);
        // RFC 7638 §3.2: the required members in lexicographic order, no whitespace.
        let canonical = format!(r#"{{"crv":"P-256","kty":"EC","x":"{x}","y":"{y}"}}"#);
        let thumbprint = URL_SAFE_NO_PAD.encode(Sha256::digest(canonical.as_bytes()));
        let jwk = Jwk {
            common: CommonParameters::default(),
            algorithm: AlgorithmParameters::EllipticCurve(EllipticCurveKeyParameters {
                key_type: EllipticCurveKeyType::EC,
                curve: EllipticCurve::P256,
                x,
                y,
            }),
        };
        Ok(DpopKey {
            signing: EncodingKey::from_ec_der(pkcs8.as_ref()),
            jwk,
            thumbprint,
            nonces: Mutex::new(DpopNonces::default()),
        })
    }

    /// The public key as a JWK.
    #[cfg(test)]
    pub(crate) fn jwk(&self) -> &Jwk {
        &self.jwk
    }

    /// The RFC 7638 thumbprint of the public key (what a bound token's `cnf.jkt` names).
    #[cfg(test)]
    pub(crate) fn thumbprint(&self) -> &str {
        &self.thumbprint
    }

    /// A proof for one request: header `typ: dpop+jwt`, `alg: ES256`, the public `jwk`;
    /// claims a random `jti` (every call its own), `htm`, `htu` (`htu` without its query and
    /// fragment), `iat` now, `ath` (base64url SHA-256 of `access_token`) when the request
    /// carries a token, and `nonce` when given.
    pub(crate) fn proof(
        &self,
        htm: &str,
        htu: &str,
        access_token: Option<&str>,
        nonce: Option<&str>,
    ) -> Result<String, AuthFailure> {
        let mut url = Url::parse(htu).map_err(|_| fail!(Unsupported, "invalid DPoP target URL"))?;
        url.set_query(None);
        url.set_fragment(None);
        let claims = ProofClaims {
            jti: random_id()?,
            htm,
            htu: url.into(),
            iat: unix_now(),
            ath: access_token.map(|token| URL_SAFE_NO_PAD.encode(Sha256::digest(token.as_bytes()))),
            nonce,
        };
        let mut header = Header::new(Algorithm::ES256);
        header.typ = Some("dpop+jwt".to_owned());
        header.jwk = Some(self.jwk.clone());
        jsonwebtoken::encode(&header, &claims, &self.signing)
            .map_err(|_| fail!(Unsupported, "signing a DPoP proof failed"))
    }

    /// A proof for a request to `url`, with the nonce last remembered for its origin.
    pub(crate) fn proof_for(
        &self,
        htm: &str,
        url: &Url,
        access_token: Option<&str>,
    ) -> Result<String, AuthFailure> {
        let nonce = self.nonce(url);
        self.proof(htm, url.as_str(), access_token, nonce.as_deref())
    }

    /// The nonce last remembered for `url`'s origin.
    pub(crate) fn nonce(&self, url: &Url) -> Option<String> {
        lock(&self.nonces).get(url).map(str::to_owned)
    }

    /// Remembers the `DPoP-Nonce` of an answer from `url`, when it has a usable one; returns
    /// whether it had. Call it on every answer, success or not (RFC 9449 §8.2: a server may
    /// send a new nonce with any response).
    pub(crate) fn remember_nonce(&self, url: &Url, headers: &HeaderMap) -> bool {
        match nonce_header(headers) {
            Some(nonce) => {
                lock(&self.nonces).set(url, nonce);
                true
            }
            None => false,
        }
    }
}

/// The last `DPoP-Nonce` of each origin, at most [`MAX_DPOP_NONCE_ORIGINS`] of them.
#[derive(Debug, Default)]
pub(crate) struct DpopNonces {
    /// `(origin, nonce)`, the most recently set last.
    entries: VecDeque<(String, String)>,
}

impl DpopNonces {
    /// The nonce of `url`'s origin.
    pub(crate) fn get(&self, url: &Url) -> Option<&str> {
        let origin = url.origin().ascii_serialization();
        self.entries
            .iter()
            .find(|(known, _)| *known == origin)
            .map(|(_, nonce)| nonce.as_str())
    }

    /// Sets the nonce of `url`'s origin, forgetting the least recently set origin when full.
    pub(crate) fn set(&mut self, url: &Url, nonce: &str) {
        let origin = url.origin().ascii_serialization();
        self.entries.retain(|(known, _)| *known != origin);
        if self.entries.len() == MAX_DPOP_NONCE_ORIGINS {
            self.entries.pop_front();
        }
        self.entries.push_back((origin, nonce.to_owned()));
    }

    /// How many origins have a nonce.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }
}

/// An answer's `DPoP-Nonce`, when it has exactly one usable value: at most
/// [`MAX_DPOP_NONCE_BYTES`], of the RFC 9449 §8.1 `NQCHAR`s (printable ASCII but `"` and `\`).
pub(crate) fn nonce_header(headers: &HeaderMap) -> Option<&str> {
    let mut values = headers.get_all(&DPOP_NONCE).iter();
    let value = values.next()?;
    if values.next().is_some() {
        return None;
    }
    let text = value.to_str().ok()?;
    let nqchar = |b: u8| b == 0x21 || (0x23..=0x5b).contains(&b) || (0x5d..=0x7e).contains(&b);
    (!text.is_empty() && text.len() <= MAX_DPOP_NONCE_BYTES && text.bytes().all(nqchar))
        .then_some(text)
}

/// Whether an answer asks for the request again with a server nonce (RFC 9449 §8 and §9): an
/// authorization server's `400` with the JSON `error: use_dpop_nonce`, or a resource server's
/// `401` whose `DPoP` challenge says `error="use_dpop_nonce"`; either way with a usable
/// `DPoP-Nonce`. Such an answer is not a refusal of the token: the caller retries once, with a
/// new proof carrying the nonce, and never re-authorizes for it.
pub(crate) fn is_use_dpop_nonce(status: u16, headers: &HeaderMap, body: &[u8]) -> bool {
    if nonce_header(headers).is_none() {
        return false;
    }
    match status {
        400 => {
            #[derive(serde::Deserialize)]
            struct ErrorBody {
                error: String,
            }
            serde_json::from_slice::<ErrorBody>(body).is_ok_and(|b| b.error == "use_dpop_nonce")
        }
        401 => headers
            .get_all(WWW_AUTHENTICATE)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .any(dpop_challenge_wants_nonce),
        _ => false,
    }
}

/// Whether a `WWW-Authenticate` value holds a `DPoP` challenge with
/// `error="use_dpop_nonce"` (quoted or not). Other challenges in the same value (`Bearer
/// ...,`) are skipped: the search starts at the `DPoP` scheme token and ends at the next
/// scheme (a token followed by a space rather than `=`).
fn dpop_challenge_wants_nonce(value: &str) -> bool {
    let mut in_dpop = false;
    for item in split_outside_quotes(value) {
        let item = item.trim();
        // A challenge starts with a scheme: `Scheme` alone or `Scheme param=...`.
        let (first, rest) = match item.split_once(' ') {
            Some((first, rest)) if !first.contains('=') => (Some(first), rest.trim()),
            _ if !item.contains('=') && !item.is_empty() => (Some(item), ""),
            _ => (None, item),
        };
        if let Some(scheme) = first {
            in_dpop = scheme.eq_ignore_ascii_case("dpop");
        }
        if in_dpop
            && let Some((name, value)) = rest.split_once('=')
            && name.trim().eq_ignore_ascii_case("error")
            && value.trim().trim_matches('"') == "use_dpop_nonce"
        {
            return true;
        }
    }
    false
}

/// `value` split at commas that are not inside a quoted string.
fn split_outside_quotes(value: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut start, mut quoted, mut escaped) = (0, false, false);
    for (at, c) in value.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            ',' if !quoted => {
                parts.push(&value[start..at]);
                start = at + 1;
            }
            _ => {}
        }
    }
    parts.push(&value[start..]);
    parts
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use jsonwebtoken::{DecodingKey, Validation};
    use serde_json::Value;

    use super::*;
    use http::header::HeaderValue;

    /// Decodes and verifies a proof against the JWK in its own header, and checks that JWK is
    /// the key's; returns the header JSON and the claims.
    pub(crate) fn verify(key: &DpopKey, proof: &str) -> (Value, Value) {
        let header = jsonwebtoken::decode_header(proof).unwrap();
        assert_eq!(header.typ.as_deref(), Some("dpop+jwt"));
        assert_eq!(header.alg, Algorithm::ES256);
        let jwk = header.jwk.clone().unwrap();
        assert_eq!(&jwk, key.jwk());
        let mut validation = Validation::new(Algorithm::ES256);
        validation.set_required_spec_claims(&["iat"]);
        validation.validate_exp = false;
        validation.validate_aud = false;
        let data = jsonwebtoken::decode::<Value>(
            proof,
            &DecodingKey::from_jwk(&jwk).unwrap(),
            &validation,
        )
        .unwrap();
        let raw_header = proof.split('.').next().unwrap();
        let raw_header: Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(raw_header).unwrap()).unwrap();
        (raw_header, data.claims)
    }

    #[test]
    fn a_proof_verifies_against_its_jwk_with_the_rfc_9449_claims() {
        let key = DpopKey::generate().unwrap();
        let proof = key
            .proof("POST", "https://as.example/token?x=1#frag", None, None)
            .unwrap();
        let (header, claims) = verify(&key, &proof);
        let jwk = &header["jwk"];
        assert_eq!(jwk["kty"], "EC");
        assert_eq!(jwk["crv"], "P-256");
        assert!(jwk.get("d").is_none(), "no private part: {jwk}");
        assert_eq!(jwk.as_object().unwrap().len(), 4, "{jwk}");
        assert_eq!(claims["htm"], "POST");
        assert_eq!(claims["htu"], "https://as.example/token");
        assert!(claims.get("ath").is_none());
        assert!(claims.get("nonce").is_none());
        let iat = claims["iat"].as_u64().unwrap();
        assert!(iat.abs_diff(unix_now()) < 60);
    }

    #[test]
    fn ath_is_the_base64url_sha256_of_the_token_and_the_nonce_is_carried() {
        let key = DpopKey::generate().unwrap();
        let proof = key
            .proof(
                "GET",
                "http://localhost:1/mcp",
                Some("tok-123"),
                Some("n-1"),
            )
            .unwrap();
        let (_, claims) = verify(&key, &proof);
        // SHA-256("tok-123"), computed independently of the code under test.
        let expected =
            URL_SAFE_NO_PAD.encode(ring::digest::digest(&ring::digest::SHA256, b"tok-123"));
        assert_eq!(claims["ath"], expected.as_str());
        assert_eq!(claims["nonce"], "n-1");
        assert_eq!(claims["htm"], "GET");
    }

    #[test]
    fn the_thumbprint_is_rfc_7638_and_stable_and_every_jti_is_new() {
        let key = DpopKey::generate().unwrap();
        let mut jtis = HashSet::new();
        for _ in 0..20 {
            let (header, claims) =
                verify(&key, &key.proof("POST", "http://a/", None, None).unwrap());
            let jwk = &header["jwk"];
            let canonical = format!(
                r#"{{"crv":"P-256","kty":"EC","x":"{}","y":"{}"}}"#,
                jwk["x"].as_str().unwrap(),
                jwk["y"].as_str().unwrap()
            );
            let thumb = URL_SAFE_NO_PAD.encode(ring::digest::digest(
                &ring::digest::SHA256,
                canonical.as_bytes(),
            ));
            assert_eq!(thumb, key.thumbprint());
            assert!(jtis.insert(claims["jti"].as_str().unwrap().to_owned()));
        }
        let other = DpopKey::generate().unwrap();
        assert_ne!(other.thumbprint(), key.thumbprint());
        assert!(!format!("{key:?}").contains("signing"));
    }

    #[test]
    fn proofs_for_a_url_carry_its_origins_last_nonce() {
        let key = DpopKey::generate().unwrap();
        let rs = Url::parse("http://localhost:7/mcp?q=1").unwrap();
        let mut answer = HeaderMap::new();
        answer.insert(DPOP_NONCE, HeaderValue::from_static("rs-nonce"));
        assert!(key.remember_nonce(&rs, &answer));
        let proof = key.proof_for("POST", &rs, Some("the-token")).unwrap();
        let (_, claims) = verify(&key, &proof);
        assert_eq!(claims["nonce"], "rs-nonce");
        assert_eq!(claims["htu"], "http://localhost:7/mcp");
        assert!(claims["ath"].is_string());
        // Another origin has no nonce; an answer without one leaves the known one.
        let other = Url::parse("http://localhost:8/token").unwrap();
        let (_, claims) = verify(&key, &key.proof_for("POST", &other, None).unwrap());
        assert!(claims.get("nonce").is_none());
        assert!(!key.remember_nonce(&rs, &HeaderMap::new()));
        assert_eq!(key.nonce(&rs).as_deref(), Some("rs-nonce"));
    }

    #[test]
    fn nonces_are_kept_per_origin_within_the_bound() {
        let mut nonces = DpopNonces::default();
        let url = |port: u16| Url::parse(&format!("http://localhost:{port}/x")).unwrap();
        for port in 0..(MAX_DPOP_NONCE_ORIGINS as u16 + 3) {
            nonces.set(&url(port), &format!("n{port}"));
        }
        assert_eq!(nonces.len(), MAX_DPOP_NONCE_ORIGINS);
        assert_eq!(nonces.get(&url(0)), None, "the oldest origin was forgotten");
        let last = MAX_DPOP_NONCE_ORIGINS as u16 + 2;
        assert_eq!(nonces.get(&url(last)), Some(format!("n{last}").as_str()));
        nonces.set(&url(last), "newer");
        assert_eq!(nonces.get(&url(last)), Some("newer"));
        assert_eq!(nonces.len(), MAX_DPOP_NONCE_ORIGINS);

        let mut headers = HeaderMap::new();
        headers.insert(
            DPOP_NONCE,
            HeaderValue::try_from("n".repeat(MAX_DPOP_NONCE_BYTES)).unwrap(),
        );
        assert!(nonce_header(&headers).is_some());
        headers.insert(
            DPOP_NONCE,
            HeaderValue::try_from("n".repeat(MAX_DPOP_NONCE_BYTES + 1)).unwrap(),
        );
        assert!(nonce_header(&headers).is_none(), "over the cap");
        headers.insert(DPOP_NONCE, HeaderValue::from_static("has\"quote"));
        assert!(nonce_header(&headers).is_none(), "not NQCHARs");
        headers.insert(DPOP_NONCE, HeaderValue::from_static("a"));
        headers.append(DPOP_NONCE, HeaderValue::from_static("b"));
        assert!(nonce_header(&headers).is_none(), "two values");
    }

    #[test]
    fn use_dpop_nonce_is_recognised_in_the_as_and_rs_forms_only() {
        let with_nonce = |extra: &[(&str, &str)]| {
            let mut headers = HeaderMap::new();
            headers.insert(DPOP_NONCE, HeaderValue::from_static("n"));
            for (name, value) in extra {
                headers.append(
                    HeaderName::try_from(*name).unwrap(),
                    HeaderValue::try_from(*value).unwrap(),
                );
            }
            headers
        };
        let as_body = br#"{"error":"use_dpop_nonce","error_description":"x"}"#;
        assert!(is_use_dpop_nonce(400, &with_nonce(&[]), as_body));
        assert!(
            !is_use_dpop_nonce(400, &HeaderMap::new(), as_body),
            "no nonce"
        );
        assert!(!is_use_dpop_nonce(
            400,
            &with_nonce(&[]),
            br#"{"error":"invalid_grant"}"#
        ));
        assert!(!is_use_dpop_nonce(500, &with_nonce(&[]), as_body));

        let rs = |challenge: &str| with_nonce(&[("www-authenticate", challenge)]);
        assert!(is_use_dpop_nonce(
            401,
            &rs(r#"DPoP error="use_dpop_nonce", resource_metadata="http://a/.well-known/x""#),
            b"{}"
        ));
        assert!(is_use_dpop_nonce(
            401,
            &rs(r#"Bearer realm="a, b", dpop algs="ES256", error=use_dpop_nonce"#),
            b""
        ));
        assert!(
            !is_use_dpop_nonce(
                401,
                &rs(r#"DPoP resource_metadata="x", Bearer error="use_dpop_nonce""#),
                b""
            ),
            "the error belongs to the Bearer challenge"
        );
        assert!(!is_use_dpop_nonce(
            401,
            &rs(r#"DPoP error="invalid_token""#),
            b""
        ));
        assert!(
            !is_use_dpop_nonce(401, &rs(r#"DPoP realm="error=\"use_dpop_nonce\"""#), b""),
            "inside a quoted string"
        );
        assert!(
            !is_use_dpop_nonce(
                401,
                &HeaderMap::from_iter([(
                    WWW_AUTHENTICATE,
                    HeaderValue::from_static(r#"DPoP error="use_dpop_nonce""#)
                )]),
                b""
            ),
            "no DPoP-Nonce"
        );
    }

    #[test]
    fn dpop_is_supported_only_when_es256_is_listed() {
        let algs = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(supported(&algs(&["RS256", "ES256"])));
        assert!(!supported(&algs(&[])));
        assert!(!supported(&algs(&["none"])));
        assert!(!supported(&algs(&["RS256", "es256"])));
    }
}
