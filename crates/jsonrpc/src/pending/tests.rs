use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use super::{Due, Expired, Expiry, IdInUse, IdleBound, InFlightIds, PendingTable};
use crate::Id;

fn at(cap: u64) -> Due {
    Due { cap, idle: None }
}

fn table(entries: &[(u64, u64)]) -> PendingTable<u64> {
    let mut table = PendingTable::new();
    for &(id, deadline) in entries {
        assert_eq!(table.insert(id, at(deadline), id), deadline);
    }
    table
}

/// The ids an expiry took, in order, each as it expired.
fn taken(expired: &Expired<u64>) -> Vec<u64> {
    expired.values.iter().map(|&(id, _)| id).collect()
}

#[test]
fn an_entry_leaves_once_whichever_way_comes_first() {
    let mut table = table(&[(1, 100), (2, 100), (3, 100), (4, 100)]);
    assert_eq!(table.complete("1"), Some(1));
    assert_eq!(table.complete("1"), None, "a second response is late");
    assert_eq!(
        table.cancel(1),
        None,
        "a cancel after the answer finds nothing"
    );
    assert_eq!(table.cancel(2), Some(2));
    assert_eq!(
        table.complete("2"),
        None,
        "a response after a cancel is late"
    );
    assert_eq!(taken(&table.expire(100)), vec![3, 4]);
    assert_eq!(
        table.complete("3"),
        None,
        "a response after the timeout is late"
    );
    assert_eq!(table.cancel(4), None);
    assert_eq!(table.len(), 0);
}

#[test]
fn only_an_integer_token_names_one_of_ours() {
    let mut table = table(&[(7, 100), (8, 100)]);
    for token in [
        "\"7\"",
        "7.0",
        "07",
        "-7",
        "7e0",
        "null",
        "18446744073709551623",
    ] {
        assert_eq!(table.complete(token), None, "{token}");
    }
    assert_eq!(table.len(), 2);
    assert_eq!(table.complete("7"), Some(7));
}

#[test]
fn expire_takes_what_is_due_earliest_first_and_names_the_next_deadline() {
    let mut table = table(&[(1, 50), (2, 10), (3, 30), (4, 10), (5, 90)]);
    let expired = table.expire(5);
    assert!(expired.values.is_empty());
    assert_eq!(expired.next_deadline, Some(10));
    // Due at exactly `now` counts; ties go by id.
    let expired = table.expire(30);
    assert_eq!(taken(&expired), vec![2, 4, 3]);
    assert_eq!(expired.next_deadline, Some(50));
    let expired = table.expire(u64::MAX - 1);
    assert_eq!(taken(&expired), vec![1, 5]);
    assert_eq!(expired.next_deadline, None);
}

#[test]
fn an_idle_bound_expires_without_activity_and_moves_with_it_never_past_the_cap() {
    let stamp = Arc::new(AtomicU64::new(0));
    let idle = |after| IdleBound {
        after: Duration::from_nanos(after),
        stamp: Arc::clone(&stamp),
    };
    let mut table = PendingTable::new();
    // Due at the sooner of the cap and the idle bound from the last activity.
    assert_eq!(
        table.insert(
            1,
            Due {
                cap: 100,
                idle: Some(idle(10)),
            },
            1,
        ),
        10
    );
    assert_eq!(table.insert(2, at(50), 2), 50);
    // Activity at 8: the bound's deadline came, but it moved to 18.
    stamp.store(8, Ordering::Release);
    let expired = table.expire(10);
    assert!(expired.values.is_empty());
    assert_eq!(expired.next_deadline, Some(18));
    // No activity since: idle.
    let expired = table.expire(18);
    assert_eq!(
        expired.values,
        vec![(1, Expiry::Idle(Duration::from_nanos(10)))]
    );
    assert_eq!(expired.next_deadline, Some(50));
    // Activity that keeps coming cannot pass the cap, and the cap is what ran out.
    stamp.store(95, Ordering::Release);
    table.insert(
        3,
        Due {
            cap: 100,
            idle: Some(idle(10)),
        },
        3,
    );
    assert_eq!(table.expire(50).next_deadline, Some(100));
    stamp.store(99, Ordering::Release);
    let expired = table.expire(100);
    assert_eq!(expired.values, vec![(3, Expiry::Deadline)]);
    assert_eq!(expired.next_deadline, None);
}

#[test]
fn an_oversized_response_fails_the_request_it_names_or_the_only_one() {
    let mut table = table(&[(1, 100), (2, 100)]);
    assert_eq!(table.complete_oversized(Some(2)), Some(2));
    // Named but not pending, with one left: that one is the only candidate.
    assert_eq!(table.complete_oversized(Some(9)), Some(1));
    let mut table = self::table(&[(1, 100), (2, 100)]);
    assert_eq!(
        table.complete_oversized(None),
        None,
        "two pending, none named"
    );
    assert_eq!(table.complete_oversized(Some(9)), None);
    assert_eq!(table.len(), 2);
    assert_eq!(table.cancel(1), Some(1));
    assert_eq!(table.complete_oversized(None), Some(2));
    assert_eq!(table.complete_oversized(None), None, "nothing pending");
}

#[test]
fn drain_takes_everything() {
    let mut table = table(&[(1, 10), (2, 20)]);
    let mut drained = table.drain();
    drained.sort_unstable();
    assert_eq!(drained, vec![1, 2]);
    assert_eq!(table.len(), 0);
    assert_eq!(table.expire(u64::MAX - 1).next_deadline, None);
}

#[test]
fn an_id_in_use_is_refused_until_its_request_finishes() {
    let mut ids = InFlightIds::default();
    let nine = Id::int(9);
    assert_eq!(ids.check(&nine), Ok(()));
    ids.start(nine.clone());
    assert_eq!(ids.check(&nine), Err(IdInUse));
    // Ids are kept verbatim: the string "9" is another id.
    assert_eq!(ids.check(&Id::string("9")), Ok(()));
    ids.finish(&nine);
    assert_eq!(ids.check(&nine), Ok(()));
    ids.start(nine.clone());
    ids.clear();
    assert_eq!(ids.check(&nine), Ok(()));
}

#[test]
fn a_local_failure_takes_only_the_request_its_id_names_and_only_once() {
    let mut table = table(&[(7, 100), (8, 100)]);
    assert_eq!(
        table.fail(&Id::string("7")),
        None,
        "a string id is never ours"
    );
    assert_eq!(table.fail(&Id::int(-7)), None);
    assert_eq!(
        table.fail(&Id::int(9)),
        None,
        "nothing pending: nothing taken"
    );
    assert_eq!(table.fail(&Id::int(7)), Some(7));
    assert_eq!(table.fail(&Id::int(7)), None, "failed twice");
    assert_eq!(
        table.complete("7"),
        None,
        "a response after the failure is late"
    );
    assert_eq!(table.len(), 1, "request 8 is untouched");
    assert_eq!(table.complete("8"), Some(8));
}
