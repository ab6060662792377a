//! The command line's shape (clap derive): every command, flag and its help text.

use std::path::PathBuf;

use clap::{Args, CommandFactory as _, Parser, Subcommand, ValueEnum};

/// Host out-of-process extensions (Extension Protocol v1) and consume MCP servers.
#[derive(Debug, Parser)]
#[command(
    name = "sidewire",
    version,
    propagate_version = true,
    after_help = "Exit codes: 0 ok; 1 failure (a tool result with isError, a blocked chain, a server that did not start); \
                  2 usage (a wrong or conflicting flag, key=value arguments the tool's schema refuses); \
                  130, 143, 129 after SIGINT, SIGTERM, SIGHUP."
)]
pub(crate) struct Cli {
    /// More log output on stderr (repeat for more); `RUST_LOG` overrides.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub(crate) verbose: u8,
    /// Only errors on stderr.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub(crate) quiet: bool,
    /// Print machine-readable JSON on stdout instead of text.
    #[arg(long, global = true)]
    pub(crate) json: bool,
    #[command(subcommand)]
    pub(crate) command: Command,
}

impl Cli {
    /// Parses `args` (the program name first), with the check clap cannot express: `--stdio`
    /// needs the server's command after `--`.
    pub(crate) fn try_parse_args<I, T>(args: I) -> Result<Cli, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        let cli = Cli::try_parse_from(args)?;
        let roots = match &cli.command {
            Command::Mcp(args) => args.roots.len(),
            Command::Run { roots, .. } => roots.len(),
            _ => 0,
        };
        if roots > sidewire_mcp_config::MAX_CONFIG_ROOTS {
            return Err(Cli::command().error(
                clap::error::ErrorKind::TooManyValues,
                format!(
                    "{roots} --root given; at most {} are offered",
                    sidewire_mcp_config::MAX_CONFIG_ROOTS
                ),
            ));
        }
        if let Command::Mcp(args) = &cli.command {
            if args.stdio && args.stdio_command.is_empty() {
                return Err(Cli::command().error(
                    clap::error::ErrorKind::MissingRequiredArgument,
                    "--stdio needs the server's command after `--`",
                ));
            }
            let conflict = |message: &str| {
                Err(Cli::command().error(clap::error::ErrorKind::ArgumentConflict, message))
            };
            // Checked here too: clap misses a conflict between a global flag given before
            // the subcommand and one given after it.
            if args.url.is_some() && args.stdio {
                return conflict("--url and --stdio conflict: give one ad hoc server");
            }
            if args.config.is_some() && (args.url.is_some() || args.stdio) {
                return conflict("--config and an ad hoc server (--url, --stdio) conflict");
            }
            if !args.env.is_empty() && !args.stdio {
                return conflict(
                    "-e/--env sets the environment of a --stdio server; give --stdio -- COMMAND",
                );
            }
            if !args.headers.is_empty() && args.url.is_none() {
                return conflict("--header goes with --url");
            }
            // Flags that pick or read config servers, or shape the --url server, would be
            // silently ignored beside another kind of server: refused instead.
            let adhoc = args.url.is_some() || args.stdio;
            if !args.servers.is_empty() && adhoc {
                return conflict(
                    "--server picks servers of a config; with --url or --stdio there is one server",
                );
            }
            if args.dialect.is_some() && adhoc {
                return conflict("--dialect reads --config; --url and --stdio take no config");
            }
            if args.transport.is_some() && args.url.is_none() {
                return conflict(
                    "--transport goes with --url (a config's servers say their own `type`)",
                );
            }
            let names_one = |server: &Option<String>| {
                server.is_some() || args.url.is_some() || args.servers.len() == 1
            };
            match &args.command {
                McpCommand::Login { server, .. } if !names_one(server) => {
                    return Err(Cli::command().error(
                        clap::error::ErrorKind::MissingRequiredArgument,
                        "name the server: `sidewire mcp login SERVER` (or --url URL, or one --server)",
                    ));
                }
                McpCommand::Logout { server } if !names_one(server) => {
                    return Err(Cli::command().error(
                        clap::error::ErrorKind::MissingRequiredArgument,
                        "name the server: `sidewire mcp logout SERVER` (or --url URL)",
                    ));
                }
                _ => {}
            }
            if !args.stdio && !args.stdio_command.is_empty() {
                // Never silently ignored: the words after `--` start a server only with --stdio.
                let conflict = if args.url.is_some() {
                    "--url and a command after `--` conflict: give one server, --url URL or --stdio -- COMMAND"
                } else {
                    "a command after `--` needs --stdio (`sidewire mcp tools --stdio -- COMMAND ARGS...`)"
                };
                return Err(
                    Cli::command().error(clap::error::ErrorKind::ArgumentConflict, conflict)
                );
            }
        }
        if let Command::Ext(ExtCommand::Conformance(args)) = &cli.command {
            let usage = |message: &str| {
                Err(Cli::command().error(clap::error::ErrorKind::ArgumentConflict, message))
            };
            match (&args.target, args.command.is_empty(), &args.manifest) {
                (Some(_), false, _) => {
                    return usage("give either a TARGET or a command after `--`, not both");
                }
                (None, false, None) => return usage("a command after `--` needs --manifest FILE"),
                (Some(_), true, Some(_)) => {
                    return usage("--manifest goes with a command after `--`");
                }
                (None, true, _) if !args.list => {
                    return Err(Cli::command().error(
                        clap::error::ErrorKind::MissingRequiredArgument,
                        "give a TARGET (plugin id or package directory) or `--manifest FILE -- COMMAND ARGS...`",
                    ));
                }
                _ => {}
            }
        }
        Ok(cli)
    }
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Talk to MCP servers: from a config file, or ad hoc with --url or --stdio.
    // Boxed: its flags make it far larger than the other commands.
    Mcp(Box<McpArgs>),
    /// Install and manage extension plugins (state under $SIDEWIRE_HOME).
    #[command(subcommand)]
    Plugin(PluginCommand),
    /// Boot the installed extensions and use them one shot at a time.
    #[command(subcommand)]
    Ext(ExtCommand),
    /// The command hooks of the files you keep for Claude Code (and the Reasonix host, Gemini
    /// CLI, ...): which run, approving a project's, and a test run of one event. `run`,
    /// `ext intercept` and `mcp serve` run them as members of the extension chain.
    #[command(subcommand)]
    Hooks(HooksCommand),
    /// The interactive host: boots the installed extensions and the configured MCP servers,
    /// then reads lines (text goes through input.receive, or with --model runs an agent turn;
    /// /help lists the commands). On a terminal: a line editor with history and Tab
    /// completion; Ctrl-C cancels the call in flight, Ctrl-D leaves. With --json: one JSON
    /// object per event.
    Run {
        /// The MCP config file, in any dialect `sidewire mcp --config` takes (default:
        /// ./.mcp.json when present).
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        /// Let the host's policy allow tools that are not marked read-only.
        #[arg(long)]
        allow_tools: bool,
        /// Run each line of text as an agent turn with this provider ref
        /// (`plugin/<plugin>/<provider>/<model>`, see `sidewire ext providers`): its answer
        /// streams back, and the tools it asks for run through the permission chain.
        #[arg(long, value_name = "REF", value_parser = parse_provider_ref)]
        model: Option<String>,
        /// Offer this directory to the MCP servers as a root (repeatable; replaces the
        /// config's `roots`); `/root add DIR` and `/root remove DIR` change them while it runs.
        #[arg(long = "root", value_name = "DIR", value_parser = parse_root)]
        roots: Vec<PathBuf>,
        /// With --model: at most this many provider requests per turn.
        #[arg(long, value_name = "N", default_value_t = sidewire_agent::Agent::DEFAULT_MAX_ROUNDS, requires = "model")]
        max_rounds: u32,
        /// With --model: fail a turn's stream when nothing arrives for this many seconds
        /// (default 60); the sidecar is told to stop.
        #[arg(long, value_name = "SECS", value_parser = parse_seconds, requires = "model")]
        idle_timeout: Option<f64>,
    },
    /// Run the built-in demo: an extension and an MCP server, no setup needed.
    Demo,
    /// Print shell completions.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// The built-in demo sidecar (started by `demo`; speaks the protocol on stdin/stdout).
    #[command(name = "__sidecar", hide = true)]
    BuiltinSidecar(BuiltinArgs),
    /// The built-in demo MCP server (started by `demo`; speaks MCP on stdin/stdout).
    #[command(name = "__mcp-server", hide = true)]
    BuiltinMcpServer(BuiltinArgs),
}

