use bytes::{BufMut, Bytes, BytesMut};

use crate::fuzz::{Step, feed_ndjson};
use proptest::prelude::*;
use tokio_util::codec::{Decoder, Encoder};

use super::{NdjsonCodec, Oversize};
use crate::{Error, PREFIX_BYTES, READ_CHUNK, SHRINK_AFTER};

fn feed(codec: NdjsonCodec, input: &[u8], reads: &[usize]) -> (Vec<Step>, usize) {
    feed_ndjson(codec, input, reads)
}

fn frame(s: &str) -> Step {
    Step::Frame(Bytes::copy_from_slice(s.as_bytes()))
}

fn strict(cap: usize) -> NdjsonCodec {
    NdjsonCodec::new(cap, Oversize::Terminate)
}

fn lenient(cap: usize) -> NdjsonCodec {
    NdjsonCodec::new(cap, Oversize::Skip)
        .skip_blank_lines(true)
        .strip_bom(true)
}

fn too_large(limit: usize, prefix: &[u8]) -> Step {
    Step::TooLarge {
        limit,
        prefix: Bytes::copy_from_slice(prefix),
    }
}

#[test]
fn frame_exactly_at_cap_is_accepted() {
    // 9 bytes of content plus the newline is exactly the cap of 10.
    let (out, _) = feed(strict(10), b"123456789\n", &[100]);
    assert_eq!(out, vec![frame("123456789")]);
}

#[test]
fn frame_one_byte_over_cap_is_rejected_and_terminates() {
    let (out, _) = feed(strict(10), b"1234567890\n{\"ok\":1}\n", &[100]);
    assert_eq!(out, vec![too_large(10, b"1234567890")]);
}

#[test]
fn cap_bytes_without_newline_are_already_too_large() {
    let mut codec = strict(4);
    let mut buf = BytesMut::from(&b"abcd"[..]);
    let err = codec.decode(&mut buf).unwrap_err();
    assert!(err.is_too_large(), "{err:?}");
    assert!(codec.is_finished());
    // Whatever follows is never handed up.
    buf.extend_from_slice(b"\nok\n");
    assert_eq!(codec.decode(&mut buf).unwrap(), None);
    assert_eq!(codec.decode_eof(&mut buf).unwrap(), None);
}

#[test]
fn cap_sized_frame_fed_in_one_byte_reads() {
    let cap = 4096;
    let mut input = vec![b'x'; cap - 1];
    input.push(b'\n');
    let (out, peak) = feed(strict(cap), &input, &[1]);
    assert_eq!(out, vec![Step::Frame(Bytes::from(vec![b'x'; cap - 1]))]);
    assert!(peak <= cap + READ_CHUNK, "peak {peak}");
}

#[test]
fn bursts_of_many_frames_in_one_read() {
    let mut input = Vec::new();
    for i in 0..1000 {
        input.extend_from_slice(format!("{{\"id\":{i}}}\n").as_bytes());
    }
    let (out, _) = feed(strict(64), &input, &[input.len()]);
    assert_eq!(out.len(), 1000);
    assert_eq!(out[999], frame("{\"id\":999}"));
}

#[test]
fn newline_between_decodes_is_found_without_rescanning() {
    let mut codec = strict(100);
    let mut buf = BytesMut::from(&b"abc"[..]);
    assert_eq!(codec.decode(&mut buf).unwrap(), None);
    assert_eq!(codec.scanned, 3);
    buf.extend_from_slice(b"def\nx");
    assert_eq!(
        codec.decode(&mut buf).unwrap(),
        Some(Bytes::from_static(b"abcdef"))
    );
    assert_eq!(codec.decode(&mut buf).unwrap(), None);
    assert_eq!(codec.scanned, 1);
}

#[test]
fn crlf_loses_only_its_trailing_cr() {
    let (out, _) = feed(strict(100), b"a\r\n\r\r\nb\rc\n", &[2]);
    assert_eq!(out, vec![frame("a"), frame("\r"), frame("b\rc")]);
}

#[test]
fn cr_counts_toward_the_cap() {
    // "abc\r\n" is 5 bytes: within a cap of 5, over a cap of 4.
    assert_eq!(feed(strict(5), b"abc\r\n", &[9]).0, vec![frame("abc")]);
    assert_eq!(
        feed(strict(4), b"abc\r\n", &[9]).0,
        vec![too_large(4, b"abc\r")]
    );
}

#[test]
fn blank_lines_are_frames_in_strict_mode() {
    let (out, _) = feed(strict(100), b"\n  \n{}\n", &[100]);
    assert_eq!(out, vec![frame(""), frame("  "), frame("{}")]);
}

