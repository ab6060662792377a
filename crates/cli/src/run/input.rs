//! Where `run`'s lines come from: on a terminal, a line editor (`rustyline`) on a thread of
//! its own, with a prompt, history kept in `$SIDEWIRE_HOME/run_history`, and completion of
//! commands, tool names and prompt names; otherwise (a pipe, a script, `--json`) stdin read line
//! by line, as before.
//!
//! The editor's thread reads only when asked ([`Input::read`]): between reads the terminal is
//! in its own mode, so Ctrl-C during a call is a SIGINT that cancels the call. While it reads,
//! Ctrl-C on a non-empty line clears it, and on an empty one is [`Read::Interrupted`] (the loop
//! quits on the second in a row). Output meanwhile goes through the editor's printer (see
//! [`crate::out::route_terminal`] and [`Terminal`]: handed over by a thread of its own, never by
//! the one that prints), above the prompt, which is drawn again under it: the prompt
//! is `sidewire> `, or `  answer> ` while a plugin's question waits for the next line (drawn
//! again as the question is printed, so it changes even while the editor reads).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use rustyline::completion::{Completer, Pair};
use rustyline::error::ReadlineError;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::history::FileHistory;
use rustyline::validate::Validator;
use rustyline::{
    Cmd, ConditionalEventHandler, Config, Editor, Event, EventContext, EventHandler, KeyEvent,
    Movement, RepeatCount,
};
use tokio::io::AsyncBufReadExt as _;

use super::command::COMMANDS;

/// How many lines the history keeps (in memory and in its file).
pub(super) const HISTORY_LINES: usize = 1000;

/// The prompt.
const PROMPT: &str = "sidewire> ";

/// The prompt while a plugin's question waits for the next line. As wide as [`PROMPT`]: the
/// editor measures the prompt once per read, and this one may replace it during the read.
const ANSWER_PROMPT: &str = "  answer> ";

/// The prompt's text: [`ANSWER_PROMPT`] when a question waits, else [`PROMPT`].
fn prompt_text(question: bool) -> &'static str {
    if question { ANSWER_PROMPT } else { PROMPT }
}

/// The editor's prompt, read again each time the line is drawn.
struct LivePrompt(Arc<AtomicBool>);

impl rustyline::Prompt for LivePrompt {
    fn raw(&self) -> &str {
        prompt_text(self.0.load(Ordering::SeqCst))
    }
}

/// What one read gave.
#[derive(Debug, PartialEq)]
pub(super) enum Read {
    /// A line (without its newline).
    Line(String),
    /// Ctrl-C at an empty prompt.
    Interrupted,
    /// Ctrl-D at an empty prompt, or the end of stdin.
    Eof,
}

/// The names the completion offers, refreshed by the loop before each read. A copy of the
/// hosts' listings, which are bounded (tools and prompts per server, actions per plugin).
#[derive(Debug, Default)]
pub(super) struct Names {
    /// Tool names after `/call`: each namespaced name, and each tool's own name.
    pub(super) tools: Vec<String>,
    /// `/SERVER:PROMPT` and `/PLUGIN:ACTION` commands, with their `/`.
    pub(super) items: Vec<String>,
}

/// The source of lines.
#[derive(Debug)]
pub(super) enum Input {
    /// The line editor on a terminal.
    Editor(EditorThread),
    /// Stdin, line by line.
    Lines(tokio::io::Lines<tokio::io::BufReader<tokio::io::Stdin>>),
}

impl Input {
    /// Stdin read line by line.
    pub(super) fn lines() -> Input {
        Input::Lines(tokio::io::BufReader::new(tokio::io::stdin()).lines())
    }

    /// The next line.
    ///
    /// Cancel safety: cancel safe. For the editor, a read cancelled while the user types is
    /// left to finish; its line is then dropped (the loop only cancels a read as it ends).
    pub(super) async fn read(&mut self) -> anyhow::Result<Read> {
        match self {
            Input::Editor(editor) => editor.read().await,
            Input::Lines(lines) => Ok(match lines.next_line().await? {
                Some(line) => Read::Line(line),
                None => Read::Eof,
            }),
        }
    }

