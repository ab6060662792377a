//! The HTTP requests of authorization (metadata, registration, token requests, the headless
//! browser), on the connection's own [`HttpClient`]: each bounded in time
//! ([`Authorizer::request_timeout`](super::Authorizer::request_timeout)) and its body capped
//! at [`MAX_AUTH_BODY`].

use std::time::Duration;

use bytes::Bytes;
use http::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderValue};
use http::{Method, StatusCode};
use serde::de::DeserializeOwned;
use url::{Host, Url};

use super::failure::{AuthFailure, fail};
use crate::http::client::{HttpClient, ReadError, read_body};

/// The largest body of an authorization server's answer (metadata, a token response) kept.
pub const MAX_AUTH_BODY: usize = 1024 * 1024;

/// Refuses `url` as the authorization server endpoint `role` (`"token endpoint"`...) unless it
/// is `https`, or `http` to a loopback host: `localhost`, 127.0.0.0/8 or `::1`. Authorization
/// codes, PKCE verifiers, tokens and client secrets travel to these endpoints, and their
/// metadata says where the others are, so MCP's authorization spec requires HTTPS for all of
/// them; a loopback address never leaves the machine, which keeps local servers (and tests)
/// working. Checked before anything is sent to `url`.
pub(crate) fn require_tls(url: &Url, role: &str) -> Result<(), AuthFailure> {
    let loopback = match url.host() {
        Some(Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        Some(Host::Ipv4(ip)) => ip.is_loopback(),
        Some(Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    };
    match url.scheme() {
        "https" => Ok(()),
        "http" if loopback => Ok(()),
        scheme => {
            // The origin only: a path or query is not needed to see the mistake.
            let origin = url.origin();
            let shown = if origin.is_tuple() {
                origin.ascii_serialization()
            } else {
                format!("{scheme}:")
            };
            Err(fail!(
                Insecure,
                "the authorization server's {role} on {} is not https:// (only a loopback host \
                 may use http://); refused",
                crate::http::answer::quote(shown.as_bytes())
            ))
        }
    }
}

/// An answer, read whole.
#[derive(Debug)]
pub(crate) struct Fetched {
    pub(crate) status: StatusCode,
    pub(crate) headers: HeaderMap,
    pub(crate) body: Bytes,
}

impl Fetched {
    /// The body as JSON of type `T`.
    pub(crate) fn json<T: DeserializeOwned>(&self) -> Result<T, String> {
        serde_json::from_slice(&self.body).map_err(|err| format!("invalid JSON: {err}"))
    }

    /// A header's value as text.
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|value| value.to_str().ok())
    }

    /// The start of the body as text that is safe to show (control characters escaped, cut
    /// short), for an error message; the caller redacts it.
    pub(crate) fn body_text(&self) -> String {
        crate::http::answer::quote(&self.body)
    }
}

/// The client authorization requests go through.
#[derive(Clone)]
pub(crate) struct AuthHttp {
    pub(crate) client: HttpClient,
    pub(crate) timeout: Duration,
}

impl AuthHttp {
    /// Sends one request (no redirects followed: a redirect comes back as the answer) and
    /// reads the whole answer.
    pub(crate) async fn send(
        &self,
        method: Method,
        url: &Url,
        headers: HeaderMap,
        body: Bytes,
    ) -> Result<Fetched, String> {
        let work = async {
            let response = self
                .client
                .send_once(method, url, &headers, body)
                .await
                .map_err(|err| err.0)?;
            let status = response.status();
            let headers = response.headers().clone();
            let mut body = response.into_body();
            let body = read_body(&mut body, MAX_AUTH_BODY)
                .await
                .map_err(|err| match err {
                    ReadError::Net(detail) => detail,
                    ReadError::TooLarge(cap) => format!("the answer exceeded {cap} bytes"),
                })?;
            Ok(Fetched {
                status,
                headers,
                body,
            })
        };
        match tokio::time::timeout(self.timeout, work).await {
            Ok(result) => result.map_err(|err: String| format!("{url}: {err}")),
            Err(_) => Err(format!(
                "{url}: no answer within {} ms",
                self.timeout.as_millis()
            )),
        }
    }

    /// A GET of a JSON document.
    pub(crate) async fn get_json(&self, url: &Url) -> Result<Fetched, String> {
        let mut headers = HeaderMap::new();
        headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
        self.send(Method::GET, url, headers, Bytes::new()).await
    }

    /// A POST of a form (`application/x-www-form-urlencoded`), with `extra` headers.
    #[allow(dead_code, reason = "the grants oauth2 lacks post their forms with it")]
    pub(crate) async fn post_form(
        &self,
        url: &Url,
        form: &[(&str, &str)],
        mut extra: HeaderMap,
    ) -> Result<Fetched, String> {
        let body = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(form)
            .finish();
        extra.insert(
            CONTENT_TYPE,
            HeaderValue::from_static("application/x-www-form-urlencoded"),
        );
        extra.insert(ACCEPT, HeaderValue::from_static("application/json"));
        self.send(Method::POST, url, extra, Bytes::from(body)).await
    }

    /// A POST of a JSON document.
    pub(crate) async fn post_json(
        &self,
        url: &Url,
        value: &serde_json::Value,
    ) -> Result<Fetched, String> {
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
        self.send(Method::POST, url, headers, Bytes::from(value.to_string()))
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::AuthErrorKind;

    fn check(url: &str) -> Result<(), AuthErrorKind> {
        require_tls(&Url::parse(url).unwrap(), "token endpoint").map_err(|err| err.kind)
    }

    #[test]
    fn authorization_endpoints_need_https_except_on_loopback() {
        for allowed in [
            "https://auth.example.com/token",
            "https://10.0.0.1/token",
            "http://localhost:8080/token",
            "http://LOCALHOST/token",
            "http://127.0.0.1:9/token",
            "http://127.8.9.10/token",
            "http://[::1]:9/token",
        ] {
            assert_eq!(check(allowed), Ok(()), "{allowed}");
        }
        for refused in [
            "http://auth.example.com/token",
            "http://example.invalid/token",
            "http://10.0.0.1/token",
            "http://192.0.2.1:80/token",
            "http://128.0.0.1/token",
            "http://0.0.0.0/token",
            "http://[::2]/token",
            "http://[::ffff:127.0.0.1]/token",
            "http://localhost.example.com/token",
            "http://127.0.0.1.example.com/token",
            "ftp://localhost/token",
            "file:///token",
        ] {
            assert_eq!(check(refused), Err(AuthErrorKind::Insecure), "{refused}");
        }
        // The error names the origin, never the path or query.
        let err = require_tls(
            &Url::parse("http://user:pw@auth.example.com/t?code=c0de").unwrap(),
            "token endpoint",
        )
        .unwrap_err();
        assert!(err.message.contains("http://auth.example.com"), "{err}");
        assert!(
            !err.message.contains("c0de") && !err.message.contains("pw"),
            "{err}"
        );
    }
}
