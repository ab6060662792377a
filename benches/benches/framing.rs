//! NDJSON framing throughput: sidewire's `NdjsonCodec` against the raw memchr floor and
//! tokio-util's `LinesCodec`, on the same buffers and the same read pattern.

// criterion_group! generates an undocumented public function.
#![allow(missing_docs)]

use std::time::Duration;

use bytes::BytesMut;
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use sidewire_benches::{ZeroCopyFloor, count_lines, drive, jsonrpc_lines};
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
    let mut input = vec![b'a'; CAP - 1];
    input[CAP - 2] = b'}';
    input.push(b'\n');
    let mut group = c.benchmark_group("ndjson_8MiB_frame");
    group.throughput(Throughput::Bytes(input.len() as u64));
    group.sample_size(20);
    for reads in [128usize, 2048] {
        let read_size = input.len() / reads;
        group.bench_with_input(
            BenchmarkId::new("sidewire_ndjson_reads", reads),
            &read_size,
            |b, &rs| {
                b.iter(|| {
                    let mut codec = NdjsonCodec::new(CAP, Oversize::Terminate);
                    let mut buf = BytesMut::with_capacity(8 * 1024);
                    assert_eq!(drive(&mut codec, &mut buf, &input, rs), 1);
                })
            },
        );
    }
    group.bench_function("tokio_util_lines_codec_reads/2048", |b| {
        b.iter(|| {
            let mut codec = LinesCodec::new_with_max_length(CAP);
            let mut buf = BytesMut::with_capacity(8 * 1024);
            assert_eq!(drive(&mut codec, &mut buf, &input, 4096), 1);
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
criterion_main!(benches);
