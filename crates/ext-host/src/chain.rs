//! Interceptor chains (spec §7): the walk over chain members and the slot owner, decisions and
//! where each is legal, replacement re-validation, the failure policy, audit of overridden
//! denials, and the [`Outcome`] with its trace.
//!
//! Members are called one after another in (priority, plugin id) order, each with its
//! predecessor's payload; a completion order never decides anything. A payload is serialized
//! once and again only after a replacement. This module decides nothing about processes: a
//! crashed or missing connection is just another failure.
//!
//! The walk decides through two seams: a [`Member`] is whoever answers an intercept (a sidecar
//! [`Connection`] in production), and the [`Host`] is where its warnings and audit records go
//! ([`Shared`] in production). The unit tests walk fake members over a fake host, one test per
//! decision rule, without a process.

use std::future::Future;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use sidewire_ext_protocol::{
    Caller, DecisionKind, HookPayload, HookPoint, InterceptResult, Reason, Verdict,
};

use crate::Error;
use crate::audit::AuditRecord;
use crate::conn::{CallError, Connection, PayloadText};
use crate::error::OperationFailure;
use crate::events::HostEvent;
use crate::generation::{Entry, PointPlan};
use crate::member::{MemberAnswer, MemberFailure};
use crate::shared::Shared;

/// Who a trace entry is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TraceRole {
    /// A chain member (§7.6).
    Chain,
    /// The owner of the active slot mapped to the point, answering the strategy call (§7.7).
    SlotOwner,
}

/// What one member did.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum TraceResult {
    /// It answered with a legal decision that was applied.
    Decided(DecisionKind),
    /// It failed: a timeout, an error answer, a crash, an undecodable result or a violation.
    Failed {
        /// The reason.
        reason: Reason,
        /// What happened, redacted.
        message: String,
    },
    /// It turned the host's `deny` into `allow` (`allow` from a chain member, `replace` from the
    /// `permission` slot owner), but the audit record could not be made durable, so the decision
    /// was **not** applied (§11: no override without its record). For the chain this counts as
    /// the member's failure; for the slot owner it fails the operation.
    Unaudited {
        /// The decision that was not applied.
        decision: DecisionKind,
        /// Why the record could not be written.
        message: String,
    },
}

/// One call of a walk: the plugin, its role, what it did, and how long it took.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct TraceEntry {
    /// The plugin id.
    pub plugin: String,
    /// Chain member or slot owner.
    pub role: TraceRole,
    /// Its decision or failure.
    pub result: TraceResult,
    /// From writing the call to deciding on its answer.
    pub elapsed: Duration,
    /// What an in-process member said of its own steps (each hook it ran: its source, command
    /// and what it said), redacted; empty for a sidecar.
    pub notes: Vec<String>,
}

/// A refused operation: who blocked it and the reason to show (redacted).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Blocked {
    /// The plugin id.
    pub plugin: String,
    /// The redacted reason (may be empty).
    pub reason: String,
}

/// The result of an intercept.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Outcome {
    /// The payload to continue with: the caller's, or the last valid replacement.
    pub payload: HookPayload,
    /// Set when a chain member blocked: the operation is refused.
    pub blocked: Option<Blocked>,
    /// At `permission.decision`, the verdict: the host's own unless a member allowed or denied
    /// or the `permission` slot owner replaced it; `None` at other points.
    pub permission: Option<Verdict>,
    /// The plugins whose replacements were applied, in order.
    pub applied: Vec<String>,
    /// Set when a host `deny` was turned into `allow` (the record is already on disk).
    pub audit: Option<AuditRecord>,
    /// Every call made, in order: plugin, role, decision or failure, time taken.
    pub trace: Vec<TraceEntry>,
}

impl Outcome {
    /// The outcome of a point nobody intercepts: the payload unchanged.
    pub(crate) fn unchanged(point: HookPoint, payload: HookPayload) -> Self {
        let permission = match (&payload, point) {
            (HookPayload::Permission(p), HookPoint::PermissionDecision) => Some(p.host_decision),
            _ => None,
        };
        Outcome {
            payload,
            blocked: None,
            permission,
            applied: Vec::new(),
            audit: None,
            trace: Vec::new(),
        }
    }

    /// Whether the operation may go on (nobody blocked it, and at `permission.decision` the
    /// verdict is `allow`).
    pub fn proceeds(&self) -> bool {
        self.blocked.is_none() && self.permission != Some(Verdict::Deny)
    }
}

