//! [`HookEvent`]: the events of Claude Code's hooks, and where each runs in sidewire's chain.

use sidewire_ext_protocol::HookPoint;

/// An event of Claude Code's hooks, by the name its settings use (`PreToolUse`, ...). The
/// Reasonix host's `.reasonix/settings.json` uses the same names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum HookEvent {
    /// Before a tool runs: may block it, decide its permission, or rewrite its input.
    PreToolUse,
    /// After a tool ran: may block (its output goes back with the reason) or add context.
    PostToolUse,
    /// When a permission would be asked: may allow or deny.
    PermissionRequest,
    /// When the user submits a prompt: may block it or add context.
    UserPromptSubmit,
    /// When Claude Code shows a notification (a permission prompt, an idle prompt).
    Notification,
    /// When the main agent finishes its answer: may ask it to go on.
    Stop,
    /// When a subagent finishes.
    SubagentStop,
    /// Before the conversation is compacted.
    PreCompact,
    /// When a session starts or resumes.
    SessionStart,
    /// When a session ends.
    SessionEnd,
}

impl HookEvent {
    /// Every event, in the order the docs table lists them.
    pub const ALL: [HookEvent; 10] = [
        HookEvent::PreToolUse,
        HookEvent::PostToolUse,
        HookEvent::PermissionRequest,
        HookEvent::UserPromptSubmit,
        HookEvent::Notification,
        HookEvent::Stop,
        HookEvent::SubagentStop,
        HookEvent::PreCompact,
        HookEvent::SessionStart,
        HookEvent::SessionEnd,
    ];

    /// The name the settings use (and `hook_event_name` in the hook's input).
    pub fn name(self) -> &'static str {
        match self {
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::PermissionRequest => "PermissionRequest",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
            HookEvent::Notification => "Notification",
            HookEvent::Stop => "Stop",
            HookEvent::SubagentStop => "SubagentStop",
            HookEvent::PreCompact => "PreCompact",
            HookEvent::SessionStart => "SessionStart",
            HookEvent::SessionEnd => "SessionEnd",
        }
    }

    /// The event a settings name means (exactly, as Claude Code reads it).
    pub fn from_name(name: &str) -> Option<HookEvent> {
        HookEvent::ALL
            .into_iter()
            .find(|event| event.name() == name)
    }

    /// Whether its `matcher` is matched against a tool name (the tool events); another
    /// event's hooks run whatever their matcher says.
    pub fn matches_tools(self) -> bool {
        matches!(
            self,
            HookEvent::PreToolUse | HookEvent::PostToolUse | HookEvent::PermissionRequest
        )
    }

    /// The points of sidewire's chain the event's hooks run at (the docs' table): none for an
    /// event sidewire has no point for ([`HookEvent::unmapped_reason`] says why).
    pub fn hook_points(self) -> &'static [HookPoint] {
        match self {
            HookEvent::PreToolUse => &[HookPoint::ToolBefore, HookPoint::PermissionDecision],
            HookEvent::PostToolUse => &[HookPoint::ToolAfter],
            HookEvent::PermissionRequest => &[HookPoint::PermissionDecision],
            HookEvent::UserPromptSubmit => &[HookPoint::InputReceive],
            HookEvent::PreCompact => &[HookPoint::CompactionPrepare],
            HookEvent::SessionStart => &[HookPoint::SessionStart],
            HookEvent::SessionEnd => &[HookPoint::SessionEnd],
            HookEvent::Notification | HookEvent::Stop | HookEvent::SubagentStop => &[],
        }
    }

    /// Why an event with no hook point does not run here; `None` for the others.
    pub fn unmapped_reason(self) -> Option<&'static str> {
        match self {
            HookEvent::Notification => Some(
                "sidewire shows its own prompts and has no notifications of Claude Code's kind",
            ),
            HookEvent::Stop => Some(
                "Extension Protocol v1 has no point after the final answer where a verdict could ask the model to go on",
            ),
            HookEvent::SubagentStop => Some("sidewire runs no subagents"),
            _ => None,
        }
    }
}

impl std::fmt::Display for HookEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_event_has_a_point_or_a_reason_and_its_name_reads_back() {
        for event in HookEvent::ALL {
            assert_eq!(HookEvent::from_name(event.name()), Some(event));
            assert_ne!(
                event.hook_points().is_empty(),
                event.unmapped_reason().is_none(),
                "{event}"
            );
        }
        assert_eq!(HookEvent::from_name("pretooluse"), None, "names are exact");
    }
}
