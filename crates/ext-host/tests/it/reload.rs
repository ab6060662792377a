//! Generations: reloads that adopt, restart, fail atomically; linked manifests; UI holds.

use std::pin::Pin;
use std::time::Duration;

use serde_json::{Value, json};
use sidewire_ext_host::{Error, ExtensionHost, GenerationReport, HostEvent, StartupStage};
use sidewire_ext_protocol::HookPoint;

use crate::support::*;

fn pid_of(runtime: &sidewire_ext_host::ExtensionHost, plugin: &str) -> u32 {
    runtime
        .sidecars()
        .into_iter()
        .find(|s| s.plugin == plugin)
        .unwrap_or_else(|| panic!("{plugin} is not running"))
        .pid
}

/// `N` reloads requested while a turn runs (the caller holds one): each takes its ticket on its
/// first poll; the first then waits for the turn, the others for the first.
async fn queue_reloads<const N: usize>(
    runtime: &ExtensionHost,
) -> [Pin<Box<impl Future<Output = Result<GenerationReport, Error>> + '_>>; N] {
    let mut reloads = std::array::from_fn(|_| Box::pin(runtime.reload()));
    for reload in &mut reloads {
        let first_poll = std::future::poll_fn(|cx| {
            std::task::Poll::Ready(reload.as_mut().poll(cx).is_pending())
        })
        .await;
        assert!(first_poll, "a reload finished while a turn runs");
    }
    reloads
}

pub(crate) async fn reload_adopts_unchanged_and_restarts_changed_linked_plugins() {
    let env = Env::new();
    env.plugin("steady")
        .intercepts(&["input.receive"])
        .install();
    env.plugin("linked")
        .intercepts(&["input.receive"])
        .on("input.receive", json!("tag"))
        .install();
    let (runtime, _events) = env.boot().await;
    assert_eq!(runtime.generation(), 1);
    let steady = pid_of(&runtime, "steady");
    let linked = pid_of(&runtime, "linked");
    // Nothing changed: both adopted.
    let report = within(WAIT, "reload", runtime.reload()).await.unwrap();
    assert_eq!(report.generation, 2);
    assert_eq!(report.adopted, ["linked", "steady"]);
    assert!(report.started.is_empty());
    assert_eq!(
        (pid_of(&runtime, "steady"), pid_of(&runtime, "linked")),
        (steady, linked)
    );
    // 74: a change to the linked manifest's runtime restarts its sidecar at the next reload.
    env.plugin("linked")
        .intercepts(&["input.receive"])
        .priority(3)
        .on("input.receive", json!("tag"))
        .package();
    let report = within(WAIT, "reload", runtime.reload()).await.unwrap();
    assert_eq!(report.started, ["linked"]);
    assert_eq!(report.adopted, ["steady"]);
    assert_eq!(pid_of(&runtime, "steady"), steady);
    assert_ne!(pid_of(&runtime, "linked"), linked);
    assert!(!alive(linked), "the retired sidecar was shut down");
    let outcome = runtime
        .intercept(HookPoint::InputReceive, input("x"))
        .await
        .unwrap();
    assert_eq!(text_of(&outcome.payload), "x|linked");
    env.finish(runtime).await;
}

pub(crate) async fn a_failed_reload_leaves_the_old_generation_and_burns_its_number() {
    let env = Env::new();
    env.plugin("keeper")
        .intercepts(&["input.receive"])
        .on("input.receive", json!("tag"))
        .install();
    let (runtime, _events) = env.boot().await;
    let keeper = pid_of(&runtime, "keeper");
    // A new required plugin that cannot start fails the reload.
    env.plugin("broken")
        .required()
        .script("initialize", json!("exit"))
        .install();
    let err = within(WAIT, "reload", runtime.reload()).await.unwrap_err();
    assert!(err.is_reload(), "{err}");
    assert_eq!(err.startup().unwrap().plugin, "broken");
    let sidewire_ext_host::Error::Reload { generation, .. } = &err else {
        panic!()
    };
    assert_eq!(*generation, 2);
    assert_eq!(runtime.generation(), 1);
    assert_eq!(pid_of(&runtime, "keeper"), keeper);
    let outcome = runtime
        .intercept(HookPoint::InputReceive, input("x"))
        .await
        .unwrap();
    assert_eq!(text_of(&outcome.payload), "x|keeper");
    // A linked manifest renamed under the recorded id fails at stage resolve.
    env.store().remove("broken").unwrap();
    env.plugin("keeper")
        .required()
        .manifest("name", json!("renamed"))
        .intercepts(&["input.receive"])
        .package();
    let err = within(WAIT, "reload", runtime.reload()).await.unwrap_err();
    let failure = err.startup().unwrap_or_else(|| panic!("{err}"));
    assert_eq!(failure.stage, StartupStage::Resolve, "{failure}");
    assert_eq!(runtime.generation(), 1);
    env.plugin("keeper")
        .intercepts(&["input.receive"])
        .on("input.receive", json!("tag"))
        .package();
    let report = within(WAIT, "reload", runtime.reload()).await.unwrap();
    assert_eq!(report.generation, 4, "numbers are never reused");
    assert_eq!(runtime.generation(), 4);
    env.finish(runtime).await;
}

