//! The file-system half of a v2 manifest's contributed paths (spec delta §4.1, checklist item
//! 37): the parser has already refused absolute, drive, UNC and `..` paths by their text; here,
//! with the plugin root known, an existing path must resolve inside the root through symlinks,
//! a theme must be a regular file, a theme may be a per-segment glob, and a missing path or a
//! glob that matches nothing is a warning.
//!
//! Bounded: a glob reads at most [`MAX_GLOB_ENTRIES`] directory entries in all and yields at
//! most [`MAX_GLOB_MATCHES`] matches; past either the package is refused. Nothing is read
//! but metadata and directory listings.

use std::fmt;
use std::path::{Path, PathBuf};

use sidewire_ext_protocol::v2::{Contributions, PathKind, is_glob};

/// The most directory entries one package's theme globs may read in all.
pub const MAX_GLOB_ENTRIES: usize = 4096;
/// The most files one package's theme globs may match in all.
pub const MAX_GLOB_MATCHES: usize = 256;

/// Why a contributed path refuses the package.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ContributionRefusal {
    /// The path exists but resolves outside the plugin root through a symlink.
    SymlinkEscape,
    /// A theme is not a regular file (a directory, a device, …).
    ThemeNotAFile,
    /// The theme globs read more than [`MAX_GLOB_ENTRIES`] entries or matched more than
    /// [`MAX_GLOB_MATCHES`] files.
    TooManyEntries,
    /// The path could not be inspected; the I/O error's text.
    Unreadable(String),
}

impl fmt::Display for ContributionRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ContributionRefusal::SymlinkEscape => {
                f.write_str("escapes the plugin root through a symlink")
            }
            ContributionRefusal::ThemeNotAFile => f.write_str("is not a regular file"),
            ContributionRefusal::TooManyEntries => write!(
                f,
                "makes the theme globs read more than {MAX_GLOB_ENTRIES} directory entries or \
                 match more than {MAX_GLOB_MATCHES} files"
            ),
            ContributionRefusal::Unreadable(error) => write!(f, "cannot be inspected: {error}"),
        }
    }
}

/// A contributed path that does not refuse the package but is worth saying.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ContributionWarning {
    /// The path does not exist under the plugin root.
    Missing {
        /// Its list.
        kind: PathKind,
        /// The path, normalised.
        path: String,
    },
    /// A theme glob matched nothing.
    NoMatch {
        /// The glob, normalised.
        pattern: String,
    },
}

impl fmt::Display for ContributionWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ContributionWarning::Missing { kind, path } => write!(
                f,
                "contributes.{}: {} does not exist in the plugin",
                kind.as_str(),
                path.escape_debug()
            ),
            ContributionWarning::NoMatch { pattern } => write!(
                f,
                "contributes.themes: {} matches no file",
                pattern.escape_debug()
            ),
        }
    }
}

/// A refused path: its list, the path, and why.
pub(crate) type Refused = (PathKind, String, ContributionRefusal);

/// Checks every contributed path against `canonical`, the plugin root made canonical.
pub(crate) fn check(
    canonical: &Path,
    contributions: &Contributions,
) -> Result<Vec<ContributionWarning>, Refused> {
    let mut warnings = Vec::new();
    let mut budget = Budget {
        entries: MAX_GLOB_ENTRIES,
        matches: MAX_GLOB_MATCHES,
    };
    for (kind, path) in contributions.paths() {
        let refuse = |why| (kind, path.to_owned(), why);
        if kind == PathKind::Theme && is_glob(path) {
            let matches = glob(canonical, path, &mut budget).map_err(refuse)?;
            if matches.is_empty() {
                warnings.push(ContributionWarning::NoMatch {
                    pattern: path.to_owned(),
                });
            }
            for found in matches {
                check_one(canonical, &found, kind).map_err(refuse)?;
            }
            continue;
        }
        match check_one(canonical, &canonical.join(path), kind).map_err(refuse)? {
            Exists::Yes => {}
            Exists::No => warnings.push(ContributionWarning::Missing {
                kind,
                path: path.to_owned(),
            }),
        }
    }
    Ok(warnings)
}

