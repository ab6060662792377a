//! The per-connection tables of a V2 connection after its handshake (spec delta §1.4 P1): the
//! reason table (§3.1), provider streams (§2.11), externalized replacements (§2.9), the v2 UI
//! kinds (§2.7) and the browser methods (§2.4), each against a scripted v2 sidecar, with the
//! same traffic on a V1 connection where the tables differ.

use serde_json::{Value, json};
use sidewire_ext_host::HostConfig;
use sidewire_ext_protocol::{HookPoint, Reason, UiHost};

use crate::support::*;

/// A headless host in session `s-7f3a`, as in the delta's §5.3.
fn config(env: &Env) -> HostConfig {
    HostConfig::new(&env.state, "s-7f3a", env.tmp.path()).ui_host(UiHost::Headless)
}

/// A scripted plugin with a v2 manifest whose handshake answers in v2, intercepting `point`.
fn v2_plugin<'a>(env: &'a Env, name: &str, point: &str) -> PluginBuilder<'a> {
    env.plugin(name)
        .manifest("apiVersion", json!("reasonix.io/plugin/v2"))
        .manifest("version", json!("0.1.0"))
        .intercepts(&[point])
        .script("initialize", json!({"result": {"protocolVersion": "2"}}))
}

/// The reason a required plugin's intercept failed with, when it answers `error`; the
/// connection must survive the answer.
async fn failed_with(v2: bool, error: Value) -> Option<Reason> {
    let env = Env::new();
    let plugin = if v2 {
        v2_plugin(&env, "talker", "input.receive")
    } else {
        env.plugin("talker").intercepts(&["input.receive"])
    };
    plugin
        .required()
        .on("input.receive", json!({ "error": error }))
        .install();
    let (runtime, _events) = env.boot_with(config(&env)).await.unwrap();
    let err = within(
        WAIT,
        "the intercept",
        runtime.intercept(HookPoint::InputReceive, input("x")),
    )
    .await
    .expect_err("a required member's error fails the intercept");
    // An error answer never crashes the connection (item 26).
    assert_eq!(runtime.sidecars().len(), 1);
    assert!(runtime.sidecars()[0].ready, "{err}");
    env.finish(runtime).await;
    err.reason()
}

/// Checklist items 25 (host side) and 26: the V2 table's 28 reasons, read per connection.
pub(crate) async fn peer_errors_are_read_with_the_connections_reason_table() {
    let carrying = |reason: &str, retryable: bool| json!({"code": -32000, "message": "m", "data": {"reason": reason, "retryable": retryable}});
    // A v2-only reason with its table flag is understood on V2 ...
    assert_eq!(
        failed_with(true, carrying("browser_unavailable", true)).await,
        Some(Reason::BrowserUnavailable)
    );
    assert_eq!(
        failed_with(true, carrying("dependency_cycle", false)).await,
        Some(Reason::DependencyCycle)
    );
    // ... is no reason with the wrong flag (an error without a reason fails as `internal`) ...
    assert_eq!(
        failed_with(true, carrying("browser_unavailable", false)).await,
        Some(Reason::Internal)
    );
    // ... and no reason on a V1 connection.
    assert_eq!(
        failed_with(false, carrying("browser_unavailable", true)).await,
        Some(Reason::Internal)
    );
    // v1's reasons keep working on V2.
    assert_eq!(
        failed_with(true, carrying("intercept_timeout", true)).await,
        Some(Reason::InterceptTimeout)
    );
    // Item 26: the Go SDK's transport-local errors carry no reason and crash nothing.
    assert_eq!(
        failed_with(true, json!({"code": -32099, "message": "server busy"})).await,
        Some(Reason::Internal)
    );
    assert_eq!(
        failed_with(
            true,
            json!({"code": -32603, "message": "response exceeds frame size limit"})
        )
        .await,
        Some(Reason::Internal)
    );
}
