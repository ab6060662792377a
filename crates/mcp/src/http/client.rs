//! The hyper glue: a pooled HTTP/1.1 + HTTP/2 client over rustls whose connection futures run on
//! the transport's driver (never spawned), same-origin redirects, capped bodies, and SSE bodies
//! decoded with `sidewire-framing`'s [`SseCodec`].

use std::future::Future;
use std::pin::Pin;

use bytes::{Bytes, BytesMut};
use http::header::{HeaderMap, HeaderName, HeaderValue};
use http::{Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use sidewire_framing::{SseCodec, SseEvent};
use tokio::sync::mpsc;
use tokio_util::codec::Decoder;
use url::Url;

use super::Cause;
use crate::error_line;

/// How many redirects one request follows (all within its origin).
const MAX_REDIRECTS: usize = 5;
/// How much of an error response's body a status error keeps.
pub(crate) const ERROR_BODY_BYTES: usize = 4096;

/// A future hyper asked us to run (a connection, an HTTP/2 stream).
pub(crate) type BackgroundTask = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// hyper's executor, except that it does not spawn: every future it is handed goes to the
/// transport driver, which polls it alongside its own work. This keeps the crate's invariant
/// that it never spawns, while using hyper-util's pooled client as is.
#[derive(Clone, Debug)]
pub(crate) struct DriverExecutor {
    tasks: mpsc::UnboundedSender<BackgroundTask>,
}

impl<F> hyper::rt::Executor<F> for DriverExecutor
where
    F: Future<Output = ()> + Send + 'static,
{
    fn execute(&self, fut: F) {
        // A closed channel means the driver is gone, and with it every connection: dropping
        // the future is what would have happened to it anyway.
        let _ = self.tasks.send(Box::pin(fut));
    }
}

/// The pooled client of one transport.
#[derive(Clone)]
pub(crate) struct HttpClient {
    inner: Client<HttpsConnector<HttpConnector>, Full<Bytes>>,
}

/// Why a request failed before it had a status: the failure in words, and what kind it was.
#[derive(Debug)]
pub(crate) struct NetError(pub(crate) String, pub(crate) NetKind);

/// What kind of network failure a [`NetError`] is, as far as retrying goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NetKind {
    /// Nothing listened on the port (the server is starting, or restarting).
    Refused,
    /// Anything else (DNS, TLS, a reset, a broken body).
    Other,
}

impl NetKind {
    /// Whether a failure is a refused connection: an `io::Error` of that kind in its chain.
    fn of(err: &(dyn std::error::Error + 'static)) -> NetKind {
        let mut source = Some(err);
        while let Some(cause) = source {
            if let Some(io) = cause.downcast_ref::<std::io::Error>()
                && io.kind() == std::io::ErrorKind::ConnectionRefused
            {
                return NetKind::Refused;
            }
            source = cause.source();
        }
        NetKind::Other
    }
}

impl HttpClient {
    /// A client whose connections run on whatever drains the returned receiver.
    pub(crate) fn new() -> Result<(HttpClient, mpsc::UnboundedReceiver<BackgroundTask>), String> {
        let provider = rustls::crypto::ring::default_provider();
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_provider_and_webpki_roots(provider)
            .map_err(|err| format!("setting up TLS failed: {err}"))?
            .https_or_http()
            .enable_http1()
            .enable_http2()
            .build();
        let (tx, rx) = mpsc::unbounded_channel();
        let inner = Client::builder(DriverExecutor { tasks: tx }).build(https);
        Ok((HttpClient { inner }, rx))
    }

    /// Sends one request and returns its answer as it is, redirects included.
    pub(crate) async fn send_once(
        &self,
        method: Method,
        url: &Url,
        headers: &HeaderMap,
        body: Bytes,
    ) -> Result<Response<Incoming>, NetError> {
        let mut request = Request::builder()
            .method(method)
            .uri(url.as_str())
            .body(Full::new(body))
            // The caller names the URL (shown redacted); the text here never does.
            .map_err(|err| NetError(format!("invalid request: {err}"), NetKind::Other))?;
        *request.headers_mut() = headers.clone();
        self.inner
            .request(request)
            .await
            .map_err(|err| NetError(error_line(&err), NetKind::of(&err)))
    }

