//! `sidewire mcp serve`: the selected servers as one MCP server (`sidewire-gateway`), on
//! stdin/stdout or Streamable HTTP.
//!
//! In the stdio mode stdout is the protocol: everything else (notes, warnings, failures) goes
//! to stderr, through [`safe`]. The serve ends when the client goes away (stdin's end, or the
//! last HTTP connection is irrelevant: HTTP ends only on a signal), or on SIGTERM/SIGHUP/SIGINT;
//! then the upstreams get a short graceful close, and whatever is left is killed with its
//! process group, all within [`WIND_DOWN`].

use std::net::SocketAddr;
use std::time::Duration;

use anyhow::Context as _;
use sidewire_ext_host::HostEvent;
use sidewire_gateway::{Alias, AuditSink, Gateway, GatewayConfig, Mode, Policy};
use sidewire_mcp_server::http::check::Allowed;
use sidewire_mcp_server::http::{BearerToken, HttpConfig, HttpServer};
use sidewire_mcp_server::{Limits, SealingKey, Server};

use crate::Interrupted;
use crate::cli::{McpArgs, PolicyArg, ServeArgs};
use crate::out::Out;
use crate::safe;

/// How long the end of a serve waits for the upstreams' graceful close before their process
/// groups are killed (the whole end stays within 2 s).
const WIND_DOWN: Duration = Duration::from_millis(1500);

/// The longest token file read (a token is one line).
const MAX_TOKEN_FILE: u64 = 4096;

/// Runs the gateway until the client goes away or a signal ends it.
pub(super) async fn serve(
    args: &McpArgs,
    serve: &ServeArgs,
    out: &Out,
    mut interrupted: Interrupted,
) -> anyhow::Result<()> {
    let stdio = serve.listen.is_none();
    let home = crate::sidewire_home()?;
    let audit = match &serve.audit {
        Some(path) if path.as_os_str() == "-" => {
            anyhow::ensure!(
                !stdio,
                "--audit - (stdout) needs --listen: with stdin/stdout, stdout is the protocol"
            );
            AuditSink::Stdout
        }
        Some(path) => AuditSink::File(path.clone()),
        None => {
            std::fs::create_dir_all(&home)
                .with_context(|| format!("cannot create {}", home.display()))?;
            AuditSink::File(home.join("mcp-serve-audit.jsonl"))
        }
    };
    let bearer = bearer_token(serve)?;
    let key = state_key(serve)?;
    if let Some(addr) = serve.listen {
        anyhow::ensure!(
            addr.ip().is_loopback() || bearer.is_some(),
            "--listen {addr} is not a loopback address: give a bearer token with --token-file \
             or --token-env"
        );
    }

    let (specs, _) = super::selected(args)?;
    let authorizer = super::auth::authorizer();
    let specs = super::auth::authorize(specs, authorizer.as_ref());
    anyhow::ensure!(!specs.is_empty(), "the config lists no MCP servers");
    for (server, _) in &serve.aliases {
        anyhow::ensure!(
            specs.iter().any(|spec| spec.name() == server),
            "--alias names {}, which is not a selected server",
            safe::line(server)
        );
    }
    let mut policy = Policy::new(match serve.policy {
        PolicyArg::Allow => Mode::Allow,
        PolicyArg::ReadOnly => Mode::ReadOnly,
        PolicyArg::Deny => Mode::Deny,
    });
    for pattern in &serve.allow_tools {
        policy = policy.allow(pattern);
    }
    for pattern in &serve.deny_tools {
        policy = policy.deny(pattern);
    }
    let mut config = GatewayConfig::new()
        .name(&serve.name)
        .policy(policy)
        .audit(audit, serve.audit_arguments)
        .login_command(super::auth::login_command(args, "{server}"));
    if serve.no_prefix {
        config = config.bridge();
    }
    for server in &serve.stateful {
        anyhow::ensure!(
            specs.iter().any(|spec| spec.name() == server),
            "--stateful names {}, which is not a selected server",
            safe::line(server)
        );
    }
    for spec in specs {
        let alias = serve
            .aliases
            .iter()
            .find(|(server, _)| server == spec.name());
        config = match alias {
            Some((_, alias)) => config.server_as(spec, Alias::new(alias)?),
            None => config.server(spec),
        };
    }
    for server in &serve.stateful {
        config = config.stateful(server);
    }
    config = config.instances(
        usize::try_from(serve.max_instances).unwrap_or(usize::MAX),
        std::time::Duration::from_secs(serve.instance_idle),
    );

    let (extensions, mut events) = crate::ext_cmd::boot_with_hooks(out).await?;
    for failure in &extensions.report().failed {
        out.note(format!(
            "warning: extension {}",
            safe::block(&failure.to_string(), "  ")
        ));
    }
    let out_events = *out;
    // No person answers a sidecar's prompt here: each is cancelled, and warnings go to stderr.
    let events_task = tokio::spawn(async move {
        while let Some(event) = events.recv().await {
            match event {
                HostEvent::Prompt(prompt) => prompt.cancel(),
                HostEvent::Warning {
                    plugin, message, ..
                } => out_events.note(format!(
                    "warning: extension {}: {}",
                    safe::line(plugin.as_deref().unwrap_or("host")),
                    safe::line(&message)
                )),
                HostEvent::Crashed { plugin, cause, .. } => out_events.note(format!(
                    "warning: extension {} crashed: {}",
                    safe::line(&plugin),
                    safe::line(&cause)
                )),
                _ => {}
            }
        }
    });

    let (gateway, driver) = match Gateway::new(config, extensions.clone()) {
        Ok(made) => made,
        Err(err) => {
            extensions.shutdown().await;
            return Err(err.into());
        }
    };
    let mut driver = tokio::spawn(driver);
    let login = |server: &str| super::auth::login_command(args, server);
    let result = run(
        &gateway,
        serve.listen,
        bearer,
        key,
        &login,
        out,
        &mut interrupted,
    )
    .await;
    // Upstreams first (bounded), then the extensions; whatever is left is killed when the
    // last handle drops (process groups, synchronously).
    let _ = tokio::time::timeout(WIND_DOWN, gateway.shutdown()).await;
    drop(gateway);
    let _ = tokio::time::timeout(Duration::from_millis(300), &mut driver).await;
    driver.abort();
    let _ = tokio::time::timeout(Duration::from_millis(300), extensions.shutdown()).await;
    events_task.abort();
    result
}

