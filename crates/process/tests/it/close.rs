//! The bounded close sequence: stdin, then SIGTERM, then SIGKILL, each within its budget.

use std::time::{Duration, Instant};

use sidewire_process::{CloseBudgets, CloseStep, Closed, Exit};

use crate::support::{Marker, WAIT, read_line, runtime, within};

const SHORT: CloseBudgets = CloseBudgets {
    stdin: Duration::from_millis(100),
    term: Some(Duration::from_millis(100)),
    kill: Duration::from_secs(2),
};

pub(crate) fn a_child_ignoring_eof_and_sigterm_is_killed_after_the_budgets() {
    let marker = Marker::new("stubborn");
    runtime().block_on(async {
        let mut spawned = marker
            .sh("trap '' TERM; echo ready; sleep 1000 & exec sleep 1000")
            .spawn()
            .expect("spawn");
        assert_eq!(read_line(&mut spawned.stdout).await, "ready");
        let supervise = tokio::spawn(spawned.supervise);
        let stdin = spawned.stdin;
        let start = Instant::now();
        let exit = within(
            WAIT,
            "the close",
            spawned.process.close(SHORT, async move { drop(stdin) }),
        )
        .await;
        let took = start.elapsed();
        assert_eq!(
            exit,
            Closed {
                exit: Some(Exit::Signal(9)),
                step: CloseStep::Kill
            }
        );
        assert!(took >= Duration::from_millis(200), "{took:?}");
        assert!(took < Duration::from_secs(3), "{took:?}");
        assert_eq!(supervise.await.unwrap(), Exit::Signal(9));
    });
}

pub(crate) fn a_child_exiting_on_eof_is_not_signalled() {
    let marker = Marker::new("eof");
    runtime().block_on(async {
        let spawned = marker.command("/bin/cat").spawn().expect("spawn");
        let supervise = tokio::spawn(spawned.supervise);
        let stdin = spawned.stdin;
        let patient = CloseBudgets {
            stdin: Duration::from_secs(10),
            ..SHORT
        };
        let exit = within(
            WAIT * 2,
            "the close",
            spawned.process.close(patient, async move { drop(stdin) }),
        )
        .await;
        assert_eq!(
            exit,
            Closed {
                exit: Some(Exit::Status(0)),
                step: CloseStep::Stdin
            }
        );
        assert_eq!(supervise.await.unwrap(), Exit::Status(0));
    });
}

pub(crate) fn a_child_ignoring_eof_ends_on_sigterm() {
    let marker = Marker::new("term");
    runtime().block_on(async {
        let spawned = marker
            .command("/bin/sleep")
            .arg("1000")
            .spawn()
            .expect("spawn");
        let supervise = tokio::spawn(spawned.supervise);
        let budgets = CloseBudgets {
            term: Some(Duration::from_secs(10)),
            ..SHORT
        };
        let exit = within(
            WAIT * 2,
            "the close",
            spawned.process.close(budgets, async {}),
        )
        .await;
        assert_eq!(
            exit,
            Closed {
                exit: Some(Exit::Signal(15)),
                step: CloseStep::Term
            }
        );
        assert_eq!(supervise.await.unwrap(), Exit::Signal(15));
        drop(spawned.stdin);
    });
}

pub(crate) fn concurrent_closes_share_one_sequence() {
    let marker = Marker::new("concurrent");
    runtime().block_on(async {
        let spawned = marker
            .command("/bin/sleep")
            .arg("1000")
            .spawn()
            .expect("spawn");
        let supervise = tokio::spawn(spawned.supervise);
        let process = spawned.process;
        let second_ran = std::sync::atomic::AtomicBool::new(false);
        let (a, b) = within(WAIT, "both closes", async {
            tokio::join!(
                process.close(SHORT, async {}),
                process.close(CloseBudgets::MCP_STDIO, async {
                    second_ran.store(true, std::sync::atomic::Ordering::SeqCst);
                })
            )
        })
        .await;
        assert_eq!(a.exit, Some(Exit::Signal(15)));
        assert_eq!(a, b);
        assert!(!second_ran.load(std::sync::atomic::Ordering::SeqCst));
        // A later close returns the same at once.
        let start = Instant::now();
        assert_eq!(process.close(SHORT, async {}).await, a);
        assert!(start.elapsed() < Duration::from_millis(100));
        supervise.await.unwrap();
        drop(spawned.stdin);
    });
}

pub(crate) fn without_supervision_close_kills_and_reports_nothing() {
    let marker = Marker::new("unsupervised");
    runtime().block_on(async {
        let spawned = marker
            .sh("sleep 1000 & sleep 1000 & wait")
            .spawn()
            .expect("spawn");
        marker.wait_for(3);
        let budgets = CloseBudgets {
            term: None,
            kill: Duration::from_millis(100),
            ..SHORT
        };
        // Nobody runs `supervise`, so no reap is observed; the group is killed all the same.
        assert_eq!(
            spawned.process.close(budgets, async {}).await,
            Closed {
                exit: None,
                step: CloseStep::Kill
            }
        );
        marker.assert_none_survive();
        drop(spawned.supervise);
    });
}
