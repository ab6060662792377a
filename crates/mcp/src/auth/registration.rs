//! Who this client is to an authorization server, in the order MCP 2025-11-25 gives:
//! pre-registered credentials from the configuration; a registration stored earlier for the
//! same issuer; a Client ID Metadata Document URL where the server supports that; Dynamic
//! Client Registration (RFC 7591) where it offers an endpoint.

use url::Url;

use super::Authorizer;
use super::discovery::{Discovered, Era};
use super::failure::{AuthFailure, fail};
use super::fetch::{AuthHttp, require_tls};
use super::members::{MAX_ANSWER_TEXT_BYTES, MAX_CREDENTIAL_BYTES, Members};
use super::settings::{ClientAuthMethod, Grant, OAuthSettings};
use super::types::{ClientRegistration, RegistrationSource, Secret};

/// What a registration endpoint answers (RFC 7591 §3.2.1), the fields used.
#[derive(Debug)]
struct Registered {
    client_id: String,
    client_secret: Option<Secret>,
    token_endpoint_auth_method: Option<String>,
    client_secret_expires_at: Option<u64>,
}

impl Registered {
    /// Reads a registration answer's body: `client_secret` at most [`MAX_CREDENTIAL_BYTES`],
    /// the other text members [`MAX_ANSWER_TEXT_BYTES`]. The error names the member that is
    /// wrong and why, never a value (the answer may carry a client secret).
    fn decode(body: &[u8]) -> Result<Registered, String> {
        let members = Members::parse(body)?;
        Ok(Registered {
            client_id: members.required_text("client_id", MAX_ANSWER_TEXT_BYTES)?,
            client_secret: members
                .text("client_secret", MAX_CREDENTIAL_BYTES)?
                .map(Secret::new),
            token_endpoint_auth_method: members
                .text("token_endpoint_auth_method", MAX_ANSWER_TEXT_BYTES)?,
            client_secret_expires_at: members.whole_number("client_secret_expires_at")?,
        })
    }
}

/// The token endpoint auth method for a client with (or without) a secret, as the server's
/// metadata allows: `client_secret_basic` first (RFC 6749 §2.3.1 makes it the one servers
/// must support), then `client_secret_post`; `none` without a secret.
fn method_for(
    settings: &OAuthSettings,
    discovered: &Discovered,
    has_secret: bool,
) -> ClientAuthMethod {
    if let Some(method) = settings.token_endpoint_auth_method {
        return method;
    }
    if settings.client_private_key.is_some() {
        return ClientAuthMethod::PrivateKeyJwt;
    }
    if !has_secret {
        return ClientAuthMethod::None;
    }
    let metadata = &discovered.metadata;
    if metadata.token_endpoint_auth_methods_supported.is_none()
        || metadata.supports_auth_method("client_secret_basic")
    {
        ClientAuthMethod::ClientSecretBasic
    } else if metadata.supports_auth_method("client_secret_post") {
        ClientAuthMethod::ClientSecretPost
    } else {
        ClientAuthMethod::ClientSecretBasic
    }
}

