//! Connecting by spec: the one place that knows every transport. It opens the transport the
//! spec names (`crate::stdio`, `crate::http`, the latter with `crate::auth`'s authorizer when
//! the spec has one) and hands it to the protocol core, which knows none of them.

use std::sync::Arc;

use sidewire_jsonrpc::Config;
use tokio::time::Instant;

use crate::error::Kind;
use crate::protocol::client::rpc_config;
use crate::protocol::handler::{self, ClientHandler, DynHandler};
use crate::transport::Opened;
use crate::{Client, ClientDriver, Error, ServerSpec, Stage, Transport};

impl Client {
    /// Connects to the server `spec` names: starts it, runs the handshake, and returns the
    /// handle and the driver to run. Launch and initialize share the spec's startup timeout.
    ///
    /// # Errors
    ///
    /// A config error for an invalid spec, a spawn error naming `PATH` when the command is
    /// missing, an HTTP error ([`Error::http_status`]: 401, 403, ...) when the server refuses
    /// the initialize POST, a timeout, a closed error when the server dies during the handshake
    /// (with its exit status and stderr tail), or an incompatible-version error. Every one
    /// names the server and the stage.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future kills a process it already started, and drops every HTTP exchange
    /// in flight; nothing is left behind.
    pub async fn connect(
        spec: &ServerSpec,
        handler: impl ClientHandler,
    ) -> Result<(Client, ClientDriver), Error> {
        let deadline = Instant::now() + spec.startup_timeout;
        Client::connect_shared(spec, handler::share(handler), deadline).await
    }

    pub(crate) async fn connect_shared(
        spec: &ServerSpec,
        handler: Arc<dyn DynHandler>,
        deadline: Instant,
    ) -> Result<(Client, ClientDriver), Error> {
        let started = Instant::now();
        let launch_failed = |err: Error| {
            err.with_server(&spec.name)
                .with_stage(Stage::Launch, started.elapsed())
        };
        spec.validate().map_err(launch_failed)?;
        if !spec.enabled {
            // The config said not to start it (`disabled: true`, `enabled: false`).
            return Err(launch_failed(Error::config(format!(
                "server `{}` is disabled in its config",
                spec.name
            ))));
        }
        let config = rpc_config(spec);
        let opened = match tokio::time::timeout_at(deadline, open(spec, &config)).await {
            Ok(opened) => opened.map_err(launch_failed)?,
            Err(_) => {
                return Err(launch_failed(Error::new(Kind::Timeout {
                    what: "launching the server".to_owned(),
                    after: spec.startup_timeout,
                    idle: false,
                })));
            }
        };
        Client::establish(spec, opened, handler, config, deadline, started).await
    }
}

/// Opens the transport a spec names.
async fn open(spec: &ServerSpec, config: &Config) -> Result<Opened, Error> {
    match spec.transport {
        #[cfg(feature = "stdio")]
        Transport::Stdio => crate::stdio::open(spec, config).await,
        #[cfg(feature = "http")]
        Transport::StreamableHttp | Transport::Sse => {
            let _ = config;
            crate::http::open(spec, |client, url| authorizer(spec, client, url))
        }
        #[allow(unreachable_patterns)]
        other => {
            let _ = config;
            Err(Error::config(format!(
                "server `{}`: this build of sidewire-mcp has no {} transport (its `{}` feature is off)",
                spec.name,
                other.as_str(),
                feature_of(other),
            )))
        }
    }
}

/// The Cargo feature that brings a transport.
#[allow(dead_code)]
fn feature_of(transport: Transport) -> &'static str {
    match transport {
        Transport::Stdio => "stdio",
        Transport::StreamableHttp | Transport::Sse => "http",
    }
}

/// The connection's authorizer: `crate::auth`'s session when the spec has an authorizer.
#[cfg(feature = "http")]
fn authorizer(
    spec: &ServerSpec,
    client: &crate::http::client::HttpClient,
    url: &url::Url,
) -> Option<Arc<dyn crate::http::Authorize>> {
    #[cfg(feature = "auth")]
    return crate::auth::session::AuthSession::new(spec, client, url)
        .map(|session| session as Arc<dyn crate::http::Authorize>);
    #[cfg(not(feature = "auth"))]
    {
        let _ = (spec, client, url);
        None
    }
}
