//! Issue 18 §5: the README's commands work when pasted. Every fenced block tagged
//! ```` ```sh runnable ```` is run as written, each as one `bash -e` script from the
//! repository's root, with the built `sidewire` first on `PATH`, in a fresh `SIDEWIRE_HOME`
//! shared by the blocks in order, each within 60 s. `TMPDIR` is a directory of the test's own,
//! removed with it: a block's `mktemp -d` (the starter's plugin directory, with its 40 MB debug
//! binary) would otherwise stay in `/tmp` after every run.
//!
//! `cargo` lines are not run (a build inside the test would take minutes and contend for the
//! target directory): `cargo build -p P --example NAME` needs `target/debug/examples/NAME`
//! built already (`cargo test --workspace` builds the examples) or the block prints
//! `SKIPPED:`; any other `cargo` line is a no-op (`cargo install` is the `sidewire` on
//! `PATH`).

use super::*;

/// The repository's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the repository root")
}

/// The runnable blocks of `markdown`, each with the line of its opening fence.
fn runnable_blocks(markdown: &str) -> Vec<(usize, String)> {
    let mut blocks = Vec::new();
    let mut current: Option<(usize, String)> = None;
    for (number, line) in markdown.lines().enumerate() {
        match &mut current {
            None => {
                let info: Vec<&str> = line
                    .strip_prefix("```")
                    .map(|i| i.split_whitespace().collect())
                    .unwrap_or_default();
                if info.first() == Some(&"sh") && info.contains(&"runnable") {
                    current = Some((number + 1, String::new()));
                }
            }
            Some(_) if line.starts_with("```") => {
                blocks.extend(current.take());
            }
            Some((_, body)) => {
                body.push_str(line);
                body.push('\n');
            }
        }
    }
    assert!(current.is_none(), "an unclosed runnable block");
    blocks
}

/// The script the test runs for a block, or why it cannot run here.
fn script(root: &Path, block: &str) -> Result<String, String> {
    let mut script = String::new();
    for line in block.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.first() == Some(&"cargo") {
            if let Some(at) = words.iter().position(|w| *w == "--example") {
                let name = words.get(at + 1).ok_or("--example without a name")?;
                let built = root.join("target/debug/examples").join(name);
                if !built.exists() {
                    return Err(format!("{} is not built", built.display()));
                }
            }
            script.push_str(": ");
            script.push_str(&line.replace(['\'', '"', '$', '`', '\\', ';', '&', '|'], " "));
            script.push('\n');
        } else {
            script.push_str(line);
            script.push('\n');
        }
    }
    Ok(script)
}

#[test]
fn the_readmes_runnable_blocks_run_as_written() {
    let root = root();
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let blocks = runnable_blocks(&readme);
    assert!(blocks.len() >= 3, "the README marks its runnable blocks");
    let tmp = home();
    let home = home();
    let mut ran_mktemp = false;
    let bin = Path::new(EXE).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for (line, block) in blocks {
        let script = match script(&root, &block) {
            Ok(script) => script,
            Err(why) => {
                let _ = std::io::Write::write_all(
                    &mut std::io::stderr(),
                    format!("SKIPPED: README block at line {line}: {why}\n").as_bytes(),
                );
                continue;
            }
        };
        ran_mktemp |= script.contains("mktemp");
        let mut child = Command::new("bash")
            .args(["-e", "-c", &script])
            .current_dir(&root)
            .env("PATH", &path)
            .env("SIDEWIRE_HOME", home.path())
            .env("TMPDIR", tmp.path())
            .env("NO_COLOR", "1")
            .env_remove("RUST_LOG")
            .env_remove("SIDEWIRE_MCP_PEERS")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("bash starts");
        let deadline = Instant::now() + Duration::from_secs(60);
        let status = loop {
            if let Some(status) = child.try_wait().expect("wait works") {
                break status;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!("README block at line {line} did not finish within 60 s:\n{block}");
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let out = child.wait_with_output().expect("output");
        assert!(
            status.success(),
            "README block at line {line} failed ({status}):\n{block}\nstdout:\n{}\nstderr:\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    if ran_mktemp {
        let made = std::fs::read_dir(tmp.path())
            .expect("the test's TMPDIR")
            .count();
        assert!(
            made > 0,
            "the blocks' mktemp made its files in the test's TMPDIR"
        );
    }
}

#[test]
fn blocks_are_found_and_cargo_lines_are_not_run() {
    let markdown = "text\n```sh runnable\necho one\ncargo install --path crates/cli\n```\n```sh\nnot runnable\n```\n";
    let blocks = runnable_blocks(markdown);
    assert_eq!(blocks.len(), 1);
    assert_eq!(blocks[0].0, 2, "the line of the opening fence");
    let script = script(Path::new("/nonexistent"), &blocks[0].1).unwrap();
    assert_eq!(script, "echo one\n: cargo install --path crates/cli\n");
    let err = script_err("cargo build -p x --example nowhere-built\n");
    assert!(err.contains("is not built"), "{err}");
}

fn script_err(block: &str) -> String {
    script(Path::new("/nonexistent"), block).expect_err("not built")
}
