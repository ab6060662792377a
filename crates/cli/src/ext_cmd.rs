//! `sidewire ext`: boot the installed extensions for one shot — check them, run a hook
//! point's chain, emit an event, list the models they serve, stream one completion — and the
//! printing of the tool-call flow through the permission chain (`sidewire-agent`'s) that `run`
//! and the demo share.

use std::time::Instant;

use anyhow::Context as _;
use serde_json::{Value, json};
use sidewire_agent::{
    Agent, PolicyReason, ResponseCollector, ToolCall, ToolCallReport, ToolPolicy, ToolStop,
};
use sidewire_ext_host::{ExtensionHost, HostConfig, Outcome, StreamRequest, TraceResult};
use sidewire_ext_sdk::protocol::{
    HookPayload, HookPoint, ProviderMessage, ProviderRequest, ProviderRole, Reason, UiHost, Verdict,
};
use sidewire_mcp::ToolCallOptions;

use crate::cli::ExtCommand;
use crate::out::Out;
use crate::stream_out::{ChunkPrinter, usage_line};
use crate::{Interrupted, Reported, safe};

pub(crate) async fn run(
    command: ExtCommand,
    out: &Out,
    interrupted: Interrupted,
) -> anyhow::Result<()> {
    match command {
        ExtCommand::Check { name } => check(name.as_deref(), out).await,
        ExtCommand::Intercept { point, payload } => intercept(&point, &payload, out).await,
        ExtCommand::Event { point, payload } => event(&point, &payload, out).await,
        ExtCommand::Conformance(args) => crate::conformance_cmd::run(args, out).await,
        ExtCommand::Providers => providers(out).await,
        ExtCommand::Tools => tools(out).await,
        ExtCommand::Complete {
            provider,
            max_tokens,
            idle_timeout,
            text,
        } => {
            let idle =
                idle_timeout.and_then(|secs| std::time::Duration::try_from_secs_f64(secs).ok());
            complete(&provider, max_tokens, idle, text, out, interrupted).await
        }
    }
}

/// `ext providers`: the aggregated catalog, by plugin id, then each sidecar's order.
async fn providers(out: &Out) -> anyhow::Result<()> {
    let (extensions, _events) = boot().await?;
    let catalog = extensions.providers();
    extensions.shutdown().await;
    if catalog.is_empty() {
        out.line("no extension serves a model");
    }
    let mut rows = Vec::new();
    for entry in &catalog {
        let d = &entry.descriptor;
        let mut traits = Vec::new();
        for (on, name) in [
            (d.tools, "tools"),
            (d.reasoning, "reasoning"),
            (d.vision, "vision"),
        ] {
            if on == Some(true) {
                traits.push(name);
            }
        }
        let name = if d.display_name.is_empty() {
            String::new()
        } else {
            format!("  {}", safe::line(&d.display_name))
        };
        let traits = if traits.is_empty() {
            String::new()
        } else {
            format!(" [{}]", traits.join(", "))
        };
        out.line(format!(
            "{}{name}{traits}  (plugin {})",
            safe::line(&d.reference),
            safe::line(&entry.plugin)
        ));
        let mut row = serde_json::to_value(d).unwrap_or_default();
        if let Value::Object(members) = &mut row {
            members.insert("plugin".to_owned(), Value::String(entry.plugin.clone()));
        }
        rows.push(row);
    }
    out.json(&json!({ "providers": rows }));
    Ok(())
}

/// `ext tools`: the extension tools of the ready V2 sidecars, by plugin id, then each
/// sidecar's order. Every text is the manifest's or the sidecar's, so it is made safe first.
async fn tools(out: &Out) -> anyhow::Result<()> {
    let (extensions, _events) = boot().await?;
    let tools = extensions.tools();
    extensions.shutdown().await;
    if tools.is_empty() {
        out.line("no extension serves a tool");
    }
    for tool in &tools {
        let read_only = if tool.read_only { " [read-only]" } else { "" };
        out.line(format!(
            "{}{read_only}  {}  (plugin {})",
            safe::line(&tool.name),
            safe::line(&tool.description),
            safe::line(&tool.plugin)
        ));
    }
    out.json(&json!({ "tools": tools }));
    Ok(())
}

