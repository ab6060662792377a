//! Issue 40 §1 and §2: files a package, a config or the state directory holds are read bounded
//! and without blocking (a FIFO, a link to `/dev/zero`), and an ending signal ends a command
//! even while it is stuck in a blocking read.

use super::*;

/// Makes a FIFO at `path` (nobody ever writes to it).
fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs");
    assert!(status.success(), "mkfifo {}", path.display());
}

/// [`run_with_input`] under a 2 GiB address-space limit, so a read that grows without bound
/// fails the test (the process aborts) instead of taking the machine's memory.
fn run_capped(home: &Path, args: &[&str], input: &str) -> Output {
    let mut script = vec!["-c", "ulimit -v 2097152 && exec \"$0\" \"$@\"", EXE];
    script.extend_from_slice(args);
    let mut child = Command::new("bash")
        .args(&script)
        .env("SIDEWIRE_HOME", home)
        .env("NO_COLOR", "1")
        .env_remove("RUST_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("bash starts");
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().expect("stdin is piped");
        let _ = stdin.write_all(input.as_bytes());
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if child.try_wait().expect("wait works").is_some() {
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("sidewire {args:?} did not finish within 60 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("output")
}

/// Asserts a plain failure (exit 1, not an abort or a signal) whose message names `path`.
fn assert_refused_naming(out: &Output, path: &Path) {
    assert_eq!(out.status.code(), Some(1), "{}", stderr(out));
    let text = stderr(out);
    assert!(
        text.contains(&*path.to_string_lossy()),
        "the error names {}: {text}",
        path.display()
    );
}

#[test]
fn plugin_install_refuses_a_manifest_linked_to_dev_zero_or_a_fifo_at_once() {
    let home = home();
    let zero = home.path().join("zero");
    std::fs::create_dir_all(&zero).unwrap();
    std::os::unix::fs::symlink("/dev/zero", zero.join("reasonix-plugin.json")).unwrap();
    let fifo = home.path().join("fifo");
    std::fs::create_dir_all(&fifo).unwrap();
    mkfifo(&fifo.join("reasonix-plugin.json"));
    // The rule is named too: under the address-space limit, reading `/dev/zero` whole would
    // also end in an error naming the file ("out of memory").
    for (package, rule) in [(&zero, "symbolic link"), (&fifo, "FIFO")] {
        // `echo n | sidewire plugin install DIR`: refused before anyone is asked.
        let out = run_capped(
            home.path(),
            &["plugin", "install", package.to_str().unwrap()],
            "n\n",
        );
        assert_refused_naming(&out, &package.join("reasonix-plugin.json"));
        assert!(stderr(&out).contains(rule), "{}", stderr(&out));
        assert!(!stderr(&out).contains("FULL TRUST"), "{}", stderr(&out));
    }
}

#[test]
fn a_fifo_as_the_config_an_env_file_or_a_token_record_fails_at_once() {
    let home = home();
    // The config file itself.
    let config = home.path().join("fifo.json");
    mkfifo(&config);
    let out = run_capped(
        home.path(),
        &["mcp", "--config", config.to_str().unwrap(), "tools"],
        "",
    );
    assert_refused_naming(&out, &config);
    // A server's `envFile`.
    let env_file = home.path().join("fifo.env");
    mkfifo(&env_file);
    let config = home.path().join("mcp.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"demo": {"command": EXE, "args": ["__mcp-server"], "envFile": env_file}}})
            .to_string(),
    )
    .unwrap();
    let out = run_capped(
        home.path(),
        &["mcp", "--config", config.to_str().unwrap(), "tools"],
        "",
    );
    assert_refused_naming(&out, &env_file);
    // A token record in the state directory.
    use sidewire_mcp::auth::{FileStore, StoreKey};
    let store = home.path().join("mcp").join("oauth");
    std::fs::create_dir_all(&store).unwrap();
    let record = FileStore::new(&store).path_of(&StoreKey::new("github", "https://x/mcp"));
    mkfifo(&record);
    let out = run_capped(home.path(), &["mcp", "auth", "status"], "");
    assert_refused_naming(&out, &record);
}

#[test]
fn sigint_ends_a_command_blocked_reading_stdin() {
    // `ext intercept POINT -` reads its payload from stdin, synchronously: with stdin an open
    // pipe nobody writes to, the command's thread blocks in that read. Ctrl-C still ends it.
    let home = home();
    let mut child = Command::new(EXE)
        .args(["ext", "intercept", "input.receive", "-"])
        .env("SIDEWIRE_HOME", home.path())
        .env_remove("RUST_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdin = child.stdin.take();
    // Polled, bounded: the signal handlers are installed (else SIGINT would kill it outright)
    // and a thread waits in the pipe read (its wait channel; where the kernel does not show
    // it, the handlers alone).
    let deadline = Instant::now() + Duration::from_secs(30);
    while !blocked_with_handlers(child.id()) {
        assert!(
            Instant::now() < deadline,
            "sidewire never blocked reading stdin"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    send("INT", child.id());
    let code = exit_code(&mut child, "SIGINT");
    drop(stdin);
    let mut errors = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut errors).unwrap();
    assert_eq!(code, Some(130), "{errors}");
    assert!(errors.contains("interrupted (SIGINT)"), "{errors}");
}

/// Whether `pid` catches SIGINT and one of its threads waits in a pipe read (or the kernel
/// shows no wait channels).
fn blocked_with_handlers(pid: u32) -> bool {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let caught = status
        .lines()
        .find_map(|line| line.strip_prefix("SigCgt:"))
        .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
        .is_some_and(|mask| mask & (1 << (2 - 1)) != 0);
    let wchans: Vec<String> = std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|task| std::fs::read_to_string(task.path().join("wchan")).unwrap_or_default())
        .collect();
    let shown = wchans
        .iter()
        .any(|w| !w.trim().is_empty() && w.trim() != "0");
    caught && (!shown || wchans.iter().any(|w| w.contains("pipe_read")))
}
