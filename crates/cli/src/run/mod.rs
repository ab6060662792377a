//! `sidewire run`: the interactive host. It boots the installed extensions and the configured
//! MCP servers, then reads lines: plain text goes through `input.receive`; `/help`, `/tools`,
//! `/call`, prompts as `/<server>:<prompt>`, plugin UI actions as `/<plugin>:<action>`,
//! `/submit`, `/ui`, `/root`, `/reload` and `/quit` are commands; `@<server>:<uri>` expands a
//! resource into the input.
//!
//! The MCP servers are offered the roots of `--root` (else the config's `roots`); `/root add
//! DIR` and `/root remove DIR` change them, and a legacy-era server is sent
//! `notifications/roots/list_changed`. With no root at the start, no `roots` capability is
//! declared, and a server learns of roots added later only when it restarts.
//!
//! On a terminal it is a line editor ([`input`]: prompt, history, completion) with a progress
//! line while a call runs ([`progress`]); Ctrl-C cancels the call in flight (the MCP server is
//! sent `notifications/cancelled`), clears the line being typed, and quits on the second press
//! at an empty prompt, as Ctrl-D does. A plugin's `host/ui/request` prompt is asked field by
//! field on the next lines (an empty line dismisses it). Surfaces are printed readably, at most
//! a few times a second however fast they are published ([`ui`]).
//!
//! Off a terminal (a pipe, a script) it reads stdin line by line and draws nothing; prompts are
//! answered `{"cancelled": true}`, and a SIGINT while it waits for input ends it (130). With
//! `--json` every outcome is one JSON object on its own line on stdout (see README, `run`). A
//! line with a control character is refused whole ([`command::check_line`]). SIGTERM and
//! SIGHUP end the session in order wherever it is.
//!
//! With `--model REF`, plain text runs an agent turn instead (`sidewire-agent`): the answer
//! streams as it arrives, each tool call prints a compact report, and the conversation is kept
//! across lines (bounded); Ctrl-C cancels the turn (the provider stream is cancelled on the
//! sidecar).
//!
//! Each line is parsed into a [`Command`] first, then run by the [`Repl`], which holds what the
//! loop needs: the booted extensions and servers, and the surfaces and prompts that the events
//! task shares with it.

mod command;
mod input;
mod progress;
mod ui;

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use serde_json::{Value, json};
use sidewire_agent::ToolCall;
use sidewire_ext_host::{ExtensionHost, HostConfig};
use sidewire_ext_sdk::protocol::FieldKind;
use sidewire_ext_sdk::protocol::{HookPayload, HookPoint, InputPayload, UiHost};
use sidewire_mcp::{NoHandler, Root, ToolCallOptions};

use self::command::{CallArgs, Command, Namespace, RootCommand};
use self::input::{EditorThread, Input, Names, Read};
use self::progress::CallProgress;
use self::ui::{Pending, Surfaces, ask};
use crate::out::Out;
use crate::stream_out::TurnPrinter;
use crate::{CtrlC, EndedByCtrlC, Interrupted, safe};

/// `run --model`: the provider of each turn and its bounds.
#[derive(Debug)]
pub(crate) struct AgentMode {
    pub(crate) model: String,
    pub(crate) max_rounds: u32,
    /// `--idle-timeout`: the idle bound of each turn's stream (default: the host's, 60 s).
    pub(crate) idle_timeout: Option<std::time::Duration>,
}

/// What `run` is given.
#[derive(Debug)]
pub(crate) struct Options {
    /// The MCP config file (default: `./.mcp.json` when present).
    pub(crate) config: Option<PathBuf>,
    /// `--root`: the directories offered to the MCP servers as roots (absolute, existing);
    /// given, they replace the config's `roots`.
    pub(crate) roots: Vec<PathBuf>,
    /// Let the host's policy allow tools that are not marked read-only (`--allow-tools`).
    pub(crate) allow_tools: bool,
    /// With `--model`.
    pub(crate) agent: Option<AgentMode>,
    /// `-v`: each call's whole report (the chains' decisions, the policy, the audit).
    pub(crate) verbose: bool,
    /// SIGTERM or SIGHUP: end the session in order.
    pub(crate) interrupted: Interrupted,
    /// SIGINT: cancel the call in flight.
    pub(crate) ctrl_c: CtrlC,
}