/// `ext complete`: one request (the text as the one user message) streamed to the terminal as
/// it arrives; an ending signal cancels the stream, which the sidecar is told. The stream has
/// an idle bound (`idle`, else the host's 60 s), and the answer the bound of a `run --model`
/// round (`Agent::DEFAULT_MAX_RESPONSE_BYTES`, 1 MiB): past it the stream is cancelled and the
/// command fails, so an endless stream neither hangs it nor floods the terminal.
async fn complete(
    provider: &str,
    max_tokens: u64,
    idle: Option<std::time::Duration>,
    text: String,
    out: &Out,
    mut interrupted: Interrupted,
) -> anyhow::Result<()> {
    let (extensions, _events) = boot().await?;
    let request = ProviderRequest {
        messages: vec![ProviderMessage {
            role: Some(ProviderRole::User),
            content: text,
            ..ProviderMessage::default()
        }],
        tools: Vec::new(),
        temperature: None,
        max_tokens,
        response_format: None,
    };
    let mut stream_request = StreamRequest::new(provider, request);
    if let Some(idle) = idle {
        stream_request = stream_request.idle_timeout(idle);
    }
    let result = stream_completion(&extensions, stream_request, out, &mut interrupted).await;
    extensions.shutdown().await;
    result
}

async fn stream_completion(
    extensions: &ExtensionHost,
    request: StreamRequest,
    out: &Out,
    interrupted: &mut Interrupted,
) -> anyhow::Result<()> {
    use futures_util::StreamExt as _;

    let provider = request.provider_ref.clone();
    let mut stream = extensions
        .open_stream(request)
        .await
        .with_context(|| format!("opening a stream on {provider}"))?;
    let mut printer = ChunkPrinter::new(out);
    // The bound of a `run --model` round, counted the same way and checked before a chunk is
    // printed: the chunk that goes past it is not shown.
    let mut answer = ResponseCollector::new(Agent::DEFAULT_MAX_RESPONSE_BYTES);
    let mut usage = None;
    let mut cancelled = false;
    let outcome = loop {
        let next = tokio::select! {
            next = stream.next() => next,
            () = interrupted.wait(), if !cancelled => {
                // The stream then ends with `stream_cancelled` (or completes, if its end was
                // already in), within the host's 2 s cancel bound.
                stream.cancel();
                cancelled = true;
                continue;
            }
        };
        match next {
            Some(Ok(chunk)) => {
                if let Err(err) = answer.push(&chunk) {
                    // Dropping the stream (below) cancels it on the sidecar.
                    break Err(Stop::TooLarge(err));
                }
                printer.chunk(&chunk);
                out.json_line(&json!({ "event": "chunk", "chunk": chunk }));
                if let Some(u) = &chunk.usage {
                    usage = Some(u.clone());
                }
            }
            Some(Err(err)) => break Err(Stop::Provider(err)),
            None => break Ok(()),
        }
    };
    drop(stream);
    printer.end_line();
    let reason = match &outcome {
        Err(Stop::Provider(err)) => err.reason(),
        _ => None,
    };
    let ended = match &outcome {
        Ok(()) => Ended::Completed,
        Err(Stop::TooLarge(_)) => Ended::TooLarge,
        Err(Stop::Provider(err)) if err.is_stream_idle() => Ended::Idle,
        Err(Stop::Provider(_)) if reason == Some(Reason::StreamCancelled) => Ended::Cancelled,
        Err(Stop::Provider(_)) => Ended::Failed,
    };
    if let Some(usage) = &usage {
        out.line(usage_line(usage));
    }
    let error = match &outcome {
        Ok(()) => None,
        Err(Stop::Provider(err)) => Some(sidewire_mcp::error_line(err)),
        Err(Stop::TooLarge(err)) => Some(err.to_string()),
    };
    out.json_line(&json!({
        "event": "end",
        "outcome": ended.as_str(),
        "reason": reason.map(Reason::as_str),
        "error": error,
        "text": answer.response().text,
        "usage": usage,
    }));
    match (outcome, ended) {
        (Ok(()), _) => Ok(()),
        (Err(_), Ended::Cancelled) => {
            out.note("the stream was cancelled");
            Ok(())
        }
        (Err(stop), _) => {
            let err = match stop {
                Stop::Provider(err) => anyhow::Error::new(err),
                Stop::TooLarge(err) => anyhow::Error::new(err),
            };
            Err(err.context(format!("the provider {provider} failed")))
        }
    }
}

