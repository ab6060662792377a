//! The stdio transport against real child processes (the fake server in `tests/fixtures`, run
//! by python3): framing abuse, stderr, crashes, environment, and above all that no process
//! survives a close or a drop.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use sidewire_mcp::{Client, NoHandler, ServerSpec, Stage, ToolCallOptions};

use crate::support::*;

async fn connect(spec: ServerSpec) -> Client {
    let (client, driver) = within("connect", Client::connect(&spec, NoHandler))
        .await
        .unwrap_or_else(|err| panic!("connect failed: {err}"));
    tokio::spawn(driver);
    client
}

async fn pids(client: &Client) -> (u32, Option<u32>) {
    let result = client
        .call_tool("pids", json!({}), ToolCallOptions::new())
        .await
        .unwrap();
    let pids: Value = serde_json::from_str(&result.joined_text()).unwrap();
    (
        pids["pid"].as_u64().unwrap() as u32,
        pids["grandchild"].as_u64().map(|pid| pid as u32),
    )
}

#[tokio::test]
async fn round_trip_over_a_real_process() {
    let client = connect(fake_spec("fake")).await;
    assert_eq!(client.server_info().name, "fake");
    let tools = client.list_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "echo"));
    let result = client
        .call_tool("echo", json!({"message": "hi"}), ToolCallOptions::new())
        .await
        .unwrap();
    assert_eq!(result.joined_text(), "hi");
    let pid = client.pid().unwrap();
    assert_eq!(pids(&client).await.0, pid);
    within("close", client.close()).await;
    wait_reaped(pid).await;
    assert_eq!(
        client.exit_status().as_deref(),
        Some("exited with status 0")
    );
}

#[tokio::test]
async fn non_json_stdout_lines_are_skipped_and_counted() {
    let client = connect(fake_spec("fake").env("FAKE_BANNER", "1")).await;
    let result = client
        .call_tool("spam", json!({}), ToolCallOptions::new())
        .await
        .unwrap();
    assert_eq!(result.joined_text(), "after spam");
    // The banner, "a stray print" and "another {not json"; blank lines are not counted.
    assert_eq!(client.stats().skipped_lines, 3);
    client.ping().await.unwrap();
    client.close().await;
}

#[tokio::test]
async fn an_oversized_answer_fails_its_call_and_the_connection_lives() {
    let client = connect(fake_spec("fake").max_message_bytes(64 * 1024)).await;
    let err = client
        .call_tool("big", json!({"bytes": 1_000_000}), ToolCallOptions::new())
        .await
        .unwrap_err();
    assert!(err.is_too_large(), "{err:?}");
    let ok = client
        .call_tool("big", json!({"bytes": 1000}), ToolCallOptions::new())
        .await
        .unwrap();
    assert_eq!(ok.joined_text().len(), 1000);
    let echo = client
        .call_tool(
            "echo",
            json!({"message": "still here"}),
            ToolCallOptions::new(),
        )
        .await
        .unwrap();
    assert_eq!(echo.joined_text(), "still here");
    client.close().await;
}

/// An answer that names its call but does not decode fails that call at once (not after its
/// timeout) as an invalid response, and the connection lives.
#[tokio::test]
async fn an_undecodable_answer_naming_its_call_fails_it_at_once() {
    let client = connect(fake_spec("fake").call_timeout(Duration::from_secs(300))).await;
    for kind in ["utf8", "cut"] {
        let err = within(
            "the broken call",
            client.call_tool("broken", json!({ "kind": kind }), ToolCallOptions::new()),
        )
        .await
        .unwrap_err();
        assert!(err.is_invalid_response(), "{kind}: {err:?}");
    }
    assert_eq!(client.stats().skipped_lines, 2);
    client.ping().await.unwrap();
    client.close().await;
}

#[tokio::test]
async fn a_server_dying_mid_call_fails_it_with_exit_status_and_redacted_stderr() {
    let client = connect(fake_spec("fake")).await;
    let pid = client.pid().unwrap();
    let err = within(
        "the failed call",
        client.call_tool("die", json!({}), ToolCallOptions::new()),
    )
    .await
    .unwrap_err();
    assert!(err.is_closed(), "{err:?}");
    assert_eq!(err.server(), Some("fake"));
    assert_eq!(err.exit_status(), Some("exited with status 3"));
    let tail = err.stderr_tail().unwrap();
    assert!(tail.contains("fatal: boom"), "{tail}");
    assert!(
        tail.contains("api_key=[REDACTED]") && !tail.contains("supersecret123"),
        "{tail}"
    );
    let text = err.to_string();
    assert!(
        text.contains("the process exited with status 3") && text.contains("fatal: boom"),
        "{text}"
    );
    wait_reaped(pid).await;
    // Later calls fail at once with the same story.
    let again = client.ping().await.unwrap_err();
    assert!(again.is_closed() && again.stderr_tail().is_some());
}

