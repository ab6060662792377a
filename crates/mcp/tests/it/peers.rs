//! Real MCP servers over stdio, at the pinned versions `.ci/mcp-peers/install.sh` installs:
//! `@modelcontextprotocol/server-everything` (TypeScript SDK; legacy era only), a Python server
//! on PyPI's `mcp` (`tests/peers/py_peer.py`; both eras) and the published `mcp-server-time`
//! (on the same SDK; both eras).
//!
//! They run when `SIDEWIRE_MCP_PEERS` names the install directory. Without it they print a
//! SKIPPED line and pass, unless `SIDEWIRE_REQUIRE_PEERS=1`, which makes a missing peer fail.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Map, json};
use sidewire_mcp::{
    Client, ClientHandler, CreateMessageParams, CreateMessageResult, ElicitParams, ElicitResult,
    Era, EraChoice, ErrorObject, LogLevel, Root, ServerSpec, ToolCallOptions,
};

use crate::support::*;

pub(crate) const EVERYTHING: &str =
    "npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js";
pub(crate) const PYTHON: &str = "py/bin/python";
/// `mcp-server-time`, installed into the same venv as the SDK.
pub(crate) const TIME_SERVER: &str = "py/bin/mcp-server-time";

/// The peers directory, or `None` (after saying so) when the tests should skip.
pub(crate) fn peers(what: &str, needs: &str) -> Option<PathBuf> {
    let required = std::env::var("SIDEWIRE_REQUIRE_PEERS").is_ok_and(|v| v == "1");
    let Some(dir) = std::env::var_os("SIDEWIRE_MCP_PEERS").map(PathBuf::from) else {
        assert!(
            !required,
            "SIDEWIRE_REQUIRE_PEERS=1 but SIDEWIRE_MCP_PEERS is not set; run .ci/mcp-peers/install.sh DIR and set SIDEWIRE_MCP_PEERS=DIR"
        );
        // Straight to the process's stderr, past the test harness's capture, so the skip is
        // visible in every run.
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED: real MCP peer test `{what}` did not run (set SIDEWIRE_MCP_PEERS; .ci/run does)"
        );
        return None;
    };
    assert!(
        dir.join(needs).exists(),
        "SIDEWIRE_MCP_PEERS={} has no {needs}; run .ci/mcp-peers/install.sh {}",
        dir.display(),
        dir.display()
    );
    Some(dir)
}

/// Answers sampling and elicitation like a user who always says yes.
#[derive(Default)]
pub(crate) struct Yes {
    pub(crate) samples: AtomicUsize,
    pub(crate) elicitations: Mutex<Vec<ElicitParams>>,
}

pub(crate) struct Handler(pub(crate) Arc<Yes>);

impl ClientHandler for Handler {
    fn supports_sampling(&self) -> bool {
        true
    }

    fn supports_elicitation(&self) -> bool {
        true
    }

    async fn create_message(
        &self,
        _: &str,
        _: CreateMessageParams,
    ) -> Result<CreateMessageResult, ErrorObject> {
        self.0.samples.fetch_add(1, Ordering::SeqCst);
        Ok(CreateMessageResult::text(
            "sidewire-test-model",
            "sampled answer",
        ))
    }

    async fn elicit(&self, _: &str, params: ElicitParams) -> Result<ElicitResult, ErrorObject> {
        let mut content = Map::new();
        content.insert("name".into(), json!("Ada"));
        content.insert("colour".into(), json!("blue"));
        content.insert("check".into(), json!(true));
        // Only fields the schema has may be sent back.
        if let Some(properties) = params
            .requested_schema
            .as_ref()
            .and_then(|s| s.get("properties"))
        {
            content.retain(|key, _| properties.get(key).is_some());
        }
        lock(&self.0.elicitations).push(params);
        Ok(ElicitResult::accept(content))
    }
}

pub(crate) async fn connect(spec: &ServerSpec, handler: Handler) -> Client {
    let (client, driver) = within("connect", Client::connect(spec, handler))
        .await
        .unwrap_or_else(|err| panic!("connect failed: {err}"));
    tokio::spawn(driver);
    client
}