/// How a built-in peer behaves; the hostile modes exist for the tests of what reaches the
/// terminal.
#[derive(Debug, Args)]
pub(crate) struct BuiltinArgs {
    /// Put terminal escape sequences, carriage returns and bidi overrides in every text it
    /// sends (names, labels, reasons, results, prompts).
    #[arg(long)]
    pub(crate) hostile: bool,
    /// Write such text to stderr and exit with status 3 before speaking the protocol.
    #[arg(long)]
    pub(crate) hostile_exit: bool,
    /// Ignore SIGTERM, SIGHUP, SIGINT and the end of stdin: only SIGKILL ends it (for the tests
    /// that nothing outlives sidewire).
    #[arg(long)]
    pub(crate) stubborn: bool,
    /// Start a daemon (`setsid sleep`) that leaves the process group and the session before
    /// speaking the protocol (for the tests that sidewire reaps even those).
    #[arg(long)]
    pub(crate) daemon: bool,
    /// Instead of the demo tools, offer this many synthetic tools over pages (for the tests
    /// and the benchmark of listing memory; MCP server only).
    #[arg(long, value_name = "N")]
    pub(crate) many_tools: Option<usize>,
    /// The tools per page with `--many-tools`.
    #[arg(long, value_name = "N", default_value_t = 1000)]
    pub(crate) page_size: usize,
    /// Serve the scripted model one chunk every 200 ms (sidecar only; for the tests of
    /// cancelling a stream).
    #[arg(long, conflicts_with_all = ["stall_model", "flood_model", "tool_call_bytes"])]
    pub(crate) slow_model: bool,
    /// Serve a model that sends its first chunk and then nothing, never ending its stream
    /// (sidecar only; for the tests of the idle bound).
    #[arg(long, conflicts_with_all = ["flood_model", "tool_call_bytes"])]
    pub(crate) stall_model: bool,
    /// Serve a model that streams text without end, as fast as the host takes it (sidecar
    /// only; for the tests of the output bound).
    #[arg(long, conflicts_with = "tool_call_bytes")]
    pub(crate) flood_model: bool,
    /// Serve a model that answers every request with one tool call whose arguments are this
    /// many bytes (sidecar only; for the tests that they are not printed).
    #[arg(long, value_name = "BYTES")]
    pub(crate) tool_call_bytes: Option<usize>,
    /// With --slow-model, --stall-model or --flood-model: write `cancelled` to this file when
    /// the host cancels a stream.
    #[arg(long, value_name = "FILE")]
    pub(crate) cancel_mark: Option<PathBuf>,
    /// Once ready, publish this many status updates to one surface as fast as the host takes
    /// them (sidecar only; for the test that `run` coalesces a flood).
    #[arg(long, value_name = "N")]
    pub(crate) flood: Option<u64>,
    /// Intercept `tool.before` (the manifest must list it) and append each call's `callId` to
    /// this file, one a line (sidecar only; for the test that every call has its own).
    #[arg(long, value_name = "FILE")]
    pub(crate) record_calls: Option<PathBuf>,
    /// Serve the extension tool `add` (sums the integers `a` and `b`; sidecar only, offered
    /// when a v2 manifest declares it under `runtime.tools` with capability `tools`).
    #[arg(long)]
    pub(crate) tools: bool,
}

