//! Fuzzing what an HTTP client controls before its body is read: the request line and
//! headers through [`check::head`], the `Last-Event-ID` it resumes with, and the
//! `Mcp-Param-*` headers a modern `tools/call` mirrors its arguments in.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, header};
use serde_json::{Map, Value};

use crate::era;
use crate::http::check::{self, Allowed, MAX_SESSION_ID_BYTES};
use crate::http::sse::parse_id;

/// The most bytes one header value is expanded to (see [`http()`]).
const MAX_EXPANDED: usize = 1 << 20;
/// The most designations `params` reads from one schema (its `MAX_DESIGNATIONS`).
const MAX_DESIGNATIONS: usize = 64;
/// The longest path of a designation (`params`' `MAX_DEPTH`, plus the property's own name).
const MAX_PATH: usize = 9;

/// `data[0]` picks the method (bits 0-2), the hosts and origins allowed (bits 3-4: 0 and 1
/// loopback, 2 a named host and an IPv6 literal, 3 any host) and the versions known (bit 5:
/// every one, as the server asks, or only those this crate speaks). The rest, up to a blank line, is
/// one header a line, `name:value` (the name's case ignored; `h`, `o`, `a`, `c`, `s`, `v`, `l`
/// and `p` stand for `host`, `origin`, `accept`, `content-type`, `mcp-session-id`,
/// `mcp-protocol-version`, `last-event-id` and `mcp-param-x`; a value that opens with the byte
/// `0x7f` is the bytes after its second byte `n` repeated `(n + 1) * 32` times, up to 1 MiB); a
/// name or value no HTTP request could carry is left out, a repeated header is sent twice.
/// After the blank line is a JSON text: `{"inputSchema": …, "arguments": …}`, or a schema.
///
/// Invariants: no panic; a request with no `Host`, or with one that is not an allowed host
/// (strictly: the name, then nothing or `:` and digits) is refused, with `403` when its one
/// `Host` is readable text; likewise an `Origin` that is not an allowed origin; a refusal is a
/// `4xx` with code `-32000` and a message without control characters; an accepted request's
/// session id is the header's value, visible ASCII, 1 to [`MAX_SESSION_ID_BYTES`] bytes, its
/// version is known, a `POST` has a JSON content type and takes JSON or an event stream, and a
/// `GET` takes an event stream; an event id that reads (`Last-Event-ID`, the body as text)
/// reads the same from its canonical form `{stream}-{seq}`; the
/// `Mcp-Param-*` headers as sent are checked against the arguments without panicking, the
/// designations are bounded, and the headers a conforming client sends (the argument's text,
/// or its base64 form whenever it is not safe as it is) always pass.
pub fn http(data: &[u8]) {
    let Some((&choice, rest)) = data.split_first() else {
        return;
    };
    let method = [
        Method::GET,
        Method::POST,
        Method::DELETE,
        Method::PUT,
        Method::OPTIONS,
        Method::HEAD,
        Method::PATCH,
        Method::from_bytes(b"FUZZ").expect("a token"),
    ][usize::from(choice & 7)]
    .clone();
    let allowed = match (choice >> 3) & 3 {
        0 | 1 => Allowed::loopback(),
        2 => Allowed {
            hosts: vec!["example.com".to_owned(), "[2001:db8::1]".to_owned()],
            origins: vec![
                "https://example.com".to_owned(),
                "http://[2001:db8::1]:8080".to_owned(),
            ],
        },
        _ => Allowed {
            hosts: Vec::new(),
            origins: Vec::new(),
        },
    };
    let every_version = choice & 0x20 == 0;
    let known = |version: &str| {
        every_version
            || era::legacy_versions().contains(&version)
            || era::modern_versions().contains(&version)
    };
    let (lines, body) = match rest.windows(2).position(|pair| pair == b"\n\n") {
        Some(at) => (&rest[..at], &rest[at + 2..]),
        None => (rest, &[][..]),
    };
    let headers = headers(lines);

    let result = check::head(&method, &headers, &allowed, known);
    check_host_and_origin(&headers, &allowed, &result);
    match &result {
        Err(refusal) => {
            assert!(refusal.status.is_client_error(), "{refusal:?}");
            assert_eq!(refusal.code, -32000);
            assert!(
                !refusal.message.chars().any(char::is_control),
                "{refusal:?}"
            );
        }
        Ok(head) => {
            assert_eq!(
                head.session.as_deref(),
                one_text(&headers, check::SESSION_ID)
            );
            if let Some(session) = &head.session {
                assert!(
                    (1..=MAX_SESSION_ID_BYTES).contains(&session.len()),
                    "{session:?}"
                );
                assert!(
                    session.bytes().all(|byte| byte.is_ascii_graphic()),
                    "{session:?}"
                );
            }
            if let Some(version) = &head.version {
                assert!(known(version), "{version:?}");
            }
            if method == Method::POST {
                let essence = one_text(&headers, header::CONTENT_TYPE.as_str())
                    .and_then(|text| text.split(';').next())
                    .map(str::trim);
                assert!(
                    essence.is_some_and(|essence| essence.eq_ignore_ascii_case("application/json"))
                );
                assert!(head.accepts_json || head.accepts_sse);
            }
            if method == Method::GET {
                assert!(head.accepts_sse);
            }
        }
    }

    for value in headers.get_all(check::LAST_EVENT_ID) {
        if let Ok(id) = value.to_str() {
            event_id(id);
        }
    }
    event_id(&String::from_utf8_lossy(body));

    param_headers(&headers, body);
}

