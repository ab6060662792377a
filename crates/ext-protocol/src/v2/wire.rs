//! The v2 member sets of the DTOs a connection exchanges after its handshake, where they differ
//! from v1's (spec delta §2.2, §2.3, §2.9, §2.11): relaxed bounds (`timeoutMillis` ≥ 0, `paths`
//! may be `[]`), the optional `generation`/`epoch` of provider streams, and externalized
//! replacements. Each decodes strictly, rejecting every other member; where v1's type can carry
//! the value, `.0` or `common()` gives it, so code after the decoder is the same in both
//! profiles.

use serde::Serialize;
use serde_json::Value;

use crate::content::ExternalizedField;
use crate::decode::{Any, Dto, Enum, Fields, List, Nullable, Obj, Seg, Str, Uint, rule};
use crate::error::Error;
use crate::hooks::DecisionKind;
use crate::{intercept, lifecycle, provider};

/// The JSON pointer of an externalized replacement (spec delta §2.9).
pub const REPLACEMENT_POINTER: &str = "/replacement";

/// `InterceptParams` of a v2 host: v1's members, with `timeoutMillis` ≥ 0. A v2 host that
/// sends 0 sets no deadline on the callback (the reference SDK applies none).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(transparent)]
pub struct InterceptParams(pub intercept::InterceptParams);

impl Dto for InterceptParams {
    const NAME: &'static str = "InterceptParams";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        intercept::InterceptParams::read(f, Uint::ANY).map(InterceptParams)
    }
}

/// `ShutdownParams` of a v2 host: `timeoutMillis` ≥ 0; 0 puts no bound on the shutdown hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct ShutdownParams(pub lifecycle::ShutdownParams);

impl Dto for ShutdownParams {
    const NAME: &'static str = "ShutdownParams";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(ShutdownParams(lifecycle::ShutdownParams {
            timeout_millis: f.req("timeoutMillis", Uint::ANY)?,
        }))
    }
}

/// `ResourcesChangedParams` of a v2 host: `paths` may be empty.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct ResourcesChangedParams(pub intercept::ResourcesChangedParams);

impl Dto for ResourcesChangedParams {
    const NAME: &'static str = "ResourcesChangedParams";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        intercept::ResourcesChangedParams::read_maybe_empty(f).map(ResourcesChangedParams)
    }
}

/// `StreamOpenParams` of a v2 host: v1's members plus the optional `generation` and `epoch`
/// (the reference host sets neither). Its `seqBase` keeps v1's type; the numbering rule
/// differs (a v2 host sends 1, and chunks start at `max(seqBase, 1)`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StreamOpenParams {
    /// v1's members.
    #[serde(flatten)]
    pub open: provider::StreamOpenParams,
    /// The generation the stream belongs to (0 or absent: unset).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generation: Option<u64>,
    /// The dependency-identity fingerprint of that generation.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub epoch: String,
}

impl Dto for StreamOpenParams {
    const NAME: &'static str = "StreamOpenParams";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        let generation = f.opt("generation", Uint::ANY)?;
        let epoch = f.or_default("epoch", Str)?;
        Ok(StreamOpenParams {
            open: provider::StreamOpenParams::describe(f)?,
            generation,
            epoch,
        })
    }
}

/// `ProviderChunk` of a v2 stream: v1's chunk plus the optional `generation` and `epoch`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProviderChunk {
    /// v1's members.
    #[serde(flatten)]
    pub chunk: provider::ProviderChunk,
    /// The generation the chunk belongs to (0 or absent: unset).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generation: Option<u64>,
    /// The dependency-identity fingerprint of that generation.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub epoch: String,
}

impl Dto for ProviderChunk {
    const NAME: &'static str = "ProviderChunk";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        let generation = f.opt("generation", Uint::ANY)?;
        let epoch = f.or_default("epoch", Str)?;
        Ok(ProviderChunk {
            chunk: provider::ProviderChunk::describe(f)?,
            generation,
            epoch,
        })
    }
}

/// `StreamChunkParams` of a v2 sidecar: v1's members, a v2 [`ProviderChunk`], and the optional
/// `generation` and `epoch`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StreamChunkParams {
    /// The stream.
    pub stream_id: String,
    /// The chunk's number, ≥ 1.
    pub seq: u64,
    /// The chunk.
    pub chunk: ProviderChunk,
    /// The generation the chunk belongs to (0 or absent: unset).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generation: Option<u64>,
    /// The dependency-identity fingerprint of that generation.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub epoch: String,
}

