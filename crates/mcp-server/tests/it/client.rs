//! sidewire's own client against the server: both eras, over a pipe and over Streamable
//! HTTP: a paged listing, progress, and a request to the client (a legacy server request, a
//! modern input request).

use std::sync::{Arc, Mutex};

use serde_json::json;
use sidewire_mcp::{
    Client, ClientHandler, CreateMessageParams, CreateMessageResult, Era, EraChoice, ErrorObject,
    ServerSpec, ToolCallOptions,
};
use sidewire_mcp_server::{Limits, Server};

use crate::support::{Probe, http, within};

/// Answers sampling with a fixed text.
struct Model;

impl ClientHandler for Model {
    fn supports_sampling(&self) -> bool {
        true
    }

    async fn create_message(
        &self,
        _server: &str,
        _params: CreateMessageParams,
    ) -> Result<CreateMessageResult, ErrorObject> {
        Ok(CreateMessageResult::text("m", "forty-two"))
    }
}

fn paged() -> Limits {
    let mut limits = Limits::default();
    limits.page_size = 2;
    limits
}

async fn exercise(client: &Client, era: Era) {
    assert_eq!(client.era(), era);
    assert_eq!(client.server_info().name, "probe");
    let tools = within("tools/list", client.list_tools()).await.unwrap();
    assert_eq!(tools.len(), 11, "every page walked: {tools:?}");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let progress = Arc::clone(&seen);
    let options = ToolCallOptions::new()
        .on_progress(move |report| progress.lock().unwrap().push(report.progress));
    let echoed = within(
        "echo",
        client.call_tool("echo", json!({"text": "hi"}), options),
    )
    .await
    .unwrap();
    assert_eq!(echoed.joined_text(), "hi");
    assert_eq!(*seen.lock().unwrap(), [0.5]);
    let asked = within(
        "ask",
        client.call_tool("ask", json!({}), ToolCallOptions::new()),
    )
    .await
    .unwrap();
    assert_eq!(asked.joined_text(), "model: forty-two");
    let unknown = within(
        "unknown",
        client.call_tool("nope", json!({}), ToolCallOptions::new()),
    )
    .await;
    assert_eq!(unknown.unwrap_err().remote().map(|e| e.code), Some(-32602));
}

#[tokio::test]
async fn sidewire_client_over_a_pipe_in_both_eras() {
    for (choice, era) in [
        (EraChoice::Legacy, Era::Legacy),
        (EraChoice::Modern, Era::Modern),
    ] {
        let (client_io, server_io) = tokio::io::duplex(1 << 20);
        let server = Server::with_limits(Probe::default(), paged());
        let serving = tokio::spawn(async move {
            let (read, write) = tokio::io::split(server_io);
            server.serve_stdio(read, write).await
        });
        let (read, write) = tokio::io::split(client_io);
        let spec = ServerSpec::stdio("probe", "unused").era(choice);
        let (client, driver) = within(
            "connect",
            Client::connect_streams(&spec, read, write, Model),
        )
        .await
        .unwrap();
        tokio::spawn(driver);
        exercise(&client, era).await;
        client.close().await;
        within("the server ends", serving)
            .await
            .unwrap()
            .expect("a clean end");
    }
}

#[tokio::test]
async fn sidewire_client_over_http_in_both_eras() {
    for (choice, era) in [
        (EraChoice::Legacy, Era::Legacy),
        (EraChoice::Modern, Era::Modern),
    ] {
        let (url, server) = http(paged(), Default::default()).await;
        let spec = ServerSpec::http("probe", url).era(choice);
        let (client, driver) = within("connect", Client::connect(&spec, Model))
            .await
            .unwrap();
        tokio::spawn(driver);
        exercise(&client, era).await;
        assert_eq!(server.sessions(), usize::from(era == Era::Legacy));
        client.close().await;
        if era == Era::Legacy {
            sidewire_test_support::eventually(crate::support::LIMIT, "the session deleted", || {
                server.sessions() == 0
            })
            .await;
        }
    }
}
