//! [`Guarded`]: a callback's work bounded by its deadline and by the connection's shutdown.
//!
//! Written out as a future rather than as `select!` over `timeout_at` inside an `async`
//! block: every `async` layer keeps the future it was handed *and* the future it awaits, so the
//! three layers that did this job made an intercept's boxed future 3.3× the size of its work
//! (3.8 KB for 1.2 KB), copied whole on every move. This one holds the work once, and arms the
//! timer and the shutdown listener only when the work first waits: most callbacks answer in
//! their first poll, and then no timer entry is made and the token is never registered with.
//!
//! States (`work` is `None` once the outcome is out or the work was dropped):
//!
//! | state | on poll |
//! | --- | --- |
//! | fresh (`timer`, `cancelled` unset) | poll the work; ready → answer (or park, if cancelled); pending → arm both, go on as armed |
//! | armed | poll the work, then the timer (elapsed → `intercept_timeout`), then the token (cancelled → drop the work, park) |
//! | parked (`work` is `None`) | pending forever: a cancelled callback is never answered (§6.6) |

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use sidewire_ext_protocol::Reason;
use sidewire_jsonrpc::ErrorObject;
use tokio::time::{Instant, Sleep};
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

pin_project_lite::pin_project! {
    /// The work, its deadline and the shutdown it yields to; see the module docs.
    pub(crate) struct Guarded<F> {
        #[pin]
        work: Option<F>,
        deadline: Option<Instant>,
        #[pin]
        timer: Option<Sleep>,
        cancel: CancellationToken,
        #[pin]
        cancelled: Option<WaitForCancellationFutureOwned>,
    }
}

impl<F> Guarded<F> {
    /// `work` within `deadline` (none: unbounded), never answered once `cancel` is cancelled.
    pub(crate) fn new(work: F, deadline: Option<Instant>, cancel: CancellationToken) -> Self {
        Guarded {
            work: Some(work),
            deadline,
            timer: None,
            cancel,
            cancelled: None,
        }
    }
}

impl<F, T> Future for Guarded<F>
where
    F: Future<Output = Result<T, ErrorObject>>,
{
    type Output = Result<T, ErrorObject>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        let Some(work) = this.work.as_mut().as_pin_mut() else {
            return Poll::Pending;
        };
        // The work first: one that is done by its deadline's expiry still answers, as with
        // `tokio::time::timeout`.
        if let Poll::Ready(outcome) = work.poll(cx) {
            this.work.set(None);
            if this.cancel.is_cancelled() {
                return Poll::Pending;
            }
            return Poll::Ready(outcome);
        }
        if let Some(deadline) = *this.deadline {
            if this.timer.is_none() {
                this.timer.set(Some(tokio::time::sleep_until(deadline)));
            }
            if let Some(timer) = this.timer.as_pin_mut()
                && timer.poll(cx).is_ready()
            {
                this.work.set(None);
                return Poll::Ready(Err(
                    Reason::InterceptTimeout.error_object_with("the callback overran its deadline")
                ));
            }
        }
        if this.cancelled.is_none() {
            this.cancelled
                .set(Some(this.cancel.clone().cancelled_owned()));
        }
        if let Some(cancelled) = this.cancelled.as_pin_mut() {
            ready!(cancelled.poll(cx));
            // Shut down: the work is dropped (cancelling the callback) and never answered.
            this.work.set(None);
        }
        Poll::Pending
    }
}

#[cfg(test)]
mod tests;
