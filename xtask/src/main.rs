//! `cargo run -p xtask`: repository chores and the public-API check (it needs nightly, so it is
//! not a test); the other checks run as `cargo test -p xtask`.

use std::io::Write;

fn main() {
    let root = xtask::root();
    let mut args = std::env::args().skip(1);
    std::process::exit(match args.next().as_deref() {
        Some("root") => {
            let _ = writeln!(std::io::stdout(), "{}", root.display());
            0
        }
        // Compares every library crate's public API with its committed `public-api.txt` (a
        // step of `.ci/run`; needs nightly).
        Some("public-api") => match xtask::public_api::check(&root) {
            Ok(()) => {
                let _ = writeln!(
                    std::io::stdout(),
                    "the public API of every library crate matches its public-api.txt"
                );
                0
            }
            Err(e) => {
                let _ = writeln!(std::io::stderr(), "{e}");
                1
            }
        },
        // Rewrites every library crate's `public-api.txt` from the code as it is.
        Some("bless-public-api") => match xtask::public_api::generate_all(&root) {
            Ok(listings) => {
                let mut status = 0;
                for ((_, dir), (_, listing)) in
                    xtask::public_api::LIBRARY_CRATES.iter().zip(listings)
                {
                    let path = xtask::public_api::snapshot_path(&root, dir);
                    match std::fs::write(&path, listing) {
                        Ok(()) => {
                            let _ = writeln!(std::io::stdout(), "wrote {}", path.display());
                        }
                        Err(e) => {
                            let _ = writeln!(std::io::stderr(), "{}: {e}", path.display());
                            status = 1;
                        }
                    }
                }
                status
            }
            Err(e) => {
                let _ = writeln!(std::io::stderr(), "{e}");
                1
            }
        },
        _ => {
            let _ = std::io::stderr().write_all(
                b"usage: cargo run -p xtask -- root | public-api | bless-public-api\n\
                  public-api checks the public-API snapshots (nightly), bless-public-api rewrites them;\n\
                  the other repository checks run with: cargo test -p xtask\n",
            );
            2
        }
    });
}