/// The name of the history file in `$SIDEWIRE_HOME`.
const HISTORY_FILE: &str = "run_history";

/// The most roots `run` offers at once (`--root`, the config's, `/root add`): each is one entry
/// of every `roots/list` answer. The same bound as a config file's.
pub(super) const MAX_ROOTS: usize = sidewire_mcp_config::MAX_CONFIG_ROOTS;

pub(crate) async fn run(options: Options, out: &Out) -> anyhow::Result<()> {
    let started = Instant::now();
    let home = crate::sidewire_home()?;
    let workspace = std::env::current_dir().context("cannot read the current directory")?;

    out.note("booting extensions...");
    let session = crate::session_id();
    let mut host_config = HostConfig::new(&home, session.clone(), workspace)
        .ui_host(UiHost::Tui)
        .audit_log(home.join("audit.jsonl"));
    // On a terminal, each project hook nobody approved is asked about once.
    let ask = std::io::IsTerminal::is_terminal(&std::io::stdin())
        && std::io::IsTerminal::is_terminal(&std::io::stderr())
        && !out.json;
    if let Some(hooks) = crate::hooks_cmd::member(out, ask, &session)? {
        host_config = host_config.member(hooks);
    }
    if let Some(idle) = options.agent.as_ref().and_then(|mode| mode.idle_timeout) {
        host_config = host_config.stream_idle_timeout(idle);
    }
    let (extensions, events) = ExtensionHost::boot(host_config)
        .await
        .context("booting the installed extensions")?;
    for failure in &extensions.report().failed {
        out.note(format!(
            "warning: extension {}",
            safe::block(&failure.to_string(), "  ")
        ));
    }
    // A model no extension serves would fail every line: said once, before any is read.
    if let Some(mode) = &options.agent
        && !(extensions.providers().iter()).any(|entry| entry.descriptor.reference == mode.model)
    {
        extensions.shutdown().await;
        anyhow::bail!(
            "no running extension serves provider {} (`sidewire ext providers` lists the ones that do)",
            safe::line(&mode.model)
        );
    }

    let (mcp, driver) = sidewire_mcp::McpHost::new(NoHandler);
    let mcp_task = tokio::spawn(driver);
    let config = options.config.or_else(|| {
        let default = PathBuf::from(".mcp.json");
        default.exists().then_some(default)
    });
    let loaded = match &config {
        Some(path) => Some(crate::mcp_cmd::config::load_file(path, None)?),
        None => None,
    };
    let roots: Vec<Root> = if options.roots.is_empty() {
        loaded.as_ref().map(|c| c.roots.clone()).unwrap_or_default()
    } else {
        options.roots.iter().map(Root::dir).collect()
    };
    anyhow::ensure!(
        roots.len() <= MAX_ROOTS,
        "{} roots given; at most {MAX_ROOTS} are offered",
        roots.len()
    );
    if !roots.is_empty() {
        // Before any server starts: each connects with them (and declares `roots`).
        mcp.set_roots(roots.clone()).await;
    }
    if let (Some(path), Some(loaded)) = (&config, loaded) {
        out.note(format!("starting MCP servers from {}...", path.display()));
        for failure in mcp.start_available(loaded.into_specs()).await {
            // The failure's parts, each once (the library's whole text names the server
            // again).
            out.note(format!(
                "warning: MCP server {} failed to start: {}",
                safe::line(&failure.server),
                safe::block(&crate::mcp_cmd::failure_text(&failure), "  ")
            ));
        }
    }
    let servers = mcp
        .status()
        .iter()
        .filter(|s| s.state == sidewire_mcp::ServerState::Running)
        .count();
    let millis = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    out.line(format!(
        "ready: {} extension(s), {servers} MCP server(s), in {millis} ms; /help for the commands, /quit to leave",
        extensions.sidecars().len(),
    ));
    out.json_line(&json!({
        "event": "ready", "extensions": extensions.sidecars().len(), "servers": servers, "millis": millis,
    }));

    let agent = match options.agent {
        Some(mode) => {
            out.line(format!(
                "model: {} (each line of text is an agent turn)",
                safe::line(&mode.model)
            ));
            let policy = if options.allow_tools {
                sidewire_agent::ToolPolicy::AllowAll
            } else {
                sidewire_agent::ToolPolicy::ReadOnly
            };
            let agent = sidewire_agent::Agent::new(mode.model)
                .max_rounds(mode.max_rounds)
                .tool_policy(policy)
                .session_id(crate::session_id());
            Some(agent)
        }
        None => None,
    };
    // The line editor, prompts and the progress line only on a terminal, and never with
    // `--json` (its output is for a program).
    let is_terminal = |terminal: bool| terminal && !out.json;
    let terminal = is_terminal(
        std::io::IsTerminal::is_terminal(&std::io::stdin())
            && std::io::IsTerminal::is_terminal(&std::io::stdout()),
    );
    let names = Arc::new(Mutex::new(Names::default()));
    let pending = Pending::default();
    // Whatever ends the session, the terminal is left in the mode it was found in.
    let _restore = terminal.then(TerminalMode::save);
    let mut input = if terminal {
        let editor = EditorThread::start(
            home.join(HISTORY_FILE),
            Arc::clone(&names),
            pending.waiting(),
        );
        match editor {
            Ok(editor) => Input::Editor(editor),
            Err(err) => {
                out.note(format!(
                    "warning: no line editor ({}); reading lines as they come",
                    safe::line(&format!("{err:#}"))
                ));
                Input::lines()
            }
        }
    } else {
        Input::lines()
    };
    let editing = matches!(input, Input::Editor(_));
    let repl = Repl {
        extensions: &extensions,
        mcp: &mcp,
        surfaces: Arc::default(),
        pending,
        roots: Mutex::new(roots),
        names,
        allow_tools: options.allow_tools,
        verbose: options.verbose,
        progress_bar: editing && std::io::IsTerminal::is_terminal(&std::io::stderr()),
        editing,
        session: crate::session_id(),
        calls: AtomicU64::new(0),
        agent,
        conversation: Mutex::default(),
        out: *out,
    };
    let quitting = Arc::new(AtomicBool::new(false));
    let events_task = tokio::spawn(ui::print_events(
        events,
        Arc::clone(&repl.surfaces),
        Arc::clone(&repl.pending),
        editing,
        Arc::clone(&quitting),
        *out,
    ));

    let result = repl
        .run(&mut input, options.interrupted, options.ctrl_c)
        .await;
    // The extensions stop because the session ends: their surfaces going is no news.
    quitting.store(true, Ordering::SeqCst);
    repl.cancel_pending();
    extensions.shutdown().await;
    mcp.shutdown().await;
    let _ = tokio::time::timeout(Duration::from_secs(5), mcp_task).await;
    events_task.abort();
    result
}

