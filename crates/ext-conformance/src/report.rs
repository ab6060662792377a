//! The report: one result per statement, the evidence of a failure made safe to print, and
//! the merge of the findings of every process into one verdict per statement.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Serialize;
use sidewire_ext_protocol::{ProtocolProfile, is_terminal_control};

use crate::statements::{Statement, StatementKind};

/// At most this many characters of one frame are kept as evidence.
pub(crate) const FRAME_CHARS: usize = 300;
/// At most this many frames are kept as the evidence of one failed statement.
pub(crate) const FRAMES_PER_FAILURE: usize = 4;
/// At most this many characters of a detail (which may quote a sidecar's stderr).
const DETAIL_CHARS: usize = 600;

/// The outcome for one statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum StatementVerdict {
    /// Checked, and the sidecar did what the statement says.
    Pass,
    /// Checked, and the sidecar did not.
    Fail,
    /// Does not apply to this sidecar (the detail says why: no subscribed point, no `ui`).
    NotApplicable,
    /// Cannot be observed from outside a sidecar (the detail says why).
    NotCheckable,
    /// Checkable, but not run (a slow statement without `--slow`).
    Skipped,
}

impl StatementVerdict {
    /// The word used in reports: `pass`, `FAIL`, `n/a`, `not checkable`, `skipped`.
    pub fn label(self) -> &'static str {
        match self {
            StatementVerdict::Pass => "pass",
            StatementVerdict::Fail => "FAIL",
            StatementVerdict::NotApplicable => "n/a",
            StatementVerdict::NotCheckable => "not checkable",
            StatementVerdict::Skipped => "skipped",
        }
    }
}

/// Which way a frame of evidence went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum FrameDirection {
    /// Written by the kit to the sidecar's stdin.
    Sent,
    /// Read from the sidecar's stdout.
    Received,
}

/// One frame of evidence: sanitised (terminal controls escaped) and cut to a readable length.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Frame {
    /// Which way it went.
    pub direction: FrameDirection,
    /// The frame's text, escaped and cut (the cut says how long the frame was).
    pub text: String,
}

impl Frame {
    pub(crate) fn new(direction: FrameDirection, bytes: &[u8]) -> Frame {
        let text = if bytes.is_empty() {
            "(an empty line)".to_owned()
        } else {
            sanitize(&String::from_utf8_lossy(bytes), FRAME_CHARS)
        };
        Frame { direction, text }
    }
}

/// The result for one statement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct StatementResult {
    /// The statement.
    pub statement: Statement,
    /// The verdict.
    pub verdict: StatementVerdict,
    /// What failed, or why the statement does not apply or cannot be checked (empty on a
    /// pass). Sanitised: terminal controls are escaped.
    pub detail: String,
    /// On failure, the frames that showed it (at most 4, each at most 300 characters).
    pub frames: Vec<Frame>,
}

/// The kit's report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Report {
    /// The plugin id checked.
    pub plugin: String,
    /// The protocol it was checked against. Serialized as its `protocolId`.
    #[serde(serialize_with = "protocol_id")]
    pub profile: ProtocolProfile,
    /// One result per selected statement, in [`statements`](super::statements) order.
    pub results: Vec<StatementResult>,
    /// How long the run took.
    #[serde(serialize_with = "millis")]
    pub elapsed: Duration,
}

fn protocol_id<S: serde::Serializer>(p: &ProtocolProfile, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(p.protocol_id())
}

fn millis<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

impl Report {
    /// Whether nothing failed.
    pub fn passed(&self) -> bool {
        self.count(StatementVerdict::Fail) == 0
    }

    /// How many results have `verdict`.
    pub fn count(&self, verdict: StatementVerdict) -> usize {
        self.results.iter().filter(|r| r.verdict == verdict).count()
    }

