//! Capability versions and requirement matching of Manifest v2 (spec delta §2.6).
//!
//! A version is semver 2.0 (`1.2.3`, `1.2.3-rc.1+build`) with an optional leading `v`: the
//! reference adds the `v` its semver library needs before checking, so `v1.2.3` and `1.2.3` are
//! the same version. A range is the reference's own grammar, not Cargo's: a comma-separated
//! list of clauses, each an operator (`>=`, `<=`, `==`, `>`, `<`, `=`) followed by a version, or
//! a bare version meaning exactly it; a version matches when it matches every clause.

use std::cmp::Ordering;
use std::fmt;

use super::CapabilityRef;

/// The most clauses one `versionRange` may hold; a range is a few clauses in practice, and
/// the manifest's own byte cap bounds it anyway.
pub const MAX_RANGE_CLAUSES: usize = 32;

/// Parses a capability version: semver after an optional leading `v`.
fn parse_version(text: &str) -> Option<semver::Version> {
    let text = text.strip_prefix('v').unwrap_or(text);
    semver::Version::parse(text).ok()
}

/// Whether `text` is a valid capability version (semver, a leading `v` allowed).
pub fn is_capability_version(text: &str) -> bool {
    parse_version(text).is_some()
}

/// A range clause's operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Ge,
    Le,
    Gt,
    Lt,
    Eq,
}

/// A parsed `versionRange` (delta §2.6).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionRange {
    clauses: Vec<(Op, semver::Version)>,
}

/// Why a `versionRange` was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RangeError {
    /// The range, or one of its clauses, is empty.
    EmptyClause,
    /// A clause's version is not semver; the clause as written.
    BadVersion(String),
    /// More than [`MAX_RANGE_CLAUSES`] clauses.
    TooManyClauses,
}

impl fmt::Display for RangeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RangeError::EmptyClause => f.write_str("has an empty clause"),
            RangeError::BadVersion(clause) => write!(
                f,
                "clause {clause:?} is not an operator (>=, <=, ==, >, <, =) followed by a semver \
                 version"
            ),
            RangeError::TooManyClauses => {
                write!(f, "has more than {MAX_RANGE_CLAUSES} clauses")
            }
        }
    }
}

impl std::error::Error for RangeError {}

impl VersionRange {
    /// Parses a range: clauses separated by `,`, each trimmed.
    ///
    /// # Errors
    ///
    /// [`RangeError`] for an empty clause, a clause that is not an operator and a version, or
    /// more than [`MAX_RANGE_CLAUSES`] clauses.
    pub fn parse(text: &str) -> Result<VersionRange, RangeError> {
        let mut clauses = Vec::new();
        for clause in text.split(',') {
            if clauses.len() == MAX_RANGE_CLAUSES {
                return Err(RangeError::TooManyClauses);
            }
            let clause = clause.trim();
            if clause.is_empty() {
                return Err(RangeError::EmptyClause);
            }
            // Longest operators first: `>=` before `>`, `==` before `=`.
            let (op, rest) = [
                (">=", Op::Ge),
                ("<=", Op::Le),
                ("==", Op::Eq),
                (">", Op::Gt),
                ("<", Op::Lt),
                ("=", Op::Eq),
            ]
            .iter()
            .find_map(|(prefix, op)| clause.strip_prefix(prefix).map(|rest| (*op, rest)))
            .unwrap_or((Op::Eq, clause));
            let version = parse_version(rest.trim())
                .ok_or_else(|| RangeError::BadVersion(clause.to_owned()))?;
            clauses.push((op, version));
        }
        Ok(VersionRange { clauses })
    }

    /// Whether `version` (a capability version) is in the range; a version that is not semver
    /// is in no range.
    pub fn matches(&self, version: &str) -> bool {
        let Some(version) = parse_version(version) else {
            return false;
        };
        self.clauses.iter().all(|(op, bound)| {
            let order = version.cmp_precedence(bound);
            match op {
                Op::Ge => order != Ordering::Less,
                Op::Le => order != Ordering::Greater,
                Op::Gt => order == Ordering::Greater,
                Op::Lt => order == Ordering::Less,
                Op::Eq => order == Ordering::Equal,
            }
        })
    }
}

