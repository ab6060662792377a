//! `sidewire run` as people use it: on a pseudo-terminal (through `script`, which the base
//! system has) with keys typed byte by byte (arrows, Tab, Ctrl-C, Ctrl-D), and from a pipe
//! and with `--json` as scripts use it.

use super::*;

/// Ctrl-C, Ctrl-D, Tab and the left arrow as a terminal sends them.
const CTRL_C: &str = "\u{3}";
const CTRL_D: &str = "\u{4}";
const TAB: &str = "\t";
const LEFT: &str = "\u{1b}[D";

/// `sidewire ARGS` on a pseudo-terminal: what it writes is collected as it comes, keys are
/// typed into it.
struct Pty {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    seen: std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
    /// How much of `seen` the waits have consumed.
    from: usize,
}

impl Pty {
    fn start(home: &Path, args: &[&str]) -> Pty {
        let mut command = Command::new("script");
        // `exec`: sidewire itself is the terminal's foreground process, as from a shell, so
        // Ctrl-C reaches it (and no shell in between).
        command.args([
            "-qfec",
            &format!("exec {EXE} {}", args.join(" ")),
            "/dev/null",
        ]);
        let mut child = command
            .env("SIDEWIRE_HOME", home)
            .env("NO_COLOR", "1")
            .env("TERM", "xterm")
            .env_remove("RUST_LOG")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("script starts");
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut stdout = child.stdout.take().unwrap();
        let sink = std::sync::Arc::clone(&seen);
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = std::io::Read::read(&mut stdout, &mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        let stdin = child.stdin.take().unwrap();
        Pty {
            child,
            stdin,
            seen,
            from: 0,
        }
    }

    /// Everything written so far, as text.
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.seen.lock().unwrap()).into_owned()
    }

    /// Waits (30 s at most) until `needle` shows after what earlier waits saw.
    fn wait_for(&mut self, needle: &str) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let text = self.text();
            if let Some(at) = text.get(self.from..).and_then(|rest| rest.find(needle)) {
                self.from += at + needle.len();
                return;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("{needle:?} never showed; saw:\n{text}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Types `keys` as they are.
    fn keys(&mut self, keys: &str) {
        use std::io::Write;
        self.stdin.write_all(keys.as_bytes()).unwrap();
        self.stdin.flush().unwrap();
    }

    /// Waits (30 s at most) for the exit; returns its code and everything written.
    fn finish(mut self) -> (Option<i32>, String) {
        let code = exit_code(&mut self.child, "the end of the session");
        // `script` has written everything once it exited; its reader drains the pipe.
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut last = 0;
        loop {
            std::thread::sleep(Duration::from_millis(50));
            let len = self.seen.lock().unwrap().len();
            if len == last || Instant::now() > deadline {
                break;
            }
            last = len;
        }
        (code, self.text())
    }
}

/// Installs the built-in plugin and an MCP config with the built-in server (`demo`); returns
/// the config's path as an argument.
fn setup(home: &Path) -> String {
    agent_setup(home).to_str().unwrap().to_owned()
}

#[test]
fn on_a_terminal_arrow_keys_edit_tab_completes_help_helps_and_history_is_kept() {
    let home = home();
    let config = setup(home.path());
    let mut pty = Pty::start(home.path(), &["run", "--config", &config]);
    pty.wait_for("sidewire> ");
    // "hlo", two steps left, "el": the plugin is sent the edited text, no escape sequence.
    pty.keys(&format!("hlo{LEFT}{LEFT}el\r"));
    pty.wait_for("> hello");
    // Keys typed before the next prompt would reach the terminal's line discipline, not the
    // editor: each step waits for the prompt.
    pty.wait_for("sidewire> ");
    // A command completed by Tab, then run.
    pty.keys(&format!("/he{TAB}\r"));
    pty.wait_for("commands:");
    pty.wait_for("/call TOOL key=value");
    pty.wait_for("sidewire> ");
    // A tool's own name completed (with the space after it), its arguments typed by its
    // schema.
    pty.keys(&format!("/call sl{TAB}steps=2\r"));
    pty.wait_for("-> counted to 2");
    pty.wait_for("sidewire> ");
    pty.keys(CTRL_D);
    let (code, text) = pty.finish();
    assert_eq!(code, Some(0), "{text}");
    // What came back from input.receive, on a line of its own: exactly the edited text.
    assert!(
        text.lines().any(|l| l.trim_end_matches('\r') == "> hello"),
        "{text:?}"
    );
    // The compact report names the call once, with its typed arguments.
    assert!(
        text.contains(r#"tool mcp__demo__slow {"steps":2}"#),
        "{text}"
    );
    let history = std::fs::read_to_string(home.path().join("run_history")).unwrap();
    for line in ["hello", "/help", "/call slow steps=2"] {
        assert!(history.lines().any(|l| l == line), "{line:?} in {history}");
    }
}

#[test]
fn on_a_terminal_ctrl_c_cancels_the_call_in_flight_and_the_session_goes_on() {
    let home = home();
    let config = setup(home.path());
    let mut pty = Pty::start(home.path(), &["run", "--config", &config]);
    pty.wait_for("sidewire> ");
    // A hundred steps of 100 ms: ten seconds unless cancelled. The progress line shows.
    pty.keys("/call slow steps=100\r");
    pty.wait_for("step 2 of 100");
    pty.keys(CTRL_C);
    pty.wait_for("cancelled");
    pty.wait_for("sidewire> ");
    pty.keys("/call echo text=after\r");
    pty.wait_for("-> after");
    pty.wait_for("sidewire> ");
    // Ctrl-C clears a line being typed; at an empty prompt, twice in a row quits.
    pty.keys(&format!("never sent{CTRL_C}"));
    pty.keys(CTRL_C);
    pty.wait_for("Ctrl-C again");
    pty.keys(CTRL_C);
    let (code, text) = pty.finish();
    assert_eq!(code, Some(0), "{text}");
    assert!(!text.contains("counted to 100"), "{text}");
    assert!(!text.contains("> never sent"), "{text}");
}

/// Waits (10 s at most) until the file at `path` holds a line starting with `prefix`.
fn wait_for_line(path: &Path, prefix: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        if text.lines().any(|l| l.starts_with(prefix)) || Instant::now() > deadline {
            return text;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn on_a_terminal_ctrl_c_tells_the_server_the_call_is_cancelled() {
    if Command::new("python3").arg("--version").output().is_err() {
        let _: Option<()> = no_python3(
            "hanging server",
            "on_a_terminal_ctrl_c_tells_the_server_the_call_is_cancelled",
        );
        return;
    }
    let home = home();
    let mark = home.path().join("server-saw");
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hanging_server.py");
    let config = home.path().join("mcp.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"py": {"command": "python3", "args": [fixture, mark]}}}).to_string(),
    )
    .unwrap();
    let mut pty = Pty::start(home.path(), &["run", "--config", config.to_str().unwrap()]);
    pty.wait_for("sidewire> ");
    // The tool never answers: only Ctrl-C ends the call.
    pty.keys("/call hang\r");
    let calls = wait_for_line(&mark, "call ");
    let id = calls
        .lines()
        .find_map(|l| l.strip_prefix("call "))
        .unwrap_or_else(|| panic!("the call never reached the server: {calls}"))
        .to_owned();
    pty.keys(CTRL_C);
    pty.wait_for("cancelled");
    pty.wait_for("sidewire> ");
    pty.keys(CTRL_D);
    let (code, text) = pty.finish();
    assert_eq!(code, Some(0), "{text}");
    let saw = wait_for_line(&mark, "cancelled ");
    assert!(saw.lines().any(|l| l == format!("cancelled {id}")), "{saw}");
}

#[test]
fn json_run_prints_one_event_per_outcome_and_nothing_else() {
    let home = home();
    let config = setup(home.path());
    let script =
        "plain text\n/call echo text=echoed\n/call slow steps=3\n/nope\n/help call\n/ui\n/quit\n";
    let out = run_with_input(home.path(), &["--json", "run", "--config", &config], script);
    assert!(out.status.success(), "{}", stderr(&out));
    let events: Vec<Value> = stdout(&out)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|_| panic!("not JSON: {line}")))
        .collect();
    let of = |kind: &str| -> Vec<&Value> { events.iter().filter(|e| e["event"] == kind).collect() };
    assert_eq!(of("ready")[0]["servers"], 1, "{events:?}");
    assert_eq!(of("input")[0]["outcome"]["payload"]["text"], "plain text");
    let calls = of("call");
    assert_eq!(calls.len(), 2, "{events:?}");
    assert_eq!(calls[0]["report"]["tool"], "mcp__demo__echo");
    assert_eq!(calls[0]["report"]["result"]["content"][0], "echoed");
    assert_eq!(calls[1]["report"]["arguments"]["steps"], 3);
    assert!(!of("progress").is_empty(), "{events:?}");
    assert_eq!(of("progress")[0]["tool"], "mcp__demo__slow");
    assert!(
        of("ui")
            .iter()
            .any(|e| e["surface"] == "demo-status" && e["kind"] == "status"),
        "{events:?}"
    );
    assert!(
        of("error")[0]["message"]
            .as_str()
            .unwrap()
            .contains("/nope")
    );
    assert!(of("help")[0]["text"].as_str().unwrap().contains("/call"));
    assert_eq!(of("surfaces").len(), 1, "{events:?}");
}

#[test]
fn a_publish_flood_prints_the_latest_state_a_few_times_a_second() {
    let home = home();
    let package = builtin_plugin(home.path());
    let manifest = package.join("reasonix-plugin.json");
    let mut doc: Value =
        serde_json::from_str(&std::fs::read_to_string(&manifest).unwrap()).unwrap();
    doc["runtime"]["args"] = json!(["__sidecar", "--flood", "20000"]);
    std::fs::write(&manifest, doc.to_string()).unwrap();
    install_linked(home.path(), &package);
    let mut command = Command::new(EXE);
    command.arg("run");
    let seen = interact(command, home.path(), &[("flood 20000 of 20000", "/quit")]);
    // Twenty thousand publishes, a handful of lines: at four renders a second, 200 lines
    // would take fifty seconds of flooding.
    let lines = seen.lines().filter(|l| l.contains("flood ")).count();
    assert!(lines < 200, "{lines} lines:\n{seen}");
    assert!(seen.len() < 64 * 1024, "{} bytes", seen.len());
}

#[test]
fn a_piped_line_with_an_escape_sequence_is_refused_whole() {
    let home = home();
    install_builtin(home.path());
    let out = run_with_input(home.path(), &["run"], "hel\u{1b}[Dlo\nclean\n/quit\n");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("control character at column 4"),
        "{}",
        stderr(&out)
    );
    assert!(!stdout(&out).contains("> hel"), "{}", stdout(&out));
    assert!(stdout(&out).contains("> clean"), "{}", stdout(&out));
}

#[test]
fn call_takes_short_names_and_typed_values_and_reports_in_one_line() {
    let home = home();
    install_builtin(home.path());
    let config = home.path().join("mcp.json");
    let server = json!({"command": EXE, "args": ["__mcp-server"]});
    std::fs::write(
        &config,
        json!({"mcpServers": {"one": server, "two": server}}).to_string(),
    )
    .unwrap();
    let script = "/call mcp__one__add a=2 b=3\n/call mcp__two__echo text=\"two words\"\n/call add a=1 b=1\n/call mcp__one__add a=x b=1\n/quit\n";
    let out = run_with_input(
        home.path(),
        &["run", "--config", config.to_str().unwrap()],
        script,
    );
    let (text, errors) = (stdout(&out), stderr(&out));
    assert!(out.status.success(), "{errors}");
    // Typed by the schema: numbers, and text with a space; one line each, arguments once.
    let add: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("mcp__one__add"))
        .collect();
    assert_eq!(add.len(), 1, "{text}");
    assert!(
        add[0].contains(r#"{"a":2,"b":3}"#) && add[0].ends_with("-> 5"),
        "{text}"
    );
    assert!(text.contains(r#"{"text":"two words"} "#), "{text}");
    assert!(!text.contains("trace:"), "{text}");
    // A short name two servers share is an error naming both; nothing ran.
    assert!(
        errors.contains("mcp__one__add") && errors.contains("mcp__two__add"),
        "{errors}"
    );
    assert!(errors.contains("argument a: expected number"), "{errors}");
    assert_eq!(text.matches("-> ").count(), 2, "{text}");
}

#[test]
fn sigint_while_a_piped_run_waits_for_input_ends_it_with_no_child_left() {
    let home = home();
    let marker = format!("SIDEWIRE_TEST_MARKER=run-int-{}", std::process::id());
    let config = setup(home.path());
    let (name, value) = marker.split_once('=').unwrap();
    let mut child = Command::new(EXE)
        .args(["run", "--config", &config])
        .env("SIDEWIRE_HOME", home.path())
        .env(name, value)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // The sidecar and the server.
    wait_for_processes(&marker, 2);
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    while !line.starts_with("ready:") {
        line.clear();
        assert!(std::io::BufRead::read_line(&mut stdout, &mut line).unwrap() > 0);
    }
    send("INT", child.id());
    let code = exit_code(&mut child, "SIGINT");
    assert_none_left(&marker, "SIGINT while run waits for input");
    assert_eq!(code, Some(130));
}
