//! NDJSON framing throughput: sidewire's `NdjsonCodec` against the raw memchr floor, the
//! zero-copy floor and tokio-util's `LinesCodec`, on the same input fed by the same driver
//! (each decoder's buffer decides how much a read takes). The binary runs itself again with
//! glibc's heap thresholds fixed (see `main`).

// criterion_group! generates an undocumented public function.
#![allow(missing_docs)]

use std::time::{Duration, Instant};

use bytes::BytesMut;
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group};
use sidewire_benches::{
    PipedFrame, ReadSource, ZeroCopyFloor, count_lines, drive, drive_from, jsonrpc_lines,
};
use sidewire_framing::{NdjsonCodec, Oversize};
use tokio_util::codec::LinesCodec;

const MIB: usize = 1024 * 1024;
const CAP: usize = 8 * MIB;

fn small_lines(c: &mut Criterion) {
    let input = jsonrpc_lines(MIB);
    let lines = count_lines(&input);
    for (unit, throughput) in [
        ("bytes", Throughput::Bytes(input.len() as u64)),
        ("frames", Throughput::Elements(lines)),
    ] {
        let mut group = c.benchmark_group(format!("ndjson_200B_lines_64KiB_reads/{unit}"));
        group.throughput(throughput);
        group.bench_function("memchr_floor", |b| {
            b.iter(|| memchr::memchr_iter(b'\n', std::hint::black_box(&input)).count())
        });
        group.bench_function("zero_copy_floor", |b| {
            b.iter(|| {
                let mut codec = ZeroCopyFloor::default();
                let mut buf = BytesMut::with_capacity(8 * 1024);
                let n = drive(&mut codec, &mut buf, &input, 64 * 1024);
                assert_eq!(n as u64, lines);
            })
        });
        group.bench_function("sidewire_ndjson", |b| {
            b.iter(|| {
                let mut codec = NdjsonCodec::new(CAP, Oversize::Terminate);
                let mut buf = BytesMut::with_capacity(8 * 1024);
                let n = drive(&mut codec, &mut buf, &input, 64 * 1024);
                assert_eq!(n as u64, lines);
            })
        });
        group.bench_function("tokio_util_lines_codec", |b| {
            b.iter(|| {
                let mut codec = LinesCodec::new_with_max_length(CAP);
                let mut buf = BytesMut::with_capacity(8 * 1024);
                let n = drive(&mut codec, &mut buf, &input, 64 * 1024);
                assert_eq!(n as u64, lines);
            })
        });
        group.finish();
    }
}

fn one_big_frame(c: &mut Criterion) {
    // Reads copy from a 64 KiB block, as reads from a pipe copy from its buffer (`PipedFrame`).
    let input = PipedFrame::new(CAP);
    let mut group = c.benchmark_group("ndjson_8MiB_frame");
    group.throughput(Throughput::Bytes(input.len() as u64));
    group.sample_size(20);
    // The two read sizes take turns, the untimed one before each timed one, so both rows run
    // with the same heap behind them (the buffer grows along a ladder of reallocations, whose
    // cost depends on where glibc's heap stands). The zero-copy floor (no cap) takes the same
    // turns: its own 2,048 / 128 ratio is what the reads cost, whatever the decoder.
    let sizes = [128usize, 2048];
    for (name, sidewire) in [
        ("zero_copy_floor_reads", false),
        ("sidewire_ndjson_reads", true),
    ] {
        for (i, reads) in sizes.into_iter().enumerate() {
            let one = |reads: usize| {
                let read_size = input.len() / reads;
                let mut buf = BytesMut::with_capacity(8 * 1024);
                let frames = if sidewire {
                    let mut codec = NdjsonCodec::new(CAP, Oversize::Terminate);
                    drive_from(&mut codec, &mut buf, &input, read_size)
                } else {
                    drive_from(&mut ZeroCopyFloor::default(), &mut buf, &input, read_size)
                };
                assert_eq!(frames, 1);
            };
            group.bench_function(BenchmarkId::new(name, reads), |b| {
                b.iter_custom(|iters| {
                    let mut timed = Duration::ZERO;
                    for _ in 0..iters {
                        one(sizes[1 - i]);
                        let start = Instant::now();
                        one(reads);
                        timed += start.elapsed();
                    }
                    timed
                })
            });
        }
    }
    group.bench_function("tokio_util_lines_codec_reads/2048", |b| {
        b.iter(|| {
            let mut codec = LinesCodec::new_with_max_length(CAP);
            let mut buf = BytesMut::with_capacity(8 * 1024);
            assert_eq!(drive_from(&mut codec, &mut buf, &input, 4096), 1);
        })
    });
    group.finish();
}

fn discard(c: &mut Criterion) {
    // A 9 MiB line over the 8 MiB cap, then one ordinary line: skip mode reports the big one and
    // goes on.
    let mut input = vec![b'z'; 9 * MIB];
    input.push(b'\n');
    let tail = jsonrpc_lines(200);
    let expected = 1 + count_lines(&tail) as usize;
    input.extend_from_slice(&tail);
    let mut group = c.benchmark_group("ndjson_discard_9MiB_line");
    group.throughput(Throughput::Bytes(input.len() as u64));
    group.sample_size(20);
    group.bench_function("sidewire_ndjson_skip", |b| {
        b.iter(|| {
            let mut codec = NdjsonCodec::new(CAP, Oversize::Skip);
            let mut buf = BytesMut::with_capacity(8 * 1024);
            assert_eq!(drive(&mut codec, &mut buf, &input, 64 * 1024), expected);
        })
    });
    group.bench_function("tokio_util_lines_codec", |b| {
        b.iter(|| {
            let mut codec = LinesCodec::new_with_max_length(CAP);
            let mut buf = BytesMut::with_capacity(8 * 1024);
            assert_eq!(drive(&mut codec, &mut buf, &input, 64 * 1024), expected);
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    targets = small_lines, one_big_frame, discard
}

/// glibc's thresholds, in the environment it reads at start.
const MMAP_THRESHOLD: &str = "MALLOC_MMAP_THRESHOLD_";
const TRIM_THRESHOLD: &str = "MALLOC_TRIM_THRESHOLD_";

/// Runs the benches in this binary re-executed with glibc's mmap and trim thresholds fixed.
///
/// glibc raises its mmap threshold to the size of each mapped block it frees, and gives the
/// top of its heap back to the kernel past a trim threshold that moves with it. So whether a
/// large buffer came from fresh pages depended on what the process had freed before (the
/// 8 MiB row of `LinesCodec`: 2.1 or 6.4 ms, 40% of the latter page faults). Fixed thresholds
/// serve every buffer of every row from a heap that is never given back. Whether `realloc`
/// grows a buffer in place or copies it still depends on what lies above it in the heap, which
/// this does not fix (BENCHMARKS.md). Other allocators ignore the variables.
fn main() {
    if std::env::var_os(TRIM_THRESHOLD).is_none() {
        let status = std::process::Command::new(std::env::current_exe().expect("this binary"))
            .args(std::env::args_os().skip(1))
            .env(MMAP_THRESHOLD, (64 * MIB).to_string())
            .env(TRIM_THRESHOLD, (256 * MIB).to_string())
            .status()
            .expect("this bench re-executed");
        std::process::exit(status.code().unwrap_or(1));
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
