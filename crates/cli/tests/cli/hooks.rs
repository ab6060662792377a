//! Command hooks through the CLI, written from Claude Code's documentation examples: a Bash
//! command validator that blocks with exit 2, a PreToolUse hook answering
//! `permissionDecision: deny` in JSON, an `updatedInput` rewrite with an `allow` (audited), a
//! UserPromptSubmit hook that adds context, and hooks that sleep past their timeout, flood
//! stdout or fork daemons (each counted as `continue`, nothing left running); the approval of a
//! project's hooks and again after a change; a required hook; `hooks list` and `hooks test`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{EXE, run_in, stderr, stdout};

/// A user's home, a project, and sidewire's state, each its own directory; the project's MCP
/// config starts the built-in demo server (its `echo` is not read-only: the host denies it).
struct Setup {
    _dir: tempfile::TempDir,
    /// `$HOME`, holding the user's `.claude/settings.json`.
    user: PathBuf,
    /// The current directory, holding the project's `.claude/settings.json`.
    project: PathBuf,
    /// `$SIDEWIRE_HOME`.
    state: PathBuf,
}

impl Setup {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let (user, project, state) = (
            dir.path().join("user"),
            dir.path().join("project"),
            dir.path().join("state"),
        );
        for dir in [&user, &project, &state] {
            std::fs::create_dir_all(dir.join(".claude")).unwrap();
        }
        std::fs::write(
            project.join(".mcp.json"),
            json!({"mcpServers": {"demo": {"command": EXE, "args": ["__mcp-server"]}}}).to_string(),
        )
        .unwrap();
        Setup {
            _dir: dir,
            user,
            project,
            state,
        }
    }

    fn user_hooks(&self, settings: &Value) {
        let path = self.user.join(".claude/settings.json");
        std::fs::write(path, settings.to_string()).unwrap();
    }

    fn project_hooks(&self, settings: &Value) {
        let path = self.project.join(".claude/settings.json");
        std::fs::write(path, settings.to_string()).unwrap();
    }

    fn sidewire(&self, args: &[&str], input: &str) -> std::process::Output {
        let user = self.user.to_str().unwrap();
        run_in(
            Some(&self.project),
            &self.state,
            args,
            input,
            &[("HOME", user)],
        )
    }

    /// `sidewire -v run` with `lines` typed, then `/quit`.
    fn run(&self, lines: &[&str]) -> std::process::Output {
        let mut script = lines.join("\n");
        script.push_str("\n/quit\n");
        self.sidewire(&["-v", "run"], &script)
    }

    fn audit(&self) -> String {
        std::fs::read_to_string(self.state.join("audit.jsonl")).unwrap_or_default()
    }
}

fn pre_tool_use(matcher: &str, command: &str) -> Value {
    json!({"hooks": {"PreToolUse": [{"matcher": matcher,
        "hooks": [{"type": "command", "command": command}]}]}})
}

/// A hook answering `output` as JSON on stdout, exit 0.
fn says(output: &Value) -> String {
    format!("printf '%s' '{output}'")
}

/// The docs' Bash command validator, in Python: `tool_input.command` checked against rules,
/// each broken rule a line on stderr, and exit 2.
const VALIDATOR: &str = r#"import json, re, sys

RULES = [
    (r"\bgrep\b(?!.*\|)", "Use 'rg' (ripgrep) instead of 'grep' for better performance"),
    (r"\bfind\s+\S+\s+-name\b", "Use 'rg --files -g pattern' instead of 'find -name'"),
]

try:
    data = json.load(sys.stdin)
except json.JSONDecodeError as e:
    print(f"Error: Invalid JSON input: {e}", file=sys.stderr)
    sys.exit(1)

if data.get("tool_name") != "Bash":
    sys.exit(0)
command = data.get("tool_input", {}).get("command", "")
issues = [message for pattern, message in RULES if re.search(pattern, command)]
if issues:
    for message in issues:
        print(f"• {message}", file=sys.stderr)
    sys.exit(2)
