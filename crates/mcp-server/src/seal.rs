//! Tokens the server hands the client and must get back unchanged: a modern request's
//! `requestState`, a listing's cursor and, with a [`SealingKey`], a legacy session's id. Each is
//! `base64url(payload).base64url(tag)`, the tag an HMAC-SHA256 under a key drawn at random when
//! the [`crate::Server`] is built (or the [`SealingKey`] it is given), over the
//! payload and what the token is bound to (the method and the tool, prompt or resource it
//! names; a cursor's list). A token from another server, another request or with one byte
//! changed is refused (`-32602`), and so is one older than its lifetime.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::hmac;
use serde_json::{Value, json};

use crate::Error;

/// The most bytes of a token read (larger is refused before any work).
pub const MAX_TOKEN_BYTES: usize = 64 << 10;
/// The deepest nesting of a sealed value (the token's own wrapper adds one level, and JSON
/// readers stop at 128).
pub const MAX_STATE_NESTING: usize = 100;
/// How long a `requestState` is honoured.
pub const STATE_LIFETIME: Duration = Duration::from_secs(3600);

/// A secret that seals what a server hands out. Replicas given the same key open each other's
/// `requestState`s and cursors and take over each other's legacy sessions, so any of them can
/// serve any request behind a load balancer.
#[derive(Clone)]
pub struct SealingKey(hmac::Key);

impl SealingKey {
    /// The fewest bytes of secret taken.
    pub const MIN_BYTES: usize = 32;

    /// A key from `secret` (at least [`SealingKey::MIN_BYTES`] bytes, e.g. 32 random bytes
    /// shared by the replicas); `None` when it is shorter.
    pub fn from_bytes(secret: &[u8]) -> Option<SealingKey> {
        (secret.len() >= Self::MIN_BYTES)
            .then(|| SealingKey(hmac::Key::new(hmac::HMAC_SHA256, secret)))
    }
}

impl std::fmt::Debug for SealingKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SealingKey([REDACTED])")
    }
}

/// The server's sealing key.
pub(crate) struct Sealer {
    key: hmac::Key,
}

impl std::fmt::Debug for Sealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Sealer([REDACTED])")
    }
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs())
}

impl Sealer {
    /// A fresh random key.
    pub(crate) fn new() -> Self {
        let rng = ring::rand::SystemRandom::new();
        let key = hmac::Key::generate(hmac::HMAC_SHA256, &rng).expect("the system's random source");
        Sealer { key }
    }

    /// The given key.
    pub(crate) fn with_key(key: SealingKey) -> Self {
        Sealer { key: key.0 }
    }

    /// Seals `value`, bound to `binding`.
    ///
    /// # Errors
    ///
    /// [`Error::Limit`] when the value nests deeper than [`MAX_STATE_NESTING`] or its token
    /// would be longer than [`MAX_TOKEN_BYTES`]: a token `open` would refuse is never handed
    /// out.
    pub(crate) fn seal(&self, binding: &str, value: &Value) -> Result<String, Error> {
        if nesting(value) > MAX_STATE_NESTING {
            return Err(Error::Limit("requestState nesting"));
        }
        let token = self.seal_at(binding, value, now());
        if token.len() > MAX_TOKEN_BYTES {
            return Err(Error::Limit("requestState size"));
        }
        Ok(token)
    }

    fn seal_at(&self, binding: &str, value: &Value, issued: u64) -> String {
        let payload = json!({ "v": value, "t": issued }).to_string();
        let tag = hmac::sign(&self.key, &tagged(binding, payload.as_bytes()));
        format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(payload),
            URL_SAFE_NO_PAD.encode(tag.as_ref())
        )
    }

    /// Opens a token sealed with `binding`, refusing it when forged, changed, bound to
    /// something else or older than `lifetime`.
    pub(crate) fn open(
        &self,
        binding: &str,
        token: &str,
        lifetime: Duration,
        what: &str,
    ) -> Result<Value, Error> {
        let refused = || Error::invalid_params(format!("invalid {what}"));
        if token.len() > MAX_TOKEN_BYTES {
            return Err(refused());
        }
        let (payload, tag) = token.split_once('.').ok_or_else(refused)?;
        let payload = URL_SAFE_NO_PAD.decode(payload).map_err(|_| refused())?;
        let tag = URL_SAFE_NO_PAD.decode(tag).map_err(|_| refused())?;
        hmac::verify(&self.key, &tagged(binding, &payload), &tag).map_err(|_| refused())?;
        let mut payload: Value = serde_json::from_slice(&payload).map_err(|_| refused())?;
        let issued = payload["t"].as_u64().ok_or_else(refused)?;
        if now().saturating_sub(issued) > lifetime.as_secs() {
            return Err(Error::invalid_params(format!("expired {what}")));
        }
        Ok(payload["v"].take())
    }
}