pub(crate) async fn call(client: &Client, tool: &str, args: serde_json::Value) -> String {
    let result = within(tool, client.call_tool(tool, args, ToolCallOptions::new()))
        .await
        .unwrap_or_else(|err| panic!("{tool} failed: {err}"));
    assert!(!result.is_error, "{tool}: {result:?}");
    result.joined_text()
}

#[tokio::test]
async fn server_everything_over_stdio() {
    let Some(dir) = peers("server_everything_over_stdio", EVERYTHING) else {
        return;
    };
    let root_dir = temp_dir("everything-root");
    let root = Root::dir(&root_dir);
    let spec = ServerSpec::stdio("everything", "node")
        .arg(dir.join(EVERYTHING).to_string_lossy())
        .arg("stdio")
        .root(root.clone());
    let yes = Arc::new(Yes::default());
    let client = connect(&spec, Handler(Arc::clone(&yes))).await;
    assert_eq!(client.protocol_version(), "2025-11-25");
    assert!(client.instructions().is_some());

    let tools = client.list_tools().await.unwrap();
    for expected in ["echo", "get-sum", "trigger-long-running-operation"] {
        assert!(
            tools.iter().any(|t| t.name == expected),
            "no {expected} in {tools:?}"
        );
    }
    assert_eq!(
        call(&client, "echo", json!({"message": "hi"})).await,
        "Echo: hi"
    );
    assert!(
        call(&client, "get-sum", json!({"a": 2, "b": 3}))
            .await
            .contains('5')
    );

    // Progress from a long-running tool, through the callback.
    let reports = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&reports);
    let options = ToolCallOptions::new()
        .timeout(Duration::from_secs(5))
        .on_progress(move |p| lock(&sink).push(p.progress));
    let done = within(
        "the long-running operation",
        client.call_tool(
            "trigger-long-running-operation",
            json!({"duration": 1, "steps": 4}),
            options,
        ),
    )
    .await
    .unwrap();
    assert!(done.joined_text().contains("completed"), "{done:?}");
    assert_eq!(*lock(&reports), [1.0, 2.0, 3.0, 4.0]);

    // Prompts and resources.
    let prompts = client.list_prompts().await.unwrap();
    assert!(prompts.iter().any(|p| p.name == "simple-prompt"));
    let simple = client
        .get_prompt("simple-prompt", BTreeMap::new())
        .await
        .unwrap();
    assert!(!simple.messages.is_empty());
    let args = client
        .get_prompt(
            "args-prompt",
            BTreeMap::from([("city".to_owned(), "Paris".to_owned())]),
        )
        .await
        .unwrap();
    assert!(format!("{:?}", args.messages).contains("Paris"));
    let resources = client.list_resources().await.unwrap();
    let first = resources
        .first()
        .expect("server-everything lists resources");
    let read = client.read_resource(&first.uri).await.unwrap();
    assert!(!read.contents.is_empty());
    client.set_log_level(LogLevel::Error).await.unwrap();
    client.ping().await.unwrap();

    // Tools that depend on our capabilities are registered after `initialized` and announced
    // with tools/list_changed, which the client's debounced refresh picks up.
    within("the capability tools", async {
        while !client.tools().iter().any(|t| t.name == "get-roots-list") {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    let roots = call(&client, "get-roots-list", json!({})).await;
    assert!(roots.contains(&root.uri), "{roots}");

    // Elicitation, with the schema defaults filled in for what the "user" left out.
    let elicited = call(&client, "trigger-elicitation-request", json!({})).await;
    assert!(elicited.contains("Name: Ada"), "{elicited}");
    assert!(elicited.contains("Favorite Integer: 42"), "{elicited}");
    assert_eq!(lock(&yes.elicitations).len(), 1);

    // Sampling.
    let sampled = call(
        &client,
        "trigger-sampling-request",
        json!({"prompt": "hello"}),
    )
    .await;
    assert!(sampled.contains("sampled answer"), "{sampled}");
    assert_eq!(yes.samples.load(Ordering::SeqCst), 1);

    let pid = client.pid().unwrap();
    within("close", client.close()).await;
    wait_reaped(pid).await;
    std::fs::remove_dir_all(root_dir).unwrap();
}

/// The Python peer's tools are listed (its plain ones and `extra`) and its plain tools answer.
async fn python_basics(client: &Client, extra: &[&str]) {
    let tools = client.list_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    for expected in ["add", "echo", "slow"].iter().chain(extra) {
        assert!(names.contains(expected), "{names:?}");
    }
    assert_eq!(call(client, "add", json!({"a": 2, "b": 3})).await, "5");
    assert_eq!(
        call(client, "echo", json!({"message": "hi"})).await,
        "echo: hi"
    );
}

/// The Python peer's prompt and resource template answer.
async fn python_prompt_and_note(client: &Client) {
    let prompt = client
        .get_prompt(
            "greet",
            BTreeMap::from([("name".to_owned(), "Ada".to_owned())]),
        )
        .await
        .unwrap();
    assert_eq!(
        prompt.messages[0].content.as_text(),
        Some("Say hello to Ada")
    );
    let note = client.read_resource("peer://note/abc").await.unwrap();
    assert_eq!(note.contents[0].text.as_deref(), Some("note abc"));
}

#[tokio::test]
async fn python_sdk_server_over_stdio() {
    let Some(dir) = peers("python_sdk_server_over_stdio", PYTHON) else {
        return;
    };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/py_peer.py");
    let root = Root {
        uri: "file:///tmp/sidewire-peer-root".into(),
        name: Some("peer-root".into()),
    };
    // The legacy era: the peer's `roots` and `ask` tools send server→client requests, which
    // the modern era does not have (its input comes through multi-round-trip results).
    let spec = ServerSpec::stdio("py", dir.join(PYTHON).to_string_lossy())
        .arg(script.to_string_lossy())
        .root(root.clone())
        .era(sidewire_mcp::EraChoice::Legacy);
    let yes = Arc::new(Yes::default());
    let client = connect(&spec, Handler(Arc::clone(&yes))).await;
    assert_eq!(client.server_info().name, "py-peer");

    python_basics(&client, &["roots", "ask"]).await;
    let add = client
        .call_tool("add", json!({"a": 1, "b": 1}), ToolCallOptions::new())
        .await
        .unwrap();
    assert_eq!(add.structured_content, Some(json!({"result": 2})));
    let bad = client
        .call_tool("add", json!({"a": "x"}), ToolCallOptions::new())
        .await
        .unwrap();
    assert!(bad.is_error, "{bad:?}");

    let reports = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&reports);
    let options = ToolCallOptions::new()
        .timeout(Duration::from_secs(5))
        .on_progress(move |p| lock(&sink).push((p.progress, p.total, p.message)));
    let slow = within(
        "slow",
        client.call_tool("slow", json!({"steps": 3}), options),
    )
    .await
    .unwrap();
    assert_eq!(slow.joined_text(), "done after 3 steps");
    assert_eq!(
        lock(&reports).clone(),
        [
            (1.0, Some(3.0), Some("step 1".to_owned())),
            (2.0, Some(3.0), Some("step 2".to_owned())),
            (3.0, Some(3.0), Some("step 3".to_owned())),
        ]
    );

    assert_eq!(call(&client, "roots", json!({})).await, root.uri);
    // The "user" gave a colour only; the number comes from the schema's default.
    assert_eq!(call(&client, "ask", json!({})).await, "blue 7");

    python_prompt_and_note(&client).await;
    let templates = client.list_resource_templates().await.unwrap();
    assert!(
        templates
            .iter()
            .any(|t| t.uri_template == "peer://note/{key}"),
        "{templates:?}"
    );
    let err = client
        .get_prompt("nope", BTreeMap::new())
        .await
        .unwrap_err();
    assert!(err.is_remote(), "{err:?}");

    let pid = client.pid().unwrap();
    within("close", client.close()).await;
    wait_reaped(pid).await;
}

/// The Python SDK peer over stdio with the default [`EraChoice::Auto`]: the probe lands on the
/// modern era (2026-07-28), and the tools that need the client's input (`pick`, `where`) get
/// it through multi-round-trip results answered by the same [`ClientHandler`] and the spec's
/// roots.
#[tokio::test]
async fn python_sdk_server_over_stdio_in_the_modern_era() {
    let Some(dir) = peers("python_sdk_server_over_stdio_in_the_modern_era", PYTHON) else {
        return;
    };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/py_peer.py");
    let root = Root {
        uri: "file:///tmp/sidewire-modern-root".into(),
        name: Some("modern-root".into()),
    };
    let spec = ServerSpec::stdio("py", dir.join(PYTHON).to_string_lossy())
        .arg(script.to_string_lossy())
        .root(root.clone());
    assert_eq!(spec.era_choice(), EraChoice::Auto);
    let yes = Arc::new(Yes::default());
    let client = connect(&spec, Handler(Arc::clone(&yes))).await;
    assert_eq!(client.era(), Era::Modern);
    assert_eq!(client.protocol_version(), "2026-07-28");
    assert_eq!(client.server_info().name, "py-peer");

    python_basics(&client, &["pick", "where"]).await;
    let bad = client
        .call_tool("add", json!({"a": "x"}), ToolCallOptions::new())
        .await
        .unwrap();
    assert!(bad.is_error, "{bad:?}");

    // Elicitation as an input request: the handler answers, the SDK resumes the tool.
    assert_eq!(call(&client, "pick", json!({})).await, "blue 7");
    let asked = lock(&yes.elicitations).clone();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0].message, "What is your favourite colour?");
    // Roots as an input request: answered from the spec.
    assert_eq!(call(&client, "where", json!({})).await, root.uri);

    python_prompt_and_note(&client).await;
    client.ping().await.unwrap();

    let pid = client.pid().unwrap();
    within("close", client.close()).await;
    wait_reaped(pid).await;
}

