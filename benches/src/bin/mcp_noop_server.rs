//! The server side of `--bench mcp_server`: one no-op tool (`noop`, answering the text "ok")
//! served by `sidewire-mcp-server`'s `Toolbox`, and the two floors the bench measures it
//! against, each a process of its own so that every row pays the same process wake-ups.
//!
//! ```text
//! mcp_noop_server                # the Toolbox over stdin/stdout (non-blocking pipes)
//! mcp_noop_server --tokio-stdio  # the same over tokio::io::stdin()/stdout()
//! mcp_noop_server --http         # Streamable HTTP on 127.0.0.1:0
//! mcp_noop_server --echo         # the stdio floor: every line written back as it came
//! mcp_noop_server --echo-http    # the HTTP floor: hyper HTTP/1.1, every POST body sent back
//! mcp_noop_server --gateway      # sidewire-gateway in bridge mode in front of the Toolbox
//! mcp_noop_server --gateway-sidecar  # the same with one allow-all sidecar in the chain
//! mcp_noop_server --gateway-http # the gateway as a bridge: the Toolbox over Streamable HTTP
//! mcp_noop_server --aggregate-http  # the gateway aggregating two Toolboxes over Streamable HTTP
//! mcp_noop_server --relay        # its floor: bytes copied to and from a child `--echo`
//! ```
//!
//! `--gateway` is `sidewire mcp serve --no-prefix --policy allow` without the CLI: the gateway
//! (no extensions installed, no audit) on non-blocking stdin/stdout pipes, its one upstream
//! this program's Toolbox as a child. `--relay` is what any process in the middle costs: the
//! same two pipe hops with no JSON at all. `--aggregate-http` is the gateway in its default
//! mode, aggregation (`sidewire mcp serve --policy allow --listen` with two servers): two
//! upstreams, `a` and `b`, each this program's Toolbox as a child, their tools prefixed with
//! the alias (`a__noop`, `b__noop`).
//!
//! The HTTP modes print `listening on http://ADDRESS/mcp` as their first line on stdout (as
//! the crate's `fixture` example does). Every mode runs on a current-thread runtime: a no-op
//! server has one connection's work at a time, and the peers it is measured against (Node,
//! Python's event loop) are single-threaded too.

use std::convert::Infallible;
use std::io::Write as _;
use std::process::ExitCode;

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use serde_json::json;
use sidewire_mcp_server::http::{HttpConfig, serve};
use sidewire_mcp_server::{CallToolResult, Server, Toolbox};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::net::TcpListener;

fn main() -> ExitCode {
    // Re-executed as `--gateway-sidecar`'s sidecar.
    if sidewire_benches::sidecars::is_sidecar() {
        return sidewire_benches::sidecars::serve_allow_all();
    }
    let mode = std::env::args().nth(1).unwrap_or_default();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let served = runtime.block_on(async {
        match mode.as_str() {
            // Node (supergateway) gives its child a Unix socket pair, not pipes.
            "" if stdio_is_socket() => {
                let (reader, writer) = stdio_sockets();
                toolbox()
                    .serve(reader, writer)
                    .await
                    .map_err(|err| err.to_string())
            }
            "" => {
                let (reader, writer) = sidewire_benches::stdio_pipes();
                toolbox()
                    .serve(reader, writer)
                    .await
                    .map_err(|err| err.to_string())
            }
            "--tokio-stdio" => toolbox()
                .serve(tokio::io::stdin(), tokio::io::stdout())
                .await
                .map_err(|err| err.to_string()),
            "--http" => {
                let listener = listen().await;
                serve(Server::new(toolbox()), listener, HttpConfig::default())
                    .await
                    .map_err(|err| err.to_string())
            }
            "--echo" => {
                echo().await;
                Ok(())
            }
            "--gateway" => gateway(Front::Stdio).await,
            "--gateway-sidecar" => gateway(Front::StdioSidecar).await,
            "--gateway-http" => gateway(Front::Http).await,
            "--aggregate-http" => gateway(Front::AggregateHttp).await,
            "--relay" => {
                relay().await;
                Ok(())
            }
            "--echo-http" => {
                echo_http(listen().await).await;
                Ok(())
            }
            other => Err(format!(
                "unknown mode {other:?} (none, --tokio-stdio, --http, --echo, --echo-http, --gateway, --gateway-sidecar, --gateway-http, --aggregate-http, --relay)"
            )),
        }
    });
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(reason) => {
            let _ = writeln!(std::io::stderr(), "mcp_noop_server: {reason}");
            ExitCode::FAILURE
        }
    }
}

/// Whether stdin is a socket.
fn stdio_is_socket() -> bool {
    use std::os::fd::AsFd as _;
    let copy = std::io::stdin()
        .as_fd()
        .try_clone_to_owned()
        .expect("stdin");
    std::os::unix::net::UnixStream::from(copy)
        .local_addr()
        .is_ok()
}

/// stdin and stdout as non-blocking Unix sockets on the reactor.
fn stdio_sockets() -> (tokio::net::UnixStream, tokio::net::UnixStream) {
    use std::os::fd::AsFd as _;
    let socket = |fd: std::os::fd::BorrowedFd<'_>| {
        let socket = std::os::unix::net::UnixStream::from(fd.try_clone_to_owned().expect("a copy"));
        socket.set_nonblocking(true).expect("non-blocking");
        tokio::net::UnixStream::from_std(socket).expect("on the reactor")
    };
    (
        socket(std::io::stdin().as_fd()),
        socket(std::io::stdout().as_fd()),
    )
}

