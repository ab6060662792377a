use std::panic;

use proptest::collection::vec;
use proptest::prelude::*;

use super::*;

/// A cap no test input reaches.
const ROOMY: usize = 1 << 20;

fn message(data: &str) -> SseStep {
    SseStep::Event(SseEvent {
        event: "message".to_owned(),
        data: data.to_owned(),
        id: None,
        retry: None,
    })
}

fn event(kind: &str, data: &str, id: Option<&str>, retry: Option<u64>) -> SseStep {
    SseStep::Event(SseEvent {
        event: kind.to_owned(),
        data: data.to_owned(),
        id: id.map(str::to_owned),
        retry,
    })
}

fn too_large(limit: usize, prefix: &[u8]) -> SseStep {
    SseStep::TooLarge {
        limit,
        prefix: Bytes::copy_from_slice(prefix),
    }
}

/// Decodes `input` given all at once and in one-byte reads, checks both agree, and returns the
/// outcome.
fn decode(cap: usize, input: &[u8]) -> SseRun {
    let whole = feed_sse(cap, input, &[]);
    let bytewise = feed_sse(cap, input, &[1]);
    assert_eq!(
        whole.steps, bytewise.steps,
        "one-byte reads changed the result"
    );
    assert_eq!(whole.last_event_id, bytewise.last_event_id);
    assert_eq!(whole.retry, bytewise.retry);
    whole
}

fn steps(input: &str) -> Vec<SseStep> {
    decode(ROOMY, input.as_bytes()).steps
}

/// Appends `bytes` to `buf` and decodes until the codec wants more.
fn push(codec: &mut SseCodec, buf: &mut BytesMut, bytes: &[u8]) -> Vec<SseEvent> {
    buf.extend_from_slice(bytes);
    let mut out = Vec::new();
    while let Some(event) = codec.decode(buf).expect("no decode error") {
        out.push(event);
    }
    out
}

#[test]
fn crlf_line_ends() {
    assert_eq!(
        steps("event: a\r\ndata: 1\r\ndata: 2\r\n\r\ndata: 3\r\n\r\n"),
        vec![event("a", "1\n2", None, None), message("3")]
    );
}

#[test]
fn cr_only_line_ends() {
    assert_eq!(
        steps("event: a\rdata: 1\rdata: 2\r\rdata: 3\r\r"),
        vec![event("a", "1\n2", None, None), message("3")]
    );
}

#[test]
fn lf_only_line_ends() {
    assert_eq!(
        steps("event: a\ndata: 1\ndata: 2\n\ndata: 3\n\n"),
        vec![event("a", "1\n2", None, None), message("3")]
    );
}

#[test]
fn mixed_line_ends_in_one_stream() {
    assert_eq!(
        steps("data: 1\rdata: 2\ndata: 3\r\n\ndata: 4\n\r"),
        vec![message("1\n2\n3"), message("4")]
    );
}

#[test]
fn cr_at_read_end_then_lf_is_one_line_end() {
    let mut codec = SseCodec::new(ROOMY);
    let mut buf = BytesMut::new();
    assert_eq!(push(&mut codec, &mut buf, b"data: a\r"), vec![]);
    // Were the LF a second line end, the line between would be blank and dispatch "a" alone.
    let got = push(&mut codec, &mut buf, b"\ndata: b\r\n\r\n");
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].data, "a\nb");
}

#[test]
fn cr_at_read_end_dispatches_at_once_and_swallows_the_next_lf() {
    let mut codec = SseCodec::new(ROOMY);
    let mut buf = BytesMut::new();
    // The blank line's CR is enough to dispatch: a server may pause right after it.
    let got = push(&mut codec, &mut buf, b"data: a\r\n\r");
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].data, "a");
    let got = push(&mut codec, &mut buf, b"\ndata: b\r\n\r\n");
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].data, "b");
}

