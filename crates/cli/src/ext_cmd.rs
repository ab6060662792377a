//! `sidewire ext`: boot the installed extensions for one shot — check them, run a hook
//! point's chain, or emit an event — and the tool-call flow through the permission chain that
//! the demo shares.

use std::time::Instant;

use anyhow::Context as _;
use serde_json::{Value, json};
use sidewire_ext_host::{ExtensionHost, HostConfig, Outcome, Runtime, TraceResult};
use sidewire_ext_sdk::protocol::{
    HookPayload, HookPoint, PermissionPayload, ToolAfterPayload, ToolBeforePayload, UiHost, Verdict,
};
use sidewire_mcp::ToolCallOptions;

use crate::Reported;
use crate::cli::ExtCommand;
use crate::out::Out;
use crate::safe;

pub(crate) async fn run(command: ExtCommand, out: &Out) -> anyhow::Result<()> {
    match command {
        ExtCommand::Check { name } => check(name.as_deref(), out).await,
        ExtCommand::Intercept { point, payload } => intercept(&point, &payload, out).await,
        ExtCommand::Event { point, payload } => event(&point, &payload, out).await,
        ExtCommand::Conformance(args) => crate::conformance_cmd::run(args, out).await,
    }
}

/// Boots the installed, enabled plugins for a one-shot command: headless, a fresh session,
/// the current directory as the workspace.
async fn boot() -> anyhow::Result<(Runtime, sidewire_ext_host::HostEvents)> {
    let home = crate::sidewire_home()?;
    let workspace = std::env::current_dir().context("cannot read the current directory")?;
    let config = HostConfig::new(&home, crate::session_id(), workspace)
        .ui_host(UiHost::Headless)
        .audit_log(home.join("audit.jsonl"));
    ExtensionHost::boot(config)
        .await
        .context("booting the installed extensions")
}