/// A chain member or slot owner, as the walk sees it.
pub(crate) trait Member: Sync {
    /// The plugin id.
    fn id(&self) -> &str;

    /// Whether its failure as a chain member fails the operation (§7.10); a slot owner's
    /// always does (§7.7).
    fn required(&self) -> bool;

    /// Its budget at `point`, in milliseconds: the deadline of the call, and of the audit
    /// record of an override it makes.
    fn timeout_millis(&self, point: HookPoint) -> u64;

    /// One intercept call with the current payload. Failures (a timeout, an error answer, a
    /// crash, an undecodable result) carry their reason and a message naming the plugin.
    fn intercept(
        &self,
        point: HookPoint,
        payload: Sent<'_>,
        timeout_millis: u64,
    ) -> impl Future<Output = Result<Answered, Failed>> + Send;
}

/// The payload a member is sent: the value, and its text, written once for all the sidecars
/// that get it (until a replacement).
#[derive(Clone, Copy)]
pub(crate) struct Sent<'a> {
    pub(crate) payload: &'a HookPayload,
    text: &'a OnceLock<PayloadText>,
}

impl<'a> Sent<'a> {
    /// The payload's text, written on first use.
    pub(crate) fn text(self) -> &'a PayloadText {
        self.text.get_or_init(|| PayloadText::of(self.payload))
    }
}

/// A member's answer, with what an in-process member says of its steps.
pub(crate) struct Answered {
    pub(crate) result: InterceptResult,
    pub(crate) notes: Vec<String>,
    pub(crate) warnings: Vec<String>,
}

impl From<InterceptResult> for Answered {
    fn from(result: InterceptResult) -> Self {
        Answered {
            result,
            notes: Vec::new(),
            warnings: Vec::new(),
        }
    }
}

/// A member's failed call.
pub(crate) struct Failed {
    pub(crate) error: CallError,
    pub(crate) notes: Vec<String>,
    /// It fails the operation even if the member is optional.
    pub(crate) fails_operation: bool,
}

impl From<CallError> for Failed {
    fn from(error: CallError) -> Self {
        Failed {
            error,
            notes: Vec::new(),
            fails_operation: false,
        }
    }
}

impl Member for Connection {
    fn id(&self) -> &str {
        &self.plugin.id
    }

    fn required(&self) -> bool {
        self.plugin.required()
    }

    fn timeout_millis(&self, point: HookPoint) -> u64 {
        point.timeout_millis(self.plugin.runtime.timeout_millis)
    }

    async fn intercept(
        &self,
        point: HookPoint,
        payload: Sent<'_>,
        timeout_millis: u64,
    ) -> Result<Answered, Failed> {
        Connection::intercept(self, point, payload.text(), timeout_millis)
            .await
            .map(Answered::from)
            .map_err(Failed::from)
    }
}

impl Member for Entry {
    fn id(&self) -> &str {
        Entry::id(self)
    }

    fn required(&self) -> bool {
        match self {
            Entry::Sidecar(conn) => Member::required(&**conn),
            Entry::Local(member) => member.required(),
        }
    }

    fn timeout_millis(&self, point: HookPoint) -> u64 {
        match self {
            Entry::Sidecar(conn) => Member::timeout_millis(&**conn, point),
            Entry::Local(member) => member.timeout_millis(point).max(1),
        }
    }

    async fn intercept(
        &self,
        point: HookPoint,
        payload: Sent<'_>,
        timeout_millis: u64,
    ) -> Result<Answered, Failed> {
        let member = match self {
            Entry::Sidecar(conn) => {
                return Member::intercept(&**conn, point, payload, timeout_millis).await;
            }
            Entry::Local(member) => member,
        };
        let budget = Duration::from_millis(timeout_millis);
        match tokio::time::timeout(budget, member.intercept(point, payload.payload)).await {
            Ok(Ok(MemberAnswer {
                result,
                notes,
                warnings,
                ..
            })) => Ok(Answered {
                result,
                notes,
                warnings,
            }),
            Ok(Err(failure)) => {
                let fails_operation = failure.fails_operation();
                let MemberFailure {
                    reason,
                    message,
                    notes,
                    ..
                } = failure;
                Err(Failed {
                    error: CallError {
                        reason,
                        message: format!("{} failed at {}: {message}", member.id(), point.as_str()),
                    },
                    notes,
                    fails_operation,
                })
            }
            Err(_) => Err(Failed::from(CallError {
                reason: Reason::InterceptTimeout,
                message: format!(
                    "{} did not answer {} within {timeout_millis} ms",
                    member.id(),
                    point.as_str()
                ),
            })),
        }
    }
}