/// A `--dialect` value.
fn parse_dialect(name: &str) -> Result<sidewire_mcp_config::Dialect, String> {
    name.parse()
        .map_err(|err: sidewire_mcp_config::Error| err.to_string())
}

#[derive(Debug, Args)]
pub(crate) struct McpArgs {
    /// The MCP config file (default: ./.mcp.json when present): Claude Code's `.mcp.json`,
    /// Claude Desktop's, Cursor's, Copilot's, Cline's, Gemini CLI's `settings.json`, VS Code's
    /// `.vscode/mcp.json`, opencode's `opencode.json` or Codex's `config.toml`, told apart by
    /// name and shape.
    #[arg(long, global = true, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
    /// Read --config as this dialect instead of telling it from the file: claude-code,
    /// claude-desktop, cursor, copilot, cline, gemini, vscode, opencode or codex.
    #[arg(long, global = true, value_name = "DIALECT", value_parser = parse_dialect)]
    pub(crate) dialect: Option<sidewire_mcp_config::Dialect>,
    /// Only these servers of the config (repeatable).
    #[arg(long = "server", global = true, value_name = "NAME")]
    pub(crate) servers: Vec<String>,
    /// An ad hoc HTTP server instead of a config.
    #[arg(long, global = true, value_name = "URL", conflicts_with_all = ["config", "stdio"])]
    pub(crate) url: Option<String>,
    /// A header for --url, as 'Name: value' (repeatable).
    #[arg(long = "header", global = true, value_name = "K: V", requires = "url", value_parser = parse_header)]
    pub(crate) headers: Vec<(String, String)>,
    /// The transport for --url (default: auto).
    #[arg(long, global = true, value_enum)]
    pub(crate) transport: Option<HttpTransport>,
    /// An ad hoc stdio server: its command and arguments follow `--` at the end of the line
    /// (`sidewire mcp tools --stdio -- npx -y @modelcontextprotocol/server-everything`).
    #[arg(long, global = true)]
    pub(crate) stdio: bool,
    /// The words after `--` (see `--stdio`): the server's command line, passed on as they are,
    /// flags included, whatever the subcommand before them.
    #[arg(global = true, last = true, value_name = "CMD")]
    pub(crate) stdio_command: Vec<String>,
    /// An environment variable for the --stdio server, as KEY=VALUE (repeatable).
    #[arg(short = 'e', long = "env", global = true, value_name = "KEY=VALUE", requires = "stdio", value_parser = parse_env)]
    pub(crate) env: Vec<(String, String)>,
    /// Offer this directory to the servers as a root (`roots/list`; repeatable). Given, it
    /// replaces the config's top-level `roots`; with none, no `roots` capability is declared.
    #[arg(long = "root", global = true, value_name = "DIR", value_parser = parse_root)]
    pub(crate) roots: Vec<PathBuf>,
    /// Ask each server to send its log messages of this level and above (`logging/setLevel`),
    /// and print them on stderr.
    #[arg(long, global = true, value_enum, value_name = "LEVEL")]
    pub(crate) log_level: Option<LogLevelArg>,
    /// The protocol era to speak: `auto` probes with `server/discover` and falls back to the
    /// `initialize` handshake; `modern` (or `2026-07-28`) and `legacy` allow only that era.
    /// Applies to the --url or --stdio server and overrides each config server's `era`
    /// (default: the config's, else auto).
    #[arg(long, global = true, value_enum, value_name = "ERA")]
    pub(crate) era: Option<EraArg>,
    /// Bound each call, and each server's startup (unless --startup-timeout is given), in
    /// seconds.
    #[arg(long, global = true, value_name = "SECS", value_parser = parse_seconds)]
    pub(crate) timeout: Option<f64>,
    /// Bound each server's startup (launch, initialize, first listing), in seconds; overrides
    /// the config's `startup_timeout_sec`/`startup_timeout_ms` and --timeout (default 30).
    #[arg(long, global = true, value_name = "SECS", value_parser = parse_seconds)]
    pub(crate) startup_timeout: Option<f64>,
    #[command(subcommand)]
    pub(crate) command: McpCommand,
}

