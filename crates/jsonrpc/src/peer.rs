//! The handle side of a connection: outgoing calls (the glue between the pending table and the
//! driver), notifications on both lanes, shutdown, stats.

use std::borrow::Cow;
use std::fmt;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use bytestring::ByteString;
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::sync::{mpsc, oneshot, watch};

use crate::config::{Cancelled, HookNotification};
use crate::message::{encode_frame, encode_notification, encode_request};
use crate::pending::{Due, Expiry, IdleBound, PendingTable};
use crate::{CloseReason, Config, Error, ErrorObject, Id, Notification, Request, lock};

/// A handle on one JSON-RPC connection. Cheap to clone; every clone talks to the same driver.
///
/// Dropping every handle does not end the connection (the driver goes on serving inbound
/// requests); [`shutdown`](Peer::shutdown) does.
#[derive(Clone)]
pub struct Peer {
    pub(crate) shared: Arc<Shared>,
}

pub(crate) struct Shared {
    pub(crate) config: Config,
    pub(crate) outbound: mpsc::Sender<Outbound>,
    /// The background lane: notifications the driver writes only when the writer is nearly
    /// idle, so they never delay requests and responses.
    pub(crate) background: mpsc::Sender<Background>,
    /// Our requests waiting for responses; the driver completes and expires them, a caller
    /// cancels its own.
    pub(crate) pending: Mutex<PendingTable<oneshot::Sender<Reply>>>,
    /// The origin of deadlines: they are kept as nanoseconds since it, so the earliest one
    /// fits in an atomic. It is on tokio's clock, the clock the deadline timer runs on: with
    /// std's, a paused tokio clock (tests) fires the timer while the sweep, reading std time,
    /// finds nothing expired, and the driver spins until real time catches up.
    pub(crate) epoch: tokio::time::Instant,
    /// The earliest deadline the driver must wake for (`u64::MAX`: none). Callers lower it;
    /// the driver raises it again after a sweep. One timer per connection instead of one per
    /// request keeps timeouts off the round-trip path.
    pub(crate) wake_at: AtomicU64,
    next_id: AtomicU64,
    pub(crate) closed: OnceLock<CloseReason>,
    pub(crate) finished: watch::Sender<bool>,
    pub(crate) stats: Counters,
}

/// What handles send the driver.
pub(crate) enum Outbound {
    /// A frame to write.
    Frame(Bytes),
    /// Stop taking requests; give in-flight work this long.
    Shutdown(Duration),
}

/// What the background lane carries.
pub(crate) enum Background {
    /// A notification frame to write when the writer is nearly idle.
    Frame(Bytes),
    /// Signalled when the driver reaches it: every background frame queued before it has been
    /// handed to the writer.
    Marker(oneshot::Sender<()>),
}

/// How a pending request ends, as routed by the driver.
pub(crate) enum Reply {
    /// The `result`'s text: a slice of the response frame, which the driver checked is UTF-8.
    Result(ByteString),
    /// The peer's error object.
    Error(ErrorObject),
    /// The response broke the rules, or (lenient profile) a frame naming the request did not
    /// decode at all.
    Invalid(Cow<'static, str>),
    /// The response was over the cap and skipped.
    TooLarge { limit: usize },
    /// The connection ended.
    Closed(CloseReason),
    /// The request's deadline (or its idle bound) passed; the driver removed the entry.
    TimedOut(Expiry),
    /// The connection's owner failed the request ([`Peer::fail_request`]).
    Local(Box<dyn std::error::Error + Send + Sync>),
}

impl Reply {
    /// What the caller of request `method` (with this timeout) gets.
    fn into_result(self, method: &str, timeout: Duration) -> Result<RawResult, Error> {
        // The method is copied only into an error: a result costs no allocation here.
        let method = || method.to_owned();
        match self {
            Reply::Result(text) => Ok(RawResult { text }),
            Reply::Error(error) => Err(Error::Remote {
                method: method(),
                error,
            }),
            Reply::Invalid(reason) => Err(Error::InvalidResponse {
                method: method(),
                reason,
            }),
            Reply::TooLarge { limit } => Err(Error::ResponseTooLarge {
                method: method(),
                limit,
            }),
            Reply::Closed(reason) => Err(Error::Closed(reason)),
            Reply::TimedOut(Expiry::Deadline) => Err(Error::Timeout {
                method: method(),
                after: timeout,
                idle: false,
            }),
            Reply::TimedOut(Expiry::Idle(after)) => Err(Error::Timeout {
                method: method(),
                after,
                idle: true,
            }),
            Reply::Local(cause) => Err(Error::Local {
                method: method(),
                cause,
            }),
        }
    }
}

#[derive(Default)]
pub(crate) struct Counters {
    pub(crate) late_responses: AtomicU64,
    pub(crate) garbage_frames: AtomicU64,
    pub(crate) dropped_notifications: AtomicU64,
    pub(crate) dropped_cancel_notices: AtomicU64,
}

/// Counters of things a peer dropped rather than failed on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// Responses whose id matched no pending request (late after a timeout or cancel, or
    /// never sent).
    pub late_responses: u64,
    /// Frames skipped as garbage (non-JSON, not an object, top-level arrays).
    pub garbage_frames: u64,
    /// Inbound notifications dropped: malformed, no handler, or params that do not decode.
    pub dropped_notifications: u64,
    /// Cancel notices a hook produced that could not be queued (the outbound queue was full).
    pub dropped_cancel_notices: u64,
}