#[test]
fn cr_at_read_end_then_other_byte_ends_the_line() {
    let mut codec = SseCodec::new(ROOMY);
    let mut buf = BytesMut::new();
    assert_eq!(push(&mut codec, &mut buf, b"data: a\r"), vec![]);
    let got = push(&mut codec, &mut buf, b"data: b\r\r");
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].data, "a\nb");
}

#[test]
fn a_partial_block_is_not_searched_again() {
    let mut codec = SseCodec::new(ROOMY);
    let mut buf = BytesMut::new();
    for piece in [&b"event: x\ndata: "[..], b"abc", b"def\r", b"\nid: 1", b"2"] {
        assert_eq!(push(&mut codec, &mut buf, piece), vec![]);
        // The next search starts where this one stopped: at the end of what is buffered.
        assert_eq!(codec.scanned.max(codec.line_start), buf.len());
    }
    let got = push(&mut codec, &mut buf, b"\n\n");
    assert_eq!(got[0].data, "abcdef");
    assert_eq!(got[0].id.as_deref(), Some("12"));
}

#[test]
fn multi_line_data_is_joined_with_lf() {
    assert_eq!(
        steps("data: {\ndata:   \"a\": 1\ndata: }\n\n"),
        vec![message("{\n  \"a\": 1\n}")]
    );
}

#[test]
fn trailing_empty_data_line_keeps_one_newline() {
    assert_eq!(steps("data: a\ndata\n\n"), vec![message("a\n")]);
    assert_eq!(steps("data: a\ndata:\ndata: \n\n"), vec![message("a\n\n")]);
}

#[test]
fn a_lone_empty_data_line_dispatches_an_empty_event() {
    assert_eq!(steps("data\n\n"), vec![message("")]);
}

#[test]
fn event_field_sets_the_type_and_empty_means_message() {
    assert_eq!(
        steps("event: ping\ndata: 1\n\nevent:\ndata: 2\n\ndata: 3\n\n"),
        vec![event("ping", "1", None, None), message("2"), message("3")]
    );
}

#[test]
fn event_type_does_not_leak_into_the_next_block() {
    // A block without data resets the type too.
    assert_eq!(steps("event: lost\n\ndata: 1\n\n"), vec![message("1")]);
}

#[test]
fn comments_are_ignored() {
    assert_eq!(
        steps(": keep-alive\n\n:\ndata: 1\n: in the middle\ndata: 2\n\n"),
        vec![message("1\n2")]
    );
}

#[test]
fn unknown_fields_are_ignored() {
    assert_eq!(
        steps("Data: no\nevents: no\nfoo: bar\ndata: 1\n\n"),
        vec![message("1")]
    );
}

#[test]
fn id_with_nul_is_ignored() {
    let run = decode(ROOMY, b"id: 1\ndata: a\n\nid: 2\0x\ndata: b\n\n");
    assert_eq!(
        run.steps,
        vec![
            event("message", "a", Some("1"), None),
            event("message", "b", Some("1"), None),
        ]
    );
    assert_eq!(run.last_event_id.as_deref(), Some("1"));
}

#[test]
fn id_persists_across_events() {
    let run = decode(ROOMY, b"id: 7\ndata: a\n\ndata: b\n\nid: 8\ndata: c\n\n");
    assert_eq!(
        run.steps,
        vec![
            event("message", "a", Some("7"), None),
            event("message", "b", Some("7"), None),
            event("message", "c", Some("8"), None),
        ]
    );
    assert_eq!(run.last_event_id.as_deref(), Some("8"));
}

#[test]
fn empty_id_clears_the_last_event_id() {
    let run = decode(ROOMY, b"id: 7\ndata: a\n\nid\ndata: b\n\n");
    assert_eq!(
        run.steps,
        vec![
            event("message", "a", Some("7"), None),
            event("message", "b", None, None),
        ]
    );
    assert_eq!(run.last_event_id, None);
}