    /// Keeps `line` in the history (on a terminal; a no-op otherwise). Lines that answer a
    /// plugin's prompt are not kept: they may be secrets.
    pub(super) fn remember(&self, line: &str) {
        if let Input::Editor(editor) = self {
            let _ = editor.requests.send(Request::Remember(line.to_owned()));
        }
    }
}

/// What the loop asks of the editor's thread.
#[derive(Debug)]
enum Request {
    /// Read a line.
    Read,
    /// Add a line to the history and its file.
    Remember(String),
}

/// The line editor's thread and the channels to it.
#[derive(Debug)]
pub(super) struct EditorThread {
    requests: std::sync::mpsc::Sender<Request>,
    /// One reply per [`Request::Read`].
    replies: tokio::sync::mpsc::Receiver<Result<Read, ReadlineError>>,
    /// A read was asked for and its reply has not been taken yet.
    waiting: bool,
}

impl EditorThread {
    /// Starts the editor on stdin and stdout (both terminals), with the history in `history`
    /// (read now; written line by line) and completion from `names`; the prompt asks for an
    /// answer while `question` is set. Everything printed from now on goes through its printer.
    pub(super) fn start(
        history: PathBuf,
        names: Arc<Mutex<Names>>,
        question: Arc<AtomicBool>,
    ) -> anyhow::Result<EditorThread> {
        let config = Config::builder()
            .max_history_size(HISTORY_LINES)?
            .history_ignore_dups(true)?
            .history_ignore_space(true)
            .auto_add_history(false)
            .completion_type(rustyline::CompletionType::List)
            .build();
        let mut editor: Editor<Helper, FileHistory> = Editor::with_config(config)?;
        editor.set_helper(Some(Helper { names }));
        editor.bind_sequence(
            KeyEvent::ctrl('C'),
            EventHandler::Conditional(Box::new(CtrlCKey)),
        );
        // A missing file is a first run; an unreadable one only loses the history.
        if let Err(err) = editor.load_history(&history)
            && !matches!(&err, ReadlineError::Io(io) if io.kind() == std::io::ErrorKind::NotFound)
        {
            tracing::debug!("cannot read the history {}: {err}", history.display());
        }
        let printer = editor.create_external_printer()?;
        let terminal = Arc::new(Terminal::default());
        let printing = Arc::clone(&terminal);
        std::thread::Builder::new()
            .name("sidewire-terminal-printer".to_owned())
            .spawn(move || printing.printer(printer))?;
        let routed = Arc::clone(&terminal);
        crate::out::route_terminal(move |text| routed.print(text));
        let (requests, requested) = std::sync::mpsc::channel::<Request>();
        let (reply, replies) = tokio::sync::mpsc::channel(1);
        let prompt = LivePrompt(question);
        std::thread::Builder::new()
            .name("sidewire-line-editor".to_owned())
            .spawn(move || {
                while let Ok(request) = requested.recv() {
                    match request {
                        Request::Read => {
                            *crate::lock(&terminal.reading) = true;
                            let read = editor.readline(&prompt);
                            *crate::lock(&terminal.reading) = false;
                            let read = match read {
                                Ok(line) => Ok(Read::Line(line)),
                                Err(ReadlineError::Interrupted) => Ok(Read::Interrupted),
                                Err(ReadlineError::Eof) => Ok(Read::Eof),
                                Err(err) => Err(err),
                            };
                            if reply.blocking_send(read).is_err() {
                                break;
                            }
                        }
                        Request::Remember(line) => {
                            if editor.add_history_entry(line).unwrap_or(false)
                                && let Err(err) = editor.append_history(&history)
                            {
                                tracing::debug!(
                                    "cannot write the history {}: {err}",
                                    history.display()
                                );
                            }
                        }
                    }
                }
            })?;
        Ok(EditorThread {
            requests,
            replies,
            waiting: false,
        })
    }

