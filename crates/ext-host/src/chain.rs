//! Interceptor chains (spec §7): the walk over chain members and the slot owner, decisions and
//! where each is legal, replacement re-validation, the failure policy, audit of overridden
//! denials, and the [`Outcome`] with its trace.
//!
//! Members are called one after another in (priority, plugin id) order, each with its
//! predecessor's payload; a completion order never decides anything. A payload is serialized
//! once and again only after a replacement. This module decides nothing about processes: a
//! crashed or missing connection is just another failure.

use std::time::{Duration, Instant};

use sidewire_ext_protocol::{
    Caller, DecisionKind, HookPayload, HookPoint, InterceptResult, Reason, Verdict,
};

use crate::Error;
use crate::audit::AuditRecord;
use crate::conn::{CallError, Connection, PayloadText};
use crate::error::OperationFailure;
use crate::events::HostEvent;
use crate::generation::PointPlan;
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
    let host_verdict = match &payload {
        HookPayload::Permission(p) => Some(p.host_decision),
        _ => None,
    };
    let mut outcome = Outcome::unchanged(point, payload);
    outcome
        .trace
        .reserve(plan.chain.len() + usize::from(plan.owner.is_some()));
    let mut text: Option<PayloadText> = None;
    for member in &plan.chain {
        let payload_text = text.get_or_insert_with(|| serialize(&outcome.payload));
        let timeout = timeout_millis(member, point);
        let started = Instant::now();
        let answer = member.intercept(point, payload_text, timeout).await;
        let failure = match answer {
            Err(failure) => failure,
            Ok(result) => {
                let decision = result.decision;
                match chain_step(shared, member, point, host_verdict, &mut outcome, result) {
                    Err(violation) => violation,
                    Ok(Step::Override(record)) => {
                        let left = Duration::from_millis(timeout).saturating_sub(started.elapsed());
                        match audit(shared, record, left).await {
                            Ok(record) => {
                                outcome.permission = Some(Verdict::Allow);
                                outcome.audit = Some(record);
                                let result = TraceResult::Decided(decision);
                                record_entry(
                                    &mut outcome,
                                    member,
                                    TraceRole::Chain,
                                    result,
                                    started,
                                );
                                return Ok(outcome);
                            }
                            Err(message) => {
                                unaudited(
                                    shared,
                                    &mut outcome,
                                    member,
                                    TraceRole::Chain,
                                    decision,
                                    &message,
                                    started,
                                );
                                if member.plugin.required() {
                                    let reason = Some(Reason::Internal);
                                    return Err(operation_failure(
                                        member, point, reason, message, outcome,
                                    ));
                                }
                                continue;
                            }
                        }
                    }
                    Ok(step) => {
                        let result = TraceResult::Decided(decision);
                        record_entry(&mut outcome, member, TraceRole::Chain, result, started);
                        match step {
                            Step::Next => continue,
                            Step::Replaced => {
                                text = None;
                                continue;
                            }
                            Step::Stop | Step::Override(_) => return Ok(outcome),
                        }
                    }
                }
            }
        };
        let result = TraceResult::Failed {
            reason: failure.reason,
            message: failure.message.clone(),
        };
        record_entry(&mut outcome, member, TraceRole::Chain, result, started);
        if member.plugin.required() {
            return Err(operation_failure(
                member,
                point,
                Some(failure.reason),
                failure.message,
                outcome,
            ));
        }
        // §7.10: an optional plugin's failure is a `continue`, warned about once.
        shared.warn_once(
            &member.plugin.id,
            "chain-failure",
            &format!(
                "{} (optional extension skipped; further failures of it are not reported again)",
                failure.message
            ),
        );
    }
    match &plan.owner {
        Some(owner) => {
            let text = text.unwrap_or_else(|| serialize(&outcome.payload));
            strategy(shared, owner, point, host_verdict, &text, outcome).await
        }
        None => Ok(outcome),
    }
}