pub(crate) async fn crashed_and_failed_plugins_start_again_only_on_reload() {
    let env = Env::new();
    env.plugin("crasher")
        .intercepts(&["input.receive"])
        .on("input.receive", json!("exit:9"))
        .install();
    // Installed sound, then edited in place into a command launch refuses.
    env.plugin("late").install();
    env.plugin("late")
        .runtime("command", json!("relative/path"))
        .package();
    let (runtime, mut events) = env.boot().await;
    assert_eq!(runtime.report().failed[0].plugin, "late");
    let crasher = pid_of(&runtime, "crasher");
    let _ = runtime.intercept(HookPoint::InputReceive, input("x")).await;
    next_event(&mut events, "the crash", |e| match e {
        HostEvent::Crashed { plugin, .. } => Some(plugin),
        _ => None,
    })
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    // Not restarted by itself.
    assert_eq!(pid_of(&runtime, "crasher"), crasher);
    assert!(
        !runtime
            .sidecars()
            .iter()
            .find(|s| s.plugin == "crasher")
            .unwrap()
            .ready
    );
    env.plugin("late").intercepts(&["tool.before"]).package();
    let report = within(WAIT, "reload", runtime.reload()).await.unwrap();
    assert_eq!(report.started, ["crasher", "late"]);
    assert_ne!(pid_of(&runtime, "crasher"), crasher);
    env.finish(runtime).await;
}

pub(crate) async fn ui_calls_of_staged_sidecars_wait_for_the_swap() {
    let publish = json!({"jsonrpc":"2.0","id":1,"method":"host/ui/publish","params":{
        "surfaceId":"s","sessionId":"s-test","generation":2,"kind":"status","payload":{"label":"staged"}}});
    let env = Env::new();
    env.plugin("adopted")
        .capabilities(&["ui"])
        .script(
            "after_init",
            json!([{"jsonrpc":"2.0","id":1,"method":"host/ui/publish","params":{
                "surfaceId":"f","sessionId":"s-test","generation":1,"kind":"form",
                "payload":{"fields":[{"key":"k","kind":"input"}]}}}]),
        )
        .record("adopted.jsonl")
        .install();
    let config = env.config().handshake_timeout(Duration::from_millis(1500));
    let (runtime, mut events) = env.boot_with(config.clone()).await.unwrap();
    next_event(&mut events, "the form", |e| match e {
        HostEvent::Surface(s) => Some(s),
        _ => None,
    })
    .await;
    // A new plugin publishes during the reload; a slow sibling keeps the build open.
    env.plugin("fresh")
        .capabilities(&["ui"])
        .script("after_init", json!([publish]))
        .record("fresh.jsonl")
        .install();
    env.plugin("slow")
        .script("initialize", json!("never"))
        .install();
    let reload = {
        let runtime = runtime.clone();
        tokio::spawn(async move { runtime.reload().await })
    };
    // The publish is held while the build waits for the slow sibling.
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert!(!reload.is_finished());
    assert!(
        !recorded(&env, "fresh.jsonl")
            .iter()
            .any(|f| f["id"] == 1 && f.get("method").is_none()),
        "a staged publish was answered before the swap"
    );
    let report = within(WAIT, "reload", reload).await.unwrap().unwrap();
    assert_eq!(report.adopted, ["adopted"]);
    assert_eq!(report.started, ["fresh"]);
    let answer = || -> Option<Value> {
        recorded(&env, "fresh.jsonl")
            .into_iter()
            .find(|f| f["id"] == 1 && f.get("method").is_none())
    };
    eventually("the held publish's answer", || answer().is_some()).await;
    assert_eq!(answer().unwrap()["result"], json!({"accepted":true}));
    // 67: the adopted sidecar's form stays live after the reload.
    let values = [("k".to_owned(), json!("v"))].into_iter().collect();
    assert!(
        runtime
            .submit_form("adopted", "f", values)
            .await
            .unwrap()
            .accepted
    );
    env.finish(runtime).await;

    // A failed reload answers the held call as stale.
    let env = Env::new();
    env.plugin("base").intercepts(&["input.receive"]).install();
    let config = env.config().handshake_timeout(Duration::from_millis(1500));
    let (runtime, _events) = env.boot_with(config).await.unwrap();
    env.plugin("fresh")
        .capabilities(&["ui"])
        .script("after_init", json!([publish]))
        .record("fresh.jsonl")
        .install();
    env.plugin("zz-broken")
        .required()
        .script("initialize", json!("never"))
        .install();
    let err = within(WAIT, "reload", runtime.reload()).await.unwrap_err();
    assert_eq!(
        err.startup().unwrap().stage,
        StartupStage::Handshake,
        "{err}"
    );
    let answer = || -> Option<Value> {
        recorded(&env, "fresh.jsonl")
            .into_iter()
            .find(|f| f["id"] == 1 && f.get("method").is_none())
    };
    eventually("the stale answer", || answer().is_some()).await;
    assert_eq!(answer().unwrap()["result"], json!({"accepted":false}));
    env.finish(runtime).await;
}