/// The header map `lines` describe (see [`http()`]).
fn headers(lines: &[u8]) -> HeaderMap {
    let mut headers = HeaderMap::new();
    for line in lines.split(|&byte| byte == b'\n') {
        let (name, value) = match line.iter().position(|&byte| byte == b':') {
            Some(at) => (&line[..at], &line[at + 1..]),
            None => (line, &[][..]),
        };
        let name = match name {
            b"h" => header::HOST,
            b"o" => header::ORIGIN,
            b"a" => header::ACCEPT,
            b"c" => header::CONTENT_TYPE,
            b"s" => HeaderName::from_static(check::SESSION_ID),
            b"v" => HeaderName::from_static(check::PROTOCOL_VERSION),
            b"l" => HeaderName::from_static(check::LAST_EVENT_ID),
            b"p" => HeaderName::from_static("mcp-param-x"),
            other => match HeaderName::from_bytes(other) {
                Ok(name) => name,
                Err(_) => continue,
            },
        };
        let expanded;
        let value = match value {
            [0x7f, times, repeated @ ..] => {
                let times = (usize::from(*times) + 1) * 32;
                let times = times.min(MAX_EXPANDED / repeated.len().max(1));
                expanded = repeated.repeat(times);
                &expanded[..]
            }
            value => value,
        };
        if let Ok(value) = HeaderValue::from_bytes(value) {
            headers.append(name, value);
        }
    }
    headers
}

/// The one value of `name` as text; `None` when absent, repeated or not visible ASCII.
fn one_text<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    let mut values = headers.get_all(name).iter();
    let first = values.next()?;
    match values.next() {
        Some(_) => None,
        None => first.to_str().ok(),
    }
}

/// `authority` is `name`, then nothing or a port (`:` and digits, possibly none). The name
/// of an IPv6 literal is bracketed.
fn names(authority: &str, name: &str) -> bool {
    let Some(rest) = authority
        .get(..name.len())
        .filter(|head| head.eq_ignore_ascii_case(name))
        .map(|_| &authority[name.len()..])
    else {
        return false;
    };
    rest.is_empty()
        || rest
            .strip_prefix(':')
            .is_some_and(|port| port.bytes().all(|byte| byte.is_ascii_digit()))
}

/// A `Host` the allowed hosts name, read strictly (the oracle, written apart from the check).
fn host_allowed(allowed: &Allowed, host: &str) -> bool {
    allowed.hosts.is_empty() || allowed.hosts.iter().any(|name| names(host, name))
}

/// An `Origin` an allowed origin names exactly, or names but for the port.
fn origin_allowed(allowed: &Allowed, origin: &str) -> bool {
    allowed
        .origins
        .iter()
        .any(|allowed| allowed.eq_ignore_ascii_case(origin) || names(origin, allowed))
}

