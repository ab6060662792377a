//! [`HookRunner`]: the hooks that may run, answering a hook point of sidewire's chain as Claude
//! Code would answer the event: the input each hook expects on stdin, the hooks of one event
//! run in parallel, their answers merged ([`merge`]) and turned into the chain's decision.
//!
//! What each point does with the merged answer:
//!
//! | point | event | what the hooks' answer does |
//! |---|---|---|
//! | `tool.before` | PreToolUse | block or deny: `block` (the reason shown); `updatedInput`: `replace` (re-validated by the chain like a sidecar's); allow: kept for the call's `permission.decision` |
//! | `permission.decision` | PreToolUse, PermissionRequest | the call's PreToolUse allow turns a host deny into `allow` (audited by the chain); else, where the host denies (Claude Code would ask), PermissionRequest hooks run: allow or deny |
//! | `tool.after` | PostToolUse | block: `block`; `additionalContext`: appended to the result the model sees |
//! | `input.receive` | UserPromptSubmit | block: `block`; context (JSON or plain stdout): appended to the prompt |
//! | `compaction.prepare` | PreCompact | block: `block` |
//! | `session.start`, `session.end` | SessionStart, SessionEnd | run; they cannot block (as in Claude Code) |
//!
//! A PreToolUse `ask` leaves the host's verdict standing (sidewire asks nobody mid-call).

use std::collections::VecDeque;
use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use futures_util::future::join_all;
use serde_json::{Map, Value, json};
use sidewire_ext_protocol::{
    DecisionKind, HookPayload, HookPoint, InputPayload, InterceptResult, PermissionPayload,
    SessionPhase, ToolAfterPayload, ToolBeforePayload, Verdict,
};

use crate::decision::{Answer, HookDecision, answer, merge};
use crate::event::HookEvent;
use crate::run::{Ran, RunContext, run_hook};
use crate::settings::Hook;

/// The most PreToolUse allowances kept for their calls' `permission.decision` (a call whose
/// `permission.decision` never comes, because a sidecar decided first, leaves one behind; the
/// oldest goes first).
pub const MAX_PENDING_ALLOWS: usize = 256;

/// The longest command text shown in a trace line (the rest is cut, with `…`).
const MAX_TRACE_COMMAND_CHARS: usize = 200;

/// A hook that may run, and whether its failure fails the operation.
#[derive(Debug, Clone)]
pub struct Armed {
    /// The hook.
    pub hook: Hook,
    /// Marked required in sidewire's own configuration: its failure (an exit other than 0 or
    /// 2, its timeout, output over the cap) fails the operation instead of counting as
    /// `continue`.
    pub required: bool,
}

/// One hook's run at a point: the hook, how it ran, and what it said.
#[derive(Debug, Clone)]
pub struct HookRun {
    /// The hook, and whether it is required.
    pub armed: Armed,
    /// How it ran.
    pub ran: Ran,
    /// What it said.
    pub answer: Answer,
}

impl HookRun {
    /// One line for a trace: the event, the file and JSON path, the command (cut), and what it
    /// said or why it failed.
    pub fn trace_line(&self) -> String {
        let hook = &self.armed.hook;
        let said = match (&self.answer.failure, self.answer.decision) {
            (Some(failure), _) => format!("failed: {failure}"),
            (None, decision) => {
                let mut said = decision_name(decision).to_owned();
                if let Some(reason) = &self.answer.reason {
                    said.push_str(": ");
                    said.push_str(reason);
                }
                if self.answer.updated_input.is_some() {
                    said.push_str(" (input rewritten)");
                }
                if self.answer.context.is_some() {
                    said.push_str(" (context added)");
                }
                said
            }
        };
        format!(
            "{} hook {}:{} `{}`{}: {said} ({} ms)",
            hook.event,
            hook.source.path.display(),
            hook.json_path,
            cut(&hook.command),
            if self.armed.required {
                " (required)"
            } else {
                ""
            },
            self.ran.elapsed.as_millis()
        )
    }
}

impl HookRun {
    /// `EVENT hook `COMMAND` (FILE) WHAT: FAILURE` when the run failed.
    fn failure_line(&self, what: &str) -> Option<String> {
        let failure = self.answer.failure.as_ref()?;
        let hook = &self.armed.hook;
        Some(format!(
            "{} hook `{}` ({}) {what}: {failure}",
            hook.event,
            cut(&hook.command),
            hook.source.path.display()
        ))
    }
}

