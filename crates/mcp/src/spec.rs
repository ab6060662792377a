//! What a server is and how to reach it: [`ServerSpec`], its [`Transport`] and [`Root`]s.
//!
//! A spec is plain data built with a constructor per transport and chained setters (the
//! `sidewire-mcp-config` crate builds them from the config files users keep). It does not start
//! anything and does no I/O; connecting is [`crate::Client::connect`]'s job.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::Error;
#[cfg(feature = "auth")]
use crate::credentials::{Authorizer, settings::OAuthSettings};
use crate::protocol::era::EraChoice;
#[cfg(feature = "http")]
use crate::redact::UrlSecrets;

/// How long a server gets to start (launch, initialize and the first tools/list) by default.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(30);
/// How long the era probe (`server/discover`) waits for an answer by default.
pub const DEFAULT_PROBE_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a call may go without an answer (or, for tools/call, without progress) by default.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(300);
/// The absolute cap on one tools/call, however much progress it reports, by default.
pub const DEFAULT_MAX_CALL_DURATION: Duration = Duration::from_secs(60 * 60);
/// The default cap on one stdio message, counting its newline (8 MiB).
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 8 * 1024 * 1024;
/// The default cap on one HTTP body or SSE event (16 MiB).
pub const DEFAULT_MAX_HTTP_BODY_BYTES: usize = 16 * 1024 * 1024;
/// How many restarts the default [`RestartPolicy`] allows within its window.
pub const DEFAULT_MAX_RESTARTS: u32 = 3;
/// The window the default [`RestartPolicy`] counts restarts in.
pub const DEFAULT_RESTART_WINDOW: Duration = Duration::from_secs(60);
/// The wait before the first restart attempt by default; it doubles with each attempt.
pub const DEFAULT_RESTART_BACKOFF: Duration = Duration::from_millis(500);
/// The cap on the wait between restart attempts by default.
pub const DEFAULT_MAX_RESTART_BACKOFF: Duration = Duration::from_secs(8);

/// Whether a [`crate::McpHost`] restarts a server whose connection ended by itself (its
/// process exited, or the connection died) after it had started, and the legacy HTTP+SSE
/// transport reopens its event stream when that ends. A deliberate close (`close`, `remove`,
/// `shutdown`) is never restarted, and neither is a failed first start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Restart {
    /// Never: a crashed server stays [`crate::ServerState::Exited`].
    Never,
    /// Restart under a bounded policy (the default, with [`RestartPolicy::default`]).
    OnCrash(RestartPolicy),
}

impl Default for Restart {
    fn default() -> Self {
        Restart::OnCrash(RestartPolicy::default())
    }
}

/// Bounded exponential backoff: at most `max_restarts` attempts within any `within` window,
/// the n-th consecutive attempt waiting `initial_backoff * 2^(n-1)`, capped at `max_backoff`.
/// When the attempts are spent the server is given up on
/// ([`crate::ServerState::GaveUp`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct RestartPolicy {
    /// The most attempts within `within` (default [`DEFAULT_MAX_RESTARTS`]).
    pub max_restarts: u32,
    /// The window attempts are counted in (default [`DEFAULT_RESTART_WINDOW`]).
    pub within: Duration,
    /// The wait before the first attempt (default [`DEFAULT_RESTART_BACKOFF`]).
    pub initial_backoff: Duration,
    /// The cap on the wait (default [`DEFAULT_MAX_RESTART_BACKOFF`]).
    pub max_backoff: Duration,
}

impl Default for RestartPolicy {
    fn default() -> Self {
        RestartPolicy {
            max_restarts: DEFAULT_MAX_RESTARTS,
            within: DEFAULT_RESTART_WINDOW,
            initial_backoff: DEFAULT_RESTART_BACKOFF,
            max_backoff: DEFAULT_MAX_RESTART_BACKOFF,
        }
    }
}

impl RestartPolicy {
    /// Sets the most attempts within the window.
    pub fn max_restarts(mut self, attempts: u32) -> Self {
        self.max_restarts = attempts;
        self
    }

