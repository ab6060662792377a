//! Copying a package directory for a copy install: recursive, keeping Unix permission bits, and
//! copying symlinks as symlinks as long as they stay inside the package (§12.2).

use std::fs;
use std::path::{Component, Path, PathBuf};

use crate::Error;

/// Copies `src` (canonical) to `dst` (which must not exist).
pub(super) fn copy_package(src: &Path, dst: &Path, id: &str) -> Result<(), Error> {
    copy_dir(src, src, dst, id)
}

fn copy_dir(root: &Path, src: &Path, dst: &Path, id: &str) -> Result<(), Error> {
    fs::create_dir(dst).map_err(|err| Error::io(dst, err))?;
    let entries = fs::read_dir(src).map_err(|err| Error::io(src, err))?;
    for entry in entries {
        let entry = entry.map_err(|err| Error::io(src, err))?;
        let from = entry.path();
        let to = dst.join(entry.file_name());
        let meta = fs::symlink_metadata(&from).map_err(|err| Error::io(&from, err))?;
        let kind = meta.file_type();
        if kind.is_symlink() {
            let target = fs::read_link(&from).map_err(|err| Error::io(&from, err))?;
            if !stays_inside(root, &from, &target) {
                return Err(Error::install(
                    id,
                    format!(
                        "symlink {} points outside the package (to {})",
                        from.display(),
                        target.display()
                    ),
                ));
            }
            std::os::unix::fs::symlink(&target, &to).map_err(|err| Error::io(&to, err))?;
        } else if kind.is_dir() {
            copy_dir(root, &from, &to, id)?;
        } else if kind.is_file() {
            copy_file(&from, &to, &meta)?;
        } else {
            return Err(Error::install(
                id,
                format!("{} is not a file, directory or symlink", from.display()),
            ));
        }
    }
    // Set the directory's own bits last, so a read-only directory can still be filled.
    let perms = fs::metadata(src)
        .map_err(|err| Error::io(src, err))?
        .permissions();
    fs::set_permissions(dst, perms).map_err(|err| Error::io(dst, err))?;
    Ok(())
}

/// Copies one regular file with its permission bits. Unlike `fs::copy`, a failure names the
/// path that failed: the source when reading it failed, the destination when creating or
/// writing it did (a full disk is the destination's fault, not the package's).
pub(super) fn copy_file(from: &Path, to: &Path, meta: &fs::Metadata) -> Result<(), Error> {
    use std::io::{ErrorKind, Read, Write};
    use std::os::unix::fs::OpenOptionsExt;

    let mut src = fs::File::open(from).map_err(|err| Error::io(from, err))?;
    let mut dst = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(to)
        .map_err(|err| Error::io(to, err))?;
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match src.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(err) if err.kind() == ErrorKind::Interrupted => continue,
            Err(err) => return Err(Error::io(from, err)),
        };
        dst.write_all(&buf[..n]).map_err(|err| Error::io(to, err))?;
    }
    dst.flush().map_err(|err| Error::io(to, err))?;
    // Set the bits last, so a read-only file can still be written first.
    fs::set_permissions(to, meta.permissions()).map_err(|err| Error::io(to, err))
}

/// Whether a symlink at `link` with `target` resolves inside `root`: lexically first (so a
/// dangling link is judged too), then, when the target exists, by its canonical path (so a
/// chain of links cannot escape).
fn stays_inside(root: &Path, link: &Path, target: &Path) -> bool {
    let base = link.parent().unwrap_or(root);
    let joined = if target.is_absolute() {
        target.to_path_buf()
    } else {
        base.join(target)
    };
    let Some(lexical) = normalize(&joined) else {
        return false;
    };
    if !lexical.starts_with(root) {
        return false;
    }
    match fs::canonicalize(&joined) {
        Ok(real) => real.starts_with(root),
        Err(_) => true,
    }
}

/// Resolves `.` and `..` without touching the file system; `None` when `..` climbs past `/`.
fn normalize(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    Some(out)
}
