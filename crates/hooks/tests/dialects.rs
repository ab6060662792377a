//! The dialects of Gemini CLI and Codex, each read from a file shaped as its own documentation
//! shows one: its events as Claude Code's, its timeout unit, its matcher rule, its own keys, what
//! is warned about, what is malformed, where its files are, and the variables its hooks find
//! the project in.

use std::path::Path;
use std::time::Duration;

use serde_json::json;
use sidewire_hooks::{
    Ended, HookDialect, HookEvent, HookFiles, RunContext, Scope, Source, Warning, run_hook,
};

fn source(path: &str, dialect: HookDialect) -> Source {
    Source {
        path: path.into(),
        scope: Scope::Project,
        dialect,
    }
}

const GEMINI: &str = "/p/.gemini/settings.json";
const CODEX: &str = "/p/.codex/hooks.json";

fn read(text: &str, path: &str, dialect: HookDialect) -> HookFiles {
    let mut files = HookFiles::default();
    files.add(text, source(path, dialect)).unwrap();
    files
}

/// The warning at `json_path`, which must be there.
fn warning<'a>(files: &'a HookFiles, json_path: &str) -> &'a Warning {
    files
        .warnings
        .iter()
        .find(|w| w.json_path == json_path)
        .unwrap_or_else(|| panic!("no warning at {json_path}: {:?}", files.warnings))
}

/// The JSON path of the malformed-file error `text` gives.
fn malformed_at(text: &str, path: &str, dialect: HookDialect) -> String {
    match HookFiles::default().add(text, source(path, dialect)) {
        Err(sidewire_hooks::Error::Malformed {
            path: at,
            json_path,
            ..
        }) => {
            assert_eq!(at, Path::new(path));
            json_path
        }
        other => panic!("{text}: not malformed: {other:?}"),
    }
}

#[test]
fn gemini_cli_reads_its_documented_settings_as_claude_code_events() {
    // Gemini CLI's docs/hooks/index.md, "Configuration schema", as written there.
    let settings = r#"{
  "hooks": {
    "BeforeTool": [
      {
        "matcher": "write_file|replace",
        "hooks": [
          {
            "name": "security-check",
            "type": "command",
            "command": "$GEMINI_PROJECT_DIR/.gemini/hooks/security.sh",
            "timeout": 5000
          }
        ]
      }
    ]
  }
}"#;
    let files = read(settings, GEMINI, HookDialect::GeminiCli);
    assert!(files.warnings.is_empty(), "{:?}", files.warnings);
    let [hook] = files.hooks.as_slice() else {
        panic!("{:?}", files.hooks)
    };
    assert_eq!(
        hook.event,
        HookEvent::PreToolUse,
        "BeforeTool is PreToolUse"
    );
    assert_eq!(hook.timeout, Some(Duration::from_secs(5)), "5000 ms");
    assert_eq!(hook.json_path, "hooks.BeforeTool[0].hooks[0]");
    assert_eq!(
        hook.command,
        "$GEMINI_PROJECT_DIR/.gemini/hooks/security.sh"
    );
    for (tool, runs) in [
        ("write_file", true),
        ("replace", true),
        ("read_file", false),
    ] {
        assert_eq!(
            files.matching(HookEvent::PreToolUse, Some(tool)).count(),
            usize::from(runs),
            "{tool}"
        );
    }
    assert_eq!(files.matching(HookEvent::PostToolUse, None).count(), 0);
}