    /// Sets the window attempts are counted in.
    pub fn within(mut self, window: Duration) -> Self {
        self.within = window;
        self
    }

    /// Sets the first wait and the cap on the wait (the cap is at least the first wait).
    pub fn backoff(mut self, initial: Duration, max: Duration) -> Self {
        self.initial_backoff = initial;
        self.max_backoff = max.max(initial);
        self
    }

    /// The wait before attempt `attempt` (1-based) of a run of consecutive attempts.
    pub fn delay(&self, attempt: u32) -> Duration {
        let doublings = attempt.saturating_sub(1).min(31);
        self.initial_backoff
            .saturating_mul(1u32 << doublings)
            .min(self.max_backoff.max(self.initial_backoff))
    }
}

/// When the recent attempts a [`RestartPolicy`] counts began: a sliding window holding at most
/// `max_restarts` instants (an attempt is recorded only once [`allows`](Self::allows) said yes).
/// The host's restarts and the legacy transport's reconnects both count with it.
#[derive(Debug, Clone, Default)]
pub(crate) struct AttemptWindow(VecDeque<tokio::time::Instant>);

impl AttemptWindow {
    /// Forgets the attempts older than the policy's window; whether another may begin at `now`.
    pub(crate) fn allows(&mut self, policy: &RestartPolicy, now: tokio::time::Instant) -> bool {
        while (self.0.front()).is_some_and(|at| now.duration_since(*at) >= policy.within) {
            self.0.pop_front();
        }
        self.0.len() < policy.max_restarts as usize
    }

    /// Counts an attempt beginning at `at`.
    pub(crate) fn record(&mut self, at: tokio::time::Instant) {
        self.0.push_back(at);
    }

    /// The attempts within the window.
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }
}

/// The default cap on the items one listing keeps (tools, prompts, resources or resource
/// templates, each counted alone).
pub const DEFAULT_MAX_LIST_ITEMS: usize = 10_000;
/// The default cap on the bytes one listing keeps, counted as the kept items' JSON text as
/// received (32 MiB).
pub const DEFAULT_MAX_LIST_BYTES: usize = 32 * 1024 * 1024;

/// How a server is reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Transport {
    /// A child process speaking newline-delimited JSON on stdin/stdout (`type` absent,
    /// `"stdio"` or `"local"`).
    Stdio,
    /// Streamable HTTP (`"http"`, `"streamable-http"`, `"streamable_http"`, `"streamableHttp"`,
    /// or a bare `url`),
    /// falling back to the legacy HTTP+SSE transport when the server answers the initialize
    /// POST with 400, 404 or 405 or announces a legacy `endpoint`.
    StreamableHttp,
    /// The legacy HTTP+SSE transport of 2024-11-05 (`"sse"`).
    Sse,
}

impl Transport {
    /// The transport named by an `mcpServers` entry's `type` (case and surrounding blanks are
    /// ignored; `None` means stdio).
    ///
    /// # Errors
    ///
    /// A config error naming the allowed values for anything else.
    pub fn from_type(value: Option<&str>) -> Result<Transport, Error> {
        let Some(raw) = value else {
            return Ok(Transport::Stdio);
        };
        match raw.trim().to_ascii_lowercase().as_str() {
            // `local` is GitHub Copilot's name for stdio, `streamableHttp` Cline's for HTTP.
            "" | "stdio" | "local" => Ok(Transport::Stdio),
            "http" | "streamable-http" | "streamable_http" | "streamablehttp" => {
                Ok(Transport::StreamableHttp)
            }
            "sse" => Ok(Transport::Sse),
            _ => Err(Error::config(format!(
                "unknown transport type \"{}\" (allowed: \"stdio\", \"local\", \"http\", \
                 \"streamable-http\", \"streamable_http\", \"streamableHttp\", \"sse\"; omit it \
                 for stdio)",
                crate::text::peer(raw)
            ))),
        }
    }

    /// The canonical name: `stdio`, `http` or `sse`.
    pub fn as_str(self) -> &'static str {
        match self {
            Transport::Stdio => "stdio",
            Transport::StreamableHttp => "http",
            Transport::Sse => "sse",
        }
    }
}