/// Why an `ext complete` stream stopped short.
#[derive(Debug)]
enum Stop {
    /// The stream failed (or was cancelled).
    Provider(sidewire_ext_host::Error),
    /// The answer went past its bound.
    TooLarge(sidewire_agent::Error),
}

/// How an `ext complete` stream ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ended {
    /// A clean end.
    Completed,
    /// Cancelled on an ending signal (`stream_cancelled`).
    Cancelled,
    /// Nothing arrived within the idle bound: cancelled by the host, a failure.
    Idle,
    /// The answer went past its bound: cancelled, a failure.
    TooLarge,
    /// Any other failure.
    Failed,
}

impl Ended {
    fn as_str(self) -> &'static str {
        match self {
            Ended::Completed => "completed",
            Ended::Cancelled => "cancelled",
            Ended::Idle => "idle",
            Ended::TooLarge => "too_large",
            Ended::Failed => "failed",
        }
    }
}

/// Boots the installed, enabled plugins for a one-shot command: headless, a fresh session,
/// the current directory as the workspace.
pub(crate) async fn boot() -> anyhow::Result<(ExtensionHost, sidewire_ext_host::HostEvents)> {
    boot_with(None).await
}

/// [`boot`], with the command hooks of the files users keep as a member of every chain they
/// intercept (project hooks only once approved: nobody is asked here).
pub(crate) async fn boot_with_hooks(
    out: &Out,
) -> anyhow::Result<(ExtensionHost, sidewire_ext_host::HostEvents)> {
    boot_with(Some(out)).await
}

async fn boot_with(
    hooks: Option<&Out>,
) -> anyhow::Result<(ExtensionHost, sidewire_ext_host::HostEvents)> {
    let home = crate::sidewire_home()?;
    let workspace = std::env::current_dir().context("cannot read the current directory")?;
    let session = crate::session_id();
    let hooks = match hooks {
        Some(out) => crate::hooks_cmd::member(out, false, &session)?,
        None => None,
    };
    let mut config = HostConfig::new(&home, session, workspace)
        .ui_host(UiHost::Headless)
        .audit_log(home.join("audit.jsonl"));
    if let Some(hooks) = hooks {
        config = config.member(hooks);
    }
    ExtensionHost::boot(config)
        .await
        .context("booting the installed extensions")
}

