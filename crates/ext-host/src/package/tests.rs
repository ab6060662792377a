//! The install-time refusals (control characters in the members the consent screen shows, a
//! command that could never start), the escaping of the trust summary, and error chains that
//! name each cause once.

use std::path::{Path, PathBuf};

use serde_json::json;
use sidewire_ext_protocol::MANIFEST_FILE;

use crate::{Error, InstallOptions, Package, PluginStore};
use sidewire_ext_protocol::Refusal;

/// The spoof from issue 11: on a terminal it erases its own line and prints a fake one.
const SPOOF: &str = "${REASONIX_PLUGIN_ROOT}/run\u{1b}[2K\r  command:      node index.js";

fn write_package(dir: &Path, name: &str, manifest: serde_json::Value) -> PathBuf {
    let root = dir.join(name);
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join(MANIFEST_FILE), manifest.to_string()).unwrap();
    root
}

fn with_runtime(version: &str, command: &str, args: &[&str]) -> serde_json::Value {
    json!({
        "apiVersion": "reasonix.io/plugin/v1", "name": "acme", "version": version,
        "runtime": { "command": command, "args": args }
    })
}

/// Every message of `err`'s chain, joined as `anyhow`'s `{:#}` joins them.
fn chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut next = err.source();
    while let Some(cause) = next {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        next = cause.source();
    }
    text
}

fn refusal(err: &Error) -> (String, Refusal) {
    assert!(err.is_refused(), "not a refusal: {err:?}");
    let (field, refusal) = err.refusal().unwrap();
    (field.to_owned(), refusal.clone())
}

#[test]
fn the_spoof_manifest_is_refused_at_install_naming_the_member() {
    let tmp = tempfile::tempdir().unwrap();
    let src = write_package(tmp.path(), "spoof", with_runtime("1.0.0", SPOOF, &[]));
    let store = PluginStore::new(tmp.path().join("state"));
    for options in [InstallOptions::copy(), InstallOptions::link()] {
        let err = store.install(&src, options).unwrap_err();
        assert_eq!(
            refusal(&err),
            (
                "runtime.command".to_owned(),
                Refusal::ControlCharacter {
                    character: '\u{1b}',
                    at: 27
                }
            )
        );
        // The message names the member and never repeats its value.
        let text = err.to_string();
        assert!(
            text.contains("runtime.command") && text.contains("U+001B"),
            "{text}"
        );
        assert!(!text.contains('\u{1b}') && !text.contains('\r'), "{text:?}");
    }
    assert!(store.list().unwrap().is_empty());
    assert!(!tmp.path().join("state/plugins/acme").exists());
    // The package itself says so before anyone is asked to consent.
    let package = Package::open(&src).unwrap();
    assert!(package.check_installable().unwrap_err().is_refused());
}

#[test]
fn every_member_the_summary_shows_is_checked() {
    let tmp = tempfile::tempdir().unwrap();
    let store = PluginStore::new(tmp.path().join("state"));
    let cases = [
        (with_runtime("1.0\r", "/bin/run", &[]), "version", '\r'),
        (
            with_runtime("1.0", "/bin/run", &["--ok", "a\u{202e}b"]),
            "runtime.args[1]",
            '\u{202e}',
        ),
        (
            with_runtime("1.0", "/bin/r\u{9b}un", &[]),
            "runtime.command",
            '\u{9b}',
        ),
        (
            with_runtime("1.0", "/bin/run", &["\u{7f}"]),
            "runtime.args[0]",
            '\u{7f}',
        ),
        (
            with_runtime("1.0", "/bin/run\n", &[]),
            "runtime.command",
            '\n',
        ),
        (
            with_runtime("1.0", "/bin/run", &["\u{2067}"]),
            "runtime.args[0]",
            '\u{2067}',
        ),
        // A declarative package shows its version too.
        (
            json!({"apiVersion": "reasonix.io/plugin/v1", "name": "acme", "version": "\u{1b}]0;x\u{7}"}),
            "version",
            '\u{1b}',
        ),
    ];
    for (i, (manifest, field, character)) in cases.into_iter().enumerate() {
        let src = write_package(tmp.path(), &format!("case-{i}"), manifest);
        let err = store.install(&src, InstallOptions::link()).unwrap_err();
        let (got_field, got) = refusal(&err);
        assert_eq!(got_field, field, "case {i}");
        assert!(
            matches!(got, Refusal::ControlCharacter { character: c, .. } if c == character),
            "case {i}: {got:?}"
        );
    }
    // The name is decoded against the plugin-id pattern already; a package built by hand is
    // checked all the same, and the message does not echo the name.
    let mut package = Package::open(&write_package(
        tmp.path(),
        "named",
        with_runtime("1.0", "/bin/run", &[]),
    ))
    .unwrap();
    package.manifest.name = "acme\u{1b}[2K".to_owned();
    let err = package.check_installable().unwrap_err();
    assert_eq!(refusal(&err).0, "name");
    assert!(!err.to_string().contains('\u{1b}'));
    assert!(store.list().unwrap().is_empty());
}

