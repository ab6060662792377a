//! Provider extensions (spec §14), when the manifest declares capability `providers`: the
//! catalog, one stream read to its end (chunks numbered from 1, one `stream/end` with the last
//! seq, never an `error` chunk), a stream cancelled at once (no chunk after the processed
//! cancel, `interrupted` end), a cancel of an unknown stream, and `stream/open` refusals.

use std::time::Duration;

use serde_json::{Value, json};
use sidewire_ext_protocol::{
    Capability, ChunkType, ProtocolProfile, ProviderCatalogResult, Reason, StreamCancelResult,
    StreamChunkParams, StreamEndParams, StreamOpenResult, decode_params, decode_result,
    is_plugin_provider_ref,
};
use tokio::time::Instant;

use super::super::report::Findings;
use super::super::session::{Checked, Ctx, Session};
use super::ready;

const IDS: &[&str] = &["89", "90", "S-provider"];

/// How long the kit watches for frames after a stream's end.
const QUIET: Duration = Duration::from_millis(300);

pub(super) async fn run(ctx: &Ctx) -> Findings {
    if !ctx.has(Capability::Providers) {
        let mut findings = Findings::default();
        for id in IDS {
            findings.add(
                id,
                super::super::report::Outcome::NotApplicable(
                    "the manifest does not declare capability providers".to_owned(),
                ),
            );
        }
        return findings;
    }
    let mut s = match ready(ctx, IDS).await {
        Ok(s) => s,
        Err(findings) => return findings,
    };
    s.mark();
    let reference = match catalog(&mut s).await {
        Ok(Ok(reference)) => reference,
        Ok(Err(checked)) => {
            s.record("89", checked);
            return s.finish();
        }
        Err(why) => {
            s.fail("89", why);
            return s.finish();
        }
    };
    let Some(reference) = reference else {
        s.pass("89");
        for id in ["90", "S-provider"] {
            s.not_applicable(id, "the catalog is empty: there is no model to stream from");
        }
        return s.finish();
    };
    s.mark();
    let checked = one_stream(&mut s, &reference)
        .await
        .unwrap_or_else(Checked::Fail);
    s.record("89", checked);
    s.mark();
    let checked = cancelled_stream(&mut s, &reference)
        .await
        .unwrap_or_else(Checked::Fail);
    s.record("90", checked);
    s.mark();
    let checked = refusals(&mut s, &reference)
        .await
        .unwrap_or_else(Checked::Fail);
    s.record("S-provider", checked);
    s.finish()
}

/// The catalog, checked; returns the first ref (the handshake's when the catalog has none).
async fn catalog(s: &mut Session<'_>) -> Result<Result<Option<String>, Checked>, String> {
    let msg = s.call("extension/provider/catalog", json!({})).await?;
    let Some(result) = msg.result() else {
        return Ok(Err(Checked::Fail(format!(
            "extension/provider/catalog was answered with {}",
            msg.describe()
        ))));
    };
    let catalog: ProviderCatalogResult = match decode_result(&result.to_string()) {
        Ok(catalog) => catalog,
        Err(err) => {
            return Ok(Err(Checked::Fail(format!(
                "the catalog does not decode: {err}"
            ))));
        }
    };
    let plugin = &s.ctx.launch.plugin_id;
    let mut seen = Vec::new();
    for descriptor in &catalog.providers {
        if !is_plugin_provider_ref(&descriptor.reference, plugin) {
            return Ok(Err(Checked::Fail(format!(
                "the catalog ref {:?} is not of the form plugin/{plugin}/…",
                descriptor.reference
            ))));
        }
        if seen.contains(&descriptor.reference) {
            return Ok(Err(Checked::Fail(format!(
                "the catalog names {:?} twice",
                descriptor.reference
            ))));
        }
        seen.push(descriptor.reference.clone());
    }
    let handshake = s
        .handshake
        .as_ref()
        .and_then(|h| h.providers.first().map(|p| p.reference.clone()));
    Ok(Ok(seen.into_iter().next().or(handshake)))
}

fn open_params(stream_id: &str, reference: &str) -> Value {
    open_params_from(stream_id, reference, 0)
}

fn open_params_from(stream_id: &str, reference: &str, seq_base: u64) -> Value {
    json!({
        "streamId": stream_id,
        "providerRef": reference,
        "request": {
            "messages": [{"role": "user", "content": "Say hello to the conformance kit."}],
            "tools": [],
            "maxTokens": 256,
        },
        "seqBase": seq_base,
    })
}

/// What a stream's notifications showed.
#[derive(Default)]
struct Seen {
    seqs: Vec<u64>,
    ends: Vec<StreamEndParams>,
    error_chunks: usize,
    invalid: Vec<String>,
}

