//! The hook-point registry (§7.2), slots (§7.7), decisions (§7.5), per-point timeouts (§7.9) and
//! replacement re-validation (§7.8).
//!
//! Everything a host needs to know about a point is a method on [`HookPoint`]: its payload DTO,
//! default timeout, slot, which decisions are legal for whom, and how a replacement is checked.
//! This module does not walk chains or call sidecars; it only answers questions about the rules.

use serde::Serialize;
use serde_json::{Value, json};
use std::time::Duration;

use crate::constants::{
    DEFAULT_INTERCEPT_TIMEOUT, MAX_INTERCEPT_TIMEOUT_MILLIS, SHORT_INTERCEPT_TIMEOUT,
};
use crate::decode::{Dto, Kind, Obj, Seg, blank, is_blank, member, parse, rule};
use crate::error::{Error, Target};
use crate::payloads::{
    AgentStartPayload, CompactionCompletePayload, CompactionPreparePayload, ContextPayload,
    FrontendEventPayload, InputPayload, PermissionPayload, ProviderRequestPayload,
    ProviderResponsePayload, SessionPayload, SystemPromptPayload, ToolAfterPayload,
    ToolBeforePayload,
};
use crate::schema::Defs;

/// A hook point of §7.2.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HookPoint {
    /// `session.start`.
    SessionStart,
    /// `session.end`.
    SessionEnd,
    /// `session.load`.
    SessionLoad,
    /// `session.save`.
    SessionSave,
    /// `session.rotate`.
    SessionRotate,
    /// `input.receive` (5 s).
    InputReceive,
    /// `agent.before_start`.
    AgentBeforeStart,
    /// `system_prompt.build`.
    SystemPromptBuild,
    /// `context.prepare`.
    ContextPrepare,
    /// `provider.request`.
    ProviderRequest,
    /// `provider.response`.
    ProviderResponse,
    /// `tool.before` (5 s).
    ToolBefore,
    /// `tool.after` (5 s).
    ToolAfter,
    /// `permission.decision` (5 s); the only point where `allow` and `deny` are legal.
    PermissionDecision,
    /// `compaction.prepare`.
    CompactionPrepare,
    /// `compaction.complete`.
    CompactionComplete,
    /// `frontend.event`.
    FrontendEvent,
}

wire_enum!(HookPoint, "HookPoint", {
    SessionStart => "session.start",
    SessionEnd => "session.end",
    SessionLoad => "session.load",
    SessionSave => "session.save",
    SessionRotate => "session.rotate",
    InputReceive => "input.receive",
    AgentBeforeStart => "agent.before_start",
    SystemPromptBuild => "system_prompt.build",
    ContextPrepare => "context.prepare",
    ProviderRequest => "provider.request",
    ProviderResponse => "provider.response",
    ToolBefore => "tool.before",
    ToolAfter => "tool.after",
    PermissionDecision => "permission.decision",
    CompactionPrepare => "compaction.prepare",
    CompactionComplete => "compaction.complete",
    FrontendEvent => "frontend.event",
});

/// A slot of §7.7: a host strategy one plugin may take over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Slot {
    /// `system_prompt`, called at `system_prompt.build`.
    SystemPrompt,
    /// `context`, called at `context.prepare`.
    Context,
    /// `provider_request`, called at `provider.request`.
    ProviderRequest,
    /// `provider_response`, called at `provider.response`.
    ProviderResponse,
    /// `compaction`, called at both compaction points.
    Compaction,
    /// `session_policy`, called at all five session points.
    SessionPolicy,
    /// `permission`, called at `permission.decision`.
    Permission,
    /// `frontend_events`, called at `frontend.event`.
    FrontendEvents,
}

wire_enum!(Slot, "Slot", {
    SystemPrompt => "system_prompt",
    Context => "context",
    ProviderRequest => "provider_request",
    ProviderResponse => "provider_response",
    Compaction => "compaction",
    SessionPolicy => "session_policy",
    Permission => "permission",
    FrontendEvents => "frontend_events",
});