pub(crate) async fn a_reload_waits_for_running_turns_and_queued_requests_merge() {
    let env = Env::new();
    env.plugin("p")
        .intercepts(&["input.receive"])
        .on("input.receive", json!("tag"))
        .install();
    let (runtime, _events) = env.boot().await;
    // Three reloads requested while a turn runs: each takes its ticket on its first poll; the
    // first then waits for the turn, the others for the first.
    let turn = runtime.turn().await;
    let [a, b, c] = {
        let mut reloads = queue_reloads::<3>(&runtime).await;
        // Idle-time only: nothing is rebuilt while the turn runs (a bounded look, not a sync).
        let waited = tokio::time::timeout(Duration::from_millis(300), reloads[0].as_mut()).await;
        assert!(waited.is_err(), "the reload ran during a turn: {waited:?}");
        assert_eq!(runtime.generation(), 1);
        let outcome = turn
            .intercept(HookPoint::InputReceive, input("x"))
            .await
            .unwrap();
        assert_eq!(text_of(&outcome.payload), "x|p");
        drop(turn);
        reloads
    };
    let (a, b, c) = within(WAIT, "the reloads", async { tokio::join!(a, b, c) }).await;
    let generations: Vec<u64> = [a, b, c]
        .into_iter()
        .map(|r| r.unwrap().generation)
        .collect();
    assert_eq!(generations, [2, 2, 2], "one build served all three");
    // Generation 3 was never built (numbers burn per build): the next reload is 3.
    let report = within(WAIT, "reload", runtime.reload()).await.unwrap();
    assert_eq!(report.generation, 3);

    // A failed reload's queued requests get its error, with the same typed cause.
    env.plugin("broken")
        .required()
        .script("initialize", json!("exit"))
        .install();
    let turn = runtime.turn().await;
    let [a, b] = queue_reloads::<2>(&runtime).await;
    drop(turn);
    let (a, b) = within(WAIT, "the failing reloads", async { tokio::join!(a, b) }).await;
    let (a, b) = (a.unwrap_err(), b.unwrap_err());
    assert_eq!(
        a.startup().map(|f| f.plugin.as_str()),
        Some("broken"),
        "{a}"
    );
    match &b {
        sidewire_ext_host::Error::Reload { generation, source } => {
            assert_eq!(*generation, 4);
            assert!(
                matches!(**source, sidewire_ext_host::Error::Startup(_)),
                "{source:?}"
            );
            let sidewire_ext_host::Error::Reload { source: first, .. } = &a else {
                panic!("not a reload error: {a}");
            };
            assert!(std::sync::Arc::ptr_eq(first, source), "one shared cause");
            assert_eq!(b.reason(), a.reason());
        }
        other => panic!("not a reload error: {other}"),
    }
    assert_eq!(runtime.generation(), 3);
    env.store().remove("broken").unwrap();
    env.finish(runtime).await;
}

pub(crate) async fn reloads_joining_one_cut_short_by_a_shutdown_are_shut_down() {
    let env = Env::new();
    env.plugin("p").intercepts(&["input.receive"]).install();
    let (runtime, _events) = env.boot().await;
    let turn = runtime.turn().await;
    let [a, b] = queue_reloads::<2>(&runtime).await;
    within(WAIT, "shutdown", runtime.shutdown()).await;
    drop(turn);
    let (a, b) = within(WAIT, "the reloads", async { tokio::join!(a, b) }).await;
    let (a, b) = (a.unwrap_err(), b.unwrap_err());
    assert!(a.is_shut_down(), "{a}");
    // The request that joined gets the same error, not a reload of no generation.
    assert!(b.is_shut_down(), "{b}");
    assert_eq!(runtime.generation(), 1, "the last published number stays");
    assert!(runtime.sidecars().is_empty());
    env.finish(runtime).await;
}
