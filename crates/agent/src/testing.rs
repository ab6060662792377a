//! Fakes for the unit tests: an extension host with no plugin (every point passes its payload
//! through, and `permission.decision` keeps the host's verdict), a scripted [`Model`] and an
//! in-memory [`ToolHost`].

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_core::Stream;
use serde_json::{Value, json};
use sidewire_ext_host::protocol::{
    ChunkType, ProviderChunk, ProviderRequest, ProviderToolCall, ProviderToolSchema, ProviderUsage,
};
use sidewire_ext_host::{ExtensionHost, HostConfig};
use sidewire_jsonrpc::lock;
use sidewire_mcp::{CallToolResult, ToolCallOptions};
use sidewire_test_support::within;

use crate::tools::ToolHost;
use crate::turn::Model;

/// A booted extension host with no plugin installed, and the directory it keeps its state in.
pub(crate) async fn empty_host() -> (ExtensionHost, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let config = HostConfig::new(dir.path(), "s-test", dir.path());
    let (host, _events) = within(
        Duration::from_secs(10),
        "an empty host's boot",
        ExtensionHost::boot(config),
    )
    .await
    .expect("an empty host boots");
    (host, dir)
}

pub(crate) fn text(text: &str) -> ProviderChunk {
    ProviderChunk {
        text: text.to_owned(),
        ..ProviderChunk::new(ChunkType::Text)
    }
}

pub(crate) fn reasoning(text: &str) -> ProviderChunk {
    ProviderChunk {
        text: text.to_owned(),
        ..ProviderChunk::new(ChunkType::Reasoning)
    }
}

pub(crate) fn call(id: &str, name: &str, arguments: &str) -> ProviderChunk {
    ProviderChunk {
        tool_call: Some(ProviderToolCall {
            id: id.to_owned(),
            name: name.to_owned(),
            arguments: arguments.to_owned(),
            thought_signature: String::new(),
        }),
        ..ProviderChunk::new(ChunkType::ToolCall)
    }
}

pub(crate) fn usage(total: u64) -> ProviderChunk {
    ProviderChunk {
        usage: Some(ProviderUsage {
            prompt_tokens: total / 2,
            completion_tokens: total - total / 2,
            total_tokens: total,
            finish_reason: "stop".to_owned(),
            ..ProviderUsage::default()
        }),
        ..ProviderChunk::new(ChunkType::Usage)
    }
}

pub(crate) fn done() -> ProviderChunk {
    ProviderChunk::new(ChunkType::Done)
}

type ChunkStream =
    Pin<Box<dyn Stream<Item = Result<ProviderChunk, sidewire_ext_host::Error>> + Send>>;

/// What a fake model does with a request.
pub(crate) type Script = Box<dyn Fn(&ProviderRequest) -> ChunkStream + Send + Sync>;

/// A model that answers each request with the next script (the last one again when they run
/// out), and records the requests.
pub(crate) struct FakeModel {
    scripts: Mutex<VecDeque<Arc<Script>>>,
    pub(crate) requests: Mutex<Vec<ProviderRequest>>,
}

impl FakeModel {
    /// A model answering with `rounds`' chunks, one list per request.
    pub(crate) fn new(rounds: Vec<Vec<ProviderChunk>>) -> Self {
        FakeModel::scripted(
            rounds
                .into_iter()
                .map(|chunks| {
                    Box::new(move |_: &ProviderRequest| {
                        let items: Vec<_> = chunks.clone().into_iter().map(Ok).collect();
                        Box::pin(futures_util::stream::iter(items)) as ChunkStream
                    }) as Script
                })
                .collect(),
        )
    }

    /// A model answering with `scripts`, one per request.
    pub(crate) fn scripted(scripts: Vec<Script>) -> Self {
        FakeModel {
            scripts: Mutex::new(scripts.into_iter().map(Arc::new).collect()),
            requests: Mutex::new(Vec::new()),
        }
    }

