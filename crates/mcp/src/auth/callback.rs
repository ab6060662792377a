//! The loopback redirect listener (RFC 8252 §7.3): a tiny HTTP/1.1 server on `127.0.0.1`
//! that waits for the one request carrying the authorization response, then closes. Bounded:
//! it ends after the timeout, after [`MAX_REQUESTS`] requests, and serves at most
//! [`MAX_CONNECTIONS`] connections at a time; it runs inside the future that waits for it
//! (nothing is spawned).

use std::convert::Infallible;
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use http::{Method, Request, Response, StatusCode};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::mpsc;

use super::failure::{AuthFailure, fail};

/// The path the redirect comes back to.
pub(crate) const CALLBACK_PATH: &str = "/callback";
/// How many requests the listener answers before giving up (browsers also ask for
/// `/favicon.ico`).
pub const MAX_REQUESTS: usize = 16;
/// How many connections it serves at once.
pub const MAX_CONNECTIONS: usize = 4;

/// The authorization response's parameters (RFC 6749 §4.1.2, RFC 9207).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct CallbackParams {
    pub(crate) code: Option<String>,
    pub(crate) state: Option<String>,
    pub(crate) iss: Option<String>,
    pub(crate) error: Option<String>,
    pub(crate) error_description: Option<String>,
}

impl CallbackParams {
    /// The parameters of a redirect URL's query.
    pub(crate) fn from_query(query: &str) -> Self {
        let mut params = CallbackParams::default();
        for (name, value) in url::form_urlencoded::parse(query.as_bytes()) {
            let slot = match &*name {
                "code" => &mut params.code,
                "state" => &mut params.state,
                "iss" => &mut params.iss,
                "error" => &mut params.error,
                "error_description" => &mut params.error_description,
                _ => continue,
            };
            if slot.is_none() {
                *slot = Some(value.into_owned());
            }
        }
        params
    }
}

/// A bound listener, waiting to be awaited.
#[derive(Debug)]
pub(crate) struct Listener {
    tcp: TcpListener,
    redirect_uri: String,
}

const DONE_PAGE: &str = "<!doctype html><meta charset=utf-8><title>sidewire</title><p>Authorization received. You can close this window.</p>";

impl Listener {
    /// Listens on `127.0.0.1:port` (`None`: any free port).
    pub(crate) async fn bind(port: Option<u16>) -> Result<Listener, AuthFailure> {
        let tcp = TcpListener::bind(("127.0.0.1", port.unwrap_or(0)))
            .await
            .map_err(|err| {
                fail!(
                    Callback,
                    "cannot listen for the redirect on 127.0.0.1:{}: {err}",
                    port.unwrap_or(0)
                )
            })?;
        let port = tcp
            .local_addr()
            .map_err(|err| fail!(Callback, "the redirect listener has no address: {err}"))?
            .port();
        Ok(Listener {
            tcp,
            redirect_uri: format!("http://127.0.0.1:{port}{CALLBACK_PATH}"),
        })
    }

    /// The redirect URI to register and send.
    pub(crate) fn redirect_uri(&self) -> &str {
        &self.redirect_uri
    }

    /// Serves until the redirect arrives (its parameters), the timeout passes, or
    /// [`MAX_REQUESTS`] requests came without it.
    pub(crate) async fn wait(self, timeout: Duration) -> Result<CallbackParams, AuthFailure> {
        let (found_tx, mut found_rx) = mpsc::channel::<CallbackParams>(1);
        let (seen_tx, mut seen_rx) = mpsc::unbounded_channel::<()>();
        let mut connections = FuturesUnordered::new();
        let mut requests = 0;
        let work = async {
            loop {
                tokio::select! {
                    Some(params) = found_rx.recv() => return Ok(params),
                    Some(()) = seen_rx.recv() => {
                        requests += 1;
                        if requests >= MAX_REQUESTS {
                            return Err(fail!(Callback, "{MAX_REQUESTS} requests reached the redirect listener without the authorization response"));
                        }
                    }
                    Some(()) = connections.next(), if !connections.is_empty() => {}
                    accepted = self.tcp.accept(), if connections.len() < MAX_CONNECTIONS => {
                        let Ok((stream, _)) = accepted else { continue };
                        let found = found_tx.clone();
                        let seen = seen_tx.clone();
                        let service = service_fn(move |request: Request<Incoming>| {
                            let found = found.clone();
                            let seen = seen.clone();
                            async move { Ok::<_, Infallible>(answer(&request, &found, &seen)) }
                        });
                        connections.push(async move {
                            let _ = http1::Builder::new()
                                .serve_connection(TokioIo::new(stream), service)
                                .await;
                        });
                    }
                }
            }
        };
        match tokio::time::timeout(timeout, work).await {
            Ok(result) => result,
            Err(_) => Err(fail!(
                Callback,
                "no authorization response reached {} within {} s",
                self.redirect_uri,
                timeout.as_secs()
            )),
        }
    }
}

/// One request to the listener: the redirect is taken and thanked for; anything else is 404.
fn answer(
    request: &Request<Incoming>,
    found: &mpsc::Sender<CallbackParams>,
    seen: &mpsc::UnboundedSender<()>,
) -> Response<Full<Bytes>> {
    let _ = seen.send(());
    let params = (request.method() == Method::GET && request.uri().path() == CALLBACK_PATH)
        .then(|| CallbackParams::from_query(request.uri().query().unwrap_or("")))
        .filter(|params| params.code.is_some() || params.error.is_some());
    let Some(params) = params else {
        let mut response = Response::new(Full::new(Bytes::from_static(b"not found")));
        *response.status_mut() = StatusCode::NOT_FOUND;
        return response;
    };
    // Only the first redirect counts; a second finds the channel full and is thanked all the
    // same.
    let _ = found.try_send(params);
    let mut response = Response::new(Full::new(Bytes::from_static(DONE_PAGE.as_bytes())));
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/html; charset=utf-8"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_parameters_first_value_wins() {
        let params =
            CallbackParams::from_query("code=a%20b&state=s&code=x&iss=http%3A%2F%2Fq&other=1");
        assert_eq!(params.code.as_deref(), Some("a b"));
        assert_eq!(params.state.as_deref(), Some("s"));
        assert_eq!(params.iss.as_deref(), Some("http://q"));
        assert_eq!(CallbackParams::from_query(""), CallbackParams::default());
    }
}