impl Slot {
    /// The points where this slot's owner is called (the Slot column of §7.2).
    pub fn points(self) -> impl Iterator<Item = HookPoint> {
        HookPoint::ALL
            .iter()
            .copied()
            .filter(move |point| point.slot() == Some(self))
    }
}

/// An `InterceptResult.decision` (§7.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DecisionKind {
    /// Pass the payload on unchanged.
    Continue,
    /// Refuse the operation with the (redacted) `reason`.
    Block,
    /// Replace the payload with `replacement`.
    Replace,
    /// Terminal permission verdict (`permission.decision` only).
    Allow,
    /// Terminal permission verdict (`permission.decision` only).
    Deny,
}

wire_enum!(DecisionKind, "Decision", {
    Continue => "continue",
    Block => "block",
    Replace => "replace",
    Allow => "allow",
    Deny => "deny",
});

/// A permission verdict: `PermissionPayload.hostDecision`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// The call is permitted.
    Allow,
    /// The call is refused.
    Deny,
}

wire_enum!(Verdict, "Verdict", {
    Allow => "allow",
    Deny => "deny",
});

/// `SessionPayload.phase`; the host sets it to match the session point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SessionPhase {
    /// `start`.
    Start,
    /// `end`.
    End,
    /// `load`.
    Load,
    /// `save`.
    Save,
    /// `rotate`.
    Rotate,
}

wire_enum!(SessionPhase, "SessionPhase", {
    Start => "start",
    End => "end",
    Load => "load",
    Save => "save",
    Rotate => "rotate",
});

/// Who answered an intercept: the rules of §7.5 and §7.8 differ for the two.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Caller {
    /// A chain member (§7.6).
    Chain,
    /// The owner of the active slot mapped to the point, answering the strategy call (§7.7).
    SlotOwner,
}

/// Which payload DTO a point carries (the 13 DTOs of §7.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PayloadKind {
    /// `SessionPayload`.
    Session,
    /// `InputPayload`.
    Input,
    /// `AgentStartPayload`.
    AgentStart,
    /// `SystemPromptPayload`.
    SystemPrompt,
    /// `ContextPayload`.
    Context,
    /// `ProviderRequestPayload`.
    ProviderRequest,
    /// `ProviderResponsePayload`.
    ProviderResponse,
    /// `ToolBeforePayload`.
    ToolBefore,
    /// `ToolAfterPayload`.
    ToolAfter,
    /// `PermissionPayload`.
    Permission,
    /// `CompactionPreparePayload`.
    CompactionPrepare,
    /// `CompactionCompletePayload`.
    CompactionComplete,
    /// `FrontendEventPayload`.
    FrontendEvent,
}