"#;

#[test]
fn the_docs_bash_validator_blocks_with_exit_2_unmodified() {
    let setup = Setup::new();
    std::fs::create_dir_all(setup.user.join(".claude/hooks")).unwrap();
    std::fs::write(setup.user.join(".claude/hooks/validate.py"), VALIDATOR).unwrap();
    // As the docs register it: the matcher `Bash`, the script by its path.
    setup.user_hooks(&pre_tool_use(
        "Bash",
        "python3 \"$HOME/.claude/hooks/validate.py\"",
    ));
    let call = |command: &str| {
        let payload = json!({"name": "Bash", "arguments": json!({"command": command}).to_string()});
        setup.sidewire(
            &["ext", "intercept", "tool.before", &payload.to_string()],
            "",
        )
    };
    let out = call("grep -r TODO src");
    let text = stdout(&out);
    assert!(!out.status.success(), "{text}");
    assert!(
        text.contains("BLOCKED by @hooks: • Use 'rg' (ripgrep)"),
        "{text}\n{}",
        stderr(&out)
    );
    // The trace names the hook: its file and command.
    assert!(text.contains("validate.py"), "{text}");
    let out = call("rg TODO src");
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
}

#[test]
fn a_guard_blocks_a_call_in_run_and_lets_another_through() {
    let setup = Setup::new();
    setup.user_hooks(&pre_tool_use(
        "mcp__demo__.*",
        r#"input=$(cat); case "$input" in *'rm -rf'*) echo "refusing rm -rf" >&2; exit 2;; esac"#,
    ));
    let out = setup.run(&[
        r#"/call mcp__demo__echo {"text":"rm -rf /"}"#,
        r#"/call mcp__demo__add {"a":1,"b":2}"#,
    ]);
    let text = stdout(&out);
    assert!(out.status.success(), "{text}\n{}", stderr(&out));
    assert!(
        text.contains("BLOCKED by @hooks: refusing rm -rf"),
        "{text}"
    );
    assert!(!text.contains("result: rm -rf"), "{text}");
    // The guard let `add` through; the host's policy still decides (it is not read-only).
    assert!(text.contains("permission: deny"), "{text}");
}

#[test]
fn a_json_deny_refuses_and_a_rewrite_with_allow_runs_audited() {
    let setup = Setup::new();
    let deny = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
        "permissionDecision": "deny", "permissionDecisionReason": "add is off limits"}});
    let allow = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
        "permissionDecision": "allow", "permissionDecisionReason": "echo is safe",
        "updatedInput": {"text": "rewritten by a hook"}}});
    setup.user_hooks(&json!({"hooks": {"PreToolUse": [
        {"matcher": "mcp__demo__add", "hooks": [{"type": "command", "command": says(&deny)}]},
        {"matcher": "mcp__demo__echo", "hooks": [{"type": "command", "command": says(&allow)}]},
    ]}}));
    let out = setup.run(&[
        r#"/call mcp__demo__add {"a":1,"b":2}"#,
        r#"/call mcp__demo__echo {"text":"hello"}"#,
    ]);
    let text = stdout(&out);
    assert!(out.status.success(), "{text}\n{}", stderr(&out));
    assert!(
        text.contains("BLOCKED by @hooks: add is off limits"),
        "{text}"
    );
    assert!(!text.contains("result: 3"), "{text}");
    // The host denies echo (not read-only); the hook's allow turns it, audited.
    assert!(text.contains("result: rewritten by a hook"), "{text}");
    assert!(
        text.contains("audited: @hooks turned the host's deny into allow (echo is safe)"),
        "{text}"
    );
    let audit = setup.audit();
    assert_eq!(audit.lines().count(), 1, "{audit}");
    let record: Value = serde_json::from_str(audit.lines().next().unwrap()).unwrap();
    assert_eq!(
        (&record["plugin"], &record["extensionDecision"]),
        (&json!("@hooks"), &json!("allow"))
    );
}