/// `mcp-server-time` (a published server on the Python SDK 2.3.0, pinned by install.sh) over
/// stdio lands on the modern era with no choice made, and answers its `get_current_time` tool.
#[tokio::test]
async fn the_published_python_time_server_speaks_the_modern_era() {
    let Some(dir) = peers(
        "the_published_python_time_server_speaks_the_modern_era",
        TIME_SERVER,
    ) else {
        return;
    };
    let spec = ServerSpec::stdio("time", dir.join(TIME_SERVER).to_string_lossy())
        .arg("--local-timezone")
        .arg("UTC");
    let client = connect(&spec, Handler(Arc::new(Yes::default()))).await;
    assert_eq!(client.era(), Era::Modern);
    assert_eq!(client.protocol_version(), "2026-07-28");
    let tools = client.list_tools().await.unwrap();
    assert!(
        tools.iter().any(|t| t.name == "get_current_time"),
        "{tools:?}"
    );
    let text = call(
        &client,
        "get_current_time",
        json!({"timezone": "Asia/Tokyo"}),
    )
    .await;
    let answer: serde_json::Value =
        serde_json::from_str(&text).unwrap_or_else(|err| panic!("{err}: {text}"));
    assert_eq!(answer["timezone"], "Asia/Tokyo", "{answer}");
    assert!(
        answer["datetime"]
            .as_str()
            .is_some_and(|t| t.ends_with("+09:00")),
        "{answer}"
    );
    let converted = call(
        &client,
        "convert_time",
        json!({"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Kolkata"}),
    )
    .await;
    assert!(converted.contains("17:30"), "{converted}");
    let bad = client
        .call_tool(
            "get_current_time",
            json!({"timezone": "Not/AZone"}),
            ToolCallOptions::new(),
        )
        .await;
    assert!(
        bad.as_ref()
            .map_or_else(|err| err.is_remote(), |r| r.is_error),
        "{bad:?}"
    );
    let pid = client.pid().unwrap();
    within("close", client.close()).await;
    wait_reaped(pid).await;
}

