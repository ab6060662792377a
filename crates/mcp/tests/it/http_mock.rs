//! An in-process MCP server over HTTP (hyper, loopback only, port 0) for the HTTP transport
//! tests: a default Streamable HTTP behaviour with sessions, a per-test `script` that can
//! answer any request first, a legacy HTTP+SSE mode, an optional TLS front, and a log of every
//! request it saw.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{HeaderMap, Method, Request, Response, StatusCode};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper_util::rt::{TokioExecutor, TokioIo};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio_rustls::TlsAcceptor;

use crate::support::lock;

pub(crate) type Body = BoxBody<Bytes, Infallible>;

/// One request the mock saw.
#[derive(Debug, Clone)]
pub(crate) struct Seen {
    pub(crate) method: Method,
    pub(crate) path: String,
    pub(crate) headers: HeaderMap,
    /// The body as JSON, or `Null` when it is not JSON (a form: see `raw`).
    pub(crate) body: Value,
    /// The body as sent.
    pub(crate) raw: Bytes,
    pub(crate) at: Instant,
}

impl Seen {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The JSON-RPC method of a POST, or `""`.
    pub(crate) fn rpc_method(&self) -> &str {
        self.body
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or("")
    }
}

/// A script: may answer a request itself (`Some`), else the default behaviour runs.
pub(crate) type Script = Box<dyn Fn(&Seen, &Mock) -> Option<Response<Body>> + Send + Sync>;

/// A running mock server.
#[derive(Clone)]
pub(crate) struct Mock {
    pub(crate) addr: SocketAddr,
    scheme: &'static str,
    pub(crate) seen: Arc<Mutex<Vec<Seen>>>,
    tls_failures: Arc<AtomicUsize>,
    script: Arc<Mutex<Option<Script>>>,
    sessions: Arc<AtomicUsize>,
    /// The legacy stream's sender, once a client opened it.
    legacy: Arc<Mutex<Option<mpsc::UnboundedSender<Bytes>>>>,
    /// The legacy session of the current stream: one per GET, like the TypeScript and Python
    /// SDKs.
    legacy_session: Arc<AtomicUsize>,
}

impl Mock {
    /// Starts a mock on 127.0.0.1 with a free port; it runs until the test's runtime ends.
    pub(crate) async fn start() -> Mock {
        Mock::serve(None).await
    }

    /// The same mock behind TLS: every accepted connection goes through `acceptor` first, and
    /// a handshake that fails is counted in [`tls_failures`](Mock::tls_failures) (it never
    /// becomes a request in [`seen`](Mock::seen)).
    pub(crate) async fn start_tls(acceptor: TlsAcceptor) -> Mock {
        Mock::serve(Some(acceptor)).await
    }

    /// A plain mock on 127.0.0.1:`port` (a port a test learned, for a server that comes up
    /// late or restarts); `stop` ends its listener and every connection it accepted.
    pub(crate) async fn start_on(port: u16, stop: tokio::sync::watch::Receiver<bool>) -> Mock {
        let listener = TcpListener::bind(("127.0.0.1", port)).await.unwrap();
        Mock::serve_on(listener, None, Some(stop))
    }

    async fn serve(tls: Option<TlsAcceptor>) -> Mock {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        Mock::serve_on(listener, tls, None)
    }

    fn serve_on(
        listener: TcpListener,
        tls: Option<TlsAcceptor>,
        stop: Option<tokio::sync::watch::Receiver<bool>>,
    ) -> Mock {
        let mock = Mock {
            addr: listener.local_addr().unwrap(),
            scheme: if tls.is_some() { "https" } else { "http" },
            seen: Arc::default(),
            tls_failures: Arc::default(),
            script: Arc::default(),
            sessions: Arc::default(),
            legacy: Arc::default(),
            legacy_session: Arc::default(),
        };
        let server = mock.clone();
        let stopped = |stop: Option<tokio::sync::watch::Receiver<bool>>| async move {
            match stop {
                Some(mut stop) => {
                    let _ = stop.wait_for(|stop| *stop).await;
                }
                None => std::future::pending().await,
            }
        };
        let accept_stop = stop.clone();
        tokio::spawn(async move {
            let stop_accepting = stopped(accept_stop);
            tokio::pin!(stop_accepting);
            loop {
                let accepted = tokio::select! {
                    accepted = listener.accept() => accepted,
                    () = &mut stop_accepting => return,
                };
                let Ok((stream, _)) = accepted else {
                    return;
                };
                let server = server.clone();
                let tls = tls.clone();
                let stop = stop.clone();
                tokio::spawn(async move {
                    let stop_serving = stopped(stop);
                    tokio::select! {
                        () = server.accepted(stream, tls) => {}
                        () = stop_serving => {}
                    }
                });
            }
        });
        mock
    }

