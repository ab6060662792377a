//! Issue 18 §1: each thing once. A failure is one error with the server's stderr once, under
//! it; a result's text is not followed by its structured twin; images and audio are a summary
//! line, never base64.

use super::*;

#[test]
fn a_server_that_fails_to_start_is_reported_once_with_its_stderr_once() {
    let home = home();
    let out = run(
        home.path(),
        &[
            "mcp",
            "tools",
            "--stdio",
            "--",
            "sh",
            "-c",
            "echo fatal-marker >&2; exit 3",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert_eq!(err.matches("fatal-marker").count(), 1, "{err}");
    assert_eq!(err.matches("status 3").count(), 1, "{err}");
    assert_eq!(err.matches("error:").count(), 1, "{err}");
    assert!(!err.contains("WARN"), "{err}");
    // The tail is an indented block under the error.
    assert!(err.contains("\n      fatal-marker"), "{err}");
}

#[test]
fn a_config_server_that_fails_beside_one_that_runs_is_warned_of_once() {
    let home = home();
    let config = home.path().join(".mcp.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {
            "good": {"command": EXE, "args": ["__mcp-server"]},
            "bad": {"command": "/no/such/uvx-marker", "args": []}
        }})
        .to_string(),
    )
    .unwrap();
    let path = config.to_str().unwrap();
    let out = run(
        home.path(),
        &["mcp", "--config", path, "call", "echo", "text=hi"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "hi");
    let err = stderr(&out);
    assert_eq!(err.matches("uvx-marker").count(), 1, "{err}");
}

#[test]
fn text_and_structured_content_print_once_unless_asked() {
    let home = home();
    let out = run(home.path(), &adhoc(&["call", "add", "a=2", "b=40"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "42");
    let out = run(
        home.path(),
        &adhoc(&["call", "add", "a=2", "b=40", "--structured"]),
    );
    let text = stdout(&out);
    assert!(
        text.starts_with("42\n") && text.contains("\"result\": 42"),
        "{text}"
    );
    // --json: the whole result, once.
    let out = run(
        home.path(),
        &adhoc(&["--json", "call", "add", "a=2", "b=40"]),
    );
    let doc: Value = serde_json::from_str(&stdout(&out)).expect("one JSON document");
    assert_eq!(doc["structuredContent"]["result"], 42);
    assert_eq!(doc["content"][0]["text"], "42");
}

#[test]
fn images_and_audio_are_a_summary_line_and_save_writes_them() {
    let home = home();
    let out = run(home.path(), &adhoc(&["call", "pixel"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("[image image/png, 70 bytes, 1x1]"), "{text}");
    assert!(text.contains("[audio audio/wav, 52 bytes]"), "{text}");
    assert!(!text.contains("iVBOR"), "no base64 on the terminal: {text}");
    let dir = home.path().join("saved");
    let out = run(
        home.path(),
        &adhoc(&["call", "pixel", "--save", dir.to_str().unwrap()]),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let png = std::fs::read(dir.join("image-1.png")).expect("the image is saved");
    assert!(png.starts_with(b"\x89PNG"));
    let wav = std::fs::read(dir.join("audio-2.wav")).expect("the audio is saved");
    assert!(wav.starts_with(b"RIFF"));
}
