use std::time::Duration;

use serde_json::json;
use sidewire_ext_host::protocol::{HookPoint, Verdict};
use sidewire_mcp::ToolCallOptions;
use sidewire_test_support::within;

use super::*;
use crate::testing::{FakeTools, empty_host};

#[test]
fn the_policy_allows_read_only_tools_and_others_only_when_all_are_allowed() {
    let decide = |policy: ToolPolicy, read_only| {
        let p = policy.decide(read_only);
        (p.decision, p.why)
    };
    assert_eq!(
        decide(ToolPolicy::ReadOnly, true),
        (Verdict::Allow, PolicyReason::ReadOnly)
    );
    assert_eq!(
        decide(ToolPolicy::ReadOnly, false),
        (Verdict::Deny, PolicyReason::NotReadOnly)
    );
    assert_eq!(
        decide(ToolPolicy::AllowAll, true),
        (Verdict::Allow, PolicyReason::ReadOnly)
    );
    assert_eq!(
        decide(ToolPolicy::AllowAll, false),
        (Verdict::Allow, PolicyReason::AllowAll)
    );
    assert_eq!(ToolPolicy::default(), ToolPolicy::ReadOnly);
}

#[test]
fn arguments_are_an_object_or_nothing() {
    assert_eq!(parse_arguments("t", "").unwrap(), json!({}));
    assert_eq!(parse_arguments("t", "  ").unwrap(), json!({}));
    assert_eq!(parse_arguments("t", r#"{"a":1}"#).unwrap(), json!({"a": 1}));
    for bad in ["[1]", "null", "\"s\"", "{", "1"] {
        let stop = parse_arguments("t", bad).expect_err(bad);
        assert!(
            matches!(stop, ToolStop::Failed(ref e) if e.is_invalid_arguments()),
            "{bad}"
        );
    }
}

async fn call(
    tools: &FakeTools,
    name: &str,
    arguments: Value,
    policy: ToolPolicy,
) -> ToolCallReport {
    let (host, _dir) = empty_host().await;
    within(Duration::from_secs(10), "the tool call", async {
        let turn = host.turn().await;
        let options = ToolCallOptions::new();
        let call = ToolCall::new("id-1", name, arguments);
        chained_call(&turn, tools, call, policy, options).await
    })
    .await
}

#[tokio::test]
async fn an_allowed_call_records_every_stage_and_its_result_goes_to_the_model() {
    let tools = FakeTools::standard();
    let report = call(
        &tools,
        "mcp__t__add",
        json!({"a": 2, "b": 3}),
        ToolPolicy::ReadOnly,
    )
    .await;
    assert!(report.is_complete());
    assert!(report.before.is_some() && report.permission.is_some() && report.after.is_some());
    assert_eq!(
        report.permission.as_ref().unwrap().permission,
        Some(Verdict::Allow)
    );
    assert_eq!(
        report.result,
        Some(ToolResult {
            text: vec!["5".to_owned()],
            is_error: false
        })
    );
    assert_eq!(report.call_id, "id-1");
    assert_eq!(report.model_text(), ("5".to_owned(), false));
    assert_eq!(tools.calls().len(), 1);
}

#[tokio::test]
async fn a_denied_call_stops_after_the_permission_chain() {
    let tools = FakeTools::standard();
    let report = call(&tools, "mcp__t__write", json!({}), ToolPolicy::ReadOnly).await;
    assert!(matches!(report.stop, Some(ToolStop::Denied)));
    assert!(report.permission.is_some() && report.result.is_none() && report.after.is_none());
    assert_eq!(report.policy.map(|p| p.decision), Some(Verdict::Deny));
    let (text, is_error) = report.model_text();
    assert!(is_error && text.contains("denied"), "{text}");
    assert!(tools.calls().is_empty());
}

#[tokio::test]
async fn an_unknown_tool_or_non_object_arguments_run_nothing() {
    let tools = FakeTools::standard();
    let report = call(&tools, "mcp__t__nope", json!({}), ToolPolicy::AllowAll).await;
    assert!(matches!(report.stop, Some(ToolStop::UnknownTool)));
    assert!(report.before.is_none());
    let report = call(&tools, "mcp__t__add", json!([1]), ToolPolicy::AllowAll).await;
    assert!(matches!(&report.stop, Some(ToolStop::Failed(e)) if e.is_invalid_arguments()));
    assert!(report.before.is_none());
    assert!(tools.calls().is_empty());
}

#[test]
fn the_model_is_told_why_a_call_stopped() {
    let stopped = |stop| ToolCallReport::stopped(ToolCall::new("c", "mcp__t__x", json!({})), stop);
    let blocked = stopped(ToolStop::Blocked {
        point: HookPoint::ToolBefore,
        plugin: "guard".to_owned(),
        reason: "no".to_owned(),
    });
    assert_eq!(
        blocked.model_text(),
        (
            "the call was blocked at tool.before by guard: no".to_owned(),
            true
        )
    );
    let unknown = stopped(ToolStop::UnknownTool);
    assert_eq!(unknown.model_text().0, "there is no tool named mcp__t__x");
    let failed = stopped(ToolStop::Failed(Error::InvalidArguments {
        tool: "mcp__t__x".to_owned(),
        detail: "got a number".to_owned(),
    }));
    assert_eq!(
        failed.model_text().0,
        "the call failed: the arguments of mcp__t__x are not a JSON object: got a number"
    );
}
