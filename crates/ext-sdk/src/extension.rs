//! The extension an author builds: its identity and its callbacks, registered through the
//! [`Extension`] builder, plus the [`Context`] an interceptor or observer is called with.
//!
//! This module stores callbacks and derives the handshake from them (`Plan`); it does not run
//! anything. Running is `serve`'s job.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use sidewire_ext_protocol::v2::{CapabilityWire, RequirementWire};
use sidewire_ext_protocol::{
    Capability, HookPayload, HookPoint, ManifestExpectation, Slot, UiActionDecl, UiActionParams,
    UiActionResult, UiSubmitParams, UiSubmitResult, is_action_id,
};

use crate::point::{Decision, Payload, Point};
use crate::provider::{Provider, ProviderFn};
use crate::{Error, HostHandle};

pub(crate) type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

pub(crate) type InterceptFn = Arc<
    dyn Fn(Context, HookPayload) -> BoxFuture<Result<Decision<HookPayload>, Error>> + Send + Sync,
>;
pub(crate) type EventFn =
    Arc<dyn Fn(Context, HookPayload) -> BoxFuture<Result<(), Error>> + Send + Sync>;
pub(crate) type HostFn = Arc<dyn Fn(HostHandle) -> BoxFuture<Result<(), Error>> + Send + Sync>;
pub(crate) type ActionFn = Arc<
    dyn Fn(HostHandle, UiActionParams) -> BoxFuture<Result<UiActionResult, Error>> + Send + Sync,
>;
pub(crate) type SubmitFn = Arc<
    dyn Fn(HostHandle, UiSubmitParams) -> BoxFuture<Result<UiSubmitResult, Error>> + Send + Sync,
>;
pub(crate) type ResourcesFn =
    Arc<dyn Fn(HostHandle, Vec<String>) -> BoxFuture<Result<(), Error>> + Send + Sync>;
pub(crate) type ToolFn =
    Arc<dyn Fn(HostHandle, serde_json::Value) -> BoxFuture<Result<String, Error>> + Send + Sync>;

/// What an interceptor or event observer is called with: the host handle and the call's
/// particulars. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Context {
    pub(crate) host: HostHandle,
    pub(crate) point: HookPoint,
    pub(crate) seq: Option<u64>,
    pub(crate) budget: Option<Duration>,
    pub(crate) strategy: bool,
}

impl Context {
    /// The handle for calling the host (UI, content reads).
    pub fn host(&self) -> &HostHandle {
        &self.host
    }

    /// The hook point.
    pub fn point(&self) -> HookPoint {
        self.point
    }

    /// The intercept's `seq` (§7.1); `None` for an event.
    pub fn seq(&self) -> Option<u64> {
        self.seq
    }

    /// The intercept's budget, `timeoutMillis` (§7.9); the callback is cancelled and answered
    /// `intercept_timeout` when it overruns. `None` for an event, and for an intercept of a v2
    /// host that sent `timeoutMillis` 0 (no deadline, spec delta §2.3).
    pub fn budget(&self) -> Option<Duration> {
        self.budget
    }

    /// Whether this is an event (fire-and-forget, §8) rather than an intercept.
    pub fn is_event(&self) -> bool {
        self.seq.is_none()
    }

    /// Whether this intercept is a strategy call: the point maps to a slot this extension
    /// claimed and the host activated (§7.7). A strategy call may only continue or replace.
    pub fn is_strategy_call(&self) -> bool {
        self.strategy
    }
}

/// An extension: its self-description and its callbacks.
///
/// Callbacks are closures returning futures; each gets what it needs as arguments (a
/// [`Context`] or a [`HostHandle`]), never from ambient state. Shared state of your own goes in an
/// `Arc` the closures capture; callbacks run concurrently, so synchronize it yourself.
///
/// Registration mistakes (an invalid or repeated action id, a point registered twice) are
/// collected and make [`serve`](crate::serve) fail with [`Error::Config`] before it reads
/// anything.
pub struct Extension {
    pub(crate) name: String,
    pub(crate) version: String,
    pub(crate) state_schema_version: i64,
    pub(crate) interceptors: BTreeMap<HookPoint, InterceptFn>,
    pub(crate) observers: BTreeMap<HookPoint, EventFn>,
    pub(crate) slots: BTreeSet<Slot>,
    pub(crate) actions: Vec<(UiActionDecl, ActionFn)>,
    pub(crate) submit: Option<SubmitFn>,
    pub(crate) on_initialize: Option<HostFn>,
    pub(crate) on_ready: Option<HostFn>,
    pub(crate) on_shutdown: Option<HostFn>,
    pub(crate) on_resources: Option<ResourcesFn>,
    pub(crate) provider: Option<ProviderFn>,
    /// Extension tools by name (spec delta §2.5; served on V2 connections only).
    pub(crate) tools: BTreeMap<String, ToolFn>,
    /// Dependency declarations (spec delta §2.6; sent on V2 connections only).
    pub(crate) requires: Vec<RequirementWire>,
    pub(crate) provides: Vec<CapabilityWire>,
    pub(crate) problems: Vec<String>,
}

