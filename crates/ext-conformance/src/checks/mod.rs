//! The checks, one file per spec area, as groups: a group is one fresh sidecar process (or a
//! few) and the statements it can speak to. [`run`] runs the selected groups, at most
//! [`RunOptions::parallel`] at a time, within the run's budget, and merges their findings.

mod content;
mod envelope;
pub(crate) mod framing;
mod intercept;
mod lifecycle;
mod provider;
mod shutdown;
mod v2;

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use futures_util::StreamExt as _;
use serde_json::{Value, json};
use sidewire_ext_protocol::{HookPoint, ProtocolProfile};
use tokio::time::Instant;

use super::RunOptions;
use super::report::{Findings, Outcome, Report};
use super::session::{Ctx, Session};
use super::statements::{Statement, statement, statements};
use super::target::Launch;

/// What `--slow` adds to the run's budget.
const SLOW_EXTRA: Duration = Duration::from_secs(45);

type GroupFuture<'c> = Pin<Box<dyn Future<Output = Findings> + Send + 'c>>;

/// One group of checks.
struct Group {
    /// For messages: what the group does.
    name: &'static str,
    /// The statements it can speak to (it runs when one of them is selected).
    ids: &'static [&'static str],
    run: for<'c> fn(&'c Ctx) -> GroupFuture<'c>,
    /// The one profile it runs on (`None`: every profile).
    profile: Option<ProtocolProfile>,
}

macro_rules! group {
    ($name:literal, [$($id:literal),*], $f:path) => {
        Group { name: $name, ids: &[$($id),*], run: |ctx| Box::pin($f(ctx)), profile: None }
    };
    ($profile:ident: $name:literal, [$($id:literal),*], $f:path) => {
        Group {
            name: $name,
            ids: &[$($id),*],
            run: |ctx| Box::pin($f(ctx)),
            profile: Some(ProtocolProfile::$profile),
        }
    };
}

/// Every group, slow ones last.
fn groups() -> Vec<Group> {
    vec![
        // Also the group for the statements every connection records (15, S-frames,
        // S-handshake, S-barrier), so that selecting only those runs something.
        group!(
            "the envelope rules",
            [
                "6",
                "7",
                "8",
                "9",
                "10",
                "12",
                "13",
                "14",
                "15",
                "20",
                "32",
                "49",
                "S-events",
                "S-frames",
                "S-handshake",
                "S-barrier",
                "D25"
            ],
            envelope::run
        ),
        group!(
            "the intercept answers",
            ["S-intercept", "S-ui", "69"],
            intercept::run
        ),
        group!(
            "externalized payloads",
            ["11", "16", "49", "59", "60", "S-content"],
            content::run
        ),
        group!("a frame of exactly the limit", ["1"], framing::exact),
        group!("a frame one byte over the limit", ["1", "2"], framing::over),
        group!("a blank line", ["6"], framing::blank),
        group!("a whitespace-only line", ["6"], framing::whitespace),
        group!("a line beginning with a BOM", ["6"], framing::bom),
        group!("a repeated envelope member", ["7"], framing::duplicate),
        group!("the states of §6.5", ["13", "32"], lifecycle::states),
        group!(
            V1: "the version checks",
            ["20", "22", "23", "24"],
            lifecycle::versions
        ),
        group!(V2: "the v2 version checks", ["D4", "D5"], v2::versions),
        group!(V2: "the v2 initialize params", ["D6"], v2::params),
        group!(V2: "zero timeouts", ["D9"], v2::zero_timeouts),
        group!(V2: "tool calls", ["D15"], v2::tools),
        group!(V2: "v2 stream numbering", ["D22"], provider::v2_numbering),
        group!("a narrower manifest", ["50"], lifecycle::narrower),
        group!("shutdown", ["88"], shutdown::shutdown),
        group!("end of input", ["88"], shutdown::eof),
        group!(
            "provider streams",
            ["89", "90", "S-provider"],
            provider::run
        ),
        group!("an unanswered content read", ["19"], content::slow),
    ]
}

/// Runs the selected statements against `launch`.
pub(crate) async fn run(launch: Launch, options: &RunOptions) -> Report {
    let began = Instant::now();
    let plugin = launch.plugin_id.clone();
    let profile = options.protocol.unwrap_or(launch.profile);
    let selected: Vec<&'static Statement> = statements()
        .iter()
        .filter(|s| options.selects(s) && s.applies_to(profile))
        .collect();
    let ctx = Ctx {
        launch,
        profile,
        options: options.clone(),
        // The slow check waits out a 30 s deadline (and 10 s more) on top of the rest.
        deadline: began
            + options.run_budget
            + if options.slow {
                SLOW_EXTRA
            } else {
                Duration::ZERO
            },
    };
    let selected_ids: Vec<&str> = selected.iter().map(|s| s.id).collect();
    let groups: Vec<Group> = groups()
        .into_iter()
        .filter(|g| g.ids.iter().any(|id| selected_ids.contains(id)))
        .filter(|g| g.ids != ["19"] || options.slow)
        .filter(|g| g.profile.is_none_or(|only| only == profile))
        .collect();
    let ctx_ref = &ctx;
    let findings: Vec<Findings> = futures_util::stream::iter(groups)
        .map(|group| async move {
            // A second past the run's deadline: every wait inside is already bounded by it,
            // so this only catches a group that overran anyway.
            let limit = ctx_ref.deadline + Duration::from_secs(1);
            match tokio::time::timeout_at(limit, (group.run)(ctx_ref)).await {
                Ok(findings) => findings,
                Err(_) => {
                    let mut findings = Findings::default();
                    for id in group.ids {
                        findings.add(
                            statement(id).id,
                            Outcome::Fail {
                                detail: format!("the run's budget ran out during {}", group.name),
                                frames: Vec::new(),
                            },
                        );
                    }
                    findings
                }
            }
        })
        .buffer_unordered(options.parallel.max(1))
        .collect()
        .await;
    let mut all = Findings::default();
    for f in findings {
        all.extend(f);
    }
    Report {
        plugin,
        profile,
        results: all.results(&selected, options.slow),
        elapsed: began.elapsed(),
    }
}

