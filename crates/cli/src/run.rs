//! `sidewire run`: the interactive host. It boots the installed extensions and the configured
//! MCP servers, then reads lines: plain text goes through `input.receive`; `/tools`, `/call`,
//! prompts as `/<server>:<prompt>`, plugin UI actions as `/<plugin>:<action>`, `/submit`,
//! `/ui`, `/reload` and `/quit` are commands; `@<server>:<uri>` expands a resource into the
//! input. On a terminal, a plugin's `host/ui/request` prompt is asked field by field on the
//! next lines (an empty line dismisses it). It works with stdin not a terminal, so it can be
//! scripted; prompts are then answered `{"cancelled": true}`.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use serde_json::Value;
use sidewire_ext_host::{Host, HostConfig, HostEvent, Prompt, Runtime};
use sidewire_ext_sdk::protocol::FieldKind;
use sidewire_ext_sdk::protocol::{HookPayload, HookPoint, InputPayload, UiHost};
use sidewire_mcp::{CallOptions, NoHandler};
use tokio::io::AsyncBufReadExt;

use crate::out::Out;
use crate::safe;

/// The published surfaces, by (plugin, surface id), for `/ui`: the generation of the connection
/// that published each (so a crashed or retired one's can be dropped) and its payload as text.
/// The host caps surfaces per plugin, so this map is bounded too.
type Surfaces = Arc<Mutex<SurfaceMap>>;
type SurfaceMap = BTreeMap<(String, String), (u64, String)>;

/// Prompts waiting for the user's answer on a terminal, oldest first, with the answers to the
/// fields asked so far.
type Pending = Arc<Mutex<VecDeque<(Prompt, BTreeMap<String, Value>)>>>;