#[tokio::test]
async fn an_exit_mid_call_fails_the_call_promptly_while_a_setsid_daemon_holds_stdout() {
    let client = connect(fake_spec("fake").env("FAKE_DAEMON", "1")).await;
    let pids = client
        .call_tool("pids", json!({}), ToolCallOptions::new())
        .await
        .unwrap();
    let pids: Value = serde_json::from_str(&pids.joined_text()).unwrap();
    let daemon = pids["daemon"].as_u64().unwrap() as u32;
    // The daemon left the group and the session: nothing of ours can kill it; the test does,
    // however it ends.
    struct Kill(u32);
    impl Drop for Kill {
        fn drop(&mut self) {
            if let Some(pid) = rustix::process::Pid::from_raw(self.0 as i32) {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            }
        }
    }
    let guard = Kill(daemon);
    let pid = client.pid().unwrap();
    let started = Instant::now();
    // The daemon keeps the pipes open, so stdout never ends: only the reaping can end the
    // call. Before, it waited for the idle timeout (300 s).
    let err = within(
        "the failed call",
        client.call_tool("die", json!({}), ToolCallOptions::new()),
    )
    .await
    .unwrap_err();
    let elapsed = started.elapsed();
    drop(guard);
    assert!(err.is_closed(), "{err:?}");
    assert_eq!(err.exit_status(), Some("exited with status 3"));
    assert!(err.stderr_tail().unwrap().contains("fatal: boom"));
    // The reaping, 250 ms for the last of stderr and 1 s for the last frames; far below the
    // timeouts a call would otherwise wait for.
    assert!(elapsed < Duration::from_secs(15), "{elapsed:?}");
    wait_reaped(pid).await;
    wait_dead_not_ours(daemon).await;
}

#[tokio::test]
async fn a_server_that_exits_at_startup_reports_stage_and_stderr() {
    let spec = fake_spec("early").env("FAKE_EXIT_AT_START", "7");
    let err = within("connect", Client::connect(&spec, NoHandler))
        .await
        .unwrap_err();
    assert!(err.is_closed(), "{err:?}");
    assert_eq!(err.stage().unwrap().0, Stage::Initialize);
    assert_eq!(err.exit_status(), Some("exited with status 7"));
    let tail = err.stderr_tail().unwrap();
    assert!(tail.contains("cannot start, password=[REDACTED]"), "{tail}");
    assert!(!err.to_string().contains("hunter2"));
}

#[tokio::test]
async fn a_missing_command_names_path_and_how_to_fix_it() {
    let spec = ServerSpec::stdio("ghost", "sidewire-no-such-command").env("PATH", "/usr/bin:/bin");
    let err = Client::connect(&spec, NoHandler).await.unwrap_err();
    assert!(err.is_spawn(), "{err:?}");
    assert_eq!(err.stage().unwrap().0, Stage::Launch);
    let text = err.to_string();
    assert!(
        text.contains("`sidewire-no-such-command` was not found on PATH (/usr/bin:/bin"),
        "{text}"
    );
    assert!(text.contains("absolute path"), "{text}");
}

#[tokio::test]
async fn a_stderr_flood_does_not_block_the_server() {
    // 1 MiB of stderr before the initialize answer: far beyond a pipe buffer.
    let client = connect(fake_spec("noisy").env("FAKE_STDERR_FLOOD", "1048576")).await;
    client.ping().await.unwrap();
    let tail = client.stderr_tail().unwrap();
    assert!(
        tail.len() <= 16 * 1024 && tail.len() > 15 * 1024,
        "{}",
        tail.len()
    );
    assert!(tail.ends_with("flood done\n"));
    client.close().await;
}

#[tokio::test]
async fn env_dir_and_low_priority_reach_the_child() {
    let dir = temp_dir("cwd");
    let spec = fake_spec("env")
        .env("SIDEWIRE_TEST_VAR", "hello")
        .dir(&*dir)
        .low_priority(true);
    let client = connect(spec).await;
    let call = |name: &'static str, args: Value| {
        let client = client.clone();
        async move {
            client
                .call_tool(name, args, ToolCallOptions::new())
                .await
                .unwrap()
                .joined_text()
        }
    };
    assert_eq!(
        call("env", json!({"name": "SIDEWIRE_TEST_VAR"})).await,
        "hello"
    );
    // The parent's environment is inherited under the spec's.
    assert_ne!(call("env", json!({"name": "HOME"})).await, "<unset>");
    let cwd = call("cwd", json!({})).await;
    assert_eq!(
        std::fs::canonicalize(cwd).unwrap(),
        std::fs::canonicalize(&dir).unwrap()
    );
    assert_eq!(call("nice", json!({})).await, "10");
    client.close().await;
    std::fs::remove_dir_all(dir).unwrap();
}

