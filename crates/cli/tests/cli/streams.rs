//! Issue 40 §8 and §18: a provider stream is bounded in time and in output. A provider that
//! stalls fails `ext complete` and a `run --model` turn on the idle bound, and the sidecar is
//! told to stop; one that floods is cut at the answer's bound; a tool call's arguments are
//! never printed past a short preview, nor at all when they take the answer past its bound.

use super::*;

/// Installs the built-in sidecar with `flags` after `__sidecar` (a test model mode); returns
/// the file its `--cancel-mark` writes when the host cancels a stream.
fn install_model(home: &Path, flags: &[&str]) -> PathBuf {
    let mark = home.join("cancel-mark");
    let package = builtin_plugin(home);
    let manifest = package.join("reasonix-plugin.json");
    let mut doc: Value =
        serde_json::from_str(&std::fs::read_to_string(&manifest).unwrap()).unwrap();
    let mut args = vec![json!("__sidecar")];
    args.extend(flags.iter().map(|flag| json!(flag)));
    args.extend([json!("--cancel-mark"), json!(mark)]);
    doc["runtime"]["args"] = json!(args);
    std::fs::write(&manifest, doc.to_string()).unwrap();
    install_linked(home, &package);
    mark
}

/// The stalled model sends its first chunk (the reasoning) and then nothing: `ext complete`
/// fails on the idle bound (shortened to half a second) naming it, after printing the chunk,
/// and the sidecar sees the cancel. With `--json` the end says `idle`.
#[test]
fn ext_complete_fails_a_stalled_provider_on_its_idle_bound_and_the_sidecar_is_told() {
    let home = home();
    let mark = install_model(home.path(), &["--stall-model"]);
    let complete = [
        "ext",
        "complete",
        "--provider",
        SCRIPTED,
        "--idle-timeout",
        "0.5",
        "hello there",
    ];
    let out = run(home.path(), &complete);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_fails(&out, "went idle");
    assert!(stderr(&out).contains("500 ms"), "{}", stderr(&out));
    assert!(stdout(&out).contains("  thinking: "), "{}", stdout(&out));
    assert_the_sidecar_saw_the_cancel(&mark);

    let mut json_line = vec!["--json"];
    json_line.extend(complete);
    let out = run(home.path(), &json_line);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let end = json_lines(&out).pop().unwrap();
    assert_eq!(end["event"], "end");
    assert_eq!(end["outcome"], "idle");
    assert_eq!(end["reason"], "intercept_timeout");
}

/// A `run --model` turn on a stalled provider fails on the idle bound instead of waiting for
/// ever; the session goes on and ends at the end of its input.
#[test]
fn a_turn_of_run_with_a_model_that_stalls_fails_on_the_idle_bound() {
    let home = home();
    let mark = install_model(home.path(), &["--stall-model"]);
    let out = run_with_input(
        home.path(),
        &["run", "--model", SCRIPTED, "--idle-timeout", "0.5"],
        "hello there\n",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("went idle"), "{}", stderr(&out));
    assert_the_sidecar_saw_the_cancel(&mark);
}

/// A model that streams without end: `ext complete` stops at the answer's bound (the 1 MiB of
/// a `run --model` round), fails saying so, and the sidecar sees the cancel.
#[test]
fn ext_complete_stops_an_endless_stream_at_the_output_bound() {
    let home = home();
    let mark = install_model(home.path(), &["--flood-model"]);
    let out = run(
        home.path(),
        &["ext", "complete", "--provider", SCRIPTED, "hello"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_fails(&out, "grew past 1048576 bytes");
    let printed = out.stdout.len();
    assert!(printed > 512 * 1024, "{printed} bytes printed");
    assert!(printed <= 1024 * 1024 + 4096, "{printed} bytes printed");
    assert_the_sidecar_saw_the_cancel(&mark);
}

/// Tool-call arguments past the answer's bound (7 MiB) are never printed: the turn fails
/// saying the answer was too large. Arguments within it (100 KB) print as a short preview
/// saying their size, in the model's request and in the call's report line.
#[test]
fn run_with_a_model_prints_tool_call_arguments_only_as_a_bounded_preview() {
    let home = home();
    install_model(home.path(), &["--tool-call-bytes", "7340032"]);
    let out = run_with_input(home.path(), &["run", "--model", SCRIPTED], "hi\n");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("grew past"), "{}", stderr(&out));
    assert!(
        out.stdout.len() < 16 * 1024,
        "{} bytes printed",
        out.stdout.len()
    );
    assert!(!stdout(&out).contains("xxxxxxxxxx"), "{}", stdout(&out));

    let home = self::home();
    install_model(home.path(), &["--tool-call-bytes", "100000"]);
    let out = run_with_input(
        home.path(),
        &["run", "--model", SCRIPTED, "--max-rounds", "1"],
        "hi\n",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert_eq!(text.matches("(100000 bytes in all)").count(), 2, "{text}");
    assert!(
        out.stdout.len() < 16 * 1024,
        "{} bytes printed",
        out.stdout.len()
    );
}
