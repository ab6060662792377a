//! The provider catalog (spec §14.2): each connection's list (the handshake's `providers` at
//! first, then what `extension/provider/catalog` answered), the rules a refreshed list must
//! meet, and the aggregated view the application sees.

use std::sync::Arc;

use sidewire_ext_protocol::{
    Method, ProviderCatalogParams, ProviderCatalogResult, ProviderDescriptor, Reason,
    decode_result, is_plugin_provider_ref,
};

use crate::conn::Connection;
use crate::generation::Generation;

/// One provider a running sidecar serves: the plugin and its descriptor.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct CatalogEntry {
    /// The plugin id whose sidecar serves it.
    pub plugin: String,
    /// The descriptor as the sidecar gave it (its `reference` carries the plugin's prefix).
    pub descriptor: ProviderDescriptor,
}

/// Checks a catalog result of plugin `plugin` (§14.2): unique refs (`protocol_error`), each
/// with the plugin's prefix (`capability_not_declared`). A violating result is rejected whole.
pub(crate) fn check(plugin: &str, raw: &str) -> Result<Vec<ProviderDescriptor>, (Reason, String)> {
    // Strict decoding already rejects duplicate refs (with `protocol_error`, as a bad result).
    let result = decode_result::<ProviderCatalogResult>(raw)
        .map_err(|err| (err.reason(), format!("an invalid catalog: {err}")))?;
    if let Some(foreign) = result
        .providers
        .iter()
        .find(|p| !is_plugin_provider_ref(&p.reference, plugin))
    {
        return Err((
            Reason::CapabilityNotDeclared,
            format!(
                "a catalog ref outside plugin/{plugin}/: {:?}",
                foreign.reference
            ),
        ));
    }
    Ok(result.providers)
}

/// Calls `extension/provider/catalog` on `conn` and replaces its list when the answer passes
/// [`check`]; otherwise the connection keeps its previous list and a warning says why.
///
/// # Cancel safety
///
/// Dropping the future abandons the call; the list is left as it was.
pub(crate) async fn refresh(conn: &Arc<Connection>) {
    let timeout = conn.shared.config.get_provider_call_timeout();
    let plugin = &conn.plugin.id;
    let answer = conn
        .call(
            Method::ProviderCatalog,
            &ProviderCatalogParams {},
            timeout,
            Method::ProviderCatalog.as_str(),
        )
        .await;
    let checked = match answer {
        Ok(raw) => check(plugin, raw.get()).map_err(|(reason, why)| {
            (
                reason,
                format!("extension {plugin} sent {why}; its previous catalog is kept"),
            )
        }),
        Err(failure) => Err((
            failure.reason,
            format!("{}; its previous catalog is kept", failure.message),
        )),
    };
    match checked {
        Ok(providers) => conn.set_catalog(providers),
        Err((reason, message)) => conn
            .shared
            .warn_because(Some(plugin), Some(reason), &message),
    }
}

/// The connections of `generation` that serve providers now: ready, with capability
/// `providers`, in plugin id order.
pub(crate) fn serving(generation: &Generation) -> impl Iterator<Item = &Arc<Connection>> {
    generation
        .conns
        .values()
        .filter(|conn| conn.serves_providers() && conn.is_ready())
}

/// The aggregated catalog of `generation`: by plugin id, then the sidecar's order.
pub(crate) fn entries(generation: &Generation) -> Vec<CatalogEntry> {
    serving(generation)
        .flat_map(|conn| {
            conn.catalog()
                .iter()
                .map(|descriptor| CatalogEntry {
                    plugin: conn.plugin.id.clone(),
                    descriptor: descriptor.clone(),
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The connection whose current list holds `reference`, if any: the only one a stream for it
/// may be opened on (§14.1). A crashed or shut-down connection is still found, so that the
/// open fails with `provider_interrupted` (§13.4: no fallback) rather than as an unknown ref;
/// nothing is written to it.
pub(crate) fn route<'a>(
    generation: &'a Generation,
    reference: &str,
) -> Option<&'a Arc<Connection>> {
    generation
        .conns
        .values()
        .filter(|conn| conn.serves_providers())
        .find(|conn| conn.catalog().iter().any(|p| p.reference == reference))
}
