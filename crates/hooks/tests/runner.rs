//! The runner answering hook points as Claude Code answers the events (the stdin JSON, block,
//! deny, rewrite, an allow kept for the call's permission decision, PermissionRequest, context,
//! required hooks, the hooks of one event in parallel), and the approvals that pin a project
//! hook's command.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use sidewire_ext_protocol::{
    DecisionKind, HookPayload, HookPoint, InputPayload, PermissionPayload, ToolAfterPayload,
    ToolBeforePayload, Verdict,
};
use sidewire_hooks::{
    Approvals, Armed, HookDialect, HookFiles, HookId, HookRunner, RunContext, Scope, Source,
    Standing,
};

/// The hooks of `settings` (a Claude Code settings document) in a file of `scope` at `path`.
fn files_at(settings: &Value, path: &Path, scope: Scope) -> HookFiles {
    let mut files = HookFiles::default();
    let source = Source {
        path: path.to_owned(),
        scope,
        dialect: HookDialect::ClaudeCode,
    };
    files.add(&settings.to_string(), source).unwrap();
    files
}

/// A runner of `settings`' hooks (all armed, none required), in `project`.
fn runner_of(settings: &Value, project: &Path) -> HookRunner {
    runner_with(settings, project, false)
}

fn runner_with(settings: &Value, project: &Path, required: bool) -> HookRunner {
    let files = files_at(
        settings,
        &project.join(".claude/settings.json"),
        Scope::User,
    );
    let armed = (files.hooks.into_iter())
        .map(|hook| Armed { hook, required })
        .collect();
    HookRunner::new(armed, RunContext::new(project), "s-1")
}

fn pre_tool_use(matcher: &str, command: &str) -> Value {
    json!({"hooks": {"PreToolUse": [{"matcher": matcher,
        "hooks": [{"type": "command", "command": command}]}]}})
}

fn tool_before(name: &str, arguments: Value) -> HookPayload {
    HookPayload::ToolBefore(ToolBeforePayload {
        name: name.to_owned(),
        arguments: arguments.to_string(),
        call_id: "call-1".to_owned(),
    })
}

fn permission(name: &str, arguments: Value, host: Verdict) -> HookPayload {
    HookPayload::Permission(PermissionPayload {
        name: name.to_owned(),
        arguments: arguments.to_string(),
        read_only: Some(false),
        host_decision: host,
    })
}

/// A hook printing `output` as its JSON answer.
fn says(output: &Value) -> String {
    format!("printf '%s' '{output}'")
}

#[tokio::test]
async fn each_hook_gets_claude_codes_stdin_json() {
    let dir = tempfile::tempdir().unwrap();
    let seen = dir.path().join("seen.json");
    let settings = json!({"hooks": {
        "PreToolUse": [{"hooks": [{"type": "command", "command": format!("cat > {}", seen.display())}]}],
    }});
    let runner = runner_of(&settings, dir.path());
    let payload = tool_before("mcp__fs__read", json!({"path": "a.txt"}));
    runner.intercept(HookPoint::ToolBefore, &payload).await;
    let input: Value = serde_json::from_str(&std::fs::read_to_string(&seen).unwrap()).unwrap();
    assert_eq!(
        input,
        json!({
            "session_id": "s-1",
            "cwd": dir.path(),
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": "mcp__fs__read",
            "tool_input": {"path": "a.txt"},
            "tool_use_id": "call-1",
        })
    );
}