#[test]
fn a_hooks_allow_whose_audit_record_cannot_be_written_runs_no_tool() {
    let setup = Setup::new();
    let allow = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
        "permissionDecision": "allow", "permissionDecisionReason": "echo is safe"}});
    setup.user_hooks(&pre_tool_use("mcp__demo__echo", &says(&allow)));
    // A directory where the audit log should be.
    std::fs::create_dir(setup.state.join("audit.jsonl")).unwrap();
    let out = setup.run(&[r#"/call mcp__demo__echo {"text":"hello"}"#]);
    let (text, errors) = (stdout(&out), stderr(&out));
    assert!(!text.contains("result: hello"), "{text}\n{errors}");
    assert!(text.contains("allow NOT APPLIED"), "{text}");
    assert!(text.contains("permission: deny"), "{text}");
    assert!(errors.contains("warning (@hooks)"), "{errors}");
}

#[test]
fn a_user_prompt_submit_hook_adds_context() {
    let setup = Setup::new();
    setup.user_hooks(&json!({"hooks": {"UserPromptSubmit": [{"hooks": [
        {"type": "command", "command": "echo \"Current time: 2026-12-07\""}]}]}}));
    let out = setup.run(&["fix the tests"]);
    let text = stdout(&out);
    assert!(out.status.success(), "{text}\n{}", stderr(&out));
    assert!(text.contains("(rewritten) fix the tests"), "{text}");
    assert!(text.contains("Current time: 2026-12-07"), "{text}");
}

fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

fn pid_in(path: &Path) -> i32 {
    std::fs::read_to_string(path)
        .unwrap_or_else(|err| panic!("{}: {err}", path.display()))
        .trim()
        .parse()
        .unwrap()
}

#[test]
fn hooks_that_fail_count_as_continue_and_leave_nothing_running() {
    let setup = Setup::new();
    let (child, daemon) = (
        setup.project.join("child.pid"),
        setup.project.join("daemon.pid"),
    );
    setup.user_hooks(
        &json!({"hooks": {"PreToolUse": [{"matcher": "mcp__demo__echo", "hooks": [
            {"type": "command", "command": "sleep 30", "timeout": 1},
            {"type": "command", "command": "yes"},
            {"type": "command", "command": format!(
                "sleep 300 & echo $! > '{}'; setsid sleep 300 & echo $! > '{}'; exit 0",
                child.display(), daemon.display())},
        ]}]}}),
    );
    let started = Instant::now();
    let out = setup.sidewire(
        &["-v", "run", "--allow-tools"],
        "/call mcp__demo__echo {\"text\":\"still runs\"}\n/quit\n",
    );
    let (text, errors) = (stdout(&out), stderr(&out));
    assert!(out.status.success(), "{text}\n{errors}");
    assert!(text.contains("result: still runs"), "{text}\n{errors}");
    assert!(errors.contains("ran past its 1 s timeout"), "{errors}");
    assert!(errors.contains("wrote more than"), "{errors}");
    assert!(
        started.elapsed() < Duration::from_secs(25),
        "the timeout held"
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    let pids = [pid_in(&child), pid_in(&daemon)];
    while pids.iter().any(|&pid| alive(pid)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    for pid in pids {
        assert!(
            !alive(pid),
            "process {pid} a hook started outlived sidewire"
        );
    }
}

#[test]
fn a_project_hook_runs_once_approved_and_asks_again_when_changed() {
    let setup = Setup::new();
    let guard =
        |reason: &str| pre_tool_use("mcp__demo__echo", &format!("echo '{reason}' >&2; exit 2"));
    setup.project_hooks(&guard("project says no"));
    let call = r#"/call mcp__demo__echo {"text":"hi"}"#;
    // Not approved: it does not run, and one warning says how to approve it.
    let out = setup.run(&[call]);
    assert!(!stdout(&out).contains("BLOCKED"), "{}", stdout(&out));
    assert_eq!(
        stderr(&out)
            .matches("not approved, so they do not run")
            .count(),
        1,
        "{}",
        stderr(&out)
    );

    let list = setup.sidewire(&["--json", "hooks", "list"], "");
    assert!(list.status.success(), "{}", stderr(&list));
    let listed: Value = serde_json::from_str(&stdout(&list)).unwrap();
    let hook = &listed["hooks"][0];
    assert_eq!(hook["standing"], "not approved");
    assert_eq!(hook["event"], "PreToolUse");
    let id = hook["id"].as_str().unwrap()[..8].to_owned();
    let approve = setup.sidewire(&["hooks", "approve", &id], "");
    assert!(approve.status.success(), "{}", stderr(&approve));
    let out = setup.run(&[call]);
    assert!(
        stdout(&out).contains("BLOCKED by @hooks: project says no"),
        "{}",
        stdout(&out)
    );

    // A changed command is a hook nobody approved.
    setup.project_hooks(&guard("changed"));
    let out = setup.run(&[call]);
    assert!(!stdout(&out).contains("BLOCKED"), "{}", stdout(&out));
    assert!(stderr(&out).contains("not approved"), "{}", stderr(&out));

    // Revoked: the old approval is gone too.
    setup.project_hooks(&guard("project says no"));
    let revoke = setup.sidewire(&["hooks", "revoke", &id], "");
    assert!(revoke.status.success(), "{}", stderr(&revoke));
    let out = setup.run(&[call]);
    assert!(!stdout(&out).contains("BLOCKED"), "{}", stdout(&out));
}

#[test]
fn a_required_hook_that_fails_fails_the_call() {
    let setup = Setup::new();
    setup.user_hooks(&pre_tool_use("mcp__demo__echo", "exit 1"));
    let call = r#"/call mcp__demo__echo {"text":"hi"}"#;
    let out = setup.sidewire(&["-v", "run", "--allow-tools"], &format!("{call}\n/quit\n"));
    assert!(
        stdout(&out).contains("result: hi"),
        "optional: continue\n{}",
        stdout(&out)
    );
    let approve = setup.sidewire(&["hooks", "approve", "--all", "--required"], "");
    assert!(approve.status.success(), "{}", stderr(&approve));
    let out = setup.sidewire(&["-v", "run", "--allow-tools"], &format!("{call}\n/quit\n"));
    let (text, errors) = (stdout(&out), stderr(&out));
    assert!(!text.contains("result: hi"), "{text}");
    assert!(
        format!("{text}{errors}").contains("required PreToolUse hook `exit 1`"),
        "{text}\n{errors}"
    );
}

#[test]
fn hooks_test_shows_each_hooks_trace_and_the_merged_decision() {
    let setup = Setup::new();
    let deny = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
        "permissionDecision": "deny", "permissionDecisionReason": "protected file"}});
    setup.user_hooks(
        &json!({"hooks": {"PreToolUse": [{"matcher": "Write|Edit", "hooks": [
            {"type": "command", "command": "true"},
            {"type": "command", "command": says(&deny)},
        ]}]}}),
    );
    let input = json!({"tool_name": "Write", "tool_input": {"file_path": ".env"}}).to_string();
    let out = setup.sidewire(&["--json", "hooks", "test", "PreToolUse", &input], "");
    assert!(out.status.success(), "{}", stderr(&out));
    let said: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(said["decision"], "deny");
    assert_eq!(said["reason"], "protected file");
    let hooks = said["hooks"].as_array().unwrap();
    assert_eq!(hooks.len(), 2);
    assert_eq!(
        (&hooks[0]["decision"], &hooks[1]["decision"]),
        (&json!("continue"), &json!("deny"))
    );
    // Another tool: the matcher takes no hook.
    let input = json!({"tool_name": "Read", "tool_input": {}}).to_string();
    let out = setup.sidewire(&["--json", "hooks", "test", "PreToolUse", &input], "");
    let said: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(said["decision"], "continue");
    assert_eq!(said["hooks"], json!([]));
}

