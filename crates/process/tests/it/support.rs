//! Test support: a marker per test that every child carries, runtimes, bounded waits, and the
//! check that no marked process outlives a test.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use sidewire_process::{Command, testing};

/// The environment variable that marks every process a test starts.
pub(crate) const MARKER_ENV: &str = "SIDEWIRE_PROCESS_TEST_MARKER";

/// Every wait in a test is bounded by this unless the test says otherwise.
pub(crate) const WAIT: Duration = Duration::from_secs(10);

/// A unique marker; dropping it asserts that no process carrying it is alive (and kills any
/// that are, so a failure does not leak).
pub(crate) struct Marker {
    pub(crate) value: String,
}

impl Marker {
    pub(crate) fn new(test: &str) -> Marker {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        Marker {
            value: format!("{}-{test}-{n}", std::process::id()),
        }
    }

    /// A command for `program` (a path) carrying this marker.
    pub(crate) fn command(&self, program: &str) -> Command {
        let mut command = Command::new(program);
        command.env(MARKER_ENV, &self.value);
        command
    }

    /// `sh -c script` carrying this marker.
    pub(crate) fn sh(&self, script: &str) -> Command {
        let mut command = self.command("/bin/sh");
        command.args(["-c", script]);
        command
    }

    /// The live processes carrying this marker.
    pub(crate) fn alive(&self) -> Vec<u32> {
        testing::with_env(MARKER_ENV, &self.value)
    }

    /// Waits until exactly `n` marked processes are alive; their pids.
    pub(crate) fn wait_for(&self, n: usize) -> Vec<u32> {
        let mut pids = Vec::new();
        let ok = testing::wait_until(WAIT, || {
            pids = self.alive();
            pids.len() == n
        });
        assert!(ok, "expected {n} marked processes, found {pids:?}");
        pids
    }

    /// Asserts that every marked process is gone (within the bound).
    pub(crate) fn assert_none_survive(&self) {
        let left = testing::survivors_with_env(MARKER_ENV, &self.value, WAIT);
        testing::kill_all(&left);
        assert!(left.is_empty(), "processes outlived the test: {left:?}");
    }
}

impl Drop for Marker {
    fn drop(&mut self) {
        if std::thread::panicking() {
            testing::kill_all(&self.alive());
        } else {
            self.assert_none_survive();
        }
    }
}

/// A current-thread runtime with I/O and time (children are spawned on the test's thread,
/// which outlives them: the death signal follows the spawning thread).
pub(crate) fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
}

pub(crate) use sidewire_test_support::within;

/// Reads one line from a child's stdout (bounded).
pub(crate) async fn read_line(stdout: &mut tokio::process::ChildStdout) -> String {
    use tokio::io::AsyncReadExt;
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    within(WAIT, "a line on stdout", async {
        while stdout.read(&mut byte).await.expect("stdout") == 1 && byte[0] != b'\n' {
            line.push(byte[0]);
        }
    })
    .await;
    String::from_utf8(line).expect("UTF-8")
}

/// A leader that starts a `setsid` daemon holding its stdout and stderr, and exits 4 once told
/// to on stdin. The daemon prints its pid after leaving the group, so the leader's exit (and the
/// group kill at its reap) cannot race the `setsid`.
pub(crate) const DAEMON_THEN_EXIT_4: &str =
    "setsid sh -c 'echo $$; exec sleep 1000' & read -r go; exit 4";
/// The same, exiting 0.
pub(crate) const DAEMON_THEN_EXIT_0: &str =
    "setsid sh -c 'echo $$; exec sleep 1000' & read -r go; exit 0";

/// Reads the daemon's pid from a `DAEMON_THEN_EXIT_*` leader, then lets the leader exit.
pub(crate) async fn start_daemon(spawned: &mut sidewire_process::Spawned) -> u32 {
    use tokio::io::AsyncWriteExt;
    let daemon: u32 = read_line(&mut spawned.stdout).await.parse().expect("a pid");
    spawned
        .stdin
        .write_all(b"go\n")
        .await
        .expect("tell the leader");
    daemon
}