    /// Sends a request, following redirects only within the request's origin, so credentials
    /// in `headers` never reach another host: a redirect elsewhere comes back as the final
    /// (3xx) response. The method and body are kept on every hop: a POST of a JSON-RPC message
    /// has no meaningful GET form.
    pub(crate) async fn send(
        &self,
        method: Method,
        url: &Url,
        headers: &HeaderMap,
        body: Bytes,
    ) -> Result<(Url, Response<Incoming>), NetError> {
        let mut url = url.clone();
        let mut hops = 0;
        loop {
            let mut request = Request::builder()
                .method(method.clone())
                .uri(url.as_str())
                .body(Full::new(body.clone()))
                .map_err(|err| NetError(format!("invalid request: {err}"), NetKind::Other))?;
            *request.headers_mut() = headers.clone();
            let response = self
                .inner
                .request(request)
                .await
                .map_err(|err| NetError(error_line(&err), NetKind::of(&err)))?;
            if !response.status().is_redirection() || hops == MAX_REDIRECTS {
                return Ok((url, response));
            }
            let Some(next) = response
                .headers()
                .get(http::header::LOCATION)
                .and_then(|value| value.to_str().ok())
                .and_then(|location| url.join(location).ok())
            else {
                return Ok((url, response));
            };
            if !same_origin(&url, &next) {
                // Origins only: a URL's path and query may hold secrets.
                tracing::warn!(from = %url.origin().ascii_serialization(), to = %next.origin().ascii_serialization(), "not following a cross-origin redirect");
                return Ok((url, response));
            }
            hops += 1;
            url = next;
        }
    }
}

/// Scheme, host and effective port agree (80 and 443 defaulted).
pub(crate) fn same_origin(a: &Url, b: &Url) -> bool {
    a.scheme() == b.scheme()
        && a.host_str() == b.host_str()
        && a.port_or_known_default() == b.port_or_known_default()
}

/// Whether a response is an SSE stream.
pub(crate) fn is_event_stream(response: &Response<Incoming>) -> bool {
    response
        .headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| {
            value
                .trim_start()
                .to_ascii_lowercase()
                .starts_with("text/event-stream")
        })
}

/// A whole body, refused once it passes `cap` bytes.
pub(crate) async fn read_body(body: &mut Incoming, cap: usize) -> Result<Bytes, ReadError> {
    let mut out = BytesMut::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|err| ReadError::Net(error_line(&err)))?;
        if let Ok(data) = frame.into_data() {
            if out.len() + data.len() > cap {
                return Err(ReadError::TooLarge(cap));
            }
            out.extend_from_slice(&data);
        }
    }
    Ok(out.freeze())
}

/// A whole answer body, refused once it passes `cap` bytes; a body that breaks off is kept as
/// far as it came, with `false` (not complete), for the answer's verdict to quote.
pub(crate) async fn read_answer(
    body: &mut Incoming,
    cap: usize,
) -> Result<(Bytes, bool), ReadError> {
    let mut out = BytesMut::new();
    while let Some(frame) = body.frame().await {
        let Ok(frame) = frame else {
            return Ok((out.freeze(), false));
        };
        if let Ok(data) = frame.into_data() {
            if out.len() + data.len() > cap {
                return Err(ReadError::TooLarge(cap));
            }
            out.extend_from_slice(&data);
        }
    }
    Ok((out.freeze(), true))
}

/// The first [`ERROR_BODY_BYTES`] of a body, as text, for a status error.
pub(crate) async fn error_body(body: &mut Incoming) -> String {
    let mut out = Vec::new();
    while out.len() < ERROR_BODY_BYTES {
        match body.frame().await {
            Some(Ok(frame)) => {
                if let Ok(data) = frame.into_data() {
                    let room = ERROR_BODY_BYTES - out.len();
                    out.extend_from_slice(&data[..data.len().min(room)]);
                }
            }
            _ => break,
        }
    }
    String::from_utf8_lossy(&out).trim().to_owned()
}