impl Extension {
    /// An extension with this self-description (`InitializeResult.name` and `version`;
    /// informational, §6.2) and no callbacks. Use the plugin id and version of your manifest:
    /// the SDK warns on stderr when they differ from what the host launched
    /// (`REASONIX_PLUGIN_NAME`, `REASONIX_PLUGIN_VERSION`).
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Extension {
            name: name.into(),
            version: version.into(),
            state_schema_version: 0,
            interceptors: BTreeMap::new(),
            observers: BTreeMap::new(),
            slots: BTreeSet::new(),
            actions: Vec::new(),
            submit: None,
            on_initialize: None,
            on_ready: None,
            on_shutdown: None,
            on_resources: None,
            provider: None,
            tools: BTreeMap::new(),
            requires: Vec::new(),
            provides: Vec::new(),
            problems: Vec::new(),
        }
    }

    /// Declares a capability this extension requires (`InitializeResult.requires`, spec delta
    /// §2.2, §2.6). Informational to the host, which decides from the installed manifest's
    /// `requires` whether the plugin can run.
    ///
    /// Dependency declarations exist in Extension Protocol v2 only: on a V1 connection nothing
    /// is sent and the SDK says so on stderr (spec delta §1.4 P5).
    pub fn requires(mut self, requirement: RequirementWire) -> Self {
        if [&requirement.namespace, &requirement.kind, &requirement.id]
            .iter()
            .any(|part| part.trim().is_empty())
        {
            self.problems.push(format!(
                "a required capability needs a namespace, a kind and an id: {requirement:?}"
            ));
        }
        self.requires.push(requirement);
        self
    }

    /// Declares a capability this extension provides (`InitializeResult.provides`, spec delta
    /// §2.2). When the installed manifest declares `provides`, the host refuses a handshake
    /// claiming one outside it (`capability_not_declared`), so the SDK sends only those the
    /// manifest declares (by namespace, kind and id) and says on stderr which it left out.
    ///
    /// V2 only, like [`requires`](Self::requires): on a V1 connection nothing is sent and the
    /// SDK says so on stderr.
    pub fn provides(mut self, capability: CapabilityWire) -> Self {
        if [&capability.namespace, &capability.kind, &capability.id]
            .iter()
            .any(|part| part.trim().is_empty())
        {
            self.problems.push(format!(
                "a provided capability needs a namespace, a kind and an id: {capability:?}"
            ));
        }
        self.provides.push(capability);
        self
    }

    /// The dependency declarations sent on a V2 connection whose manifest expectation provides
    /// `ceiling` (spec delta §2.2.1 check 8): every `requires`; the `provides` inside a non-empty
    /// ceiling, a warning for each left out.
    pub(crate) fn plan_dependencies(
        &self,
        ceiling: &[CapabilityWire],
        warnings: &mut Vec<String>,
    ) -> (Vec<RequirementWire>, Vec<CapabilityWire>) {
        let key = |c: &CapabilityWire| (c.namespace.clone(), c.kind.clone(), c.id.clone());
        let provides = (self.provides.iter())
            .filter(|capability| {
                let inside =
                    ceiling.is_empty() || ceiling.iter().any(|c| key(c) == key(capability));
                if !inside {
                    warnings.push(format!(
                        "provided capability {}/{}/{} is not in the manifest's provides; not sent",
                        capability.namespace, capability.kind, capability.id
                    ));
                }
                inside
            })
            .cloned()
            .collect();
        (self.requires.clone(), provides)
    }

    /// `InitializeResult.stateSchemaVersion` (≥ 0; default 0), recorded by the host.
    pub fn state_schema_version(mut self, version: i64) -> Self {
        if version < 0 {
            self.problems
                .push(format!("stateSchemaVersion {version} is negative"));
        }
        self.state_schema_version = version;
        self
    }

    /// Intercepts `point`: the callback gets the payload (rehydrated if the host externalized
    /// it, §9) and answers a [`Decision`], within the intercept's budget.
    ///
    /// The point is subscribed at the handshake when the installed manifest's
    /// `runtime.intercepts` lists it; otherwise the SDK says so on stderr and the callback is
    /// never called. An intercept for a point without a callback is answered `continue`.
    pub fn on_intercept<P, F, Fut>(mut self, point: Point<P>, callback: F) -> Self
    where
        P: Payload,
        F: Fn(Context, P) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Decision<P>, Error>> + Send + 'static,
    {
        let point = point.hook_point();
        let callback: InterceptFn = Arc::new(move |ctx, payload| match P::from_hook(payload) {
            Some(payload) => {
                let work = callback(ctx, payload);
                Box::pin(async move { work.await.map(|d| d.map(P::into_hook)) })
            }
            None => Box::pin(std::future::ready(Err(Error::callback(
                "the payload is not of the point's DTO",
            )))),
        });
        if self.interceptors.insert(point, callback).is_some() {
            self.problems
                .push(format!("{point}: an interceptor is registered twice"));
        }
        self
    }

    /// Observes events at `point` (§8): fire-and-forget, in arrival order, one at a time.
    ///
    /// Subscription works as for [`on_intercept`](Extension::on_intercept). An event for a
    /// point with an interceptor but no observer is dropped. An observer's error is logged on
    /// stderr.
    pub fn on_event<P, F, Fut>(mut self, point: Point<P>, callback: F) -> Self
    where
        P: Payload,
        F: Fn(Context, P) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), Error>> + Send + 'static,
    {
        let point = point.hook_point();
        let callback: EventFn = Arc::new(move |ctx, payload| match P::from_hook(payload) {
            Some(payload) => Box::pin(callback(ctx, payload)),
            None => Box::pin(std::future::ready(Err(Error::callback(
                "the payload is not of the point's DTO",
            )))),
        });
        if self.observers.insert(point, callback).is_some() {
            self.problems
                .push(format!("{point}: an observer is registered twice"));
        }
        self
    }

    /// Claims `slot` (§7.7): it goes into the handshake `replaces` when the installed
    /// manifest's `runtime.replaces` lists it. The owner's interceptors at the slot's points
    /// are then called as strategies, after the chain, and may only continue or replace.
    pub fn replaces(mut self, slot: Slot) -> Self {
        self.slots.insert(slot);
        self
    }

    /// Offers a user action (§10.4) and handles it. The action is declared in the handshake
    /// `uiActions` when the installed manifest has capability `ui`.
    ///
    /// `action_id` must match `^[a-z0-9-]{1,64}$` and be unique.
    pub fn on_action<F, Fut>(
        mut self,
        action_id: impl Into<String>,
        label: impl Into<String>,
        callback: F,
    ) -> Self
    where
        F: Fn(HostHandle, UiActionParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<UiActionResult, Error>> + Send + 'static,
    {
        let decl = UiActionDecl {
            action_id: action_id.into(),
            label: label.into(),
        };
        if !is_action_id(&decl.action_id) {
            self.problems.push(format!(
                "action id {:?} does not match ^[a-z0-9-]{{1,64}}$",
                decl.action_id
            ));
        }
        if self
            .actions
            .iter()
            .any(|(d, _)| d.action_id == decl.action_id)
        {
            self.problems.push(format!(
                "action id {:?} is registered twice",
                decl.action_id
            ));
        }
        let callback: ActionFn = Arc::new(move |host, params| Box::pin(callback(host, params)));
        self.actions.push((decl, callback));
        self
    }

    /// Handles submissions of forms this extension published (`extension/ui/submit`, §10.4).
    pub fn on_submit<F, Fut>(mut self, callback: F) -> Self
    where
        F: Fn(HostHandle, UiSubmitParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<UiSubmitResult, Error>> + Send + 'static,
    {
        self.submit = Some(Arc::new(move |host, params| {
            Box::pin(callback(host, params))
        }));
        self
    }

    /// Runs while `extension/initialize` is handled, before it is answered; the session is
    /// known ([`HostHandle::session`]) but the host cannot be called yet. An error fails the
    /// handshake, which is fatal (§6.1 step 3).
    pub fn on_initialize<F, Fut>(mut self, callback: F) -> Self
    where
        F: Fn(HostHandle) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), Error>> + Send + 'static,
    {
        self.on_initialize = Some(Arc::new(move |host| Box::pin(callback(host))));
        self
    }

    /// Runs once the connection is ready (after `extension/initialized`), concurrently with
    /// everything else; the place to publish an initial status. An error is logged on stderr.
    pub fn on_ready<F, Fut>(mut self, callback: F) -> Self
    where
        F: Fn(HostHandle) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), Error>> + Send + 'static,
    {
        self.on_ready = Some(Arc::new(move |host| Box::pin(callback(host))));
        self
    }

    /// Runs on `extension/shutdown`, bounded by its `timeoutMillis`; overrunning is answered
    /// `shutdown_timeout` (§6.6). An error is logged on stderr and the shutdown still
    /// accepted.
    pub fn on_shutdown<F, Fut>(mut self, callback: F) -> Self
    where
        F: Fn(HostHandle) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), Error>> + Send + 'static,
    {
        self.on_shutdown = Some(Arc::new(move |host| Box::pin(callback(host))));
        self
    }

    /// Observes `extension/resources/changed` (§8): absolute paths of changed resources, in
    /// arrival order with the events.
    pub fn on_resources_changed<F, Fut>(mut self, callback: F) -> Self
    where
        F: Fn(HostHandle, Vec<String>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), Error>> + Send + 'static,
    {
        self.on_resources = Some(Arc::new(move |host, paths| Box::pin(callback(host, paths))));
        self
    }

    /// Serves models (§14): `provider`'s catalog becomes the handshake's `providers` and the
    /// answer to `extension/provider/catalog`, and its streams serve
    /// `extension/provider/stream/open` and `stream/cancel`. See [`Provider`] for what the SDK
    /// enforces.
    ///
    /// The provider is offered when the installed manifest has capability `providers`;
    /// otherwise the SDK says so on stderr and the provider methods are answered
    /// `unknown_method`. One provider per extension (it may list many refs).
    pub fn provider(mut self, provider: impl Provider) -> Self {
        if self.provider.is_some() {
            self.problems
                .push("a provider is registered twice".to_owned());
        }
        self.provider = Some(Arc::new(provider));
        self
    }

    /// Serves the extension tool `name` (`extension/tool/call`, spec delta §2.5): the callback
    /// gets the model's arguments exactly as the host sent them (any JSON value, `null`
    /// included) and answers the text the model reads; an `Err` is answered as a tool error
    /// (`{"content": <its text>, "isError": true}`), not as a JSON-RPC error. The call is
    /// bounded by the host's `timeoutMillis` (0: no deadline) and answered `intercept_timeout`
    /// when it overruns.
    ///
    /// Tools exist in Extension Protocol v2 only. On a V2 connection whose installed manifest
    /// has capability `tools` and lists `name` under `runtime.tools`, the name goes into the
    /// handshake's `tools` (sorted); otherwise the SDK says so on stderr and a call for it is
    /// answered `unknown_method`. On a V1 connection no tool is offered and
    /// `extension/tool/call` is unregistered (`-32601`).
    ///
    /// `name` must be non-blank, without whitespace, and registered once.
    pub fn tool<F, Fut>(mut self, name: impl Into<String>, callback: F) -> Self
    where
        F: Fn(HostHandle, serde_json::Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<String, Error>> + Send + 'static,
    {
        let name = name.into();
        if name.is_empty() || name.chars().any(char::is_whitespace) {
            self.problems.push(format!(
                "tool name {name:?} must be non-empty and without whitespace"
            ));
        }
        let callback: ToolFn = Arc::new(move |host, arguments| Box::pin(callback(host, arguments)));
        if self.tools.insert(name.clone(), callback).is_some() {
            self.problems
                .push(format!("tool {name:?} is registered twice"));
        }
        self
    }

    /// The tools offered on a V2 connection whose manifest declares capability `tools` (when
    /// `capable`) and the tool names `declared`: the registered ones it declares, sorted; a
    /// warning for each registered tool left out.
    pub(crate) fn plan_tools(
        &self,
        capable: bool,
        declared: &[String],
        warnings: &mut Vec<String>,
    ) -> BTreeSet<String> {
        let mut offered = BTreeSet::new();
        for name in self.tools.keys() {
            if !capable {
                warnings.push(format!(
                    "tool {name:?} is registered, but the manifest lacks capability \"tools\"; \
                     not offered"
                ));
            } else if !declared.contains(name) {
                warnings.push(format!(
                    "tool {name:?} is registered but not in the manifest's runtime.tools; \
                     not offered"
                ));
            } else {
                offered.insert(name.clone());
            }
        }
        offered
    }

    /// The registration mistakes, as one error.
    pub(crate) fn check(&self) -> Result<(), Error> {
        if self.name.trim().is_empty() || self.version.trim().is_empty() {
            return Err(Error::Config(
                "the extension's name and version must not be empty".to_owned(),
            ));
        }
        if self.problems.is_empty() {
            Ok(())
        } else {
            Err(Error::Config(self.problems.join("; ")))
        }
    }

    /// Derives the handshake from the callbacks and the installed manifest (§7.2): every
    /// claim is intersected with the manifest, and what falls outside is reported in
    /// `warnings`.
    pub(crate) fn plan(&self, manifest: &ManifestExpectation) -> Plan {
        let mut warnings = Vec::new();
        let replaces: Vec<Slot> = Slot::ALL
            .iter()
            .copied()
            .filter(|slot| self.slots.contains(slot))
            .filter(|slot| {
                let declared = manifest.replaces.contains(slot);
                if !declared {
                    warnings.push(format!(
                        "slot {slot} is claimed but not in the manifest's runtime.replaces; \
                         not claimed"
                    ));
                }
                declared
            })
            .collect();
        let strategy: BTreeSet<HookPoint> = HookPoint::ALL
            .iter()
            .copied()
            .filter(|point| point.slot().is_some_and(|slot| replaces.contains(&slot)))
            .collect();
        let mut subscriptions = Vec::new();
        let mut active = BTreeSet::new();
        for &point in HookPoint::ALL {
            let registered =
                self.interceptors.contains_key(&point) || self.observers.contains_key(&point);
            if !registered {
                continue;
            }
            if manifest.intercepts.contains(&point) {
                subscriptions.push(point);
                active.insert(point);
            } else if strategy.contains(&point) {
                active.insert(point);
            } else {
                warnings.push(format!(
                    "a handler is registered for {point}, which is not in the manifest's \
                     runtime.intercepts; not subscribed"
                ));
            }
        }
        let ui = manifest.capabilities.contains(&Capability::Ui);
        if !ui && (!self.actions.is_empty() || self.submit.is_some()) {
            warnings.push(
                "UI actions and form submissions are registered, but the manifest lacks \
                 capability \"ui\"; not declared"
                    .to_owned(),
            );
        }
        let providers = manifest.capabilities.contains(&Capability::Providers);
        if !providers && self.provider.is_some() {
            warnings.push(
                "a provider is registered, but the manifest lacks capability \"providers\"; \
                 not offered"
                    .to_owned(),
            );
        }
        let ui_actions = if ui {
            self.actions.iter().map(|(decl, _)| decl.clone()).collect()
        } else {
            Vec::new()
        };
        Plan {
            subscriptions,
            replaces,
            ui_actions,
            active,
            strategy,
            ui,
            providers: providers && self.provider.is_some(),
            tools: BTreeSet::new(),
            requires: Vec::new(),
            provides: Vec::new(),
            warnings,
        }
    }
}

