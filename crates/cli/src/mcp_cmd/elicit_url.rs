//! URL-mode elicitation in `sidewire mcp`: the [`ClientHandler`] of the CLI's MCP host.
//!
//! A server may ask the user to open a URL (a sign-in, a payment). The URL is peer text: it is
//! shown escaped, with its host on a line of its own (so a long or look-alike URL cannot hide
//! where it leads) and a warning for plain `http:`, and the answer is `accept` only after a
//! `y` typed at a terminal. No browser is started (the command's subreaper would kill it at the
//! end, as for the login offered inside a command): the person opens the URL shown. Without a
//! terminal on stdin and stderr the capability is not advertised, and a request that comes
//! anyway is declined.

use std::io::Write as _;

use sidewire_mcp::{ClientHandler, ElicitAction, ErrorObject, UrlElicitation};

use crate::safe;

/// Offers URL-mode elicitation when a person is at the terminal.
#[derive(Debug, Clone, Copy)]
pub(super) struct UrlConsent {
    interactive: bool,
}

impl UrlConsent {
    /// A handler that asks only when stdin and stderr are terminals.
    pub(super) fn new() -> Self {
        UrlConsent {
            interactive: super::auth::interactive(),
        }
    }
}

/// The consent screen for `request` from `server`: every peer value escaped, the host apart.
fn screen(server: &str, request: &UrlElicitation) -> String {
    let mut text = format!(
        "MCP server {} asks you to open a URL.\n  message: {}\n  host:    {}\n  url:     {}\n",
        safe::line(server),
        safe::line(&request.message),
        safe::line(request.host()),
        safe::line(&request.url),
    );
    if request.is_insecure() {
        text.push_str("  warning: plain http, not encrypted\n");
    }
    text.push_str("Open it in your browser? [y/N] ");
    text
}

/// Whether `answer` is a yes (`y`, `yes`); anything else, the empty line included, is no.
fn is_yes(answer: &str) -> bool {
    matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes")
}

impl ClientHandler for UrlConsent {
    fn supports_url_elicitation(&self) -> bool {
        self.interactive
    }

    async fn elicit_url(
        &self,
        server: &str,
        request: UrlElicitation,
    ) -> Result<ElicitAction, ErrorObject> {
        if !self.interactive {
            return Ok(ElicitAction::Decline);
        }
        let question = screen(server, &request);
        let answer = tokio::task::spawn_blocking(move || {
            let mut stderr = std::io::stderr().lock();
            let _ = stderr.write_all(question.as_bytes());
            let _ = stderr.flush();
            drop(stderr);
            let mut line = String::new();
            // The end of input (Ctrl-D) or a read error is no answer, so no.
            match std::io::stdin().read_line(&mut line) {
                Ok(read) if read > 0 => line,
                _ => String::new(),
            }
        })
        .await
        .unwrap_or_default();
        if !is_yes(&answer) {
            return Ok(ElicitAction::Decline);
        }
        // No browser is started: the command's subreaper would kill it when the command ends
        // (as for the login offered inside a command); the person opens the URL shown.
        let _ = std::io::stderr().write_all(b"Open the URL above in your browser.\n");
        Ok(ElicitAction::Accept)
    }

    fn on_elicitation_complete(&self, server: &str, elicitation_id: &str) {
        let text = format!(
            "MCP server {} says the URL step {} is complete.\n",
            safe::line(server),
            safe::line(elicitation_id)
        );
        let _ = std::io::stderr().write_all(text.as_bytes());
    }
}

/// Offers the URLs of a `-32042` error through the server's handler (the consent screen) and
/// says what to do next; the call is not retried (the browser step must finish first).
pub(super) async fn offer(host: &sidewire_mcp::McpHost, err: &sidewire_mcp::Error) {
    let Some(client) = err.server().and_then(|server| host.client(server)) else {
        return;
    };
    let accepted = match client.offer_url_elicitations(err).await {
        Ok(outcomes) => outcomes
            .iter()
            .any(|(_, action)| *action == ElicitAction::Accept),
        Err(_) => false,
    };
    let text = if accepted {
        "Complete the step in your browser, then run the command again.\n"
    } else {
        "The server needs you to open a URL first; run the command at a terminal to be asked.\n"
    };
    let _ = std::io::stderr().write_all(text.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_typed_yes_consents() {
        for yes in ["y", "Y\n", " yes \n"] {
            assert!(is_yes(yes), "{yes:?}");
        }
        for no in ["", "\n", "n", "yess", "ok", "y y"] {
            assert!(!is_yes(no), "{no:?}");
        }
    }

    #[test]
    fn the_screen_escapes_the_url_and_shows_its_host_apart() {
        let request = UrlElicitation::new(
            "sign\x1b[2J in",
            "http://bank.example.com@evil.test/\u{202e}x",
            "e1",
        )
        .unwrap();
        let text = screen("srv\x07", &request);
        assert!(!text.contains('\x1b') && !text.contains('\x07') && !text.contains('\u{202e}'));
        assert!(text.contains("  host:    evil.test\n"), "{text}");
        assert!(text.contains("plain http"), "{text}");
    }

    #[tokio::test]
    async fn without_a_terminal_nothing_is_offered_or_opened() {
        let handler = UrlConsent { interactive: false };
        assert!(!handler.supports_url_elicitation());
        let request = UrlElicitation::new("m", "https://example.com/", "e1").unwrap();
        let action = handler.elicit_url("srv", request).await.unwrap();
        assert_eq!(action, ElicitAction::Decline);
    }
}
