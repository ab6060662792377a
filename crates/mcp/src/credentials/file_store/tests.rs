//! The file store: round trips, modes, atomic replacement, corrupt files, sharing a directory,
//! the lock (in this process and from a child), the bounds, and secrets kept out of `Debug`.

use std::io::{BufRead as _, BufReader, Read as _};
use std::os::unix::fs::PermissionsExt as _;
use std::process::{Command, Stdio};

use super::*;
use crate::auth::{
    Authorizer, ClientRegistration, OAuthSettings, RegistrationSource, Secret, Tokens,
};

const ACCESS: &str = "access-token-3f9c2a";
const REFRESH: &str = "refresh-token-77d1e0";
const CLIENT_SECRET: &str = "client-secret-b4a8c6";
const PRIVATE_KEY: &str = "-----BEGIN PRIVATE KEY-----kq93";

fn key() -> StoreKey {
    StoreKey::new("github", "https://api.example.com/mcp")
}

fn record(key: &StoreKey) -> StoredAuth {
    let mut record = StoredAuth::new(key);
    record.client = Some(ClientRegistration {
        issuer: "https://auth.example.com".into(),
        client_id: "client-1".into(),
        client_secret: Some(Secret::new(CLIENT_SECRET)),
        token_endpoint_auth_method: "client_secret_basic".into(),
        token_endpoint: Some("https://auth.example.com/token".into()),
        source: RegistrationSource::Dynamic,
        expires_at: None,
        redirect_uri: Some("http://127.0.0.1:8976/callback".into()),
    });
    record.tokens = Some(Tokens {
        access_token: Secret::new(ACCESS),
        token_type: "Bearer".into(),
        refresh_token: Some(Secret::new(REFRESH)),
        expires_at: Some(1_900_000_000),
        issued_at: Some(1_899_996_400),
        scope: Some("read write".into()),
        resource: key.resource.clone(),
    });
    record
}

fn mode(path: &Path) -> u32 {
    fs::metadata(path).expect("metadata").permissions().mode() & 0o777
}

/// A store in a directory that does not exist yet, under a temporary one.
fn store() -> (tempfile::TempDir, FileStore) {
    let temp = tempfile::tempdir().expect("a temporary directory");
    let store = FileStore::new(temp.path().join("mcp").join("oauth"));
    (temp, store)
}

#[test]
fn a_saved_record_loads_back_and_lists() {
    let (_temp, store) = store();
    let key = key();
    assert_eq!(store.load(&key).expect("load"), None);
    assert_eq!(store.list().expect("list of a missing directory"), []);
    let saved = record(&key);
    store.save(&key, &saved).expect("save");
    assert_eq!(store.load(&key).expect("load"), Some(saved.clone()));
    assert_eq!(store.list().expect("list"), [saved]);
    assert!(store.remove(&key).expect("remove"));
    assert!(!store.remove(&key).expect("second remove"));
    assert_eq!(store.load(&key).expect("load"), None);
}

#[test]
fn the_directory_is_0700_and_the_files_0600() {
    let (_temp, store) = store();
    let key = key();
    store.save(&key, &record(&key)).expect("save");
    assert_eq!(mode(store.dir()), 0o700);
    assert_eq!(mode(&store.path_of(&key)), 0o600);
    let _guard = store.try_lock(&key).expect("lock").expect("free");
    let mut lock = store.path_of(&key).into_os_string();
    lock.push(".lock");
    assert_eq!(mode(Path::new(&lock)), 0o600);
    // A replaced record is a new file: still 0600.
    store
        .save(&key, &StoredAuth::new(&key))
        .expect("save again");
    assert_eq!(mode(&store.path_of(&key)), 0o600);
}

#[test]
fn a_save_replaces_the_file_whole_and_leaves_no_temporary_file() {
    let (_temp, store) = store();
    let key = key();
    store.save(&key, &record(&key)).expect("save");
    let path = store.path_of(&key);
    // A reader holding the old file keeps reading the old record: the new one is another file
    // renamed over it, not a rewrite in place.
    let mut old = File::open(&path).expect("open");
    let empty = StoredAuth::new(&key);
    store.save(&key, &empty).expect("replace");
    let mut text = String::new();
    old.read_to_string(&mut text).expect("read the old file");
    let old_record: StoredAuth = serde_json::from_str(&text).expect("the old record whole");
    assert_eq!(old_record, record(&key));
    assert_eq!(store.load(&key).expect("load"), Some(empty));
    let names: Vec<String> = fs::read_dir(store.dir())
        .expect("read_dir")
        .map(|e| e.expect("entry").file_name().into_string().expect("utf-8"))
        .collect();
    assert_eq!(names, [file_name(&key)], "no temporary file is left");
}

