//! Issue 40 §9: Ctrl-C on a one-shot `sidewire mcp call` tells the server, every time: the
//! call's `notifications/cancelled` is written (over stdio, or POSTed over HTTP) before the
//! server is killed and sidewire exits 130. Against `tests/fixtures/hanging_server.py`, whose
//! tool never answers and which records each call and each cancel it reads.

use super::*;

/// How many interrupted calls each case runs; every one must reach the server.
const RUNS: usize = 20;

/// The fixture, or `None` (the test says why) when there is no `python3`.
fn hanging_server(test: &str) -> Option<PathBuf> {
    let found = Command::new("python3")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    if !found {
        return no_python3("hanging server", test);
    }
    Some(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hanging_server.py"))
}

/// The first line of `mark` that starts with `prefix`, polled for until it appears (bounded).
fn line_in(mark: &Path, prefix: &str, within: Duration) -> Option<String> {
    let deadline = Instant::now() + within;
    loop {
        let text = std::fs::read_to_string(mark).unwrap_or_default();
        if let Some(line) = text.lines().find(|line| line.starts_with(prefix)) {
            return Some(line.to_owned());
        }
        if Instant::now() > deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Runs `sidewire args` once: waits until the server has the call (its `call` line in `mark`),
/// sends SIGINT, and returns the exit code and whether the server read the cancel of that call.
fn interrupt_a_hanging_call(home: &Path, mark: &Path, args: &[&str]) -> (Option<i32>, bool) {
    let _ = std::fs::remove_file(mark);
    let mut child = Command::new(EXE)
        .args(args)
        .env("SIDEWIRE_HOME", home)
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("sidewire starts");
    let call = line_in(mark, "call ", Duration::from_secs(30));
    let Some(call) = call else {
        let _ = child.kill();
        let _ = child.wait();
        panic!("the call never reached the server: {args:?}");
    };
    let id = call.trim_start_matches("call ");
    send("INT", child.id());
    let code = exit_code(&mut child, "SIGINT");
    // Written before sidewire exited (it waits for the server, or for the POST's answer); the
    // bound only keeps a failure from taking long.
    let told = line_in(mark, &format!("cancelled {id}"), Duration::from_secs(2)).is_some();
    (code, told)
}

/// Runs [`RUNS`] interrupted calls and asserts each exits 130 and is told to the server.
fn every_interrupt_is_told(home: &Path, mark: &Path, args: &[&str]) {
    let mut told = 0;
    for run in 0..RUNS {
        let (code, seen) = interrupt_a_hanging_call(home, mark, args);
        assert_eq!(code, Some(130), "run {run}: {args:?}");
        told += usize::from(seen);
    }
    assert_eq!(
        told, RUNS,
        "the server was told {told} times of {RUNS}: {args:?}"
    );
}

#[test]
fn ctrl_c_on_mcp_call_tells_a_legacy_stdio_server_every_time() {
    let test = "ctrl_c_on_mcp_call_tells_a_legacy_stdio_server_every_time";
    let Some(fixture) = hanging_server(test) else {
        return;
    };
    let home = home();
    let mark = home.path().join("mark");
    let (fixture, mark_arg) = (fixture.to_str().unwrap(), mark.to_str().unwrap());
    every_interrupt_is_told(
        home.path(),
        &mark,
        &[
            "mcp", "--era", "legacy", "call", "hang", "--stdio", "--", "python3", fixture, mark_arg,
        ],
    );
}

#[test]
fn ctrl_c_on_mcp_call_tells_a_modern_stdio_server_every_time() {
    let test = "ctrl_c_on_mcp_call_tells_a_modern_stdio_server_every_time";
    let Some(fixture) = hanging_server(test) else {
        return;
    };
    let home = home();
    let mark = home.path().join("mark");
    let (fixture, mark_arg) = (fixture.to_str().unwrap(), mark.to_str().unwrap());
    every_interrupt_is_told(
        home.path(),
        &mark,
        &[
            "mcp", "--era", "modern", "call", "hang", "--stdio", "--", "python3", fixture, mark_arg,
        ],
    );
}

#[test]
fn ctrl_c_on_mcp_call_posts_the_cancel_to_an_http_server_every_time() {
    use std::io::BufRead;
    let test = "ctrl_c_on_mcp_call_posts_the_cancel_to_an_http_server_every_time";
    let Some(fixture) = hanging_server(test) else {
        return;
    };
    let home = home();
    let mark = home.path().join("mark");
    let mut server = Command::new("python3")
        .arg(&fixture)
        .arg(&mark)
        .arg("http")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("python3 starts");
    let mut line = String::new();
    std::io::BufReader::new(server.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("the fixture's first line");
    let port: u16 = line
        .strip_prefix("PORT ")
        .and_then(|port| port.trim().parse().ok())
        .unwrap_or_else(|| panic!("the fixture said {line:?}"));
    let url = format!("http://127.0.0.1:{port}/mcp");
    every_interrupt_is_told(
        home.path(),
        &mark,
        &["mcp", "--era", "legacy", "--url", &url, "call", "hang"],
    );
    // Its stdin closing ends it.
    drop(server.stdin.take());
    let _ = server.wait();
}