/// What a walk needs from the host: redaction, warnings and the audit log.
pub(crate) trait Host: Sync {
    /// `text` with secrets replaced.
    fn redact(&self, text: &str) -> String;

    /// Warns about `plugin` (redacted), every time.
    fn warn(&self, plugin: &str, message: &str);

    /// Warns about `plugin` (redacted), once per plugin and `kind` for the life of the host.
    fn warn_once(&self, plugin: &str, kind: &'static str, message: &str);

    /// Makes `record` durable within `deadline` and tells the application; the error says
    /// why the record could not be written.
    fn audit(
        &self,
        record: &AuditRecord,
        deadline: Duration,
    ) -> impl Future<Output = Result<(), String>> + Send;
}

impl Host for Shared {
    fn redact(&self, text: &str) -> String {
        Shared::redact(self, text)
    }

    fn warn(&self, plugin: &str, message: &str) {
        Shared::warn(self, Some(plugin), message);
    }

    fn warn_once(&self, plugin: &str, kind: &'static str, message: &str) {
        Shared::warn_once(self, plugin, kind, message);
    }

    async fn audit(&self, record: &AuditRecord, deadline: Duration) -> Result<(), String> {
        match self.audit.append(record, deadline).await {
            Ok(()) => {
                self.notify(HostEvent::Audited(record.clone()));
                Ok(())
            }
            Err(failure) => Err(failure.chain()),
        }
    }
}

/// What a chain member's legal answer means for the walk.
enum Step {
    /// Go on to the next member with the same payload.
    Next,
    /// Go on with the member's replacement (its text is serialized again when needed).
    Replaced,
    /// The walk is done: a block or a final verdict.
    Stop,
    /// An `allow` over the host's `deny`: applied only once its record is durable.
    Override(AuditRecord),
}

/// A slot owner's replacement of the host's `deny` by `allow`, waiting for its audit record.
struct Override {
    payload: HookPayload,
    record: AuditRecord,
}

/// Why a strategy call fails the operation (strategy calls are always required, §7.7).
enum StrategyFailure {
    /// The owner answered `block`: the redacted message, and no wire reason (there is none for
    /// a refusal).
    Blocked(String),
    /// The call failed or the answer broke a rule.
    Failed(CallError),
}

/// Whether the walk goes on after a chain member.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flow {
    /// To the next member, or to the slot owner after the last.
    Next,
    /// The outcome is final: nobody else is called.
    Done,
}

/// Walks the chain and then the slot owner for one occurrence of `point`.
///
/// # Cancel safety
///
/// Dropping the future abandons the walk: the call in flight is cancelled (its late answer is
/// ignored), nothing after it is called, and no audit record is written for it.
pub(crate) async fn walk(
    plan: &PointPlan,
    shared: &Shared,
    point: HookPoint,
    payload: HookPayload,
) -> Result<Outcome, Error> {
    walk_members(
        plan.chain.iter(),
        plan.owner.as_deref(),
        shared,
        point,
        payload,
    )
    .await
}

/// [`walk`] over any members and host.
async fn walk_members<'m, M: Member + 'm, O: Member, H: Host>(
    chain: impl ExactSizeIterator<Item = &'m M>,
    owner: Option<&O>,
    host: &H,
    point: HookPoint,
    payload: HookPayload,
) -> Result<Outcome, Error> {
    let mut walk = Walk::new(
        host,
        point,
        payload,
        chain.len() + usize::from(owner.is_some()),
    );
    for member in chain {
        if walk.call_member(member).await? == Flow::Done {
            return Ok(walk.outcome);
        }
    }
    match owner {
        Some(owner) => walk.call_owner(owner).await,
        None => Ok(walk.outcome),
    }
}

/// One walk in progress.
struct Walk<'h, H> {
    host: &'h H,
    point: HookPoint,
    /// At `permission.decision`, the host's own verdict.
    host_verdict: Option<Verdict>,
    outcome: Outcome,
    /// The current payload's text, once written (until a replacement).
    text: OnceLock<PayloadText>,
}