/// Starts a session and shakes hands; on failure records `why` against `ids` and returns the
/// findings so far.
async fn ready<'c>(ctx: &'c Ctx, ids: &[&'static str]) -> Result<Session<'c>, Findings> {
    let mut session = match Session::start(ctx) {
        Ok(session) => session,
        Err(why) => {
            let mut findings = Findings::default();
            for id in ids {
                findings.add(
                    id,
                    Outcome::Fail {
                        detail: why.clone(),
                        frames: Vec::new(),
                    },
                );
            }
            return Err(findings);
        }
    };
    match session.handshake().await {
        Ok(()) => Ok(session),
        Err(why) => {
            for id in ids {
                session.fail(id, format!("the handshake failed: {why}"));
            }
            Err(session.finish())
        }
    }
}

/// Starts a bare session (no handshake); a spawn failure is recorded against `ids`.
fn bare<'c>(ctx: &'c Ctx, ids: &[&'static str]) -> Result<Session<'c>, Findings> {
    Session::start(ctx).map_err(|why| {
        let mut findings = Findings::default();
        for id in ids {
            findings.add(
                id,
                Outcome::Fail {
                    detail: why.clone(),
                    frames: Vec::new(),
                },
            );
        }
        findings
    })
}

/// A valid payload for `point`, with `pad` characters of filler in one string member (so a
/// payload can be made to span several content pages).
pub(crate) fn sample_payload(point: HookPoint, pad: usize) -> Value {
    let filler = "x".repeat(pad);
    let payload = match point {
        HookPoint::SessionStart
        | HookPoint::SessionEnd
        | HookPoint::SessionLoad
        | HookPoint::SessionSave
        | HookPoint::SessionRotate => json!({
            "sessionPath": format!("/tmp/conformance/session.json{filler}"),
            "phase": point.session_phase().map(|p| p.as_str()).unwrap_or("start"),
        }),
        HookPoint::InputReceive => json!({"text": format!("conformance check input{filler}")}),
        HookPoint::AgentBeforeStart => json!({
            "model": format!("conformance-model{filler}"),
            "toolCount": 2,
            "sessionId": "conformance-session",
        }),
        HookPoint::SystemPromptBuild => json!({
            "prompt": format!("You are a helpful assistant.{filler}"),
            "workspaceRoot": "/tmp/conformance",
        }),
        HookPoint::ContextPrepare => json!({
            "messages": [{"role": "user", "content": format!("hello{filler}")}],
        }),
        HookPoint::ProviderRequest => json!({
            "request": {
                "messages": [{"role": "user", "content": format!("hello{filler}")}],
                "tools": [],
                "maxTokens": 1024,
            },
        }),
        HookPoint::ProviderResponse => json!({"text": format!("hello back{filler}")}),
        HookPoint::ToolBefore => json!({
            "name": "read_file",
            "arguments": format!("{{\"path\":\"README.md{filler}\"}}"),
            "callId": "call-1",
        }),
        HookPoint::ToolAfter => json!({
            "name": "read_file",
            "arguments": format!("{{\"path\":\"README.md{filler}\"}}"),
            "callId": "call-1",
            "result": "# README",
            "isError": false,
        }),
        HookPoint::PermissionDecision => json!({
            "name": "read_file",
            "arguments": format!("{{\"path\":\"README.md{filler}\"}}"),
            "readOnly": true,
            "hostDecision": "deny",
        }),
        HookPoint::CompactionPrepare => json!({
            "messages": [{"role": "user", "content": format!("hello{filler}")}],
            "guidance": "keep it short",
        }),
        HookPoint::CompactionComplete => json!({"summary": format!("a summary{filler}")}),
        HookPoint::FrontendEvent => json!({
            "kind": "turn_started",
            "text": format!("conformance{filler}"),
        }),
    };
    debug_assert!(
        point.decode_payload(&payload.to_string()).is_ok(),
        "the sample payload of {} decodes",
        point.as_str()
    );
    payload
}

/// The `timeoutMillis` the host would send at `point`.
pub(crate) fn timeout_millis(ctx: &Ctx, point: HookPoint) -> u64 {
    point.timeout_millis(ctx.launch.runtime.timeout_millis)
}

/// A point the sidecar does not subscribe to, preferring one outside its manifest.
pub(crate) fn unsubscribed_point(session: &Session<'_>) -> Option<HookPoint> {
    let subscribed = session
        .handshake
        .as_ref()
        .map(|h| h.subscriptions.clone())
        .unwrap_or_default();
    let manifest = &session.ctx.launch.runtime.intercepts;
    let free = |p: &&HookPoint| !subscribed.contains(p);
    HookPoint::ALL
        .iter()
        .filter(free)
        .find(|p| !manifest.contains(p))
        .or_else(|| HookPoint::ALL.iter().find(free))
        .copied()
}
