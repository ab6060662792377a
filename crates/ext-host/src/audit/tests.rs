//! Unit tests of the audit log: durable appends, every way the file can be unwritable, the
//! deadline, the fresh line after a failed write, and the reason cap.

use std::time::Duration;

use super::*;

const LONG: Duration = Duration::from_secs(30);

fn record(reason: &str) -> AuditRecord {
    AuditRecord::new("acme", "allow", reason.to_owned())
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn appends_one_line_per_record_creating_the_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("deep/er/audit.jsonl");
    let log = AuditLog::new(path.clone());
    rt().block_on(async {
        log.append(&record("one"), LONG).await.unwrap();
        log.append(&record("two"), LONG).await.unwrap();
    });
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[1]["reason"], "two");
    assert_eq!(lines[0].as_object().unwrap().len(), 6);
}

#[test]
fn a_directory_in_its_place_fails() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("audit.jsonl");
    std::fs::create_dir(&path).unwrap();
    let err = rt()
        .block_on(AuditLog::new(path).append(&record("x"), LONG))
        .unwrap_err();
    assert!(matches!(err, AuditFailure::Io { .. }), "{err:?}");
}

#[test]
fn a_fifo_in_its_place_fails_at_once_with_or_without_a_reader() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("audit.jsonl");
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        &path,
        rustix::fs::Mode::from_raw_mode(0o600),
    )
    .unwrap();
    // Nobody reads it: a blocking open would wait for ever; a non-blocking one fails.
    let err = rt()
        .block_on(AuditLog::new(path.clone()).append(&record("x"), LONG))
        .unwrap_err();
    assert!(matches!(err, AuditFailure::Io { .. }), "{err:?}");
    // Somebody reads it: it opens, and is refused as not a regular file.
    let _reader = OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open(&path)
        .unwrap();
    let err = rt()
        .block_on(AuditLog::new(path).append(&record("x"), LONG))
        .unwrap_err();
    assert!(
        matches!(err, AuditFailure::NotAFile { kind: "FIFO", .. }),
        "{err:?}"
    );
}

#[test]
fn a_device_behind_a_symlink_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("audit.jsonl");
    std::os::unix::fs::symlink("/dev/full", &path).unwrap();
    let err = rt()
        .block_on(AuditLog::new(path).append(&record("x"), LONG))
        .unwrap_err();
    assert!(
        matches!(err, AuditFailure::NotAFile { kind: "device", .. }),
        "{err:?}"
    );
}

#[test]
fn a_write_that_cannot_start_in_time_times_out() {
    let tmp = tempfile::tempdir().unwrap();
    let log = AuditLog::new(tmp.path().join("audit.jsonl"));
    rt().block_on(async {
        // Another append holds the log (as a write stuck in the kernel would).
        let held = Arc::clone(&log.state).lock_owned().await;
        let err = log
            .append(&record("x"), Duration::from_millis(20))
            .await
            .unwrap_err();
        assert!(matches!(err, AuditFailure::Timeout { .. }), "{err:?}");
        drop(held);
        log.append(&record("y"), LONG).await.unwrap();
    });
}

#[test]
fn a_failed_write_reopens_and_starts_a_fresh_line() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("audit.jsonl");
    let mut state = State::default();
    // A partial line, as a full disk leaves one.
    std::fs::write(&path, b"{\"time\":\"2025").unwrap();
    state.broken_line = true;
    write_line(&path, &mut state, b"{\"a\":1}\n").unwrap();
    assert!(!state.broken_line);
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().last(), Some("{\"a\":1}"));

    // A write that fails drops the handle and marks the line.
    let full = tmp.path().join("full");
    std::os::unix::fs::symlink("/dev/full", &full).unwrap();
    let mut state = State {
        file: Some(OpenOptions::new().append(true).open(&full).unwrap()),
        broken_line: false,
    };
    let err = write_line(&full, &mut state, b"{}\n").unwrap_err();
    assert!(matches!(err, AuditFailure::Io { .. }), "{err:?}");
    assert!(state.broken_line && state.file.is_none());
}

#[test]
fn long_reasons_are_cut_on_a_char_boundary_and_marked() {
    let short = record("fine");
    assert_eq!(short.reason, "fine");
    let long = record(&"é".repeat(AUDIT_REASON_BYTES));
    assert!(long.reason.len() <= AUDIT_REASON_BYTES);
    assert!(long.reason.ends_with(CUT_MARK));
    assert!(long.reason.starts_with("éé"));
    assert_eq!(cut("abcdef".to_owned(), 6), "abcdef");
}