impl PayloadKind {
    /// Every payload DTO.
    pub const ALL: &'static [PayloadKind] = &[
        PayloadKind::Session,
        PayloadKind::Input,
        PayloadKind::AgentStart,
        PayloadKind::SystemPrompt,
        PayloadKind::Context,
        PayloadKind::ProviderRequest,
        PayloadKind::ProviderResponse,
        PayloadKind::ToolBefore,
        PayloadKind::ToolAfter,
        PayloadKind::Permission,
        PayloadKind::CompactionPrepare,
        PayloadKind::CompactionComplete,
        PayloadKind::FrontendEvent,
    ];

    /// The DTO's name in the spec.
    pub fn dto_name(self) -> &'static str {
        match self {
            PayloadKind::Session => SessionPayload::NAME,
            PayloadKind::Input => InputPayload::NAME,
            PayloadKind::AgentStart => AgentStartPayload::NAME,
            PayloadKind::SystemPrompt => SystemPromptPayload::NAME,
            PayloadKind::Context => ContextPayload::NAME,
            PayloadKind::ProviderRequest => ProviderRequestPayload::NAME,
            PayloadKind::ProviderResponse => ProviderResponsePayload::NAME,
            PayloadKind::ToolBefore => ToolBeforePayload::NAME,
            PayloadKind::ToolAfter => ToolAfterPayload::NAME,
            PayloadKind::Permission => PermissionPayload::NAME,
            PayloadKind::CompactionPrepare => CompactionPreparePayload::NAME,
            PayloadKind::CompactionComplete => CompactionCompletePayload::NAME,
            PayloadKind::FrontendEvent => FrontendEventPayload::NAME,
        }
    }

    /// Strictly decodes a value as this DTO.
    fn decode(self, value: Value, at: &Seg<'_>) -> Result<HookPayload, Error> {
        fn read<T: Dto>(value: Value, at: &Seg<'_>) -> Result<T, Error> {
            member(&Obj::<T>::new(), value, at)
        }
        Ok(match self {
            PayloadKind::Session => HookPayload::Session(read(value, at)?),
            PayloadKind::Input => HookPayload::Input(read(value, at)?),
            PayloadKind::AgentStart => HookPayload::AgentStart(read(value, at)?),
            PayloadKind::SystemPrompt => HookPayload::SystemPrompt(read(value, at)?),
            PayloadKind::Context => HookPayload::Context(read(value, at)?),
            PayloadKind::ProviderRequest => HookPayload::ProviderRequest(read(value, at)?),
            PayloadKind::ProviderResponse => HookPayload::ProviderResponse(read(value, at)?),
            PayloadKind::ToolBefore => HookPayload::ToolBefore(read(value, at)?),
            PayloadKind::ToolAfter => HookPayload::ToolAfter(read(value, at)?),
            PayloadKind::Permission => HookPayload::Permission(read(value, at)?),
            PayloadKind::CompactionPrepare => HookPayload::CompactionPrepare(read(value, at)?),
            PayloadKind::CompactionComplete => HookPayload::CompactionComplete(read(value, at)?),
            PayloadKind::FrontendEvent => HookPayload::FrontendEvent(read(value, at)?),
        })
    }

    /// The `$ref` of the DTO's schema.
    pub(crate) fn schema_ref(self, defs: &mut Defs) -> Value {
        match self {
            PayloadKind::Session => defs.dto::<SessionPayload>(),
            PayloadKind::Input => defs.dto::<InputPayload>(),
            PayloadKind::AgentStart => defs.dto::<AgentStartPayload>(),
            PayloadKind::SystemPrompt => defs.dto::<SystemPromptPayload>(),
            PayloadKind::Context => defs.dto::<ContextPayload>(),
            PayloadKind::ProviderRequest => defs.dto::<ProviderRequestPayload>(),
            PayloadKind::ProviderResponse => defs.dto::<ProviderResponsePayload>(),
            PayloadKind::ToolBefore => defs.dto::<ToolBeforePayload>(),
            PayloadKind::ToolAfter => defs.dto::<ToolAfterPayload>(),
            PayloadKind::Permission => defs.dto::<PermissionPayload>(),
            PayloadKind::CompactionPrepare => defs.dto::<CompactionPreparePayload>(),
            PayloadKind::CompactionComplete => defs.dto::<CompactionCompletePayload>(),
            PayloadKind::FrontendEvent => defs.dto::<FrontendEventPayload>(),
        }
    }
}

/// A hook payload of any point, typed by its DTO. It encodes as the bare DTO object.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
#[allow(clippy::large_enum_variant)] // Payloads are built once per call; boxing buys nothing.
pub enum HookPayload {
    /// The five session points.
    Session(SessionPayload),
    /// `input.receive`.
    Input(InputPayload),
    /// `agent.before_start`.
    AgentStart(AgentStartPayload),
    /// `system_prompt.build`.
    SystemPrompt(SystemPromptPayload),
    /// `context.prepare`.
    Context(ContextPayload),
    /// `provider.request`.
    ProviderRequest(ProviderRequestPayload),
    /// `provider.response`.
    ProviderResponse(ProviderResponsePayload),
    /// `tool.before`.
    ToolBefore(ToolBeforePayload),
    /// `tool.after`.
    ToolAfter(ToolAfterPayload),
    /// `permission.decision`.
    Permission(PermissionPayload),
    /// `compaction.prepare`.
    CompactionPrepare(CompactionPreparePayload),
    /// `compaction.complete`.
    CompactionComplete(CompactionCompletePayload),
    /// `frontend.event`.
    FrontendEvent(FrontendEventPayload),
}

