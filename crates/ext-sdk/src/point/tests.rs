use sidewire_ext_protocol::{PayloadKind, Verdict};

use super::*;

#[test]
fn typed_points_carry_their_dto() {
    assert_eq!(INPUT_RECEIVE.hook_point(), HookPoint::InputReceive);
    assert_eq!(
        PERMISSION_DECISION.hook_point().payload_kind(),
        PayloadKind::Permission
    );
    let every = [
        SESSION_START.hook_point(),
        SESSION_END.hook_point(),
        SESSION_LOAD.hook_point(),
        SESSION_SAVE.hook_point(),
        SESSION_ROTATE.hook_point(),
        INPUT_RECEIVE.hook_point(),
        AGENT_BEFORE_START.hook_point(),
        SYSTEM_PROMPT_BUILD.hook_point(),
        CONTEXT_PREPARE.hook_point(),
        PROVIDER_REQUEST.hook_point(),
        PROVIDER_RESPONSE.hook_point(),
        TOOL_BEFORE.hook_point(),
        TOOL_AFTER.hook_point(),
        PERMISSION_DECISION.hook_point(),
        COMPACTION_PREPARE.hook_point(),
        COMPACTION_COMPLETE.hook_point(),
        FRONTEND_EVENT.hook_point(),
    ];
    assert_eq!(every.as_slice(), HookPoint::ALL);
}

#[test]
fn payloads_convert_both_ways() {
    let input = InputPayload {
        text: "hi".to_owned(),
    };
    let hook = input.clone().into_hook();
    assert_eq!(hook.kind(), PayloadKind::Input);
    assert_eq!(InputPayload::from_hook(hook.clone()), Some(input));
    assert_eq!(ToolBeforePayload::from_hook(hook.clone()), None);
    assert_eq!(HookPayload::from_hook(hook.clone()), Some(hook));
    let permission = PermissionPayload {
        name: "bash".to_owned(),
        arguments: String::new(),
        read_only: None,
        host_decision: Verdict::Deny,
    };
    assert_eq!(
        PermissionPayload::from_hook(permission.clone().into_hook()),
        Some(permission)
    );
}

#[test]
fn decisions_map_their_payload_only() {
    let replaced = Decision::Replace(1).map(|n| n + 1);
    assert_eq!(replaced, Decision::Replace(2));
    assert_eq!(
        Decision::<u8>::block("no").map(u16::from),
        Decision::Block("no".to_owned())
    );
    assert_eq!(Decision::<u8>::allow(), Decision::Allow(String::new()));
    assert_eq!(
        Decision::<u8>::deny("x").map(u16::from),
        Decision::Deny("x".to_owned())
    );
    assert_eq!(
        Point::any(HookPoint::ToolAfter).hook_point(),
        HookPoint::ToolAfter
    );
}