/// How deep `value` nests (a scalar is 0), without recursion.
pub(crate) fn nesting(value: &Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(value, 0usize)];
    while let Some((value, depth)) = stack.pop() {
        deepest = deepest.max(depth);
        match value {
            Value::Array(items) => stack.extend(items.iter().map(|item| (item, depth + 1))),
            Value::Object(members) => stack.extend(members.values().map(|item| (item, depth + 1))),
            _ => {}
        }
    }
    deepest
}

/// The bytes the tag covers: the binding's length, the binding, the payload.
fn tagged(binding: &str, payload: &[u8]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(8 + binding.len() + payload.len());
    bytes.extend_from_slice(&(binding.len() as u64).to_be_bytes());
    bytes.extend_from_slice(binding.as_bytes());
    bytes.extend_from_slice(payload);
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replicas_with_one_key_open_each_others_tokens_and_no_one_else_does() {
        assert!(SealingKey::from_bytes(&[7; SealingKey::MIN_BYTES - 1]).is_none());
        let key = SealingKey::from_bytes(&[7; SealingKey::MIN_BYTES]).unwrap();
        assert_eq!(format!("{key:?}"), "SealingKey([REDACTED])");
        let (a, b) = (Sealer::with_key(key.clone()), Sealer::with_key(key));
        let token = a.seal("b", &json!({"n": 1})).unwrap();
        assert_eq!(
            b.open("b", &token, STATE_LIFETIME, "t").unwrap(),
            json!({"n": 1})
        );
        let other = Sealer::with_key(SealingKey::from_bytes(&[8; 32]).unwrap());
        assert!(other.open("b", &token, STATE_LIFETIME, "t").is_err());
        assert!(
            Sealer::new()
                .open("b", &token, STATE_LIFETIME, "t")
                .is_err()
        );
    }

    #[test]
    fn a_changed_rebound_or_foreign_token_is_refused() {
        let sealer = Sealer::new();
        let token = sealer.seal("tools/call\0t", &json!({"round": 1})).unwrap();
        let open = |binding: &str, token: &str| {
            sealer.open(binding, token, STATE_LIFETIME, "requestState")
        };
        assert_eq!(open("tools/call\0t", &token).unwrap(), json!({"round": 1}));
        assert!(
            open("tools/call\0other", &token)
                .unwrap_err()
                .is_invalid_params()
        );
        let mut bytes = token.clone().into_bytes();
        bytes[3] ^= 1;
        assert!(open("tools/call\0t", &String::from_utf8_lossy(&bytes)).is_err());
        let foreign = Sealer::new()
            .seal("tools/call\0t", &json!({"round": 1}))
            .unwrap();
        assert!(open("tools/call\0t", &foreign).is_err());
        assert!(open("tools/call\0t", "").is_err());
        assert!(open("tools/call\0t", &"a".repeat(MAX_TOKEN_BYTES + 1)).is_err());
        let old = sealer.seal_at(
            "tools/call\0t",
            &json!(1),
            now() - STATE_LIFETIME.as_secs() - 1,
        );
        assert!(
            open("tools/call\0t", &old)
                .unwrap_err()
                .to_string()
                .contains("expired")
        );
    }
}

#[cfg(test)]
mod bounds {
    use super::*;

    #[test]
    fn a_state_too_large_or_too_deep_is_refused_when_sealed() {
        let sealer = Sealer::new();
        let large = json!("x".repeat(MAX_TOKEN_BYTES));
        assert!(sealer.seal("b", &large).unwrap_err().is_limit());
        let mut deep = json!(1);
        for _ in 0..=MAX_STATE_NESTING {
            deep = json!([deep]);
        }
        assert!(sealer.seal("b", &deep).unwrap_err().is_limit());
        let mut fits = json!(1);
        for _ in 0..MAX_STATE_NESTING {
            fits = json!([fits]);
        }
        let token = sealer.seal("b", &fits).unwrap();
        assert_eq!(
            sealer
                .open("b", &token, STATE_LIFETIME, "requestState")
                .unwrap(),
            fits
        );
    }
}