fn check_host_and_origin(
    headers: &HeaderMap,
    allowed: &Allowed,
    result: &Result<check::Head, check::Refusal>,
) {
    let status = result.as_ref().err().map(|refusal| refusal.status);
    let hosts = headers.get_all(header::HOST).iter().count();
    match one_text(headers, header::HOST.as_str()) {
        Some(host) if !host_allowed(allowed, host) => {
            assert_eq!(status, Some(StatusCode::FORBIDDEN), "Host {host:?} passed");
        }
        Some(_) => {}
        None if hosts == 0 => {
            if !allowed.hosts.is_empty() {
                assert_eq!(status, Some(StatusCode::FORBIDDEN), "no Host passed");
            }
        }
        // Repeated, or not text: refused, as bad or as forbidden.
        None => assert!(status.is_some(), "an unreadable Host passed"),
    }
    if result.is_ok()
        && let Some(origin) = headers.get(header::ORIGIN)
    {
        let origin = origin.to_str().expect("an accepted Origin is text");
        assert!(origin_allowed(allowed, origin), "Origin {origin:?} passed");
    }
}

/// An event id the client resumes with: no panic, and what reads reads back from its own
/// canonical form.
fn event_id(id: &str) {
    if let Some((stream, seq)) = parse_id(id) {
        assert_eq!(parse_id(&format!("{stream}-{seq}")), Some((stream, seq)));
    }
}

/// The `Mcp-Param-*` headers as the HTTP transport collects them (suffix in lower case, the
/// value as text or `"\0"`), checked against the arguments in `body`; then the headers a
/// conforming client would send for them.
fn param_headers(headers: &HeaderMap, body: &[u8]) {
    let Ok(body) = serde_json::from_slice::<Value>(body) else {
        return;
    };
    let schema = body.get("inputSchema").unwrap_or(&body);
    let empty = Map::new();
    let arguments = body
        .get("arguments")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let sent: Vec<(String, String)> = headers
        .iter()
        .filter_map(|(name, value)| {
            let suffix = name.as_str().strip_prefix("mcp-param-")?;
            Some((
                suffix.to_owned(),
                value.to_str().unwrap_or("\u{0}").to_owned(),
            ))
        })
        .take(64)
        .collect();
    let _ = crate::params::check(schema, arguments, &sent);

    let designations = crate::params::designations(schema);
    assert!(designations.len() <= MAX_DESIGNATIONS);
    let mut mirrored: Vec<(String, String)> = Vec::new();
    for (header, path) in &designations {
        assert!((1..=MAX_PATH).contains(&path.len()), "{path:?}");
        let mut value = arguments.get(&path[0]);
        for step in &path[1..] {
            value = value.and_then(|value| value.get(step));
        }
        let text = match value {
            Some(Value::String(text)) => text.clone(),
            Some(Value::Bool(flag)) => flag.to_string(),
            Some(Value::Number(number)) if number.is_i64() || number.is_u64() => number.to_string(),
            _ => continue,
        };
        let name = header.to_ascii_lowercase();
        match mirrored.iter().find(|(sent, _)| *sent == name) {
            // Two arguments mirrored in one header: a client sends it once; when they differ
            // no header can match both.
            Some((_, first)) if decode_as_sent(first) != text => return,
            Some(_) => {}
            None => mirrored.push((name, client_encoding(&text))),
        }
    }
    assert_eq!(
        crate::params::check(schema, arguments, &mirrored),
        Ok(()),
        "the headers a client sends were refused: {mirrored:?}"
    );
}

/// What `sidewire_mcp` sends for an argument's text: itself when it is safe as a header value
/// (printable ASCII, no surrounding white space, not itself in the base64 form), else
/// `=?base64?…?=`.
fn client_encoding(text: &str) -> String {
    let safe = text.bytes().all(|byte| (0x20..=0x7e).contains(&byte))
        && text.trim() == text
        && !(text.starts_with("=?base64?") && text.ends_with("?="));
    if safe {
        text.to_owned()
    } else {
        format!("=?base64?{}?=", STANDARD.encode(text))
    }
}

/// The text a header made by [`client_encoding`] stands for.
fn decode_as_sent(sent: &str) -> String {
    match sent
        .strip_prefix("=?base64?")
        .and_then(|rest| rest.strip_suffix("?="))
    {
        Some(encoded) => String::from_utf8(STANDARD.decode(encoded).expect("ours")).expect("ours"),
        None => sent.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    /// The committed seeds and every prefix of each pass the checks in every `cargo test`.
    #[test]
    fn the_seeds_and_their_prefixes_hold() {
        let seeds = super::super::seeds("mcp_server_http");
        assert!(seeds.len() >= 8, "{} seeds", seeds.len());
        for (_, seed) in &seeds {
            for end in 0..=seed.len() {
                super::http(&seed[..end]);
            }
        }
    }
}
