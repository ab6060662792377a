//! The live status line of a tool call that runs as an MCP task (`sidewire mcp call` on a
//! terminal): `task ID STATUS: MESSAGE`, rewritten in place on stderr as the task moves.
//!
//! Only on a terminal, and never with `--json` (the caller decides): the line is for people,
//! the final result is what a program reads. The task id, status and status message come from
//! the server, so each is escaped ([`safe::line()`]) and the message is cut to
//! [`MAX_MESSAGE_CHARS`] characters so the line stays one line.

use std::io::Write as _;

use sidewire_mcp::{Task, ToolCallOptions};

use crate::safe;

/// The most characters of a status message the line shows.
const MAX_MESSAGE_CHARS: usize = 120;

/// `options`, with the live status line on stderr.
pub(super) fn on_terminal(options: ToolCallOptions) -> ToolCallOptions {
    options.on_task_status(|task| {
        let _ = std::io::stderr().write_all(status_line(task).as_bytes());
    })
}

/// The line for `task`, starting with the CLI's own carriage return and erase-line sequence.
fn status_line(task: &Task) -> String {
    let message = task
        .status_message
        .as_deref()
        .map(|message| {
            let cut: String = message.chars().take(MAX_MESSAGE_CHARS).collect();
            let more = if cut.len() < message.len() { "..." } else { "" };
            format!(": {}{more}", safe::line(&cut))
        })
        .unwrap_or_default();
    format!(
        "\r\x1b[2Ktask {} {}{message}",
        safe::line(&task.task_id),
        safe::line(task.status.as_str())
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(value: serde_json::Value) -> Task {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn the_line_escapes_what_the_server_says() {
        let line = status_line(&task(serde_json::json!({
            "taskId": "t\x1b[31m1",
            "status": "input_required",
            "statusMessage": "need\ninput\u{202e}"
        })));
        assert_eq!(
            line,
            "\r\x1b[2Ktask t\\x1b[31m1 input_required: need\\ninput\\u{202e}"
        );
        // Only the CLI's own sequence is raw.
        assert_eq!(line.matches('\x1b').count(), 1);
    }

    #[test]
    fn a_long_message_is_cut() {
        let long = "x".repeat(500);
        let line = status_line(&task(
            serde_json::json!({"taskId": "t", "status": "working", "statusMessage": long}),
        ));
        assert!(line.ends_with(&format!("{}...", "x".repeat(MAX_MESSAGE_CHARS))));
        let line = status_line(&task(
            serde_json::json!({"taskId": "t", "status": "paused"}),
        ));
        assert_eq!(line, "\r\x1b[2Ktask t paused");
    }
}
