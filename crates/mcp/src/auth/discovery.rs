//! Finding the authorization server: the protected resource metadata (RFC 9728) named by the
//! challenge or at the well-known paths, then the authorization server's metadata (RFC 8414,
//! OpenID Connect Discovery) in the order MCP 2025-11-25 gives, with the 2025-03-26 fallbacks
//! (the server's own origin, then default endpoints) when the resource publishes no metadata.
//!
//! Issuers and resources are kept as the text the server sent: servers compare them as strings
//! (RFC 8414 §3.3, RFC 9207 §2.4), and a `Url` would add a `/` to a bare origin.

use serde::Deserialize;
use url::Url;

use super::challenge::Challenge;
use super::failure::{AuthFailure, fail};
use super::fetch::{AuthHttp, require_tls};
use crate::http::client::same_origin;

/// The protected resource metadata fields this client uses (RFC 9728 §2).
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct ResourceMetadata {
    pub(crate) resource: String,
    #[serde(default)]
    pub(crate) authorization_servers: Vec<String>,
    #[serde(default)]
    pub(crate) scopes_supported: Option<Vec<String>>,
}

/// The authorization server metadata fields this client uses (RFC 8414 §2, OpenID Connect
/// Discovery §3, RFC 9207, RFC 9449 §5.1, and the Client ID Metadata Document flag).
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct ServerMetadata {
    pub(crate) issuer: String,
    #[serde(default)]
    pub(crate) authorization_endpoint: Option<String>,
    #[serde(default)]
    pub(crate) token_endpoint: Option<String>,
    #[serde(default)]
    pub(crate) registration_endpoint: Option<String>,
    #[serde(default)]
    pub(crate) scopes_supported: Option<Vec<String>>,
    #[serde(default)]
    pub(crate) grant_types_supported: Option<Vec<String>>,
    #[serde(default)]
    pub(crate) code_challenge_methods_supported: Option<Vec<String>>,
    #[serde(default)]
    pub(crate) token_endpoint_auth_methods_supported: Option<Vec<String>>,
    #[serde(default)]
    #[allow(dead_code, reason = "read by private_key_jwt's algorithm choice")]
    pub(crate) token_endpoint_auth_signing_alg_values_supported: Option<Vec<String>>,
    #[serde(default)]
    pub(crate) client_id_metadata_document_supported: Option<bool>,
    #[serde(default)]
    pub(crate) authorization_response_iss_parameter_supported: Option<bool>,
    #[serde(default)]
    pub(crate) dpop_signing_alg_values_supported: Option<Vec<String>>,
}

impl ServerMetadata {
    /// Whether the server lists `scope` among its scopes.
    pub(crate) fn supports_scope(&self, scope: &str) -> bool {
        self.scopes_supported
            .as_ref()
            .is_some_and(|scopes| scopes.iter().any(|s| s == scope))
    }

    /// Whether the server lists token endpoint auth method `method`.
    pub(crate) fn supports_auth_method(&self, method: &str) -> bool {
        self.token_endpoint_auth_methods_supported
            .as_ref()
            .is_some_and(|methods| methods.iter().any(|m| m == method))
    }
}

/// Where the metadata came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Era {
    /// Protected resource metadata named the authorization server (2025-06-18 and later).
    Current,
    /// No resource metadata: the server's own origin is the authorization server (2025-03-26).
    Legacy,
}

/// What discovery found.
#[derive(Debug, Clone)]
pub(crate) struct Discovered {
    /// The resource indicator to send (RFC 8707): the metadata's `resource` as written, else
    /// the server's URL.
    pub(crate) resource: String,
    /// The resource's `scopes_supported`, when it published metadata.
    pub(crate) resource_scopes: Option<Vec<String>>,
    /// The authorization server's issuer, as written.
    pub(crate) issuer: String,
    /// Its metadata (synthesized from the default endpoints when there is none).
    pub(crate) metadata: ServerMetadata,
    /// Whether the metadata document was fetched (not synthesized).
    pub(crate) has_metadata: bool,
    pub(crate) era: Era,
}