#[test]
fn retry_accepts_ascii_digits_only() {
    let run = decode(
        ROOMY,
        b"retry: 1500\ndata: a\n\nretry: 12a\ndata: b\n\nretry: -1\nretry:\nretry: 1 \ndata: c\n\n",
    );
    assert_eq!(
        run.steps,
        vec![
            event("message", "a", None, Some(1500)),
            message("b"),
            message("c"),
        ]
    );
    assert_eq!(run.retry, Some(1500));
}

#[test]
fn retry_too_large_for_u64_saturates() {
    let run = decode(ROOMY, b"retry: 99999999999999999999999\n\n");
    assert_eq!(run.retry, Some(u64::MAX));
}

#[test]
fn block_without_data_dispatches_nothing_but_sets_id_and_retry() {
    let mut codec = SseCodec::new(ROOMY);
    let mut buf = BytesMut::new();
    assert_eq!(
        push(&mut codec, &mut buf, b"id: 42\nretry: 3000\n\n"),
        vec![]
    );
    assert_eq!(codec.last_event_id(), Some("42"));
    assert_eq!(codec.retry(), Some(3000));
    let got = push(&mut codec, &mut buf, b"data: x\n\n");
    // The event carries the id in effect, but the retry was set in an earlier block.
    assert_eq!(got[0].id.as_deref(), Some("42"));
    assert_eq!(got[0].retry, None);
}

#[test]
fn id_and_retry_wait_for_the_blank_line() {
    let mut codec = SseCodec::new(ROOMY);
    let mut buf = BytesMut::new();
    push(&mut codec, &mut buf, b"id: 1\nretry: 10\ndata: x\n");
    assert_eq!(codec.last_event_id(), None);
    assert_eq!(codec.retry(), None);
}

#[test]
fn bom_at_stream_start_is_stripped() {
    assert_eq!(steps("\u{feff}data: 1\n\n"), vec![message("1")]);
}

#[test]
fn bom_split_across_reads_is_stripped() {
    let input = "\u{feff}data: 1\n\n".as_bytes();
    assert_eq!(feed_sse(ROOMY, input, &[1, 1, 2]).steps, vec![message("1")]);
}

#[test]
fn bom_after_the_start_is_kept() {
    // A second BOM makes the field name "\u{feff}data", which is unknown.
    assert_eq!(steps("\u{feff}\u{feff}data: 1\n\n"), vec![]);
    assert_eq!(steps("data: 1\n\n\u{feff}data: 2\n\n"), vec![message("1")]);
    assert_eq!(steps("data: \u{feff}3\n\n"), vec![message("\u{feff}3")]);
}

#[test]
fn bytes_that_only_start_like_a_bom_are_kept() {
    let run = decode(ROOMY, b"\xEF\xBBdata\n\ndata: ok\n\n");
    assert_eq!(run.steps, vec![message("ok")]);
}

#[test]
fn field_without_colon_has_an_empty_value() {
    assert_eq!(
        steps("event\ndata\nid\n\n"),
        vec![event("message", "", None, None)]
    );
}

#[test]
fn only_one_space_after_the_colon_is_removed() {
    assert_eq!(
        steps("data:x\n\ndata: x\n\ndata:  x\n\ndata:\tx\n\n"),
        vec![message("x"), message("x"), message(" x"), message("\tx")]
    );
}

#[test]
fn value_keeps_later_colons() {
    assert_eq!(steps("data: a: b:c\n\n"), vec![message("a: b:c")]);
}

#[test]
fn invalid_utf8_is_replaced() {
    let run = decode(ROOMY, b"event: \xFF\ndata: a\xC3\ndata: \xE2\x82\n\n");
    assert_eq!(
        run.steps,
        vec![event("\u{fffd}", "a\u{fffd}\n\u{fffd}", None, None)]
    );
}