#[test]
fn gemini_cli_complete_example_maps_its_events_and_warns_about_the_rest() {
    // Gemini CLI's docs/hooks/writing-hooks.md, "Complete example: Smart Development Workflow
    // Assistant", its `.gemini/settings.json` as written there.
    let settings = r#"{
  "hooks": {
    "SessionStart": [
      {
        "matcher": "startup",
        "hooks": [
          {
            "name": "init",
            "type": "command",
            "command": "node .gemini/hooks/init.js"
          }
        ]
      }
    ],
    "BeforeAgent": [
      {
        "matcher": "*",
        "hooks": [
          {
            "name": "memory",
            "type": "command",
            "command": "node .gemini/hooks/inject-memories.js"
          }
        ]
      }
    ],
    "BeforeToolSelection": [
      {
        "matcher": "*",
        "hooks": [
          {
            "name": "filter",
            "type": "command",
            "command": "node .gemini/hooks/rag-filter.js"
          }
        ]
      }
    ],
    "BeforeTool": [
      {
        "matcher": "write_file",
        "hooks": [
          {
            "name": "security",
            "type": "command",
            "command": "node .gemini/hooks/security.js"
          }
        ]
      }
    ],
    "AfterModel": [
      {
        "matcher": "*",
        "hooks": [
          {
            "name": "record",
            "type": "command",
            "command": "node .gemini/hooks/record.js"
          }
        ]
      }
    ],
    "AfterAgent": [
      {
        "matcher": "*",
        "hooks": [
          {
            "name": "validate",
            "type": "command",
            "command": "node .gemini/hooks/validate.js"
          }
        ]
      }
    ],
    "SessionEnd": [
      {
        "matcher": "exit",
        "hooks": [
          {
            "name": "save",
            "type": "command",
            "command": "node .gemini/hooks/consolidate.js"
          }
        ]
      }
    ]
  }
}"#;
    let files = read(settings, GEMINI, HookDialect::GeminiCli);
    // Sorted by event: only the order within one event is the file's.
    let mut read: Vec<(HookEvent, &str)> = files
        .hooks
        .iter()
        .map(|hook| (hook.event, hook.command.as_str()))
        .collect();
    read.sort();
    assert_eq!(
        read,
        [
            (HookEvent::PreToolUse, "node .gemini/hooks/security.js"),
            (
                HookEvent::UserPromptSubmit,
                "node .gemini/hooks/inject-memories.js"
            ),
            (HookEvent::SessionStart, "node .gemini/hooks/init.js"),
            (HookEvent::SessionEnd, "node .gemini/hooks/consolidate.js"),
        ]
    );
    // The events with no Claude Code counterpart, and AfterAgent (Claude Code's Stop), whose
    // hooks do not run here: each one warning, naming the file and the event.
    for (at, says) in [
        ("hooks.BeforeToolSelection", "filters the tools"),
        ("hooks.AfterModel", "provider.response"),
        ("hooks.AfterAgent", "Claude Code's Stop"),
    ] {
        let warned = warning(&files, at);
        assert!(warned.message.contains(says), "{warned:?}");
        assert_eq!(warned.path, Path::new(GEMINI));
    }
    // A lifecycle matcher (Gemini CLI compares it with the session's source or reason) is not
    // honoured here, and says so.
    warning(&files, "hooks.SessionStart[0].matcher");
    warning(&files, "hooks.SessionEnd[0].matcher");
    assert_eq!(files.warnings.len(), 5, "{:?}", files.warnings);
}

#[test]
fn gemini_cli_timeouts_are_milliseconds_and_its_matcher_is_searched_for() {
    let settings = json!({"hooks": {"BeforeTool": [{"matcher": "write_file", "hooks": [
        {"type": "command", "command": "a", "timeout": 30},
        {"type": "command", "command": "b", "timeout": 1500},
        {"type": "command", "command": "c"}]}]}})
    .to_string();
    let gemini = read(&settings, GEMINI, HookDialect::GeminiCli);
    let timeouts: Vec<_> = gemini.hooks.iter().map(|hook| hook.timeout).collect();
    assert_eq!(
        timeouts,
        [
            Some(Duration::from_millis(30)),
            Some(Duration::from_millis(1500)),
            None
        ],
        "milliseconds; unset is the run's default, Gemini CLI's 60 000 ms"
    );
    // Gemini CLI tests `new RegExp(matcher)` against the name: not anchored.
    assert!(gemini.hooks[0].matcher.matches("mcp_files_write_file"));

    // The same shape as Claude Code's: seconds, and the matcher over the whole name.
    let claude = json!({"hooks": {"PreToolUse": [{"matcher": "write_file", "hooks": [
        {"type": "command", "command": "a", "timeout": 30}]}]}})
    .to_string();
    let claude = read(&claude, "/p/.claude/settings.json", HookDialect::ClaudeCode);
    assert_eq!(claude.hooks[0].timeout, Some(Duration::from_secs(30)));
    assert!(!claude.hooks[0].matcher.matches("mcp_files_write_file"));
}

