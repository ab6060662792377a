//! The integration tests of `sidewire-ext-host`: real sidecar processes (this binary,
//! re-executed) against a real host. Run without libtest's harness: a sidecar's stdout must
//! carry frames only, so `main` first checks whether it was started as one.
//!
//! Every test ends by proving that no process it started (sidecars and their grandchildren,
//! which record their pids under the plugin root) is still alive.
//!
//! # Conformance checklist (spec §17, host items) → tests
//!
//! Items 14, 19, 22–24, 32, 33, 49, 50, 59, 60, 69, 88–90 are SDK items. The Provider
//! extensions (§14) are tested in `providers`: item 91 and every host rule of §14.2 and §14.5.
//! The sidecar-side (S) items are what the conformance kit (`sidewire-ext-conformance`) checks;
//! its tests run it against the SDK's examples, the Python reference sidecar and the broken
//! fixtures.
//!
//! | # | test |
//! | --- | --- |
//! | 1, 2 | `failures::a_frame_of_exactly_the_cap_passes_and_one_more_byte_kills` |
//! | 3 | `chains::seq_counts_written_intercepts_only` (a 9 MiB payload fails locally with `frame_too_large`, nothing written) |
//! | 4 | `sidewire-jsonrpc`'s `oversized_responses_become_a_small_32603` (the spec allows a peer unit test: no host result can reach the limit) |
//! | 5, 6, 7 (frames) | `failures::junk_blank_lines_boms_and_repeated_members_are_fatal` |
//! | 7 (params), 8, 9, 10, 12, 13, 15, 20 | `failures::malformed_requests_from_a_sidecar_get_the_right_answers` |
//! | 11, 16 | `failures::saturated_prompts_do_not_stop_intercept_answers` (with `prompts_per_connection(32)`: by default a connection may have 4 prompts open, see `bounds::prompts_are_capped_per_connection_and_expire`) |
//! | 17 | `failures::a_sidecar_that_stops_reading_is_killed_after_the_write_stall` |
//! | 18 | `ui::an_action_never_answered_times_out_on_the_ui_deadline` |
//! | 21 | `lifecycle::the_first_frame_is_initialize_and_nothing_precedes_its_result` |
//! | 25 | `lifecycle::a_foreign_protocol_version_fails_with_unsupported_version_and_is_killed`, `lifecycle::a_version_refusal_names_the_side_that_refused` (host side vs sidecar side) |
//! | 26, 27, 28 | `lifecycle::handshake_claims_beyond_the_manifest_are_capability_not_declared` (`providers` without the capability, a ref outside `plugin/<pluginId>/`) |
//! | 29 | `lifecycle::malformed_handshake_results_are_protocol_errors` (a duplicate provider ref among them) |
//! | 30 | `lifecycle::traffic_before_initialized_poisons_the_connection` |
//! | 31 | `ui::the_gate_checks_capability_params_ui_and_staleness` (a publish sent right after `initialized` is served) |
//! | 34 | `lifecycle::a_silent_or_exiting_sidecar_fails_startup_with_cause_and_stderr`, `lifecycle::an_error_answer_to_initialize_fails_startup_with_its_reason` |
//! | 35 | `chains::intercepts_reach_only_manifest_and_handshake_subscribers` |
//! | 36 | `chains::seq_counts_written_intercepts_only` |
//! | 37 | `chains::members_run_by_priority_then_id_each_seeing_its_predecessor` |
//! | 38 | `chains::block_stops_the_walk_with_a_redacted_reason` |
//! | 39 | `chains::a_replacement_omitting_a_member_leaves_it_absent` |
//! | 40 | `chains::history_payloads_always_carry_messages` |
//! | 41, 45 | `chains::invalid_replacements_warn_once_when_optional_and_fail_when_required` |
//! | 42 | `chains::allow_and_deny_are_legal_only_at_permission_decision` |
//! | 43, 70 | `chains::the_first_permission_verdict_is_terminal_and_audited_once`, `sdk::the_allow_all_example_overrides_a_denial_and_is_audited`, `audit::an_override_is_never_granted_without_its_record` (no override without its durable record), `audit::a_required_or_slot_owner_override_without_its_record_fails_the_operation`, `audit::a_deny_or_continue_writes_no_audit_line` |
//! | 44 | `chains::host_decision_belongs_to_the_slot_owner` |
//! | 46 | `chains::timeouts_follow_the_point_and_the_clamped_manifest` |
//! | 47, 48 | `chains::a_late_answer_is_a_timeout_and_policy_decides_what_follows` |
//! | 51 | `chains::the_slot_owner_runs_after_the_chain_and_its_replace_is_final` |
//! | 52 | `chains::strategy_failures_fail_the_operation_even_for_optional_plugins` |
//! | 53 | `lifecycle::a_slot_claimed_twice_fails_the_build_before_any_spawn` |
//! | 54 | `chains::events_reach_every_recipient_once_as_notifications` |
//! | 55 | `chains::a_full_event_queue_drops_with_one_warning_and_delays_nothing`, `bounds::an_intercept_overtakes_a_backed_up_event_queue` (a slow reader: the intercept is written ahead of the backed-up events) |
//! | 56, 57 | `content::payloads_over_64_kib_are_externalized_and_read_back_in_pages` |
//! | 58 | `content::reads_past_the_end_of_evicted_or_foreign_refs_expire` |
//! | 61 | `chains::results_with_externalized_or_errors_are_failures_with_redacted_messages` |
//! | 62, 63, 65, 66 (undeclared card action) | `ui::the_gate_checks_capability_params_ui_and_staleness` |
//! | 64 | `sdk::the_status_card_example_publishes_at_once_and_answers_its_action` (first boot), `reload::ui_calls_of_staged_sidecars_wait_for_the_swap` (held during a reload; stale when it fails) |
//! | 66 (surfaceId in args), 67 (crashed) | `ui::card_actions_carry_the_surface_and_stale_surfaces_are_refused` |
//! | 67 (adopted) | `reload::ui_calls_of_staged_sidecars_wait_for_the_swap` |
//! | 68 | `ui::prompts_are_answered_by_field_key_with_the_governing_type` |
//! | 71 | `chains::block_stops_the_walk_with_a_redacted_reason` (block reason), `chains::results_with_externalized_or_errors_are_failures_with_redacted_messages` (peer error message), `lifecycle::a_silent_or_exiting_sidecar_fails_startup_with_cause_and_stderr` and `failures::a_stderr_flood_neither_blocks_nor_grows_the_tail` (stderr tails); manifest `env` secrets here, host-environment secrets in `chains::secrets_of_the_hosts_environment_are_redacted` (a host process started with `FOO_TOKEN` set, through `Redactor::from_process_env`) |
//! | 72 | `store::tests::a_manifest_with_an_unknown_member_is_refused_naming_its_path` (unit) and `sidewire-ext-protocol`'s manifest tests (`contributes`, `v1.3`, `v2`) |
//! | 73 | `store::tests::a_copy_install_keeps_permission_bits_and_inside_symlinks`, `store::tests::a_symlink_leaving_the_package_fails_the_install_naming_it` (unit) |
//! | 74 | `reload::reload_adopts_unchanged_and_restarts_changed_linked_plugins`, `reload::a_failed_reload_leaves_the_old_generation_and_burns_its_number` (renamed → stage `resolve`) |
//! | 75 | `lifecycle::refused_commands_never_spawn_and_fail_at_resolve`, `sidewire-ext-protocol`'s `launch::tests` (unit) |
//! | 76, 77 | `lifecycle::only_the_plugin_root_is_expanded_and_reasonix_variables_win` |
//! | 78 | `lifecycle::no_store_starts_nothing_and_disabled_plugins_never_start` |
//! | 79 | `lifecycle::boots_run_four_at_a_time_within_one_budget` |
//! | 80 | `failures::a_stderr_flood_neither_blocks_nor_grows_the_tail` |
//! | 81 | `failures::a_crash_fails_pending_and_later_calls_and_is_handled_once` |
//! | 82 | `failures::an_exit_is_a_crash_at_once_even_when_a_grandchild_holds_stdout` |
//! | 83 | `reload::crashed_and_failed_plugins_start_again_only_on_reload` |
//! | 84, 85 | `reload::a_failed_reload_leaves_the_old_generation_and_burns_its_number`, `reload::reload_adopts_unchanged_and_restarts_changed_linked_plugins`; idle-time reloads and merged requests (§13.3): `reload::a_reload_waits_for_running_turns_and_queued_requests_merge`, `reload::reloads_joining_one_cut_short_by_a_shutdown_are_shut_down`, `bounds::turns_start_while_a_reload_retires_old_sidecars` |
//! | 86 | `failures::a_sidecar_ignoring_shutdown_is_killed_on_budget_and_reaped` |
//! | 87 | `failures::shutdown_is_idempotent_and_reads_a_late_shutdown_timeout_answer` |
//! | 91 | `providers::gaps_fail_the_stream_and_a_late_chunk_in_time_does_not` (a chunk missing after the end, the gap timeout shortened), `providers::a_crash_mid_stream_is_provider_interrupted_at_once` (crash mid-stream, no fallback) |
//! | §14.2 catalog | `providers::the_handshake_catalog_routes_a_stream_that_ends_cleanly`, `providers::refresh_replaces_the_catalog_or_rejects_it_whole`, `provider::tests::catalogs_need_unique_refs_with_the_plugins_prefix` (unit) |
//! | §14.1 routing, §14 capability | `providers::unknown_refs_are_never_routed_and_foreign_streams_are_dropped` |
//! | §14.5 rules | `providers::early_reordered_and_duplicate_chunks_are_delivered_once_in_order`, `providers::gaps_fail_the_stream_and_a_late_chunk_in_time_does_not`, `providers::a_conflicting_end_or_an_interrupted_one_is_provider_interrupted`, `providers::an_error_chunk_or_end_error_fails_the_stream_redacted`, `providers::refused_failed_and_unanswered_opens`, `providers::cancel_ends_the_stream_even_when_the_sidecar_ignores_it`, `providers::dropping_a_stream_cancels_it_and_forgets_its_state`, `providers::a_full_inbound_queue_fails_the_connection`, `providers::opens_are_bounded_in_count_and_frame_size`; every state of the consumer machine in the `provider::tests` unit tests |
//! | beyond §14.5 (host rules of its own) | `providers::a_stream_with_nothing_new_for_its_idle_bound_ends_idle_and_is_cancelled` (the idle bound), `providers::an_invalid_chunk_fails_its_stream_naming_the_chunk_and_its_type` (a chunk that does not decode) |
//! | providers in other languages | `providers::the_sdk_provider_example_streams_through_the_host`, `providers::the_python_provider_fixture_streams_through_the_host`, and `sidewire-ext-conformance`'s `kit::the_python_provider_fixture_passes_everything_applicable` (it speaks all of v1 a provider needs) |
//! | bounds (no checklist item) | `bounds::surfaces_are_capped_per_plugin_and_in_id_length`, `bounds::prompts_are_capped_per_connection_and_expire`, `bounds::the_event_stream_is_bounded_in_bytes`; content refs in the `content` unit tests |
//!
//! # The v2 delta's checklist (spec delta §6, host items) → tests
//!
//! | # | test |
//! | --- | --- |
//! | 1, 2, 7 | `v2::the_go_starter_replay_is_served_in_v2`, `v2::the_go_allow_all_replay_overrides_a_denial_and_is_audited` (the reference host's frames, byte for byte, against the Go SDK's recorded answers) |
//! | 3, 10, 11, 12 (handshake), 13 | `v2::v2_handshakes_are_checked_in_the_v2_profile` |
//! | 8, 16, 18–21, 23, 25, 26, 29 | `v2_wire` (its module doc maps each) |
//! | 12, 14 | `v2::served_v2_tools_are_cataloged_and_called`, `v2::a_tool_call_is_bounded_and_a_crashed_sidecar_fails_fast` |
//! | 17 | `v2::a_v2_plugin_with_an_unmet_requirement_is_inactive_and_never_spawned` |
//! | 27 | `v2_again::*`: v1's chain, audit and content tests (items 35–56) re-run with every scripted plugin a v2 one |
//! | 32 | `v2::v2_names_wider_than_v1_install_and_start` |
//! | 38 | `v2::v2_tool_and_provider_slots_have_one_owner` |
//! | 39 | `v2::a_linked_plugin_moving_from_v1_to_v2_restarts_in_v2` |
//! | v1 and v2 side by side | `v2::a_v1_and_a_v2_sidecar_share_a_point` |
//!
//! Items 30, 31, 33–37 (Manifest v2) are `sidewire-ext-protocol`'s `v2::manifest` tests and
//! `package::contrib`'s; the sidecar-side items are the conformance kit's `D<n>` statements.

