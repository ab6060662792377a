//! Inbound dispatch: typed handlers per method, fallbacks, and the context handed to them.

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;

use bytes::{Bytes, BytesMut};
use foldhash::fast::RandomState;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;

use crate::config::LocalError;
use crate::message::{encode_error, encode_frame, encode_result};
use crate::{Config, ErrorObject, Id, Notification, Peer, Profile, Request};

/// The future a request handler returns once its params have decoded; it yields the whole
/// response frame, or an empty one for no response at all
/// ([`Router::request_or_silence`]).
pub(crate) type ResponseFuture = Pin<Box<dyn Future<Output = Bytes> + Send + 'static>>;

type RequestHandler =
    Box<dyn Fn(&str, Option<&RawValue>, RequestContext) -> ResponseFuture + Send + Sync + 'static>;
type NotificationHandler = Box<dyn FnMut(&str, Option<&RawValue>) + Send + 'static>;

/// What a request handler is given besides its params: which request it serves, and a handle
/// on the peer for calls of its own (context is passed explicitly, never kept in ambient state).
#[derive(Clone)]
pub struct RequestContext {
    pub(crate) id: Id,
    pub(crate) peer: Peer,
}

impl RequestContext {
    /// The id of the request being served.
    pub fn id(&self) -> &Id {
        &self.id
    }

    /// The peer the request came from, to call it back.
    pub fn peer(&self) -> &Peer {
        &self.peer
    }
}

impl fmt::Debug for RequestContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestContext")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

/// Maps method names to handlers.
///
/// Requests run concurrently (up to the configured limit) as futures driven by the peer's
/// driver; notifications run in arrival order, synchronously on the driver, so a notification
/// handler must not block — hand long work to a task through a channel.
///
/// Policy for what has no handler: an unknown request is answered `-32601`; an unknown
/// notification is dropped (and counted).
pub struct Router {
    // foldhash, not SipHash: a method name is looked up per frame; the keys are the
    // application's own names, so a peer's choice of name cannot crowd one bucket.
    requests: HashMap<Box<str>, RequestHandler, RandomState>,
    notifications: HashMap<Box<str>, NotificationHandler, RandomState>,
    request_fallback: Option<RequestHandler>,
    notification_fallback: Option<NotificationHandler>,
}

impl Default for Router {
    fn default() -> Self {
        Router::new()
    }
}

impl Router {
    /// A router with no handlers.
    pub fn new() -> Self {
        Router {
            requests: HashMap::default(),
            notifications: HashMap::default(),
            request_fallback: None,
            notification_fallback: None,
        }
    }