/// A provider ref (`--model`, `--provider`): `plugin/<plugin>/<rest>`, each part non-empty
/// (spec §14.1). Whether an extension serves it is known only once they are booted.
fn parse_provider_ref(text: &str) -> Result<String, String> {
    let parts = text
        .strip_prefix("plugin/")
        .and_then(|rest| rest.split_once('/'));
    match parts {
        Some((plugin, rest)) if !plugin.is_empty() && !rest.is_empty() => Ok(text.to_owned()),
        _ => Err(format!(
            "a provider ref is plugin/<plugin>/<provider>/<model> (see `sidewire ext providers`), got {text:?}"
        )),
    }
}

/// A `--root` value: an existing directory, made absolute (a typo is caught here rather than
/// offered to a server).
fn parse_root(text: &str) -> Result<PathBuf, String> {
    let path = std::path::absolute(text).map_err(|err| format!("{text:?}: {err}"))?;
    if path.is_dir() {
        Ok(path)
    } else {
        Err(format!("{text:?} is not a directory"))
    }
}

/// A `--header` value: `Name: value`.
fn parse_header(text: &str) -> Result<(String, String), String> {
    match text.split_once(':') {
        Some((name, value)) if !name.trim().is_empty() => {
            Ok((name.trim().to_owned(), value.trim().to_owned()))
        }
        _ => Err(format!("a header is 'Name: value', got {text:?}")),
    }
}

/// A `-e` value: `KEY=VALUE`.
fn parse_env(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((key, value)) if !key.is_empty() => Ok((key.to_owned(), value.to_owned())),
        _ => Err(format!(
            "an environment variable is KEY=VALUE, got {text:?}"
        )),
    }
}

/// A duration flag's value: a positive, finite number of seconds.
fn parse_seconds(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(secs) if secs.is_finite() && secs > 0.0 && secs < 1e9 => Ok(secs),
        _ => Err(format!("a positive number of seconds, got {text:?}")),
    }
}

/// The values of `--log-level` and `mcp log-level` (the MCP log levels).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
#[allow(missing_docs)]
pub(crate) enum LogLevelArg {
    Debug,
    Info,
    Notice,
    Warning,
    Error,
    Critical,
    Alert,
    Emergency,
}

impl From<LogLevelArg> for sidewire_mcp::LogLevel {
    fn from(level: LogLevelArg) -> Self {
        use sidewire_mcp::LogLevel as L;
        match level {
            LogLevelArg::Debug => L::Debug,
            LogLevelArg::Info => L::Info,
            LogLevelArg::Notice => L::Notice,
            LogLevelArg::Warning => L::Warning,
            LogLevelArg::Error => L::Error,
            LogLevelArg::Critical => L::Critical,
            LogLevelArg::Alert => L::Alert,
            LogLevelArg::Emergency => L::Emergency,
        }
    }
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum HttpTransport {
    /// Streamable HTTP, falling back to legacy HTTP+SSE when the server answers like one.
    Auto,
    /// The same as `auto` (the MCP `type: "http"`).
    Http,
    /// Legacy HTTP+SSE only.
    Sse,
}

/// The values of `--era` (see [`sidewire_mcp::EraChoice`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum EraArg {
    /// Probe with `server/discover`; fall back to `initialize` on a legacy answer.
    Auto,
    /// 2026-07-28 only.
    #[value(alias = "2026-07-28")]
    Modern,
    /// 2024-11-05 … 2025-11-25 only (`initialize`).
    Legacy,
}

impl From<EraArg> for sidewire_mcp::EraChoice {
    fn from(era: EraArg) -> Self {
        match era {
            EraArg::Auto => sidewire_mcp::EraChoice::Auto,
            EraArg::Modern => sidewire_mcp::EraChoice::Modern,
            EraArg::Legacy => sidewire_mcp::EraChoice::Legacy,
        }
    }
}