mod audit;
mod bounds;
mod chains;
mod content;
mod failures;
mod lifecycle;
mod providers;
mod reload;
mod sdk;
mod sidecar;
mod support;
mod ui;
mod v2;
mod v2_wire;

use std::process::ExitCode;
use std::time::Duration;

use libtest_mimic::{Arguments, Failed, Trial};

/// The overall deadline of one test: a guard against hangs, not a timing assertion. The
/// longest tests take several seconds on a quiet 2-core machine and several times that on a
/// loaded one.
const TEST_DEADLINE: Duration = Duration::from_secs(300);

/// Each test gets its own runtime and an overall deadline.
fn run<F: Future<Output = ()>>(test: impl FnOnce() -> F) -> Result<(), Failed> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    runtime
        .block_on(async { tokio::time::timeout(TEST_DEADLINE, test()).await })
        .map_err(|_| Failed::from(format!("the test did not finish within {TEST_DEADLINE:?}")))
}

/// The same on a current-thread runtime, for tests that must keep the host's own tasks from
/// running while they do something synchronous.
fn run_local<F: Future<Output = ()>>(test: impl FnOnce() -> F) -> Result<(), Failed> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime
        .block_on(async { tokio::time::timeout(TEST_DEADLINE, test()).await })
        .map_err(|_| Failed::from(format!("the test did not finish within {TEST_DEADLINE:?}")))
}

