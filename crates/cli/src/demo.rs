//! `sidewire demo`: the main job on an embedded default.
//!
//! It needs no node, python, network or installed plugin. It makes a temporary state
//! directory (deleted on exit), installs the built-in plugin there through the library's
//! install flow (its command is this binary's absolute path with a hidden subcommand), starts
//! the built-in MCP server as a child of this binary, and runs a short scripted session: input
//! rewriting, a tool call through the permission chain (writing one audit line), a status
//! card, a slow tool with progress, an agent turn (the built-in sidecar's scripted model asks
//! for the MCP server's `add` tool, the permission chain runs, the answer streams back), and a
//! clean shutdown. It never reads or writes `$SIDEWIRE_HOME`.

use std::time::{Duration, Instant};

use anyhow::Context as _;
use serde_json::{Value, json};
use sidewire_agent::{Agent, Conversation, TurnEnd, TurnEvent};
use sidewire_ext_host::{ExtensionHost, HostConfig, HostEvent, InstallOptions, PluginStore};
use sidewire_ext_sdk::protocol::{HookPayload, HookPoint, InputPayload, UiHost};
use sidewire_mcp::{ServerSpec, ToolCallOptions};

use crate::builtin;
use crate::ext_cmd::{outcome_json, print_outcome, tool_call_json};
use crate::out::Out;
use crate::safe;
use crate::stream_out::{TurnPrinter, turn_json};

/// The input the demo sends through `input.receive`.
const DEMO_INPUT: &str = "starter: hello from the sidewire demo";

/// The input of the demo's agent turn: the scripted model asks for an `add` tool.
const AGENT_INPUT: &str = "add 2 and 40";

/// How long the demo waits for the status card before going on without it.
const STATUS_WAIT: Duration = Duration::from_secs(5);

pub(crate) async fn run(out: &Out) -> anyhow::Result<()> {
    let started = Instant::now();
    let exe = std::env::current_exe().context("cannot find this program's own path")?;
    let temp = tempfile::Builder::new()
        .prefix("sidewire-demo-")
        .tempdir()
        .context("cannot make a temporary directory")?;
    let state = temp.path().join("state");
    let package = temp.path().join("package");
    builtin::write_package(&package, &exe)?;
    let store = PluginStore::new(&state);
    store
        .install(&package, InstallOptions::link())
        .context("installing the built-in demo plugin")?;
    out.heading("sidewire demo");
    out.line(format!(
        "  state directory (temporary): {}",
        state.display()
    ));
    out.line(format!(
        "  installed plugin {} (links {})",
        builtin::SIDECAR_NAME,
        exe.display()
    ));

    // The MCP side: the built-in server, a child of this binary.
    let (mcp, mcp_driver) = sidewire_mcp::McpHost::new(sidewire_mcp::NoHandler);
    let mcp_task = tokio::spawn(mcp_driver);
    let spec = ServerSpec::stdio("demo", exe.display().to_string()).args(["__mcp-server"]);
    mcp.start_all(vec![spec])
        .await
        .context("starting the built-in MCP server")?;

    // The extension side.
    let workspace = std::env::current_dir().unwrap_or_else(|_| temp.path().to_path_buf());
    let config = HostConfig::new(&state, crate::session_id(), workspace).ui_host(UiHost::Tui);
    let audit_log = config.get_audit_log().to_path_buf();
    let (extensions, mut events) = ExtensionHost::boot(config)
        .await
        .context("booting the extensions")?;
    out.line(format!(
        "  booted {} extension(s) and 1 MCP server in {} ms",
        extensions.sidecars().len(),
        started.elapsed().as_millis()
    ));

    let result = script(out, &extensions, &mut events, &mcp, &audit_log).await;
    let result = match result {
        Ok(mut summary) => match gateway_step(out, &mcp, &exe, temp.path(), &state).await {
            Ok(gateway) => {
                summary["gateway"] = gateway;
                Ok(summary)
            }
            Err(err) => Err(err),
        },
        Err(err) => Err(err),
    };

    // A clean shutdown either way: the extension gets `extension/shutdown`, the MCP server
    // its stdin closed; both process groups are gone before this returns.
    extensions.shutdown().await;
    mcp.shutdown().await;
    let _ = tokio::time::timeout(Duration::from_secs(5), mcp_task).await;
    let summary = result?;
    out.line("");
    out.line(format!(
        "clean shutdown; demo finished in {} ms",
        started.elapsed().as_millis()
    ));
    out.json(&summary);
    drop(temp);
    Ok(())
}