/// Options for one outgoing request.
#[derive(Debug, Clone, Default)]
pub struct CallOptions {
    /// Overrides the peer's default request timeout.
    pub timeout: Option<Duration>,
    /// An idle timeout besides the timeout, restarted by an [`Activity`].
    idle: Option<(Duration, Activity)>,
}

impl CallOptions {
    /// Options with this timeout.
    pub fn timeout(timeout: Duration) -> Self {
        CallOptions {
            timeout: Some(timeout),
            idle: None,
        }
    }

    /// Adds an idle timeout: the request also times out once `after` passes since `activity`
    /// was last [touched](Activity::touch) (or created), with
    /// [`Error::Timeout`]`{ idle: true, .. }`. The timeout stays the absolute cap.
    ///
    /// It costs no timer of its own: the connection's one deadline timer wakes at the idle
    /// bound, and only then reads the activity, to fail the request or wake again later.
    /// A request whose idle timeout ran out before it was made (no activity for that long,
    /// as for a later leg of one call whose caller sat on an answer) fails at once, unsent.
    #[must_use]
    pub fn with_idle(mut self, after: Duration, activity: &Activity) -> Self {
        self.idle = Some((after, activity.clone()));
        self
    }
}

/// What restarts a request's idle timeout ([`CallOptions::with_idle`]): a progress report, a
/// change of a task's status. Cheap to clone; every clone touches the same stamp.
#[derive(Clone)]
pub struct Activity {
    /// The last activity, in nanoseconds since `epoch`.
    stamp: Arc<AtomicU64>,
    /// The connection's epoch (its deadlines count from it), on tokio's clock.
    epoch: tokio::time::Instant,
}

impl Activity {
    /// Records activity now.
    pub fn touch(&self) {
        self.stamp
            .fetch_max(nanos_since(self.epoch), Ordering::AcqRel);
    }

    /// When activity was last recorded (or the activity created), on tokio's clock.
    pub fn last(&self) -> tokio::time::Instant {
        self.epoch + Duration::from_nanos(self.stamp.load(Ordering::Acquire))
    }
}

impl fmt::Debug for Activity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Activity")
            .field("last", &self.last())
            .finish()
    }
}

/// Nanoseconds from `epoch` to now (saturating).
fn nanos_since(epoch: tokio::time::Instant) -> u64 {
    u64::try_from(epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// A successful response whose result has not been decoded yet: its text, a slice of the
/// response frame, so nothing is copied or parsed until the caller asks.
#[derive(Clone)]
pub struct RawResult {
    /// The text of one JSON value (the driver checked it), UTF-8 (checked once, for the
    /// frame), sharing the frame's buffer.
    text: ByteString,
}

impl RawResult {
    /// The result's JSON text.
    pub fn get(&self) -> &str {
        &self.text
    }

    /// Decodes the result.
    ///
    /// # Errors
    ///
    /// The serde error when it does not decode into `T`.
    pub fn decode<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_str(self.get())
    }
}

impl fmt::Debug for RawResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("RawResult").field(&self.get()).finish()
    }
}

impl Shared {
    /// Records why the connection closed (the first reason wins and is returned) and fails
    /// every pending request with it. The reason is set before the table is drained, which is
    /// what lets a caller that inserts late see it (`Peer::call`).
    pub(crate) fn close(&self, reason: CloseReason) -> CloseReason {
        let reason = self.closed.get_or_init(|| reason).clone();
        let pending = lock(&self.pending).drain();
        for reply in pending {
            let _ = reply.send(Reply::Closed(reason.clone()));
        }
        reason
    }