/// server-everything's stdio process killed (SIGKILL) mid-session under a live host comes
/// back, with its tools listed again, and answers.
#[tokio::test]
async fn server_everything_killed_under_a_host_comes_back() {
    use sidewire_mcp::{McpHost, NoHandler, Restart, RestartPolicy, ServerState};
    let Some(dir) = peers(
        "server_everything_killed_under_a_host_comes_back",
        EVERYTHING,
    ) else {
        return;
    };
    let spec = ServerSpec::stdio("everything", "node")
        .arg(dir.join(EVERYTHING).to_string_lossy())
        .arg("stdio")
        .restart(Restart::OnCrash(
            RestartPolicy::default().backoff(Duration::from_millis(50), Duration::from_millis(200)),
        ));
    let (host, driver) = McpHost::new(NoHandler);
    let driver = tokio::spawn(driver);
    within("add", host.add(spec)).await.unwrap();
    let echo = |message: &'static str| {
        let host = host.clone();
        async move {
            let options = ToolCallOptions::new().timeout(Duration::from_secs(30));
            let args = json!({"message": message});
            let result = within(
                "echo",
                host.call_tool("mcp__everything__echo", args, options),
            )
            .await
            .unwrap_or_else(|err| panic!("echo failed: {err}"));
            result.joined_text()
        }
    };
    assert!(echo("before").await.contains("before"));
    let pid = host.client("everything").unwrap().pid().unwrap();
    let killed = std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    wait_reaped(pid).await;
    // The call is made as soon as the kill is seen: it waits for the restart if need be.
    assert!(echo("after").await.contains("after"));
    let status = host.status().into_iter().next().unwrap();
    assert_eq!(status.state, ServerState::Running);
    assert_eq!(status.restarts, 1);
    assert!(status.tools > 3);
    assert_ne!(status.pid, Some(pid));
    assert!(status.last_exit.unwrap().exit_status.is_some());
    within("shutdown", host.shutdown()).await;
    within("the host driver", driver).await.unwrap();
}

