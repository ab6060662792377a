//! The `sidewire` binary run as a user would: every command, including bad input, each with a
//! clear message on stderr, a non-zero exit, and nothing lost.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const EXE: &str = env!("CARGO_BIN_EXE_sidewire");

/// Runs `sidewire` with `args` and `SIDEWIRE_HOME=home`, stdin closed, killed after 60 s.
fn run(home: &Path, args: &[&str]) -> Output {
    run_with_input(home, args, "")
}

/// The same, with `input` on stdin.
fn run_with_input(home: &Path, args: &[&str], input: &str) -> Output {
    run_with_env(home, args, input, &[])
}

/// The same, with `env` set too.
fn run_with_env(home: &Path, args: &[&str], input: &str, env: &[(&str, &str)]) -> Output {
    run_in(None, home, args, input, env)
}

/// The same, in the directory `cwd` when given.
fn run_in(
    cwd: Option<&Path>,
    home: &Path,
    args: &[&str],
    input: &str,
    env: &[(&str, &str)],
) -> Output {
    let mut command = Command::new(EXE);
    if let Some(cwd) = cwd {
        command.current_dir(cwd);
    }
    let mut child = command
        .args(args)
        .envs(env.iter().copied())
        .env("SIDEWIRE_HOME", home)
        .env("NO_COLOR", "1")
        .env_remove("RUST_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("sidewire starts");
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().expect("stdin is piped");
        let _ = stdin.write_all(input.as_bytes());
    }
    // The pipes are drained while it runs, so output past a pipe's buffer cannot stall it.
    let drain = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut bytes);
            }
            bytes
        })
    };
    let stdout = drain(child.stdout.take().map(|p| Box::new(p) as _));
    let stderr = drain(child.stderr.take().map(|p| Box::new(p) as _));
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait works") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("sidewire {args:?} did not finish within 60 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: stdout.join().expect("stdout is collected"),
        stderr: stderr.join().expect("stderr is collected"),
    }
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn assert_fails(out: &Output, needle: &str) {
    assert!(
        !out.status.success(),
        "expected failure, got success: {}",
        stdout(out)
    );
    assert!(
        stderr(out).contains(needle),
        "stderr lacks {needle:?}:\n{}",
        stderr(out)
    );
}

fn home() -> tempfile::TempDir {
    tempfile::tempdir().expect("a temp dir")
}

/// A plugin directory whose sidecar is the built-in demo sidecar of this binary.
fn builtin_plugin(dir: &Path) -> PathBuf {
    let package = dir.join("demo-plugin");
    std::fs::create_dir_all(&package).unwrap();
    let manifest = json!({
        "apiVersion": "reasonix.io/plugin/v1",
        "name": "sidewire-demo",
        "version": "0.0.0",
        "runtime": {
            "command": EXE,
            "args": ["__sidecar"],
            "intercepts": ["input.receive", "permission.decision"],
            "capabilities": ["interceptors", "ui", "providers"]
        }
    });
    std::fs::write(package.join("reasonix-plugin.json"), manifest.to_string()).unwrap();
    package
}

/// The ref of the built-in sidecar's scripted model.
const SCRIPTED: &str = "plugin/sidewire-demo/scripted/echo-1";

/// [`builtin_plugin`], installed linked (which must succeed); returns the package directory.
fn install_builtin(home: &Path) -> PathBuf {
    let package = builtin_plugin(home);
    install_linked(home, &package);
    package
}

/// Installs the package at `package` linked, which must succeed.
fn install_linked(home: &Path, package: &Path) {
    let install = run(
        home,
        &[
            "plugin",
            "install",
            package.to_str().unwrap(),
            "--yes",
            "--link",
        ],
    );
    assert!(install.status.success(), "{}", stderr(&install));
}

#[test]
fn demo_runs_and_exits_zero_without_touching_home() {
    let home = home();
    let out = run(home.path(), &["demo"]);
    assert!(
        out.status.success(),
        "demo failed: {}\n{}",
        stdout(&out),
        stderr(&out)
    );
    let text = stdout(&out);
    assert!(
        text.contains("hello from the sidewire demo [rewritten by starter-extension]"),
        "{text}"
    );
    assert!(text.contains("audit: {"), "{text}");
    assert!(text.contains("sidewire demo extension ready"), "{text}");
    assert!(text.contains("progress 3/3"), "{text}");
    // The agent step: the scripted model asks for `add`, the chain allows, the answer streams.
    assert!(text.contains("5. an agent turn"), "{text}");
    assert!(
        text.contains("asks for mcp__demo__add {\"a\":2,\"b\":40}"),
        "{text}"
    );
    assert!(text.contains("  result: 42"), "{text}");
    assert!(text.contains("The tool said: 42."), "{text}");
    // The gateway step: the same call through `sidewire mcp serve` and its chain, audited.
    assert!(
        text.contains("permission.decision [sidewire-demo allow], verdict allow, ok"),
        "{text}"
    );
    assert!(text.contains("clean shutdown"), "{text}");
    assert_eq!(
        std::fs::read_dir(home.path()).unwrap().count(),
        0,
        "demo wrote into SIDEWIRE_HOME"
    );
}