#[test]
fn gemini_cli_keys_of_its_own_are_read_and_what_is_not_honoured_is_said() {
    let settings = r#"{
  // Gemini CLI reads its settings with comments stripped.
  "hooksConfig": {"disabled": ["noisy"], "notifications": false},
  "hooks": {
    "enabled": true,
    "BeforeTool": [
      {"matcher": "run_shell_command", "sequential": true, "if": "x", "hooks": [
        {"name": "guard", "description": "blocks rm -rf", "type": "command",
         "command": "./guard.sh", "env": {"A": "1"}},
        {"name": "noisy", "type": "command", "command": "./log.sh"}, /* off */
        {"type": "command", "command": "./other.sh"}
      ]},
      {"sequential": false, "hooks": [{"type": "command", "command": "./quiet.sh"}]}
    ],
    "OnSunday": []
  }
}"#;
    let files = read(settings, GEMINI, HookDialect::GeminiCli);
    let commands: Vec<&str> = files.hooks.iter().map(|h| h.command.as_str()).collect();
    assert_eq!(
        commands,
        ["./guard.sh", "./other.sh", "./quiet.sh"],
        "the hook named in hooksConfig.disabled is not read"
    );
    for (at, says) in [
        ("hooks.BeforeTool[0].sequential", "not honoured"),
        ("hooks.BeforeTool[0].if", "unknown key"),
        ("hooks.BeforeTool[0].hooks[0].env", "not honoured"),
        ("hooks.BeforeTool[0].hooks[1]", "hooksConfig.disabled"),
        ("hooks.enabled", "hooksConfig.enabled"),
        ("hooks.OnSunday", "not a Gemini CLI event"),
    ] {
        let warned = warning(&files, at);
        assert!(warned.message.contains(says), "{warned:?}");
    }
    assert_eq!(
        files.warnings.len(),
        6,
        "name, description, sequential: false and notifications are read in silence: {:?}",
        files.warnings
    );

    // `hooksConfig.enabled: false` turns the file's hooks off, and says so once.
    let off = json!({"hooksConfig": {"enabled": false}, "hooks": {"BeforeTool": [
        {"hooks": [{"type": "command", "command": "./guard.sh"}]}]}})
    .to_string();
    let off = read(&off, GEMINI, HookDialect::GeminiCli);
    assert!(off.hooks.is_empty());
    assert_eq!(off.warnings.len(), 1);
    warning(&off, "hooksConfig.enabled");
}

#[test]
fn codex_reads_its_documented_hooks_json() {
    // Codex's hooks docs (developers.openai.com/codex/config-advanced, "Hooks") show this hook
    // as inline TOML and say `hooks.json` has the same structure; Codex's own fixture
    // (`hooks_file_deserializes_existing_json_shape` in codex-rs/config/src/hook_config.rs)
    // is the same shape in JSON.
    let hooks = r#"{
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "^Bash$",
        "hooks": [
          {
            "type": "command",
            "command": "/usr/bin/python3 \"$(git rev-parse --show-toplevel)/.codex/hooks/pre_tool_use_policy.py\"",
            "timeout": 30,
            "statusMessage": "Checking Bash command"
          }
        ]
      }
    ]
  }
}"#;
    let files = read(hooks, CODEX, HookDialect::Codex);
    assert!(files.warnings.is_empty(), "{:?}", files.warnings);
    let [hook] = files.hooks.as_slice() else {
        panic!("{:?}", files.hooks)
    };
    assert_eq!(hook.event, HookEvent::PreToolUse);
    assert_eq!(hook.timeout, Some(Duration::from_secs(30)), "seconds");
    assert!(hook.matcher.matches("Bash") && !hook.matcher.matches("BashOutput"));
    assert!(hook.command.ends_with("pre_tool_use_policy.py\""));
}