#[tokio::test]
async fn pre_tool_use_blocks_denies_and_rewrites_through_the_chain() {
    let dir = tempfile::tempdir().unwrap();
    // Exit 2: block, stderr the reason; a matcher that does not take the tool: nothing runs.
    let runner = runner_of(
        &pre_tool_use("Bash", "echo 'no rm -rf' >&2; exit 2"),
        dir.path(),
    );
    let bash = tool_before("Bash", json!({"command": "rm -rf /"}));
    let said = runner.intercept(HookPoint::ToolBefore, &bash).await;
    assert_eq!(said.result.decision, DecisionKind::Block);
    assert_eq!(said.result.reason, "no rm -rf");
    let other = tool_before("Read", json!({}));
    let said = runner.intercept(HookPoint::ToolBefore, &other).await;
    assert_eq!(said.result.decision, DecisionKind::Continue);
    assert!(said.runs.is_empty());

    // `permissionDecision: deny`: the call is refused at tool.before, with the reason.
    let deny = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
        "permissionDecision": "deny", "permissionDecisionReason": "protected file"}});
    let runner = runner_of(&pre_tool_use("Write", &says(&deny)), dir.path());
    let said = (runner.intercept(HookPoint::ToolBefore, &tool_before("Write", json!({})))).await;
    assert_eq!(
        (said.result.decision, said.result.reason.as_str()),
        (DecisionKind::Block, "protected file")
    );

    // `updatedInput`: a replacement of the arguments, for the chain to re-validate.
    let rewrite = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
        "updatedInput": {"command": "ls -la"}}});
    let runner = runner_of(&pre_tool_use("Bash", &says(&rewrite)), dir.path());
    let said = runner.intercept(HookPoint::ToolBefore, &bash).await;
    assert_eq!(said.result.decision, DecisionKind::Replace);
    assert_eq!(
        said.result.replacement,
        Some(json!({"name": "Bash", "arguments": "{\"command\":\"ls -la\"}", "callId": "call-1"}))
    );
}

#[tokio::test]
async fn a_pre_tool_use_allow_decides_the_calls_permission_once() {
    let dir = tempfile::tempdir().unwrap();
    let allow = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
        "permissionDecision": "allow", "permissionDecisionReason": "safe",
        "updatedInput": {"command": "ls"}}});
    let runner = runner_of(&pre_tool_use("Bash", &says(&allow)), dir.path());
    let said = (runner.intercept(
        HookPoint::ToolBefore,
        &tool_before("Bash", json!({"command": "ls -R"})),
    ))
    .await;
    assert_eq!(said.result.decision, DecisionKind::Replace);
    // Another call's permission is not this one's.
    let other = permission("Bash", json!({"command": "ls -R"}), Verdict::Deny);
    let said = runner
        .intercept(HookPoint::PermissionDecision, &other)
        .await;
    assert_eq!(said.result.decision, DecisionKind::Continue);
    // The call as rewritten, which the host denies: allowed, with the hook's reason.
    let call = permission("Bash", json!({"command": "ls"}), Verdict::Deny);
    let said = runner.intercept(HookPoint::PermissionDecision, &call).await;
    assert_eq!(
        (said.result.decision, said.result.reason.as_str()),
        (DecisionKind::Allow, "safe")
    );
    assert!(
        said.note.is_some(),
        "the trace says where the allow came from"
    );
    // Once.
    let said = runner.intercept(HookPoint::PermissionDecision, &call).await;
    assert_eq!(said.result.decision, DecisionKind::Continue);
}