/// The strategy call of `owner`, the slot owner, after the chain (§7.7).
async fn strategy(
    shared: &Shared,
    owner: &Connection,
    point: HookPoint,
    host_verdict: Option<Verdict>,
    text: &PayloadText,
    mut outcome: Outcome,
) -> Result<Outcome, Error> {
    let timeout = timeout_millis(owner, point);
    let started = Instant::now();
    let answer = owner.intercept(point, text, timeout).await;
    let failure = match answer {
        Err(failure) => StrategyFailure::Failed(failure),
        Ok(result) => {
            let decision = result.decision;
            match strategy_step(shared, owner, point, host_verdict, &mut outcome, result) {
                Ok(None) => {
                    let result = TraceResult::Decided(decision);
                    record_entry(&mut outcome, owner, TraceRole::SlotOwner, result, started);
                    return Ok(outcome);
                }
                Ok(Some(Override { payload, record })) => {
                    let left = Duration::from_millis(timeout).saturating_sub(started.elapsed());
                    return match audit(shared, record, left).await {
                        Ok(record) => {
                            outcome.payload = payload;
                            outcome.permission = Some(Verdict::Allow);
                            outcome.applied.push(owner.plugin.id.clone());
                            outcome.audit = Some(record);
                            let result = TraceResult::Decided(decision);
                            record_entry(
                                &mut outcome,
                                owner,
                                TraceRole::SlotOwner,
                                result,
                                started,
                            );
                            Ok(outcome)
                        }
                        Err(message) => {
                            // Strategy calls are always required (§7.7): the operation fails,
                            // and the host's `deny` is never replaced unaudited.
                            unaudited(
                                shared,
                                &mut outcome,
                                owner,
                                TraceRole::SlotOwner,
                                decision,
                                &message,
                                started,
                            );
                            let reason = Some(Reason::Internal);
                            Err(operation_failure(owner, point, reason, message, outcome))
                        }
                    };
                }
                Err(failure) => failure,
            }
        }
    };
    // Strategy calls are always required (§7.7).
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
    record_entry(&mut outcome, owner, TraceRole::SlotOwner, result, started);
    Err(operation_failure(owner, point, reason, message, outcome))
}

fn serialize(payload: &HookPayload) -> PayloadText {
    PayloadText::of(payload)
}

fn timeout_millis(conn: &Connection, point: HookPoint) -> u64 {
    point.timeout_millis(conn.plugin.runtime.timeout_millis)
}

/// Appends `conn`'s trace entry, timed from `started` (the call's write) to now.
fn record_entry(
    outcome: &mut Outcome,
    conn: &Connection,
    role: TraceRole,
    result: TraceResult,
    started: Instant,
) {
    outcome.trace.push(TraceEntry {
        plugin: conn.plugin.id.clone(),
        role,
        result,
        elapsed: started.elapsed(),
    });
}

/// Records an override that was not applied because its audit record could not be written,
/// and warns: a failure that changes a security decision is reported every time.
fn unaudited(
    shared: &Shared,
    outcome: &mut Outcome,
    conn: &Connection,
    role: TraceRole,
    decision: DecisionKind,
    message: &str,
    started: Instant,
) {
    let result = TraceResult::Unaudited {
        decision,
        message: message.to_owned(),
    };
    record_entry(outcome, conn, role, result, started);
    shared.warn(Some(&conn.plugin.id), message);
}

fn operation_failure(
    conn: &Connection,
    point: HookPoint,
    reason: Option<Reason>,
    message: String,
    outcome: Outcome,
) -> Error {
    Error::Operation(Box::new(OperationFailure {
        plugin: conn.plugin.id.clone(),
        point,
        reason,
        message,
        trace: outcome.trace,
    }))
}

fn violation(conn: &Connection, shared: &Shared, message: String) -> CallError {
    CallError {
        reason: Reason::ProtocolError,
        message: shared.redact(&format!("extension {} {message}", conn.plugin.id)),
    }
}

