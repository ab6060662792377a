//! Framing (spec §2.1, §2.3): a frame of exactly the limit, one byte over it, blank and
//! whitespace-only lines, a BOM, a repeated envelope member. Every fatal case runs on a fresh
//! process: the sidecar must answer nothing more and exit non-zero on its own.

use serde_json::json;
use sidewire_ext_protocol::FRAME_BYTES;

use super::super::report::Findings;
use super::super::session::{Ctx, Session, UNKNOWN_METHOD};
use super::ready;

/// A request for the unregistered method padded with an unknown envelope member so that the
/// frame, its LF included, is exactly `size` bytes.
pub(crate) fn padded_request(id: u64, size: usize) -> Vec<u8> {
    let head =
        format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"{UNKNOWN_METHOD}\",\"pad\":\"");
    let tail = "\"}\n";
    let pad = size - head.len() - tail.len();
    let mut frame = Vec::with_capacity(size);
    frame.extend_from_slice(head.as_bytes());
    frame.resize(head.len() + pad, b'x');
    frame.extend_from_slice(tail.as_bytes());
    debug_assert_eq!(frame.len(), size);
    frame
}

/// Item 1, first half: a frame of exactly 8,388,608 bytes is read and answered.
pub(super) async fn exact(ctx: &Ctx) -> Findings {
    let mut s = match ready(ctx, &["1"]).await {
        Ok(s) => s,
        Err(findings) => return findings,
    };
    s.mark();
    let frame = padded_request(77, FRAME_BYTES);
    // Reading and parsing 8 MiB takes an interpreter a while on a busy machine: the start
    // timeout, not the reply timeout, bounds this write and its answer.
    let big = ctx.options.start_timeout.max(ctx.options.reply_timeout);
    let failure = match s.send_raw_within(&frame, big).await {
        Err(why) => Some(why),
        Ok(()) => {
            let deadline = (tokio::time::Instant::now() + big).min(ctx.deadline);
            s.response_until("77", deadline)
                .await
                .err()
                .map(|why| format!("a frame of exactly {FRAME_BYTES} bytes: {why}"))
        }
    };
    s.verdict("1", failure);
    s.finish()
}

/// Items 1 (second half) and 2: one byte more ends the connection without a reply, and the
/// sidecar exits non-zero with `frame` on stderr.
pub(super) async fn over(ctx: &Ctx) -> Findings {
    let mut s = match ready(ctx, &["1", "2"]).await {
        Ok(s) => s,
        Err(findings) => return findings,
    };
    s.mark();
    let frame = padded_request(78, FRAME_BYTES + 1);
    let big = ctx.options.start_timeout.max(ctx.options.reply_timeout);
    // The sidecar may stop reading at the limit and exit: a failed write is expected.
    let _ = s.send_raw_within(&frame, big).await;
    let replied = s.response("78").await.is_ok();
    let (exit, stderr) = s.finish_within(big).await;
    s.verdict(
        "1",
        if replied {
            Some(format!("a frame of {} bytes was answered", FRAME_BYTES + 1))
        } else {
            match exit {
                None => Some(format!(
                    "after a frame of {} bytes the sidecar was still running",
                    FRAME_BYTES + 1
                )),
                Some(_) => None,
            }
        },
    );
    s.verdict(
        "2",
        match exit {
            None => Some("the sidecar did not exit after an oversized line".to_owned()),
            Some(exit) if exit.success() => {
                Some("the sidecar exited 0 after an oversized line".to_owned())
            }
            Some(_) if !stderr.to_lowercase().contains("frame") => Some(format!(
                "stderr does not mention `frame` (its tail: {:?})",
                tail_of(&stderr)
            )),
            Some(_) => None,
        },
    );
    s.finish()
}

/// The last 200 characters of a stderr tail.
pub(super) fn tail_of(stderr: &str) -> String {
    let chars: Vec<char> = stderr.chars().collect();
    chars[chars.len().saturating_sub(200)..].iter().collect()
}

/// After `line`, a valid request must not be answered and the sidecar must exit non-zero.
async fn fatal(ctx: &Ctx, id: &'static str, line: &[u8], what: &str) -> Findings {
    let mut s = match ready(ctx, &[id]).await {
        Ok(s) => s,
        Err(findings) => return findings,
    };
    s.mark();
    let _ = s.send_raw(line).await;
    let _ = s
        .send(&json!({"jsonrpc": "2.0", "id": 79, "method": UNKNOWN_METHOD}))
        .await;
    let failure = fatal_failure(&mut s, "79", what).await;
    s.verdict(id, failure);
    s.finish()
}

/// What is wrong when the sidecar answers `probe` or does not exit non-zero after `what`.
async fn fatal_failure(s: &mut Session<'_>, probe: &str, what: &str) -> Option<String> {
    if s.response(probe).await.is_ok() {
        return Some(format!(
            "after {what} the sidecar went on answering (it skipped the line)"
        ));
    }
    match s.exit_within(s.ctx.options.reply_timeout).await {
        None => Some(format!(
            "after {what} the sidecar neither answered nor exited"
        )),
        Some(exit) if exit.success() => Some(format!("after {what} the sidecar exited 0")),
        Some(_) => None,
    }
}

pub(super) async fn blank(ctx: &Ctx) -> Findings {
    fatal(ctx, "6", b"\n", "an empty line").await
}

pub(super) async fn whitespace(ctx: &Ctx) -> Findings {
    fatal(ctx, "6", b" \t \n", "a whitespace-only line").await
}

pub(super) async fn bom(ctx: &Ctx) -> Findings {
    let mut line = "\u{feff}".as_bytes().to_vec();
    line.extend_from_slice(
        format!("{{\"jsonrpc\":\"2.0\",\"id\":80,\"method\":\"{UNKNOWN_METHOD}\"}}\n").as_bytes(),
    );
    let mut s = match ready(ctx, &["6"]).await {
        Ok(s) => s,
        Err(findings) => return findings,
    };
    s.mark();
    let _ = s.send_raw(&line).await;
    let failure = fatal_failure(&mut s, "80", "a line beginning with a BOM").await;
    s.verdict("6", failure);
    s.finish()
}

/// Item 7 (frames): an envelope that repeats a member is fatal.
pub(super) async fn duplicate(ctx: &Ctx) -> Findings {
    let line = format!(
        "{{\"jsonrpc\":\"2.0\",\"jsonrpc\":\"2.0\",\"id\":81,\"method\":\"{UNKNOWN_METHOD}\"}}\n"
    );
    let mut s = match ready(ctx, &["7"]).await {
        Ok(s) => s,
        Err(findings) => return findings,
    };
    s.mark();
    let _ = s.send_raw(line.as_bytes()).await;
    let failure = fatal_failure(&mut s, "81", "an envelope repeating `jsonrpc`").await;
    s.verdict("7", failure);
    s.finish()
}
