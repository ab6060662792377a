//! The subreaper and the shutdown sweep, in a process of their own (the flag is
//! process-global).

use crate::roles;
use crate::support::Marker;

pub(crate) fn the_subreaper_reaps_a_setsid_daemon_at_shutdown() {
    let marker = Marker::new("subreaper");
    let mut child = roles::start(roles::SUBREAPER, &marker, &[]);
    let line = roles::first_line(&mut child);
    assert_eq!(line, "ok");
    assert!(child.wait().unwrap().success());
    marker.assert_none_survive();
}
