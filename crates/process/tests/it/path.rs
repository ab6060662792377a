//! PATH resolution in a process of its own (the login-shell answer is cached per process):
//! found on PATH runs no shell; a miss asks the login shell once.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::roles;
use crate::support::Marker;

/// A fake login shell that records each run in `$PROBE_RAN` and answers with `$EXTRA_DIR`
/// prepended to `PATH`.
fn fake_shell(dir: &Path) -> String {
    let shell = dir.join("fake-shell");
    std::fs::write(
        &shell,
        "#!/bin/sh\necho ran >> \"$PROBE_RAN\"\nPATH=\"$EXTRA_DIR:$PATH\"\neval \"$3\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&shell, std::fs::Permissions::from_mode(0o755)).unwrap();
    shell.to_str().unwrap().to_owned()
}

fn run(command: &str, dir: &Path) -> (String, bool) {
    let marker = Marker::new("path");
    let shell = fake_shell(dir);
    let extra = dir.join("extra");
    std::fs::create_dir_all(&extra).unwrap();
    let tool = extra.join("only-in-login-path");
    std::fs::write(&tool, "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
    let ran = dir.join("probe-ran");
    let mut child = roles::start(
        roles::RESOLVE,
        &marker,
        &[
            ("RESOLVE_COMMAND", command),
            ("SHELL", &shell),
            ("PATH", "/usr/bin:/bin"),
            ("EXTRA_DIR", extra.to_str().unwrap()),
            ("PROBE_RAN", ran.to_str().unwrap()),
        ],
    );
    let line = roles::first_line(&mut child);
    assert!(child.wait().unwrap().success());
    (line, ran.exists())
}

pub(crate) fn a_command_on_path_runs_no_shell() {
    let dir = tempfile::tempdir().unwrap();
    let (line, probed) = run("sh", dir.path());
    assert!(
        line == "ok /usr/bin/sh -" || line == "ok /bin/sh -",
        "{line}"
    );
    assert!(!probed, "the login shell ran for a command on PATH");
}

pub(crate) fn a_miss_probes_the_login_shell_and_the_child_gets_the_merged_path() {
    let dir = tempfile::tempdir().unwrap();
    let (line, probed) = run("only-in-login-path", dir.path());
    assert!(probed);
    let extra = dir.path().join("extra");
    let expected = format!(
        "ok {} /usr/bin:/bin:{}",
        extra.join("only-in-login-path").display(),
        extra.display()
    );
    assert_eq!(line, expected);
}

pub(crate) fn a_miss_everywhere_says_how_to_fix_it() {
    let dir = tempfile::tempdir().unwrap();
    let (line, probed) = run("not-anywhere-xyz", dir.path());
    assert!(probed);
    assert!(
        line.starts_with(
            "err the command `not-anywhere-xyz` was not found on PATH (/usr/bin:/bin:"
        ),
        "{line}"
    );
    assert!(line.contains("absolute path"), "{line}");
}