/// Why reading a body failed.
#[derive(Debug)]
pub(crate) enum ReadError {
    Net(String),
    TooLarge(usize),
}

impl From<ReadError> for Cause {
    fn from(err: ReadError) -> Cause {
        match err {
            ReadError::Net(detail) => Cause::Unanswered(detail),
            ReadError::TooLarge(cap) => Cause::TooLarge(cap),
        }
    }
}

impl From<NetError> for Cause {
    fn from(err: NetError) -> Cause {
        Cause::Unanswered(err.0)
    }
}

/// Passes a 2xx answer; any other status becomes [`Cause::Status`] with the start of the body
/// (up to [`ERROR_BODY_BYTES`]).
pub(crate) async fn ensure_success(response: &mut Response<Incoming>) -> Result<(), Cause> {
    let status = response.status();
    if !is_failure(status) {
        return Ok(());
    }
    let body = error_body(response.body_mut()).await;
    Err(Cause::Status {
        status: status.as_u16(),
        body,
    })
}

/// An SSE body decoded event by event, under the codec's per-event cap. The codec outlives
/// each body: a resumption continues on the same value with [`resume`](SseBody::resume), so
/// the last event id and `retry` carry over.
pub(crate) struct SseBody {
    body: Incoming,
    codec: SseCodec,
    buf: BytesMut,
    done: bool,
}

impl SseBody {
    pub(crate) fn new(body: Incoming, cap: usize) -> Self {
        SseBody {
            body,
            codec: SseCodec::new(cap),
            buf: BytesMut::new(),
            done: false,
        }
    }

    /// Continues with the body of a resumed stream.
    pub(crate) fn resume(&mut self, body: Incoming) {
        self.body = body;
        self.buf.clear();
        self.done = false;
    }

    /// The last event id seen, for `Last-Event-ID`.
    pub(crate) fn last_event_id(&self) -> Option<&str> {
        self.codec.last_event_id()
    }

    /// The server's `retry`, in milliseconds.
    pub(crate) fn retry(&self) -> Option<u64> {
        self.codec.retry()
    }

    /// The next event; `Ok(None)` at the end of the body; `Err` for an oversized event (the
    /// codec skips it and the body goes on) or a network failure (the body is over).
    pub(crate) async fn next(&mut self) -> Result<Option<SseEvent>, ReadError> {
        loop {
            if self.done {
                return match self.codec.decode_eof(&mut self.buf) {
                    Ok(event) => Ok(event),
                    Err(err) if err.is_too_large() => Err(ReadError::TooLarge(self.codec.cap())),
                    Err(err) => Err(ReadError::Net(err.to_string())),
                };
            }
            match self.codec.decode(&mut self.buf) {
                Ok(Some(event)) => return Ok(Some(event)),
                Ok(None) => {}
                Err(err) if err.is_too_large() => {
                    return Err(ReadError::TooLarge(self.codec.cap()));
                }
                Err(err) => return Err(ReadError::Net(err.to_string())),
            }
            match self.body.frame().await {
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        self.buf.extend_from_slice(&data);
                    }
                }
                Some(Err(err)) => {
                    self.done = true;
                    // The stream broke: resumption treats it like an end.
                    tracing::debug!(error = %error_line(&err), "an SSE stream broke");
                }
                None => self.done = true,
            }
        }
    }
}

/// A header pair from configuration, refused when either part is not valid in HTTP.
pub(crate) fn header_pair(name: &str, value: &str) -> Result<(HeaderName, HeaderValue), String> {
    let name = HeaderName::from_bytes(name.trim().as_bytes())
        .map_err(|_| format!("invalid header name {name:?}"))?;
    let value = HeaderValue::from_str(value.trim())
        .map_err(|_| format!("invalid value for header {name}"))?;
    Ok((name, value))
}

/// A status that is an error for us (anything but 2xx).
pub(crate) fn is_failure(status: StatusCode) -> bool {
    !status.is_success()
}