    async fn read(&mut self) -> anyhow::Result<Read> {
        if !self.waiting {
            self.requests
                .send(Request::Read)
                .map_err(|_| anyhow::anyhow!("the line editor stopped"))?;
            self.waiting = true;
        }
        let reply = self.replies.recv().await;
        self.waiting = false;
        match reply {
            Some(read) => Ok(read?),
            None => anyhow::bail!("the line editor stopped"),
        }
    }
}

/// The most text held for the editor's printer, in bytes: it waits there while the editor
/// is busy (see [`Terminal`]). Text past it is dropped and counted, and the count is printed
/// with the next text.
pub(super) const HELD_OUTPUT: usize = 1 << 20;

/// Text waiting for the printer's thread.
#[derive(Debug, Default)]
struct Held {
    text: String,
    /// Bytes dropped since the last take.
    dropped: usize,
}

impl Held {
    fn push(&mut self, text: &str) {
        if self.text.len() + text.len() > HELD_OUTPUT {
            self.dropped += text.len();
        } else {
            self.text.push_str(text);
        }
    }

    /// Whether anything is held.
    #[cfg(test)]
    fn holds(&self) -> bool {
        !self.text.is_empty() || self.dropped > 0
    }

    /// Everything held, with a line counting what was dropped; `None` when nothing is.
    fn take(&mut self) -> Option<String> {
        if self.text.is_empty() && self.dropped == 0 {
            return None;
        }
        let mut text = std::mem::take(&mut self.text);
        if self.dropped > 0 {
            text.push_str(&format!(
                "({} bytes of output not shown: the terminal fell behind)\n",
                self.dropped
            ));
            self.dropped = 0;
        }
        Some(text)
    }
}

/// Where the CLI's terminal text goes while the line editor runs.
///
/// Between reads the text is written to stdout at once, by whoever prints it. During a read
/// it goes through the editor's printer (above the prompt, which is drawn again), but never
/// from the thread that prints it: that printer hands each text to the editor through a
/// one-slot channel that only a read in progress empties, so a text handed over just as a
/// read ends waits for the next read, and a second one would block its caller until then. A
/// caller that blocks there (a runtime thread, or the loop that must print before it asks
/// for the next read) hangs the session. So during a read the text is held here (bounded by
/// [`HELD_OUTPUT`]) and a thread of its own hands it over; at worst that thread, not the
/// session, waits for the next read.
#[derive(Debug, Default)]
struct Terminal {
    /// A read is in progress. Held (locked) while text is written to stdout directly, so a
    /// read does not start drawing its prompt in the middle of it.
    reading: Mutex<bool>,
    held: Mutex<Held>,
    /// Text was added to `held`.
    ready: std::sync::Condvar,
}

impl Terminal {
    /// Prints `text` (escaped, newline included); never waits for the editor.
    fn print(&self, text: &str) {
        let reading = crate::lock(&self.reading);
        if !*reading {
            write_stdout(text);
            return;
        }
        drop(reading);
        crate::lock(&self.held).push(text);
        self.ready.notify_one();
    }

    /// The printer's thread: hands held text to the editor's `printer`, or writes it to
    /// stdout when the read has ended meanwhile. Runs as long as the process.
    fn printer(&self, mut printer: impl rustyline::ExternalPrinter) {
        loop {
            let text = {
                let mut held = crate::lock(&self.held);
                loop {
                    if let Some(text) = held.take() {
                        break text;
                    }
                    held = self
                        .ready
                        .wait(held)
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                }
            };
            let reading = crate::lock(&self.reading);
            if !*reading {
                write_stdout(&text);
                continue;
            }
            drop(reading);
            // Outside a read (it may end meanwhile) the editor writes it to stdout itself.
            let _ = printer.print(text);
        }
    }
}

/// Writes `text` to stdout with the progress bar (if one is up) taken off the screen.
fn write_stdout(text: &str) {
    use std::io::Write as _;
    super::progress::suspend(|| {
        let mut stdout = std::io::stdout().lock();
        let _ = stdout.write_all(text.as_bytes());
        let _ = stdout.flush();
    });
}

