//! Reading a file that a peer, a package or a config controls: the one bounded, non-blocking
//! read the hosts use for plugin manifests, MCP config files and `envFile`s, and the records
//! sidewire keeps under its state directory.
//!
//! [`read`] opens the path with `O_NONBLOCK` (so a FIFO without a writer cannot hold the open
//! up) and `O_CLOEXEC`, and with `O_NOFOLLOW` unless the [`Symlinks`] policy follows a final
//! symlink; it refuses anything that is not a regular file, both before opening (opening a
//! device can act: a tape rewinds, a modem line goes up) and on the opened descriptor (the path
//! may have been replaced in between), refuses a file larger than the caller's cap without
//! reading past `cap + 1` bytes, and says in a typed [`FileError`] which rule refused the file,
//! naming its path. A read never blocks on anything but the disk, and never holds more than
//! `cap + 1` bytes, whatever the path names (`/dev/zero`, a FIFO, a directory, a socket).
//!
//! The caps are the callers': each documents its own where it calls (a plugin manifest, a
//! config file, an `envFile`, a token record).

use std::borrow::Cow;
use std::fmt;
use std::fs::{self, File, FileType};
use std::io::{self, Read};
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;

/// What [`read`] does when the path's last component is a symbolic link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Symlinks<'a> {
    /// Follow it wherever it points: for the user's own files (an MCP config, an `envFile`),
    /// which are often links into a dotfiles repository. The file it names must still be a
    /// regular file within the cap.
    Follow,
    /// Refuse it: for files sidewire writes itself (by an atomic rename, never as a link), so
    /// that a link found there is not read.
    Refuse,
    /// Follow it only when the file it resolves to (every link on the way followed) is inside
    /// this directory: for the files of a plugin package, where a link to another file of the
    /// package is fine and one to `/dev/zero` or `~/.ssh` is not.
    Inside(&'a Path),
}

/// Reads the file at `path`: a regular file of at most `cap` bytes, opened without blocking
/// and without following a final symlink unless `symlinks` allows it (see the module docs).
///
/// # Errors
///
/// A [`FileError`] naming `path` and the rule that refused it:
/// [`is_not_regular`](FileError::is_not_regular), [`is_symlink`](FileError::is_symlink),
/// [`is_too_large`](FileError::is_too_large), or [`is_io`](FileError::is_io) (which includes
/// [`is_not_found`](FileError::is_not_found)).
pub fn read(path: &Path, cap: usize, symlinks: Symlinks<'_>) -> Result<Vec<u8>, FileError> {
    let fail = |reason| FileError {
        path: path.to_path_buf(),
        reason,
    };
    let io = |err: io::Error| fail(Reason::Io(err));
    let (target, follow) = match symlinks {
        Symlinks::Follow => (Cow::Borrowed(path), true),
        Symlinks::Refuse => (Cow::Borrowed(path), false),
        Symlinks::Inside(root) => (inside(path, root).map_err(fail)?, false),
    };
    // Refused before it is opened when it visibly is not a regular file.
    let seen = if follow {
        fs::metadata(&target)
    } else {
        fs::symlink_metadata(&target)
    }
    .map_err(io)?;
    check_type(seen.file_type()).map_err(fail)?;
    let mut flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY;
    if !follow {
        flags |= OFlags::NOFOLLOW;
    }
    let fd = rustix::fs::open(&*target, flags, Mode::empty()).map_err(|errno| {
        if errno == Errno::LOOP && !follow {
            // Replaced by a link since the check above.
            fail(Reason::Symlink)
        } else {
            io(errno.into())
        }
    })?;
    let file = File::from(fd);
    // Checked again on what was opened: the path may name something else by now.
    let opened = file.metadata().map_err(io)?;
    check_type(opened.file_type()).map_err(fail)?;
    if opened.len() > cap as u64 {
        return Err(fail(Reason::TooLarge(cap)));
    }
    // The length said is only a hint (`/proc` files say 0): the read itself stops one byte past
    // the cap, which tells a file of exactly `cap` bytes from a larger one.
    let hint = usize::try_from(opened.len()).unwrap_or(cap).min(cap);
    let mut bytes = Vec::with_capacity(hint + 1);
    (&file)
        .take(cap as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() > cap {
        return Err(fail(Reason::TooLarge(cap)));
    }
    Ok(bytes)
}

/// [`read`], as UTF-8 text.
///
/// # Errors
///
/// As for [`read`], and [`is_not_utf8`](FileError::is_not_utf8).
pub fn read_to_string(
    path: &Path,
    cap: usize,
    symlinks: Symlinks<'_>,
) -> Result<String, FileError> {
    let bytes = read(path, cap, symlinks)?;
    String::from_utf8(bytes).map_err(|_| FileError {
        path: path.to_path_buf(),
        reason: Reason::NotUtf8,
    })
}

/// The path to open under [`Symlinks::Inside`]: `path` itself when it is not a link, else what
/// it resolves to, when that is inside `root`.
fn inside<'p>(path: &'p Path, root: &Path) -> Result<Cow<'p, Path>, Reason> {
    let meta = fs::symlink_metadata(path).map_err(Reason::Io)?;
    if !meta.file_type().is_symlink() {
        return Ok(Cow::Borrowed(path));
    }
    // `canonicalize` reads links and directories, and opens nothing at the end: a link to a
    // FIFO is resolved without blocking. A dangling link is the I/O error of the missing file.
    let real = fs::canonicalize(path).map_err(Reason::Io)?;
    let root = fs::canonicalize(root).map_err(Reason::Io)?;
    if real.starts_with(&root) {
        Ok(Cow::Owned(real))
    } else {
        Err(Reason::SymlinkOutside(root))
    }
}