/// The one tool: no arguments, the text "ok".
fn toolbox() -> Toolbox {
    Toolbox::new("sidewire-noop", "0").tool(
        "noop",
        "Does nothing.",
        json!({"type": "object", "properties": {}}),
        |_args, _ctx| async { CallToolResult::text("ok") },
    )
}

/// A listener on a free loopback port, announced on stdout.
async fn listen() -> TcpListener {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let address = listener.local_addr().expect("its address");
    let mut stdout = std::io::stdout();
    let _ = writeln!(stdout, "listening on http://{address}/mcp");
    let _ = stdout.flush();
    listener
}

/// Every line written back, on the non-blocking pipes the Toolbox row uses.
async fn echo() {
    let (reader, mut writer) = sidewire_benches::stdio_pipes();
    let mut reader = BufReader::new(reader);
    let mut line = Vec::with_capacity(1024);
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        if writer.write_all(&line).await.is_err() || writer.flush().await.is_err() {
            return;
        }
    }
}

/// The least an HTTP/1.1 server on hyper does: every request's body read whole and sent back
/// as `application/json`, connections kept alive.
async fn echo_http(listener: TcpListener) {
    loop {
        let Ok((socket, _)) = listener.accept().await else {
            return;
        };
        let _ = socket.set_nodelay(true);
        tokio::spawn(async move {
            let service = hyper::service::service_fn(
                |request: http::Request<hyper::body::Incoming>| async move {
                    let body = request
                        .into_body()
                        .collect()
                        .await
                        .map(|collected| collected.to_bytes())
                        .unwrap_or_default();
                    let mut response = http::Response::new(Full::<Bytes>::new(body));
                    response.headers_mut().insert(
                        http::header::CONTENT_TYPE,
                        http::HeaderValue::from_static("application/json"),
                    );
                    Ok::<_, Infallible>(response)
                },
            );
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(hyper_util::rt::TokioIo::new(socket), service)
                .await;
        });
    }
}

/// Which gateway a `--gateway*` or `--aggregate-http` mode runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Front {
    /// Bridge mode on stdin/stdout.
    Stdio,
    /// The same with one allow-all sidecar in the chain.
    StdioSidecar,
    /// Bridge mode over Streamable HTTP on a loopback port: the job of supergateway and
    /// mcp-proxy.
    Http,
    /// Aggregation over Streamable HTTP: two upstreams, `a` and `b`, names prefixed.
    AggregateHttp,
}

/// The gateway in front of this program's Toolbox (two of them when aggregating), with no
/// extension installed (one allow-all sidecar for [`Front::StdioSidecar`]) and no audit.
async fn gateway(front: Front) -> Result<(), String> {
    use sidewire_gateway::{Gateway, GatewayConfig, Mode, Policy};
    let me = std::env::current_exe().map_err(|err| err.to_string())?;
    let sidecar = front == Front::StdioSidecar;
    let (config, _state) = if sidecar {
        sidewire_benches::sidecars::allow_all_store()
    } else {
        let state = tempfile::tempdir().map_err(|err| err.to_string())?;
        let config = sidewire_ext_host::HostConfig::new(state.path(), "bench", state.path());
        (config, state)
    };
    let (extensions, _events) = sidewire_ext_host::ExtensionHost::boot(config)
        .await
        .map_err(|err| err.to_string())?;
    let report = extensions.report();
    if !report.failed.is_empty() || (sidecar && report.started.is_empty()) {
        return Err("the allow-all sidecar did not start".to_owned());
    }
    let upstream = |name: &str| sidewire_mcp::ServerSpec::stdio(name, me.to_string_lossy());
    let config = match front {
        Front::AggregateHttp => GatewayConfig::new()
            .server(upstream("a"))
            .server(upstream("b")),
        Front::Stdio | Front::StdioSidecar | Front::Http => {
            GatewayConfig::new().server(upstream("noop")).bridge()
        }
    }
    .policy(Policy::new(Mode::Allow));
    let (gateway, driver) =
        Gateway::new(config, extensions.clone()).map_err(|err| err.to_string())?;
    tokio::spawn(driver);
    let failed = gateway.start().await.map_err(|err| err.to_string())?;
    if let Some(failure) = failed.first() {
        return Err(failure.error.to_string());
    }
    let served = if matches!(front, Front::Http | Front::AggregateHttp) {
        serve(
            Server::new(gateway.clone()),
            listen().await,
            HttpConfig::default(),
        )
        .await
    } else {
        let (reader, writer) = sidewire_benches::stdio_pipes();
        Server::new(gateway.clone())
            .serve_stdio(reader, writer)
            .await
    };
    gateway.shutdown().await;
    extensions.shutdown().await;
    served.map_err(|err| err.to_string())
}

/// The floor of a process in the middle: every byte copied to a child `--echo` and back.
async fn relay() {
    let me = std::env::current_exe().expect("this program");
    let mut child = tokio::process::Command::new(me)
        .arg("--echo")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the echo child");
    let mut to_child = child.stdin.take().expect("piped");
    let mut from_child = child.stdout.take().expect("piped");
    let (mut reader, mut writer) = sidewire_benches::stdio_pipes();
    let up = async {
        let mut buffer = vec![0u8; 64 << 10];
        loop {
            match tokio::io::AsyncReadExt::read(&mut reader, &mut buffer).await {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if to_child.write_all(&buffer[..n]).await.is_err() {
                        break;
                    }
                }
            }
        }
        drop(to_child);
    };
    let down = async {
        let mut buffer = vec![0u8; 64 << 10];
        loop {
            match tokio::io::AsyncReadExt::read(&mut from_child, &mut buffer).await {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if writer.write_all(&buffer[..n]).await.is_err() {
                        break;
                    }
                }
            }
        }
    };
    tokio::join!(up, down);
}