    /// Fails every request past its deadline and records the next deadline for the driver's
    /// timer.
    pub(crate) fn expire_overdue(&self) {
        let now = nanos_since(self.epoch);
        let mut table = lock(&self.pending);
        let expired = table.expire(now);
        for (reply, expiry) in expired.values {
            let _ = reply.send(Reply::TimedOut(expiry));
        }
        // Stored under the lock, so a caller inserting a new entry either is seen here or
        // lowers the value after this store.
        let next = expired.next_deadline.unwrap_or(u64::MAX);
        self.wake_at.store(next, Ordering::Release);
    }

    /// The deadline `timeout` after `now` (both in nanoseconds since the epoch).
    pub(crate) fn deadline_after(now: u64, timeout: Duration) -> u64 {
        let timeout = u64::try_from(timeout.as_nanos()).unwrap_or(u64::MAX);
        now.saturating_add(timeout).min(u64::MAX - 1)
    }
}

impl Peer {
    pub(crate) fn new(
        config: Config,
        outbound: mpsc::Sender<Outbound>,
        background: mpsc::Sender<Background>,
    ) -> Self {
        let (finished, _) = watch::channel(false);
        Peer {
            shared: Arc::new(Shared {
                config,
                outbound,
                background,
                pending: Mutex::new(PendingTable::new()),
                epoch: tokio::time::Instant::now(),
                wake_at: AtomicU64::new(u64::MAX),
                next_id: AtomicU64::new(1),
                closed: OnceLock::new(),
                finished,
                stats: Counters::default(),
            }),
        }
    }

    pub(crate) fn config(&self) -> &Config {
        &self.shared.config
    }

    /// Sends request `R` and waits for its result, within the peer's default timeout.
    ///
    /// # Errors
    ///
    /// See [`request_with`](Peer::request_with).
    ///
    /// # Cancel safety
    ///
    /// Dropping the future cancels the request: its pending entry is removed at once, the
    /// protocol's cancel hook runs, and a late response is dropped and counted.
    pub async fn request<R: Request>(&self, params: &R::Params) -> Result<R::Result, Error> {
        self.request_with::<R>(params, CallOptions::default()).await
    }

    /// Sends request `R` with per-call options and waits for its result.
    ///
    /// # Errors
    ///
    /// [`Error::Closed`] when the connection is or becomes closed, [`Error::Timeout`],
    /// [`Error::Remote`] for the peer's error object, [`Error::FrameTooLarge`] when the
    /// request does not fit in a frame (nothing is written), [`Error::Serialize`],
    /// [`Error::Decode`] and [`Error::InvalidResponse`] for answers that do not fit.
    ///
    /// # Cancel safety
    ///
    /// As for [`request`](Peer::request).
    pub async fn request_with<R: Request>(
        &self,
        params: &R::Params,
        options: CallOptions,
    ) -> Result<R::Result, Error> {
        let raw = self.call(R::METHOD, Some(params), options).await?;
        raw.decode().map_err(|error| Error::Decode {
            method: R::METHOD.to_owned(),
            error,
        })
    }

    /// Sends an untyped request (`params: None` omits the member) and returns its undecoded
    /// result.
    ///
    /// # Errors
    ///
    /// As for [`request_with`](Peer::request_with), less the decoding.
    ///
    /// # Cancel safety
    ///
    /// As for [`request`](Peer::request).
    pub async fn call<P: Serialize + ?Sized>(
        &self,
        method: &str,
        params: Option<&P>,
        options: CallOptions,
    ) -> Result<RawResult, Error> {
        let shared = &self.shared;
        if let Some(reason) = shared.closed.get() {
            return Err(Error::Closed(reason.clone()));
        }
        let id = shared.next_id.fetch_add(1, Ordering::Relaxed);
        let wire_id = Id::int(i64::try_from(id).unwrap_or(i64::MAX));
        let frame = encode_frame(|frame| {
            encode_request(frame, shared.config.max_body(), &wire_id, method, params)
        })
        .map_err(|err| self.encode_error(method, err))?;
        let timeout = options.timeout.unwrap_or(shared.config.request_timeout);
        let (mut guard, mut receiver) =
            self.register(id, &wire_id, method, timeout, options.idle)?;
        let queued = self.queue_request(frame, &mut receiver).await;
        let reply = match queued {
            Ok(()) => receiver
                .await
                .unwrap_or_else(|_| Reply::Closed(self.close_reason())),
            Err(reply) => reply,
        };
        guard.disarm();
        if let Reply::TimedOut(expiry) = reply {
            // The driver already removed the entry; the request is still abandoned on the wire.
            guard.notice(Abandoned::TimedOut(expiry));
        }
        reply.into_result(method, timeout)
    }

