use sidewire_ext_protocol::{InputPayload, PermissionPayload};

use super::*;
use crate::point;

fn manifest(
    intercepts: &[HookPoint],
    replaces: &[Slot],
    capabilities: &[Capability],
) -> ManifestExpectation {
    ManifestExpectation {
        intercepts: intercepts.to_vec(),
        replaces: replaces.to_vec(),
        capabilities: capabilities.to_vec(),
        ..ManifestExpectation::default()
    }
}

fn sample() -> Extension {
    Extension::new("x", "1")
        .on_intercept(point::INPUT_RECEIVE, |_, _: InputPayload| async {
            Ok(Decision::Continue)
        })
        .on_event(point::FRONTEND_EVENT, |_, _| async { Ok(()) })
        .on_intercept(point::TOOL_BEFORE, |_, _| async { Ok(Decision::Continue) })
        .on_intercept(
            point::PERMISSION_DECISION,
            |_, _: PermissionPayload| async { Ok(Decision::Continue) },
        )
        .replaces(Slot::Permission)
        .replaces(Slot::Context)
        .on_action("refresh", "Refresh", |_, _| async {
            Ok(UiActionResult {
                accepted: true,
                message: String::new(),
            })
        })
}

#[test]
fn the_handshake_is_the_intersection_with_the_manifest() {
    let plan = sample().plan(&manifest(
        &[
            HookPoint::InputReceive,
            HookPoint::FrontendEvent,
            HookPoint::SessionEnd,
        ],
        &[Slot::Permission],
        &[
            Capability::Interceptors,
            Capability::Strategies,
            Capability::Ui,
        ],
    ));
    assert_eq!(
        plan.subscriptions,
        [HookPoint::InputReceive, HookPoint::FrontendEvent]
    );
    assert_eq!(plan.replaces, [Slot::Permission]);
    assert_eq!(plan.ui_actions.len(), 1);
    assert!(plan.ui);
    // permission.decision is live as the permission slot's strategy, without a subscription.
    assert!(plan.active.contains(&HookPoint::PermissionDecision));
    assert!(plan.strategy.contains(&HookPoint::PermissionDecision));
    assert!(!plan.active.contains(&HookPoint::ToolBefore));
    // Reported: tool.before outside the manifest, and the context slot it does not claim.
    assert_eq!(plan.warnings.len(), 2, "{:?}", plan.warnings);
    assert!(plan.warnings.iter().any(|w| w.contains("tool.before")));
    assert!(plan.warnings.iter().any(|w| w.contains("slot context")));
}

#[test]
fn ui_needs_the_capability() {
    let plan = sample().plan(&manifest(
        &[HookPoint::InputReceive],
        &[],
        &[Capability::Interceptors],
    ));
    assert!(plan.ui_actions.is_empty());
    assert!(!plan.ui);
    assert!(
        plan.warnings
            .iter()
            .any(|w| w.contains("capability \"ui\""))
    );
    // Without the slot, permission.decision is neither subscribed nor a strategy.
    assert!(!plan.active.contains(&HookPoint::PermissionDecision));
}

#[test]
fn registration_mistakes_are_collected() {
    let ok = |_: HostHandle, _: UiActionParams| async {
        Ok(UiActionResult {
            accepted: true,
            message: String::new(),
        })
    };
    let err = Extension::new("x", "1")
        .on_action("Bad.Id", "", ok)
        .on_action("dup", "", ok)
        .on_action("dup", "", ok)
        .on_intercept(point::INPUT_RECEIVE, |_, _| async {
            Ok(Decision::Continue)
        })
        .on_intercept(point::INPUT_RECEIVE, |_, _| async {
            Ok(Decision::Continue)
        })
        .state_schema_version(-1)
        .check()
        .unwrap_err();
    assert!(err.is_config());
    let text = err.to_string();
    for needle in [
        "Bad.Id",
        "\"dup\" is registered twice",
        "input.receive",
        "-1",
    ] {
        assert!(text.contains(needle), "{needle} missing from {text}");
    }
    assert!(Extension::new(" ", "1").check().is_err());
    assert!(sample().check().is_ok());
}
