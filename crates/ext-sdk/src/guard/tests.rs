use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use super::*;

fn poll_once<F: Future>(fut: Pin<&mut F>) -> Poll<F::Output> {
    fut.poll(&mut Context::from_waker(Waker::noop()))
}

/// Sets its flag when dropped: shows whether the work was dropped.
struct Dropped(Arc<AtomicBool>);

impl Drop for Dropped {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

#[tokio::test(start_paused = true)]
async fn work_ready_at_once_answers_at_once() {
    let cancel = CancellationToken::new();
    let deadline = Instant::now() + Duration::from_secs(1);
    let mut fut = std::pin::pin!(guarded(
        async { Ok::<_, ErrorObject>(7) },
        Some(deadline),
        cancel.clone()
    ));
    assert!(matches!(poll_once(fut.as_mut()), Poll::Ready(Ok(7))));
}

#[tokio::test(start_paused = true)]
async fn work_past_its_deadline_is_intercept_timeout_and_dropped() {
    let dropped = Arc::new(AtomicBool::new(false));
    let guard = Dropped(Arc::clone(&dropped));
    let work = async move {
        let _guard = guard;
        std::future::pending::<Result<(), ErrorObject>>().await
    };
    let deadline = Instant::now() + Duration::from_millis(150);
    let outcome = guarded(work, Some(deadline), CancellationToken::new()).await;
    let err = outcome.expect_err("the deadline passed");
    assert_eq!(err.code, Reason::InterceptTimeout.code());
    assert!(Instant::now() >= deadline);
    assert!(dropped.load(Ordering::SeqCst));
}

#[tokio::test(start_paused = true)]
async fn work_done_when_its_deadline_passes_still_answers() {
    // The work is polled before the timer (`tokio::time::timeout_at`).
    let deadline = Instant::now() + Duration::from_millis(10);
    let work = async move {
        tokio::time::sleep_until(deadline).await;
        Ok::<_, ErrorObject>(1)
    };
    let outcome = guarded(work, Some(deadline), CancellationToken::new()).await;
    assert_eq!(outcome.ok(), Some(1));
}

#[tokio::test(start_paused = true)]
async fn a_cancel_drops_waiting_work_and_never_answers() {
    let cancel = CancellationToken::new();
    let dropped = Arc::new(AtomicBool::new(false));
    let guard = Dropped(Arc::clone(&dropped));
    let work = async move {
        let _guard = guard;
        std::future::pending::<Result<(), ErrorObject>>().await
    };
    let mut fut = std::pin::pin!(guarded(work, None, cancel.clone()));
    assert!(poll_once(fut.as_mut()).is_pending());
    cancel.cancel();
    assert!(poll_once(fut.as_mut()).is_pending());
    assert!(dropped.load(Ordering::SeqCst), "the work was dropped");
    // Parked for good, however long it waits.
    tokio::time::advance(Duration::from_secs(3600)).await;
    assert!(poll_once(fut.as_mut()).is_pending());
}

#[tokio::test(start_paused = true)]
async fn work_finishing_after_a_cancel_is_not_answered() {
    let cancel = CancellationToken::new();
    cancel.cancel();
    let mut fut = std::pin::pin!(guarded(async { Ok::<_, ErrorObject>(()) }, None, cancel));
    assert!(poll_once(fut.as_mut()).is_pending());
    assert!(poll_once(fut.as_mut()).is_pending());
}