    /// Serves one accepted connection, behind TLS when there is an acceptor.
    async fn accepted(self, stream: tokio::net::TcpStream, tls: Option<TlsAcceptor>) {
        match tls {
            None => self.connection(TokioIo::new(stream)).await,
            Some(acceptor) => match acceptor.accept(stream).await {
                Ok(stream) => self.connection(TokioIo::new(stream)).await,
                Err(err) => {
                    tracing::debug!(error = %err, "a TLS handshake failed");
                    self.tls_failures.fetch_add(1, Ordering::SeqCst);
                }
            },
        }
    }

    /// Serves one accepted (and, for TLS, handshaken) connection.
    async fn connection<I>(self, io: TokioIo<I>)
    where
        I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        let service = hyper::service::service_fn(move |request| {
            let server = self.clone();
            async move { Ok::<_, Infallible>(server.handle(request).await) }
        });
        let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
            .serve_connection(io, service)
            .await;
    }

    /// TLS handshakes that failed (always 0 for a plain mock).
    pub(crate) fn tls_failures(&self) -> usize {
        self.tls_failures.load(Ordering::SeqCst)
    }

    pub(crate) fn url(&self, path: &str) -> String {
        format!("{}://{}{path}", self.scheme, self.addr)
    }

    pub(crate) fn script(
        &self,
        script: impl Fn(&Seen, &Mock) -> Option<Response<Body>> + Send + Sync + 'static,
    ) {
        *lock(&self.script) = Some(Box::new(script));
    }

    pub(crate) fn seen(&self) -> Vec<Seen> {
        lock(&self.seen).clone()
    }

    /// The POSTs of one JSON-RPC method.
    pub(crate) fn posts(&self, method: &str) -> Vec<Seen> {
        self.seen()
            .into_iter()
            .filter(|s| s.method == Method::POST && s.rpc_method() == method)
            .collect()
    }

    /// Sends an event on the open legacy stream.
    pub(crate) fn legacy_send(&self, event: &str) {
        if let Some(tx) = lock(&self.legacy).as_ref() {
            let _ = tx.send(Bytes::from(event.to_owned()));
        }
    }

    /// Ends the open legacy stream (after the events already sent on it).
    pub(crate) fn legacy_drop(&self) {
        lock(&self.legacy).take();
    }

    async fn handle(&self, request: Request<Incoming>) -> Response<Body> {
        let (parts, body) = request.into_parts();
        let body = body
            .collect()
            .await
            .map(|b| b.to_bytes())
            .unwrap_or_default();
        let seen = Seen {
            method: parts.method,
            path: parts
                .uri
                .path_and_query()
                .map_or("/".to_owned(), |p| p.to_string()),
            headers: parts.headers,
            body: serde_json::from_slice(&body).unwrap_or(Value::Null),
            raw: body,
            at: Instant::now(),
        };
        lock(&self.seen).push(seen.clone());
        let scripted = lock(&self.script).as_ref().and_then(|s| s(&seen, self));
        if let Some(response) = scripted {
            return response;
        }
        if seen.path.starts_with("/sse") || seen.path.starts_with("/messages") {
            return self.legacy(&seen);
        }
        self.streamable(&seen)
    }

    /// The default Streamable HTTP behaviour: sessions `s1`, `s2`, ...; JSON answers.
    fn streamable(&self, seen: &Seen) -> Response<Body> {
        match seen.method {
            Method::GET => return status(405, ""),
            Method::DELETE => return status(200, ""),
            _ => {}
        }
        if seen.rpc_method() == "initialize" {
            let n = self.sessions.fetch_add(1, Ordering::SeqCst) + 1;
            let mut response = json_response(&answer(seen));
            response
                .headers_mut()
                .insert("mcp-session-id", format!("s{n}").parse().unwrap());
            return response;
        }
        match seen.body.get("id") {
            Some(_) if seen.body.get("method").is_some() => json_response(&answer(seen)),
            _ => status(202, ""),
        }
    }

    /// The legacy transport: each GET /sse streams a new session `n` (1, 2, ...) whose
    /// endpoint is `/messages?session=n`; POSTs there answer on the stream, POSTs to an older
    /// session get 404.
    fn legacy(&self, seen: &Seen) -> Response<Body> {
        if seen.method == Method::GET {
            let n = self.legacy_session.fetch_add(1, Ordering::SeqCst) + 1;
            let (tx, rx) = mpsc::unbounded_channel();
            let endpoint = format!("event: endpoint\ndata: /messages?session={n}\n\n");
            let _ = tx.send(Bytes::from(endpoint));
            *lock(&self.legacy) = Some(tx);
            return sse_channel(rx);
        }
        let current = format!(
            "/messages?session={}",
            self.legacy_session.load(Ordering::SeqCst)
        );
        if seen.path != current {
            return status(404, "Session not found");
        }
        if seen.body.get("method").is_some() && seen.body.get("id").is_some() {
            let message = answer(seen);
            self.legacy_send(&format!("event: message\ndata: {message}\n\n"));
        }
        status(202, "Accepted")
    }
}

