//! [`ProtocolProfile`]: which version of the protocol one connection speaks, chosen before its first
//! frame and fixed for its life (spec delta §1.4 P1). Every version-dependent value is asked of
//! the profile, so nothing mixes: the v1 profile's values are the v1 spec's, unchanged.

use crate::constants::{
    MANIFEST_API_VERSION, MANIFEST_API_VERSION_V2, PROTOCOL_ID, PROTOCOL_ID_V2, PROTOCOL_MAJOR,
    PROTOCOL_MAJOR_V2, PROTOCOL_VERSION, PROTOCOL_VERSION_V2,
};

/// The protocol version a connection speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ProtocolProfile {
    /// Extension Protocol v1 (`reasonix.extension.v1`), this project's own.
    V1,
    /// Extension Protocol v2 (`reasonix.extension.v2`), what the reference host and its Go SDK
    /// speak today.
    V2,
}

impl ProtocolProfile {
    /// Every profile, oldest first.
    pub const ALL: [ProtocolProfile; 2] = [ProtocolProfile::V1, ProtocolProfile::V2];

    /// The `protocolId` of `extension/initialize`.
    pub fn protocol_id(self) -> &'static str {
        match self {
            ProtocolProfile::V1 => PROTOCOL_ID,
            ProtocolProfile::V2 => PROTOCOL_ID_V2,
        }
    }

    /// The major version `protocolVersion` must denote.
    pub fn major(self) -> u64 {
        match self {
            ProtocolProfile::V1 => PROTOCOL_MAJOR,
            ProtocolProfile::V2 => PROTOCOL_MAJOR_V2,
        }
    }

    /// The wire form of the version, sent by both peers.
    pub fn protocol_version(self) -> &'static str {
        match self {
            ProtocolProfile::V1 => PROTOCOL_VERSION,
            ProtocolProfile::V2 => PROTOCOL_VERSION_V2,
        }
    }

    /// The manifest `apiVersion` of a plugin written for it.
    pub fn manifest_api_version(self) -> &'static str {
        match self {
            ProtocolProfile::V1 => MANIFEST_API_VERSION,
            ProtocolProfile::V2 => MANIFEST_API_VERSION_V2,
        }
    }

    /// The profile whose `protocolId` is `id`, byte for byte.
    pub fn from_protocol_id(id: &str) -> Option<ProtocolProfile> {
        ProtocolProfile::ALL
            .into_iter()
            .find(|profile| profile.protocol_id() == id)
    }
}

impl std::fmt::Display for ProtocolProfile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.protocol_id())
    }
}