#[test]
fn a_corrupt_record_is_an_error_naming_the_file_never_an_empty_store() {
    let (_temp, store) = store();
    let key = key();
    store.save(&key, &record(&key)).expect("save");
    let path = store.path_of(&key);
    let cases: [(&str, &[u8]); 5] = [
        ("truncated", b"{\"version\": 1, \"server\": \"git"),
        ("not JSON", b"\x00\x01garbage"),
        ("no version", b"{\"server\": \"github\", \"resource\": \"x\"}"),
        (
            "another version",
            b"{\"version\": 2, \"server\": \"github\", \"resource\": \"https://api.example.com/mcp\"}",
        ),
        ("a wrong shape", b"{\"version\": 1, \"server\": 7}"),
    ];
    for (what, bytes) in cases {
        fs::write(&path, bytes).expect("write");
        for err in [
            store.load(&key).expect_err(what),
            store.list().expect_err(what),
        ] {
            assert_eq!(err.kind(), io::ErrorKind::InvalidData, "{what}: {err}");
            assert!(
                err.to_string().contains(&path.display().to_string()),
                "{what}: {err}"
            );
        }
    }
}

#[test]
fn a_record_filed_under_another_key_is_refused() {
    let (_temp, store) = store();
    let key = key();
    let other = StoreKey::new("github", "https://other.example.com/mcp");
    store.save(&other, &record(&other)).expect("save");
    // Copied over the first key's file by hand.
    fs::copy(store.path_of(&other), store.path_of(&key)).expect("copy");
    let err = store.load(&key).expect_err("another key's record");
    assert_eq!(err.kind(), io::ErrorKind::InvalidData, "{err}");
    assert!(err.to_string().contains(&file_name(&key)), "{err}");
    assert_eq!(
        store.list().expect_err("list").kind(),
        io::ErrorKind::InvalidData
    );
    // And a record saved under a key it does not hold is refused before anything is written.
    let err = store
        .save(&key, &record(&other))
        .expect_err("mismatched save");
    assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
}

#[test]
fn an_unreadable_file_is_an_error_naming_it() {
    let (_temp, store) = store();
    let key = key();
    // A directory where the record should be: opening works, reading fails.
    fs::create_dir_all(store.path_of(&key)).expect("mkdir");
    let err = store.load(&key).expect_err("unreadable");
    assert!(
        err.to_string().contains(&file_name(&key)),
        "{}: {err}",
        err.kind()
    );
}

#[test]
fn a_record_over_the_size_cap_is_refused() {
    let (_temp, store) = store();
    let key = key();
    store.save(&key, &StoredAuth::new(&key)).expect("save");
    let path = store.path_of(&key);
    // Valid JSON padded with whitespace to one byte over the cap.
    let mut text = fs::read(&path).expect("read");
    let at_cap = usize::try_from(MAX_STORED_RECORD_BYTES).expect("fits");
    text.resize(at_cap, b' ');
    fs::write(&path, &text).expect("write");
    assert!(store.load(&key).expect("exactly at the cap").is_some());
    text.push(b' ');
    fs::write(&path, &text).expect("write");
    let err = store.load(&key).expect_err("over the cap");
    assert_eq!(err.kind(), io::ErrorKind::InvalidData);
}

