//! `sidewire run`: the interactive host. It boots the installed extensions and the configured
//! MCP servers, then reads lines: plain text goes through `input.receive`; `/tools`, `/call`,
//! prompts as `/<server>:<prompt>`, plugin UI actions as `/<plugin>:<action>`, `/submit`,
//! `/ui`, `/reload` and `/quit` are commands; `@<server>:<uri>` expands a resource into the
//! input. On a terminal, a plugin's `host/ui/request` prompt is asked field by field on the
//! next lines (an empty line dismisses it). It works with stdin not a terminal, so it can be
//! scripted; prompts are then answered `{"cancelled": true}`.
//!
//! With `--model REF`, plain text runs an agent turn instead (`sidewire-agent`): the answer
//! streams as it arrives, each tool call prints a compact report, and the conversation is kept
//! across lines (bounded). An ending signal then cancels the turn in flight and shuts down in
//! order.
//!
//! Each line is parsed into a [`Command`] first, then run by the [`Repl`], which holds what
//! the loop needs: the booted extensions and servers, and the surfaces and prompts that the
//! events task shares with it.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use serde_json::Value;
use sidewire_ext_host::{ExtensionHost, HostConfig, HostEvent, HostEvents, Runtime, UiPrompt};
use sidewire_ext_sdk::protocol::FieldKind;
use sidewire_ext_sdk::protocol::{HookPayload, HookPoint, InputPayload, UiHost};
use sidewire_mcp::{NoHandler, ToolCallOptions};
use tokio::io::AsyncBufReadExt;

use crate::out::Out;
use crate::stream_out::TurnPrinter;
use crate::{Interrupted, safe};

/// `run --model`: the provider of each turn, its bounds, and the signal that ends the loop.
#[derive(Debug)]
pub(crate) struct AgentMode {
    pub(crate) model: String,
    pub(crate) max_rounds: u32,
    pub(crate) interrupted: Interrupted,
}

/// The published surfaces, by (plugin, surface id), for `/ui`: the generation of the connection
/// that published each (so a crashed or retired one's can be dropped) and its payload as text.
/// The host caps surfaces per plugin, so this map is bounded too.
type Surfaces = Arc<Mutex<SurfaceMap>>;
type SurfaceMap = BTreeMap<(String, String), (u64, String)>;

/// Prompts waiting for the user's answer on a terminal, oldest first, with the answers to the
/// fields asked so far.
type Pending = Arc<Mutex<VecDeque<(UiPrompt, BTreeMap<String, Value>)>>>;

