//! The state one connection shares between its handle, its router and its driver: negotiated
//! facts, cached lists, the progress registry; plus the jsonrpc hooks, the router of
//! server→client messages, the debounced list refresh, and the driver future that runs it all.
//!
//! Nothing here spawns: the driver is one future the caller runs.
//!
//! The cached lists are per connection, and so per credentials: a list a server marks
//! `cacheScope: "private"` (modern era) is never shown to another user, and a `"public"` one
//! is treated the same way (nothing is shared between connections). A modern listing's
//! `ttlMs` (the smallest of its pages') says how long the list stays fresh: when it runs out
//! the refresh lists it again, at most once per [`MIN_TTL`] per list and at least once per
//! [`MAX_TTL`]; `ttlMs` 0 or absent means no timed refresh (list_changed notices still work),
//! and a failed timed refresh waits for the next notice or listing.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_core::Stream;
use futures_util::Sink;
use futures_util::future::Either;
use serde_json::{Value, json};
use sidewire_jsonrpc::{
    Activity, Cancelled, ErrorObject, HookNotification, Hooks, Peer, Request as _, RequestContext,
    Router, lock,
};
use tokio::sync::{Notify, oneshot, watch};

use crate::protocol::elicit_url;
use crate::protocol::era::{Envelope, Era};
use crate::protocol::handler::DynHandler;
use crate::protocol::headers::ToolHeaders;
use crate::protocol::inbound::Inbound;
use crate::protocol::listen::{self, Listen};
use crate::protocol::listing::{self, List, Truncation};
use crate::protocol::methods::{
    CANCELLED, CreateMessage, Elicit, ElicitationComplete, LIST_CHANGED, ListMethod, ListPrompts,
    ListResourceTemplates, ListResources, ListRoots, ListRootsResult, ListTools, LoggingMessage,
    Ping, ProgressNotification, ResourceUpdated,
};
use crate::protocol::structured::SchemaCache;
use crate::protocol::tool_index::ToolIndex;
use crate::protocol::types::{
    CreateMessageParams, Implementation, InitializeResult, Progress, Prompt, Resource,
    ResourceTemplate, Tool,
};
use crate::transport::{Backend, Background};
use crate::{Error, Root, ServerSpec};

/// Bits of [`Shared::dirty`] and [`Shared::listed`].
pub(crate) const TOOLS: u8 = 1;
pub(crate) const PROMPTS: u8 = 2;
pub(crate) const RESOURCES: u8 = 4;

/// How long a refresh waits after a list_changed notice, so a burst costs one re-list.
pub(crate) const REFRESH_DEBOUNCE: Duration = Duration::from_millis(300);
/// The longest wait between refreshes of a server that keeps announcing changes: each cycle
/// that follows closely on the previous one doubles the wait, up to this.
const REFRESH_MAX_DELAY: Duration = Duration::from_secs(30);
/// The shortest time-to-live a listing is kept for: a server's smaller `ttlMs` is raised to
/// it, so a tiny one cannot make the refresh loop hot.
pub(crate) const MIN_TTL: Duration = Duration::from_secs(1);
/// The longest time-to-live a listing is kept for (a larger `ttlMs` is lowered to it).
pub(crate) const MAX_TTL: Duration = Duration::from_secs(24 * 60 * 60);

/// A per-call progress callback.
pub(crate) type ProgressFn = Arc<dyn Fn(Progress) + Send + Sync>;

/// A request waiting for progress: its callback and, for a tools/call, the activity that
/// restarts its idle timeout.
pub(crate) struct ProgressSlot {
    pub(crate) callback: Option<ProgressFn>,
    pub(crate) activity: Option<Activity>,
}

/// The lists as last fetched, and which of them a cap cut short.
#[derive(Default)]
pub(crate) struct Cache {
    tools: Arc<[Tool]>,
    /// Where each of `tools` is, by name; replaced with `tools`.
    tool_index: ToolIndex,
    prompts: Arc<[Prompt]>,
    resources: Arc<[Resource]>,
    templates: Arc<[ResourceTemplate]>,
    truncations: BTreeMap<List, Truncation>,
    /// When each listed list goes stale by its `ttlMs` (modern era; at most one per list).
    expiries: BTreeMap<List, tokio::time::Instant>,
}