#[test]
fn a_record_that_is_a_fifo_or_a_link_is_refused_at_once_naming_it() {
    let (_temp, store) = store();
    let key = key();
    store.create_dir().expect("mkdir");
    let path = store.path_of(&key);
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        &path,
        rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
    )
    .expect("mkfifo");
    // On another thread, so that a load that blocks fails the test instead of hanging it.
    let (tx, rx) = std::sync::mpsc::channel();
    let loading = store.clone();
    let loaded_key = key.clone();
    std::thread::spawn(move || {
        let _ = tx.send(loading.load(&loaded_key).map(|record| record.is_some()));
    });
    let err = rx
        .recv_timeout(std::time::Duration::from_secs(30))
        .expect("the load returns instead of blocking")
        .expect_err("a FIFO is not a record");
    assert_eq!(err.kind(), io::ErrorKind::InvalidData);
    assert!(err.to_string().contains(&*path.to_string_lossy()), "{err}");
    fs::remove_file(&path).expect("rm");
    std::os::unix::fs::symlink("/dev/zero", &path).expect("symlink");
    let err = store.load(&key).expect_err("a link is not a record");
    assert_eq!(err.kind(), io::ErrorKind::InvalidData);
}

#[test]
fn list_reads_at_most_the_record_cap_and_skips_lock_and_temporary_files() {
    let (_temp, store) = store();
    store.create_dir().expect("mkdir");
    // Lock and temporary files are not records (and these would not parse).
    fs::write(store.dir().join("a-0000000000000000.json.lock"), b"").expect("lock");
    fs::write(store.dir().join(".a-0000000000000000.json.1-0.tmp"), b"{").expect("tmp");
    assert_eq!(store.list().expect("list"), []);
    for i in 0..MAX_STORED_RECORDS {
        let key = StoreKey::new(format!("s{i}"), "https://example.com/mcp");
        fs::write(store.path_of(&key), b"").expect("write");
    }
    // At the cap the files are read (and these empty ones are corrupt).
    assert_eq!(
        store.list().expect_err("empty files").kind(),
        io::ErrorKind::InvalidData
    );
    let key = StoreKey::new("one-more", "https://example.com/mcp");
    fs::write(store.path_of(&key), b"").expect("write");
    let err = store.list().expect_err("over the cap");
    assert_eq!(err.kind(), io::ErrorKind::Other, "{err}");
    assert!(err.to_string().contains("more than 4096"), "{err}");
}

#[test]
fn any_server_name_is_a_safe_distinct_file_name() {
    let (_temp, store) = store();
    let names = [
        "../../etc/passwd",
        "a/b",
        "a_b",
        ".hidden",
        "",
        "x\u{0}y",
        "sp ace",
        "ü",
        &"long".repeat(100),
    ];
    let mut files = std::collections::BTreeSet::new();
    for name in names {
        let key = StoreKey::new(name, "https://example.com/mcp");
        let path = store.path_of(&key);
        assert_eq!(path.parent(), Some(store.dir()), "{name:?}");
        let file = file_name(&key);
        assert!(is_record_name(&file), "{file}");
        assert!(file.len() <= MAX_STORED_NAME_CHARS + 1 + 16 + 5, "{file}");
        assert!(
            file.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)),
            "{file}"
        );
        assert!(files.insert(file), "{name:?} collides");
        store.save(&key, &StoredAuth::new(&key)).expect("save");
        assert_eq!(store.load(&key).expect("load"), Some(StoredAuth::new(&key)));
    }
    // The same name at another resource is another file.
    let a = StoreKey::new("s", "https://a.example.com/mcp");
    let b = StoreKey::new("s", "https://b.example.com/mcp");
    assert_ne!(file_name(&a), file_name(&b));
    assert_eq!(store.list().expect("list").len(), names.len());
}

#[test]
fn two_stores_on_one_directory_see_each_others_writes() {
    let (_temp, first) = store();
    let second = FileStore::new(first.dir());
    let key = key();
    first.save(&key, &record(&key)).expect("save");
    assert_eq!(second.load(&key).expect("load"), Some(record(&key)));
    let empty = StoredAuth::new(&key);
    second.save(&key, &empty).expect("save");
    assert_eq!(first.load(&key).expect("load"), Some(empty.clone()));
    assert_eq!(first.list().expect("list"), [empty]);
    assert!(second.remove(&key).expect("remove"));
    assert_eq!(first.load(&key).expect("load"), None);
}