fn cut(text: &str) -> String {
    match text.char_indices().nth(MAX_TRACE_COMMAND_CHARS) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

/// A [`HookDecision`]'s name, as hooks write it.
pub fn decision_name(decision: HookDecision) -> &'static str {
    match decision {
        HookDecision::Continue => "continue",
        HookDecision::Allow => "allow",
        HookDecision::Ask => "ask",
        HookDecision::Deny => "deny",
        HookDecision::Block => "block",
    }
}

/// What the hooks said at one point.
#[derive(Debug, Clone)]
pub struct Intercepted {
    /// The decision for the chain, as a sidecar would send it.
    pub result: InterceptResult,
    /// Every hook that ran, in configuration order.
    pub runs: Vec<HookRun>,
    /// Set when a required hook failed: why (the operation fails).
    pub required_failed: Option<String>,
    /// A line for the trace that is no hook's run (an allowance kept from `tool.before`).
    pub note: Option<String>,
}

impl Intercepted {
    fn go_on(runs: Vec<HookRun>) -> Self {
        Intercepted {
            result: InterceptResult::continue_(),
            runs,
            required_failed: None,
            note: None,
        }
    }

    /// The failures of hooks that are not required: each to warn about.
    pub fn warnings(&self) -> impl Iterator<Item = String> + '_ {
        (self.runs.iter())
            .filter(|run| !run.armed.required)
            .filter_map(|run| run.failure_line("failed, counted as continue"))
    }
}

/// The hooks that may run (user hooks, approved project hooks), with where and how they run.
#[derive(Debug)]
pub struct HookRunner {
    hooks: Vec<Armed>,
    context: RunContext,
    session_id: String,
    /// PreToolUse allowances waiting for their call's `permission.decision`: (tool, input,
    /// reason).
    allowed: Mutex<VecDeque<(String, Value, String)>>,
}

impl HookRunner {
    /// A runner of `hooks`, run in `context`, for the session `session_id` (the hooks'
    /// `session_id`).
    pub fn new(hooks: Vec<Armed>, context: RunContext, session_id: impl Into<String>) -> Self {
        HookRunner {
            hooks,
            context,
            session_id: session_id.into(),
            allowed: Mutex::new(VecDeque::new()),
        }
    }

    /// The hooks it runs.
    pub fn hooks(&self) -> &[Armed] {
        &self.hooks
    }

    /// Whether a hook runs at `point` (PreToolUse hooks run at `tool.before` and are answered
    /// for at `permission.decision`).
    pub fn intercepts(&self, point: HookPoint) -> bool {
        (self.hooks.iter()).any(|armed| armed.hook.event.hook_points().contains(&point))
    }

    /// The longest a point may take: the longest timeout of the hooks that run there (they run
    /// in parallel), and a second more for their groups to go.
    pub fn budget(&self, point: HookPoint) -> Duration {
        let longest = (self.hooks.iter())
            .filter(|armed| armed.hook.event.hook_points().contains(&point))
            .map(|armed| armed.hook.timeout.unwrap_or(self.context.default_timeout))
            .max()
            .unwrap_or(self.context.default_timeout);
        longest + Duration::from_secs(1)
    }

    /// Runs the hooks of `event` for `tool` (`None` for an event of no tool) on `input`, in
    /// parallel; the runs in configuration order.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future kills every hook's process group.
    pub async fn run_event(
        &self,
        event: HookEvent,
        tool: Option<&str>,
        input: &Value,
    ) -> Vec<HookRun> {
        let armed: Vec<&Armed> = (self.hooks.iter())
            .filter(|armed| armed.hook.applies(event, tool))
            .collect();
        // Each dialect's hooks get the event by the name their tool gives it.
        let inputs: Vec<Option<Value>> = (armed.iter())
            .map(|armed| {
                let name = armed.hook.source.dialect.event_name(event)?;
                let mut own = input.clone();
                (name != event.name()).then(|| {
                    if let Value::Object(fields) = &mut own {
                        fields.insert("hook_event_name".into(), name.into());
                    }
                    own
                })
            })
            .collect();
        let ran = join_all((armed.iter()).zip(&inputs).map(|(armed, own)| {
            run_hook(&armed.hook, own.as_ref().unwrap_or(input), &self.context)
        }))
        .await;
        (armed.into_iter().zip(ran))
            .map(|(armed, ran)| HookRun {
                answer: answer(event, &ran),
                armed: armed.clone(),
                ran,
            })
            .collect()
    }