/// The cached list (a bit of [`Shared::dirty`]) a listing of `list` belongs to.
fn list_bit(list: List) -> u8 {
    match list {
        List::Tools => TOOLS,
        List::Prompts => PROMPTS,
        List::Resources | List::ResourceTemplates => RESOURCES,
        // Skills and tasks are listed on demand and never cached.
        List::Skills | List::Tasks => 0,
    }
}

/// A list method whose result the connection caches: where in the [`Cache`] it goes, and
/// which list_changed notice (a bit of [`Shared::dirty`]) makes it stale.
pub(crate) trait Cached: ListMethod {
    const LIST: u8;
    /// What the refresh's warning calls the list.
    const WHAT: &'static str;
    fn slot(cache: &mut Cache) -> &mut Arc<[Self::Item]>;
    /// The items of a finished listing that the connection keeps (all, but for tools).
    fn admit(_shared: &Shared, items: Vec<Self::Item>) -> Vec<Self::Item> {
        items
    }
    /// The index kept beside the list, built before the cache is locked (tools only).
    fn index(_items: &[Self::Item]) -> Option<ToolIndex> {
        None
    }
}

/// Declares where a list method's result is cached. Kept private and small.
macro_rules! cached {
    ($method:ty, $list:expr, $what:literal, $slot:ident) => {
        impl Cached for $method {
            const LIST: u8 = $list;
            const WHAT: &'static str = $what;
            fn slot(cache: &mut Cache) -> &mut Arc<[Self::Item]> {
                &mut cache.$slot
            }
        }
    };
}

impl Cached for ListTools {
    const LIST: u8 = TOOLS;
    const WHAT: &'static str = "tools";
    fn slot(cache: &mut Cache) -> &mut Arc<[Tool]> {
        &mut cache.tools
    }

    fn index(tools: &[Tool]) -> Option<ToolIndex> {
        Some(ToolIndex::new(tools))
    }

    /// A tool the spec's [`ToolFilter`](crate::ToolFilter) filters out is dropped (this is the
    /// one place the filter applies to listings; [`Client::call_tool`](crate::Client::call_tool)
    /// refuses such a tool too). In the modern era, a tool whose `x-mcp-header` designations
    /// are invalid is dropped (a client must not call it), and the designations of the others
    /// are kept for the `Mcp-Param-*` headers of their calls.
    fn admit(shared: &Shared, mut tools: Vec<Tool>) -> Vec<Tool> {
        // A new listing: its schemas are compiled again as calls need them.
        shared.schemas.clear();
        let filter = &shared.spec.tool_filter;
        if !filter.is_all() {
            tools.retain(|tool| filter.allows(&tool.name));
        }
        if shared.era() != Some(Era::Modern) {
            return tools;
        }
        let mut kept = Vec::with_capacity(tools.len());
        let mut designations = Vec::new();
        for tool in tools {
            let schema = tool.input_schema.to_value();
            match crate::protocol::headers::designations(&schema) {
                Ok(found) => {
                    designations.push((tool.name.clone(), found));
                    kept.push(tool);
                }
                Err(why) => {
                    // Both quote the server's schema: cut.
                    let (tool, why) = (crate::text::peer(&tool.name), crate::text::peer(&why));
                    tracing::warn!(server = %shared.name, %tool, %why, "dropped a tool whose x-mcp-header designations are invalid");
                }
            }
        }
        shared.tool_headers.replace(designations);
        kept
    }
}
cached!(ListPrompts, PROMPTS, "prompts", prompts);
cached!(ListResources, RESOURCES, "resources", resources);
cached!(
    ListResourceTemplates,
    RESOURCES,
    "resource templates",
    templates
);

