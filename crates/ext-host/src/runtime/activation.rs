//! Which v2 plugins may start (spec delta §2.6): a plugin whose non-optional requirement no
//! host capability satisfies is [`InactivePlugin`]: resolved, never spawned, reported with
//! its reason. An unmet optional requirement is only a warning.
//!
//! sidewire's host provides no capability (it has no browser host, no dependency graph), so
//! every requirement is unmet in practice; the matching is still the reference's
//! ([`satisfies`]), against [`host_capabilities`].

use std::fmt;

use sidewire_ext_protocol::v2::{CapabilityRef, ManifestV2, satisfies};

/// The capability the reference's browser companion provides.
const BROWSER_COMPANION: &str = "reasonix/browser/companion";

/// The capabilities this host provides to v2 plugins' `requires`: none.
fn host_capabilities() -> &'static [CapabilityRef] {
    &[]
}

/// A v2 plugin that is installed and enabled but does not start, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct InactivePlugin {
    /// The plugin id.
    pub plugin: String,
    /// Why it is inactive.
    pub reason: InactiveReason,
}

impl fmt::Display for InactivePlugin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} is inactive: {}", self.plugin, self.reason)
    }
}

/// Why a plugin is inactive.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum InactiveReason {
    /// Non-optional requirements that no host capability satisfies: their keys
    /// (`namespace/kind/id`), in manifest order, at least one.
    MissingCapabilities(Vec<String>),
}

impl InactiveReason {
    /// The keys of the unmet requirements.
    pub fn missing(&self) -> &[String] {
        match self {
            InactiveReason::MissingCapabilities(keys) => keys,
        }
    }
}

impl fmt::Display for InactiveReason {
    /// The reference's text: `missing required capability <key>`, and for the browser
    /// companion `; browser host is unavailable on this frontend`; several joined by `; `.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, key) in self.missing().iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "missing required capability {key}")?;
            if key == BROWSER_COMPANION {
                f.write_str("; browser host is unavailable on this frontend")?;
            }
        }
        Ok(())
    }
}

/// An optional requirement no host capability satisfies: a diagnostic, the plugin starts.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct UnmetOptional {
    /// The plugin id.
    pub plugin: String,
    /// The requirement's key, `namespace/kind/id`.
    pub capability: String,
}

impl fmt::Display for UnmetOptional {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: optional capability {} is not available on this host",
            self.plugin, self.capability
        )
    }
}

/// What the requirements of one v2 plugin decide.
pub(crate) struct Activation {
    /// `Some` when a non-optional requirement is unmet.
    pub(crate) inactive: Option<InactivePlugin>,
    /// The unmet optional requirements.
    pub(crate) unmet_optional: Vec<UnmetOptional>,
}

/// Matches `v2.requires` against the host's capabilities.
pub(crate) fn activation(plugin: &str, v2: &ManifestV2) -> Activation {
    let mut missing = Vec::new();
    let mut unmet_optional = Vec::new();
    for requirement in &v2.requires {
        if host_capabilities()
            .iter()
            .any(|provided| satisfies(provided, requirement))
        {
            continue;
        }
        if requirement.optional {
            unmet_optional.push(UnmetOptional {
                plugin: plugin.to_owned(),
                capability: requirement.key(),
            });
        } else if !missing.contains(&requirement.key()) {
            missing.push(requirement.key());
        }
    }
    Activation {
        inactive: (!missing.is_empty()).then(|| InactivePlugin {
            plugin: plugin.to_owned(),
            reason: InactiveReason::MissingCapabilities(missing),
        }),
        unmet_optional,
    }
}
