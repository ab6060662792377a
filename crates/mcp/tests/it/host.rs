//! The host: parallel startup with failures kept, all-or-nothing startup, namespacing, hot
//! add/remove, status, shutdown. Servers are the fake stdio server.

use std::time::{Duration, Instant};

use serde_json::json;
use sidewire_mcp::{
    EraChoice, Handshake, McpHost, McpHostDriver, NoHandler, Root, ServerSpec, ServerState, Stage,
    ToolCallOptions, is_valid_name,
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
            fake_spec("crashing-legacy")
                .env("FAKE_EXIT_AT_START", "2")
                .era(EraChoice::Legacy),
        ]),
    )
    .await;
    assert_eq!(failures.len(), 3, "{failures:#?}");
    let missing = failures.iter().find(|f| f.server == "missing").unwrap();
    assert_eq!(missing.stage, Stage::Launch);
    assert_eq!(missing.handshake, None);
    assert!(
        missing.error.contains("not found on PATH"),
        "{}",
        missing.error
    );
    let crashing = failures.iter().find(|f| f.server == "crashing").unwrap();
    assert_eq!(crashing.stage, Stage::Initialize);
    // The handshake it was waiting on: the era probe (auto), or `initialize` (legacy).
    assert_eq!(crashing.handshake, Some(Handshake::Discover));
    let legacy = failures
        .iter()
        .find(|f| f.server == "crashing-legacy")
        .unwrap();
    assert_eq!(legacy.handshake, Some(Handshake::Initialize));
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
            ("crashing-legacy", ServerState::Failed),
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
    // The fake server is legacy-only: each status names its version and era.
    for status in host.status() {
        assert!(status.protocol_version.is_some(), "{status:?}");
        assert_eq!(status.era, Some(sidewire_mcp::Era::Legacy), "{status:?}");
    }
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
    // Each tool is found by its namespaced name, salted ones included, as `tools` names it.
    for tool in &tools {
        let found = host.find_tool(&tool.name).expect("found by name");
        assert_eq!(
            (&found.server, &found.tool.name),
            (&tool.server, &tool.tool.name)
        );
    }
    assert!(host.find_tool("mcp__nope__echo").is_none());
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

// Restarts. The fake server records each start's pid in FAKE_START_FILE; the backoff is
// shortened through the spec's policy.

use sidewire_mcp::{Restart, RestartPolicy, ServerStatus};

/// A policy with a 10 ms backoff (doubling to 40 ms), 3 attempts in 60 s.
fn quick() -> Restart {
    Restart::OnCrash(
        RestartPolicy::default().backoff(Duration::from_millis(10), Duration::from_millis(40)),
    )
}

/// The pids of each start recorded in `file`.
fn starts(file: &std::path::Path) -> Vec<u32> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .map(|line| line.parse().unwrap())
        .collect()
}

fn status_of(host: &McpHost, name: &str) -> ServerStatus {
    host.status().into_iter().find(|s| s.name == name).unwrap()
}

fn timeout(secs: u64) -> ToolCallOptions {
    ToolCallOptions::new().timeout(Duration::from_secs(secs))
}

/// Starts `spec` and makes it crash (its `die` tool exits with status 3).
async fn start_and_crash(host: &McpHost, spec: ServerSpec) {
    let name = spec.name().to_owned();
    within("add", host.add(spec)).await.unwrap();
    let died = host
        .call_tool(&format!("mcp__{name}__die"), json!({}), timeout(20))
        .await;
    assert!(died.unwrap_err().is_closed());
}