/// What a connection's handle, router and driver share.
pub(crate) struct Shared {
    pub(crate) name: Arc<str>,
    pub(crate) spec: ServerSpec,
    pub(crate) handler: Arc<dyn DynHandler>,
    /// The era, once the handshake or the probe settled it.
    era: OnceLock<Era>,
    /// What every modern request carries in its `_meta`.
    pub(crate) envelope: Envelope,
    /// The `x-mcp-header` designations of the listed tools (modern era, HTTP).
    pub(crate) tool_headers: Arc<ToolHeaders>,
    /// What the server said it is: the `initialize` result, or (modern era) the
    /// `server/discover` result with the version in use.
    pub(crate) init: OnceLock<InitializeResult>,
    /// The calls waiting for progress, by the token each was sent with (at most one per
    /// request in flight). foldhash: one insert and one removal per `tools/call`.
    pub(crate) progress: Mutex<HashMap<u64, ProgressSlot, foldhash::fast::RandomState>>,
    next_token: AtomicU64,
    pub(crate) cache: Mutex<Cache>,
    /// Lists a list_changed notice marked stale since the last refresh.
    pub(crate) dirty: AtomicU8,
    /// Lists fetched at least once: only those are refreshed (nobody asked for the others).
    pub(crate) listed: AtomicU8,
    pub(crate) refresh: Notify,
    /// Wakes the refresh loop to look at the ttls again (a listing set one).
    retimed: Notify,
    /// Held by the one listing in flight (a caller's or the refresh's), so a connection holds
    /// at most one list being fetched beside its four cached ones.
    listing: tokio::sync::Mutex<()>,
    /// Bumped whenever a cached list is replaced.
    pub(crate) revision: watch::Sender<u64>,
    /// The subscriptions and the `subscriptions/listen` state (modern era).
    pub(crate) listen: Listen,
    /// The tasks the connection's task-augmented calls follow.
    pub(crate) tasks: crate::protocol::tasks::Registry,
    /// The tools' compiled schemas (`protocol::structured`).
    pub(crate) schemas: SchemaCache,
    /// The server's requests being served, which its cancel notices stop.
    pub(crate) inbound: Arc<Inbound>,
    /// The roots offered (the spec's, until [`Client::set_roots`](crate::Client::set_roots)).
    roots: Mutex<Arc<[Root]>>,
    /// A request was abandoned and a `notifications/cancelled` made for it: the last handle's
    /// drop then lets the driver write it before the server is killed (see
    /// [`CANCEL_FLUSH`](crate::CANCEL_FLUSH)).
    cancel_owed: AtomicBool,
}

impl Shared {
    pub(crate) fn new(spec: &ServerSpec, handler: Arc<dyn DynHandler>) -> Arc<Self> {
        let envelope = Envelope::new(client_capabilities(spec, handler.as_ref()), &client_info());
        Arc::new(Shared {
            name: Arc::clone(&spec.name),
            spec: spec.clone(),
            handler,
            era: OnceLock::new(),
            envelope,
            tool_headers: Arc::default(),
            init: OnceLock::new(),
            progress: Mutex::new(HashMap::default()),
            next_token: AtomicU64::new(1),
            cache: Mutex::new(Cache::default()),
            dirty: AtomicU8::new(0),
            listed: AtomicU8::new(0),
            refresh: Notify::new(),
            retimed: Notify::new(),
            listing: tokio::sync::Mutex::new(()),
            revision: watch::channel(0).0,
            listen: Listen::default(),
            tasks: crate::protocol::tasks::Registry::default(),
            schemas: SchemaCache::default(),
            inbound: Arc::default(),
            roots: Mutex::new(spec.roots.clone().into()),
            cancel_owed: AtomicBool::new(false),
        })
    }

    /// Whether a `notifications/cancelled` was made on this connection (see `cancel_owed`).
    pub(crate) fn cancel_owed(&self) -> bool {
        self.cancel_owed.load(Ordering::Acquire)
    }

    /// The roots offered now.
    /// The answer to a server's `roots/list`: the handler's, else the connection's roots.
    pub(crate) async fn answer_roots(&self) -> Result<Vec<Root>, ErrorObject> {
        match self.handler.list_roots(Arc::clone(&self.name)).await {
            Some(answer) => answer,
            None => Ok(self.roots()),
        }
    }