#[test]
fn a_malformed_hook_file_stops_run_with_its_path() {
    let setup = Setup::new();
    std::fs::write(
        setup.user.join(".claude/settings.json"),
        r#"{"hooks": {"PreToolUse": [{"hooks": [{"type": "command"}]}]}}"#,
    )
    .unwrap();
    let out = setup.run(&[]);
    assert!(!out.status.success());
    let errors = stderr(&out);
    assert!(errors.contains("settings.json"), "{errors}");
    assert!(
        errors.contains("hooks.PreToolUse[0].hooks[0].command"),
        "{errors}"
    );
}

#[test]
fn hooks_guard_the_calls_of_every_client_of_mcp_serve() {
    let setup = Setup::new();
    setup.user_hooks(&pre_tool_use(
        "mcp__demo__echo",
        r#"input=$(cat); case "$input" in *'rm -rf'*) echo "refusing rm -rf" >&2; exit 2;; esac"#,
    ));
    let config = super::gateway::config(&setup.state, &["demo"]);
    let user = setup.user.to_str().unwrap();
    let mut served = super::gateway::Served::start_with(
        &setup.state,
        &[
            "--config",
            config.to_str().unwrap(),
            "--allow-tool",
            "demo__echo",
        ],
        &[("HOME", user)],
    );
    let refused = served.call(1, "demo__echo", json!({"text": "rm -rf /"}));
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    assert!(
        super::gateway::text_of(&refused).contains("refusing rm -rf"),
        "{refused}"
    );
    let allowed = served.call(2, "demo__echo", json!({"text": "hi"}));
    assert_eq!(super::gateway::text_of(&allowed), "hi", "{allowed}");
    let (status, errors) = served.close();
    assert!(status.success(), "{errors}");
}

