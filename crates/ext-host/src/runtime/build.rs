//! Building a generation (spec §13.2–§13.3): resolve the enabled plugins, check slots before any
//! spawn, adopt unchanged live sidecars, boot the rest at most 4 at a time within one shared
//! budget, and judge required and optional failures in plugin-id order.

use std::collections::BTreeMap;
use std::sync::Arc;

use futures_util::future::join_all;
use sidewire_ext_protocol::v2::SlotForm;
use sidewire_ext_protocol::{MAX_CONCURRENT_BOOTS, Slot};
use tokio::sync::Semaphore;
use tokio::time::Instant;

use crate::Redactor;
use crate::conn::{self, Connection, Plugin, UiState};
use crate::error::{StartupFailure, StartupStage};
use crate::generation::Generation;
use crate::runtime::activation::{self, InactivePlugin, UnmetOptional};
use crate::shared::Shared;
use crate::store::PluginStore;
use crate::{Error, Package};

/// What a build did.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct GenerationReport {
    /// The generation number.
    pub generation: u64,
    /// Plugins whose sidecars were started by this build.
    pub started: Vec<String>,
    /// Plugins whose live sidecars were kept from the previous generation.
    pub adopted: Vec<String>,
    /// Optional plugins that failed to start (each was also reported as a warning); a reload
    /// tries them again.
    pub failed: Vec<StartupFailure>,
    /// Enabled v2 plugins that were not started because a non-optional requirement is unmet
    /// (spec delta §2.6), in plugin-id order; each was also reported as a warning. A required
    /// one fails the build instead (stage [`Inactive`](StartupStage::Inactive)).
    pub inactive: Vec<InactivePlugin>,
    /// Optional requirements of started v2 plugins that the host cannot satisfy (each was
    /// also reported as a warning).
    pub unmet_optional: Vec<UnmetOptional>,
    /// `tool:<name>` and `provider:<ref>` slots that started v2 plugins own (spec delta §2.8):
    /// accepted, unique, and not used by this host. Pairs of plugin id and slot, in plugin-id
    /// order.
    pub unused_slots: Vec<(String, String)>,
}

/// A built generation, not yet published.
pub(crate) struct Built {
    pub(crate) generation: Generation,
    pub(crate) report: GenerationReport,
    /// Connections this build started (shut down if the build is abandoned).
    pub(crate) started: Vec<Arc<Connection>>,
}

/// Resolves the enabled plugins: the install record plus the manifest read now (§12.2). A
/// plugin that cannot be resolved is a `resolve`-stage failure.
/// A plugin that could not be resolved, and whether it is required (`false` when its manifest
/// does not even decode: the install record alone cannot vouch for the flag).
type Unresolved = (StartupFailure, bool);

/// The resolved plugins, the ones that failed, the inactive ones (and whether each is
/// required), the unmet optional requirements, and every manifest `env` pair (for redaction).
struct Resolved {
    plugins: Vec<Arc<Plugin>>,
    failures: Vec<Unresolved>,
    inactive: Vec<(InactivePlugin, bool)>,
    unmet_optional: Vec<UnmetOptional>,
    env: Vec<(String, String)>,
}

/// What one enabled plugin resolves to.
enum Resolution {
    /// It starts (or is adopted).
    Active(Plugin),
    /// It does not start (spec delta §2.6); whether it is required.
    Inactive(InactivePlugin, bool),
}