pub(crate) async fn run(
    config: Option<PathBuf>,
    allow_tools: bool,
    out: &Out,
) -> anyhow::Result<()> {
    let started = Instant::now();
    let home = crate::sidewire_home()?;
    let workspace = std::env::current_dir().context("cannot read the current directory")?;

    out.note("booting extensions...");
    let host_config = HostConfig::new(&home, crate::session_id(), workspace)
        .ui_host(UiHost::Tui)
        .audit_log(home.join("audit.jsonl"));
    let (runtime, mut events) = Host::boot(host_config)
        .await
        .context("booting the installed extensions")?;
    for failure in &runtime.report().failed {
        out.note(format!(
            "warning: extension {}",
            safe::block(&failure.to_string(), "  ")
        ));
    }

    let (mcp, driver) = sidewire_mcp::Host::new(NoHandler);
    let mcp_task = tokio::spawn(driver);
    let config = config.or_else(|| {
        let default = PathBuf::from(".mcp.json");
        default.exists().then_some(default)
    });
    if let Some(path) = &config {
        out.note(format!("starting MCP servers from {}...", path.display()));
        let specs = sidewire_mcp::load_mcp_servers(path)?;
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

    // UI and crash events are printed as they come. Prompts are asked on a terminal and
    // cancelled otherwise (nobody could answer them).
    let interactive = std::io::IsTerminal::is_terminal(&std::io::stdin())
        && std::io::IsTerminal::is_terminal(&std::io::stderr());
    let surfaces: Surfaces = Arc::default();
    let pending: Pending = Arc::default();
    let events_task = {
        let surfaces = Arc::clone(&surfaces);
        let pending = Arc::clone(&pending);
        let out = *out;
        tokio::spawn(async move {
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
                        // The sidecar went away or the prompt's deadline passed: the host has
                        // answered it already, so it leaves the queue unasked.
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
        })
    };

    let result = repl(&runtime, &mcp, &surfaces, &pending, allow_tools, out).await;
    for (prompt, _) in crate::lock(&pending).drain(..) {
        prompt.cancel();
    }
    runtime.shutdown().await;
    mcp.shutdown().await;
    let _ = tokio::time::timeout(Duration::from_secs(5), mcp_task).await;
    events_task.abort();
    result
}

async fn repl(
    runtime: &Runtime,
    mcp: &sidewire_mcp::Host,
    surfaces: &Surfaces,
    pending: &Pending,
    allow_tools: bool,
    out: &Out,
) -> anyhow::Result<()> {
    let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
    while let Some(line) = lines.next_line().await.context("reading stdin")? {
        if answer_prompt(pending, line.trim(), out) {
            continue;
        }
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        if line == "/quit" {
            break;
        }
        if let Err(err) = one_line(runtime, mcp, surfaces, allow_tools, line, out).await {
            out.error(&err);
        }
    }
    Ok(())
}

async fn one_line(
    runtime: &Runtime,
    mcp: &sidewire_mcp::Host,
    surfaces: &Surfaces,
    allow_tools: bool,
    line: &str,
    out: &Out,
) -> anyhow::Result<()> {
    let (word, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
    let rest = rest.trim();
    match word {
        "/tools" => {
            for tool in mcp.tools() {
                out.line(format!(
                    "{}  {}",
                    safe::line(&tool.name),
                    safe::block(tool.tool.description.unwrap_or_default().trim_end(), "    ")
                ));
            }
            return Ok(());
        }
        "/call" => {
            let (name, args) = rest.split_once(char::is_whitespace).unwrap_or((rest, "{}"));
            anyhow::ensure!(!name.is_empty(), "usage: /call TOOL {{json arguments}}");
            let arguments: Value =
                serde_json::from_str(args.trim()).context("the arguments are not valid JSON")?;
            crate::ext_cmd::chained_tool_call(
                out,
                runtime,
                mcp,
                name,
                arguments,
                CallOptions::new(),
                allow_tools,
            )
            .await?;
            return Ok(());
        }
        "/ui" => {
            let surfaces = crate::lock(surfaces);
            if surfaces.is_empty() {
                out.line("no surfaces published");
            }
            for ((plugin, id), (_, text)) in surfaces.iter() {
                out.line(format!(
                    "{}:{} {}",
                    safe::line(plugin),
                    safe::line(id),
                    safe::line(text)
                ));
            }
            for (plugin, action) in runtime.ui_actions() {
                out.line(format!(
                    "/{}:{}  {}",
                    safe::line(&plugin),
                    safe::line(&action.action_id),
                    safe::line(&action.label)
                ));
            }
            return Ok(());
        }
        "/reload" => {
            let report = runtime.reload().await.context("reloading the extensions")?;
            out.line(format!(
                "generation {}: started {:?}, adopted {:?}, failed {}",
                report.generation,
                report.started,
                report.adopted,
                report.failed.len()
            ));
            return Ok(());
        }
        "/submit" => {
            let (surface, pairs) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
            let (plugin, surface) = surface
                .split_once(':')
                .context("usage: /submit PLUGIN:SURFACE key=value...")?;
            let mut values = BTreeMap::new();
            for pair in pairs.split_whitespace() {
                let (key, value) = pair.split_once('=').context("form values are key=value")?;
                values.insert(
                    key.to_owned(),
                    serde_json::from_str(value).unwrap_or_else(|_| Value::String(value.to_owned())),
                );
            }
            let result = runtime.submit_form(plugin, surface, values).await?;
            out.line(format!("submitted: accepted={}", result.accepted));
            return Ok(());
        }
        _ => {}
    }
    if let Some(command) = word.strip_prefix('/') {
        return slash(runtime, mcp, command, rest, out).await;
    }
    let text = expand_references(mcp, line).await?;
    let outcome = runtime
        .intercept(
            HookPoint::InputReceive,
            HookPayload::Input(InputPayload { text: text.clone() }),
        )
        .await
        .context("input.receive")?;
    match (&outcome.blocked, &outcome.payload) {
        (Some(blocked), _) => out.line(format!(
            "blocked by {}: {}",
            safe::line(&blocked.plugin),
            safe::line(&blocked.reason)
        )),
        (None, HookPayload::Input(input)) if input.text != text => {
            out.line(format!("(rewritten) {}", safe::block(&input.text, "  ")))
        }
        (None, HookPayload::Input(input)) => {
            out.line(format!("> {}", safe::block(&input.text, "  ")))
        }
        _ => {}
    }
    Ok(())
}

/// `/<plugin>:<action>`, `/<server>:<prompt> args`, or the long forms `/plugin:<id>:<action>`
/// and `/mcp:<server>:<prompt>` when a plugin and a server share a name.
async fn slash(
    runtime: &Runtime,
    mcp: &sidewire_mcp::Host,
    command: &str,
    rest: &str,
    out: &Out,
) -> anyhow::Result<()> {
    let (kind, target) = match command.split_once(':') {
        Some(("plugin", target)) => (Some("plugin"), target),
        Some(("mcp", target)) => (Some("mcp"), target),
        _ => (None, command),
    };
    let (owner, item) = target
        .split_once(':')
        .with_context(|| format!("unknown command /{command}"))?;
    let is_plugin = runtime
        .ui_actions()
        .iter()
        .any(|(p, a)| p == owner && a.action_id == item);
    let prompts: HashMap<(String, String), String> = mcp
        .prompts()
        .into_iter()
        .map(|p| ((p.server.clone(), p.prompt.name.clone()), p.name))
        .collect();
    let prompt = prompts.get(&(owner.to_owned(), item.to_owned()));
    match (kind, is_plugin, prompt) {
        (Some("plugin") | None, true, None) | (Some("plugin"), true, _) => {
            // The action may ask the user something, answered on a later line: run it beside
            // the input loop instead of blocking it.
            let (runtime, out, owner, item) =
                (runtime.clone(), *out, owner.to_owned(), item.to_owned());
            tokio::spawn(async move {
                match runtime.ui_action(&owner, &item).await {
                    Ok(result) => out.line(format!(
                        "{}:{} accepted={} {}",
                        safe::line(&owner),
                        safe::line(&item),
                        result.accepted,
                        safe::line(&result.message)
                    )),
                    Err(err) => out.note(format!(
                        "error: {}:{}: {}",
                        safe::line(&owner),
                        safe::line(&item),
                        safe::block(&err.to_string(), "  ")
                    )),
                }
            });
            Ok(())
        }
        (Some("mcp") | None, false, Some(name)) | (Some("mcp"), _, Some(name)) => {
            let mut arguments = BTreeMap::new();
            for pair in rest.split_whitespace() {
                let (key, value) = pair
                    .split_once('=')
                    .context("prompt arguments are key=value")?;
                arguments.insert(key.to_owned(), value.to_owned());
            }
            let result = mcp.get_prompt(name, arguments).await?;
            for message in &result.messages {
                out.line(safe::block(
                    &crate::builtin::content_text(&message.content),
                    "  ",
                ));
            }
            Ok(())
        }
        (None, true, Some(_)) => anyhow::bail!(
            "/{command} is both a plugin action and an MCP prompt: use /plugin:{target} or /mcp:{target}"
        ),
        _ => anyhow::bail!("unknown command /{command}"),
    }
}

/// Forgets the surfaces that `plugin`'s connection of `generation` published: it crashed or was
/// retired, so they can no longer be acted on.
fn drop_stale(surfaces: &mut SurfaceMap, plugin: &str, generation: u64) {
    surfaces.retain(|(p, _), (g, _)| !(p == plugin && *g == generation));
}

/// Replaces each `@<server>:<uri>` word with the text of that resource.
async fn expand_references(mcp: &sidewire_mcp::Host, line: &str) -> anyhow::Result<String> {
    let mut words = Vec::new();
    for word in line.split(' ') {
        let expanded = match word.strip_prefix('@').and_then(|r| r.split_once(':')) {
            Some((server, uri)) if mcp.client(server).is_some() => {
                let result = mcp
                    .read_resource(server, uri)
                    .await
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

/// Shows field `index` of `prompt` as a question on stdout.
fn ask(out: &Out, prompt: &Prompt, index: usize) {
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

/// Takes `line` as the answer to the oldest pending prompt's next field, if a prompt is
/// waiting; returns whether it did.
fn answer_prompt(pending: &Pending, line: &str, out: &Out) -> bool {
    let mut queue = crate::lock(pending);
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
}
