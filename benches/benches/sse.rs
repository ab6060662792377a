//! SSE decoding throughput: sidewire's `SseCodec` on realistic MCP event-stream bodies, fed in
//! 16 KiB reads the way an HTTP body arrives, against the raw memchr2 floor of finding the line
//! ends.

use std::time::Duration;

use bytes::BytesMut;
use criterion::{Criterion, Throughput};
use sidewire_benches::{drive, jsonrpc_lines};
use sidewire_framing::SseCodec;

const CAP: usize = 4 * 1024 * 1024;
const READ: usize = 16 * 1024;
const EVENTS: usize = 10_000;

/// The ~200-byte JSON-RPC messages the events carry, one per event.
fn payloads() -> Vec<String> {
    let lines = jsonrpc_lines(EVENTS * 260);
    let payloads: Vec<String> = String::from_utf8(lines)
        .expect("the generator writes UTF-8")
        .lines()
        .take(EVENTS)
        .map(str::to_owned)
        .collect();
    assert_eq!(payloads.len(), EVENTS);
    payloads
}

/// What an MCP Streamable HTTP server sends: one message per event, with an id to resume from.
fn mcp_body(line_end: &str) -> Vec<u8> {
    let mut out = String::new();
    for (id, payload) in payloads().iter().enumerate() {
        out.push_str(&format!(
            "event: message{line_end}id: {id}{line_end}data: {payload}{line_end}{line_end}"
        ));
    }
    out.into_bytes()
}

/// The same messages pretty-printed across several `data` lines, as some servers send them.
fn multi_line_body() -> Vec<u8> {
    let mut out = String::new();
    for (id, payload) in payloads().iter().enumerate() {
        out.push_str(&format!("event: message\nid: {id}\n"));
        for part in payload.split(',') {
            out.push_str("data: ");
            out.push_str(part);
            out.push_str(",\n");
        }
        out.push('\n');
    }
    out.into_bytes()
}

fn decode(c: &mut Criterion) {
    let cases = [
        ("mcp_events_lf", mcp_body("\n")),
        ("mcp_events_crlf", mcp_body("\r\n")),
        ("multi_line_data", multi_line_body()),
    ];
    let mut group = c.benchmark_group("sse_decode_16KiB_reads");
    group.measurement_time(Duration::from_secs(3));
    group.sample_size(30);
    for (name, input) in &cases {
        group.throughput(Throughput::Bytes(input.len() as u64));
        group.bench_function(format!("{name}/memchr2_floor"), |b| {
            b.iter(|| memchr::memchr2_iter(b'\r', b'\n', std::hint::black_box(input)).count())
        });
        group.bench_function(format!("{name}/sidewire_sse"), |b| {
            b.iter(|| {
                let mut codec = SseCodec::new(CAP);
                let mut buf = BytesMut::with_capacity(8 * 1024);
                let events = drive(&mut codec, &mut buf, input, READ);
                assert_eq!(events, EVENTS);
            })
        });
    }
    group.finish();
}

// What `criterion_group!` and `criterion_main!` expand to, written out because the macro's
// generated `pub fn` carries no doc comment and the workspace warns on `missing_docs`.
fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    decode(&mut criterion);
    criterion.final_summary();
}