impl fmt::Display for Transport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A root offered to servers through `roots/list`: a `file://` URI and an optional name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Root {
    /// The root's URI (`file://...`).
    pub uri: String,
    /// A human name for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl Root {
    /// A root for a local directory: its absolute path as a `file://` URI (characters outside
    /// the URI path set percent-encoded), named after its last component.
    pub fn dir(path: impl AsRef<Path>) -> Root {
        let path = path.as_ref();
        let absolute = if path.is_absolute() {
            path.to_path_buf()
        } else {
            std::env::current_dir()
                .map(|cwd| cwd.join(path))
                .unwrap_or_else(|_| path.to_path_buf())
        };
        let text = absolute.to_string_lossy();
        let mut uri = String::from("file://");
        for byte in text.bytes() {
            if byte.is_ascii_alphanumeric() || b"/-._~!$&'()*+,;=:@".contains(&byte) {
                uri.push(byte as char);
            } else {
                uri.push_str(&format!("%{byte:02X}"));
            }
        }
        Root {
            uri,
            name: absolute
                .file_name()
                .map(|name| name.to_string_lossy().into_owned()),
        }
    }
}

/// Which of a server's tools are exposed: the config's allow list (Gemini `includeTools`,
/// Codex `enabled_tools`, Copilot `tools`) and deny list (Gemini `excludeTools`, Codex
/// `disabled_tools`). A tool is exposed when the allow list is absent or names it, and the
/// deny list does not (the deny list wins). A filtered-out tool is left out of the client's
/// listing and refused by [`crate::Client::call_tool`] without asking the server.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolFilter {
    allow: Option<BTreeSet<String>>,
    deny: BTreeSet<String>,
}

impl ToolFilter {
    /// Every tool (the default).
    pub fn all() -> Self {
        ToolFilter::default()
    }

    /// Only the named tools (by their names on the server), and no others.
    pub fn only<I, S>(mut self, tools: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let allow = self.allow.get_or_insert_with(BTreeSet::new);
        allow.extend(tools.into_iter().map(Into::into));
        self
    }

    /// Never the named tools, even when the allow list names them.
    pub fn except<I, S>(mut self, tools: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.deny.extend(tools.into_iter().map(Into::into));
        self
    }

    /// Whether the tool called `tool` on the server is exposed.
    pub fn allows(&self, tool: &str) -> bool {
        !self.deny.contains(tool) && self.allow.as_ref().is_none_or(|allow| allow.contains(tool))
    }

    /// Whether every tool is exposed (no allow list, an empty deny list).
    pub fn is_all(&self) -> bool {
        self.allow.is_none() && self.deny.is_empty()
    }

    /// The allow list, when there is one.
    pub fn allowed(&self) -> Option<&BTreeSet<String>> {
        self.allow.as_ref()
    }

    /// The deny list.
    pub fn denied(&self) -> &BTreeSet<String> {
        &self.deny
    }
}

/// One MCP server: its name, transport, launch or endpoint details, timeouts and roots.
///
/// The name is the namespace of its tools (`mcp__<name>__<tool>`). Timeouts resolve from the
/// most specific setting: a call's own option, then [`tool_timeout`](ServerSpec::tool_timeout)
/// for that tool, then [`call_timeout`](ServerSpec::call_timeout) (default 300 s).
#[derive(Debug, Clone, PartialEq)]
pub struct ServerSpec {
    pub(crate) name: Arc<str>,
    /// The configured name an [`instance`](ServerSpec::instance) was made from: its
    /// credentials are stored under it.
    pub(crate) origin: Option<Arc<str>>,
    pub(crate) transport: Transport,
    pub(crate) command: String,
    pub(crate) args: Vec<String>,
    pub(crate) env: BTreeMap<String, String>,
    pub(crate) dir: Option<PathBuf>,
    pub(crate) url: String,
    /// The values a config file expanded into `url`, redacted wherever the URL is shown.
    #[cfg(feature = "http")]
    pub(crate) url_secrets: UrlSecrets,
    pub(crate) headers: BTreeMap<String, String>,
    pub(crate) low_priority: bool,
    pub(crate) startup_timeout: Duration,
    pub(crate) call_timeout: Duration,
    pub(crate) max_call_duration: Duration,
    pub(crate) tool_timeouts: BTreeMap<String, Duration>,
    pub(crate) roots: Vec<Root>,
    pub(crate) max_message_bytes: usize,
    pub(crate) max_list_items: usize,
    pub(crate) max_list_bytes: usize,
    pub(crate) forward_stderr: bool,
    pub(crate) restart: Restart,
    #[cfg(feature = "auth")]
    pub(crate) oauth: OAuthSettings,
    #[cfg(feature = "auth")]
    pub(crate) authorizer: Option<Authorizer>,
    pub(crate) era: EraChoice,
    pub(crate) probe_timeout: Duration,
    pub(crate) enabled: bool,
    pub(crate) tool_filter: ToolFilter,
}

