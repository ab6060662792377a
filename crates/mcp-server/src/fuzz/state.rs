//! Fuzzing the tokens a client hands back: a modern request's `requestState` and a listing's
//! cursor, sealed and opened by [`Sealer`].

use serde_json::Value;

use crate::seal::{MAX_TOKEN_BYTES, STATE_LIFETIME, Sealer};

/// How deep a sealed value may nest and still open: the token's payload wraps it in one more
/// object, and serde_json reads at most 127 levels (its recursion limit). A deeper value seals
/// to a token that is refused like a forged one.
const MAX_VALUE_NESTING: usize = 127;

/// What a refused token is called in the error.
const WHAT: &str = "requestState";

/// Byte values a changed token byte is drawn from: the token's own alphabet and its neighbours.
const REPLACEMENTS: &[u8] =
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.+/= \0";

/// `data[0]` is the binding's length (up to 31 bytes), the binding follows, and the rest is
/// both a token (opened as it is) and the value to seal (its JSON, or else its text).
///
/// Invariants: no panic; a fresh key opens no token it did not seal (the arbitrary one, the
/// sealed one under another binding, with one byte changed at eight places the input picks
/// and at its ends, cut short or extended, or the sealed one under another key), and every
/// refusal is `-32602` ("invalid", never "expired"); a sealed token opens under its binding
/// to the value, as its JSON text reads back (`seal` refuses, with `Error::Limit`, a value
/// deeper than `MAX_STATE_NESTING` or whose token would pass [`MAX_TOKEN_BYTES`], so every
/// token it hands out opens).
pub fn state(data: &[u8]) {
    let Some((&length, rest)) = data.split_first() else {
        return;
    };
    let (binding, rest) = rest.split_at(usize::from(length % 32).min(rest.len()));
    let binding = String::from_utf8_lossy(binding);
    let sealer = Sealer::new();
    refused(&sealer, &binding, &String::from_utf8_lossy(rest));

    let value = serde_json::from_slice::<Value>(rest)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(rest).into_owned()));
    let token = match sealer.seal(&binding, &value) {
        Ok(token) => token,
        // Too large or too deep: refused when sealed, so no token goes out that `open` refuses.
        Err(err) => {
            assert!(err.is_limit(), "{err}");
            return;
        }
    };
    assert!(token.is_ascii(), "a token is base64url and a dot");
    // Every token `seal` hands out opens.
    if token.len() <= MAX_TOKEN_BYTES && nesting(&value) < MAX_VALUE_NESTING {
        let opened = sealer
            .open(&binding, &token, STATE_LIFETIME, WHAT)
            .unwrap_or_else(|err| panic!("a sealed token was refused: {err}"));
        // What the token carries is the value's JSON text: a float reads back as that text
        // reads, which the default serde_json parser need not make the same `f64`.
        let carried: Value =
            serde_json::from_str(&value.to_string()).expect("the value's own JSON text");
        assert_eq!(opened, carried);
    } else {
        refused(&sealer, &binding, &token);
    }

    let mut other = binding.clone().into_owned();
    other.push('\0');
    refused(&sealer, &other, &token);
    if let Some(first) = binding.chars().next() {
        refused(&sealer, &binding[first.len_utf8()..], &token);
    }

    let bytes = token.as_bytes();
    let mut places: Vec<(usize, u8)> = rest
        .iter()
        .take(8)
        .enumerate()
        .map(|(k, &byte)| {
            let at = (usize::from(byte) * 131 + k * 17) % bytes.len();
            (
                at,
                REPLACEMENTS[(usize::from(byte) + k) % REPLACEMENTS.len()],
            )
        })
        .collect();
    let dot = token.find('.').expect("a token has a dot");
    for at in [0, dot.saturating_sub(1), dot, dot + 1, bytes.len() - 1] {
        places.push((at, b'A'));
        places.push((at, b'.'));
    }
    for (at, replacement) in places {
        let mut changed = bytes.to_vec();
        changed[at] = match (changed[at] == replacement, replacement) {
            (false, replacement) => replacement,
            (true, b'A') => b'B',
            (true, _) => b'A',
        };
        let changed = String::from_utf8(changed).expect("ASCII stays UTF-8");
        refused(&sealer, &binding, &changed);
    }
    refused(&sealer, &binding, &token[..token.len() - 1]);
    refused(&sealer, &binding, &format!("{token}A"));
    refused(&Sealer::new(), &binding, &token);
}

/// How many arrays and objects `value` nests (a scalar: 0).
fn nesting(value: &Value) -> usize {
    let inner = match value {
        Value::Array(items) => items.iter().map(nesting).max(),
        Value::Object(members) => members.values().map(nesting).max(),
        _ => return 0,
    };
    1 + inner.unwrap_or(0)
}

/// `token` must be refused under `binding`, as a forged token is.
fn refused(sealer: &Sealer, binding: &str, token: &str) {
    match sealer.open(binding, token, STATE_LIFETIME, WHAT) {
        Ok(value) => panic!("{token:?} opened under {binding:?} to {value}"),
        Err(err) => {
            assert!(err.is_invalid_params(), "{err}");
            assert!(err.to_string().contains("invalid requestState"), "{err}");
        }
    }
}

#[cfg(test)]
mod tests {
    /// The committed seeds and every prefix of each pass the checks in every `cargo test`.
    #[test]
    fn the_seeds_and_their_prefixes_hold() {
        let seeds = super::super::seeds("mcp_server_state");
        assert!(seeds.len() >= 4, "{} seeds", seeds.len());
        for (_, seed) in &seeds {
            for end in 0..=seed.len() {
                super::state(&seed[..end]);
            }
        }
    }

    /// `seal` bounds neither a value's size nor its nesting: a value that seals to a token
    /// over `MAX_TOKEN_BYTES`, or nests 127 levels, seals to a token `open` refuses, and the
    /// checks hold that (rather than the round trip) for both.
    #[test]
    fn a_value_too_large_or_too_deep_seals_to_a_refused_token() {
        let deep = format!("{}{}", "[".repeat(127), "]".repeat(127));
        let large = format!("\"{}\"", "x".repeat(super::MAX_TOKEN_BYTES));
        for value in [deep, large] {
            let mut data = vec![1, b'b'];
            data.extend_from_slice(value.as_bytes());
            super::state(&data);
        }
    }
}
