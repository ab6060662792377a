//! The setters' clamps hold: a value out of range is clamped, never stored as given.

use super::HostConfig;

fn config() -> HostConfig {
    HostConfig::new("/state", "s-1", "/workspace")
}

#[test]
fn prompts_per_connection_is_clamped_to_1_through_32() {
    assert_eq!(
        config()
            .prompts_per_connection(100)
            .get_prompts_per_connection(),
        32
    );
    assert_eq!(
        config()
            .prompts_per_connection(0)
            .get_prompts_per_connection(),
        1
    );
    assert_eq!(
        config()
            .prompts_per_connection(7)
            .get_prompts_per_connection(),
        7
    );
}

#[test]
fn the_shutdown_budget_is_at_least_one_millisecond() {
    assert_eq!(
        config()
            .shutdown_timeout_millis(0)
            .get_shutdown_timeout_millis(),
        1
    );
    assert_eq!(
        config()
            .shutdown_timeout_millis(250)
            .get_shutdown_timeout_millis(),
        250
    );
}

#[test]
fn the_defaults_are_the_specs_and_the_audit_log_lives_in_the_state_directory() {
    let config = config();
    assert_eq!(config.get_prompts_per_connection(), 4);
    assert_eq!(config.get_shutdown_timeout_millis(), 5_000);
    assert_eq!(
        config.get_audit_log(),
        std::path::Path::new("/state/audit.jsonl")
    );
}

#[test]
fn in_process_members_are_capped() {
    #[derive(Debug)]
    struct Nobody;
    impl crate::ChainMember for Nobody {
        fn id(&self) -> &str {
            "test:nobody"
        }
        fn priority(&self) -> i64 {
            0
        }
        fn intercepts(&self, _: sidewire_ext_protocol::HookPoint) -> bool {
            false
        }
        fn intercept<'a>(
            &'a self,
            _: sidewire_ext_protocol::HookPoint,
            _: &'a sidewire_ext_protocol::HookPayload,
        ) -> crate::MemberFuture<'a> {
            Box::pin(async {
                Ok(crate::MemberAnswer::new(
                    sidewire_ext_protocol::InterceptResult::continue_(),
                ))
            })
        }
    }
    let mut config = HostConfig::new("/state", "s", "/w");
    for _ in 0..=HostConfig::MAX_MEMBERS {
        config = config.member(std::sync::Arc::new(Nobody));
    }
    assert_eq!(config.get_members().len(), HostConfig::MAX_MEMBERS);
}