#[tokio::test]
async fn a_crashed_server_is_restarted_and_a_call_made_meanwhile_waits_for_it() {
    let (host, driver) = host();
    let dir = temp_dir("restart");
    let (file, gate) = (dir.join("starts"), dir.join("gate"));
    let spec = fake_spec("worn")
        .env("FAKE_START_FILE", file.to_string_lossy())
        .env("FAKE_RESTART_GATE", gate.to_string_lossy())
        .env("FAKE_EXIT_AFTER_CALLS", "1")
        .restart(quick());
    within("add", host.add(spec)).await.unwrap();
    let result = host
        .call_tool("mcp__worn__echo", json!({"message": "one"}), timeout(20))
        .await
        .unwrap();
    assert_eq!(result.joined_text(), "one");
    // The server exits after that call; the restart waits at the gate in initialize.
    eventually("the restart to begin", || {
        status_of(&host, "worn").state == ServerState::Restarting && starts(&file).len() == 2
    })
    .await;
    let status = status_of(&host, "worn");
    let exit = status.last_exit.expect("the crash is reported");
    assert_eq!(exit.exit_status.as_deref(), Some("exited with status 5"));
    assert!(exit.stderr_tail.unwrap().contains("worn out"));
    assert_eq!(status.restarts, 0);
    // A call made while it restarts waits for it.
    let waiting = {
        let host = host.clone();
        tokio::spawn(async move {
            host.call_tool("mcp__worn__echo", json!({"message": "two"}), timeout(20))
                .await
        })
    };
    assert_eq!(status_of(&host, "worn").state, ServerState::Restarting);
    std::fs::write(&gate, "").unwrap();
    let result = within("the waiting call", waiting).await.unwrap().unwrap();
    assert_eq!(result.joined_text(), "two");
    let status = status_of(&host, "worn");
    assert_eq!(status.state, ServerState::Running);
    assert_eq!(status.restarts, 1);
    let pids = starts(&file);
    assert_eq!(status.pid, Some(pids[1]));
    wait_reaped(pids[0]).await;
    // Lists were refreshed on the new connection, and the next call succeeds.
    assert_eq!(status.tools, 9);
    let result = host
        .call_tool("mcp__worn__echo", json!({"message": "three"}), timeout(20))
        .await
        .unwrap();
    assert_eq!(result.joined_text(), "three");
    within("shutdown", host.shutdown()).await;
    wait_reaped(pids[1]).await;
    within("the host driver", driver).await.unwrap();
}

#[tokio::test]
async fn a_call_in_flight_at_the_crash_fails_at_once_with_the_exit_status() {
    let (host, driver) = host();
    within("add", host.add(fake_spec("dying").restart(quick())))
        .await
        .unwrap();
    let err = within(
        "the call",
        host.call_tool("mcp__dying__die", json!({}), timeout(300)),
    )
    .await
    .unwrap_err();
    assert!(err.is_closed(), "{err:?}");
    assert_eq!(err.exit_status(), Some("exited with status 3"));
    assert!(err.stderr_tail().unwrap().contains("boom"), "{err}");
    host.shutdown().await;
    within("the host driver", driver).await.unwrap();
}

#[tokio::test]
async fn a_server_that_crashes_every_time_is_given_up_on() {
    let (host, driver) = host();
    let dir = temp_dir("give-up");
    let file = dir.join("starts");
    let spec = fake_spec("hopeless")
        .env("FAKE_START_FILE", file.to_string_lossy())
        .env("FAKE_EXIT_AT_RESTART", "7")
        .restart(quick());
    start_and_crash(&host, spec).await;
    eventually("the host to give up", || {
        status_of(&host, "hopeless").state == ServerState::GaveUp
    })
    .await;
    // One start and three attempts, each of which exited at once.
    let pids = starts(&file);
    assert_eq!(pids.len(), 4, "{pids:?}");
    let status = status_of(&host, "hopeless");
    assert_eq!(status.restarts, 0);
    let failure = status.failure.expect("the last attempt's failure");
    assert_eq!(failure.stage, Stage::Initialize);
    assert_eq!(failure.exit_status.as_deref(), Some("exited with status 7"));
    assert_eq!(
        status.last_exit.unwrap().exit_status.as_deref(),
        Some("exited with status 3")
    );
    // Calls now fail at once, with the crash's exit status.
    let err = within(
        "a call after giving up",
        host.call_tool("mcp__hopeless__echo", json!({}), timeout(300)),
    )
    .await
    .unwrap_err();
    assert!(err.is_closed(), "{err:?}");
    assert_eq!(err.exit_status(), Some("exited with status 3"));
    for pid in pids {
        wait_reaped(pid).await;
    }
    host.shutdown().await;
    within("the host driver", driver).await.unwrap();
}

