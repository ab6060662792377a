//! [`guarded`]: a callback's work bounded by its deadline and by the connection's shutdown.

use std::future::Future;

use sidewire_ext_protocol::Reason;
use sidewire_jsonrpc::ErrorObject;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// `work` within `deadline` (none: unbounded; past it, `intercept_timeout`), never answered
/// once `cancel` is cancelled: the work is dropped (cancelling the callback) and the future
/// stays pending for good (§6.6).
pub(crate) async fn guarded<T>(
    work: impl Future<Output = Result<T, ErrorObject>>,
    deadline: Option<Instant>,
    cancel: CancellationToken,
) -> Result<T, ErrorObject> {
    let bounded = async move {
        match deadline {
            // `timeout_at` polls the work before the timer: work done by the deadline answers.
            Some(deadline) => tokio::time::timeout_at(deadline, work)
                .await
                .unwrap_or_else(|_| {
                    Err(Reason::InterceptTimeout
                        .error_object_with("the callback overran its deadline"))
                }),
            None => work.await,
        }
    };
    tokio::select! {
        biased;
        () = cancel.cancelled() => std::future::pending().await,
        outcome = bounded => outcome,
    }
}

#[cfg(test)]
mod tests;