/// Ctrl-C while editing: clears a line that has text, and interrupts at an empty one.
#[derive(Debug)]
struct CtrlCKey;

impl ConditionalEventHandler for CtrlCKey {
    fn handle(&self, _: &Event, _: RepeatCount, _: bool, ctx: &EventContext<'_>) -> Option<Cmd> {
        if ctx.line().is_empty() {
            Some(Cmd::Interrupt)
        } else {
            Some(Cmd::Kill(Movement::WholeBuffer))
        }
    }
}

/// Completion of commands, tool names and prompt names.
#[derive(Debug)]
struct Helper {
    names: Arc<Mutex<Names>>,
}

impl Helper {
    /// The candidates for the word that ends at `pos` and where it starts.
    fn candidates(&self, line: &str, pos: usize) -> (usize, Vec<String>) {
        let before = &line[..pos];
        let names = crate::lock(&self.names);
        let starting = |all: &mut dyn Iterator<Item = &str>, word: &str| -> Vec<String> {
            let mut found: Vec<String> = all
                .filter(|name| name.starts_with(word))
                .map(str::to_owned)
                .collect();
            found.sort();
            found.dedup();
            found
        };
        match before.split_once(char::is_whitespace) {
            // The first word: a command.
            None if before.starts_with('/') => {
                let mut all = COMMANDS
                    .iter()
                    .map(|c| c.0)
                    .chain(names.items.iter().map(String::as_str));
                (0, starting(&mut all, before))
            }
            None => (pos, Vec::new()),
            Some((command, rest)) => {
                let rest = rest.trim_start();
                if rest.contains(char::is_whitespace) {
                    return (pos, Vec::new());
                }
                let start = pos - rest.len();
                match command {
                    "/call" => (
                        start,
                        starting(&mut names.tools.iter().map(String::as_str), rest),
                    ),
                    "/help" => (
                        start,
                        starting(
                            &mut COMMANDS.iter().map(|c| c.0.trim_start_matches('/')),
                            rest,
                        ),
                    ),
                    _ => (pos, Vec::new()),
                }
            }
        }
    }
}

impl Completer for Helper {
    type Candidate = Pair;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _: &rustyline::Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        let (start, found) = self.candidates(line, pos);
        Ok((start, pairs(found)))
    }
}

/// The completion candidates as the editor takes them. Each completes a whole word, so its
/// replacement ends with a space: a unique candidate is inserted with it, ready for what
/// follows, and several insert only their common prefix (never the space, unless they are one).
fn pairs(found: Vec<String>) -> Vec<Pair> {
    found
        .into_iter()
        .map(|name| {
            // Names come from peers: what is shown and inserted is escaped.
            let display = crate::safe::line(&name).into_owned();
            let replacement = format!("{display} ");
            Pair {
                display,
                replacement,
            }
        })
        .collect()
}

impl Hinter for Helper {
    type Hint = String;
}

impl Highlighter for Helper {}

impl Validator for Helper {}

impl rustyline::Helper for Helper {}

#[cfg(test)]
mod tests {
    use super::*;

    fn helper() -> Helper {
        Helper {
            names: Arc::new(Mutex::new(Names {
                tools: vec![
                    "mcp__demo__echo".to_owned(),
                    "echo".to_owned(),
                    "mcp__demo__slow".to_owned(),
                    "slow".to_owned(),
                ],
                items: vec!["/demo:greet".to_owned(), "/sidewire-demo:greet".to_owned()],
            })),
        }
    }

    #[test]
    fn completes_commands_tools_and_help_topics() {
        let helper = helper();
        let complete = |line: &str| helper.candidates(line, line.len());
        assert_eq!(complete("/he"), (0, vec!["/help".to_owned()]), "a command");
        assert_eq!(
            complete("/s"),
            (
                0,
                vec!["/sidewire-demo:greet".to_owned(), "/submit".to_owned()]
            )
        );
        assert_eq!(complete("/call ec"), (6, vec!["echo".to_owned()]));
        assert_eq!(
            complete("/call  mcp__demo__"),
            (
                7,
                vec!["mcp__demo__echo".to_owned(), "mcp__demo__slow".to_owned()]
            )
        );
        assert_eq!(complete("/help ca"), (6, vec!["call".to_owned()]));
        // Arguments and plain text complete nothing.
        assert_eq!(complete("/call echo te").1, Vec::<String>::new());
        assert_eq!(complete("hello").1, Vec::<String>::new());
    }

