//! Unit tests of `Exit`.

use super::*;

#[test]
fn exits_describe_themselves_as_the_spec_words_them() {
    assert_eq!(Exit::Status(3).to_string(), "exited with status 3");
    assert_eq!(Exit::Signal(9).to_string(), "killed by signal 9");
    assert_eq!(Exit::Unknown.to_string(), "ended with an unknown status");
}

#[test]
fn raw_wait_statuses_map_to_codes_and_signals() {
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(
        Exit::from_status(ExitStatus::from_raw(3 << 8)),
        Exit::Status(3)
    );
    assert_eq!(Exit::from_status(ExitStatus::from_raw(9)), Exit::Signal(9));
    assert!(Exit::Status(0).success());
    assert_eq!(Exit::Signal(15).signal(), Some(15));
    assert_eq!(Exit::Signal(15).code(), None);
}
