//! Boot, launch contract, handshake validation, readiness barrier, startup failures.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use sidewire_ext_host::{HostEvent, RefusedBy, StartupStage};
use sidewire_ext_protocol::{HookPoint, Reason};

use crate::support::*;

pub(crate) async fn no_store_starts_nothing_and_disabled_plugins_never_start() {
    let env = Env::new();
    let (runtime, _events) = env.boot().await;
    assert!(runtime.sidecars().is_empty());
    assert!(!runtime.has_subscribers(HookPoint::InputReceive));
    env.finish(runtime).await;

    // Installed but disabled: never started.
    let env = Env::new();
    env.plugin("off").intercepts(&["input.receive"]).install();
    env.store().set_enabled("off", false).unwrap();
    let (runtime, _events) = env.boot().await;
    assert!(runtime.sidecars().is_empty());
    assert!(env.pids().is_empty(), "a disabled plugin ran");
    env.finish(runtime).await;
}

pub(crate) async fn the_first_frame_is_initialize_and_nothing_precedes_its_result() {
    let env = Env::new();
    env.plugin("rec")
        .intercepts(&["input.receive"])
        .record("rec.jsonl")
        .install();
    let (runtime, _events) = env.boot().await;
    let outcome = runtime
        .intercept(HookPoint::InputReceive, input("hi"))
        .await
        .unwrap();
    assert_eq!(text_of(&outcome.payload), "hi");
    env.finish(runtime).await;
    let frames = recorded(&env, "rec.jsonl");
    let methods: Vec<&str> = frames
        .iter()
        .map(|f| f["method"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(
        methods[..4],
        [
            "extension/initialize",
            "extension/initialized",
            "extension/intercept",
            "extension/shutdown"
        ]
    );
    let init = &frames[0];
    assert_eq!(init["id"], 1);
    assert_eq!(init["params"]["protocolId"], "reasonix.extension.v1");
    assert_eq!(init["params"]["protocolVersion"], "1");
    assert_eq!(
        init["params"]["manifest"],
        json!({"intercepts":["input.receive"],"capabilities":["interceptors"]})
    );
    assert_eq!(init["params"]["session"]["sessionId"], "s-test");
    assert_eq!(init["params"]["session"]["generation"], 1);
    // `protocolVersion` again in the capabilities: sidecars built on the reference SDK require
    // it (a delta from the spec's table, documented in ext-protocol).
    assert_eq!(
        init["params"]["capabilities"],
        json!({"contentRefs":true,"uiHost":"tui","protocolVersion":"1"})
    );
}

/// Adjusts a plugin's manifest for one case.
type Shape = fn(PluginBuilder<'_>) -> PluginBuilder<'_>;

/// Boots one plugin whose script answers initialize with `init` and returns the failure. The
/// sidecar outlives stdin EOF, so the check that no process is left proves the host's kill.
async fn failed_handshake(
    init: Value,
    manifest: impl FnOnce(PluginBuilder<'_>) -> PluginBuilder<'_>,
) -> (Env, sidewire_ext_host::StartupFailure) {
    let env = Env::new();
    manifest(
        env.plugin("bad")
            .required()
            .script("initialize", init)
            .script("eof", json!("linger")),
    )
    .install();
    let err = env.boot_with(env.config()).await.unwrap_err();
    let failure = startup(&err).clone();
    assert_eq!(failure.plugin, "bad");
    assert_eq!(failure.stage, StartupStage::Handshake);
    env.assert_no_processes();
    (env, failure)
}

pub(crate) async fn a_foreign_protocol_version_fails_with_unsupported_version_and_is_killed() {
    let (_env, failure) = failed_handshake(json!({"result":{"protocolVersion":"2"}}), |p| p).await;
    assert_eq!(
        failure.reason,
        Some(Reason::UnsupportedVersion),
        "{failure}"
    );
    let (_env, failure) = failed_handshake(json!({"result":{"protocolVersion":"01"}}), |p| p).await;
    assert_eq!(failure.reason, Some(Reason::ProtocolError), "{failure}");
}

pub(crate) async fn a_version_refusal_names_the_side_that_refused() {
    // The same reason from either side: the host refusing a sidecar that speaks another major,
    // and a sidecar (a reference-SDK build at another version, say) refusing the host's.
    let (_env, by_host) = failed_handshake(json!({"result":{"protocolVersion":"2"}}), |p| p).await;
    let (_env, by_sidecar) = failed_handshake(
        json!({"error":{"code":-32000,"message":"host speaks 1, I speak 2","data":{"reason":"unsupported_version","retryable":false}}}),
        |p| p,
    )
    .await;
    assert_eq!(
        by_host.reason,
        Some(Reason::UnsupportedVersion),
        "{by_host}"
    );
    assert_eq!(by_host.refused_by, Some(RefusedBy::Host), "{by_host}");
    assert_eq!(
        by_sidecar.reason,
        Some(Reason::UnsupportedVersion),
        "{by_sidecar}"
    );
    assert_eq!(
        by_sidecar.refused_by,
        Some(RefusedBy::Sidecar),
        "{by_sidecar}"
    );

    // An error answer without a valid reason is still the sidecar's refusal; a manifest claim
    // is the host's; a sidecar that never answers refused nobody.
    let (_env, failure) = failed_handshake(
        json!({"error":{"code":-32000,"message":"no","data":{"reason":"no_such_reason"}}}),
        |p| p,
    )
    .await;
    assert_eq!(failure.reason, None, "{failure}");
    assert_eq!(failure.refused_by, Some(RefusedBy::Sidecar), "{failure}");
    let (_env, failure) = failed_handshake(json!({"result":{"replaces":["context"]}}), |p| p).await;
    assert_eq!(failure.refused_by, Some(RefusedBy::Host), "{failure}");
    let env = Env::new();
    env.plugin("mute")
        .required()
        .script("initialize", json!("never"))
        .install();
    let config = env.config().handshake_timeout(Duration::from_millis(300));
    let err = env.boot_with(config).await.unwrap_err();
    assert_eq!(startup(&err).refused_by, None, "{err}");
    env.assert_no_processes();
}

pub(crate) async fn handshake_claims_beyond_the_manifest_are_capability_not_declared() {
    let cases: Vec<(Value, Shape)> = vec![
        // 26: a subscription absent from manifest intercepts.
        (json!({"result":{"subscriptions":["tool.before"]}}), |p| {
            p.intercepts(&["input.receive"])
        }),
        // 27: a slot absent from manifest replaces.
        (json!({"result":{"replaces":["context"]}}), |p| p),
        // 27: providers without capability providers.
        (
            json!({"result":{"providers":[{"ref":"plugin/bad/x/y"}]}}),
            |p| p,
        ),
        // 28: a provider ref outside plugin/<id>/.
        (
            json!({"result":{"providers":[{"ref":"plugin/other/x"}]}}),
            |p| p.capabilities(&["providers"]),
        ),
        // 28: uiActions without capability ui.
        (json!({"result":{"uiActions":[{"actionId":"go"}]}}), |p| p),
    ];
    for (init, manifest) in cases {
        let (_env, failure) = failed_handshake(init.clone(), manifest).await;
        assert_eq!(
            failure.reason,
            Some(Reason::CapabilityNotDeclared),
            "{init}: {failure}"
        );
    }
}

pub(crate) async fn malformed_handshake_results_are_protocol_errors() {
    let cases: Vec<(Value, Shape)> = vec![
        (
            json!({"result":{"uiActions":[{"actionId":"Bad.Id"}]}}),
            |p| p.capabilities(&["ui"]),
        ),
        (
            json!({"result":{"uiActions":[{"actionId":"a"},{"actionId":"a"}]}}),
            |p| p.capabilities(&["ui"]),
        ),
        (json!({"result":{"subscriptions":["no.such.point"]}}), |p| p),
        (json!({"result":{"replaces":["no_such_slot"]}}), |p| p),
        (
            json!({"result":{"providers":[{"ref":"plugin/bad/a"},{"ref":"plugin/bad/a"}]}}),
            |p| p.capabilities(&["providers"]),
        ),
        (json!({"result":{"stateSchemaVersion":null}}), |p| p),
        (json!({"result":{"extra":1}}), |p| p),
    ];
    for (init, manifest) in cases {
        let (_env, failure) = failed_handshake(init.clone(), manifest).await;
        assert_eq!(
            failure.reason,
            Some(Reason::ProtocolError),
            "{init}: {failure}"
        );
    }
}

pub(crate) async fn traffic_before_initialized_poisons_the_connection() {
    for before in [
        json!({"jsonrpc":"2.0","id":1,"method":"host/ui/publish","params":{}}),
        json!({"jsonrpc":"2.0","method":"extension/provider/stream/end","params":{}}),
        json!({"jsonrpc":"2.0","id":9,"result":{}}),
    ] {
        let (_env, failure) = failed_handshake(json!("auto"), |p| {
            p.script("before_answer", json!([before.clone()]))
        })
        .await;
        assert_eq!(failure.reason, Some(Reason::ProtocolError), "{before}");
        assert!(
            failure.cause.contains("before extension/initialized"),
            "{failure}"
        );
    }
}

pub(crate) async fn a_silent_or_exiting_sidecar_fails_startup_with_cause_and_stderr() {
    let env = Env::new();
    env.plugin("silent")
        .required()
        .script("initialize", json!("never"))
        .script(
            "stderr",
            json!("waiting forever; FOO_TOKEN=sekret-value-123"),
        )
        .runtime("env", json!({"FOO_TOKEN": "sekret-value-123"}))
        .install();
    let config = env.config().handshake_timeout(Duration::from_millis(700));
    let err = env.boot_with(config).await.unwrap_err();
    let failure = startup(&err);
    assert_eq!(failure.stage, StartupStage::Handshake);
    assert_eq!(failure.cause, "timeout after 700 ms");
    assert_eq!(failure.reason, None);
    assert!(failure.stderr_tail.contains("waiting forever"), "{failure}");
    assert!(failure.stderr_tail.contains("[REDACTED]"), "{failure}");
    assert!(!failure.stderr_tail.contains("sekret"), "{failure}");
    env.assert_no_processes();

    let env = Env::new();
    env.plugin("quits")
        .required()
        .script("initialize", json!("exit"))
        .script("stderr", json!("giving up"))
        .install();
    let err = env.boot_with(env.config()).await.unwrap_err();
    let failure = startup(&err);
    assert_eq!(failure.cause, "exited with status 1", "{failure}");
    assert!(failure.stderr_tail.contains("giving up"), "{failure}");
    assert!(failure.to_string().contains("quits"), "{failure}");
    env.assert_no_processes();
}

pub(crate) async fn an_error_answer_to_initialize_fails_startup_with_its_reason() {
    let (_env, failure) = failed_handshake(
        json!({"error":{"code":-32000,"message":"Bearer abc.def","data":{"reason":"unsupported_version","retryable":false}}}),
        |p| p,
    )
    .await;
    assert_eq!(failure.reason, Some(Reason::UnsupportedVersion));
    assert!(failure.cause.contains("Bearer [REDACTED]"), "{failure}");
}

pub(crate) async fn refused_commands_never_spawn_and_fail_at_resolve() {
    for command in ["/usr/bin/bash", "/bin/SH", "/opt/pwsh.exe", "bin/relative"] {
        let env = Env::new();
        // Whatever runs would leave a mark: the shell through its `-c`, the relative command
        // (a real script in the package, found if it were resolved against the root or the
        // current directory) by itself.
        let marker = env.path("spawned");
        let touch = format!("#!/bin/sh\ntouch '{}'\n", marker.display());
        let args = json!(["-c", format!("touch '{}'", marker.display())]);
        // Installed with a good command, then the linked manifest is edited in place: install
        // refuses such commands too, and the launch contract must hold at every start anyway.
        env.plugin("shelly").required().install();
        let root = env
            .plugin("shelly")
            .required()
            .runtime("command", json!(command))
            .runtime("args", args)
            .package();
        std::fs::create_dir_all(root.join("bin")).unwrap();
        std::fs::write(root.join("bin/relative"), &touch).unwrap();
        std::fs::set_permissions(
            root.join("bin/relative"),
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .unwrap();
        let err = env.boot_with(env.config()).await.unwrap_err();
        let failure = startup(&err);
        assert_eq!(failure.stage, StartupStage::Resolve, "{command}: {failure}");
        assert!(!marker.exists(), "{command} was spawned");
        assert!(env.pids().is_empty());
    }
}

pub(crate) async fn only_the_plugin_root_is_expanded_and_reasonix_variables_win() {
    let env = Env::new();
    let root = env
        .plugin("reporter")
        .intercepts(&["input.receive"])
        .on("input.receive", json!("report"))
        .runtime(
            "args",
            json!(["$HOME", "~", "${OTHER}", "${REASONIX_PLUGIN_ROOT}/x"]),
        )
        .runtime(
            "env",
            json!({
                "REASONIX_PLUGIN_ROOT": "/evil",
                "REASONIX_PLUGIN_NAME": "evil",
                "REASONIX_PLUGIN_VERSION": "9.9.9",
                "SIDEWIRE_TEST_VAR": "kept",
            }),
        )
        .install();
    let root = std::fs::canonicalize(root).unwrap();
    let (runtime, _events) = env.boot().await;
    let outcome = runtime
        .intercept(HookPoint::InputReceive, input("hi"))
        .await
        .unwrap();
    let report: Value = serde_json::from_str(&outcome.blocked.unwrap().reason).unwrap();
    let root = root.display().to_string();
    assert_eq!(
        report["argv"],
        json!(["$HOME", "~", "${OTHER}", format!("{root}/x")])
    );
    assert_eq!(report["env"]["REASONIX_PLUGIN_ROOT"], json!(root));
    assert_eq!(report["env"]["REASONIX_PLUGIN_NAME"], "reporter");
    assert_eq!(report["env"]["REASONIX_PLUGIN_VERSION"], "1.0.0");
    assert_eq!(report["cwd"], json!(root));
    env.finish(runtime).await;
}

pub(crate) async fn a_slot_claimed_twice_fails_the_build_before_any_spawn() {
    let env = Env::new();
    env.plugin("alpha").replaces(&["context"]).install();
    env.plugin("beta").replaces(&["context"]).install();
    let err = env.boot_with(env.config()).await.unwrap_err();
    assert!(err.is_slot_conflict(), "{err}");
    let text = err.to_string();
    assert!(
        text.contains("context") && text.contains("alpha") && text.contains("beta"),
        "{text}"
    );
    assert!(env.pids().is_empty(), "something was spawned");
}

pub(crate) async fn boots_run_four_at_a_time_within_one_budget() {
    let env = Env::new();
    for i in 0..6 {
        env.plugin(&format!("slow{i}"))
            .script("initialize", json!("never"))
            .install();
    }
    let config = env.config().boot_budget(Duration::from_millis(1500));
    let started = Instant::now();
    let (runtime, mut events) = env.boot_with(config).await.unwrap();
    let elapsed = started.elapsed();
    assert!(elapsed < Duration::from_secs(5), "{elapsed:?}");
    let report = runtime.report();
    assert_eq!(report.failed.len(), 6);
    let stages: Vec<StartupStage> = report.failed.iter().map(|f| f.stage).collect();
    assert_eq!(
        stages
            .iter()
            .filter(|s| **s == StartupStage::Handshake)
            .count(),
        4,
        "{stages:?}"
    );
    assert_eq!(
        stages
            .iter()
            .filter(|s| **s == StartupStage::Queued)
            .count(),
        2,
        "{stages:?}"
    );
    // Only the four launched ever ran.
    assert_eq!(env.pids().len(), 4);
    let warnings: Vec<String> = drain(&mut events)
        .into_iter()
        .filter_map(|e| match e {
            HostEvent::Warning { message, .. } => Some(message),
            _ => None,
        })
        .collect();
    assert!(
        warnings
            .iter()
            .any(|w| w.starts_with("slow0: optional extension runtime failed to start: ")),
        "{warnings:?}"
    );
    env.finish(runtime).await;

    // A required plugin that fails fails the build, and shuts down what the build started.
    let env = Env::new();
    env.plugin("fine").intercepts(&["input.receive"]).install();
    env.plugin("must")
        .required()
        .script("initialize", json!("exit"))
        .install();
    let err = env.boot_with(env.config()).await.unwrap_err();
    assert_eq!(startup(&err).plugin, "must");
    env.assert_no_processes();
}

/// A host killed outright (SIGKILL: no shutdown, no `Drop`) takes its sidecars with it: they
/// get `PR_SET_PDEATHSIG(SIGKILL)` at spawn. The sidecar here outlives its stdin closing, so
/// only the death signal can end it.
pub(crate) async fn a_sidecar_dies_with_its_host_when_the_host_is_sigkilled() {
    use tokio::io::AsyncBufReadExt;
    let env = Env::new();
    env.plugin("orphan")
        .intercepts(&["input.receive"])
        .script("eof", json!("linger"))
        .install();
    let mut host = tokio::process::Command::new(std::env::current_exe().unwrap())
        .env(crate::sidecar::ROLE, "idle-host")
        .env("SIDEWIRE_TEST_STATE", &env.state)
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(host.stdout.take().unwrap()).lines();
    let line = within(WAIT, "the host to boot", lines.next_line()).await;
    assert_eq!(line.unwrap().as_deref(), Some("booted"));
    let sidecars = env.pids();
    assert_eq!(sidecars.len(), 1, "{sidecars:?}");
    assert!(sidecars.iter().all(|&pid| alive(pid)));

    host.start_kill().unwrap();
    let status = within(WAIT, "the killed host", host.wait()).await.unwrap();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(9)
    );
    let deadline = Instant::now() + Duration::from_secs(5);
    while sidecars.iter().any(|&pid| alive(pid)) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let survivors: Vec<u32> = sidecars.into_iter().filter(|&pid| alive(pid)).collect();
    if !survivors.is_empty() {
        // Leave nothing behind, even when failing.
        sidewire_process::testing::kill_all(&survivors);
        panic!("sidecars {survivors:?} outlived their SIGKILLed host");
    }
    env.assert_no_processes();
}