pub(crate) async fn run(
    config: Option<PathBuf>,
    allow_tools: bool,
    agent: Option<AgentMode>,
    out: &Out,
) -> anyhow::Result<()> {
    let started = Instant::now();
    let home = crate::sidewire_home()?;
    let workspace = std::env::current_dir().context("cannot read the current directory")?;

    out.note("booting extensions...");
    let host_config = HostConfig::new(&home, crate::session_id(), workspace)
        .ui_host(UiHost::Tui)
        .audit_log(home.join("audit.jsonl"));
    let (runtime, events) = ExtensionHost::boot(host_config)
        .await
        .context("booting the installed extensions")?;
    for failure in &runtime.report().failed {
        out.note(format!(
            "warning: extension {}",
            safe::block(&failure.to_string(), "  ")
        ));
    }

    let (mcp, driver) = sidewire_mcp::McpHost::new(NoHandler);
    let mcp_task = tokio::spawn(driver);
    let config = config.or_else(|| {
        let default = PathBuf::from(".mcp.json");
        default.exists().then_some(default)
    });
    if let Some(path) = &config {
        out.note(format!("starting MCP servers from {}...", path.display()));
        let specs = crate::mcp_cmd::config::load_file(path, None)?.into_specs();
        for failure in mcp.start_available(specs).await {
            out.note(format!(
                "warning: MCP server {} failed to start: {}",
                safe::line(&failure.server),
                safe::line(&failure.error)
            ));
        }
    }
    out.line(format!(
        "ready: {} extension(s), {} MCP server(s), in {} ms; /quit to leave",
        runtime.sidecars().len(),
        mcp.status()
            .iter()
            .filter(|s| s.state == sidewire_mcp::ServerState::Running)
            .count(),
        started.elapsed().as_millis()
    ));

    let (agent, interrupted) = match agent {
        Some(mode) => {
            out.line(format!(
                "model: {} (each line of text is an agent turn)",
                safe::line(&mode.model)
            ));
            let policy = if allow_tools {
                sidewire_agent::ToolPolicy::AllowAll
            } else {
                sidewire_agent::ToolPolicy::ReadOnly
            };
            let agent = sidewire_agent::Agent::new(mode.model)
                .max_rounds(mode.max_rounds)
                .tool_policy(policy)
                .session_id(crate::session_id());
            (Some(agent), Some(mode.interrupted))
        }
        None => (None, None),
    };
    let repl = Repl {
        runtime: &runtime,
        mcp: &mcp,
        surfaces: Arc::default(),
        pending: Arc::default(),
        allow_tools,
        agent,
        conversation: Mutex::default(),
        out: *out,
    };
    // Prompts are asked on a terminal and cancelled otherwise (nobody could answer them).
    let interactive = std::io::IsTerminal::is_terminal(&std::io::stdin())
        && std::io::IsTerminal::is_terminal(&std::io::stderr());
    let events_task = tokio::spawn(print_events(
        events,
        Arc::clone(&repl.surfaces),
        Arc::clone(&repl.pending),
        interactive,
        *out,
    ));

    let result = repl.run(interrupted).await;
    repl.cancel_pending();
    runtime.shutdown().await;
    mcp.shutdown().await;
    let _ = tokio::time::timeout(Duration::from_secs(5), mcp_task).await;
    events_task.abort();
    result
}

/// Prints UI and crash events as they come, keeps the surfaces for `/ui`, and queues prompts
/// to be asked (when `interactive`) or cancels them.
async fn print_events(
    mut events: HostEvents,
    surfaces: Surfaces,
    pending: Pending,
    interactive: bool,
    out: Out,
) {
    while let Some(event) = events.recv().await {
        match event {
            HostEvent::Surface(surface) => {
                let text = serde_json::to_string(&surface.payload).unwrap_or_default();
                out.line(format!(
                    "[{}:{}] {}",
                    safe::line(&surface.plugin),
                    safe::line(&surface.surface_id),
                    safe::line(&text)
                ));
                crate::lock(&surfaces).insert(
                    (surface.plugin, surface.surface_id),
                    (surface.generation, text),
                );
            }
            HostEvent::SurfacesStale { plugin, generation } => {
                drop_stale(&mut crate::lock(&surfaces), &plugin, generation);
            }
            HostEvent::PromptDismissed { plugin, prompt } => {
                // The sidecar went away or the prompt's deadline passed: the host has answered
                // it already, so it leaves the queue unasked.
                let mut queue = crate::lock(&pending);
                if let Some(at) = queue.iter().position(|(p, _)| p.id == prompt) {
                    queue.remove(at);
                    out.line(format!("[{plugin}] the prompt was dismissed"));
                    if at == 0
                        && let Some((next, _)) = queue.front()
                    {
                        ask(&out, next, 0);
                    }
                }
            }
            HostEvent::Prompt(prompt) if interactive => {
                let mut queue = crate::lock(&pending);
                if queue.is_empty() {
                    ask(&out, &prompt, 0);
                }
                queue.push_back((prompt, BTreeMap::new()));
            }
            HostEvent::Prompt(prompt) => {
                out.line(format!(
                    "[{}] asks: {} (cancelled: stdin is not a terminal)",
                    safe::line(&prompt.plugin),
                    safe::line(&prompt.title)
                ));
                prompt.cancel();
            }
            HostEvent::Crashed { plugin, cause, .. } => out.note(format!(
                "extension {} crashed: {}",
                safe::line(&plugin),
                safe::block(&cause, "  ")
            )),
            HostEvent::Warning {
                plugin, message, ..
            } => {
                out.note(format!(
                    "warning{}: {}",
                    plugin
                        .map(|p| format!(" ({})", safe::line(&p)))
                        .unwrap_or_default(),
                    safe::line(&message)
                ));
            }
            _ => {}
        }
    }
}

