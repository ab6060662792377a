//! The host: parallel startup with failures kept, all-or-nothing startup, namespacing, hot
//! add/remove, status, shutdown. Servers are the fake stdio server.

use std::time::{Duration, Instant};

use serde_json::json;
use sidewire_mcp::{
    McpHost, McpHostDriver, NoHandler, ServerSpec, ServerState, Stage, ToolCallOptions,
    is_valid_name,
};
use tokio::task::JoinHandle;

use crate::support::*;

fn host() -> (McpHost, JoinHandle<()>) {
    let (host, driver): (McpHost, McpHostDriver) = McpHost::new(NoHandler);
    (host, tokio::spawn(driver))
}

#[tokio::test]
async fn keep_what_works_records_each_failure_with_its_stage() {
    let (host, driver) = host();
    let failures = within(
        "startup",
        host.start_available([
            fake_spec("good"),
            ServerSpec::stdio("missing", "sidewire-no-such-command"),
            fake_spec("crashing").env("FAKE_EXIT_AT_START", "2"),
        ]),
    )
    .await;
    assert_eq!(failures.len(), 2, "{failures:#?}");
    let missing = failures.iter().find(|f| f.server == "missing").unwrap();
    assert_eq!(missing.stage, Stage::Launch);
    assert!(
        missing.error.contains("not found on PATH"),
        "{}",
        missing.error
    );
    let crashing = failures.iter().find(|f| f.server == "crashing").unwrap();
    assert_eq!(crashing.stage, Stage::Initialize);
    assert_eq!(
        crashing.exit_status.as_deref(),
        Some("exited with status 2")
    );
    assert!(
        crashing
            .stderr_tail
            .as_deref()
            .unwrap()
            .contains("cannot start")
    );
    assert!(crashing.elapsed > Duration::ZERO);

    let status = host.status();
    let states: Vec<(&str, ServerState)> =
        status.iter().map(|s| (s.name.as_str(), s.state)).collect();
    assert_eq!(
        states,
        [
            ("crashing", ServerState::Failed),
            ("good", ServerState::Running),
            ("missing", ServerState::Failed)
        ]
    );
    let good = status.iter().find(|s| s.name == "good").unwrap();
    assert_eq!(good.tools, 9);
    assert_eq!(good.server_info.as_ref().unwrap().name, "fake");
    assert!(good.pid.is_some() && good.startup.is_some());

    let pid = good.pid.unwrap();
    within("shutdown", host.shutdown()).await;
    wait_reaped(pid).await;
    within("the host driver", driver).await.unwrap();
    assert!(host.status().iter().all(|s| s.state == ServerState::Failed));
}

#[tokio::test]
async fn all_or_nothing_closes_what_it_started() {
    let (host, driver) = host();
    let err = within(
        "startup",
        host.start_all([
            fake_spec("a"),
            fake_spec("b"),
            fake_spec("bad").env("FAKE_EXIT_AT_START", "1"),
        ]),
    )
    .await
    .unwrap_err();
    assert!(err.is_start_failed(), "{err:?}");
    assert!(
        err.to_string()
            .contains("1 of 3 MCP servers failed to start"),
        "{err}"
    );
    assert!(err.to_string().contains("bad:"), "{err}");
    assert!(host.tools().is_empty());
    assert!(host.client("a").is_none() && host.client("b").is_none());
    // The successful ones were started and closed again: nothing is left running.
    assert!(host.status().iter().all(|s| s.state == ServerState::Failed));
    // A clean batch goes through.
    within("startup", host.start_all([fake_spec("c")]))
        .await
        .unwrap();
    assert_eq!(host.tools().len(), 9);
    host.shutdown().await;
    within("the host driver", driver).await.unwrap();
}

