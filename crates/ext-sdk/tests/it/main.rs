//! The SDK against a scripted host, over in-memory pipes and as the built example processes.
//!
//! # Conformance checklist (§17) → tests
//!
//! Every item marked S or (H,S):
//!
//! | # | Test |
//! | --- | --- |
//! | 1 | `intercept::the_inbound_frame_cap_is_exact` |
//! | 2 | `process::an_oversized_frame_exits_non_zero_with_frame_on_stderr` |
//! | 3 | `ui::an_oversized_publish_fails_locally_and_writes_nothing` |
//! | 4 | `intercept::an_oversized_result_becomes_a_small_internal_error` |
//! | 6 | `dispatch::blank_whitespace_and_bom_lines_are_fatal`, `dispatch::a_cr_before_the_lf_is_accepted` |
//! | 7 | `dispatch::repeated_member_names` |
//! | 8 | `dispatch::malformed_requests_are_rejected_before_any_handler_runs` |
//! | 9 | `dispatch::malformed_requests_are_rejected_before_any_handler_runs`, `dispatch::valid_ids_are_echoed_byte_for_byte` |
//! | 10 | `dispatch::valid_ids_are_echoed_byte_for_byte` |
//! | 11 | `dispatch::a_reused_pending_id_is_refused_and_the_first_still_answered` |
//! | 12 | `dispatch::notifications_and_stray_responses_are_never_answered` |
//! | 13 | `dispatch::unregistered_methods_are_unknown_method_even_with_bad_params`, `lifecycle::each_state_serves_only_its_requests`, `provider::provider_requests_follow_the_dispatch_order` (without a provider handler: `unknown_method` even with invalid params) |
//! | 14 | `ui::without_a_ui_handler_ui_requests_are_unknown_method` |
//! | 15 | every error assertion goes through `support::assert_error`, which checks `data.reason` and `data.retryable` against the table |
//! | 16 | `content::thirty_two_callbacks_wait_on_content_reads_at_once` |
//! | 19 | `content::an_unanswered_content_read_times_out_after_thirty_seconds` |
//! | 20 | `dispatch::params_that_fail_strict_decoding_are_invalid_params` |
//! | 22 | `lifecycle::a_foreign_protocol_id_is_unsupported_version_and_fatal`, `process::a_foreign_protocol_exits_non_zero_while_stdin_is_still_open` |
//! | 23 | `lifecycle::version_errors_are_answered_and_fatal` |
//! | 24 | `lifecycle::a_foreign_protocol_id_is_unsupported_version_and_fatal` |
//! | 32 | `lifecycle::each_state_serves_only_its_requests` |
//! | 33 | `lifecycle::host_calls_before_ready_fail_locally_and_write_nothing` |
//! | 49 | `intercept::a_callback_overrunning_its_budget_is_intercept_timeout`, `intercept::an_intercept_without_a_live_handler_continues` |
//! | 50 | `intercept::events_reach_observers_only_and_unbacked_handlers_are_reported` |
//! | 59 | `content::content_that_does_not_match_its_descriptor_is_protocol_error` |
//! | 60 | `content::an_externalized_payload_is_rehydrated_before_the_callback`, `content::descriptors_other_than_one_payload_pointer_are_invalid_params` |
//! | 69 | `ui::prompts_send_the_shapes_of_section_10_3` |
//! | 88 | `lifecycle::shutdown_accepts_cancels_callbacks_and_ends_at_end_of_input`, `lifecycle::end_of_input_is_orderly_in_every_state_but_mid_line`, `process::input_ending_mid_line_exits_non_zero` |
//! | 89 | `provider::chunks_are_numbered_from_seq_base_and_one_end_follows`, `provider::the_catalog_is_answered_checked_and_refreshes_the_served_refs` (`[]`), `process::the_provider_example_streams_the_scripted_model` |
//! | 90 | `provider::a_cancel_stops_the_stream_drops_the_producer_and_the_end_says_interrupted`, `provider::no_chunk_follows_a_processed_cancel_even_mid_flood`, the unit test `provider::tests::a_cancel_abandons_a_chunk_waiting_for_room` (a chunk waiting for room when the cancel is processed is never sent), `provider::a_producer_error_ends_the_stream_with_end_error_and_no_error_chunk` |
//!
//! Extension Protocol v2 (spec delta §6, S items of the per-connection tables) → tests in `v2`:
//!
//! | # | Test |
//! | --- | --- |
//! | 9 | `v2::a_zero_intercept_timeout_means_no_deadline_on_v2_and_is_invalid_on_v1`, `v2::a_zero_shutdown_timeout_puts_no_bound_on_the_hook_on_v2_only` |
//! | 22 | `v2::v2_streams_number_from_max_seq_base_one` (and the stream members `generation`/`epoch`) |
//! | 24 | `v2::empty_resource_paths_reach_the_callback_on_v2` |
//! | §2.2 dependency declarations, §1.4 P5 | `v2::dependency_declarations_are_sent_on_v2_within_the_manifest_ceiling_only` |
//! | 25 (S) | the unit test `error::tests::host_errors_are_read_with_the_connection_profile` |
//! | §1.4 P5, §2.7 | `v2::panels_are_published_on_v2_and_refused_locally_on_v1`, `v2::views_are_checked_locally_before_they_are_sent` |
//!
//! Interoperability with the reference host (issue 11; the deltas from the spec are listed in
//! `sidewire-ext-protocol`'s crate docs): `lifecycle::the_reference_hosts_first_frame_is_answered_and_the_session_runs`
//! replays its first frame verbatim, `lifecycle::a_capabilities_version_that_is_not_the_negotiated_one_is_refused_and_fatal`
//! and `lifecycle::the_reference_hosts_v1_era_manifest_lists_are_accepted_and_nothing_else_is`
//! hold the edges.
//!
//! Spec delta §6 (v2): item 15 and the SDK side of item 8 are in `tools` (served tools,
//! callback errors as `isError`, unserved names, invalid params without the callback, any JSON
//! for `arguments`, sorted handshake `tools`, `timeoutMillis` 0 as no deadline, and V1 where the
//! method is unregistered).
//!
//! Beyond the checklist: the handshake gate (`lifecycle::the_handshake_answers_and_nothing_is_written_before_initialized`),
//! the shutdown hook's budget, replacements and decisions refused locally
//! (`intercept::invalid_answers_are_refused_locally`), the concurrency limit, the samples and
//! the example manifests. The rest of §14.4 is in `provider`: invalid and `error` chunks, open
//! refusals (unknown ref, active id, provider refusal), the active-stream bound, shutdown
//! cancelling streams, backpressure, a bad catalog at the handshake.

mod content;
mod dispatch;
mod intercept;
mod lifecycle;
mod process;
mod provider;
mod support;
mod tools;
mod ui;
mod v2;