/// Whether `provided` satisfies `requirement` (delta §2.6 matching): the keys are equal; a
/// requirement `schemaHash` equals the provider's; then an exact `version` when given, else the
/// `versionRange`, else any version. Both are trimmed already (the parser trims).
pub fn satisfies(provided: &CapabilityRef, requirement: &CapabilityRef) -> bool {
    if (
        provided.namespace.as_str(),
        provided.kind.as_str(),
        provided.id.as_str(),
    ) != (
        requirement.namespace.as_str(),
        requirement.kind.as_str(),
        requirement.id.as_str(),
    ) {
        return false;
    }
    if !requirement.schema_hash.is_empty() && requirement.schema_hash != provided.schema_hash {
        return false;
    }
    if !requirement.version.is_empty() {
        return match (
            parse_version(&requirement.version),
            parse_version(&provided.version),
        ) {
            (Some(want), Some(have)) => want.cmp_precedence(&have) == Ordering::Equal,
            _ => false,
        };
    }
    if !requirement.version_range.is_empty() {
        return VersionRange::parse(&requirement.version_range)
            .is_ok_and(|range| range.matches(&provided.version));
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions() {
        for ok in ["1.0.0", "v1.0.0", "0.1.0-rc.1+b7", "10.20.30"] {
            assert!(is_capability_version(ok), "{ok}");
        }
        for bad in [
            "", "x", "1", "1.0", "01.0.0", "vv1.0.0", "1.0.0 ", ">=1.0.0",
        ] {
            assert!(!is_capability_version(bad), "{bad}");
        }
    }

    #[test]
    fn ranges() {
        let range = VersionRange::parse(">=1.0.0,<2.0.0").unwrap();
        assert!(range.matches("1.0.0"));
        assert!(range.matches("v1.9.9"));
        assert!(!range.matches("2.0.0"));
        assert!(!range.matches("0.9.0"));
        assert!(!range.matches("nonsense"));
        let exact = VersionRange::parse("1.2.3").unwrap();
        assert!(exact.matches("1.2.3") && !exact.matches("1.2.4"));
        for (text, ok) in [
            ("==1.2.3", "1.2.3"),
            ("=1.2.3", "1.2.3"),
            (" > 1.0.0 ", "1.0.1"),
        ] {
            assert!(VersionRange::parse(text).unwrap().matches(ok), "{text}");
        }
        assert!(VersionRange::parse("<=1.0.0").unwrap().matches("1.0.0"));
        assert!(!VersionRange::parse("<1.0.0").unwrap().matches("1.0.0"));
        for (bad, err) in [
            (">=x", RangeError::BadVersion(">=x".into())),
            ("", RangeError::EmptyClause),
            (">=1.0.0,", RangeError::EmptyClause),
            ("~1.0.0", RangeError::BadVersion("~1.0.0".into())),
            ("^1.0.0", RangeError::BadVersion("^1.0.0".into())),
            (">=1.0", RangeError::BadVersion(">=1.0".into())),
        ] {
            assert_eq!(VersionRange::parse(bad), Err(err), "{bad}");
        }
        let at_cap = vec!["1.0.0"; MAX_RANGE_CLAUSES].join(",");
        VersionRange::parse(&at_cap).unwrap();
        assert_eq!(
            VersionRange::parse(&format!("{at_cap},1.0.0")),
            Err(RangeError::TooManyClauses)
        );
    }

    #[test]
    fn matching() {
        let cap = |version: &str, hash: &str| CapabilityRef {
            namespace: "n".into(),
            kind: "k".into(),
            id: "i".into(),
            version: version.into(),
            schema_hash: hash.into(),
            ..Default::default()
        };
        let provided = cap("1.2.0", "h");
        assert!(satisfies(&provided, &cap("", "")));
        assert!(satisfies(&provided, &cap("v1.2.0", "h")));
        assert!(!satisfies(&provided, &cap("1.2.1", "")));
        assert!(!satisfies(&provided, &cap("", "other")));
        let mut ranged = cap("", "");
        ranged.version_range = ">=1.0.0,<2.0.0".into();
        assert!(satisfies(&provided, &ranged));
        ranged.version_range = ">=2.0.0".into();
        assert!(!satisfies(&provided, &ranged));
        let mut other = cap("", "");
        other.id = "j".into();
        assert!(!satisfies(&provided, &other));
    }
}