#[test]
fn event_exactly_at_the_cap_is_accepted() {
    let input = b"data: 12\n\n";
    assert_eq!(decode(input.len(), input).steps, vec![message("12")]);
    // With CRLF the event is dispatched at the blank line's CR, so its LF is not counted.
    let input = b"data: 12\r\n\r\n";
    assert_eq!(decode(input.len() - 1, input).steps, vec![message("12")]);
}

#[test]
fn event_one_byte_over_the_cap_is_rejected() {
    let input = b"data: 12\n\n";
    let cap = input.len() - 1;
    assert_eq!(
        decode(cap, input).steps,
        vec![too_large(cap, &input[..cap])]
    );
    let input = b"data: 12\r\n\r\n";
    let cap = input.len() - 2;
    assert_eq!(
        decode(cap, input).steps,
        vec![too_large(cap, &input[..cap])]
    );
}

#[test]
fn single_line_over_the_cap_is_rejected() {
    let mut input = b"data: ".to_vec();
    input.extend(std::iter::repeat_n(b'x', 100));
    input.extend_from_slice(b"\n\ndata: next\n\n");
    assert_eq!(
        decode(50, &input).steps,
        vec![too_large(50, &input[..50]), message("next")]
    );
}

#[test]
fn oversized_event_is_reported_once_then_the_next_event_decodes() {
    let mut input = Vec::new();
    for line in 0..40 {
        input.extend_from_slice(format!("data: line {line}\r\n").as_bytes());
    }
    input.extend_from_slice(b"\r\nid: 2\ndata: after\n\n");
    let run = decode(64, &input);
    assert_eq!(
        run.steps,
        vec![
            too_large(64, &input[..64]),
            event("message", "after", Some("2"), None)
        ]
    );
}

#[test]
fn oversized_event_prefix_is_at_most_prefix_bytes() {
    let mut input = b"data: ".to_vec();
    input.extend(std::iter::repeat_n(b'p', 5000));
    input.extend_from_slice(b"\n\n");
    let run = decode(4000, &input);
    assert_eq!(run.steps, vec![too_large(4000, &input[..PREFIX_BYTES])]);
}

#[test]
fn oversized_event_has_no_effect_on_id_and_retry() {
    let mut input = b"id: 1\ndata: a\n\nid: 2\nretry: 5\ndata: ".to_vec();
    input.extend(std::iter::repeat_n(b'x', 100));
    input.extend_from_slice(b"\n\ndata: b\n\n");
    let run = decode(40, &input);
    assert_eq!(run.steps.len(), 3);
    assert!(matches!(run.steps[1], SseStep::TooLarge { .. }));
    assert_eq!(run.steps[2], event("message", "b", Some("1"), None));
    assert_eq!(run.last_event_id.as_deref(), Some("1"));
    assert_eq!(run.retry, None);
}

#[test]
fn discarding_ends_only_at_a_blank_line() {
    // Whatever the cap, discarding starts at a different point of the first block: inside a
    // line, right before a line end, between a CR and its LF. Only the real blank line ends it.
    let first: &[u8] = b"data: 0123456789\r\ndata: more\r\r";
    let second: &[u8] = b"data: after\n\n";
    let input = [first, second].concat();
    for cap in 1..first.len() {
        let last = if cap >= second.len() {
            message("after")
        } else {
            too_large(cap, &second[..cap])
        };
        assert_eq!(
            decode(cap, &input).steps,
            vec![too_large(cap, &first[..cap]), last],
            "cap {cap}"
        );
    }
}