    #[test]
    fn a_completed_word_is_followed_by_a_space_and_shown_without() {
        let pairs = pairs(vec!["/help".to_owned(), "evil\u{1b}[2J".to_owned()]);
        assert_eq!(pairs[0].replacement, "/help ");
        assert_eq!(pairs[0].display, "/help");
        assert_eq!(pairs[1].replacement, "evil\\x1b[2J ");
    }

    #[test]
    fn text_held_for_the_editor_is_bounded_and_what_is_dropped_is_counted() {
        let mut held = Held::default();
        assert_eq!(held.take(), None);
        held.push("one\n");
        held.push("two\n");
        assert_eq!(held.take().as_deref(), Some("one\ntwo\n"));
        assert_eq!(held.take(), None);
        let big = "x".repeat(HELD_OUTPUT - 1);
        held.push(&big);
        held.push("too much\n");
        held.push("!\n");
        let text = held.take().unwrap();
        assert!(text.starts_with(&big));
        assert!(text.ends_with("(11 bytes of output not shown: the terminal fell behind)\n"));
        assert_eq!(held.take(), None, "the count is said once");
    }

    #[test]
    fn outside_a_read_text_is_written_by_its_caller_and_during_one_it_is_held() {
        let terminal = Terminal::default();
        terminal.print("");
        assert_eq!(crate::lock(&terminal.held).take(), None);
        *crate::lock(&terminal.reading) = true;
        terminal.print("during\n");
        assert_eq!(
            crate::lock(&terminal.held).take().as_deref(),
            Some("during\n")
        );
    }

    /// An editor's printer that takes one text and then blocks, as the editor's does once
    /// its slot is taken and no read empties it.
    struct Stuck(std::sync::mpsc::SyncSender<String>);

    impl rustyline::ExternalPrinter for Stuck {
        fn print(&mut self, text: String) -> rustyline::Result<()> {
            let _ = self.0.send(text);
            Ok(())
        }
    }

    #[test]
    fn a_printer_stuck_in_the_editor_never_blocks_the_callers() {
        let terminal = Arc::new(Terminal::default());
        // A zero-capacity channel no one receives from blocks the printer's thread on its
        // first text, for good.
        let (stuck, _never_received) = std::sync::mpsc::sync_channel(0);
        let printing = Arc::clone(&terminal);
        std::thread::spawn(move || printing.printer(Stuck(stuck)));
        *crate::lock(&terminal.reading) = true;
        terminal.print("first\n");
        // Once the printer's thread has taken it, it is stuck handing it over.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while crate::lock(&terminal.held).holds() {
            assert!(
                std::time::Instant::now() < deadline,
                "the printer never took it"
            );
            std::thread::yield_now();
        }
        // Each call returns (the test would hang here if a caller handed its text to the
        // editor itself); the text is held for the printer.
        for _ in 0..100 {
            terminal.print("a line\n");
        }
        assert_eq!(crate::lock(&terminal.held).text, "a line\n".repeat(100));
    }

    #[test]
    fn the_prompt_asks_for_an_answer_while_a_question_waits_at_the_same_width() {
        assert_eq!(prompt_text(false), "sidewire> ");
        assert!(prompt_text(true).contains("answer"));
        assert_eq!(prompt_text(true).len(), prompt_text(false).len());
        let question = Arc::new(AtomicBool::new(false));
        let prompt = LivePrompt(Arc::clone(&question));
        assert_eq!(rustyline::Prompt::raw(&prompt), PROMPT);
        question.store(true, Ordering::SeqCst);
        assert_eq!(rustyline::Prompt::raw(&prompt), ANSWER_PROMPT);
    }
}