    pub(crate) fn requests(&self) -> Vec<ProviderRequest> {
        lock(&self.requests).clone()
    }
}

impl Model for FakeModel {
    type Stream = ChunkStream;

    fn open(
        &self,
        request: ProviderRequest,
    ) -> impl Future<Output = Result<Self::Stream, sidewire_ext_host::Error>> + Send {
        let script = {
            let mut scripts = lock(&self.scripts);
            if scripts.len() > 1 {
                scripts.pop_front()
            } else {
                scripts.front().cloned()
            }
        };
        let stream = script.expect("the fake model has a script")(&request);
        lock(&self.requests).push(request);
        std::future::ready(Ok(stream))
    }
}

/// A stream that yields `chunk` 10,000 times (as good as forever for the bounds under test, and
/// a test of a broken bound still ends), counting what it yielded and noting when it is dropped.
pub(crate) fn endless(
    chunk: ProviderChunk,
    yielded: Arc<AtomicUsize>,
    dropped: Arc<AtomicUsize>,
) -> ChunkStream {
    struct Guard(Arc<AtomicUsize>);
    impl Drop for Guard {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    let guard = Guard(dropped);
    Box::pin(futures_util::StreamExt::take(
        futures_util::stream::repeat_with(move || {
            let _keep = &guard;
            yielded.fetch_add(1, Ordering::SeqCst);
            Ok(chunk.clone())
        }),
        10_000,
    ))
}

/// An in-memory tool host: each tool answers with a function of its arguments.
pub(crate) struct FakeTools {
    tools: Vec<FakeTool>,
    /// Every call made: (name, arguments).
    pub(crate) calls: Mutex<Vec<(String, Value)>>,
}

struct FakeTool {
    name: String,
    read_only: bool,
    answer: Box<dyn Fn(&Value) -> CallToolResult + Send + Sync>,
}

impl FakeTools {
    pub(crate) fn new() -> Self {
        FakeTools {
            tools: Vec::new(),
            calls: Mutex::new(Vec::new()),
        }
    }

    /// Adds a tool.
    pub(crate) fn tool(
        mut self,
        name: &str,
        read_only: bool,
        answer: impl Fn(&Value) -> CallToolResult + Send + Sync + 'static,
    ) -> Self {
        self.tools.push(FakeTool {
            name: name.to_owned(),
            read_only,
            answer: Box::new(answer),
        });
        self
    }

    /// `mcp__t__add` (read-only) adding `a` and `b`, and `mcp__t__write` (not read-only).
    pub(crate) fn standard() -> Self {
        FakeTools::new()
            .tool("mcp__t__add", true, |args| {
                let sum = args["a"].as_i64().unwrap_or(0) + args["b"].as_i64().unwrap_or(0);
                CallToolResult::text(sum.to_string())
            })
            .tool("mcp__t__write", false, |_| CallToolResult::text("written"))
    }

    pub(crate) fn calls(&self) -> Vec<(String, Value)> {
        lock(&self.calls).clone()
    }
}

impl ToolHost for FakeTools {
    fn schemas(&self) -> Vec<ProviderToolSchema> {
        self.tools
            .iter()
            .map(|t| ProviderToolSchema {
                name: t.name.clone(),
                description: format!("the {} tool", t.name),
                parameters: json!({"type": "object"})
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
            })
            .collect()
    }

    fn read_only(&self, name: &str) -> Option<bool> {
        self.tools
            .iter()
            .find(|t| t.name == name)
            .map(|t| t.read_only)
    }

    fn call(
        &self,
        name: &str,
        arguments: Value,
        _options: ToolCallOptions,
    ) -> impl Future<Output = Result<CallToolResult, crate::Error>> + Send {
        let tool = self
            .tools
            .iter()
            .find(|t| t.name == name)
            .expect("a known tool");
        let result = (tool.answer)(&arguments);
        lock(&self.calls).push((name.to_owned(), arguments));
        std::future::ready(Ok(result))
    }
}