    /// The input Claude Code gives a hook of `event`: the common fields and `fields`.
    pub fn input(&self, event: HookEvent, fields: Map<String, Value>) -> Value {
        let mut input = Map::new();
        input.insert("session_id".into(), self.session_id.clone().into());
        input.insert("cwd".into(), path_text(&self.context.project_dir).into());
        input.insert("permission_mode".into(), "default".into());
        input.insert("hook_event_name".into(), event.name().into());
        input.extend(fields);
        Value::Object(input)
    }

    /// Answers `point` for `payload` (see the module's table).
    ///
    /// # Cancel safety
    ///
    /// Dropping the future kills every hook's process group; nothing is kept for the call.
    pub async fn intercept(&self, point: HookPoint, payload: &HookPayload) -> Intercepted {
        match (point, payload) {
            (HookPoint::ToolBefore, HookPayload::ToolBefore(p)) => self.tool_before(p).await,
            (HookPoint::PermissionDecision, HookPayload::Permission(p)) => self.permission(p).await,
            (HookPoint::ToolAfter, HookPayload::ToolAfter(p)) => self.tool_after(p).await,
            (HookPoint::InputReceive, HookPayload::Input(p)) => self.input_receive(p).await,
            (HookPoint::CompactionPrepare, HookPayload::CompactionPrepare(p)) => {
                let fields = object(json!({"trigger": "auto", "custom_instructions": p.guidance}));
                let runs = self.runs(HookEvent::PreCompact, None, fields).await;
                self.blocking(runs, |_| None)
            }
            (HookPoint::SessionStart | HookPoint::SessionEnd, HookPayload::Session(p)) => {
                let (event, fields) = match p.phase {
                    Some(SessionPhase::End) => (HookEvent::SessionEnd, json!({"reason": "other"})),
                    _ => (HookEvent::SessionStart, json!({"source": "startup"})),
                };
                let runs = self.runs(event, None, object(fields)).await;
                // Neither can block in Claude Code: only a required hook's failure counts.
                let mut said = self.blocking(runs, |_| None);
                if said.required_failed.is_none() {
                    said.result = InterceptResult::continue_();
                }
                said
            }
            _ => Intercepted::go_on(Vec::new()),
        }
    }

    async fn runs(
        &self,
        event: HookEvent,
        tool: Option<&str>,
        fields: Map<String, Value>,
    ) -> Vec<HookRun> {
        let input = self.input(event, fields);
        self.run_event(event, tool, &input).await
    }

    /// The merged answer of `runs`: a block (or deny) blocks; otherwise `replace` makes the
    /// replacement from the merged answer, if any.
    fn blocking(
        &self,
        runs: Vec<HookRun>,
        replace: impl FnOnce(&Answer) -> Option<Value>,
    ) -> Intercepted {
        let merged = merge(
            &runs
                .iter()
                .map(|run| run.answer.clone())
                .collect::<Vec<_>>(),
        );
        let required_failed = required_failure(&runs);
        let result = match merged.decision {
            HookDecision::Block | HookDecision::Deny => InterceptResult {
                decision: DecisionKind::Block,
                reason: merged.reason.clone().unwrap_or_default(),
                replacement: None,
            },
            _ => match replace(&merged) {
                Some(replacement) => InterceptResult {
                    decision: DecisionKind::Replace,
                    reason: String::new(),
                    replacement: Some(replacement),
                },
                None => InterceptResult::continue_(),
            },
        };
        Intercepted {
            result,
            runs,
            required_failed,
            note: None,
        }
    }

    async fn tool_before(&self, p: &ToolBeforePayload) -> Intercepted {
        let tool_input = arguments(&p.arguments);
        let fields = object(json!({
            "tool_name": p.name, "tool_input": tool_input, "tool_use_id": p.call_id,
        }));
        let runs = self
            .runs(HookEvent::PreToolUse, Some(&p.name), fields)
            .await;
        let mut allow = None;
        let said = self.blocking(runs, |merged| {
            let input = merged.updated_input.clone();
            if merged.decision == HookDecision::Allow {
                let reason = merged.reason.clone().unwrap_or_default();
                allow = Some((input.clone().unwrap_or_else(|| tool_input.clone()), reason));
            }
            let input = input?;
            let arguments = match &input {
                Value::String(text) => text.clone(),
                other => other.to_string(),
            };
            serde_json::to_value(ToolBeforePayload {
                name: p.name.clone(),
                arguments,
                call_id: p.call_id.clone(),
            })
            .ok()
        });
        if let (Some((input, reason)), None) = (allow, &said.required_failed) {
            let mut allowed = crate::lock(&self.allowed);
            if allowed.len() == MAX_PENDING_ALLOWS {
                allowed.pop_front();
            }
            allowed.push_back((p.name.clone(), input, reason));
        }
        said
    }