impl HookPayload {
    /// Which DTO this is.
    pub fn kind(&self) -> PayloadKind {
        match self {
            HookPayload::Session(_) => PayloadKind::Session,
            HookPayload::Input(_) => PayloadKind::Input,
            HookPayload::AgentStart(_) => PayloadKind::AgentStart,
            HookPayload::SystemPrompt(_) => PayloadKind::SystemPrompt,
            HookPayload::Context(_) => PayloadKind::Context,
            HookPayload::ProviderRequest(_) => PayloadKind::ProviderRequest,
            HookPayload::ProviderResponse(_) => PayloadKind::ProviderResponse,
            HookPayload::ToolBefore(_) => PayloadKind::ToolBefore,
            HookPayload::ToolAfter(_) => PayloadKind::ToolAfter,
            HookPayload::Permission(_) => PayloadKind::Permission,
            HookPayload::CompactionPrepare(_) => PayloadKind::CompactionPrepare,
            HookPayload::CompactionComplete(_) => PayloadKind::CompactionComplete,
            HookPayload::FrontendEvent(_) => PayloadKind::FrontendEvent,
        }
    }
}

/// The kind of a point's `payload` member: the point's DTO (`null` only when externalized is
/// enforced by the enclosing DTO).
#[derive(Debug, Clone, Copy)]
pub(crate) struct PayloadOf(pub(crate) HookPoint);

impl Kind for PayloadOf {
    type Out = HookPayload;

    fn decode(&self, value: Value, at: &Seg<'_>) -> Result<HookPayload, Error> {
        self.0.payload_kind().decode(value, at)
    }

    fn schema(&self, defs: &mut Defs) -> Value {
        // The precise DTO depends on `event`; the enclosing DTO adds the per-point `if`/`then`.
        let refs: Vec<Value> = PayloadKind::ALL
            .iter()
            .map(|k| k.schema_ref(defs))
            .collect();
        json!({"anyOf": refs})
    }

    fn placeholder(&self) -> HookPayload {
        HookPayload::Session(SessionPayload::default())
    }
}

/// The `allOf` entries that tie `payload` to `event`'s DTO, for the InterceptParams and
/// EventParams schemas.
pub(crate) fn payload_schema_rules(defs: &mut Defs) -> Value {
    let rules: Vec<Value> = HookPoint::ALL
        .iter()
        .map(|point| {
            json!({
                "if": {"properties": {"event": {"const": point.as_str()}}},
                "then": {"properties": {"payload": {
                    "anyOf": [point.payload_kind().schema_ref(defs), {"type": "null"}]
                }}}
            })
        })
        .collect();
    json!({"allOf": rules})
}

impl HookPoint {
    /// The point's payload DTO.
    pub fn payload_kind(self) -> PayloadKind {
        match self {
            HookPoint::SessionStart
            | HookPoint::SessionEnd
            | HookPoint::SessionLoad
            | HookPoint::SessionSave
            | HookPoint::SessionRotate => PayloadKind::Session,
            HookPoint::InputReceive => PayloadKind::Input,
            HookPoint::AgentBeforeStart => PayloadKind::AgentStart,
            HookPoint::SystemPromptBuild => PayloadKind::SystemPrompt,
            HookPoint::ContextPrepare => PayloadKind::Context,
            HookPoint::ProviderRequest => PayloadKind::ProviderRequest,
            HookPoint::ProviderResponse => PayloadKind::ProviderResponse,
            HookPoint::ToolBefore => PayloadKind::ToolBefore,
            HookPoint::ToolAfter => PayloadKind::ToolAfter,
            HookPoint::PermissionDecision => PayloadKind::Permission,
            HookPoint::CompactionPrepare => PayloadKind::CompactionPrepare,
            HookPoint::CompactionComplete => PayloadKind::CompactionComplete,
            HookPoint::FrontendEvent => PayloadKind::FrontendEvent,
        }
    }

