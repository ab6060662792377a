//! A client for the official MCP conformance suite (`@modelcontextprotocol/conformance`).
//!
//! The suite starts a mock server for one scenario and runs this program with the server's URL
//! as the last argument and the scenario's name in `MCP_CONFORMANCE_SCENARIO`. It exits 0 when
//! the scenario's client side went through, 1 otherwise; the suite judges the wire traffic.
//! `.ci/conformance/run.sh` builds and runs it.
//!
//! Every scenario it knows is dispatched by name; an unknown one fails at once (it never
//! passes by doing something generic). The `auth/*` scenarios run the OAuth client headless
//! (it follows the authorization URL itself), with the credentials the suite gives in
//! `MCP_CONFORMANCE_CONTEXT`.

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use serde_json::{Map, Value, json};
use sidewire_mcp::auth::{AssertionSource, Authorizer, Grant, Interaction, OAuthSettings};
use sidewire_mcp::{
    Client, ClientHandler, ElicitParams, ElicitResult, Error, ErrorObject, ServerSpec,
    ToolCallOptions,
};

/// The Client ID Metadata Document URL the suite expects where the server supports them.
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

/// The scenarios that need no authorization.
const PLAIN: &[&str] = &[
    "initialize",
    "tools_call",
    "sse-retry",
    "elicitation-sep1034-client-defaults",
];

/// The authorization scenarios whose flow is the ordinary one (discover, register or use the
/// given client, authorize, call).
const AUTH: &[&str] = &[
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/basic-cimd",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-step-up",
    "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/pre-registration",
    "auth/2025-03-26-oauth-metadata-backcompat",
    "auth/2025-03-26-oauth-endpoint-fallback",
    "auth/resource-mismatch",
    "auth/offline-access-scope",
    "auth/offline-access-not-supported",
    "auth/authorization-server-migration",
    "auth/iss-supported",
    "auth/iss-not-advertised",
    "auth/iss-supported-missing",
    "auth/iss-wrong-issuer",
    "auth/iss-unexpected",
    "auth/iss-normalized",
    "auth/metadata-issuer-mismatch",
    "auth/client-credentials-jwt",
    "auth/client-credentials-basic",
    "auth/dpop",
    "auth/dpop-nonce",
    "auth/enterprise-managed-authorization",
    "auth/cross-app-access-complete-flow",
    "auth/wif-jwt-bearer",
];

/// A string field of the suite's context.
fn context_str(context: &Value, key: &str) -> Option<String> {
    context.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// The OAuth settings a scenario's context asks for.
fn oauth_settings(scenario: &str, context: &Value) -> OAuthSettings {
    let mut settings = OAuthSettings::new();
    if let Some(id) = context_str(context, "client_id") {
        settings = settings.client_id(id);
    }
    if let Some(secret) = context_str(context, "client_secret") {
        settings = settings.client_secret(secret);
    }
    if let Some(key) = context_str(context, "private_key_pem") {
        settings = settings.client_private_key(key);
    }
    if scenario.starts_with("auth/client-credentials-") {
        settings = settings.grant(Grant::ClientCredentials);
    }
    if let Some(alg) = context_str(context, "signing_algorithm") {
        settings = settings.client_key_alg(alg);
    }
    if let (Some(endpoint), Some(token)) = (
        context_str(context, "idp_token_endpoint"),
        context_str(context, "idp_id_token"),
    ) {
        let mut grant = Grant::token_exchange(endpoint, AssertionSource::Value(token.into()));
        if let Some(id) = context_str(context, "idp_client_id") {
            grant = grant.idp_client_id(id);
        }
        settings = settings.grant(grant);
    }
    if let Some(jwt) = context_str(context, "valid_jwt") {
        settings = settings.grant(Grant::jwt_bearer(AssertionSource::Value(jwt.into())));
    }
    settings
}

/// Accepts every elicitation with the schema's defaults filled in (SEP-1034).
struct Defaults;

impl ClientHandler for Defaults {
    fn supports_elicitation(&self) -> bool {
        true
    }

    async fn elicit(&self, _: &str, params: ElicitParams) -> Result<ElicitResult, ErrorObject> {
        let mut content = Map::new();
        let properties = params
            .requested_schema
            .as_ref()
            .and_then(|schema| schema.get("properties"))
            .and_then(Value::as_object);
        for (name, property) in properties.into_iter().flatten() {
            if let Some(default) = property.get("default") {
                content.insert(name.clone(), default.clone());
            }
        }
        Ok(ElicitResult::accept(content))
    }
}

fn log(line: &str) {
    let _ = writeln!(std::io::stderr(), "conformance_client: {line}");
}

async fn call(client: &Client, tool: &str, args: Value) -> Result<(), Error> {
    let options = ToolCallOptions::new().timeout(Duration::from_secs(20));
    let result = client.call_tool(tool, args, options).await?;
    log(&format!("{tool} -> {}", result.joined_text()));
    Ok(())
}

async fn run(scenario: &str, url: &str) -> Result<(), Error> {
    let mut spec = ServerSpec::http("conformance", url)
        .startup_timeout(Duration::from_secs(20))
        .call_timeout(Duration::from_secs(20));
    let is_auth = AUTH.contains(&scenario);
    if is_auth {
        let context = std::env::var("MCP_CONFORMANCE_CONTEXT")
            .ok()
            .and_then(|text| serde_json::from_str::<Value>(&text).ok())
            .unwrap_or(Value::Null);
        let authorizer = Authorizer::in_memory()
            .interaction(Interaction::Headless)
            .callback_timeout(Duration::from_secs(20))
            .client_metadata_url(CLIENT_METADATA_URL);
        spec = spec
            .authorizer(authorizer)
            .oauth(oauth_settings(scenario, &context));
    }
    let (client, driver) = Client::connect(&spec, Defaults).await?;
    let driver = tokio::spawn(driver);
    log(&format!(
        "connected to {url} (protocol {})",
        client.protocol_version()
    ));
    let outcome = async {
        match scenario {
            "initialize" => Ok(()),
            "tools_call" => {
                client.list_tools().await?;
                call(&client, "add_numbers", json!({ "a": 2, "b": 3 })).await
            }
            "sse-retry" => {
                client.list_tools().await?;
                call(&client, "test_reconnection", json!({})).await
            }
            "elicitation-sep1034-client-defaults" => {
                client.list_tools().await?;
                call(&client, "test_client_elicitation_defaults", json!({})).await
            }
            _ => {
                // Every authorization scenario: list, then call (a step-up comes on the call,
                // and a changed authorization server shows on the second request).
                client.list_tools().await?;
                call(&client, "test-tool", json!({})).await
            }
        }
    }
    .await;
    client.close().await;
    drop(client);
    let _ = tokio::time::timeout(Duration::from_secs(2), driver).await;
    outcome
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let Some(url) = std::env::args().skip(1).last() else {
        log("usage: conformance_client [ARGS...] SERVER_URL");
        return ExitCode::from(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    if !AUTH.contains(&scenario.as_str()) && !PLAIN.contains(&scenario.as_str()) {
        log(&format!(
            "unknown scenario {scenario:?}: this client does not implement it"
        ));
        return ExitCode::FAILURE;
    }
    match run(&scenario, &url).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            log(&format!("scenario {scenario:?} failed: {err}"));
            ExitCode::FAILURE
        }
    }
}