#[tokio::test]
async fn permission_request_hooks_decide_where_the_host_would_ask() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("asked");
    let deny = json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
        "decision": {"behavior": "deny", "message": "not on Fridays"}}});
    let settings = json!({"hooks": {"PermissionRequest": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": format!("touch {}; {}", marker.display(), says(&deny))}]}]}});
    let runner = runner_of(&settings, dir.path());
    let allowed = permission("Bash", json!({}), Verdict::Allow);
    let said = runner
        .intercept(HookPoint::PermissionDecision, &allowed)
        .await;
    assert_eq!(said.result.decision, DecisionKind::Continue);
    assert!(!marker.exists(), "nobody would be asked: no hook runs");
    let denied = permission("Bash", json!({}), Verdict::Deny);
    let said = runner
        .intercept(HookPoint::PermissionDecision, &denied)
        .await;
    assert_eq!(
        (said.result.decision, said.result.reason.as_str()),
        (DecisionKind::Deny, "not on Fridays")
    );
}

#[tokio::test]
async fn context_is_appended_to_the_prompt_and_to_the_result() {
    let dir = tempfile::tempdir().unwrap();
    let post = json!({"hookSpecificOutput": {"hookEventName": "PostToolUse",
        "additionalContext": "the file is generated"}});
    let settings = json!({"hooks": {
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo 'today is Monday'"}]}],
        "PostToolUse": [{"matcher": "Read", "hooks": [{"type": "command", "command": says(&post)}]}],
    }});
    let runner = runner_of(&settings, dir.path());
    let prompt = HookPayload::Input(InputPayload {
        text: "fix the tests".into(),
    });
    let said = runner.intercept(HookPoint::InputReceive, &prompt).await;
    assert_eq!(said.result.decision, DecisionKind::Replace);
    assert_eq!(
        said.result.replacement,
        Some(json!({"text": "fix the tests\n\ntoday is Monday"}))
    );
    let after = HookPayload::ToolAfter(ToolAfterPayload {
        name: "Read".into(),
        arguments: "{}".into(),
        call_id: "c".into(),
        result: "x = 1".into(),
        is_error: Some(false),
    });
    let said = runner.intercept(HookPoint::ToolAfter, &after).await;
    assert_eq!(
        said.result
            .replacement
            .as_ref()
            .and_then(|r| r["result"].as_str()),
        Some("x = 1\n\nthe file is generated")
    );
}

#[tokio::test]
async fn a_failed_hook_goes_on_with_a_warning_unless_it_is_required() {
    let dir = tempfile::tempdir().unwrap();
    let settings = pre_tool_use("*", "echo broken >&2; exit 1");
    let payload = tool_before("Bash", json!({}));
    let optional = runner_of(&settings, dir.path());
    let said = optional.intercept(HookPoint::ToolBefore, &payload).await;
    assert_eq!(said.result.decision, DecisionKind::Continue);
    assert!(said.required_failed.is_none());
    let warnings: Vec<String> = said.warnings().collect();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("exited 1"), "{warnings:?}");

    let required = runner_with(&settings, dir.path(), true);
    let said = required.intercept(HookPoint::ToolBefore, &payload).await;
    assert!(said.required_failed.is_some());
    assert_eq!(said.warnings().count(), 0, "said once, as the failure");
}

#[tokio::test]
async fn the_hooks_of_one_event_run_in_parallel() {
    let dir = tempfile::tempdir().unwrap();
    // Each hook marks that it started, then waits (bounded) for the other's mark: run one
    // after the other, the first would wait out its 10 s timeout and fail.
    let wait_for = |mine: &str, theirs: &str| {
        let (mine, theirs) = (dir.path().join(mine), dir.path().join(theirs));
        format!(
            "touch {}; i=0; while [ ! -e {} ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; \
             [ -e {} ]",
            mine.display(),
            theirs.display(),
            theirs.display()
        )
    };
    let settings = json!({"hooks": {"PreToolUse": [{"hooks": [
        {"type": "command", "command": wait_for("a", "b"), "timeout": 10},
        {"type": "command", "command": wait_for("b", "a"), "timeout": 10},
    ]}]}});
    let runner = runner_of(&settings, dir.path());
    let said = (runner.intercept(HookPoint::ToolBefore, &tool_before("Bash", json!({})))).await;
    assert_eq!(said.runs.len(), 2);
    for run in &said.runs {
        assert!(run.answer.failure.is_none(), "{}", run.trace_line());
    }
    assert!(runner.budget(HookPoint::ToolBefore) >= Duration::from_secs(10));
}

#[test]
fn an_approval_pins_the_command_and_a_changed_one_asks_again() {
    let dir = tempfile::tempdir().unwrap();
    let project_file = dir.path().join(".claude/settings.json");
    let approvals_file = dir.path().join("home/hooks.json");
    let original = files_at(
        &pre_tool_use("Bash", "./guard.sh"),
        &project_file,
        Scope::Project,
    );
    let hook = &original.hooks[0];

    let mut approvals = Approvals::load(&approvals_file).unwrap();
    assert_eq!(approvals.standing(hook), Standing::NotApproved);
    assert!(approvals.arm(&original).0.is_empty());
    approvals.approve(hook, true).unwrap();
    approvals.save().unwrap();

    let approvals = Approvals::load(&approvals_file).unwrap();
    assert_eq!(approvals.standing(hook), Standing::Approved);
    let (armed, held) = approvals.arm(&original);
    assert!(armed[0].required && held.is_empty());

    let changed = files_at(
        &pre_tool_use("Bash", "./guard.sh --lenient"),
        &project_file,
        Scope::Project,
    );
    assert_eq!(approvals.standing(&changed.hooks[0]), Standing::NotApproved);
    assert_ne!(HookId::of(hook), HookId::of(&changed.hooks[0]));

    // A user's own hook runs without an approval.
    let user = files_at(
        &pre_tool_use("Bash", "./guard.sh"),
        &dir.path().join("home/.claude/settings.json"),
        Scope::User,
    );
    assert_eq!(approvals.standing(&user.hooks[0]), Standing::User);

    let mut approvals = approvals;
    assert!(approvals.revoke(&HookId::of(hook)));
    approvals.save().unwrap();
    let approvals = Approvals::load(&approvals_file).unwrap();
    assert_eq!(approvals.standing(hook), Standing::NotApproved);
}

#[test]
fn an_approvals_file_that_is_not_one_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hooks.json");
    for text in [
        "{ not json",
        r#"{"version": 2, "hooks": {}}"#,
        r#"{"version": 1}"#,
    ] {
        std::fs::write(&path, text).unwrap();
        let err = Approvals::load(&path).unwrap_err();
        assert!(err.is_malformed(), "{text}: {err}");
        assert!(err.to_string().contains("hooks.json"), "{err}");
    }
    // A link where sidewire writes its own file is not read.
    std::fs::remove_file(&path).unwrap();
    std::os::unix::fs::symlink(dir.path().join("elsewhere.json"), &path).unwrap();
    std::fs::write(
        dir.path().join("elsewhere.json"),
        r#"{"version": 1, "hooks": {}}"#,
    )
    .unwrap();
    assert!(Approvals::load(&path).unwrap_err().is_file());
}