#[derive(Debug, Subcommand)]
pub(crate) enum McpCommand {
    /// The servers: status, and failures with their stderr tails.
    Servers,
    /// The tools, under their namespaced names.
    Tools,
    /// Call a tool: `call TOOL a=1 b=two` (typed by the tool's input schema), or
    /// `call TOOL --args '{"a":1}'` (exact JSON). Text mode prints the content (an image or
    /// audio as a one-line summary) and the structured content only when there is no text;
    /// piped or redirected, a text is written as the tool sent it, byte for byte.
    Call {
        /// The namespaced name (`mcp__<server>__<tool>`) or, when unambiguous, the tool's own.
        tool: String,
        /// Arguments as key=value pairs: each value becomes the type the tool's input schema
        /// says (`message=123` is the string "123" for a string); an array's key may repeat,
        /// an object is JSON. A single JSON object here is taken as --args.
        #[arg(value_name = "KEY=VALUE")]
        args: Vec<String>,
        /// The arguments as one exact JSON object, sent as it is.
        #[arg(long = "args", value_name = "JSON", conflicts_with = "args")]
        json_args: Option<String>,
        /// Print the structured content too, even when the result has text.
        #[arg(long)]
        structured: bool,
        /// Write the result's images, audio and binary resources into DIR.
        #[arg(long, value_name = "DIR")]
        save: Option<PathBuf>,
    },
    /// Set each server's logging level (`logging/setLevel`; in the modern era, carried on
    /// each request) and print what it logs on stderr for the rest of the command.
    LogLevel {
        /// The lowest level to receive.
        #[arg(value_enum)]
        level: LogLevelArg,
    },
    /// The prompts.
    Prompts,
    /// Fill in a prompt: `prompt NAME key=value...`.
    Prompt {
        /// The namespaced name or, when unambiguous, the prompt's own.
        name: String,
        /// Arguments as key=value pairs.
        args: Vec<String>,
    },
    /// The resources.
    Resources,
    /// The resource templates.
    Templates,
    /// Read a resource.
    Read {
        /// Its URI.
        uri: String,
    },
    /// Ping every server.
    Ping,
    /// Authorize with an HTTP server now (OAuth): prints the sign-in URL on stderr, opens the
    /// browser, and stores the tokens under $SIDEWIRE_HOME/mcp/oauth. With --url, the ad hoc
    /// server (named `adhoc`).
    Login {
        /// The server's name in the config (or a single --server).
        server: Option<String>,
        /// Print the URL only; do not start a browser.
        #[arg(long)]
        no_browser: bool,
        /// Follow the authorization URL without a person, as a signed-in browser would (for
        /// authorization servers that grant at once: tests, CI).
        #[arg(long, conflicts_with = "no_browser")]
        headless: bool,
    },
    /// Forget a server's stored tokens and client registration (by name: every record of that
    /// name; with --url: that URL's). Says whether there was one.
    Logout {
        /// The server's name (needs no config).
        server: Option<String>,
    },
    /// Stored authorizations.
    #[command(subcommand)]
    Auth(AuthCommand),
    /// Serve the selected servers as one MCP server (a gateway): on stdin/stdout by default,
    /// or over Streamable HTTP with --listen. Every tool is named `<alias>__<tool>` (the
    /// alias defaults to the server's config name), every call goes through the installed
    /// extensions' chain and the --policy, and each call gets one audit record.
    Serve(ServeArgs),
}

/// `sidewire mcp serve`.
#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    /// Serve Streamable HTTP on ADDR (path /mcp) instead of stdin/stdout. An address other
    /// than loopback needs a bearer token (--token-file or --token-env).
    #[arg(long, value_name = "ADDR")]
    pub(crate) listen: Option<std::net::SocketAddr>,
    /// The host's verdict on a tool no list names: allow, read-only (tools whose readOnlyHint
    /// is true; others are denied unless an extension allows the call), or deny.
    #[arg(long, value_enum, default_value = "read-only")]
    pub(crate) policy: PolicyArg,
    /// A tool the host always allows (its gateway name; a trailing * matches a prefix).
    #[arg(long = "allow-tool", value_name = "PATTERN")]
    pub(crate) allow_tools: Vec<String>,
    /// A tool hidden: neither listed nor callable (its gateway name; a trailing * matches a
    /// prefix).
    #[arg(long = "deny-tool", value_name = "PATTERN")]
    pub(crate) deny_tools: Vec<String>,
    /// A server's alias, the prefix of its names: `[a-z][a-z0-9-]{0,15}`.
    #[arg(long = "alias", value_name = "SERVER=ALIAS", value_parser = parse_alias)]
    pub(crate) aliases: Vec<(String, String)>,
    /// Serve the one selected server under its own names (a transport bridge).
    #[arg(long)]
    pub(crate) no_prefix: bool,
    /// A server that keeps state per client: each client session gets an instance of its own
    /// (a stdio connection is one session; a modern HTTP request, which has none, uses the
    /// shared instance). Repeat for several.
    #[arg(long = "stateful", value_name = "SERVER")]
    pub(crate) stateful: Vec<String>,
    /// The most instances of stateful servers at once; when all are taken, the longest
    /// unused one is closed for a new session.
    #[arg(long, value_name = "N", default_value_t = sidewire_gateway::DEFAULT_MAX_INSTANCES as u64,
          value_parser = clap::value_parser!(u64).range(1..=4096))]
    pub(crate) max_instances: u64,
    /// Close an instance of a stateful server after SECONDS unused.
    #[arg(long, value_name = "SECONDS",
          default_value_t = sidewire_gateway::DEFAULT_INSTANCE_IDLE.as_secs(),
          value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) instance_idle: u64,
    /// The name clients register the gateway under (it sets how long a tool name may be:
    /// `mcp__<name>__<tool>` fits 64 characters).
    #[arg(long, value_name = "NAME", default_value = sidewire_gateway::DEFAULT_NAME)]
    pub(crate) name: String,
    /// Where the per-call audit records go (JSON lines): a file, or - for stdout (with
    /// --listen only). Default: $SIDEWIRE_HOME/mcp-serve-audit.jsonl.
    #[arg(long, value_name = "FILE")]
    pub(crate) audit: Option<PathBuf>,
    /// Record each call's arguments in its audit record (secrets redacted).
    #[arg(long)]
    pub(crate) audit_arguments: bool,
    /// Read the bearer token HTTP clients must send from FILE (its first line).
    #[arg(
        long,
        value_name = "FILE",
        requires = "listen",
        conflicts_with = "token_env"
    )]
    pub(crate) token_file: Option<PathBuf>,
    /// Read the bearer token HTTP clients must send from the environment variable VAR.
    #[arg(long, value_name = "VAR", requires = "listen")]
    pub(crate) token_env: Option<String>,
    /// Seal session ids, cursors and request states with the secret in FILE (its first line,
    /// at least 32 bytes), so replicas given the same file serve each other's clients behind
    /// a load balancer.
    #[arg(long, value_name = "FILE", requires = "listen")]
    pub(crate) state_key_file: Option<PathBuf>,
}