/// The well-known protected resource metadata URLs for `server` (RFC 9728 §3.1), in the order
/// MCP gives: the path-inserted one (when the URL has a path), then the root.
pub(crate) fn resource_metadata_candidates(server: &Url) -> Vec<Url> {
    let mut out = Vec::new();
    let path = server.path().trim_end_matches('/');
    let origin = origin_of(server);
    if !path.is_empty()
        && let Ok(url) = Url::parse(&format!(
            "{origin}/.well-known/oauth-protected-resource{path}"
        ))
    {
        out.push(url);
    }
    if let Ok(url) = Url::parse(&format!("{origin}/.well-known/oauth-protected-resource")) {
        out.push(url);
    }
    out
}

/// The metadata URLs of the authorization server `issuer` (MCP 2025-11-25 "Authorization
/// Server Metadata Discovery"): with a path, OAuth then OpenID with the well-known part
/// inserted before the path, then OpenID appended to it; without, OAuth then OpenID at the
/// root. The root OAuth URL is never tried for an issuer with a path: it belongs to another
/// issuer.
pub(crate) fn server_metadata_candidates(issuer: &str) -> Result<Vec<Url>, String> {
    let url = Url::parse(issuer).map_err(|err| format!("invalid issuer {issuer:?}: {err}"))?;
    if url.query().is_some() || url.fragment().is_some() {
        return Err(format!("issuer {issuer:?} has a query or fragment"));
    }
    let origin = origin_of(&url);
    let path = url.path().trim_end_matches('/');
    let texts = if path.is_empty() {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server"),
            format!("{origin}/.well-known/openid-configuration"),
        ]
    } else {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{origin}/.well-known/openid-configuration{path}"),
            format!("{origin}{path}/.well-known/openid-configuration"),
        ]
    };
    texts
        .iter()
        .map(|text| Url::parse(text).map_err(|err| format!("{text}: {err}")))
        .collect()
}

/// `scheme://host[:port]` of a URL, without a trailing slash.
pub(crate) fn origin_of(url: &Url) -> String {
    url.origin().ascii_serialization()
}