fn resolve(store: &PluginStore) -> Result<Resolved, Error> {
    let mut plugins = Vec::new();
    let mut failures = Vec::new();
    let mut inactive = Vec::new();
    let mut unmet_optional = Vec::new();
    let mut env = Vec::new();
    for installed in store.list()? {
        if !installed.enabled {
            continue;
        }
        let failure = |cause: String| StartupFailure {
            plugin: installed.id.clone(),
            stage: StartupStage::Resolve,
            elapsed: std::time::Duration::ZERO,
            reason: None,
            refused_by: None,
            cause,
            stderr_tail: String::new(),
        };
        let package = match Package::open(&installed.root) {
            Ok(package) => package,
            Err(err) => {
                failures.push((failure(err.to_string()), false));
                continue;
            }
        };
        if package.manifest.name != installed.id {
            let required = package
                .manifest
                .runtime
                .as_ref()
                .is_some_and(|r| r.required);
            failures.push((
                failure(format!(
                    "the manifest at {} now names {:?}, not the installed id {:?}",
                    installed.root.display(),
                    package.manifest.name,
                    installed.id
                )),
                required,
            ));
            continue;
        }
        let v2 = package.manifest.v2.map(|v2| Arc::new(*v2));
        let Some(runtime) = package.manifest.runtime else {
            // Declarative only: nothing to start.
            continue;
        };
        env.extend(runtime.env.iter().map(|(k, v)| (k.clone(), v.clone())));
        let version = if installed.linked {
            package.manifest.version
        } else {
            installed.version
        };
        let mut resolution = Resolution::Active(Plugin {
            id: installed.id,
            root: installed.root,
            version,
            runtime,
            v2,
        });
        if let Resolution::Active(plugin) = &resolution
            && let Some(v2) = &plugin.v2
        {
            let activation = activation::activation(&plugin.id, v2);
            if let Some(inactive) = activation.inactive {
                resolution = Resolution::Inactive(inactive, plugin.required());
            } else {
                unmet_optional.extend(activation.unmet_optional);
            }
        }
        match resolution {
            Resolution::Active(plugin) => plugins.push(Arc::new(plugin)),
            Resolution::Inactive(plugin, required) => inactive.push((plugin, required)),
        }
    }
    Ok(Resolved {
        plugins,
        failures,
        inactive,
        unmet_optional,
        env,
    })
}

/// §7.7: each slot has at most one owner among the enabled plugins; checked from manifests
/// before anything is spawned.
/// v2's `tool:<name>` and `provider:<ref>` slots follow the same rule (delta §2.8); the pairs
/// of plugin id and such slot are returned for the report.
fn check_slots(plugins: &[Arc<Plugin>]) -> Result<Vec<(String, String)>, Error> {
    let mut owners: BTreeMap<Slot, &str> = BTreeMap::new();
    let mut form_owners: BTreeMap<&str, &str> = BTreeMap::new();
    let mut forms = Vec::new();
    for plugin in plugins {
        for slot in &plugin.runtime.replaces {
            if let Some(first) = owners.insert(*slot, &plugin.id) {
                return Err(Error::SlotConflict {
                    slot: *slot,
                    first: first.to_owned(),
                    second: plugin.id.clone(),
                });
            }
        }
        let v2_slots = plugin.v2.iter().flat_map(|v2| &v2.replaces);
        for slot in v2_slots.filter(|s| SlotForm::parse(s).is_some()) {
            if let Some(first) = form_owners.insert(slot, &plugin.id) {
                return Err(Error::SlotFormConflict {
                    slot: slot.clone(),
                    first: first.to_owned(),
                    second: plugin.id.clone(),
                });
            }
            forms.push((plugin.id.clone(), slot.clone()));
        }
    }
    Ok(forms)
}