    pub(crate) fn roots(&self) -> Vec<Root> {
        lock(&self.roots).to_vec()
    }

    /// Replaces the roots offered; whether they changed.
    pub(crate) fn replace_roots(&self, roots: Vec<Root>) -> bool {
        let mut current = lock(&self.roots);
        if current[..] == roots[..] {
            return false;
        }
        *current = roots.into();
        true
    }

    /// The era, once settled (`None` during the handshake or the probe).
    pub(crate) fn era(&self) -> Option<Era> {
        self.era.get().copied()
    }

    /// Settles the era (once; later calls change nothing).
    pub(crate) fn settle_era(&self, era: Era) {
        let _ = self.era.set(era);
    }

    /// A progress token unique on this connection: a number, as the TypeScript SDK's client
    /// sends (the spec allows a string or an integer), so a call formats and allocates nothing
    /// for it.
    pub(crate) fn next_token(&self) -> u64 {
        self.next_token.fetch_add(1, Ordering::Relaxed)
    }

    /// The list `M` as last fetched.
    pub(crate) fn cached<M: Cached>(&self) -> Arc<[M::Item]> {
        Arc::clone(M::slot(&mut lock(&self.cache)))
    }

    /// The cached tool named `name`: the list it is in, and where (no scan of the list).
    pub(crate) fn find_tool(&self, name: &str) -> Option<(Arc<[Tool]>, usize)> {
        let cache = lock(&self.cache);
        let at = cache.tool_index.find(&cache.tools, name)?;
        Some((Arc::clone(&cache.tools), at))
    }

    /// Which cached lists a cap cut short, by list.
    pub(crate) fn truncations(&self) -> Vec<Truncation> {
        lock(&self.cache).truncations.values().copied().collect()
    }

    /// Lists `M` (waiting for a listing in flight to end first, within `deadline`) and
    /// replaces the cached list; returns the new list. The old list is released as the new
    /// one is stored, so beside the four cached lists a connection holds at most the one
    /// being fetched.
    pub(crate) async fn relist<M: Cached>(
        &self,
        peer: &Peer,
        deadline: tokio::time::Instant,
    ) -> Result<Arc<[M::Item]>, Error> {
        let waited = Instant::now();
        let _turn = tokio::time::timeout_at(deadline, self.listing.lock())
            .await
            .map_err(|_| {
                Error::new(crate::error::Kind::Timeout {
                    what: M::METHOD.to_owned(),
                    after: waited.elapsed(),
                    idle: false,
                })
            })?;
        let caps = (self.spec.max_list_items, self.spec.max_list_bytes);
        let listing = listing::list_all::<M>(self, peer, caps, deadline).await?;
        let items: Arc<[M::Item]> = M::admit(self, listing.items).into();
        let index = M::index(&items);
        // The templates ride along with the resources: the resources' ttl is the one kept.
        let ttl = listing
            .ttl
            .filter(|ttl| !ttl.is_zero() && self.era() == Some(Era::Modern))
            .filter(|_| M::KIND != List::ResourceTemplates)
            .map(|ttl| ttl.clamp(MIN_TTL, MAX_TTL));
        let old = {
            let mut cache = lock(&self.cache);
            if M::KIND != List::ResourceTemplates {
                match ttl {
                    Some(ttl) => {
                        cache
                            .expiries
                            .insert(M::KIND, tokio::time::Instant::now() + ttl);
                        self.retimed.notify_one();
                    }
                    None => {
                        cache.expiries.remove(&M::KIND);
                    }
                }
            }
            match listing.truncation {
                Some(truncation) => cache.truncations.insert(M::KIND, truncation),
                None => cache.truncations.remove(&M::KIND),
            };
            let index = index.map(|index| std::mem::replace(&mut cache.tool_index, index));
            (
                std::mem::replace(M::slot(&mut cache), Arc::clone(&items)),
                index,
            )
        };
        // Dropped outside the lock: freeing a large list takes a while.
        drop(old);
        Ok(items)
    }

