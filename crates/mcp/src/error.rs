//! The crate's one error type: an opaque [`Error`] with `is_*()` predicates and accessors.
//!
//! It is opaque (hyper's shape) rather than a public enum because its causes will keep
//! changing as the HTTP transports and OAuth arrive; callers branch on the predicates, never on
//! the `Display` text, which is for people and may change. It is not the wire error: a server's
//! JSON-RPC error object stays plain data ([`ErrorObject`]) reachable through
//! [`Error::remote`].

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use sidewire_jsonrpc::ErrorObject;

use crate::text;

/// Why authorizing a request failed (the HTTP transport and `crate::auth` make these).
#[cfg(feature = "http")]
#[cfg_attr(
    not(feature = "auth"),
    allow(unreachable_pub, unused_macros, unused_imports)
)]
pub(crate) mod auth;
#[cfg(feature = "auth")]
use self::auth::AuthErrorKind;

/// How much of the stderr tail the `Display` text shows; the whole tail (up to 16 KiB) stays
/// available from [`Error::stderr_tail`].
const DISPLAY_TAIL: usize = 2048;

/// Where a server's startup failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Stage {
    /// Resolving the command and starting the process (or, later, opening the HTTP session).
    Launch,
    /// The `initialize` exchange and `notifications/initialized`.
    Initialize,
    /// The first `tools/list` (and the optional prompt and resource listings).
    ListTools,
}

impl Stage {
    /// The stage's name as it appears in messages: `launch`, `initialize`, `tools/list`.
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Launch => "launch",
            Stage::Initialize => "initialize",
            Stage::ListTools => "tools/list",
        }
    }
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The request a [`Stage::Initialize`] failure was waiting on: the era probe
/// (`server/discover`) or the legacy handshake (`initialize`), which follows a probe that got
/// a legacy answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Handshake {
    /// `initialize` (the legacy era, or the fallback after the probe).
    Initialize,
    /// `server/discover` (the modern era, or the probe of `auto`).
    Discover,
}

impl Handshake {
    /// The method's name: `initialize` or `server/discover`.
    pub fn method(self) -> &'static str {
        match self {
            Handshake::Initialize => "initialize",
            Handshake::Discover => "server/discover",
        }
    }
}

/// What went wrong with a server spec, a connection, a call or the host.
///
/// Branch with the predicates ([`is_timeout`](Error::is_timeout),
/// [`is_closed`](Error::is_closed), ...); the `Display` text names the server, the startup
/// stage and elapsed time when known, the process's exit status and the end of its redacted
/// stderr.
pub struct Error(Box<Inner>);