/// A policy whose backoff outlasts any test.
fn slow() -> Restart {
    Restart::OnCrash(
        RestartPolicy::default().backoff(Duration::from_secs(3600), Duration::from_secs(3600)),
    )
}

#[tokio::test]
async fn remove_and_shutdown_during_the_backoff_stop_the_restart() {
    let (host, driver) = host();
    let dir = temp_dir("stop");
    let (one, two) = (dir.join("one"), dir.join("two"));
    for (name, file) in [("one", &one), ("two", &two)] {
        let spec = fake_spec(name)
            .env("FAKE_START_FILE", file.to_string_lossy())
            .restart(slow());
        start_and_crash(&host, spec).await;
    }
    eventually("both to wait out their backoff", || {
        host.status()
            .iter()
            .all(|s| s.state == ServerState::Restarting)
    })
    .await;
    within("remove", host.remove("one")).await.unwrap();
    assert!(!host.status().iter().any(|s| s.name == "one"));
    // A call waiting for "two" is released by the shutdown, and the driver ends although the
    // backoff has an hour to go.
    let waiting = {
        let host = host.clone();
        tokio::spawn(async move {
            host.call_tool("mcp__two__echo", json!({}), timeout(3600))
                .await
        })
    };
    within("shutdown", host.shutdown()).await;
    within("the host driver", driver).await.unwrap();
    let err = within("the waiting call", waiting)
        .await
        .unwrap()
        .unwrap_err();
    assert!(err.is_not_found() || err.is_shut_down(), "{err:?}");
    for file in [&one, &two] {
        let pids = starts(file);
        assert_eq!(pids.len(), 1, "no restart ran: {pids:?}");
        wait_reaped(pids[0]).await;
    }
}

#[tokio::test]
async fn shutdown_abandons_a_restart_in_progress_and_kills_its_process() {
    let (host, driver) = host();
    let dir = temp_dir("abandon");
    let (file, gate) = (dir.join("starts"), dir.join("gate"));
    let spec = fake_spec("stuck")
        .env("FAKE_START_FILE", file.to_string_lossy())
        .env("FAKE_RESTART_GATE", gate.to_string_lossy())
        .restart(quick());
    start_and_crash(&host, spec).await;
    // The restarted process waits at the (never opened) gate in initialize.
    eventually("the restart's process to start", || {
        starts(&file).len() == 2
    })
    .await;
    let restarting = starts(&file)[1];
    assert_eq!(status_of(&host, "stuck").state, ServerState::Restarting);
    within("shutdown", host.shutdown()).await;
    within("the host driver", driver).await.unwrap();
    wait_reaped(restarting).await;
}

#[tokio::test]
async fn a_deliberate_close_and_a_failed_first_start_are_not_restarted() {
    let (host, driver) = host();
    let dir = temp_dir("no-restart");
    let (closed, failed) = (dir.join("closed"), dir.join("failed"));
    let spec = fake_spec("closed")
        .env("FAKE_START_FILE", closed.to_string_lossy())
        .restart(quick());
    within("add", host.add(spec)).await.unwrap();
    within("close", host.client("closed").unwrap().close()).await;
    // Not a crash: the call fails at once instead of waiting for a restart.
    let err = within(
        "a call after close",
        host.call_tool("mcp__closed__echo", json!({}), timeout(300)),
    )
    .await
    .unwrap_err();
    assert!(err.is_closed(), "{err:?}");
    assert_eq!(status_of(&host, "closed").state, ServerState::Exited);

    let spec = fake_spec("failed")
        .env("FAKE_START_FILE", failed.to_string_lossy())
        .env("FAKE_EXIT_AT_START", "2")
        .restart(quick());
    let err = within("add", host.add(spec)).await.unwrap_err();
    assert_eq!(err.stage().unwrap().0, Stage::Initialize);
    // An absence can only be watched for a while: 30 times the 10 ms backoff.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(starts(&closed).len(), 1);
    assert_eq!(starts(&failed).len(), 1);
    assert_eq!(status_of(&host, "failed").state, ServerState::Failed);
    assert_eq!(status_of(&host, "closed").restarts, 0);
    host.shutdown().await;
    within("the host driver", driver).await.unwrap();
}

