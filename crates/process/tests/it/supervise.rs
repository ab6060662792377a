//! The supervision future: prompt ends, bounded stderr, the group killed at the reap.

use std::time::{Duration, Instant};

use sidewire_process::{Exit, LINE_CAP, TAIL_BYTES, testing};

use crate::support::{Marker, WAIT, read_line, runtime, within};

pub(crate) fn supervise_ends_promptly_when_a_setsid_daemon_holds_the_pipes() {
    let marker = Marker::new("setsid");
    runtime().block_on(async {
        let mut spawned = marker
            .sh(crate::support::DAEMON_THEN_EXIT_4)
            .spawn()
            .expect("spawn");
        let daemon = crate::support::start_daemon(&mut spawned).await;
        let monitor = spawned.process.monitor();
        let start = Instant::now();
        let supervise = tokio::spawn(spawned.supervise);
        // The reap is observable although the daemon still holds stdout and stderr.
        let exited = within(WAIT, "the reap", monitor.exited()).await;
        assert_eq!(exited, Exit::Status(4));
        let exit = within(WAIT, "supervision", supervise).await.unwrap();
        let took = start.elapsed();
        assert_eq!(exit, Exit::Status(4));
        // The leader exits at once; what bounds this is the 250 ms of stderr after the reap.
        assert!(took < Duration::from_millis(2500), "{took:?}");
        // The daemon left the group, so the group kill missed it: that is the subreaper's job.
        assert!(testing::is_alive(daemon));
        assert_ne!(testing::group_of(daemon), Some(monitor.pid()));
        testing::kill_all(&[daemon]);
    });
}

pub(crate) fn a_stderr_flood_neither_blocks_nor_grows_the_tail() {
    let marker = Marker::new("flood");
    runtime().block_on(async {
        // 64 MiB of lines, then a last line.
        let spawned = marker
            .sh("yes 'noise with token=abc and more' | head -c 67108864 >&2; echo >&2; echo 'last api_key=xyz' >&2")
            .spawn()
            .expect("spawn");
        let monitor = spawned.process.monitor();
        let exit = within(Duration::from_secs(60), "the flood", spawned.supervise).await;
        assert_eq!(exit, Exit::Status(0));
        let tail = monitor.stderr_tail();
        assert!(tail.len() <= TAIL_BYTES, "{}", tail.len());
        assert!(tail.len() > TAIL_BYTES / 2, "{}", tail.len());
        assert!(tail.ends_with("last api_key=[REDACTED]\n"), "{}", &tail[tail.len() - 80..]);
        assert!(!tail.contains("abc"));
        assert!(tail.lines().all(|line| line.len() <= LINE_CAP + 32));
    });
}

pub(crate) fn what_the_leader_leaves_in_its_group_is_killed_at_the_reap() {
    let marker = Marker::new("leftovers");
    runtime().block_on(async {
        let mut spawned = marker
            .sh("sleep 1000 & echo $!; exit 0")
            .spawn()
            .expect("spawn");
        let grandchild: u32 = read_line(&mut spawned.stdout).await.parse().expect("a pid");
        assert_eq!(testing::group_of(grandchild), Some(spawned.process.pid()));
        let exit = within(WAIT, "supervision", spawned.supervise).await;
        assert_eq!(exit, Exit::Status(0));
        marker.assert_none_survive();
        // Reaped: signalling the group again is a no-op, whatever now owns the id.
        spawned.process.kill();
        spawned.process.terminate();
    });
}

pub(crate) fn dropping_supervision_while_it_reads_the_last_of_stderr_still_finishes() {
    let marker = Marker::new("drop-late");
    runtime().block_on(async {
        let mut spawned = marker
            .sh(crate::support::DAEMON_THEN_EXIT_0)
            .spawn()
            .expect("spawn");
        let daemon = crate::support::start_daemon(&mut spawned).await;
        let monitor = spawned.process.monitor();
        let mut supervise = spawned.supervise;
        // The reap comes first; the daemon holding stderr keeps supervision 250 ms longer.
        within(WAIT, "the reap", async {
            tokio::select! {
                exit = monitor.exited() => assert_eq!(exit, Exit::Status(0)),
                _ = &mut supervise => {}
            }
        })
        .await;
        drop(supervise);
        assert_eq!(
            within(WAIT, "finished", monitor.finished()).await,
            Exit::Status(0)
        );
        testing::kill_all(&[daemon]);
    });
}
