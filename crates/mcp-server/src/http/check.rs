//! What an HTTP request must be before its body is read: the sans-IO checks of a request's
//! line and headers (the fuzz target `mcp_server_http` drives them with arbitrary headers).
//! Each failure is a [`Refusal`]: an HTTP status and a JSON-RPC error body.

use http::{HeaderMap, Method, StatusCode, header};

/// `MCP-Protocol-Version`.
pub const PROTOCOL_VERSION: &str = "mcp-protocol-version";
/// `Mcp-Session-Id`.
pub const SESSION_ID: &str = "mcp-session-id";
/// `Last-Event-ID`.
pub const LAST_EVENT_ID: &str = "last-event-id";
/// `Mcp-Method` (modern).
pub const MCP_METHOD: &str = "mcp-method";
/// `Mcp-Name` (modern).
pub const MCP_NAME: &str = "mcp-name";
/// The longest session id accepted: room for a sealed one (a server with a
/// [`SealingKey`](crate::SealingKey) seals what its client said at `initialize` into it).
pub const MAX_SESSION_ID_BYTES: usize = crate::server::MAX_SESSION_ID_BYTES;

/// Why a request is refused before it reaches the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The HTTP status.
    pub status: StatusCode,
    /// The JSON-RPC error code in the body.
    pub code: i64,
    /// Why.
    pub message: String,
}

impl Refusal {
    pub(crate) fn new(status: StatusCode, code: i64, message: impl Into<String>) -> Self {
        Refusal {
            status,
            code,
            message: message.into(),
        }
    }

    fn bad_request(message: impl Into<String>) -> Self {
        Refusal::new(StatusCode::BAD_REQUEST, -32000, message)
    }

    fn forbidden(message: impl Into<String>) -> Self {
        Refusal::new(StatusCode::FORBIDDEN, -32000, message)
    }
}

/// Which hosts and origins a server answers (DNS rebinding protection).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Allowed {
    /// Host names (without the port) the `Host` header may name. Empty: any host (only for
    /// a server behind a proxy that checks it).
    pub hosts: Vec<String>,
    /// Origins (`scheme://host[:port]`, or `scheme://host` for any port) a browser's `Origin`
    /// may name. A request without `Origin` (not from a browser) is not checked.
    pub origins: Vec<String>,
}

impl Allowed {
    /// Loopback only: `localhost`, `127.0.0.1` and `[::1]`, on any port.
    pub fn loopback() -> Self {
        let hosts = ["localhost", "127.0.0.1", "[::1]"];
        Allowed {
            hosts: hosts.iter().map(|host| (*host).to_owned()).collect(),
            origins: hosts
                .iter()
                .flat_map(|host| [format!("http://{host}"), format!("https://{host}")])
                .collect(),
        }
    }

    fn host_ok(&self, host: &str) -> bool {
        if self.hosts.is_empty() {
            return true;
        }
        let name = strip_port(host);
        self.hosts
            .iter()
            .any(|allowed| allowed.eq_ignore_ascii_case(name))
    }

    fn origin_ok(&self, origin: &str) -> bool {
        let Some((scheme, rest)) = origin.split_once("://") else {
            return false;
        };
        let bare = format!("{scheme}://{}", strip_port(rest));
        self.origins.iter().any(|allowed| {
            allowed.eq_ignore_ascii_case(origin) || allowed.eq_ignore_ascii_case(&bare)
        })
    }
}

/// `host[:port]` without the port (an IPv6 literal keeps its brackets). Anything after the
/// name but a port (`:` and digits) keeps the whole text, which then names no allowed host:
/// `[::1]evil` is not `[::1]`.
fn strip_port(host: &str) -> &str {
    let end = if host.starts_with('[') {
        host.find(']').map_or(host.len(), |end| end + 1)
    } else {
        host.rfind(':').unwrap_or(host.len())
    };
    let (name, rest) = host.split_at(end);
    let port = rest.is_empty()
        || rest
            .strip_prefix(':')
            .is_some_and(|port| port.bytes().all(|b| b.is_ascii_digit()));
    if port { name } else { host }
}

/// What the headers of an acceptable request say.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Head {
    /// `Mcp-Session-Id`.
    pub session: Option<String>,
    /// `MCP-Protocol-Version`.
    pub version: Option<String>,
    /// `Last-Event-ID`.
    pub last_event_id: Option<String>,
    /// The client takes an event stream.
    pub accepts_sse: bool,
    /// The client takes JSON.
    pub accepts_json: bool,
}

fn text<'a>(headers: &'a HeaderMap, name: &str) -> Result<Option<&'a str>, Refusal> {
    let mut values = headers.get_all(name).iter();
    let Some(value) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(Refusal::bad_request(format!("{name} given twice")));
    }
    value
        .to_str()
        .map(Some)
        .map_err(|_| Refusal::bad_request(format!("{name} is not visible ASCII")))
}