impl ServerSpec {
    fn base(name: &str, transport: Transport) -> Self {
        ServerSpec {
            name: name.into(),
            origin: None,
            transport,
            command: String::new(),
            args: Vec::new(),
            env: BTreeMap::new(),
            dir: None,
            url: String::new(),
            #[cfg(feature = "http")]
            url_secrets: UrlSecrets::default(),
            headers: BTreeMap::new(),
            low_priority: false,
            startup_timeout: DEFAULT_STARTUP_TIMEOUT,
            call_timeout: DEFAULT_CALL_TIMEOUT,
            max_call_duration: DEFAULT_MAX_CALL_DURATION,
            tool_timeouts: BTreeMap::new(),
            roots: Vec::new(),
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            max_list_items: DEFAULT_MAX_LIST_ITEMS,
            max_list_bytes: DEFAULT_MAX_LIST_BYTES,
            forward_stderr: false,
            restart: Restart::default(),
            #[cfg(feature = "auth")]
            oauth: OAuthSettings::default(),
            #[cfg(feature = "auth")]
            authorizer: None,
            era: EraChoice::Auto,
            probe_timeout: DEFAULT_PROBE_TIMEOUT,
            enabled: true,
            tool_filter: ToolFilter::default(),
        }
    }

    /// A server run as a child process: `command` is looked up on `PATH` (enriched from the
    /// login shell) unless it contains a `/`, and is never run through a shell.
    pub fn stdio(name: &str, command: impl Into<String>) -> Self {
        let mut spec = ServerSpec::base(name, Transport::Stdio);
        spec.command = command.into();
        spec
    }

    /// A Streamable HTTP server at `url` (with the automatic fallback to legacy HTTP+SSE).
    /// Its message cap defaults to [`DEFAULT_MAX_HTTP_BODY_BYTES`].
    pub fn http(name: &str, url: impl Into<String>) -> Self {
        let mut spec = ServerSpec::base(name, Transport::StreamableHttp);
        spec.url = url.into();
        spec.max_message_bytes = DEFAULT_MAX_HTTP_BODY_BYTES;
        spec
    }

    /// A legacy HTTP+SSE server at `url` (its SSE endpoint). Its message cap defaults to
    /// [`DEFAULT_MAX_HTTP_BODY_BYTES`].
    pub fn sse(name: &str, url: impl Into<String>) -> Self {
        let mut spec = ServerSpec::base(name, Transport::Sse);
        spec.url = url.into();
        spec.max_message_bytes = DEFAULT_MAX_HTTP_BODY_BYTES;
        spec
    }

    /// Appends one argument.
    pub fn arg(mut self, arg: impl Into<String>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// Appends arguments.
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Sets an environment variable for the child, over the parent's environment.
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.insert(key.into(), value.into());
        self
    }