/// Whether the resource metadata's `resource` covers the server's URL: the same origin, and
/// its path a prefix of the URL's path on a segment boundary (RFC 9728 §3.3 asks for the
/// resource the metadata was fetched for; MCP servers publish their origin or their path).
pub(crate) fn resource_covers(resource: &str, server: &Url) -> bool {
    let Ok(parsed) = Url::parse(resource) else {
        return false;
    };
    if !same_origin(&parsed, server) || parsed.fragment().is_some() {
        return false;
    }
    let prefix = parsed.path().trim_end_matches('/');
    let path = server.path();
    path == prefix
        || path.trim_end_matches('/') == prefix
        || path
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// Runs discovery for `server` after `challenge`. `metadata_url`, when configured, replaces
/// the authorization server metadata lookup.
pub(crate) async fn discover(
    http: &AuthHttp,
    server: &Url,
    challenge: &Challenge,
    metadata_url: Option<&str>,
) -> Result<Discovered, AuthFailure> {
    let resource = find_resource_metadata(http, server, challenge).await?;
    let Some(resource) = resource else {
        return legacy(http, server).await;
    };
    if !resource_covers(&resource.resource, server) {
        return Err(fail!(
            ResourceMismatch,
            "the protected resource metadata is for {:?}, not for {server}",
            resource.resource
        ));
    }
    let Some(issuer) = resource.authorization_servers.first().cloned() else {
        return Err(fail!(
            Discovery,
            "the protected resource metadata of {server} names no authorization server"
        ));
    };
    let (metadata, url) = match metadata_url {
        Some(url) => {
            let url = Url::parse(url)
                .map_err(|err| fail!(Discovery, "invalid authServerMetadataUrl {url:?}: {err}"))?;
            let metadata = fetch_server_metadata(http, &url)
                .await?
                .ok_or_else(|| fail!(Discovery, "no authorization server metadata at {url}"))?;
            (metadata, url)
        }
        None => find_server_metadata(http, &issuer).await?,
    };
    if metadata.issuer != issuer {
        return Err(fail!(
            Metadata,
            "the metadata at {url} is for issuer {:?}, not {issuer:?} (RFC 8414 §3.3)",
            metadata.issuer
        ));
    }
    check_endpoints(&metadata)?;
    Ok(Discovered {
        resource: resource.resource,
        resource_scopes: resource.scopes_supported,
        issuer,
        metadata,
        has_metadata: true,
        era: Era::Current,
    })
}

/// The resource metadata: the challenge's URL (same origin only), else the well-known paths;
/// `None` when there is none anywhere.
async fn find_resource_metadata(
    http: &AuthHttp,
    server: &Url,
    challenge: &Challenge,
) -> Result<Option<ResourceMetadata>, AuthFailure> {
    let mut candidates = Vec::new();
    if let Some(named) = challenge.resource_metadata.as_deref() {
        match server.join(named) {
            Ok(url) if same_origin(&url, server) => candidates.push(url),
            Ok(url) => {
                return Err(fail!(
                    Discovery,
                    "the server names resource metadata on another origin ({url}); refused"
                ));
            }
            Err(err) => {
                let url = crate::text::peer(named);
                tracing::warn!(%url, error = %err, "the challenge's resource_metadata is not a URL; trying the well-known paths");
            }
        }
    }
    let named = !candidates.is_empty();
    for url in candidates
        .into_iter()
        .chain(resource_metadata_candidates(server))
    {
        let fetched = http
            .get_json(&url)
            .await
            .map_err(|err| fail!(Discovery, "fetching resource metadata failed: {err}"))?;
        if fetched.status.is_success() {
            let metadata = fetched.json::<ResourceMetadata>().map_err(|err| {
                fail!(
                    Discovery,
                    "the resource metadata at {url} is invalid: {err}"
                )
            })?;
            return Ok(Some(metadata));
        }
        if named {
            // The challenge named it: the well-known paths are not tried for another answer.
            return Err(fail!(
                Discovery,
                "the resource metadata at {url} answered HTTP {}",
                fetched.status.as_u16()
            ));
        }
    }
    Ok(None)
}

/// The first metadata document among `issuer`'s candidates, with the URL it came from.
async fn find_server_metadata(
    http: &AuthHttp,
    issuer: &str,
) -> Result<(ServerMetadata, Url), AuthFailure> {
    let candidates = server_metadata_candidates(issuer).map_err(|err| fail!(Discovery, "{err}"))?;
    for url in candidates {
        if let Some(metadata) = fetch_server_metadata(http, &url).await? {
            return Ok((metadata, url));
        }
    }
    Err(fail!(
        Discovery,
        "no authorization server metadata for issuer {issuer:?} at its well-known URLs"
    ))
}

/// A metadata document at `url`; `None` when it is not there (any non-2xx, or not JSON).
async fn fetch_server_metadata(
    http: &AuthHttp,
    url: &Url,
) -> Result<Option<ServerMetadata>, AuthFailure> {
    require_tls(url, "metadata")?;
    let fetched = http.get_json(url).await.map_err(|err| {
        fail!(
            Discovery,
            "fetching authorization server metadata failed: {err}"
        )
    })?;
    if !fetched.status.is_success() {
        return Ok(None);
    }
    match fetched.json::<ServerMetadata>() {
        Ok(metadata) => Ok(Some(metadata)),
        Err(err) => {
            tracing::debug!(%url, error = %err, "not authorization server metadata; trying the next URL");
            Ok(None)
        }
    }
}

/// The 2025-03-26 rules: the server's origin is the authorization server; its metadata is at
/// the origin's well-known URL, else the endpoints are `/authorize`, `/token` and
/// `/register` there.
async fn legacy(http: &AuthHttp, server: &Url) -> Result<Discovered, AuthFailure> {
    let origin = origin_of(server);
    let url = Url::parse(&format!("{origin}/.well-known/oauth-authorization-server"))
        .map_err(|err| fail!(Discovery, "{err}"))?;
    let resource = super::session::canonical_resource(server.as_str());
    if let Some(metadata) = fetch_server_metadata(http, &url).await? {
        // The issuer of these servers is often not the bare origin; the endpoints must still
        // be on the server's origin, which is what the 2025-03-26 rules trust.
        let same = |endpoint: &Option<String>| {
            endpoint
                .as_deref()
                .is_none_or(|e| Url::parse(e).is_ok_and(|e| same_origin(&e, server)))
        };
        if !same(&metadata.authorization_endpoint) || !same(&metadata.token_endpoint) {
            return Err(fail!(
                Metadata,
                "the server's own authorization metadata points to another origin"
            ));
        }
        check_endpoints(&metadata)?;
        return Ok(Discovered {
            resource,
            resource_scopes: None,
            issuer: metadata.issuer.clone(),
            metadata,
            has_metadata: true,
            era: Era::Legacy,
        });
    }
    tracing::info!(%origin, "no authorization metadata; using the default endpoints (MCP 2025-03-26)");
    let metadata = ServerMetadata {
        issuer: origin.clone(),
        authorization_endpoint: Some(format!("{origin}/authorize")),
        token_endpoint: Some(format!("{origin}/token")),
        registration_endpoint: Some(format!("{origin}/register")),
        ..ServerMetadata::default()
    };
    check_endpoints(&metadata)?;
    Ok(Discovered {
        resource,
        resource_scopes: None,
        issuer: origin,
        metadata,
        has_metadata: false,
        era: Era::Legacy,
    })
}

/// Refuses metadata that names an endpoint this client would send codes, verifiers, tokens or
/// secrets to in clear ([`require_tls`]), before any of them is used, whichever the grant
/// needs: such metadata is broken or forged. (An endpoint that is not a URL is left to the step
/// that uses it, which refuses it as [`Metadata`](super::AuthErrorKind::Metadata).)
fn check_endpoints(metadata: &ServerMetadata) -> Result<(), AuthFailure> {
    let endpoints = [
        ("authorization endpoint", &metadata.authorization_endpoint),
        ("token endpoint", &metadata.token_endpoint),
        ("registration endpoint", &metadata.registration_endpoint),
    ];
    for (role, endpoint) in endpoints {
        if let Some(url) = endpoint.as_deref().and_then(|e| Url::parse(e).ok()) {
            require_tls(&url, role)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(text: &str) -> Url {
        Url::parse(text).unwrap()
    }

    #[test]
    fn resource_metadata_urls_path_first_then_root() {
        let got = resource_metadata_candidates(&url("https://mcp.example.com/v1/mcp"));
        assert_eq!(
            got.iter().map(Url::as_str).collect::<Vec<_>>(),
            [
                "https://mcp.example.com/.well-known/oauth-protected-resource/v1/mcp",
                "https://mcp.example.com/.well-known/oauth-protected-resource",
            ]
        );
        let root = resource_metadata_candidates(&url("http://localhost:8080/"));
        assert_eq!(
            root.iter().map(Url::as_str).collect::<Vec<_>>(),
            ["http://localhost:8080/.well-known/oauth-protected-resource"]
        );
    }

    #[test]
    fn server_metadata_urls_in_the_spec_order() {
        let with_path = server_metadata_candidates("https://auth.example.com/tenant1").unwrap();
        assert_eq!(
            with_path.iter().map(Url::as_str).collect::<Vec<_>>(),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
                "https://auth.example.com/.well-known/openid-configuration/tenant1",
                "https://auth.example.com/tenant1/.well-known/openid-configuration",
            ]
        );
        let bare = server_metadata_candidates("http://localhost:9").unwrap();
        assert_eq!(
            bare.iter().map(Url::as_str).collect::<Vec<_>>(),
            [
                "http://localhost:9/.well-known/oauth-authorization-server",
                "http://localhost:9/.well-known/openid-configuration",
            ]
        );
        assert!(server_metadata_candidates("https://a.example?x=1").is_err());
        assert!(server_metadata_candidates("not a url").is_err());
    }

    #[test]
    fn a_resource_covers_its_own_path_and_below_on_its_origin_only() {
        let server = url("http://localhost:5/mcp");
        assert!(resource_covers("http://localhost:5/mcp", &server));
        assert!(resource_covers("http://localhost:5", &server));
        assert!(resource_covers("http://localhost:5/", &server));
        assert!(!resource_covers("https://evil.example.com/mcp", &server));
        assert!(!resource_covers("http://localhost:6/mcp", &server));
        assert!(!resource_covers("http://localhost:5/mc", &server));
        assert!(!resource_covers("http://localhost:5/mcp/other", &server));
        assert!(!resource_covers("not a url", &server));
    }
}
