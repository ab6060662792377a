//! `cargo run -p xtask`: lists the repository checks; they run as `cargo test -p xtask`.

fn main() {
    let root = xtask::root();
    // A binary of its own so `cargo xtask`-style tooling can grow here; the checks themselves
    // are tests, so `cargo test --workspace` runs them.
    std::process::exit(match std::env::args().nth(1).as_deref() {
        Some("root") => {
            let _ = std::io::Write::write_all(
                &mut std::io::stdout(),
                format!("{}\n", root.display()).as_bytes(),
            );
            0
        }
        _ => {
            let _ = std::io::Write::write_all(
                &mut std::io::stderr(),
                b"usage: cargo run -p xtask -- root\nthe repository checks run with: cargo test -p xtask\n",
            );
            2
        }
    });
}
