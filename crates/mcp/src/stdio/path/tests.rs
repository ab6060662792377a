//! Unit tests of PATH handling and command lookup.

use super::*;

#[test]
fn merge_appends_missing_entries_once() {
    assert_eq!(
        merge("/usr/bin:/bin", Some("/opt/node/bin:/usr/bin::/bin:/x")),
        "/usr/bin:/bin:/opt/node/bin:/x"
    );
    assert_eq!(merge("", Some("/a")), "/a");
    assert_eq!(merge("/a::/a", None), "/a");
}

#[test]
fn probe_output_takes_the_last_marker_line() {
    let out = format!("motd\n{MARKER}/old\nnoise\n\n{MARKER}/usr/local/bin:/usr/bin\r\n");
    assert_eq!(
        parse_probe(&out).as_deref(),
        Some("/usr/local/bin:/usr/bin")
    );
    assert_eq!(parse_probe("nothing here"), None);
    assert_eq!(parse_probe(&format!("{MARKER}\n")), None);
}

#[test]
fn resolve_finds_commands_on_absolute_entries_only() {
    let found = resolve("sh", "relative/dir:/nonexistent:/bin:/usr/bin", None).unwrap();
    assert!(found.is_absolute() && found.ends_with("sh"), "{found:?}");
    let err = resolve("sh", "bin:usr/bin", None).unwrap_err();
    assert!(err.is_spawn());
}

#[test]
fn a_missing_command_names_path_and_the_fix() {
    let err = resolve("definitely-not-a-command-xyz", "/usr/bin:/bin", None).unwrap_err();
    assert!(err.is_spawn());
    let text = err.to_string();
    assert!(
        text.contains("`definitely-not-a-command-xyz` was not found on PATH (/usr/bin:/bin)"),
        "{text}"
    );
    assert!(text.contains("absolute path"), "{text}");
    assert!(text.contains("PATH in the server's `env`"), "{text}");
}

#[test]
fn paths_with_a_slash_are_used_as_paths() {
    assert_eq!(resolve("/bin/sh", "", None).unwrap(), Path::new("/bin/sh"));
    assert_eq!(
        resolve("./sh", "", Some(Path::new("/bin"))).unwrap(),
        Path::new("/bin/./sh")
    );
    let err = resolve("./nope", "", Some(Path::new("/bin"))).unwrap_err();
    assert!(err.to_string().contains("does not exist"), "{err}");
    let err = resolve("/etc/passwd", "", None).unwrap_err();
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
