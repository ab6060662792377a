//! Spawning, typed exits, the stderr tail, and kills on drop and on the parent's death.

use sidewire_process::{Command, Exit, Redactor, testing};

use crate::roles;
use crate::support::{Marker, WAIT, read_line, runtime, within};

pub(crate) fn exits_are_typed_as_status_or_signal() {
    let marker = Marker::new("typed");
    runtime().block_on(async {
        for (script, expected) in [
            ("exit 3", Exit::Status(3)),
            ("exit 0", Exit::Status(0)),
            ("kill -TERM $$", Exit::Signal(15)),
            ("kill -KILL $$", Exit::Signal(9)),
        ] {
            let spawned = marker.sh(script).spawn().expect("spawn");
            let exit = within(WAIT, script, spawned.supervise).await;
            assert_eq!(exit, expected, "{script}");
            assert_eq!(spawned.process.exit(), Some(expected));
            assert_eq!(spawned.process.exited().await, expected);
        }
    });
}

pub(crate) fn stderr_is_kept_redacted_with_the_env_secrets_of_the_child() {
    let marker = Marker::new("tail");
    runtime().block_on(async {
        let spawned = marker
            .sh("echo \"key $SERVICE_TOKEN\" >&2; echo 'Authorization: Bearer abc' >&2; printf 'host secret-of-the-host' >&2; exit 1")
            .env("SERVICE_TOKEN", "svc-0123456789")
            .redactor(Redactor::new([("HOST_PASSWORD", "secret-of-the-host")]))
            .spawn()
            .expect("spawn");
        let monitor = spawned.process.monitor();
        assert_eq!(within(WAIT, "the exit", spawned.supervise).await, Exit::Status(1));
        assert_eq!(monitor.finished().await, Exit::Status(1));
        assert_eq!(
            monitor.stderr_tail(),
            "key [REDACTED]\nAuthorization: Bearer [REDACTED]\nhost [REDACTED]"
        );
    });
}

pub(crate) fn commands_that_are_not_paths_or_lack_a_directory_are_refused() {
    runtime().block_on(async {
        let err = Command::new("sh").spawn().unwrap_err();
        assert!(err.is_invalid(), "{err}");
        assert!(err.to_string().contains("resolve"), "{err}");
        let err = Command::new("/bin/sh")
            .current_dir("/nonexistent/dir")
            .spawn()
            .unwrap_err();
        assert!(err.is_invalid(), "{err}");
        assert!(
            err.to_string().contains("/nonexistent/dir does not exist"),
            "{err}"
        );
    });
}

pub(crate) fn a_program_that_cannot_start_is_a_spawn_error_with_its_cause() {
    runtime().block_on(async {
        let err = Command::new("/nonexistent/program").spawn().unwrap_err();
        assert!(err.is_spawn(), "{err}");
        assert_eq!(err.to_string(), "cannot start /nonexistent/program");
        let source = std::error::Error::source(&err).expect("a source");
        assert!(!source.to_string().is_empty());
    });
}

pub(crate) fn dropping_the_process_kills_the_group_without_a_runtime() {
    let marker = Marker::new("drop");
    let rt = runtime();
    let spawned = rt.block_on(async {
        marker
            .sh("sleep 1000 & sleep 1000 & wait")
            .spawn()
            .expect("spawn")
    });
    let pids = marker.wait_for(3);
    // No runtime from here on: the kill is synchronous.
    drop(rt);
    drop(spawned.process);
    let gone = testing::wait_until(WAIT, || pids.iter().all(|&p| !testing::is_alive(p)));
    assert!(gone, "survivors: {:?}", marker.alive());
    drop(spawned.supervise);
    drop((spawned.stdin, spawned.stdout));
}

pub(crate) fn dropping_an_unpolled_supervise_kills_and_reaps() {
    let marker = Marker::new("unpolled");
    runtime().block_on(async {
        let spawned = marker
            .sh("sleep 1000 & sleep 1000 & wait")
            .spawn()
            .expect("spawn");
        marker.wait_for(3);
        let monitor = spawned.process.monitor();
        drop(spawned.supervise);
        marker.assert_none_survive();
        // Reaped by the drop (or, past its 50 ms, published as unknown): never left waiting.
        let exit = within(WAIT, "the published exit", monitor.finished()).await;
        assert!(matches!(exit, Exit::Signal(9) | Exit::Unknown), "{exit:?}");
        drop(spawned.process);
    });
}

pub(crate) fn a_sigkilled_parent_takes_its_child_along() {
    let marker = Marker::new("pdeathsig");
    let mut parent = roles::start(roles::PDEATHSIG_PARENT, &marker, &[]);
    let child: u32 = roles::first_line(&mut parent).parse().expect("a pid");
    assert!(testing::is_alive(child));
    assert_eq!(testing::parent_of(child), Some(parent.id()));
    parent.kill().expect("SIGKILL the parent");
    parent.wait().expect("reap the parent");
    // The child got SIGKILL from the kernel; nobody ran a destructor.
    marker.assert_none_survive();
}

pub(crate) fn low_priority_children_run_at_nice_10() {
    let marker = Marker::new("nice");
    runtime().block_on(async {
        let mut spawned = marker
            .sh("echo ready; exec sleep 1000")
            .low_priority(true)
            .spawn()
            .expect("spawn");
        assert_eq!(read_line(&mut spawned.stdout).await, "ready");
        let nice = testing::nice_of(spawned.process.pid()).expect("the child's nice value");
        assert!(nice >= 10, "nice {nice}");
        spawned.process.kill();
        assert_eq!(
            within(WAIT, "the exit", spawned.supervise).await,
            Exit::Signal(9)
        );
    });
}

pub(crate) fn a_command_never_shows_its_env_values() {
    let mut command = Command::new("/bin/true");
    command.env("API_TOKEN", "tok-0123456789");
    let debug = format!("{command:?}");
    assert!(debug.contains("API_TOKEN"), "{debug}");
    assert!(!debug.contains("tok-0123456789"), "{debug}");
}

pub(crate) fn the_tail_can_be_redacted_with_a_later_redactor() {
    let marker = Marker::new("later-redactor");
    runtime().block_on(async {
        let spawned = marker
            .sh("echo 'rotated new-secret-value' >&2")
            .spawn()
            .expect("spawn");
        let monitor = spawned.process.monitor();
        within(WAIT, "the exit", spawned.supervise).await;
        assert_eq!(monitor.stderr_tail(), "rotated new-secret-value\n");
        let later = Redactor::new([("NEW_SECRET", "new-secret-value")]);
        assert_eq!(monitor.stderr_tail_with(&later), "rotated [REDACTED]\n");
    });
}
