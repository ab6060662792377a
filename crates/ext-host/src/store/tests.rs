use std::os::unix::fs::PermissionsExt;

use super::*;

fn manifest(name: &str, version: &str) -> String {
    format!(
        r#"{{"apiVersion":"reasonix.io/plugin/v1","name":"{name}","version":"{version}",
        "runtime":{{"command":"${{REASONIX_PLUGIN_ROOT}}/bin/run","args":["--x"],
        "intercepts":["tool.before"],"capabilities":["interceptors"],"required":true}}}}"#
    )
}

fn package(dir: &Path, name: &str, version: &str) -> PathBuf {
    let root = dir.join(format!("src-{name}-{version}"));
    fs::create_dir_all(root.join("bin")).unwrap();
    fs::write(root.join(MANIFEST), manifest(name, version)).unwrap();
    let exe = root.join("bin/run");
    fs::write(&exe, "#!/bin/true\n").unwrap();
    fs::set_permissions(&exe, fs::Permissions::from_mode(0o750)).unwrap();
    fs::write(root.join("data.txt"), "data").unwrap();
    fs::set_permissions(root.join("data.txt"), fs::Permissions::from_mode(0o640)).unwrap();
    root
}

const MANIFEST: &str = sidewire_ext_protocol::MANIFEST_FILE;

#[test]
fn a_copy_install_keeps_permission_bits_and_inside_symlinks() {
    let tmp = tempfile::tempdir().unwrap();
    let src = package(tmp.path(), "acme", "1.0.0");
    std::os::unix::fs::symlink("bin/run", src.join("link-to-run")).unwrap();
    let store = PluginStore::new(tmp.path().join("state"));
    let installed = store.install(&src, InstallOptions::copy()).unwrap();
    assert_eq!(installed.id, "acme");
    assert!(!installed.linked && installed.enabled);
    assert!(
        installed
            .root
            .starts_with(fs::canonicalize(tmp.path()).unwrap())
    );
    let exe = installed.root.join("bin/run");
    assert_eq!(
        fs::metadata(&exe).unwrap().permissions().mode() & 0o777,
        0o750
    );
    assert_eq!(
        fs::metadata(installed.root.join("data.txt"))
            .unwrap()
            .permissions()
            .mode()
            & 0o777,
        0o640
    );
    let link = installed.root.join("link-to-run");
    assert!(
        fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(fs::read_link(&link).unwrap(), PathBuf::from("bin/run"));
    assert_eq!(store.list().unwrap(), vec![installed]);
}

#[test]
fn a_symlink_leaving_the_package_fails_the_install_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let src = package(tmp.path(), "acme", "1.0.0");
    std::os::unix::fs::symlink("../../etc/passwd", src.join("bin/escape")).unwrap();
    let store = PluginStore::new(tmp.path().join("state"));
    let err = store.install(&src, InstallOptions::copy()).unwrap_err();
    assert!(err.is_install(), "{err}");
    assert!(err.to_string().contains("bin/escape"), "{err}");
    assert!(store.list().unwrap().is_empty());
    // Nothing half-copied stays behind.
    let leftovers: Vec<_> = fs::read_dir(tmp.path().join("state/plugins"))
        .unwrap()
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    // An absolute link out is refused too.
    fs::remove_file(src.join("bin/escape")).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", src.join("abs")).unwrap();
    let err = store.install(&src, InstallOptions::copy()).unwrap_err();
    assert!(err.to_string().contains("abs"), "{err}");
}

#[test]
fn reinstalling_needs_replace_and_replacing_swaps_the_copy() {
    let tmp = tempfile::tempdir().unwrap();
    let store = PluginStore::new(tmp.path().join("state"));
    store
        .install(
            &package(tmp.path(), "acme", "1.0.0"),
            InstallOptions::copy(),
        )
        .unwrap();
    let v2 = package(tmp.path(), "acme", "2.0.0");
    let err = store.install(&v2, InstallOptions::copy()).unwrap_err();
    assert!(err.is_install() && err.to_string().contains("already installed"));
    store.set_enabled("acme", false).unwrap();
    let installed = store
        .install(&v2, InstallOptions::copy().replacing())
        .unwrap();
    assert_eq!(installed.version, "2.0.0");
    assert!(installed.enabled, "a reinstall is a fresh consent");
    let text = fs::read_to_string(installed.root.join(MANIFEST)).unwrap();
    assert!(text.contains("2.0.0"));
    assert_eq!(store.list().unwrap().len(), 1);
}

