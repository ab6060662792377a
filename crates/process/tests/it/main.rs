//! The integration tests of `sidewire-process`: real child processes, and after each test the
//! proof (a `/proc` scan for a marker every test child carries in its environment) that none
//! of them survived.
//!
//! Run without libtest's harness: some tests re-execute this binary in a helper role (a parent
//! that gets SIGKILLed, a subreaper, a process with its own `SHELL` and `PATH`), chosen by an
//! environment variable, so process-global state never leaks into other tests.

mod close;
mod path;
mod reaper;
mod roles;
mod spawn;
mod supervise;
mod support;

use std::process::ExitCode;

use libtest_mimic::{Arguments, Trial};

macro_rules! tests {
    ($($path:path),* $(,)?) => {
        vec![$(Trial::test(stringify!($path).replace(' ', ""), || {
            $path();
            Ok(())
        })),*]
    };
}

fn main() -> ExitCode {
    if let Some(code) = roles::run_role() {
        return code;
    }
    let args = Arguments::from_args();
    let trials = tests![
        spawn::exits_are_typed_as_status_or_signal,
        spawn::stderr_is_kept_redacted_with_the_env_secrets_of_the_child,
        spawn::commands_that_are_not_paths_or_lack_a_directory_are_refused,
        spawn::a_program_that_cannot_start_is_a_spawn_error_with_its_cause,
        spawn::dropping_the_process_kills_the_group_without_a_runtime,
        spawn::dropping_an_unpolled_supervise_kills_and_reaps,
        spawn::a_sigkilled_parent_takes_its_child_along,
        spawn::low_priority_children_run_at_nice_10,
        spawn::a_command_never_shows_its_env_values,
        spawn::the_tail_can_be_redacted_with_a_later_redactor,
        close::a_child_ignoring_eof_and_sigterm_is_killed_after_the_budgets,
        close::a_child_exiting_on_eof_is_not_signalled,
        close::a_child_ignoring_eof_ends_on_sigterm,
        close::concurrent_closes_share_one_sequence,
        close::without_supervision_close_kills_and_reports_nothing,
        supervise::supervise_ends_promptly_when_a_setsid_daemon_holds_the_pipes,
        supervise::a_stderr_flood_neither_blocks_nor_grows_the_tail,
        supervise::what_the_leader_leaves_in_its_group_is_killed_at_the_reap,
        supervise::dropping_supervision_while_it_reads_the_last_of_stderr_still_finishes,
        path::a_command_on_path_runs_no_shell,
        path::a_miss_probes_the_login_shell_and_the_child_gets_the_merged_path,
        path::a_miss_everywhere_says_how_to_fix_it,
        reaper::the_subreaper_reaps_a_setsid_daemon_at_shutdown,
    ];
    libtest_mimic::run(&args, trials).exit_code()
}
