//! Stdio spawn + handshake latency end to end: `sidewire mcp tools --stdio -- <built-in
//! server>` as a user runs it, once with the server's program on `PATH` (no shell may run) and
//! once with the login-shell `PATH` probe forced (the program is found only on the login
//! shell's `PATH`), measured in the same run.
//!
//! It runs the release `sidewire` binary: `$SIDEWIRE_BIN`, else `<target>/release/sidewire`
//! (build it first with `cargo build --release -p sidewire`); without one it prints
//! `SKIPPED:` and measures nothing. The forced probe uses `/bin/bash` as the login shell with a
//! `HOME` whose only profile adds the program's directory to `PATH`: the cheapest login shell
//! there is. A real user's profile (nvm, conda, Homebrew) costs far more, so this row is a
//! lower bound of what the probe costs.

// criterion_group! generates an undocumented public function.
#![allow(missing_docs)]

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};

/// The program name the server is started as; found only where the bench puts it.
const SERVER: &str = "sidewire-bench-server";

fn locate() -> Option<PathBuf> {
    if let Some(bin) = std::env::var_os("SIDEWIRE_BIN") {
        return Some(PathBuf::from(bin));
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"));
    let bin = target.join("release/sidewire");
    bin.is_file().then_some(bin)
}

/// One `mcp tools` run; panics unless it succeeded.
fn tools(bin: &Path, path: &str, home: &Path, shell: Option<&Path>) {
    let mut command = Command::new(bin);
    command
        .args(["mcp", "tools", "--stdio", "--", SERVER, "__mcp-server"])
        .env("PATH", path)
        .env("HOME", home)
        .env("SIDEWIRE_HOME", home.join("state"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    match shell {
        Some(shell) => command.env("SHELL", shell),
        None => command.env_remove("SHELL"),
    };
    let out = command.output().expect("sidewire runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn spawn(c: &mut Criterion) {
    let Some(bin) = locate() else {
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED: no release sidewire binary (cargo build --release -p sidewire, or set SIDEWIRE_BIN)"
        );
        return;
    };
    let bash = Path::new("/bin/bash");
    let tmp = tempfile::tempdir().expect("a temp dir");
    let bin_dir = tmp.path().join("bin");
    std::fs::create_dir_all(&bin_dir).unwrap();
    std::os::unix::fs::symlink(&bin, bin_dir.join(SERVER)).unwrap();
    // The login shell's profile is the only place that knows the server's directory.
    std::fs::write(
        tmp.path().join(".bash_profile"),
        format!("export PATH=\"{}:$PATH\"\n", bin_dir.display()),
    )
    .unwrap();
    let base = "/usr/local/bin:/usr/bin:/bin";
    let on_path = format!("{}:{base}", bin_dir.display());

    let mut group = c.benchmark_group("stdio_spawn_handshake");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(10));
    group.bench_function("on_path_no_shell", |b| {
        b.iter(|| tools(&bin, &on_path, tmp.path(), Some(bash)));
    });
    if bash.is_file() {
        group.bench_function("login_shell_probe_forced", |b| {
            b.iter(|| tools(&bin, base, tmp.path(), Some(bash)));
        });
    }
    group.finish();
}

criterion_group!(benches, spawn);
criterion_main!(benches);