#[tokio::test]
async fn a_gemini_cli_hook_gets_its_own_event_name_and_denies_its_own_way() {
    let dir = tempfile::tempdir().unwrap();
    let seen = dir.path().join("seen.json");
    // Gemini CLI's docs: `BeforeTool`, a timeout in milliseconds, and a refusal with exit 0
    // and `{"decision": "deny"}`.
    let deny = json!({"decision": "deny", "reason": "no writes to /etc"});
    let settings = json!({"hooks": {"BeforeTool": [{"matcher": "write_file", "hooks": [{
        "type": "command", "name": "guard", "timeout": 5000,
        "command": format!("cat > {}; {}", seen.display(), says(&deny)),
    }]}]}});
    let mut files = HookFiles::default();
    let source = Source {
        path: dir.path().join(".gemini/settings.json"),
        scope: Scope::User,
        dialect: HookDialect::GeminiCli,
    };
    files.add(&settings.to_string(), source).unwrap();
    let armed = (files.hooks.into_iter())
        .map(|hook| Armed {
            hook,
            required: false,
        })
        .collect();
    let runner = HookRunner::new(armed, RunContext::new(dir.path()), "s-1");
    let payload = tool_before("write_file", json!({"file_path": "/etc/hosts"}));
    let said = runner.intercept(HookPoint::ToolBefore, &payload).await;
    assert_eq!(
        (said.result.decision, said.result.reason.as_str()),
        (DecisionKind::Block, "no writes to /etc")
    );
    let input: Value = serde_json::from_str(&std::fs::read_to_string(&seen).unwrap()).unwrap();
    assert_eq!(input["hook_event_name"], "BeforeTool");
}

#[test]
fn the_approvals_file_is_bounded_in_hooks_and_bytes() {
    use sidewire_hooks::{MAX_APPROVALS, MAX_APPROVALS_BYTES, MAX_HOOKS_PER_FILE};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hooks.json");
    let mut approvals = Approvals::load(&path).unwrap();
    // One hook more than the file holds, from as many files as that takes.
    let mut approved = 0;
    let mut file = 0;
    while approved <= MAX_APPROVALS {
        let commands: Vec<Value> = (0..MAX_HOOKS_PER_FILE)
            .map(|n| json!({"type": "command", "command": format!("./guard-{n}.sh")}))
            .collect();
        let settings = json!({"hooks": {"PreToolUse": [{"hooks": commands}]}});
        let at = dir.path().join(format!("p{file}/.claude/settings.json"));
        for hook in &files_at(&settings, &at, Scope::Project).hooks {
            let result = approvals.approve(hook, false);
            if approved < MAX_APPROVALS {
                result.unwrap();
            } else {
                assert!(result.unwrap_err().is_malformed(), "one more is refused");
            }
            approved += 1;
            if approved > MAX_APPROVALS {
                break;
            }
        }
        file += 1;
    }
    approvals.save().unwrap();
    assert!(Approvals::load(&path).is_ok(), "a full file reads back");
    // A file over the byte bound is not read.
    std::fs::write(&path, vec![b' '; MAX_APPROVALS_BYTES + 1]).unwrap();
    assert!(Approvals::load(&path).unwrap_err().is_file());
}