    /// Enters request `id` in the pending table, due `timeout` from now (or sooner, `idle`
    /// after its activity), and arms the guard that cancels it if the caller gives up. `Err` when the
    /// connection closed meanwhile, or when the idle timeout ran out already (no activity for
    /// that long before this request, such as a later leg of one call): it is not sent.
    fn register<'a>(
        &'a self,
        id: u64,
        wire_id: &'a Id,
        method: &'a str,
        timeout: Duration,
        idle: Option<(Duration, Activity)>,
    ) -> Result<(PendingGuard<'a>, oneshot::Receiver<Reply>), Error> {
        let shared = &self.shared;
        let now = nanos_since(shared.epoch);
        let due = Due {
            cap: Shared::deadline_after(now, timeout),
            idle: idle.map(|(after, activity)| IdleBound {
                after,
                stamp: activity.stamp,
            }),
        };
        if let Some(idle) = &due.idle
            && idle.due() <= now
        {
            return Err(Error::Timeout {
                method: method.to_owned(),
                after: idle.after,
                idle: true,
            });
        }
        let (reply, receiver) = oneshot::channel();
        let deadline = lock(&shared.pending).insert(id, due, reply);
        // The driver keeps one timer for the earliest deadline; lower it if ours is earlier.
        // The driver reads it after taking our frame from the lane (every request's frame
        // takes the lane), so no wake-up of its own is needed.
        shared.wake_at.fetch_min(deadline, Ordering::AcqRel);
        let mut guard = PendingGuard {
            peer: self,
            id,
            wire_id,
            method,
            armed: true,
        };
        // The driver fails every pending entry when it closes; one inserted after that is
        // caught here, because the reason is set before the table is drained.
        if let Some(reason) = shared.closed.get() {
            guard.disarm();
            lock(&shared.pending).cancel(id);
            return Err(Error::Closed(reason.clone()));
        }
        Ok((guard, receiver))
    }

    /// Queues a request's frame. Fast path: room in the queue. Otherwise it waits for room,
    /// but a timeout (which the driver raises through `receiver`) ends the wait too; `Err` is
    /// how the request ended before it was queued.
    async fn queue_request(
        &self,
        frame: Bytes,
        receiver: &mut oneshot::Receiver<Reply>,
    ) -> Result<(), Reply> {
        let outbound = &self.shared.outbound;
        let frame = Outbound::Frame(frame);
        match outbound.try_reserve() {
            Ok(permit) => {
                permit.send(frame);
                Ok(())
            }
            Err(mpsc::error::TrySendError::Closed(())) => Err(Reply::Closed(self.close_reason())),
            Err(mpsc::error::TrySendError::Full(())) => tokio::select! {
                biased;
                reply = receiver => Err(reply.unwrap_or_else(|_| Reply::Closed(self.close_reason()))),
                permit = outbound.reserve() => match permit {
                    Ok(permit) => {
                        permit.send(frame);
                        Ok(())
                    }
                    Err(_) => Err(Reply::Closed(self.close_reason())),
                },
            },
        }
    }

    /// Sends notification `N`, waiting for room in the outbound queue.
    ///
    /// # Errors
    ///
    /// [`Error::Closed`], [`Error::FrameTooLarge`] (nothing written), [`Error::Serialize`].
    ///
    /// # Cancel safety
    ///
    /// Dropping the future before it completes sends nothing.
    pub async fn notify<N: Notification>(&self, params: &N::Params) -> Result<(), Error> {
        self.notify_untyped(N::METHOD, Some(params)).await
    }

    /// Sends an untyped notification, waiting for room in the outbound queue.
    ///
    /// # Errors
    ///
    /// As for [`notify`](Peer::notify).
    ///
    /// # Cancel safety
    ///
    /// Dropping the future before it completes sends nothing.
    pub async fn notify_untyped<P: Serialize + ?Sized>(
        &self,
        method: &str,
        params: Option<&P>,
    ) -> Result<(), Error> {
        let frame = self.notification_frame(method, params)?;
        self.send_on(&self.shared.outbound, Outbound::Frame(frame))
            .await
    }

    /// Sends a notification on the background lane, waiting for room in it. The driver takes
    /// background frames only while less than 64 KiB waits for the writer, so requests,
    /// responses and ordinary notifications sent later overtake them: a flood of background
    /// notifications to a peer that reads slowly delays a request by at most one background
    /// frame and what the writer's buffers already hold. Background frames keep their order
    /// among themselves.
    ///
    /// # Errors
    ///
    /// As for [`notify`](Peer::notify).
    ///
    /// # Cancel safety
    ///
    /// Dropping the future before it completes sends nothing.
    pub async fn notify_background<P: Serialize + ?Sized>(
        &self,
        method: &str,
        params: Option<&P>,
    ) -> Result<(), Error> {
        let frame = self.notification_frame(method, params)?;
        self.send_on(&self.shared.background, Background::Frame(frame))
            .await
    }

    /// Waits until every background notification sent before this call has been handed to
    /// the writer, so a frame sent afterwards on the ordinary lane goes out after them.
    ///
    /// # Errors
    ///
    /// [`Error::Closed`] when the connection closed first.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: it only waits.
    pub async fn background_flushed(&self) -> Result<(), Error> {
        let (reached, done) = oneshot::channel();
        self.send_on(&self.shared.background, Background::Marker(reached))
            .await?;
        done.await.map_err(|_| Error::Closed(self.close_reason()))
    }

    /// Sends on one of the driver's lanes, waiting for room; `Err` once the driver is gone.
    async fn send_on<T>(&self, lane: &mpsc::Sender<T>, message: T) -> Result<(), Error> {
        lane.send(message)
            .await
            .map_err(|_| Error::Closed(self.close_reason()))
    }

    /// Queues a notification without waiting; fails when the outbound queue is full.
    ///
    /// # Errors
    ///
    /// As for [`notify`](Peer::notify), and [`Error::Timeout`] with a zero duration when the
    /// queue is full.
    pub fn try_notify<P: Serialize + ?Sized>(
        &self,
        method: &str,
        params: Option<&P>,
    ) -> Result<(), Error> {
        let frame = self.notification_frame(method, params)?;
        self.shared
            .outbound
            .try_send(Outbound::Frame(frame))
            .map_err(|err| match err {
                mpsc::error::TrySendError::Full(_) => Error::Timeout {
                    method: method.to_owned(),
                    after: Duration::ZERO,
                    idle: false,
                },
                mpsc::error::TrySendError::Closed(_) => Error::Closed(self.close_reason()),
            })
    }

    fn notification_frame<P: Serialize + ?Sized>(
        &self,
        method: &str,
        params: Option<&P>,
    ) -> Result<Bytes, Error> {
        if let Some(reason) = self.shared.closed.get() {
            return Err(Error::Closed(reason.clone()));
        }
        encode_frame(|frame| {
            encode_notification(frame, self.shared.config.max_body(), method, params)
        })
        .map_err(|err| self.encode_error(method, err))
    }

    fn encode_error(&self, method: &str, err: sidewire_framing::Error) -> Error {
        match err {
            sidewire_framing::Error::Serialize(error) => Error::Serialize {
                method: method.to_owned(),
                error,
            },
            _ => Error::FrameTooLarge {
                method: method.to_owned(),
                limit: self.shared.config.max_frame,
            },
        }
    }

    fn close_reason(&self) -> CloseReason {
        self.shared
            .closed
            .get()
            .cloned()
            .unwrap_or(CloseReason::ShutDown)
    }

    /// Stops taking inbound requests (new ones are answered `-32603`), lets in-flight work
    /// finish for up to `grace`, then cancels what is left, fails pending outgoing requests
    /// with [`CloseReason::ShutDown`], flushes, closes the sink and ends the driver. Returns
    /// when the driver has finished; calling it again only waits.
    ///
    /// The driver must be running (spawned or polled) for this to complete.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future does not undo the shutdown; it only stops waiting for it.
    pub async fn shutdown(&self, grace: Duration) {
        // The request travels in the same queue as frames, so the driver needs no second
        // wake-up source; an error means the driver is already gone.
        let _ = self.shared.outbound.send(Outbound::Shutdown(grace)).await;
        let mut finished = self.shared.finished.subscribe();
        // An error means the sender is gone, which cannot happen while we hold `shared`.
        let _ = finished.wait_for(|done| *done).await;
    }

    /// Whether the connection has closed, and why.
    pub fn close_reason_if_closed(&self) -> Option<CloseReason> {
        self.shared.closed.get().cloned()
    }

    /// Waits until the connection has closed and returns why.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: it only waits.
    pub fn closed(&self) -> impl Future<Output = CloseReason> + Send + 'static {
        let shared = Arc::clone(&self.shared);
        async move {
            let mut finished = shared.finished.subscribe();
            let _ = finished.wait_for(|done| *done).await;
            shared
                .closed
                .get()
                .cloned()
                .unwrap_or(CloseReason::ShutDown)
        }
    }

    /// Fails one of our pending requests locally: its caller gets [`Error::Local`] carrying
    /// `cause` (its [`source`](std::error::Error::source), to downcast back), and a response
    /// that arrives for it later is late (dropped and counted). For the owner of a connection
    /// that learns of a failure outside JSON-RPC, such as a transport that could not deliver
    /// the request. Returns whether a pending request took it: an `id` that names nothing
    /// pending (the request ended already, or was never ours) fails nothing, and since our ids
    /// are never reused it can never fail a different request.
    pub fn fail_request(&self, id: &Id, cause: Box<dyn std::error::Error + Send + Sync>) -> bool {
        let waiting = lock(&self.shared.pending).fail(id);
        waiting.is_some_and(|waiting| waiting.send(Reply::Local(cause)).is_ok())
    }

    /// A new [`Activity`] for requests on this connection ([`CallOptions::with_idle`]), as if
    /// touched now.
    pub fn activity(&self) -> Activity {
        let epoch = self.shared.epoch;
        Activity {
            stamp: Arc::new(AtomicU64::new(nanos_since(epoch))),
            epoch,
        }
    }

    /// How many of our requests are waiting for a response.
    pub fn pending_requests(&self) -> usize {
        lock(&self.shared.pending).len()
    }

    /// What the peer dropped rather than failed on.
    pub fn stats(&self) -> Stats {
        let c = &self.shared.stats;
        Stats {
            late_responses: c.late_responses.load(Ordering::Relaxed),
            garbage_frames: c.garbage_frames.load(Ordering::Relaxed),
            dropped_notifications: c.dropped_notifications.load(Ordering::Relaxed),
            dropped_cancel_notices: c.dropped_cancel_notices.load(Ordering::Relaxed),
        }
    }
}

