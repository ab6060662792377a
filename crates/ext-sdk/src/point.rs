//! Typed hook points: a [`Point`] names a hook point together with its payload DTO, so a
//! callback registered with `point::INPUT_RECEIVE` receives an `InputPayload` and may only
//! replace it with one. [`Decision`] is what an interceptor answers.
//!
//! This module only names things and converts between the typed and untyped payloads; checking
//! a decision against the point's rules happens when it is answered (see `dispatch`).

use std::fmt;
use std::marker::PhantomData;

use sidewire_ext_protocol::{
    AgentStartPayload, CompactionCompletePayload, CompactionPreparePayload, ContextPayload,
    FrontendEventPayload, HookPayload, HookPoint, InputPayload, PermissionPayload,
    ProviderRequestPayload, ProviderResponsePayload, SessionPayload, SystemPromptPayload,
    ToolAfterPayload, ToolBeforePayload,
};

mod sealed {
    pub trait Sealed {}
}

/// A payload type a [`Point`] can carry: one of the 13 payload DTOs of §7.3, or
/// [`HookPayload`] itself for untyped registration with [`Point::any`].
///
/// Sealed: the set of payloads is fixed by the protocol.
pub trait Payload: sealed::Sealed + Sized + Send + 'static {
    /// The typed payload, if `payload` is of this type.
    #[doc(hidden)]
    fn from_hook(payload: HookPayload) -> Option<Self>;

    /// The untyped payload.
    #[doc(hidden)]
    fn into_hook(self) -> HookPayload;
}

impl sealed::Sealed for HookPayload {}

impl Payload for HookPayload {
    fn from_hook(payload: HookPayload) -> Option<Self> {
        Some(payload)
    }

    fn into_hook(self) -> HookPayload {
        self
    }
}

/// Implements [`Payload`] for the DTO carried by one `HookPayload` variant.
macro_rules! payload {
    ($($ty:ident => $variant:ident),+ $(,)?) => {$(
        impl sealed::Sealed for $ty {}

        impl Payload for $ty {
            fn from_hook(payload: HookPayload) -> Option<Self> {
                match payload {
                    HookPayload::$variant(inner) => Some(inner),
                    _ => None,
                }
            }

            fn into_hook(self) -> HookPayload {
                HookPayload::$variant(self)
            }
        }
    )+};
}

payload! {
    SessionPayload => Session,
    InputPayload => Input,
    AgentStartPayload => AgentStart,
    SystemPromptPayload => SystemPrompt,
    ContextPayload => Context,
    ProviderRequestPayload => ProviderRequest,
    ProviderResponsePayload => ProviderResponse,
    ToolBeforePayload => ToolBefore,
    ToolAfterPayload => ToolAfter,
    PermissionPayload => Permission,
    CompactionPreparePayload => CompactionPrepare,
    CompactionCompletePayload => CompactionComplete,
    FrontendEventPayload => FrontendEvent,
}

/// A hook point and the payload DTO its callbacks receive.
///
/// The typed points are the constants of this module (`point::INPUT_RECEIVE`, …); they cannot
/// be built with a mismatched payload type. [`Point::any`] gives an untyped point whose
/// callbacks receive a [`HookPayload`].
pub struct Point<P> {
    point: HookPoint,
    payload: PhantomData<fn() -> P>,
}

impl<P> Point<P> {
    const fn new(point: HookPoint) -> Self {
        Point {
            point,
            payload: PhantomData,
        }
    }

    /// The hook point.
    pub fn hook_point(self) -> HookPoint {
        self.point
    }
}

impl Point<HookPayload> {
    /// An untyped point: its callbacks receive the [`HookPayload`] enum and may replace it with
    /// any variant (a variant of another DTO is refused when answered).
    pub fn any(point: HookPoint) -> Self {
        Point::new(point)
    }
}

// Manual impls: the derives would require `P: Clone` and `P: Debug`.
impl<P> Clone for Point<P> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<P> Copy for Point<P> {}

impl<P> fmt::Debug for Point<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Point").field(&self.point).finish()
    }
}

