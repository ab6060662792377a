//! A generation (spec §13.3): one published set of sidecar connections, and the plan of each
//! hook point computed from it once: the chain members in order and the active slot owner.
//!
//! Plans are computed when the generation is built, so a walk does no sorting or filtering, and
//! a point nobody intercepts is one bit test in [`Generation::mask`].

use std::collections::BTreeMap;
use std::sync::Arc;

use sidewire_ext_protocol::HookPoint;

use crate::conn::Connection;
use crate::member::ChainMember;

/// One member of a point's chain: a sidecar, or a member answering in-process.
#[derive(Clone)]
pub(crate) enum Entry {
    /// A sidecar's connection.
    Sidecar(Arc<Connection>),
    /// A [`ChainMember`] of the host's configuration.
    Local(Arc<dyn ChainMember>),
}

impl Entry {
    fn priority(&self) -> i64 {
        match self {
            Entry::Sidecar(conn) => conn.plugin.runtime.priority,
            Entry::Local(member) => member.priority(),
        }
    }

    pub(crate) fn id(&self) -> &str {
        match self {
            Entry::Sidecar(conn) => &conn.plugin.id,
            Entry::Local(member) => member.id(),
        }
    }
}

impl std::fmt::Debug for Entry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Entry::Sidecar(_) => write!(f, "Sidecar({})", self.id()),
            Entry::Local(_) => write!(f, "Local({})", self.id()),
        }
    }
}

/// Who is called at one point.
#[derive(Debug, Default)]
pub(crate) struct PointPlan {
    /// Chain members in (priority, id) order (§7.6).
    pub(crate) chain: Vec<Entry>,
    /// The owner of the active slot mapped to the point (§7.7).
    pub(crate) owner: Option<Arc<Connection>>,
}

impl PointPlan {
    /// Every sidecar an event for this point reaches, each once (§8): in-process members take
    /// intercepts only.
    pub(crate) fn recipients(&self) -> impl Iterator<Item = &Arc<Connection>> {
        (self.chain.iter())
            .filter_map(|entry| match entry {
                Entry::Sidecar(conn) => Some(conn),
                Entry::Local(_) => None,
            })
            .chain(self.owner.iter())
    }
}

/// One generation.
#[derive(Debug)]
pub(crate) struct Generation {
    pub(crate) number: u64,
    /// Live connections by plugin id (adopted ones keep their own start generation).
    pub(crate) conns: BTreeMap<String, Arc<Connection>>,
    plans: Vec<PointPlan>,
    /// Bit `point as usize` is set when the point has a chain member or a slot owner.
    pub(crate) mask: u32,
}

/// The bit of a point in [`Generation::mask`].
pub(crate) fn bit(point: HookPoint) -> u32 {
    1 << (point as u32)
}

impl Generation {
    /// A generation with no sidecars and no in-process members.
    pub(crate) fn empty(number: u64) -> Self {
        Generation::new(number, BTreeMap::new(), &[])
    }

    /// Plans every point for these connections (all handshakes done) and the host's
    /// in-process `members`.
    pub(crate) fn new(
        number: u64,
        conns: BTreeMap<String, Arc<Connection>>,
        members: &[Arc<dyn ChainMember>],
    ) -> Self {
        let mut plans = Vec::with_capacity(HookPoint::ALL.len());
        let mut mask = 0;
        for &point in HookPoint::ALL {
            // The slot is active for its owner only when both the manifest and the handshake
            // name it; slot uniqueness across plugins was checked before any spawn.
            let owner = point.slot().and_then(|slot| {
                conns
                    .values()
                    .find(|c| {
                        c.plugin.runtime.replaces.contains(&slot)
                            && c.handshake().replaces.contains(&slot)
                    })
                    .cloned()
            });
            let mut chain: Vec<Entry> = conns
                .values()
                .filter(|c| {
                    c.plugin.runtime.intercepts.contains(&point)
                        && c.handshake().subscriptions.contains(&point)
                        && !owner.as_ref().is_some_and(|o| Arc::ptr_eq(o, c))
                })
                .map(|c| Entry::Sidecar(Arc::clone(c)))
                .chain(
                    (members.iter())
                        .filter(|m| m.intercepts(point))
                        .map(|m| Entry::Local(Arc::clone(m))),
                )
                .collect();
            // Stable: two in-process members with one id keep the order they were added in.
            chain.sort_by(|a, b| {
                (a.priority().cmp(&b.priority()))
                    .then_with(|| a.id().as_bytes().cmp(b.id().as_bytes()))
            });
            if !chain.is_empty() || owner.is_some() {
                mask |= bit(point);
            }
            plans.push(PointPlan { chain, owner });
        }
        Generation {
            number,
            conns,
            plans,
            mask,
        }
    }

    pub(crate) fn plan(&self, point: HookPoint) -> &PointPlan {
        &self.plans[point as usize]
    }
}

#[cfg(test)]
mod tests;