#[test]
fn discarding_a_huge_event_holds_one_read_chunk() {
    const CAP: usize = 256 * 1024;
    let mut input = b"data: ".to_vec();
    input.extend(std::iter::repeat_n(b'h', 16 << 20));
    input.extend_from_slice(b"\n\ndata: next\n\n");

    let mut codec = SseCodec::new(CAP);
    let mut buf = BytesMut::new();
    // A first call gives the empty buffer room for a read, as before any read of a driver.
    assert_eq!(codec.decode(&mut buf).expect("nothing to decode"), None);
    let mut out = Vec::new();
    let mut peak_while_discarding = 0;
    let mut reported = false;
    for read in input.chunks(4096) {
        assert!(buf.capacity() - buf.len() >= read.len().min(MIN_SPARE));
        buf.extend_from_slice(read);
        loop {
            match codec.decode(&mut buf) {
                Ok(Some(event)) => out.push(event.data),
                Ok(None) => break,
                Err(err) => {
                    assert!(err.is_too_large());
                    assert!(!reported, "the oversized event was reported twice");
                    reported = true;
                }
            }
            if matches!(codec.state, State::Discarding { .. }) {
                peak_while_discarding = peak_while_discarding.max(buf.capacity());
            }
        }
        assert!(buf.capacity() <= codec.buffer_bound());
    }
    assert!(reported);
    assert_eq!(out, vec!["next".to_owned()]);
    assert!(
        peak_while_discarding <= READ_CHUNK,
        "discarding held {peak_while_discarding} bytes"
    );
}

#[test]
fn a_big_event_gives_its_allocation_back() {
    let mut input = b"data: ".to_vec();
    input.extend(std::iter::repeat_n(b'b', 3 << 20));
    input.extend_from_slice(b"\n\n");
    let mut codec = SseCodec::new(4 << 20);
    let mut buf = BytesMut::new();
    let mut got = Vec::new();
    for read in input.chunks(READ_CHUNK) {
        got.extend(push(&mut codec, &mut buf, read));
    }
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].data.len(), 3 << 20);
    assert!(
        buf.capacity() <= READ_CHUNK,
        "kept {} bytes",
        buf.capacity()
    );
}

#[test]
fn capacity_stays_within_the_bound_for_a_block_just_under_the_cap() {
    const CAP: usize = 200 * 1024;
    let mut input = b"data: ".to_vec();
    input.extend(std::iter::repeat_n(b'u', CAP - 8));
    input.extend_from_slice(b"\n\n");
    assert_eq!(input.len(), CAP);
    let run = feed_sse(CAP, &input, &[3000, 17, 65536]);
    assert_eq!(run.steps.len(), 1);
    assert!(run.peak <= CAP + READ_CHUNK, "peak {}", run.peak);
}

#[test]
fn decoded_text_over_the_cap_is_too_large() {
    // Each invalid byte becomes three bytes of U+FFFD, so 20 raw bytes decode to 60.
    let mut input = b"data:".to_vec();
    input.extend(std::iter::repeat_n(0xFF, 20));
    input.extend_from_slice(b"\n\ndata: ok\n\n");
    let cap = 27;
    let run = decode(cap, &input);
    assert_eq!(run.steps, vec![too_large(cap, &input[..27]), message("ok")]);
}

#[test]
fn eof_mid_event_gives_nothing() {
    assert_eq!(steps("data: 1\n\ndata: 2\n"), vec![message("1")]);
    assert_eq!(steps("data: 1\n\ndata: 2"), vec![message("1")]);
    assert_eq!(steps("data: 1\n\ndata: 2\r"), vec![message("1")]);
}

#[test]
fn eof_keeps_a_complete_retry_line_but_not_the_id() {
    let run = decode(ROOMY, b"id: 1\n\nid: 2\nretry: 700\ndata: x\n");
    assert_eq!(run.steps, vec![]);
    assert_eq!(run.last_event_id.as_deref(), Some("1"));
    assert_eq!(run.retry, Some(700));
    // A retry line cut off by EOF is not a line at all.
    assert_eq!(decode(ROOMY, b"retry: 700").retry, None);
}

