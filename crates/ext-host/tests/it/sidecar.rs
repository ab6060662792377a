//! The test binary re-executed as a sidecar: the SDK's sample extensions (selected by the
//! name the binary is launched under, `bin/starter` and so on, as their manifests say), a
//! "sleeper" grandchild, and a scripted raw sidecar whose behaviour comes from the JSON in
//! `SIDEWIRE_TEST_SCRIPT` (set through the manifest's `env`).
//!
//! The scripted sidecar speaks the protocol by hand, synchronously, so it can misbehave in
//! ways the SDK never would: hang, crash mid-intercept, write junk or an over-cap frame, talk
//! before `extension/initialized`, claim undeclared capabilities, send bad replacements, stop
//! reading stdin, read events slowly, ignore shutdown, flood stderr, spawn a grandchild, serve
//! provider catalogs and write exact provider stream frames (out of order, duplicated, after
//! the end, with conflicting ends), ignore a stream cancel. Two
//! roles are hosts rather than sidecars (`host`, `idle-host`). Every process started
//! here records its pid under `$REASONIX_PLUGIN_ROOT/.pids/` so tests can prove it is gone.

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

/// The environment variable selecting a role.
pub(crate) const ROLE: &str = "SIDEWIRE_TEST_ROLE";
/// The environment variable carrying a script.
pub(crate) const SCRIPT: &str = "SIDEWIRE_TEST_SCRIPT";

/// The role this process was started for, if it is a sidecar.
pub(crate) fn role() -> Option<String> {
    if let Ok(role) = std::env::var(ROLE) {
        return Some(role);
    }
    let argv0 = std::env::args().next()?;
    let base = argv0.rsplit('/').next()?.to_owned();
    matches!(
        base.as_str(),
        "starter" | "allow_all" | "status_card" | "provider" | "tools"
    )
    .then_some(base)
}

fn record_pid(pid: u32) {
    if let Ok(root) = std::env::var("REASONIX_PLUGIN_ROOT") {
        let dir = PathBuf::from(root).join(".pids");
        let _ = std::fs::create_dir_all(&dir);
        let _ = std::fs::write(dir.join(pid.to_string()), b"");
    }
}

/// Runs the sidecar for `role` and returns its exit code.
pub(crate) fn run(role: &str) -> ExitCode {
    record_pid(std::process::id());
    match role {
        "starter" | "allow_all" | "status_card" | "provider" | "tools" => sdk(role),
        "sleeper" => {
            // A grandchild that holds the sidecar's stdout open and lives "forever".
            std::thread::sleep(Duration::from_secs(3600));
            ExitCode::SUCCESS
        }
        "script" => script(),
        "host" => host(),
        "idle-host" => idle_host(),
        other => {
            let _ = writeln!(std::io::stderr(), "unknown test sidecar role {other:?}");
            ExitCode::from(2)
        }
    }
}