#[test]
fn link_records_in_place_and_remove_leaves_the_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let src = package(tmp.path(), "dev", "0.1.0");
    let store = PluginStore::new(tmp.path().join("state"));
    let installed = store.install(&src, InstallOptions::link()).unwrap();
    assert!(installed.linked);
    assert_eq!(installed.root, fs::canonicalize(&src).unwrap());
    store.remove("dev").unwrap();
    assert!(src.join(MANIFEST).exists());
    assert!(store.get("dev").unwrap().is_none());
    assert!(store.remove("dev").unwrap_err().is_not_installed());
    assert!(
        store
            .set_enabled("dev", true)
            .unwrap_err()
            .is_not_installed()
    );
}

#[test]
fn remove_deletes_a_copy_and_enable_disable_persist() {
    let tmp = tempfile::tempdir().unwrap();
    let store = PluginStore::new(tmp.path().join("state"));
    let installed = store
        .install(
            &package(tmp.path(), "acme", "1.0.0"),
            InstallOptions::copy(),
        )
        .unwrap();
    store.set_enabled("acme", false).unwrap();
    let again = PluginStore::new(tmp.path().join("state"));
    assert!(!again.get("acme").unwrap().unwrap().enabled);
    again.set_enabled("acme", true).unwrap();
    assert!(store.get("acme").unwrap().unwrap().enabled);
    store.remove("acme").unwrap();
    assert!(!installed.root.exists());
}

#[test]
fn a_corrupt_store_is_an_error_naming_the_file_and_is_left_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    fs::create_dir_all(&state).unwrap();
    let record = state.join("plugins.json");
    for text in [
        "{not json",
        r#"{"format":1,"plugins":[],"extra":1}"#,
        r#"{"format":2,"plugins":[]}"#,
        r#"{"format":1,"plugins":[{"id":"a","root":"/x","version":"1","linked":false,"enabled":true},{"id":"a","root":"/y","version":"1","linked":false,"enabled":true}]}"#,
        r#"{"format":1,"plugins":[{"id":"a","root":"rel","version":"1","linked":false,"enabled":true}]}"#,
    ] {
        fs::write(&record, text).unwrap();
        let store = PluginStore::new(&state);
        let err = store.list().unwrap_err();
        assert!(err.is_store_corrupt(), "{text}: {err}");
        assert!(err.to_string().contains("plugins.json"), "{err}");
        let err = store
            .install(
                &package(tmp.path(), "acme", "1.0.0"),
                InstallOptions::copy(),
            )
            .unwrap_err();
        assert!(err.is_store_corrupt());
        assert_eq!(fs::read_to_string(&record).unwrap(), text, "never reset");
    }
}

#[test]
fn a_manifest_with_an_unknown_member_is_refused_naming_its_path() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("pkg");
    fs::create_dir_all(&src).unwrap();
    fs::write(
        src.join(MANIFEST),
        r#"{"apiVersion":"reasonix.io/plugin/v1","name":"x","version":"1",
            "runtime":{"command":"/bin/true","bogus":1}}"#,
    )
    .unwrap();
    let store = PluginStore::new(tmp.path().join("state"));
    let err = store.install(&src, InstallOptions::copy()).unwrap_err();
    assert!(err.is_manifest(), "{err}");
    let text = err.to_string();
    assert!(
        text.contains("runtime.bogus") && text.contains(MANIFEST),
        "{text}"
    );
}

#[test]
fn the_trust_summary_lists_what_is_trusted() {
    let tmp = tempfile::tempdir().unwrap();
    let src = package(tmp.path(), "acme", "1.0.0");
    let summary = Package::open(&src).unwrap().trust_summary().to_string();
    for needle in [
        "FULL TRUST",
        "acme",
        "${REASONIX_PLUGIN_ROOT}/bin/run",
        "\"--x\"",
        "tool.before",
        "slots:        (none)",
        "interceptors",
        "required:     yes",
    ] {
        assert!(
            summary.contains(needle),
            "{needle} missing from:\n{summary}"
        );
    }
}

#[test]
fn concurrent_writers_serialize_on_the_lock() {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let sources: Vec<PathBuf> = (0..6)
        .map(|i| package(tmp.path(), &format!("p{i}"), "1.0.0"))
        .collect();
    std::thread::scope(|s| {
        for src in &sources {
            let state = state.clone();
            s.spawn(move || {
                PluginStore::new(state)
                    .install(src, InstallOptions::copy())
                    .unwrap()
            });
        }
    });
    assert_eq!(PluginStore::new(&state).list().unwrap().len(), 6);
}

/// Makes `path` immutable (read-only even for root) for the life of the guard.
struct Immutable(PathBuf);