#[test]
fn blank_lines_are_skipped_when_asked() {
    let (out, _) = feed(lenient(100), b"\n \t\r\n{}\n\n", &[3]);
    assert_eq!(out, vec![frame("{}")]);
}

#[test]
fn bom_is_kept_in_strict_mode_and_stripped_when_asked() {
    let input = b"\xEF\xBB\xBF{}\n\xEF\xBB\xBF\n";
    let (out, _) = feed(strict(100), input, &[100]);
    assert_eq!(
        out,
        vec![
            Step::Frame(Bytes::from_static(b"\xEF\xBB\xBF{}")),
            Step::Frame(Bytes::from_static(b"\xEF\xBB\xBF")),
        ]
    );
    let (out, _) = feed(lenient(100), input, &[1]);
    assert_eq!(out, vec![frame("{}")]);
}

#[test]
fn skip_mode_discards_then_resyncs() {
    let mut input = b"{\"a\":1}\n".to_vec();
    input.extend(std::iter::repeat_n(b'z', 5000));
    input.extend_from_slice(b"\n{\"b\":2}\n");
    let (out, _) = feed(lenient(100), &input, &[7]);
    assert_eq!(
        out,
        vec![
            frame("{\"a\":1}"),
            too_large(100, &[b'z'; 100]),
            frame("{\"b\":2}")
        ]
    );
}

#[test]
fn skip_mode_resyncs_when_the_line_end_is_already_buffered() {
    let mut input = vec![b'z'; 20];
    input.extend_from_slice(b"\nok\nfine\n");
    let (out, _) = feed(lenient(10), &input, &[input.len()]);
    assert_eq!(
        out,
        vec![too_large(10, &[b'z'; 10]), frame("ok"), frame("fine")]
    );
}

#[test]
fn skip_mode_reports_each_oversized_line_once() {
    let mut input = Vec::new();
    for _ in 0..3 {
        input.extend(std::iter::repeat_n(b'y', 300));
        input.push(b'\n');
    }
    let (out, _) = feed(lenient(50), &input, &[64]);
    assert_eq!(out.len(), 3);
    assert!(out.iter().all(|s| matches!(s, Step::TooLarge { .. })));
}

#[test]
fn prefix_is_bounded_to_one_kib() {
    let input = vec![b'p'; 10_000];
    let (out, _) = feed(lenient(5000), &input, &[4096]);
    match &out[0] {
        Step::TooLarge { prefix, .. } => assert_eq!(prefix.len(), PREFIX_BYTES),
        other => panic!("{other:?}"),
    }
}

#[test]
fn discarding_holds_memory_to_one_read_chunk() {
    // A 16 MiB line against a 64 KiB cap, fed in 4 KiB reads.
    let cap = 64 * 1024;
    let mut input = vec![b'q'; 16 * 1024 * 1024];
    input.extend_from_slice(b"\n{}\n");
    let (out, peak) = feed(lenient(cap), &input, &[4096]);
    assert_eq!(out.len(), 2);
    assert_eq!(out[1], frame("{}"));
    assert!(peak <= cap + READ_CHUNK, "peak {peak}");
}

#[test]
fn eight_mib_frame_keeps_the_buffer_bound_and_shrinks_after() {
    let cap = 8 * 1024 * 1024;
    let mut input = vec![b'w'; cap - 1];
    input.push(b'\n');
    let mut codec = strict(cap);
    let mut buf = BytesMut::with_capacity(8 * 1024);
    let mut peak = 0;
    let mut got = None;
    for chunk in input.chunks(4096) {
        let mut rest = chunk;
        while !rest.is_empty() {
            let n = rest.len().min(buf.capacity() - buf.len());
            buf.put_slice(&rest[..n]);
            rest = &rest[n..];
            peak = peak.max(buf.capacity());
            if let Some(frame) = codec.decode(&mut buf).unwrap() {
                got = Some(frame);
            }
        }
    }
    let got = got.expect("the frame is decoded");
    assert_eq!(got.len(), cap - 1);
    assert!(peak <= cap + READ_CHUNK, "peak {peak}");
    // The codec's buffer no longer shares the frame's allocation, so dropping the frame frees it.
    assert!(
        got.is_unique(),
        "the buffer still pins the 8 MiB allocation"
    );
    assert!(buf.capacity() <= SHRINK_AFTER, "kept {}", buf.capacity());
}

#[test]
fn eof_inside_a_frame_is_truncated() {
    let (out, _) = feed(strict(100), b"{}\n{\"half", &[4]);
    assert_eq!(out, vec![frame("{}"), Step::Truncated(6)]);
}

