//! The demo's built-in children, run as hidden subcommands of this same binary: an extension
//! sidecar (the SDK's starter rewrite, allow-all at `permission.decision`, a status card, and
//! the SDK's scripted model as a provider, `plugin/sidewire-demo/scripted/echo-1`) and a
//! tools-only MCP server (`echo`, `add`, and `slow`, which reports progress).
//!
//! With `--hostile`, every text either peer sends carries [`HOSTILE`] (an ESC sequence that
//! erases the line, a carriage return and a bidi override), and the sidecar blocks
//! `input.receive` with it; with `--hostile-exit` it is written to stderr before the peer exits
//! with status 3. The CLI's tests use them to check that no such byte reaches the terminal raw.

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use serde_json::{Value, json};
use sidewire_ext_sdk::protocol::{
    FieldKind, InputPayload, NotificationPayload, PermissionPayload, Severity, StatusPayload,
    ToolBeforePayload, UiActionResult, UiFormField, UiFormPayload, UiSubmitResult,
};
use sidewire_ext_sdk::{
    ChunkStream, Decision, Extension, HostHandle, Options, Provider, StreamContext, point, samples,
    serve_main,
};
use sidewire_mcp::{CallToolResult, Content};
use sidewire_mcp_server::Toolbox;

use crate::cli::BuiltinArgs;

/// What the hostile modes append to every text: erase the line, return to its start, and
/// reverse what follows.
pub(crate) const HOSTILE: &str = "\u{1b}[2K\r\u{202e}evil";

/// `normal`, with [`HOSTILE`] appended in the hostile mode.
fn say(hostile: bool, normal: &str) -> String {
    if hostile {
        format!("{normal} {HOSTILE}")
    } else {
        normal.to_owned()
    }
}

/// The `--hostile-exit` mode: the hostile text on stderr, then exit 3.
fn hostile_exit() -> ExitCode {
    let _ = writeln!(
        std::io::stderr(),
        "starting {HOSTILE}\nsecond line {HOSTILE}"
    );
    ExitCode::from(3)
}

/// The built-in plugin's id.
pub(crate) const SIDECAR_NAME: &str = "sidewire-demo";
/// Its status surface.
pub(crate) const STATUS_SURFACE: &str = "demo-status";

/// The test modes of the built-in sidecar's provider (the scripted model otherwise): each
/// misbehaves in one way, and with `--cancel-mark FILE` writes `cancelled` to the file when the
/// host cancels a stream (for the tests that the sidecar is told).
#[derive(Debug, Clone)]
struct TestModel {
    inner: samples::ScriptedModel,
    mode: TestMode,
    mark: Option<std::path::PathBuf>,
}

/// How a [`TestModel`] streams.
#[derive(Debug, Clone, Copy)]
enum TestMode {
    /// `--slow-model`: the scripted model, one chunk every [`SLOW_CHUNK`].
    Slow,
    /// `--stall-model`: the scripted model's first chunk, then nothing, never ending.
    Stall,
    /// `--flood-model`: text chunks of [`FLOOD_TEXT`] without end, as fast as the host takes
    /// them.
    Flood,
    /// `--tool-call-bytes N`: one tool call whose arguments are N bytes, then `done`.
    ToolCall(usize),
}

impl TestMode {
    fn of(args: &BuiltinArgs) -> Option<TestMode> {
        if args.slow_model {
            Some(TestMode::Slow)
        } else if args.stall_model {
            Some(TestMode::Stall)
        } else if args.flood_model {
            Some(TestMode::Flood)
        } else {
            args.tool_call_bytes.map(TestMode::ToolCall)
        }
    }
}

/// The pace of the `--slow-model` mode.
const SLOW_CHUNK: Duration = Duration::from_millis(200);
/// The text of each `--flood-model` chunk.
const FLOOD_TEXT: &str = "flood flood flood flood flood flood flood flood flood flood ";

impl Provider for TestModel {
    async fn catalog(
        &self,
        host: &HostHandle,
    ) -> Result<Vec<sidewire_ext_sdk::protocol::ProviderDescriptor>, sidewire_ext_sdk::Error> {
        self.inner.catalog(host).await
    }

