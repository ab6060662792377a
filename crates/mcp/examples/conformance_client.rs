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
    Client, ClientHandler, ElicitParams, ElicitResult, EraChoice, Error, ErrorObject, ServerSpec,
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
    "request-metadata",
    "http-standard-headers",
    "http-custom-headers",
    "http-invalid-tool-headers",
    "sep-2322-client-request-state",
    "json-schema-ref-no-deref",
    "json-schema-2020-12-preservation",
    "sep-2640-client-no-prefetch",
    "sep-2640-client-verify-digest",
    "sep-2640-client-verify-size",
    "sep-2640-client-verify-frontmatter",
];

/// The newest protocol version the legacy era (the `initialize` handshake) covers.
const LAST_LEGACY_VERSION: &str = "2025-11-25";

/// The era the suite's protocol version asks for: a version past the legacy ones (2026-07-28)
/// is the modern era, reached by the ordinary probe; none, or a dated legacy version, is the
/// `initialize` handshake, never probed, so the legacy runs send what they always sent.
fn era_for(version: Option<&str>) -> EraChoice {
    match version.map(str::trim) {
        // Dated versions compare as text.
        Some(version) if !version.is_empty() && version > LAST_LEGACY_VERSION => EraChoice::Auto,
        _ => EraChoice::Legacy,
    }
}

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

/// How a scenario's client side ended.
type Outcome = Result<(), Box<dyn std::error::Error>>;

fn log(line: &str) {
    let _ = writeln!(std::io::stderr(), "conformance_client: {line}");
}

async fn call(client: &Client, tool: &str, args: Value) -> Result<(), Error> {
    let options = ToolCallOptions::new().timeout(Duration::from_secs(20));
    let result = client.call_tool(tool, args, options).await?;
    log(&format!("{tool} -> {}", result.joined_text()));
    Ok(())
}

/// The suite's context for the scenario (`MCP_CONFORMANCE_CONTEXT`), `null` when none.
fn context() -> Value {
    std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|text| serde_json::from_str::<Value>(&text).ok())
        .unwrap_or(Value::Null)
}

/// Lists the tools and calls each one the context's `toolCalls` names, with its arguments.
async fn context_calls(client: &Client) -> Outcome {
    client.list_tools().await?;
    let context = context();
    let calls = context
        .get("toolCalls")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if calls.is_empty() {
        log("the context names no toolCalls");
        return Err("the scenario's context names no toolCalls".into());
    }
    for entry in calls {
        let name = entry
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let args = entry.get("arguments").cloned().unwrap_or(json!({}));
        call(client, name, args).await?;
    }
    Ok(())
}

/// Lists the tools and calls every one the client kept: a tool whose `x-mcp-header`
/// designations are invalid is not listed in the modern era, so it is never called.
async fn call_listed(client: &Client) -> Outcome {
    for tool in client.list_tools().await? {
        log(&format!("listed {}", tool.name));
        call(client, &tool.name, json!({ "region": "us-west1" })).await?;
    }
    Ok(())
}

/// Exercises each kind of request that carries `Mcp-Name`: every listed tool, resource and
/// prompt once.
async fn every_kind(client: &Client) -> Outcome {
    for tool in client.list_tools().await? {
        call(client, &tool.name, json!({})).await?;
    }
    for resource in client.list_resources().await? {
        client.read_resource(&resource.uri).await?;
        log(&format!("read {}", resource.uri));
    }
    for prompt in client.list_prompts().await? {
        client.get_prompt(&prompt.name, Default::default()).await?;
        log(&format!("got prompt {}", prompt.name));
    }
    Ok(())
}

/// Lists the tools and echoes the 2020-12 tool's `inputSchema`, as received, to
/// `json_schema_echo`.
async fn echo_schema(client: &Client) -> Outcome {
    let tools = client.list_tools().await?;
    let Some(tool) = tools
        .iter()
        .find(|tool| tool.name == "json_schema_2020_12_tool")
    else {
        return Err("json_schema_2020_12_tool is not listed".into());
    };
    let schema: Value = serde_json::from_str(tool.input_schema.get())?;
    Ok(call(client, "json_schema_echo", json!({ "schema": schema })).await?)
}