enum Exists {
    Yes,
    No,
}

/// Resolves `path` (or, when it is missing, its deepest existing ancestor) and checks that it
/// stays inside `root`; a theme must be a regular file.
fn check_one(root: &Path, path: &Path, kind: PathKind) -> Result<Exists, ContributionRefusal> {
    let mut probe: PathBuf = path.to_path_buf();
    let mut exists = Exists::Yes;
    let resolved = loop {
        match std::fs::canonicalize(&probe) {
            Ok(resolved) => break resolved,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                exists = Exists::No;
                if !probe.pop() {
                    return Ok(Exists::No);
                }
            }
            Err(err) => return Err(ContributionRefusal::Unreadable(err.to_string())),
        }
    };
    if !resolved.starts_with(root) {
        return Err(ContributionRefusal::SymlinkEscape);
    }
    if matches!(exists, Exists::Yes) && kind == PathKind::Theme {
        let meta = std::fs::metadata(&resolved)
            .map_err(|err| ContributionRefusal::Unreadable(err.to_string()))?;
        if !meta.is_file() {
            return Err(ContributionRefusal::ThemeNotAFile);
        }
    }
    Ok(exists)
}

struct Budget {
    entries: usize,
    matches: usize,
}

/// Expands a per-segment glob (`*` any run, `?` one character) under `root`, bounded.
fn glob(
    root: &Path,
    pattern: &str,
    budget: &mut Budget,
) -> Result<Vec<PathBuf>, ContributionRefusal> {
    let mut current = vec![root.to_path_buf()];
    for segment in pattern.split('/') {
        let mut next = Vec::new();
        for dir in current {
            if !is_glob(segment) {
                let candidate = dir.join(segment);
                if std::fs::symlink_metadata(&candidate).is_ok() {
                    next.push(candidate);
                }
                continue;
            }
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries {
                if budget.entries == 0 {
                    return Err(ContributionRefusal::TooManyEntries);
                }
                budget.entries -= 1;
                let entry =
                    entry.map_err(|err| ContributionRefusal::Unreadable(err.to_string()))?;
                let name = entry.file_name();
                if let Some(name) = name.to_str()
                    && matches(segment.as_bytes(), name.as_bytes())
                {
                    next.push(entry.path());
                }
            }
        }
        current = next;
    }
    if current.len() > budget.matches {
        return Err(ContributionRefusal::TooManyEntries);
    }
    budget.matches -= current.len();
    current.sort();
    Ok(current)
}

/// Wildcard match of one segment: `*` any run of bytes, `?` one byte; a leading `.` in `name`
/// is matched only by a literal `.`.
fn matches(pattern: &[u8], name: &[u8]) -> bool {
    if name.first() == Some(&b'.') && pattern.first() != Some(&b'.') {
        return false;
    }
    let (mut p, mut n) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        if p < pattern.len() && (pattern[p] == b'?' || pattern[p] == name[n]) {
            p += 1;
            n += 1;
        } else if p < pattern.len() && pattern[p] == b'*' {
            star = Some((p, n));
            p += 1;
        } else if let Some((sp, sn)) = star {
            p = sp + 1;
            n = sn + 1;
            star = Some((sp, sn + 1));
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|&b| b == b'*')
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn wildcards() {
        for (pattern, name) in [
            ("*.reasonix-theme", "dark.reasonix-theme"),
            ("*", "x"),
            ("a?c", "abc"),
            ("*a*", "bab"),
            (".*", ".hidden"),
        ] {
            assert!(
                matches(pattern.as_bytes(), name.as_bytes()),
                "{pattern} {name}"
            );
        }
        for (pattern, name) in [
            ("*.reasonix-theme", "dark.json"),
            ("*", ".hidden"),
            ("a?c", "ac"),
            ("a", "ab"),
        ] {
            assert!(
                !matches(pattern.as_bytes(), name.as_bytes()),
                "{pattern} {name}"
            );
        }
    }
}