#[test]
fn a_command_that_could_never_start_is_refused_at_install_with_the_launch_rule() {
    let tmp = tempfile::tempdir().unwrap();
    let store = PluginStore::new(tmp.path().join("state"));
    let cases = [
        ("node", Some(Refusal::RelativeCommand)),
        ("bin/run", Some(Refusal::RelativeCommand)),
        ("./run", Some(Refusal::RelativeCommand)),
        ("$HOME/bin/run", Some(Refusal::RelativeCommand)),
        ("~/bin/run", Some(Refusal::RelativeCommand)),
        (
            "x${REASONIX_PLUGIN_ROOT}/run",
            Some(Refusal::RelativeCommand),
        ),
        (
            "/bin/sh",
            Some(Refusal::ShellCommand {
                name: "sh".to_owned(),
            }),
        ),
        (
            "/usr/bin/BASH.exe",
            Some(Refusal::ShellCommand {
                name: "BASH.exe".to_owned(),
            }),
        ),
        ("/usr/bin/node", None),
        ("${REASONIX_PLUGIN_ROOT}/bin/run", None),
    ];
    for (i, (command, expected)) in cases.into_iter().enumerate() {
        let src = write_package(
            tmp.path(),
            &format!("cmd-{i}"),
            json!({
                "apiVersion": "reasonix.io/plugin/v1", "name": format!("cmd-{i}"), "version": "1",
                "runtime": { "command": command }
            }),
        );
        let installed = store.install(&src, InstallOptions::copy());
        // Launch applies the very same rule to the same manifest.
        let package = Package::open(&src).unwrap();
        let launch = sidewire_ext_protocol::resolve_launch(
            package.id(),
            &std::fs::canonicalize(&src).unwrap(),
            "1",
            package.manifest.runtime.as_ref().unwrap(),
        );
        match expected {
            Some(expected) => {
                let err = installed.unwrap_err();
                assert_eq!(
                    refusal(&err),
                    ("runtime.command".to_owned(), expected),
                    "{command}"
                );
                let text = err.to_string();
                assert!(
                    text.contains("absolute") || text.contains("shell"),
                    "the message states the rule: {text}"
                );
                assert!(launch.is_err(), "{command}");
            }
            None => {
                installed.unwrap_or_else(|err| panic!("{command}: {err}"));
                assert!(launch.is_ok(), "{command}");
            }
        }
    }
}