fn sdk(role: &str) -> ExitCode {
    use sidewire_ext_sdk::{Options, samples, serve_main};
    let extension = match role {
        "starter" => samples::starter(),
        "allow_all" => samples::allow_all(),
        "provider" => samples::scripted_model(),
        "tools" => samples::text_tools(),
        _ => samples::status_card(),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(serve_main(extension, Options::new()))
}

struct Out {
    stdout: Mutex<std::io::Stdout>,
    record: Option<Mutex<std::fs::File>>,
}

impl Out {
    fn line(&self, text: &str) {
        let mut out = self.stdout.lock().unwrap();
        let _ = out.write_all(text.as_bytes());
        let _ = out.write_all(b"\n");
        let _ = out.flush();
    }

    fn frame(&self, value: &Value) {
        self.line(&value.to_string());
    }

    fn record(&self, line: &str) {
        if let Some(file) = &self.record {
            let mut file = file.lock().unwrap();
            let _ = file.write_all(line.as_bytes());
            let _ = file.write_all(b"\n");
        }
    }
}

/// The generation the host started this sidecar in (from `extension/initialize`).
static GENERATION: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// A scripted frame as text: `"@gen"` (quoted) and `@gen` become the generation this sidecar
/// was started in, and `@fill:<n>@` becomes `n` bytes of padding (the script travels in an
/// environment variable, which cannot carry megabytes).
fn expand(frame: &Value) -> String {
    let text = match frame.as_str() {
        Some(text) => text.to_owned(),
        None => frame.to_string(),
    };
    let generation = GENERATION
        .load(std::sync::atomic::Ordering::Relaxed)
        .to_string();
    let text = text
        .replace("\"@gen\"", &generation)
        .replace("@gen", &generation);
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(at) = rest.find("@fill:") {
        out.push_str(&rest[..at]);
        let after = &rest[at + "@fill:".len()..];
        let end = after.find('@').expect("@fill:<n>@ is closed");
        let n: usize = after[..end].parse().expect("@fill:<n>@ has a number");
        out.extend(std::iter::repeat_n('x', n));
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

fn env_var(name: &str) -> String {
    std::env::var(name).unwrap_or_default()
}

/// A content read in progress: which intercept waits for it and what was read so far.
struct Reading {
    intercept_id: Value,
    content_ref: String,
    data: Vec<u8>,
    /// Read one page only and report it.
    single: bool,
}

fn script() -> ExitCode {
    let script: Value = serde_json::from_str(&env_var(SCRIPT)).unwrap_or_else(|_| json!({}));
    let out = Arc::new(Out {
        stdout: Mutex::new(std::io::stdout()),
        record: script["record"].as_str().map(|path| {
            Mutex::new(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .expect("the record file opens"),
            )
        }),
    });
    if let Some(bytes) = script["stderr_flood"].as_u64() {
        let mut err = std::io::stderr();
        let chunk = "FOO_TOKEN=flood-secret-value Bearer flood-token xxxxxxxxxxxxxxxxxxxxxxxx\n";
        let mut written = 0;
        while written < bytes {
            let _ = err.write_all(chunk.as_bytes());
            written += chunk.len() as u64;
        }
        let _ = err.write_all(b"flood done\n");
    }
    if let Some(text) = script["stderr"].as_str() {
        let _ = writeln!(std::io::stderr(), "{text}");
    }
    if script["grandchild"].as_bool() == Some(true) {
        let child = std::process::Command::new(std::env::current_exe().unwrap())
            .env(ROLE, "sleeper")
            .stdin(std::process::Stdio::null())
            .spawn()
            .expect("the grandchild spawns");
        record_pid(child.id());
        // Its stdout is ours (inherited): it keeps the pipe open after we exit.
        std::mem::forget(child);
    }
    for line in script["preface"].as_array().cloned().unwrap_or_default() {
        match line.as_str() {
            Some("@overcap") => out.line(&format!(
                "{{\"pad\":\"{}\"}}",
                "x".repeat(sidewire_ext_protocol::FRAME_BYTES)
            )),
            Some(text) => out.line(text),
            None => out.frame(&line),
        }
    }
    let stdin = std::io::stdin();
    let mut lines = stdin.lock();
    let mut buf = String::new();
    let mut next_id = 100u64;
    let mut readings: HashMap<u64, Reading> = HashMap::new();
    let (mut opens, mut catalogs) = (0usize, 0usize);
    let mut tool_calls = 0usize;
    let mut intercepts: HashMap<String, usize> = HashMap::new();
    loop {
        buf.clear();
        match lines.read_line(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let line = buf.trim_end_matches('\n');
        out.record(line);
        let Ok(frame) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let id = frame.get("id").cloned();
        let method = frame["method"].as_str().unwrap_or("").to_owned();
        match method.as_str() {
            "extension/initialize" if !initialize(&script, &out, &frame) => {
                return ExitCode::from(1);
            }
            "extension/initialized" => {
                // Strings are written verbatim; objects as they are (both through `expand`).
                for frame in script["after_init"].as_array().cloned().unwrap_or_default() {
                    out.line(&expand(&frame));
                }
                if script["stdin"].as_str() == Some("never") {
                    // Stop reading: the host's writes fill the pipe and stall.
                    std::thread::sleep(Duration::from_secs(3600));
                }
            }
            "extension/intercept" => {
                let point = frame["params"]["event"].as_str().unwrap_or("").to_owned();
                let action = script["intercept"]
                    .get(&point)
                    .or_else(|| script["intercept"].get("*"))
                    .cloned()
                    .unwrap_or_else(|| json!({"decision": "continue"}));
                // A list answers the point's intercepts in turn (the last one repeats).
                let count = intercepts.entry(point.clone()).or_insert(0usize);
                let action = if action.is_array() {
                    nth(&action, *count)
                } else {
                    action
                };
                *count += 1;
                let id = id.unwrap_or(Value::Null);
                if let Some(reading) = intercept(&out, &frame, id, &action, &mut next_id) {
                    readings.insert(next_id, reading);
                }
            }
            "extension/shutdown" => {
                if let Some(ms) = script["shutdown"]["delay_ms"].as_u64() {
                    std::thread::sleep(Duration::from_millis(ms));
                    let error = &script["shutdown"]["error"];
                    out.frame(&json!({"jsonrpc":"2.0","id":id,"error":error}));
                    continue;
                }
                if script["shutdown"].as_str() == Some("ignore") {
                    // Never answer, and outlive stdin.
                    loop {
                        std::thread::sleep(Duration::from_secs(3600));
                    }
                }
                if let Some(raw) = script["shutdown"]["raw"].as_str() {
                    // Written verbatim; then, like the Go SDK, stop reading and exit 0.
                    out.line(&raw.replace("@id", &id.unwrap_or(Value::Null).to_string()));
                    return ExitCode::SUCCESS;
                }
                out.frame(&json!({"jsonrpc":"2.0","id":id,"result":{"accepted":true}}));
            }
            "extension/event" => {
                // A slow reader: every event costs this long, so the host's writes back up.
                if let Some(ms) = script["event_delay_ms"].as_u64() {
                    std::thread::sleep(Duration::from_millis(ms));
                }
            }
            "extension/provider/catalog" => {
                let answer = nth(&script["catalog"], catalogs);
                catalogs += 1;
                match answer.get("error") {
                    _ if answer.as_str() == Some("hang") => {}
                    Some(error) => out.frame(&json!({"jsonrpc":"2.0","id":id,"error":error})),
                    None => reply(&out, id.unwrap_or(Value::Null), answer),
                }
            }
            "extension/provider/stream/open" => {
                let action = nth(&script["open"], opens);
                opens += 1;
                let sid = frame["params"]["streamId"]
                    .as_str()
                    .unwrap_or("")
                    .to_owned();
                provider_frames(&out, &sid, &action["before"]);
                let answer = action
                    .get("answer")
                    .cloned()
                    .unwrap_or(json!({"accepted":true}));
                match answer.get("error") {
                    _ if answer.as_str() == Some("hang") => {}
                    Some(error) => out.frame(&json!({"jsonrpc":"2.0","id":id,"error":error})),
                    None => reply(&out, id.clone().unwrap_or(Value::Null), answer),
                }
                provider_frames(&out, &sid, &action["after"]);
            }
            "extension/provider/stream/cancel" => {
                // `"cancel": "ignore"` never answers; otherwise answer, then the frames of
                // `cancel.then` (an interrupted end, say).
                if script["cancel"].as_str() == Some("ignore") {
                    continue;
                }
                let sid = frame["params"]["streamId"]
                    .as_str()
                    .unwrap_or("")
                    .to_owned();
                reply(&out, id.unwrap_or(Value::Null), json!({"cancelled": true}));
                provider_frames(&out, &sid, &script["cancel"]["then"]);
            }
            "extension/tool/call" => {
                // `tool`: the answers in turn (the last repeats): a result, `{"error": …}`,
                // `"hang"` (never answered) or `"exit:<code>"` (exits at once).
                let answer = nth(&script["tool"], tool_calls);
                tool_calls += 1;
                match answer.get("error") {
                    _ if answer.as_str() == Some("hang") => {}
                    _ if answer.as_str().is_some_and(|a| a.starts_with("exit:")) => {
                        let code = answer.as_str().unwrap_or("")[5..].parse().unwrap_or(3);
                        std::process::exit(code);
                    }
                    Some(error) => out.frame(&json!({"jsonrpc":"2.0","id":id,"error":error})),
                    None => reply(&out, id.unwrap_or(Value::Null), answer),
                }
            }
            "extension/ui/action" | "extension/ui/submit" => {
                if script["ui_action"].as_str() == Some("hang") {
                    continue;
                }
                out.frame(&json!({"jsonrpc":"2.0","id":id,"result":{"accepted":true}}));
            }
            "" => {
                // A response to one of our requests.
                let Some(key) = id.as_ref().and_then(Value::as_u64) else {
                    continue;
                };
                if let Some(mut reading) = readings.remove(&key) {
                    if reading.single {
                        let result = &frame["result"];
                        let summary = match frame.get("error") {
                            Some(error) => error["data"]["reason"]
                                .as_str()
                                .unwrap_or("no reason")
                                .to_owned(),
                            None => format!(
                                "page {} next {} total {}",
                                result["dataBase64"].as_str().unwrap_or("").len(),
                                result["nextOffset"],
                                result["totalBytes"]
                            ),
                        };
                        reply(
                            &out,
                            reading.intercept_id,
                            json!({"decision":"block","reason":summary}),
                        );
                        continue;
                    }
                    match content_page(&frame, &mut reading) {
                        Ok(Some(offset)) => {
                            next_id += 1;
                            send_read(&out, next_id, &reading.content_ref, offset);
                            readings.insert(next_id, reading);
                        }
                        Ok(None) => {
                            let summary = format!(
                                "read {} bytes sha256 {}",
                                reading.data.len(),
                                sha256(&reading.data)
                            );
                            reply(
                                &out,
                                reading.intercept_id,
                                json!({"decision":"block","reason":summary}),
                            );
                        }
                        Err(reason) => {
                            reply(
                                &out,
                                reading.intercept_id,
                                json!({"decision":"block","reason":reason}),
                            );
                        }
                    }
                }
            }
            _ => {}
        }
    }
    // `"eof": "linger"` outlives stdin (as a sidecar that never checks for EOF would), so only
    // the host's kill ends it: a test of a kill then proves the kill, not a polite exit.
    if script["shutdown"].as_str() == Some("ignore") || script["eof"].as_str() == Some("linger") {
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    }
    ExitCode::SUCCESS
}

/// Element `n` of a scripted list (the last one repeats), or the value itself when it is not
/// a list.
fn nth(list: &Value, n: usize) -> Value {
    match list.as_array() {
        Some(items) => items
            .get(n)
            .or(items.last())
            .cloned()
            .unwrap_or(Value::Null),
        None => list.clone(),
    }
}

/// Writes scripted provider frames for stream `sid`. Shorthands: `{"c": n}` is chunk `n` of
/// type `text` with text `w<n>` (`"chunk"` gives another chunk body, `"sid"` another stream);
/// `{"chunks": [a, b]}` is chunks `a` to `b`; `{"end": n}` is an end with `lastSeq` `n` (plus
/// `"error"` and `"interrupted"` when given); `{"stream": n}` is chunks 1 to `n` and their end;
/// `{"sleep_ms": n}` waits; `{"exit": code}` exits. A string is written verbatim with `@sid`
/// replaced.
fn provider_frames(out: &Out, sid: &str, frames: &Value) {
    let chunk = |seq: u64, body: Option<&Value>, sid: &str| {
        let body = body
            .cloned()
            .unwrap_or_else(|| json!({"type": "text", "text": format!("w{seq}")}));
        // Through `expand`, so a chunk's text can be `@fill:<n>@`.
        out.line(&expand(
            &json!({"jsonrpc":"2.0","method":"extension/provider/stream/chunk",
            "params":{"streamId": sid, "seq": seq, "chunk": body}}),
        ));
    };
    for frame in frames.as_array().cloned().unwrap_or_default() {
        if let Some(text) = frame.as_str() {
            out.line(&expand(&json!(text.replace("@sid", sid))));
            continue;
        }
        let sid = frame["sid"].as_str().unwrap_or(sid);
        if let Some(seq) = frame["c"].as_u64() {
            chunk(seq, frame.get("chunk"), sid);
        } else if let Some(range) = frame["chunks"].as_array() {
            let (a, b) = (range[0].as_u64().unwrap(), range[1].as_u64().unwrap());
            for seq in a..=b {
                chunk(seq, None, sid);
            }
        } else if let Some(n) = frame["stream"].as_u64() {
            for seq in 1..=n {
                chunk(seq, None, sid);
            }
            out.frame(
                &json!({"jsonrpc":"2.0","method":"extension/provider/stream/end",
                "params":{"streamId": sid, "lastSeq": n}}),
            );
        } else if let Some(last) = frame["end"].as_u64() {
            let mut params = json!({"streamId": sid, "lastSeq": last});
            for key in ["error", "interrupted"] {
                if let Some(value) = frame.get(key) {
                    params[key] = value.clone();
                }
            }
            out.frame(
                &json!({"jsonrpc":"2.0","method":"extension/provider/stream/end",
                "params": params}),
            );
        } else if let Some(ms) = frame["sleep_ms"].as_u64() {
            std::thread::sleep(Duration::from_millis(ms));
        } else if let Some(code) = frame["exit"].as_u64() {
            std::process::exit(code as i32);
        }
    }
}

/// Not a sidecar: a host in a process of its own, so that a test can give the host an
/// environment (`FOO_TOKEN`) without changing its own. It boots the store in
/// `SIDEWIRE_TEST_STATE`, runs one `input.receive`, prints the block reason (or the error) on
/// stdout, and shuts down.
fn host() -> ExitCode {
    let state = std::env::var("SIDEWIRE_TEST_STATE").expect("SIDEWIRE_TEST_STATE is set");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let config = sidewire_ext_host::HostConfig::new(&state, "s-host", &state);
        let (host, _events) = sidewire_ext_host::ExtensionHost::boot(config)
            .await
            .expect("the host boots");
        let payload =
            sidewire_ext_protocol::HookPayload::Input(sidewire_ext_protocol::InputPayload {
                text: "x".into(),
            });
        let text = match host
            .intercept(sidewire_ext_protocol::HookPoint::InputReceive, payload)
            .await
        {
            Ok(outcome) => outcome.blocked.map(|b| b.reason).unwrap_or_default(),
            Err(err) => err.to_string(),
        };
        host.shutdown().await;
        let _ = writeln!(std::io::stdout(), "{text}");
    });
    ExitCode::SUCCESS
}

/// Not a sidecar either: a host in a process of its own that boots the store in
/// `SIDEWIRE_TEST_STATE`, prints `booted` on stdout and then waits forever, so that a test can
/// kill it outright and watch what becomes of its sidecars. Its runtime runs on the main
/// thread, which spawns the sidecars and lives as long as the process.
fn idle_host() -> ExitCode {
    let state = std::env::var("SIDEWIRE_TEST_STATE").expect("SIDEWIRE_TEST_STATE is set");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let config = sidewire_ext_host::HostConfig::new(&state, "s-idle-host", &state);
        let (_host, _events) = sidewire_ext_host::ExtensionHost::boot(config)
            .await
            .expect("the host boots");
        let _ = writeln!(std::io::stdout(), "booted");
        let _ = std::io::stdout().flush();
        std::future::pending::<()>().await;
    });
    ExitCode::SUCCESS
}