/// Applies a chain member's answer: what the walk does next, or the violation.
fn chain_step(
    shared: &Shared,
    member: &Connection,
    point: HookPoint,
    host_verdict: Option<Verdict>,
    outcome: &mut Outcome,
    result: InterceptResult,
) -> Result<Step, CallError> {
    if !point.allows(result.decision, Caller::Chain) {
        return Err(violation(
            member,
            shared,
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
            outcome.blocked = Some(Blocked {
                plugin: member.plugin.id.clone(),
                reason: shared.redact(&result.reason),
            });
            Ok(Step::Stop)
        }
        DecisionKind::Replace => {
            let replacement = result.replacement.unwrap_or_default();
            let payload = point
                .validate_replacement(&replacement, &outcome.payload, Caller::Chain)
                .map_err(|err| {
                    violation(
                        member,
                        shared,
                        format!("sent an invalid replacement at {}: {err}", point.as_str()),
                    )
                })?;
            outcome.payload = payload;
            outcome.applied.push(member.plugin.id.clone());
            Ok(Step::Replaced)
        }
        DecisionKind::Allow | DecisionKind::Deny => {
            let verdict = if result.decision == DecisionKind::Allow {
                Verdict::Allow
            } else {
                Verdict::Deny
            };
            if host_verdict == Some(Verdict::Deny) && verdict == Verdict::Allow {
                // The verdict changes only once the record is durable (the walk writes it).
                let record =
                    AuditRecord::new(&member.plugin.id, "allow", shared.redact(&result.reason));
                return Ok(Step::Override(record));
            }
            outcome.permission = Some(verdict);
            Ok(Step::Stop)
        }
    }
}

/// Applies the slot owner's answer to a strategy call. `Ok(Some(_))` is a replacement turning
/// the host's `deny` into `allow`, which the walk applies only once its record is durable.
fn strategy_step(
    shared: &Shared,
    owner: &Connection,
    point: HookPoint,
    host_verdict: Option<Verdict>,
    outcome: &mut Outcome,
    result: InterceptResult,
) -> Result<Option<Override>, StrategyFailure> {
    let slot = point.slot().map_or("", |s| s.as_str());
    match result.decision {
        DecisionKind::Continue => Ok(None),
        DecisionKind::Replace => {
            let replacement = result.replacement.unwrap_or_default();
            let payload = point
                .validate_replacement(&replacement, &outcome.payload, Caller::SlotOwner)
                .map_err(|err| {
                    StrategyFailure::Failed(violation(
                        owner,
                        shared,
                        format!(
                            "sent an invalid replacement as the {slot} strategy at {}: {err}",
                            point.as_str()
                        ),
                    ))
                })?;
            if let HookPayload::Permission(p) = &payload {
                if host_verdict == Some(Verdict::Deny) && p.host_decision == Verdict::Allow {
                    let record = AuditRecord::new(
                        &owner.plugin.id,
                        "replace",
                        shared.redact(&result.reason),
                    );
                    return Ok(Some(Override { payload, record }));
                }
                outcome.permission = Some(p.host_decision);
            }
            outcome.payload = payload;
            outcome.applied.push(owner.plugin.id.clone());
            Ok(None)
        }
        DecisionKind::Block => Err(StrategyFailure::Blocked(shared.redact(&format!(
            "extension {} refused {} as the {slot} strategy: {}",
            owner.plugin.id,
            point.as_str(),
            result.reason
        )))),
        other => Err(StrategyFailure::Failed(violation(
            owner,
            shared,
            format!(
                "answered {:?} as the {slot} strategy at {}, where only continue or replace \
                     is allowed",
                other.as_str(),
                point.as_str()
            ),
        ))),
    }
}

/// Writes the audit record of a denial turned into an allowance (§11) within `deadline` (what
/// is left of the point's budget) and reports it; the error is the message for the trace and
/// the warning.
async fn audit(
    shared: &Shared,
    record: AuditRecord,
    deadline: Duration,
) -> Result<AuditRecord, String> {
    match shared.audit.append(&record, deadline).await {
        Ok(()) => {
            shared.notify(HostEvent::Audited(record.clone()));
            Ok(record)
        }
        Err(failure) => Err(shared.redact(&format!(
            "extension {} turned the host's deny into allow, but {}, so the override was not applied",
            record.plugin,
            failure.chain()
        ))),
    }
}
