//! An `oauth` object in Claude Code's shape (see the [crate docs](crate#members)) read into
//! [`OAuthSettings`]; `clientSecret` is expanded like the other values.

use serde_json::Value;

use sidewire_mcp::auth::{ClientAuthMethod, Grant, OAuthSettings, Secret};

use crate::error::Error;
use crate::values::{display_key, expected, object, optional_string};

/// The members `oauth` may have.
const OAUTH_MEMBERS: [&str; 7] = [
    "clientId",
    "clientSecret",
    "callbackPort",
    "scopes",
    "authServerMetadataUrl",
    "tokenEndpointAuthMethod",
    "grant",
];

/// An `oauth` object (see the module docs).
pub(crate) fn oauth(
    value: &Value,
    path: &str,
    secret: &mut dyn FnMut(&str, &str) -> Result<String, Error>,
) -> Result<OAuthSettings, Error> {
    let members = object(value, path)?;
    let field = |member: &str| format!("{path}.{member}");
    if let Some(unknown) = members
        .keys()
        .find(|key| !OAUTH_MEMBERS.contains(&key.as_str()))
    {
        return Err(Error::invalid(format!(
            "{}: unknown member; `oauth` has {}",
            field(&display_key(unknown)),
            OAUTH_MEMBERS.join(", ")
        )));
    }
    let mut settings = OAuthSettings::new();
    if let Some(id) = optional_string(members, "clientId", &field("clientId"))? {
        if id.trim().is_empty() {
            return Err(Error::invalid(format!(
                "{}: expected a non-empty string",
                field("clientId")
            )));
        }
        settings = settings.client_id(id);
    }
    let secret_of = secret;
    if let Some(secret) = optional_string(members, "clientSecret", &field("clientSecret"))? {
        let secret = secret_of(secret, &field("clientSecret"))?;
        if secret.is_empty() {
            return Err(Error::invalid(format!(
                "{}: the secret is empty",
                field("clientSecret")
            )));
        }
        settings = settings.client_secret(Secret::new(secret));
    }
    match members.get("callbackPort") {
        None | Some(Value::Null) => {}
        Some(value) => match value.as_u64().and_then(|n| u16::try_from(n).ok()) {
            Some(port) if port > 0 => settings = settings.callback_port(port),
            _ if value.is_number() => {
                return Err(Error::invalid(format!(
                    "{}: expected a port from 1 to 65535, got {value}",
                    field("callbackPort")
                )));
            }
            _ => return Err(expected(&field("callbackPort"), "a port number", value)),
        },
    }
    match members.get("scopes") {
        None | Some(Value::Null) => {}
        Some(value) => settings = settings.scopes(scopes(value, &field("scopes"))?),
    }
    if let Some(url) = optional_string(
        members,
        "authServerMetadataUrl",
        &field("authServerMetadataUrl"),
    )? {
        let parsed = url::Url::parse(url).map_err(|err| {
            Error::invalid(format!(
                "{}: not a URL ({err})",
                field("authServerMetadataUrl")
            ))
        })?;
        if !matches!(parsed.scheme(), "https" | "http") {
            return Err(Error::invalid(format!(
                "{}: expected an https:// URL, got a {}: URL",
                field("authServerMetadataUrl"),
                parsed.scheme()
            )));
        }
        settings = settings.auth_server_metadata_url(url);
    }
    let method_path = field("tokenEndpointAuthMethod");
    if let Some(name) = optional_string(members, "tokenEndpointAuthMethod", &method_path)? {
        let method = ClientAuthMethod::from_name(name).ok_or_else(|| {
            Error::invalid(format!(
                "{method_path}: unknown method {name:?}; expected none, client_secret_basic, \
                 client_secret_post or private_key_jwt"
            ))
        })?;
        settings = settings.token_endpoint_auth_method(method);
    }
    if let Some(name) = optional_string(members, "grant", &field("grant"))? {
        let grant = match name {
            "authorization_code" => Grant::AuthorizationCode,
            "client_credentials" => Grant::ClientCredentials,
            other => {
                return Err(Error::invalid(format!(
                    "{}: unknown grant {other:?}; expected authorization_code or \
                     client_credentials",
                    field("grant")
                )));
            }
        };
        settings = settings.grant(grant);
    }
    Ok(settings)
}

/// `scopes`: a space-separated string or an array of strings, at least one scope either way.
fn scopes(value: &Value, path: &str) -> Result<Vec<String>, Error> {
    let scopes: Vec<String> = match value {
        Value::String(text) => text.split_whitespace().map(str::to_owned).collect(),
        Value::Array(items) => {
            let mut scopes = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                match item {
                    Value::String(scope)
                        if !scope.is_empty() && !scope.contains(char::is_whitespace) =>
                    {
                        scopes.push(scope.clone());
                    }
                    Value::String(scope) => {
                        return Err(Error::invalid(format!(
                            "{path}[{i}]: expected one scope, got {scope:?}"
                        )));
                    }
                    other => return Err(expected(&format!("{path}[{i}]"), "a string", other)),
                }
            }
            scopes
        }
        other => return Err(expected(path, "a string or an array of strings", other)),
    };
    if scopes.is_empty() {
        return Err(Error::invalid(format!(
            "{path}: expected at least one scope"
        )));
    }
    Ok(scopes)
}
