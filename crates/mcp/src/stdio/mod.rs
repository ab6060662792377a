//! The stdio transport (Unix): a server run as a child process speaking newline-delimited JSON.
//!
//! The process itself is `sidewire-process`'s business: the command is resolved with
//! [`sidewire_process::resolve`] (a path, else the spec's or the current `PATH`, and only when
//! it is not there the login shell's `PATH`, probed once per process; a command found on
//! `PATH` runs no shell), then spawned without a shell with the parent's environment plus the
//! spec's `env`, the spec's working directory, its own process group, the death signal, and
//! optionally a lower priority. Its stderr is always drained into a redacted 16 KiB tail (the
//! host's own credential-named variables, the spec's, and token patterns), optionally
//! forwarded to `tracing` (target [`sidewire_process::STDERR_TARGET`]). The supervision future
//! is this transport's background work, run inside the client's driver (nothing here spawns a
//! task), and [`Backend::Stdio`] holds the owning [`sidewire_process::Process`]: closing is
//! [`sidewire_process::CloseBudgets::MCP_STDIO`], dropping the last client kills the group.
//!
//! stdout is framed by `sidewire-framing`'s NDJSON codec in skip mode through
//! `sidewire_jsonrpc::ndjson` (lenient profile): an oversized line fails the request it
//! answers and the connection lives; non-JSON lines are skipped and counted.
//!
//! It does not handle Windows (`.cmd` shims, Job Objects) yet.

use std::ffi::OsStr;
use std::sync::OnceLock;

use futures_util::TryStreamExt;
use sidewire_jsonrpc::Config;
use sidewire_process::{Command, Redactor};

use crate::error::Kind;
use crate::transport::{Backend, Inbound, Opened, Outlet};
use crate::{Error, ServerSpec};

/// The host's own secrets (credential-named variables of its environment), computed once per
/// process: every server's stderr tail hides them.
fn host_redactor() -> Redactor {
    static HOST: OnceLock<Redactor> = OnceLock::new();
    HOST.get_or_init(Redactor::from_process_env).clone()
}

/// Starts the server process and wires its pipes.
pub(crate) async fn open(spec: &ServerSpec, config: &Config) -> Result<Opened, Error> {
    if let Some(dir) = &spec.dir
        && !dir.is_dir()
    {
        return Err(Error::new(Kind::Spawn {
            message: format!(
                "the server's working directory {} does not exist",
                dir.display()
            ),
        }));
    }
    let resolved = sidewire_process::resolve(
        &spec.command,
        spec.env.get("PATH").map(OsStr::new),
        spec.dir.as_deref(),
    )
    .await
    .map_err(|err| spawn_error(err, !spec.command.contains('/')))?;
    let mut command = Command::new(&resolved.program);
    command
        .args(&spec.args)
        .envs(&spec.env)
        .low_priority(spec.low_priority)
        .redactor(host_redactor());
    if let Some(path) = resolved.path {
        // Found only on the login shell's PATH: the child gets the PATH that found it.
        command.env("PATH", path);
    }
    if let Some(dir) = &spec.dir {
        command.current_dir(dir);
    }
    if spec.forward_stderr {
        command.forward_stderr(std::sync::Arc::clone(&spec.name));
    }
    let spawned = command.spawn().map_err(|err| spawn_error(err, false))?;
    let pid = spawned.process.pid();
    let supervise = spawned.supervise;
    let (stream, sink) = sidewire_jsonrpc::ndjson(spawned.stdout, spawned.stdin, config);
    tracing::debug!(server = %spec.name, pid, program = %resolved.program.display(), "started an MCP server");
    Ok(Opened {
        stream: Box::pin(stream.map_ok(Inbound::Frame)),
        sink: Outlet::Frames(Box::pin(sink)),
        backend: Backend::Stdio(spawned.process),
        background: Some(Box::pin(async move {
            supervise.await;
        })),
    })
}

/// A launch failure as mcp's spawn error, its cause in the message (never also a `source`).
/// A command name not found on `PATH` also says where a server's `PATH` is set.
fn spawn_error(err: sidewire_process::Error, searched_path: bool) -> Error {
    let mut message = match std::error::Error::source(&err) {
        Some(source) => format!("{err}: {source}"),
        None => err.to_string(),
    };
    if err.is_not_found() && searched_path {
        message.push_str(" (a server's PATH goes in its `env`)");
    }
    Error::new(Kind::Spawn { message })
}

#[cfg(test)]
mod tests;