impl Immutable {
    fn new(path: &Path) -> Option<Self> {
        let ok = std::process::Command::new("chattr")
            .arg("+i")
            .arg(path)
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| Immutable(path.to_path_buf()))
    }
}

impl Drop for Immutable {
    fn drop(&mut self) {
        let _ = std::process::Command::new("chattr")
            .arg("-i")
            .arg(&self.0)
            .status();
    }
}

#[test]
fn reads_create_nothing_and_work_in_a_read_only_state_directory() {
    let tmp = tempfile::tempdir().unwrap();
    // A state directory that does not exist lists as empty and is not created.
    let missing = PluginStore::new(tmp.path().join("nowhere"));
    assert!(missing.list().unwrap().is_empty());
    assert!(missing.get("acme").unwrap().is_none());
    assert!(!tmp.path().join("nowhere").exists());

    // A record written by hand (as a backup restore would), with no lock file, in a directory
    // nobody may write to.
    let state = tmp.path().join("state");
    let store = PluginStore::new(&state);
    store
        .install(
            &package(tmp.path(), "acme", "1.0.0"),
            InstallOptions::link(),
        )
        .unwrap();
    fs::remove_file(state.join(LOCK_FILE)).unwrap();
    let before: Vec<_> = fs::read_dir(&state)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    let mut perms = fs::metadata(&state).unwrap().permissions();
    perms.set_mode(0o555);
    fs::set_permissions(&state, perms.clone()).unwrap();
    let guard = Immutable::new(&state);
    if guard.is_none() {
        let _ = std::io::Write::write_all(
            &mut std::io::stdout(),
            b"SKIPPED: immutable state directory (no chattr); checked with mode 0555 only\n",
        );
    }
    let listed = store.list().unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].id, "acme");
    drop(guard);
    perms.set_mode(0o755);
    fs::set_permissions(&state, perms).unwrap();
    let after: Vec<_> = fs::read_dir(&state)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(before, after, "a read created files");
}

#[test]
fn the_next_write_collects_what_interrupted_installs_left() {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let store = PluginStore::new(&state);
    let packages = state.join(PACKAGES_DIR);
    // What a killed install leaves: a half-made copy and a half-removed old one.
    for stale in [
        ".staging-acme-0123456789abcdef",
        ".retired-acme-fedcba9876543210",
    ] {
        fs::create_dir_all(packages.join(stale).join("bin")).unwrap();
        fs::write(packages.join(stale).join("bin/big"), vec![0u8; 4096]).unwrap();
    }
    // Reads leave them alone (they take no exclusive lock).
    store.list().unwrap();
    assert_eq!(fs::read_dir(&packages).unwrap().count(), 2);
    store
        .install(
            &package(tmp.path(), "other", "1.0.0"),
            InstallOptions::copy(),
        )
        .unwrap();
    let left: Vec<String> = fs::read_dir(&packages)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, ["other"]);
}

#[test]
fn a_copy_failure_names_the_path_that_failed() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src.txt");
    fs::write(&src, "data").unwrap();
    let meta = fs::metadata(&src).unwrap();
    // The destination cannot be created: the destination is named.
    let dst = tmp.path().join("no/such/dir/dst.txt");
    match copy::copy_file(&src, &dst, &meta).unwrap_err() {
        Error::Io { path, .. } => assert_eq!(path, dst),
        other => panic!("{other:?}"),
    }
    // The source cannot be read: the source is named.
    let unreadable = Path::new("/proc/self/mem");
    let dst = tmp.path().join("dst.txt");
    match copy::copy_file(unreadable, &dst, &meta).unwrap_err() {
        Error::Io { path, .. } => assert_eq!(path, unreadable),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_record_that_is_a_fifo_or_a_link_is_refused_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    fs::create_dir_all(&state).unwrap();
    let store = PluginStore::new(&state);
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        store.record_path(),
        rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
    )
    .unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let listing = PluginStore::new(&state);
    std::thread::spawn(move || {
        let _ = tx.send(listing.list().map(|plugins| plugins.len()));
    });
    let err = rx
        .recv_timeout(std::time::Duration::from_secs(30))
        .expect("listing returns instead of blocking")
        .unwrap_err();
    assert!(err.file().is_some_and(|f| f.is_not_regular()), "{err}");
    fs::remove_file(store.record_path()).unwrap();
    std::os::unix::fs::symlink("/dev/zero", store.record_path()).unwrap();
    let err = store.list().unwrap_err();
    assert!(err.file().is_some_and(|f| f.is_symlink()), "{err}");
}