#[tokio::test]
async fn close_kills_the_whole_group_grandchild_included() {
    let client = connect(fake_spec("wrapper").env("FAKE_GRANDCHILD", "1")).await;
    let (pid, grandchild) = pids(&client).await;
    let grandchild = grandchild.unwrap();
    assert!(running(grandchild));
    within("close", client.close()).await;
    // The server exited by itself on stdin EOF (no signal needed); its grandchild, which
    // would have lived on, is killed with the group.
    assert_eq!(
        client.exit_status().as_deref(),
        Some("exited with status 0")
    );
    wait_reaped(pid).await;
    wait_dead_not_ours(grandchild).await;
}

#[tokio::test]
async fn close_escalates_to_sigkill_within_its_budget_and_is_idempotent() {
    let spec = fake_spec("stubborn")
        .env("FAKE_IGNORE_EOF", "1")
        .env("FAKE_IGNORE_TERM", "1")
        .env("FAKE_GRANDCHILD", "1");
    let client = connect(spec).await;
    let (pid, grandchild) = pids(&client).await;
    let started = Instant::now();
    // Eight concurrent closes share one sequence.
    let closes: Vec<_> = (0..8).map(|_| client.close()).collect();
    within("closes", futures_util::future::join_all(closes)).await;
    let took = started.elapsed();
    // 750 ms for stdin, 2 s after SIGTERM, then SIGKILL.
    assert!(
        took >= Duration::from_millis(2500) && took < Duration::from_millis(4500),
        "{took:?}"
    );
    wait_reaped(pid).await;
    wait_dead_not_ours(grandchild.unwrap()).await;
    assert_eq!(client.exit_status().as_deref(), Some("killed by signal 9"));
    // And again, at once.
    let again = Instant::now();
    client.close().await;
    assert!(again.elapsed() < Duration::from_millis(100));
}

#[tokio::test]
async fn dropping_the_client_kills_the_group_while_the_driver_reaps() {
    let client = connect(
        fake_spec("dropped")
            .env("FAKE_IGNORE_EOF", "1")
            .env("FAKE_GRANDCHILD", "1"),
    )
    .await;
    let (pid, grandchild) = pids(&client).await;
    drop(client);
    wait_reaped(pid).await;
    wait_dead_not_ours(grandchild.unwrap()).await;
}

#[tokio::test]
async fn dropping_client_and_driver_unpolled_kills_and_reaps_synchronously() {
    let mark = unique_mark();
    let spec = fake_spec("abandoned")
        .env("FAKE_IGNORE_EOF", "1")
        .env("FAKE_GRANDCHILD", "1")
        .env("SIDEWIRE_TEST_MARK", &mark);
    let (client, driver) = within("connect", Client::connect(&spec, NoHandler))
        .await
        .unwrap();
    let pid = client.pid().unwrap();
    // Find the grandchild without the driver's help: the other process carrying the mark.
    let mut marked = Vec::new();
    eventually("the grandchild to appear", || {
        marked = processes_marked(&mark);
        marked.len() == 2
    })
    .await;
    let grandchild = marked.into_iter().find(|&p| p != pid).unwrap();
    drop(client);
    drop(driver);
    // No await between the drops and this check: the kill and the reaping happened in drop.
    assert!(
        !sidewire_process::testing::exists(pid),
        "the server was not reaped in drop (parent {:?})",
        sidewire_process::testing::parent_of(pid)
    );
    wait_dead_not_ours(grandchild).await;
}