    async fn permission(&self, p: &PermissionPayload) -> Intercepted {
        let input = arguments(&p.arguments);
        let pending = {
            let mut allowed = crate::lock(&self.allowed);
            let at = (allowed.iter()).position(|(tool, args, _)| *tool == p.name && *args == input);
            at.and_then(|at| allowed.remove(at))
        };
        if p.host_decision == Verdict::Allow {
            // The host allows already: nothing to turn, and a later member may still deny.
            return Intercepted::go_on(Vec::new());
        }
        if let Some((_, _, reason)) = pending {
            let reason = if reason.is_empty() {
                "allowed by a PreToolUse hook".to_owned()
            } else {
                reason
            };
            return Intercepted {
                note: Some(format!(
                    "PreToolUse hooks allowed this call at tool.before: {reason}"
                )),
                result: InterceptResult {
                    decision: DecisionKind::Allow,
                    reason,
                    replacement: None,
                },
                runs: Vec::new(),
                required_failed: None,
            };
        }
        // The host denies: where Claude Code would ask, PermissionRequest hooks decide.
        let fields = object(json!({
            "tool_name": p.name, "tool_input": input, "permission_suggestions": [],
        }));
        let runs = self
            .runs(HookEvent::PermissionRequest, Some(&p.name), fields)
            .await;
        let merged = merge(
            &runs
                .iter()
                .map(|run| run.answer.clone())
                .collect::<Vec<_>>(),
        );
        let (decision, reason) = match merged.decision {
            HookDecision::Allow => (DecisionKind::Allow, merged.reason.clone()),
            HookDecision::Deny | HookDecision::Block => (DecisionKind::Deny, merged.reason.clone()),
            _ => (DecisionKind::Continue, None),
        };
        Intercepted {
            result: InterceptResult {
                decision,
                reason: reason.unwrap_or_default(),
                replacement: None,
            },
            required_failed: required_failure(&runs),
            runs,
            note: None,
        }
    }

    async fn tool_after(&self, p: &ToolAfterPayload) -> Intercepted {
        let fields = object(json!({
            "tool_name": p.name,
            "tool_input": arguments(&p.arguments),
            "tool_response": {
                "content": [{"type": "text", "text": p.result}],
                "isError": p.is_error.unwrap_or(false),
            },
            "tool_use_id": p.call_id,
        }));
        let runs = self
            .runs(HookEvent::PostToolUse, Some(&p.name), fields)
            .await;
        self.blocking(runs, |merged| {
            let context = merged.context.as_ref()?;
            serde_json::to_value(ToolAfterPayload {
                result: join(&p.result, context),
                ..p.clone()
            })
            .ok()
        })
    }

    async fn input_receive(&self, p: &InputPayload) -> Intercepted {
        let fields = object(json!({"prompt": p.text}));
        let runs = self.runs(HookEvent::UserPromptSubmit, None, fields).await;
        self.blocking(runs, |merged| {
            let context = merged.context.as_ref()?;
            serde_json::to_value(InputPayload {
                text: join(&p.text, context),
            })
            .ok()
        })
    }
}

/// The text the model sees, with a hook's context after it.
fn join(text: &str, context: &str) -> String {
    if text.is_empty() {
        context.to_owned()
    } else {
        format!("{text}\n\n{context}")
    }
}

/// Why the first required hook of `runs` that failed failed, if one did.
fn required_failure(runs: &[HookRun]) -> Option<String> {
    (runs.iter())
        .filter(|run| run.armed.required)
        .find_map(|run| {
            run.failure_line("failed")
                .map(|line| format!("required {line}"))
        })
}

/// A tool call's arguments text as the JSON object hooks get as `tool_input` (`{}` for none).
fn arguments(text: &str) -> Value {
    if text.trim().is_empty() {
        return Value::Object(Map::new());
    }
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()))
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

fn path_text(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}
