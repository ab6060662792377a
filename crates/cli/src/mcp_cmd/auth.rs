//! Authorization (OAuth) in `sidewire mcp`: the `login`, `logout` and `auth status`
//! subcommands, the [`Authorizer`] every other command gives its HTTP servers, and what happens
//! when a server needs a login.
//!
//! Tokens and client registrations live in a [`FileStore`] at `$SIDEWIRE_HOME/mcp/oauth/`
//! (files `0600`, written atomically, locked per server while refreshed). Ordinary commands use
//! and refresh stored tokens but never start a new authorization ([`Interaction::Never`]); a
//! server that needs one is a login-required failure, which on a terminal offers the login and
//! retries the command once, and elsewhere fails naming the command to run. A server whose
//! configuration sends its own `Authorization` header gets no authorizer: it manages its own
//! credentials.
//!
//! What servers and authorization servers say (issuers, client ids, scopes, the authorization
//! URL) is printed through [`safe`]. No token or secret is ever printed.

use std::fmt::Write as _;
use std::io::{IsTerminal as _, Write as _};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use serde_json::json;
use sidewire_mcp::auth::{
    AuthErrorKind, AuthStatus, AuthorizationPrompt, Authorizer, FileStore, Interaction,
    LoginOutcome, TokenStore as _,
};
use sidewire_mcp::{ServerSpec, StartFailure, Transport};

use super::{ADHOC, config};
use crate::cli::McpArgs;
use crate::out::Out;
use crate::safe;

/// The token store's directory under `$SIDEWIRE_HOME`.
fn store_dir() -> anyhow::Result<std::path::PathBuf> {
    Ok(crate::sidewire_home()?.join("mcp").join("oauth"))
}

/// The store at `$SIDEWIRE_HOME/mcp/oauth`.
fn store() -> anyhow::Result<FileStore> {
    Ok(FileStore::new(store_dir()?))
}

/// The authorizer of ordinary commands: the file store, nobody to sign in. `None` (logged) when
/// there is no `$SIDEWIRE_HOME`: the servers then answer 401s as errors.
pub(super) fn authorizer() -> Option<Authorizer> {
    match store() {
        Ok(store) => Some(Authorizer::new(store).interaction(Interaction::Never)),
        Err(err) => {
            tracing::debug!("no token store, so no OAuth: {err:#}");
            None
        }
    }
}

/// Whether `spec` sends a configured `Authorization` header (any case).
fn has_authorization_header(spec: &ServerSpec) -> bool {
    spec.headers()
        .keys()
        .any(|name| name.eq_ignore_ascii_case("authorization"))
}

/// Whether OAuth applies to `spec`: an HTTP server without its own `Authorization` header.
fn uses_oauth(spec: &ServerSpec) -> bool {
    spec.transport() != Transport::Stdio && !has_authorization_header(spec)
}

/// `specs` with `authorizer` given to every server OAuth applies to.
pub(super) fn authorize(
    specs: Vec<ServerSpec>,
    authorizer: Option<&Authorizer>,
) -> Vec<ServerSpec> {
    let Some(authorizer) = authorizer else {
        return specs;
    };
    specs
        .into_iter()
        .map(|spec| {
            if uses_oauth(&spec) {
                spec.authorizer(authorizer.clone())
            } else {
                spec
            }
        })
        .collect()
}

/// Whether a start failure means someone must log in: the library says so, or the server
/// answered 401 although it had an authorizer (which could not authorize on its own).
pub(super) fn needs_login(failure: &StartFailure, specs: &[ServerSpec]) -> bool {
    if failure.auth_error == Some(AuthErrorKind::LoginRequired) {
        return true;
    }
    failure.http_status == Some(401)
        && specs
            .iter()
            .any(|spec| spec.name() == failure.server && spec.authorizer_ref().is_some())
}

/// The server whose login-required error is somewhere in `err`'s chain (a call that found its
/// tokens revoked, say).
pub(super) fn login_required_in(err: &anyhow::Error) -> Option<String> {
    err.chain().find_map(|cause| {
        let err = cause.downcast_ref::<sidewire_mcp::Error>()?;
        err.is_login_required()
            .then(|| err.server().unwrap_or(ADHOC).to_owned())
    })
}

/// The command line that logs in to `server`, with the flags that select it.
pub(super) fn login_command(args: &McpArgs, server: &str) -> String {
    let mut line = String::from("sidewire mcp login");
    if let Some(url) = &args.url {
        let _ = write!(line, " --url {url}");
        return line;
    }
    let _ = write!(line, " {server}");
    if let Some(config) = &args.config {
        let _ = write!(line, " --config {}", config.display());
    }
    line
}

