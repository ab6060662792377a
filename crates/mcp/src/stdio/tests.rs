//! Unit tests of how launch failures become mcp errors.

use super::*;

#[tokio::test]
async fn a_command_missing_from_path_names_path_and_where_to_set_it() {
    let err = sidewire_process::resolve(
        "definitely-not-a-command-xyz",
        Some(OsStr::new("/usr/bin:/bin")),
        None,
    )
    .await
    .unwrap_err();
    let err = spawn_error(err, true);
    assert!(err.is_spawn());
    let text = err.to_string();
    assert!(
        text.contains("`definitely-not-a-command-xyz` was not found on PATH (/usr/bin:/bin"),
        "{text}"
    );
    assert!(text.contains("absolute path"), "{text}");
    assert!(text.contains("a server's PATH goes in its `env`"), "{text}");
}

#[tokio::test]
async fn a_missing_path_says_so_without_the_path_hint() {
    let err = sidewire_process::resolve("./nope", None, Some(std::path::Path::new("/bin")))
        .await
        .unwrap_err();
    let text = spawn_error(err, false).to_string();
    assert!(text.contains("does not exist"), "{text}");
    assert!(!text.contains("`env`"), "{text}");
}

#[tokio::test]
async fn an_os_refusal_names_its_error_once_and_has_no_source() {
    // A directory passes the "is a path" check but cannot be executed.
    let err = Command::new("/").spawn().unwrap_err();
    assert!(err.is_spawn(), "{err:?}");
    let os = std::error::Error::source(&err).unwrap().to_string();
    let err = spawn_error(err, false);
    assert!(err.is_spawn());
    assert!(std::error::Error::source(&err).is_none());
    let text = err.to_string();
    assert!(text.starts_with("cannot start /: "), "{text}");
    assert_eq!(text.matches(&os).count(), 1, "{text}");
}