async fn check(only: Option<&str>, out: &Out) -> anyhow::Result<()> {
    let home = crate::sidewire_home()?;
    let store = sidewire_ext_host::PluginStore::new(&home);
    let installed = store.list().context("reading the plugin store")?;
    if let Some(name) = only {
        anyhow::ensure!(
            installed.iter().any(|p| p.id == name),
            "no installed plugin is named {name} (see `sidewire plugin list`)"
        );
    }
    let started = Instant::now();
    let (runtime, _events) = boot().await?;
    let elapsed = started.elapsed();
    let report = runtime.report();
    let failed: Vec<_> = report
        .failed
        .iter()
        .filter(|f| only.is_none_or(|name| f.plugin == name))
        .collect();
    let running: Vec<_> = runtime
        .sidecars()
        .into_iter()
        .filter(|s| only.is_none_or(|name| s.plugin == name))
        .collect();
    let mut plugins = Vec::new();
    for sidecar in &running {
        let declared = installed
            .iter()
            .find(|p| p.id == sidecar.plugin)
            .and_then(|p| sidewire_ext_host::Package::open(&p.root).ok())
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
        plugins.push(json!({ "plugin": sidecar.plugin, "pid": sidecar.pid, "ok": true, "declared": declared }));
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
    runtime.shutdown().await;
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
    let (runtime, _events) = boot().await?;
    let outcome = runtime.intercept(point, payload).await;
    runtime.shutdown().await;
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
    let (runtime, _events) = boot().await?;
    runtime.event(point, &payload);
    // Events are fire-and-forget; shutdown flushes the queue before telling sidecars to stop.
    runtime.shutdown().await;
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

/// A tool call the way an agent host makes it: `tool.before` (which may block or rewrite the
/// arguments) → `permission.decision` (the host's own decision from a simple policy: tools
/// whose annotations say read-only are allowed, others denied unless `allow_tools`) → the MCP
/// call → `tool.after`. The stages fill in a [`ToolCallReport`], printed as text once the call
/// ends; a blocked or denied call is then an error (what ran is printed first), otherwise the
/// report is returned for `--json`. Fails with nothing printed when no MCP tool is `name`.
pub(crate) async fn chained_tool_call(
    out: &Out,
    runtime: &Runtime,
    mcp: &sidewire_mcp::McpHost,
    name: &str,
    arguments: Value,
    options: ToolCallOptions,
    allow_tools: bool,
) -> anyhow::Result<ToolCallReport> {
    let tool = mcp
        .tools()
        .into_iter()
        .find(|t| t.name == name)
        .with_context(|| format!("no MCP tool is named {name}"))?;
    let read_only = tool.tool.hint("readOnlyHint").unwrap_or(false);
    let why = match (read_only, allow_tools) {
        (true, _) => PolicyReason::ReadOnly,
        (false, true) => PolicyReason::AllowTools,
        (false, false) => PolicyReason::NotReadOnly,
    };
    let mut report = ToolCallReport::new(name, arguments);
    if let Err(stop) = report.chain(runtime, mcp, why, options).await {
        report.stop = Some(stop);
    }
    report.print(out);
    match report.stop.take() {
        Some(stop) => Err(stop.into_error(name)),
        None => Ok(report),
    }
}

/// What a chained tool call did, stage by stage, as far as it got. Each stage is there only
/// when the one before it let the call go on; `stop` says why it went no further.
#[derive(Debug)]
pub(crate) struct ToolCallReport {
    /// The namespaced tool name.
    tool: String,
    /// The arguments as the caller gave them.
    requested: Value,
    /// The arguments sent: as `tool.before` left them.
    arguments: Value,
    before: Option<Outcome>,
    policy: Option<HostPolicy>,
    permission: Option<Outcome>,
    result: Option<ToolResult>,
    after: Option<Outcome>,
    /// Why the call stopped before its end; `None` when `tool.after` ran.
    stop: Option<Stop>,
}

/// The host's own permission decision, before `permission.decision` may change it.
#[derive(Debug, Clone, Copy)]
struct HostPolicy {
    decision: Verdict,
    why: PolicyReason,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PolicyReason {
    /// The tool's annotations say it is read-only: allowed.
    ReadOnly,
    /// Not read-only, allowed by `--allow-tools`.
    AllowTools,
    /// Not read-only: denied.
    NotReadOnly,
}

impl PolicyReason {
    fn as_str(self) -> &'static str {
        match self {
            PolicyReason::ReadOnly => "read-only tool",
            PolicyReason::AllowTools => "--allow-tools",
            PolicyReason::NotReadOnly => "not read-only",
        }
    }
}

/// The MCP call's result as the chain sees it: its content as text.
#[derive(Debug)]
struct ToolResult {
    text: Vec<String>,
    is_error: bool,
}

/// Why a chained tool call stopped.
#[derive(Debug)]
enum Stop {
    /// A chain blocked the call.
    Blocked {
        point: HookPoint,
        plugin: String,
        reason: String,
    },
    /// `permission.decision` did not end in `allow`.
    Denied,
    /// A chain or the MCP call could not run, or `tool.before` left arguments that are not
    /// JSON.
    Failed(anyhow::Error),
}

impl From<anyhow::Error> for Stop {
    fn from(err: anyhow::Error) -> Self {
        Stop::Failed(err)
    }
}

impl Stop {
    /// The error the call of `tool` fails with.
    fn into_error(self, tool: &str) -> anyhow::Error {
        match self {
            Stop::Blocked {
                point,
                plugin,
                reason,
            } => anyhow::anyhow!("{} blocked by {plugin}: {reason}", point.as_str()),
            Stop::Denied => anyhow::anyhow!("permission denied for {tool}"),
            Stop::Failed(err) => err,
        }
    }

    /// Stops the call when `point`'s chain blocked it.
    fn if_blocked(point: HookPoint, outcome: &Outcome) -> Result<(), Stop> {
        match &outcome.blocked {
            Some(blocked) => Err(Stop::Blocked {
                point,
                plugin: blocked.plugin.clone(),
                reason: blocked.reason.clone(),
            }),
            None => Ok(()),
        }
    }
}

impl ToolCallReport {
    /// A call of `tool` with `arguments` that has not run yet.
    fn new(tool: &str, arguments: Value) -> Self {
        ToolCallReport {
            tool: tool.to_owned(),
            requested: arguments.clone(),
            arguments,
            before: None,
            policy: None,
            permission: None,
            result: None,
            after: None,
            stop: None,
        }
    }

    /// The stages, each recorded as it ends.
    async fn chain(
        &mut self,
        runtime: &Runtime,
        mcp: &sidewire_mcp::McpHost,
        why: PolicyReason,
        options: ToolCallOptions,
    ) -> Result<(), Stop> {
        let name = self.tool.clone();
        let call_id = crate::session_id();
        // One turn for the whole call: `tool.before`, `permission.decision` and `tool.after`
        // are answered by one generation, even if a reload is requested meanwhile (§13.3).
        let turn = runtime.turn().await;
        let payload = HookPayload::ToolBefore(ToolBeforePayload {
            name: name.clone(),
            arguments: self.arguments.to_string(),
            call_id: call_id.clone(),
        });
        let before = self
            .before
            .insert((turn.intercept(HookPoint::ToolBefore, payload).await).context("tool.before")?);
        Stop::if_blocked(HookPoint::ToolBefore, before)?;
        if let HookPayload::ToolBefore(p) = &before.payload {
            self.arguments = serde_json::from_str(&p.arguments)
                .context("tool.before left arguments that are not JSON")?;
        }
        let decision = match why {
            PolicyReason::ReadOnly | PolicyReason::AllowTools => Verdict::Allow,
            PolicyReason::NotReadOnly => Verdict::Deny,
        };
        self.policy = Some(HostPolicy { decision, why });
        let payload = HookPayload::Permission(PermissionPayload {
            name: name.clone(),
            arguments: self.arguments.to_string(),
            read_only: Some(why == PolicyReason::ReadOnly),
            host_decision: decision,
        });
        let permission = self.permission.insert(
            (turn.intercept(HookPoint::PermissionDecision, payload).await)
                .context("permission.decision")?,
        );
        Stop::if_blocked(HookPoint::PermissionDecision, permission)?;
        if permission.permission != Some(Verdict::Allow) {
            return Err(Stop::Denied);
        }
        let result = (mcp.call_tool(&name, self.arguments.clone(), options).await)
            .with_context(|| format!("calling {name}"))?;
        let text: Vec<String> = (result.content.iter())
            .map(crate::builtin::content_text)
            .collect();
        let is_error = result.is_error;
        let payload = HookPayload::ToolAfter(ToolAfterPayload {
            name,
            arguments: self.arguments.to_string(),
            call_id,
            result: text.join("\n"),
            is_error: Some(is_error),
        });
        self.result = Some(ToolResult { text, is_error });
        self.after =
            Some((turn.intercept(HookPoint::ToolAfter, payload).await).context("tool.after")?);
        Ok(())
    }

    /// Prints what ran: the call, each chain's outcome, the host's policy, the result.
    fn print(&self, out: &Out) {
        out.line(format!(
            "  call {} {}",
            safe::line(&self.tool),
            safe::line(&self.requested.to_string())
        ));
        if let Some(before) = &self.before {
            print_outcome(out, before);
        }
        if let Some(policy) = &self.policy {
            out.line(format!(
                "  host policy: {} ({})",
                policy.decision.as_str(),
                policy.why.as_str()
            ));
        }
        if let Some(permission) = &self.permission {
            print_outcome(out, permission);
        }
        if let Some(result) = &self.result {
            out.line(format!(
                "  result{}: {}",
                if result.is_error { " (isError)" } else { "" },
                safe::block(&result.text.join(" "), "    ")
            ));
        }
    }

    /// The report as JSON.
    fn json(&self) -> Value {
        json!({
            "tool": self.tool,
            "arguments": self.arguments,
            "toolBefore": self.before.as_ref().map(outcome_json),
            "permission": self.permission.as_ref().map(outcome_json),
            "result": self.result.as_ref().map(|r| json!({ "content": r.text, "isError": r.is_error })),
            "toolAfter": self.after.as_ref().map(outcome_json),
        })
    }
}

/// `--json` output embeds the report as [`ToolCallReport::json`].
impl serde::Serialize for ToolCallReport {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.json().serialize(serializer)
    }
}
