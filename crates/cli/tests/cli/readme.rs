//! Issue 18 §5: the README's commands work when pasted. Every fenced block tagged
//! ```` ```sh runnable ```` is run as written, each as one `bash -e` script from the
//! repository's root, with the built `sidewire` first on `PATH`, in a fresh `SIDEWIRE_HOME`
//! shared by the blocks in order, each within 60 s. `TMPDIR` is a directory of the test's own,
//! removed with it: a block's `mktemp -d` (the starter's plugin directory, with its 40 MB debug
//! binary) would otherwise stay in `/tmp` after every run.
//!
//! `cargo` lines are not run (a build inside the test would take minutes and contend for the
//! target directory): `cargo build -p P --example NAME` needs the example built already in the
//! target directory this test was built in (`examples/NAME` beside the `sidewire` under test,
//! wherever `CARGO_TARGET_DIR` put it; `cargo test --workspace` builds the examples) or the
//! block prints `SKIPPED:`; any other `cargo` line is a no-op (`cargo install` is the
//! `sidewire` on `PATH`). A command that only asks cargo (`cargo metadata` inside a line) runs,
//! with the cargo that built the test first on `PATH`: it is how a block finds the target
//! directory, which no block may spell as `target/debug`.

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

/// Where the examples of the build under test are: `examples/` beside the `sidewire` binary
/// (the profile's directory in the target directory, whatever it is).
fn built_examples() -> PathBuf {
    Path::new(EXE)
        .parent()
        .expect("the binary's directory")
        .join("examples")
}

/// The script the test runs for a block, or why it cannot run here; examples are looked for in
/// `examples`.
fn script(examples: &Path, block: &str) -> Result<String, String> {
    let mut script = String::new();
    for line in block.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.first() == Some(&"cargo") {
            if let Some(at) = words.iter().position(|w| *w == "--example") {
                let name = words.get(at + 1).ok_or("--example without a name")?;
                let built = examples.join(name);
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
        "{}:{}:{}",
        bin.display(),
        cargo_dir().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let examples = built_examples();
    for (line, block) in blocks {
        let script = match script(&examples, &block) {
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

/// The directory of the cargo that built this test.
fn cargo_dir() -> PathBuf {
    Path::new(env!("CARGO"))
        .parent()
        .expect("cargo's directory")
        .to_path_buf()
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

#[test]
fn an_example_is_looked_for_in_the_target_directory_under_test() {
    // Any directory: where `CARGO_TARGET_DIR` put the build, not `target/debug`.
    let elsewhere = home();
    let examples = elsewhere.path().join("debug/examples");
    std::fs::create_dir_all(&examples).unwrap();
    std::fs::write(examples.join("starter"), "").unwrap();
    let block = "cargo build -p sidewire-ext-sdk --example starter\ncp x y\n";
    let script = script(&examples, block).expect("the example is found where it was built");
    assert_eq!(
        script,
        ": cargo build -p sidewire-ext-sdk --example starter\ncp x y\n"
    );
    // The directory the test uses is the one its own binary was built in.
    assert_eq!(built_examples().parent(), Path::new(EXE).parent());
}

#[test]
fn the_readme_finds_the_target_directory_wherever_cargo_target_dir_puts_it() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let blocks = runnable_blocks(&readme);
    for (line, block) in &blocks {
        assert!(
            !block.contains("target/debug"),
            "the README block at line {line} spells the target directory:\n{block}"
        );
    }
    // The line that finds it, run against another target directory (cargo only reads the
    // workspace's manifest: nothing is built).
    let finder = blocks
        .iter()
        .flat_map(|(_, block)| block.lines())
        .find(|line| line.contains("cargo metadata"))
        .expect("a README block finds the target directory with cargo metadata");
    let variable = finder.split('=').next().unwrap_or_default().trim();
    let elsewhere = home();
    let wanted = elsewhere.path().join("target-elsewhere");
    let out = Command::new("bash")
        .args([
            "-e",
            "-c",
            &format!("{finder}\nprintf '%s' \"${variable}\""),
        ])
        .current_dir(root())
        .env(
            "PATH",
            format!(
                "{}:{}",
                cargo_dir().display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .env("CARGO_TARGET_DIR", &wanted)
        .stdin(Stdio::null())
        .output()
        .expect("bash runs");
    assert!(
        out.status.success(),
        "{finder}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        wanted.to_string_lossy(),
        "{finder}"
    );
}