/// Checks a request's method, `Host`, `Origin`, content type, `Accept`, session id and
/// protocol version header. `known_version` says whether a version is one the server speaks.
///
/// # Errors
///
/// The [`Refusal`] to answer with.
pub fn head(
    method: &Method,
    headers: &HeaderMap,
    allowed: &Allowed,
    known_version: impl Fn(&str) -> bool,
) -> Result<Head, Refusal> {
    let host = text(headers, header::HOST.as_str())?;
    if let Some(host) = host
        && !allowed.host_ok(host)
    {
        return Err(Refusal::forbidden("Forbidden: Host header is not allowed"));
    }
    if host.is_none() && !allowed.hosts.is_empty() {
        return Err(Refusal::forbidden("Forbidden: no Host header"));
    }
    if let Some(origin) = text(headers, header::ORIGIN.as_str())?
        && !allowed.origin_ok(origin)
    {
        return Err(Refusal::forbidden("Forbidden: Origin is not allowed"));
    }
    let accept = text(headers, header::ACCEPT.as_str())?
        .unwrap_or_default()
        .to_ascii_lowercase();
    let any = accept.contains("*/*");
    let head = Head {
        session: text(headers, SESSION_ID)?.map(str::to_owned),
        version: text(headers, PROTOCOL_VERSION)?.map(str::to_owned),
        last_event_id: text(headers, LAST_EVENT_ID)?.map(str::to_owned),
        accepts_sse: any || accept.contains("text/event-stream"),
        accepts_json: any || accept.contains("application/json"),
    };
    if let Some(session) = &head.session
        && (session.is_empty()
            || session.len() > MAX_SESSION_ID_BYTES
            || !session.bytes().all(|b| (0x21..=0x7e).contains(&b)))
    {
        return Err(Refusal::bad_request(
            "Bad Request: malformed Mcp-Session-Id",
        ));
    }
    if let Some(version) = &head.version
        && !known_version(version)
    {
        return Err(Refusal::bad_request(format!(
            "Bad Request: unsupported MCP-Protocol-Version {}",
            version.escape_default()
        )));
    }
    if *method == Method::POST {
        let content_type = text(headers, header::CONTENT_TYPE.as_str())?.unwrap_or_default();
        let essence = content_type.split(';').next().unwrap_or_default().trim();
        if !essence.eq_ignore_ascii_case("application/json") {
            return Err(Refusal::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                -32000,
                "Unsupported Media Type: Content-Type must be application/json",
            ));
        }
        if !head.accepts_json && !head.accepts_sse {
            return Err(Refusal::new(
                StatusCode::NOT_ACCEPTABLE,
                -32000,
                "Not Acceptable: Accept must include application/json and text/event-stream",
            ));
        }
    }
    if *method == Method::GET && !head.accepts_sse {
        return Err(Refusal::new(
            StatusCode::NOT_ACCEPTABLE,
            -32000,
            "Not Acceptable: Accept must include text/event-stream",
        ));
    }
    Ok(head)
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(*name, HeaderValue::from_str(value).unwrap());
        }
        map
    }

    const POST_OK: &[(&str, &str)] = &[
        ("host", "127.0.0.1:3000"),
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
    ];

    #[test]
    fn loopback_hosts_and_origins_pass_and_others_are_forbidden() {
        let allowed = Allowed::loopback();
        let ok = |pairs: &[(&'static str, &str)]| {
            head(&Method::POST, &headers(pairs), &allowed, |_| true)
        };
        assert!(ok(POST_OK).is_ok());
        let mut evil = POST_OK.to_vec();
        evil[0] = ("host", "evil.example:3000");
        assert_eq!(ok(&evil).unwrap_err().status, StatusCode::FORBIDDEN);
        let mut origin = POST_OK.to_vec();
        origin.push(("origin", "http://evil.example"));
        assert_eq!(ok(&origin).unwrap_err().status, StatusCode::FORBIDDEN);
        let mut local = POST_OK.to_vec();
        local.push(("origin", "http://localhost:5173"));
        assert!(ok(&local).is_ok());
        let mut v6 = POST_OK.to_vec();
        v6[0] = ("host", "[::1]:80");
        assert!(ok(&v6).is_ok());
    }

    #[test]
    fn content_type_accept_session_and_version_are_checked() {
        let allowed = Allowed::loopback();
        let check = |pairs: &[(&'static str, &str)]| {
            head(&Method::POST, &headers(pairs), &allowed, |v| {
                v == "2025-11-25"
            })
            .map_err(|r| r.status)
        };
        let mut plain = POST_OK.to_vec();
        plain[1] = ("content-type", "text/plain");
        assert_eq!(check(&plain), Err(StatusCode::UNSUPPORTED_MEDIA_TYPE));
        let mut html = POST_OK.to_vec();
        html[2] = ("accept", "text/html");
        assert_eq!(check(&html), Err(StatusCode::NOT_ACCEPTABLE));
        let mut old = POST_OK.to_vec();
        old.push(("mcp-protocol-version", "1999-01-01"));
        assert_eq!(check(&old), Err(StatusCode::BAD_REQUEST));
        let mut twice = POST_OK.to_vec();
        twice.push(("mcp-session-id", "a"));
        twice.push(("mcp-session-id", "b"));
        assert_eq!(check(&twice), Err(StatusCode::BAD_REQUEST));
        let long = "x".repeat(MAX_SESSION_ID_BYTES + 1);
        let mut huge = POST_OK.to_vec();
        huge.push(("mcp-session-id", &long));
        assert_eq!(check(&huge), Err(StatusCode::BAD_REQUEST));
    }
}