    async fn open(
        &self,
        ctx: StreamContext,
        params: sidewire_ext_sdk::protocol::StreamOpenParams,
    ) -> Result<ChunkStream, sidewire_ext_sdk::Error> {
        use futures_util::StreamExt as _;
        use sidewire_ext_sdk::protocol::{ChunkType, ProviderChunk, ProviderToolCall};

        // Written when the producer is dropped cancelled: the SDK drops it at once on
        // `stream/cancel`, and at the latest with the runtime when `serve` has returned, so
        // the mark cannot be lost to a shutdown that follows the cancel closely (a watcher
        // task could be: the runtime drops it unrun).
        let mark = self.mark.clone().map(|path| CancelMark { ctx, path });
        let scripted = samples::scripted_chunks(&params.request);
        let chunks: ChunkStream = match self.mode {
            TestMode::Slow => Box::pin(futures_util::stream::iter(scripted).then(|chunk| async {
                tokio::time::sleep(SLOW_CHUNK).await;
                Ok(chunk)
            })),
            TestMode::Stall => Box::pin(
                futures_util::stream::iter(scripted.into_iter().take(1).map(Ok))
                    .chain(futures_util::stream::pending()),
            ),
            TestMode::Flood => Box::pin(futures_util::stream::repeat_with(|| {
                let mut chunk = ProviderChunk::new(ChunkType::Text);
                chunk.text = FLOOD_TEXT.to_owned();
                Ok(chunk)
            })),
            TestMode::ToolCall(bytes) => {
                let mut call = ProviderChunk::new(ChunkType::ToolCall);
                let padding = bytes.saturating_sub(r#"{"data":""}"#.len());
                call.tool_call = Some(ProviderToolCall {
                    id: "call-huge".to_owned(),
                    name: "mcp__demo__huge".to_owned(),
                    arguments: format!(r#"{{"data":"{}"}}"#, "x".repeat(padding)),
                    thought_signature: String::new(),
                });
                let done = ProviderChunk::new(ChunkType::Done);
                Box::pin(futures_util::stream::iter([Ok(call), Ok(done)]))
            }
        };
        Ok(Box::pin(chunks.map(move |chunk| {
            let _held = &mark;
            chunk
        })))
    }
}

/// Writes `cancelled` to its file when dropped with its stream cancelled.
struct CancelMark {
    ctx: StreamContext,
    path: std::path::PathBuf,
}

impl Drop for CancelMark {
    fn drop(&mut self) {
        if self.ctx.is_cancelled() {
            let _ = std::fs::write(&self.path, "cancelled");
        }
    }
}

/// The built-in extension.
pub(crate) fn extension(args: &BuiltinArgs) -> Extension {
    let hostile = args.hostile;
    let flood = args.flood.unwrap_or(0);
    // The host sets `REASONIX_PLUGIN_NAME` to the installed id, which is the ref's prefix.
    let model = samples::ScriptedModel::from_env(SIDECAR_NAME);
    let extension = Extension::new(SIDECAR_NAME, env!("CARGO_PKG_VERSION"));
    let extension = match TestMode::of(args) {
        Some(mode) => extension.provider(TestModel {
            inner: model,
            mode,
            mark: args.cancel_mark.clone(),
        }),
        None => extension.provider(model),
    };
    let extension = match args.record_calls.clone() {
        Some(file) => {
            extension.on_intercept(point::TOOL_BEFORE, move |_ctx, call: ToolBeforePayload| {
                let file = file.clone();
                async move {
                    record_call(&file, &call.call_id).map_err(|err| {
                        sidewire_ext_sdk::Error::callback(format!(
                            "cannot write to {}: {err}",
                            file.display()
                        ))
                    })?;
                    Ok(Decision::Continue)
                }
            })
        }
        None => extension,
    };
    let extension = if args.tools {
        extension.tool("add", |_host, arguments: Value| async move {
            let term = |key: &str| {
                arguments[key].as_i64().ok_or_else(|| {
                    sidewire_ext_sdk::Error::callback(format!("{key} is not an integer"))
                })
            };
            Ok((term("a")? + term("b")?).to_string())
        })
    } else {
        extension
    };
    extension
        .on_intercept(
            point::INPUT_RECEIVE,
            move |_ctx, input: InputPayload| async move {
                if hostile {
                    return Ok(Decision::Block(say(true, "blocked")));
                }
                Ok(match samples::starter_rewrite(&input.text) {
                    Some(text) => Decision::Replace(InputPayload { text }),
                    None => Decision::Continue,
                })
            },
        )
        .on_intercept(
            point::PERMISSION_DECISION,
            |_ctx, _payload: PermissionPayload| async move {
                Ok(Decision::Allow(
                    "allowed by the sidewire demo extension".to_owned(),
                ))
            },
        )
        .on_ready(move |host| async move {
            let status = StatusPayload {
                label: say(hostile, "sidewire demo extension ready"),
                detail: if hostile {
                    HOSTILE.to_owned()
                } else {
                    String::new()
                },
                severity: Some(Severity::Info),
                ..StatusPayload::default()
            };
            host.publish(STATUS_SURFACE, status).await?;
            if hostile {
                let notification = NotificationPayload {
                    title: say(true, "a notification"),
                    body: HOSTILE.to_owned(),
                    severity: None,
                };
                host.publish("demo-notification", notification).await?;
            }
            // A form the user can submit (`/submit sidewire-demo:demo-form name=...` in `run`).
            let form = UiFormPayload {
                title: say(hostile, "Introduce yourself"),
                message: String::new(),
                fields: vec![UiFormField {
                    key: "name".to_owned(),
                    label: say(hostile, "Your name"),
                    kind: FieldKind::Input,
                    options: Vec::new(),
                    default: None,
                    required: Some(true),
                }],
            };
            host.publish(FORM_SURFACE, form).await?;
            for n in 1..=flood {
                let status = StatusPayload {
                    label: format!("flood {n} of {flood}"),
                    ..StatusPayload::default()
                };
                host.publish(FLOOD_SURFACE, status).await?;
            }
            Ok(())
        })
        .on_submit(|host, params| async move {
            let name = params
                .values
                .get("name")
                .and_then(|v| v.as_str())
                .unwrap_or("?");
            let status = StatusPayload {
                label: format!("form says hello, {name}"),
                severity: Some(Severity::Info),
                ..StatusPayload::default()
            };
            let accepted = host.publish(STATUS_SURFACE, status).await?;
            Ok(UiSubmitResult { accepted })
        })
        // A UI action that asks the user something (`host/ui/request`) and shows the answer.
        .on_action(GREET_ACTION, "Say hello", move |host, _params| async move {
            let question = say(hostile, "What is your name?");
            let label = match host.input("demo-greet", &question).await? {
                Some(name) => format!("hello, {name}"),
                None => say(hostile, "no name given"),
            };
            let status = StatusPayload {
                label,
                severity: Some(Severity::Info),
                ..StatusPayload::default()
            };
            let accepted = host.publish(STATUS_SURFACE, status).await?;
            Ok(UiActionResult {
                accepted,
                message: if hostile {
                    HOSTILE.to_owned()
                } else {
                    String::new()
                },
            })
        })
}

/// The `--record-calls` mode: appends `call_id` to `file`, one a line.
fn record_call(file: &std::path::Path, call_id: &str) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(file)?;
    writeln!(file, "{call_id}")
}

/// The surface the `--flood` mode publishes to.
pub(crate) const FLOOD_SURFACE: &str = "demo-flood";

/// The built-in extension's form surface.
pub(crate) const FORM_SURFACE: &str = "demo-form";

/// The built-in extension's UI action that prompts the user.
pub(crate) const GREET_ACTION: &str = "greet";

/// The manifest of the built-in plugin, launching `exe __sidecar`.
pub(crate) fn manifest(exe: &std::path::Path) -> Value {
    json!({
        "apiVersion": "reasonix.io/plugin/v1",
        "name": SIDECAR_NAME,
        "version": env!("CARGO_PKG_VERSION"),
        "description": "The sidewire demo extension: rewrites 'starter: ' input, allows tool calls, shows a status card, serves a scripted model",
        "runtime": {
            "command": exe.display().to_string(),
            "args": ["__sidecar"],
            "intercepts": ["input.receive", "permission.decision"],
            "capabilities": ["interceptors", "ui", "providers"]
        }
    })
}

/// Writes the built-in plugin's package into `dir` (created): its manifest, whose command is
/// `exe` with the hidden `__sidecar` subcommand. `sidewire demo` installs it linked from a
/// temporary directory; `plugin install --builtin demo` copies it into the store.
pub(crate) fn write_package(dir: &std::path::Path, exe: &std::path::Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let manifest = serde_json::to_vec_pretty(&manifest(exe)).map_err(std::io::Error::other)?;
    std::fs::write(dir.join("reasonix-plugin.json"), manifest)
}

/// The ref of the built-in sidecar's scripted model.
pub(crate) fn scripted_model_ref() -> String {
    samples::ScriptedModel::new(SIDECAR_NAME).provider_ref()
}

fn current_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a current-thread runtime builds")
}