    /// The transport started a new session: every cached list may be stale, so each one that
    /// was listed is refreshed (debounced, like a list_changed notice).
    pub(crate) fn session_renewed(&self) {
        self.dirty
            .fetch_or(TOOLS | PROMPTS | RESOURCES, Ordering::SeqCst);
        self.refresh.notify_one();
    }

    /// When the next listed list goes stale by its ttl, if any does.
    fn next_expiry(&self) -> Option<tokio::time::Instant> {
        lock(&self.cache).expiries.values().min().copied()
    }

    /// Marks every list whose ttl ran out stale (and forgets its expiry: the re-listing sets
    /// the next one); whether there was one.
    fn expire(&self) -> bool {
        let now = tokio::time::Instant::now();
        let mut stale = 0;
        lock(&self.cache).expiries.retain(|list, at| {
            let expired = *at <= now;
            if expired {
                stale |= list_bit(*list);
            }
            !expired
        });
        self.dirty.fetch_or(stale, Ordering::SeqCst);
        stale != 0
    }

    pub(crate) fn bump_revision(&self) {
        self.revision.send_modify(|revision| *revision += 1);
    }
}

/// MCP's jsonrpc hooks: an abandoned request (dropped, timed out, or idle-expired) is
/// announced with `notifications/cancelled`, except `initialize` and `server/discover`, which
/// the spec says must never be cancelled. (Over modern-era HTTP the transport turns the
/// notice into closing the request's response stream: see `http::streamable`.)
///
/// In the modern era the notice carries the envelope in its `_meta`, as every modern message
/// does; so the HTTP transport recognises it as modern (and closes the request's stream
/// instead of sending it).
#[derive(Clone, Default)]
pub(crate) struct McpHooks {
    shared: Option<Arc<Shared>>,
}

impl McpHooks {
    /// The hooks of the connection `shared` describes.
    pub(crate) fn of(shared: &Arc<Shared>) -> Self {
        McpHooks {
            shared: Some(Arc::clone(shared)),
        }
    }
}

impl Hooks for McpHooks {
    fn on_cancel(&self, cancelled: Cancelled<'_>) -> Option<HookNotification> {
        // The spec forbids cancelling the handshake, in either era.
        // An abandoned `tasks/cancel` is itself the cancel (sent best effort from a drop):
        // nothing to take back.
        if cancelled.method == crate::protocol::methods::Initialize::METHOD
            || cancelled.method == crate::protocol::methods::Discover::METHOD
            || crate::protocol::tasks::is_cancel(cancelled.method)
        {
            return None;
        }
        let reason = match (cancelled.timed_out, cancelled.idle) {
            (true, true) => "no progress before the client's timeout",
            (true, false) => "client deadline exceeded",
            (false, _) => "the client abandoned the request",
        };
        let mut params = json!({ "requestId": cancelled.id, "reason": reason });
        if let Some(shared) = &self.shared {
            if shared.era() == Some(Era::Modern) {
                params = shared.envelope.wrap(params);
            }
            shared.cancel_owed.store(true, Ordering::Release);
        }
        Some(HookNotification {
            method: CANCELLED.to_owned(),
            params,
        })
    }
}