/// Moves the stream notifications for `stream_id` out of the session's queue.
fn collect(s: &mut Session<'_>, stream_id: &str, seen: &mut Seen) {
    let notes: Vec<_> = s.notes.drain(..).collect();
    for note in notes {
        let params = note.params().map(Value::to_string);
        match note.method() {
            Some("extension/provider/stream/chunk") => {
                match decode_params::<StreamChunkParams>(params.as_deref()) {
                    Ok(chunk) if chunk.stream_id == stream_id => {
                        if chunk.chunk.kind == ChunkType::Error {
                            seen.error_chunks += 1;
                        }
                        seen.seqs.push(chunk.seq);
                    }
                    Ok(_) => {}
                    Err(err) => seen
                        .invalid
                        .push(format!("a stream/chunk that does not decode: {err}")),
                }
            }
            Some("extension/provider/stream/end") => {
                match decode_params::<StreamEndParams>(params.as_deref()) {
                    Ok(end) if end.stream_id == stream_id => seen.ends.push(end),
                    Ok(_) => {}
                    Err(err) => seen
                        .invalid
                        .push(format!("a stream/end that does not decode: {err}")),
                }
            }
            _ => {}
        }
    }
}

/// Reads until `stream_id` ended (or the wait ends), then a little longer.
async fn watch(s: &mut Session<'_>, stream_id: &str, seen: &mut Seen) {
    let deadline = s.ctx.wait();
    loop {
        collect(s, stream_id, seen);
        if !seen.ends.is_empty() {
            break;
        }
        match s.next(deadline).await {
            Ok(Some(msg)) => s.push_stray(msg),
            Ok(None) => {}
            Err(_) => break,
        }
    }
    let _ = s.drain_until(Instant::now() + QUIET).await;
    collect(s, stream_id, seen);
}

async fn one_stream(s: &mut Session<'_>, reference: &str) -> Result<Checked, String> {
    numbered_stream(s, reference, "conformance-1", 0).await
}

/// Opens a stream with `seq_base` and reads it to its end: the chunks must be numbered from
/// the first seq of the connection's profile (v1 §14.4: `seqBase + 1`; v2, delta §2.11:
/// `max(seqBase, 1)`), one after another, and `stream/end` must name the last.
async fn numbered_stream(
    s: &mut Session<'_>,
    reference: &str,
    stream_id: &str,
    seq_base: u64,
) -> Result<Checked, String> {
    let first = match s.ctx.profile {
        ProtocolProfile::V2 => seq_base.max(1),
        _ => seq_base + 1,
    };
    let msg = s
        .call(
            "extension/provider/stream/open",
            open_params_from(stream_id, reference, seq_base),
        )
        .await?;
    let accepted = msg
        .result()
        .and_then(|r| decode_result::<StreamOpenResult>(&r.to_string()).ok())
        .is_some_and(|r| r.accepted);
    if !accepted {
        return Ok(Checked::Fail(format!(
            "stream/open for {reference:?} was answered with {}",
            msg.describe()
        )));
    }
    let mut seen = Seen::default();
    watch(s, stream_id, &mut seen).await;
    if let Some(invalid) = seen.invalid.first() {
        return Ok(Checked::Fail(invalid.clone()));
    }
    let expected: Vec<u64> = (first..first + seen.seqs.len() as u64).collect();
    if seen.seqs != expected {
        return Ok(Checked::Fail(format!(
            "with seqBase {seq_base} chunks were numbered {:?} instead of {first}, {}, …",
            seen.seqs,
            first + 1
        )));
    }
    match seen.ends.as_slice() {
        [] => Ok(Checked::Fail(
            "the stream never ended (no stream/end)".to_owned(),
        )),
        [end] if Some(&end.last_seq) != seen.seqs.last().or(Some(&0)) => {
            Ok(Checked::Fail(format!(
                "stream/end has lastSeq {} after the chunks {:?}",
                end.last_seq, seen.seqs
            )))
        }
        [_] => Ok(Checked::Pass),
        ends => Ok(Checked::Fail(format!(
            "the stream ended {} times",
            ends.len()
        ))),
    }
}

