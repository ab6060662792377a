//! Unit tests of the bounded, non-blocking file read: each rule refuses what it names, at once,
//! and a good file reads whole.

use std::os::unix::fs::symlink;
use std::sync::mpsc;
use std::time::Duration;

use super::*;

/// Runs `read` on another thread and waits for it, so that a read that blocks fails the test
/// instead of hanging it (the bound is far above the microseconds a refusal takes).
fn read_on_a_thread(
    path: &Path,
    cap: usize,
    symlinks: Symlinks<'static>,
) -> Result<Vec<u8>, FileError> {
    let (tx, rx) = mpsc::channel();
    let path = path.to_path_buf();
    std::thread::spawn(move || {
        let _ = tx.send(read(&path, cap, symlinks));
    });
    rx.recv_timeout(Duration::from_secs(30))
        .expect("the read returns instead of blocking")
}

fn fifo(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(name);
    rustix::fs::mkfifoat(rustix::fs::CWD, &path, Mode::RUSR | Mode::WUSR).expect("mkfifo");
    path
}

/// `Symlinks::Inside` borrows its root for the whole test thread's life.
fn leak(path: &Path) -> &'static Path {
    Box::leak(path.to_path_buf().into_boxed_path())
}

#[test]
fn a_fifo_without_a_writer_is_refused_at_once_under_every_policy() {
    let tmp = tempfile::tempdir().unwrap();
    let path = fifo(tmp.path(), "pipe");
    let root = leak(tmp.path());
    for symlinks in [Symlinks::Follow, Symlinks::Refuse, Symlinks::Inside(root)] {
        let err = read_on_a_thread(&path, 1024, symlinks).unwrap_err();
        assert!(err.is_not_regular(), "{symlinks:?}: {err}");
        assert_eq!(err.path(), path);
        assert!(err.to_string().contains("pipe"), "{err}");
    }
    // A link to it is refused as a FIFO when followed, before anything opens it.
    let link = tmp.path().join("link");
    symlink(&path, &link).unwrap();
    let err = read_on_a_thread(&link, 1024, Symlinks::Follow).unwrap_err();
    assert!(err.is_not_regular(), "{err}");
    let err = read_on_a_thread(&link, 1024, Symlinks::Inside(root)).unwrap_err();
    assert!(err.is_not_regular(), "{err}");
}

#[test]
fn a_symlink_to_dev_zero_is_refused_by_each_policy_for_its_own_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let link = tmp.path().join("manifest.json");
    symlink("/dev/zero", &link).unwrap();
    let refused = read_on_a_thread(&link, 1024, Symlinks::Refuse).unwrap_err();
    assert!(refused.is_symlink(), "{refused}");
    let outside = read_on_a_thread(&link, 1024, Symlinks::Inside(leak(tmp.path()))).unwrap_err();
    assert!(outside.is_symlink(), "{outside}");
    assert!(outside.to_string().contains("outside"), "{outside}");
    // Followed, it is a character device: refused, nothing read.
    let followed = read_on_a_thread(&link, 1024, Symlinks::Follow).unwrap_err();
    assert!(followed.is_not_regular(), "{followed}");
    assert!(
        followed.to_string().contains("character device"),
        "{followed}"
    );
    // The device named directly is refused too.
    let direct = read_on_a_thread(Path::new("/dev/zero"), 1024, Symlinks::Follow).unwrap_err();
    assert!(direct.is_not_regular(), "{direct}");
}

