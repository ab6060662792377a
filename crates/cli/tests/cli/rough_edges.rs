//! Issue 40: the rough edges a new user found. Piped `mcp call` output is the tool's text
//! (point 11); roots (13); exit codes and checks (20); input that was silently ignored (21); a
//! VS Code input's default (22); `run`'s edges (23); thin text output (24).

use super::*;

// Point 11: `mcp call` output is the tool's text when piped.

#[test]
fn piped_call_output_is_the_tools_text_byte_for_byte() {
    let home = home();
    for text in [
        "one line",
        "first\n  indented second\nthird\n",
        "no trailing newline\nsecond",
        "\n\nblank lines around\n\n",
        "a tab\there and a \u{1b}[31mcolour\u{1b}[0m and a \u{202e}bidi",
    ] {
        let word = format!("text={text}");
        let out = run(home.path(), &adhoc(&["call", "echo", &word]));
        assert!(out.status.success(), "{text:?}: {}", stderr(&out));
        assert_eq!(out.stdout, text.as_bytes(), "{text:?}");
    }
}

#[test]
fn call_output_on_a_terminal_stays_escaped_and_indented() {
    let home = home();
    let mut command = Command::new("script");
    let line = format!("{EXE} mcp call hostile --stdio -- {EXE} __mcp-server --hostile");
    command.args(["-qfec", &line, "/dev/null"]);
    // The progress line's own clearing sequence is the CLI's, not the tool's.
    let seen = interact_raw(command, home.path(), &[])
        .replace("\r\u{1b}[2K", "")
        .replace("\r\n", "\n");
    assert_no_raw_controls("mcp call on a terminal", &seen);
    assert!(
        seen.contains(&format!(
            "result {HOSTILE_SHOWN}\n  second line {HOSTILE_SHOWN}"
        )),
        "{seen}"
    );
}

// Point 13: roots.

/// `python3 roots_server.py` (see the fixture), or `None` when there is no python3.
fn roots_server(test: &str) -> Option<String> {
    modern_server(test)?;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/roots_server.py");
    Some(script.to_str().unwrap().to_owned())
}

/// The `file://` URI sidewire offers for the directory `dir`.
fn root_uri(dir: &Path) -> String {
    format!("file://{}", dir.canonicalize().unwrap().display())
}

