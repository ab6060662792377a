//! The stdio transport (Unix): a server run as a child process speaking newline-delimited JSON.
//!
//! The child is spawned without a shell, with the parent's environment plus the spec's `env`,
//! `PATH` enriched from the login shell ([`path`]), the spec's working directory, its own
//! process group, and optionally a lower priority. stdout is framed by `sidewire-framing`'s
//! NDJSON codec in skip mode through `sidewire_jsonrpc::ndjson` (lenient profile): an
//! oversized line fails the request it answers and the connection lives; non-JSON lines are
//! skipped and counted. stderr is always drained into a redacted tail ([`stderr`]). The
//! process's lifetime is [`process`]'s business.
//!
//! It does not handle Windows (`.cmd` shims, Job Objects) yet.

pub(crate) mod path;
pub(crate) mod process;
pub(crate) mod redact;
pub(crate) mod stderr;

use std::process::Stdio;
use std::sync::{Arc, Mutex};

use sidewire_jsonrpc::Config;

pub(crate) use crate::stdio::process::ProcessHandle;

use crate::error::Kind;
use crate::stdio::stderr::StderrTail;
use crate::transport::{Backend, Opened};
use crate::{Error, ServerSpec};

/// Starts the server process and wires its pipes.
pub(crate) async fn open(spec: &ServerSpec, config: &Config) -> Result<Opened, Error> {
    let shell_path = path::login_shell_path().await;
    let base = match spec.env.get("PATH") {
        Some(path) => path.clone(),
        None => std::env::var_os("PATH")
            .map(|path| path.to_string_lossy().into_owned())
            .unwrap_or_default(),
    };
    let search = path::merge(&base, shell_path.as_deref());
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
    let program = path::resolve(&spec.command, &search, spec.dir.as_deref())?;
    let mut command = tokio::process::Command::new(&program);
    command
        .args(&spec.args)
        .envs(&spec.env)
        .env("PATH", &search)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own group, so closing can signal everything it started and a terminal's ^C
        // aimed at the host does not reach it.
        .process_group(0)
        .kill_on_drop(true);
    if let Some(dir) = &spec.dir {
        command.current_dir(dir);
    }
    let mut child = command.spawn().map_err(|err| {
        Error::new(Kind::Spawn {
            message: format!("cannot start {}: {err}", program.display()),
        })
    })?;
    let (Some(pid), Some(stdin), Some(stdout), Some(stderr)) = (
        child.id(),
        child.stdin.take(),
        child.stdout.take(),
        child.stderr.take(),
    ) else {
        return Err(Error::new(Kind::Spawn {
            message: format!("{} started without its pipes", program.display()),
        }));
    };
    if spec.low_priority
        && let Err(err) = process::lower_priority(pid)
    {
        tracing::warn!(server = %spec.name, %err, "could not lower the server's priority");
    }
    let forward = spec.forward_stderr.then(|| Arc::clone(&spec.name));
    let tail = Arc::new(Mutex::new(StderrTail::new(forward)));
    let handle = ProcessHandle::new(pid, tail);
    let background = process::supervise(child, stderr, handle.clone());
    let (stream, sink) = sidewire_jsonrpc::ndjson(stdout, stdin, config);
    tracing::debug!(server = %spec.name, pid, program = %program.display(), "started an MCP server");
    Ok(Opened {
        stream: Box::pin(stream),
        sink: Box::pin(sink),
        backend: Backend::Stdio(handle),
        background: Some(background),
    })
}
