//! The walk's decision rules, one test each, over fake members and a fake host: no process, no
//! file.

use std::collections::HashSet;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use sidewire_ext_protocol::{
    DecisionKind, HookPayload, HookPoint, InputPayload, InterceptResult, PermissionPayload, Reason,
    Verdict,
};

use super::{Answered, Failed, Host, Member, Outcome, Sent, TraceResult, TraceRole, walk_members};
use crate::Error;
use crate::audit::AuditRecord;
use crate::conn::CallError;
use crate::error::OperationFailure;
use crate::util::lock;

/// A member answering from its script, recording what each call was sent.
struct Fake {
    id: &'static str,
    required: bool,
    /// Its manifest's `timeoutMillis` (0: the point's default).
    manifest_timeout: u64,
    answer: Result<InterceptResult, CallError>,
    /// How long it takes to answer (the time a slow sidecar would take, not a wait for
    /// anything).
    takes: Duration,
    /// The payload text and the deadline of each call.
    calls: Mutex<Vec<(String, u64)>>,
}

impl Fake {
    fn answering(id: &'static str, answer: InterceptResult) -> Self {
        Fake {
            id,
            required: false,
            manifest_timeout: 0,
            answer: Ok(answer),
            takes: Duration::ZERO,
            calls: Mutex::default(),
        }
    }

    /// A member whose calls fail with `reason`.
    fn failing(id: &'static str, reason: Reason) -> Self {
        Fake {
            answer: Err(CallError {
                reason,
                message: format!("extension {id} failed ({reason:?})"),
            }),
            ..Fake::answering(id, InterceptResult::continue_())
        }
    }

    fn required(mut self) -> Self {
        self.required = true;
        self
    }

    fn timeout(mut self, millis: u64) -> Self {
        self.manifest_timeout = millis;
        self
    }

    fn takes(mut self, duration: Duration) -> Self {
        self.takes = duration;
        self
    }

    fn calls(&self) -> Vec<(String, u64)> {
        lock(&self.calls).clone()
    }

    /// The payload texts it was sent.
    fn seen(&self) -> Vec<String> {
        self.calls().into_iter().map(|(text, _)| text).collect()
    }
}

impl Member for Fake {
    fn id(&self) -> &str {
        self.id
    }

    fn required(&self) -> bool {
        self.required
    }

    fn timeout_millis(&self, point: HookPoint) -> u64 {
        point.timeout_millis(self.manifest_timeout)
    }

    fn intercept(
        &self,
        _point: HookPoint,
        payload: Sent<'_>,
        timeout_millis: u64,
    ) -> impl Future<Output = Result<Answered, Failed>> + Send {
        lock(&self.calls).push((payload.text().get().to_owned(), timeout_millis));
        let (answer, takes) = (self.answer.clone(), self.takes);
        async move {
            if !takes.is_zero() {
                tokio::time::sleep(takes).await;
            }
            answer.map(Answered::from).map_err(Failed::from)
        }
    }
}

/// A host that redacts `sk-secret`, keeps its warnings, and writes audit records to a list, or
/// fails to.
#[derive(Default)]
struct FakeHost {
    /// Set: every audit write fails with this cause.
    audit_fails: Option<&'static str>,
    /// Each audit write asked for, with its deadline.
    audits: Mutex<Vec<(AuditRecord, Duration)>>,
    warnings: Mutex<Vec<(String, String)>>,
    warned: Mutex<HashSet<(String, &'static str)>>,
}

impl FakeHost {
    fn failing_audits() -> Self {
        FakeHost {
            audit_fails: Some("the disk is full"),
            ..FakeHost::default()
        }
    }

    fn audits(&self) -> Vec<(AuditRecord, Duration)> {
        lock(&self.audits).clone()
    }

    fn warnings(&self) -> Vec<(String, String)> {
        lock(&self.warnings).clone()
    }
}

impl Host for FakeHost {
    fn redact(&self, text: &str) -> String {
        text.replace("sk-secret", "[REDACTED]")
    }

    fn warn(&self, plugin: &str, message: &str) {
        let message = self.redact(message);
        lock(&self.warnings).push((plugin.to_owned(), message));
    }

    fn warn_once(&self, plugin: &str, kind: &'static str, message: &str) {
        if lock(&self.warned).insert((plugin.to_owned(), kind)) {
            self.warn(plugin, message);
        }
    }

