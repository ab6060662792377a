//! Unit tests of the stderr tail.

use super::*;

#[test]
fn keeps_the_last_16_kib_of_whole_lines() {
    let mut tail = StderrTail::new(None);
    for i in 0..10_000 {
        tail.push(format!("line {i}\n").as_bytes());
    }
    let snapshot = tail.snapshot();
    assert!(snapshot.len() <= TAIL_BYTES);
    assert!(snapshot.len() > TAIL_BYTES - 20);
    assert!(snapshot.ends_with("line 9999\n"));
}

#[test]
fn lines_are_redacted_and_cut() {
    let mut tail = StderrTail::new(None);
    tail.push(b"token=abc\r\nsplit ");
    tail.push(b"api_key=xyz");
    assert_eq!(
        tail.snapshot(),
        "token=[REDACTED]\nsplit api_key=[REDACTED]"
    );
    tail.push(b"\n");
    let long = vec![b'x'; LINE_CAP * 3];
    tail.push(&long);
    tail.push(b"\nafter\n");
    let snapshot = tail.snapshot();
    let cut_line = snapshot.lines().nth(2).unwrap();
    assert_eq!(cut_line.len(), LINE_CAP + " [line cut at 4 KiB]".len());
    assert!(snapshot.ends_with("after\n"));
}

#[test]
fn invalid_utf8_is_replaced_not_fatal() {
    let mut tail = StderrTail::new(Some("srv".into()));
    tail.push(b"bad \xff\xfe bytes\n");
    assert_eq!(tail.snapshot(), "bad \u{fffd}\u{fffd} bytes\n");
}

#[tokio::test]
async fn drain_reads_to_the_end() {
    let tail = Arc::new(Mutex::new(StderrTail::new(None)));
    let data: &[u8] = b"one\ntwo\nthree";
    drain(data, Arc::clone(&tail)).await;
    assert_eq!(lock(&tail).snapshot(), "one\ntwo\nthree");
}