#[test]
fn the_trust_summary_of_the_spoof_shows_its_escapes_and_no_raw_control() {
    let tmp = tempfile::tempdir().unwrap();
    let src = write_package(
        tmp.path(),
        "spoof\u{1b}[1A",
        with_runtime("1.0\u{202e}", SPOOF, &["a\rb"]),
    );
    let text = Package::open(&src).unwrap().trust_summary().to_string();
    for c in text.chars() {
        assert!(
            c == '\n' || !crate::is_terminal_control(c),
            "raw {c:?} in {text:?}"
        );
    }
    assert!(
        text.contains("/run\\u{1b}[2K\\r  command:      node index.js"),
        "{text}"
    );
    assert!(text.contains("1.0\\u{202e}"), "{text}");
    assert!(text.contains("spoof\\u{1b}[1A"), "{text}");
    assert!(text.contains(r#""a\rb""#), "{text}");
    // One command line: the fake one is part of the real one, visibly.
    assert_eq!(
        text.lines()
            .filter(|l| l.trim_start().starts_with("command:"))
            .count(),
        1,
        "{text}"
    );
    // Members without controls are shown as written.
    let plain = write_package(
        tmp.path(),
        "plain",
        with_runtime("1.2.0", "/opt/it's/run", &[]),
    );
    let text = Package::open(&plain).unwrap().trust_summary().to_string();
    assert!(text.contains("command:      /opt/it's/run"), "{text}");
    assert!(text.contains("acme 1.2.0"), "{text}");
}

#[test]
fn a_missing_or_broken_manifest_names_its_cause_once() {
    let tmp = tempfile::tempdir().unwrap();
    let err = Package::open(&tmp.path().join("nowhere")).unwrap_err();
    assert!(err.is_io());
    let text = chain(&err);
    assert_eq!(text.matches("os error 2").count(), 1, "{text}");
    let src = write_package(
        tmp.path(),
        "broken",
        json!({"apiVersion": "reasonix.io/plugin/v1", "name": "acme", "version": "1", "bogus": 1}),
    );
    let err = Package::open(&src).unwrap_err();
    assert!(err.is_manifest());
    let text = chain(&err);
    assert_eq!(text.matches("unknown member").count(), 1, "{text}");
    assert_eq!(text.matches("bogus").count(), 1, "{text}");
}

/// A package directory whose manifest is whatever `make` puts at its path.
fn package_with(dir: &Path, name: &str, make: impl FnOnce(&Path)) -> PathBuf {
    let root = dir.join(name);
    std::fs::create_dir_all(&root).unwrap();
    make(&root.join(MANIFEST_FILE));
    root
}

/// Opens on another thread, so a read that blocks fails the test instead of hanging it.
fn open_on_a_thread(dir: PathBuf) -> Result<Package, Error> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(Package::open(&dir));
    });
    rx.recv_timeout(std::time::Duration::from_secs(30))
        .expect("opening returns instead of blocking")
}

#[test]
fn a_manifest_that_is_a_fifo_a_device_link_or_too_large_is_refused_at_once_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let fifo = package_with(tmp.path(), "fifo", |path| {
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            path,
            rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
        )
        .unwrap();
    });
    let zero = package_with(tmp.path(), "zero", |path| {
        std::os::unix::fs::symlink("/dev/zero", path).unwrap();
    });
    let secret = tmp.path().join("elsewhere.json");
    std::fs::write(&secret, with_runtime("1.0.0", "/bin/true", &[]).to_string()).unwrap();
    let outside = package_with(tmp.path(), "outside", |path| {
        std::os::unix::fs::symlink(&secret, path).unwrap();
    });
    let large = package_with(tmp.path(), "large", |path| {
        std::fs::File::create(path)
            .unwrap()
            .set_len(crate::MAX_MANIFEST_BYTES as u64 + 1)
            .unwrap();
    });
    for (dir, rule) in [
        (fifo, "not regular"),
        (zero, "symlink"),
        (outside, "symlink"),
        (large, "too large"),
    ] {
        let err = open_on_a_thread(dir.clone()).unwrap_err();
        assert!(err.is_io(), "{err:?}");
        let file = err.file().expect("a refused file");
        let matched = match rule {
            "not regular" => file.is_not_regular(),
            "symlink" => file.is_symlink(),
            _ => file.is_too_large(),
        };
        assert!(matched, "{}: expected {rule}, got {err}", dir.display());
        assert!(
            err.to_string()
                .contains(&*dir.join(MANIFEST_FILE).to_string_lossy()),
            "the error names the file: {err}"
        );
    }
}

#[test]
fn a_manifest_linked_to_a_file_inside_its_package_is_read() {
    let tmp = tempfile::tempdir().unwrap();
    let root = package_with(tmp.path(), "linked", |path| {
        let real = path.parent().unwrap().join("manifests/v1.json");
        std::fs::create_dir_all(real.parent().unwrap()).unwrap();
        std::fs::write(&real, with_runtime("1.0.0", "/bin/true", &[]).to_string()).unwrap();
        std::os::unix::fs::symlink("manifests/v1.json", path).unwrap();
    });
    assert_eq!(open_on_a_thread(root).unwrap().id(), "acme");
}

