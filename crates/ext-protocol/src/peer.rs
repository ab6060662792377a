//! The extension protocol's settings for a `sidewire-jsonrpc` peer, shared by host and SDK.

use std::time::Duration;

use sidewire_jsonrpc::{Config, Hooks, LocalError, Profile};

use crate::{FRAME_BYTES, MIN_CONCURRENT_CALLBACKS, Reason, WRITE_STALL_TIMEOUT};

/// The jsonrpc hooks of Extension Protocol v1: every error the peer generates itself carries
/// `data: {"reason": ..., "retryable": ...}` (spec §3). The protocol has no cancel notification
/// (a late answer is simply ignored, §2.2), so nothing is sent when a call is abandoned.
#[derive(Debug, Clone, Copy, Default)]
pub struct ExtensionHooks;

impl Hooks for ExtensionHooks {
    fn error_data(&self, kind: LocalError) -> Option<serde_json::Value> {
        Some(reason_of(kind).data())
    }
}

/// The reason an error the peer generates itself is reported with.
pub fn reason_of(kind: LocalError) -> Reason {
    match kind {
        LocalError::InvalidRequest => Reason::ProtocolError,
        LocalError::MethodNotFound => Reason::UnknownMethod,
        LocalError::InvalidParams => Reason::InvalidParams,
        // Internal failures, oversized results, a full queue and shutdown are all retryable
        // `internal` errors in the v1 table.
        _ => Reason::Internal,
    }
}

/// A jsonrpc configuration for one extension-protocol connection: the strict profile, the
/// 8 MiB frame cap in both directions, fatal garbage, no batches, at least the 32 concurrent
/// callbacks §2.4 asks for, the 10 s write-stall bound, and [`ExtensionHooks`].
pub fn jsonrpc_config() -> Config {
    Config::new(Profile::Strict, FRAME_BYTES)
        .max_concurrent_requests(MIN_CONCURRENT_CALLBACKS)
        .write_stall(WRITE_STALL_TIMEOUT)
        .request_timeout(Duration::from_secs(30))
        .hooks(ExtensionHooks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_errors_carry_the_v1_reason_data() {
        let data = ExtensionHooks
            .error_data(LocalError::MethodNotFound)
            .unwrap();
        assert_eq!(
            data,
            serde_json::json!({"reason": "unknown_method", "retryable": false})
        );
        let data = ExtensionHooks
            .error_data(LocalError::ResponseTooLarge)
            .unwrap();
        assert_eq!(
            data,
            serde_json::json!({"reason": "internal", "retryable": true})
        );
        assert_eq!(reason_of(LocalError::InvalidRequest), Reason::ProtocolError);
        assert_eq!(reason_of(LocalError::InvalidParams), Reason::InvalidParams);
    }

    #[test]
    fn config_is_strict_with_the_protocol_cap() {
        let config = jsonrpc_config();
        assert_eq!(config.profile(), Profile::Strict);
        assert_eq!(config.max_frame(), FRAME_BYTES);
    }
}
