//! The version check of §1, the same function on both sides, and the two handshake decoders that
//! must run it before strict decoding (§6.1 steps 2 and 4).
//!
//! The check only compares against [`PROTOCOL_ID`] and [`PROTOCOL_MAJOR`]; there is no
//! negotiation. What to do on failure (answer and exit, kill the sidecar) is the caller's
//! business.

use serde_json::Value;

use crate::constants::{PROTOCOL_ID, PROTOCOL_MAJOR};
use crate::decode::{Seg, decode_value, parse};
use crate::error::{Error, Target};
use crate::lifecycle::{InitializeParams, InitializeResult};
use crate::profile::ProtocolProfile;
use crate::reason::Reason;
use crate::v2;

/// §1 step 1: `protocolId` must equal [`PROTOCOL_ID`] byte for byte, else
/// `unsupported_version`.
pub fn check_protocol_id(protocol_id: &str) -> Result<(), Reason> {
    if protocol_id == PROTOCOL_ID {
        Ok(())
    } else {
        Err(Reason::UnsupportedVersion)
    }
}

/// §1 steps 2–3: `protocolVersion` must be canonical decimal (`^(0|[1-9][0-9]*)$`), else
/// `protocol_error`; its value must equal [`PROTOCOL_MAJOR`], else `unsupported_version`.
pub fn check_protocol_version(protocol_version: &str) -> Result<(), Reason> {
    check_major(protocol_version, PROTOCOL_MAJOR)
}

/// §1 steps 2–3 for `major`: the canonical-decimal rule is kept in every profile (spec delta
/// §1.2: the reference's integer parse would also take `"02"`, which no reference peer sends).
fn check_major(protocol_version: &str, major: u64) -> Result<(), Reason> {
    let bytes = protocol_version.as_bytes();
    let canonical = match bytes {
        [] => false,
        [b'0'] => true,
        [first, rest @ ..] => (b'1'..=b'9').contains(first) && rest.iter().all(u8::is_ascii_digit),
    };
    if !canonical {
        return Err(Reason::ProtocolError);
    }
    // A canonical number too large for u64 is certainly not the major.
    match protocol_version.parse::<u64>() {
        Ok(denoted) if denoted == major => Ok(()),
        _ => Err(Reason::UnsupportedVersion),
    }
}

/// The whole check of §1 on the two identity members; `protocol_id` is `None` for results, which
/// carry no id. (A missing or non-string member is handled by [`decode_initialize_params`] and
/// [`decode_initialize_result`], which see the raw JSON.)
pub fn check_version(protocol_id: Option<&str>, protocol_version: &str) -> Result<(), Reason> {
    if let Some(id) = protocol_id {
        check_protocol_id(id)?;
    }
    check_protocol_version(protocol_version)
}

fn version_error(at: &Seg<'_>, reason: Reason, detail: String) -> Error {
    Error::Version {
        target: at.target(),
        path: at.render(),
        reason,
        detail,
    }
}

/// Checks `protocolVersion` of a parsed object; missing or non-string is `protocol_error`
/// (§6.1 step 2).
fn check_version_member(
    value: &Value,
    at: &Seg<'_>,
    profile: ProtocolProfile,
) -> Result<(), Error> {
    let here = at.key("protocolVersion");
    let Some(version) = value.get("protocolVersion").and_then(Value::as_str) else {
        return Err(version_error(
            &here,
            Reason::ProtocolError,
            "missing or not a string".into(),
        ));
    };
    check_version_text(version, &here, profile)
}

/// Runs §1 steps 2–3 on a version string found at `here`, for `profile`'s major.
fn check_version_text(
    version: &str,
    here: &Seg<'_>,
    profile: ProtocolProfile,
) -> Result<(), Error> {
    check_major(version, profile.major()).map_err(|reason| {
        let detail = match reason {
            Reason::ProtocolError => format!("{version:?} is not a canonical decimal"),
            _ => format!("major {version} is not {}", profile.major()),
        };
        version_error(here, reason, detail)
    })
}

/// Checks `capabilities.protocolVersion`, which the reference host sends (not in the spec's
/// table; see the crate docs): when present it must be the negotiated version, checked like the
/// top-level member. The top-level member has passed by now, so "canonical with major 1" means
/// "equal to it": v1 has exactly one canonical spelling of its major. Non-string is
/// `protocol_error`, as at the top level; a `capabilities` that is not an object is left to
/// strict decoding.
fn check_capabilities_version(
    value: &Value,
    at: &Seg<'_>,
    profile: ProtocolProfile,
) -> Result<(), Error> {
    let caps = at.key("capabilities");
    let here = caps.key("protocolVersion");
    let Some(member) = value
        .get("capabilities")
        .and_then(|c| c.get("protocolVersion"))
    else {
        return Ok(());
    };
    let Some(version) = member.as_str() else {
        return Err(version_error(
            &here,
            Reason::ProtocolError,
            "not a string".into(),
        ));
    };
    check_version_text(version, &here, profile)
}