    fn audit(
        &self,
        record: &AuditRecord,
        deadline: Duration,
    ) -> impl Future<Output = Result<(), String>> + Send {
        lock(&self.audits).push((record.clone(), deadline));
        std::future::ready(match self.audit_fails {
            Some(cause) => Err(cause.to_owned()),
            None => Ok(()),
        })
    }
}

fn input(text: &str) -> HookPayload {
    HookPayload::Input(InputPayload {
        text: text.to_owned(),
    })
}

fn permission(host_decision: Verdict) -> HookPayload {
    HookPayload::Permission(PermissionPayload {
        name: "bash".to_owned(),
        arguments: r#"{"cmd":"ls"}"#.to_owned(),
        read_only: Some(false),
        host_decision,
    })
}

fn decide(decision: DecisionKind, reason: &str) -> InterceptResult {
    InterceptResult {
        decision,
        reason: reason.to_owned(),
        replacement: None,
    }
}

fn replace(replacement: Value) -> InterceptResult {
    InterceptResult {
        decision: DecisionKind::Replace,
        reason: String::new(),
        replacement: Some(replacement),
    }
}

fn proceed() -> InterceptResult {
    InterceptResult::continue_()
}

/// Walks `chain`, then `owner`, over `host`.
async fn walk(
    host: &FakeHost,
    point: HookPoint,
    payload: HookPayload,
    chain: &[&Arc<Fake>],
    owner: Option<&Fake>,
) -> Result<Outcome, Error> {
    walk_members(chain.iter().map(|m| &***m), owner, host, point, payload).await
}

/// The operation's failure, or a panic naming what the walk returned instead.
fn failure(result: Result<Outcome, Error>) -> OperationFailure {
    match result {
        Err(Error::Operation(failure)) => *failure,
        other => panic!("expected the operation to fail, got {other:?}"),
    }
}

/// Each trace entry as (plugin, role, result).
fn trace(entries: &[super::TraceEntry]) -> Vec<(&str, TraceRole, TraceResult)> {
    (entries.iter())
        .map(|e| (e.plugin.as_str(), e.role, e.result.clone()))
        .collect()
}

fn decided(
    plugin: &str,
    role: TraceRole,
    decision: DecisionKind,
) -> (&str, TraceRole, TraceResult) {
    (plugin, role, TraceResult::Decided(decision))
}

fn failed(result: &TraceResult) -> Reason {
    match result {
        TraceResult::Failed { reason, .. } => *reason,
        other => panic!("expected a failure, got {other:?}"),
    }
}

#[tokio::test]
async fn each_member_sees_its_predecessors_payload() {
    let host = FakeHost::default();
    let a = Arc::new(Fake::answering("a", replace(json!({"text": "two"}))));
    let b = Arc::new(Fake::answering("b", proceed()));
    let outcome = walk(
        &host,
        HookPoint::InputReceive,
        input("one"),
        &[&a, &b],
        None,
    )
    .await
    .unwrap();
    assert_eq!(a.seen(), [r#"{"text":"one"}"#]);
    assert_eq!(b.seen(), [r#"{"text":"two"}"#]);
    assert_eq!(outcome.payload, input("two"));
    assert_eq!(outcome.applied, ["a"]);
    assert_eq!(
        trace(&outcome.trace),
        [
            decided("a", TraceRole::Chain, DecisionKind::Replace),
            decided("b", TraceRole::Chain, DecisionKind::Continue),
        ]
    );
    assert!(outcome.proceeds());
}

#[tokio::test]
async fn a_block_ends_the_walk_with_its_reason_redacted() {
    let host = FakeHost::default();
    let a = Arc::new(Fake::answering(
        "a",
        decide(DecisionKind::Block, "leaks sk-secret"),
    ));
    let b = Arc::new(Fake::answering("b", proceed()));
    let owner = Fake::answering("owner", proceed());
    let point = HookPoint::PermissionDecision;
    let outcome = walk(
        &host,
        point,
        permission(Verdict::Allow),
        &[&a, &b],
        Some(&owner),
    )
    .await
    .unwrap();
    let blocked = outcome.blocked.as_ref().expect("blocked");
    assert_eq!(
        (blocked.plugin.as_str(), blocked.reason.as_str()),
        ("a", "leaks [REDACTED]")
    );
    assert!(!outcome.proceeds());
    assert!(b.calls().is_empty() && owner.calls().is_empty());
    assert_eq!(outcome.trace.len(), 1);
}

#[tokio::test]
async fn a_members_verdict_over_a_host_allow_needs_no_record() {
    for (decision, verdict) in [
        (DecisionKind::Deny, Verdict::Deny),
        (DecisionKind::Allow, Verdict::Allow),
    ] {
        let host = FakeHost::default();
        let a = Arc::new(Fake::answering("a", decide(decision, "")));
        let b = Arc::new(Fake::answering("b", proceed()));
        let point = HookPoint::PermissionDecision;
        let outcome = walk(&host, point, permission(Verdict::Allow), &[&a, &b], None)
            .await
            .unwrap();
        assert_eq!(outcome.permission, Some(verdict));
        assert_eq!((outcome.audit, host.audits().len()), (None, 0));
        assert!(b.calls().is_empty(), "a verdict is final");
    }
}

#[tokio::test]
async fn an_allow_over_the_host_deny_is_applied_once_audited() {
    let host = FakeHost::default();
    let a = Arc::new(Fake::answering(
        "a",
        decide(DecisionKind::Allow, "trusted sk-secret"),
    ));
    let b = Arc::new(Fake::answering("b", proceed()));
    let point = HookPoint::PermissionDecision;
    let outcome = walk(&host, point, permission(Verdict::Deny), &[&a, &b], None)
        .await
        .unwrap();
    assert_eq!(outcome.permission, Some(Verdict::Allow));
    assert!(outcome.proceeds());
    let record = outcome.audit.expect("the record");
    assert_eq!(
        (record.plugin.as_str(), record.extension_decision.as_str()),
        ("a", "allow")
    );
    assert_eq!(record.reason, "trusted [REDACTED]");
    let audits = host.audits();
    assert_eq!(audits.len(), 1);
    assert_eq!(audits[0].0, record);
    assert!(b.calls().is_empty(), "an applied override is final");
}

#[tokio::test]
async fn an_optional_members_unaudited_allow_is_not_applied_and_the_walk_goes_on() {
    let host = FakeHost::failing_audits();
    let a = Arc::new(Fake::answering("a", decide(DecisionKind::Allow, "")));
    let b = Arc::new(Fake::answering("b", proceed()));
    let point = HookPoint::PermissionDecision;
    for _ in 0..2 {
        let outcome = walk(&host, point, permission(Verdict::Deny), &[&a, &b], None)
            .await
            .unwrap();
        // Fails closed: the host's deny stands.
        assert_eq!(outcome.permission, Some(Verdict::Deny));
        assert!(outcome.audit.is_none() && !outcome.proceeds());
        match &outcome.trace[0].result {
            TraceResult::Unaudited { decision, message } => {
                assert_eq!(*decision, DecisionKind::Allow);
                assert!(message.contains("the disk is full"), "{message}");
            }
            other => panic!("expected an unaudited entry, got {other:?}"),
        }
    }
    assert_eq!(b.calls().len(), 2, "the chain went on each time");
    // A failure that changes a security decision is reported every time.
    let warnings = host.warnings();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(warnings.iter().all(|(plugin, _)| plugin == "a"));
}

#[tokio::test]
async fn a_required_members_unaudited_allow_fails_the_operation() {
    let host = FakeHost::failing_audits();
    let a = Arc::new(Fake::answering("a", decide(DecisionKind::Allow, "")).required());
    let b = Arc::new(Fake::answering("b", proceed()));
    let point = HookPoint::PermissionDecision;
    let failure = failure(walk(&host, point, permission(Verdict::Deny), &[&a, &b], None).await);
    assert_eq!(
        (failure.plugin.as_str(), failure.reason),
        ("a", Some(Reason::Internal))
    );
    assert!(
        failure.message.contains("the override was not applied"),
        "{}",
        failure.message
    );
    assert!(matches!(
        failure.trace[0].result,
        TraceResult::Unaudited { .. }
    ));
    assert!(b.calls().is_empty());
    assert_eq!(host.warnings().len(), 1);
}

#[tokio::test]
async fn an_optional_members_failure_is_skipped_and_warned_about_once() {
    let host = FakeHost::default();
    let a = Arc::new(Fake::failing("a", Reason::InterceptTimeout));
    let b = Arc::new(Fake::answering("b", proceed()));
    for _ in 0..2 {
        let outcome = walk(&host, HookPoint::InputReceive, input("hi"), &[&a, &b], None)
            .await
            .unwrap();
        assert_eq!(outcome.payload, input("hi"));
        assert_eq!(failed(&outcome.trace[0].result), Reason::InterceptTimeout);
        assert_eq!(
            outcome.trace[1].result,
            TraceResult::Decided(DecisionKind::Continue)
        );
    }
    assert_eq!(b.seen(), [r#"{"text":"hi"}"#, r#"{"text":"hi"}"#]);
    let warnings = host.warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].1.contains("optional extension skipped"),
        "{warnings:?}"
    );
}

#[tokio::test]
async fn a_required_members_failure_fails_the_operation() {
    let host = FakeHost::default();
    let a = Arc::new(Fake::answering("a", proceed()));
    let b = Arc::new(Fake::failing("b", Reason::ProviderInterrupted).required());
    let c = Arc::new(Fake::answering("c", proceed()));
    let owner = Fake::answering("owner", proceed());
    let point = HookPoint::PermissionDecision;
    let failure = failure(
        walk(
            &host,
            point,
            permission(Verdict::Allow),
            &[&a, &b, &c],
            Some(&owner),
        )
        .await,
    );
    assert_eq!(
        (failure.plugin.as_str(), failure.point, failure.reason),
        ("b", point, Some(Reason::ProviderInterrupted))
    );
    assert_eq!(failure.trace.len(), 2, "the trace so far");
    assert!(c.calls().is_empty() && owner.calls().is_empty());
    assert!(host.warnings().is_empty());
}

#[tokio::test]
async fn an_invalid_replacement_is_a_violation_and_changes_nothing() {
    let host = FakeHost::default();
    // A blank text breaks `input.receive`'s rule (§7.2).
    let a = Arc::new(Fake::answering("a", replace(json!({"text": " "}))));
    let b = Arc::new(Fake::answering("b", proceed()));
    let outcome = walk(&host, HookPoint::InputReceive, input("hi"), &[&a, &b], None)
        .await
        .unwrap();
    assert_eq!(failed(&outcome.trace[0].result), Reason::ProtocolError);
    assert_eq!(outcome.payload, input("hi"));
    assert!(outcome.applied.is_empty());
    assert_eq!(b.seen(), [r#"{"text":"hi"}"#]);

    // A chain member may not change the host's decision by replacing the payload.
    let mut changed = serde_json::to_value(permission(Verdict::Allow)).unwrap();
    changed["arguments"] = json!("{}");
    let a = Arc::new(Fake::answering("a", replace(changed)).required());
    let point = HookPoint::PermissionDecision;
    let failure = failure(walk(&host, point, permission(Verdict::Deny), &[&a], None).await);
    assert_eq!(failure.reason, Some(Reason::ProtocolError));
    assert!(
        failure.message.contains("hostDecision"),
        "{}",
        failure.message
    );
}

#[tokio::test]
async fn a_decision_not_allowed_at_the_point_is_a_violation() {
    let host = FakeHost::default();
    let a = Arc::new(Fake::answering("a", decide(DecisionKind::Allow, "")).required());
    let failure = failure(walk(&host, HookPoint::InputReceive, input("hi"), &[&a], None).await);
    assert_eq!(failure.reason, Some(Reason::ProtocolError));
    assert!(
        failure.message.contains("where it is not allowed"),
        "{}",
        failure.message
    );
}

#[tokio::test]
async fn the_slot_owner_answers_last_with_what_the_chain_left() {
    let host = FakeHost::default();
    let a = Arc::new(Fake::answering("a", proceed()));
    let replaced = json!({"name": "bash", "arguments": "{}", "hostDecision": "deny"});
    let owner = Fake::answering("owner", replace(replaced));
    let point = HookPoint::PermissionDecision;
    let outcome = walk(
        &host,
        point,
        permission(Verdict::Allow),
        &[&a],
        Some(&owner),
    )
    .await
    .unwrap();
    assert_eq!(owner.seen(), a.seen(), "the same text, written once");
    // The owner's `hostDecision` is the verdict.
    assert_eq!(outcome.permission, Some(Verdict::Deny));
    assert_eq!(outcome.applied, ["owner"]);
    assert_eq!(
        trace(&outcome.trace),
        [
            decided("a", TraceRole::Chain, DecisionKind::Continue),
            decided("owner", TraceRole::SlotOwner, DecisionKind::Replace),
        ]
    );
    assert!(host.audits().is_empty());
}

#[tokio::test]
async fn the_slot_owners_override_is_applied_once_audited() {
    let host = FakeHost::default();
    let replaced = json!({"name": "bash", "arguments": "{}", "hostDecision": "allow"});
    let owner = Fake::answering("owner", replace(replaced));
    let point = HookPoint::PermissionDecision;
    let outcome = walk(&host, point, permission(Verdict::Deny), &[], Some(&owner))
        .await
        .unwrap();
    assert_eq!(outcome.permission, Some(Verdict::Allow));
    assert_eq!(outcome.applied, ["owner"]);
    let record = outcome.audit.expect("the record");
    assert_eq!(
        (record.plugin.as_str(), record.extension_decision.as_str()),
        ("owner", "replace")
    );
    assert_eq!(host.audits().len(), 1);
}

#[tokio::test]
async fn the_slot_owners_unaudited_override_fails_the_operation() {
    let host = FakeHost::failing_audits();
    let replaced = json!({"name": "bash", "arguments": "{}", "hostDecision": "allow"});
    // Not required, and still: strategy calls always are (§7.7).
    let owner = Fake::answering("owner", replace(replaced));
    let point = HookPoint::PermissionDecision;
    let failure = failure(walk(&host, point, permission(Verdict::Deny), &[], Some(&owner)).await);
    assert_eq!(
        (failure.plugin.as_str(), failure.reason),
        ("owner", Some(Reason::Internal))
    );
    assert!(matches!(
        failure.trace[0].result,
        TraceResult::Unaudited { .. }
    ));
    assert_eq!(host.warnings().len(), 1);
}

#[tokio::test]
async fn the_slot_owner_fails_the_operation_whether_required_or_not() {
    let point = HookPoint::PermissionDecision;
    let cases = [
        // A refusal has no wire reason.
        (
            Fake::answering("owner", decide(DecisionKind::Block, "no")),
            None,
        ),
        // It may only continue or replace.
        (
            Fake::answering("owner", decide(DecisionKind::Allow, "")),
            Some(Reason::ProtocolError),
        ),
        (
            Fake::failing("owner", Reason::InterceptTimeout),
            Some(Reason::InterceptTimeout),
        ),
    ];
    for (owner, reason) in cases {
        let host = FakeHost::default();
        let failure =
            failure(walk(&host, point, permission(Verdict::Allow), &[], Some(&owner)).await);
        assert_eq!((failure.plugin.as_str(), failure.reason), ("owner", reason));
        assert_eq!(failure.trace.len(), 1);
        assert_eq!(failure.trace[0].role, TraceRole::SlotOwner);
    }
}

#[tokio::test]
async fn each_call_has_its_budget_and_an_override_only_what_is_left() {
    let host = FakeHost::default();
    let point = HookPoint::PermissionDecision;
    let a = Arc::new(Fake::answering("a", proceed()));
    let b = Arc::new(Fake::answering("b", decide(DecisionKind::Allow, "")).timeout(2_000));
    let started = std::time::Instant::now();
    walk(&host, point, permission(Verdict::Deny), &[&a, &b], None)
        .await
        .unwrap();
    let walked = started.elapsed();
    assert_eq!(
        a.calls()[0].1,
        point.timeout_millis(0),
        "the point's default"
    );
    assert_eq!(b.calls()[0].1, 2_000, "the manifest's");
    // The record gets what is left of b's budget once it answered.
    let left = host.audits()[0].1;
    let budget = Duration::from_millis(2_000);
    assert!(
        left <= budget && left >= budget.saturating_sub(walked),
        "{left:?}"
    );

    // A member that answered after its whole budget leaves none for the record.
    let host = FakeHost::default();
    let c = Arc::new(
        Fake::answering("c", decide(DecisionKind::Allow, ""))
            .timeout(1)
            .takes(Duration::from_millis(5)),
    );
    walk(&host, point, permission(Verdict::Deny), &[&c], None)
        .await
        .unwrap();
    assert_eq!(host.audits()[0].1, Duration::ZERO);
}

/// An in-process member answering from its script, its notes and warnings included.
struct Local {
    answer: Result<crate::MemberAnswer, crate::MemberFailure>,
    /// Never answers: its budget runs out.
    hangs: bool,
}

impl Local {
    fn answering(result: InterceptResult) -> Self {
        let mut answer = crate::MemberAnswer::new(result);
        answer.notes = vec!["hook `./guard.sh` said sk-secret".to_owned()];
        answer.warnings = vec!["hook `./log.sh` exited 1".to_owned()];
        Local {
            answer: Ok(answer),
            hangs: false,
        }
    }

    fn failing(failure: crate::MemberFailure) -> Self {
        Local {
            answer: Err(failure),
            hangs: false,
        }
    }

    fn entry(self) -> crate::generation::Entry {
        crate::generation::Entry::Local(Arc::new(self))
    }
}

impl crate::ChainMember for Local {
    fn id(&self) -> &str {
        "hooks:test"
    }

    fn priority(&self) -> i64 {
        0
    }

    fn intercepts(&self, _point: HookPoint) -> bool {
        true
    }

    fn timeout_millis(&self, _point: HookPoint) -> u64 {
        50
    }

    fn intercept<'a>(
        &'a self,
        _point: HookPoint,
        _payload: &'a HookPayload,
    ) -> crate::MemberFuture<'a> {
        let answer = self.answer.clone();
        let hangs = self.hangs;
        Box::pin(async move {
            if hangs {
                std::future::pending::<()>().await;
            }
            answer
        })
    }
}

/// Walks in-process `chain` over `host`.
async fn walk_local(
    host: &FakeHost,
    point: HookPoint,
    payload: HookPayload,
    chain: &[crate::generation::Entry],
) -> Result<Outcome, Error> {
    walk_members(chain.iter(), None::<&Fake>, host, point, payload).await
}

#[tokio::test]
async fn an_in_process_members_allow_over_a_host_deny_is_audited_with_its_notes() {
    let host = FakeHost::default();
    let chain = [Local::answering(decide(DecisionKind::Allow, "hook said ok")).entry()];
    let point = HookPoint::PermissionDecision;
    let outcome = walk_local(&host, point, permission(Verdict::Deny), &chain)
        .await
        .unwrap();
    assert_eq!(outcome.permission, Some(Verdict::Allow));
    let record = outcome.audit.as_ref().expect("the override is audited");
    assert_eq!(record.plugin, "hooks:test");
    assert_eq!(host.audits().len(), 1);
    let entry = &outcome.trace[0];
    assert_eq!(entry.result, TraceResult::Decided(DecisionKind::Allow));
    assert_eq!(entry.notes, ["hook `./guard.sh` said [REDACTED]"]);
    assert_eq!(
        host.warnings().len(),
        1,
        "the step that failed is warned about"
    );
}

#[tokio::test]
async fn an_in_process_members_unaudited_allow_fails_closed() {
    let host = FakeHost::failing_audits();
    let chain = [Local::answering(decide(DecisionKind::Allow, "")).entry()];
    let outcome = walk_local(
        &host,
        HookPoint::PermissionDecision,
        permission(Verdict::Deny),
        &chain,
    )
    .await
    .unwrap();
    assert_eq!(outcome.permission, Some(Verdict::Deny));
    assert!(!outcome.proceeds());
    assert!(matches!(
        outcome.trace[0].result,
        TraceResult::Unaudited { .. }
    ));
}

#[tokio::test]
async fn an_in_process_members_answer_is_checked_like_a_sidecars() {
    let host = FakeHost::default();
    // `allow` outside permission.decision, and a replacement that does not re-validate.
    for result in [
        decide(DecisionKind::Allow, ""),
        replace(json!({"text": ""})),
    ] {
        let chain = [Local::answering(result).entry()];
        let outcome = walk_local(&host, HookPoint::InputReceive, input("hi"), &chain)
            .await
            .unwrap();
        assert_eq!(outcome.payload, input("hi"));
        assert_eq!(failed(&outcome.trace[0].result), Reason::ProtocolError);
    }
}

#[tokio::test]
async fn an_in_process_members_failure_follows_the_failure_policy_and_its_budget() {
    let host = FakeHost::default();
    let optional = [Local::failing(crate::MemberFailure::optional(
        Reason::Internal,
        "a hook exited 1",
    ))
    .entry()];
    let outcome = walk_local(&host, HookPoint::InputReceive, input("hi"), &optional)
        .await
        .unwrap();
    assert_eq!(failed(&outcome.trace[0].result), Reason::Internal);
    assert!(outcome.proceeds());

    let required = [Local::failing(crate::MemberFailure::required(
        Reason::Internal,
        "a required hook exited 1",
    ))
    .entry()];
    let failure = failure(walk_local(&host, HookPoint::InputReceive, input("hi"), &required).await);
    assert_eq!(
        (failure.plugin.as_str(), failure.reason),
        ("hooks:test", Some(Reason::Internal))
    );

    let hanging = Local {
        hangs: true,
        ..Local::answering(proceed())
    };
    let outcome = walk_local(
        &host,
        HookPoint::InputReceive,
        input("hi"),
        &[hanging.entry()],
    )
    .await
    .unwrap();
    assert_eq!(failed(&outcome.trace[0].result), Reason::InterceptTimeout);
}
