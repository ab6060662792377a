//! The helpers fail the way a test relies on them to.

use std::time::Duration;

use super::{eventually, within};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a runtime")
}

#[test]
fn within_returns_the_value_of_a_future_that_finishes() {
    assert_eq!(
        runtime().block_on(within(Duration::from_secs(1), "a value", async { 7 })),
        7
    );
}

#[test]
fn within_panics_naming_what_it_waited_for() {
    let caught = std::panic::catch_unwind(|| {
        runtime().block_on(within(
            Duration::from_secs(1),
            "the answer",
            std::future::pending::<()>(),
        ))
    });
    let message = caught.expect_err("a pending future times out");
    let text = message.downcast_ref::<String>().expect("a formatted panic");
    assert!(text.contains("the answer"), "{text}");
}

#[test]
fn eventually_returns_once_the_check_holds_and_panics_when_it_never_does() {
    let mut calls = 0;
    runtime().block_on(eventually(Duration::from_secs(1), "three calls", || {
        calls += 1;
        calls == 3
    }));
    assert_eq!(calls, 3);
    let caught = std::panic::catch_unwind(|| {
        runtime().block_on(eventually(Duration::from_secs(1), "never", || false))
    });
    assert!(caught.is_err());
}