impl fmt::Debug for Peer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Peer")
            .field("profile", &self.shared.config.profile)
            .field("pending", &self.pending_requests())
            .field("closed", &self.shared.closed.get())
            .finish()
    }
}

/// Removes a request's pending entry and runs the cancel hook when the request is abandoned
/// (its future dropped, or timed out) before a reply was taken.
struct PendingGuard<'a> {
    peer: &'a Peer,
    id: u64,
    wire_id: &'a Id,
    method: &'a str,
    armed: bool,
}

/// How a request was abandoned, for the cancel hook.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Abandoned {
    /// Its future was dropped.
    Dropped,
    /// Its deadline or its idle bound passed.
    TimedOut(Expiry),
}

impl PendingGuard<'_> {
    fn disarm(&mut self) {
        self.armed = false;
    }

    /// Runs the protocol's cancel hook and queues the notice it returns, if any.
    fn notice(&self, how: Abandoned) {
        let shared = &self.peer.shared;
        if shared.closed.get().is_some() {
            return;
        }
        let notice = shared.config.hooks.on_cancel(Cancelled {
            id: self.wire_id,
            method: self.method,
            timed_out: matches!(how, Abandoned::TimedOut(_)),
            idle: matches!(how, Abandoned::TimedOut(Expiry::Idle(_))),
        });
        if let Some(HookNotification { method, params }) = notice {
            let queued = self
                .peer
                .notification_frame(&method, Some(&params))
                .ok()
                .is_some_and(|frame| shared.outbound.try_send(Outbound::Frame(frame)).is_ok());
            if !queued {
                shared
                    .stats
                    .dropped_cancel_notices
                    .fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        // Only a request still pending was abandoned; one the driver already answered or
        // failed is not cancelled on the wire.
        if self.armed && lock(&self.peer.shared.pending).cancel(self.id).is_some() {
            self.notice(Abandoned::Dropped);
        }
    }
}