struct Inner {
    kind: Kind,
    server: Option<Arc<str>>,
    stage: Option<(Stage, Duration)>,
    handshake: Option<Handshake>,
    exit: Option<String>,
    stderr: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum Kind {
    /// A spec (or another setting the caller gave: a header, a URL) is invalid; the message
    /// names what.
    #[error("{0}")]
    Config(String),
    /// The process could not be started; the message says how to fix it, and includes the OS
    /// error when there is one (which is therefore not also a `source`: a printed chain would
    /// show it twice).
    #[error("{message}")]
    Spawn { message: String },
    /// A deadline ran out.
    #[error("{what} timed out after {} ms{}", after.as_millis(), if *idle { " without progress" } else { "" })]
    Timeout {
        what: String,
        after: Duration,
        idle: bool,
    },
    /// The connection is closed (the server exited, closed its output, or was shut down).
    #[error("{what}: {reason}")]
    Closed { what: String, reason: String },
    /// The server answered with a JSON-RPC error.
    #[error("{method} failed: {}", remote_text(error))]
    Remote { method: String, error: ErrorObject },
    /// The server chose a protocol version this client does not speak.
    #[error(
        "the server chose protocol version \"{}\", which this client does not support (it offered {offered}; supported: {supported})",
        text::peer(got)
    )]
    Incompatible {
        got: String,
        offered: &'static str,
        supported: String,
    },
    /// A modern-only server (or a server asked for the modern era) shares no protocol version
    /// with this client. `offered` keeps the first of the versions the server named (see
    /// [`no_mutual_version`]), `named` counts them all.
    #[error(
        "the server speaks protocol versions {}, none of which this client speaks (it speaks {supported})",
        text::peer_list(offered, *named)
    )]
    NoMutualVersion {
        offered: Vec<String>,
        named: usize,
        supported: String,
    },
    /// The server answered `-32022` (unsupported protocol version) twice to `version`, which
    /// its answers list as supported: it refuses a version it says it speaks.
    #[error(
        "the server refused protocol version {version} twice (-32022, unsupported protocol version), though its answer lists {version} among the versions it supports"
    )]
    VersionRefused { version: &'static str },
    /// The server asked for input (a multi-round-trip request) and the client's handler refused
    /// it, or the client does not offer that kind of input.
    #[error(
        "{method}: the server asked for {request} and the client refused: {}",
        remote_text(error)
    )]
    InputRefused {
        method: String,
        request: String,
        error: ErrorObject,
    },
    /// The server asked for input and the call passes input through
    /// ([`ToolCallOptions::pass_input_through`](crate::ToolCallOptions::pass_input_through)):
    /// the call ends here, with the server's requests and state, for the caller to answer.
    #[error("{method}: the server asks for input, which this call passes to its caller")]
    InputRequired {
        method: String,
        requests: serde_json::Map<String, serde_json::Value>,
        state: Option<String>,
    },
    /// A skill's file did not match its listing entry (skills extension), or is not listed.
    #[error("the skill file {} is not verified: {why}", text::peer(uri))]
    SkillUnverified { uri: String, why: String },
    /// A message was over the frame cap (ours refused, or the server's answer skipped).
    #[error("{0}")]
    TooLarge(String),
    /// The server's answer did not fit the protocol.
    #[error("{0}")]
    InvalidResponse(String),
    /// An HTTP exchange failed: a non-2xx status (with up to 4 KiB of the body), or no status
    /// at all (connecting, TLS, a broken stream).
    #[error("{method}: {}", http_text(url, *status, detail))]
    Http {
        method: String,
        url: String,
        status: Option<u16>,
        detail: String,
    },
    /// A 2xx HTTP answer to a request that is neither its response nor empty (or empty with no
    /// GET stream to carry the response): the content type and the sanitised start of the body.
    #[error(
        "{method}: HTTP {status} from {url} is not the response: {why} (content type {content_type}; body: `{quote}`)"
    )]
    UnexpectedAnswer {
        method: String,
        url: String,
        status: u16,
        content_type: String,
        why: &'static str,
        quote: String,
    },
    /// No such server, tool or prompt.
    #[error("{0}")]
    NotFound(String),
    /// A server of that name is already running or starting.
    #[error("{0}")]
    AlreadyExists(String),
    /// The host (or client) was shut down.
    #[error("{0}")]
    ShutDown(String),
    /// Several servers failed to start (an all-or-nothing start).
    #[error("{0}")]
    StartFailed(String),
    /// Authorizing with an HTTP server failed (OAuth).
    #[cfg(feature = "http")]
    #[error("{0}")]
    Auth(self::auth::AuthFailure),
    /// The server does not offer what was asked (modern era: resource subscriptions without
    /// the `resources.subscribe` capability, or no `subscriptions/listen` at all).
    #[error("{0}")]
    Unsupported(String),
    /// A subscription past the connection's bounds (modern era: more than 256 URIs, or a URI
    /// over 4 KiB).
    #[error("{0}")]
    SubscriptionLimit(String),
    /// A task-augmented tool call's task ended `failed` and its result could not be fetched
    /// (`error`: the server's answer to `tasks/result`, when it gave one).
    #[error("{what}: the task {} failed{}{}", text::peer(task_id), message_text(message), error.as_ref().map(|e| format!(" (tasks/result: {})", remote_text(e))).unwrap_or_default())]
    TaskFailed {
        what: String,
        task_id: String,
        message: Option<String>,
        error: Option<ErrorObject>,
    },
    /// A task-augmented tool call's task ended `cancelled`, and not by this client.
    #[error(
        "{what}: the task {} was cancelled{}",
        text::peer(task_id),
        message_text(message)
    )]
    TaskCancelled {
        what: String,
        task_id: String,
        message: Option<String>,
    },
    /// A task-augmented tool call past the connection's bound of tasks followed at once.
    #[error("{0}")]
    TaskLimit(String),
    /// A caller's `_meta` member that the client or the spec reserves.
    #[error(
        "the `_meta` member `{0}` is reserved (the client sets it, or the spec reserves its prefix)"
    )]
    ReservedMeta(String),
    /// A tool result's `structuredContent` does not match the tool's `outputSchema`.
    #[error(
        "the structured content of tool `{tool}` does not match its outputSchema: {}",
        violations_text(violations)
    )]
    OutputSchemaMismatch {
        tool: String,
        violations: Vec<crate::protocol::structured::SchemaViolation>,
        result: Box<crate::protocol::types::CallToolResult>,
    },
    /// Tool arguments that do not match the tool's `inputSchema` (checked here, before
    /// sending: the text says so, and the whole error names no server, which said nothing).
    #[error(
        "the arguments of tool `{tool}` do not match its inputSchema (checked before sending; nothing was sent): {}",
        violations_text(violations)
    )]
    InvalidArguments {
        tool: String,
        violations: Vec<crate::protocol::structured::SchemaViolation>,
    },
    /// A tool's schema that could not be used to check (does not compile, too large).
    #[error(
        "the {which} of tool `{}` cannot be used: {}",
        text::peer(tool),
        text::peer(why)
    )]
    SchemaInvalid {
        tool: String,
        which: &'static str,
        why: String,
        result: Option<Box<crate::protocol::types::CallToolResult>>,
    },
}