/// The router of everything a server sends us.
pub(crate) fn router(shared: &Arc<Shared>) -> Router {
    let roots = Arc::clone(shared);
    let mut router = Router::new()
        .request::<Ping, _, _>(|_, _| async { Ok(json!({})) })
        .request::<ListRoots, _, _>(move |_, _| {
            let shared = Arc::clone(&roots);
            async move {
                let roots = shared.answer_roots().await?;
                Ok(ListRootsResult { roots })
            }
        });
    // The handlers a server may cancel run under `shared.inbound`: a cancel drops them and
    // nothing is answered.
    if shared.handler.supports_sampling() {
        let shared = Arc::clone(shared);
        router =
            router.request_or_silence::<CreateMessage, _, _>(move |params, ctx: RequestContext| {
                let work = match refuse_unoffered_tools(shared.handler.as_ref(), &params) {
                    Some(error) => Either::Left(std::future::ready(Err(error))),
                    None => Either::Right(
                        shared
                            .handler
                            .create_message(Arc::clone(&shared.name), params),
                    ),
                };
                shared.inbound.run(ctx.id(), work)
            });
    }
    if shared.handler.supports_elicitation() || shared.handler.supports_url_elicitation() {
        let shared = Arc::clone(shared);
        router = router.request_or_silence::<Elicit, _, _>(move |params, ctx: RequestContext| {
            let work = elicit_url::elicit(
                Arc::clone(&shared.handler),
                Arc::clone(&shared.name),
                params,
            );
            shared.inbound.run(ctx.id(), work)
        });
    }
    {
        let shared = Arc::clone(shared);
        router = router.notification_raw(CANCELLED, move |params| {
            if !shared.inbound.cancel(params) {
                tracing::debug!(server = %shared.name, "ignored a cancel notice naming no request being served");
            }
        });
    }
    {
        let shared = Arc::clone(shared);
        router = router.notification::<ElicitationComplete, _>(move |params| {
            shared
                .handler
                .on_elicitation_complete(&shared.name, &params.elicitation_id);
        });
    }
    {
        let shared = Arc::clone(shared);
        router = router.notification::<ProgressNotification, _>(move |params| {
            // Our tokens are integers; a server that echoes one as a string of digits is
            // understood too. Any other token is not one of ours.
            let token = match &params.progress_token {
                Value::Number(token) => token.as_u64(),
                Value::String(token) => token.parse().ok(),
                _ => None,
            };
            let Some(token) = token else {
                return;
            };
            let callback = {
                let progress = lock(&shared.progress);
                // A report for a call that already ended is ignored, as the spec asks.
                let Some(slot) = progress.get(&token) else {
                    return;
                };
                if let Some(activity) = &slot.activity {
                    activity.touch();
                }
                slot.callback.clone()
            };
            if let Some(callback) = callback {
                callback(Progress {
                    progress: params.progress,
                    total: params.total,
                    message: params.message,
                });
            }
        });
    }
    {
        let shared = Arc::clone(shared);
        router = router.notification_raw(listen::ACKNOWLEDGED, move |params| {
            shared.listen.acknowledged(params);
        });
    }
    router = crate::protocol::tasks::route(router, shared);
    {
        // A request no route above takes (sampling or elicitation not offered, or unknown):
        // `-32601` as before, and the handler hears of it.
        let shared = Arc::clone(shared);
        router = router.request_fallback(move |method, _, _| {
            shared.handler.on_unoffered_request(&shared.name, method);
            Err::<std::future::Ready<Result<(), ErrorObject>>, _>(ErrorObject::new(
                ErrorObject::METHOD_NOT_FOUND,
                "method not found",
            ))
        });
    }
    for (method, bit) in LIST_CHANGED {
        let shared = Arc::clone(shared);
        router = router.notification_raw(method, move |_| {
            shared.dirty.fetch_or(bit, Ordering::SeqCst);
            shared.refresh.notify_one();
        });
    }
    {
        let shared = Arc::clone(shared);
        router = router.notification::<LoggingMessage, _>(move |message| {
            shared.handler.on_log(&shared.name, &message);
        });
    }
    {
        let shared = Arc::clone(shared);
        router = router.notification::<ResourceUpdated, _>(move |params| {
            shared
                .handler
                .on_resource_updated(&shared.name, &params.uri);
        });
    }
    let name = Arc::clone(&shared.name);
    router.notification_fallback(move |method, _| {
        tracing::debug!(server = %name, method, "ignored a server notification");
    })
}

/// The answer to a `sampling/createMessage` carrying `tools` when the handler does not offer
/// sampling with tools (so `sampling.tools` was not advertised): `-32602`, before the handler
/// sees a request it would misread.
pub(crate) fn refuse_unoffered_tools(
    handler: &dyn DynHandler,
    params: &CreateMessageParams,
) -> Option<ErrorObject> {
    let asks_tools = !params.tools.is_empty() || params.tool_choice.is_some();
    (asks_tools && !handler.supports_sampling_tools()).then(|| {
        ErrorObject::invalid_params(
            "this client does not offer sampling with tools (no sampling.tools capability)",
        )
    })
}