    /// The child's working directory (default: the parent's).
    pub fn dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.dir = Some(dir.into());
        self
    }

    /// Adds a static HTTP header.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.insert(name.into(), value.into());
        self
    }

    /// Runs the child (and everything it starts) at a lower scheduling priority (nice 10).
    pub fn low_priority(mut self, on: bool) -> Self {
        self.low_priority = on;
        self
    }

    /// The budget for launch, initialize and the first tools/list together (default 30 s).
    pub fn startup_timeout(mut self, timeout: Duration) -> Self {
        self.startup_timeout = timeout;
        self
    }

    /// The default timeout of every call (default 300 s). For tools/call it is an idle
    /// timeout: each progress notification restarts it, under
    /// [`max_call_duration`](ServerSpec::max_call_duration).
    pub fn call_timeout(mut self, timeout: Duration) -> Self {
        self.call_timeout = timeout;
        self
    }

    /// The absolute cap on one tools/call however much progress it reports (default 1 h).
    pub fn max_call_duration(mut self, cap: Duration) -> Self {
        self.max_call_duration = cap;
        self
    }

    /// The call timeout of one tool, by its name on the server (not the namespaced name).
    pub fn tool_timeout(mut self, tool: impl Into<String>, timeout: Duration) -> Self {
        self.tool_timeouts.insert(tool.into(), timeout);
        self
    }

    /// Offers a root through `roots/list` (and advertises the `roots` capability).
    pub fn root(mut self, root: Root) -> Self {
        self.roots.push(root);
        self
    }

    /// The cap on one inbound or outbound message: a stdio line counting its newline (default
    /// 8 MiB), or an HTTP body or SSE event (default 16 MiB). An oversized answer fails its
    /// request; the connection lives on.
    pub fn max_message_bytes(mut self, bytes: usize) -> Self {
        self.max_message_bytes = bytes.max(64);
        self
    }

    /// Which protocol era to speak (default [`EraChoice::Auto`]: probe with `server/discover`,
    /// fall back to `initialize`). A legacy HTTP+SSE server ([`Transport::Sse`]) always speaks
    /// the legacy era.
    pub fn era(mut self, era: EraChoice) -> Self {
        self.era = era;
        self
    }

    /// How long the [`EraChoice::Auto`] probe waits for an answer before taking the server for
    /// a legacy one that ignores requests before `initialize` (default
    /// [`DEFAULT_PROBE_TIMEOUT`]; never past the startup timeout).
    pub fn probe_timeout(mut self, timeout: Duration) -> Self {
        self.probe_timeout = timeout;
        self
    }

    /// Whether the server may be started (default `true`). A disabled server (config
    /// `disabled: true` or `enabled: false`) is never started by a [`crate::McpHost`]: it is
    /// listed as [`ServerState::Disabled`](crate::ServerState::Disabled), and
    /// [`crate::Client::connect`] refuses it with a config error.
    pub fn enabled(mut self, on: bool) -> Self {
        self.enabled = on;
        self
    }

    /// Whether the server may be started.
    pub fn is_enabled(&self) -> bool {
        self.enabled
    }

    /// Which of the server's tools are exposed (default: all; see [`ToolFilter`]).
    pub fn tool_filter(mut self, filter: ToolFilter) -> Self {
        self.tool_filter = filter;
        self
    }

    /// The tool filter.
    pub fn tools_exposed(&self) -> &ToolFilter {
        &self.tool_filter
    }

    /// The era choice.
    pub fn era_choice(&self) -> EraChoice {
        self.era
    }

    /// The most items one listing keeps (default [`DEFAULT_MAX_LIST_ITEMS`], at least 1).
    /// Past it the listing stops fetching, keeps the first items in server order, warns, and
    /// records a [`Truncation`](crate::Truncation) (see [`Client::truncations`](crate::Client::truncations)).
    pub fn max_list_items(mut self, items: usize) -> Self {
        self.max_list_items = items.max(1);
        self
    }

    /// The most bytes one listing keeps, counted as the kept items' JSON text as received
    /// (default [`DEFAULT_MAX_LIST_BYTES`], at least 1). At the cap it ends as at
    /// [`max_list_items`](ServerSpec::max_list_items).
    pub fn max_list_bytes(mut self, bytes: usize) -> Self {
        self.max_list_bytes = bytes.max(1);
        self
    }

    /// Also forwards each stderr line to `tracing` (target `sidewire_process::stderr`, field
    /// `process` = the server's name, each line cut at 4 KiB, credentials redacted). The 16 KiB
    /// tail is kept either way.
    pub fn forward_stderr(mut self, on: bool) -> Self {
        self.forward_stderr = on;
        self
    }

    /// Whether and how a [`crate::McpHost`] restarts this server when it crashes after a
    /// successful start, and how a legacy HTTP+SSE event stream is reopened (default
    /// [`Restart::OnCrash`] with [`RestartPolicy::default`]: 3 attempts in 60 s, backoff from
    /// 0.5 s doubling to 8 s).
    pub fn restart(mut self, restart: Restart) -> Self {
        self.restart = restart;
        self
    }

    /// The restart policy.
    pub fn restart_policy(&self) -> Restart {
        self.restart
    }

    /// The server's own authorization settings (config `oauth`): pre-registered credentials,
    /// scopes, the callback port. They apply only with an [`authorizer`](ServerSpec::authorizer).
    #[cfg(feature = "auth")]
    #[cfg_attr(docsrs, doc(cfg(feature = "auth")))]
    pub fn oauth(mut self, settings: OAuthSettings) -> Self {
        self.oauth = settings;
        self
    }

    /// Lets the HTTP transport authorize with OAuth when the server answers 401 (see
    /// [`crate::auth`]). Without one, a 401 is an error ([`Error::is_http`], status 401). Not
    /// used when a configured `Authorization` header is set: that header is the credential.
    #[cfg(feature = "auth")]
    #[cfg_attr(docsrs, doc(cfg(feature = "auth")))]
    pub fn authorizer(mut self, authorizer: Authorizer) -> Self {
        self.authorizer = Some(authorizer);
        self
    }

    /// The authorization settings.
    #[cfg(feature = "auth")]
    #[cfg_attr(docsrs, doc(cfg(feature = "auth")))]
    pub fn oauth_settings(&self) -> &OAuthSettings {
        &self.oauth
    }

    /// The authorizer, when one is set.
    #[cfg(feature = "auth")]
    #[cfg_attr(docsrs, doc(cfg(feature = "auth")))]
    pub fn authorizer_ref(&self) -> Option<&Authorizer> {
        self.authorizer.as_ref()
    }

    /// The server's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The same server under another name, to run beside it in one [`crate::McpHost`] (a
    /// gateway's instance of a stateful server per client session): everything is kept but
    /// the name, and its OAuth credentials stay those of the configured name
    /// ([`credentials_name`](ServerSpec::credentials_name)).
    pub fn instance(&self, name: &str) -> ServerSpec {
        let mut spec = self.clone();
        spec.origin = Some(Arc::clone(self.origin.as_ref().unwrap_or(&self.name)));
        spec.name = name.into();
        spec
    }

    /// The name its OAuth credentials are stored under: its own, or, for an
    /// [`instance`](ServerSpec::instance), the name of the spec it was made from.
    pub fn credentials_name(&self) -> &str {
        self.origin.as_deref().unwrap_or(&self.name)
    }

    /// The transport.
    pub fn transport(&self) -> Transport {
        self.transport
    }

    /// The command (stdio).
    pub fn command(&self) -> &str {
        &self.command
    }

    /// The arguments (stdio).
    pub fn arguments(&self) -> &[String] {
        &self.args
    }

    /// The environment set over the parent's (stdio).
    pub fn environment(&self) -> &BTreeMap<String, String> {
        &self.env
    }

    /// The working directory (stdio).
    pub fn working_dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// The URL (HTTP transports).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Says which values in the URL's path are secrets: what was filled into it from elsewhere,
    /// such as a config file's `https://host/${TOKEN}/mcp`. Wherever the URL is shown (an error,
    /// a log line, [`shown_url`](Self::shown_url)) each such value is `REDACTED`, as written and
    /// as the URL encodes it, and it is scrubbed from text that may quote the URL (an error body
    /// echoing the request's path) when it is at least 4 bytes long. A value that is not in the
    /// path (the whole URL, its host, a query value, which is redacted anyway) is left out.
    /// Replaces the values given before; give them once the URL is final.
    ///
    /// Only whoever filled the URL in knows which parts are secret, and only this crate shows
    /// the URL, so the two meet here (the config crate calls it for every expanded URL).
    #[cfg(feature = "http")]
    #[cfg_attr(docsrs, doc(cfg(feature = "http")))]
    pub fn url_secrets<I, S>(mut self, values: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let parsed = url::Url::parse(self.url.trim()).ok();
        self.url_secrets =
            UrlSecrets::expanded(parsed.as_ref(), values.into_iter().map(Into::into));
        self
    }

    /// The static headers (HTTP transports).
    pub fn headers(&self) -> &BTreeMap<String, String> {
        &self.headers
    }

    /// Whether the child runs at low priority.
    pub fn is_low_priority(&self) -> bool {
        self.low_priority
    }

    /// The startup budget.
    pub fn startup_budget(&self) -> Duration {
        self.startup_timeout
    }

    /// The timeout of a call to `tool` (its per-tool timeout, else the server's).
    pub fn timeout_for_tool(&self, tool: &str) -> Duration {
        self.tool_timeouts
            .get(tool)
            .copied()
            .unwrap_or(self.call_timeout)
    }

    /// The server's default call timeout.
    pub fn default_call_timeout(&self) -> Duration {
        self.call_timeout
    }

    /// The absolute cap on one tools/call.
    pub fn call_duration_cap(&self) -> Duration {
        self.max_call_duration
    }

    /// The roots offered.
    pub fn roots(&self) -> &[Root] {
        &self.roots
    }

    /// The message cap.
    pub fn message_cap(&self) -> usize {
        self.max_message_bytes
    }

    /// The most items one listing keeps.
    pub fn list_item_cap(&self) -> usize {
        self.max_list_items
    }

    /// The most bytes of item JSON one listing keeps.
    pub fn list_byte_cap(&self) -> usize {
        self.max_list_bytes
    }

    /// The URL fit to show a person, as every error and log line shows it: its userinfo, every
    /// query value, its fragment and the values given to [`url_secrets`](Self::url_secrets)
    /// redacted; scheme, host, port and the rest of the path kept. `None` when it is not an
    /// absolute URL (nothing of it is shown then).
    #[cfg(feature = "http")]
    #[cfg_attr(docsrs, doc(cfg(feature = "http")))]
    pub fn shown_url(&self) -> Option<String> {
        let url = url::Url::parse(self.url.trim()).ok()?;
        Some(self.url_secrets.with_url(&url).show(&url))
    }

    /// Checks what a connection needs: a name, and a command (stdio) or an http(s) URL.
    /// [`Client::connect`](crate::Client::connect) runs the same check; calling it first lets
    /// whoever built the spec (a config loader) say which of its own fields is at fault.
    ///
    /// # Errors
    ///
    /// An [`Error::is_config`] naming what is missing or wrong (a URL only as
    /// [`shown_url`](Self::shown_url) shows it).
    pub fn validate(&self) -> Result<(), Error> {
        if self.name.trim().is_empty() {
            return Err(Error::config("a server needs a non-empty name"));
        }
        match self.transport {
            Transport::Stdio if self.command.trim().is_empty() => Err(Error::config(format!(
                "server `{}`: a stdio server needs a non-empty `command`",
                self.name
            ))),
            Transport::StreamableHttp | Transport::Sse => {
                let lower = self.url.trim().to_ascii_lowercase();
                if lower.starts_with("http://") || lower.starts_with("https://") {
                    Ok(())
                } else {
                    // The URL may hold a secret: it is shown redacted, or not at all.
                    #[cfg(feature = "http")]
                    let got = match self.shown_url() {
                        Some(shown) => format!("{shown:?}"),
                        None => "text that is not an absolute URL".to_owned(),
                    };
                    // Without the HTTP transport nothing parses URLs: none is shown.
                    #[cfg(not(feature = "http"))]
                    let got = "another scheme (the URL is not shown)";
                    Err(Error::config(format!(
                        "server `{}`: an {} server needs an http:// or https:// `url`, got {got}",
                        self.name, self.transport
                    )))
                }
            }
            Transport::Stdio => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests;