/// A task's status message, as a suffix.
fn message_text(message: &Option<String>) -> String {
    message
        .as_deref()
        .map(|message| format!(": {}", text::peer(message)))
        .unwrap_or_default()
}

/// A JSON-RPC error object in words, its message cut (see `crate::text`).
fn remote_text(error: &ErrorObject) -> String {
    format!("{} (code {})", text::peer(&error.message), error.code)
}

/// The error of a server that names only protocol versions this client does not speak (or
/// none): it keeps the first [`PEER_LIST_ITEMS`](text::PEER_LIST_ITEMS) of them, so a
/// `-32022` naming 200,000 versions is not held, and counts the rest.
pub(crate) fn no_mutual_version(mut offered: Vec<String>) -> Error {
    let named = offered.len();
    offered.truncate(text::PEER_LIST_ITEMS);
    Error::new(Kind::NoMutualVersion {
        offered,
        named,
        supported: crate::protocol::era::MODERN_PROTOCOL_VERSIONS.join(", "),
    })
}

/// Violations in words: how many, and the first.
fn violations_text(violations: &[crate::protocol::structured::SchemaViolation]) -> String {
    match violations.first() {
        None => "no details".to_owned(),
        Some(first) => {
            let path = if first.instance_path.is_empty() {
                "the value"
            } else {
                first.instance_path.as_str()
            };
            let more = violations.len() - 1;
            let more = if more > 0 {
                format!(" (and {more} more)")
            } else {
                String::new()
            };
            format!("{path} fails `{}`: {}{more}", first.keyword, first.message)
        }
    }
}

impl Error {
    pub(crate) fn new(kind: Kind) -> Self {
        Error(Box::new(Inner {
            kind,
            server: None,
            stage: None,
            handshake: None,
            exit: None,
            stderr: None,
        }))
    }

    pub(crate) fn config(message: impl Into<String>) -> Self {
        Error::new(Kind::Config(message.into()))
    }

    pub(crate) fn with_server(mut self, server: &Arc<str>) -> Self {
        if self.0.server.is_none() {
            self.0.server = Some(Arc::clone(server));
        }
        self
    }

    pub(crate) fn with_stage(mut self, stage: Stage, elapsed: Duration) -> Self {
        if self.0.stage.is_none() {
            self.0.stage = Some((stage, elapsed));
        }
        self
    }