    /// Handles request `R`: its params are decoded into `R::Params` (failure: `-32602`), the
    /// handler's `Ok` is sent as the result and its `Err` as the error object.
    pub fn request<R, F, Fut>(mut self, handler: F) -> Self
    where
        R: Request,
        F: Fn(R::Params, RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R::Result, ErrorObject>> + Send + 'static,
    {
        self.requests.insert(
            R::METHOD.into(),
            Box::new(move |_, params, ctx| typed::<R::Params, R::Result, _>(&handler, params, ctx)),
        );
        self
    }

    /// Handles request `R` like [`request`](Router::request), except that the handler may
    /// answer nothing at all: `None` sends no response (for a request the peer cancelled,
    /// whose answer the protocol forbids). The request's id is free again either way.
    pub fn request_or_silence<R, F, Fut>(mut self, handler: F) -> Self
    where
        R: Request,
        F: Fn(R::Params, RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Option<Result<R::Result, ErrorObject>>> + Send + 'static,
    {
        self.requests.insert(
            R::METHOD.into(),
            Box::new(move |_, params, ctx| {
                let config = ctx.peer.config();
                let absent = match config.profile {
                    Profile::Strict => "{}",
                    Profile::Lenient => "null",
                };
                match serde_json::from_str::<R::Params>(params.map_or(absent, RawValue::get)) {
                    Ok(params) => {
                        let work = handler(params, ctx.clone());
                        Box::pin(async move {
                            match work.await {
                                Some(outcome) => {
                                    response_frame(ctx.peer.config(), &ctx.id, outcome.as_ref())
                                }
                                // The driver writes no frame for an empty one.
                                None => Bytes::new(),
                            }
                        })
                    }
                    Err(err) => {
                        let error = config.error_with(
                            LocalError::InvalidParams,
                            ErrorObject::invalid_params(format!("invalid params: {err}")),
                        );
                        immediate(&ctx, &error)
                    }
                }
            }),
        );
        self
    }

    /// Handles a request by name with untyped params (any `DeserializeOwned`) and result.
    pub fn request_untyped<P, T, F, Fut>(mut self, method: &str, handler: F) -> Self
    where
        P: DeserializeOwned + Send + 'static,
        T: Serialize + Send + 'static,
        F: Fn(P, RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<T, ErrorObject>> + Send + 'static,
    {
        self.requests.insert(
            method.into(),
            Box::new(move |_, params, ctx| typed::<P, T, _>(&handler, params, ctx)),
        );
        self
    }

    /// Handles a request by name with raw params: `decode` runs on the driver with the borrowed
    /// params (`None` when absent) and returns either an error (sent at once) or the work.
    /// This is the hook for protocols with their own strict decoding and error shapes.
    pub fn request_raw<T, F, Fut>(mut self, method: &str, decode: F) -> Self
    where
        T: Serialize + Send + 'static,
        F: Fn(Option<&RawValue>, RequestContext) -> Result<Fut, ErrorObject>
            + Send
            + Sync
            + 'static,
        Fut: Future<Output = Result<T, ErrorObject>> + Send + 'static,
    {
        self.requests.insert(
            method.into(),
            Box::new(move |_, params, ctx| match decode(params, ctx.clone()) {
                Ok(work) => respond(ctx, work),
                Err(error) => immediate(&ctx, &error),
            }),
        );
        self
    }

    /// Handles every request no other handler takes (instead of answering `-32601`).
    pub fn request_fallback<T, F, Fut>(mut self, decode: F) -> Self
    where
        T: Serialize + Send + 'static,
        F: Fn(&str, Option<&RawValue>, RequestContext) -> Result<Fut, ErrorObject>
            + Send
            + Sync
            + 'static,
        Fut: Future<Output = Result<T, ErrorObject>> + Send + 'static,
    {
        self.request_fallback = Some(Box::new(move |method, params, ctx| {
            match decode(method, params, ctx.clone()) {
                Ok(work) => respond(ctx, work),
                Err(error) => immediate(&ctx, &error),
            }
        }));
        self
    }

    /// Handles notification `N`, in arrival order; params that do not decode drop the
    /// notification (logged at debug level).
    pub fn notification<N, F>(mut self, mut handler: F) -> Self
    where
        N: Notification,
        F: FnMut(N::Params) + Send + 'static,
    {
        self.notifications.insert(
            N::METHOD.into(),
            Box::new(move |method, params| {
                let text = params.map_or("null", RawValue::get);
                match serde_json::from_str::<N::Params>(text) {
                    Ok(params) => handler(params),
                    Err(err) => tracing::debug!(method, %err, "dropped a notification whose params do not decode"),
                }
            }),
        );
        self
    }

    /// Handles a notification by name with raw params, in arrival order.
    pub fn notification_raw<F>(mut self, method: &str, mut handler: F) -> Self
    where
        F: FnMut(Option<&RawValue>) + Send + 'static,
    {
        self.notifications
            .insert(method.into(), Box::new(move |_, params| handler(params)));
        self
    }

    /// Handles every notification no other handler takes.
    pub fn notification_fallback<F>(mut self, handler: F) -> Self
    where
        F: FnMut(&str, Option<&RawValue>) + Send + 'static,
    {
        self.notification_fallback = Some(Box::new(handler));
        self
    }

    /// Starts the handler for a request, or says there is none.
    pub(crate) fn start(
        &self,
        method: &str,
        params: Option<&RawValue>,
        ctx: RequestContext,
    ) -> Option<ResponseFuture> {
        let handler = match self.requests.get(method) {
            Some(handler) => handler,
            None => self.request_fallback.as_ref()?,
        };
        Some(handler(method, params, ctx))
    }

    /// Runs the handler for a notification; `false` when there is none.
    pub(crate) fn notify(&mut self, method: &str, params: Option<&RawValue>) -> bool {
        match self.notifications.get_mut(method) {
            Some(handler) => handler(method, params),
            None => match self.notification_fallback.as_mut() {
                Some(handler) => handler(method, params),
                None => return false,
            },
        }
        true
    }
}

impl fmt::Debug for Router {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut requests: Vec<&str> = self.requests.keys().map(AsRef::as_ref).collect();
        requests.sort_unstable();
        let mut notifications: Vec<&str> = self.notifications.keys().map(AsRef::as_ref).collect();
        notifications.sort_unstable();
        f.debug_struct("Router")
            .field("requests", &requests)
            .field("notifications", &notifications)
            .field("request_fallback", &self.request_fallback.is_some())
            .field(
                "notification_fallback",
                &self.notification_fallback.is_some(),
            )
            .finish()
    }
}

fn typed<P, T, Fut>(
    handler: &(impl Fn(P, RequestContext) -> Fut + ?Sized),
    params: Option<&RawValue>,
    ctx: RequestContext,
) -> ResponseFuture
where
    P: DeserializeOwned,
    T: Serialize + Send + 'static,
    Fut: Future<Output = Result<T, ErrorObject>> + Send + 'static,
{
    let config = ctx.peer.config();
    let absent = match config.profile {
        Profile::Strict => "{}",
        Profile::Lenient => "null",
    };
    match serde_json::from_str::<P>(params.map_or(absent, RawValue::get)) {
        Ok(params) => respond(ctx.clone(), handler(params, ctx)),
        Err(err) => {
            let error = config.error_with(
                LocalError::InvalidParams,
                ErrorObject::invalid_params(format!("invalid params: {err}")),
            );
            immediate(&ctx, &error)
        }
    }
}

/// Wraps a handler's work into a future that yields its response frame.
fn respond<T, Fut>(ctx: RequestContext, work: Fut) -> ResponseFuture
where
    T: Serialize + Send + 'static,
    Fut: Future<Output = Result<T, ErrorObject>> + Send + 'static,
{
    Box::pin(async move {
        let outcome = work.await;
        response_frame(ctx.peer.config(), &ctx.id, outcome.as_ref())
    })
}

/// A future that yields an error response at once.
fn immediate(ctx: &RequestContext, error: &ErrorObject) -> ResponseFuture {
    let frame = error_frame(ctx.peer.config(), Some(&ctx.id), error);
    Box::pin(std::future::ready(frame))
}

/// Encodes a response; one too large for a frame becomes the small `-32603` the protocols ask
/// for (an error object too large is cut to its code and message first).
pub(crate) fn response_frame<T: Serialize>(
    config: &Config,
    id: &Id,
    outcome: Result<&T, &ErrorObject>,
) -> Bytes {
    let written = encode_frame(|dst| match outcome {
        Ok(result) => encode_result(dst, config.max_body(), id, result),
        Err(error) => encode_error(dst, config.max_body(), Some(id), error),
    });
    match written {
        Ok(frame) => frame,
        Err(err) => {
            if !err.is_too_large() {
                tracing::warn!(%err, "a handler's result does not serialize");
                let error = config.local_error(LocalError::Internal);
                return error_frame(config, Some(id), &error);
            }
            error_frame(
                config,
                Some(id),
                &config.local_error(LocalError::ResponseTooLarge),
            )
        }
    }
}

/// Encodes an error response, falling back to one without `data` (and then to a bare internal
/// error) if even that does not fit.
pub(crate) fn error_frame(config: &Config, id: Option<&Id>, error: &ErrorObject) -> Bytes {
    let mut dst = BytesMut::with_capacity(128);
    if encode_error(&mut dst, config.max_body(), id, error).is_ok() {
        return dst.freeze();
    }
    let bare = ErrorObject::new(error.code, "error exceeds frame size limit");
    if encode_error(&mut dst, config.max_body(), id, &bare).is_ok() {
        return dst.freeze();
    }
    // Not even a bare error fits: the cap is absurdly small. Send it anyway rather than
    // nothing; the writer will refuse it and the caller's timeout will tell.
    let _ = encode_error(&mut dst, usize::MAX, None, &bare);
    dst.freeze()
}