#[test]
fn root_flags_are_offered_as_roots_and_none_means_no_capability() {
    let Some(script) = roots_server("root_flags_are_offered_as_roots_and_none_means_no_capability")
    else {
        return;
    };
    let home = home();
    let (one, two) = (home.path().join("one"), home.path().join("two"));
    std::fs::create_dir_all(&one).unwrap();
    std::fs::create_dir_all(&two).unwrap();
    let out = run(
        home.path(),
        &[
            "mcp",
            "call",
            "roots",
            "--root",
            one.to_str().unwrap(),
            "--root",
            two.to_str().unwrap(),
            "--stdio",
            "--",
            "python3",
            &script,
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains(&root_uri(&one)), "{text}");
    assert!(text.contains(&root_uri(&two)), "{text}");
    // No root given: the capability is not declared.
    let out = run(
        home.path(),
        &["mcp", "call", "roots", "--stdio", "--", "python3", &script],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("no roots capability"),
        "{}",
        stdout(&out)
    );
    // A root that is not a directory is a usage error.
    let out = run(
        home.path(),
        &[
            "mcp",
            "call",
            "roots",
            "--root",
            "/no/such/dir",
            "--stdio",
            "--",
            "python3",
            &script,
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[test]
fn the_configs_roots_are_offered_relative_to_its_folder() {
    let Some(script) = roots_server("the_configs_roots_are_offered_relative_to_its_folder") else {
        return;
    };
    let home = home();
    let project = home.path().join("project");
    std::fs::create_dir_all(project.join("src")).unwrap();
    let config = project.join(".mcp.json");
    std::fs::write(
        &config,
        json!({
            "roots": ["src", "${workspaceFolder}"],
            "mcpServers": {"r": {"command": "python3", "args": [script]}},
        })
        .to_string(),
    )
    .unwrap();
    let out = run(
        home.path(),
        &["mcp", "--config", config.to_str().unwrap(), "call", "roots"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains(&root_uri(&project.join("src"))), "{text}");
    assert!(text.lines().any(|l| l == root_uri(&project)), "{text}");
}

#[test]
fn roots_added_in_run_reach_the_server_with_list_changed() {
    let Some(script) = roots_server("roots_added_in_run_reach_the_server_with_list_changed") else {
        return;
    };
    let home = home();
    let (one, two) = (home.path().join("one"), home.path().join("two"));
    std::fs::create_dir_all(&one).unwrap();
    std::fs::create_dir_all(&two).unwrap();
    let config = home.path().join("mcp.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"r": {"command": "python3", "args": [script]}}}).to_string(),
    )
    .unwrap();
    let input = format!(
        "/root add {}\n/root\n/call roots\n/quit\n",
        two.to_str().unwrap()
    );
    let out = run_with_input(
        home.path(),
        &[
            "run",
            "--config",
            config.to_str().unwrap(),
            "--root",
            one.to_str().unwrap(),
        ],
        &input,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains(&root_uri(&one)), "{text}");
    assert!(text.contains(&root_uri(&two)), "{text}");
    assert!(text.contains("list_changed 1"), "{text}");
}

// Point 20: exit codes and checks.

#[test]
fn run_checks_its_model_ref_before_reading_a_line() {
    let home = home();
    let config = agent_setup(home.path());
    // Not a ref at all: a usage error.
    let out = run_with_input(home.path(), &["run", "--model", "nosuch"], "hi\n");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(!stdout(&out).contains("> hi"), "{}", stdout(&out));
    // A ref no extension serves: a failure before any line is read.
    let out = run_with_input(
        home.path(),
        &[
            "run",
            "--config",
            config.to_str().unwrap(),
            "--model",
            "plugin/x/y/z",
        ],
        "hi\n",
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("plugin/x/y/z"), "{}", stderr(&out));
    assert!(!stdout(&out).contains("> hi"), "{}", stdout(&out));
}

#[test]
fn arguments_over_the_schemas_maximum_are_a_local_usage_error() {
    let home = home();
    let out = run(home.path(), &adhoc(&["call", "slow", "steps=300"]));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("maximum"), "{err}");
    // The check is ours: nothing says the server refused them.
    assert!(!err.contains("MCP server `adhoc`:"), "{err}");
    assert!(!stdout(&out).contains("counted to"), "{}", stdout(&out));
}

#[test]
fn login_and_logout_without_a_server_are_usage_errors() {
    let home = home();
    for command in ["login", "logout"] {
        let out = run(home.path(), &["mcp", command]);
        assert_eq!(out.status.code(), Some(2), "{command}: {}", stderr(&out));
        assert!(stderr(&out).contains("SERVER"), "{}", stderr(&out));
    }
}

// Point 21: silently ignored input.

#[test]
fn server_transport_and_dialect_flags_that_would_be_ignored_are_usage_errors() {
    let home = home();
    for line in [
        &["mcp", "tools", "--server", "foo", "--stdio", "--", "true"][..],
        &[
            "mcp",
            "tools",
            "--server",
            "foo",
            "--url",
            "http://127.0.0.1:9",
        ],
        &[
            "mcp",
            "tools",
            "--transport",
            "sse",
            "--stdio",
            "--",
            "true",
        ],
        &["mcp", "--transport", "http", "tools", "--config", "x.json"],
        &[
            "mcp",
            "tools",
            "--dialect",
            "cursor",
            "--stdio",
            "--",
            "true",
        ],
    ] {
        let out = run(home.path(), line);
        assert_eq!(out.status.code(), Some(2), "{line:?}: {}", stderr(&out));
    }
}

#[test]
fn a_mistyped_key_in_a_server_entry_is_warned_of_once_with_its_path() {
    let home = home();
    let config = home.path().join(".mcp.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"demo": {"command": EXE, "arg": ["__mcp-server"], "args": ["__mcp-server"], "alwaysAllow": []}}})
            .to_string(),
    )
    .unwrap();
    let out = run(
        home.path(),
        &["mcp", "--config", config.to_str().unwrap(), "tools"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(
        err.matches("mcpServers.demo.arg: unknown key").count(),
        1,
        "{err}"
    );
    assert!(err.contains(".mcp.json"), "{err}");
    // Another tool's key is known, not warned of.
    assert!(!err.contains("alwaysAllow"), "{err}");
}

#[test]
fn a_trailing_comma_is_read_and_warned_of_where_the_dialects_tool_refuses_it() {
    let home = home();
    let text = format!(
        r#"{{"mcpServers": {{"demo": {{"command": "{EXE}", "args": ["__mcp-server"],}},}}}}"#
    );
    let desktop = home.path().join("claude_desktop_config.json");
    std::fs::write(&desktop, &text).unwrap();
    let out = run(
        home.path(),
        &["mcp", "--config", desktop.to_str().unwrap(), "tools"],
    );
    // Read and used, with a warning that Claude Desktop itself would refuse the file.
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("echo"), "{}", stdout(&out));
    let warning = stderr(&out);
    assert!(
        warning.contains("claude-desktop") && warning.contains("line 1 column"),
        "{warning}"
    );
    // Claude Code's `.mcp.json` takes it: no warning.
    let code = home.path().join(".mcp.json");
    std::fs::write(&code, &text).unwrap();
    let out = run(
        home.path(),
        &["mcp", "--config", code.to_str().unwrap(), "tools"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stderr(&out).contains("trailing comma"), "{}", stderr(&out));
}

// Point 22: a VS Code input's default.

#[test]
fn a_vscode_inputs_default_answers_it_without_a_terminal() {
    let home = home();
    let folder = home.path().join(".vscode");
    std::fs::create_dir_all(&folder).unwrap();
    let config = folder.join("mcp.json");
    std::fs::write(
        &config,
        json!({
            "inputs": [{"type": "promptString", "id": "tz", "description": "Time zone", "default": "Europe/Oslo"}],
            "servers": {"demo": {"command": EXE, "args": ["__mcp-server"], "env": {"TZ": "${input:tz}"}}},
        })
        .to_string(),
    )
    .unwrap();
    let out = run(
        home.path(),
        &["mcp", "--config", config.to_str().unwrap(), "servers"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("demo running"), "{}", stdout(&out));
}

// Point 23: `run`'s edges.

#[test]
fn quitting_run_says_nothing_of_surfaces_gone() {
    let home = home();
    install_builtin(home.path());
    let seen = run_on_a_terminal(
        home.path(),
        &[("sidewire> ", "/ui"), ("Say hello", "/quit")],
    );
    assert!(seen.contains("extension ready"), "{seen}");
    assert!(!seen.contains("gone"), "{seen}");
}

#[test]
fn a_forms_required_field_cannot_be_submitted_empty() {
    let home = home();
    install_builtin(home.path());
    let mut command = Command::new("script");
    command.args(["-qfec", &format!("{EXE} run"), "/dev/null"]);
    let mut terminal = Terminal::start(command, home.path());
    // The demo's form has a required `name`: left out, then empty.
    terminal.wait_until_seen("fill in: /submit sidewire-demo:demo-form");
    terminal.type_line("/submit sidewire-demo:demo-form");
    terminal.wait_for(|line| line.contains("is required"));
    terminal.type_line("/submit sidewire-demo:demo-form name=");
    terminal.wait_for(|line| line.contains("is required"));
    terminal.type_line("/quit");
    let seen = terminal.finish();
    assert!(!seen.contains("submitted: accepted"), "{seen}");
}

#[test]
fn runs_start_up_warning_names_a_failed_server_once() {
    let home = home();
    let config = home.path().join("mcp.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"broken": {"command": "/no/such/server-marker"}}}).to_string(),
    )
    .unwrap();
    let out = run_with_input(
        home.path(),
        &["run", "--config", config.to_str().unwrap()],
        "/quit\n",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    let warning = err
        .lines()
        .find(|l| l.contains("failed to start"))
        .unwrap_or_else(|| panic!("no warning: {err}"));
    assert_eq!(warning.matches("broken").count(), 1, "{warning}");
}

#[test]
fn a_servers_stray_stdout_is_no_warning_at_the_default_level() {
    let home = home();
    let out = run(
        home.path(),
        &[
            "mcp",
            "call",
            "echo",
            "text=hi",
            "--stdio",
            "--",
            "sh",
            "-c",
            &format!("echo a banner, not JSON; exec {EXE} __mcp-server"),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stderr(&out).contains("WARN"), "{}", stderr(&out));
}

#[test]
fn a_command_not_on_path_shows_the_path_once_and_cut() {
    let home = home();
    let long: Vec<String> = (0..400).map(|n| format!("/no/such/dir-{n}")).collect();
    let path = long.join(":");
    let out = run_with_env(
        home.path(),
        &["mcp", "tools", "--stdio", "--", "no-such-server-command"],
        "",
        &[("PATH", &path), ("SHELL", "/bin/false")],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("/no/such/dir-0"), "{err}");
    assert_eq!(err.matches("/no/such/dir-1:").count(), 1, "{err}");
    assert!(!err.contains("/no/such/dir-399"), "{err}");
    // What to do survives the cut.
    assert!(err.contains("absolute path"), "{err}");
}

// Point 24: thin text output.

#[test]
fn tools_show_their_parameters_and_empty_listings_say_so() {
    let home = home();
    let out = run(home.path(), &adhoc(&["tools"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let add = text
        .split("mcp__adhoc__add")
        .nth(1)
        .and_then(|rest| rest.split("mcp__adhoc__").next())
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        add.contains("a: number") && add.contains("b: number"),
        "{text}"
    );
    let slow = text.split("mcp__adhoc__slow").nth(1).unwrap_or_default();
    assert!(slow.contains("steps?: integer"), "{text}");
    for (listing, says) in [
        ("prompts", "no prompts"),
        ("resources", "no resources"),
        ("templates", "no resource templates"),
    ] {
        let out = run(home.path(), &adhoc(&[listing]));
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(stdout(&out).contains(says), "{listing}: {}", stdout(&out));
    }
}

#[test]
fn an_unknown_tool_that_the_configs_filter_hides_says_so() {
    let home = home();
    let config = home.path().join(".mcp.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"demo": {"command": EXE, "args": ["__mcp-server"], "excludeTools": ["add"]}}})
            .to_string(),
    )
    .unwrap();
    let path = config.to_str().unwrap();
    for name in ["add", "mcp__demo__add"] {
        let out = run(
            home.path(),
            &["mcp", "--config", path, "call", name, "a=1", "b=2"],
        );
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains("filter"), "{name}: {err}");
    }
    // A name no filter hides is just unknown.
    let out = run(home.path(), &["mcp", "--config", path, "call", "nope"]);
    assert!(!stderr(&out).contains("filter"), "{}", stderr(&out));
}

#[test]
fn ext_check_with_nothing_installed_says_how_to_install() {
    let home = home();
    let out = run(home.path(), &["ext", "check"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let all = format!("{}{}", stdout(&out), stderr(&out));
    assert!(all.contains("no plugins installed"), "{all}");
    assert!(all.contains("sidewire plugin install"), "{all}");
}

#[test]
fn installing_an_installed_plugin_names_the_replace_flag() {
    let home = home();
    let package = install_builtin(home.path());
    let out = run(
        home.path(),
        &[
            "plugin",
            "install",
            package.to_str().unwrap(),
            "--yes",
            "--link",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("--replace"), "{}", stderr(&out));
}

#[test]
fn a_start_failures_hint_names_the_handshake_that_was_sent() {
    let home = home();
    let not_a_server = ["sh", "-c", "echo Usage: server [options]"];
    for (era, method) in [("auto", "server/discover"), ("legacy", "initialize")] {
        let mut line = vec!["mcp", "--era", era, "tools", "--stdio", "--"];
        line.extend_from_slice(&not_a_server);
        let out = run(home.path(), &line);
        assert_eq!(out.status.code(), Some(1));
        let err = stderr(&out);
        let hint = err
            .lines()
            .find(|l| l.contains("hint: "))
            .unwrap_or_else(|| panic!("{era}: no hint: {err}"));
        assert!(hint.contains(&format!("`{method}`")), "{era}: {hint}");
    }
}
