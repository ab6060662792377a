//! Unit tests of the host's batch start: how many startups a batch holds at once, and what an
//! abandoned batch leaves behind.

use std::sync::atomic::Ordering;
use std::time::Duration;

use futures_util::FutureExt as _;
use sidewire_test_support::within;

use super::{MAX_PARALLEL_STARTS, McpHost, ServerState};
use crate::{NoHandler, ServerSpec};

const WAIT: Duration = Duration::from_secs(60);

/// A batch creates each startup only when one of the [`MAX_PARALLEL_STARTS`] places frees, so
/// what it holds does not grow with its size. Each startup once lived for the whole batch:
/// memory grew with the servers, and with it the cost of every spawn's `fork` (which copies the
/// parent's page tables), so a batch cost O(servers²). The results still come in order.
#[tokio::test]
async fn a_batch_holds_at_most_the_start_window_of_startups_at_once() {
    let (host, driver) = McpHost::new(NoHandler);
    let driver = tokio::spawn(driver);
    // A command that does not exist fails at launch, quickly and without a process; the
    // disabled ones and a repeated name are filed without one.
    let mut specs: Vec<ServerSpec> = (0..200)
        .map(|i| ServerSpec::stdio(&format!("s{i:03}"), "/nonexistent/sidewire-test-server"))
        .collect();
    specs.push(ServerSpec::stdio("off", "/bin/true").enabled(false));
    specs.push(ServerSpec::stdio("s000", "/bin/true"));
    let results = within(WAIT, "the batch", host.start_batch(specs)).await;
    let names: Vec<&str> = results.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(names.len(), 202);
    assert_eq!(
        (names[0], names[199], names[200], names[201]),
        ("s000", "s199", "off", "s000")
    );
    assert!(results[..200].iter().all(|(_, r)| r.is_err()));
    assert!(results[200].1.is_ok());
    let repeated = results[201]
        .1
        .as_ref()
        .expect_err("a repeated name is refused");
    assert!(repeated.0.is_already_exists(), "{}", repeated.0);
    let peak = host.inner.probe.peak.load(Ordering::SeqCst);
    assert!(
        (1..=MAX_PARALLEL_STARTS).contains(&peak),
        "{peak} startups were alive at once"
    );
    assert_eq!(host.inner.probe.alive.load(Ordering::SeqCst), 0);
    host.shutdown().await;
    within(WAIT, "the host driver", driver).await.unwrap();
}

/// A batch dropped after its first poll (every name filed as starting, the first startups in
/// flight, the rest queued) leaves no server starting for ever: each name is free again.
#[tokio::test]
async fn an_abandoned_batch_leaves_no_server_starting() {
    let (host, driver) = McpHost::new(NoHandler);
    let driver = tokio::spawn(driver);
    // `sleep` never answers initialize: the startups stay in flight until dropped.
    let specs: Vec<ServerSpec> = (0..20)
        .map(|i| ServerSpec::stdio(&format!("s{i}"), "/bin/sleep").arg("30"))
        .collect();
    assert!(host.start_available(specs).now_or_never().is_none());
    let starting: Vec<String> = (host.status().into_iter())
        .filter(|s| s.state == ServerState::Starting)
        .map(|s| s.name)
        .collect();
    assert!(starting.is_empty(), "still starting: {starting:?}");
    // The name can be started again (and fail, as it never answers) rather than being refused
    // as already starting.
    let again = ServerSpec::stdio("s0", "/nonexistent/sidewire-test-server");
    let err = within(WAIT, "a new start", host.add(again))
        .await
        .expect_err("no such command");
    assert!(!err.is_already_exists(), "{err}");
    host.shutdown().await;
    within(WAIT, "the host driver", driver).await.unwrap();
}
