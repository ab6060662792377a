//! Unit tests of the sans-IO stream state machine ([`super::reorder`]): every consumer rule of
//! spec §14.5, driven by hand with an explicit clock.

use std::time::Duration;

use sidewire_ext_protocol::{
    ChunkType, ProviderChunk, ProviderError, ProviderErrorCode, Reason, STREAM_REORDER_WINDOW,
};
use tokio::time::Instant;

use super::catalog::check;
use super::reorder::{EndInfo, Fed, Next, Outcome, Reorder};

const GAP: Duration = Duration::from_secs(1);

fn text(seq: u64) -> ProviderChunk {
    let mut chunk = ProviderChunk::new(ChunkType::Text);
    chunk.text = format!("w{seq}");
    chunk
}

fn machine() -> Reorder {
    Reorder::new(0, STREAM_REORDER_WINDOW, GAP)
}

fn end(last_seq: u64) -> EndInfo {
    EndInfo {
        last_seq,
        error: String::new(),
        interrupted: false,
    }
}

/// Everything readable now: the chunk texts, and the outcome if it came.
fn drain(m: &mut Reorder) -> (Vec<String>, Option<Outcome>) {
    let mut texts = Vec::new();
    while let Some(next) = m.next() {
        match next {
            Next::Chunk(chunk) => texts.push(chunk.text),
            Next::End(outcome) => return (texts, Some(outcome)),
        }
    }
    (texts, None)
}

fn reason(outcome: Option<Outcome>) -> Option<Reason> {
    match outcome {
        Some(Outcome::Failed { reason, .. }) => Some(reason),
        _ => None,
    }
}

#[test]
fn in_order_chunks_and_a_clean_end() {
    let mut m = machine();
    let now = Instant::now();
    for seq in 1..=3 {
        assert_eq!(m.chunk(seq, text(seq), 10), Fed::Delivered);
    }
    assert_eq!(m.buffered(), 3);
    assert_eq!(m.buffered_bytes(), 30);
    assert_eq!(m.end(end(3), now), Fed::Finished);
    let (texts, outcome) = drain(&mut m);
    assert_eq!(texts, ["w1", "w2", "w3"]);
    assert_eq!(outcome, Some(Outcome::Clean));
    assert_eq!((m.buffered(), m.buffered_bytes()), (0, 0));
    assert!(m.next().is_none(), "the outcome is given once");
}

#[test]
fn an_empty_stream_ends_at_seq_base() {
    let mut m = machine();
    assert_eq!(m.end(end(0), Instant::now()), Fed::Finished);
    assert_eq!(drain(&mut m), (vec![], Some(Outcome::Clean)));
}

#[test]
fn out_of_order_chunks_wait_and_are_delivered_in_seq_order() {
    let mut m = machine();
    assert_eq!(m.chunk(3, text(3), 1), Fed::Held);
    assert_eq!(m.chunk(2, text(2), 1), Fed::Held);
    assert_eq!(
        drain(&mut m),
        (vec![], None),
        "nothing readable before chunk 1"
    );
    assert_eq!(m.buffered(), 2, "held chunks count towards the queue");
    assert_eq!(m.chunk(1, text(1), 1), Fed::Delivered);
    assert_eq!(m.end(end(3), Instant::now()), Fed::Finished);
    let (texts, outcome) = drain(&mut m);
    assert_eq!(texts, ["w1", "w2", "w3"]);
    assert_eq!(outcome, Some(Outcome::Clean));
}

#[test]
fn duplicates_delivered_or_held_are_ignored() {
    let mut m = machine();
    assert_eq!(m.chunk(1, text(1), 1), Fed::Delivered);
    assert_eq!(m.chunk(1, text(1), 1), Fed::Duplicate);
    assert_eq!(m.chunk(3, text(3), 1), Fed::Held);
    assert_eq!(m.chunk(3, text(3), 1), Fed::Duplicate);
    assert_eq!(m.buffered(), 2);
    assert_eq!(m.chunk(2, text(2), 1), Fed::Delivered);
    // Read, then the same seq again: still a duplicate.
    let (texts, _) = drain(&mut m);
    assert_eq!(texts, ["w1", "w2", "w3"]);
    assert_eq!(m.chunk(2, text(2), 1), Fed::Duplicate);
    assert_eq!(m.buffered(), 0);
}

