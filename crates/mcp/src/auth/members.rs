//! The JSON answers of an authorization server's token and registration endpoints, read member
//! by member.
//!
//! These answers carry access tokens, refresh tokens and client secrets, so a failure to read
//! one names the member and what is wrong with it, and never quotes a value or the body.
//! serde's own messages are not used for that reason: they quote the value they refuse
//! (`invalid type: string "…", expected …`). The body is read as a JSON value first, whose
//! only errors are syntax errors (fixed texts with a line and column), and each member is then
//! checked here.
//!
//! Every text member kept is capped ([`MAX_CREDENTIAL_BYTES`] for credentials,
//! [`MAX_ANSWER_TEXT_BYTES`] for the rest), so what a server answers cannot grow a token
//! record, or a row of `sidewire mcp auth status`, past a known size: an answer with a longer
//! member is refused when it arrives, naming the member and the cap.

use serde_json::{Map, Value};

use crate::text::json_kind;

/// The longest credential an authorization server's answer may hold (16 KiB): an access or
/// refresh token, a client secret, an issued assertion. Real ones are at most a few KiB (a JWT
/// with many claims); a token much longer would not fit in an HTTP header anyway.
pub const MAX_CREDENTIAL_BYTES: usize = 16 * 1024;
/// The longest other text member of a token or registration answer (4 KiB): `client_id`,
/// `scope`, `token_type`, `token_endpoint_auth_method`, `issued_token_type`.
pub const MAX_ANSWER_TEXT_BYTES: usize = 4 * 1024;

/// A JSON object answer, read member by member.
#[derive(Debug)]
pub(crate) struct Members(Map<String, Value>);

impl Members {
    /// The JSON object `body`; the error says why it is not one, without quoting it.
    pub(crate) fn parse(body: &[u8]) -> Result<Members, String> {
        match serde_json::from_slice::<Value>(body) {
            Ok(Value::Object(members)) => Ok(Members(members)),
            Ok(other) => Err(format!("it is {}, not a JSON object", json_kind(&other))),
            // A syntax error's text is fixed (`expected value`, `trailing characters`...) and
            // its position is a line and column: neither holds any of the input.
            Err(err) if err.is_syntax() || err.is_eof() => Err(format!("it is not JSON ({err})")),
            Err(err) => Err(format!(
                "it is not JSON (at line {}, column {})",
                err.line(),
                err.column()
            )),
        }
    }

    /// Text member `name`: `None` when it is absent or `null`, refused when it is anything but
    /// a string or longer than `cap` bytes.
    pub(crate) fn text(&self, name: &str, cap: usize) -> Result<Option<String>, String> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) if text.len() > cap => Err(format!(
                "`{name}` is {} bytes long, more than the {cap} this client keeps",
                text.len()
            )),
            Some(Value::String(text)) => Ok(Some(text.clone())),
            Some(other) => Err(format!("`{name}` is {}, not a string", json_kind(other))),
        }
    }

    /// Text member `name`, which must be there, not empty and at most `cap` bytes long.
    pub(crate) fn required_text(&self, name: &str, cap: usize) -> Result<String, String> {
        match self.text(name, cap)? {
            Some(text) if text.is_empty() => Err(format!("`{name}` is empty")),
            Some(text) => Ok(text),
            None => Err(format!("`{name}` is missing")),
        }
    }

    /// Member `name` as a whole number, read leniently because servers write numbers of
    /// seconds in several ways: a JSON integer (`3600`), a JSON number without a fractional
    /// part (`3600.0`), or a string of ASCII digits (`"3600"`). A negative number counts as 0
    /// and one past `u64::MAX` as `u64::MAX` (callers cap what they keep). `None` when it is
    /// absent or `null`; refused when it is a fraction (`59.9`, `"59.9"`), another string
    /// (`"soon"`, `"-5"`, `""`) or any other type.
    pub(crate) fn whole_number(&self, name: &str) -> Result<Option<u64>, String> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(number)) => {
                if let Some(whole) = number.as_u64() {
                    return Ok(Some(whole));
                }
                if number.is_i64() {
                    return Ok(Some(0));
                }
                // Neither a `u64` nor an `i64`: a float (serde_json reads every number with
                // a fraction or an exponent as one), always finite.
                let float = number.as_f64().unwrap_or(f64::NAN);
                if float.fract() != 0.0 {
                    return Err(format!("`{name}` is not a whole number"));
                }
                // `as` saturates: negative to 0, past the range to `u64::MAX`.
                Ok(Some(float as u64))
            }
            Some(Value::String(text))
                if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) =>
            {
                Ok(Some(text.parse().unwrap_or(u64::MAX)))
            }
            Some(Value::String(_)) => Err(format!(
                "`{name}` is a string that is not a whole number in digits"
            )),
            Some(other) => Err(format!("`{name}` is {}, not a number", json_kind(other))),
        }
    }
}
