//! [`WhenWoken`]: a future polled only after it was woken, for running a connection's companion
//! work in the connection's task.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;

/// Wraps `future` so that a task polling it beside others (a branch of `select!` or `join!`)
/// polls it only when it was woken itself, not on every wake of the task.
///
/// `select!` and `join!` poll every branch each time the task wakes. A connection's task wakes
/// twice per request (the frame to write, the answer to read), so a companion branch that waits
/// for something rare (a shutdown signal, a refresh notice, a child's exit) would otherwise
/// re-register its waker twice per request, and a `Notify` takes a lock to do so. The wrapped
/// future gets a waker of its own (through a one-element [`FuturesUnordered`], which keeps one
/// per future) and a poll of the wrapper with nothing woken is a few atomic operations.
///
/// Once the future has completed, polling the wrapper again stays `Pending`.
pub fn when_woken<F: Future>(future: F) -> WhenWoken<F> {
    let one = FuturesUnordered::new();
    one.push(future);
    WhenWoken { one }
}

/// See [`when_woken`].
#[must_use = "futures do nothing unless polled"]
pub struct WhenWoken<F> {
    one: FuturesUnordered<F>,
}

impl<F> std::fmt::Debug for WhenWoken<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WhenWoken")
            .field("done", &self.one.is_empty())
            .finish()
    }
}

impl<F: Future> Future for WhenWoken<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        match self.one.poll_next_unpin(cx) {
            Poll::Ready(Some(output)) => Poll::Ready(output),
            Poll::Ready(None) | Poll::Pending => Poll::Pending,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[tokio::test]
    async fn a_branch_is_polled_only_when_it_was_woken() {
        let polls = Arc::new(AtomicUsize::new(0));
        let (signal, mut signalled) = tokio::sync::oneshot::channel::<&str>();
        let counter = Arc::clone(&polls);
        let rare = when_woken(std::future::poll_fn(move |cx| {
            counter.fetch_add(1, Ordering::SeqCst);
            Pin::new(&mut signalled).poll(cx).map(Result::unwrap)
        }));
        tokio::pin!(rare);
        // The task wakes 100 times for another branch (a channel); the rare branch is polled
        // once, when it starts, not once per wake.
        let (tx, mut rx) = tokio::sync::mpsc::channel::<()>(1);
        let sender = tokio::spawn(async move {
            for _ in 0..100 {
                tx.send(()).await.unwrap();
            }
        });
        let mut received = 0;
        while received < 100 {
            tokio::select! {
                biased;
                out = &mut rare => panic!("finished early: {out}"),
                Some(()) = rx.recv() => received += 1,
            }
        }
        sender.await.unwrap();
        assert_eq!(polls.load(Ordering::SeqCst), 1);
        // Woken itself, it runs to its end.
        signal.send("signalled").unwrap();
        assert_eq!(rare.as_mut().await, "signalled");
        assert_eq!(polls.load(Ordering::SeqCst), 2);
        // Polled again after its end, it stays pending.
        let waker = std::task::Waker::noop();
        let again = rare.as_mut().poll(&mut Context::from_waker(waker));
        assert!(again.is_pending());
    }
}
