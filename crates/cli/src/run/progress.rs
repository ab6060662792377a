//! A call's progress while it runs: on a terminal, a live line on stderr (`indicatif`: a
//! spinner until the server reports, then a bar when it gives a total); with `--json`,
//! `progress` events, at most [`JSON_PROGRESS_PER_SECOND`] a second; otherwise nothing.
//!
//! Text printed while the bar is up is written with the bar taken down and drawn again after
//! ([`suspend`]), so the two never share a line.
//!
//! The line is laid out for the terminal's width each time it changes ([`Layout`]): the tool's
//! name, the bar and the server's message are cut to fit, and the last [`MARGIN`] columns stay
//! free, also of the spaces `indicatif` pads a line with (it is drawn on [`Stderr`], a terminal
//! that says it is [`MARGIN`] columns narrower than it is). A line that reached the last column
//! would wrap when the terminal echoes `^C`, and the wrapped part would be left on the screen
//! once the bar is cleared.

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

/// The columns left free at the end of the line (the `^C` a terminal echoes, and the cursor).
const MARGIN: usize = 3;
/// The bar's width on a wide terminal.
const BAR_WIDTH: usize = 30;
/// Below this width the bar is left out (the percentage stays).
const MIN_BAR_WIDTH: usize = 6;
/// The columns `{elapsed}` takes at most (`59s`, `12m`, `23h`, `999d`).
const ELAPSED_WIDTH: usize = 4;
/// The terminal width assumed when it cannot be read.
const DEFAULT_WIDTH: usize = 80;

/// How one progress line fits a terminal `width` columns wide: the template and how many
/// characters the tool's name (the prefix) and the message may take.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Layout {
    template: String,
    prefix: usize,
    message: usize,
    /// The longest line the template draws with a prefix and message of those lengths.
    longest: usize,
}

impl Layout {
    /// The layout for a terminal `width` columns wide: a spinner, or (`bar`) a bar once the
    /// server reported a total.
    fn new(width: usize, bar: bool) -> Layout {
        let usable = width.saturating_sub(MARGIN);
        // The columns each template takes besides the prefix, the bar and the message:
        // `{spinner} {prefix} {elapsed} {msg}`; `{prefix} [{bar}] {percent:>3}% {elapsed} {msg}`
        // and the same without the bar.
        let (template, fixed, barest) = if bar {
            let with_bar = 2 + 2 + 4 + 1 + ELAPSED_WIDTH + 1;
            let width = (usable.saturating_sub(with_bar) / 2).min(BAR_WIDTH);
            if width >= MIN_BAR_WIDTH {
                (
                    format!("{{prefix}} [{{bar:{width}}}] {{percent:>3}}% {{elapsed}} {{msg}}"),
                    with_bar + width,
                    "{percent:>3}%",
                )
            } else {
                (
                    "{prefix} {percent:>3}% {elapsed} {msg}".to_owned(),
                    1 + 4 + 1 + ELAPSED_WIDTH + 1,
                    "{percent:>3}%",
                )
            }
        } else {
            (
                "{spinner} {prefix} {elapsed} {msg}".to_owned(),
                1 + 1 + 1 + ELAPSED_WIDTH + 1,
                "{spinner}",
            )
        };
        if fixed > usable {
            // Too narrow for anything but the bare state.
            return Layout {
                template: barest.to_owned(),
                prefix: 0,
                message: 0,
                longest: if bar { 4 } else { 1 },
            };
        }
        let free = usable - fixed;
        let prefix = free / 3;
        let message = free - prefix;
        Layout {
            template,
            prefix,
            message,
            longest: fixed + prefix + message,
        }
    }
}

/// Stderr as `indicatif` draws on it, [`MARGIN`] columns narrower than the terminal: the
/// padding it writes after a line ends there too, so the cursor never waits at the last column.
#[derive(Debug)]
struct Stderr;

impl Stderr {
    fn write(&self, text: &str) -> std::io::Result<()> {
        std::io::Write::write_all(&mut std::io::stderr().lock(), text.as_bytes())
    }
}

impl indicatif::TermLike for Stderr {
    fn width(&self) -> u16 {
        u16::try_from(terminal_width().saturating_sub(MARGIN).max(1)).unwrap_or(u16::MAX)
    }

    fn height(&self) -> u16 {
        rustix::termios::tcgetwinsize(std::io::stderr())
            .ok()
            .map(|size| size.ws_row)
            .filter(|&rows| rows > 0)
            .unwrap_or(24)
    }

    fn move_cursor_up(&self, n: usize) -> std::io::Result<()> {
        if n == 0 {
            Ok(())
        } else {
            self.write(&format!("\x1b[{n}A"))
        }
    }

    fn move_cursor_down(&self, n: usize) -> std::io::Result<()> {
        if n == 0 {
            Ok(())
        } else {
            self.write(&format!("\x1b[{n}B"))
        }
    }

    fn move_cursor_right(&self, n: usize) -> std::io::Result<()> {
        if n == 0 {
            Ok(())
        } else {
            self.write(&format!("\x1b[{n}C"))
        }
    }

    fn move_cursor_left(&self, n: usize) -> std::io::Result<()> {
        if n == 0 {
            Ok(())
        } else {
            self.write(&format!("\x1b[{n}D"))
        }
    }