impl fmt::Debug for Extension {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Extension")
            .field("name", &self.name)
            .field("version", &self.version)
            .field(
                "interceptors",
                &self.interceptors.keys().collect::<Vec<_>>(),
            )
            .field("observers", &self.observers.keys().collect::<Vec<_>>())
            .field("slots", &self.slots)
            .field(
                "actions",
                &self
                    .actions
                    .iter()
                    .map(|(d, _)| &d.action_id)
                    .collect::<Vec<_>>(),
            )
            .field("submit", &self.submit.is_some())
            .field("provider", &self.provider.is_some())
            .field("tools", &self.tools.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

/// The handshake an extension answers with, and which callbacks it makes live.
#[derive(Debug, Clone, Default)]
pub(crate) struct Plan {
    /// `InitializeResult.subscriptions`.
    pub(crate) subscriptions: Vec<HookPoint>,
    /// `InitializeResult.replaces`.
    pub(crate) replaces: Vec<Slot>,
    /// `InitializeResult.uiActions`.
    pub(crate) ui_actions: Vec<UiActionDecl>,
    /// Points whose callbacks are live: subscribed, or mapped to an active slot.
    pub(crate) active: BTreeSet<HookPoint>,
    /// Points where an intercept is a strategy call.
    pub(crate) strategy: BTreeSet<HookPoint>,
    /// Whether the manifest has capability `ui`, so the UI callbacks are live.
    pub(crate) ui: bool,
    /// Whether a provider is registered and the manifest has capability `providers`, so the
    /// provider methods are live.
    pub(crate) providers: bool,
    /// The extension tools offered in the handshake's `tools` (V2 only), sorted; a call for
    /// another name is `unknown_method`.
    pub(crate) tools: BTreeSet<String>,
    /// `InitializeResult.requires` and `.provides` (V2 only).
    pub(crate) requires: Vec<RequirementWire>,
    pub(crate) provides: Vec<CapabilityWire>,
    /// What the manifest does not back, for stderr.
    pub(crate) warnings: Vec<String>,
}

#[cfg(test)]
mod tests;