#[test]
fn codec_follows_a_stream_across_reconnections() {
    let mut codec = SseCodec::new(ROOMY);
    let mut buf = BytesMut::new();
    push(&mut codec, &mut buf, b"id: 5\ndata: a\n\ndata: cut");
    assert_eq!(codec.decode_eof(&mut buf).expect("no error"), None);
    assert!(buf.is_empty());
    // The resumed stream may start with its own BOM; the id carries over.
    let got = push(&mut codec, &mut buf, "\u{feff}data: b\n\n".as_bytes());
    assert_eq!(got[0].data, "b");
    assert_eq!(got[0].id.as_deref(), Some("5"));
}

#[test]
fn cap_zero_panics() {
    let result = panic::catch_unwind(|| SseCodec::new(0));
    assert!(result.is_err());
}

#[test]
fn fuzz_check_accepts_tricky_inputs() {
    let inputs: [&[u8]; 6] = [
        b"",
        b"\x00\x00\x00\x00",
        b"\x03\x01\x02\x03data: 1\r\n\r\ndata: 2\r\r",
        b"\x10\x07\x00\x00\xEF\xBB\xBFdata\n\nid: \xFF\xFF\xFF\xFF\n\nretry: 1\r",
        b"\xf5\x09\x09\x09data: aaaaaaaaaaaaaaaa\r\n\r\n\r\ndata: b\n\n",
        b"\x42\x00\x00\x00data:\xFF\xFF\xFF\xFF\xFF\xFF\n\n",
    ];
    for input in inputs {
        fuzz_check(input);
    }
}

/// One event as a test generates it.
#[derive(Debug, Clone)]
struct Spec {
    event: Option<String>,
    data: Vec<String>,
    id: Option<String>,
    retry: Option<u64>,
    comment: Option<String>,
}

fn spec() -> impl Strategy<Value = Spec> {
    (
        proptest::option::of("[ -~]{0,8}"),
        vec("[^\r\n]{0,12}", 1..4),
        proptest::option::of("[^\r\n\u{0}]{0,8}"),
        proptest::option::of(any::<u64>()),
        proptest::option::of("[^\r\n]{0,6}"),
    )
        .prop_map(|(event, data, id, retry, comment)| Spec {
            event,
            data,
            id,
            retry,
            comment,
        })
}

/// Writes lines with line ends picked from `ends` in turn (0 LF, 1 CR, 2 CRLF).
struct Writer<'a> {
    out: Vec<u8>,
    ends: std::iter::Cycle<std::slice::Iter<'a, u8>>,
    after_cr: bool,
}

impl Writer<'_> {
    fn line(&mut self, content: &[u8]) {
        self.out.extend_from_slice(content);
        let mut style = *self.ends.next().expect("at least one line end style");
        // After a bare CR an empty line ending in LF would read as one CRLF, so a conforming
        // server cannot write that; neither do we.
        if self.after_cr && content.is_empty() && style == 0 {
            style = 2;
        }
        self.out
            .extend_from_slice([&b"\n"[..], b"\r", b"\r\n"][usize::from(style)]);
        self.after_cr = style == 1;
    }
}

/// Encodes `specs`; returns the stream and, per event, the bytes the cap counts.
fn encode(specs: &[Spec], ends: &[u8], bom: bool) -> (Vec<u8>, Vec<std::ops::Range<usize>>) {
    let mut writer = Writer {
        out: Vec::new(),
        ends: ends.iter().cycle(),
        after_cr: false,
    };
    if bom {
        writer.out.extend_from_slice(BOM);
    }
    let mut blocks = Vec::new();
    for spec in specs {
        let start = writer.out.len();
        if let Some(kind) = &spec.event {
            writer.line(format!("event: {kind}").as_bytes());
        }
        if let Some(id) = &spec.id {
            writer.line(format!("id: {id}").as_bytes());
        }
        if let Some(comment) = &spec.comment {
            writer.line(format!(":{comment}").as_bytes());
        }
        for line in &spec.data {
            writer.line(format!("data: {line}").as_bytes());
        }
        if let Some(retry) = spec.retry {
            writer.line(format!("retry: {retry}").as_bytes());
        }
        let blank = writer.out.len();
        writer.line(b"");
        // The event is dispatched at the blank line's first line-end byte.
        blocks.push(start..blank + 1);
    }
    (writer.out, blocks)
}