#[test]
fn hooks_guard_the_tool_calls_of_an_agent_turn() {
    let setup = Setup::new();
    let config = super::agent_setup(&setup.state);
    setup.user_hooks(&pre_tool_use(
        "mcp__demo__add",
        "echo 'no adding today' >&2; exit 2",
    ));
    let out = setup.sidewire(
        &[
            "run",
            "--config",
            config.to_str().unwrap(),
            "--model",
            super::SCRIPTED,
        ],
        "add 2 and 40\n/quit\n",
    );
    let text = stdout(&out);
    assert!(out.status.success(), "{text}\n{}", stderr(&out));
    assert!(text.contains("mcp__demo__add"), "{text}");
    assert!(text.contains("no adding today"), "{text}");
    assert!(!text.contains("-> 42"), "the tool did not run: {text}");
}

#[test]
fn on_a_terminal_run_asks_about_an_unapproved_project_hook() {
    let setup = Setup::new();
    setup.project_hooks(&pre_tool_use(
        "mcp__demo__echo",
        "echo 'project says no' >&2; exit 2",
    ));
    let mut command = std::process::Command::new("script");
    command
        .args(["-qfec", &format!("exec {EXE} -v run"), "/dev/null"])
        .current_dir(&setup.project)
        .env("HOME", &setup.user);
    let seen = super::interact(
        command,
        &setup.state,
        &[
            // The question itself ends no line: the hook it is about is shown first.
            ("echo 'project says no'", "y"),
            ("ready:", r#"/call mcp__demo__echo {"text":"hi"}"#),
            ("BLOCKED by @hooks", "/quit"),
        ],
    );
    assert!(seen.contains("project says no"), "{seen}");
    // The answer is kept: the next run does not ask.
    let listed = setup.sidewire(&["--json", "hooks", "list"], "");
    let listed: Value = serde_json::from_str(&stdout(&listed)).unwrap();
    assert_eq!(listed["hooks"][0]["standing"], "approved", "{listed}");
}