/// The terminal's mode when `run` started, put back when it ends (the line editor may be
/// reading, in raw mode, when a signal ends the session).
#[derive(Debug)]
struct TerminalMode(rustix::termios::Termios);

impl TerminalMode {
    fn save() -> Option<TerminalMode> {
        rustix::termios::tcgetattr(std::io::stdin())
            .ok()
            .map(TerminalMode)
    }
}

impl Drop for TerminalMode {
    fn drop(&mut self) {
        let _ = rustix::termios::tcsetattr(
            std::io::stdin(),
            rustix::termios::OptionalActions::Now,
            &self.0,
        );
    }
}

/// The interactive loop and what it acts on. The events task shares `surfaces` and `pending`.
struct Repl<'a> {
    extensions: &'a ExtensionHost,
    mcp: &'a sidewire_mcp::McpHost,
    surfaces: Arc<Mutex<Surfaces>>,
    pending: Pending,
    /// The roots offered to the MCP servers (at most [`MAX_ROOTS`]).
    roots: Mutex<Vec<Root>>,
    /// What the line editor completes, refreshed before each read.
    names: Arc<Mutex<Names>>,
    /// Let the host's policy allow tools that are not marked read-only (`--allow-tools`).
    allow_tools: bool,
    /// `-v`: each call's whole report.
    verbose: bool,
    /// Show a call's progress as a live line on stderr.
    progress_bar: bool,
    /// Lines come from the line editor.
    editing: bool,
    /// The session's id, the first part of each `/call`'s id.
    session: String,
    /// The `/call`s made so far, the second part of each one's id: every call has its own, so
    /// a sidecar can tell two apart.
    calls: AtomicU64,
    /// With `--model`: plain text runs a turn of this agent.
    agent: Option<sidewire_agent::Agent>,
    /// The agent's conversation across lines (taken out for the length of a turn).
    conversation: Mutex<sidewire_agent::Conversation>,
    out: Out,
}