/// `session.start`.
pub const SESSION_START: Point<SessionPayload> = Point::new(HookPoint::SessionStart);
/// `session.end`.
pub const SESSION_END: Point<SessionPayload> = Point::new(HookPoint::SessionEnd);
/// `session.load`.
pub const SESSION_LOAD: Point<SessionPayload> = Point::new(HookPoint::SessionLoad);
/// `session.save`.
pub const SESSION_SAVE: Point<SessionPayload> = Point::new(HookPoint::SessionSave);
/// `session.rotate`.
pub const SESSION_ROTATE: Point<SessionPayload> = Point::new(HookPoint::SessionRotate);
/// `input.receive` (5 s by default).
pub const INPUT_RECEIVE: Point<InputPayload> = Point::new(HookPoint::InputReceive);
/// `agent.before_start`.
pub const AGENT_BEFORE_START: Point<AgentStartPayload> = Point::new(HookPoint::AgentBeforeStart);
/// `system_prompt.build`.
pub const SYSTEM_PROMPT_BUILD: Point<SystemPromptPayload> =
    Point::new(HookPoint::SystemPromptBuild);
/// `context.prepare`.
pub const CONTEXT_PREPARE: Point<ContextPayload> = Point::new(HookPoint::ContextPrepare);
/// `provider.request`.
pub const PROVIDER_REQUEST: Point<ProviderRequestPayload> = Point::new(HookPoint::ProviderRequest);
/// `provider.response`.
pub const PROVIDER_RESPONSE: Point<ProviderResponsePayload> =
    Point::new(HookPoint::ProviderResponse);
/// `tool.before` (5 s by default).
pub const TOOL_BEFORE: Point<ToolBeforePayload> = Point::new(HookPoint::ToolBefore);
/// `tool.after` (5 s by default).
pub const TOOL_AFTER: Point<ToolAfterPayload> = Point::new(HookPoint::ToolAfter);
/// `permission.decision` (5 s by default); the only point where `allow` and `deny` are legal.
pub const PERMISSION_DECISION: Point<PermissionPayload> = Point::new(HookPoint::PermissionDecision);
/// `compaction.prepare`.
pub const COMPACTION_PREPARE: Point<CompactionPreparePayload> =
    Point::new(HookPoint::CompactionPrepare);
/// `compaction.complete`.
pub const COMPACTION_COMPLETE: Point<CompactionCompletePayload> =
    Point::new(HookPoint::CompactionComplete);
/// `frontend.event`.
pub const FRONTEND_EVENT: Point<FrontendEventPayload> = Point::new(HookPoint::FrontendEvent);

/// What an interceptor answers (§7.5).
///
/// Which decisions are legal depends on the point and on whether the call is a chain call or a
/// strategy call ([`Context::is_strategy_call`](crate::Context::is_strategy_call)); an illegal
/// decision or an invalid replacement is refused locally and answered as an `internal` error,
/// so the host applies its failure policy instead of receiving something it must reject.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision<P> {
    /// Pass the payload on unchanged.
    Continue,
    /// Refuse the operation; the reason is shown to the user (redacted by the host).
    Block(String),
    /// Replace the payload. Members left out are absent afterwards (§7.8): start from the
    /// received payload and change only what you mean to.
    Replace(P),
    /// Allow the tool call (`permission.decision` only, chain calls only); the reason is
    /// recorded and may be empty.
    Allow(String),
    /// Deny the tool call (`permission.decision` only, chain calls only); the reason is shown.
    Deny(String),
}

impl<P> Decision<P> {
    /// [`Decision::Block`] with this reason.
    pub fn block(reason: impl Into<String>) -> Self {
        Decision::Block(reason.into())
    }

    /// [`Decision::Allow`] without a reason.
    pub fn allow() -> Self {
        Decision::Allow(String::new())
    }

    /// [`Decision::Deny`] with this reason.
    pub fn deny(reason: impl Into<String>) -> Self {
        Decision::Deny(reason.into())
    }

    /// The same decision with the payload converted.
    pub(crate) fn map<Q>(self, f: impl FnOnce(P) -> Q) -> Decision<Q> {
        match self {
            Decision::Continue => Decision::Continue,
            Decision::Block(reason) => Decision::Block(reason),
            Decision::Replace(payload) => Decision::Replace(f(payload)),
            Decision::Allow(reason) => Decision::Allow(reason),
            Decision::Deny(reason) => Decision::Deny(reason),
        }
    }
}

#[cfg(test)]
mod tests;