    /// The slot whose owner is called at this point, if any (§7.2).
    pub fn slot(self) -> Option<Slot> {
        match self {
            HookPoint::SessionStart
            | HookPoint::SessionEnd
            | HookPoint::SessionLoad
            | HookPoint::SessionSave
            | HookPoint::SessionRotate => Some(Slot::SessionPolicy),
            HookPoint::SystemPromptBuild => Some(Slot::SystemPrompt),
            HookPoint::ContextPrepare => Some(Slot::Context),
            HookPoint::ProviderRequest => Some(Slot::ProviderRequest),
            HookPoint::ProviderResponse => Some(Slot::ProviderResponse),
            HookPoint::PermissionDecision => Some(Slot::Permission),
            HookPoint::CompactionPrepare | HookPoint::CompactionComplete => Some(Slot::Compaction),
            HookPoint::FrontendEvent => Some(Slot::FrontendEvents),
            HookPoint::InputReceive
            | HookPoint::AgentBeforeStart
            | HookPoint::ToolBefore
            | HookPoint::ToolAfter => None,
        }
    }

    /// The phase a session point's payload (and any replacement of it) carries.
    pub fn session_phase(self) -> Option<SessionPhase> {
        match self {
            HookPoint::SessionStart => Some(SessionPhase::Start),
            HookPoint::SessionEnd => Some(SessionPhase::End),
            HookPoint::SessionLoad => Some(SessionPhase::Load),
            HookPoint::SessionSave => Some(SessionPhase::Save),
            HookPoint::SessionRotate => Some(SessionPhase::Rotate),
            _ => None,
        }
    }

    /// The default intercept budget (§7.9): 5 s for the four latency-sensitive points
    /// (`input.receive`, `tool.before`, `tool.after`, `permission.decision`), 30 s otherwise.
    pub fn default_timeout(self) -> Duration {
        match self {
            HookPoint::InputReceive
            | HookPoint::ToolBefore
            | HookPoint::ToolAfter
            | HookPoint::PermissionDecision => SHORT_INTERCEPT_TIMEOUT,
            _ => DEFAULT_INTERCEPT_TIMEOUT,
        }
    }

    /// The effective budget (§7.9) for a plugin whose manifest sets `runtime.timeoutMillis`:
    /// 0 keeps the point's default; anything else replaces it at every point, clamped to 60,000.
    pub fn timeout(self, manifest_timeout_millis: u64) -> Duration {
        Duration::from_millis(self.timeout_millis(manifest_timeout_millis))
    }

    /// [`HookPoint::timeout`] in milliseconds, as sent in `InterceptParams.timeoutMillis`.
    pub fn timeout_millis(self, manifest_timeout_millis: u64) -> u64 {
        if manifest_timeout_millis > 0 {
            manifest_timeout_millis.min(MAX_INTERCEPT_TIMEOUT_MILLIS)
        } else {
            // The defaults are whole seconds, so the conversion is exact.
            self.default_timeout().as_secs() * 1000
        }
    }

    /// Whether `decision` is legal here for `caller` (§7.5, §7.7): a chain member may always
    /// continue, block or replace, and may allow or deny only at `permission.decision`; a slot
    /// owner may only continue or replace.
    pub fn allows(self, decision: DecisionKind, caller: Caller) -> bool {
        match (caller, decision) {
            (_, DecisionKind::Continue | DecisionKind::Replace) => true,
            (Caller::Chain, DecisionKind::Block) => true,
            (Caller::Chain, DecisionKind::Allow | DecisionKind::Deny) => {
                self == HookPoint::PermissionDecision
            }
            (Caller::SlotOwner, _) => false,
        }
    }