#[test]
fn eof_after_trailing_whitespace_is_clean_when_skipping_blanks() {
    let (out, _) = feed(lenient(100), b"{}\n \r", &[100]);
    assert_eq!(out, vec![frame("{}")]);
}

#[test]
fn eof_while_discarding_is_clean() {
    let input = vec![b'd'; 500];
    let (out, _) = feed(lenient(100), &input, &[64]);
    assert_eq!(out, vec![too_large(100, &[b'd'; 100])]);
}

#[test]
fn encoder_writes_frame_and_newline() {
    let mut codec = strict(10);
    let mut dst = BytesMut::new();
    codec
        .encode(Bytes::from_static(b"123456789"), &mut dst)
        .unwrap();
    codec.encode(&b"{}"[..], &mut dst).unwrap();
    assert_eq!(&dst[..], b"123456789\n{}\n");
}

#[test]
fn encoder_refuses_oversize_and_newlines_before_writing() {
    let mut codec = strict(10);
    let mut dst = BytesMut::from(&b"kept\n"[..]);
    let err = codec.encode(&b"1234567890"[..], &mut dst).unwrap_err();
    assert!(err.is_too_large(), "{err:?}");
    let err = codec.encode(&b"a\nb"[..], &mut dst).unwrap_err();
    assert!(matches!(err, Error::EmbeddedNewline { at: 1 }), "{err:?}");
    assert_eq!(&dst[..], b"kept\n");
}

#[test]
fn zero_cap_is_refused() {
    let result = std::panic::catch_unwind(|| NdjsonCodec::new(0, Oversize::Skip));
    assert!(result.is_err());
}

fn arb_frames() -> impl Strategy<Value = Vec<Vec<u8>>> {
    // Frame bytes exclude `\n` and `\r` (a trailing `\r` is stripped by design) but include
    // everything else, blanks and BOMs too.
    let byte = prop_oneof![0u8..=9, 11u8..=12, 14u8..=255];
    prop::collection::vec(prop::collection::vec(byte, 0..300), 0..40)
}

fn arb_reads() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(1usize..700, 1..20)
}

proptest! {
    #[test]
    fn any_split_gives_back_the_frames(frames in arb_frames(), reads in arb_reads()) {
        let mut input = Vec::new();
        for f in &frames {
            input.extend_from_slice(f);
            input.push(b'\n');
        }
        let (out, peak) = feed(strict(301), &input, &reads);
        let expected: Vec<Step> = frames.into_iter().map(|f| Step::Frame(Bytes::from(f))).collect();
        prop_assert_eq!(out, expected);
        prop_assert!(peak <= 301 + READ_CHUNK);
    }

    #[test]
    fn frames_never_exceed_the_cap_and_splits_agree(
        frames in arb_frames(),
        cap in 1usize..400,
        reads in arb_reads(),
        skip in any::<bool>(),
    ) {
        let mut input = Vec::new();
        for f in &frames {
            input.extend_from_slice(f);
            input.push(b'\n');
        }
        let make = || if skip { lenient(cap) } else { strict(cap) };
        let (whole, _) = feed(make(), &input, &[input.len().max(1)]);
        let (split, peak) = feed(make(), &input, &reads);
        prop_assert_eq!(&whole, &split);
        prop_assert!(peak <= cap + READ_CHUNK);
        for step in &split {
            if let Step::Frame(f) = step {
                prop_assert!(f.len() < cap);
            }
        }
    }

    #[test]
    fn encode_then_decode_round_trips(frames in arb_frames()) {
        let mut codec = strict(400);
        let mut wire = BytesMut::new();
        for f in &frames {
            codec.encode(&f[..], &mut wire).unwrap();
        }
        let (out, _) = feed(strict(400), &wire, &[wire.len().max(1)]);
        let expected: Vec<Step> = frames.into_iter().map(|f| Step::Frame(Bytes::from(f))).collect();
        prop_assert_eq!(out, expected);
    }
}

proptest! {
    #[test]
    fn fuzz_invariants_hold_for_random_bytes(data in prop::collection::vec(any::<u8>(), 0..2000)) {
        crate::fuzz::ndjson(&data);
    }

    #[test]
    fn fuzz_invariants_hold_for_line_heavy_bytes(
        data in prop::collection::vec(prop_oneof![Just(b'\n'), Just(b'\r'), Just(b' '), any::<u8>()], 6..2000)
    ) {
        crate::fuzz::ndjson(&data);
    }
}