impl<'h, H: Host> Walk<'h, H> {
    fn new(host: &'h H, point: HookPoint, payload: HookPayload, calls: usize) -> Self {
        let host_verdict = match &payload {
            HookPayload::Permission(p) => Some(p.host_decision),
            _ => None,
        };
        let mut outcome = Outcome::unchanged(point, payload);
        outcome.trace.reserve(calls);
        Walk {
            host,
            point,
            host_verdict,
            outcome,
            text: OnceLock::new(),
        }
    }

    /// Calls one chain member and applies its answer; `Err` fails the operation.
    async fn call_member<M: Member>(&mut self, member: &M) -> Result<Flow, Error> {
        let sent = Sent {
            payload: &self.outcome.payload,
            text: &self.text,
        };
        let timeout = member.timeout_millis(self.point);
        let started = Instant::now();
        let answer = member.intercept(self.point, sent, timeout).await;
        let answer = match answer {
            Ok(answered) => {
                for warning in &answered.warnings {
                    self.host.warn(member.id(), warning);
                }
                Ok(answered)
            }
            Err(failed) => Err(failed),
        };
        let decided = answer.and_then(|answered| {
            let decision = answered.result.decision;
            match self.chain_step(member, answered.result) {
                Ok(step) => Ok((decision, step, answered.notes)),
                Err(error) => Err(Failed {
                    error,
                    notes: answered.notes,
                    fails_operation: false,
                }),
            }
        });
        let (decision, step, notes) = match decided {
            Ok(decided) => decided,
            Err(failure) => return self.member_failed(member, failure, started),
        };
        if let Step::Override(record) = step {
            let left = Duration::from_millis(timeout).saturating_sub(started.elapsed());
            return self
                .member_override(member, decision, record, notes, left, started)
                .await;
        }
        self.record(
            member,
            TraceRole::Chain,
            TraceResult::Decided(decision),
            notes,
            started,
        );
        match step {
            Step::Next => Ok(Flow::Next),
            Step::Replaced => {
                self.text = OnceLock::new();
                Ok(Flow::Next)
            }
            Step::Stop | Step::Override(_) => Ok(Flow::Done),
        }
    }

    /// A chain member's failure: the operation's for a required member; for an optional one a
    /// `continue`, warned about once (§7.10).
    fn member_failed<M: Member>(
        &mut self,
        member: &M,
        failed: Failed,
        started: Instant,
    ) -> Result<Flow, Error> {
        let Failed {
            error: failure,
            notes,
            fails_operation,
        } = failed;
        let result = TraceResult::Failed {
            reason: failure.reason,
            message: failure.message.clone(),
        };
        self.record(member, TraceRole::Chain, result, notes, started);
        if member.required() || fails_operation {
            let reason = Some(failure.reason);
            return Err(self.operation_failure(member, reason, failure.message));
        }
        self.host.warn_once(
            member.id(),
            "chain-failure",
            &format!(
                "{} (optional extension skipped; further failures of it are not reported again)",
                failure.message
            ),
        );
        Ok(Flow::Next)
    }

    /// A chain member's `allow` over the host's `deny`: final once its record is durable
    /// within `left`; otherwise not applied, and the member counts as failed.
    async fn member_override<M: Member>(
        &mut self,
        member: &M,
        decision: DecisionKind,
        record: AuditRecord,
        notes: Vec<String>,
        left: Duration,
        started: Instant,
    ) -> Result<Flow, Error> {
        match self.audit(record, left).await {
            Ok(record) => {
                self.outcome.permission = Some(Verdict::Allow);
                self.outcome.audit = Some(record);
                self.record(
                    member,
                    TraceRole::Chain,
                    TraceResult::Decided(decision),
                    notes,
                    started,
                );
                Ok(Flow::Done)
            }
            Err(message) => {
                self.unaudited(member, TraceRole::Chain, decision, &message, notes, started);
                if member.required() {
                    let reason = Some(Reason::Internal);
                    return Err(self.operation_failure(member, reason, message));
                }
                Ok(Flow::Next)
            }
        }
    }