/// `--policy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum PolicyArg {
    /// Every call allowed by the host.
    Allow,
    /// Read-only tools allowed, others denied.
    ReadOnly,
    /// Every call denied by the host.
    Deny,
}

fn parse_alias(text: &str) -> Result<(String, String), String> {
    let (server, alias) = text
        .split_once('=')
        .ok_or_else(|| "expected SERVER=ALIAS".to_owned())?;
    sidewire_gateway::Alias::new(alias).map_err(|err| err.to_string())?;
    Ok((server.to_owned(), alias.to_owned()))
}

#[derive(Debug, Subcommand)]
pub(crate) enum AuthCommand {
    /// Every stored authorization: server, issuer, client id, whether a token is stored and
    /// when it expires, whether it can be refreshed, scopes. Never a token or secret.
    Status,
}

#[derive(Debug, Subcommand)]
pub(crate) enum HooksCommand {
    /// Every hook the files hold: its id, whether it runs (a user's, approved, or not
    /// approved), whether it is required, its event, matcher, file and command.
    List,
    /// Approve project hooks to run (this exact command: a changed one asks again).
    Approve {
        /// Hook ids (at least their first 6 digits), from `sidewire hooks list`.
        ids: Vec<String>,
        /// Every hook the files hold.
        #[arg(long, conflicts_with = "ids")]
        all: bool,
        /// Mark them required: a failure (an exit other than 0 or 2, the timeout, output over
        /// the cap) fails the operation instead of counting as continue. Works for a user's
        /// hooks too.
        #[arg(long)]
        required: bool,
    },
    /// Take back approvals and required marks.
    Revoke {
        /// Hook ids (at least their first 6 digits).
        ids: Vec<String>,
        /// Every hook the files hold.
        #[arg(long, conflicts_with = "ids")]
        all: bool,
    },
    /// Run the hooks of one event that may run on an input, and show each hook's trace and the
    /// merged decision.
    Test {
        /// The event, as the files name it: PreToolUse, PostToolUse, PermissionRequest,
        /// UserPromptSubmit, PreCompact, SessionStart, SessionEnd.
        event: String,
        /// The hook's stdin JSON (`{"tool_name": "Bash", "tool_input": {...}}`), or `-` to read
        /// it from stdin; `session_id`, `cwd`, `permission_mode` and `hook_event_name` are
        /// filled in when absent.
        input: String,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum PluginCommand {
    /// Install a plugin directory, or a plugin built into sidewire (asks for consent after
    /// showing what it may do).
    Install {
        /// The directory holding `reasonix-plugin.json`.
        #[arg(required_unless_present = "builtin", conflicts_with = "builtin")]
        path: Option<PathBuf>,
        /// Install a plugin built into this binary instead of a directory: `demo` is the demo's
        /// sidecar (the starter rewrite, an allow-all permission policy, a status card, and the
        /// scripted model plugin/sidewire-demo/scripted/echo-1). It runs this binary by its
        /// absolute path: install it again with --replace after moving sidewire.
        #[arg(long, value_name = "NAME", conflicts_with = "link")]
        builtin: Option<BuiltinPlugin>,
        /// Use the directory in place instead of copying it.
        #[arg(long)]
        link: bool,
        /// Replace an installed plugin of the same name.
        #[arg(long)]
        replace: bool,
        /// Consent without asking (required when not interactive).
        #[arg(long)]
        yes: bool,
    },
    /// The installed plugins.
    List,
    /// One plugin and what it may do.
    Show {
        /// The plugin id.
        name: String,
    },
    /// Uninstall a plugin.
    Remove {
        /// The plugin id.
        name: String,
    },
    /// Let a plugin start again.
    Enable {
        /// The plugin id.
        name: String,
    },
    /// Keep a plugin from starting.
    Disable {
        /// The plugin id.
        name: String,
    },
}

/// The plugins `plugin install --builtin` installs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum BuiltinPlugin {
    /// The demo's sidecar, `sidewire-demo` (what `sidewire demo` installs in its temporary
    /// state directory).
    Demo,
}

#[derive(Debug, Subcommand)]
pub(crate) enum ExtCommand {
    /// Boot and handshake the installed extensions (or one) and print what they declare.
    Check {
        /// Only this plugin.
        name: Option<String>,
    },
    /// Run a hook point's chain over a payload and print the outcome and the trace.
    Intercept {
        /// The hook point, e.g. `input.receive`.
        point: String,
        /// The payload as JSON, or `-` to read it from stdin.
        payload: String,
    },
    /// Emit an event to the extensions of a hook point.
    Event {
        /// The hook point.
        point: String,
        /// The payload as JSON.
        payload: String,
    },
    /// The models the extensions serve (their provider catalog), by ref.
    Providers,
    /// The tools Extension Protocol v2 plugins serve (`ext__<plugin>__<tool>`), offered to
    /// `run`'s model and by `mcp serve` beside the MCP tools.
    Tools,
    /// Stream one completion from a provider: the answer as it arrives, then the usage.
    /// Ctrl-C cancels the stream.
    Complete {
        /// The provider ref (`plugin/<plugin>/<provider>/<model>`).
        #[arg(long = "provider", value_name = "REF", value_parser = parse_provider_ref)]
        provider: String,
        /// The `maxTokens` of the request.
        #[arg(long, value_name = "N", default_value_t = sidewire_agent::Agent::DEFAULT_MAX_TOKENS)]
        max_tokens: u64,
        /// Fail the stream when nothing arrives for this many seconds (default 60); the
        /// sidecar is told to stop. The answer is bounded too: past 1 MiB the stream is
        /// cancelled and the command fails.
        #[arg(long, value_name = "SECS", value_parser = parse_seconds)]
        idle_timeout: Option<f64>,
        /// The prompt, as the one user message.
        text: String,
    },
    /// Check that a sidecar speaks Extension Protocol v1 or v2: a scripted host runs every
    /// sidecar-side statement of the spec's conformance checklist (and, for v2, of the v2
    /// delta's) against it and reports each. Exits 0 only when nothing failed.
    Conformance(ConformanceArgs),
}

/// A protocol version on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ProtocolArg {
    /// Extension Protocol v1 (`reasonix.extension.v1`).
    #[value(name = "1")]
    V1,
    /// Extension Protocol v2 (`reasonix.extension.v2`).
    #[value(name = "2")]
    V2,
}

