//! Unit tests of `PATH` handling and command lookup.

use super::*;

fn os(s: &str) -> &OsStr {
    OsStr::new(s)
}

#[test]
fn merge_appends_missing_entries_once() {
    assert_eq!(
        merge(
            os("/usr/bin:/bin"),
            Some(os("/opt/node/bin:/usr/bin::/bin:/x"))
        ),
        "/usr/bin:/bin:/opt/node/bin:/x"
    );
    assert_eq!(merge(os(""), Some(os("/a"))), "/a");
    assert_eq!(merge(os("/a::/a"), None), "/a");
}

#[test]
fn probe_output_takes_the_last_marker_line() {
    let out = format!("motd\n{MARKER}/old\nnoise\n\n{MARKER}/usr/local/bin:/usr/bin\r\n");
    assert_eq!(
        parse_probe(out.as_bytes()).as_deref(),
        Some(os("/usr/local/bin:/usr/bin"))
    );
    assert_eq!(parse_probe(b"nothing here"), None);
    assert_eq!(parse_probe(format!("{MARKER}\n").as_bytes()), None);
}

#[test]
fn search_finds_commands_on_absolute_entries_only() {
    let found = search("sh", os("relative/dir:/nonexistent:/bin:/usr/bin")).unwrap();
    assert!(found.is_absolute() && found.ends_with("sh"), "{found:?}");
    assert_eq!(search("sh", os("bin:usr/bin")), None);
}

#[tokio::test]
async fn a_missing_command_names_path_and_the_fix() {
    let err = resolve(
        "definitely-not-a-command-xyz",
        Some(os("/usr/bin:/bin")),
        None,
    )
    .await
    .unwrap_err();
    assert!(err.is_not_found());
    let text = err.to_string();
    assert!(
        text.contains("`definitely-not-a-command-xyz` was not found on PATH (/usr/bin:/bin"),
        "{text}"
    );
    assert!(text.contains("absolute path"), "{text}");
    assert!(
        text.contains("set PATH in the command's environment"),
        "{text}"
    );
}

#[tokio::test]
async fn a_command_on_the_given_path_needs_no_probe() {
    let resolved = resolve("sh", Some(os("/nonexistent:/bin:/usr/bin")), None)
        .await
        .unwrap();
    assert!(resolved.program.ends_with("sh"));
    assert_eq!(resolved.path, None);
}

#[test]
fn paths_with_a_slash_are_used_as_paths() {
    assert_eq!(resolve_path("/bin/sh", None).unwrap(), Path::new("/bin/sh"));
    assert_eq!(
        resolve_path("./sh", Some(Path::new("/bin"))).unwrap(),
        Path::new("/bin/./sh")
    );
    let err = resolve_path("./nope", Some(Path::new("/bin"))).unwrap_err();
    assert!(err.is_not_found());
    assert!(err.to_string().contains("does not exist"), "{err}");
    let err = resolve_path("/etc/passwd", None).unwrap_err();
    assert!(
        err.to_string().contains("is not an executable file"),
        "{err}"
    );
}

#[tokio::test]
async fn the_login_shell_probe_is_cached() {
    let first = login_shell_path().await;
    let second = login_shell_path().await;
    assert_eq!(first, second);
}

#[tokio::test]
async fn a_shell_that_never_answers_is_killed_after_the_budget() {
    let dir = tempfile::tempdir().unwrap();
    let shell = dir.path().join("hang");
    std::fs::write(&shell, "#!/bin/sh\nexec sleep 1000\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&shell, std::fs::Permissions::from_mode(0o755)).unwrap();
    let start = std::time::Instant::now();
    assert_eq!(probe_with(&shell).await, None);
    let took = start.elapsed();
    assert!(took >= PROBE_BUDGET && took < PROBE_BUDGET * 10, "{took:?}");
}

#[test]
fn a_long_path_is_shown_once_and_cut() {
    let entries: Vec<String> = (0..400).map(|n| format!("/no/such/dir-{n}")).collect();
    let text = not_found("x", os(&entries.join(":"))).to_string();
    assert!(text.contains("/no/such/dir-0:/no/such/dir-1:"), "{text}");
    assert!(!text.contains("/no/such/dir-399"), "{text}");
    assert_eq!(text.matches("/no/such/dir-1:").count(), 1, "{text}");
    assert!(text.len() < 1024, "{} bytes: {text}", text.len());
}
