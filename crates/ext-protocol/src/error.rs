//! The one error type of this crate: why a received value failed strict decoding (§4), the
//! version check (§1) or the handshake's manifest checks (§6.3).
//!
//! Errors name the JSON path of the offending member (`params.session.sessionId`) and know what
//! was being decoded, so they map to the reason a peer must answer with (§4 failure mapping). This
//! is not the wire error: [`ErrorObject`] and [`Reason`] are the plain data that travel, and
//! [`Error::to_error_object`] bridges the two.

use sidewire_jsonrpc::ErrorObject;

use crate::reason::Reason;

/// What a decode call was decoding; it fixes the root of error paths and the failure reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Target {
    /// The params of a received request or notification (root `params`, reason
    /// `invalid_params`).
    Params,
    /// The result of a received response (root `result`, reason `protocol_error`).
    Result,
    /// A rehydrated intercept or event payload (§9; root `params.payload`, reason
    /// `invalid_params`).
    Payload,
    /// An intercept replacement being re-validated (§7.8; root `result.replacement`, reason
    /// `protocol_error`; the host treats it as a violation).
    Replacement,
    /// A `reasonix-plugin.json` manifest (§12.1; paths start at its top level).
    Manifest,
}

impl Target {
    /// The path that errors of this target start with (empty for the manifest).
    pub fn root(self) -> &'static str {
        match self {
            Target::Params => "params",
            Target::Result => "result",
            Target::Payload => "params.payload",
            Target::Replacement => "result.replacement",
            Target::Manifest => "",
        }
    }

    /// The reason a decoding failure of this target produces (§4).
    ///
    /// A manifest never travels on the wire; its failures map to `invalid_params` so that a caller
    /// that must name a reason has the closest one.
    pub fn reason(self) -> Reason {
        match self {
            Target::Params | Target::Payload | Target::Manifest => Reason::InvalidParams,
            Target::Result | Target::Replacement => Reason::ProtocolError,
        }
    }
}

/// Why a received value was rejected.
///
/// Variants say *what* was wrong; callers branch with the `is_*` predicates and [`Error::reason`],
/// never on the `Display` text, which is for people and may change. Every variant carries the
/// [`Target`] and the JSON path of the offending member.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The text is not one JSON value (bad syntax, or trailing data after it).
    #[error("{}: not a single JSON value: {detail}", show(path))]
    Syntax {
        /// What was being decoded.
        target: Target,
        /// Where the problem was found.
        path: String,
        /// The parser's description, with line and column.
        detail: String,
    },
    /// A required member is absent (§4 rule 2).
    #[error("{}: required member is missing", show(path))]
    Missing {
        /// What was being decoded.
        target: Target,
        /// The path of the missing member.
        path: String,
    },
    /// A member the DTO does not define (§4 rule 4).
    #[error("{}: unknown member", show(path))]
    Unknown {
        /// What was being decoded.
        target: Target,
        /// The path of the unknown member.
        path: String,
    },
    /// An object repeats a member name (§4 rule 9).
    #[error("{}: member name is repeated", show(path))]
    Duplicate {
        /// What was being decoded.
        target: Target,
        /// The path of the repeated member.
        path: String,
    },
    /// `null` where the member is not nullable (§4 rule 3).
    #[error("{}: null is not allowed here", show(path))]
    Null {
        /// What was being decoded.
        target: Target,
        /// The path of the null member.
        path: String,
    },
    /// The JSON type is wrong, including a fraction or exponent for an integer (§4 rule 5).
    #[error("{}: expected {expected}, found {found}", show(path))]
    Type {
        /// What was being decoded.
        target: Target,
        /// The path of the member.
        path: String,
        /// The expected type.
        expected: &'static str,
        /// What was there instead.
        found: String,
    },
    /// A number is outside its range (§0, §4 rule 5, and range rules of a DTO).
    #[error("{}: {found} is out of range ({expected})", show(path))]
    Range {
        /// What was being decoded.
        target: Target,
        /// The path of the member.
        path: String,
        /// The allowed range.
        expected: String,
        /// The rejected number, as text.
        found: String,
    },
    /// A string that is not one of the enum's values (§4 rule 6).
    #[error("{}: {found:?} is not one of {expected}", show(path))]
    Enum {
        /// What was being decoded.
        target: Target,
        /// The path of the member.
        path: String,
        /// The rejected value (shortened).
        found: String,
        /// The allowed values, comma-separated.
        expected: String,
    },
    /// A "non-empty" string with no character outside Unicode `White_Space` (§4 rule 7).
    #[error("{}: must contain a character that is not white space", show(path))]
    Blank {
        /// What was being decoded.
        target: Target,
        /// The path of the member.
        path: String,
    },
    /// A string that does not match its pattern: a sha256, an action id, a plugin id (§4 rule 7).
    #[error("{}: {found:?} does not match {expected}", show(path))]
    Pattern {
        /// What was being decoded.
        target: Target,
        /// The path of the member.
        path: String,
        /// The rejected value (shortened).
        found: String,
        /// The pattern, as the spec writes it.
        expected: &'static str,
    },
    /// A type-level rule of the DTO failed (§4 rule 8), such as "`replacement` present iff
    /// `decision` is `replace`" or an entry repeated in a no-duplicates list.
    #[error("{}: {rule}", show(path))]
    Rule {
        /// What was being decoded.
        target: Target,
        /// The path of the member the rule is about.
        path: String,
        /// The rule that failed.
        rule: String,
    },
    /// A handshake claim beyond the installed manifest (§6.3 checks 4–8); the reason is
    /// `capability_not_declared`.
    #[error("{}: {detail}", show(path))]
    Undeclared {
        /// What was being checked.
        target: Target,
        /// The offending entry (`result.subscriptions[1]`, …).
        path: String,
        /// What the manifest lacks.
        detail: String,
    },
    /// The version check of §1 failed; [`Error::reason`] is `unsupported_version` or
    /// `protocol_error` as §1 and §6.1 say.
    #[error("{}: {detail}", show(path))]
    Version {
        /// What was being decoded.
        target: Target,
        /// The member checked (`params.protocolId`, `result.protocolVersion`, …).
        path: String,
        /// The reason the check produced.
        reason: Reason,
        /// What was wrong.
        detail: String,
    },
}