    pub(crate) fn with_handshake(mut self, handshake: Handshake) -> Self {
        if self.0.handshake.is_none() {
            self.0.handshake = Some(handshake);
        }
        self
    }

    /// Attaches the process's exit status and stderr tail, when there are any.
    pub(crate) fn with_diagnostics(mut self, exit: Option<String>, stderr: Option<String>) -> Self {
        if self.0.exit.is_none() {
            self.0.exit = exit;
        }
        if self.0.stderr.is_none() {
            self.0.stderr = stderr.filter(|tail| !tail.trim().is_empty());
        }
        self
    }

    /// Maps a jsonrpc error for `what` (a method name, or a description of the operation). A
    /// request the transport failed comes back as the typed error the bridge failed it with
    /// (see `protocol::bridge`).
    pub(crate) fn rpc(
        what: &(impl std::fmt::Display + ?Sized),
        err: sidewire_jsonrpc::Error,
    ) -> Self {
        use sidewire_jsonrpc::Error as E;
        let kind = match err {
            E::Local { method, cause } => match cause.downcast::<Error>() {
                Ok(error) => return *error,
                Err(cause) => Kind::InvalidResponse(format!("{method} failed: {cause}")),
            },
            E::Closed(reason) => Kind::Closed {
                what: what.to_string(),
                reason: closed_text(&reason),
            },
            E::Timeout { after, idle, .. } => Kind::Timeout {
                what: what.to_string(),
                after,
                idle,
            },
            E::Remote { method, error } => Kind::Remote { method, error },
            err @ (E::FrameTooLarge { .. } | E::ResponseTooLarge { .. }) => {
                Kind::TooLarge(err.to_string())
            }
            other => Kind::InvalidResponse(other.to_string()),
        };
        Error::new(kind)
    }

    /// The spec, or another setting the caller gave (a header, a URL, an OAuth setting), is
    /// invalid; the message names what. (Config files are `sidewire-mcp-config`'s, with its own
    /// error.)
    pub fn is_config(&self) -> bool {
        matches!(self.0.kind, Kind::Config(_))
    }

    /// The server process could not be started (command not found, not executable, ...).
    pub fn is_spawn(&self) -> bool {
        matches!(self.0.kind, Kind::Spawn { .. })
    }

    /// A deadline ran out: a call's idle or absolute timeout, or a startup timeout.
    pub fn is_timeout(&self) -> bool {
        matches!(self.0.kind, Kind::Timeout { .. })
    }

    /// The connection is closed: the server exited or closed its output, or it was shut down.
    pub fn is_closed(&self) -> bool {
        matches!(self.0.kind, Kind::Closed { .. })
    }

    /// The server answered with a JSON-RPC error (see [`remote`](Error::remote)).
    pub fn is_remote(&self) -> bool {
        matches!(self.0.kind, Kind::Remote { .. })
    }

    /// The server and this client share no protocol version: the server chose one this client
    /// does not speak (legacy era), named only versions it does not speak (modern era), or
    /// answered `-32022` again after the one renegotiation (also when its answer lists the
    /// version it refused).
    pub fn is_incompatible_version(&self) -> bool {
        matches!(
            self.0.kind,
            Kind::Incompatible { .. } | Kind::NoMutualVersion { .. } | Kind::VersionRefused { .. }
        ) || self.remote_code() == Some(crate::protocol::era::UNSUPPORTED_PROTOCOL_VERSION)
    }

    /// The server said the request's HTTP headers and its body disagree (`-32020`, modern era).
    pub fn is_header_mismatch(&self) -> bool {
        self.remote_code() == Some(crate::protocol::era::HEADER_MISMATCH)
    }

    /// The server needs a client capability this client did not declare (`-32021`, modern
    /// era): e.g. elicitation, which the handler does not offer.
    pub fn is_missing_client_capability(&self) -> bool {
        self.remote_code() == Some(crate::protocol::era::MISSING_REQUIRED_CLIENT_CAPABILITY)
    }

    /// The resource read does not exist: `-32002` from a legacy server, `-32602` (invalid
    /// params) from a modern one, both only for `resources/read`.
    pub fn is_resource_not_found(&self) -> bool {
        match &self.0.kind {
            Kind::Remote { method, error } => {
                method == "resources/read"
                    && (error.code == -32002 || error.code == ErrorObject::INVALID_PARAMS)
            }
            _ => false,
        }
    }

