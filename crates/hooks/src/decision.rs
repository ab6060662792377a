//! What a hook's run says ([`Answer`]), read as Claude Code reads it, and the answers of one
//! event's hooks merged ([`merge`]).
//!
//! Exit 0: go on, reading stdout as JSON when it is a JSON object (`continue`, `stopReason`,
//! `decision`/`reason`, `hookSpecificOutput` with `permissionDecision`,
//! `permissionDecisionReason`, `updatedInput`, `additionalContext`, or PermissionRequest's
//! `decision.behavior`); for UserPromptSubmit and SessionStart, plain stdout is context.
//! Exit 2: block, stderr the reason. Anything else (another exit, a signal, the timeout,
//! stdout over the cap, a JSON object of the wrong shape): the hook failed, which counts as
//! going on, with the failure to warn about.
//!
//! Every dialect's hook is read this way. Codex's answers are a subset of Claude Code's;
//! Gemini CLI's own (`decision: "deny"`, `hookSpecificOutput.tool_input` merged into the
//! tool's input) are not read yet.

use serde_json::Value;

use crate::event::HookEvent;
use crate::run::{Ended, Ran};

/// A hook's verdict, strongest last: the merge keeps the strongest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[non_exhaustive]
pub enum HookDecision {
    /// Nothing to say: the operation goes on as it would.
    Continue,
    /// Allow the tool call (PreToolUse, PermissionRequest).
    Allow,
    /// Ask the person, as without the hook (PreToolUse).
    Ask,
    /// Deny the tool call (PreToolUse, PermissionRequest).
    Deny,
    /// Stop the operation (exit 2, `decision: "block"`, `continue: false`).
    Block,
}

/// What one hook (or, merged, one event's hooks) said.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// The verdict.
    pub decision: HookDecision,
    /// Why, as the hook said it (a block's stderr, a deny's reason).
    pub reason: Option<String>,
    /// A replacement of the tool's input (PreToolUse, PermissionRequest), to be validated
    /// like any replacement before it is used.
    pub updated_input: Option<Value>,
    /// Context for the model (`additionalContext`, or UserPromptSubmit's plain stdout).
    pub context: Option<String>,
    /// Why the hook counts as `Continue` though it did not end well: to warn about.
    pub failure: Option<String>,
}

impl Answer {
    fn go_on() -> Answer {
        Answer {
            decision: HookDecision::Continue,
            reason: None,
            updated_input: None,
            context: None,
            failure: None,
        }
    }

    fn failed(why: String) -> Answer {
        Answer {
            failure: Some(why),
            ..Answer::go_on()
        }
    }
}

/// What `ran` says for `event`.
pub fn answer(event: HookEvent, ran: &Ran) -> Answer {
    match &ran.ended {
        Ended::Exited(0) => from_stdout(event, &ran.stdout),
        Ended::Exited(2) => Answer {
            decision: HookDecision::Block,
            reason: Some(ran.stderr.trim().to_owned()).filter(|why| !why.is_empty()),
            ..Answer::go_on()
        },
        Ended::Exited(code) => Answer::failed(format!("exited {code}{}", tail(&ran.stderr))),
        Ended::Signalled(signal) => Answer::failed(format!("ended by signal {signal}")),
        Ended::TimedOut(after) => {
            Answer::failed(format!("ran past its {} s timeout", after.as_secs_f64()))
        }
        Ended::OutputTooLarge(cap) => {
            Answer::failed(format!("wrote more than {cap} bytes to stdout"))
        }
        Ended::NotStarted(why) => Answer::failed(format!("could not start: {why}")),
    }
}

fn tail(stderr: &str) -> String {
    let last = stderr.trim().lines().last().unwrap_or_default();
    if last.is_empty() {
        String::new()
    } else {
        format!(": {last}")
    }
}