/// Shows an empty path (the manifest's top level) readably.
fn show(path: &str) -> &str {
    if path.is_empty() { "(top level)" } else { path }
}

impl Error {
    /// The JSON path of the offending member, such as `params.session.sessionId` or
    /// `params.messages[2].role`; empty for a manifest's top level.
    pub fn path(&self) -> &str {
        match self {
            Error::Syntax { path, .. }
            | Error::Missing { path, .. }
            | Error::Unknown { path, .. }
            | Error::Duplicate { path, .. }
            | Error::Null { path, .. }
            | Error::Type { path, .. }
            | Error::Range { path, .. }
            | Error::Enum { path, .. }
            | Error::Blank { path, .. }
            | Error::Pattern { path, .. }
            | Error::Rule { path, .. }
            | Error::Undeclared { path, .. }
            | Error::Version { path, .. } => path,
        }
    }

    /// What was being decoded.
    pub fn target(&self) -> Target {
        match self {
            Error::Syntax { target, .. }
            | Error::Missing { target, .. }
            | Error::Unknown { target, .. }
            | Error::Duplicate { target, .. }
            | Error::Null { target, .. }
            | Error::Type { target, .. }
            | Error::Range { target, .. }
            | Error::Enum { target, .. }
            | Error::Blank { target, .. }
            | Error::Pattern { target, .. }
            | Error::Rule { target, .. }
            | Error::Undeclared { target, .. }
            | Error::Version { target, .. } => *target,
        }
    }

    /// The reason a peer answers or fails with (§4 failure mapping, §1 version check): the
    /// target's reason, except for version errors, which carry their own, and manifest-claim
    /// errors, which are `capability_not_declared`.
    pub fn reason(&self) -> Reason {
        match self {
            Error::Version { reason, .. } => *reason,
            Error::Undeclared { .. } => Reason::CapabilityNotDeclared,
            other => other.target().reason(),
        }
    }

    /// The wire error for answering a request whose params failed: [`Error::reason`] with this
    /// error's text as the message.
    pub fn to_error_object(&self) -> ErrorObject {
        self.reason().error_object_with(self.to_string())
    }

    /// The input is not a single JSON value.
    pub fn is_syntax(&self) -> bool {
        matches!(self, Error::Syntax { .. })
    }

    /// A required member is missing.
    pub fn is_missing(&self) -> bool {
        matches!(self, Error::Missing { .. })
    }

    /// A member is not defined by the DTO.
    pub fn is_unknown(&self) -> bool {
        matches!(self, Error::Unknown { .. })
    }

    /// An object repeats a member name.
    pub fn is_duplicate(&self) -> bool {
        matches!(self, Error::Duplicate { .. })
    }

    /// A non-nullable member is `null`.
    pub fn is_null(&self) -> bool {
        matches!(self, Error::Null { .. })
    }

    /// A member has the wrong JSON type (including `1.0` for an integer).
    pub fn is_type(&self) -> bool {
        matches!(self, Error::Type { .. })
    }

    /// A number is out of range.
    pub fn is_range(&self) -> bool {
        matches!(self, Error::Range { .. })
    }

    /// An enum member holds an unlisted value.
    pub fn is_enum(&self) -> bool {
        matches!(self, Error::Enum { .. })
    }

    /// A non-empty string is empty or white space only.
    pub fn is_blank(&self) -> bool {
        matches!(self, Error::Blank { .. })
    }

    /// A string does not match its pattern.
    pub fn is_pattern(&self) -> bool {
        matches!(self, Error::Pattern { .. })
    }

    /// A type-level rule of the DTO failed.
    pub fn is_rule(&self) -> bool {
        matches!(self, Error::Rule { .. })
    }

    /// A handshake claim is not backed by the installed manifest.
    pub fn is_undeclared(&self) -> bool {
        matches!(self, Error::Undeclared { .. })
    }

    /// The version check failed.
    pub fn is_version(&self) -> bool {
        matches!(self, Error::Version { .. })
    }
}