#[test]
fn the_window_holds_255_ahead_and_one_more_is_a_gap() {
    let mut m = machine();
    // Chunk 1 missing: 2..=256 are within the 256-seq window starting at 1.
    for seq in 2..=STREAM_REORDER_WINDOW {
        assert_eq!(m.chunk(seq, text(seq), 1), Fed::Held, "seq {seq}");
    }
    assert_eq!(
        m.chunk(STREAM_REORDER_WINDOW + 1, text(0), 1),
        Fed::Finished
    );
    let (texts, outcome) = drain(&mut m);
    assert!(texts.is_empty());
    assert_eq!(reason(outcome), Some(Reason::StreamGap));
    assert_eq!(
        (m.buffered(), m.buffered_bytes()),
        (0, 0),
        "held chunks are released"
    );
}

#[test]
fn a_chunk_after_the_end_beyond_last_seq_is_a_gap() {
    let mut m = machine();
    m.chunk(1, text(1), 1);
    // End says 2 while chunk 2 is missing: waiting.
    assert_eq!(m.end(end(2), Instant::now()), Fed::Waiting);
    assert_eq!(m.chunk(3, text(3), 1), Fed::Finished);
    let (texts, outcome) = drain(&mut m);
    assert_eq!(
        texts,
        ["w1"],
        "chunks delivered before the failure are still read"
    );
    assert_eq!(reason(outcome), Some(Reason::StreamGap));
}

#[test]
fn an_end_below_a_chunk_already_in_is_a_gap() {
    let mut m = machine();
    m.chunk(1, text(1), 1);
    m.chunk(2, text(2), 1);
    assert_eq!(m.end(end(1), Instant::now()), Fed::Finished);
    assert_eq!(reason(drain(&mut m).1), Some(Reason::StreamGap));

    let mut m = machine();
    m.chunk(1, text(1), 1);
    m.chunk(4, text(4), 1);
    assert_eq!(m.end(end(3), Instant::now()), Fed::Finished);
    assert_eq!(reason(drain(&mut m).1), Some(Reason::StreamGap));
}

#[test]
fn a_chunk_missing_past_the_gap_timeout_after_the_end_is_a_gap() {
    let mut m = machine();
    let now = Instant::now();
    m.chunk(1, text(1), 1);
    m.chunk(3, text(3), 1);
    assert_eq!(m.end(end(3), now), Fed::Waiting);
    assert_eq!(m.deadline(), Some(now + GAP));
    assert!(!m.expire(now + GAP - Duration::from_millis(1)));
    assert!(!m.is_finished());
    assert!(m.expire(now + GAP));
    let (texts, outcome) = drain(&mut m);
    assert_eq!(texts, ["w1"]);
    assert_eq!(reason(outcome), Some(Reason::StreamGap));
    assert_eq!(m.deadline(), None);
}

#[test]
fn a_late_chunk_within_the_gap_timeout_completes_the_stream() {
    let mut m = machine();
    let now = Instant::now();
    m.chunk(2, text(2), 1);
    assert_eq!(m.end(end(2), now), Fed::Waiting);
    assert_eq!(m.chunk(1, text(1), 1), Fed::Finished);
    assert!(
        !m.expire(now + GAP * 2),
        "a finished stream has no deadline"
    );
    let (texts, outcome) = drain(&mut m);
    assert_eq!(texts, ["w1", "w2"]);
    assert_eq!(outcome, Some(Outcome::Clean));
}

const IDLE: Duration = Duration::from_secs(60);

/// An open stream with nothing new for the idle bound is cancelled as idle, and ends idle when
/// that cancel is over (answered with an interrupted end, or its wait over), after what was
/// delivered; each new chunk (in order or held) counts the bound again from its arrival.
#[test]
fn an_open_stream_with_nothing_new_for_the_idle_bound_is_cancelled_and_ends_idle() {
    let opened = Instant::now();
    let mut m = machine().with_idle_timeout(IDLE, opened);
    assert_eq!(m.deadline(), Some(opened + IDLE));
    let later = opened + Duration::from_secs(30);
    assert_eq!(m.chunk(1, text(1), 1), Fed::Delivered);
    m.heard(later);
    assert_eq!(m.chunk(3, text(3), 1), Fed::Held);
    let last = later + Duration::from_secs(10);
    m.heard(last);
    assert_eq!(m.deadline(), Some(last + IDLE));
    assert!(
        !m.expire(opened + IDLE),
        "the bound counts from the last chunk"
    );
    assert!(!m.expire(last + IDLE - Duration::from_millis(1)));
    assert!(!m.went_idle());
    assert!(m.expire(last + IDLE));
    assert!(m.went_idle());
    assert!(!m.is_finished(), "it ends when the cancel is over");
    assert_eq!(m.deadline(), None);
    assert!(!m.expire(last + IDLE * 2), "it goes idle once");
    // The sidecar ends it interrupted, as it does after a cancel.
    assert_eq!(m.chunk(2, text(2), 1), Fed::Delivered);
    let interrupted = EndInfo {
        interrupted: true,
        ..end(3)
    };
    assert_eq!(m.end(interrupted, last + IDLE), Fed::Finished);
    let (texts, outcome) = drain(&mut m);
    assert_eq!(texts, ["w1", "w2", "w3"]);
    assert_eq!(outcome, Some(Outcome::Idle { after: IDLE }));

    // The cancel's wait is over without an end.
    let mut m = machine().with_idle_timeout(IDLE, opened);
    m.chunk(1, text(1), 1);
    assert!(m.expire(opened + IDLE));
    m.cancel_over("the wait is over");
    let (texts, outcome) = drain(&mut m);
    assert_eq!(texts, ["w1"]);
    assert_eq!(outcome, Some(Outcome::Idle { after: IDLE }));
}