/// The client's registration with `discovered`'s authorization server. `stored` is a
/// registration kept from an earlier run; it is reused when it belongs to the same issuer.
pub(crate) async fn identify(
    http: &AuthHttp,
    authorizer: &Authorizer,
    settings: &OAuthSettings,
    discovered: &Discovered,
    stored: Option<&ClientRegistration>,
    redirect_uri: Option<&str>,
    now: u64,
) -> Result<ClientRegistration, AuthFailure> {
    let issuer = &discovered.issuer;
    let token_endpoint = discovered.metadata.token_endpoint.clone();
    if let Some(client_id) = &settings.client_id {
        let method = method_for(settings, discovered, settings.client_secret.is_some());
        return Ok(ClientRegistration {
            issuer: issuer.clone(),
            client_id: client_id.clone(),
            client_secret: settings.client_secret.clone(),
            token_endpoint_auth_method: method.as_str().to_owned(),
            source: RegistrationSource::PreRegistered,
            expires_at: None,
            token_endpoint,
            redirect_uri: None,
        });
    }
    if let Some(stored) = stored
        && stored.issuer == *issuer
        && stored.source != RegistrationSource::PreRegistered
        && stored.is_current(now)
        && (stored.redirect_uri.is_none()
            || redirect_uri.is_none()
            || stored.redirect_uri.as_deref() == redirect_uri)
    {
        let mut reused = stored.clone();
        reused.token_endpoint = token_endpoint;
        return Ok(reused);
    }
    if discovered.metadata.client_id_metadata_document_supported == Some(true)
        && let Some(url) = &authorizer.client_metadata_url
    {
        return Ok(ClientRegistration {
            issuer: issuer.clone(),
            client_id: url.to_string(),
            client_secret: None,
            token_endpoint_auth_method: ClientAuthMethod::None.as_str().to_owned(),
            source: RegistrationSource::MetadataDocument,
            expires_at: None,
            token_endpoint,
            redirect_uri: None,
        });
    }
    let Some(endpoint) = discovered.metadata.registration_endpoint.as_deref() else {
        return Err(fail!(
            Registration,
            "the authorization server {issuer:?} offers no client registration: configure a pre-registered client (oauth.clientId)"
        ));
    };
    register(
        http,
        authorizer,
        settings,
        discovered,
        endpoint,
        redirect_uri,
    )
    .await
}