/// `Ok` for a regular file, else the refusal naming what it is.
fn check_type(kind: FileType) -> Result<(), Reason> {
    let what = if kind.is_file() {
        return Ok(());
    } else if kind.is_symlink() {
        return Err(Reason::Symlink);
    } else if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else {
        "not a file"
    };
    Err(Reason::NotRegular(what))
}

/// A file [`read`] refused or could not read. The message names the path and the rule (or
/// the I/O error), which is not also returned as the [`source`](std::error::Error::source):
/// a printed chain shows it once. Callers branch on the `is_*` predicates, never on the text.
#[derive(Debug)]
pub struct FileError {
    path: PathBuf,
    reason: Reason,
}

/// Why (private: the predicates are the API, so a rule can be added without breaking a match).
#[derive(Debug)]
enum Reason {
    /// A directory, FIFO, socket or device: what it is.
    NotRegular(&'static str),
    /// A final symlink the policy does not follow.
    Symlink,
    /// A final symlink that resolves outside this (canonical) directory.
    SymlinkOutside(PathBuf),
    /// Over this cap, in bytes.
    TooLarge(usize),
    NotUtf8,
    Io(io::Error),
}

impl FileError {
    /// The path as the caller gave it.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// It is not a regular file: a directory, a FIFO, a socket or a device.
    pub fn is_not_regular(&self) -> bool {
        matches!(self.reason, Reason::NotRegular(_))
    }

    /// It is a symbolic link the policy does not follow: any, under [`Symlinks::Refuse`]; one
    /// that leads out of the directory, under [`Symlinks::Inside`].
    pub fn is_symlink(&self) -> bool {
        matches!(self.reason, Reason::Symlink | Reason::SymlinkOutside(_))
    }

    /// It is larger than the cap.
    pub fn is_too_large(&self) -> bool {
        matches!(self.reason, Reason::TooLarge(_))
    }

    /// It is not UTF-8 ([`read_to_string`] only).
    pub fn is_not_utf8(&self) -> bool {
        matches!(self.reason, Reason::NotUtf8)
    }

    /// Looking at, opening or reading it failed (a missing file among them).
    pub fn is_io(&self) -> bool {
        matches!(self.reason, Reason::Io(_))
    }

    /// There is no file at the path (or a link on the way dangles).
    pub fn is_not_found(&self) -> bool {
        matches!(&self.reason, Reason::Io(err) if err.kind() == io::ErrorKind::NotFound)
    }

    /// The I/O error, for [`is_io`](Self::is_io).
    pub fn io_error(&self) -> Option<&io::Error> {
        match &self.reason {
            Reason::Io(err) => Some(err),
            _ => None,
        }
    }
}

impl fmt::Display for FileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = self.path.display();
        match &self.reason {
            Reason::NotRegular(what) => write!(f, "{path}: {what}, not a regular file"),
            Reason::Symlink => write!(f, "{path}: a symbolic link, which is not followed here"),
            Reason::SymlinkOutside(root) => write!(
                f,
                "{path}: a symbolic link to a file outside {}",
                root.display()
            ),
            Reason::TooLarge(cap) if cap % 1024 == 0 && *cap > 0 => {
                write!(f, "{path}: larger than {} KiB", cap / 1024)
            }
            Reason::TooLarge(cap) => write!(f, "{path}: larger than {cap} bytes"),
            Reason::NotUtf8 => write!(f, "{path}: not UTF-8"),
            Reason::Io(err) => write!(f, "{path}: {err}"),
        }
    }
}

impl std::error::Error for FileError {}

impl From<FileError> for io::Error {
    /// An `io::Error` whose message is the [`FileError`]'s (kept as its inner error): the I/O
    /// error's kind, `InvalidData` for a file too large or not UTF-8, `InvalidInput` for one
    /// that is not a regular file or is a link not followed.
    fn from(err: FileError) -> io::Error {
        let kind = match &err.reason {
            Reason::Io(io) => io.kind(),
            Reason::TooLarge(_) | Reason::NotUtf8 => io::ErrorKind::InvalidData,
            Reason::NotRegular(_) | Reason::Symlink | Reason::SymlinkOutside(_) => {
                io::ErrorKind::InvalidInput
            }
        };
        io::Error::new(kind, err)
    }
}

#[cfg(test)]
mod tests;