impl Repl<'_> {
    /// Reads lines to the end of input, `/quit`, Ctrl-D, two Ctrl-C in a row at an empty
    /// prompt, or an ending signal: a line answers a waiting prompt, or is parsed and run. A
    /// line's failure is printed and the loop goes on. Ctrl-C while a line runs cancels it
    /// (its future is dropped: the MCP server is told, a provider stream is cancelled).
    async fn run(
        &self,
        input: &mut Input,
        mut interrupted: Interrupted,
        mut ctrl_c: CtrlC,
    ) -> anyhow::Result<()> {
        // Ctrl-C presses in a row at an empty prompt.
        let mut interrupts = 0;
        loop {
            if self.editing {
                self.refresh_names();
            }
            // Branch order does not matter: each is cancel safe and the loop ends on the
            // signals.
            let read = tokio::select! {
                read = input.read() => read?,
                () = interrupted.wait() => break,
                // A SIGINT while waiting for input: on a terminal it can only come from a
                // Ctrl-C pressed just as a call ended, so it counts as one at the prompt;
                // from a pipe it ends the session as a shell expects.
                () = ctrl_c.recv() => {
                    if !self.editing {
                        return Err(EndedByCtrlC.into());
                    }
                    Read::Interrupted
                }
            };
            let line = match read {
                Read::Eof => break,
                Read::Interrupted => {
                    interrupts += 1;
                    if interrupts >= 2 {
                        break;
                    }
                    self.out
                        .note("(Ctrl-C again or Ctrl-D to quit; /help for the commands)");
                    continue;
                }
                Read::Line(line) => line,
            };
            interrupts = 0;
            let line = line.trim();
            if let Err(err) = command::check_line(line) {
                self.fail(&err.into());
                continue;
            }
            if self.answer_prompt(line) || line.is_empty() {
                continue;
            }
            input.remember(line);
            let result = match Command::parse(line) {
                Ok(Command::Quit) => break,
                Ok(command) => tokio::select! {
                    result = self.execute(command) => result,
                    // Dropping the line's future cancels its call (the MCP server is sent
                    // `notifications/cancelled`) or its turn (the provider stream is cancelled
                    // on the sidecar).
                    () = ctrl_c.recv() => {
                        self.out.note("cancelled");
                        self.out.json_line(&json!({ "event": "cancelled" }));
                        Ok(())
                    }
                    () = interrupted.wait() => break,
                },
                Err(err) => Err(err),
            };
            if let Err(err) = result {
                self.fail(&err);
            }
        }
        Ok(())
    }

    /// Prints a line's failure (and, with `--json`, an `error` event).
    fn fail(&self, err: &anyhow::Error) {
        self.out.error(err);
        self.out
            .json_line(&json!({ "event": "error", "message": format!("{err:#}") }));
    }

    /// What the line editor completes: tools, prompts and UI actions as they are now.
    fn refresh_names(&self) {
        let mut tools = Vec::new();
        for tool in self.mcp.tools() {
            tools.push(tool.tool.name.clone());
            tools.push(tool.name);
        }
        let mut items: Vec<String> = (self.mcp.prompts().into_iter())
            .map(|p| format!("/{}:{}", p.server, p.prompt.name))
            .collect();
        items.extend(
            (self.extensions.ui_actions().into_iter())
                .map(|(plugin, action)| format!("/{plugin}:{}", action.action_id)),
        );
        *crate::lock(&self.names) = Names { tools, items };
    }

    /// Cancels the prompts still waiting for an answer.
    fn cancel_pending(&self) {
        let mut queue = self.pending.lock();
        for (prompt, _) in queue.drain(..) {
            prompt.cancel();
        }
        self.pending.mark(&queue);
    }

    async fn execute(&self, command: Command<'_>) -> anyhow::Result<()> {
        let out = &self.out;
        match command {
            // The loop ends on it before it gets here.
            Command::Quit => {}
            Command::Help { topic } => {
                let text = command::help(topic)?;
                out.line(&text);
                out.json_line(&json!({ "event": "help", "text": text }));
            }
            Command::Tools => {
                let tools = self.mcp.tools();
                for tool in &tools {
                    out.line(format!(
                        "{}  {}",
                        safe::line(&tool.name),
                        safe::block(
                            tool.tool
                                .description
                                .as_deref()
                                .unwrap_or_default()
                                .trim_end(),
                            "    "
                        )
                    ));
                }
                // Then the extension tools of v2 plugins, as the model sees them.
                let extension_tools = self.extensions.tools();
                for tool in &extension_tools {
                    out.line(format!(
                        "{}  {}",
                        safe::line(&tool.name),
                        safe::block(tool.description.trim_end(), "    ")
                    ));
                }
                if out.json {
                    let mut tools: Vec<Value> = (tools.iter())
                        .map(|t| json!({ "name": t.name, "server": t.server, "description": t.tool.description }))
                        .collect();
                    tools.extend(extension_tools.iter().map(|t| {
                        json!({ "name": t.name, "plugin": t.plugin, "description": t.description })
                    }));
                    out.json_line(&json!({ "event": "tools", "tools": tools }));
                }
            }
            Command::Call { tool, args } => self.call(tool, args).await?,
            Command::Ui => self.ui(),
            Command::Reload => {
                let report =
                    (self.extensions.reload().await).context("reloading the extensions")?;
                out.line(format!(
                    "generation {}: started {:?}, adopted {:?}, failed {}",
                    report.generation,
                    report.started,
                    report.adopted,
                    report.failed.len()
                ));
                out.json_line(&json!({
                    "event": "reload", "generation": report.generation, "started": report.started,
                    "adopted": report.adopted, "failed": report.failed.len(),
                }));
            }
            Command::Submit {
                plugin,
                surface,
                values,
            } => {
                // A required field left out or empty is refused here, before the sidecar
                // gets a submission it must reject.
                let form = crate::lock(&self.surfaces).form(plugin, surface);
                if let Some(form) = form {
                    ui::check_submission(&form, &values)?;
                }
                let result = self.extensions.submit_form(plugin, surface, values).await?;
                out.line(format!("submitted: accepted={}", result.accepted));
                out.json_line(&json!({
                    "event": "submitted", "plugin": plugin, "surface": surface, "accepted": result.accepted,
                }));
            }
            Command::Item {
                command,
                namespace,
                owner,
                item,
                args,
            } => self.item(command, namespace, owner, item, args).await?,
            Command::Root(command) => self.root(command).await?,
            Command::Input(line) => self.input(line).await?,
        }
        Ok(())
    }

    /// `/root`, `/root add DIR`, `/root remove DIR`: the roots offered to the MCP servers,
    /// then (when they changed) the new list sent to every running server that declared the
    /// capability.
    async fn root(&self, command: RootCommand<'_>) -> anyhow::Result<()> {
        let out = &self.out;
        let changed = {
            let mut roots = crate::lock(&self.roots);
            match command {
                RootCommand::List => None,
                RootCommand::Add(dir) => {
                    let path = std::path::absolute(dir)
                        .with_context(|| format!("{} is not a usable path", safe::line(dir)))?;
                    anyhow::ensure!(path.is_dir(), "{} is not a directory", safe::line(dir));
                    let root = Root::dir(&path);
                    if roots.iter().any(|r| r.uri == root.uri) {
                        None
                    } else {
                        anyhow::ensure!(
                            roots.len() < MAX_ROOTS,
                            "there are {MAX_ROOTS} roots already, the most offered"
                        );
                        roots.push(root);
                        Some(roots.clone())
                    }
                }
                RootCommand::Remove(dir) => {
                    let uri = Root::dir(dir).uri;
                    let before = roots.len();
                    roots.retain(|r| r.uri != uri);
                    anyhow::ensure!(
                        roots.len() < before,
                        "{} is not a root; /root lists them",
                        safe::line(dir)
                    );
                    Some(roots.clone())
                }
            }
        };
        if let Some(roots) = changed {
            for (server, err) in self.mcp.set_roots(roots).await {
                if err.is_unsupported() {
                    out.note(format!(
                        "note: MCP server {} started without roots (none were given), so it \
                         gets them only when it restarts",
                        safe::line(&server)
                    ));
                } else {
                    out.note(format!(
                        "warning: MCP server {} was not told of the new roots: {}",
                        safe::line(&server),
                        safe::block(&err.to_string(), "  ")
                    ));
                }
            }
        }
        let roots = crate::lock(&self.roots).clone();
        if roots.is_empty() {
            out.line("no roots");
        }
        for root in &roots {
            out.line(safe::line(&root.uri));
        }
        out.json_line(&json!({ "event": "roots", "roots": roots }));
        Ok(())
    }

    /// `/call`: the tool found by its name (namespaced, or its own when only one server has
    /// it; an extension tool by its `ext__<plugin>__<tool>` name), the arguments typed, then the call through the permission chain on one pinned
    /// generation, its progress shown while it runs. A stopped call (blocked, denied, failed)
    /// is an error once its report is printed.
    async fn call(&self, tool: &str, args: CallArgs) -> anyhow::Result<()> {
        let out = &self.out;
        // The MCP tools, then the extension tools of v2 plugins (`ext__<plugin>__<tool>`, known
        // by that name only), as the model sees them.
        let extension_tools = self.extensions.tools();
        let (name, schema) = {
            let snapshot = self.mcp.snapshot();
            let known = (snapshot.tools().map(|t| (t.name, t.item.name.clone()))).chain(
                extension_tools
                    .iter()
                    .map(|t| (t.name.clone(), t.name.clone())),
            );
            let name = crate::mcp_cmd::request::resolve_tool(self.mcp, known, tool)?;
            let schema = (snapshot.tools())
                .find(|t| t.name == name)
                .map(|t| t.item.input_schema.to_value())
                .or_else(|| {
                    (extension_tools.iter())
                        .find(|t| t.name == name)
                        .map(|t| Value::Object(t.input_schema.clone()))
                })
                .unwrap_or(Value::Bool(true));
            (name, schema)
        };
        let arguments = match args {
            CallArgs::Json(value) => value,
            CallArgs::Pairs(words) => {
                let pairs = crate::schema_args::split_pairs(&words)?;
                Value::Object(crate::schema_args::arguments(&schema, &pairs)?)
            }
        };
        let policy = if self.allow_tools {
            sidewire_agent::ToolPolicy::AllowAll
        } else {
            sidewire_agent::ToolPolicy::ReadOnly
        };
        let progress = CallProgress::start(out, &name, self.progress_bar);
        let options = progress.options(ToolCallOptions::new());
        // One turn for the whole call: `tool.before`, `permission.decision` and `tool.after`
        // are answered by one generation, even if a reload is requested meanwhile (§13.3).
        let turn = self.extensions.turn().await;
        let number = self.calls.fetch_add(1, Ordering::Relaxed) + 1;
        let call = ToolCall::new(format!("{}-{number}", self.session), &name, arguments);
        let mut report =
            sidewire_agent::chained_tool_call(&turn, self.mcp, call, policy, options).await;
        drop(progress);
        if out.json {
            out.json_line(&json!({
                "event": "call", "report": crate::ext_cmd::tool_call_json(&report),
            }));
        } else if self.verbose {
            crate::ext_cmd::print_tool_call(out, &report);
        } else {
            out.line(crate::stream_out::compact_tool_call(&report));
        }
        match report.stop.take() {
            Some(stop) => Err(crate::ext_cmd::stop_error(stop, &name)),
            None => Ok(()),
        }
    }

    /// `/ui`: the surfaces in their latest state, then the UI actions.
    fn ui(&self) {
        let out = &self.out;
        let surfaces = crate::lock(&self.surfaces);
        let actions = self.extensions.ui_actions();
        if out.json {
            let shown: Vec<Value> = surfaces.all().map(ui::surface_json).collect();
            let actions: Vec<Value> = (actions.iter())
                .map(|(plugin, a)| json!({ "plugin": plugin, "action": a.action_id, "label": a.label }))
                .collect();
            out.json_line(&json!({ "event": "surfaces", "surfaces": shown, "actions": actions }));
            return;
        }
        if surfaces.all().next().is_none() {
            out.line("no surfaces published");
        }
        for surface in surfaces.all() {
            out.line(ui::surface_text(surface));
        }
        for (plugin, action) in &actions {
            out.line(format!(
                "/{}:{}  {}",
                safe::line(plugin),
                safe::line(&action.action_id),
                safe::line(&action.label)
            ));
        }
    }

    /// `/<owner>:<item>`: a plugin's UI action or an MCP prompt; a short form that names both
    /// is an error that shows the long forms.
    async fn item(
        &self,
        command: &str,
        namespace: Option<Namespace>,
        owner: &str,
        item: &str,
        args: &str,
    ) -> anyhow::Result<()> {
        let is_plugin =
            (self.extensions.ui_actions().iter()).any(|(p, a)| p == owner && a.action_id == item);
        let prompts: HashMap<(String, String), String> = (self.mcp.prompts().into_iter())
            .map(|p| ((p.server.clone(), p.prompt.name.clone()), p.name))
            .collect();
        let prompt = prompts.get(&(owner.to_owned(), item.to_owned()));
        match (namespace, is_plugin, prompt) {
            (Some(Namespace::Plugin) | None, true, None) | (Some(Namespace::Plugin), true, _) => {
                self.ui_action(owner, item);
                Ok(())
            }
            (Some(Namespace::Mcp) | None, false, Some(name))
            | (Some(Namespace::Mcp), _, Some(name)) => self.prompt(name, args).await,
            (None, true, Some(_)) => anyhow::bail!(
                "/{command} is both a plugin action and an MCP prompt: use /plugin:{command} or /mcp:{command}"
            ),
            _ => anyhow::bail!("unknown command /{command}"),
        }
    }

    /// Runs a plugin's UI action beside the input loop instead of blocking it: the action may
    /// ask the user something, answered on a later line.
    fn ui_action(&self, plugin: &str, action: &str) {
        let (extensions, out, plugin, action) = (
            self.extensions.clone(),
            self.out,
            plugin.to_owned(),
            action.to_owned(),
        );
        tokio::spawn(async move {
            match extensions.ui_action(&plugin, &action).await {
                Ok(result) => {
                    out.line(format!(
                        "{}:{} accepted={} {}",
                        safe::line(&plugin),
                        safe::line(&action),
                        result.accepted,
                        safe::line(&result.message)
                    ));
                    out.json_line(&json!({
                        "event": "action", "plugin": plugin, "action": action,
                        "accepted": result.accepted, "message": result.message,
                    }));
                }
                Err(err) => {
                    out.note(format!(
                        "error: {}:{}: {}",
                        safe::line(&plugin),
                        safe::line(&action),
                        safe::block(&err.to_string(), "  ")
                    ));
                    out.json_line(&json!({
                        "event": "error", "plugin": plugin, "action": action,
                        "message": sidewire_mcp::error_line(&err),
                    }));
                }
            }
        });
    }

    /// Fills in the MCP prompt `name` (namespaced) with `args`, key=value pairs.
    async fn prompt(&self, name: &str, args: &str) -> anyhow::Result<()> {
        let mut arguments = BTreeMap::new();
        for pair in args.split_whitespace() {
            let (key, value) = pair
                .split_once('=')
                .context("prompt arguments are key=value")?;
            arguments.insert(key.to_owned(), value.to_owned());
        }
        let result = self.mcp.get_prompt(name, arguments).await?;
        for message in &result.messages {
            self.out.line(safe::block(
                &crate::builtin::content_text(&message.content),
                "  ",
            ));
        }
        self.out
            .json_line(&json!({ "event": "prompt", "name": name, "result": result }));
        Ok(())
    }

    /// Text: its `@` references expanded, then an agent turn (with `--model`) or through
    /// `input.receive`, then what came out of it.
    async fn input(&self, line: &str) -> anyhow::Result<()> {
        let text = self.expand_references(line).await?;
        if let Some(agent) = &self.agent {
            return self.turn(agent, &text).await;
        }
        let outcome = self
            .extensions
            .intercept(
                HookPoint::InputReceive,
                HookPayload::Input(InputPayload { text: text.clone() }),
            )
            .await
            .context("input.receive")?;
        self.out.json_line(&json!({
            "event": "input", "text": text, "outcome": crate::ext_cmd::outcome_json(&outcome),
        }));
        match (&outcome.blocked, &outcome.payload) {
            (Some(blocked), _) => self.out.line(format!(
                "blocked by {}: {}",
                safe::line(&blocked.plugin),
                safe::line(&blocked.reason)
            )),
            (None, HookPayload::Input(input)) if input.text != text => self
                .out
                .line(format!("(rewritten) {}", safe::block(&input.text, "  "))),
            (None, HookPayload::Input(input)) => self
                .out
                .line(format!("> {}", safe::block(&input.text, "  "))),
            _ => {}
        }
        Ok(())
    }

    /// One agent turn of `text`, printed as it happens; the conversation goes on from it.
    async fn turn(&self, agent: &sidewire_agent::Agent, text: &str) -> anyhow::Result<()> {
        // Taken out for the turn (no lock is held across an await) and put back after it.
        let mut conversation = std::mem::take(&mut *crate::lock(&self.conversation));
        let mut printer = TurnPrinter::new(&self.out, false);
        let result = agent
            .run_turn(
                self.extensions,
                self.mcp,
                &mut conversation,
                text,
                |event| {
                    printer.event(&event);
                },
            )
            .await;
        *crate::lock(&self.conversation) = conversation;
        match result {
            Ok(report) => {
                printer.finish(&report);
                Ok(())
            }
            Err(err) => {
                printer.end_line();
                Err(err.into())
            }
        }
    }

    /// Replaces each `@<server>:<uri>` word with the text of that resource.
    async fn expand_references(&self, line: &str) -> anyhow::Result<String> {
        let mut words = Vec::new();
        for word in line.split(' ') {
            let expanded = match word.strip_prefix('@').and_then(|r| r.split_once(':')) {
                Some((server, uri)) if self.mcp.client(server).is_some() => {
                    let result = (self.mcp.read_resource(server, uri).await)
                        .with_context(|| format!("reading @{server}:{uri}"))?;
                    result
                        .contents
                        .iter()
                        .filter_map(|c| c.text.clone())
                        .collect::<Vec<_>>()
                        .join("\n")
                }
                _ => word.to_owned(),
            };
            words.push(expanded);
        }
        Ok(words.join(" "))
    }

    /// Takes `line` as the answer to the oldest pending prompt's next field, if a prompt is
    /// waiting; returns whether it did.
    fn answer_prompt(&self, line: &str) -> bool {
        let out = &self.out;
        let mut queue = self.pending.lock();
        let Some((prompt, values)) = queue.front_mut() else {
            return false;
        };
        if line.is_empty() {
            let (prompt, _) = queue.pop_front().expect("checked non-empty");
            self.pending.mark(&queue);
            prompt.cancel();
            out.line("dismissed");
        } else {
            let field = &prompt.fields[values.len()];
            let value = match field.kind {
                FieldKind::Confirm => Value::Bool(matches!(line, "y" | "Y" | "yes" | "true")),
                FieldKind::Input | FieldKind::Select => Value::String(line.to_owned()),
                FieldKind::Multiselect => Value::Array(
                    line.split(',')
                        .map(str::trim)
                        .filter(|s| !s.is_empty())
                        .map(|s| Value::String(s.to_owned()))
                        .collect(),
                ),
            };
            if field.required == Some(true) && ui::is_empty_answer(&value) {
                out.note(format!(
                    "{} is required: answer it (an empty line dismisses the question)",
                    safe::line(&field.key)
                ));
                ask(out, prompt, values.len());
                return true;
            }
            values.insert(field.key.clone(), value);
            if values.len() < prompt.fields.len() {
                ask(out, prompt, values.len());
                return true;
            }
            let (mut prompt, values) = queue.pop_front().expect("checked non-empty");
            self.pending.mark(&queue);
            if let Err(err) = prompt.answer(values) {
                out.note(format!(
                    "error: {}; the prompt is dismissed",
                    safe::line(&err.to_string())
                ));
                prompt.cancel();
            }
        }
        if let Some((next, _)) = queue.front() {
            ask(out, next, 0);
        }
        true
    }
}
