//! The driver is the connection's one writer (`driver/write.rs`): what reaches it through the
//! lanes is written in order, in few writes, under its deadline timer, and no frame waits for
//! a wake-up that never comes.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use futures_util::{FutureExt as _, StreamExt as _};
use serde_json::json;
use sidewire_jsonrpc::{CallOptions, Router};

use crate::support::*;

/// A writer that counts the writes it is asked for.
struct CountingWriter<W> {
    inner: W,
    writes: Arc<AtomicUsize>,
}

impl<W: tokio::io::AsyncWrite + Unpin> tokio::io::AsyncWrite for CountingWriter<W> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.writes.fetch_add(1, Ordering::Relaxed);
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        self.writes.fetch_add(1, Ordering::Relaxed);
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[tokio::test]
async fn a_burst_of_requests_is_still_written_together() {
    let (ours, theirs) = tokio::io::duplex(256 * 1024);
    let (_far, _far_task) = spawn(theirs, strict(), router(None));
    let config = strict();
    let (read, write) = tokio::io::split(ours);
    let writes = Arc::new(AtomicUsize::new(0));
    let write = CountingWriter {
        inner: write,
        writes: Arc::clone(&writes),
    };
    let (stream, sink) = sidewire_jsonrpc::ndjson(read, write, &config);
    let (peer, driver) = sidewire_jsonrpc::connect(stream, sink, Router::new(), config);
    let _task = tokio::spawn(driver);
    within(
        "the first call",
        peer.request::<Add>(&AddParams { a: 1, b: 1 }),
    )
    .await
    .unwrap();
    let before = writes.load(Ordering::Relaxed);
    // 32 calls issued at once, as a pipelining caller does: they wait on the lane for the
    // driver, which writes them in one go.
    let params: Vec<AddParams> = (0..32).map(|n| AddParams { a: n, b: 1 }).collect();
    let calls = params.iter().map(|params| peer.request::<Add>(params));
    let sums = within("32 calls", futures_util::future::join_all(calls)).await;
    for (n, sum) in (0..).zip(sums) {
        assert_eq!(sum.unwrap(), n + 1);
    }
    let writes = writes.load(Ordering::Relaxed) - before;
    assert!(writes <= 4, "32 calls took {writes} writes");
}

#[tokio::test]
async fn a_request_never_overtakes_a_notification_sent_before_it() {
    let (peer, _task, mut raw) = with_raw(strict(), Router::new());
    // A round trip first, so the driver is idle when the notification is queued.
    let first = tokio::spawn({
        let peer = peer.clone();
        async move { peer.request::<Echo>(&json!({"n": 0})).await }
    });
    let request = raw.recv().await;
    raw.send(&json!({"jsonrpc": "2.0", "id": request["id"], "result": "first"}).to_string())
        .await;
    within("the first call", first).await.unwrap().unwrap();
    for n in 0..20 {
        // Queued on the lane; the request right after it, from the same task and before the
        // driver ran, queues behind it.
        peer.notify::<Note>(&Seq { n }).await.unwrap();
        let params = json!({"n": n});
        let mut call = Box::pin(peer.request::<Echo>(&params));
        assert!((&mut call).now_or_never().is_none(), "no answer yet");
        let frame = raw.recv().await;
        assert_eq!(frame["method"], "test/note", "round {n}: {frame}");
        let frame = raw.recv().await;
        assert_eq!(frame["method"], "test/echo", "round {n}: {frame}");
        raw.send(&json!({"jsonrpc": "2.0", "id": frame["id"], "result": n}).to_string())
            .await;
        within("the call", call).await.unwrap();
    }
}

#[tokio::test(start_paused = true)]
async fn an_earlier_deadline_reaches_the_driver_timer() {
    let (a, _ta, _b, _tb) = pair((strict(), Router::new()), (strict(), router(None)));
    // A long call in flight, and a finished one: the driver's timer is set for one of them.
    let long = tokio::spawn({
        let a = a.clone();
        async move {
            a.request_with::<Sleep>(
                &Ms { ms: 600_000 },
                CallOptions::timeout(Duration::from_secs(300)),
            )
            .await
        }
    });
    a.request::<Add>(&AddParams { a: 1, b: 2 }).await.unwrap();
    let started = tokio::time::Instant::now();
    let err = a
        .request_with::<Sleep>(
            &Ms { ms: 600_000 },
            CallOptions::timeout(Duration::from_secs(1)),
        )
        .await
        .unwrap_err();
    assert!(err.is_timeout(), "{err}");
    // On the paused clock the timer fires exactly when it is set for: at the call's own
    // deadline, not at the long call's or the finished call's.
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "timed out after {:?}",
        started.elapsed()
    );
    long.abort();
}