/// Re-lists whatever a list_changed notice (or a ttl that ran out) marked stale, after the
/// debounce; ends when the connection closes.
async fn refresh_loop(peer: Peer, shared: Arc<Shared>) {
    let closed = peer.closed();
    tokio::pin!(closed);
    let mut delay = REFRESH_DEBOUNCE;
    let mut last_cycle: Option<tokio::time::Instant> = None;
    loop {
        let expiry = shared.next_expiry();
        tokio::select! {
            _ = &mut closed => return,
            () = shared.refresh.notified() => {}
            () = shared.retimed.notified() => continue,
            () = sleep_until(expiry) => {
                if !shared.expire() {
                    continue;
                }
            }
        }
        // A server that announces a change after every listing would otherwise keep us
        // re-listing; cycles close on each other's heels back off.
        delay = match last_cycle {
            Some(at) if at.elapsed() < delay * 2 => (delay * 2).min(REFRESH_MAX_DELAY),
            _ => REFRESH_DEBOUNCE,
        };
        tokio::select! {
            _ = &mut closed => return,
            () = tokio::time::sleep(delay) => {}
        }
        let stale = shared.dirty.swap(0, Ordering::SeqCst) & shared.listed.load(Ordering::SeqCst);
        if stale == 0 {
            continue;
        }
        let timeout = shared.spec.call_timeout.min(shared.spec.startup_timeout);
        let deadline = tokio::time::Instant::now() + timeout;
        let mut changed = false;
        if stale & TOOLS != 0 {
            changed |= refreshed::<ListTools>(&peer, &shared, deadline).await;
        }
        if stale & PROMPTS != 0 {
            changed |= refreshed::<ListPrompts>(&peer, &shared, deadline).await;
        }
        if stale & RESOURCES != 0 {
            changed |= refreshed::<ListResources>(&peer, &shared, deadline).await;
            // The templates ride along, best effort: their failure is not reported, and they
            // alone do not count as a change.
            let _ = refresh::<ListResourceTemplates>(&peer, &shared, deadline).await;
        }
        if changed {
            shared.bump_revision();
        }
        last_cycle = Some(tokio::time::Instant::now());
    }
}