async fn check(only: Option<&str>, out: &Out) -> anyhow::Result<()> {
    let home = crate::sidewire_home()?;
    let store = sidewire_ext_host::PluginStore::new(&home);
    let installed = store.list().context("reading the plugin store")?;
    if installed.is_empty() && only.is_none() {
        out.line(
            "no plugins installed: install one with `sidewire plugin install DIR` (a directory \
             holding reasonix-plugin.json; `sidewire demo` shows one at work)",
        );
        out.json(&json!({ "plugins": [], "bootMillis": 0 }));
        return Ok(());
    }
    if let Some(name) = only {
        anyhow::ensure!(
            installed.iter().any(|p| p.id == name),
            "no installed plugin is named {name} (see `sidewire plugin list`)"
        );
    }
    let started = Instant::now();
    let (extensions, _events) = boot().await?;
    let elapsed = started.elapsed();
    let report = extensions.report();
    let failed: Vec<_> = report
        .failed
        .iter()
        .filter(|f| only.is_none_or(|name| f.plugin == name))
        .collect();
    let running: Vec<_> = extensions
        .sidecars()
        .into_iter()
        .filter(|s| only.is_none_or(|name| s.plugin == name))
        .collect();
    let mut plugins = Vec::new();
    for sidecar in &running {
        let package = installed
            .iter()
            .find(|p| p.id == sidecar.plugin)
            .and_then(|p| sidewire_ext_host::Package::open(&p.root).ok());
        let declared = package
            .as_ref()
            .map(|package| package.trust_summary().to_string())
            .unwrap_or_default();
        out.line(format!(
            "ok   {} (pid {})",
            safe::line(&sidecar.plugin),
            sidecar.pid
        ));
        for line in declared.lines() {
            out.line(format!("     {}", safe::line(line)));
        }
        let mut notes = Vec::new();
        for (_, slot) in report
            .unused_slots
            .iter()
            .filter(|(plugin, _)| *plugin == sidecar.plugin)
        {
            notes.push(format!("{slot}: slot accepted, not used by this host"));
        }
        for unmet in report
            .unmet_optional
            .iter()
            .filter(|u| u.plugin == sidecar.plugin)
        {
            notes.push(format!(
                "warning: optional capability {} is not available on this host",
                unmet.capability
            ));
        }
        // A v2 manifest's contributed paths, as install checked them (a linked package may
        // have changed since).
        match package.as_ref().map(|p| p.check_contributions()) {
            Some(Ok(warnings)) => {
                notes.extend(warnings.iter().map(|w| format!("warning: {w}")));
            }
            Some(Err(err)) => notes.push(format!("warning: {err}")),
            None => {}
        }
        for note in &notes {
            out.line(format!("     {}", safe::line(note)));
        }
        plugins.push(json!({ "plugin": sidecar.plugin, "pid": sidecar.pid, "ok": true, "declared": declared, "notes": notes }));
    }
    // v2 plugins that were resolved but not started (spec delta §2.6): not a failure, and the
    // reason is the reference's text.
    for inactive in report
        .inactive
        .iter()
        .filter(|p| only.is_none_or(|name| p.plugin == name))
    {
        out.line(format!(
            "inactive {}: {}",
            safe::line(&inactive.plugin),
            safe::line(&inactive.reason.to_string())
        ));
        plugins.push(json!({
            "plugin": inactive.plugin,
            "ok": true,
            "inactive": true,
            "reason": inactive.reason.to_string(),
            "missing": inactive.reason.missing(),
        }));
    }
    for failure in &failed {
        // The failure's text carries the sidecar's cause and stderr tail over several lines.
        out.line(format!(
            "FAIL {}: {}",
            safe::line(&failure.plugin),
            safe::block(&failure.to_string(), "     ")
        ));
        plugins
            .push(json!({ "plugin": failure.plugin, "ok": false, "error": failure.to_string() }));
    }
    out.line(format!("boot took {} ms", elapsed.as_millis()));
    out.json(&json!({ "plugins": plugins, "bootMillis": elapsed.as_millis() as u64 }));
    extensions.shutdown().await;
    if failed.is_empty() {
        Ok(())
    } else {
        Err(Reported.into())
    }
}

fn point(name: &str) -> anyhow::Result<HookPoint> {
    HookPoint::parse(name).with_context(|| {
        let all: Vec<&str> = HookPoint::ALL.iter().map(|p| p.as_str()).collect();
        format!(
            "unknown hook point {name:?}; the points are: {}",
            all.join(", ")
        )
    })
}

fn payload(point: HookPoint, text: &str) -> anyhow::Result<HookPayload> {
    let text = if text == "-" {
        let mut buf = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut buf)
            .context("reading the payload from stdin")?;
        buf
    } else {
        text.to_owned()
    };
    point
        .decode_payload(text.trim())
        .map_err(|err| anyhow::anyhow!("invalid payload for {}: {err}", point.as_str()))
}

async fn intercept(point_name: &str, text: &str, out: &Out) -> anyhow::Result<()> {
    let point = point(point_name)?;
    let payload = payload(point, text)?;
    let (extensions, _events) = boot_with_hooks(out).await?;
    let outcome = extensions.intercept(point, payload).await;
    extensions.shutdown().await;
    let outcome = outcome.with_context(|| format!("running the {point_name} chain"))?;
    print_outcome(out, &outcome);
    out.json(&outcome_json(&outcome));
    if outcome.blocked.is_some() {
        Err(Reported.into())
    } else {
        Ok(())
    }
}

async fn event(point_name: &str, text: &str, out: &Out) -> anyhow::Result<()> {
    let point = point(point_name)?;
    let payload = payload(point, text)?;
    let (extensions, _events) = boot().await?;
    extensions.event(point, &payload);
    // Events are fire-and-forget; shutdown flushes the queue before telling sidecars to stop.
    extensions.shutdown().await;
    out.line(format!("event {point_name} emitted"));
    out.json(&json!({ "point": point_name, "emitted": true }));
    Ok(())
}

