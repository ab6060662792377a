//! Invariant checks behind the fuzz targets in `fuzz/`.
//!
//! The checks live in the library so they compile with every build and cannot rot; each fuzz
//! target is a one-line call into this module, and the unit tests drive the same feeders. Not a
//! public API: hidden from the docs and free to change.

use bytes::{BufMut, Bytes, BytesMut};
use tokio_util::codec::Decoder;

use crate::{Error, NdjsonCodec, Oversize, READ_CHUNK};

/// One decode outcome, comparable across runs.
#[derive(Debug, PartialEq)]
pub enum Step {
    /// A decoded frame.
    Frame(Bytes),
    /// An oversized frame was reported.
    TooLarge {
        /// The cap.
        limit: usize,
        /// The reported prefix.
        prefix: Bytes,
    },
    /// EOF inside a frame.
    Truncated(usize),
}

/// Feeds `input` to `codec` in reads of the given sizes the way tokio-util's `FramedRead` does
/// (into the buffer's spare capacity only), then signals end of input. Returns every outcome and
/// the largest buffer capacity seen.
pub fn feed_ndjson(mut codec: NdjsonCodec, input: &[u8], reads: &[usize]) -> (Vec<Step>, usize) {
    let mut buf = BytesMut::with_capacity(8 * 1024);
    let mut out = Vec::new();
    let mut peak = buf.capacity();
    let mut pos = 0;
    let mut reads = reads.iter().copied().cycle();
    while pos < input.len() {
        let want = reads.next().unwrap_or(input.len()).max(1);
        if buf.capacity() == buf.len() {
            buf.reserve(1);
        }
        let n = want.min(buf.capacity() - buf.len()).min(input.len() - pos);
        buf.put_slice(&input[pos..pos + n]);
        pos += n;
        peak = peak.max(buf.capacity());
        loop {
            let result = codec.decode(&mut buf);
            peak = peak.max(buf.capacity());
            match result {
                Ok(Some(frame)) => out.push(Step::Frame(frame)),
                Ok(None) => break,
                Err(err) => out.push(step_of(err)),
            }
        }
    }
    loop {
        match codec.decode_eof(&mut buf) {
            Ok(Some(frame)) => out.push(Step::Frame(frame)),
            Ok(None) => break,
            Err(err) => {
                out.push(step_of(err));
                break;
            }
        }
    }
    (out, peak)
}

fn step_of(err: Error) -> Step {
    match err {
        Error::TooLarge { limit, prefix } => Step::TooLarge { limit, prefix },
        Error::Truncated { pending } => Step::Truncated(pending),
        other => panic!("decoding produced an unexpected error: {other:?}"),
    }
}

/// The NDJSON decoder's invariants for arbitrary bytes.
///
/// `data[0]` picks the cap, `data[1]` the options, `data[2..6]` four read sizes; the rest is the
/// input. Checks: no panic, no frame reaches the cap, the buffer stays within its bound, the
/// result does not depend on how the input is split into reads, and in strict mode the frames
/// re-encode to the same frames.
pub fn ndjson(data: &[u8]) {
    let Some((head, input)) = data.split_first_chunk::<6>() else {
        return;
    };
    let cap = 1 + usize::from(head[0]) * 7;
    let flags = head[1];
    let reads: Vec<usize> = head[2..].iter().map(|&b| usize::from(b) + 1).collect();
    let make = || {
        let mode = if flags & 1 == 0 {
            Oversize::Terminate
        } else {
            Oversize::Skip
        };
        NdjsonCodec::new(cap, mode)
            .skip_blank_lines(flags & 2 != 0)
            .strip_bom(flags & 4 != 0)
    };
    let (whole, _) = feed_ndjson(make(), input, &[input.len().max(1)]);
    let (split, peak) = feed_ndjson(make(), input, &reads);
    assert_eq!(whole, split, "the split into reads changed the result");
    assert!(
        peak <= cap + READ_CHUNK,
        "buffer capacity {peak} over the bound"
    );
    let mut frames = Vec::new();
    for step in &split {
        match step {
            Step::Frame(frame) => {
                assert!(frame.len() < cap, "a frame reached the cap");
                frames.push(frame.clone());
            }
            Step::TooLarge { prefix, .. } => assert!(prefix.len() <= crate::PREFIX_BYTES.min(cap)),
            Step::Truncated(_) => {}
        }
    }
    if flags & 7 == 0 {
        // Strict frames hold no newline, so they re-encode and decode to themselves (a frame
        // ending in `\r` loses it, which is the documented CRLF rule).
        let mut wire = BytesMut::new();
        let codec = make();
        for frame in &frames {
            codec
                .encode_frame(frame, &mut wire)
                .expect("a decoded frame re-encodes");
        }
        let (again, _) = feed_ndjson(make(), &wire, &reads);
        let again: Vec<Bytes> = again
            .into_iter()
            .map(|step| match step {
                Step::Frame(frame) => frame,
                other => panic!("re-encoded frames failed to decode: {other:?}"),
            })
            .collect();
        let expected: Vec<Bytes> = frames
            .into_iter()
            .map(|f| match f.last() {
                Some(b'\r') => f.slice(..f.len() - 1),
                _ => f,
            })
            .collect();
        assert_eq!(again, expected);
    }
}

/// The SSE decoder's invariants for arbitrary bytes (see `SseCodec`).
pub fn sse(data: &[u8]) {
    crate::sse::fuzz_check(data);
}