/// Checklist item 37, the file-system half: an escaping symlink is refused, an in-root one
/// accepted, a missing path is a warning, a directory listed as a theme is refused, a theme
/// glob matches regular files; install applies the same checks.
#[test]
fn contributed_paths_are_checked_against_the_plugin_root() {
    let tmp = tempfile::tempdir().unwrap();
    let outside = tmp.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret.md"), "s").unwrap();
    let v2 = |name: &str, contributes: serde_json::Value, make: &dyn Fn(&Path)| {
        let root = write_package(
            tmp.path(),
            name,
            json!({"apiVersion": "reasonix.io/plugin/v2", "name": name, "contributes": contributes}),
        );
        make(&root);
        Package::open(&root).unwrap()
    };
    let refusal = |package: &Package| match package.check_contributions().unwrap_err() {
        Error::Contribution {
            kind,
            path,
            refusal,
            ..
        } => (kind, path, refusal),
        other => panic!("{other:?}"),
    };
    use crate::ContributionRefusal;
    use sidewire_ext_protocol::v2::PathKind;

    let escaping = v2("escaping", json!({"skills": ["skills/leak"]}), &|root| {
        std::fs::create_dir_all(root.join("skills")).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("skills/leak")).unwrap();
    });
    assert_eq!(
        refusal(&escaping),
        (
            PathKind::Skill,
            "skills/leak".to_owned(),
            ContributionRefusal::SymlinkEscape
        )
    );
    // Under an escaping directory, even a path that does not exist is refused.
    let under = v2("under", json!({"prompts": ["out/missing.md"]}), &|root| {
        std::os::unix::fs::symlink(&outside, root.join("out")).unwrap();
    });
    assert_eq!(refusal(&under).2, ContributionRefusal::SymlinkEscape);
    let store = PluginStore::new(tmp.path().join("state"));
    let err = store
        .install(&escaping.root, InstallOptions::link())
        .unwrap_err();
    assert!(err.is_contribution(), "{err:?}");
    assert!(store.list().unwrap().is_empty());

    let dir_theme = v2("dir-theme", json!({"themes": "themes/dark"}), &|root| {
        std::fs::create_dir_all(root.join("themes/dark")).unwrap();
    });
    assert_eq!(refusal(&dir_theme).2, ContributionRefusal::ThemeNotAFile);

    let fine = v2(
        "fine",
        json!({"skills": ["skills/real", "skills/alias", "skills/missing"],
               "themes": ["themes/*.reasonix-theme", "none/*.reasonix-theme"]}),
        &|root| {
            std::fs::create_dir_all(root.join("skills/real")).unwrap();
            std::os::unix::fs::symlink("real", root.join("skills/alias")).unwrap();
            std::fs::create_dir_all(root.join("themes")).unwrap();
            std::fs::write(root.join("themes/dark.reasonix-theme"), "{}").unwrap();
            std::fs::write(root.join("themes/notes.txt"), "").unwrap();
        },
    );
    let warnings = fine.check_contributions().unwrap();
    assert_eq!(
        warnings,
        [
            crate::ContributionWarning::Missing {
                kind: PathKind::Skill,
                path: "skills/missing".to_owned()
            },
            crate::ContributionWarning::NoMatch {
                pattern: "none/*.reasonix-theme".to_owned()
            },
        ]
    );
    store.install(&fine.root, InstallOptions::link()).unwrap();
    // A glob whose match is a directory is refused like a listed one.
    let glob_dir = v2("glob-dir", json!({"themes": ["themes/*"]}), &|root| {
        std::fs::create_dir_all(root.join("themes/sub")).unwrap();
    });
    assert_eq!(refusal(&glob_dir).2, ContributionRefusal::ThemeNotAFile);
}

/// The theme globs' bound: more than `MAX_GLOB_ENTRIES` entries read refuses the package.
#[test]
fn theme_globs_read_a_bounded_number_of_entries() {
    let tmp = tempfile::tempdir().unwrap();
    let root = write_package(
        tmp.path(),
        "many",
        json!({"apiVersion": "reasonix.io/plugin/v2", "name": "many",
               "contributes": {"themes": "themes/*.none"}}),
    );
    std::fs::create_dir_all(root.join("themes")).unwrap();
    for i in 0..crate::MAX_GLOB_ENTRIES {
        std::fs::write(root.join(format!("themes/{i}")), "").unwrap();
    }
    let package = Package::open(&root).unwrap();
    // At the bound: read in full, nothing matches.
    assert_eq!(package.check_contributions().unwrap().len(), 1);
    std::fs::write(root.join("themes/one-more"), "").unwrap();
    match package.check_contributions().unwrap_err() {
        Error::Contribution { refusal, .. } => {
            assert_eq!(refusal, crate::ContributionRefusal::TooManyEntries);
        }
        other => panic!("{other:?}"),
    }
}
