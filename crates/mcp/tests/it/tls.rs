//! https is verified by default: an MCP server behind a certificate no web PKI root vouches for
//! (freshly generated, self-signed) is refused during the TLS handshake, before any request
//! (and so before any configured credential) reaches it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};
use serde_json::{Value, json};
use sidewire_mcp::{Client, NoHandler, ServerSpec};
use tokio_rustls::{TlsAcceptor, TlsConnector};

use crate::http_mock::Mock;
use crate::support::*;

/// How long a refused https connection may take: the handshake fails on loopback at once, so
/// this is far below every call and startup budget, which would otherwise be what ends it.
const REFUSAL_LIMIT: Duration = Duration::from_secs(5);

/// A certificate for `127.0.0.1` that signs itself, and an acceptor presenting it. The ring
/// provider, like the client's, so the tests need no second crypto backend.
fn self_signed() -> (CertificateDer<'static>, TlsAcceptor) {
    let generated = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).unwrap();
    let cert = generated.cert.der().clone();
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(
        generated.signing_key.serialize_der(),
    ));
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![cert.clone()], key)
        .unwrap();
    // The client offers both; either must be refused the same way.
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    (cert, TlsAcceptor::from(Arc::new(config)))
}

#[tokio::test]
async fn https_to_a_self_signed_server_fails_verification_before_any_request() {
    let (cert, acceptor) = self_signed();
    let mock = Mock::start_tls(acceptor).await;
    let spec = ServerSpec::http("tls", mock.url("/mcp")).header("Authorization", "Bearer secret");
    assert!(
        spec.url().starts_with("https://127.0.0.1:"),
        "{}",
        spec.url()
    );

    let started = Instant::now();
    let err = within_for(
        "a refused https connect",
        REFUSAL_LIMIT,
        Client::connect(&spec, NoHandler),
    )
    .await
    .map(|_| ())
    .unwrap_err();
    assert!(started.elapsed() < REFUSAL_LIMIT, "{:?}", started.elapsed());
    assert!(err.is_http(), "{err:?}");
    assert_eq!(err.http_status(), None, "{err}");
    assert_eq!(err.server(), Some("tls"));
    let text = err.to_string().to_ascii_lowercase();
    assert!(
        text.contains("certificate") && text.contains("unknownissuer"),
        "{err}"
    );
    // The handshake is where it ended: the server saw it fail, and never saw a request, so the
    // bearer token never left the client.
    eventually("the server to see the failed handshake", || {
        mock.tls_failures() > 0
    })
    .await;
    assert!(mock.seen().is_empty(), "{:?}", mock.seen());

    // The refusal is about trust, not a broken server: a client that trusts this certificate
    // gets initialize answered by the very same server.
    let answer = initialize_trusting(&mock, cert).await;
    assert_eq!(answer["result"]["serverInfo"]["name"], "mock", "{answer}");
    assert_eq!(mock.posts("initialize").len(), 1);
}

/// One initialize POST over HTTP/1.1 from a bare rustls client whose only root is `cert`.
async fn initialize_trusting(mock: &Mock, cert: CertificateDer<'static>) -> Value {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(cert).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let tcp = within("tcp connect", tokio::net::TcpStream::connect(mock.addr))
        .await
        .unwrap();
    let name = ServerName::try_from("127.0.0.1").unwrap();
    let tls = within(
        "tls handshake",
        TlsConnector::from(Arc::new(config)).connect(name, tcp),
    )
    .await
    .unwrap();
    let (mut sender, connection) = within(
        "http handshake",
        hyper::client::conn::http1::handshake(TokioIo::new(tls)),
    )
    .await
    .unwrap();
    tokio::spawn(connection);
    let initialize = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": { "protocolVersion": "2025-11-25", "capabilities": {},
                    "clientInfo": { "name": "probe", "version": "1" } },
    });
    let request = http::Request::post(mock.url("/mcp"))
        .header("host", mock.addr.to_string())
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(Full::new(Bytes::from(initialize.to_string())))
        .unwrap();
    let response = within("initialize", sender.send_request(request))
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let body = within("initialize body", response.into_body().collect())
        .await
        .unwrap()
        .to_bytes();
    serde_json::from_slice(&body).unwrap()
}