/// The default answer to a request.
pub(crate) fn answer(seen: &Seen) -> Value {
    let id = seen.body.get("id").cloned().unwrap_or(Value::Null);
    let result = match seen.rpc_method() {
        "initialize" => json!({
            "protocolVersion": seen.body.pointer("/params/protocolVersion").cloned()
                .unwrap_or(json!("2025-11-25")),
            "capabilities": { "tools": {} },
            "serverInfo": { "name": "mock", "version": "1" },
        }),
        "tools/list" => json!({ "tools": [
            { "name": "echo", "inputSchema": { "type": "object" } },
        ]}),
        "tools/call" => json!({ "content": [
            { "type": "text", "text": format!("echo: {}", seen.body.pointer("/params/arguments/message").and_then(Value::as_str).unwrap_or("")) },
        ]}),
        _ => json!({}),
    };
    json!({ "jsonrpc": "2.0", "id": id, "result": result })
}

pub(crate) fn full(body: impl Into<Bytes>) -> Body {
    Full::new(body.into()).boxed()
}

pub(crate) fn status(code: u16, body: &str) -> Response<Body> {
    let mut response = Response::new(full(body.to_owned()));
    *response.status_mut() = StatusCode::from_u16(code).unwrap();
    response
}

/// A response with a status, a content type (none for `""`) and a body.
pub(crate) fn typed(code: u16, content_type: &str, body: impl Into<Bytes>) -> Response<Body> {
    let mut response = Response::new(full(body));
    *response.status_mut() = StatusCode::from_u16(code).unwrap();
    if !content_type.is_empty() {
        response
            .headers_mut()
            .insert("content-type", content_type.parse().unwrap());
    }
    response
}

/// A status whose (empty) body ends only after `delay`, so the exchange takes that long.
pub(crate) fn slow(code: u16, delay: Duration) -> Response<Body> {
    let stream = futures_util::stream::once(async move {
        tokio::time::sleep(delay).await;
        Ok::<_, Infallible>(Frame::data(Bytes::new()))
    });
    let mut response = Response::new(StreamBody::new(stream).boxed());
    *response.status_mut() = StatusCode::from_u16(code).unwrap();
    response
}

/// A 200 whose `Content-Length` promises more than the body sends: the server closes the
/// connection short, and the client reads a body that broke off.
pub(crate) fn truncated(content_type: &str, body: &str) -> Response<Body> {
    let sent = Bytes::from(body.to_owned());
    let promised = sent.len() + 100;
    // The pause after the chunk makes hyper flush the head and the chunk before the body
    // ends short, so the client has a 200 when the connection closes.
    let stream = futures_util::stream::unfold(Some(sent), |chunk| async move {
        match chunk {
            Some(chunk) => Some((Ok::<_, Infallible>(Frame::data(chunk)), None)),
            None => {
                tokio::time::sleep(Duration::from_millis(10)).await;
                None
            }
        }
    });
    let mut response = Response::new(StreamBody::new(stream).boxed());
    let headers = response.headers_mut();
    headers.insert("content-type", content_type.parse().unwrap());
    headers.insert("content-length", promised.into());
    response
}

pub(crate) fn json_response(value: &Value) -> Response<Body> {
    let mut response = Response::new(full(value.to_string()));
    response
        .headers_mut()
        .insert("content-type", "application/json".parse().unwrap());
    response
}

/// An SSE response whose chunks come after the given delays; the body ends after the last.
pub(crate) fn sse(chunks: Vec<(Duration, String)>) -> Response<Body> {
    let stream = futures_util::stream::unfold(chunks.into_iter(), |mut chunks| async move {
        let (delay, chunk) = chunks.next()?;
        tokio::time::sleep(delay).await;
        Some((Ok::<_, Infallible>(Frame::data(Bytes::from(chunk))), chunks))
    });
    sse_response(StreamBody::new(stream).boxed())
}

/// An SSE response fed by a channel; it ends when the sender goes.
pub(crate) fn sse_channel(rx: mpsc::UnboundedReceiver<Bytes>) -> Response<Body> {
    let stream = futures_util::stream::unfold(rx, |mut rx| async move {
        let chunk = rx.recv().await?;
        Some((Ok::<_, Infallible>(Frame::data(chunk)), rx))
    });
    sse_response(StreamBody::new(stream).boxed())
}

fn sse_response(body: Body) -> Response<Body> {
    let mut response = Response::new(body);
    response
        .headers_mut()
        .insert("content-type", "text/event-stream".parse().unwrap());
    response
}