/// Starts the upstreams and serves until the end.
async fn run(
    gateway: &Gateway,
    listen: Option<SocketAddr>,
    bearer: Option<BearerToken>,
    key: Option<SealingKey>,
    login: &dyn Fn(&str) -> String,
    out: &Out,
    interrupted: &mut Interrupted,
) -> anyhow::Result<()> {
    let starting = gateway.start();
    let failures = tokio::select! {
        failures = starting => failures?,
        () = interrupted.wait() => anyhow::bail!("interrupted"),
    };
    for failure in &failures {
        out.note(format!(
            "warning: MCP server {} failed to start: {}",
            safe::line(&failure.server),
            safe::block(&super::failure_text(failure), "  ")
        ));
        if failure.auth_error == Some(sidewire_mcp::auth::AuthErrorKind::LoginRequired) {
            out.note(format!(
                "  it needs a sign-in: run `{}`, then start the serve again",
                safe::line(&login(&failure.server))
            ));
        }
    }
    let server = match key {
        Some(key) => Server::with_sealing_key(gateway.clone(), Limits::default(), key),
        None => Server::new(gateway.clone()),
    };
    let watching = gateway.watch(server.notifier());
    let serving = async {
        match listen {
            None => {
                let ((reader, writer), _restore) = crate::stdio::open();
                server
                    .serve_stdio(reader, writer)
                    .await
                    .context("serving on stdin/stdout")
            }
            Some(addr) => {
                let listener = tokio::net::TcpListener::bind(addr)
                    .await
                    .with_context(|| format!("cannot listen on {addr}"))?;
                let local = listener.local_addr().context("the listener's address")?;
                let mut config = HttpConfig::default();
                if !addr.ip().is_loopback() {
                    // Also the address it listens on, for clients that name it in `Host`.
                    let mut allowed = Allowed::loopback();
                    allowed.hosts.push(match local {
                        SocketAddr::V4(v4) => v4.ip().to_string(),
                        SocketAddr::V6(v6) => format!("[{}]", v6.ip()),
                    });
                    config.allowed = allowed;
                }
                config.bearer = bearer;
                out.note(format!("listening on http://{local}/mcp"));
                HttpServer::new(server, config)
                    .serve(listener)
                    .await
                    .context("serving HTTP")
            }
        }
    };
    // The watcher ends early when no upstream started (or once the upstreams are shut down);
    // the serve goes on until the client goes away or a signal ends it, as the module says.
    let watching = async {
        watching.await;
        std::future::pending::<()>().await;
    };
    tokio::select! {
        result = serving => result,
        () = watching => Ok(()),
        () = interrupted.wait() => Ok(()),
    }
}

/// The bearer token from --token-file (its first line) or --token-env.
fn bearer_token(serve: &ServeArgs) -> anyhow::Result<Option<BearerToken>> {
    let text = match (&serve.token_file, &serve.token_env) {
        (Some(path), _) => {
            let text = read_token_file(path)
                .with_context(|| format!("reading the token file {}", path.display()))?;
            text.lines().next().unwrap_or_default().trim().to_owned()
        }
        (None, Some(var)) => std::env::var(var)
            .with_context(|| format!("the environment variable {} is not set", safe::line(var)))?
            .trim()
            .to_owned(),
        (None, None) => return Ok(None),
    };
    // The token itself is never printed.
    BearerToken::new(text)
        .map(Some)
        .context("the bearer token is empty or not visible ASCII")
}

/// The sealing key from --state-key-file (its first line).
fn state_key(serve: &ServeArgs) -> anyhow::Result<Option<SealingKey>> {
    let Some(path) = &serve.state_key_file else {
        return Ok(None);
    };
    let text = read_token_file(path)
        .with_context(|| format!("reading the state key file {}", path.display()))?;
    let secret = text.lines().next().unwrap_or_default().trim();
    // The key itself is never printed.
    SealingKey::from_bytes(secret.as_bytes())
        .map(Some)
        .with_context(|| {
            format!(
                "the state key in {} is shorter than {} bytes",
                path.display(),
                SealingKey::MIN_BYTES
            )
        })
}

/// A token file: a regular file (opened non-blocking, so a FIFO cannot hang the start), read
/// up to [`MAX_TOKEN_FILE`] bytes.
fn read_token_file(path: &std::path::Path) -> std::io::Result<String> {
    use std::io::Read as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let mut text = String::new();
    file.take(MAX_TOKEN_FILE).read_to_string(&mut text)?;
    Ok(text)
}