/// `sidewire __sidecar`.
pub(crate) fn sidecar(args: &BuiltinArgs) -> ExitCode {
    if args.hostile_exit {
        return hostile_exit();
    }
    daemon(args.daemon);
    let code = current_thread().block_on(async {
        stubborn(args.stubborn);
        serve_main(extension(args), Options::new()).await
    });
    outlive_stdin(args.stubborn);
    code
}

/// In the `--daemon` mode, starts `setsid sleep 3600`: a process outside our group and session
/// that inherits our environment (the tests' marker) but not our pipes.
fn daemon(on: bool) {
    if on {
        let started = std::process::Command::new("setsid")
            .args(["sleep", "3600"])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
        // Not waited for: it is the point that it outlives us, until sidewire reaps it.
        drop(started);
    }
}

/// In the `--stubborn` mode, ignores SIGTERM, SIGHUP and SIGINT for the life of the process
/// (tokio never restores a signal's default action once it handles it).
fn stubborn(on: bool) {
    use tokio::signal::unix::{SignalKind, signal};
    if on {
        for kind in [
            SignalKind::terminate(),
            SignalKind::hangup(),
            SignalKind::interrupt(),
        ] {
            let _ = signal(kind);
        }
    }
}

/// In the `--stubborn` mode, never returns: the process outlives its stdin until SIGKILL.
fn outlive_stdin(on: bool) {
    if on {
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    }
}

