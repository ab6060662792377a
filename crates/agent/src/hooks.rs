//! [`HooksMember`]: the command hooks users keep (Claude Code's, and the other dialects
//! `sidewire-hooks` reads), as one member of the extension host's chain.
//!
//! The hooks crate answers a hook point as Claude Code answers the event; this adapter puts that
//! answer through the chain's seam ([`ChainMember`]), so every rule of the chain holds for it as
//! for a sidecar: an `allow` over the host's `deny` is audited (and not applied when the record
//! cannot be written), a rewrite is re-validated, a failed hook counts as `continue` with a
//! warning unless it is marked required, and each hook run is a line of the trace.

use std::sync::Arc;

use sidewire_ext_host::protocol::{HookPayload, HookPoint, MAX_PRIORITY, Reason};
use sidewire_ext_host::{ChainMember, MemberAnswer, MemberFailure, MemberFuture};
use sidewire_hooks::HookRunner;

/// Command hooks as a member of the chain: register it with
/// [`HostConfig::member`](sidewire_ext_host::HostConfig::member).
#[derive(Debug, Clone)]
pub struct HooksMember {
    runner: Arc<HookRunner>,
}

impl HooksMember {
    /// Its id in the trace, warnings and the audit log (no plugin id can be it: plugin ids are
    /// `[a-z0-9-]`).
    pub const ID: &'static str = "@hooks";

    /// Its place in the chain: after every sidecar, so that the hooks see the call (or the
    /// prompt, or the result) as it will really be, and a sidecar's `deny` at
    /// `permission.decision` is final before any hook's `allow`.
    pub const PRIORITY: i64 = MAX_PRIORITY + 1;

    /// The member running `runner`'s hooks.
    pub fn new(runner: HookRunner) -> Self {
        HooksMember {
            runner: Arc::new(runner),
        }
    }

    /// The hooks it runs.
    pub fn runner(&self) -> &HookRunner {
        &self.runner
    }
}

impl ChainMember for HooksMember {
    fn id(&self) -> &str {
        Self::ID
    }

    fn priority(&self) -> i64 {
        Self::PRIORITY
    }

    fn intercepts(&self, point: HookPoint) -> bool {
        self.runner.intercepts(point)
    }

    fn timeout_millis(&self, point: HookPoint) -> u64 {
        u64::try_from(self.runner.budget(point).as_millis()).unwrap_or(u64::MAX)
    }

    fn intercept<'a>(&'a self, point: HookPoint, payload: &'a HookPayload) -> MemberFuture<'a> {
        Box::pin(async move {
            let said = self.runner.intercept(point, payload).await;
            let notes = (said.note.iter().cloned())
                .chain(said.runs.iter().map(|run| run.trace_line()))
                .collect();
            if let Some(why) = &said.required_failed {
                return Err(
                    MemberFailure::required(Reason::Internal, why.clone()).with_notes(notes)
                );
            }
            let mut answer = MemberAnswer::new(said.result.clone());
            answer.notes = notes;
            answer.warnings = said.warnings().collect();
            Ok(answer)
        })
    }
}