/// Dynamic Client Registration (RFC 7591 §3.1).
async fn register(
    http: &AuthHttp,
    authorizer: &Authorizer,
    settings: &OAuthSettings,
    discovered: &Discovered,
    endpoint: &str,
    redirect_uri: Option<&str>,
) -> Result<ClientRegistration, AuthFailure> {
    let url = Url::parse(endpoint).map_err(|err| {
        fail!(
            Registration,
            "invalid registration endpoint {endpoint:?}: {err}"
        )
    })?;
    require_tls(&url, "registration endpoint")?;
    let metadata = &discovered.metadata;
    // A public client unless the server only takes confidential ones.
    let method = if metadata.token_endpoint_auth_methods_supported.is_none()
        || metadata.supports_auth_method("none")
    {
        ClientAuthMethod::None
    } else {
        method_for(settings, discovered, true)
    };
    let (grant_types, response_types): (Vec<&str>, Vec<&str>) = match settings.grant {
        Grant::ClientCredentials => (vec!["client_credentials"], vec![]),
        _ => (vec!["authorization_code", "refresh_token"], vec!["code"]),
    };
    let mut body = serde_json::json!({
        "client_name": &*authorizer.client_name,
        "grant_types": grant_types,
        "response_types": response_types,
        "token_endpoint_auth_method": method.as_str(),
        "application_type": "native",
    });
    if let Some(redirect_uri) = redirect_uri {
        body["redirect_uris"] = serde_json::json!([redirect_uri]);
    }
    let fetched = http
        .post_json(&url, &body)
        .await
        .map_err(|err| fail!(Registration, "registering the client failed: {err}"))?;
    if !fetched.status.is_success() {
        return Err(fail!(
            Registration,
            "the registration endpoint refused the registration {}",
            authorizer.redact(&super::grants::refusal(&fetched))
        ));
    }
    let registered = Registered::decode(&fetched.body).map_err(|why| {
        fail!(
            Registration,
            "the registration endpoint's answer (HTTP {}) is not a registration: {why}",
            fetched.status.as_u16()
        )
    })?;
    if let Some(secret) = &registered.client_secret {
        authorizer.remember_secret(secret.expose());
    }
    let method = registered
        .token_endpoint_auth_method
        .clone()
        .unwrap_or_else(|| {
            if registered.client_secret.is_some() && method == ClientAuthMethod::None {
                ClientAuthMethod::ClientSecretBasic.as_str().to_owned()
            } else {
                method.as_str().to_owned()
            }
        });
    tracing::info!(issuer = %discovered.issuer, legacy = discovered.era == Era::Legacy, "registered the client dynamically");
    Ok(ClientRegistration {
        issuer: discovered.issuer.clone(),
        client_id: registered.client_id,
        client_secret: registered.client_secret,
        token_endpoint_auth_method: method,
        source: RegistrationSource::Dynamic,
        expires_at: registered.client_secret_expires_at,
        token_endpoint: discovered.metadata.token_endpoint.clone(),
        redirect_uri: redirect_uri.map(str::to_owned),
    })
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use http::{HeaderMap, StatusCode};

    use super::*;
    use crate::auth::fetch::Fetched;

    const SECRET: &str = "registered-secret-3b7e";

    #[test]
    fn a_registration_answer_is_read_member_by_member() {
        let answer = format!(
            r#"{{"client_id": "c-1", "client_secret": "{SECRET}", "client_secret_expires_at": "0",
                "token_endpoint_auth_method": "client_secret_post", "redirect_uris": []}}"#
        );
        let registered = Registered::decode(answer.as_bytes()).unwrap();
        assert_eq!(registered.client_id, "c-1");
        assert_eq!(
            registered.client_secret.as_ref().map(Secret::expose),
            Some(SECRET)
        );
        assert_eq!(registered.client_secret_expires_at, Some(0));
        assert!(!format!("{registered:?}").contains(SECRET));
    }

    #[test]
    fn registration_answer_members_are_capped() {
        use crate::auth::{MAX_ANSWER_TEXT_BYTES, MAX_CREDENTIAL_BYTES};
        let with = |member: &str, len: usize| {
            let mut answer = serde_json::json!({"client_id": "c", "client_secret": "s"});
            answer[member] = "x".repeat(len).into();
            Registered::decode(answer.to_string().as_bytes())
        };
        for (member, cap) in [
            ("client_id", MAX_ANSWER_TEXT_BYTES),
            ("client_secret", MAX_CREDENTIAL_BYTES),
            ("token_endpoint_auth_method", MAX_ANSWER_TEXT_BYTES),
        ] {
            assert!(with(member, cap).is_ok(), "{member}");
            let why = with(member, cap + 1).unwrap_err();
            assert!(why.contains(&format!("`{member}`")), "{why}");
        }
        assert!(with("client_id", 900 * 1024).is_err());
    }

    #[test]
    fn a_broken_registration_answer_names_the_member_never_the_secret() {
        let cases = [
            format!(r#"{{"client_id": 7, "client_secret": "{SECRET}"}}"#),
            format!(r#"{{"client_id": "c", "client_secret": ["{SECRET}"]}}"#),
            format!(r#"{{"client_id": "c", "client_secret_expires_at": "{SECRET}"}}"#),
            format!(r#"{{"client_secret": "{SECRET}"}}"#),
            format!(r#"{{"client_id": "c", "client_secret": "{SECRET}""#),
            format!(r#""{SECRET}""#),
        ];
        for body in cases {
            let why = Registered::decode(body.as_bytes()).unwrap_err();
            assert!(!why.contains(SECRET), "{body}: {why}");
        }
        let why = Registered::decode(br#"{"client_id": 7}"#).unwrap_err();
        assert!(why.contains("`client_id`"), "{why}");
        // A refusal says its error and description, never the rest of the body.
        let refused = Fetched {
            status: StatusCode::BAD_REQUEST,
            headers: HeaderMap::new(),
            body: Bytes::from(format!(
                r#"{{"error": "invalid_client_metadata", "error_description": "no", "client_secret": "{SECRET}"}}"#
            )),
        };
        let text = super::super::grants::refusal(&refused);
        assert!(
            text.contains("invalid_client_metadata") && !text.contains(SECRET),
            "{text}"
        );
    }
}
