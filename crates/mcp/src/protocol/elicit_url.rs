//! URL-mode elicitation (MCP 2025-11-25): a server asks the user to visit a URL (a sign-in, a
//! payment) outside the client, either with `elicitation/create` (`mode: "url"`) or by failing
//! a request with `-32042` (URL elicitation required) whose `data.elicitations` lists them.
//!
//! Everything here is peer text. A [`UrlElicitation`] is built only from a URL that parses as
//! an absolute `https:` or `http:` URL with a host, so a handler can always show the host
//! apart from the rest ([`UrlElicitation::host`]); anything else is refused with `-32602`
//! before a handler sees it. The client never opens a URL itself: the handler asks the user
//! (the CLI shows the whole URL escaped, its host on a line of its own, and opens it only on
//! a yes typed at a terminal).

use std::sync::Arc;

use serde::Deserialize;
use serde_json::Value;
use sidewire_jsonrpc::ErrorObject;

use crate::protocol::handler::DynHandler;
use crate::protocol::types::{ElicitParams, ElicitResult};

/// The error code a server fails a request with when the user must first visit URLs.
pub const URL_ELICITATION_REQUIRED: i64 = -32042;

/// The most elicitations read from one `-32042` error (the rest are dropped).
pub const MAX_URL_ELICITATIONS: usize = 16;

/// The longest URL accepted, in bytes (longer ones are refused).
pub const MAX_ELICITATION_URL_BYTES: usize = 8 * 1024;

/// The longest message or elicitation id kept, in bytes (cut on a character boundary).
const MAX_TEXT_BYTES: usize = 4 * 1024;

/// A server's request that the user visit a URL. Every field is peer text: show it escaped.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct UrlElicitation {
    /// Why the server asks (at most 4 KiB).
    pub message: String,
    /// The URL, as the server sent it (absolute, `https:` or `http:`, at most 8 KiB).
    pub url: String,
    /// The server's id for this elicitation, which its `notifications/elicitation/complete`
    /// names (at most 4 KiB).
    pub elicitation_id: String,
    host: String,
}

impl UrlElicitation {
    /// The URL's host (a domain, or an IP address in brackets for IPv6), parsed from
    /// [`url`](UrlElicitation::url): what a consent screen must show on its own, so a long or
    /// look-alike URL cannot hide where it leads.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// An elicitation from its parts, as a server would send them (for hosts that build one
    /// from another source, and for tests); `None` when the URL is refused (not an absolute
    /// `https:`/`http:` URL with a host, or over [`MAX_ELICITATION_URL_BYTES`]) or the id is
    /// empty.
    pub fn new(message: &str, url: &str, elicitation_id: &str) -> Option<Self> {
        UrlElicitation::parse(message, url, elicitation_id).ok()
    }

    /// Whether the URL is plain `http:` (not encrypted).
    pub fn is_insecure(&self) -> bool {
        self.url
            .get(..5)
            .is_some_and(|scheme| scheme.eq_ignore_ascii_case("http:"))
    }

    /// Builds one from its parts, checking the URL; `Err` says why it is refused.
    pub(crate) fn parse(message: &str, url: &str, elicitation_id: &str) -> Result<Self, String> {
        if url.len() > MAX_ELICITATION_URL_BYTES {
            return Err(format!(
                "the URL is {} bytes, over the cap of {MAX_ELICITATION_URL_BYTES}",
                url.len()
            ));
        }
        let host = shown_host(url)?;
        if elicitation_id.is_empty() {
            return Err("the elicitation has no elicitationId".to_owned());
        }
        Ok(UrlElicitation {
            message: crate::protocol::handler::cut(message, MAX_TEXT_BYTES).to_owned(),
            url: url.to_owned(),
            elicitation_id: crate::protocol::handler::cut(elicitation_id, MAX_TEXT_BYTES)
                .to_owned(),
            host,
        })
    }

    /// Reads a URL-mode `elicitation/create`; `-32602` for one that is not valid.
    pub(crate) fn from_params(params: &ElicitParams) -> Result<Self, ErrorObject> {
        let text = |key: &str| params.extra.get(key).and_then(Value::as_str).unwrap_or("");
        UrlElicitation::parse(&params.message, text("url"), text("elicitationId"))
            .map_err(|why| ErrorObject::invalid_params(format!("refused a URL elicitation: {why}")))
    }