/// Decodes `extension/initialize` params the way an SDK must (§6.1 step 2): the identity check
/// runs **before** strict decoding, so a foreign host gets `unsupported_version` (missing or
/// non-string `protocolId`, or another id or major) or `protocol_error` (missing, non-string or
/// non-canonical `protocolVersion`) rather than `invalid_params`, even when other members are
/// also invalid. `capabilities.protocolVersion`, which the reference host sends, is checked the
/// same way right after (another major is `unsupported_version`, a non-canonical or non-string
/// value `protocol_error`). Text that is not a duplicate-free JSON object fails as invalid
/// params.
pub fn decode_initialize_params(raw: Option<&str>) -> Result<InitializeParams, Error> {
    match decode_initialize_params_in(raw, &[ProtocolProfile::V1])? {
        Initialize::V1(params) => Ok(params),
        // Only V1 is accepted above; a V2 identity was refused before decoding.
        Initialize::V2(params) => Ok(params.common()),
    }
}

/// The params of `extension/initialize` in the profile the host chose.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Initialize {
    /// A v1 host's.
    V1(InitializeParams),
    /// A v2 host's.
    V2(v2::InitializeParams),
}

impl Initialize {
    /// The profile the host chose.
    pub fn profile(&self) -> ProtocolProfile {
        match self {
            Initialize::V1(_) => ProtocolProfile::V1,
            Initialize::V2(_) => ProtocolProfile::V2,
        }
    }

    /// The params as an extension's code sees them in any profile (see
    /// [`v2::InitializeParams::common`]).
    pub fn common(&self) -> InitializeParams {
        match self {
            Initialize::V1(params) => params.clone(),
            Initialize::V2(params) => params.common(),
        }
    }
}

/// [`decode_initialize_params`] for an SDK that speaks the profiles in `accepted` (spec delta
/// §1.4 P4): `protocolId` is read first and picks the profile (`reasonix.extension.v1` → V1,
/// `reasonix.extension.v2` → V2); an id of a profile not accepted, or of none, is
/// `unsupported_version`; then that profile's version checks (`protocolVersion` and
/// `capabilities.protocolVersion`: another major is `unsupported_version`, so a v1 id with
/// `"2"` is refused, and the other way round) and its strict decoding. With only
/// [`ProtocolProfile::V1`] accepted, this is exactly the v1 decoder.
pub fn decode_initialize_params_in(
    raw: Option<&str>,
    accepted: &[ProtocolProfile],
) -> Result<Initialize, Error> {
    let root = Seg::Root(Target::Params);
    let value = parse(raw.unwrap_or("{}"), &root)?;
    let mut profile = ProtocolProfile::V1;
    if value.is_object() {
        let here = root.key("protocolId");
        match value.get("protocolId").and_then(Value::as_str) {
            None => {
                return Err(version_error(
                    &here,
                    Reason::UnsupportedVersion,
                    "missing or not a string".into(),
                ));
            }
            Some(id) => {
                profile = ProtocolProfile::from_protocol_id(id)
                    .filter(|profile| accepted.contains(profile))
                    .ok_or_else(|| {
                        let expected: Vec<String> = (accepted.iter())
                            .map(|profile| format!("{:?}", profile.protocol_id()))
                            .collect();
                        let detail = match expected.as_slice() {
                            [one] => format!("{id:?} is not {one}"),
                            _ => format!("{id:?} is not one of {}", expected.join(", ")),
                        };
                        version_error(&here, Reason::UnsupportedVersion, detail)
                    })?;
            }
        }
        check_version_member(&value, &root, profile)?;
        check_capabilities_version(&value, &root, profile)?;
    }
    match profile {
        ProtocolProfile::V1 => decode_value(value, &root).map(Initialize::V1),
        ProtocolProfile::V2 => decode_value(value, &root).map(Initialize::V2),
    }
}

/// Decodes an `extension/initialize` result the way a host must (§6.1 step 4, §6.3 checks 1–3):
/// the version check first (non-canonical → `protocol_error`, major ≠ 1 →
/// `unsupported_version`), then strict decoding (`protocol_error`). Checks 4–8 are
/// [`InitializeResult::check_against_manifest`].
pub fn decode_initialize_result(raw: &str) -> Result<InitializeResult, Error> {
    let root = Seg::Root(Target::Result);
    let value = parse(raw, &root)?;
    if value.is_object() {
        check_version_member(&value, &root, ProtocolProfile::V1)?;
    }
    decode_value(value, &root)
}

/// [`decode_initialize_result`] for a connection in `profile`: the version check for that
/// profile's major first, then strict decoding against its DTO. A v1 result is returned in v2's
/// shape (no v2 members), so the host has one type to check.
pub fn decode_initialize_result_in(
    raw: &str,
    profile: ProtocolProfile,
) -> Result<v2::InitializeResult, Error> {
    let root = Seg::Root(Target::Result);
    let value = parse(raw, &root)?;
    if value.is_object() {
        check_version_member(&value, &root, profile)?;
    }
    match profile {
        ProtocolProfile::V1 => {
            let result: InitializeResult = decode_value(value, &root)?;
            Ok(v2::InitializeResult {
                protocol_version: result.protocol_version,
                name: result.name,
                version: result.version,
                component_id: None,
                subscriptions: result.subscriptions,
                replaces: result
                    .replaces
                    .iter()
                    .map(|s| s.as_str().to_owned())
                    .collect(),
                providers: result.providers,
                ui_actions: result.ui_actions,
                requires: Vec::new(),
                provides: Vec::new(),
                tools: Vec::new(),
                state_schema_version: result.state_schema_version,
            })
        }
        ProtocolProfile::V2 => decode_value(value, &root),
    }
}

#[cfg(test)]
mod tests;