impl ProtocolArg {
    pub(crate) fn profile(self) -> sidewire_ext_conformance::ProtocolProfile {
        match self {
            ProtocolArg::V1 => sidewire_ext_conformance::ProtocolProfile::V1,
            ProtocolArg::V2 => sidewire_ext_conformance::ProtocolProfile::V2,
        }
    }
}

/// `sidewire ext conformance`: what to check and how.
#[derive(Debug, Args)]
pub(crate) struct ConformanceArgs {
    /// An installed plugin id, or a package directory holding reasonix-plugin.json. Or leave
    /// it out and give the sidecar's command after `--` with --manifest.
    pub(crate) target: Option<String>,
    /// The manifest describing the command given after `--`.
    #[arg(long, value_name = "FILE")]
    pub(crate) manifest: Option<PathBuf>,
    /// Only the statements of this spec section (`2.3`, `6`), `17` for every checklist item,
    /// `17.N` for item N, `delta` for every item of the v2 delta's checklist, `delta.N` for its
    /// item N, or a statement id (`S-ui`, `D15`); repeatable.
    #[arg(long, value_name = "SECTION")]
    pub(crate) only: Vec<String>,
    /// List the statements (with what cannot be checked, and why) without running anything.
    #[arg(long)]
    pub(crate) list: bool,
    /// Also run the checks that wait for a 30 s spec deadline.
    #[arg(long)]
    pub(crate) slow: bool,
    /// The protocol version to check against (default: the one the manifest's apiVersion
    /// picks, as a host does). With --list, only the statements of that version.
    #[arg(long, value_enum, value_name = "VERSION")]
    pub(crate) protocol: Option<ProtocolArg>,
    /// The sidecar's command and arguments (with --manifest); a command without `/` is looked
    /// up on PATH.
    #[arg(last = true, value_name = "COMMAND")]
    pub(crate) command: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_args(std::iter::once("sidewire").chain(line.iter().copied()))
    }

    fn mcp(line: &[&str]) -> McpArgs {
        match parse(line).expect("parses").command {
            Command::Mcp(args) => *args,
            other => panic!("not mcp: {other:?}"),
        }
    }

    #[test]
    fn words_after_the_double_dash_that_look_like_flags_are_the_servers() {
        let cli = parse(&["mcp", "tools", "--stdio", "--", "server", "--json", "-x"]).unwrap();
        assert!(!cli.json, "--json after `--` is the server's");
        let Command::Mcp(args) = cli.command else {
            panic!("not mcp");
        };
        assert!(args.stdio);
        assert_eq!(args.stdio_command, ["server", "--json", "-x"]);
        assert!(matches!(args.command, McpCommand::Tools));
        // Only `--` starts the server's command line: a stray word before it is an error.
        let err = parse(&["mcp", "tools", "--stdio", "server"]).expect_err("an error");
        assert_eq!(err.kind(), clap::error::ErrorKind::UnknownArgument);
    }

    #[test]
    fn the_double_dash_follows_any_mcp_subcommand_and_its_own_arguments() {
        let args = mcp(&[
            "mcp",
            "call",
            "slow",
            "steps=1",
            "--stdio",
            "--",
            "server",
            "--timeout",
            "1",
            "--",
        ]);
        assert_eq!(args.stdio_command, ["server", "--timeout", "1", "--"]);
        assert_eq!(args.timeout, None);
        let McpCommand::Call {
            tool, args: words, ..
        } = args.command
        else {
            panic!("not call");
        };
        assert_eq!(
            (tool.as_str(), words.as_slice()),
            ("slow", &["steps=1".to_owned()][..])
        );
        // `--stdio` before the subcommand, the command after it: the same.
        let args = mcp(&["mcp", "--stdio", "ping", "--", "server", "-v"]);
        assert_eq!(args.stdio_command, ["server", "-v"]);
        assert!(matches!(args.command, McpCommand::Ping));
    }

    #[test]
    fn stdio_without_a_command_is_a_usage_error() {
        for line in [
            &["mcp", "tools", "--stdio"][..],
            &["mcp", "tools", "--stdio", "--"],
        ] {
            let err = parse(line).expect_err("a usage error");
            assert_eq!(err.kind(), clap::error::ErrorKind::MissingRequiredArgument);
            assert!(
                err.to_string()
                    .contains("--stdio needs the server's command"),
                "{err}"
            );
            assert_eq!(err.exit_code(), 2);
        }
        // Without --stdio the words after `--` are refused, not ignored; with --url they
        // conflict.
        for line in [
            &["mcp", "tools", "--", "server"][..],
            &["mcp", "--url", "http://x", "tools", "--", "server"],
        ] {
            let err = parse(line).expect_err("a usage error");
            assert_eq!(err.kind(), clap::error::ErrorKind::ArgumentConflict);
            assert_eq!(err.exit_code(), 2);
        }
    }

    #[test]
    fn the_provider_commands_take_their_ref_and_text() {
        let Command::Ext(ExtCommand::Complete {
            provider,
            max_tokens,
            text,
            idle_timeout,
        }) = parse(&[
            "ext",
            "complete",
            "--provider",
            "plugin/p/m/1",
            "hello there",
        ])
        .expect("parses")
        .command
        else {
            panic!("not ext complete");
        };
        assert_eq!(
            (provider.as_str(), max_tokens, text.as_str(), idle_timeout),
            ("plugin/p/m/1", 4096, "hello there", None)
        );
        assert!(
            parse(&["ext", "complete", "hello"]).is_err(),
            "--provider is required"
        );
        assert!(matches!(
            parse(&["ext", "providers", "--json"]).unwrap().command,
            Command::Ext(ExtCommand::Providers)
        ));
        assert!(matches!(
            parse(&["ext", "tools"]).unwrap().command,
            Command::Ext(ExtCommand::Tools)
        ));
        let Command::Run {
            model, max_rounds, ..
        } = parse(&["run", "--model", "plugin/p/m/1", "--max-rounds", "3"])
            .unwrap()
            .command
        else {
            panic!("not run");
        };
        assert_eq!((model.as_deref(), max_rounds), (Some("plugin/p/m/1"), 3));
        let err = parse(&["run", "--max-rounds", "3"]).expect_err("--max-rounds needs --model");
        assert_eq!(err.kind(), clap::error::ErrorKind::MissingRequiredArgument);
        let Command::Run { idle_timeout, .. } =
            parse(&["run", "--model", "plugin/p/m/1", "--idle-timeout", "2.5"])
                .unwrap()
                .command
        else {
            panic!("not run");
        };
        assert_eq!(idle_timeout, Some(2.5));
        let err = parse(&["run", "--idle-timeout", "3"]).expect_err("--idle-timeout needs --model");
        assert_eq!(err.kind(), clap::error::ErrorKind::MissingRequiredArgument);
        for bad in ["0", "-1", "nan", "x"] {
            let line = [
                "ext",
                "complete",
                "--provider",
                "p",
                "--idle-timeout",
                bad,
                "hi",
            ];
            assert!(parse(&line).is_err(), "{bad}");
        }
    }

    #[test]
    fn plugin_install_takes_a_directory_or_a_builtin_but_not_both() {
        let install = |line: &[&str]| match parse(line).map(|cli| cli.command) {
            Ok(Command::Plugin(PluginCommand::Install { path, builtin, .. })) => {
                Ok((path, builtin))
            }
            Ok(other) => panic!("not plugin install: {other:?}"),
            Err(err) => Err(err.kind()),
        };
        assert_eq!(
            install(&["plugin", "install", "--builtin", "demo", "--yes"]),
            Ok((None, Some(BuiltinPlugin::Demo)))
        );
        assert_eq!(
            install(&["plugin", "install", "dir"]),
            Ok((Some(PathBuf::from("dir")), None))
        );
        use clap::error::ErrorKind;
        assert_eq!(
            install(&["plugin", "install"]),
            Err(ErrorKind::MissingRequiredArgument)
        );
        assert_eq!(
            install(&["plugin", "install", "dir", "--builtin", "demo"]),
            Err(ErrorKind::ArgumentConflict)
        );
        assert_eq!(
            install(&["plugin", "install", "--builtin", "demo", "--link"]),
            Err(ErrorKind::ArgumentConflict)
        );
        assert_eq!(
            install(&["plugin", "install", "--builtin", "nosuch"]),
            Err(ErrorKind::InvalidValue)
        );
    }

    #[test]
    fn the_era_flag_takes_a_name_or_the_modern_version() {
        let era = |word: &str| mcp(&["mcp", "--era", word, "tools", "--url", "http://x"]).era;
        assert_eq!(era("auto"), Some(EraArg::Auto));
        assert_eq!(era("modern"), Some(EraArg::Modern));
        assert_eq!(era("2026-07-28"), Some(EraArg::Modern));
        assert_eq!(era("legacy"), Some(EraArg::Legacy));
        assert_eq!(mcp(&["mcp", "tools", "--url", "http://x"]).era, None);
        let err = parse(&["mcp", "--era", "2025-11-25", "tools"]).expect_err("a usage error");
        assert_eq!(err.kind(), clap::error::ErrorKind::InvalidValue);
        assert_eq!(
            sidewire_mcp::EraChoice::from(EraArg::Modern),
            sidewire_mcp::EraChoice::Modern
        );
    }
}
