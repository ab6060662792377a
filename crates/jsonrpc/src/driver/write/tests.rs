//! [`Lane`]: a skipped receive is only ever one whose waker is registered.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Wake, Waker};

use tokio::sync::mpsc;

use super::Lane;

/// A waker that counts its wakes.
#[derive(Default)]
struct Count(AtomicUsize);

impl Wake for Count {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

fn waker() -> (Arc<Count>, Waker) {
    let count = Arc::new(Count::default());
    (Arc::clone(&count), Waker::from(count))
}

fn wakes(count: &Count) -> usize {
    count.0.load(Ordering::SeqCst)
}

#[test]
fn a_send_wakes_the_lane_after_a_skipped_receive() {
    let (tx, rx) = mpsc::channel(4);
    let mut lane = Lane::new(rx);
    let (count, waker) = waker();
    let mut cx = Context::from_waker(&waker);
    assert!(lane.poll_recv(&mut cx).is_pending());
    assert!(lane.registered.is_some());
    // Skipped: the lane is empty and the waker is the registered one.
    assert!(lane.poll_recv(&mut cx).is_pending());
    tx.try_send(1).unwrap();
    assert_eq!(wakes(&count), 1);
    assert_eq!(lane.poll_recv(&mut cx), Poll::Ready(Some(1)));
    assert!(lane.registered.is_none());
}

#[test]
fn another_waker_is_registered_not_skipped() {
    let (tx, rx) = mpsc::channel(4);
    let mut lane = Lane::new(rx);
    let (first, one) = waker();
    assert!(lane.poll_recv(&mut Context::from_waker(&one)).is_pending());
    let (second, other) = waker();
    assert!(
        lane.poll_recv(&mut Context::from_waker(&other))
            .is_pending()
    );
    tx.try_send(1).unwrap();
    assert_eq!((wakes(&first), wakes(&second)), (0, 1));
}

#[test]
fn a_frame_taken_without_a_receive_forgets_the_registration() {
    let (tx, rx) = mpsc::channel(4);
    let mut lane = Lane::new(rx);
    let (count, waker) = waker();
    let mut cx = Context::from_waker(&waker);
    assert!(lane.poll_recv(&mut cx).is_pending());
    // The send takes the registered waker; the frame is then taken by `try_recv`.
    tx.try_send(1).unwrap();
    assert_eq!(lane.try_recv().ok(), Some(1));
    assert!(lane.registered.is_none());
    // So this receive is made (not skipped), and registers the waker again.
    assert!(lane.poll_recv(&mut cx).is_pending());
    tx.try_send(2).unwrap();
    assert_eq!(wakes(&count), 2);
}

#[test]
fn a_closed_lane_is_received_from_not_skipped() {
    let (tx, rx) = mpsc::channel::<u8>(4);
    let mut lane = Lane::new(rx);
    let (_count, waker) = waker();
    let mut cx = Context::from_waker(&waker);
    assert!(lane.poll_recv(&mut cx).is_pending());
    drop(tx);
    assert_eq!(lane.poll_recv(&mut cx), Poll::Ready(None));
}

#[tokio::test]
async fn a_receive_with_the_budget_spent_registers_nothing() {
    let (tx, rx) = mpsc::channel::<u8>(4);
    let mut lane = Lane::new(rx);
    // Spend the task's budget: each ready receive takes one unit.
    let (spend_tx, mut spend) = mpsc::unbounded_channel();
    for _ in 0..1000 {
        spend_tx.send(()).unwrap();
    }
    while tokio::task::coop::has_budget_remaining() {
        spend.recv().await.unwrap();
    }
    std::future::poll_fn(|cx| {
        // tokio answers `Pending` (and wakes the task) without registering the waker.
        assert!(lane.poll_recv(cx).is_pending());
        assert!(lane.registered.is_none());
        Poll::Ready(())
    })
    .await;
    // With budget again, the receive is made and registers.
    tokio::task::yield_now().await;
    std::future::poll_fn(|cx| {
        assert!(lane.poll_recv(cx).is_pending());
        assert!(lane.registered.is_some());
        Poll::Ready(())
    })
    .await;
    drop(tx);
}
