//! Intercept and event DTOs (§7.1, §8): `extension/intercept`, `extension/event` and
//! `extension/resources/changed`.
//!
//! The `payload` of an intercept or event is decoded as the DTO of its `event` point, and the
//! externalization rule of §9 (payload `null` iff exactly one `/payload` descriptor) is a
//! type-level rule of both DTOs. A replacement is decoded only as `any` here, because the result
//! does not name its point; the host re-validates it with
//! [`HookPoint::validate_replacement`](crate::HookPoint::validate_replacement).

use serde::Serialize;
use serde_json::{Value, json};

use crate::content::ExternalizedField;
use crate::decode::{
    Any, Dto, Enum, Fields, List, NonEmptyList, Nullable, Obj, Seg, Str, Uint, rule,
};
use crate::error::Error;
use crate::hooks::{DecisionKind, HookPayload, HookPoint, PayloadOf, payload_schema_rules};

/// The JSON pointer of the only descriptor v1 allows (§9).
pub const PAYLOAD_POINTER: &str = "/payload";

/// `InterceptParams` (H→E).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InterceptParams {
    /// The hook point.
    pub event: HookPoint,
    /// Per connection: 1 for the first intercept written, +1 for each following one.
    pub seq: u64,
    /// The point's payload; `None` (sent as `null`) only when externalized.
    pub payload: Option<HookPayload>,
    /// The effective budget in milliseconds (§7.9), ≥ 1.
    pub timeout_millis: u64,
    /// The descriptor of an externalized payload (§9): empty, or exactly one `/payload`
    /// descriptor.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub externalized: Vec<ExternalizedField>,
}

impl Dto for InterceptParams {
    const NAME: &'static str = "InterceptParams";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        InterceptParams::read(f, Uint::POSITIVE)
    }
}

impl InterceptParams {
    /// The members, with `timeoutMillis` of at least `timeout` (v1: ≥ 1; v2: ≥ 0).
    pub(crate) fn read(f: &mut Fields<'_>, timeout: Uint) -> Result<Self, Error> {
        let event = f.req("event", Enum::new())?;
        let params = InterceptParams {
            event,
            seq: f.req("seq", Uint::POSITIVE)?,
            payload: f.req("payload", Nullable(PayloadOf(event)))?,
            timeout_millis: f.req("timeoutMillis", timeout)?,
            externalized: f.or_default("externalized", List(Obj::new()))?,
        };
        f.check(|at| check_externalized(params.payload.is_some(), &params.externalized, at))?;
        f.schema_rule(payload_schema_rules);
        Ok(params)
    }
}

/// `EventParams` (H→E notification).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EventParams {
    /// The hook point.
    pub event: HookPoint,
    /// The point's payload; `None` (sent as `null`) only when externalized.
    pub payload: Option<HookPayload>,
    /// As in [`InterceptParams::externalized`].
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub externalized: Vec<ExternalizedField>,
}

impl Dto for EventParams {
    const NAME: &'static str = "EventParams";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        let event = f.req("event", Enum::new())?;
        let params = EventParams {
            event,
            payload: f.req("payload", Nullable(PayloadOf(event)))?,
            externalized: f.or_default("externalized", List(Obj::new()))?,
        };
        f.check(|at| check_externalized(params.payload.is_some(), &params.externalized, at))?;
        f.schema_rule(payload_schema_rules);
        Ok(params)
    }
}

/// §9 rehydration rule: no descriptor and an inline payload, or a `null` payload and exactly one
/// descriptor pointing at `/payload`; any other combination is invalid.
fn check_externalized(
    inline: bool,
    externalized: &[ExternalizedField],
    at: &Seg<'_>,
) -> Result<(), Error> {
    match (inline, externalized) {
        (true, []) => Ok(()),
        (false, []) => Err(rule(
            &at.key("payload"),
            "is null but nothing is externalized",
        )),
        (true, [_, ..]) => Err(rule(
            &at.key("payload"),
            "must be null when it is externalized",
        )),
        (false, [one]) if one.json_pointer == PAYLOAD_POINTER => Ok(()),
        (false, [_]) => Err(rule(
            &at.key("externalized").index(0).key("jsonPointer"),
            format!("must be {PAYLOAD_POINTER:?}"),
        )),
        (false, [_, ..]) => Err(rule(
            &at.key("externalized"),
            "must hold exactly one descriptor",
        )),
    }
}

/// `InterceptResult` (E→H). It has no `externalized` member: replacements always travel inline.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InterceptResult {
    /// The decision.
    pub decision: DecisionKind,
    /// Shown (redacted) for `block`/`deny`, recorded for `allow`.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// The new payload; present and non-null iff `decision` is `replace`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replacement: Option<Value>,
}

impl InterceptResult {
    /// `{"decision":"continue"}`.
    pub fn continue_() -> Self {
        InterceptResult {
            decision: DecisionKind::Continue,
            reason: String::new(),
            replacement: None,
        }
    }
}

impl Dto for InterceptResult {
    const NAME: &'static str = "InterceptResult";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        let result = InterceptResult {
            decision: f.req("decision", Enum::new())?,
            reason: f.or_default("reason", Str)?,
            replacement: f.opt("replacement", Any)?,
        };
        f.check(|at| match (result.decision, result.replacement.is_some()) {
            (DecisionKind::Replace, false) => Err(rule(
                &at.key("replacement"),
                "is required when decision is \"replace\"",
            )),
            (decision, true) if decision != DecisionKind::Replace => Err(rule(
                &at.key("replacement"),
                "is allowed only when decision is \"replace\"",
            )),
            _ => Ok(()),
        })?;
        f.schema_rule(|_| {
            json!({
                "if": {"properties": {"decision": {"const": "replace"}}},
                "then": {"required": ["replacement"]},
                "else": {"not": {"required": ["replacement"]}}
            })
        });
        Ok(result)
    }
}

/// `ResourcesChangedParams` (H→E notification).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ResourcesChangedParams {
    /// Absolute paths of changed plugin or workspace resources; never empty.
    pub paths: Vec<String>,
}

impl Dto for ResourcesChangedParams {
    const NAME: &'static str = "ResourcesChangedParams";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(ResourcesChangedParams {
            paths: f.req("paths", NonEmptyList(Str))?,
        })
    }
}

impl ResourcesChangedParams {
    /// The members with `paths` allowed to be empty (v2, spec delta §2.2).
    pub(crate) fn read_maybe_empty(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(ResourcesChangedParams {
            paths: f.req("paths", List(Str))?,
        })
    }
}

#[cfg(test)]
mod tests;