#[test]
fn demo_json_is_one_document() {
    let home = home();
    let out = run(home.path(), &["--json", "demo"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: Value = serde_json::from_str(&stdout(&out)).expect("stdout is one JSON document");
    assert_eq!(doc["toolCall"]["result"]["content"][0], "5");
    assert_eq!(doc["audit"].as_array().unwrap().len(), 1);
    assert_eq!(doc["agent"]["answer"], "The tool said: 42.");
    assert_eq!(doc["agent"]["end"]["kind"], "answered");
    assert_eq!(doc["agent"]["toolCalls"][0]["result"]["content"][0], "42");
    assert_eq!(
        doc["agent"]["toolCalls"][0]["permission"]["permission"],
        "allow"
    );
}

#[test]
fn ext_providers_lists_the_catalog_in_text_and_json() {
    let home = home();
    install_builtin(home.path());
    let out = run(home.path(), &["ext", "providers"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains(&format!("{SCRIPTED}  Scripted echo model")),
        "{text}"
    );
    assert!(
        text.contains("[tools, reasoning]  (plugin sidewire-demo)"),
        "{text}"
    );
    let out = run(home.path(), &["--json", "ext", "providers"]);
    let doc: Value = serde_json::from_str(&stdout(&out)).expect("one JSON document");
    assert_eq!(doc["providers"][0]["ref"], SCRIPTED);
    assert_eq!(doc["providers"][0]["plugin"], "sidewire-demo");
    assert_eq!(doc["providers"][0]["tools"], true);
    // Nothing installed: an empty catalog is no error.
    let out = run(self::home().path(), &["ext", "providers"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("no extension serves a model"));
}

#[test]
fn plugin_install_builtin_demo_serves_the_scripted_model() {
    // Issue 40 §12: the README's provider path, for a user with nothing installed.
    let home = home();
    let out = run_with_input(
        home.path(),
        &["plugin", "install", "--builtin", "demo"],
        "n\n",
    );
    // The same consent as any plugin: without it, nothing is installed.
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("FULL TRUST"), "{}", stderr(&out));
    let out = run(
        home.path(),
        &["plugin", "install", "--builtin", "demo", "--yes"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("installed sidewire-demo"),
        "{}",
        stdout(&out)
    );
    let out = run(
        home.path(),
        &["ext", "complete", "--provider", SCRIPTED, "hello there"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("You said: hello there"),
        "{}",
        stdout(&out)
    );
    // Copied into the store: it does not depend on a temporary directory.
    let out = run(home.path(), &["--json", "plugin", "list"]);
    let doc: Value = serde_json::from_str(&stdout(&out)).expect("one JSON document");
    assert_eq!(doc["plugins"][0]["id"], "sidewire-demo");
    assert_eq!(doc["plugins"][0]["linked"], false);
    // Installed again only with --replace.
    let out = run(
        home.path(),
        &["plugin", "install", "--builtin", "demo", "--yes"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let out = run(
        home.path(),
        &[
            "plugin",
            "install",
            "--builtin",
            "demo",
            "--yes",
            "--replace",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
}

/// Every line of `out`'s stdout as JSON.
fn json_lines(out: &Output) -> Vec<Value> {
    stdout(out)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect()
}

#[test]
fn ext_complete_streams_the_answer_then_the_usage() {
    let home = home();
    install_builtin(home.path());
    let out = run(
        home.path(),
        &["ext", "complete", "--provider", SCRIPTED, "hello there"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("  thinking: The user said something; I will echo it.\n  You said: hello there\n  usage: 2 prompt + "),
        "{text}"
    );
    // One JSON object per chunk, then the outcome.
    let out = run(
        home.path(),
        &[
            "--json",
            "ext",
            "complete",
            "--provider",
            SCRIPTED,
            "hello there",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let events = json_lines(&out);
    let kinds: Vec<&str> = events
        .iter()
        .filter_map(|e| e["chunk"]["type"].as_str())
        .collect();
    assert_eq!(
        kinds,
        ["reasoning", "text", "text", "text", "text", "usage", "done"]
    );
    let end = events.last().unwrap();
    assert_eq!(end["event"], "end");
    assert_eq!(end["outcome"], "completed");
    assert_eq!(end["text"], "You said: hello there");
    assert_eq!(end["usage"]["promptTokens"], 2);
}

#[test]
fn a_models_text_never_reaches_the_terminal_raw() {
    // The scripted model echoes the prompt: escape sequences, a CR, a bidi override and a
    // newline come back as the model's text.
    let home = home();
    install_builtin(home.path());
    let hostile = "one\u{1b}[2K\rtwo \u{202e}three\nfour \u{9b}five";
    let out = run(
        home.path(),
        &["ext", "complete", "--provider", SCRIPTED, hostile],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_output_is_clean("ext complete", &out);
    let text = stdout(&out);
    // (The model splits words at whitespace, CR and newline included.)
    assert!(
        text.contains("You said: one\\x1b[2K two \\u{202e}three four \\u{9b}five"),
        "{text}"
    );
    // The JSON keeps the text, losslessly, with the same characters as escapes.
    let out = run(
        home.path(),
        &["--json", "ext", "complete", "--provider", SCRIPTED, hostile],
    );
    assert_output_is_clean("ext complete --json", &out);
    let end = json_lines(&out).pop().unwrap();
    assert_eq!(
        end["text"],
        format!(
            "You said: {}",
            hostile.split_whitespace().collect::<Vec<_>>().join(" ")
        )
    );
}

/// A local provider writes a long answer as a burst of small chunks, faster than the terminal
/// side reads them: the stream must still arrive whole (a bound of 256 unread chunks per
/// connection once failed this connection at the 257th word).
#[test]
fn ext_complete_streams_a_burst_of_thousands_of_chunks_whole() {
    let home = home();
    install_builtin(home.path());
    let words: Vec<String> = (0..3000).map(|i| format!("w{i}")).collect();
    let text = words.join(" ");
    let out = run(
        home.path(),
        &["ext", "complete", "--provider", SCRIPTED, &text],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains(&format!("You said: {text}\n")),
        "the echo arrived cut short"
    );
}

#[test]
fn ext_complete_refuses_a_ref_no_extension_serves() {
    let home = home();
    install_builtin(home.path());
    let out = run(
        home.path(),
        &["ext", "complete", "--provider", "plugin/other/x/y", "hi"],
    );
    assert_fails(&out, "not in the provider catalog");
}

/// Installs the built-in sidecar with its slow model, which writes `cancelled` to the returned
/// file when the host cancels its stream.
fn install_slow_model(home: &Path) -> PathBuf {
    let mark = home.join("cancel-mark");
    let package = builtin_plugin(home);
    let manifest = package.join("reasonix-plugin.json");
    let mut doc: Value =
        serde_json::from_str(&std::fs::read_to_string(&manifest).unwrap()).unwrap();
    doc["runtime"]["args"] = json!(["__sidecar", "--slow-model", "--cancel-mark", mark]);
    std::fs::write(&manifest, doc.to_string()).unwrap();
    install_linked(home, &package);
    mark
}

/// Runs `sidewire args` (stdin `input`, kept open), sends SIGINT once stdout shows `needle`
/// (then closes stdin when `then_close_stdin`), and returns the exit code, stdout, stderr and
/// how long the exit took after the signal.
fn interrupt_once_shown(
    home: &Path,
    args: &[&str],
    input: &str,
    needle: &'static str,
    then_close_stdin: bool,
) -> (Option<i32>, String, String, Duration) {
    let mut child = Command::new(EXE)
        .args(args)
        .env("SIDEWIRE_HOME", home)
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Held open until the end: `run` would end at the end of its input.
    let mut stdin = child.stdin.take().unwrap();
    std::io::Write::write_all(&mut stdin, input.as_bytes()).unwrap();
    let mut stdout_pipe = child.stdout.take().unwrap();
    let (seen_tx, seen_rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        use std::io::Read;
        let mut text = Vec::new();
        let mut buf = [0u8; 256];
        let mut told = false;
        while let Ok(n) = stdout_pipe.read(&mut buf) {
            if n == 0 {
                break;
            }
            text.extend_from_slice(&buf[..n]);
            if !told && String::from_utf8_lossy(&text).contains(needle) {
                told = true;
                let _ = seen_tx.send(());
            }
        }
        String::from_utf8_lossy(&text).into_owned()
    });
    let mut errors = child.stderr.take().unwrap();
    let errors = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut errors, &mut text);
        text
    });
    let shown = seen_rx.recv_timeout(Duration::from_secs(30));
    let sent = Instant::now();
    send("INT", child.id());
    let stdin = (!then_close_stdin).then_some(stdin);
    let code = exit_code(&mut child, "SIGINT");
    let took = sent.elapsed();
    drop(stdin);
    let (text, errors) = (reader.join().unwrap(), errors.join().unwrap());
    assert!(shown.is_ok(), "{needle:?} never showed:\n{text}\n{errors}");
    (code, text, errors, took)
}

/// Waits (bounded) for the slow model's cancel mark.
fn assert_the_sidecar_saw_the_cancel(mark: &Path) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !mark.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(
        std::fs::read_to_string(mark).unwrap_or_default(),
        "cancelled",
        "the sidecar never saw the cancel"
    );
}

#[test]
fn ctrl_c_cancels_a_streaming_completion_and_the_sidecar_sees_the_cancel() {
    let home = home();
    let mark = install_slow_model(home.path());
    // Forty words at 200 ms each: eight seconds unless cancelled.
    let words = vec!["word"; 40].join(" ");
    let (code, text, errors, took) = interrupt_once_shown(
        home.path(),
        &["ext", "complete", "--provider", SCRIPTED, &words],
        "",
        "You said:",
        false,
    );
    assert_eq!(code, Some(130), "{text}\n{errors}");
    assert!(errors.contains("the stream was cancelled"), "{errors}");
    assert!(errors.contains("interrupted (SIGINT)"), "{errors}");
    // It stopped streaming: far fewer than the forty words arrived, well before 8 s.
    assert!(text.matches("word").count() < 30, "{text}");
    assert!(took < Duration::from_secs(7), "{took:?}");
    assert_the_sidecar_saw_the_cancel(&mark);
}

#[test]
fn ctrl_c_during_a_turn_of_run_with_a_model_cancels_its_stream_on_the_sidecar() {
    let home = home();
    let mark = install_slow_model(home.path());
    let words = vec!["word"; 40].join(" ");
    // Ctrl-C cancels the turn, not the session: it then ends at the end of its input.
    let (code, text, errors, took) = interrupt_once_shown(
        home.path(),
        &["run", "--model", SCRIPTED],
        &format!("{words}\n"),
        "You said:",
        true,
    );
    assert_eq!(code, Some(0), "{text}\n{errors}");
    assert!(errors.contains("cancelled"), "{errors}");
    assert!(!errors.contains("interrupted (SIGINT)"), "{errors}");
    let answer = text.split("You said:").nth(1).unwrap_or_default();
    assert!(answer.matches("word").count() < 30, "{text}");
    assert!(took < Duration::from_secs(7), "{took:?}");
    assert_the_sidecar_saw_the_cancel(&mark);
}

/// Installs the built-in sidecar and an MCP config with the built-in server; returns the
/// config's path.
fn agent_setup(home: &Path) -> PathBuf {
    install_builtin(home);
    let config = home.join("mcp.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"demo": {"command": EXE, "args": ["__mcp-server"]}}}).to_string(),
    )
    .unwrap();
    config
}

#[test]
fn run_with_a_model_turns_input_into_an_answer_through_a_tool_call() {
    let home = home();
    let config = agent_setup(home.path());
    let config = config.to_str().unwrap();
    let out = run_with_input(
        home.path(),
        &["run", "--config", config, "--model", SCRIPTED],
        "add 2 and 40\nhello again\n/quit\n",
    );
    let text = stdout(&out);
    assert!(out.status.success(), "{text}\n{}", stderr(&out));
    assert!(text.contains("> add 2 and 40"), "{text}");
    assert!(
        text.contains("  thinking: The user wants 2 + 40; I will call mcp__demo__add."),
        "{text}"
    );
    // The compact report: the host denied (not read-only), the extension allowed, the result.
    assert!(
        text.contains(
            "  tool mcp__demo__add {\"a\":2,\"b\":40} [host deny, allow after sidewire-demo] -> 42"
        ),
        "{text}"
    );
    assert!(text.contains("  The tool said: 42.\n"), "{text}");
    // The second line is a turn of the same conversation.
    assert!(text.contains("  You said: hello again\n"), "{text}");
    let audit = std::fs::read_to_string(home.path().join("audit.jsonl")).unwrap();
    assert_eq!(audit.lines().count(), 1, "{audit}");

    // With --json: one object per event, the tool call and the turn among them.
    let out = run_with_input(
        home.path(),
        &["--json", "run", "--config", config, "--model", SCRIPTED],
        "add 2 and 40\n",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let events = json_lines(&out);
    let call = events
        .iter()
        .find(|e| e["event"] == "toolCall")
        .expect("a toolCall event");
    assert_eq!(call["report"]["tool"], "mcp__demo__add");
    assert_eq!(call["report"]["result"]["content"][0], "42");
    assert_eq!(call["report"]["permission"]["permission"], "allow");
    // The turn's end is its last event (the session's own, such as the surfaces going away
    // at shutdown, may follow).
    let turn = events.iter().rfind(|e| {
        e["event"].as_str().is_some_and(|kind| {
            ["hook", "request", "chunk", "response", "toolCall", "turn"].contains(&kind)
        })
    });
    let turn = turn.unwrap();
    assert_eq!(turn["event"], "turn");
    assert_eq!(turn["answer"], "The tool said: 42.");
    assert_eq!(turn["rounds"], 2);
    assert_eq!(turn["end"]["kind"], "answered");
    let chunks = events.iter().filter(|e| e["event"] == "chunk").count();
    assert!(chunks >= 10, "{chunks} chunks");
}

#[test]
fn run_with_a_model_stops_at_the_round_bound_after_the_last_calls_ran() {
    // --max-rounds 1: the model asks for the tool, the call runs, and the turn ends there.
    let home = home();
    let config = agent_setup(home.path());
    let out = run_with_input(
        home.path(),
        &[
            "run",
            "--config",
            config.to_str().unwrap(),
            "--model",
            SCRIPTED,
            "--max-rounds",
            "1",
        ],
        "add 1 and 1\n",
    );
    let text = stdout(&out);
    assert!(out.status.success(), "{text}\n{}", stderr(&out));
    assert!(text.contains("-> 2"), "{text}");
    assert!(
        text.contains("(stopped after 1 rounds: the model still asked for tools)"),
        "{text}"
    );
    assert!(!text.contains("The tool said"), "{text}");
}

#[test]
fn completions_are_printed() {
    let out = run(home().path(), &["completions", "bash"]);
    assert!(out.status.success());
    assert!(stdout(&out).contains("sidewire"));
}

#[test]
fn usage_errors_exit_2() {
    let out = run(home().path(), &["no-such-command"]);
    assert_eq!(out.status.code(), Some(2));
}

fn adhoc<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["mcp"];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--stdio", "--", EXE, "__mcp-server"]);
    args
}

#[test]
fn mcp_adhoc_stdio_lists_and_calls_tools() {
    let home = home();
    let out = run(home.path(), &adhoc(&["tools"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("mcp__adhoc__echo"));
    // The server's own tool name works when unambiguous; key=value arguments.
    let out = run(home.path(), &adhoc(&["call", "echo", "text=hi there"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "hi there");
    let out = run(
        home.path(),
        &adhoc(&["--json", "call", "mcp__adhoc__add", r#"{"a":1,"b":2}"#]),
    );
    let doc: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(doc["content"][0]["text"], "3");
    let out = run(home.path(), &adhoc(&["servers"]));
    assert!(stdout(&out).contains("adhoc running"), "{}", stdout(&out));
    let out = run(home.path(), &adhoc(&["ping"]));
    assert!(out.status.success(), "{}", stderr(&out));
}

/// `mcp call` checks the arguments against the tool's inputSchema before sending: a string
/// where `add` takes a number fails with the path and keyword, and the tool never runs (it
/// would have answered "add needs numbers" with isError). The check is local: a usage error.
#[test]
fn mcp_call_arguments_that_break_the_input_schema_exit_2_unsent() {
    let home = home();
    let out = run(
        home.path(),
        &adhoc(&["call", "add", "--args", r#"{"a":"x","b":1}"#]),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        !stdout(&out).contains("add needs numbers"),
        "{}",
        stdout(&out)
    );
    let err = stderr(&out);
    assert!(err.contains("inputSchema") && err.contains("/a"), "{err}");
}

#[test]
fn mcp_bad_input_is_reported() {
    let home = home();
    assert_fails(&run(home.path(), &adhoc(&["call", "nope"])), "unknown tool");
    assert_fails(
        &run(home.path(), &adhoc(&["call", "echo", "{not json"])),
        "not valid JSON",
    );
    assert_fails(
        &run(
            home.path(),
            &["mcp", "--config", "/no/such/file.json", "tools"],
        ),
        "cannot read",
    );
    let config = home.path().join("bad.json");
    std::fs::write(&config, r#"{"mcpServers": {"x": {"command": 5}}}"#).unwrap();
    assert_fails(
        &run(
            home.path(),
            &["mcp", "--config", config.to_str().unwrap(), "tools"],
        ),
        "mcpServers.x",
    );
    // A server that cannot start: the message names the problem.
    let out = run(
        home.path(),
        &["mcp", "tools", "--stdio", "--", "/no/such/server-binary"],
    );
    assert_fails(&out, "no MCP server started");
}

/// A server that never answers the handshake: `--timeout` bounds startup too, and
/// `--startup-timeout` and the config's `startup_timeout_ms` bound it alone; the default would
/// wait 30 s.
#[test]
fn the_startup_timeout_comes_from_the_flags_and_the_config() {
    let home = home();
    let config = home.path().join("mute.json");
    std::fs::write(
        &config,
        r#"{"mcpServers": {"mute": {"command": "sleep", "args": ["1000"], "startup_timeout_ms": 1000}}}"#,
    )
    .unwrap();
    let config = config.to_str().unwrap();
    for args in [
        &[
            "mcp",
            "--json",
            "--timeout",
            "1",
            "servers",
            "--stdio",
            "--",
            "sleep",
            "1000",
        ][..],
        &[
            "mcp",
            "--json",
            "--startup-timeout",
            "1",
            "--timeout",
            "100",
            "servers",
            "--stdio",
            "--",
            "sleep",
            "1000",
        ][..],
        &["mcp", "--json", "--config", config, "servers"][..],
    ] {
        let started = Instant::now();
        let out = run(home.path(), args);
        let took = started.elapsed();
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
        assert!(took < Duration::from_secs(15), "{args:?} took {took:?}");
        let doc: Value = serde_json::from_str(&stdout(&out)).unwrap();
        assert_eq!(doc["servers"][0]["state"], "failed", "{args:?}: {doc}");
    }
    assert_fails(
        &run(
            home.path(),
            &[
                "mcp",
                "--startup-timeout",
                "0",
                "tools",
                "--stdio",
                "--",
                "sleep",
                "1",
            ],
        ),
        "--startup-timeout",
    );
}

#[test]
fn mcp_config_selects_servers() {
    let home = home();
    let config = home.path().join(".mcp.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"one": {"command": EXE, "args": ["__mcp-server"]}, "two": {"command": EXE, "args": ["__mcp-server"]}}}).to_string(),
    )
    .unwrap();
    let path = config.to_str().unwrap();
    let out = run(
        home.path(),
        &["mcp", "--config", path, "--server", "two", "tools"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("mcp__two__echo") && !stdout(&out).contains("mcp__one__"));
    // With both servers, a bare tool name is ambiguous.
    assert_fails(
        &run(
            home.path(),
            &["mcp", "--config", path, "call", "echo", "text=x"],
        ),
        "several servers",
    );
    assert_fails(
        &run(
            home.path(),
            &["mcp", "--config", path, "--server", "three", "tools"],
        ),
        "no server named three",
    );
}

#[test]
fn plugin_lifecycle_and_one_shot_extension_commands() {
    let home = home();
    let package = builtin_plugin(home.path());
    let pkg = package.to_str().unwrap();
    // Not interactive and no --yes: refused, nothing installed.
    let out = run(home.path(), &["plugin", "install", pkg]);
    assert_fails(&out, "--yes");
    assert!(stderr(&out).contains("FULL TRUST"), "{}", stderr(&out));
    assert!(stdout(&run(home.path(), &["plugin", "list"])).contains("no plugins installed"));
    let out = run(home.path(), &["plugin", "install", pkg, "--yes", "--link"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&run(home.path(), &["plugin", "list"])).contains("sidewire-demo"));
    assert!(stdout(&run(home.path(), &["plugin", "show", "sidewire-demo"])).contains("FULL TRUST"));
    // Installing again without --replace fails.
    assert!(
        !run(home.path(), &["plugin", "install", pkg, "--yes", "--link"])
            .status
            .success()
    );

    let out = run(home.path(), &["ext", "check"]);
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    assert!(stdout(&out).contains("ok   sidewire-demo"));

    let out = run(
        home.path(),
        &[
            "ext",
            "intercept",
            "input.receive",
            r#"{"text":"starter: hi"}"#,
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("hi [rewritten by starter-extension]"),
        "{}",
        stdout(&out)
    );
    assert!(
        stdout(&out).contains("trace: sidewire-demo replace"),
        "{}",
        stdout(&out)
    );
    let out = run(
        home.path(),
        &[
            "--json",
            "ext",
            "intercept",
            "permission.decision",
            r#"{"name":"t","arguments":"{}","hostDecision":"deny"}"#,
        ],
    );
    let doc: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(doc["permission"], "allow");
    assert_eq!(doc["audit"]["hostDecision"], "deny");
    let audit = std::fs::read_to_string(home.path().join("audit.jsonl")).unwrap();
    assert_eq!(audit.lines().count(), 1, "{audit}");

    assert_fails(
        &run(home.path(), &["ext", "intercept", "no.such.point", "{}"]),
        "unknown hook point",
    );
    assert_fails(
        &run(
            home.path(),
            &["ext", "intercept", "input.receive", r#"{"txt":"x"}"#],
        ),
        "invalid payload",
    );
    assert!(
        run(
            home.path(),
            &["ext", "event", "input.receive", r#"{"text":"x"}"#]
        )
        .status
        .success()
    );

    assert!(
        run(home.path(), &["plugin", "disable", "sidewire-demo"])
            .status
            .success()
    );
    assert!(stdout(&run(home.path(), &["plugin", "list"])).contains("(disabled)"));
    assert!(
        run(home.path(), &["plugin", "enable", "sidewire-demo"])
            .status
            .success()
    );
    assert_fails(
        &run(home.path(), &["plugin", "show", "nope"]),
        "no installed plugin",
    );
    assert_fails(&run(home.path(), &["plugin", "remove", "nope"]), "nope");
    assert!(
        run(home.path(), &["plugin", "remove", "sidewire-demo"])
            .status
            .success()
    );
    assert!(stdout(&run(home.path(), &["plugin", "list"])).contains("no plugins installed"));
}

#[test]
fn a_corrupt_store_is_an_error_and_is_left_unchanged() {
    let home = home();
    let package = builtin_plugin(home.path());
    assert!(
        run(
            home.path(),
            &[
                "plugin",
                "install",
                package.to_str().unwrap(),
                "--yes",
                "--link"
            ]
        )
        .status
        .success()
    );
    let record = std::fs::read_dir(home.path())
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "json"))
        .expect("the store writes a JSON record");
    std::fs::write(&record, b"{ not json").unwrap();
    let out = run(home.path(), &["plugin", "list"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains(&record.file_name().unwrap().to_string_lossy().into_owned()),
        "{}",
        stderr(&out)
    );
    assert!(
        !run(home.path(), &["plugin", "remove", "sidewire-demo"])
            .status
            .success()
    );
    assert_eq!(std::fs::read(&record).unwrap(), b"{ not json");
}

#[test]
fn run_is_scriptable_through_stdin() {
    let home = home();
    let package = builtin_plugin(home.path());
    assert!(
        run(
            home.path(),
            &[
                "plugin",
                "install",
                package.to_str().unwrap(),
                "--yes",
                "--link"
            ]
        )
        .status
        .success()
    );
    let config = home.path().join("mcp.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"demo": {"command": EXE, "args": ["__mcp-server"]}}}).to_string(),
    )
    .unwrap();
    let script = "starter: hi there\nplain text\n/tools\n/call mcp__demo__echo {\"text\":\"echoed\"}\n/submit sidewire-demo:demo-form name=Bob\n/ui\n/nope:x\n/reload\n/quit\n";
    // `-v`: each call's whole report (the chains' decisions), not one line.
    let out = run_with_input(
        home.path(),
        &["-v", "run", "--config", config.to_str().unwrap()],
        script,
    );
    let text = stdout(&out);
    assert!(out.status.success(), "{text}\n{}", stderr(&out));
    assert!(
        text.contains("(rewritten) hi there [rewritten by starter-extension]"),
        "{text}"
    );
    assert!(text.contains("> plain text"), "{text}");
    assert!(text.contains("mcp__demo__echo"), "{text}");
    assert!(text.contains("result: echoed"), "{text}");
    assert!(text.contains("permission: allow"), "{text}");
    assert!(text.contains("adopted [\"sidewire-demo\"]"), "{text}");
    assert!(text.contains("submitted: accepted=true"), "{text}");
    assert!(
        stderr(&out).contains("unknown command /nope:x"),
        "{}",
        stderr(&out)
    );
    // The allowed-over-deny decision is audited in $SIDEWIRE_HOME.
    let audit = std::fs::read_to_string(home.path().join("audit.jsonl")).unwrap();
    assert_eq!(audit.lines().count(), 1, "{audit}");
}

#[test]
fn each_call_of_run_has_its_own_call_id() {
    let home = home();
    let package = builtin_plugin(home.path());
    // The built-in sidecar, intercepting `tool.before` too and writing down each `callId`.
    let seen = home.path().join("call-ids");
    let manifest = package.join("reasonix-plugin.json");
    let mut doc: Value =
        serde_json::from_str(&std::fs::read_to_string(&manifest).unwrap()).unwrap();
    doc["runtime"]["intercepts"] = json!(["input.receive", "permission.decision", "tool.before"]);
    doc["runtime"]["args"] = json!(["__sidecar", "--record-calls", seen]);
    std::fs::write(&manifest, doc.to_string()).unwrap();
    install_linked(home.path(), &package);
    let config = home.path().join("mcp.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"demo": {"command": EXE, "args": ["__mcp-server"]}}}).to_string(),
    )
    .unwrap();
    let script = "/call mcp__demo__echo {\"text\":\"one\"}\n/call mcp__demo__echo {\"text\":\"two\"}\n/quit\n";
    let out = run_with_input(
        home.path(),
        &["--json", "run", "--config", config.to_str().unwrap()],
        script,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    // `tool.before` is answered before the call goes on, so both ids are written by now.
    let seen = std::fs::read_to_string(&seen).unwrap();
    let seen: Vec<&str> = seen.lines().collect();
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert_ne!(seen[0], seen[1], "two calls, one id");
    // The reports name the ids the sidecar saw.
    let reported: Vec<String> = stdout(&out)
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|event| event["event"] == "call")
        .map(|event| event["report"]["callId"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(reported, seen);
}

#[test]
fn an_override_whose_audit_record_cannot_be_written_runs_no_tool() {
    let home = home();
    install_builtin(home.path());
    // A directory where the audit log should be: the record cannot be written.
    std::fs::create_dir(home.path().join("audit.jsonl")).unwrap();
    let config = home.path().join("mcp.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"demo": {"command": EXE, "args": ["__mcp-server"]}}}).to_string(),
    )
    .unwrap();
    let script = "/call mcp__demo__echo {\"text\":\"echoed\"}\n/call mcp__demo__echo {\"text\":\"echoed\"}\n/quit\n";
    let out = run_with_input(
        home.path(),
        &["-v", "run", "--config", config.to_str().unwrap()],
        script,
    );
    let (text, errors) = (stdout(&out), stderr(&out));
    // The built-in sidecar allowed, but the host's deny stood: the tool never ran.
    assert!(!text.contains("result: echoed"), "{text}");
    assert_eq!(
        text.matches("allow NOT APPLIED").count(),
        2,
        "{text}\n{errors}"
    );
    assert_eq!(text.matches("permission: deny").count(), 2, "{text}");
    // Each time, the user is told (a warning on stderr, and the refused call).
    assert_eq!(
        errors
            .matches("permission denied for mcp__demo__echo")
            .count(),
        2,
        "{errors}"
    );
    assert!(
        errors.matches("warning (sidewire-demo)").count() >= 2,
        "{errors}"
    );
    assert!(home.path().join("audit.jsonl").is_dir());

    // The one-shot command says the same in JSON: the decision and why it was not applied.
    let out = run(
        home.path(),
        &[
            "--json",
            "ext",
            "intercept",
            "permission.decision",
            r#"{"name":"t","arguments":"{}","hostDecision":"deny"}"#,
        ],
    );
    let doc: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(doc["permission"], "deny");
    assert_eq!(doc["audit"], Value::Null);
    assert_eq!(doc["trace"][0]["decision"], "allow");
    assert_eq!(doc["trace"][0]["failure"], "audit_failed");
}

/// Processes (other than ours) whose environment carries `marker` (`NAME=value`).
fn processes_with(marker: &str) -> Vec<u32> {
    let (name, value) = marker.split_once('=').expect("a NAME=value marker");
    let me = std::process::id();
    sidewire_process::testing::with_env(name, value)
        .into_iter()
        .filter(|&pid| pid != me)
        .collect()
}

/// Sends `signal` (a `kill` name: TERM, HUP, INT) to `pid`.
fn send(signal: &str, pid: u32) {
    let status = Command::new("kill")
        .args([&format!("-{signal}"), &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success(), "kill -{signal} {pid}");
}

/// Waits (bounded) until `count` processes carry `marker`.
fn wait_for_processes(marker: &str, count: usize) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while processes_with(marker).len() < count {
        assert!(
            Instant::now() < deadline,
            "only {:?} of {count} processes started",
            processes_with(marker)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Waits (bounded) for `child` to exit and returns its code.
fn exit_code(child: &mut std::process::Child, what: &str) -> Option<i32> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code();
        }
        assert!(
            Instant::now() < deadline,
            "sidewire did not exit after {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Asserts (bounded) that no process carries `marker` any more, then kills any left so a
/// failing test leaves nothing behind.
fn assert_none_left(marker: &str, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !processes_with(marker).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let left = processes_with(marker);
    for pid in &left {
        let _ = Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
    }
    assert!(left.is_empty(), "{what}: children left behind: {left:?}");
}

/// Installs the built-in sidecar (with `sidecar_flags`, e.g. `--stubborn`) and writes an MCP
/// config starting the built-in server with `--stubborn`; returns `run`'s arguments.
fn stubborn_run(home: &Path, sidecar_flags: &[&str]) -> Vec<String> {
    let package = builtin_plugin(home);
    let manifest = package.join("reasonix-plugin.json");
    let mut doc: Value =
        serde_json::from_str(&std::fs::read_to_string(&manifest).unwrap()).unwrap();
    let args = doc["runtime"]["args"].as_array_mut().unwrap();
    args.extend(sidecar_flags.iter().map(|flag| json!(flag)));
    std::fs::write(&manifest, doc.to_string()).unwrap();
    install_linked(home, &package);
    let config = home.join("mcp.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"demo": {"command": EXE, "args": ["__mcp-server", "--stubborn"]}}})
            .to_string(),
    )
    .unwrap();
    vec![
        "run".into(),
        "--config".into(),
        config.display().to_string(),
    ]
}

#[test]
fn sigint_sigterm_and_sighup_end_an_mcp_call_with_no_child_left() {
    // Ctrl-C, `kill`/`timeout`/systemd, and a closed terminal: the same clean-up.
    for (signal, code) in [("INT", 130), ("TERM", 143), ("HUP", 129)] {
        let marker = format!("SIDEWIRE_TEST_MARKER=mcp-{signal}-{}", std::process::id());
        let (key, value) = marker.split_once('=').unwrap();
        let home = home();
        // A server that ignores SIGTERM, SIGHUP and the end of its stdin: only a kill ends it.
        let mut child = Command::new(EXE)
            .args([
                "mcp",
                "call",
                "slow",
                "steps=100",
                "--stdio",
                "--",
                EXE,
                "__mcp-server",
                "--stubborn",
            ])
            .env("SIDEWIRE_HOME", home.path())
            .env(key, value)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        wait_for_processes(&marker, 2);
        send(signal, child.id());
        let exited = exit_code(&mut child, signal);
        assert_none_left(&marker, &format!("SIG{signal} during mcp call"));
        assert_eq!(exited, Some(code), "SIG{signal}");
    }
}

#[test]
fn sigkill_of_sidewire_takes_its_servers_and_sidecars_along() {
    // Nothing of sidewire runs after SIGKILL: only the death signal its children were started
    // with can end them. The server and the sidecar ignore SIGTERM, SIGHUP and EOF.
    for command in ["mcp", "run"] {
        let marker = format!("SIDEWIRE_TEST_MARKER=kill-{command}-{}", std::process::id());
        let (key, value) = marker.split_once('=').unwrap();
        let home = home();
        let args: Vec<String> = if command == "mcp" {
            [
                "mcp",
                "call",
                "slow",
                "steps=100",
                "--stdio",
                "--",
                EXE,
                "__mcp-server",
                "--stubborn",
            ]
            .map(str::to_owned)
            .to_vec()
        } else {
            stubborn_run(home.path(), &["--stubborn"])
        };
        let mut child = Command::new(EXE)
            .args(&args)
            .env("SIDEWIRE_HOME", home.path())
            .env(key, value)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        wait_for_processes(&marker, if command == "mcp" { 2 } else { 3 });
        send("KILL", child.id());
        let exited = child.wait().unwrap();
        drop(child.stdin.take());
        assert_none_left(&marker, &format!("SIGKILL during {command}"));
        assert_eq!(
            std::os::unix::process::ExitStatusExt::signal(&exited),
            Some(9)
        );
    }
}

#[test]
fn a_servers_setsid_daemon_does_not_outlive_sidewire() {
    // Once when the command ends by itself, once on SIGTERM.
    for signal in [None, Some("TERM")] {
        let marker = format!(
            "SIDEWIRE_TEST_MARKER=daemon-{}-{}",
            signal.unwrap_or("none"),
            std::process::id()
        );
        let (key, value) = marker.split_once('=').unwrap();
        let home = home();
        let args: &[&str] = match signal {
            None => &[
                "mcp",
                "tools",
                "--stdio",
                "--",
                EXE,
                "__mcp-server",
                "--daemon",
            ],
            Some(_) => &[
                "mcp",
                "call",
                "slow",
                "steps=100",
                "--stdio",
                "--",
                EXE,
                "__mcp-server",
                "--daemon",
                "--stubborn",
            ],
        };
        let mut child = Command::new(EXE)
            .args(args)
            .env("SIDEWIRE_HOME", home.path())
            .env(key, value)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let exited = match signal {
            None => exit_code(&mut child, "the command"),
            Some(signal) => {
                // sidewire, the server and the daemon (which left the group and the session).
                wait_for_processes(&marker, 3);
                send(signal, child.id());
                exit_code(&mut child, signal)
            }
        };
        assert_none_left(&marker, &format!("a setsid daemon ({signal:?})"));
        assert_eq!(exited, Some(if signal.is_some() { 143 } else { 0 }));
    }
}

#[test]
fn sigterm_and_sighup_end_run_with_no_sidecar_or_server_left() {
    for (signal, code) in [("TERM", 143), ("HUP", 129)] {
        let marker = format!("SIDEWIRE_TEST_MARKER=run-{signal}-{}", std::process::id());
        let (key, value) = marker.split_once('=').unwrap();
        let home = home();
        // The built-in sidecar and server ignore SIGTERM, SIGHUP and EOF; the sidecar also
        // forks a setsid() daemon, which leaves its group and session.
        let args = stubborn_run(home.path(), &["--stubborn", "--daemon"]);
        // stdin stays open (piped, never written): run waits for input until the signal.
        let mut child = Command::new(EXE)
            .args(&args)
            .env("SIDEWIRE_HOME", home.path())
            .env(key, value)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // sidewire, its sidecar, the sidecar's daemon and the MCP server.
        wait_for_processes(&marker, 4);
        send(signal, child.id());
        let exited = exit_code(&mut child, signal);
        drop(child.stdin.take());
        assert_none_left(&marker, &format!("SIG{signal} during run"));
        assert_eq!(exited, Some(code), "SIG{signal}");
    }
}

/// The pinned server-everything `.ci/run` installs, or `None` (with a SKIPPED line) when the
/// peers are not installed; a missing peer fails when `SIDEWIRE_REQUIRE_PEERS=1`.
fn server_everything(test: &str) -> Option<PathBuf> {
    let required = std::env::var("SIDEWIRE_REQUIRE_PEERS").is_ok_and(|v| v == "1");
    let Some(dir) = std::env::var_os("SIDEWIRE_MCP_PEERS") else {
        assert!(
            !required,
            "SIDEWIRE_REQUIRE_PEERS=1 but SIDEWIRE_MCP_PEERS is not set"
        );
        let _ = std::io::Write::write_all(
            &mut std::io::stderr(),
            format!("SKIPPED: real MCP peer test `{test}` did not run (set SIDEWIRE_MCP_PEERS; .ci/run does)\n").as_bytes(),
        );
        return None;
    };
    let entry = PathBuf::from(dir)
        .join("npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        entry.exists() || !required,
        "server-everything is missing at {}",
        entry.display()
    );
    entry.exists().then_some(entry)
}

/// `mcp call` of a server-everything tool run as a task (`simulate-research-query` is
/// taskSupport "required"), with `args` before the server; `None` without the peers.
fn call_research_query(test: &str, args: &[&str]) -> Option<std::process::Output> {
    let entry = server_everything(test)?;
    let home = home();
    let mut all = vec!["mcp"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--stdio", "--", "node", entry.to_str().unwrap(), "stdio"]);
    Some(run(home.path(), &all))
}

// The three ways of running a task tool are three tests: each waits out the tool's simulated
// research, so one test running them in turn held the binary for the sum.
#[test]
fn mcp_call_runs_a_task_tool_against_server_everything() {
    let test = "mcp_call_runs_a_task_tool_against_server_everything";
    let Some(out) = call_research_query(test, &["call", "simulate-research-query", "topic=rust"])
    else {
        return;
    };
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("Research Report: rust"),
        "{}",
        stdout(&out)
    );
    // Not a terminal: no live status line.
    assert!(!stderr(&out).contains("\x1b[2K"), "{}", stderr(&out));
}

#[test]
fn mcp_call_json_of_a_task_tool_is_the_final_result_only() {
    let test = "mcp_call_json_of_a_task_tool_is_the_final_result_only";
    let Some(out) = call_research_query(
        test,
        &["--json", "call", "simulate-research-query", "topic=go"],
    ) else {
        return;
    };
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: Value = serde_json::from_str(&stdout(&out)).expect("one JSON document");
    let text = doc["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("Research Report: go"), "{doc}");
}

#[test]
fn mcp_call_of_a_task_tool_on_a_terminal_rewrites_a_status_line() {
    let Some(entry) =
        server_everything("mcp_call_of_a_task_tool_on_a_terminal_rewrites_a_status_line")
    else {
        return;
    };
    let home = home();
    let entry = entry.to_str().unwrap();
    // On a terminal: the live status line, rewritten in place, then the result.
    let mut command = Command::new("script");
    command.args([
        "-qfec",
        &format!("{EXE} mcp call simulate-research-query topic=tty --stdio -- node {entry} stdio"),
        "/dev/null",
    ]);
    let seen = interact_raw(command, home.path(), &[]);
    assert!(seen.contains("\r\x1b[2Ktask "), "{seen:?}");
    assert!(seen.contains(" working: "), "{seen:?}");
    assert!(seen.contains("Research Report: tty"), "{seen:?}");
}

#[test]
fn mcp_prompts_resources_templates_and_read_against_server_everything() {
    let Some(entry) =
        server_everything("mcp_prompts_resources_templates_and_read_against_server_everything")
    else {
        return;
    };
    let home = home();
    let entry = entry.to_str().unwrap();
    let with = |cmd: &[&str]| {
        let mut args = vec!["mcp"];
        args.extend_from_slice(cmd);
        args.extend_from_slice(&["--stdio", "--", "node", entry, "stdio"]);
        run(home.path(), &args)
    };
    let out = with(&["prompts"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("simple-prompt"), "{}", stdout(&out));
    let out = with(&["prompt", "args-prompt", "city=Paris"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("Paris"), "{}", stdout(&out));
    let out = with(&["--json", "resources"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let uri = doc["resources"][0]["resource"]["uri"]
        .as_str()
        .expect("a resource")
        .to_owned();
    let out = with(&["templates"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = with(&["read", &uri]);
    assert!(out.status.success(), "{}", stderr(&out));
    let content = stdout(&out);
    assert!(!content.trim().is_empty());

    // The same server inside `run`: a prompt as a slash command, a resource as an @ reference.
    let config = home.path().join("everything.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"everything": {"command": "node", "args": [entry, "stdio"]}}})
            .to_string(),
    )
    .unwrap();
    let script = format!("/everything:args-prompt city=Oslo\nsee @everything:{uri}\n/quit\n");
    let out = run_with_input(
        home.path(),
        &["run", "--config", config.to_str().unwrap()],
        &script,
    );
    let text = stdout(&out);
    assert!(out.status.success(), "{text}\n{}", stderr(&out));
    assert!(text.contains("Oslo"), "{text}");
    let first_line = content.lines().next().unwrap_or_default().trim().to_owned();
    assert!(
        text.contains(&format!("> see {first_line}")) || text.contains(&first_line),
        "{text}"
    );
}

#[test]
fn ext_check_fails_with_the_reason_when_a_plugin_cannot_start() {
    let home = home();
    let package = home.path().join("broken");
    std::fs::create_dir_all(&package).unwrap();
    let manifest = json!({
        "apiVersion": "reasonix.io/plugin/v1",
        "name": "broken",
        "version": "0.0.0",
        "runtime": { "command": "/no/such/sidecar-binary", "intercepts": ["input.receive"], "capabilities": ["interceptors"] }
    });
    std::fs::write(package.join("reasonix-plugin.json"), manifest.to_string()).unwrap();
    assert!(
        run(
            home.path(),
            &[
                "plugin",
                "install",
                package.to_str().unwrap(),
                "--yes",
                "--link"
            ]
        )
        .status
        .success()
    );
    let out = run(home.path(), &["ext", "check"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}\n{}",
        stdout(&out),
        stderr(&out)
    );
    assert!(stdout(&out).contains("FAIL broken"), "{}", stdout(&out));
    assert_fails(
        &run(home.path(), &["ext", "check", "nope"]),
        "no installed plugin is named nope",
    );
}

#[test]
fn mcp_url_talks_streamable_http_to_the_python_peer() {
    let Some(everything) = server_everything("mcp_url_talks_streamable_http_to_the_python_peer")
    else {
        return;
    };
    // `<peers>/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js`.
    let peers = everything
        .ancestors()
        .nth(6)
        .expect("the peers directory")
        .to_path_buf();
    let python = peers.join("py/bin/python");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../mcp/tests/peers/py_peer.py");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut server = Command::new(&python)
        .arg(&script)
        .arg("streamable-http")
        .arg(port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the python peer starts");
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "the python peer never listened on {port}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let home = home();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let out = run(home.path(), &["mcp", "--url", &url, "tools"]);
    let listed = out.status.success() && stdout(&out).contains("mcp__adhoc__");
    let out2 = run(home.path(), &["mcp", "--url", &url, "ping"]);
    let _ = server.kill();
    let _ = server.wait();
    assert!(listed, "{}\n{}", stdout(&out), stderr(&out));
    assert!(out2.status.success(), "{}", stderr(&out2));
}

#[path = "cli/run_tty.rs"]
mod run_tty;

/// Runs `sidewire run` on a pseudo-terminal (through `script`, which the base system has), so
/// it prompts; `steps` are (text to wait for on the terminal, line to type then).
fn run_on_a_terminal(home: &Path, steps: &[(&str, &str)]) -> String {
    let mut command = Command::new("script");
    command.args(["-qfec", &format!("{EXE} run"), "/dev/null"]);
    interact(command, home, steps)
}

/// Runs `command` with `SIDEWIRE_HOME=home`, typing each step's line once its text was seen on
/// stdout; returns everything seen, without the terminal's carriage returns.
fn interact(command: Command, home: &Path, steps: &[(&str, &str)]) -> String {
    interact_raw(command, home, steps).replace('\r', "")
}

/// [`interact`], returning stdout exactly as written (carriage returns included).
fn interact_raw(command: Command, home: &Path, steps: &[(&str, &str)]) -> String {
    let mut terminal = Terminal::start(command, home);
    for (wait_for, then_type) in steps {
        terminal.wait_until_seen(wait_for);
        terminal.type_line(then_type);
    }
    terminal.finish()
}

/// A command run on a pseudo-terminal (through `script`): its stdout read line by line as it
/// comes, its stdin typed into.
struct Terminal {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    lines: std::sync::mpsc::Receiver<String>,
    seen: String,
}

impl Terminal {
    /// Starts `command` with `SIDEWIRE_HOME=home`.
    fn start(mut command: Command, home: &Path) -> Terminal {
        use std::io::BufRead;
        let mut child = command
            .env("SIDEWIRE_HOME", home)
            .env("NO_COLOR", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("script starts");
        let (lines_tx, lines) = std::sync::mpsc::channel::<String>();
        let stdout = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if lines_tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        Terminal {
            child,
            stdin,
            lines,
            seen: String::new(),
        }
    }

    /// Waits until `text` was seen, in any line so far (within 30 s).
    fn wait_until_seen(&mut self, text: &str) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while !self.seen.contains(text) {
            self.next_line(deadline);
        }
    }

    /// The first line from now on that `wanted` accepts (within 30 s).
    fn wait_for(&mut self, wanted: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let line = self.next_line(deadline);
            if wanted(&line) {
                return line;
            }
        }
    }

    /// The next line, added to what was seen; kills the command and fails after `deadline`.
    fn next_line(&mut self, deadline: Instant) -> String {
        let left = deadline.saturating_duration_since(Instant::now());
        match self.lines.recv_timeout(left) {
            Ok(line) => {
                self.seen.push_str(&line);
                self.seen.push('\n');
                line
            }
            Err(_) => {
                let _ = self.child.kill();
                panic!("never saw what was waited for; saw:\n{}", self.seen);
            }
        }
    }

    /// Types `line` and Enter.
    fn type_line(&mut self, line: &str) {
        use std::io::Write;
        writeln!(self.stdin.as_mut().expect("stdin is open"), "{line}").unwrap();
    }

    /// Closes stdin, waits for the exit (within 30 s), and returns everything seen.
    fn finish(mut self) -> String {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(30);
        while self.child.try_wait().unwrap().is_none() {
            assert!(
                Instant::now() < deadline,
                "the command did not exit; saw:\n{}",
                self.seen
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        while let Ok(line) = self.lines.recv_timeout(Duration::from_millis(200)) {
            self.seen.push_str(&line);
            self.seen.push('\n');
        }
        self.seen
    }
}

#[test]
fn run_asks_a_plugins_prompt_on_a_terminal() {
    let home = home();
    let package = builtin_plugin(home.path());
    assert!(
        run(
            home.path(),
            &[
                "plugin",
                "install",
                package.to_str().unwrap(),
                "--yes",
                "--link"
            ]
        )
        .status
        .success()
    );
    let seen = run_on_a_terminal(
        home.path(),
        &[
            ("ready:", "/sidewire-demo:greet"),
            ("What is your name?", "Ada"),
            ("hello, Ada", "/quit"),
        ],
    );
    assert!(
        seen.contains("sidewire-demo:greet accepted=true") || seen.contains("hello, Ada"),
        "{seen}"
    );
}

#[test]
fn run_cancels_prompts_when_not_on_a_terminal() {
    let home = home();
    let package = builtin_plugin(home.path());
    assert!(
        run(
            home.path(),
            &[
                "plugin",
                "install",
                package.to_str().unwrap(),
                "--yes",
                "--link"
            ]
        )
        .status
        .success()
    );
    let mut command = Command::new(EXE);
    command.arg("run");
    let seen = interact(
        command,
        home.path(),
        // The action finishes because its prompt is answered `cancelled`, not left waiting.
        &[
            ("ready:", "/sidewire-demo:greet"),
            ("sidewire-demo:greet accepted=", "/quit"),
        ],
    );
    assert!(
        seen.contains("cancelled: stdin is not a terminal"),
        "{seen}"
    );
}

#[test]
fn an_empty_sidewire_home_counts_as_unset_and_reads_create_nothing() {
    let home = home();
    let cwd = home.path().join("cwd");
    let data = home.path().join("data");
    std::fs::create_dir_all(&cwd).unwrap();
    let out = Command::new(EXE)
        .args(["plugin", "list"])
        .current_dir(&cwd)
        .env("SIDEWIRE_HOME", "")
        .env("XDG_DATA_HOME", &data)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    // Nothing was created in the current directory, nor in the data directory a read uses.
    assert_eq!(std::fs::read_dir(&cwd).unwrap().count(), 0);
    assert!(!data.exists());
}

/// The spoof from issue 11: on a terminal it erases its own line and prints a fake one.
const SPOOF: &str = "${REASONIX_PLUGIN_ROOT}/run\u{1b}[2K\r  command:      node index.js";

/// What the built-in peers' `--hostile` modes append to their texts (`builtin::HOSTILE`).
const HOSTILE: &str = "\u{1b}[2K\r\u{202e}evil";

/// How [`HOSTILE`] looks once escaped for a terminal.
const HOSTILE_SHOWN: &str = "\\x1b[2K\\r\\u{202e}evil";

/// Asserts that no ESC, CR (other than a terminal's CRLF), C1 control or bidi override is in
/// `text`, naming `what`.
fn assert_no_raw_controls(what: &str, text: &str) {
    let raw = text.replace("\r\n", "\n");
    for bad in ['\u{1b}', '\r', '\u{9b}', '\u{7f}', '\u{202e}', '\u{2066}'] {
        assert!(!raw.contains(bad), "{what} has a raw {bad:?}:\n{text:?}");
    }
}

/// Both streams of `out`, checked with [`assert_no_raw_controls`].
fn assert_output_is_clean(what: &str, out: &Output) {
    assert_no_raw_controls(&format!("{what} (stdout)"), &stdout(out));
    assert_no_raw_controls(&format!("{what} (stderr)"), &stderr(out));
}

fn write_manifest(package: &Path, runtime: Value) {
    std::fs::create_dir_all(package).unwrap();
    let manifest = json!({
        "apiVersion": "reasonix.io/plugin/v1", "name": "acme", "version": "1.0.0",
        "runtime": runtime,
    });
    std::fs::write(package.join("reasonix-plugin.json"), manifest.to_string()).unwrap();
}

#[test]
fn plugin_install_refuses_the_spoof_and_commands_that_can_never_start() {
    let home = home();
    let package = home.path().join("acme");
    let cases = [
        (json!({ "command": SPOOF }), "U+001B"),
        (
            json!({ "command": "/bin/run", "args": ["ok", "a\u{202e}b"] }),
            "runtime.args[1]",
        ),
        (
            json!({ "command": "node", "args": ["index.js"] }),
            "absolute",
        ),
        (
            json!({ "command": "/bin/bash", "args": ["-c", "run"] }),
            "shell",
        ),
    ];
    for (runtime, needle) in cases {
        write_manifest(&package, runtime);
        let out = run(
            home.path(),
            &["plugin", "install", package.to_str().unwrap(), "--yes"],
        );
        assert_fails(&out, "runtime.");
        assert_fails(&out, needle);
        assert_output_is_clean("plugin install", &out);
        // Refused before the consent screen: nobody is asked to agree to it.
        assert!(!stderr(&out).contains("FULL TRUST"), "{}", stderr(&out));
    }
    let out = run(home.path(), &["plugin", "list"]);
    assert!(
        stdout(&out).contains("no plugins installed"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_linked_manifest_edited_into_the_spoof_shows_its_escape_and_does_not_start() {
    let home = home();
    let package = install_builtin(home.path());
    // The linked directory is edited after consent: its manifest is re-read every time.
    let manifest = json!({
        "apiVersion": "reasonix.io/plugin/v1", "name": "sidewire-demo", "version": "0.0.0\u{202e}",
        "runtime": { "command": SPOOF, "args": ["__sidecar\r"], "intercepts": ["input.receive"], "capabilities": ["interceptors"] }
    });
    std::fs::write(package.join("reasonix-plugin.json"), manifest.to_string()).unwrap();
    let out = run(home.path(), &["plugin", "show", "sidewire-demo"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_output_is_clean("plugin show", &out);
    let text = stdout(&out);
    assert!(
        text.contains("/run\\u{1b}[2K\\r  command:      node index.js"),
        "{text}"
    );
    assert!(text.contains("0.0.0\\u{202e}"), "{text}");
    assert_eq!(
        text.lines()
            .filter(|l| l.trim_start().starts_with("command:"))
            .count(),
        1,
        "{text}"
    );
    // Launch applies the install rules: it fails at resolve, visibly and cleanly.
    let out = run(home.path(), &["ext", "check"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert_output_is_clean("ext check", &out);
    assert!(
        stdout(&out).contains("FAIL sidewire-demo"),
        "{}",
        stdout(&out)
    );
    assert!(stdout(&out).contains("U+202E"), "{}", stdout(&out));
}

#[test]
fn each_cause_appears_once_in_an_error() {
    let home = home();
    let missing = home.path().join("missing");
    let out = run(
        home.path(),
        &["plugin", "install", missing.to_str().unwrap(), "--yes"],
    );
    assert_fails(&out, "os error 2");
    assert_eq!(
        stderr(&out).matches("os error 2").count(),
        1,
        "{}",
        stderr(&out)
    );
    assert_eq!(
        stderr(&out).matches("No such file or directory").count(),
        1,
        "{}",
        stderr(&out)
    );
    let broken = home.path().join("broken");
    std::fs::create_dir_all(&broken).unwrap();
    std::fs::write(
        broken.join("reasonix-plugin.json"),
        r#"{"apiVersion":"reasonix.io/plugin/v1","name":"x","version":"1","bogus":1}"#,
    )
    .unwrap();
    let out = run(
        home.path(),
        &["plugin", "install", broken.to_str().unwrap(), "--yes"],
    );
    assert_fails(&out, "unknown member");
    assert_eq!(
        stderr(&out).matches("unknown member").count(),
        1,
        "{}",
        stderr(&out)
    );
    assert_eq!(stderr(&out).matches("bogus").count(), 1, "{}", stderr(&out));
    // A server that cannot be spawned: the OS error once.
    let out = run(
        home.path(),
        &["mcp", "tools", "--stdio", "--", "/no/such/server-binary"],
    );
    assert!(!out.status.success());
    for line in stderr(&out).lines() {
        assert!(line.matches("os error").count() <= 1, "{line}");
    }
}

fn hostile_mcp<'a>(extra: &[&'a str], mode: &'a str) -> Vec<&'a str> {
    let mut args = vec!["mcp"];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--stdio", "--", EXE, "__mcp-server", mode]);
    args
}

#[test]
fn mcp_names_descriptions_and_results_never_reach_the_terminal_raw() {
    let home = home();
    let out = run(home.path(), &hostile_mcp(&["tools"], "--hostile"));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_output_is_clean("mcp tools", &out);
    // The description's second line is indented under its entry.
    assert!(
        stdout(&out).contains(&format!(
            "hostile text {HOSTILE_SHOWN}\n    and a second line"
        )),
        "{}",
        stdout(&out)
    );
    // Piped, a result is the tool's text itself (on a terminal it is escaped and indented:
    // `rough_edges::call_output_on_a_terminal_stays_escaped_and_indented`).
    let out = run(home.path(), &hostile_mcp(&["call", "hostile"], "--hostile"));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_no_raw_controls("mcp call (stderr)", &stderr(&out));
    assert_eq!(
        stdout(&out),
        format!("result {HOSTILE}\nsecond line {HOSTILE}")
    );
    let out = run(home.path(), &hostile_mcp(&["servers"], "--hostile"));
    assert_output_is_clean("mcp servers", &out);
    assert!(
        stdout(&out).contains(&format!("sidewire-demo-server {HOSTILE_SHOWN}")),
        "{}",
        stdout(&out)
    );
    // JSON stays lossless: the document holds the text exactly, spelled with escapes.
    let out = run(
        home.path(),
        &hostile_mcp(&["--json", "call", "hostile"], "--hostile"),
    );
    assert_output_is_clean("mcp --json call", &out);
    let doc: Value = serde_json::from_str(&stdout(&out)).expect("one JSON document");
    assert_eq!(
        doc["content"][0]["text"],
        format!("result {HOSTILE}\nsecond line {HOSTILE}")
    );
}

#[test]
fn a_failing_servers_stderr_tail_never_reaches_the_terminal_raw() {
    let home = home();
    let out = run(home.path(), &hostile_mcp(&["servers"], "--hostile-exit"));
    assert!(!out.status.success());
    assert_output_is_clean("mcp servers", &out);
    assert!(
        stdout(&out).contains(&format!("  second line {HOSTILE_SHOWN}")),
        "{}",
        stdout(&out)
    );
    let out = run(home.path(), &hostile_mcp(&["tools"], "--hostile-exit"));
    assert_fails(&out, "no MCP server started");
    assert_output_is_clean("mcp tools", &out);
    assert!(stderr(&out).contains(HOSTILE_SHOWN), "{}", stderr(&out));
}

#[test]
fn an_http_error_body_never_reaches_the_terminal_raw() {
    use std::io::{BufRead, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    // Every request is answered 500 with a hostile body; the thread ends with the test process.
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { break };
            let mut reader = std::io::BufReader::new(stream.try_clone().unwrap());
            let mut length = 0usize;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = value.trim().parse().unwrap_or(0);
                }
            }
            let mut body = vec![0; length];
            let _ = std::io::Read::read_exact(&mut reader, &mut body);
            let reply = format!("upstream failed {HOSTILE}\nsecond line {HOSTILE}");
            let _ = write!(
                stream,
                "HTTP/1.1 500 Internal Server Error\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{reply}",
                reply.len()
            );
        }
    });
    let home = home();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let out = run(home.path(), &["mcp", "--url", &url, "tools"]);
    assert_fails(&out, "500");
    assert_output_is_clean("mcp --url tools", &out);
    assert!(stderr(&out).contains(HOSTILE_SHOWN), "{}", stderr(&out));
}

/// A plugin whose sidecar is the built-in one in a hostile mode.
fn hostile_plugin(dir: &Path, mode: &str) -> PathBuf {
    let package = dir.join("hostile-plugin");
    std::fs::create_dir_all(&package).unwrap();
    let manifest = json!({
        "apiVersion": "reasonix.io/plugin/v1",
        "name": "sidewire-demo",
        "version": "0.0.0",
        "runtime": {
            "command": EXE,
            "args": ["__sidecar", mode],
            "intercepts": ["input.receive", "permission.decision"],
            "capabilities": ["interceptors", "ui"]
        }
    });
    std::fs::write(package.join("reasonix-plugin.json"), manifest.to_string()).unwrap();
    let out = run(
        dir,
        &[
            "plugin",
            "install",
            package.to_str().unwrap(),
            "--yes",
            "--link",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    package
}

#[test]
fn a_turn_blocked_at_input_shows_the_hostile_reason_escaped_and_asks_no_model() {
    let home = home();
    let package = hostile_plugin(home.path(), "--hostile");
    // It serves the model too: `run --model` checks at its start that an extension does.
    let manifest = package.join("reasonix-plugin.json");
    let mut doc: Value =
        serde_json::from_str(&std::fs::read_to_string(&manifest).unwrap()).unwrap();
    doc["runtime"]["capabilities"] = json!(["interceptors", "ui", "providers"]);
    std::fs::write(&manifest, doc.to_string()).unwrap();
    let reinstall = run(
        home.path(),
        &[
            "plugin",
            "install",
            package.to_str().unwrap(),
            "--yes",
            "--link",
            "--replace",
        ],
    );
    assert!(reinstall.status.success(), "{}", stderr(&reinstall));
    let out = run_with_input(home.path(), &["run", "--model", SCRIPTED], "hello\n");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_output_is_clean("run --model", &out);
    let text = stdout(&out);
    assert!(
        text.contains(&format!(
            "  input.receive blocked by sidewire-demo: blocked {HOSTILE_SHOWN}"
        )),
        "{text}"
    );
    // The turn never started: no model was asked (this plugin serves none).
    assert!(text.contains("(the turn was blocked)"), "{text}");
    assert!(!stderr(&out).contains("provider"), "{}", stderr(&out));
}

#[test]
fn plugin_ui_prompts_and_reasons_never_reach_the_terminal_raw() {
    let home = home();
    hostile_plugin(home.path(), "--hostile");
    // A blocking reason, one shot.
    let out = run(
        home.path(),
        &["ext", "intercept", "input.receive", r#"{"text":"hi"}"#],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_output_is_clean("ext intercept", &out);
    assert!(
        stdout(&out).contains(&format!(
            "BLOCKED by sidewire-demo: blocked {HOSTILE_SHOWN}"
        )),
        "{}",
        stdout(&out)
    );
    // Status cards, notifications, forms, a prompt's title and an action's message in `run`.
    let mut command = Command::new(EXE);
    command.arg("run");
    let seen = interact_raw(
        command,
        home.path(),
        &[
            ("a notification", "hello"),
            ("blocked by sidewire-demo", "/sidewire-demo:greet"),
            ("sidewire-demo:greet accepted=", "/quit"),
        ],
    );
    assert_no_raw_controls("sidewire run", &seen);
    assert!(seen.contains("\\u{202e}evil"), "{seen}");
    assert!(
        seen.contains(&format!("asks: What is your name? {HOSTILE_SHOWN}")),
        "{seen}"
    );
    assert!(seen.contains(&format!("blocked {HOSTILE_SHOWN}")), "{seen}");
    assert!(
        seen.contains(&format!("accepted=true {HOSTILE_SHOWN}")),
        "{seen}"
    );
}

#[test]
fn a_failing_sidecars_stderr_never_reaches_the_terminal_raw() {
    let home = home();
    hostile_plugin(home.path(), "--hostile-exit");
    let out = run(home.path(), &["ext", "check"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_output_is_clean("ext check", &out);
    assert!(stdout(&out).contains(HOSTILE_SHOWN), "{}", stdout(&out));
    let out = run_with_input(home.path(), &["run"], "/quit\n");
    assert_output_is_clean("sidewire run", &out);
    assert!(
        stderr(&out).contains("warning: extension"),
        "{}",
        stderr(&out)
    );
    assert!(stderr(&out).contains(HOSTILE_SHOWN), "{}", stderr(&out));
}

/// Set in a re-executed copy of this test binary: the file to write the peak RSS of one run of
/// `sidewire` to, measured over that process alone (`getrusage(RUSAGE_CHILDREN)` counts every
/// child of the process that asks, and the tests here run many at once).
const MEASURE_RSS: &str = "SIDEWIRE_TEST_MEASURE_RSS";

/// `args` for an ad hoc stdio server offering `count` synthetic tools, 1,000 a page.
fn many_tools(command: &str, count: usize) -> Vec<String> {
    let mut args: Vec<String> = ["mcp", command, "--stdio", "--", EXE, "__mcp-server"]
        .map(str::to_owned)
        .into();
    args.extend(["--many-tools".to_owned(), count.to_string()]);
    args
}

/// The peak RSS in KiB of `sidewire args` and its server, measured in a fresh copy of this
/// test binary running `test`.
fn peak_rss_kib(test: &str, args: &[String]) -> u64 {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("rss");
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", test, "--test-threads=1"])
        .env(MEASURE_RSS, &report)
        .env("SIDEWIRE_TEST_RSS_ARGS", args.join("\u{1f}"))
        .env("SIDEWIRE_HOME", dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    std::fs::read_to_string(&report)
        .expect("the measuring copy wrote its figure")
        .trim()
        .parse()
        .unwrap()
}

/// In the measuring copy: runs sidewire once and writes its peak RSS; `true` when it did.
fn measure_if_asked() -> bool {
    let Some(report) = std::env::var_os(MEASURE_RSS) else {
        return false;
    };
    let args = std::env::var("SIDEWIRE_TEST_RSS_ARGS").unwrap();
    let args: Vec<&str> = args.split('\u{1f}').collect();
    let home = home();
    // Output to a file: a pipe nobody reads until the end would stall 10,000 lines.
    let listing = home.path().join("stdout");
    let status = Command::new(EXE)
        .args(&args)
        .env("SIDEWIRE_HOME", home.path())
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&listing).unwrap())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let lines = std::fs::read_to_string(&listing).unwrap().lines().count();
    assert!(lines >= 10_000, "{lines} lines listed");
    let usage =
        nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN).unwrap();
    // Linux reports `ru_maxrss` in KiB: the largest of the child and the descendants it reaped.
    std::fs::write(report, usage.max_rss().to_string()).unwrap();
    true
}

#[test]
fn mcp_tools_on_ten_thousand_tools_stays_under_50_mb() {
    const TEST: &str = "mcp_tools_on_ten_thousand_tools_stays_under_50_mb";
    if measure_if_asked() {
        return;
    }
    let kib = peak_rss_kib(TEST, &many_tools("tools", 10_000));
    assert!(
        kib < 50 * 1024,
        "`mcp tools` on 10,000 tools peaked at {kib} KiB"
    );
}

#[test]
fn a_listing_past_the_default_cap_is_cut_and_says_so() {
    let home = home();
    let args = many_tools("servers", 20_000);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run(home.path(), &args);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("warning: tools cut short at the cap of 10000 items: kept the first 10000"),
        "{text}"
    );
    let mut json_args = args.clone();
    json_args.insert(1, "--json");
    let out = run(home.path(), &json_args);
    let doc: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let server = &doc["servers"][0];
    assert_eq!(server["tools"], 10_000);
    assert_eq!(
        server["truncated"],
        json!([{"list": "tools/list", "kept": 10_000, "limit": {"items": 10_000}}])
    );
    // The tracing warning names the server, the method, the cap and what was kept.
    let log = stderr(&out);
    assert!(log.contains("tools/list") && log.contains("10000"), "{log}");
}

/// An HTTP server on 127.0.0.1 that answers every request `401 Unauthorized` with a Bearer
/// challenge, as an MCP server that needs OAuth does before any token. Returns its MCP URL.
fn unauthorized_server() -> String {
    use std::io::{BufRead, BufReader, Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            std::thread::spawn(move || {
                let mut reader = BufReader::new(&stream);
                let mut length = 0usize;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    if line == "\r\n" {
                        break;
                    }
                    if let Some((name, value)) = line.split_once(':')
                        && name.eq_ignore_ascii_case("content-length")
                    {
                        length = value.trim().parse().unwrap_or(0);
                    }
                }
                // The body read, so closing the connection cannot reset it before the answer.
                let _ = reader
                    .by_ref()
                    .take(length as u64)
                    .read_to_end(&mut Vec::new());
                let _ = (&stream).write_all(
                    b"HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Bearer realm=\"test\"\r\n\
                      Content-Type: application/json\r\nContent-Length: 2\r\n\
                      Connection: close\r\n\r\n{}",
                );
            });
        }
    });
    url
}

#[test]
fn mcp_auth_status_of_an_empty_store() {
    let home = home();
    let out = run(home.path(), &["mcp", "auth", "status"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("no stored authorizations"),
        "{}",
        stdout(&out)
    );
    let out = run(home.path(), &["mcp", "auth", "status", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let document: Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    assert_eq!(document, json!({ "authorizations": [] }));
    // Reading the store creates nothing.
    assert!(!home.path().join("mcp").exists());
}

/// Saves a record with tokens and a client secret for `server` at `resource` in the CLI's
/// store under `home`.
fn store_record(home: &Path, server: &str, resource: &str) {
    use sidewire_mcp::auth::{FileStore, StoreKey, StoredAuth, TokenStore};
    let record: StoredAuth = serde_json::from_value(json!({
        "version": StoredAuth::VERSION,
        "server": server,
        "resource": resource,
        "client": {
            "issuer": "https://auth.example.com",
            "client_id": "client-\u{1b}[31mred",
            "client_secret": "SECRET-client-55aa",
            "token_endpoint_auth_method": "client_secret_basic",
            "source": "dynamic",
        },
        "tokens": {
            "access_token": "SECRET-access-77bb",
            "token_type": "Bearer",
            "refresh_token": "SECRET-refresh-99cc",
            "expires_at": 4_000_000_000u64,
            "scope": "read write",
            "resource": resource,
        },
    }))
    .expect("a stored record");
    FileStore::new(home.join("mcp").join("oauth"))
        .save(&StoreKey::new(server, resource), &record)
        .expect("save");
}

#[test]
fn mcp_auth_status_shows_each_authorization_and_never_a_credential() {
    let home = home();
    store_record(home.path(), "github", "https://api.example.com/mcp");
    let out = run(home.path(), &["mcp", "auth", "status", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let document: Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    let rows = document["authorizations"].as_array().expect("a list");
    assert_eq!(rows.len(), 1, "{document}");
    let row = &rows[0];
    assert_eq!(row["server"], "github");
    assert_eq!(row["resource"], "https://api.example.com/mcp");
    assert_eq!(row["issuer"], "https://auth.example.com");
    assert_eq!(row["clientId"], "client-\u{1b}[31mred");
    assert_eq!(row["token"], true);
    assert_eq!(row["refresh"], true);
    assert!(
        row["expiresInSecs"].as_u64().is_some_and(|s| s > 0),
        "{row}"
    );
    assert_eq!(row["scopes"], json!(["read", "write"]));
    let text = run(home.path(), &["mcp", "auth", "status"]);
    assert!(text.status.success(), "{}", stderr(&text));
    let table = stdout(&text);
    assert!(table.starts_with("SERVER"), "{table}");
    assert!(
        table.contains("github") && table.contains("read write") && table.contains("yes"),
        "{table}"
    );
    // The client id came from a server: escaped on the terminal.
    assert!(
        table.contains("client-\\x1b[31mred") && !table.contains('\u{1b}'),
        "{table}"
    );
    for out in [&out, &text] {
        let all = format!("{}{}", stdout(out), stderr(out));
        assert!(!all.contains("SECRET-"), "a credential was printed: {all}");
    }
}

#[test]
fn mcp_auth_status_shows_over_long_stored_values_cut_without_panicking() {
    use sidewire_mcp::auth::{FileStore, StoreKey, StoredAuth, TokenStore};
    let home = home();
    // Past `u16::MAX` characters: what an older version stored from a registration answer.
    let huge = "c".repeat(70_000);
    let resource = "https://api.example.com/mcp";
    let record: StoredAuth = serde_json::from_value(json!({
        "version": StoredAuth::VERSION,
        "server": "long",
        "resource": resource,
        "client": {
            "issuer": format!("https://{huge}.example.com"),
            "client_id": huge,
            "token_endpoint_auth_method": "none",
            "source": "dynamic",
        },
        "tokens": {
            "access_token": "SECRET-access-77bb",
            "token_type": "Bearer",
            "scope": huge,
            "resource": resource,
        },
    }))
    .expect("a stored record");
    FileStore::new(home.path().join("mcp").join("oauth"))
        .save(&StoreKey::new("long", resource), &record)
        .expect("save");
    let out = run(home.path(), &["mcp", "auth", "status"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let table = stdout(&out);
    assert!(table.contains('…'), "{table}");
    assert!(table.lines().all(|line| line.len() < 1024), "{table}");
    // `--json` keeps the values whole.
    let out = run(home.path(), &["mcp", "auth", "status", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let document: Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    assert_eq!(document["authorizations"][0]["clientId"], json!(huge));
}

#[test]
fn mcp_logout_says_whether_there_was_a_stored_authorization() {
    let home = home();
    let out = run(home.path(), &["mcp", "logout", "nosuch"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("nosuch had no stored authorization"),
        "{}",
        stdout(&out)
    );
    // By name, every record of that name goes, with no config needed; others stay.
    store_record(home.path(), "github", "https://api.example.com/mcp");
    store_record(home.path(), "github", "https://old.example.com/mcp");
    store_record(home.path(), "other", "https://other.example.com/mcp");
    let out = run(home.path(), &["mcp", "logout", "github", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let document: Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    assert_eq!(document, json!({ "server": "github", "removed": true }));
    let status = run(home.path(), &["mcp", "auth", "status", "--json"]);
    let document: Value = serde_json::from_slice(&status.stdout).expect("one JSON document");
    let servers: Vec<&Value> = document["authorizations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| &row["server"])
        .collect();
    assert_eq!(servers, [&json!("other")]);
    // With --url, that URL's record of the ad hoc server.
    store_record(home.path(), "adhoc", "http://127.0.0.1:1/mcp");
    let out = run(
        home.path(),
        &["mcp", "logout", "--url", "http://127.0.0.1:1/mcp"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("logged out of adhoc"),
        "{}",
        stdout(&out)
    );
    let out = run(
        home.path(),
        &["mcp", "logout", "--url", "http://127.0.0.1:1/mcp"],
    );
    assert!(
        stdout(&out).contains("adhoc had no stored authorization"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn mcp_login_refuses_servers_oauth_does_not_apply_to() {
    let home = home();
    let config = home.path().join(".mcp.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {
            "local": {"command": EXE, "args": ["__mcp-server"]},
            "keyed": {"url": "http://127.0.0.1:1/mcp", "headers": {"authorization": "Bearer k"}},
        }})
        .to_string(),
    )
    .unwrap();
    let path = config.to_str().unwrap();
    for (line, needle) in [
        (
            &["mcp", "--config", path, "login", "local"][..],
            "stdio server",
        ),
        (
            &["mcp", "--config", path, "login", "keyed"],
            "Authorization header",
        ),
        (
            &["mcp", "--config", path, "login", "nosuch"],
            "no server named nosuch",
        ),
    ] {
        let out = run(home.path(), line);
        assert_fails(&out, needle);
        assert_eq!(out.status.code(), Some(1), "{line:?}");
    }
    // No server named: a usage error.
    let out = run(home.path(), &["mcp", "--config", path, "login"]);
    assert_fails(&out, "name the server");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_headless_command_against_a_server_that_needs_a_login_names_the_login_command() {
    let home = home();
    let url = unauthorized_server();
    let config = home.path().join(".mcp.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"locked": {"url": url}}}).to_string(),
    )
    .unwrap();
    let path = config.to_str().unwrap();
    let out = run(home.path(), &["mcp", "--config", path, "tools"]);
    assert_fails(
        &out,
        &format!("run `sidewire mcp login locked --config {path}`"),
    );
    assert_eq!(out.status.code(), Some(1));
    // The ad hoc server: the command names --url.
    let out = run(home.path(), &["mcp", "--url", &url, "tools"]);
    assert_fails(&out, &format!("run `sidewire mcp login --url {url}`"));
    assert_eq!(out.status.code(), Some(1));
    // A configured Authorization header means no OAuth: the 401 is an HTTP error as before.
    let out = run(
        home.path(),
        &[
            "mcp",
            "--url",
            &url,
            "--header",
            "Authorization: Bearer k",
            "tools",
        ],
    );
    assert_fails(&out, "401");
    assert!(
        !stderr(&out).contains("sidewire mcp login"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn on_a_terminal_a_server_that_needs_a_login_is_offered_one() {
    let home = home();
    let url = unauthorized_server();
    let mut command = Command::new("script");
    command.args([
        "-qfec",
        &format!("{EXE} mcp --url {url} tools"),
        "/dev/null",
    ]);
    // Typed at once: the terminal keeps it until the question reads it.
    let seen = interact(command, home.path(), &[("", "n")]);
    assert!(
        seen.contains("Server adhoc requires authorization. Log in now? [Y/n]"),
        "{seen}"
    );
    assert!(seen.contains("sidewire mcp login --url"), "{seen}");
}

/// `None`, after saying on stderr that the `kind` test `test` did not run for want of
/// `python3`; fails instead when `SIDEWIRE_REQUIRE_PEERS=1`.
fn no_python3<T>(kind: &str, test: &str) -> Option<T> {
    let required = std::env::var("SIDEWIRE_REQUIRE_PEERS").is_ok_and(|v| v == "1");
    assert!(
        !required,
        "SIDEWIRE_REQUIRE_PEERS=1 but there is no python3"
    );
    let _ = std::io::Write::write_all(
        &mut std::io::stderr(),
        format!("SKIPPED: {kind} test `{test}` did not run (no python3)\n").as_bytes(),
    );
    None
}

/// The stdlib OAuth fixture (`tests/fixtures/oauth_server.py`): an MCP endpoint that needs a
/// Bearer token and the authorization server that issues it. `None` (the test says why) when
/// there is no `python3`.
struct OAuthFixture {
    child: std::process::Child,
    base: String,
}

impl OAuthFixture {
    fn start(test: &str) -> Option<OAuthFixture> {
        use std::io::BufRead;
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/oauth_server.py");
        let Ok(mut child) = Command::new("python3")
            .arg(&script)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
        else {
            return no_python3("OAuth fixture", test);
        };
        let stdout = child.stdout.take().expect("stdout");
        let mut line = String::new();
        std::io::BufReader::new(stdout)
            .read_line(&mut line)
            .expect("the fixture's first line");
        let port = line
            .strip_prefix("PORT ")
            .and_then(|port| port.trim().parse::<u16>().ok())
            .unwrap_or_else(|| panic!("the fixture said {line:?}"));
        Some(OAuthFixture {
            child,
            base: format!("http://127.0.0.1:{port}"),
        })
    }
}

impl Drop for OAuthFixture {
    fn drop(&mut self) {
        // Its stdin closing ends it.
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}

#[test]
fn login_stores_tokens_that_later_commands_use_until_logout() {
    use std::os::unix::fs::PermissionsExt;
    let Some(fixture) =
        OAuthFixture::start("login_stores_tokens_that_later_commands_use_until_logout")
    else {
        return;
    };
    let home = home();
    let url = format!("{}/mcp", fixture.base);
    let config = home.path().join(".mcp.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"fixture": {"url": url}}}).to_string(),
    )
    .unwrap();
    let path = config.to_str().unwrap();
    let mcp = |extra: &[&str]| {
        let mut line = vec!["mcp", "--config", path];
        line.extend_from_slice(extra);
        run(home.path(), &line)
    };
    // Before a login: headless commands name the login command.
    assert_fails(&mcp(&["tools"]), "sidewire mcp login fixture");
    // The login (the fixture grants at once, so --headless follows its redirect).
    let out = mcp(&["login", "fixture", "--headless", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let document: Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    assert_eq!(
        document,
        json!({"server": "fixture", "loggedIn": true, "issuer": fixture.base, "scopes": ["mcp:tools"]})
    );
    // Stored, private to the user, and shown by status.
    let dir = home.path().join("mcp/oauth");
    let files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("the store")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&files[0]), 0o600);
    assert_eq!(mode(&dir), 0o700);
    let status = mcp(&["auth", "status", "--json"]);
    let document: Value = serde_json::from_slice(&status.stdout).expect("one JSON document");
    let row = &document["authorizations"][0];
    assert_eq!(
        (&row["server"], &row["token"], &row["refresh"]),
        (&json!("fixture"), &json!(true), &json!(true))
    );
    assert_eq!(row["issuer"], json!(fixture.base));
    let stored = std::fs::read_to_string(&files[0]).unwrap();
    let record: Value = serde_json::from_str(&stored).unwrap();
    let access = record["tokens"]["access_token"]
        .as_str()
        .expect("a token")
        .to_owned();
    // A later command uses the stored token; nothing prints it.
    let out = mcp(&["tools"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("mcp__fixture__whoami"),
        "{}",
        stdout(&out)
    );
    for out in [&out, &status] {
        assert!(!format!("{}{}", stdout(out), stderr(out)).contains(&access));
    }
    // Logout forgets it: commands need a login again.
    let out = mcp(&["logout", "fixture"]);
    assert!(
        stdout(&out).contains("logged out of fixture"),
        "{}",
        stdout(&out)
    );
    assert_fails(&mcp(&["tools"]), "sidewire mcp login fixture");
    // The ad hoc server logs in under its own name.
    let out = run(home.path(), &["mcp", "--url", &url, "login", "--headless"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("logged in to adhoc"),
        "{}",
        stdout(&out)
    );
    let out = run(home.path(), &["mcp", "--url", &url, "tools"]);
    assert!(
        stdout(&out).contains("mcp__adhoc__whoami"),
        "{}",
        stderr(&out)
    );
}

/// A GET of `url` (`http://host:port/path`) over a plain socket; the raw answer.
fn http_get(url: &str) -> String {
    use std::io::{Read, Write};
    let rest = url.strip_prefix("http://").expect("an http:// URL");
    let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let mut stream = std::net::TcpStream::connect(host).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer
}

#[test]
fn on_a_terminal_yes_logs_in_and_runs_the_command_again() {
    let Some(fixture) = OAuthFixture::start("on_a_terminal_yes_logs_in_and_runs_the_command_again")
    else {
        return;
    };
    let home = home();
    let url = format!("{}/mcp", fixture.base);
    let mut command = Command::new("script");
    command.args([
        "-qfec",
        &format!("{EXE} mcp --url {url} tools"),
        "/dev/null",
    ]);
    let mut terminal = Terminal::start(command, home.path());
    // Typed at once: the terminal keeps it until the question reads it.
    terminal.type_line("y");
    // The sign-in URL, opened here as a browser would: the fixture grants at once and
    // redirects to sidewire's loopback listener.
    let authorize = format!("{}/authorize?", fixture.base);
    let line = terminal.wait_for(|line| line.contains(&authorize));
    let start = line.find("http://").unwrap();
    let answer = http_get(line[start..].trim());
    let location = answer
        .lines()
        .find_map(|l| l.strip_prefix("Location: "))
        .unwrap_or_else(|| panic!("no redirect: {answer}"))
        .trim()
        .to_owned();
    assert!(location.starts_with("http://127.0.0.1:"), "{location}");
    http_get(&location);
    // The command runs again, with the token.
    terminal.wait_for(|line| line.contains("mcp__adhoc__whoami"));
    terminal.finish();
    let status = run(home.path(), &["mcp", "auth", "status", "--json"]);
    let document: Value = serde_json::from_slice(&status.stdout).expect("one JSON document");
    assert_eq!(
        document["authorizations"][0]["server"], "adhoc",
        "{document}"
    );
}

/// `python3` and the modern-only fixture (`tests/fixtures/modern_server.py`), or `None` (the
/// test says why) when there is no `python3`.
fn modern_server(test: &str) -> Option<PathBuf> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/modern_server.py");
    let found = Command::new("python3")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    if !found {
        return no_python3("modern server", test);
    }
    Some(script)
}

/// `sidewire mcp EXTRA... --stdio -- python3 modern_server.py`.
fn modern_stdio<'a>(script: &'a Path, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["mcp"];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--stdio", "--", "python3", script.to_str().unwrap()]);
    args
}

/// The `--json servers` row of the one server `args` start.
fn server_row(home: &Path, args: &[&str]) -> (Output, Value) {
    let out = run(home, args);
    let doc: Value = serde_json::from_str(&stdout(&out))
        .unwrap_or_else(|err| panic!("{args:?}: {err}: {}", stdout(&out)));
    (out, doc["servers"][0].clone())
}

#[test]
fn a_modern_only_server_works_with_no_flag() {
    let Some(script) = modern_server("a_modern_only_server_works_with_no_flag") else {
        return;
    };
    let home = home();
    let out = run(home.path(), &modern_stdio(&script, &["tools"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("mcp__adhoc__shout"),
        "{}",
        stdout(&out)
    );
    let out = run(
        home.path(),
        &modern_stdio(&script, &["call", "shout", "text=hi"]),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "HI");
    let out = run(home.path(), &modern_stdio(&script, &["ping"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let (out, row) = server_row(home.path(), &modern_stdio(&script, &["--json", "servers"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(row["protocolVersion"], "2026-07-28", "{row}");
    assert_eq!(row["era"], "modern", "{row}");
    let out = run(home.path(), &modern_stdio(&script, &["servers"]));
    assert!(
        stdout(&out).contains("protocol 2026-07-28 (modern era)"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_modern_only_http_server_works_with_no_flag() {
    use std::io::BufRead;
    let Some(script) = modern_server("a_modern_only_http_server_works_with_no_flag") else {
        return;
    };
    let mut child = Command::new("python3")
        .arg(&script)
        .arg("http")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("python3 starts");
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("the fixture's first line");
    let port: u16 = line
        .strip_prefix("PORT ")
        .and_then(|port| port.trim().parse().ok())
        .unwrap_or_else(|| panic!("the fixture said {line:?}"));
    let url = format!("http://127.0.0.1:{port}/mcp");
    let home = home();
    let out = run(
        home.path(),
        &["mcp", "--url", &url, "call", "shout", "text=hey"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "HEY");
    let (out, row) = server_row(home.path(), &["mcp", "--json", "--url", &url, "servers"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(row["era"], "modern", "{row}");
    // Asked for the legacy era, the same server cannot start.
    let out = run(
        home.path(),
        &["mcp", "--era", "legacy", "--url", &url, "tools"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    drop(child.stdin.take());
    let _ = child.wait();
}

#[test]
fn the_era_flag_and_the_config_choose_the_era() {
    let Some(script) = modern_server("the_era_flag_and_the_config_choose_the_era") else {
        return;
    };
    let home = home();
    // The flag: modern (or its version) reaches the modern-only server, legacy does not.
    for era in ["modern", "2026-07-28", "auto"] {
        let (out, row) = server_row(
            home.path(),
            &modern_stdio(&script, &["--json", "--era", era, "servers"]),
        );
        assert!(out.status.success(), "--era {era}: {}", stderr(&out));
        assert_eq!(row["era"], "modern", "--era {era}: {row}");
    }
    let (out, row) = server_row(
        home.path(),
        &modern_stdio(&script, &["--json", "--era", "legacy", "servers"]),
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(row["state"], "failed", "{row}");
    let out = run(
        home.path(),
        &modern_stdio(&script, &["--era", "legacy", "tools"]),
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    // An era that does not exist is a usage error.
    let out = run(
        home.path(),
        &modern_stdio(&script, &["--era", "2025-11-25", "tools"]),
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    // A legacy server asked for the legacy era says so.
    let (out, row) = server_row(
        home.path(),
        &adhoc(&["--json", "--era", "legacy", "servers"]),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(row["era"], "legacy", "{row}");
    assert!(row["protocolVersion"].is_string(), "{row}");

    // The config's `era`, and the flag over it.
    let config = home.path().join("era.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"modern": {
            "command": "python3", "args": [script.to_str().unwrap()], "era": "legacy"
        }}})
        .to_string(),
    )
    .unwrap();
    let config = config.to_str().unwrap();
    let (out, row) = server_row(
        home.path(),
        &["mcp", "--json", "--config", config, "servers"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(row["state"], "failed", "{row}");
    let with_flag = [
        "mcp", "--json", "--era", "auto", "--config", config, "servers",
    ];
    let (out, row) = server_row(home.path(), &with_flag);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(row["era"], "modern", "{row}");
    // An unknown era in the config is a config error, before any server starts.
    std::fs::write(
        home.path().join("bad-era.json"),
        r#"{"mcpServers": {"x": {"command": "python3", "era": "newest"}}}"#,
    )
    .unwrap();
    let bad = home.path().join("bad-era.json");
    let out = run(
        home.path(),
        &["mcp", "--config", bad.to_str().unwrap(), "tools"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
}

/// The conformance kit's fixtures (`sidewire-ext-conformance`'s tests own them).
fn conformance_fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../ext-conformance/tests/fixtures")
}

#[test]
fn ext_conformance_lists_checks_and_exits_by_the_verdict() {
    let home = home();
    // --list runs nothing and names what cannot be checked, and why.
    let list = run(home.path(), &["ext", "conformance", "--list"]);
    assert!(list.status.success(), "{}", stderr(&list));
    let text = stdout(&list);
    assert!(
        text.contains("§2.3 Malformed and unexpected frames"),
        "{text}"
    );
    assert!(
        text.contains("not checkable: internal to the SDK"),
        "{text}"
    );
    let only = run(
        home.path(),
        &["--json", "ext", "conformance", "--list", "--only", "6.1"],
    );
    let listed: Value = serde_json::from_slice(&only.stdout).expect("one JSON document");
    let ids: Vec<&str> = listed["statements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["22", "23", "24"]);

    // An installed plugin (the built-in sidecar) passes: exit 0.
    install_builtin(home.path());
    let installed = run(home.path(), &["ext", "conformance", "sidewire-demo"]);
    assert!(
        installed.status.success(),
        "{}\n{}",
        stdout(&installed),
        stderr(&installed)
    );
    assert!(
        stdout(&installed).contains(" 0 failed"),
        "{}",
        stdout(&installed)
    );

    // A command with its manifest, as JSON: lossless, one document, `passed`.
    let manifest = conformance_fixtures().join("reasonix-plugin.json");
    let script = conformance_fixtures().join("sidecar.py");
    let good = run(
        home.path(),
        &[
            "--json",
            "ext",
            "conformance",
            "--only",
            "2.2",
            "--manifest",
            manifest.to_str().unwrap(),
            "--",
            "python3",
            script.to_str().unwrap(),
        ],
    );
    assert!(good.status.success(), "{}", stderr(&good));
    let report: Value = serde_json::from_slice(&good.stdout).expect("one JSON document");
    assert_eq!(report["passed"], true);
    assert_eq!(report["plugin"], "py-conformance");
    let verdicts: Vec<(&str, &str)> = report["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["statement"]["id"].as_str().unwrap(),
                r["verdict"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(verdicts, [("9", "pass"), ("10", "pass")]);

    // A broken one: exit 1, the failed statement and its evidence in the report.
    let broken = run(
        home.path(),
        &[
            "ext",
            "conformance",
            "--only",
            "17.10",
            "--manifest",
            manifest.to_str().unwrap(),
            "--",
            "python3",
            script.to_str().unwrap(),
            "--flaw",
            "ascii-ids",
        ],
    );
    assert_eq!(broken.status.code(), Some(1), "{}", stderr(&broken));
    let text = stdout(&broken);
    assert!(text.contains("FAIL          10"), "{text}");
    assert!(
        text.contains("← sidecar {\"jsonrpc\":\"2.0\",\"id\":\"conformance-\\u00e9"),
        "{text}"
    );
}

#[test]
fn ext_conformance_checks_the_v2_delta_with_protocol_2() {
    let home = home();
    // --list --protocol 2: the delta's items, not the v1-only version cases.
    let list = run(
        home.path(),
        &["--json", "ext", "conformance", "--list", "--protocol", "2"],
    );
    assert!(list.status.success(), "{}", stderr(&list));
    let listed: Value = serde_json::from_slice(&list.stdout).expect("one JSON document");
    let ids: Vec<&str> = listed["statements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert!(ids.contains(&"D4") && ids.contains(&"D15"), "{ids:?}");
    assert!(!ids.contains(&"22"), "{ids:?}");
    let text = stdout(&run(
        home.path(),
        &["ext", "conformance", "--list", "--only", "delta"],
    ));
    assert!(text.contains("v2 delta §2.5 Extension tools"), "{text}");
    // The built-in sidecar (sidewire's SDK) checked against v2: the handshake and version
    // items pass.
    install_builtin(home.path());
    let checked = run(
        home.path(),
        &[
            "--json",
            "ext",
            "conformance",
            "sidewire-demo",
            "--protocol",
            "2",
            "--only",
            "delta.4",
            "--only",
            "delta.5",
            "--only",
            "delta.6",
        ],
    );
    assert!(
        checked.status.success(),
        "{}\n{}",
        stdout(&checked),
        stderr(&checked)
    );
    let report: Value = serde_json::from_slice(&checked.stdout).expect("one JSON document");
    assert_eq!(report["profile"], "reasonix.extension.v2");
    let verdicts: Vec<(&str, &str)> = report["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["statement"]["id"].as_str().unwrap(),
                r["verdict"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(verdicts, [("D4", "pass"), ("D5", "pass"), ("D6", "pass")]);
    // A bad version is clap's usage error.
    let bad = run(
        home.path(),
        &["ext", "conformance", "--list", "--protocol", "3"],
    );
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn ext_conformance_usage_errors_exit_2_and_sidecar_text_is_escaped() {
    let home = home();
    for args in [
        &["ext", "conformance"][..],
        &["ext", "conformance", "--", "python3", "x.py"],
        &["ext", "conformance", "some-plugin", "--", "python3", "x.py"],
    ] {
        let out = run(home.path(), args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
    }
    // Not installed: an error (exit 1), not a report.
    let missing = run(home.path(), &["ext", "conformance", "no-such-plugin"]);
    assert_fails(&missing, "no-such-plugin is not installed");

    // A sidecar that greets the terminal with escape sequences on stdout: the report shows
    // them escaped, and no raw control byte reaches stdout.
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("hostile.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nprintf '\\033[2K\\r\\342\\200\\256evil\\n'\nexec python3 {}\n",
            conformance_fixtures().join("sidecar.py").display()
        ),
    )
    .unwrap();
    let mut permissions = std::fs::metadata(&script).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&script, permissions).unwrap();
    let manifest = conformance_fixtures().join("reasonix-plugin.json");
    let out = run(
        home.path(),
        &[
            "ext",
            "conformance",
            "--only",
            "S-frames",
            "--manifest",
            manifest.to_str().unwrap(),
            "--",
            script.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("← sidecar \\x1b[2K\\r\\u{202e}evil"),
        "{text}"
    );
    assert!(
        !text
            .chars()
            .any(|c| c == '\u{1b}' || c == '\r' || c == '\u{202e}'),
        "a raw control reached stdout: {text:?}"
    );
}

/// A secret that must never be printed.
const SECRET: &str = "hunter2-do-not-print";

/// Checks `sidewire mcp servers --config FILE` on a file: the servers as understood, the
/// secret nowhere in the output (text or JSON), the variable named instead.
fn check_understood(home: &Path, config: &Path, dialect: &str) -> Value {
    let config = config.to_str().unwrap();
    let env = [("SIDEWIRE_TEST_SECRET", SECRET)];
    let out = run_with_env(home, &["mcp", "--config", config, "servers"], "", &env);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(!text.contains(SECRET), "{text}");
    assert!(!text.contains("pw@") && !text.contains("key=abc"), "{text}");
    assert!(text.contains("demo running"), "{text}");
    assert!(text.contains("remote disabled"), "{text}");
    assert!(
        text.contains(&format!("{dialect} stdio {EXE} __mcp-server (enabled)")),
        "{text}"
    );
    assert!(
        text.contains("https://REDACTED@example.com/mcp?key=REDACTED (disabled)"),
        "{text}"
    );
    assert!(text.contains("SIDEWIRE_TEST_SECRET (env)"), "{text}");
    let out = run_with_env(
        home,
        &["mcp", "--json", "--config", config, "servers"],
        "",
        &env,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stdout(&out).contains(SECRET), "{}", stdout(&out));
    serde_json::from_str(&stdout(&out)).unwrap()
}

#[test]
fn the_secrets_expanded_into_a_servers_url_never_reach_the_terminal() {
    let home = home();
    // A port nothing listens on: the server fails to start, and the error names its URL.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let config = home.path().join(".mcp.json");
    let url = format!(
        "http://svc:${{SIDEWIRE_TEST_PW}}@127.0.0.1:{port}/${{SIDEWIRE_TEST_TENANT}}/mcp?key=${{SIDEWIRE_TEST_SECRET}}"
    );
    let file = json!({"mcpServers": {"remote": {"url": url}}});
    std::fs::write(&config, file.to_string()).unwrap();
    let env = [
        ("SIDEWIRE_TEST_SECRET", SECRET),
        ("SIDEWIRE_TEST_PW", "pw-5678-do-not-print"),
        ("SIDEWIRE_TEST_TENANT", "tn-9012-do-not-print"),
    ];
    let config = config.to_str().unwrap();
    for command in ["servers", "tools"] {
        let out = run_with_env(home.path(), &["mcp", "--config", config, command], "", &env);
        let all = format!("{}{}", stdout(&out), stderr(&out));
        for (name, value) in env {
            assert!(!all.contains(value), "{command}: {name}'s value in: {all}");
        }
        assert!(
            all.contains(&format!("127.0.0.1:{port}/REDACTED/mcp?key=REDACTED")),
            "{command}: {all}"
        );
    }
}

#[test]
fn mcp_servers_shows_a_vscode_file_as_understood_with_secrets_redacted() {
    let home = home();
    let folder = home.path().join("project/.vscode");
    std::fs::create_dir_all(&folder).unwrap();
    let config = folder.join("mcp.json");
    let file = json!({
        "servers": {
            "demo": {"type": "stdio", "command": EXE, "args": ["__mcp-server"],
                     "env": {"DEMO_TOKEN": "${env:SIDEWIRE_TEST_SECRET}"}},
            "remote": {"type": "http", "url": "https://user:pw@example.com/mcp?key=abc",
                       "headers": {"Authorization": "Bearer ${env:SIDEWIRE_TEST_SECRET}"},
                       "disabled": true}
        }
    });
    // VS Code writes JSON with comments.
    let text = format!("// servers for this project\n{file:#}\n");
    std::fs::write(&config, text).unwrap();
    let doc = check_understood(home.path(), &config, "vscode");
    let rows = doc["servers"].as_array().unwrap();
    let remote = rows.iter().find(|r| r["name"] == "remote").unwrap();
    assert_eq!(remote["state"], "disabled");
    assert_eq!(remote["config"]["dialect"], "vscode");
    assert_eq!(remote["config"]["enabled"], false);
    assert_eq!(
        remote["config"]["headers"]["Authorization"],
        "Bearer ${env:SIDEWIRE_TEST_SECRET}"
    );
    let demo = rows.iter().find(|r| r["name"] == "demo").unwrap();
    assert_eq!(
        demo["config"]["env"]["DEMO_TOKEN"],
        "${env:SIDEWIRE_TEST_SECRET}"
    );
    assert_eq!(
        demo["config"]["expanded"][0]["variables"][0]["name"],
        "SIDEWIRE_TEST_SECRET"
    );
    // An `${input:...}` without a terminal to ask on fails naming the input.
    std::fs::write(
        &config,
        r#"{"inputs": [{"type": "promptString", "id": "api-key", "password": true}],
            "servers": {"s": {"command": "x", "env": {"K": "${input:api-key}"}}}}"#,
    )
    .unwrap();
    let out = run(
        home.path(),
        &["mcp", "--config", config.to_str().unwrap(), "servers"],
    );
    assert_fails(&out, "servers.s.env.K: the input api-key needs an answer");
    // An unset variable names itself, the server and the field.
    std::fs::write(
        &config,
        r#"{"servers": {"s": {"type": "http", "url": "https://x/mcp", "headers": {"Authorization": "Bearer ${env:SIDEWIRE_UNSET_VAR}"}}}}"#,
    )
    .unwrap();
    let out = run(
        home.path(),
        &["mcp", "--config", config.to_str().unwrap(), "servers"],
    );
    assert_fails(
        &out,
        "servers.s.headers.Authorization: the environment variable SIDEWIRE_UNSET_VAR is not set",
    );
}

#[test]
fn mcp_servers_shows_a_codex_toml_file_as_understood_and_filters_its_tools() {
    let home = home();
    let config = home.path().join("config.toml");
    let text = format!(
        r#"model = "o4-mini"

[mcp_servers.demo]
command = {EXE:?}
args = ["__mcp-server"]
env = {{ "DEMO_TOKEN" = "${{SIDEWIRE_TEST_SECRET}}" }}
tool_timeout_sec = 12
enabled_tools = ["echo"]

[mcp_servers.remote]
url = "https://user:pw@example.com/mcp?key=abc"
bearer_token_env_var = "SIDEWIRE_TEST_SECRET"
enabled = false
"#
    );
    std::fs::write(&config, text).unwrap();
    let doc = check_understood(home.path(), &config, "codex");
    let rows = doc["servers"].as_array().unwrap();
    let demo = rows.iter().find(|r| r["name"] == "demo").unwrap();
    assert_eq!(demo["config"]["callTimeoutMs"], 12_000);
    assert_eq!(demo["config"]["tools"]["only"], json!(["echo"]));
    let remote = rows.iter().find(|r| r["name"] == "remote").unwrap();
    assert_eq!(
        remote["config"]["headers"]["Authorization"],
        "Bearer ${SIDEWIRE_TEST_SECRET}"
    );
    // The filter applies: only `echo` is listed, and `add` cannot be called.
    let config = config.to_str().unwrap();
    let env = [("SIDEWIRE_TEST_SECRET", SECRET)];
    let out = run_with_env(home.path(), &["mcp", "--config", config, "tools"], "", &env);
    assert!(out.status.success(), "{}", stderr(&out));
    // One tool (its parameters on the indented line under it).
    let entries = stdout(&out).lines().filter(|l| !l.starts_with(' ')).count();
    assert_eq!(entries, 1, "{}", stdout(&out));
    assert!(
        stdout(&out).starts_with("mcp__demo__echo"),
        "{}",
        stdout(&out)
    );
    let out = run_with_env(
        home.path(),
        &[
            "mcp",
            "--config",
            config,
            "call",
            "mcp__demo__add",
            "a=1",
            "b=2",
        ],
        "",
        &env,
    );
    assert!(!out.status.success(), "{}", stdout(&out));
}

#[path = "cli/once.rs"]
mod once;

#[path = "cli/args.rs"]
mod args;

#[path = "cli/flags.rs"]
mod flags;

#[path = "cli/rough_edges.rs"]
mod rough_edges;

#[path = "cli/readme.rs"]
mod readme;

#[path = "cli/untrusted.rs"]
mod untrusted;

#[path = "cli/cancel.rs"]
mod cancel;

#[path = "cli/streams.rs"]
mod streams;

#[path = "cli/gateway.rs"]
mod gateway;

#[path = "cli/hooks.rs"]
mod hooks;

/// Spec delta §2.6 and §2.8 (checklist items 17, 34): `ext check` shows a v2 plugin with an
/// unmet non-optional requirement as inactive, with the reference's reason, without starting
/// it; and a `tool:` slot as accepted and unused.
#[test]
fn ext_check_shows_an_inactive_v2_plugin_and_its_reason() {
    let home = home();
    let v2 = |name: &str, members: Value| {
        let package = home.path().join(name);
        std::fs::create_dir_all(&package).unwrap();
        let mut manifest = json!({
            "apiVersion": "reasonix.io/plugin/v2",
            "name": name,
            "runtime": {
                "command": EXE,
                "args": ["__sidecar"],
                "intercepts": ["input.receive"],
                "capabilities": ["interceptors"]
            }
        });
        for (key, value) in members.as_object().unwrap() {
            manifest[key] = value.clone();
        }
        std::fs::write(package.join("reasonix-plugin.json"), manifest.to_string()).unwrap();
        install_linked(home.path(), &package);
    };
    v2(
        "browser-tool",
        json!({"requires": [{"namespace": "reasonix", "kind": "browser", "id": "companion"}]}),
    );
    v2(
        "Slotty.Tools",
        json!({"runtime": {"command": EXE, "args": ["__sidecar"], "replaces": ["tool:bash"]}}),
    );
    let out = run(home.path(), &["ext", "check"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains(
            "inactive browser-tool: missing required capability reasonix/browser/companion; \
             browser host is unavailable on this frontend"
        ),
        "{text}"
    );
    assert!(text.contains("ok   Slotty.Tools"), "{text}");
    assert!(
        text.contains("tool:bash: slot accepted, not used by this host"),
        "{text}"
    );
    // `plugin list` says so without booting anything.
    let out = run(home.path(), &["plugin", "list"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains(
            "browser-tool unversioned (linked) (inactive: missing required capability \
             reasonix/browser/companion; browser host is unavailable on this frontend)"
        ),
        "{}",
        stdout(&out)
    );
    let out = run(home.path(), &["--json", "ext", "check"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: Value = serde_json::from_str(&stdout(&out)).expect("one JSON document");
    let plugins = doc["plugins"].as_array().unwrap();
    let inactive = plugins
        .iter()
        .find(|p| p["plugin"] == "browser-tool")
        .unwrap();
    assert_eq!(inactive["inactive"], true, "{doc}");
    assert_eq!(inactive["missing"], json!(["reasonix/browser/companion"]));
    assert!(inactive.get("pid").is_none(), "never started: {doc}");
    let running = plugins
        .iter()
        .find(|p| p["plugin"] == "Slotty.Tools")
        .unwrap();
    assert!(running["pid"].as_u64().is_some(), "{doc}");
}

/// Extension tools of V2 plugins in `run`.
#[path = "cli/ext_tools.rs"]
mod ext_tools;
