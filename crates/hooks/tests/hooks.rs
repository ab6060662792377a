//! The hook files read (both dialects, warnings and errors that name the file and the JSON
//! path) and hooks run for real: stdin and environment, exit codes, the timeout, the output
//! cap, and a forked daemon, whose group goes with the hook.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;
use sidewire_hooks::{
    Ended, HookDecision, HookDialect, HookEvent, HookFiles, RunContext, Scope, Source, answer,
    run_hook,
};

fn source(path: &Path, dialect: HookDialect) -> Source {
    Source {
        path: path.to_owned(),
        scope: Scope::Project,
        dialect,
    }
}

/// One hook of `event` running `command` (with `timeout` seconds when given).
fn one_hook(command: &str, timeout: Option<f64>) -> HookFiles {
    let mut hook = json!({"type": "command", "command": command});
    if let Some(timeout) = timeout {
        hook["timeout"] = json!(timeout);
    }
    let settings = json!({"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [hook]}]}});
    let mut files = HookFiles::default();
    let at = Path::new("/project/.claude/settings.json");
    files
        .add(&settings.to_string(), source(at, HookDialect::ClaudeCode))
        .unwrap();
    files
}

fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

#[test]
fn both_dialects_are_read_with_their_matcher_key_in_file_order() {
    let dir = tempfile::tempdir().unwrap();
    let (home, project) = (dir.path().join("home"), dir.path().join("project"));
    for path in [
        home.join(".claude/settings.json"),
        project.join(".reasonix/settings.json"),
    ] {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    }
    std::fs::write(
        home.join(".claude/settings.json"),
        json!({"model": "x", "hooks": {"PreToolUse": [{"matcher": "Bash",
            "hooks": [{"type": "command", "command": "echo user", "timeout": 5}]}]}})
        .to_string(),
    )
    .unwrap();
    std::fs::write(
        project.join(".reasonix/settings.json"),
        json!({"hooks": {"PreToolUse": [{"match": "Edit|Write",
            "hooks": [{"type": "command", "command": "echo reasonix"}]}]}})
        .to_string(),
    )
    .unwrap();
    let files = HookFiles::read(&Source::standard(&home, &project)).unwrap();
    assert!(files.warnings.is_empty(), "{:?}", files.warnings);
    let commands: Vec<&str> = files.hooks.iter().map(|h| h.command.as_str()).collect();
    assert_eq!(commands, ["echo user", "echo reasonix"]);
    assert_eq!(files.hooks[0].source.scope, Scope::User);
    assert_eq!(files.hooks[0].timeout, Some(Duration::from_secs(5)));
    assert_eq!(files.hooks[1].json_path, "hooks.PreToolUse[0].hooks[0]");
    let bash: Vec<_> = files
        .matching(HookEvent::PreToolUse, Some("Bash"))
        .collect();
    assert_eq!(bash.len(), 1);
    assert_eq!(
        files.matching(HookEvent::PreToolUse, Some("Write")).count(),
        1
    );
    assert_eq!(
        files.matching(HookEvent::PostToolUse, Some("Bash")).count(),
        0
    );
}

#[test]
fn what_is_not_read_is_warned_with_its_file_and_json_path() {
    let settings = json!({"hooks": {
        "PreToolUse": [{"matcher": "Bash", "if": "x",
            "hooks": [{"type": "command", "command": "true", "shell": "zsh"},
                      {"type": "prompt", "prompt": "is this safe?"}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "true"}]}],
        "OnSunday": []}});
    let mut files = HookFiles::default();
    let at = Path::new("/p/.claude/settings.json");
    files
        .add(&settings.to_string(), source(at, HookDialect::ClaudeCode))
        .unwrap();
    assert_eq!(files.hooks.len(), 1, "the command hook of PreToolUse only");
    let warned: Vec<&str> = files
        .warnings
        .iter()
        .map(|w| w.json_path.as_str())
        .collect();
    for path in [
        "hooks.PreToolUse[0].if",
        "hooks.PreToolUse[0].hooks[0].shell",
        "hooks.PreToolUse[0].hooks[1].type",
        "hooks.Stop",
        "hooks.OnSunday",
    ] {
        assert!(warned.contains(&path), "{path} not in {warned:?}");
    }
    assert!(files.warnings.iter().all(|w| w.path == at));
}

#[test]
fn a_malformed_file_is_an_error_naming_the_file_and_the_json_path() {
    let at = Path::new("/p/.claude/settings.json");
    for (text, json_path) in [
        ("{not json", "$"),
        (r#"{"hooks": []}"#, "hooks"),
        (r#"{"hooks": {"PreToolUse": {}}}"#, "hooks.PreToolUse"),
        (
            r#"{"hooks": {"PreToolUse": [{"matcher": "(", "hooks": []}]}}"#,
            "hooks.PreToolUse[0].matcher",
        ),
        (
            r#"{"hooks": {"PreToolUse": [{"hooks": [{"type": "command"}]}]}}"#,
            "hooks.PreToolUse[0].hooks[0].command",
        ),
        (
            r#"{"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "x", "timeout": -1}]}]}}"#,
            "hooks.PreToolUse[0].hooks[0].timeout",
        ),
    ] {
        let err = HookFiles::default()
            .add(text, source(at, HookDialect::ClaudeCode))
            .unwrap_err();
        assert!(err.is_malformed(), "{text}: {err}");
        let sidewire_hooks::Error::Malformed {
            path,
            json_path: got,
            ..
        } = &err
        else {
            unreachable!()
        };
        assert_eq!((path.as_path(), got.as_str()), (at, json_path), "{text}");
    }
    // A directory where the file should be is refused, not skipped.
    let dir = tempfile::tempdir().unwrap();
    let err = HookFiles::read(&[source(dir.path(), HookDialect::ClaudeCode)]).unwrap_err();
    assert!(err.is_file(), "{err}");
    // A file that is not there is simply not read.
    let missing = dir.path().join("none.json");
    assert!(
        HookFiles::read(&[source(&missing, HookDialect::ClaudeCode)])
            .unwrap()
            .hooks
            .is_empty()
    );
}

#[tokio::test]
async fn a_hook_reads_the_event_on_stdin_and_its_project_in_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    let files = one_hook(r#"cat; printf ' %s' "$CLAUDE_PROJECT_DIR""#, None);
    let input = json!({"hook_event_name": "PreToolUse", "tool_name": "Bash"});
    let ran = run_hook(&files.hooks[0], &input, &RunContext::new(dir.path())).await;
    assert_eq!(ran.ended, Ended::Exited(0));
    assert_eq!(
        ran.stdout,
        format!("{input} {}", dir.path().display()),
        "the input as JSON, then the project"
    );
}

#[tokio::test]
async fn a_hook_past_its_timeout_is_killed_with_its_group() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("sleeper.pid");
    let command = format!("sleep 300 & echo $! > '{}'; wait", pid_file.display());
    let files = one_hook(&command, Some(0.5));
    let ran = run_hook(&files.hooks[0], &json!({}), &RunContext::new(dir.path())).await;
    assert_eq!(ran.ended, Ended::TimedOut(Duration::from_millis(500)));
    let said = answer(HookEvent::PreToolUse, &ran);
    assert_eq!(
        said.decision,
        HookDecision::Continue,
        "a failed hook goes on"
    );
    assert!(said.failure.is_some());
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while alive(pid) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(!alive(pid), "the hook's child outlived its timeout");
}

#[tokio::test]
async fn a_hook_that_floods_stdout_fails_at_the_cap() {
    let dir = tempfile::tempdir().unwrap();
    let files = one_hook("yes flood", None);
    let mut context = RunContext::new(dir.path());
    context.max_output = 64 * 1024;
    let ran = run_hook(&files.hooks[0], &json!({}), &context).await;
    assert_eq!(ran.ended, Ended::OutputTooLarge(64 * 1024));
    assert!(ran.stdout.is_empty());
    assert!(answer(HookEvent::PreToolUse, &ran).failure.is_some());
}

#[tokio::test]
async fn a_daemon_a_hook_forks_goes_with_the_hook() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("daemon.pid");
    // The daemon keeps stdout open: the run must not wait for it.
    let command = format!("sleep 300 & echo $! > '{}'; exit 0", pid_file.display());
    let files = one_hook(&command, Some(60.0));
    let ran = run_hook(&files.hooks[0], &json!({}), &RunContext::new(dir.path())).await;
    assert_eq!(ran.ended, Ended::Exited(0));
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while alive(pid) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(!alive(pid), "the forked daemon outlived its hook");
}

#[tokio::test]
async fn claude_codes_documented_bash_validator_blocks_with_exit_2() {
    // The shape of the docs' example: read tool_input.command, refuse a pattern on stderr.
    let dir = tempfile::tempdir().unwrap();
    let command = r#"input=$(cat); case "$input" in *'rm -rf'*) echo "Blocked: rm -rf" >&2; exit 2;; esac; exit 0"#;
    let files = one_hook(command, None);
    let context = RunContext::new(dir.path());
    let bad = json!({"tool_name": "Bash", "tool_input": {"command": "rm -rf /"}});
    let said = answer(
        HookEvent::PreToolUse,
        &run_hook(&files.hooks[0], &bad, &context).await,
    );
    assert_eq!(said.decision, HookDecision::Block);
    assert_eq!(said.reason.as_deref(), Some("Blocked: rm -rf"));
    let fine = json!({"tool_name": "Bash", "tool_input": {"command": "ls"}});
    let said = answer(
        HookEvent::PreToolUse,
        &run_hook(&files.hooks[0], &fine, &context).await,
    );
    assert_eq!(said.decision, HookDecision::Continue);
    assert!(said.failure.is_none());
}

#[test]
fn the_bounds_of_a_hook_file_are_hit_and_said() {
    let dir = tempfile::tempdir().unwrap();
    // Over the file cap: refused, not read in part.
    let big = dir.path().join("big.json");
    let padding = " ".repeat(sidewire_hooks::MAX_FILE_BYTES);
    std::fs::write(&big, format!("{{\"hooks\": {{}}}}{padding}")).unwrap();
    let err = HookFiles::read(&[source(&big, HookDialect::ClaudeCode)]).unwrap_err();
    assert!(err.is_file(), "{err}");
    // More hooks than one file may hold.
    let hooks: Vec<_> = (0..=sidewire_hooks::MAX_HOOKS_PER_FILE)
        .map(|n| json!({"type": "command", "command": format!("echo {n}")}))
        .collect();
    let settings = json!({"hooks": {"PreToolUse": [{"hooks": hooks}]}});
    let err = HookFiles::default()
        .add(&settings.to_string(), source(&big, HookDialect::ClaudeCode))
        .unwrap_err();
    assert!(err.is_malformed(), "{err}");
    // A timeout over the cap is cut to it.
    let files = one_hook("true", Some(1e9));
    assert_eq!(files.hooks[0].timeout, Some(sidewire_hooks::MAX_TIMEOUT));
}

#[tokio::test]
async fn a_daemon_that_leaves_the_group_holding_stdout_is_not_waited_for() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("daemon.pid");
    // `setsid` takes it out of the hook's group, so the group's kill misses it, and it keeps
    // the hook's stdout open: the run must end with the shell, not at its timeout.
    let command = format!(
        "echo '{{}}'; setsid sleep 300 & echo $! > '{}'; exit 0",
        pid_file.display()
    );
    let files = one_hook(&command, Some(30.0));
    let ran = run_hook(&files.hooks[0], &json!({}), &RunContext::new(dir.path())).await;
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // The test process is no subreaper: it ends the daemon itself.
    let _ = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status();
    assert_eq!(ran.ended, Ended::Exited(0), "{ran:?}");
    assert_eq!(ran.stdout.trim(), "{}");
}
