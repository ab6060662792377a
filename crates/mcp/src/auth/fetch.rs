//! The HTTP requests of authorization (metadata, registration, token requests, the headless
//! browser), on the connection's own [`HttpClient`]: each bounded in time
//! ([`Authorizer::request_timeout`](super::Authorizer::request_timeout)) and its body capped
//! at [`MAX_AUTH_BODY`].

use std::time::Duration;

use bytes::Bytes;
use http::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderValue};
use http::{Method, StatusCode};
use serde::de::DeserializeOwned;
use url::Url;

use crate::http::client::{HttpClient, ReadError, read_body};

/// The largest body of an authorization server's answer (metadata, a token response) kept.
pub const MAX_AUTH_BODY: usize = 1024 * 1024;

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