/// Calls every tool of the multi-round-trip scenario: two ask for input (one with a
/// `requestState`), two do not.
async fn request_state(client: &Client) -> Outcome {
    client.list_tools().await?;
    for tool in [
        "test_mrtr_echo_state",
        "test_mrtr_no_state",
        "test_mrtr_unrelated",
        "test_mrtr_no_result_type",
    ] {
        call(client, tool, json!({})).await?;
    }
    Ok(())
}

/// Lists the skills (skills extension) and reads nothing: a skill's files are read only when
/// it is loaded.
async fn list_skills(client: &Client) -> Outcome {
    for skill in client.list_skills().await? {
        log(&format!(
            "skill {} ({} files), not loaded",
            skill.name().unwrap_or("?"),
            skill.resources.len()
        ));
    }
    Ok(())
}

/// Lists the skills and loads each one: its `SKILL.md` is read and verified against the
/// listing entry, and only a verified skill's other files are read (each verified too). The
/// scenario serves a tampered `SKILL.md`, so the load is refused; that refusal is the expected
/// end, not a failure of the run.
async fn load_skills(client: &Client) -> Outcome {
    for skill in client.list_skills().await? {
        match client.load_skill(&skill).await {
            Ok(_) => {
                log(&format!("skill {} verified and loaded", skill.uri));
                for file in skill.resources.iter().filter(|file| file.uri != skill.uri) {
                    client.read_skill_file(&skill, &file.uri).await?;
                    log(&format!("read {}", file.uri));
                }
            }
            Err(err) if err.is_skill_unverified() => {
                log(&format!("skill {} refused: {err}", skill.uri));
            }
            Err(err) => return Err(err.into()),
        }
    }
    Ok(())
}

async fn run(scenario: &str, url: &str) -> Outcome {
    let version = std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION").ok();
    let era = era_for(version.as_deref());
    let mut spec = ServerSpec::http("conformance", url)
        .startup_timeout(Duration::from_secs(20))
        .call_timeout(Duration::from_secs(20))
        .era(era);
    log(&format!(
        "scenario {scenario}, protocol {}, era {era}",
        version.as_deref().unwrap_or("unset")
    ));
    let is_auth = AUTH.contains(&scenario);
    if is_auth {
        let context = context();
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
        "connected to {url} (protocol {}, {} era)",
        client.protocol_version(),
        client.era()
    ));
    let outcome: Outcome = async {
        match scenario {
            "initialize" => Ok(()),
            "tools_call" => {
                client.list_tools().await?;
                Ok(call(&client, "add_numbers", json!({ "a": 2, "b": 3 })).await?)
            }
            "sse-retry" => {
                client.list_tools().await?;
                Ok(call(&client, "test_reconnection", json!({})).await?)
            }
            "elicitation-sep1034-client-defaults" => {
                client.list_tools().await?;
                Ok(call(&client, "test_client_elicitation_defaults", json!({})).await?)
            }
            // The probe meets a -32022 first and goes again at the version it names; then
            // one more request.
            "request-metadata" => Ok(client.list_tools().await.map(drop)?),
            "http-standard-headers" => every_kind(&client).await,
            "http-custom-headers" => context_calls(&client).await,
            "http-invalid-tool-headers" => call_listed(&client).await,
            "sep-2322-client-request-state" => request_state(&client).await,
            // Only tools/list is served; a network `$ref` is never resolved.
            "json-schema-ref-no-deref" => Ok(client.list_tools().await.map(drop)?),
            "json-schema-2020-12-preservation" => echo_schema(&client).await,
            "sep-2640-client-no-prefetch" => list_skills(&client).await,
            "sep-2640-client-verify-digest"
            | "sep-2640-client-verify-size"
            | "sep-2640-client-verify-frontmatter" => load_skills(&client).await,
            _ => {
                // Every authorization scenario: list, then call (a step-up comes on the call,
                // and a changed authorization server shows on the second request).
                client.list_tools().await?;
                Ok(call(&client, "test-tool", json!({})).await?)
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
