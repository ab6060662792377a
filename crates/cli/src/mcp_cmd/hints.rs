//! What to do next, for the failures a person cannot act on from the error alone: a URL whose
//! path is wrong, a command that is not an MCP server (it exited, or wrote something other than
//! JSON-RPC, before answering `initialize`), a server that asks for something the CLI does not
//! offer (sampling, elicitation, roots). Each is keyed on typed facts (the start failure's
//! stage, transport, HTTP status and exit; the library's `Error` predicates), never on text.
//!
//! A task-augmented tool (`execution.taskSupport: "required"`) is the library's to run: when
//! its call fails as a task, the `is_task_*` predicates of `sidewire_mcp::Error` are the keys
//! for [`call`].

use sidewire_mcp::{Handshake, Stage, StartFailure, Transport};

/// A hint for a server that did not start.
pub(super) fn start(failure: &StartFailure) -> Option<String> {
    match (failure.transport, failure.stage, failure.http_status) {
        (Transport::StreamableHttp | Transport::Sse, _, Some(404 | 405 | 501)) => Some(
            "the URL answered as if nothing serves MCP at that path: check it (servers often \
             use /mcp for Streamable HTTP, /sse for legacy HTTP+SSE; --transport sse forces \
             the legacy transport)"
                .to_owned(),
        ),
        (Transport::Stdio, Stage::Initialize, _) if failure.exit_status.is_some() => {
            // The request it was sent: the era probe, or the legacy handshake.
            let method = failure.handshake.unwrap_or(Handshake::Initialize).method();
            Some(format!(
                "the command ended before it answered `{method}`: is it an MCP server, and does \
                 it write only JSON-RPC on stdout (its logs on stderr)? Run it by hand to see \
                 what it prints"
            ))
        }
        _ => None,
    }
}

/// A hint for a call that failed with the library's `err`.
pub(super) fn call(err: &sidewire_mcp::Error) -> Option<&'static str> {
    if err.is_input_refused() || err.is_missing_client_capability() {
        return Some(
            "the server needs input from the client (sampling, elicitation or roots), which \
             `sidewire mcp` does not offer; use a client that does, or a tool that needs none",
        );
    }
    // The library runs a task-augmented tool as a task and follows it to its end.
    if err.is_task_limit() {
        return Some(
            "this connection already follows as many tasks as it may at once; wait for one \
             to end, or cancel one on the server",
        );
    }
    if err.is_task_failed() {
        return Some(
            "the tool ran as a task on the server and the task failed; the server's message \
             above says why",
        );
    }
    if err.is_task_cancelled() {
        return Some(
            "the tool ran as a task and the task was cancelled on the server (by the server or \
             another client), not by sidewire; run it again if that was not meant",
        );
    }
    None
}
