//! Helper roles this binary plays when re-executed with `SIDEWIRE_PROCESS_TEST_ROLE` set: each
//! does one thing that must not happen inside the test process itself (be SIGKILLed, become a
//! subreaper, probe a login shell with its own cache).

use std::io::{BufRead, BufReader};
use std::process::{Child, ExitCode, Stdio};
use std::time::Duration;

use sidewire_process::{Command, kill_descendants, resolve, set_child_subreaper, testing};

use crate::support::{MARKER_ENV, Marker, WAIT, runtime};

/// Selects the role.
const ROLE_ENV: &str = "SIDEWIRE_PROCESS_TEST_ROLE";

/// Spawns `sleep` through the crate, prints its pid, and waits to be SIGKILLed.
pub(crate) const PDEATHSIG_PARENT: &str = "pdeathsig-parent";
/// Resolves `$RESOLVE_COMMAND` and prints `ok <program> <PATH for the child or ->` or
/// `err <message>`.
pub(crate) const RESOLVE: &str = "resolve";
/// Becomes a subreaper, starts a child that leaves a `setsid` daemon behind, checks the daemon
/// was adopted, kills everything below itself, and prints `ok`.
pub(crate) const SUBREAPER: &str = "subreaper";

/// Starts this binary in `role`, carrying `marker`, with stdout piped.
pub(crate) fn start(role: &str, marker: &Marker, env: &[(&str, &str)]) -> Child {
    std::process::Command::new(std::env::current_exe().expect("the test binary"))
        .env(ROLE_ENV, role)
        .env(MARKER_ENV, &marker.value)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("re-execute the test binary")
}

/// The first line a role printed.
pub(crate) fn first_line(child: &mut Child) -> String {
    let stdout = child.stdout.as_mut().expect("piped stdout");
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).expect("read");
    line.trim_end().to_owned()
}

/// Runs the role this process was started in, if any.
pub(crate) fn run_role() -> Option<ExitCode> {
    let role = std::env::var(ROLE_ENV).ok()?;
    let ok = match role.as_str() {
        PDEATHSIG_PARENT => pdeathsig_parent(),
        RESOLVE => resolve_role(),
        SUBREAPER => subreaper(),
        other => panic!("unknown role {other}"),
    };
    Some(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

#[allow(clippy::print_stdout)]
fn say(line: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

fn pdeathsig_parent() -> bool {
    runtime().block_on(async {
        let spawned = Command::new("/bin/sleep")
            .arg("1000")
            .spawn()
            .expect("spawn");
        say(&spawned.process.pid().to_string());
        // Supervise forever; the test SIGKILLs this process, so no destructor ever runs.
        spawned.supervise.await;
        std::future::pending::<()>().await;
    });
    false
}

fn resolve_role() -> bool {
    let command = std::env::var("RESOLVE_COMMAND").expect("RESOLVE_COMMAND");
    runtime().block_on(async {
        match resolve(&command, None, None).await {
            Ok(resolved) => {
                let path = resolved
                    .path
                    .map_or_else(|| "-".to_owned(), |p| p.to_string_lossy().into_owned());
                say(&format!("ok {} {path}", resolved.program.display()));
            }
            Err(err) => say(&format!("err {err}")),
        }
    });
    true
}

fn subreaper() -> bool {
    let me = std::process::id();
    if let Err(err) = set_child_subreaper() {
        say(&format!("fail {err}"));
        return false;
    }
    let daemon = runtime().block_on(async {
        let mut spawned = Command::new("/bin/sh")
            .args(["-c", crate::support::DAEMON_THEN_EXIT_0])
            .spawn()
            .expect("spawn");
        let daemon = crate::support::start_daemon(&mut spawned).await;
        // The leader exits at once; the daemon holds stderr, so this takes the 250 ms bound.
        tokio::time::timeout(WAIT, spawned.supervise)
            .await
            .expect("supervision ends");
        daemon
    });
    // The daemon left the group and lost its parent: adopted by us, not by PID 1.
    let adopted = testing::wait_until(WAIT, || testing::parent_of(daemon) == Some(me));
    if !adopted {
        say(&format!(
            "fail the daemon's parent is {:?}",
            testing::parent_of(daemon)
        ));
        return false;
    }
    let killed = kill_descendants(Duration::from_secs(5)).expect("kill descendants");
    if killed == 0 || testing::is_alive(daemon) || !testing::descendants(me).is_empty() {
        say(&format!(
            "fail killed {killed}, daemon alive {}, below {:?}",
            testing::is_alive(daemon),
            testing::descendants(me)
        ));
        return false;
    }
    say("ok");
    true
}
