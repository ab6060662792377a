//! The audit log as a security record (§11): an override of the host's `deny` is applied only
//! once its record is durable. Each way the log can be unwritable (a read-only file, a
//! directory, a FIFO, a full device) keeps the host's decision, says why in the trace, warns
//! every time, and loses nothing else in the chain.

use std::path::{Path, PathBuf};

use serde_json::json;
use sidewire_ext_host::{HostEvent, HostEvents, Outcome, TraceResult, TraceRole};
use sidewire_ext_protocol::{DecisionKind, HookPoint, Reason, Verdict};

use crate::support::*;

/// The ways to make the audit log unwritable; each returns the log's path, or `None` when this
/// machine cannot make that kind (printed as `SKIPPED:`).
fn unwritable(kind: &str, dir: &Path) -> Option<PathBuf> {
    let path = dir.join("audit.jsonl");
    match kind {
        "read-only file" => {
            std::fs::write(&path, b"").unwrap();
            let mut perms = std::fs::metadata(&path).unwrap().permissions();
            std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o444);
            std::fs::set_permissions(&path, perms).unwrap();
            if std::fs::OpenOptions::new().append(true).open(&path).is_ok() {
                // Root ignores permission bits; an immutable file is read-only even for root.
                let status = std::process::Command::new("chattr")
                    .arg("+i")
                    .arg(&path)
                    .status();
                if !status.is_ok_and(|s| s.success()) {
                    use std::io::Write as _;
                    let _ = std::io::stdout().write_all(
                        b"SKIPPED: read-only audit log (running as root without chattr)\n",
                    );
                    return None;
                }
            }
        }
        "directory" => std::fs::create_dir(&path).unwrap(),
        "FIFO" => rustix::fs::mkfifoat(
            rustix::fs::CWD,
            &path,
            rustix::fs::Mode::from_raw_mode(0o600),
        )
        .unwrap(),
        "full disk" => std::os::unix::fs::symlink("/dev/full", &path).unwrap(),
        other => unreachable!("no such kind {other}"),
    }
    Some(path)
}

/// Undoes what `unwritable` did that would stop the temporary directory's removal.
fn restore(path: &Path) {
    let _ = std::process::Command::new("chattr")
        .arg("-i")
        .arg(path)
        .stderr(std::process::Stdio::null())
        .status();
}

fn warnings_about(events: &mut HostEvents, plugin: &str) -> usize {
    drain(events)
        .into_iter()
        .filter(|e| matches!(e, HostEvent::Warning { plugin: Some(p), .. } if p == plugin))
        .count()
}

fn unaudited(outcome: &Outcome, plugin: &str) -> bool {
    outcome.trace.iter().any(|entry| {
        entry.plugin == plugin
            && matches!(
                entry.result,
                TraceResult::Unaudited {
                    decision: DecisionKind::Allow,
                    ..
                }
            )
    })
}

pub(crate) async fn an_override_is_never_granted_without_its_record() {
    for kind in ["read-only file", "directory", "FIFO", "full disk"] {
        let env = Env::new();
        let Some(log) = unwritable(kind, &env.path(".")) else {
            continue;
        };
        env.plugin("a-allow")
            .intercepts(&["permission.decision"])
            .priority(-1)
            .on(
                "permission.decision",
                json!({"decision":"allow","reason":"trust me"}),
            )
            .install();
        env.plugin("b-watch")
            .intercepts(&["permission.decision"])
            .record("b.jsonl")
            .install();
        let (runtime, mut events) = env.boot_with(env.config().audit_log(&log)).await.unwrap();
        for round in 1..=2 {
            let outcome = runtime
                .intercept(HookPoint::PermissionDecision, permission(Verdict::Deny))
                .await
                .unwrap();
            // The host's decision stands, and the operation does not proceed.
            assert_eq!(outcome.permission, Some(Verdict::Deny), "{kind}");
            assert!(!outcome.proceeds(), "{kind}");
            assert!(outcome.audit.is_none(), "{kind}");
            // The trace says why, and the rest of the chain still ran.
            assert!(
                unaudited(&outcome, "a-allow"),
                "{kind}: {:?}",
                outcome.trace
            );
            assert_eq!(outcome.trace.len(), 2, "{kind}: {:?}", outcome.trace);
            assert_eq!(outcome.trace[1].plugin, "b-watch");
            assert_eq!(
                outcome.trace[1].result,
                TraceResult::Decided(DecisionKind::Continue)
            );
            // Every such failure is reported, not only the first (the warning is sent before
            // the walk returns).
            assert_eq!(warnings_about(&mut events, "a-allow"), 1, "{kind} #{round}");
        }
        assert_eq!(
            recorded(&env, "b.jsonl")
                .iter()
                .filter(|f| f["method"] == "extension/intercept")
                .count(),
            2,
            "{kind}"
        );
        env.finish(runtime).await;
        restore(&log);
    }
}

