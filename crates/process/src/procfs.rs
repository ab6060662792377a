//! Reading the process table from `/proc` (Linux): each process's parent, group and state, and
//! the tree below a pid. Shared by the descendant reaper and the test helpers.

use std::collections::{BTreeSet, HashMap};

/// One line of `/proc/<pid>/stat`, the fields this crate needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stat {
    pub(crate) pid: u32,
    /// `R`, `S`, `D`, `Z` (zombie), `T`, ...
    pub(crate) state: u8,
    pub(crate) ppid: u32,
    pub(crate) pgrp: u32,
}

impl Stat {
    /// A zombie has exited and only waits to be reaped.
    pub(crate) fn is_zombie(&self) -> bool {
        self.state == b'Z' || self.state == b'X'
    }
}

/// The stat of `pid`, or `None` once it is gone.
pub(crate) fn stat(pid: u32) -> Option<Stat> {
    let text = std::fs::read(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(&text)
}

/// Parses `pid (comm) state ppid pgrp ...`; `comm` may hold spaces and parentheses, so the
/// fields are read after the last `)`.
pub(crate) fn parse_stat(text: &[u8]) -> Option<Stat> {
    let open = text.iter().position(|&b| b == b'(')?;
    let close = text.iter().rposition(|&b| b == b')')?;
    let pid = std::str::from_utf8(&text[..open])
        .ok()?
        .trim()
        .parse()
        .ok()?;
    let mut fields = after_comm(text, close)?;
    let state = *fields.next()?.as_bytes().first()?;
    let ppid = fields.next()?.parse().ok()?;
    let pgrp = fields.next()?.parse().ok()?;
    Some(Stat {
        pid,
        state,
        ppid,
        pgrp,
    })
}

/// The fields of a stat line after the command name's closing parenthesis at `close`, from
/// the state (field 3) on.
fn after_comm(text: &[u8], close: usize) -> Option<std::str::SplitAsciiWhitespace<'_>> {
    Some(
        std::str::from_utf8(text.get(close + 1..)?)
            .ok()?
            .split_ascii_whitespace(),
    )
}

/// The nice value of `pid` (field 19 of its stat line), or `None` once it is gone.
pub(crate) fn nice(pid: u32) -> Option<i32> {
    let text = std::fs::read(format!("/proc/{pid}/stat")).ok()?;
    let close = text.iter().rposition(|&b| b == b')')?;
    after_comm(&text, close)?.nth(19 - 3)?.parse().ok()
}

/// Every process visible in `/proc` right now (processes that vanish mid-scan are skipped).
pub(crate) fn all() -> std::io::Result<Vec<Stat>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc")? {
        let Ok(entry) = entry else { continue };
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if let Some(stat) = stat(pid) {
            out.push(stat);
        }
    }
    Ok(out)
}

/// The processes below `root` in `table` (children, their children, ...), parents first.
pub(crate) fn descendants_in(root: u32, table: &[Stat]) -> Vec<Stat> {
    let mut children: HashMap<u32, Vec<Stat>> = HashMap::new();
    for stat in table {
        children.entry(stat.ppid).or_default().push(*stat);
    }
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    let mut queue = vec![root];
    while let Some(parent) = queue.pop() {
        for child in children.get(&parent).into_iter().flatten() {
            if child.pid != root && seen.insert(child.pid) {
                out.push(*child);
                queue.push(child.pid);
            }
        }
    }
    out
}

/// Whether `/proc/<pid>/environ` has an entry equal to `entry` (`NAME=value`).
pub(crate) fn environ_has(pid: u32, entry: &[u8]) -> bool {
    std::fs::read(format!("/proc/{pid}/environ"))
        .map(|env| env.split(|&b| b == 0).any(|e| e == entry))
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_with_odd_command_names_parse() {
        let stat = parse_stat(b"42 (a b) c)) S 7 42 42 0 -1").unwrap();
        assert_eq!(
            stat,
            Stat {
                pid: 42,
                state: b'S',
                ppid: 7,
                pgrp: 42
            }
        );
        assert_eq!(parse_stat(b"garbage"), None);
    }

    #[test]
    fn descendants_follow_parents_transitively() {
        let s = |pid, ppid| Stat {
            pid,
            state: b'S',
            ppid,
            pgrp: pid,
        };
        let table = [s(1, 0), s(10, 1), s(11, 10), s(12, 11), s(20, 1), s(13, 10)];
        let mut pids: Vec<u32> = descendants_in(10, &table).iter().map(|s| s.pid).collect();
        pids.sort_unstable();
        assert_eq!(pids, [11, 12, 13]);
    }

    #[test]
    fn this_process_is_in_the_table() {
        let me = std::process::id();
        let stat = stat(me).unwrap();
        assert_eq!(stat.pid, me);
        assert!(all().unwrap().iter().any(|s| s.pid == me));
    }
}