#[tokio::test]
async fn tools_are_namespaced_uniquely_and_callable() {
    let (host, driver) = host();
    let failures = within(
        "startup",
        host.start_available([
            fake_spec("files"),
            fake_spec("my.files"),
            fake_spec("my_files"),
        ]),
    )
    .await;
    assert!(failures.is_empty(), "{failures:#?}");
    let tools = host.tools();
    assert_eq!(tools.len(), 27);
    let names: std::collections::HashSet<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names.len(), 27, "names collide");
    assert!(tools.iter().all(|t| is_valid_name(&t.name)));
    assert!(names.contains("mcp__files__echo"));
    assert!(names.contains("mcp__my_files__echo"));
    // "my.files" was sanitised, so it carries a hash suffix and differs from "my_files".
    let dotted = tools
        .iter()
        .find(|t| t.server == "my.files" && t.tool.name == "echo")
        .unwrap();
    assert!(
        dotted.name.starts_with("mcp__my_files__echo_")
            && dotted.name.len() == "mcp__my_files__echo_".len() + 8,
        "{}",
        dotted.name
    );
    let result = host
        .call_tool(
            &dotted.name,
            json!({"message": "via the host"}),
            ToolCallOptions::new(),
        )
        .await
        .unwrap();
    assert_eq!(result.joined_text(), "via the host");
    let err = host
        .call_tool("mcp__nope__echo", json!({}), ToolCallOptions::new())
        .await
        .unwrap_err();
    assert!(err.is_not_found());
    host.shutdown().await;
    within("the host driver", driver).await.unwrap();
}

#[tokio::test]
async fn servers_come_and_go_while_others_run() {
    let (host, driver) = host();
    host.add(fake_spec("one")).await.unwrap();
    let err = host.add(fake_spec("one")).await.unwrap_err();
    assert!(err.is_already_exists(), "{err:?}");
    host.add(fake_spec("two")).await.unwrap();
    let one = host.client("one").unwrap();
    let pid = one.pid().unwrap();
    drop(one);
    assert_eq!(host.tools().len(), 18);
    within("remove", host.remove("one")).await.unwrap();
    wait_reaped(pid).await;
    assert_eq!(host.tools().len(), 9);
    assert!(host.remove("one").await.unwrap_err().is_not_found());
    // A failed add is kept as a failure until removed.
    let err = host
        .add(fake_spec("bad").env("FAKE_EXIT_AT_START", "4"))
        .await
        .unwrap_err();
    assert_eq!(err.stage().unwrap().0, Stage::Initialize);
    assert!(
        host.status()
            .iter()
            .any(|s| s.name == "bad" && s.state == ServerState::Failed)
    );
    host.remove("bad").await.unwrap();
    assert!(!host.status().iter().any(|s| s.name == "bad"));
    host.shutdown().await;
    // Shutdown is idempotent, and the host refuses new servers afterwards.
    host.shutdown().await;
    assert!(
        host.add(fake_spec("late"))
            .await
            .unwrap_err()
            .is_shut_down()
    );
    within("the host driver", driver).await.unwrap();
}

#[tokio::test]
async fn at_most_eight_servers_start_at_once() {
    let (host, driver) = host();
    // Ten servers that each take a second to answer initialize: two waves, not one.
    let specs: Vec<ServerSpec> = (0..10)
        .map(|i| fake_spec(&format!("s{i}")).env("FAKE_INIT_SLEEP", "1"))
        .collect();
    let started = Instant::now();
    let failures = within("startup", host.start_available(specs)).await;
    assert!(failures.is_empty(), "{failures:#?}");
    let took = started.elapsed();
    assert!(took >= Duration::from_millis(1900), "{took:?}");
    assert_eq!(host.status().len(), 10);
    host.shutdown().await;
    within("the host driver", driver).await.unwrap();
}

#[tokio::test]
async fn a_startup_timeout_fails_only_the_slow_server() {
    let (host, driver) = host();
    let failures = within(
        "startup",
        host.start_available([
            fake_spec("fast"),
            fake_spec("slow")
                .env("FAKE_INIT_SLEEP", "30")
                .startup_timeout(Duration::from_millis(1500)),
        ]),
    )
    .await;
    assert_eq!(failures.len(), 1);
    assert_eq!(failures[0].server, "slow");
    assert_eq!(failures[0].stage, Stage::Initialize);
    assert!(
        failures[0].error.contains("timed out"),
        "{}",
        failures[0].error
    );
    // The fast one's process was not touched by the slow one's timeout.
    let fast = host.client("fast").unwrap();
    fast.ping().await.unwrap();
    host.shutdown().await;
    within("the host driver", driver).await.unwrap();
}

#[tokio::test]
async fn dropping_the_host_kills_every_server() {
    let (host, driver) = host();
    within(
        "startup",
        host.start_all([fake_spec("a").env("FAKE_IGNORE_EOF", "1"), fake_spec("b")]),
    )
    .await
    .unwrap();
    let pids: Vec<u32> = host.status().iter().filter_map(|s| s.pid).collect();
    assert_eq!(pids.len(), 2);
    drop(host);
    for pid in pids {
        wait_reaped(pid).await;
    }
    within("the host driver", driver).await.unwrap();
}