async fn cancelled_stream(s: &mut Session<'_>, reference: &str) -> Result<Checked, String> {
    // Open and cancel in one write, so the cancel arrives before much is produced.
    let open = json!({"jsonrpc": "2.0", "id": 900, "method": "extension/provider/stream/open", "params": open_params("conformance-2", reference)});
    let cancel = json!({"jsonrpc": "2.0", "id": 901, "method": "extension/provider/stream/cancel", "params": {"streamId": "conformance-2"}});
    let mut bytes = serde_json::to_vec(&open).expect("JSON");
    bytes.push(b'\n');
    bytes.extend(serde_json::to_vec(&cancel).expect("JSON"));
    bytes.push(b'\n');
    s.send_raw(&bytes).await?;
    let opened = s.response("900").await?;
    let mut seen = Seen::default();
    let answer = s.response("901").await?;
    collect(s, "conformance-2", &mut seen);
    let seqs_at_cancel = seen.seqs.len();
    let cancelled = answer
        .result()
        .and_then(|r| decode_result::<StreamCancelResult>(&r.to_string()).ok())
        .map(|r| r.cancelled);
    let Some(cancelled) = cancelled else {
        return Ok(Checked::Fail(format!(
            "stream/cancel was answered with {}",
            answer.describe()
        )));
    };
    if opened.result().is_some() {
        watch(s, "conformance-2", &mut seen).await;
    }
    if seen.error_chunks > 0 {
        return Ok(Checked::Fail(
            "the sidecar sent an `error` chunk".to_owned(),
        ));
    }
    if cancelled {
        // Frames are read in order: the chunks collected before the cancel's answer were
        // written before it; any later one followed a processed cancel.
        if seen.seqs.len() > seqs_at_cancel {
            return Ok(Checked::Fail(format!(
                "{} chunk(s) followed a processed cancel",
                seen.seqs.len() - seqs_at_cancel
            )));
        }
        match seen.ends.as_slice() {
            [end] if end.interrupted != Some(true) => {
                return Ok(Checked::Fail(
                    "the stream/end after a processed cancel lacks \"interrupted\":true".to_owned(),
                ));
            }
            [end] if end.last_seq != seen.seqs.len() as u64 => {
                return Ok(Checked::Fail(format!(
                    "the interrupted stream/end has lastSeq {} after {} chunks",
                    end.last_seq,
                    seen.seqs.len()
                )));
            }
            [_] => {}
            [] => return Ok(Checked::Fail("a cancelled stream never ended".to_owned())),
            ends => {
                return Ok(Checked::Fail(format!(
                    "the cancelled stream ended {} times",
                    ends.len()
                )));
            }
        }
    }
    // A cancel for a stream that does not exist is answered `cancelled: false`.
    let msg = s
        .call(
            "extension/provider/stream/cancel",
            json!({"streamId": "conformance-none"}),
        )
        .await?;
    let unknown = msg
        .result()
        .and_then(|r| decode_result::<StreamCancelResult>(&r.to_string()).ok())
        .map(|r| r.cancelled);
    if unknown != Some(false) {
        return Ok(Checked::Fail(format!(
            "a cancel for an unknown stream was answered with {}",
            msg.describe()
        )));
    }
    if !cancelled {
        return Ok(Checked::NotApplicable(
            "the stream ended before the cancel was processed (`cancelled:false`), so nothing \
             showed what follows a processed cancel"
                .to_owned(),
        ));
    }
    Ok(Checked::Pass)
}

async fn refusals(s: &mut Session<'_>, reference: &str) -> Result<Checked, String> {
    let plugin = s.ctx.launch.plugin_id.clone();
    let unknown_ref = format!("plugin/{plugin}/conformance/no-such-model");
    let msg = s
        .call(
            "extension/provider/stream/open",
            open_params("conformance-3", &unknown_ref),
        )
        .await?;
    if !msg.is_error(Reason::InvalidParams) {
        return Ok(Checked::Fail(format!(
            "stream/open for an unknown providerRef was answered with {}",
            msg.describe()
        )));
    }
    let mut bad = open_params("conformance-4", reference);
    bad.as_object_mut().expect("an object").remove("request");
    let msg = s.call("extension/provider/stream/open", bad).await?;
    Ok((!msg.is_error(Reason::InvalidParams))
        .then(|| {
            format!(
                "stream/open without `request` was answered with {}",
                msg.describe()
            )
        })
        .into())
}

/// Item D22 (spec delta §2.11): on v2, a stream opened with `seqBase` 1 starts at seq 1 and
/// ends with `lastSeq` equal to its chunk count; one opened with `seqBase` 0 starts at 1 too.
pub(super) async fn v2_numbering(ctx: &Ctx) -> Findings {
    const ID: &str = "D22";
    if !ctx.has(Capability::Providers) {
        let mut findings = Findings::default();
        findings.add(
            ID,
            super::super::report::Outcome::NotApplicable(
                "the manifest does not declare capability providers".to_owned(),
            ),
        );
        return findings;
    }
    let mut s = match ready(ctx, &[ID]).await {
        Ok(s) => s,
        Err(findings) => return findings,
    };
    s.mark();
    let reference = match catalog(&mut s).await {
        Ok(Ok(Some(reference))) => reference,
        Ok(Ok(None)) => {
            s.not_applicable(ID, "the catalog is empty: there is no model to stream from");
            return s.finish();
        }
        Ok(Err(checked)) => {
            s.record(ID, checked);
            return s.finish();
        }
        Err(why) => {
            s.fail(ID, why);
            return s.finish();
        }
    };
    let mut checked = Checked::Pass;
    for (stream_id, seq_base) in [("conformance-v2-1", 1), ("conformance-v2-0", 0)] {
        s.mark();
        match numbered_stream(&mut s, &reference, stream_id, seq_base).await {
            Ok(Checked::Pass) => {}
            Ok(other) => {
                checked = other;
                break;
            }
            Err(why) => {
                checked = Checked::Fail(why);
                break;
            }
        }
    }
    s.record(ID, checked);
    s.finish()
}
