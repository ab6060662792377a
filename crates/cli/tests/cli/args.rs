//! Issue 18 §2: `key=value` typed by the tool's schema before anything is sent, `--args` for
//! exact JSON, `-e` for an ad hoc server's environment, the server's log level.

use super::*;

#[test]
fn key_value_words_are_typed_by_the_tools_schema() {
    let home = home();
    // echo takes a string: 123 stays "123".
    let out = run(home.path(), &adhoc(&["call", "echo", "text=123"]));
    assert!(out.status.success(), "{}", stderr(&out));
    // Piped, the output is the tool's text exactly.
    assert_eq!(stdout(&out), "123");
    // add takes numbers.
    let out = run(home.path(), &adhoc(&["call", "add", "a=2.5", "b=1"]));
    assert_eq!(stdout(&out), "3.5", "{}", stderr(&out));
}

#[test]
fn words_the_schema_refuses_are_a_usage_error_and_nothing_is_sent() {
    let home = home();
    for (words, needle) in [
        (&["a=x", "b=1"][..], "argument a: expected number"),
        (&["a=1"], "missing required argument b (number)"),
        (&["a"], "arguments are key=value"),
        (&["a=1", "a=2", "b=1"], "argument a is given more than once"),
    ] {
        let mut line = vec!["call", "add"];
        line.extend_from_slice(words);
        let out = run(home.path(), &adhoc(&line));
        assert_eq!(out.status.code(), Some(2), "{words:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(needle), "{words:?}: {}", stderr(&out));
        // Not sent: the server's own refusal never shows.
        assert!(!stdout(&out).contains("add needs numbers"), "{words:?}");
    }
}

#[test]
fn args_sends_exact_json() {
    let home = home();
    // Sent as it is, not typed by the schema (but checked against it before sending: JSON the
    // schema refuses is never sent, see `mcp_call_arguments_that_break_the_input_schema_exit_2_unsent`).
    let out = run(
        home.path(),
        &adhoc(&["call", "add", "--args", r#"{"a":1,"b":2}"#]),
    );
    assert_eq!(stdout(&out), "3", "{}", stderr(&out));
    let out = run(home.path(), &adhoc(&["call", "add", "--args", "[1]"]));
    assert_fails(&out, "must be a JSON object");
    let out = run(
        home.path(),
        &adhoc(&["call", "add", "a=1", "--args", r#"{"a":1}"#]),
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[test]
fn dash_e_sets_the_stdio_servers_environment() {
    let home = home();
    let out = run(
        home.path(),
        &[
            "mcp",
            "tools",
            "-e",
            "SIDEWIRE_TEST_VALUE=env-marker-42",
            "--stdio",
            "--",
            "sh",
            "-c",
            "echo \"got $SIDEWIRE_TEST_VALUE\" >&2; exit 3",
        ],
    );
    assert!(
        stderr(&out).contains("got env-marker-42"),
        "{}",
        stderr(&out)
    );
    let out = run(
        home.path(),
        &["mcp", "tools", "-e", "X", "--stdio", "--", "true"],
    );
    assert_eq!(out.status.code(), Some(2));
    let out = run(
        home.path(),
        &["mcp", "tools", "-e", "X=1", "--url", "http://127.0.0.1:9"],
    );
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn the_log_level_is_sent_to_the_server() {
    let home = home();
    let out = run(home.path(), &adhoc(&["log-level", "debug"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "adhoc: log level set\n");
    let out = run(
        home.path(),
        &adhoc(&["--log-level", "warning", "call", "echo", "text=x"]),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let out = run(home.path(), &adhoc(&["log-level", "loud"]));
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn the_issues_echo_of_123_reaches_server_everything_as_a_string() {
    let Some(entry) =
        server_everything("the_issues_echo_of_123_reaches_server_everything_as_a_string")
    else {
        return;
    };
    let home = home();
    let entry = entry.to_str().unwrap();
    let with = |cmd: &[&str]| {
        let mut args = vec!["mcp"];
        args.extend_from_slice(cmd);
        args.extend_from_slice(&["--stdio", "--", "node", entry, "stdio"]);
        run(home.path(), &args)
    };
    let out = with(&["call", "echo", "message=123"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("123"), "{}", stdout(&out));
    // A result with text and structured content prints the text once.
    let out = with(&["call", "get-sum", "a=2", "b=40"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).matches("42").count(), 1, "{}", stdout(&out));
}