pub(crate) async fn a_required_or_slot_owner_override_without_its_record_fails_the_operation() {
    let env = Env::new();
    let log = unwritable("directory", &env.path(".")).unwrap();
    env.plugin("strict")
        .required()
        .intercepts(&["permission.decision"])
        .on("permission.decision", json!({"decision":"allow"}))
        .install();
    let (runtime, mut events) = env.boot_with(env.config().audit_log(&log)).await.unwrap();
    let err = runtime
        .intercept(HookPoint::PermissionDecision, permission(Verdict::Deny))
        .await
        .unwrap_err();
    let failure = err.operation().expect("an operation failure");
    assert_eq!(failure.plugin, "strict");
    assert_eq!(failure.reason, Some(Reason::Internal));
    assert!(matches!(
        failure.trace.last().map(|e| &e.result),
        Some(TraceResult::Unaudited { .. })
    ));
    assert_eq!(warnings_about(&mut events, "strict"), 1);
    env.finish(runtime).await;

    let env = Env::new();
    let log = unwritable("full disk", &env.path(".")).unwrap();
    let perm = json!({"name":"shell","arguments":"","hostDecision":"allow"});
    env.plugin("owner")
        .replaces(&["permission"])
        .on(
            "permission.decision",
            json!({"decision":"replace","replacement":perm}),
        )
        .install();
    let (runtime, mut events) = env.boot_with(env.config().audit_log(&log)).await.unwrap();
    let err = runtime
        .intercept(HookPoint::PermissionDecision, permission(Verdict::Deny))
        .await
        .unwrap_err();
    let failure = err.operation().expect("an operation failure");
    assert_eq!(failure.reason, Some(Reason::Internal));
    let last = failure.trace.last().unwrap();
    assert_eq!(last.role, TraceRole::SlotOwner);
    assert!(
        matches!(
            last.result,
            TraceResult::Unaudited {
                decision: DecisionKind::Replace,
                ..
            }
        ),
        "{:?}",
        last.result
    );
    assert_eq!(warnings_about(&mut events, "owner"), 1);
    // An owner replacing an allow with an allow writes nothing and needs no log.
    let outcome = runtime
        .intercept(HookPoint::PermissionDecision, permission(Verdict::Allow))
        .await
        .unwrap();
    assert!(outcome.proceeds());
    env.finish(runtime).await;
}

pub(crate) async fn a_deny_or_continue_writes_no_audit_line() {
    let env = Env::new();
    env.plugin("denier")
        .intercepts(&["permission.decision"])
        .on("permission.decision", json!({"decision":"deny"}))
        .install();
    let (runtime, _events) = env.boot().await;
    for host in [Verdict::Deny, Verdict::Allow] {
        let outcome = runtime
            .intercept(HookPoint::PermissionDecision, permission(host))
            .await
            .unwrap();
        assert_eq!(outcome.permission, Some(Verdict::Deny));
        assert!(outcome.audit.is_none());
        assert_eq!(
            outcome.trace[0].result,
            TraceResult::Decided(DecisionKind::Deny)
        );
    }
    assert!(!env.state.join("audit.jsonl").exists());
    env.finish(runtime).await;
}