    /// Strictly decodes a rehydrated payload (§9) of this point; errors start at
    /// `params.payload` and carry `invalid_params`.
    pub fn decode_payload(self, raw: &str) -> Result<HookPayload, Error> {
        let root = Seg::Root(Target::Payload);
        let value = parse(raw, &root)?;
        self.payload_kind().decode(value, &root)
    }

    /// Re-validates a replacement (§7.8): decodes it into a fresh value of the point's DTO with
    /// the §4 rules, then checks the point's rule of §7.2. `received` is the payload the
    /// answering extension was sent; at `permission.decision` a chain member must keep its
    /// `hostDecision`, while the slot owner's `hostDecision` becomes the verdict.
    ///
    /// Errors start at `result.replacement`; the host treats any of them as a violation.
    pub fn validate_replacement(
        self,
        replacement: &Value,
        received: &HookPayload,
        caller: Caller,
    ) -> Result<HookPayload, Error> {
        let root = Seg::Root(Target::Replacement);
        let payload = self.payload_kind().decode(replacement.clone(), &root)?;
        self.check_replacement(&payload, received, caller, &root)?;
        Ok(payload)
    }

    fn check_replacement(
        self,
        payload: &HookPayload,
        received: &HookPayload,
        caller: Caller,
        at: &Seg<'_>,
    ) -> Result<(), Error> {
        let non_blank = |text: &str, name: &str| {
            if is_blank(text) {
                Err(blank(&at.key(name)))
            } else {
                Ok(())
            }
        };
        match payload {
            HookPayload::Session(p) => {
                if p.phase != self.session_phase() {
                    let expected = self.session_phase().map_or("", SessionPhase::as_str);
                    return Err(rule(&at.key("phase"), format!("must be {expected:?}")));
                }
                Ok(())
            }
            HookPayload::Input(p) => non_blank(&p.text, "text"),
            HookPayload::AgentStart(p) => non_blank(&p.session_id, "sessionId"),
            HookPayload::SystemPrompt(p) => non_blank(&p.workspace_root, "workspaceRoot"),
            HookPayload::ToolBefore(p) => {
                non_blank(&p.name, "name")?;
                check_arguments(&p.arguments, at)
            }
            HookPayload::ToolAfter(p) => {
                non_blank(&p.name, "name")?;
                check_arguments(&p.arguments, at)
            }
            HookPayload::Permission(p) => {
                non_blank(&p.name, "name")?;
                check_arguments(&p.arguments, at)?;
                match (caller, received) {
                    (Caller::Chain, HookPayload::Permission(before))
                        if before.host_decision != p.host_decision =>
                    {
                        Err(rule(
                            &at.key("hostDecision"),
                            format!(
                                "a chain member must keep {:?}",
                                before.host_decision.as_str()
                            ),
                        ))
                    }
                    _ => Ok(()),
                }
            }
            HookPayload::CompactionComplete(p) => non_blank(&p.summary, "summary"),
            HookPayload::FrontendEvent(p) => non_blank(&p.kind, "kind"),
            // `messages`, the provider request and the tool calls are fully checked by strict
            // decoding already.
            HookPayload::Context(_)
            | HookPayload::ProviderRequest(_)
            | HookPayload::ProviderResponse(_)
            | HookPayload::CompactionPrepare(_) => Ok(()),
        }
    }
}

/// `arguments` must be empty or the text of a JSON object (§7.2).
fn check_arguments(arguments: &str, at: &Seg<'_>) -> Result<(), Error> {
    if arguments.is_empty() || serde_json::from_str::<Value>(arguments).is_ok_and(|v| v.is_object())
    {
        return Ok(());
    }
    Err(rule(
        &at.key("arguments"),
        "must be empty or the text of a JSON object",
    ))
}

#[cfg(test)]
mod tests;