/// One host holding a modern server (the Python SDK peer, era auto) and a legacy one
/// (server-everything, era auto) at once: each lands on its own era, both tools are listed
/// under their namespaced names and both answer, and the status says each one's era.
#[tokio::test]
async fn one_host_talks_to_a_modern_and_a_legacy_server_at_once() {
    use sidewire_mcp::{McpHost, ServerState};
    let Some(dir) = peers(
        "one_host_talks_to_a_modern_and_a_legacy_server_at_once",
        EVERYTHING,
    ) else {
        return;
    };
    assert!(
        dir.join(PYTHON).exists(),
        "no {PYTHON} in {}",
        dir.display()
    );
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/py_peer.py");
    let modern =
        ServerSpec::stdio("py", dir.join(PYTHON).to_string_lossy()).arg(script.to_string_lossy());
    let legacy = ServerSpec::stdio("everything", "node")
        .arg(dir.join(EVERYTHING).to_string_lossy())
        .arg("stdio");
    let yes = Arc::new(Yes::default());
    let (host, driver) = McpHost::new(Handler(Arc::clone(&yes)));
    let driver = tokio::spawn(driver);
    let failures = within("start", host.start_available(vec![modern, legacy])).await;
    assert!(failures.is_empty(), "{failures:?}");
    assert_eq!(host.client("py").unwrap().era(), Era::Modern);
    assert_eq!(host.client("everything").unwrap().era(), Era::Legacy);
    let status = host.status();
    let era_of = |name: &str| status.iter().find(|s| s.name == name).and_then(|s| s.era);
    assert_eq!(era_of("py"), Some(Era::Modern));
    assert_eq!(era_of("everything"), Some(Era::Legacy));
    assert!(
        status.iter().all(|s| s.state == ServerState::Running),
        "{status:?}"
    );

    let options = || ToolCallOptions::new().timeout(Duration::from_secs(30));
    let (modern, legacy) = tokio::join!(
        host.call_tool("mcp__py__add", json!({"a": 20, "b": 22}), options()),
        host.call_tool(
            "mcp__everything__echo",
            json!({"message": "both"}),
            options()
        ),
    );
    assert_eq!(modern.unwrap().joined_text(), "42");
    assert!(legacy.unwrap().joined_text().contains("both"));
    // The modern server's input request goes through the host's one handler.
    let pick = within(
        "pick",
        host.call_tool("mcp__py__pick", json!({}), options()),
    )
    .await
    .unwrap();
    assert_eq!(pick.joined_text(), "blue 7");
    assert_eq!(lock(&yes.elicitations).len(), 1);
    within("shutdown", host.shutdown()).await;
    within("the host driver", driver).await.unwrap();
}