    /// The server asked for input during a request (modern era: sampling, elicitation or
    /// roots inside an `InputRequiredResult`) and the handler refused it, or the client does
    /// not offer that kind of input. The handler's error object is [`remote`](Error::remote).
    pub fn is_input_refused(&self) -> bool {
        matches!(self.0.kind, Kind::InputRefused { .. })
    }

    /// A modern-era call that passes input through
    /// ([`ToolCallOptions::pass_input_through`](crate::ToolCallOptions::pass_input_through))
    /// got an `InputRequiredResult`: [`input_required`](Error::input_required) has the server's
    /// input requests (by key, each `{method, params}` as sent) and its `requestState`.
    pub fn is_input_required(&self) -> bool {
        matches!(self.0.kind, Kind::InputRequired { .. })
    }

    /// The input requests and `requestState` of an [`is_input_required`](Error::is_input_required)
    /// error.
    pub fn input_required(
        &self,
    ) -> Option<(&serde_json::Map<String, serde_json::Value>, Option<&str>)> {
        match &self.0.kind {
            Kind::InputRequired {
                requests, state, ..
            } => Some((requests, state.as_deref())),
            _ => None,
        }
    }

    /// A skill's file was read but does not match its listing entry (its size, its digest, or
    /// for `SKILL.md` its frontmatter), or the skill does not list it: the content was dropped
    /// unused (see [`Client::read_skill_file`](crate::Client::read_skill_file)).
    pub fn is_skill_unverified(&self) -> bool {
        matches!(self.0.kind, Kind::SkillUnverified { .. })
    }

    /// A caller's [`ToolCallOptions::meta`](crate::ToolCallOptions::meta) named a reserved
    /// key (`progressToken`, an `io.modelcontextprotocol/` or other MCP-reserved prefix);
    /// nothing was sent.
    pub fn is_reserved_meta(&self) -> bool {
        matches!(self.0.kind, Kind::ReservedMeta(_))
    }

    /// A tool's result has `structuredContent` that does not match the tool's `outputSchema`
    /// as last listed (or none where the schema asks for it): see
    /// [`schema_violations`](Error::schema_violations); the result is
    /// [`call_result`](Error::call_result).
    pub fn is_output_schema_mismatch(&self) -> bool {
        matches!(self.0.kind, Kind::OutputSchemaMismatch { .. })
    }

    /// The arguments do not match the tool's `inputSchema` (checked before sending, when
    /// [`ToolCallOptions::validate_arguments`](crate::ToolCallOptions::validate_arguments)
    /// asked for it; nothing was sent): see [`schema_violations`](Error::schema_violations).
    pub fn is_invalid_arguments(&self) -> bool {
        matches!(self.0.kind, Kind::InvalidArguments { .. })
    }

    /// A tool's `outputSchema` or `inputSchema` could not be used to check: it does not
    /// compile (a `$ref` outside the schema, which is never fetched, an invalid keyword) or is
    /// over [`MAX_SCHEMA_BYTES`](crate::MAX_SCHEMA_BYTES). For an output schema the result is
    /// [`call_result`](Error::call_result).
    pub fn is_schema_invalid(&self) -> bool {
        matches!(self.0.kind, Kind::SchemaInvalid { .. })
    }

    /// How a value broke a tool's schema (at most
    /// [`MAX_VIOLATIONS`](crate::MAX_VIOLATIONS)), for
    /// [`is_output_schema_mismatch`](Error::is_output_schema_mismatch) and
    /// [`is_invalid_arguments`](Error::is_invalid_arguments); empty otherwise.
    pub fn schema_violations(&self) -> &[crate::protocol::structured::SchemaViolation] {
        match &self.0.kind {
            Kind::OutputSchemaMismatch { violations, .. }
            | Kind::InvalidArguments { violations, .. } => violations,
            _ => &[],
        }
    }

