//! Unit tests of the stderr tail: ext-host's ring rules and mcp's line rules, together.

use super::*;

fn text(tail: &Tail) -> String {
    tail.snapshot(&Redactor::default())
}

#[test]
fn the_tail_keeps_16_kib_and_starts_after_a_line_feed_once_bytes_were_lost() {
    let mut tail = Tail::new(TAIL_BYTES);
    tail.push(b"first line\nsecond");
    assert_eq!(text(&tail), "first line\nsecond");
    for i in 0..4000 {
        tail.push(format!("line {i} with some padding\n").as_bytes());
    }
    assert_eq!(tail.len(), TAIL_BYTES);
    let text = text(&tail);
    assert!(text.starts_with("line "), "{:?}", &text[..20]);
    assert!(text.ends_with("line 3999 with some padding\n"));
    // One push larger than the ring, with no LF at all, leaves nothing to show.
    let mut tail = Tail::new(TAIL_BYTES);
    tail.push(&vec![b'x'; 3 * TAIL_BYTES]);
    assert_eq!(tail.len(), TAIL_BYTES);
    assert_eq!(super::tests::text(&tail), "");
}

#[test]
fn a_cut_utf8_sequence_never_starts_the_tail() {
    let mut tail = Tail::new(TAIL_BYTES);
    let mut text = "é".repeat(TAIL_BYTES);
    text.push_str("\nafter");
    tail.push(text.as_bytes());
    assert_eq!(super::tests::text(&tail), "after");
}

#[test]
fn keeps_the_last_16_kib_of_whole_lines() {
    let mut tail = Tail::new(TAIL_BYTES);
    for i in 0..10_000 {
        tail.push(format!("line {i}\n").as_bytes());
    }
    let snapshot = text(&tail);
    assert!(snapshot.len() <= TAIL_BYTES);
    assert!(snapshot.len() > TAIL_BYTES - 20);
    assert!(snapshot.starts_with("line "));
    assert!(snapshot.ends_with("line 9999\n"));
}

#[test]
fn wrapping_in_odd_chunks_keeps_the_bytes_in_order() {
    let all: Vec<u8> = (0..1000u32).map(|i| b'a' + (i % 26) as u8).collect();
    for cap in [1, 2, 99, 100, 101, 999, 1000, 2000] {
        let mut tail = Tail::new(cap);
        let mut fed = 0;
        for size in [1, 7, 99, 100, 3, 250, 13].iter().cycle() {
            if fed >= all.len() {
                break;
            }
            let end = (fed + size).min(all.len());
            tail.push(&all[fed..end]);
            fed = end;
        }
        let keep = cap.min(all.len());
        assert_eq!(tail.raw(), &all[all.len() - keep..], "cap {cap}");
    }
}

#[test]
fn lines_are_redacted_and_cut() {
    let mut tail = Tail::new(TAIL_BYTES);
    tail.push(b"token=abc\r\nsplit ");
    tail.push(b"api_key=xyz");
    assert_eq!(text(&tail), "token=[REDACTED]\nsplit api_key=[REDACTED]");
    tail.push(b"\n");
    let long = vec![b'x'; LINE_CAP * 3];
    tail.push(&long);
    tail.push(b"\nafter\n");
    let snapshot = text(&tail);
    let cut_line = snapshot.lines().nth(2).unwrap();
    assert_eq!(cut_line.len(), LINE_CAP + CUT_MARK.len());
    assert!(snapshot.ends_with("after\n"));
}

#[test]
fn a_secret_straddling_the_line_cut_is_redacted_whole() {
    let secret = "s3cr3t-value-that-is-long";
    let redactor = Redactor::new([("MY_TOKEN", secret)]);
    let mut tail = Tail::new(TAIL_BYTES);
    let mut line = "x".repeat(LINE_CAP - 5);
    line.push_str(secret);
    line.push('\n');
    tail.push(line.as_bytes());
    let snapshot = tail.snapshot(&redactor);
    assert!(
        !snapshot.contains("s3cr3"),
        "{}",
        &snapshot[LINE_CAP - 10..]
    );
}

#[test]
fn env_secrets_are_redacted_at_snapshot_time() {
    let redactor = Redactor::new([("SERVICE_TOKEN", "abcdefgh12345")]);
    let mut tail = Tail::new(TAIL_BYTES);
    tail.push(b"using abcdefgh");
    tail.push(b"12345 now\n");
    assert_eq!(tail.snapshot(&redactor), "using [REDACTED] now\n");
}

#[test]
fn invalid_utf8_is_replaced_not_fatal() {
    let mut tail = Tail::new(TAIL_BYTES);
    tail.push(b"bad \xff\xfe bytes\n");
    assert_eq!(text(&tail), "bad \u{fffd}\u{fffd} bytes\n");
}

#[test]
fn a_snapshot_never_exceeds_the_cap_even_when_replacements_grow_it() {
    let mut tail = Tail::new(1024);
    for _ in 0..100 {
        tail.push(b"\xff\xff\xff\xff\xff\xff\n");
    }
    let snapshot = text(&tail);
    assert!(snapshot.len() <= 1024, "{}", snapshot.len());
    assert!(snapshot.starts_with('\u{fffd}'));
}

/// A subscriber that keeps the forwarded stderr lines as `process: message`.
struct Collect {
    lines: Arc<std::sync::Mutex<Vec<String>>>,
    on: bool,
}

impl tracing::Subscriber for Collect {
    fn enabled(&self, metadata: &tracing::Metadata<'_>) -> bool {
        self.on && metadata.target() == STDERR_TARGET
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        struct Fields(String, String);
        impl tracing::field::Visit for Fields {
            fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
                match field.name() {
                    "message" => self.1 = format!("{value:?}"),
                    "process" => self.0 = format!("{value:?}"),
                    _ => {}
                }
            }
        }
        let mut fields = Fields(String::new(), String::new());
        event.record(&mut fields);
        self.lines
            .lock()
            .unwrap()
            .push(format!("{}: {}", fields.0, fields.1));
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

fn forwarded(on: bool, chunks: &[&[u8]]) -> Vec<String> {
    let lines = Arc::new(std::sync::Mutex::new(Vec::new()));
    let collect = Collect {
        lines: Arc::clone(&lines),
        on,
    };
    tracing::subscriber::with_default(collect, || {
        let mut forward = Forward::new("srv".into(), Redactor::new([("A_TOKEN", "abcdefgh")]));
        for chunk in chunks {
            forward.push(chunk);
        }
        forward.finish();
    });
    lines.lock().unwrap().clone()
}

#[test]
fn forwarded_lines_are_whole_redacted_and_cut() {
    let long = vec![b'y'; LINE_CAP * 2];
    let lines = forwarded(
        true,
        &[b"one tok", b"en=abc\r\ntwo abcdefgh\n", &long, b"\nlast"],
    );
    assert_eq!(lines.len(), 4, "{lines:?}");
    assert_eq!(lines[0], "srv: one token=[REDACTED]");
    assert_eq!(lines[1], "srv: two [REDACTED]");
    assert_eq!(lines[2].len(), "srv: ".len() + LINE_CAP + CUT_MARK.len());
    assert!(lines[2].ends_with(CUT_MARK));
    assert_eq!(lines[3], "srv: last");
}

#[test]
fn nothing_is_forwarded_or_split_while_no_subscriber_wants_it() {
    assert!(forwarded(false, &[b"one\ntwo\n"]).is_empty());
}