/// Prints an outcome: the final payload, blocked and why, the permission, the audit record
/// and the per-plugin trace.
pub(crate) fn print_outcome(out: &Out, outcome: &Outcome) {
    for entry in &outcome.trace {
        let what = match &entry.result {
            TraceResult::Decided(decision) => decision.as_str().to_owned(),
            TraceResult::Failed { reason, message } => {
                format!("{} ({})", reason.as_str(), safe::line(message))
            }
            TraceResult::Unaudited { decision, message } => {
                format!(
                    "{} NOT APPLIED ({})",
                    decision.as_str(),
                    safe::line(message)
                )
            }
            _ => "?".to_owned(),
        };
        out.line(format!(
            "  trace: {} {} in {:.1} ms",
            safe::line(&entry.plugin),
            what,
            entry.elapsed.as_secs_f64() * 1000.0
        ));
        for note in &entry.notes {
            out.line(format!("    {}", safe::line(note)));
        }
    }
    if let Some(blocked) = &outcome.blocked {
        out.line(format!(
            "  BLOCKED by {}: {}",
            safe::line(&blocked.plugin),
            safe::line(&blocked.reason)
        ));
    }
    if let Some(verdict) = outcome.permission {
        out.line(format!("  permission: {}", verdict.as_str()));
    }
    if !outcome.applied.is_empty() {
        out.line(format!(
            "  replaced by: {}",
            safe::line(&outcome.applied.join(", "))
        ));
    }
    if let Some(audit) = &outcome.audit {
        out.line(format!(
            "  audited: {} turned the host's {} into {} ({})",
            safe::line(&audit.plugin),
            safe::line(&audit.host_decision),
            safe::line(&audit.extension_decision),
            safe::line(&audit.reason)
        ));
    }
    if let Ok(payload) = serde_json::to_string(&outcome.payload) {
        // Compact JSON is one line (serde_json escapes C0); the rest of the set is escaped here.
        out.line(format!("  payload: {}", safe::line(&payload)));
    }
}

/// The outcome as JSON.
pub(crate) fn outcome_json(outcome: &Outcome) -> Value {
    let trace: Vec<Value> = outcome
        .trace
        .iter()
        .map(|entry| {
            let (decision, reason, message) = match &entry.result {
                TraceResult::Decided(decision) => (Some(decision.as_str()), None, None),
                TraceResult::Failed { reason, message } => {
                    (None, Some(reason.as_str()), Some(message.clone()))
                }
                // The decision was not applied: its audit record could not be written.
                TraceResult::Unaudited { decision, message } => (
                    Some(decision.as_str()),
                    Some("audit_failed"),
                    Some(message.clone()),
                ),
                _ => (None, None, None),
            };
            json!({
                "plugin": entry.plugin,
                "role": format!("{:?}", entry.role),
                "decision": decision,
                "failure": reason,
                "message": message,
                "millis": entry.elapsed.as_secs_f64() * 1000.0,
                "notes": entry.notes,
            })
        })
        .collect();
    json!({
        "payload": outcome.payload,
        "blocked": outcome.blocked.as_ref().map(|b| json!({ "plugin": b.plugin, "reason": b.reason })),
        "permission": outcome.permission.map(Verdict::as_str),
        "applied": outcome.applied,
        "audit": outcome.audit.as_ref().map(|a| json!({
            "time": a.time, "plugin": a.plugin, "point": a.point,
            "hostDecision": a.host_decision, "extensionDecision": a.extension_decision, "reason": a.reason,
        })),
        "trace": trace,
    })
}

