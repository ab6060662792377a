//! A generation (spec §13.3): one published set of sidecar connections, and the plan of each
//! hook point computed from it once: the chain members in order and the active slot owner.
//!
//! Plans are computed when the generation is built, so a walk does no sorting or filtering, and
//! a point nobody intercepts is one bit test in [`Generation::mask`].

use std::collections::BTreeMap;
use std::sync::Arc;

use sidewire_ext_protocol::HookPoint;

use crate::conn::Connection;

/// Who is called at one point.
#[derive(Debug, Default)]
pub(crate) struct PointPlan {
    /// Chain members in (priority, plugin id) order (§7.6).
    pub(crate) chain: Vec<Arc<Connection>>,
    /// The owner of the active slot mapped to the point (§7.7).
    pub(crate) owner: Option<Arc<Connection>>,
}

impl PointPlan {
    /// Everyone an event for this point reaches, each once (§8).
    pub(crate) fn recipients(&self) -> impl Iterator<Item = &Arc<Connection>> {
        self.chain.iter().chain(self.owner.iter())
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
    /// A generation with no sidecars.
    pub(crate) fn empty(number: u64) -> Self {
        Generation::new(number, BTreeMap::new())
    }

    /// Plans every point for these connections (all handshakes done).
    pub(crate) fn new(number: u64, conns: BTreeMap<String, Arc<Connection>>) -> Self {
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
            let mut chain: Vec<Arc<Connection>> = conns
                .values()
                .filter(|c| {
                    c.plugin.runtime.intercepts.contains(&point)
                        && c.handshake().subscriptions.contains(&point)
                        && !owner.as_ref().is_some_and(|o| Arc::ptr_eq(o, c))
                })
                .cloned()
                .collect();
            chain.sort_by(|a, b| {
                a.plugin
                    .runtime
                    .priority
                    .cmp(&b.plugin.runtime.priority)
                    .then_with(|| a.plugin.id.as_bytes().cmp(b.plugin.id.as_bytes()))
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