#[test]
fn codex_timeouts_are_whole_seconds_with_its_own_default() {
    let hooks = json!({"hooks": {"Stop": [], "PreToolUse": [{"hooks": [
        {"type": "command", "command": "a"},
        {"type": "command", "command": "b", "timeout": 0},
        {"type": "command", "command": "c", "timeout": 5}]}]}})
    .to_string();
    let files = read(&hooks, CODEX, HookDialect::Codex);
    let timeouts: Vec<_> = files.hooks.iter().map(|hook| hook.timeout).collect();
    assert_eq!(
        timeouts,
        [
            Some(Duration::from_secs(600)),
            Some(Duration::from_secs(1)),
            Some(Duration::from_secs(5))
        ],
        "unset is Codex's 600 s, 0 is 1 s (`unwrap_or(600).max(1)`)"
    );
}

#[test]
fn codex_events_and_matchers_read_as_codex_reads_them() {
    let hooks = json!({"hooks": {
        "PermissionRequest": [{"matcher": "Bash|apply_patch", "hooks": [
            {"type": "command", "command": "./approve.sh", "async": false,
             "commandWindows": "approve.cmd", "statusMessage": "checking"}]}],
        "PostToolUse": [
            {"matcher": "mcp__memory", "hooks": [{"type": "command", "command": "./exact.sh"}]},
            {"matcher": "[", "hooks": [{"type": "command", "command": "./broken.sh"}]},
            {"matcher": "mcp__.*__write.*", "hooks": [
                {"type": "command", "command": "./writes.sh", "async": true,
                 "additionalContextLimit": 100},
                {"type": "prompt", "prompt": "is this safe?"}]}],
        "PostCompact": [{"hooks": [{"type": "command", "command": "true"}]}],
        "SubagentStart": [{"hooks": [{"type": "command", "command": "true"}]}],
        "Interrupt": [{"hooks": [{"type": "command", "command": "true"}]}],
        "SubagentStop": [{"hooks": [{"type": "command", "command": "true"}]}],
        "Notification": [{"hooks": [{"type": "command", "command": "true"}]}]
    }})
    .to_string();
    let files = read(&hooks, CODEX, HookDialect::Codex);
    let read: Vec<(HookEvent, &str)> = files
        .hooks
        .iter()
        .map(|hook| (hook.event, hook.command.as_str()))
        .collect();
    assert_eq!(
        read,
        [
            (HookEvent::PermissionRequest, "./approve.sh"),
            (HookEvent::PostToolUse, "./exact.sh"),
            (HookEvent::PostToolUse, "./writes.sh"),
        ],
        "the group whose matcher does not compile is left out, as Codex leaves it"
    );
    let permission = &files.hooks[0].matcher;
    assert!(permission.matches("apply_patch") && !permission.matches("Read"));
    assert!(
        !files.hooks[1]
            .matcher
            .matches("mcp__memory__create_entities"),
        "a plain name is compared exactly"
    );
    assert!(files.hooks[2].matcher.matches("mcp__fs__write_file"));
    for (at, says) in [
        ("hooks.PostToolUse[1].matcher", "not read"),
        ("hooks.PostToolUse[2].hooks[0].async", "not honoured"),
        (
            "hooks.PostToolUse[2].hooks[0].additionalContextLimit",
            "not honoured",
        ),
        ("hooks.PostToolUse[2].hooks[1].type", "only \"command\""),
        ("hooks.PostCompact", "compaction.complete"),
        ("hooks.SubagentStart", "subagents"),
        ("hooks.Interrupt", "interrupts"),
        ("hooks.SubagentStop", "subagents"),
        ("hooks.Notification", "not a Codex event"),
    ] {
        let warned = warning(&files, at);
        assert!(warned.message.contains(says), "{warned:?}");
        assert_eq!(warned.path, Path::new(CODEX));
    }
    assert_eq!(files.warnings.len(), 9, "{:?}", files.warnings);
}