fn from_stdout(event: HookEvent, stdout: &str) -> Answer {
    let trimmed = stdout.trim();
    let Ok(Value::Object(output)) = serde_json::from_str::<Value>(trimmed) else {
        // Plain text: context where the event takes it, else only shown.
        let takes_text = matches!(event, HookEvent::UserPromptSubmit | HookEvent::SessionStart);
        return Answer {
            context: (takes_text && !trimmed.is_empty()).then(|| trimmed.to_owned()),
            ..Answer::go_on()
        };
    };
    let text = |value: Option<&Value>| value.and_then(Value::as_str).map(str::to_owned);
    let mut answer = Answer::go_on();
    let specific = output.get("hookSpecificOutput").and_then(Value::as_object);
    if let Some(specific) = specific {
        answer.context = text(specific.get("additionalContext"));
        if let Some(decision) = specific.get("permissionDecision") {
            answer.decision = match decision.as_str() {
                Some("allow") => HookDecision::Allow,
                Some("deny") => HookDecision::Deny,
                Some("ask") => HookDecision::Ask,
                _ => {
                    return Answer::failed(format!(
                        "permissionDecision {decision} is not allow, deny or ask"
                    ));
                }
            };
            answer.reason = text(specific.get("permissionDecisionReason"));
        }
        if let Some(input) = specific.get("updatedInput") {
            answer.updated_input = Some(input.clone());
        }
        // PermissionRequest: `decision: {behavior, updatedInput, message}`.
        if let Some(Value::Object(decision)) = specific.get("decision") {
            answer.decision = match decision.get("behavior").and_then(Value::as_str) {
                Some("allow") => HookDecision::Allow,
                Some("deny") => HookDecision::Deny,
                _ => {
                    return Answer::failed("decision.behavior is not allow or deny".to_owned());
                }
            };
            answer.reason = text(decision.get("message"));
            if let Some(input) = decision.get("updatedInput") {
                answer.updated_input = Some(input.clone());
            }
        }
    }
    // The top-level `decision` (with `reason`): Claude Code's `block`, and PreToolUse's older
    // `approve`; Gemini CLI's `deny` and `allow` (its way to refuse a tool with exit 0).
    match output.get("decision").and_then(Value::as_str) {
        Some(kind @ ("block" | "deny")) => {
            let decision = if kind == "block" {
                HookDecision::Block
            } else {
                HookDecision::Deny
            };
            if decision > answer.decision {
                answer.decision = decision;
                answer.reason = text(output.get("reason")).or(answer.reason);
            }
        }
        Some("approve" | "allow") if answer.decision == HookDecision::Continue => {
            answer.decision = HookDecision::Allow;
            answer.reason = text(output.get("reason"));
        }
        _ => {}
    }
    if output.get("continue") == Some(&Value::Bool(false)) {
        answer.decision = HookDecision::Block;
        answer.reason = text(output.get("stopReason")).or(answer.reason);
    }
    answer
}