#[tokio::test]
async fn an_abandoned_connect_kills_what_it_started() {
    let mark = unique_mark();
    let spec = fake_spec("slow")
        .env("FAKE_INIT_SLEEP", "30")
        .env("FAKE_GRANDCHILD", "1")
        .env("SIDEWIRE_TEST_MARK", &mark);
    let mut seen = Vec::new();
    {
        let connect = Client::connect(&spec, NoHandler);
        tokio::pin!(connect);
        let wait_for_both = async {
            loop {
                seen = processes_marked(&mark);
                if seen.len() == 2 {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        };
        tokio::select! {
            _ = &mut connect => panic!("the connect should still be waiting"),
            () = within("the processes to start", wait_for_both) => {}
        }
        // The connect future is dropped here, mid-handshake.
    }
    for pid in seen {
        wait_dead_not_ours(pid).await;
    }
}

#[tokio::test]
async fn a_slow_start_fails_at_its_startup_timeout() {
    let spec = fake_spec("slow")
        .env("FAKE_INIT_SLEEP", "30")
        .startup_timeout(Duration::from_millis(1500));
    let started = Instant::now();
    let err = Client::connect(&spec, NoHandler).await.unwrap_err();
    assert!(err.is_timeout(), "{err:?}");
    assert_eq!(err.stage().unwrap().0, Stage::Initialize);
    assert!(started.elapsed() < Duration::from_secs(4));
}

/// Set in the re-executed test binary of
/// [`a_command_on_path_runs_no_login_shell_and_one_off_it_finds_the_shells_path`]: the
/// directory holding its fake login shell, marker file and login-only command.
const LOGIN_SHELL_ROLE: &str = "SIDEWIRE_TEST_LOGIN_SHELL_DIR";

/// A command found on `PATH` starts without any shell; only a miss asks the login shell, whose
/// `PATH` then reaches the child. `SHELL` is process-wide and the probe's answer is cached per
/// process, so the checks run in a re-executed copy of this test binary with `SHELL` set to a
/// fake login shell that leaves a marker file.
#[tokio::test]
async fn a_command_on_path_runs_no_login_shell_and_one_off_it_finds_the_shells_path() {
    if let Some(dir) = std::env::var_os(LOGIN_SHELL_ROLE) {
        return login_shell_checks(std::path::Path::new(&dir)).await;
    }
    use std::os::unix::fs::PermissionsExt;
    let dir = temp_dir("login-shell");
    let marker = dir.join("probed");
    let login_bin = dir.join("login-bin");
    std::fs::create_dir(&login_bin).unwrap();
    let executable = |path: &std::path::Path, text: String| {
        std::fs::write(path, text).unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    };
    // The fake login shell: records that it ran, then answers like a login shell whose
    // profile added `login-bin` (it runs the probe's `-c` command with a real sh).
    executable(
        &dir.join("shell"),
        format!(
            "#!/bin/sh\necho probed >> '{}'\nPATH='{}':\"$PATH\"\nexport PATH\nshift\nexec /bin/sh \"$@\"\n",
            marker.display(),
            login_bin.display()
        ),
    );
    // A server command only the login shell's PATH has.
    executable(
        &login_bin.join("sidewire-login-only-server"),
        format!(
            "#!/bin/sh\nexec python3 -u '{}' \"$@\"\n",
            fake_server().display()
        ),
    );
    let test = "stdio::a_command_on_path_runs_no_login_shell_and_one_off_it_finds_the_shells_path";
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(LOGIN_SHELL_ROLE, &*dir)
        .env("SHELL", dir.join("shell"))
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        output.status.success(),
        "the re-executed test failed:\n{text}"
    );
    // It really ran the one test (a filter that matched nothing would pass too).
    assert!(text.contains("1 passed"), "{text}");
    std::fs::remove_dir_all(dir).unwrap();
}

/// The re-executed half: `SHELL` is the fake login shell in `dir`.
async fn login_shell_checks(dir: &std::path::Path) {
    let marker = dir.join("probed");
    // python3 is on PATH: no shell runs, not even once per process.
    let client = connect(fake_spec("on-path")).await;
    client.ping().await.unwrap();
    within("close", client.close()).await;
    assert!(
        !marker.exists(),
        "a command found on PATH ran the login shell"
    );
    // Not on PATH: the login shell is asked (once), and the child gets the PATH that found it.
    let client = connect(ServerSpec::stdio(
        "login-only",
        "sidewire-login-only-server",
    ))
    .await;
    let path = client
        .call_tool("env", json!({"name": "PATH"}), ToolCallOptions::new())
        .await
        .unwrap()
        .joined_text();
    within("close", client.close()).await;
    let login_bin = dir.join("login-bin");
    assert!(
        path.split(':')
            .any(|entry| std::path::Path::new(entry) == login_bin),
        "{path}"
    );
    assert_eq!(std::fs::read_to_string(&marker).unwrap(), "probed\n");
}

/// A marker no other test's process carries.
fn unique_mark() -> String {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    format!(
        "{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// The live processes whose environment carries `SIDEWIRE_TEST_MARK=<mark>`.
fn processes_marked(mark: &str) -> Vec<u32> {
    sidewire_process::testing::with_env("SIDEWIRE_TEST_MARK", mark)
}
