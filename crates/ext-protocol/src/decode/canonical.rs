//! The canonical-text reader: an intercept's params in exactly the form a host writes them
//! (serde's compact text, members in the DTO's order), read by matching that text instead of
//! parsing it. A sidecar reads one of these per intercept, and an input payload is the common
//! case; serde's reading of it, strict and one-pass as it is, was a quarter of the SDK's work
//! per intercept.
//!
//! It reads `{"event":"<point>","seq":<n>,"payload":{"text":"<text>"},"timeoutMillis":<n>}`
//! (with `"payload":{}` for an empty text) for a point whose payload is an input payload, and
//! nothing else: other points, other orders,
//! whitespace, an externalized payload or any other member give `None`, and the one-pass reader
//! (then the reference decoder) takes the text. Like the one-pass reader, it must never accept
//! what the reference rejects, and must decode what both accept to the same value: each number
//! is a JSON integer without a leading zero within `1 ..= 2^53−1` (`seq` and `timeoutMillis`
//! are positive), the event one of its wire spellings (which need no escapes), and the text a
//! JSON string token, read by this scan when it has no escape and by serde's string reader
//! when it has one. The differential tests and the `protocol_decode` fuzz target, which
//! compare [`Dto::decode_one_pass`](crate::decode::Dto::decode_one_pass) with the reference,
//! cover it.

use crate::constants::MAX_SAFE_INTEGER;
use crate::hooks::{HookPayload, HookPoint, PayloadKind};
use crate::intercept::InterceptParams;
use crate::payloads::InputPayload;

/// `InterceptParams` in canonical text with an input payload (see the module docs).
pub(crate) fn intercept_params(text: &str) -> Option<InterceptParams> {
    let mut at = Cursor(text);
    at.literal("{\"event\":\"")?;
    let event = HookPoint::parse(at.until_quote()?)?;
    if event.payload_kind() != PayloadKind::Input {
        return None;
    }
    at.literal(",\"seq\":")?;
    let seq = at.positive()?;
    at.literal(",\"payload\":{")?;
    // Serde leaves out an empty text.
    let payload = match at.literal("\"text\":") {
        Some(()) => at.string()?,
        None => String::new(),
    };
    at.literal("},\"timeoutMillis\":")?;
    let timeout_millis = at.positive()?;
    at.literal("}")?;
    if !at.0.is_empty() {
        return None;
    }
    Some(InterceptParams {
        event,
        seq,
        payload: Some(HookPayload::Input(InputPayload { text: payload })),
        timeout_millis,
        externalized: Vec::new(),
    })
}

/// The text not read yet. It is only ever cut next to an ASCII byte, so each cut is on a
/// character boundary.
struct Cursor<'a>(&'a str);

impl<'a> Cursor<'a> {
    /// Steps over `expected`, which must come next.
    fn literal(&mut self, expected: &str) -> Option<()> {
        self.0 = self.0.strip_prefix(expected)?;
        Some(())
    }

    /// The text up to the next `"` (not included), stepping over both. Only for text that
    /// cannot hold an escape or a control character: a wire spelling is matched against it.
    fn until_quote(&mut self) -> Option<&'a str> {
        let (word, rest) = self.0.split_once('"')?;
        self.0 = rest;
        Some(word)
    }

    /// A JSON integer in `1 ..= 2^53−1`: a non-zero digit first (JSON has no leading zeros, and
    /// zero is below the minimum), and no fraction or exponent (the literal that must follow
    /// refuses a `.`, an `e` or an `E`).
    fn positive(&mut self) -> Option<u64> {
        let bytes = self.0.as_bytes();
        let digits = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
        // 2^53−1 has 16 digits; more would overflow before the check.
        if digits == 0 || digits > 16 || bytes[0] == b'0' {
            return None;
        }
        let value = bytes[..digits]
            .iter()
            .fold(0u64, |n, digit| n * 10 + u64::from(digit - b'0'));
        self.0 = &self.0[digits..];
        (value <= MAX_SAFE_INTEGER).then_some(value)
    }

    /// A JSON string token, decoded. Without an escape its bytes are its text (a control
    /// character, which JSON does not allow raw, refuses); with one, the token (found by
    /// stepping over each escape's next byte) is read by serde's string reader, which checks
    /// and decodes every escape.
    fn string(&mut self) -> Option<String> {
        let token = self.0;
        let body = token.strip_prefix('"')?.as_bytes();
        // The common case, no escape: the first quote or backslash is the closing quote, and
        // no byte before it is a control character (a check that vectorizes, unlike a loop
        // that stops at the first).
        let end = memchr::memchr2(b'"', b'\\', body)?;
        if body[end] == b'"'
            && !body[..end]
                .iter()
                .fold(false, |control, &b| control | (b < 0x20))
        {
            let (quoted, rest) = token.split_at(end + 2);
            self.0 = rest;
            return Some(quoted[1..=end].to_owned());
        }
        let mut escaped = false;
        let mut at = 0;
        loop {
            match *body.get(at)? {
                b'"' => break,
                b'\\' => {
                    escaped = true;
                    at += 2;
                }
                0..=0x1f => return None,
                _ => at += 1,
            }
        }
        // `at` is the closing quote's offset in `body`, one past the opening quote.
        let (quoted, rest) = token.split_at(at + 2);
        self.0 = rest;
        if escaped {
            serde_json::from_str::<String>(quoted).ok()
        } else {
            Some(quoted[1..quoted.len() - 1].to_owned())
        }
    }
}

#[cfg(test)]
mod tests;
