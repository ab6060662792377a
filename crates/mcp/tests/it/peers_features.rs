//! 2025-11-25 client features against the pinned `@modelcontextprotocol/server-everything`:
//! structured output checked against its `outputSchema`, arguments against its `inputSchema`,
//! and URL elicitation by both of its paths (`elicitation/create` and the `-32042` error).
//! Peer-gated like `peers.rs`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use sidewire_mcp::{
    Client, ClientHandler, ElicitAction, ErrorObject, ServerSpec, ToolCallOptions, UrlElicitation,
};

use crate::peers::{EVERYTHING, peers};
use crate::support::*;

/// A user who agrees to open every URL (and records what was asked).
#[derive(Default)]
struct Consent {
    asked: Mutex<Vec<UrlElicitation>>,
}

struct ConsentH(Arc<Consent>);

impl ClientHandler for ConsentH {
    fn supports_url_elicitation(&self) -> bool {
        true
    }

    async fn elicit_url(
        &self,
        _server: &str,
        request: UrlElicitation,
    ) -> Result<ElicitAction, ErrorObject> {
        lock(&self.0.asked).push(request);
        Ok(ElicitAction::Accept)
    }
}

#[tokio::test]
async fn server_everything_structured_output_and_url_elicitation() {
    let Some(dir) = peers(
        "server_everything_structured_output_and_url_elicitation",
        EVERYTHING,
    ) else {
        return;
    };
    let spec = ServerSpec::stdio("everything", "node")
        .arg(dir.join(EVERYTHING).to_string_lossy())
        .arg("stdio");
    let consent = Arc::new(Consent::default());
    let (client, driver) = within(
        "connect",
        Client::connect(&spec, ConsentH(Arc::clone(&consent))),
    )
    .await
    .unwrap_or_else(|err| panic!("connect failed: {err}"));
    tokio::spawn(driver);

    // Structured output: listed with its schema, checked on every call.
    let tools = within("list", client.list_tools()).await.unwrap();
    let structured = tools
        .iter()
        .find(|tool| tool.name == "get-structured-content")
        .expect("server-everything has get-structured-content");
    assert!(structured.output_schema.is_some());
    let checked = ToolCallOptions::new().validate_arguments(true);
    let result = within(
        "get-structured-content",
        client.call_tool(
            "get-structured-content",
            json!({"location": "Chicago"}),
            checked.clone(),
        ),
    )
    .await
    .unwrap_or_else(|err| panic!("get-structured-content: {err}"));
    assert_eq!(
        result.structured_content.as_ref().unwrap()["temperature"],
        36
    );
    // A location outside the schema's enum is refused before anything is sent.
    let err = within(
        "bad location",
        client.call_tool(
            "get-structured-content",
            json!({"location": "Paris"}),
            checked,
        ),
    )
    .await
    .unwrap_err();
    assert!(err.is_invalid_arguments(), "{err}");
    assert_eq!(err.schema_violations()[0].instance_path, "/location");

    // The URL tool is registered after `initialized`, for clients advertising elicitation.url.
    within("trigger-url-elicitation registered", async {
        while !client
            .tools()
            .iter()
            .any(|t| t.name == "trigger-url-elicitation")
        {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;

    // The request path: elicitation/create with mode url, answered by the handler.
    let args = json!({"url": "https://example.com/connect?step=1", "elicitationId": "e-req"});
    let result = within(
        "url elicitation (request path)",
        client.call_tool("trigger-url-elicitation", args, ToolCallOptions::new()),
    )
    .await
    .unwrap_or_else(|err| panic!("trigger-url-elicitation: {err}"));
    assert!(
        result.joined_text().contains("User completed"),
        "{result:?}"
    );
    {
        let asked = lock(&consent.asked);
        assert_eq!(asked.len(), 1);
        assert_eq!(asked[0].host(), "example.com");
        assert_eq!(asked[0].elicitation_id, "e-req");
    }

    // The error path: -32042 carrying a prerequisite URL, offered, then the call retried.
    let args = json!({"url": "https://example.com/connect?step=2", "errorPath": true});
    let err = within(
        "url elicitation (error path)",
        client.call_tool(
            "trigger-url-elicitation",
            args.clone(),
            ToolCallOptions::new(),
        ),
    )
    .await
    .unwrap_err();
    assert!(err.is_url_elicitation_required(), "{err}");
    let required = err.url_elicitations();
    assert_eq!(required.len(), 1);
    assert_eq!(required[0].host(), "modelcontextprotocol.io");
    let outcomes = within("offer", client.offer_url_elicitations(&err))
        .await
        .unwrap();
    assert_eq!(outcomes[0].1, ElicitAction::Accept);
    let retried = within(
        "retry",
        client.call_tool("trigger-url-elicitation", args, ToolCallOptions::new()),
    )
    .await
    .unwrap_or_else(|err| panic!("the retry: {err}"));
    assert!(
        retried.joined_text().contains("User completed"),
        "{retried:?}"
    );
    assert_eq!(lock(&consent.asked).len(), 3);

    within("close", client.close()).await;
}