    /// The URL elicitations a `-32042` error's data lists (at most
    /// [`MAX_URL_ELICITATIONS`]; invalid ones are left out).
    pub(crate) fn from_error_data(data: Option<&Value>) -> Vec<Self> {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Entry {
            #[serde(default)]
            mode: Option<String>,
            #[serde(default)]
            message: String,
            #[serde(default)]
            url: String,
            #[serde(default)]
            elicitation_id: String,
        }
        let Some(list) = data
            .and_then(|data| data.get("elicitations"))
            .and_then(Value::as_array)
        else {
            return Vec::new();
        };
        list.iter()
            .filter_map(|entry| Entry::deserialize(entry).ok())
            .filter(|entry| entry.mode.as_deref().is_none_or(|mode| mode == "url"))
            .filter_map(|entry| {
                UrlElicitation::parse(&entry.message, &entry.url, &entry.elicitation_id).ok()
            })
            .take(MAX_URL_ELICITATIONS)
            .collect()
    }
}

/// The mode an `elicitation/create` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Form,
    Url,
}

/// The mode of `params` (absent means form); `-32602` for a mode this client does not know.
pub(crate) fn mode(params: &ElicitParams) -> Result<Mode, ErrorObject> {
    match params.extra.get("mode") {
        None | Some(Value::Null) => Ok(Mode::Form),
        Some(Value::String(mode)) if mode == "form" => Ok(Mode::Form),
        Some(Value::String(mode)) if mode == "url" => Ok(Mode::Url),
        Some(other) => Err(ErrorObject::invalid_params(format!(
            "this client does not support the elicitation mode {}",
            crate::protocol::handler::cut(&other.to_string(), 64)
        ))),
    }
}

/// Answers an `elicitation/create` through the handler by its mode: form mode to
/// [`elicit`](crate::ClientHandler::elicit), URL mode (its URL checked first) to
/// [`elicit_url`](crate::ClientHandler::elicit_url); a mode the handler does not offer is
/// `-32602`, as the spec says for a mode the client did not declare.
pub(crate) async fn elicit(
    handler: Arc<dyn DynHandler>,
    server: Arc<str>,
    params: ElicitParams,
) -> Result<ElicitResult, ErrorObject> {
    match mode(&params)? {
        Mode::Form if handler.supports_elicitation() => handler.elicit(server, params).await,
        Mode::Url if handler.supports_url_elicitation() => {
            let request = UrlElicitation::from_params(&params)?;
            let action = handler.elicit_url(server, request).await?;
            Ok(ElicitResult {
                action,
                content: None,
            })
        }
        Mode::Form => Err(ErrorObject::invalid_params(
            "this client does not offer form-mode elicitation",
        )),
        Mode::Url => Err(ErrorObject::invalid_params(
            "this client does not offer URL-mode elicitation",
        )),
    }
}

