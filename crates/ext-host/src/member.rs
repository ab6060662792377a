//! [`ChainMember`]: a chain member that answers in the host's own process instead of over a
//! sidecar's pipe. It is the seam through which command hooks (`sidewire-hooks`, composed by
//! `sidewire-agent`), or a policy an application writes in Rust, take part in a walk beside the
//! sidecars, under the same rules: its place in the (priority, id) order (§7.6), the decisions
//! legal at each point (§7.5), replacement re-validation (§7.8), its budget (§7.9), the failure
//! policy (§7.10) and the audit of an overridden denial, failing closed when the record cannot
//! be written (§11).
//!
//! Such a member is called at intercepts only: the fire-and-forget events of §8 go to sidecars.
//! It is never a slot owner.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use sidewire_ext_protocol::{HookPayload, HookPoint, InterceptResult, Reason};

/// What [`ChainMember::intercept`] returns: a boxed future, so that members of different types
/// can share one chain.
pub type MemberFuture<'a> =
    Pin<Box<dyn Future<Output = Result<MemberAnswer, MemberFailure>> + Send + 'a>>;

/// A chain member that is not a sidecar. Register it with [`HostConfig::member`]; every
/// generation's chains take it at the points it [intercepts](Self::intercepts).
///
/// [`HostConfig::member`]: crate::HostConfig::member
pub trait ChainMember: Send + Sync {
    /// Its id in the trace, warnings and audit records. Plugin ids are `[a-z0-9-]` (§12.1), so
    /// an id with another character (`hooks:claude`) can never be taken for a plugin's.
    fn id(&self) -> &str;

    /// Its place in the chain, as a manifest's `runtime.priority` (lower first; ties by id).
    fn priority(&self) -> i64;

    /// Whether it is a member of the chain of `point`. Asked once per point when a generation
    /// is built.
    fn intercepts(&self, point: HookPoint) -> bool;

    /// Whether every failure of it fails the operation (§7.10). A failure may also say so on
    /// its own ([`MemberFailure::required`]).
    fn required(&self) -> bool {
        false
    }

    /// Its budget at `point`, in milliseconds: the walk abandons the call when it runs out
    /// (an `intercept_timeout` failure), and an override it makes must be audited within what
    /// is left of it. The point's default (§7.9) unless overridden.
    fn timeout_millis(&self, point: HookPoint) -> u64 {
        point.timeout_millis(0)
    }

    /// One intercept at `point` with the current `payload`. The answer is checked like a
    /// sidecar's: a decision illegal at the point, or a replacement that does not re-validate,
    /// is a violation.
    ///
    /// # Cancel safety
    ///
    /// The future is dropped when the walk is abandoned or the budget runs out; whatever it
    /// started must end with it.
    fn intercept<'a>(&'a self, point: HookPoint, payload: &'a HookPayload) -> MemberFuture<'a>;
}

/// A member's answer: the decision, and what it says of its own steps for the trace.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct MemberAnswer {
    /// The decision, as a sidecar would send it.
    pub result: InterceptResult,
    /// Lines for the trace entry (each hook run: its source, command and what it said).
    pub notes: Vec<String>,
    /// Warnings to show (redacted) every time: a step that failed but did not fail the member.
    pub warnings: Vec<String>,
}

impl MemberAnswer {
    /// The answer `result`, with no notes.
    pub fn new(result: InterceptResult) -> Self {
        MemberAnswer {
            result,
            notes: Vec::new(),
            warnings: Vec::new(),
        }
    }
}

/// Why a member's call failed.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct MemberFailure {
    /// The reason.
    pub reason: Reason,
    /// What happened (redacted before it is shown).
    pub message: String,
    /// Lines for the trace entry, as in [`MemberAnswer::notes`].
    pub notes: Vec<String>,
    fails_operation: bool,
}

impl MemberFailure {
    /// A failure that counts as `continue` unless the member is [required](ChainMember::required).
    pub fn optional(reason: Reason, message: impl Into<String>) -> Self {
        MemberFailure {
            reason,
            message: message.into(),
            notes: Vec::new(),
            fails_operation: false,
        }
    }

    /// A failure that fails the operation whether or not the member is required (a step the
    /// configuration marks required).
    pub fn required(reason: Reason, message: impl Into<String>) -> Self {
        MemberFailure {
            fails_operation: true,
            ..MemberFailure::optional(reason, message)
        }
    }

    /// With these trace lines.
    pub fn with_notes(mut self, notes: Vec<String>) -> Self {
        self.notes = notes;
        self
    }

    /// Whether it fails the operation on its own.
    pub fn fails_operation(&self) -> bool {
        self.fails_operation
    }
}

/// The in-process members of a [`HostConfig`](crate::HostConfig), shown by id.
#[derive(Clone, Default)]
pub(crate) struct Members(pub(crate) Vec<Arc<dyn ChainMember>>);

// A configuration is plain data until a host boots with it: a panic in a member's call cannot
// leave it half changed, so it stays unwind safe, as it was before it held members.
impl std::panic::UnwindSafe for Members {}
impl std::panic::RefUnwindSafe for Members {}

impl fmt::Debug for Members {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.0.iter().map(|member| member.id()))
            .finish()
    }
}
