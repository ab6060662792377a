//! A call's progress while it runs: on a terminal, a live line on stderr (`indicatif`: a
//! spinner until the server reports, then a bar when it gives a total); with `--json`,
//! `progress` events, at most [`JSON_PROGRESS_PER_SECOND`] a second; otherwise nothing.
//!
//! Text printed while the bar is up is written with the bar taken down and drawn again after
//! ([`suspend`]), so the two never share a line.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::json;
use sidewire_mcp::ToolCallOptions;

use crate::out::Out;
use crate::safe;

/// At most this many `progress` events a second with `--json` (the others are dropped: a
/// server can report progress as fast as it likes).
pub(super) const JSON_PROGRESS_PER_SECOND: u32 = 10;

/// The bar on screen, if any, for [`suspend`].
static SHOWN: Mutex<Option<ProgressBar>> = Mutex::new(None);

/// Runs `print` with the bar (if one is up) taken off the screen.
pub(super) fn suspend(print: impl FnOnce()) {
    let shown = crate::lock(&SHOWN).clone();
    match shown {
        Some(bar) => bar.suspend(print),
        None => print(),
    }
}

/// How one call's progress is shown; dropping it takes the bar down (also when the call is
/// cancelled).
#[derive(Debug)]
pub(super) enum CallProgress {
    /// A live line on the terminal.
    Bar(ProgressBar),
    /// `progress` events on stdout.
    Json {
        out: Out,
        tool: String,
        throttle: Arc<Throttle>,
    },
    /// Nothing.
    Off,
}

impl CallProgress {
    /// Starts showing the call of `tool`: a bar when `terminal` (stderr is one and no
    /// `--json`), events with `--json`.
    pub(super) fn start(out: &Out, tool: &str, terminal: bool) -> CallProgress {
        if out.json {
            return CallProgress::Json {
                out: *out,
                tool: tool.to_owned(),
                throttle: Arc::new(Throttle::new(JSON_PROGRESS_PER_SECOND)),
            };
        }
        if !terminal {
            return CallProgress::Off;
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{spinner} {prefix} {elapsed} {wide_msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.set_prefix(safe::line(tool).into_owned());
        bar.set_message("(Ctrl-C cancels)");
        bar.enable_steady_tick(Duration::from_millis(100));
        *crate::lock(&SHOWN) = Some(bar.clone());
        CallProgress::Bar(bar)
    }

    /// `options` with a progress callback that updates this display.
    pub(super) fn options(&self, options: ToolCallOptions) -> ToolCallOptions {
        match self {
            CallProgress::Bar(bar) => {
                let bar = bar.clone();
                options.on_progress(move |p| {
                    if let Some(total) = p.total.filter(|t| t.is_finite() && *t > 0.0) {
                        if bar.length().is_none() {
                            bar.set_style(
                                ProgressStyle::with_template(
                                    "{prefix} [{bar:30}] {percent:>3}% {elapsed} {wide_msg}",
                                )
                                .unwrap_or_else(|_| ProgressStyle::default_bar())
                                .progress_chars("=> "),
                            );
                        }
                        // Per mille of the total, so fractional progress moves the bar.
                        bar.set_length(1000);
                        #[expect(
                            clippy::cast_possible_truncation,
                            clippy::cast_sign_loss,
                            reason = "clamped to 0..=1000 first"
                        )]
                        bar.set_position((p.progress / total * 1000.0).clamp(0.0, 1000.0) as u64);
                    }
                    let message = p.message.unwrap_or_default();
                    bar.set_message(safe::line(&message).into_owned());
                })
            }
            CallProgress::Json {
                out,
                tool,
                throttle,
            } => {
                let (out, tool, throttle) = (*out, tool.clone(), Arc::clone(throttle));
                options.on_progress(move |p| {
                    if !throttle.allow(Instant::now()) {
                        return;
                    }
                    out.json_line(&json!({
                        "event": "progress",
                        "tool": tool,
                        "progress": p.progress,
                        "total": p.total,
                        "message": p.message,
                    }));
                })
            }
            CallProgress::Off => options,
        }
    }
}

/// Lets through at most `per_second` events a second: one, then none until `1/per_second`
/// has passed.
#[derive(Debug)]
pub(super) struct Throttle {
    every: Duration,
    last: Mutex<Option<Instant>>,
}

impl Throttle {
    pub(super) fn new(per_second: u32) -> Throttle {
        Throttle {
            every: Duration::from_secs(1) / per_second.max(1),
            last: Mutex::new(None),
        }
    }

    /// Whether an event at `now` goes through.
    pub(super) fn allow(&self, now: Instant) -> bool {
        let mut last = crate::lock(&self.last);
        if last.is_some_and(|at| now.saturating_duration_since(at) < self.every) {
            return false;
        }
        *last = Some(now);
        true
    }
}

impl Drop for CallProgress {
    fn drop(&mut self) {
        if let CallProgress::Bar(bar) = self {
            bar.finish_and_clear();
            *crate::lock(&SHOWN) = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_throttle_lets_through_at_most_its_rate() {
        let throttle = Throttle::new(JSON_PROGRESS_PER_SECOND);
        let start = Instant::now();
        // A thousand events over one second (one a millisecond): ten go through.
        let passed = (0..1000)
            .filter(|ms| throttle.allow(start + Duration::from_millis(*ms)))
            .count();
        assert_eq!(passed, 10);
    }
}