#[test]
fn a_symlink_inside_the_root_is_followed_and_one_out_of_it_is_not() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("package");
    fs::create_dir_all(root.join("real")).unwrap();
    fs::write(root.join("real/manifest.json"), "{}").unwrap();
    fs::write(tmp.path().join("secret"), "s3cret").unwrap();
    let inner = root.join("inner.json");
    symlink("real/manifest.json", &inner).unwrap();
    let root_ref = leak(&root);
    assert_eq!(
        read_on_a_thread(&inner, 1024, Symlinks::Inside(root_ref)).unwrap(),
        b"{}"
    );
    // `..` out of the package, and a chain of links that ends outside, are both refused.
    let out = root.join("out.json");
    symlink("../secret", &out).unwrap();
    let chained = root.join("chained.json");
    symlink("out.json", &chained).unwrap();
    for link in [&out, &chained] {
        let err = read_on_a_thread(link, 1024, Symlinks::Inside(root_ref)).unwrap_err();
        assert!(err.is_symlink(), "{err}");
        assert!(!err.to_string().contains("s3cret"), "{err}");
    }
    // Refuse refuses even the link inside; Follow follows even the one outside.
    assert!(
        read_on_a_thread(&inner, 1024, Symlinks::Refuse)
            .unwrap_err()
            .is_symlink()
    );
    assert_eq!(
        read_on_a_thread(&out, 1024, Symlinks::Follow).unwrap(),
        b"s3cret"
    );
    // A dangling link is a missing file.
    let dangling = root.join("dangling.json");
    symlink("nowhere.json", &dangling).unwrap();
    let err = read_on_a_thread(&dangling, 1024, Symlinks::Inside(root_ref)).unwrap_err();
    assert!(err.is_not_found(), "{err}");
}

#[test]
fn a_file_over_the_cap_is_refused_and_one_at_the_cap_reads() {
    let tmp = tempfile::tempdir().unwrap();
    let at = tmp.path().join("at");
    fs::write(&at, vec![b'a'; 100]).unwrap();
    assert_eq!(
        read_on_a_thread(&at, 100, Symlinks::Refuse).unwrap().len(),
        100
    );
    let over = read_on_a_thread(&at, 99, Symlinks::Refuse).unwrap_err();
    assert!(over.is_too_large(), "{over}");
    assert!(over.to_string().contains("99"), "{over}");
    // A huge sparse file is refused by its length, without reading it.
    let huge = tmp.path().join("huge");
    File::create(&huge)
        .unwrap()
        .set_len(1024 * 1024 * 1024)
        .unwrap();
    assert!(
        read_on_a_thread(&huge, 1024, Symlinks::Refuse)
            .unwrap_err()
            .is_too_large()
    );
}

#[test]
fn a_file_that_says_it_is_empty_is_still_read_within_the_cap() {
    // `/proc` files say their length is 0 and are not: the read goes by what it gets.
    let stat = read_on_a_thread(Path::new("/proc/self/stat"), 64 * 1024, Symlinks::Follow)
        .expect("/proc/self/stat reads");
    assert!(!stat.is_empty());
    let cut = read_on_a_thread(Path::new("/proc/self/stat"), 4, Symlinks::Follow).unwrap_err();
    assert!(cut.is_too_large(), "{cut}");
}

#[test]
fn a_directory_a_missing_file_and_bad_utf8_are_refused_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = read_on_a_thread(tmp.path(), 1024, Symlinks::Follow).unwrap_err();
    assert!(dir.is_not_regular(), "{dir}");
    assert!(dir.to_string().contains("directory"), "{dir}");
    let missing = read_on_a_thread(&tmp.path().join("nope"), 1024, Symlinks::Refuse).unwrap_err();
    assert!(missing.is_not_found() && missing.is_io(), "{missing}");
    assert_eq!(
        io::Error::from(missing).kind(),
        io::ErrorKind::NotFound,
        "the I/O error's kind is kept"
    );
    let latin1 = tmp.path().join("latin1");
    fs::write(&latin1, b"caf\xe9").unwrap();
    let err = read_to_string(&latin1, 1024, Symlinks::Refuse).unwrap_err();
    assert!(err.is_not_utf8(), "{err}");
    assert_eq!(io::Error::from(err).kind(), io::ErrorKind::InvalidData);
}

#[test]
fn a_good_file_reads_whole_under_every_policy() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("config.json");
    fs::write(&path, "{\"mcpServers\": {}}").unwrap();
    for symlinks in [
        Symlinks::Follow,
        Symlinks::Refuse,
        Symlinks::Inside(leak(tmp.path())),
    ] {
        assert_eq!(
            read_to_string(&path, 1024, symlinks).unwrap(),
            "{\"mcpServers\": {}}"
        );
    }
}