async fn script(
    out: &Out,
    extensions: &sidewire_ext_host::ExtensionHost,
    events: &mut sidewire_ext_host::HostEvents,
    mcp: &sidewire_mcp::McpHost,
    audit_log: &std::path::Path,
) -> anyhow::Result<Value> {
    // 1. Input rewriting.
    out.line("");
    out.heading("1. input.receive: the extension rewrites input");
    out.line(format!("  you typed:  {DEMO_INPUT}"));
    let outcome = extensions
        .intercept(
            HookPoint::InputReceive,
            HookPayload::Input(InputPayload {
                text: DEMO_INPUT.to_owned(),
            }),
        )
        .await
        .context("input.receive")?;
    let rewritten = match &outcome.payload {
        HookPayload::Input(input) => input.text.clone(),
        _ => String::new(),
    };
    print_outcome(out, &outcome);
    anyhow::ensure!(outcome.blocked.is_none(), "the demo input was blocked");
    let input_json = outcome_json(&outcome);

    // 2. A status card the extension published when it became ready.
    out.line("");
    out.heading("2. a status card from the extension");
    let status = wait_for_status(events).await;
    match &status {
        Some(label) => out.line(format!(
            "  [{}] {}",
            builtin::SIDECAR_NAME,
            safe::line(label)
        )),
        None => out.line("  (no status card arrived within 5 s)"),
    }

    // 3. A tool call through the permission chain.
    out.line("");
    out.heading("3. a tool call through the permission chain");
    let tools = mcp.tools();
    out.line(format!(
        "  MCP tools: {}",
        tools
            .iter()
            .map(|t| safe::line(&t.name))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    let call = crate::ext_cmd::chained_tool_call(
        out,
        extensions,
        mcp,
        "mcp__demo__add",
        json!({"a": 2, "b": 3}),
        ToolCallOptions::new(),
        false,
    )
    .await?;
    let audit_lines = std::fs::read_to_string(audit_log).unwrap_or_default();
    for line in audit_lines.lines() {
        out.line(format!("  audit: {}", safe::line(line)));
    }

    // 4. A slow tool reporting progress.
    out.line("");
    out.heading("4. a slow tool reporting progress");
    let progress = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = std::sync::Arc::clone(&progress);
    let json_mode = out.json;
    let options = ToolCallOptions::new().on_progress(move |p| {
        let line = format!(
            "  progress {}/{} {}",
            p.progress,
            p.total.map_or("?".to_owned(), |t| t.to_string()),
            safe::line(p.message.as_deref().unwrap_or_default())
        );
        if !json_mode {
            // Printed from the MCP driver as reports arrive.
            println_now(&line);
        }
        crate::lock(&seen).push(p.progress);
    });
    let slow = mcp
        .call_tool("mcp__demo__slow", json!({"steps": 3}), options)
        .await
        .context("the slow tool")?;
    let slow_text: Vec<String> = slow.content.iter().map(builtin::content_text).collect();
    out.line(format!(
        "  result: {}",
        safe::block(&slow_text.join(" "), "    ")
    ));
    let reports = crate::lock(&progress).len();

    // 5. An agent turn: a model the extension serves calls an MCP tool.
    out.line("");
    out.heading("5. an agent turn: the extension's model calls an MCP tool");
    let agent_summary = agent_turn(out, extensions, mcp).await?;

    Ok(json!({
        "input": { "typed": DEMO_INPUT, "rewritten": rewritten, "outcome": input_json },
        "status": status,
        "toolCall": tool_call_json(&call),
        "audit": audit_lines.lines().filter_map(|l| serde_json::from_str::<Value>(l).ok()).collect::<Vec<_>>(),
        "slow": { "result": slow_text, "progressReports": reports },
        "agent": agent_summary,
    }))
}

/// Step 6: the built-in server behind `sidewire mcp serve` (this binary, a child with the
/// demo's state, so its chain has the demo's extension), called as any MCP client calls it:
/// `add` is not read-only, so the host's read-only policy denies it and the extension's allow
/// at `permission.decision` overrides that, audited; the gateway's own audit record shows the
/// chain.
async fn gateway_step(
    out: &Out,
    mcp: &sidewire_mcp::McpHost,
    exe: &std::path::Path,
    temp: &std::path::Path,
    state: &std::path::Path,
) -> anyhow::Result<Value> {
    out.line("");
    out.heading("6. sidewire mcp serve: the same server and extension as one MCP server");
    let config = temp.join("gateway.json");
    let servers = json!({"mcpServers": {"demo": {"command": exe, "args": ["__mcp-server"]}}});
    std::fs::write(&config, servers.to_string()).context("writing the gateway's config")?;
    let audit = temp.join("gateway-audit.jsonl");
    let args = [
        "mcp".to_owned(),
        "serve".to_owned(),
        "--config".to_owned(),
        config.display().to_string(),
        "--audit".to_owned(),
        audit.display().to_string(),
    ];
    let spec = ServerSpec::stdio("gateway", exe.display().to_string())
        .args(args)
        .env("SIDEWIRE_HOME", state.display().to_string());
    out.line(
        "  sidewire mcp serve --config gateway.json  (a child, as Claude or Cursor starts it)",
    );
    mcp.add(spec).await.context("starting sidewire mcp serve")?;
    let tool = "mcp__gateway__demo__add";
    out.line(format!("  call {tool} {{\"a\":2,\"b\":3}}"));
    let result = mcp
        .call_tool(tool, json!({"a": 2, "b": 3}), ToolCallOptions::new())
        .await
        .context("a call through the gateway")?;
    let text: Vec<String> = result.content.iter().map(builtin::content_text).collect();
    out.line(format!(
        "  result: {}",
        safe::block(&text.join(" "), "    ")
    ));
    let records: Vec<Value> = std::fs::read_to_string(&audit)
        .unwrap_or_default()
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect();
    for record in &records {
        let members = |point: &str| {
            record["chain"][point]["members"]
                .as_array()
                .map(|members| {
                    members
                        .iter()
                        .map(|m| {
                            format!(
                                "{} {}",
                                m["plugin"].as_str().unwrap_or("?"),
                                m["decision"].as_str().unwrap_or("failed")
                            )
                        })
                        .collect::<Vec<_>>()
                        .join(", ")
                })
                .unwrap_or_default()
        };
        out.line(format!(
            "  gateway audit: {} {}: host {} ({}), permission.decision [{}], verdict {}, {}",
            safe::line(record["server"].as_str().unwrap_or("?")),
            safe::line(record["tool"].as_str().unwrap_or("?")),
            record["hostDecision"]["decision"].as_str().unwrap_or("?"),
            record["hostDecision"]["why"].as_str().unwrap_or("?"),
            safe::line(&members("permission")),
            record["verdict"].as_str().unwrap_or("?"),
            record["outcome"].as_str().unwrap_or("?"),
        ));
    }
    anyhow::ensure!(
        !result.is_error && records.len() == 1,
        "the call through the gateway did not go through as expected"
    );
    Ok(json!({ "result": text, "audit": records }))
}

/// Step 5: one turn of [`AGENT_INPUT`] with the built-in sidecar's scripted model, printed as
/// it happens (in text mode; `--json` gets the turn in the summary).
async fn agent_turn(
    out: &Out,
    extensions: &sidewire_ext_host::ExtensionHost,
    mcp: &sidewire_mcp::McpHost,
) -> anyhow::Result<Value> {
    let reference = builtin::scripted_model_ref();
    out.line(format!(
        "  model: {} (the extension's scripted model)",
        safe::line(&reference)
    ));
    let started = Instant::now();
    let agent = Agent::new(reference).session_id(crate::session_id());
    let mut conversation = Conversation::new();
    let mut printer = TurnPrinter::new(out, true);
    let json_mode = out.json;
    let mut calls = Vec::new();
    let report = agent
        .run_turn(extensions, mcp, &mut conversation, AGENT_INPUT, |event| {
            if let TurnEvent::ToolCall { report, .. } = &event {
                calls.push(tool_call_json(report));
            }
            if !json_mode {
                printer.event(&event);
            }
        })
        .await
        .context("the agent turn")?;
    if !json_mode {
        printer.finish(&report);
    }
    out.line(format!(
        "  turn took {} ms ({} rounds)",
        started.elapsed().as_millis(),
        report.rounds
    ));
    anyhow::ensure!(
        report.end == TurnEnd::Answered,
        "the agent turn ended: {}",
        report.end.as_str()
    );
    let mut summary = turn_json(&report);
    summary["toolCalls"] = Value::Array(calls);
    Ok(summary)
}

fn println_now(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stdout().lock(), "{line}");
}

/// The label of the demo extension's status surface, once published.
async fn wait_for_status(events: &mut sidewire_ext_host::HostEvents) -> Option<String> {
    let wait = async {
        while let Some(event) = events.recv().await {
            if let HostEvent::Surface(surface) = event
                && surface.surface_id == builtin::STATUS_SURFACE
            {
                let payload = serde_json::to_value(&surface.payload).ok()?;
                return payload["label"].as_str().map(str::to_owned);
            }
        }
        None
    };
    tokio::time::timeout(STATUS_WAIT, wait).await.ok().flatten()
}