/// Builds generation `number`. `previous` offers sidecars to adopt; `ui` is the standing of the
/// connections this build starts.
pub(crate) async fn build(
    shared: &Arc<Shared>,
    store: &PluginStore,
    base_redactor: &Redactor,
    number: u64,
    previous: Option<&Generation>,
    ui: UiState,
) -> Result<Built, Error> {
    let Resolved {
        plugins,
        failures: resolve_failures,
        inactive,
        unmet_optional,
        env,
    } = resolve(store)?;
    let mut required: BTreeMap<String, bool> = plugins
        .iter()
        .map(|p| (p.id.clone(), p.required()))
        .collect();
    required.extend(
        resolve_failures
            .iter()
            .map(|(failure, required)| (failure.plugin.clone(), *required)),
    );
    shared.set_redactor(base_redactor.with(env));
    let unused_slots = check_slots(&plugins)?;
    // A required plugin that cannot be active fails the build before anything is spawned:
    // its failures would fail operations, so running without it must not go unnoticed.
    let mut inactive_report = Vec::new();
    for (plugin, required) in inactive {
        if required {
            return Err(Error::Startup(Box::new(StartupFailure {
                plugin: plugin.plugin.clone(),
                stage: StartupStage::Inactive,
                elapsed: std::time::Duration::ZERO,
                reason: None,
                refused_by: None,
                cause: plugin.reason.to_string(),
                stderr_tail: String::new(),
            })));
        }
        shared.warn(Some(&plugin.plugin), &plugin.to_string());
        inactive_report.push(plugin);
    }
    for unmet in &unmet_optional {
        shared.warn(Some(&unmet.plugin), &unmet.to_string());
    }
    let mut adopted = BTreeMap::new();
    let mut to_start = Vec::new();
    for plugin in &plugins {
        let live = previous
            .and_then(|g| g.conns.get(&plugin.id))
            .filter(|c| c.is_ready() && *c.plugin == **plugin);
        match live {
            Some(conn) => {
                adopted.insert(plugin.id.clone(), Arc::clone(conn));
            }
            None => to_start.push(Arc::clone(plugin)),
        }
    }
    let budget_end = Instant::now() + shared.config.get_boot_budget();
    let permits = Semaphore::new(MAX_CONCURRENT_BOOTS);
    let boots = to_start.iter().map(|plugin| {
        let permits = &permits;
        async move {
            let _permit = permits
                .acquire()
                .await
                .expect("the semaphore is never closed");
            let now = Instant::now();
            if now >= budget_end {
                return Err(Box::new(StartupFailure {
                    plugin: plugin.id.clone(),
                    stage: StartupStage::Queued,
                    elapsed: std::time::Duration::ZERO,
                    reason: None,
                    refused_by: None,
                    cause: format!(
                        "the generation's {} ms boot budget was spent before it could start",
                        shared.config.get_boot_budget().as_millis()
                    ),
                    stderr_tail: String::new(),
                }));
            }
            let deadline = (now + shared.config.get_handshake_timeout()).min(budget_end);
            conn::start(Arc::clone(plugin), shared, number, ui, deadline).await
        }
    });
    let results = join_all(boots).await;

    let mut outcomes: Vec<(String, Result<Arc<Connection>, StartupFailure>)> = to_start
        .iter()
        .zip(results)
        .map(|(plugin, result)| (plugin.id.clone(), result.map_err(|f| *f)))
        .collect();
    outcomes.extend(
        resolve_failures
            .into_iter()
            .map(|(failure, _)| (failure.plugin.clone(), Err(failure))),
    );
    outcomes.sort_by(|a, b| a.0.cmp(&b.0));
    let started: Vec<Arc<Connection>> = outcomes
        .iter()
        .filter_map(|(_, r)| r.as_ref().ok().cloned())
        .collect();
    let mut report = GenerationReport {
        generation: number,
        started: Vec::new(),
        adopted: adopted.keys().cloned().collect(),
        failed: Vec::new(),
        inactive: inactive_report,
        unmet_optional,
        unused_slots,
    };
    let mut conns = adopted;
    let mut fatal = None;
    for (id, result) in outcomes {
        match result {
            Ok(conn) => {
                report.started.push(id.clone());
                conns.insert(id, conn);
            }
            Err(failure) => {
                if required.get(&id).copied().unwrap_or(false) {
                    fatal.get_or_insert(failure);
                } else {
                    shared.warn(
                        Some(&id),
                        &format!(
                            "{id}: optional extension runtime failed to start: {}",
                            failure.cause
                        ),
                    );
                    report.failed.push(failure);
                }
            }
        }
    }
    if let Some(failure) = fatal {
        join_all(started.iter().map(|c| c.shutdown())).await;
        return Err(Error::Startup(Box::new(failure)));
    }
    Ok(Built {
        generation: Generation::new(number, conns, shared.config.get_members()),
        report,
        started,
    })
}
