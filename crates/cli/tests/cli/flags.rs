//! Issue 18 §3: flags that mean what they say; usage errors exit 2.

use super::*;

#[test]
fn conflicting_or_misplaced_server_flags_are_usage_errors() {
    let home = home();
    for line in [
        &[
            "mcp",
            "tools",
            "--url",
            "http://127.0.0.1:9",
            "--stdio",
            "--",
            "true",
        ][..],
        &[
            "mcp",
            "--url",
            "http://127.0.0.1:9",
            "tools",
            "--stdio",
            "--",
            "true",
        ],
        &["mcp", "--url", "http://127.0.0.1:9", "tools", "--", "true"],
        &["mcp", "tools", "--", "true"],
        &["mcp", "tools", "--header", "A: b", "--stdio", "--", "true"],
        &["mcp", "tools", "--url", "http://x", "--header", "no-colon"],
        &["mcp", "tools", "--timeout", "0", "--stdio", "--", "true"],
        &[
            "mcp",
            "tools",
            "--startup-timeout",
            "-1",
            "--stdio",
            "--",
            "true",
        ],
        &["mcp", "tools", "--stdio"],
        &[
            "mcp", "--config", "x.json", "tools", "--stdio", "--", "true",
        ],
        &[
            "mcp",
            "--stdio",
            "tools",
            "--url",
            "http://127.0.0.1:9",
            "--",
            "true",
        ],
    ] {
        let out = run(home.path(), line);
        assert_eq!(out.status.code(), Some(2), "{line:?}: {}", stderr(&out));
        assert!(stderr(&out).contains("error:"), "{line:?}");
    }
}

/// An HTTP server that answers every request `404 Not Found`, on a thread, for `count`
/// connections; its URL.
fn not_found_server(count: usize) -> String {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let address = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(count) {
            let Ok(mut stream) = stream else { continue };
            let mut buf = [0u8; 8192];
            let _ = stream.read(&mut buf);
            let _ = stream.write_all(
                b"HTTP/1.1 404 Not Found\r\ncontent-length: 9\r\nconnection: close\r\n\r\nnot found",
            );
        }
    });
    format!("http://{address}/wrong")
}

#[test]
fn a_wrong_http_path_or_a_command_that_is_no_server_says_what_to_do() {
    let home = home();
    let url = not_found_server(16);
    let out = run(home.path(), &["mcp", "tools", "--url", &url]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("404"), "{err}");
    assert!(err.contains("hint: ") && err.contains("path"), "{err}");
    // A command that prints something else than JSON-RPC and exits.
    let out = run(
        home.path(),
        &[
            "mcp",
            "tools",
            "--stdio",
            "--",
            "sh",
            "-c",
            "echo Usage: server [options]",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("hint: ") && err.contains("MCP server"),
        "{err}"
    );
    assert_eq!(err.matches("hint: ").count(), 1, "{err}");
}

#[test]
fn a_server_that_needs_sampling_says_the_cli_does_not_offer_it() {
    let Some(script) = modern_server("a_server_that_needs_sampling_says_the_cli_does_not_offer_it")
    else {
        return;
    };
    let home = home();
    let out = run(
        home.path(),
        &modern_stdio(&script, &["call", "needs-sampling"]),
    );
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert_eq!(err.matches("error:").count(), 1, "{err}");
    assert!(err.contains("hint: ") && err.contains("sampling"), "{err}");
}

#[test]
fn a_legacy_server_that_asks_for_sampling_anyway_is_told_of_once() {
    let Some(_) = modern_server("a_legacy_server_that_asks_for_sampling_anyway_is_told_of_once")
    else {
        return;
    };
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/asks_sampling_server.py");
    let home = home();
    let out = run(
        home.path(),
        &modern_stdio(&script, &["--era", "legacy", "call", "summarize"]),
    );
    // The tool's own failure (the server reports the refusal as isError).
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    let all = format!("{}{err}", stdout(&out));
    assert!(all.contains("-32601"), "{all}");
    // Asked twice, told of once.
    assert_eq!(err.matches("asked for sampling").count(), 1, "{err}");
}