/// What decoding `specs` must give under `cap`.
fn expected(
    specs: &[Spec],
    stream: &[u8],
    blocks: &[std::ops::Range<usize>],
    cap: usize,
) -> SseRun {
    let mut steps = Vec::new();
    let mut last_event_id = None;
    let mut retry = None;
    for (spec, block) in specs.iter().zip(blocks) {
        if block.len() > cap {
            let prefix = &stream[block.start..block.start + cap.min(PREFIX_BYTES)];
            steps.push(too_large(cap, prefix));
            continue;
        }
        if let Some(id) = &spec.id {
            last_event_id = Some(id.clone()).filter(|id| !id.is_empty());
        }
        retry = spec.retry.or(retry);
        steps.push(SseStep::Event(SseEvent {
            event: match spec.event.as_deref() {
                None | Some("") => "message".to_owned(),
                Some(kind) => kind.to_owned(),
            },
            data: spec.data.join("\n"),
            id: last_event_id.clone(),
            retry: spec.retry,
        }));
    }
    SseRun {
        steps,
        last_event_id,
        retry,
        peak: 0,
    }
}

fn check_run(run: SseRun, want: SseRun, cap: usize) -> Result<(), TestCaseError> {
    prop_assert!(run.peak <= cap + READ_CHUNK, "peak {}", run.peak);
    for step in &run.steps {
        if let SseStep::Event(event) = step {
            prop_assert!(event.data.len() <= cap);
        }
    }
    prop_assert_eq!(run.steps, want.steps);
    prop_assert_eq!(run.last_event_id, want.last_event_id);
    prop_assert_eq!(run.retry, want.retry);
    Ok(())
}

/// Bytes that look enough like an event stream to reach every branch.
fn sse_like_bytes() -> impl Strategy<Value = Vec<u8>> {
    let token = prop_oneof![
        Just(b"data".to_vec()),
        Just(b"id".to_vec()),
        Just(b"retry".to_vec()),
        Just(b"event".to_vec()),
        Just(b":".to_vec()),
        Just(b" ".to_vec()),
        Just(b"\r".to_vec()),
        Just(b"\n".to_vec()),
        Just(b"\r\n".to_vec()),
        Just(b"42".to_vec()),
        Just(BOM.to_vec()),
        Just(vec![0]),
        Just(vec![0xFF]),
        vec(any::<u8>(), 0..6),
    ];
    vec(token, 0..120).prop_map(|tokens| tokens.concat())
}

proptest! {
    #[test]
    fn encoded_events_decode_back_whatever_the_reads(
        specs in vec(spec(), 0..12),
        ends in vec(0u8..3, 1..8),
        bom in any::<bool>(),
        reads in vec(1usize..40, 1..8),
    ) {
        let (stream, blocks) = encode(&specs, &ends, bom);
        let want = expected(&specs, &stream, &blocks, ROOMY);
        check_run(feed_sse(ROOMY, &stream, &reads), want, ROOMY)?;
    }

    #[test]
    fn oversized_events_are_reported_and_skipped_whatever_the_reads(
        specs in vec(spec(), 1..12),
        ends in vec(0u8..3, 1..8),
        bom in any::<bool>(),
        cap in 1usize..160,
        reads in vec(1usize..40, 1..8),
    ) {
        let (stream, blocks) = encode(&specs, &ends, bom);
        let want = expected(&specs, &stream, &blocks, cap);
        check_run(feed_sse(cap, &stream, &reads), want, cap)?;
    }

    #[test]
    fn fuzz_invariants_hold_for_sse_like_bytes(
        head in any::<[u8; 4]>(),
        body in sse_like_bytes(),
    ) {
        fuzz_check(&[&head[..], &body].concat());
    }
}