/// The built-in MCP server.
pub(crate) fn server(hostile: bool) -> Toolbox {
    let server = Toolbox::new(
        say(hostile, "sidewire-demo-server"),
        say(hostile, env!("CARGO_PKG_VERSION")),
    );
    let server = if hostile {
        server.tool(
            "hostile",
            &format!("Answers with hostile text {HOSTILE}\nand a second line {HOSTILE}"),
            json!({"type": "object"}),
            |_args, _| async move {
                CallToolResult::text(format!("result {HOSTILE}\nsecond line {HOSTILE}"))
            },
        )
    } else {
        server
    };
    server
        .tool(
            "echo",
            "Echoes its text back",
            json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
            |args, _| async move {
                let text = args["text"].as_str().unwrap_or_default().to_owned();
                CallToolResult::text(text)
            },
        )
        .tool(
            "add",
            "Adds two numbers",
            json!({"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]}),
            |args, _| async move {
                match (args["a"].as_f64(), args["b"].as_f64()) {
                    (Some(a), Some(b)) => {
                        // Text and the same value structured, as many servers answer.
                        let mut result = CallToolResult::text(format_number(a + b));
                        let sum: Value =
                            serde_json::from_str(&format_number(a + b)).unwrap_or_default();
                        result.structured_content = Some(json!({ "result": sum }));
                        result
                    }
                    _ => error_result("add needs numbers a and b"),
                }
            },
        )
        .tool(
            "pixel",
            "Answers with a 1x1 PNG image and a short WAV clip",
            json!({"type": "object", "properties": {}}),
            |_args, _| async move {
                let mut result = CallToolResult::text("a pixel and a beep");
                result.content.push(Content::Image {
                    data: PIXEL_PNG.to_owned(),
                    mime_type: "image/png".to_owned(),
                    annotations: None,
                });
                result.content.push(Content::Audio {
                    data: BEEP_WAV.to_owned(),
                    mime_type: "audio/wav".to_owned(),
                    annotations: None,
                });
                result
            },
        )
        .tool(
            "slow",
            "Counts to `steps` (default 5), reporting progress every 100 ms",
            json!({"type": "object", "properties": {"steps": {"type": "integer", "minimum": 1, "maximum": 100}}}),
            |args, ctx| async move {
                let steps = args["steps"].as_u64().unwrap_or(5).clamp(1, 100);
                for step in 1..=steps {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    #[allow(clippy::cast_precision_loss)]
                    ctx.progress(step as f64, Some(steps as f64), Some(&format!("step {step} of {steps}")))
                        .await;
                }
                CallToolResult::text(format!("counted to {steps}"))
            },
        )
}

/// A 1x1 PNG (base64), for `pixel`.
const PIXEL_PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
/// A WAV header with four samples of silence (base64), for `pixel`.
const BEEP_WAV: &str = "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQgAAAAAAAAAAAAAAA==";

fn error_result(message: &str) -> CallToolResult {
    let mut result = CallToolResult::text(message);
    result.is_error = true;
    result
}

fn format_number(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{n:.0}")
    } else {
        n.to_string()
    }
}

/// `sidewire __mcp-server`.
pub(crate) fn mcp_server(args: &BuiltinArgs) -> ExitCode {
    if args.hostile_exit {
        return hostile_exit();
    }
    if let Some(count) = args.many_tools {
        return crate::many_tools::serve(count, args.page_size);
    }
    daemon(args.daemon);
    let served = current_thread().block_on(async {
        stubborn(args.stubborn);
        let ((reader, writer), _restore) = crate::stdio::open();
        server(args.hostile).serve(reader, writer).await
    });
    outlive_stdin(args.stubborn);
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            let _ = writeln!(std::io::stderr(), "sidewire demo MCP server: {err}");
            ExitCode::FAILURE
        }
    }
}

/// A text content item (for the printers).
pub(crate) fn content_text(content: &Content) -> String {
    match content.as_text() {
        Some(text) => text.to_owned(),
        None => serde_json::to_string(content).unwrap_or_default(),
    }
}