/// Which side a `/<owner>:<item>` command names, when the long form says so.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Namespace {
    /// `/plugin:<id>:<action>`: a plugin's UI action.
    Plugin,
    /// `/mcp:<server>:<prompt>`: an MCP prompt.
    Mcp,
}

/// One line of input, parsed. Usage errors are found here, before anything runs.
#[derive(Debug, PartialEq)]
enum Command<'a> {
    /// `/quit` (the whole line).
    Quit,
    /// `/tools`: the MCP tools.
    Tools,
    /// `/call TOOL {json}`: a tool call through the permission chain.
    Call { tool: &'a str, arguments: Value },
    /// `/ui`: the published surfaces and the plugins' UI actions.
    Ui,
    /// `/reload`: reload the extensions.
    Reload,
    /// `/submit PLUGIN:SURFACE key=value...`: submit a form.
    Submit {
        plugin: &'a str,
        surface: &'a str,
        values: BTreeMap<String, Value>,
    },
    /// `/<owner>:<item> args`: a plugin's UI action or an MCP prompt, told apart when it runs.
    Item {
        /// The word after the `/`, for messages.
        command: &'a str,
        /// Given by the long forms, else found from what `owner:item` names.
        namespace: Option<Namespace>,
        owner: &'a str,
        item: &'a str,
        /// The rest of the line: a prompt's key=value arguments.
        args: &'a str,
    },
    /// Any other line: text for `input.receive`, with its `@<server>:<uri>` references.
    Input(&'a str),
}

impl<'a> Command<'a> {
    /// Parses a trimmed, non-empty line.
    fn parse(line: &'a str) -> anyhow::Result<Self> {
        if line == "/quit" {
            return Ok(Command::Quit);
        }
        let (word, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        let rest = rest.trim();
        let command = match word {
            "/tools" => Command::Tools,
            "/call" => {
                let (tool, args) = rest.split_once(char::is_whitespace).unwrap_or((rest, "{}"));
                anyhow::ensure!(!tool.is_empty(), "usage: /call TOOL {{json arguments}}");
                let arguments = serde_json::from_str(args.trim())
                    .context("the arguments are not valid JSON")?;
                Command::Call { tool, arguments }
            }
            "/ui" => Command::Ui,
            "/reload" => Command::Reload,
            "/submit" => {
                let (surface, pairs) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
                let (plugin, surface) = surface
                    .split_once(':')
                    .context("usage: /submit PLUGIN:SURFACE key=value...")?;
                let mut values = BTreeMap::new();
                for pair in pairs.split_whitespace() {
                    let (key, value) = pair.split_once('=').context("form values are key=value")?;
                    let value = serde_json::from_str(value)
                        .unwrap_or_else(|_| Value::String(value.to_owned()));
                    values.insert(key.to_owned(), value);
                }
                Command::Submit {
                    plugin,
                    surface,
                    values,
                }
            }
            _ => match word.strip_prefix('/') {
                Some(command) => Self::item(command, rest)?,
                None => Command::Input(line),
            },
        };
        Ok(command)
    }

    /// `/<owner>:<item>`, or the long forms `/plugin:<id>:<action>` and `/mcp:<server>:<prompt>`
    /// for when a plugin and a server share a name.
    fn item(command: &'a str, args: &'a str) -> anyhow::Result<Self> {
        let (namespace, target) = match command.split_once(':') {
            Some(("plugin", target)) => (Some(Namespace::Plugin), target),
            Some(("mcp", target)) => (Some(Namespace::Mcp), target),
            _ => (None, command),
        };
        let (owner, item) = target
            .split_once(':')
            .with_context(|| format!("unknown command /{command}"))?;
        Ok(Command::Item {
            command,
            namespace,
            owner,
            item,
            args,
        })
    }
}

/// The interactive loop and what it acts on. The events task shares `surfaces` and `pending`.
struct Repl<'a> {
    runtime: &'a Runtime,
    mcp: &'a sidewire_mcp::McpHost,
    surfaces: Surfaces,
    pending: Pending,
    /// Let the host's policy allow tools that are not marked read-only (`--allow-tools`).
    allow_tools: bool,
    /// With `--model`: plain text runs a turn of this agent.
    agent: Option<sidewire_agent::Agent>,
    /// The agent's conversation across lines (taken out for the length of a turn).
    conversation: Mutex<sidewire_agent::Conversation>,
    out: Out,
}

/// Waits for `interrupted`, or forever when there is nothing to wait for.
///
/// Cancel safety: cancel safe.
async fn wait(interrupted: &mut Option<Interrupted>) {
    match interrupted {
        Some(interrupted) => interrupted.wait().await,
        None => std::future::pending().await,
    }
}

impl Repl<'_> {
    /// Reads stdin to its end or `/quit` (or, with `--model`, an ending signal, which also
    /// cancels the line running): a line answers a waiting prompt, or is parsed and run. A
    /// line's failure is printed and the loop goes on.
    async fn run(&self, mut interrupted: Option<Interrupted>) -> anyhow::Result<()> {
        let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
        loop {
            let line = tokio::select! {
                line = lines.next_line() => line.context("reading stdin")?,
                () = wait(&mut interrupted) => break,
            };
            let Some(line) = line else { break };
            let line = line.trim();
            if self.answer_prompt(line) || line.is_empty() {
                continue;
            }
            let result = match Command::parse(line) {
                Ok(Command::Quit) => break,
                Ok(command) => tokio::select! {
                    result = self.execute(command) => result,
                    // Dropping the line's future cancels its turn (the provider stream is
                    // cancelled on the sidecar) or call.
                    () = wait(&mut interrupted) => break,
                },
                Err(err) => Err(err),
            };
            if let Err(err) = result {
                self.out.error(&err);
            }
        }
        Ok(())
    }

    /// Cancels the prompts still waiting for an answer.
    fn cancel_pending(&self) {
        for (prompt, _) in crate::lock(&self.pending).drain(..) {
            prompt.cancel();
        }
    }

    async fn execute(&self, command: Command<'_>) -> anyhow::Result<()> {
        let out = &self.out;
        match command {
            // The loop ends on it before it gets here.
            Command::Quit => {}
            Command::Tools => {
                for tool in self.mcp.tools() {
                    out.line(format!(
                        "{}  {}",
                        safe::line(&tool.name),
                        safe::block(tool.tool.description.unwrap_or_default().trim_end(), "    ")
                    ));
                }
            }
            Command::Call { tool, arguments } => {
                crate::ext_cmd::chained_tool_call(
                    out,
                    self.runtime,
                    self.mcp,
                    tool,
                    arguments,
                    ToolCallOptions::new(),
                    self.allow_tools,
                )
                .await?;
            }
            Command::Ui => self.ui(),
            Command::Reload => {
                let report = (self.runtime.reload().await).context("reloading the extensions")?;
                out.line(format!(
                    "generation {}: started {:?}, adopted {:?}, failed {}",
                    report.generation,
                    report.started,
                    report.adopted,
                    report.failed.len()
                ));
            }
            Command::Submit {
                plugin,
                surface,
                values,
            } => {
                let result = self.runtime.submit_form(plugin, surface, values).await?;
                out.line(format!("submitted: accepted={}", result.accepted));
            }
            Command::Item {
                command,
                namespace,
                owner,
                item,
                args,
            } => self.item(command, namespace, owner, item, args).await?,
            Command::Input(line) => self.input(line).await?,
        }
        Ok(())
    }

    /// `/ui`: the surfaces as last published, then the UI actions.
    fn ui(&self) {
        let surfaces = crate::lock(&self.surfaces);
        if surfaces.is_empty() {
            self.out.line("no surfaces published");
        }
        for ((plugin, id), (_, text)) in surfaces.iter() {
            self.out.line(format!(
                "{}:{} {}",
                safe::line(plugin),
                safe::line(id),
                safe::line(text)
            ));
        }
        for (plugin, action) in self.runtime.ui_actions() {
            self.out.line(format!(
                "/{}:{}  {}",
                safe::line(&plugin),
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
            (self.runtime.ui_actions().iter()).any(|(p, a)| p == owner && a.action_id == item);
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
        let (runtime, out, plugin, action) = (
            self.runtime.clone(),
            self.out,
            plugin.to_owned(),
            action.to_owned(),
        );
        tokio::spawn(async move {
            match runtime.ui_action(&plugin, &action).await {
                Ok(result) => out.line(format!(
                    "{}:{} accepted={} {}",
                    safe::line(&plugin),
                    safe::line(&action),
                    result.accepted,
                    safe::line(&result.message)
                )),
                Err(err) => out.note(format!(
                    "error: {}:{}: {}",
                    safe::line(&plugin),
                    safe::line(&action),
                    safe::block(&err.to_string(), "  ")
                )),
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
            .runtime
            .intercept(
                HookPoint::InputReceive,
                HookPayload::Input(InputPayload { text: text.clone() }),
            )
            .await
            .context("input.receive")?;
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
            .run_turn(self.runtime, self.mcp, &mut conversation, text, |event| {
                printer.event(&event);
            })
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
        let mut queue = crate::lock(&self.pending);
        let Some((prompt, values)) = queue.front_mut() else {
            return false;
        };
        if line.is_empty() {
            let (prompt, _) = queue.pop_front().expect("checked non-empty");
            prompt.cancel();
            out.line("dismissed");
        } else {
            let field = &prompt.fields[values.len()];
            let value = match field.kind {
                FieldKind::Confirm => Value::Bool(matches!(line, "y" | "Y" | "yes" | "true")),
                FieldKind::Input | FieldKind::Select => Value::String(line.to_owned()),
                FieldKind::Multiselect => Value::Array(
                    line.split(',')
                        .map(|s| Value::String(s.trim().to_owned()))
                        .collect(),
                ),
            };
            values.insert(field.key.clone(), value);
            if values.len() < prompt.fields.len() {
                ask(out, prompt, values.len());
                return true;
            }
            let (mut prompt, values) = queue.pop_front().expect("checked non-empty");
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

/// Forgets the surfaces that `plugin`'s connection of `generation` published: it crashed or was
/// retired, so they can no longer be acted on.
fn drop_stale(surfaces: &mut SurfaceMap, plugin: &str, generation: u64) {
    surfaces.retain(|(p, _), (g, _)| !(p == plugin && *g == generation));
}

/// Shows field `index` of `prompt` as a question on stdout.
fn ask(out: &Out, prompt: &UiPrompt, index: usize) {
    let Some(field) = prompt.fields.get(index) else {
        return;
    };
    let how = match field.kind {
        FieldKind::Confirm => "y/n",
        FieldKind::Input => "text",
        FieldKind::Select => "one of the options",
        FieldKind::Multiselect => "options separated by commas",
    };
    let options = if field.options.is_empty() {
        String::new()
    } else {
        format!(
            " [{}]",
            field
                .options
                .iter()
                .map(|option| safe::line(option))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    let label = if field.label.is_empty() {
        prompt.title.as_str()
    } else {
        field.label.as_str()
    };
    out.line(format!(
        "[{}] {}{options} ({how}; an empty line dismisses)",
        safe::line(&prompt.plugin),
        safe::line(label)
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_surfaces_of_one_connection_are_dropped_and_no_others() {
        let mut surfaces = SurfaceMap::new();
        for (plugin, id, generation) in [
            ("a", "s1", 1),
            ("a", "s2", 1),
            ("a", "s3", 2),
            ("b", "s1", 1),
        ] {
            surfaces.insert(
                (plugin.to_owned(), id.to_owned()),
                (generation, "{}".to_owned()),
            );
        }
        drop_stale(&mut surfaces, "a", 1);
        let left: Vec<_> = surfaces.keys().map(|(p, s)| format!("{p}:{s}")).collect();
        assert_eq!(left, ["a:s3", "b:s1"]);
    }

    fn error(line: &str) -> String {
        format!("{:#}", Command::parse(line).expect_err("a usage error"))
    }

    #[test]
    fn commands_are_parsed_by_their_first_word() {
        assert_eq!(Command::parse("/quit").unwrap(), Command::Quit);
        assert_eq!(Command::parse("/tools all").unwrap(), Command::Tools);
        assert_eq!(Command::parse("/ui").unwrap(), Command::Ui);
        assert_eq!(Command::parse("/reload").unwrap(), Command::Reload);
        assert_eq!(
            Command::parse("/call mcp__a__add  {\"a\": 1}").unwrap(),
            Command::Call {
                tool: "mcp__a__add",
                arguments: serde_json::json!({"a": 1})
            }
        );
        assert_eq!(
            Command::parse("/call echo").unwrap(),
            Command::Call {
                tool: "echo",
                arguments: serde_json::json!({})
            }
        );
        assert_eq!(
            Command::parse("/submit p:form n=2 s=two").unwrap(),
            Command::Submit {
                plugin: "p",
                surface: "form",
                values: [("n", serde_json::json!(2)), ("s", serde_json::json!("two"))]
                    .into_iter()
                    .map(|(k, v)| (k.to_owned(), v))
                    .collect(),
            }
        );
        assert_eq!(
            Command::parse("hello @srv:file:///a /not-a-command").unwrap(),
            Command::Input("hello @srv:file:///a /not-a-command")
        );
    }

    #[test]
    fn owner_item_commands_keep_their_namespace_and_arguments() {
        let item = |namespace, owner, item, args| (namespace, owner, item, args);
        for (line, want) in [
            (
                "/srv:greet city=Oslo",
                item(None, "srv", "greet", "city=Oslo"),
            ),
            ("/plugin:p:go", item(Some(Namespace::Plugin), "p", "go", "")),
            (
                "/mcp:srv:greet a=1",
                item(Some(Namespace::Mcp), "srv", "greet", "a=1"),
            ),
            // Only the first word names the namespace: a plugin may be called `plugin`.
            (
                "/plugin:plugin:go",
                item(Some(Namespace::Plugin), "plugin", "go", ""),
            ),
        ] {
            let Command::Item {
                namespace,
                owner,
                item,
                args,
                ..
            } = Command::parse(line).unwrap()
            else {
                panic!("{line} is not an item command");
            };
            assert_eq!((namespace, owner, item, args), want, "{line}");
        }
    }

    #[test]
    fn usage_errors_are_found_when_parsing() {
        // `/quit` is the whole line; with more it is just an unknown command.
        assert_eq!(error("/quit now"), "unknown command /quit");
        assert_eq!(error("/nope"), "unknown command /nope");
        assert_eq!(error("/plugin:only"), "unknown command /plugin:only");
        assert_eq!(error("/call"), "usage: /call TOOL {json arguments}");
        assert!(error("/call t {bad").starts_with("the arguments are not valid JSON"));
        assert_eq!(
            error("/submit form"),
            "usage: /submit PLUGIN:SURFACE key=value..."
        );
        assert_eq!(error("/submit p:form x"), "form values are key=value");
    }
}