    /// The tool result an output-schema check refused, for diagnostics.
    pub fn call_result(&self) -> Option<&crate::protocol::types::CallToolResult> {
        match &self.0.kind {
            Kind::OutputSchemaMismatch { result, .. } => Some(result),
            Kind::SchemaInvalid { result, .. } => result.as_deref(),
            _ => None,
        }
    }

    /// The server refused the request until the user visits URLs (`-32042`,
    /// URLElicitationRequiredError, 2025-11-25): see [`url_elicitations`](Error::url_elicitations)
    /// and [`Client::offer_url_elicitations`](crate::Client::offer_url_elicitations).
    pub fn is_url_elicitation_required(&self) -> bool {
        self.remote_code() == Some(crate::protocol::elicit_url::URL_ELICITATION_REQUIRED)
    }

    /// The URL elicitations a `-32042` error lists (at most
    /// [`MAX_URL_ELICITATIONS`](crate::MAX_URL_ELICITATIONS); entries whose URL is not an
    /// absolute `https:`/`http:` URL with a host are left out); empty for other errors.
    pub fn url_elicitations(&self) -> Vec<crate::protocol::elicit_url::UrlElicitation> {
        if !self.is_url_elicitation_required() {
            return Vec::new();
        }
        crate::protocol::elicit_url::UrlElicitation::from_error_data(
            self.remote().and_then(|error| error.data.as_ref()),
        )
    }

    fn remote_code(&self) -> Option<i64> {
        match &self.0.kind {
            Kind::Remote { error, .. } => Some(error.code),
            _ => None,
        }
    }

    /// A message was over the frame cap: ours was refused before a byte was written, or the
    /// server's answer was skipped (the connection lives on). Also a modern-era request over
    /// HTTP whose `Mcp-Name` or `Mcp-Param-*` header value would be over
    /// [`MAX_HEADER_VALUE_BYTES`](crate::MAX_HEADER_VALUE_BYTES): nothing was sent.
    pub fn is_too_large(&self) -> bool {
        matches!(self.0.kind, Kind::TooLarge(_))
    }

    /// The server's answer did not fit the protocol (wrong shape, undecodable result).
    pub fn is_invalid_response(&self) -> bool {
        matches!(self.0.kind, Kind::InvalidResponse(_))
    }

    /// An HTTP exchange failed: a non-2xx status ([`http_status`](Error::http_status)) or a
    /// network failure (no status). The text names the method and the URL, with up to 4 KiB
    /// of the response body.
    pub fn is_http(&self) -> bool {
        matches!(self.0.kind, Kind::Http { .. })
    }

    /// A 2xx HTTP answer to a request was not its response: a captive portal's HTML page, a
    /// non-JSON or truncated body, a notification alone, a response to another id, or an empty
    /// answer with no GET stream open to carry the response. The text quotes the content type
    /// and the first 200 bytes of the body (control characters escaped);
    /// [`http_status`](Error::http_status) is the 2xx status.
    pub fn is_unexpected_answer(&self) -> bool {
        matches!(self.0.kind, Kind::UnexpectedAnswer { .. })
    }