/// Sleeps until `at`, or for ever.
async fn sleep_until(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// Re-lists `M` into the cache.
async fn refresh<M: Cached>(
    peer: &Peer,
    shared: &Shared,
    deadline: tokio::time::Instant,
) -> Result<(), Error> {
    shared.relist::<M>(peer, deadline).await.map(drop)
}

/// Re-lists `M` into the cache, logging a failure; whether the list was replaced.
async fn refreshed<M: Cached>(
    peer: &Peer,
    shared: &Shared,
    deadline: tokio::time::Instant,
) -> bool {
    match refresh::<M>(peer, shared, deadline).await {
        Ok(()) => true,
        Err(err) => {
            tracing::warn!(server = %shared.name, %err, "refreshing {} failed", M::WHAT);
            false
        }
    }
}

/// Assembles a connection's driver: the jsonrpc driver, the refresh loop and the listen loop
/// (`protocol::listen`) until the connection ends or every client handle is gone, alongside the
/// transport's background work (which outlives them: it reaps the process and drains the last
/// of its stderr).
///
/// The last handle's drop either kills the server itself (the sender of `alive` is just
/// dropped) or, when a `notifications/cancelled` may still be unwritten, hands the driver the
/// transport's [`Backend`]: the connection then keeps running while the backend says goodbye
/// ([`Backend::farewell`]: what is queued written, the connection closed, the server given
/// [`CANCEL_FLUSH`](crate::CANCEL_FLUSH) to read it), and the backend's drop kills what is left.
pub(crate) fn driver<S, K, E, F>(
    rpc: sidewire_jsonrpc::Driver<S, K>,
    peer: Peer,
    shared: Arc<Shared>,
    alive: oneshot::Receiver<Backend>,
    background: Option<Background>,
) -> Background
where
    S: Stream<Item = Result<Bytes, E>> + Unpin + Send + 'static,
    E: Into<sidewire_framing::Error>,
    K: Sink<Bytes, Error = F> + Unpin + Send + 'static,
    F: Into<sidewire_framing::Error>,
{
    let name = Arc::clone(&shared.name);
    let serve = async move {
        let rpc = async {
            match rpc.await {
                Ok(()) => tracing::debug!(server = %name, "connection ended"),
                // The server stopped reading: it exited or closed its stdin, which its exit
                // status and stderr tell (and every pending call fails with), not a failure
                // here worth a warning of its own.
                Err(reason @ sidewire_jsonrpc::CloseReason::Hangup) => {
                    tracing::debug!(server = %name, %reason, "connection ended")
                }
                Err(reason) => tracing::warn!(server = %name, %reason, "connection failed"),
            }
        };
        let listen = listen::listen_loop(peer.clone(), Arc::clone(&shared));
        let refresh = refresh_loop(peer.clone(), shared);
        let work = async {
            tokio::join!(rpc, refresh, listen);
        };
        tokio::pin!(work);
        tokio::select! {
            () = &mut work => {}
            // Every handle is gone: stop serving. Dropping the jsonrpc driver fails what is
            // pending and closes our end; a process was already killed by the handle's drop,
            // unless a cancel notice was owed: then its backend came along, to close the
            // connection once what is queued is written (bounded), the connection running
            // meanwhile so that its writer writes it.
            farewell = alive => {
                if let Ok(backend) = farewell {
                    let goodbye = backend.farewell(&peer);
                    tokio::pin!(goodbye);
                    tokio::select! {
                        () = &mut goodbye => {}
                        () = &mut work => goodbye.await,
                    }
                }
            }
        }
    };
    match background {
        Some(background) => Box::pin(async move {
            tokio::pin!(serve);
            tokio::pin!(background);
            tokio::select! {
                // The usual order: the connection ends (stdout closed, or every handle gone),
                // then the process is reaped.
                () = &mut serve => background.await,
                // The transport's work ended first: for stdio, the process was reaped and its
                // group killed. A descendant that left the group (a `setsid()` daemon) may
                // still hold stdout open, so the connection would never see EOF and pending
                // calls would wait for their timeouts: the last frames get a grace, then the
                // connection ends and what is pending fails with the exit and stderr tail.
                () = &mut background => {
                    let _ = tokio::time::timeout(EXIT_GRACE, &mut serve).await;
                }
            }
        }),
        None => Box::pin(serve),
    }
}

/// How long a connection still reads after its transport's background work ended (the server
/// process was reaped): enough for the frames it wrote just before exiting.
pub(crate) const EXIT_GRACE: Duration = Duration::from_secs(1);

/// What the client offers: roots when the spec has any or the handler answers them, sampling
/// and elicitation when the handler takes them.
pub(crate) fn client_capabilities(spec: &ServerSpec, handler: &dyn DynHandler) -> Value {
    let mut capabilities = serde_json::Map::new();
    if !spec.roots.is_empty() || handler.supports_roots() {
        // `Client::set_roots` announces changes (legacy era).
        capabilities.insert("roots".to_owned(), json!({ "listChanged": true }));
    }
    if handler.supports_sampling() {
        let sampling = if handler.supports_sampling_tools() {
            json!({ "tools": {} })
        } else {
            json!({})
        };
        capabilities.insert("sampling".to_owned(), sampling);
    }
    let mut elicitation = serde_json::Map::new();
    if handler.supports_elicitation() {
        elicitation.insert("form".to_owned(), json!({}));
    }
    if handler.supports_url_elicitation() {
        elicitation.insert("url".to_owned(), json!({}));
    }
    if !elicitation.is_empty() {
        capabilities.insert("elicitation".to_owned(), Value::Object(elicitation));
    }
    Value::Object(capabilities)
}

/// Who this client is.
pub(crate) fn client_info() -> Implementation {
    Implementation::new("sidewire", env!("CARGO_PKG_VERSION"))
}