/// The host of an absolute `https:` or `http:` URL, as a person is shown it (lowercase; an
/// IPv6 address in brackets); `Err` says why the URL is refused. Parsed with `http::Uri` (RFC
/// 3986), stricter than a browser where that could mislead: a host that is not plain ASCII
/// (an internationalized name must come in its `xn--` form), holds a percent escape, or ends
/// in a numeric label without being a dotted-decimal IPv4 address (`0x7f.1`, which a browser
/// reads as `127.0.0.1`) is refused rather than shown as something it is not.
fn shown_host(url: &str) -> Result<String, String> {
    let parsed: http::Uri = url
        .parse()
        .map_err(|err| format!("the URL does not parse: {err}"))?;
    let scheme = parsed.scheme_str().unwrap_or("");
    if !scheme.eq_ignore_ascii_case("https") && !scheme.eq_ignore_ascii_case("http") {
        return Err(format!(
            "the URL's scheme `{}` is not https or http",
            crate::protocol::handler::cut(scheme, 32)
        ));
    }
    let host = match parsed.host() {
        Some(host) if !host.is_empty() => host.to_ascii_lowercase(),
        _ => return Err("the URL has no host".to_owned()),
    };
    if let Some(ip) = host
        .strip_prefix('[')
        .and_then(|rest| rest.strip_suffix(']'))
    {
        let ip: std::net::Ipv6Addr = ip
            .parse()
            .map_err(|_| "the URL's IPv6 host does not parse".to_owned())?;
        return Ok(format!("[{ip}]"));
    }
    let plain = |byte: u8| byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_');
    if !host.bytes().all(plain) {
        return Err("the URL's host is not a plain ASCII name".to_owned());
    }
    let last = host.trim_end_matches('.').rsplit('.').next().unwrap_or("");
    let numeric = !last.is_empty()
        && (last.bytes().all(|byte| byte.is_ascii_digit()) || last.starts_with("0x"));
    if numeric {
        let ip: std::net::Ipv4Addr = host.parse().map_err(|_| {
            "the URL's host is a number that is not a dotted-decimal IPv4 address".to_owned()
        })?;
        if ip.to_string() != host {
            return Err("the URL's IPv4 host is not in dotted-decimal form".to_owned());
        }
    }
    Ok(host)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_url_must_be_absolute_http_with_a_host() {
        let ok = UrlElicitation::parse("m", "https://example.com/a?b", "e1").unwrap();
        assert_eq!(ok.host(), "example.com");
        assert!(!ok.is_insecure());
        assert!(
            UrlElicitation::parse("m", "HTTP://10.0.0.1/", "e1")
                .unwrap()
                .is_insecure()
        );
        for bad in [
            "javascript:alert(1)",
            "file:///etc/passwd",
            "/relative",
            "data:text/html,hi",
            "https://",
        ] {
            assert!(UrlElicitation::parse("m", bad, "e1").is_err(), "{bad}");
        }
        assert!(UrlElicitation::parse("m", "https://a.b/", "").is_err());
        let long = format!("https://a.b/{}", "x".repeat(MAX_ELICITATION_URL_BYTES));
        assert!(UrlElicitation::parse("m", &long, "e1").is_err());
    }

    #[test]
    fn the_host_is_the_real_one_not_the_userinfo() {
        let tricky =
            UrlElicitation::parse("m", "https://bank.example.com@evil.test/login", "e").unwrap();
        assert_eq!(tricky.host(), "evil.test");
    }

    #[test]
    fn a_host_that_could_be_shown_as_something_it_is_not_is_refused() {
        let shown = |url: &str| UrlElicitation::parse("m", url, "e").map(|ok| ok.host);
        assert_eq!(shown("https://Example.COM/").unwrap(), "example.com");
        assert_eq!(
            shown("https://xn--bcher-kva.example/").unwrap(),
            "xn--bcher-kva.example"
        );
        assert_eq!(shown("http://127.0.0.1:8080/").unwrap(), "127.0.0.1");
        assert_eq!(shown("https://[::1]/x").unwrap(), "[::1]");
        assert_eq!(shown("https://[0:0::1]/").unwrap(), "[::1]");
        for bad in [
            // What a browser reads as 127.0.0.1.
            "http://0x7f.1/",
            "http://2130706433/",
            "http://127.1/",
            "http://127.000.000.001/",
            // A percent escape in the host.
            "https://%65vil.test/",
            // Not ASCII: an internationalized name must come as `xn--`.
            "https://bücher.example/",
            "https://[zz::1]/",
        ] {
            assert!(shown(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn error_data_is_read_bounded_and_invalid_entries_dropped() {
        let mut list = vec![
            json!({"mode": "url", "url": "ftp://x/", "elicitationId": "bad", "message": "m"}),
            json!({"mode": "form", "url": "https://x/", "elicitationId": "form", "message": "m"}),
        ];
        for i in 0..MAX_URL_ELICITATIONS + 5 {
            list.push(json!({"mode": "url", "url": format!("https://h{i}.test/"), "elicitationId": format!("e{i}"), "message": "go"}));
        }
        let got = UrlElicitation::from_error_data(Some(&json!({ "elicitations": list })));
        assert_eq!(got.len(), MAX_URL_ELICITATIONS);
        assert_eq!(got[0].elicitation_id, "e0");
        assert!(UrlElicitation::from_error_data(None).is_empty());
        assert!(UrlElicitation::from_error_data(Some(&json!({"elicitations": 3}))).is_empty());
    }
}