/// A tool call the way an agent host makes it, through `sidewire-agent`'s chain on one pinned
/// generation: `tool.before` → `permission.decision` (the host's own decision: tools whose
/// annotations say read-only are allowed, others denied unless `allow_tools`) → the MCP call →
/// `tool.after`. The report is printed as text once the call ends; a blocked or denied call is
/// then an error (what ran is printed first), otherwise the report is returned for `--json`.
/// Fails with nothing printed when no MCP tool is `name`.
pub(crate) async fn chained_tool_call(
    out: &Out,
    extensions: &ExtensionHost,
    mcp: &sidewire_mcp::McpHost,
    name: &str,
    arguments: Value,
    options: ToolCallOptions,
    allow_tools: bool,
) -> anyhow::Result<ToolCallReport> {
    let policy = if allow_tools {
        ToolPolicy::AllowAll
    } else {
        ToolPolicy::ReadOnly
    };
    // One turn for the whole call: `tool.before`, `permission.decision` and `tool.after` are
    // answered by one generation, even if a reload is requested meanwhile (§13.3).
    let turn = extensions.turn().await;
    // A fresh random id: one-shot commands make one call each, the demo a few.
    let call = ToolCall::new(crate::session_id(), name, arguments);
    let mut report = sidewire_agent::chained_tool_call(&turn, mcp, call, policy, options).await;
    if matches!(report.stop, Some(ToolStop::UnknownTool)) {
        anyhow::bail!("no MCP tool is named {name}");
    }
    print_tool_call(out, &report);
    match report.stop.take() {
        Some(stop) => Err(stop_error(stop, name)),
        None => Ok(report),
    }
}

/// The error a stopped call of `tool` fails with.
pub(crate) fn stop_error(stop: ToolStop, tool: &str) -> anyhow::Error {
    match stop {
        ToolStop::Blocked {
            point,
            plugin,
            reason,
        } => anyhow::anyhow!("{} blocked by {plugin}: {reason}", point.as_str()),
        ToolStop::Denied => anyhow::anyhow!("permission denied for {tool}"),
        ToolStop::UnknownTool => anyhow::anyhow!("no MCP tool is named {tool}"),
        ToolStop::Failed(err) => anyhow::Error::new(err),
        other => anyhow::anyhow!("{other:?}"),
    }
}

/// Why the host's policy decided as it did, in the CLI's words.
fn policy_reason(why: PolicyReason) -> &'static str {
    match why {
        PolicyReason::ReadOnly => "read-only tool",
        PolicyReason::AllowAll => "--allow-tools",
        PolicyReason::NotReadOnly => "not read-only",
        PolicyReason::DenyAll => "the policy denies every tool",
        _ => "?",
    }
}

/// Prints what a tool call ran: the call, each chain's outcome, the host's policy, the result.
pub(crate) fn print_tool_call(out: &Out, report: &ToolCallReport) {
    out.line(format!(
        "  call {} {}",
        safe::line(&report.tool),
        crate::stream_out::arguments_preview(&report.requested.to_string())
    ));
    if let Some(before) = &report.before {
        print_outcome(out, before);
    }
    if let Some(policy) = &report.policy {
        out.line(format!(
            "  host policy: {} ({})",
            policy.decision.as_str(),
            policy_reason(policy.why)
        ));
    }
    if let Some(permission) = &report.permission {
        print_outcome(out, permission);
    }
    if let Some(result) = &report.result {
        out.line(format!(
            "  result{}: {}",
            if result.is_error { " (isError)" } else { "" },
            safe::block(&result.text.join(" "), "    ")
        ));
    }
}

/// A tool call's report as JSON.
pub(crate) fn tool_call_json(report: &ToolCallReport) -> Value {
    json!({
        "tool": report.tool,
        "callId": report.call_id,
        "arguments": report.arguments,
        "toolBefore": report.before.as_ref().map(outcome_json),
        "permission": report.permission.as_ref().map(outcome_json),
        "result": report.result.as_ref().map(|r| json!({ "content": r.text, "isError": r.is_error })),
        "toolAfter": report.after.as_ref().map(outcome_json),
        "stop": report.stop.as_ref().map(stop_json),
    })
}

/// Why a call stopped, as JSON.
fn stop_json(stop: &ToolStop) -> Value {
    match stop {
        ToolStop::UnknownTool => json!({ "kind": "unknown_tool" }),
        ToolStop::Blocked {
            point,
            plugin,
            reason,
        } => {
            json!({ "kind": "blocked", "point": point.as_str(), "plugin": plugin, "reason": reason })
        }
        ToolStop::Denied => json!({ "kind": "denied" }),
        ToolStop::TooMany { limit } => json!({ "kind": "too_many", "limit": limit }),
        ToolStop::Failed(err) => {
            json!({ "kind": "failed", "error": sidewire_mcp::error_line(err) })
        }
        other => json!({ "kind": format!("{other:?}") }),
    }
}