    /// The strategy call of `owner`, the slot owner, after the chain (§7.7). Strategy calls are
    /// always required: any failure fails the operation.
    async fn call_owner<M: Member>(mut self, owner: &M) -> Result<Outcome, Error> {
        let text = std::mem::take(&mut self.text);
        let sent = Sent {
            payload: &self.outcome.payload,
            text: &text,
        };
        let timeout = owner.timeout_millis(self.point);
        let started = Instant::now();
        let answer = owner.intercept(self.point, sent, timeout).await;
        let decided =
            (answer.map_err(|failed| StrategyFailure::Failed(failed.error))).and_then(|answered| {
                let decision = answered.result.decision;
                self.strategy_step(owner, answered.result)
                    .map(|step| (decision, step))
            });
        match decided {
            Ok((decision, None)) => {
                let result = TraceResult::Decided(decision);
                self.record(owner, TraceRole::SlotOwner, result, Vec::new(), started);
                Ok(self.outcome)
            }
            Ok((decision, Some(Override { payload, record }))) => {
                let left = Duration::from_millis(timeout).saturating_sub(started.elapsed());
                self.owner_override(owner, decision, payload, record, left, started)
                    .await
            }
            Err(failure) => Err(self.owner_failed(owner, failure, started)),
        }
    }

    /// The slot owner's replacement turning the host's `deny` into `allow`: applied only once
    /// its record is durable within `left`; otherwise the operation fails, and the host's
    /// `deny` is never replaced unaudited.
    async fn owner_override<M: Member>(
        mut self,
        owner: &M,
        decision: DecisionKind,
        payload: HookPayload,
        record: AuditRecord,
        left: Duration,
        started: Instant,
    ) -> Result<Outcome, Error> {
        match self.audit(record, left).await {
            Ok(record) => {
                self.outcome.payload = payload;
                self.outcome.permission = Some(Verdict::Allow);
                self.outcome.applied.push(owner.id().to_owned());
                self.outcome.audit = Some(record);
                let result = TraceResult::Decided(decision);
                self.record(owner, TraceRole::SlotOwner, result, Vec::new(), started);
                Ok(self.outcome)
            }
            Err(message) => {
                let notes = Vec::new();
                self.unaudited(
                    owner,
                    TraceRole::SlotOwner,
                    decision,
                    &message,
                    notes,
                    started,
                );
                Err(self.operation_failure(owner, Some(Reason::Internal), message))
            }
        }
    }

    /// The operation's failure after the slot owner refused or failed.
    fn owner_failed<M: Member>(
        &mut self,
        owner: &M,
        failure: StrategyFailure,
        started: Instant,
    ) -> Error {
        let (result, reason, message) = match failure {
            StrategyFailure::Blocked(message) => {
                (TraceResult::Decided(DecisionKind::Block), None, message)
            }
            StrategyFailure::Failed(CallError { reason, message }) => {
                let result = TraceResult::Failed {
                    reason,
                    message: message.clone(),
                };
                (result, Some(reason), message)
            }
        };
        self.record(owner, TraceRole::SlotOwner, result, Vec::new(), started);
        self.operation_failure(owner, reason, message)
    }

    /// Applies a chain member's answer: what the walk does next, or the violation.
    fn chain_step<M: Member>(
        &mut self,
        member: &M,
        result: InterceptResult,
    ) -> Result<Step, CallError> {
        let point = self.point;
        if !point.allows(result.decision, Caller::Chain) {
            return Err(self.violation(
                member,
                format!(
                    "answered {:?} at {}, where it is not allowed",
                    result.decision.as_str(),
                    point.as_str()
                ),
            ));
        }
        match result.decision {
            DecisionKind::Continue => Ok(Step::Next),
            DecisionKind::Block => {
                self.outcome.blocked = Some(Blocked {
                    plugin: member.id().to_owned(),
                    reason: self.host.redact(&result.reason),
                });
                Ok(Step::Stop)
            }
            DecisionKind::Replace => {
                let replacement = result.replacement.unwrap_or_default();
                let payload = point
                    .validate_replacement(&replacement, &self.outcome.payload, Caller::Chain)
                    .map_err(|err| {
                        self.violation(
                            member,
                            format!("sent an invalid replacement at {}: {err}", point.as_str()),
                        )
                    })?;
                self.outcome.payload = payload;
                self.outcome.applied.push(member.id().to_owned());
                Ok(Step::Replaced)
            }
            DecisionKind::Allow | DecisionKind::Deny => {
                let verdict = if result.decision == DecisionKind::Allow {
                    Verdict::Allow
                } else {
                    Verdict::Deny
                };
                if self.host_verdict == Some(Verdict::Deny) && verdict == Verdict::Allow {
                    // The verdict changes only once the record is durable (the walk writes it).
                    let reason = self.host.redact(&result.reason);
                    return Ok(Step::Override(AuditRecord::new(
                        member.id(),
                        "allow",
                        reason,
                    )));
                }
                self.outcome.permission = Some(verdict);
                Ok(Step::Stop)
            }
        }
    }