macro_rules! tests {
    ($($path:path),* $(,)?) => {
        vec![$(Trial::test(stringify!($path).replace(' ', ""), || run($path))),*]
    };
}

/// The same tests again with every scripted plugin a v2 one (spec delta §6 item 27: the hook
/// points, payloads, decisions, chain order and audit behave on v2 exactly as on v1), named
/// `v2_again::<test>`.
macro_rules! tests_on_v2 {
    ($($path:path),* $(,)?) => {
        vec![$(Trial::test(
            format!("v2_again::{}", stringify!($path).replace(' ', "")),
            || run(|| support::in_profile(sidewire_ext_protocol::ProtocolProfile::V2, $path())),
        )),*]
    };
}

fn main() -> ExitCode {
    if let Some(role) = sidecar::role() {
        return sidecar::run(&role);
    }
    let mut args = Arguments::from_args();
    // Most tests wait on processes and deadlines rather than compute.
    args.test_threads.get_or_insert(4);
    let mut trials = vec![Trial::test(
        "chains::a_full_event_queue_drops_with_one_warning_and_delays_nothing",
        || run_local(chains::a_full_event_queue_drops_with_one_warning_and_delays_nothing),
    )];
    // Item 27 of the v2 delta's checklist: v1's chain items (35–56) against v2 sidecars.
    trials.extend(tests_on_v2![
        chains::members_run_by_priority_then_id_each_seeing_its_predecessor,
        chains::block_stops_the_walk_with_a_redacted_reason,
        chains::a_replacement_omitting_a_member_leaves_it_absent,
        chains::history_payloads_always_carry_messages,
        chains::invalid_replacements_warn_once_when_optional_and_fail_when_required,
        chains::allow_and_deny_are_legal_only_at_permission_decision,
        chains::the_first_permission_verdict_is_terminal_and_audited_once,
        chains::host_decision_belongs_to_the_slot_owner,
        chains::timeouts_follow_the_point_and_the_clamped_manifest,
        chains::a_late_answer_is_a_timeout_and_policy_decides_what_follows,
        chains::the_slot_owner_runs_after_the_chain_and_its_replace_is_final,
        chains::strategy_failures_fail_the_operation_even_for_optional_plugins,
        chains::intercepts_reach_only_manifest_and_handshake_subscribers,
        chains::seq_counts_written_intercepts_only,
        chains::events_reach_every_recipient_once_as_notifications,
        chains::a_point_without_subscribers_returns_the_payload_untouched,
        lifecycle::a_slot_claimed_twice_fails_the_build_before_any_spawn,
        audit::an_override_is_never_granted_without_its_record,
        audit::a_deny_or_continue_writes_no_audit_line,
        content::payloads_over_64_kib_are_externalized_and_read_back_in_pages,
    ]);
    trials.extend(tests![
        lifecycle::no_store_starts_nothing_and_disabled_plugins_never_start,
        lifecycle::the_first_frame_is_initialize_and_nothing_precedes_its_result,
        lifecycle::a_foreign_protocol_version_fails_with_unsupported_version_and_is_killed,
        lifecycle::a_version_refusal_names_the_side_that_refused,
        lifecycle::handshake_claims_beyond_the_manifest_are_capability_not_declared,
        lifecycle::malformed_handshake_results_are_protocol_errors,
        lifecycle::traffic_before_initialized_poisons_the_connection,
        lifecycle::a_silent_or_exiting_sidecar_fails_startup_with_cause_and_stderr,
        lifecycle::an_error_answer_to_initialize_fails_startup_with_its_reason,
        lifecycle::refused_commands_never_spawn_and_fail_at_resolve,
        lifecycle::only_the_plugin_root_is_expanded_and_reasonix_variables_win,
        lifecycle::a_slot_claimed_twice_fails_the_build_before_any_spawn,
        lifecycle::boots_run_four_at_a_time_within_one_budget,
        lifecycle::a_sidecar_dies_with_its_host_when_the_host_is_sigkilled,
        chains::members_run_by_priority_then_id_each_seeing_its_predecessor,
        chains::block_stops_the_walk_with_a_redacted_reason,
        chains::secrets_of_the_hosts_environment_are_redacted,
        chains::a_replacement_omitting_a_member_leaves_it_absent,
        chains::history_payloads_always_carry_messages,
        chains::invalid_replacements_warn_once_when_optional_and_fail_when_required,
        chains::allow_and_deny_are_legal_only_at_permission_decision,
        chains::the_first_permission_verdict_is_terminal_and_audited_once,
        chains::host_decision_belongs_to_the_slot_owner,
        chains::timeouts_follow_the_point_and_the_clamped_manifest,
        chains::a_late_answer_is_a_timeout_and_policy_decides_what_follows,
        chains::the_slot_owner_runs_after_the_chain_and_its_replace_is_final,
        chains::strategy_failures_fail_the_operation_even_for_optional_plugins,
        chains::intercepts_reach_only_manifest_and_handshake_subscribers,
        chains::seq_counts_written_intercepts_only,
        chains::events_reach_every_recipient_once_as_notifications,
        chains::a_point_without_subscribers_returns_the_payload_untouched,
        chains::results_with_externalized_or_errors_are_failures_with_redacted_messages,
        failures::a_crash_fails_pending_and_later_calls_and_is_handled_once,
        failures::an_exit_is_a_crash_at_once_even_when_a_grandchild_holds_stdout,
        failures::junk_blank_lines_boms_and_repeated_members_are_fatal,
        failures::a_frame_of_exactly_the_cap_passes_and_one_more_byte_kills,
        failures::a_sidecar_that_stops_reading_is_killed_after_the_write_stall,
        failures::a_sidecar_ignoring_shutdown_is_killed_on_budget_and_reaped,
        failures::shutdown_is_idempotent_and_reads_a_late_shutdown_timeout_answer,
        failures::a_stderr_flood_neither_blocks_nor_grows_the_tail,
        failures::malformed_requests_from_a_sidecar_get_the_right_answers,
        failures::saturated_prompts_do_not_stop_intercept_answers,
        ui::the_gate_checks_capability_params_ui_and_staleness,
        ui::prompts_are_answered_by_field_key_with_the_governing_type,
        ui::card_actions_carry_the_surface_and_stale_surfaces_are_refused,
        ui::an_action_never_answered_times_out_on_the_ui_deadline,
        content::payloads_over_64_kib_are_externalized_and_read_back_in_pages,
        content::reads_past_the_end_of_evicted_or_foreign_refs_expire,
        reload::reload_adopts_unchanged_and_restarts_changed_linked_plugins,
        reload::a_failed_reload_leaves_the_old_generation_and_burns_its_number,
        reload::crashed_and_failed_plugins_start_again_only_on_reload,
        reload::ui_calls_of_staged_sidecars_wait_for_the_swap,
        chains::big_events_are_externalized_and_resource_changes_reach_every_sidecar,
        ui::a_crash_dismisses_open_prompts,
        sdk::the_starter_example_rewrites_input,
        v2::the_go_starter_replay_is_served_in_v2,
        v2::the_go_allow_all_replay_overrides_a_denial_and_is_audited,
        v2::a_v1_and_a_v2_sidecar_share_a_point,
        v2::v2_handshakes_are_checked_in_the_v2_profile,
        v2_wire::peer_errors_are_read_with_the_connections_reason_table,
        v2_wire::v2_streams_open_with_seq_base_one,
        v2_wire::chunks_of_a_superseded_generation_are_dropped,
        v2_wire::externalized_replacements_are_resolved_in_order,
        v2_wire::v2_panels_and_views_are_shown_and_checked,
        v2_wire::browser_requests_are_v2_only_and_refused,
        v2::v2_names_wider_than_v1_install_and_start,
        v2::a_v2_plugin_with_an_unmet_requirement_is_inactive_and_never_spawned,
        v2::v2_tool_and_provider_slots_have_one_owner,
        v2::a_linked_plugin_moving_from_v1_to_v2_restarts_in_v2,
        v2::served_v2_tools_are_cataloged_and_called,
        v2::a_tool_call_is_bounded_and_a_crashed_sidecar_fails_fast,
        sdk::the_allow_all_example_overrides_a_denial_and_is_audited,
        sdk::the_status_card_example_publishes_at_once_and_answers_its_action,
        sdk::each_example_runs_behind_its_v2_manifest,
        sdk::the_tools_example_serves_its_tools,
        audit::an_override_is_never_granted_without_its_record,
        audit::a_required_or_slot_owner_override_without_its_record_fails_the_operation,
        audit::a_deny_or_continue_writes_no_audit_line,
        bounds::an_intercept_overtakes_a_backed_up_event_queue,
        bounds::surfaces_are_capped_per_plugin_and_in_id_length,
        bounds::prompts_are_capped_per_connection_and_expire,
        bounds::the_event_stream_is_bounded_in_bytes,
        bounds::turns_start_while_a_reload_retires_old_sidecars,
        reload::a_reload_waits_for_running_turns_and_queued_requests_merge,
        reload::reloads_joining_one_cut_short_by_a_shutdown_are_shut_down,
        providers::the_handshake_catalog_routes_a_stream_that_ends_cleanly,
        providers::a_crash_mid_stream_is_provider_interrupted_at_once,
        providers::early_reordered_and_duplicate_chunks_are_delivered_once_in_order,
        providers::gaps_fail_the_stream_and_a_late_chunk_in_time_does_not,
        providers::a_conflicting_end_or_an_interrupted_one_is_provider_interrupted,
        providers::an_error_chunk_or_end_error_fails_the_stream_redacted,
        providers::refused_failed_and_unanswered_opens,
        providers::unknown_refs_are_never_routed_and_foreign_streams_are_dropped,
        providers::refresh_replaces_the_catalog_or_rejects_it_whole,
        providers::cancel_ends_the_stream_even_when_the_sidecar_ignores_it,
        providers::dropping_a_stream_cancels_it_and_forgets_its_state,
        providers::a_full_inbound_queue_fails_the_connection,
        providers::opens_are_bounded_in_count_and_frame_size,
        providers::the_sdk_provider_example_streams_through_the_host,
        providers::the_python_provider_fixture_streams_through_the_host,
        providers::an_open_stream_holds_off_a_reload_until_dropped,
        providers::a_stream_with_nothing_new_for_its_idle_bound_ends_idle_and_is_cancelled,
        providers::an_invalid_chunk_fails_its_stream_naming_the_chunk_and_its_type,
    ]);
    libtest_mimic::run(&args, trials).exit_code()
}