#[test]
fn the_lock_excludes_a_second_holder_until_dropped() {
    let (_temp, first) = store();
    let second = FileStore::new(first.dir());
    let key = key();
    let other = StoreKey::new("other", "https://api.example.com/mcp");
    let guard = first.try_lock(&key).expect("lock").expect("free");
    assert!(first.try_lock(&key).expect("lock").is_none(), "same store");
    assert!(
        second.try_lock(&key).expect("lock").is_none(),
        "other store"
    );
    // Another key is not locked.
    let other_guard = second
        .try_lock(&other)
        .expect("lock")
        .expect("other key free");
    // Reads and writes do not wait for the lock.
    second.save(&key, &record(&key)).expect("save while locked");
    drop(guard);
    let again = second
        .try_lock(&key)
        .expect("lock")
        .expect("free after drop");
    drop((again, other_guard));
}

/// The environment variable that makes [`lock_holder_child`] a lock holder.
const CHILD_DIR: &str = "SIDEWIRE_TEST_FILE_STORE_LOCK_DIR";
const CHILD_HOLDS: &str = "SIDEWIRE-LOCK-HELD";

/// Not a test on its own: run by
/// [`the_lock_excludes_another_process_until_it_exits`] as a child (this test binary, this
/// test only), it takes the lock, says so on stdout, and holds it until its stdin closes.
#[test]
fn lock_holder_child() {
    let Some(dir) = std::env::var_os(CHILD_DIR) else {
        return;
    };
    let store = FileStore::new(PathBuf::from(dir));
    let _guard = store.try_lock(&key()).expect("lock").expect("free");
    // Straight to the pipe (libtest's capture would keep it from the parent).
    let mut stdout = io::stdout();
    writeln!(stdout, "{CHILD_HOLDS}").expect("write");
    stdout.flush().expect("flush");
    let mut rest = Vec::new();
    let _ = io::stdin().read_to_end(&mut rest);
}

#[test]
fn the_lock_excludes_another_process_until_it_exits() {
    let (_temp, store) = store();
    let mut child = Command::new(std::env::current_exe().expect("the test binary"))
        .args([
            "--exact",
            "credentials::file_store::tests::lock_holder_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_DIR, store.dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn the test binary");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut held = false;
    for line in lines.by_ref() {
        if line.expect("read").contains(CHILD_HOLDS) {
            held = true;
            break;
        }
    }
    assert!(held, "the child took the lock");
    assert!(
        store.try_lock(&key()).expect("lock").is_none(),
        "held by the child"
    );
    drop(child.stdin.take());
    // The rest of its output read (a closed pipe would fail its last writes).
    let rest: Vec<String> = lines.map(|line| line.expect("read")).collect();
    assert!(child.wait().expect("wait").success(), "{rest:?}");
    assert!(
        store.try_lock(&key()).expect("lock").is_some(),
        "freed when the child exited"
    );
}

#[test]
fn no_secret_appears_in_the_debug_output_of_any_auth_type() {
    let (_temp, store) = store();
    let key = key();
    let record = record(&key);
    store.save(&key, &record).expect("save");
    let settings = OAuthSettings::new()
        .client_id("client-1")
        .client_secret(CLIENT_SECRET)
        .client_private_key(PRIVATE_KEY);
    let authorizer = Authorizer::new(store.clone());
    authorizer.remember_secret(ACCESS);
    let spec = crate::ServerSpec::http("github", "https://api.example.com/mcp")
        .oauth(settings.clone())
        .authorizer(authorizer.clone());
    let status = crate::auth::status(&authorizer).expect("status");
    let texts = [
        format!("{record:?}"),
        format!("{record:#?}"),
        format!("{:?}", record.tokens),
        format!("{:?}", record.client),
        format!("{settings:?}"),
        format!("{authorizer:?}"),
        format!("{store:?}"),
        format!("{status:?}"),
        format!("{spec:?}"),
        format!("{}", Secret::new(ACCESS)),
    ];
    for text in &texts {
        for secret in [ACCESS, REFRESH, CLIENT_SECRET, PRIVATE_KEY] {
            assert!(!text.contains(secret), "{secret} in {text}");
        }
    }
    assert!(texts[0].contains("[REDACTED]"), "{}", texts[0]);
    // The file itself holds them (it is the store), private to the user.
    let file = fs::read_to_string(store.path_of(&key)).expect("read");
    assert!(file.contains(ACCESS) && file.contains(REFRESH) && file.contains(CLIENT_SECRET));
}