impl Dto for StreamChunkParams {
    const NAME: &'static str = "StreamChunkParams";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(StreamChunkParams {
            stream_id: f.req("streamId", Str)?,
            seq: f.req("seq", Uint::POSITIVE)?,
            chunk: f.req("chunk", Obj::new())?,
            generation: f.opt("generation", Uint::ANY)?,
            epoch: f.or_default("epoch", Str)?,
        })
    }
}

impl StreamChunkParams {
    /// The generation the chunk names: the params' own, else the chunk's; 0 counts as unset
    /// (spec delta §2.11).
    pub fn generation(&self) -> Option<u64> {
        self.generation
            .filter(|g| *g != 0)
            .or(self.chunk.generation.filter(|g| *g != 0))
    }

    /// The chunk as v1's type (without `generation` and `epoch`).
    pub fn common(self) -> provider::StreamChunkParams {
        provider::StreamChunkParams {
            stream_id: self.stream_id,
            seq: self.seq,
            chunk: self.chunk.chunk,
        }
    }
}

/// `InterceptResult` of a v2 sidecar: v1's members plus `externalized` (spec delta §2.3, §2.9).
///
/// The decoder enforces the shape rules of §2.9 steps 1 and 2 (each a `protocol_error`): a
/// `replace` carries either an inline, non-null `replacement` and no descriptor, or no (or a
/// `null`) `replacement` and exactly one descriptor pointing at [`REPLACEMENT_POINTER`]; other
/// decisions carry neither. Resolving the descriptor is the host's (steps 3–6).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InterceptResult {
    /// The decision.
    pub decision: DecisionKind,
    /// Shown (redacted) for `block`/`deny`, recorded for `allow`.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// The inline replacement, when not externalized.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replacement: Option<Value>,
    /// The descriptor of an externalized replacement: empty, or exactly one.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub externalized: Vec<ExternalizedField>,
}

impl Dto for InterceptResult {
    const NAME: &'static str = "InterceptResult";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        let decision = f.req("decision", Enum::new())?;
        let reason = f.or_default("reason", Str)?;
        let replacement = f.opt("replacement", Nullable(Any))?;
        let result = InterceptResult {
            decision,
            reason,
            replacement: replacement.clone().flatten(),
            externalized: f.or_default("externalized", List(Obj::new()))?,
        };
        f.check(|at| {
            // `null` stands only for an externalized replacement.
            if replacement == Some(None) && result.externalized.is_empty() {
                return Err(rule(
                    &at.key("replacement"),
                    "is null but nothing is externalized",
                ));
            }
            check_replacement(&result, at)
        })?;
        Ok(result)
    }
}

fn check_replacement(result: &InterceptResult, at: &Seg<'_>) -> Result<(), Error> {
    let inline = result.replacement.is_some();
    match (result.decision, inline, result.externalized.as_slice()) {
        (DecisionKind::Replace, true, []) => Ok(()),
        (DecisionKind::Replace, false, []) => Err(rule(
            &at.key("replacement"),
            "is required when decision is \"replace\"",
        )),
        (DecisionKind::Replace, true, [_, ..]) => Err(rule(
            &at.key("externalized"),
            "is not allowed with an inline replacement",
        )),
        (DecisionKind::Replace, false, [one]) if one.json_pointer == REPLACEMENT_POINTER => Ok(()),
        (DecisionKind::Replace, false, [_]) => Err(rule(
            &at.key("externalized").index(0).key("jsonPointer"),
            format!("must be {REPLACEMENT_POINTER:?}"),
        )),
        (DecisionKind::Replace, false, [_, ..]) => Err(rule(
            &at.key("externalized"),
            "must hold exactly one descriptor",
        )),
        (_, true, _) => Err(rule(
            &at.key("replacement"),
            "is allowed only when decision is \"replace\"",
        )),
        (_, false, [_, ..]) => Err(rule(
            &at.key("externalized"),
            "is allowed only when decision is \"replace\"",
        )),
        (_, false, []) => Ok(()),
    }
}

impl InterceptResult {
    /// The result as v1's type when nothing is externalized; `None` for an externalized
    /// replacement, which the host resolves first.
    pub fn common(&self) -> Option<intercept::InterceptResult> {
        self.externalized
            .is_empty()
            .then(|| intercept::InterceptResult {
                decision: self.decision,
                reason: self.reason.clone(),
                replacement: self.replacement.clone(),
            })
    }
}

#[cfg(test)]
mod tests;