/// The error of a headless command whose server needs a login.
pub(super) fn login_required_error(args: &McpArgs, server: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "server {} requires authorization; run `{}` first",
        safe::line(server),
        login_command(args, server)
    )
}

/// Whether a person is there to answer: stdin and stderr are terminals.
pub(super) fn interactive() -> bool {
    std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}

/// Asks on the terminal whether to log in to `server` now: yes on Enter, `y` or `yes`; no on
/// anything else or the end of input.
pub(super) async fn offer_login(server: &str) -> anyhow::Result<bool> {
    let question = format!(
        "Server {} requires authorization. Log in now? [Y/n] ",
        safe::line(server)
    );
    let answer = tokio::task::spawn_blocking(move || {
        let mut stderr = std::io::stderr().lock();
        let _ = stderr.write_all(question.as_bytes());
        let _ = stderr.flush();
        drop(stderr);
        let mut line = String::new();
        // The end of input (Ctrl-D) is no answer, so no.
        std::io::stdin()
            .read_line(&mut line)
            .map(|read| (read > 0).then_some(line))
    })
    .await
    .context("the question's thread failed")?
    .context("cannot read the answer")?;
    let Some(answer) = answer else {
        return Ok(false);
    };
    let answer = answer.trim().to_ascii_lowercase();
    Ok(matches!(answer.as_str(), "" | "y" | "yes"))
}

/// Shows the authorization URL on stderr and, when asked to, opens the browser on it.
#[derive(Debug)]
struct BrowserPrompt {
    browser: bool,
}

impl AuthorizationPrompt for BrowserPrompt {
    fn open(&self, server: &str, url: &url::Url) {
        let mut text = format!(
            "To authorize {}, open this URL in a browser:\n  {}\n",
            safe::line(server),
            safe::line(url.as_str())
        );
        if self.browser && !open_browser(url) {
            text.push_str("(no browser could be started; open the URL yourself)\n");
        }
        text.push_str("Waiting for the authorization to complete...\n");
        let _ = std::io::stderr().lock().write_all(text.as_bytes());
    }
}

/// Starts the platform's URL opener on `url` without waiting for it (no shell: the URL is one
/// argument); `false` when it cannot be started. Its exit is collected by a thread.
fn open_browser(url: &url::Url) -> bool {
    let program = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    let spawned = std::process::Command::new(program)
        .arg(url.as_str())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    match spawned {
        Ok(mut child) => {
            std::thread::spawn(move || {
                let _ = child.wait();
            });
            true
        }
        Err(err) => {
            tracing::debug!("cannot start {program}: {err}");
            false
        }
    }
}

/// How `login` completes the authorization.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum LoginMode {
    /// A person: the URL is printed, and the browser opened when `browser`.
    Person {
        /// Whether to start the browser.
        browser: bool,
    },
    /// Nobody: the client follows the authorization URL itself (`--headless`).
    Headless,
}

/// The spec `login` and `logout` work on: the `--url` server, or the one named (positionally
/// or by a single `--server`) in the config.
fn chosen_spec(args: &McpArgs, server: Option<&str>) -> anyhow::Result<ServerSpec> {
    anyhow::ensure!(
        !args.stdio,
        "OAuth is for HTTP servers; --stdio servers have no login"
    );
    let spec = if args.url.is_some() {
        let spec = super::adhoc_http(args)?;
        if let Some(name) = server.filter(|name| *name != ADHOC) {
            anyhow::bail!(
                "with --url the server is called {ADHOC}, not {}",
                safe::line(name)
            );
        }
        spec
    } else {
        let name = match (server, args.servers.as_slice()) {
            (Some(name), _) => name,
            (None, [one]) => one.as_str(),
            _ => anyhow::bail!("name the server: `sidewire mcp login SERVER`"),
        };
        let (path, loaded) = config::load(args)?;
        config::find(&path, &loaded, name)?.spec.clone()
    };
    anyhow::ensure!(
        spec.transport() != Transport::Stdio,
        "server {} is a stdio server; OAuth is for HTTP servers",
        safe::line(spec.name())
    );
    anyhow::ensure!(
        !has_authorization_header(&spec),
        "server {} sends a configured Authorization header, so OAuth is not used for it",
        safe::line(spec.name())
    );
    Ok(spec)
}

/// `login SERVER`: authorizes now and stores the tokens; prints the issuer and scopes.
pub(super) async fn login(
    args: &McpArgs,
    server: Option<&str>,
    mode: LoginMode,
    out: &Out,
) -> anyhow::Result<()> {
    let spec = chosen_spec(args, server)?;
    login_spec(spec, mode, out).await
}