    /// Applies the slot owner's answer to a strategy call. `Ok(Some(_))` is a replacement
    /// turning the host's `deny` into `allow`, which the walk applies only once its record is
    /// durable.
    fn strategy_step<M: Member>(
        &mut self,
        owner: &M,
        result: InterceptResult,
    ) -> Result<Option<Override>, StrategyFailure> {
        let point = self.point;
        let slot = point.slot().map_or("", |s| s.as_str());
        match result.decision {
            DecisionKind::Continue => Ok(None),
            DecisionKind::Replace => {
                let replacement = result.replacement.unwrap_or_default();
                let payload = point
                    .validate_replacement(&replacement, &self.outcome.payload, Caller::SlotOwner)
                    .map_err(|err| {
                        StrategyFailure::Failed(self.violation(
                            owner,
                            format!(
                                "sent an invalid replacement as the {slot} strategy at {}: {err}",
                                point.as_str()
                            ),
                        ))
                    })?;
                if let HookPayload::Permission(p) = &payload {
                    if self.host_verdict == Some(Verdict::Deny) && p.host_decision == Verdict::Allow
                    {
                        let reason = self.host.redact(&result.reason);
                        let record = AuditRecord::new(owner.id(), "replace", reason);
                        return Ok(Some(Override { payload, record }));
                    }
                    self.outcome.permission = Some(p.host_decision);
                }
                self.outcome.payload = payload;
                self.outcome.applied.push(owner.id().to_owned());
                Ok(None)
            }
            DecisionKind::Block => Err(StrategyFailure::Blocked(self.host.redact(&format!(
                "extension {} refused {} as the {slot} strategy: {}",
                owner.id(),
                point.as_str(),
                result.reason
            )))),
            other => Err(StrategyFailure::Failed(self.violation(
                owner,
                format!(
                    "answered {:?} as the {slot} strategy at {}, where only continue or replace \
                     is allowed",
                    other.as_str(),
                    point.as_str()
                ),
            ))),
        }
    }

    /// Writes the audit record of a denial turned into an allowance (§11) within `deadline`
    /// (what is left of the point's budget); the error is the message for the trace and the
    /// warning.
    async fn audit(&self, record: AuditRecord, deadline: Duration) -> Result<AuditRecord, String> {
        match self.host.audit(&record, deadline).await {
            Ok(()) => Ok(record),
            Err(cause) => Err(self.host.redact(&format!(
                "extension {} turned the host's deny into allow, but {cause}, so the override was \
                 not applied",
                record.plugin,
            ))),
        }
    }

    /// Appends `member`'s trace entry, timed from `started` (the call's write) to now, with
    /// its `notes` redacted.
    fn record<M: Member>(
        &mut self,
        member: &M,
        role: TraceRole,
        result: TraceResult,
        notes: Vec<String>,
        started: Instant,
    ) {
        let notes = notes.iter().map(|note| self.host.redact(note)).collect();
        self.outcome.trace.push(TraceEntry {
            plugin: member.id().to_owned(),
            role,
            result,
            elapsed: started.elapsed(),
            notes,
        });
    }

    /// Records an override that was not applied because its audit record could not be
    /// written, and warns: a failure that changes a security decision is reported every time.
    fn unaudited<M: Member>(
        &mut self,
        member: &M,
        role: TraceRole,
        decision: DecisionKind,
        message: &str,
        notes: Vec<String>,
        started: Instant,
    ) {
        let result = TraceResult::Unaudited {
            decision,
            message: message.to_owned(),
        };
        self.record(member, role, result, notes, started);
        self.host.warn(member.id(), message);
    }

    /// The operation's failure, naming `member`, with the trace so far.
    fn operation_failure<M: Member>(
        &mut self,
        member: &M,
        reason: Option<Reason>,
        message: String,
    ) -> Error {
        Error::Operation(Box::new(OperationFailure {
            plugin: member.id().to_owned(),
            point: self.point,
            reason,
            message,
            trace: std::mem::take(&mut self.outcome.trace),
        }))
    }

    /// A broken rule of `member`'s answer, as a `protocol_error` naming it (redacted).
    fn violation<M: Member>(&self, member: &M, message: String) -> CallError {
        CallError {
            reason: Reason::ProtocolError,
            message: (self.host).redact(&format!("extension {} {message}", member.id())),
        }
    }
}

#[cfg(test)]
mod tests;