    /// The HTTP status of a failed exchange, when it got one (`401`, `404`, ...), or of an
    /// [unexpected answer](Error::is_unexpected_answer).
    pub fn http_status(&self) -> Option<u16> {
        match &self.0.kind {
            Kind::Http { status, .. } => *status,
            Kind::UnexpectedAnswer { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// No server, tool or prompt of that name.
    pub fn is_not_found(&self) -> bool {
        matches!(self.0.kind, Kind::NotFound(_))
    }

    /// A server of that name is already running or starting.
    pub fn is_already_exists(&self) -> bool {
        matches!(self.0.kind, Kind::AlreadyExists(_))
    }

    /// The host or client was shut down.
    pub fn is_shut_down(&self) -> bool {
        matches!(self.0.kind, Kind::ShutDown(_))
    }

    /// An all-or-nothing start failed because at least one server did not start.
    pub fn is_start_failed(&self) -> bool {
        matches!(self.0.kind, Kind::StartFailed(_))
    }

    /// The server does not offer what was asked: a [`subscribe`](crate::Client::subscribe) to
    /// a modern server whose capabilities lack `resources.subscribe`, or that has no
    /// `subscriptions/listen`.
    pub fn is_unsupported(&self) -> bool {
        matches!(self.0.kind, Kind::Unsupported(_))
    }

    /// A [`subscribe`](crate::Client::subscribe) past the connection's bounds (modern era: at
    /// most 256 subscribed URIs, each at most 4 KiB).
    pub fn is_subscription_limit(&self) -> bool {
        matches!(self.0.kind, Kind::SubscriptionLimit(_))
    }

    /// A tool call that ran as a task ended with the task `failed` and no result to show
    /// (a failed task whose `tasks/result` is a tool result comes back as that result, with
    /// `is_error`). [`remote`](Error::remote) gives the server's error to `tasks/result`,
    /// when it sent one.
    pub fn is_task_failed(&self) -> bool {
        matches!(self.0.kind, Kind::TaskFailed { .. })
    }

    /// A tool call that ran as a task ended with the task `cancelled` by the server (or
    /// another client); a call this client abandons is not an error it sees.
    pub fn is_task_cancelled(&self) -> bool {
        matches!(self.0.kind, Kind::TaskCancelled { .. })
    }

    /// A task-augmented tool call past the connection's bound of tasks it follows at once
    /// ([`MAX_TRACKED_TASKS`](crate::MAX_TRACKED_TASKS)); nothing was sent.
    pub fn is_task_limit(&self) -> bool {
        matches!(self.0.kind, Kind::TaskLimit(_))
    }

    /// The task a task error concerns ([`is_task_failed`](Error::is_task_failed),
    /// [`is_task_cancelled`](Error::is_task_cancelled)).
    pub fn task_id(&self) -> Option<&str> {
        match &self.0.kind {
            Kind::TaskFailed { task_id, .. } | Kind::TaskCancelled { task_id, .. } => Some(task_id),
            _ => None,
        }
    }

    /// Authorizing with an HTTP server failed: discovery, registration, the sign-in, a token
    /// request, or access still refused after the bounded attempts; see
    /// [`auth_error`](Error::auth_error) for which.
    pub fn is_auth(&self) -> bool {
        #[cfg(feature = "http")]
        return matches!(self.0.kind, Kind::Auth(_));
        #[cfg(not(feature = "http"))]
        false
    }

    /// The server needs a new authorization and nobody could complete it (the authorizer's
    /// [`Interaction::Never`](crate::auth::Interaction::Never)): someone must log in (the CLI
    /// says which command).
    #[cfg(feature = "auth")]
    #[cfg_attr(docsrs, doc(cfg(feature = "auth")))]
    pub fn is_login_required(&self) -> bool {
        self.auth_error() == Some(AuthErrorKind::LoginRequired)
    }

    /// Which part of an authorization failed, when this is an [auth](Error::is_auth) error.
    #[cfg(feature = "auth")]
    #[cfg_attr(docsrs, doc(cfg(feature = "auth")))]
    pub fn auth_error(&self) -> Option<AuthErrorKind> {
        match &self.0.kind {
            Kind::Auth(failure) => Some(failure.kind),
            _ => None,
        }
    }

    /// The server's JSON-RPC error object, when that is what this error is.
    pub fn remote(&self) -> Option<&ErrorObject> {
        match &self.0.kind {
            Kind::Remote { error, .. } | Kind::InputRefused { error, .. } => Some(error),
            Kind::TaskFailed { error, .. } => error.as_ref(),
            _ => None,
        }
    }

    /// The server this error concerns, when known.
    pub fn server(&self) -> Option<&str> {
        self.0.server.as_deref()
    }

    /// The startup stage that failed and how long startup had run, for startup errors.
    pub fn stage(&self) -> Option<(Stage, Duration)> {
        self.0.stage
    }

    /// For a failure at [`Stage::Initialize`]: the request it was waiting on
    /// (`server/discover` or `initialize`).
    pub fn handshake(&self) -> Option<Handshake> {
        self.0.handshake
    }
    /// What went wrong, in words, without the server's name, the startup stage, the exit
    /// status or the stderr tail that the whole text ([`Display`](fmt::Display)) adds: for a
    /// caller that shows those apart ([`StartFailure::reason`](crate::StartFailure::reason)).
    pub(crate) fn reason(&self) -> String {
        KindText(&self.0.kind).to_string()
    }

    /// How the server process ended (`exited with status 3`, `killed by signal 9`), when it
    /// has.
    pub fn exit_status(&self) -> Option<&str> {
        self.0.exit.as_deref()
    }

    /// The last 16 KiB of the server's stderr, with credentials redacted, when there is any.
    pub fn stderr_tail(&self) -> Option<&str> {
        self.0.stderr.as_deref()
    }
}

/// An HTTP failure in words: the status and the body's start, or what failed.
fn http_text(url: &str, status: Option<u16>, detail: &str) -> String {
    match status {
        Some(status) if detail.is_empty() => format!("HTTP {status} from {url}"),
        Some(status) => format!("HTTP {status} from {url}: {detail}"),
        None => format!("the HTTP exchange with {url} failed: {detail}"),
    }
}

/// A close reason in words, for a caller who sees only "connection closed".
fn closed_text(reason: &sidewire_jsonrpc::CloseReason) -> String {
    use sidewire_jsonrpc::CloseReason as R;
    match reason {
        R::Eof => "the server closed the connection (it exited or closed its output)".to_owned(),
        R::Hangup => "the server stopped reading (it exited or closed its input)".to_owned(),
        R::ShutDown => "the connection was shut down".to_owned(),
        other => other.to_string(),
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A check made here before sending is not the server's word: it is not prefixed with
        // the server's name (its text says it was checked before sending).
        let local = matches!(self.0.kind, Kind::InvalidArguments { .. });
        if let Some(server) = self.0.server.as_ref().filter(|_| !local) {
            write!(f, "MCP server `{server}`: ")?;
        }
        if let Some((stage, elapsed)) = self.0.stage {
            write!(
                f,
                "startup {stage} failed after {:.1} s: ",
                elapsed.as_secs_f64()
            )?;
        }
        write!(f, "{}", KindText(&self.0.kind))?;
        if let Some(exit) = &self.0.exit {
            // `exit_status` is `sidewire_process::Exit`'s text: "exited with status 3" reads
            // on after "the process", "killed by signal 9" needs its verb.
            let verb = if exit.starts_with("killed") {
                "was "
            } else {
                ""
            };
            write!(f, "; the process {verb}{exit}")?;
        }
        if let Some(tail) = &self.0.stderr {
            let tail = tail.trim_end();
            let cut = tail.len().saturating_sub(DISPLAY_TAIL);
            let cut = (cut..tail.len())
                .find(|&i| tail.is_char_boundary(i))
                .unwrap_or(tail.len());
            let ellipsis = if cut > 0 { "..." } else { "" };
            write!(f, "; stderr: {ellipsis}{}", &tail[cut..])?;
        }
        Ok(())
    }
}

/// An error's own text, at most [`ERROR_TEXT_BYTES`](text::ERROR_TEXT_BYTES): a backstop for
/// peer text that no site cut (a decoder's message quoting a value).
struct KindText<'a>(&'a Kind);

impl fmt::Display for KindText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        text::write_bounded(f, self.0, text::ERROR_TEXT_BYTES)
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Error")
            .field("kind", &self.0.kind)
            .field("server", &self.0.server)
            .field("stage", &self.0.stage)
            .field("handshake", &self.0.handshake)
            .field("exit", &self.0.exit)
            .field("stderr", &self.0.stderr.as_ref().map(String::len))
            .finish()
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        std::error::Error::source(&self.0.kind)
    }
}

/// An error and its causes on one line, `a: b: c` (the layout of anyhow's `{:#}`): its own
/// text, then each `source` in turn. Each cause appears once when every error in the chain
/// either says its cause or returns it as its `source`, never both, as sidewire's errors do.
/// The one such helper of the workspace: the HTTP transports' network errors, `sidewire-agent`'s
/// failed tool calls and the CLI's `--json` errors all go through it.
pub fn error_line(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests;