/// The answers of one event's hooks, in configuration order, as one: the strongest decision
/// wins (block over deny over ask over allow over continue), with the reason of the first
/// hook that gave it; the input replacements apply in configuration order (each replaces the
/// whole input, so the last one stands); the contexts join, one per line; the failures join.
pub fn merge(answers: &[Answer]) -> Answer {
    let mut merged = Answer::go_on();
    for answer in answers {
        if answer.decision > merged.decision {
            merged.decision = answer.decision;
            merged.reason.clone_from(&answer.reason);
        }
        if let Some(input) = &answer.updated_input {
            merged.updated_input = Some(input.clone());
        }
        for (into, from) in [
            (&mut merged.context, &answer.context),
            (&mut merged.failure, &answer.failure),
        ] {
            if let Some(from) = from {
                match into {
                    Some(into) => {
                        into.push('\n');
                        into.push_str(from);
                    }
                    None => *into = Some(from.clone()),
                }
            }
        }
    }
    merged
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::json;

    use super::*;

    fn ran(ended: Ended, stdout: &str, stderr: &str) -> Ran {
        Ran {
            ended,
            stdout: stdout.to_owned(),
            stderr: stderr.to_owned(),
            elapsed: Duration::ZERO,
        }
    }

    #[test]
    fn exit_codes_read_as_claude_code_reads_them() {
        let pre = HookEvent::PreToolUse;
        assert_eq!(
            answer(pre, &ran(Ended::Exited(0), "", "")).decision,
            HookDecision::Continue
        );
        let blocked = answer(pre, &ran(Ended::Exited(2), "", "no rm -rf here\n"));
        assert_eq!(blocked.decision, HookDecision::Block);
        assert_eq!(blocked.reason.as_deref(), Some("no rm -rf here"));
        for ended in [
            Ended::Exited(1),
            Ended::Exited(127),
            Ended::Signalled(9),
            Ended::TimedOut(Duration::from_secs(1)),
            Ended::OutputTooLarge(10),
        ] {
            let failed = answer(pre, &ran(ended.clone(), "", "oops"));
            assert_eq!(failed.decision, HookDecision::Continue, "{ended:?}");
            assert!(failed.failure.is_some(), "{ended:?}");
        }
    }

    #[test]
    fn json_output_decides_and_rewrites() {
        let deny = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
            "permissionDecision": "deny", "permissionDecisionReason": "protected file"}});
        let denied = answer(
            HookEvent::PreToolUse,
            &ran(Ended::Exited(0), &deny.to_string(), ""),
        );
        assert_eq!(denied.decision, HookDecision::Deny);
        assert_eq!(denied.reason.as_deref(), Some("protected file"));

        let rewrite = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
            "permissionDecision": "allow", "updatedInput": {"command": "ls -la"}}});
        let allowed = answer(
            HookEvent::PreToolUse,
            &ran(Ended::Exited(0), &rewrite.to_string(), ""),
        );
        assert_eq!(allowed.decision, HookDecision::Allow);
        assert_eq!(allowed.updated_input, Some(json!({"command": "ls -la"})));

        let request = json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
            "decision": {"behavior": "deny", "message": "not on Fridays"}}});
        let denied = answer(
            HookEvent::PermissionRequest,
            &ran(Ended::Exited(0), &request.to_string(), ""),
        );
        assert_eq!(denied.decision, HookDecision::Deny);
        assert_eq!(denied.reason.as_deref(), Some("not on Fridays"));

        // Gemini CLI refuses a tool with exit 0 and a top-level `decision`.
        let gemini = json!({"decision": "deny", "reason": "no writes to /etc"});
        let denied = answer(
            HookEvent::PreToolUse,
            &ran(Ended::Exited(0), &gemini.to_string(), ""),
        );
        assert_eq!(denied.decision, HookDecision::Deny);
        assert_eq!(denied.reason.as_deref(), Some("no writes to /etc"));

        let stop = json!({"continue": false, "stopReason": "enough"});
        let stopped = answer(
            HookEvent::PostToolUse,
            &ran(Ended::Exited(0), &stop.to_string(), ""),
        );
        assert_eq!(stopped.decision, HookDecision::Block);
        assert_eq!(stopped.reason.as_deref(), Some("enough"));

        let context = answer(
            HookEvent::UserPromptSubmit,
            &ran(Ended::Exited(0), "today is Monday\n", ""),
        );
        assert_eq!(context.context.as_deref(), Some("today is Monday"));

        let wrong = json!({"hookSpecificOutput": {"permissionDecision": "maybe"}});
        let failed = answer(
            HookEvent::PreToolUse,
            &ran(Ended::Exited(0), &wrong.to_string(), ""),
        );
        assert_eq!(failed.decision, HookDecision::Continue);
        assert!(failed.failure.is_some());
    }

    #[test]
    fn any_deny_wins_and_replacements_apply_in_order() {
        let allow = Answer {
            decision: HookDecision::Allow,
            updated_input: Some(json!({"n": 1})),
            ..Answer::go_on()
        };
        let deny = Answer {
            decision: HookDecision::Deny,
            reason: Some("first deny".into()),
            ..Answer::go_on()
        };
        let later_deny = Answer {
            decision: HookDecision::Deny,
            reason: Some("second deny".into()),
            updated_input: Some(json!({"n": 2})),
            ..Answer::go_on()
        };
        let merged = merge(&[allow.clone(), deny, later_deny]);
        assert_eq!(merged.decision, HookDecision::Deny);
        assert_eq!(merged.reason.as_deref(), Some("first deny"));
        assert_eq!(merged.updated_input, Some(json!({"n": 2})));
        assert_eq!(
            merge(std::slice::from_ref(&allow)).decision,
            HookDecision::Allow
        );
        assert_eq!(merge(&[]).decision, HookDecision::Continue);
    }
}
