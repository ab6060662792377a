//! A client for the official MCP conformance suite (`@modelcontextprotocol/conformance`).
//!
//! The suite starts a mock server for one scenario and runs this program with the server's URL
//! as the last argument and the scenario's name in `MCP_CONFORMANCE_SCENARIO`. It exits 0 when
//! the scenario's client side went through, 1 otherwise; the suite judges the wire traffic.
//! `.ci/conformance/run.sh` builds and runs it.

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use serde_json::{Map, Value, json};
use sidewire_mcp::{
    Client, ClientHandler, ElicitParams, ElicitResult, Error, ErrorObject, ServerSpec,
    ToolCallOptions,
};

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
    let spec = ServerSpec::http("conformance", url)
        .startup_timeout(Duration::from_secs(20))
        .call_timeout(Duration::from_secs(20));
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
            other => {
                log(&format!("unknown scenario {other:?}: listing tools only"));
                client.list_tools().await.map(drop)
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
    match run(&scenario, &url).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            log(&format!("scenario {scenario:?} failed: {err}"));
            ExitCode::FAILURE
        }
    }
}