fn sha256(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn send_read(out: &Out, id: u64, content_ref: &str, offset: u64) {
    out.frame(
        &json!({"jsonrpc":"2.0","id":id,"method":"host/content/read",
        "params":{"contentRef":content_ref,"offset":offset}}),
    );
}

/// Takes one page; `Ok(Some(next))` to read on, `Ok(None)` when done, `Err(reason)` on an
/// error answer.
fn content_page(frame: &Value, reading: &mut Reading) -> Result<Option<u64>, String> {
    use base64::Engine;
    if let Some(error) = frame.get("error") {
        return Err(error["data"]["reason"]
            .as_str()
            .unwrap_or("no reason")
            .to_owned());
    }
    let result = &frame["result"];
    let page = base64::engine::general_purpose::STANDARD
        .decode(result["dataBase64"].as_str().unwrap_or(""))
        .map_err(|e| e.to_string())?;
    reading.data.extend_from_slice(&page);
    Ok(result["nextOffset"].as_u64())
}

fn reply(out: &Out, id: Value, result: Value) {
    out.frame(&json!({"jsonrpc":"2.0","id":id,"result":result}));
}

/// Answers `extension/initialize` as the script says; `false` to exit.
fn initialize(script: &Value, out: &Out, frame: &Value) -> bool {
    let id = frame["id"].clone();
    if let Some(generation) = frame["params"]["session"]["generation"].as_u64() {
        GENERATION.store(generation, std::sync::atomic::Ordering::Relaxed);
    }
    let expectation = &frame["params"]["manifest"];
    let spec = script.get("initialize").cloned().unwrap_or(json!("auto"));
    match spec.as_str() {
        Some("never") => return true,
        Some("exit") => return false,
        _ => {}
    }
    if let Some(raw) = spec.get("raw").and_then(Value::as_str) {
        out.line(&raw.replace("@id", &id.to_string()));
        return true;
    }
    if let Some(error) = spec.get("error") {
        out.frame(&json!({"jsonrpc":"2.0","id":id,"error":error}));
        return true;
    }
    // The profile the host chose (a v1 or a v2 manifest), answered in kind.
    let version = frame["params"]["protocolVersion"].as_str().unwrap_or("1");
    let mut result = json!({
        "protocolVersion": version,
        "name": env_var("REASONIX_PLUGIN_NAME"),
        "version": "0.0.1",
        "stateSchemaVersion": 0,
    });
    if let Some(points) = expectation.get("intercepts") {
        result["subscriptions"] = points.clone();
    }
    if let Some(slots) = expectation.get("replaces") {
        result["replaces"] = slots.clone();
    }
    if let Some(actions) = script.get("ui_actions") {
        result["uiActions"] = actions.clone();
    }
    if let Some(overrides) = spec.get("result").and_then(Value::as_object) {
        for (key, value) in overrides {
            if value.is_null() {
                result.as_object_mut().unwrap().remove(key);
            } else {
                result[key] = value.clone();
            }
        }
    }
    for line in script["before_answer"]
        .as_array()
        .cloned()
        .unwrap_or_default()
    {
        out.frame(&line);
    }
    out.frame(&json!({"jsonrpc":"2.0","id":id,"result":result}));
    true
}

/// Acts on one intercept; returns a content read to track when the action reads content.
fn intercept(
    out: &Out,
    frame: &Value,
    id: Value,
    action: &Value,
    next_id: &mut u64,
) -> Option<Reading> {
    let params = &frame["params"];
    if let Some(ms) = action.get("delay_ms").and_then(Value::as_u64) {
        std::thread::sleep(Duration::from_millis(ms));
        let then = action
            .get("then")
            .cloned()
            .unwrap_or(json!({"decision":"continue"}));
        return intercept(out, frame, id, &then, next_id);
    }
    if let Some(frames) = action.get("send").and_then(Value::as_array) {
        // Frames to write first (strings verbatim), then the action under `then`.
        for frame in frames {
            out.line(&expand(frame));
        }
        let then = action
            .get("then")
            .cloned()
            .unwrap_or(json!({"decision":"continue"}));
        return intercept(out, frame, id, &then, next_id);
    }
    match action.as_str() {
        Some("hang") => return None,
        Some(exit) if exit.starts_with("exit:") => {
            std::process::exit(exit[5..].parse().unwrap_or(3));
        }
        Some("tag") => {
            // Appends "|<plugin id>" to the text it was given: shows chain order and that
            // each member sees its predecessor's payload.
            let mut payload = params["payload"].clone();
            let text = payload["text"].as_str().unwrap_or("").to_owned();
            payload["text"] = json!(format!("{text}|{}", env_var("REASONIX_PLUGIN_NAME")));
            reply(out, id, json!({"decision":"replace","replacement":payload}));
            return None;
        }
        Some("report") => {
            let env: serde_json::Map<String, Value> = std::env::vars()
                .filter(|(k, _)| k.starts_with("REASONIX_") || k.starts_with("SIDEWIRE_TEST_V"))
                .map(|(k, v)| (k, json!(v)))
                .collect();
            let report = json!({
                "argv": std::env::args().skip(1).collect::<Vec<_>>(),
                "env": env,
                "cwd": std::env::current_dir().unwrap().display().to_string(),
                "params": params,
            });
            reply(
                out,
                id,
                json!({"decision":"block","reason":report.to_string()}),
            );
            return None;
        }
        Some("read_content") => {
            let field = &params["externalized"][0];
            let content_ref = field["contentRef"].as_str().unwrap_or("").to_owned();
            *next_id += 1;
            send_read(out, *next_id, &content_ref, 0);
            return Some(Reading {
                intercept_id: id,
                content_ref,
                data: Vec::new(),
                single: false,
            });
        }
        _ => {}
    }
    if let Some(read) = action.get("read") {
        // One page: of a ref the test wrote to a file (another connection's, or an evicted
        // one), or of this intercept's own; the intercept is answered `block` with the page's
        // summary or the error reason.
        let content_ref = match read.get("ref_file").and_then(Value::as_str) {
            Some(file) => std::fs::read_to_string(file)
                .unwrap_or_default()
                .trim()
                .to_owned(),
            None => params["externalized"][0]["contentRef"]
                .as_str()
                .unwrap_or("")
                .to_owned(),
        };
        let offset = read["offset"].as_u64().unwrap_or(0);
        *next_id += 1;
        send_read(out, *next_id, &content_ref, offset);
        return Some(Reading {
            intercept_id: id,
            content_ref,
            data: Vec::new(),
            single: true,
        });
    }
    if let Some(echo) = action.get("echo_externalized") {
        // A v2 externalized replacement (spec delta §2.9) echoing this intercept's own
        // descriptor, pointed at `/replacement`, with `echo`'s members over it; `"twice"`
        // sends two, `"inline"` adds this inline replacement.
        let mut field = params["externalized"][0].clone();
        field["jsonPointer"] = json!("/replacement");
        for (key, value) in echo.as_object().into_iter().flatten() {
            field[key] = value.clone();
        }
        let count = if action["twice"] == json!(true) { 2 } else { 1 };
        let mut result = json!({"decision": "replace", "externalized": vec![field; count]});
        if let Some(inline) = action.get("inline") {
            result["replacement"] = inline.clone();
        }
        reply(out, id, result);
        return None;
    }
    if let Some(raw) = action.get("raw").and_then(Value::as_str) {
        out.line(&raw.replace("@id", &id.to_string()));
        return None;
    }
    if let Some(template) = action.get("raw_sized").and_then(Value::as_str) {
        // A line of exactly `bytes` bytes counting its LF: `@fill` becomes that much padding.
        let template = template.replace("@id", &id.to_string());
        let bytes = action["bytes"].as_u64().unwrap_or(0) as usize;
        let fill = bytes - 1 - (template.len() - "@fill".len());
        out.line(&template.replace("@fill", &"x".repeat(fill)));
        return None;
    }
    if let Some(error) = action.get("error") {
        out.frame(&json!({"jsonrpc":"2.0","id":id,"error":error}));
        return None;
    }
    reply(out, id, action.clone());
    None
}