    fn write_line(&self, line: &str) -> std::io::Result<()> {
        self.write(&format!("{line}\n"))
    }

    fn write_str(&self, text: &str) -> std::io::Result<()> {
        self.write(text)
    }

    fn clear_line(&self) -> std::io::Result<()> {
        self.write("\r\x1b[2K")
    }

    fn flush(&self) -> std::io::Result<()> {
        std::io::Write::flush(&mut std::io::stderr())
    }
}

/// How often the line is drawn at most (as `indicatif`'s own stderr target).
const DRAWS_PER_SECOND: u8 = 20;

/// The terminal's width in columns (stderr's), or [`DEFAULT_WIDTH`].
fn terminal_width() -> usize {
    rustix::termios::tcgetwinsize(std::io::stderr())
        .ok()
        .map(|size| usize::from(size.ws_col))
        .filter(|&columns| columns > 0)
        .unwrap_or(DEFAULT_WIDTH)
}

/// At most `chars` characters of `text` (escaped first), ending in `…` when cut.
fn cut(text: &str, chars: usize) -> String {
    let text = safe::line(text);
    if text.chars().count() <= chars {
        return text.into_owned();
    }
    let mut kept: String = text.chars().take(chars.saturating_sub(1)).collect();
    if chars > 0 {
        kept.push('…');
    }
    kept
}

/// A live bar and what it shows, laid out again when the terminal's width changes.
#[derive(Debug)]
pub(super) struct Live {
    bar: ProgressBar,
    tool: String,
    message: String,
    /// The width and whether there is a total, as last laid out.
    laid_out: Option<(usize, bool)>,
}

impl Live {
    /// Lays the line out for the terminal as it is now, and sets what it shows (cut for the
    /// new layout first: each change draws, and none may draw an overlong line).
    fn draw(&mut self, total: bool) {
        let width = terminal_width();
        let layout = Layout::new(width, total);
        self.bar.set_prefix(cut(&self.tool, layout.prefix));
        self.bar.set_message(cut(&self.message, layout.message));
        if self.laid_out != Some((width, total)) {
            self.laid_out = Some((width, total));
            let style = if total {
                ProgressStyle::with_template(&layout.template)
                    .unwrap_or_else(|_| ProgressStyle::default_bar())
                    .progress_chars("=> ")
            } else {
                ProgressStyle::with_template(&layout.template)
                    .unwrap_or_else(|_| ProgressStyle::default_spinner())
            };
            self.bar.set_style(style);
        }
    }
}

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
    Bar(Arc<Mutex<Live>>),
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
        let target = ProgressDrawTarget::term_like_with_hz(Box::new(Stderr), DRAWS_PER_SECOND);
        let bar = ProgressBar::with_draw_target(None, target);
        let mut live = Live {
            bar: bar.clone(),
            tool: tool.to_owned(),
            message: "(Ctrl-C cancels)".to_owned(),
            laid_out: None,
        };
        live.draw(false);
        bar.enable_steady_tick(Duration::from_millis(100));
        *crate::lock(&SHOWN) = Some(bar.clone());
        CallProgress::Bar(Arc::new(Mutex::new(live)))
    }

    /// `options` with a progress callback that updates this display.
    pub(super) fn options(&self, options: ToolCallOptions) -> ToolCallOptions {
        match self {
            CallProgress::Bar(live) => {
                let live = Arc::clone(live);
                options.on_progress(move |p| {
                    let mut live = crate::lock(&live);
                    let total = p.total.filter(|t| t.is_finite() && *t > 0.0);
                    // Laid out (and the message cut) before the bar moves, so no draw shows
                    // the new state in the old layout.
                    live.message = p.message.unwrap_or_default();
                    let bar = total.is_some() || live.bar.length().is_some();
                    live.draw(bar);
                    if let Some(total) = total {
                        // Per mille of the total, so fractional progress moves the bar.
                        live.bar.set_length(1000);
                        #[expect(
                            clippy::cast_possible_truncation,
                            clippy::cast_sign_loss,
                            reason = "clamped to 0..=1000 first"
                        )]
                        live.bar
                            .set_position((p.progress / total * 1000.0).clamp(0.0, 1000.0) as u64);
                    }
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
        if let CallProgress::Bar(live) = self {
            // Off the screen first, so nothing printed from now on draws it again.
            *crate::lock(&SHOWN) = None;
            crate::lock(live).bar.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_leaves_the_margin_free_and_shrinks_with_the_terminal() {
        for width in [12, 20, 40, 60, 80, 120, 400] {
            for bar in [false, true] {
                let layout = Layout::new(width, bar);
                assert!(
                    layout.longest <= width - MARGIN,
                    "{width} {bar}: {layout:?}"
                );
                assert!(
                    ProgressStyle::with_template(&layout.template).is_ok(),
                    "{layout:?}"
                );
            }
        }
        assert!(Layout::new(120, true).template.contains("{bar:30}"));
        assert!(Layout::new(40, true).template.contains("{bar:"));
        assert!(!Layout::new(20, true).template.contains("{bar"));
        assert_eq!(cut("mcp__server__tool", 8), "mcp__se…");
        assert_eq!(cut("short", 8), "short");
        assert_eq!(cut("a\u{1b}[2Jb", 40), "a\\x1b[2Jb");
    }

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