#[test]
fn a_malformed_dialect_file_is_an_error_naming_the_json_path() {
    let gemini = HookDialect::GeminiCli;
    for (text, at) in [
        ("{\"hooks\": {} /* unterminated", "$"),
        (
            r#"{"hooks": {"BeforeTool": [{"hooks": [{"type": "command", "command": "x", "timeout": "5000"}]}]}}"#,
            "hooks.BeforeTool[0].hooks[0].timeout",
        ),
        (
            r#"{"hooks": {"BeforeTool": [{"hooks": [{"type": "command", "command": "x", "timeout": 0}]}]}}"#,
            "hooks.BeforeTool[0].hooks[0].timeout",
        ),
        (
            r#"{"hooks": {"BeforeTool": [{"sequential": "yes", "hooks": []}]}}"#,
            "hooks.BeforeTool[0].sequential",
        ),
        (
            r#"{"hooks": {"AfterTool": [{"hooks": [{"type": "command", "command": "x", "name": 5}]}]}}"#,
            "hooks.AfterTool[0].hooks[0].name",
        ),
        (
            r#"{"hooksConfig": {"disabled": ["a", 1]}}"#,
            "hooksConfig.disabled[1]",
        ),
        (
            r#"{"hooksConfig": {"enabled": "no"}}"#,
            "hooksConfig.enabled",
        ),
    ] {
        assert_eq!(malformed_at(text, GEMINI, gemini), at, "{text}");
    }
    let codex = HookDialect::Codex;
    for (text, at) in [
        (r#"{"hooks": {"Stop": {}}}"#, "hooks.Stop"),
        (
            r#"{"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "x", "timeout": 1.5}]}]}}"#,
            "hooks.PreToolUse[0].hooks[0].timeout",
        ),
        (
            r#"{"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "x", "timeout": -1}]}]}}"#,
            "hooks.PreToolUse[0].hooks[0].timeout",
        ),
        (
            r#"{"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "x", "async": "yes"}]}]}}"#,
            "hooks.PreToolUse[0].hooks[0].async",
        ),
        (
            r#"{"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "x", "statusMessage": 1}]}]}}"#,
            "hooks.PreToolUse[0].hooks[0].statusMessage",
        ),
        (
            r#"{"hooks": {"PreToolUse": [{"matcher": 1, "hooks": []}]}}"#,
            "hooks.PreToolUse[0].matcher",
        ),
        // Comments are Gemini CLI's, not Codex's.
        ("{\"hooks\": {}} // note", "$"),
    ] {
        assert_eq!(malformed_at(text, CODEX, codex), at, "{text}");
    }
}

#[test]
fn the_standard_files_of_each_dialect_are_read_in_their_scope() {
    let dir = tempfile::tempdir().unwrap();
    let (home, project) = (dir.path().join("home"), dir.path().join("project"));
    let sources = Source::standard(&home, &project);
    let listed: Vec<_> = sources
        .iter()
        .map(|s| (s.path.clone(), s.scope, s.dialect))
        .collect();
    for expected in [
        (
            home.join(".gemini/settings.json"),
            Scope::User,
            HookDialect::GeminiCli,
        ),
        (
            home.join(".codex/hooks.json"),
            Scope::User,
            HookDialect::Codex,
        ),
        (
            project.join(".gemini/settings.json"),
            Scope::Project,
            HookDialect::GeminiCli,
        ),
        (
            project.join(".codex/hooks.json"),
            Scope::Project,
            HookDialect::Codex,
        ),
    ] {
        assert!(listed.contains(&expected), "{expected:?} not in {listed:?}");
    }
    // The project is the home directory: each file once, as the user's.
    let at_home = Source::standard(&home, &home);
    assert_eq!(at_home.len(), 5, "{at_home:?}");
    assert!(at_home.iter().all(|s| s.path.starts_with(&home)));
    assert!(
        at_home
            .iter()
            .filter(|s| s.path.ends_with(".gemini/settings.json"))
            .all(|s| s.scope == Scope::User)
    );

    for (path, text) in [
        (
            home.join(".gemini/settings.json"),
            r#"{"hooks": {"BeforeTool": [{"hooks": [{"type": "command", "command": "echo gemini"}]}]}}"#,
        ),
        (
            project.join(".codex/hooks.json"),
            r#"{"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "echo codex"}]}]}}"#,
        ),
    ] {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let files = HookFiles::read(&sources).unwrap();
    let read: Vec<_> = files
        .hooks
        .iter()
        .map(|h| (h.command.as_str(), h.source.scope, h.source.dialect))
        .collect();
    assert_eq!(
        read,
        [
            ("echo gemini", Scope::User, HookDialect::GeminiCli),
            ("echo codex", Scope::Project, HookDialect::Codex),
        ]
    );
}

#[tokio::test]
async fn a_dialects_hook_finds_the_project_in_its_own_variables() {
    let dir = tempfile::tempdir().unwrap();
    let context = RunContext::new(dir.path());
    let project = dir.path().display().to_string();

    let gemini = json!({"hooks": {"BeforeTool": [{"hooks": [{"type": "command",
        "command": r#"printf '%s|%s|%s' "$GEMINI_PROJECT_DIR" "$GEMINI_CWD" "$CLAUDE_PROJECT_DIR""#}]}]}})
    .to_string();
    let gemini = read(&gemini, GEMINI, HookDialect::GeminiCli);
    let ran = run_hook(&gemini.hooks[0], &json!({}), &context).await;
    assert_eq!(ran.ended, Ended::Exited(0));
    assert_eq!(ran.stdout, format!("{project}|{project}|{project}"));

    // Codex sets no variable: its hooks find the project as their working directory.
    let codex = json!({"hooks": {"PreToolUse": [{"hooks": [{"type": "command",
        "command": r#"printf '%s|%s' "$(pwd)" "${CLAUDE_PROJECT_DIR-}""#}]}]}})
    .to_string();
    let codex = read(&codex, CODEX, HookDialect::Codex);
    let ran = run_hook(&codex.hooks[0], &json!({}), &context).await;
    assert_eq!(ran.ended, Ended::Exited(0));
    let (cwd, claude) = ran.stdout.split_once('|').unwrap();
    assert_eq!(
        Path::new(cwd).canonicalize().unwrap(),
        dir.path().canonicalize().unwrap()
    );
    assert_ne!(
        claude, project,
        "no CLAUDE_PROJECT_DIR set for a Codex hook"
    );
    assert_eq!(
        HookDialect::Codex.project_dir_env(),
        &[] as &[&str],
        "documented: none"
    );
}

#[test]
fn each_dialect_names_the_event_its_hooks_expect_on_stdin() {
    for (dialect, event, name) in [
        (
            HookDialect::ClaudeCode,
            HookEvent::PreToolUse,
            Some("PreToolUse"),
        ),
        (
            HookDialect::GeminiCli,
            HookEvent::PreToolUse,
            Some("BeforeTool"),
        ),
        (
            HookDialect::GeminiCli,
            HookEvent::PostToolUse,
            Some("AfterTool"),
        ),
        (
            HookDialect::GeminiCli,
            HookEvent::UserPromptSubmit,
            Some("BeforeAgent"),
        ),
        (
            HookDialect::GeminiCli,
            HookEvent::PreCompact,
            Some("PreCompress"),
        ),
        (HookDialect::GeminiCli, HookEvent::PermissionRequest, None),
        (
            HookDialect::Codex,
            HookEvent::PermissionRequest,
            Some("PermissionRequest"),
        ),
        (HookDialect::Codex, HookEvent::Notification, None),
    ] {
        assert_eq!(dialect.event_name(event), name, "{dialect:?} {event}");
    }
}