#[tokio::test]
async fn a_frame_the_sink_holds_up_is_finished_by_the_driver() {
    // 64-byte pipes: a large request cannot be written in one go.
    let (ours, theirs) = tokio::io::duplex(64);
    let (_far, _far_task) = spawn(theirs, strict(), router(None));
    let (peer, _task) = spawn(ours, strict(), Router::new());
    within("a small call", peer.request::<Echo>(&json!({"s": "small"})))
        .await
        .unwrap();
    let big = "x".repeat(16 * 1024);
    let echoed = within("a large call", peer.request::<Echo>(&json!({"s": big})))
        .await
        .unwrap();
    assert_eq!(echoed, json!({"s": big}));
}

#[tokio::test]
async fn dropping_the_driver_closes_the_output_while_handles_live() {
    let (peer, task, mut raw) = with_raw(strict(), Router::new());
    let call = tokio::spawn({
        let peer = peer.clone();
        async move { peer.request::<Echo>(&json!({"n": 1})).await }
    });
    let request = raw.recv().await;
    raw.send(&json!({"jsonrpc": "2.0", "id": request["id"], "result": 1}).to_string())
        .await;
    within("the call", call).await.unwrap().unwrap();
    task.abort();
    // `peer` is still held: the far end sees the end of its input all the same.
    let end = within("the end of input", raw.lines.next()).await;
    assert!(end.is_none(), "{end:?}");
    drop(peer);
}

/// Callers on two worker threads race the driver for the lane: every frame must be taken on
/// the wake-up its send gives, since nothing else wakes the driver for the last one. (A lane
/// that skipped its receive while tokio was still waking the previous waker lost exactly
/// that last wake-up: its caller waited for another deadline.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_frame_waits_for_a_wake_up_that_never_comes() {
    let (a, _ta, _b, _tb) = pair((strict(), Router::new()), (strict(), router(None)));
    const TASKS: i64 = 4;
    const CALLS: i64 = 2_000;
    let tasks = (0..TASKS).map(|t| {
        let a = a.clone();
        tokio::spawn(async move {
            for n in 0..CALLS {
                // Each call alone in flight on its task, so the lane keeps emptying.
                let sum = a
                    .request_with::<Add>(
                        &AddParams { a: t, b: n },
                        CallOptions::timeout(Duration::from_secs(300)),
                    )
                    .await
                    .unwrap();
                assert_eq!(sum, t + n);
            }
        })
    });
    // A lost wake-up leaves a call waiting for its 300 s deadline; the bound is far above the
    // few seconds this takes.
    let done = sidewire_test_support::within(
        Duration::from_secs(120),
        "8,000 calls",
        futures_util::future::join_all(tasks),
    )
    .await;
    for task in done {
        task.unwrap();
    }
}

/// A short deadline set while a long request is in flight fires on time whichever thread the
/// caller runs on: the driver learns of it from the lane, never from a wake-up of its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_short_deadline_fires_while_a_long_one_is_pending() {
    let (a, _ta, _b, _tb) = pair((strict(), Router::new()), (strict(), router(None)));
    let _long = tokio::spawn({
        let a = a.clone();
        async move {
            a.request_with::<Sleep>(
                &Ms { ms: 600_000 },
                CallOptions::timeout(Duration::from_secs(300)),
            )
            .await
        }
    });
    for _ in 0..200 {
        let short = tokio::spawn({
            let a = a.clone();
            async move {
                a.request_with::<Sleep>(
                    &Ms { ms: 600_000 },
                    CallOptions::timeout(Duration::from_millis(5)),
                )
                .await
            }
        });
        // 5 ms expected; the bound only tells a timely timeout from one that waited for the
        // long call's 300 s.
        let err = sidewire_test_support::within(Duration::from_secs(60), "a 5 ms call", short)
            .await
            .unwrap()
            .unwrap_err();
        assert!(err.is_timeout(), "{err}");
    }
}