#[tokio::test]
async fn with_restart_never_a_crashed_server_stays_exited() {
    let (host, driver) = host();
    start_and_crash(&host, fake_spec("once").restart(Restart::Never)).await;
    eventually("the exit to show", || {
        status_of(&host, "once").state == ServerState::Exited
    })
    .await;
    let err = within(
        "a call after the crash",
        host.call_tool("mcp__once__echo", json!({}), timeout(300)),
    )
    .await
    .unwrap_err();
    assert!(err.is_closed(), "{err:?}");
    host.shutdown().await;
    within("the host driver", driver).await.unwrap();
}

/// A spec's tool filter (config `includeTools`/`excludeTools`, ...) hides the filtered-out
/// tools from the listing and refuses calls to them, through the host and the client alike;
/// a disabled spec is listed as disabled and never started.
#[tokio::test]
async fn a_tool_filter_hides_tools_and_a_disabled_server_is_not_started() {
    let (host, driver) = host();
    let filter = sidewire_mcp::ToolFilter::all()
        .only(["echo", "die"])
        .except(["die"]);
    let failures = within(
        "startup",
        host.start_available([
            fake_spec("kept").tool_filter(filter),
            fake_spec("off").enabled(false),
        ]),
    )
    .await;
    assert!(failures.is_empty(), "{failures:#?}");
    let names: Vec<String> = host.tools().into_iter().map(|t| t.name).collect();
    assert_eq!(names, ["mcp__kept__echo"]);
    let err = host
        .call_tool("mcp__kept__die", json!({}), ToolCallOptions::new())
        .await
        .unwrap_err();
    assert!(err.is_not_found(), "{err}");
    let client = host.client("kept").unwrap();
    let err = client
        .call_tool("die", json!({}), ToolCallOptions::new())
        .await
        .unwrap_err();
    assert!(err.is_not_found(), "{err}");
    let echoed = host
        .call_tool(
            "mcp__kept__echo",
            json!({"message": "hi"}),
            ToolCallOptions::new(),
        )
        .await
        .unwrap();
    assert_eq!(echoed.joined_text(), "hi");
    assert_eq!(status_of(&host, "off").state, ServerState::Disabled);
    assert!(host.client("off").is_none());
    // Connecting a disabled spec directly is refused too.
    let refused = sidewire_mcp::Client::connect(&fake_spec("off").enabled(false), NoHandler).await;
    assert!(refused.unwrap_err().is_config());
    host.shutdown().await;
    within("the host driver", driver).await.unwrap();
}

#[tokio::test]
async fn the_hosts_roots_reach_running_servers_and_every_later_start() {
    let (host, driver) = host();
    let two = vec![Root::dir("/work/two")];
    within(
        "add rooted",
        host.add(fake_spec("rooted").root(Root::dir("/work/one"))),
    )
    .await
    .unwrap();
    // Advertised no roots when it connected; crashes after one call and restarts.
    let worn = fake_spec("worn")
        .env("FAKE_EXIT_AFTER_CALLS", "1")
        .restart(quick());
    within("add worn", host.add(worn)).await.unwrap();
    let refused = within("set_roots", host.set_roots(two.clone())).await;
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert_eq!(refused[0].0, "worn");
    assert!(refused[0].1.is_unsupported(), "{}", refused[0].1);
    assert_eq!(host.client("rooted").unwrap().roots(), two);
    assert!(host.client("worn").unwrap().roots().is_empty());
    // The restarted connection connects with the host's roots.
    host.call_tool("mcp__worn__echo", json!({"message": "one"}), timeout(20))
        .await
        .unwrap();
    eventually("the restart", || {
        let status = status_of(&host, "worn");
        status.restarts == 1 && status.state == ServerState::Running
    })
    .await;
    assert_eq!(host.client("worn").unwrap().roots(), two);
    // So does a server started afterwards.
    within("add late", host.add(fake_spec("late")))
        .await
        .unwrap();
    assert_eq!(host.client("late").unwrap().roots(), two);
    within("shutdown", host.shutdown()).await;
    within("the host driver", driver).await.unwrap();
}
