use super::*;

#[test]
fn the_tail_keeps_16_kib_and_starts_after_a_line_feed_once_bytes_were_lost() {
    let mut tail = Tail::default();
    tail.push(b"first line\nsecond");
    assert_eq!(tail.text(), "first line\nsecond");
    for i in 0..4000 {
        tail.push(format!("line {i} with some padding\n").as_bytes());
    }
    assert_eq!(tail.len(), STDERR_TAIL_BYTES_FOR_TEST);
    let text = tail.text();
    assert!(text.starts_with("line "), "{:?}", &text[..20]);
    assert!(text.ends_with("line 3999 with some padding\n"));
    // One push larger than the ring, with no LF at all, leaves nothing to show.
    let mut tail = Tail::default();
    tail.push(&vec![b'x'; 3 * STDERR_TAIL_BYTES_FOR_TEST]);
    assert_eq!(tail.len(), STDERR_TAIL_BYTES_FOR_TEST);
    assert_eq!(tail.text(), "");
}

#[test]
fn a_cut_utf8_sequence_never_starts_the_tail() {
    let mut tail = Tail::default();
    let mut text = "é".repeat(STDERR_TAIL_BYTES_FOR_TEST);
    text.push_str("\nafter");
    tail.push(text.as_bytes());
    assert_eq!(tail.text(), "after");
}

const STDERR_TAIL_BYTES_FOR_TEST: usize = sidewire_ext_protocol::STDERR_TAIL_BYTES;

#[test]
fn exits_describe_themselves_as_the_spec_words_them() {
    assert_eq!(Exit::Status(3).to_string(), "exited with status 3");
    assert_eq!(Exit::Signal(9).to_string(), "killed by signal 9");
}