/// A stream the host cancelled has no idle bound left: its cancel ends it as
/// `stream_cancelled`.
#[test]
fn a_cancelled_stream_does_not_go_idle() {
    let opened = Instant::now();
    let mut m = machine().with_idle_timeout(IDLE, opened);
    m.cancel();
    assert_eq!(m.deadline(), None);
    assert!(!m.expire(opened + IDLE * 2));
    m.cancel_over("cancelled");
    assert_eq!(reason(drain(&mut m).1), Some(Reason::StreamCancelled));
}

/// After `stream/end` the gap deadline governs, not the idle bound; without an idle bound an
/// open stream has no deadline.
#[test]
fn the_idle_bound_applies_only_while_the_stream_is_open() {
    let opened = Instant::now();
    let mut m = machine().with_idle_timeout(Duration::from_millis(10), opened);
    m.chunk(2, text(2), 1);
    assert_eq!(m.end(end(2), opened), Fed::Waiting);
    assert_eq!(m.deadline(), Some(opened + GAP));
    assert!(!m.expire(opened + Duration::from_millis(500)));
    assert!(m.expire(opened + GAP));
    assert!(!m.went_idle());
    assert_eq!(reason(drain(&mut m).1), Some(Reason::StreamGap));

    let mut m = machine();
    assert_eq!(m.deadline(), None);
    assert!(!m.expire(opened + IDLE * 100));
}

/// A chunk whose params did not decode fails the stream with `protocol_error` and the words
/// the host gave (which name it), after what was delivered; unless it is a duplicate or the
/// stream already finished.
#[test]
fn a_refused_chunk_fails_the_stream_naming_it() {
    let mut m = machine();
    m.chunk(1, text(1), 1);
    m.chunk(3, text(3), 1);
    assert_eq!(m.refuse(1, "dup".into()), Fed::Duplicate);
    assert_eq!(m.refuse(3, "held".into()), Fed::Duplicate);
    assert!(!m.is_finished());
    assert_eq!(
        m.refuse(2, "chunk 2 (type \"x\") was refused".into()),
        Fed::Finished
    );
    assert_eq!(m.buffered(), 1);
    let (texts, outcome) = drain(&mut m);
    assert_eq!(texts, ["w1"]);
    assert_eq!(
        outcome,
        Some(Outcome::Failed {
            reason: Reason::ProtocolError,
            detail: "chunk 2 (type \"x\") was refused".into(),
        })
    );
    assert_eq!(m.refuse(4, "late".into()), Fed::Dropped);

    // While waiting for a chunk after the end, too.
    let mut m = machine();
    m.chunk(2, text(2), 1);
    assert_eq!(m.end(end(2), Instant::now()), Fed::Waiting);
    assert_eq!(m.refuse(1, "bad".into()), Fed::Finished);
    assert_eq!(reason(drain(&mut m).1), Some(Reason::ProtocolError));
}

#[test]
fn a_repeated_end_is_ignored_and_a_conflicting_one_interrupts() {
    let mut m = machine();
    let now = Instant::now();
    m.chunk(2, text(2), 1);
    assert_eq!(m.end(end(2), now), Fed::Waiting);
    assert_eq!(m.end(end(2), now), Fed::Duplicate);
    assert_eq!(m.end(end(3), now), Fed::Finished);
    assert_eq!(reason(drain(&mut m).1), Some(Reason::ProviderInterrupted));

    let mut m = machine();
    m.chunk(2, text(2), 1);
    m.end(end(2), now);
    let mut interrupted = end(2);
    interrupted.interrupted = true;
    assert_eq!(m.end(interrupted, now), Fed::Finished);
    assert_eq!(reason(drain(&mut m).1), Some(Reason::ProviderInterrupted));
}