/// Logs in to `spec`'s server (what `login` and the offer after a login-required failure do).
pub(super) async fn login_spec(spec: ServerSpec, mode: LoginMode, out: &Out) -> anyhow::Result<()> {
    let interaction = match mode {
        LoginMode::Person { browser } => Interaction::Prompt(Arc::new(BrowserPrompt { browser })),
        LoginMode::Headless => Interaction::Headless,
    };
    let authorizer = Authorizer::new(store()?).interaction(interaction);
    let name = spec.name().to_owned();
    let spec = spec.authorizer(authorizer);
    let outcome = sidewire_mcp::auth::login(&spec)
        .await
        .with_context(|| format!("logging in to {}", safe::line(&name)))?;
    match &outcome {
        LoginOutcome::Authorized { issuer, scope } => {
            out.line(format!(
                "logged in to {} (issuer {}; scopes: {})",
                safe::line(&name),
                safe::line(issuer),
                safe::line(scope.as_deref().unwrap_or("none granted"))
            ));
            out.json(&json!({
                "server": name, "loggedIn": true, "issuer": issuer, "scopes": scopes(scope.as_deref()),
            }));
        }
        LoginOutcome::NotRequired => {
            out.line(format!(
                "{} did not ask for authorization; nothing was stored",
                safe::line(&name)
            ));
            out.json(&json!({ "server": name, "loggedIn": false, "required": false }));
        }
        other => anyhow::bail!("unexpected login outcome {other:?}"),
    }
    Ok(())
}

/// `logout SERVER`: removes the server's stored tokens and registration. With `--url`, the
/// record of that URL; by name, every record of that name (whatever URL it was stored for, so a
/// server since removed from the config can still be logged out). Needs no config.
pub(super) fn logout(args: &McpArgs, server: Option<&str>, out: &Out) -> anyhow::Result<()> {
    let store = store()?;
    let (name, removed) = if args.url.is_some() {
        let spec = chosen_spec(args, server)?;
        let key = sidewire_mcp::auth::store_key(&spec);
        let removed = store
            .remove(&key)
            .context("cannot update the token store")?;
        (spec.name().to_owned(), usize::from(removed))
    } else {
        let name = match (server, args.servers.as_slice()) {
            (Some(name), _) => name,
            (None, [one]) => one.as_str(),
            _ => anyhow::bail!("name the server: `sidewire mcp logout SERVER`"),
        };
        let mut removed = 0;
        for record in store.list().context("cannot read the token store")? {
            if record.server == name {
                let key = sidewire_mcp::auth::StoreKey::new(record.server, record.resource);
                removed += usize::from(
                    store
                        .remove(&key)
                        .context("cannot update the token store")?,
                );
            }
        }
        (name.to_owned(), removed)
    };
    if removed > 0 {
        out.line(format!(
            "logged out of {} (removed its stored authorization)",
            safe::line(&name)
        ));
    } else {
        out.line(format!("{} had no stored authorization", safe::line(&name)));
    }
    out.json(&json!({ "server": name, "removed": removed > 0 }));
    Ok(())
}

/// `auth status`: every stored authorization, as a table or `--json`; never a credential.
pub(super) fn status(out: &Out) -> anyhow::Result<()> {
    let authorizer = Authorizer::new(store()?);
    let rows = sidewire_mcp::auth::status(&authorizer).context("cannot read the token store")?;
    out.json(&json!({
        "authorizations": rows.iter().map(|row| json!({
            "server": row.server,
            "resource": row.resource,
            "issuer": row.issuer,
            "clientId": row.client_id,
            "token": row.has_token,
            "expiresInSecs": row.expires_in.map(|d| d.as_secs()),
            "refresh": row.can_refresh,
            "scopes": scopes(row.scope.as_deref()),
        })).collect::<Vec<_>>(),
    }));
    if rows.is_empty() {
        out.line(format!(
            "no stored authorizations (in {})",
            store_dir()?.display()
        ));
        return Ok(());
    }
    let table: Vec<[String; 7]> = rows.iter().map(row_cells).collect();
    for line in table_lines(&table) {
        out.line(line);
    }
    Ok(())
}

/// The most characters of one cell of the `auth status` table (64). A stored record may hold
/// a value of any length (a record written by hand or by an older version), so longer values
/// are cut with `…` and no column is wider than this; `--json` shows them whole.
const MAX_CELL_CHARS: usize = 64;