    /// The ids of the failed statements, in report order.
    pub fn failed_ids(&self) -> Vec<&'static str> {
        self.results
            .iter()
            .filter(|r| r.verdict == StatementVerdict::Fail)
            .map(|r| r.statement.id)
            .collect()
    }
}

/// What one check found about one statement.
#[derive(Debug, Clone)]
pub(crate) enum Outcome {
    Pass,
    Fail { detail: String, frames: Vec<Frame> },
    NotApplicable(String),
}

/// The findings of a run, by statement id, merged: any failure fails the statement (details
/// joined, the first failure's frames kept), else any pass passes it, else it does not apply.
#[derive(Debug, Default)]
pub(crate) struct Findings {
    by_id: BTreeMap<&'static str, Vec<Outcome>>,
}

impl Findings {
    pub(crate) fn add(&mut self, id: &'static str, outcome: Outcome) {
        self.by_id.entry(id).or_default().push(outcome);
    }

    pub(crate) fn extend(&mut self, other: Findings) {
        for (id, outcomes) in other.by_id {
            self.by_id.entry(id).or_default().extend(outcomes);
        }
    }

    /// The report's results for `selected`, in order.
    pub(crate) fn results(
        mut self,
        selected: &[&'static Statement],
        slow: bool,
    ) -> Vec<StatementResult> {
        selected
            .iter()
            .map(|&statement| {
                let outcomes = self.by_id.remove(statement.id).unwrap_or_default();
                let (verdict, detail, frames) = match statement.kind {
                    StatementKind::NotCheckable(why) => {
                        (StatementVerdict::NotCheckable, why.to_owned(), Vec::new())
                    }
                    StatementKind::Slow(why) if !slow => {
                        (StatementVerdict::Skipped, why.to_owned(), Vec::new())
                    }
                    _ => merge(outcomes),
                };
                StatementResult {
                    statement: *statement,
                    verdict,
                    detail: sanitize(&detail, DETAIL_CHARS),
                    frames,
                }
            })
            .collect()
    }
}

fn merge(outcomes: Vec<Outcome>) -> (StatementVerdict, String, Vec<Frame>) {
    let mut failures = Vec::new();
    let mut frames = Vec::new();
    let mut passed = false;
    let mut not_applicable = Vec::new();
    for outcome in outcomes {
        match outcome {
            Outcome::Pass => passed = true,
            Outcome::Fail { detail, frames: f } => {
                if !failures.contains(&detail) {
                    failures.push(detail);
                }
                if frames.is_empty() {
                    frames = f;
                }
            }
            Outcome::NotApplicable(why) => {
                if !not_applicable.contains(&why) {
                    not_applicable.push(why);
                }
            }
        }
    }
    if !failures.is_empty() {
        frames.truncate(FRAMES_PER_FAILURE);
        (StatementVerdict::Fail, failures.join("; "), frames)
    } else if passed {
        (StatementVerdict::Pass, String::new(), Vec::new())
    } else if not_applicable.is_empty() {
        (
            StatementVerdict::NotApplicable,
            "no check ran (the run ended before it)".to_owned(),
            Vec::new(),
        )
    } else {
        (
            StatementVerdict::NotApplicable,
            not_applicable.join("; "),
            Vec::new(),
        )
    }
}

/// `text` with every terminal control escaped (`\n`, `\r`, `\t`, `\x1b`, `\u{202e}`) and cut to
/// `max` characters, the cut marked with the full length.
pub(crate) fn sanitize(text: &str, max: usize) -> String {
    let mut out = String::new();
    for (chars, c) in text.chars().enumerate() {
        if chars >= max {
            out.push_str(&format!("… ({} bytes in all)", text.len()));
            return out;
        }
        if is_terminal_control(c) {
            match c {
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                c if (c as u32) < 0x80 => out.push_str(&format!("\\x{:02x}", c as u32)),
                c => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            }
        } else if c == '\u{feff}' {
            out.push_str("\\u{feff}");
        } else {
            out.push(c);
        }
    }
    out
}