#[test]
fn after_the_outcome_everything_is_dropped() {
    let mut m = machine();
    m.chunk(1, text(1), 1);
    m.end(end(1), Instant::now());
    assert_eq!(m.chunk(2, text(2), 1), Fed::Dropped);
    assert_eq!(m.end(end(5), Instant::now()), Fed::Dropped);
    assert_eq!(drain(&mut m), (vec!["w1".to_owned()], Some(Outcome::Clean)));
}

#[test]
fn end_outcomes_error_interrupted_and_cancelled() {
    let now = Instant::now();
    let mut m = machine();
    m.end(
        EndInfo {
            last_seq: 0,
            error: "upstream said no".into(),
            interrupted: false,
        },
        now,
    );
    assert_eq!(
        drain(&mut m).1,
        Some(Outcome::Failed {
            reason: Reason::ProviderFailed,
            detail: "upstream said no".into()
        })
    );

    let interrupted = EndInfo {
        last_seq: 0,
        error: String::new(),
        interrupted: true,
    };
    let mut m = machine();
    m.end(interrupted.clone(), now);
    assert_eq!(reason(drain(&mut m).1), Some(Reason::ProviderInterrupted));

    let mut m = machine();
    m.cancel();
    m.end(interrupted, now);
    assert_eq!(reason(drain(&mut m).1), Some(Reason::StreamCancelled));
}

#[test]
fn an_error_chunk_fails_the_stream_with_its_code_in_seq_order() {
    let mut error = ProviderChunk::new(ChunkType::Error);
    error.error = Some(ProviderError {
        code: ProviderErrorCode::ProviderInterrupted,
        message: "rate limited".into(),
    });
    let mut m = machine();
    assert_eq!(m.chunk(2, error, 1), Fed::Held);
    assert_eq!(m.chunk(3, text(3), 1), Fed::Held);
    assert_eq!(m.chunk(1, text(1), 1), Fed::Finished);
    let (texts, outcome) = drain(&mut m);
    assert_eq!(
        texts,
        ["w1"],
        "the chunk before the error is read, the one after is not"
    );
    assert_eq!(
        outcome,
        Some(Outcome::Failed {
            reason: Reason::ProviderInterrupted,
            detail: "rate limited".into()
        })
    );
    assert_eq!((m.buffered(), m.buffered_bytes()), (0, 0));
}

#[test]
fn a_host_failure_keeps_what_was_delivered_and_happens_once() {
    let mut m = machine();
    m.chunk(1, text(1), 1);
    m.chunk(3, text(3), 1);
    m.fail(Reason::ProviderInterrupted, "crashed");
    m.fail(Reason::StreamCancelled, "later");
    assert_eq!(m.buffered(), 1, "the held chunk is released");
    let (texts, outcome) = drain(&mut m);
    assert_eq!(texts, ["w1"]);
    assert_eq!(reason(outcome), Some(Reason::ProviderInterrupted));
}

#[test]
fn discard_releases_everything() {
    let mut m = machine();
    m.chunk(1, text(1), 7);
    m.chunk(3, text(3), 5);
    m.discard();
    assert_eq!((m.buffered(), m.buffered_bytes()), (0, 0));
}

#[test]
fn catalogs_need_unique_refs_with_the_plugins_prefix() {
    let ok = check(
        "acme",
        r#"{"providers":[{"ref":"plugin/acme/a/1"},{"ref":"plugin/acme/b"}]}"#,
    )
    .expect("a valid catalog");
    assert_eq!(ok.len(), 2);
    assert!(check("acme", r#"{"providers":[]}"#).unwrap().is_empty());
    let duplicate = check(
        "acme",
        r#"{"providers":[{"ref":"plugin/acme/a"},{"ref":"plugin/acme/a"}]}"#,
    );
    assert_eq!(duplicate.unwrap_err().0, Reason::ProtocolError);
    for foreign in [
        "plugin/other/a",
        "plugin/acme",
        "plugin/acme/",
        "plugin/acmex/a",
        "x/acme/a",
    ] {
        let raw = format!(r#"{{"providers":[{{"ref":"plugin/acme/ok"}},{{"ref":"{foreign}"}}]}}"#);
        assert_eq!(
            check("acme", &raw).unwrap_err().0,
            Reason::CapabilityNotDeclared,
            "{foreign}"
        );
    }
    assert_eq!(
        check("acme", r#"{"providers":null}"#).unwrap_err().0,
        Reason::ProtocolError
    );
}