/// The status table's lines: a header, then one line per row, each column padded to its widest
/// cell (at most [`MAX_CELL_CHARS`]) but the last.
fn table_lines(table: &[[String; 7]]) -> Vec<String> {
    let header = [
        "SERVER",
        "ISSUER",
        "CLIENT ID",
        "TOKEN",
        "EXPIRES IN",
        "REFRESH",
        "SCOPES",
    ]
    .map(str::to_owned);
    let mut widths = [0; 7];
    for row in std::iter::once(&header).chain(table) {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut lines = Vec::with_capacity(table.len() + 1);
    for row in std::iter::once(&header).chain(table) {
        let mut line = String::new();
        for (i, (cell, width)) in row.iter().zip(widths).enumerate() {
            line.push_str(cell);
            if i + 1 < row.len() {
                // Padded by hand: a `{:<width$}` width past `u16::MAX` panics.
                let pad = width.saturating_sub(cell.chars().count()) + 2;
                line.extend(std::iter::repeat_n(' ', pad));
            }
        }
        lines.push(line.trim_end().to_owned());
    }
    lines
}

/// `text` escaped for the terminal and cut to [`MAX_CELL_CHARS`] characters, `…` marking a
/// cut.
fn cell(text: &str) -> String {
    let escaped = safe::line(text);
    if escaped.chars().count() <= MAX_CELL_CHARS {
        return escaped.into_owned();
    }
    let mut cut: String = escaped.chars().take(MAX_CELL_CHARS - 1).collect();
    cut.push('…');
    cut
}

/// One row of the status table, each peer value escaped and cut to the column cap.
fn row_cells(row: &AuthStatus) -> [String; 7] {
    let yes_no = |yes: bool| if yes { "yes" } else { "no" }.to_owned();
    let text = |value: Option<&str>| value.map_or_else(|| "-".to_owned(), cell);
    [
        cell(&row.server),
        text(row.issuer.as_deref()),
        text(row.client_id.as_deref()),
        yes_no(row.has_token),
        match (row.has_token, row.expires_in) {
            (true, Some(left)) => expires_in(left),
            _ => "-".to_owned(),
        },
        yes_no(row.can_refresh),
        text(row.scope.as_deref()),
    ]
}

/// `1d 2h`, `3h 4m`, `5m 6s`, `7s`, or `expired`.
fn expires_in(left: Duration) -> String {
    let secs = left.as_secs();
    let (days, hours, minutes, seconds) =
        (secs / 86_400, secs / 3600 % 24, secs / 60 % 60, secs % 60);
    if secs == 0 {
        "expired".to_owned()
    } else if days > 0 {
        format!("{days}d {hours}h")
    } else if hours > 0 {
        format!("{hours}h {minutes}m")
    } else if minutes > 0 {
        format!("{minutes}m {seconds}s")
    } else {
        format!("{seconds}s")
    }
}

/// Space-separated scopes as a JSON array.
fn scopes(scope: Option<&str>) -> Vec<&str> {
    scope.unwrap_or_default().split_whitespace().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_status_table_caps_its_columns_whatever_a_record_holds() {
        // Past `u16::MAX` characters, which a `{:<width$}` width cannot take.
        let huge = "c".repeat(70_000);
        let long = "é\u{1b}".repeat(100);
        let row = |id: &str| {
            [
                "srv".to_owned(),
                cell(&long),
                cell(id),
                "yes".to_owned(),
                "1h 0m".to_owned(),
                "no".to_owned(),
                cell(&huge),
            ]
        };
        let lines = table_lines(&[row(&huge), row("short")]);
        assert_eq!(lines.len(), 3);
        for line in &lines {
            // Six padded columns of at most the cap, the last one, and the gaps.
            assert!(line.chars().count() <= 7 * (MAX_CELL_CHARS + 2), "{line}");
        }
        assert!(lines[1].contains(&format!("{}…", "c".repeat(MAX_CELL_CHARS - 1))));
        assert!(!lines[1].contains('\u{1b}'));
        // The columns still line up.
        let at = |line: &str, needle: &str| line.find(needle).map(|b| line[..b].chars().count());
        let column = at(&lines[0], "CLIENT ID");
        assert_eq!(at(&lines[1], &"c".repeat(MAX_CELL_CHARS - 1)), column);
        assert_eq!(at(&lines[2], "short"), column);
        assert_eq!(cell("short"), "short");
        assert_eq!(
            cell(&"x".repeat(MAX_CELL_CHARS)).chars().count(),
            MAX_CELL_CHARS
        );
    }

    #[test]
    fn expiry_is_shown_in_its_two_largest_units() {
        let cases = [
            (0, "expired"),
            (7, "7s"),
            (65, "1m 5s"),
            (3 * 3600 + 4 * 60 + 9, "3h 4m"),
            (86_400 + 2 * 3600, "1d 2h"),
        ];
        for (secs, text) in cases {
            assert_eq!(expires_in(Duration::from_secs(secs)), text);
        }
    }
}
