//! The hook files users keep: where they are ([`Source`]), and what they say ([`Hook`]).
//!
//! Every dialect is the same JSON shape under a top-level `hooks` key: events, each an array
//! of groups, each group a matcher and its command hooks.
//!
//! ```json
//! {"hooks": {"PreToolUse": [{"matcher": "Bash",
//!                            "hooks": [{"type": "command", "command": "./check.sh", "timeout": 30}]}]}}
//! ```
//!
//! What differs is read per [`HookDialect`]: the event names (Gemini CLI's `BeforeTool` is
//! Claude Code's `PreToolUse`), the matcher's key and rule, the unit of `timeout`, and the keys
//! each tool adds. Every other top-level key is another setting of the tool that owns the file,
//! and is not read (but for Gemini CLI's `hooksConfig`, which turns hooks off). Inside `hooks`,
//! a key this crate does not know is a [`Warning`] naming the file and its JSON path, and so is
//! a documented key whose meaning sidewire does not honour (Gemini CLI's `sequential: true`);
//! a value of the wrong shape is an [`Error`] naming both: a malformed file is never skipped in
//! silence.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};
use sidewire_process::file::{self, Symlinks};

use crate::error::Error;
use crate::event::HookEvent;
use crate::matcher::{MatchRule, Matcher};

/// The largest hook file read.
pub const MAX_FILE_BYTES: usize = 1024 * 1024;

/// The most hooks taken from one file.
pub const MAX_HOOKS_PER_FILE: usize = 256;

/// The longest `timeout` a hook may ask for (Claude Code's default is 60 s).
pub const MAX_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// A Codex hook's timeout when it gives none: `timeout_sec.unwrap_or(600)` in Codex's
/// `codex-rs/hooks/src/engine/discovery.rs`.
const CODEX_DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// Whose file it is, which decides whether its hooks run before the user approves them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Scope {
    /// The user's own (`~/.claude/settings.json`, `~/.gemini/settings.json`,
    /// `~/.codex/hooks.json`): its hooks run.
    User,
    /// A project's (`.claude/settings.json`, `.claude/settings.local.json`,
    /// `.reasonix/settings.json`, `.gemini/settings.json`, `.codex/hooks.json`): its hooks run
    /// only once the user approved them.
    Project,
}

/// The shape of a file: which tool wrote it, so how its events, matchers and timeouts read.
///
/// | dialect | events | matcher | `timeout` | keys of its own |
/// |---|---|---|---|---|
/// | [`ClaudeCode`](Self::ClaudeCode) | Claude Code's | `matcher`, anchored regex | seconds | |
/// | [`Reasonix`](Self::Reasonix) | Claude Code's | `match`, anchored regex | seconds | |
/// | [`GeminiCli`](Self::GeminiCli) | `BeforeTool`, ... (mapped) | `matcher`, searched | milliseconds | `sequential`, `name`, `description` |
/// | [`Codex`](Self::Codex) | Claude Code's, and a few more | `matcher`, exact or searched | whole seconds (600 s unset) | `statusMessage`, `commandWindows`, `async`, `additionalContextLimit` |
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum HookDialect {
    /// Claude Code's `settings.json`: the group's pattern is `matcher`.
    ClaudeCode,
    /// The Reasonix host's `.reasonix/settings.json`: Claude Code's shape, the pattern is
    /// `match`.
    Reasonix,
    /// Gemini CLI's `settings.json` (`~/.gemini/settings.json`, `.gemini/settings.json`; its
    /// `docs/hooks/reference.md`): events named `BeforeTool`, `AfterTool`, `BeforeAgent`,
    /// `AfterAgent`, `SessionStart`, `SessionEnd`, `PreCompress`, `Notification`,
    /// `BeforeModel`, `AfterModel` and `BeforeToolSelection`, read as Claude Code's
    /// `PreToolUse`, `PostToolUse`, `UserPromptSubmit`, `Stop`, `SessionStart`, `SessionEnd`,
    /// `PreCompact` and `Notification` (the model events have none, and are warned about);
    /// `timeout` in milliseconds (60 000 unset); the matcher trimmed and searched for in the
    /// tool name (a pattern that does not compile is the exact name); a group's `sequential`,
    /// a hook's `name` and `description`; `//` and `/* */` comments; and `hooksConfig`
    /// (`enabled: false`, `disabled` names), applied to the file's own hooks.
    GeminiCli,
    /// Codex's `hooks.json` (`~/.codex/hooks.json`, `.codex/hooks.json`;
    /// <https://developers.openai.com/codex/hooks>): Claude Code's event names, plus
    /// `PostCompact`, `SubagentStart` and `Interrupt` (which have no counterpart, and are
    /// warned about); `timeout` in whole seconds (600 unset, 0 is 1); a matcher of letters,
    /// digits, `_` and `|` compared exactly, any other searched for (one that does not compile
    /// leaves its group out, with a warning, as Codex does); a hook's `statusMessage`,
    /// `commandWindows`, `async` and `additionalContextLimit`.
    Codex,
}

/// What an event name of a dialect is read as.
#[derive(Debug, Clone, Copy)]
enum Counterpart {
    /// That Claude Code event.
    Event(HookEvent),
    /// None: hooks of it do not run here, for this reason.
    None(&'static str),
}

/// Gemini CLI's events (`HookEventName` in `packages/core/src/hooks/types.ts`), with the
/// Claude Code event each is, as Gemini CLI's own `hooks migrate --from-claude` maps them
/// (`packages/cli/src/commands/hooks/migrate.ts`).
const GEMINI_EVENTS: &[(&str, Counterpart)] = &[
    ("BeforeTool", Counterpart::Event(HookEvent::PreToolUse)),
    ("AfterTool", Counterpart::Event(HookEvent::PostToolUse)),
    (
        "BeforeAgent",
        Counterpart::Event(HookEvent::UserPromptSubmit),
    ),
    ("AfterAgent", Counterpart::Event(HookEvent::Stop)),
    ("SessionStart", Counterpart::Event(HookEvent::SessionStart)),
    ("SessionEnd", Counterpart::Event(HookEvent::SessionEnd)),
    ("PreCompress", Counterpart::Event(HookEvent::PreCompact)),
    ("Notification", Counterpart::Event(HookEvent::Notification)),
    (
        "BeforeModel",
        Counterpart::None(
            "it rewrites or answers the request to the model, which no Claude Code event does; \
             sidewire's provider.request point takes no command hooks",
        ),
    ),
    (
        "AfterModel",
        Counterpart::None(
            "it rewrites the model's response, which no Claude Code event does; sidewire's \
             provider.response point takes no command hooks",
        ),
    ),
    (
        "BeforeToolSelection",
        Counterpart::None(
            "it filters the tools offered to the model, which no Claude Code event does",
        ),
    ),
];

/// Codex's events (`HookEventsToml` in `codex-rs/config/src/hook_config.rs`).
const CODEX_EVENTS: &[(&str, Counterpart)] = &[
    ("PreToolUse", Counterpart::Event(HookEvent::PreToolUse)),
    (
        "PermissionRequest",
        Counterpart::Event(HookEvent::PermissionRequest),
    ),
    ("PostToolUse", Counterpart::Event(HookEvent::PostToolUse)),
    ("PreCompact", Counterpart::Event(HookEvent::PreCompact)),
    ("SessionStart", Counterpart::Event(HookEvent::SessionStart)),
    ("SessionEnd", Counterpart::Event(HookEvent::SessionEnd)),
    (
        "UserPromptSubmit",
        Counterpart::Event(HookEvent::UserPromptSubmit),
    ),
    ("SubagentStop", Counterpart::Event(HookEvent::SubagentStop)),
    ("Stop", Counterpart::Event(HookEvent::Stop)),
    (
        "PostCompact",
        Counterpart::None(
            "it runs after compaction, which no Claude Code event sidewire reads does; \
             sidewire's compaction.complete point takes no command hooks",
        ),
    ),
    (
        "SubagentStart",
        Counterpart::None("sidewire runs no subagents"),
    ),
    (
        "Interrupt",
        Counterpart::None(
            "it runs when the user interrupts a turn, which no Claude Code event does and no \
             point of sidewire's chain marks",
        ),
    ),
];

/// Keys of `hooks` Gemini CLI skips as settings rather than events (`HOOKS_CONFIG_FIELDS`);
/// it reads them from `hooksConfig`.
const GEMINI_HOOKS_CONFIG_FIELDS: &[&str] = &["enabled", "disabled", "notifications"];

/// The unit a dialect's `timeout` is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TimeoutUnit {
    /// A positive number of seconds (Claude Code).
    Seconds,
    /// A positive number of milliseconds (Gemini CLI).
    Milliseconds,
    /// A whole number of seconds, 0 read as 1 (Codex: `u64`, then `.max(1)`).
    WholeSeconds,
}

impl HookDialect {
    /// The tool whose file it is, for messages.
    fn tool(self) -> &'static str {
        match self {
            HookDialect::ClaudeCode => "Claude Code",
            HookDialect::Reasonix => "the Reasonix host",
            HookDialect::GeminiCli => "Gemini CLI",
            HookDialect::Codex => "Codex",
        }
    }

    fn matcher_key(self) -> &'static str {
        match self {
            HookDialect::Reasonix => "match",
            HookDialect::ClaudeCode | HookDialect::GeminiCli | HookDialect::Codex => "matcher",
        }
    }

    fn match_rule(self) -> MatchRule {
        match self {
            HookDialect::ClaudeCode | HookDialect::Reasonix => MatchRule::Anchored,
            HookDialect::GeminiCli => MatchRule::Search,
            HookDialect::Codex => MatchRule::ExactOrSearch,
        }
    }

    fn timeout_unit(self) -> TimeoutUnit {
        match self {
            HookDialect::ClaudeCode | HookDialect::Reasonix => TimeoutUnit::Seconds,
            HookDialect::GeminiCli => TimeoutUnit::Milliseconds,
            HookDialect::Codex => TimeoutUnit::WholeSeconds,
        }
    }

    /// The dialect's table of events, or `None` for Claude Code's own names.
    fn events(self) -> Option<&'static [(&'static str, Counterpart)]> {
        match self {
            HookDialect::ClaudeCode | HookDialect::Reasonix => None,
            HookDialect::GeminiCli => Some(GEMINI_EVENTS),
            HookDialect::Codex => Some(CODEX_EVENTS),
        }
    }

    /// What the event `name` of a file of this dialect is read as; `None` for a name the
    /// dialect does not have.
    fn counterpart(self, name: &str) -> Option<Counterpart> {
        match self.events() {
            None => HookEvent::from_name(name).map(Counterpart::Event),
            Some(events) => events
                .iter()
                .find(|(known, _)| *known == name)
                .map(|(_, counterpart)| *counterpart),
        }
    }

    /// The name this dialect gives `event`: the `hook_event_name` its hooks expect on stdin
    /// (`BeforeTool` for a Gemini CLI hook of [`HookEvent::PreToolUse`]). `None` when the
    /// dialect has no such event (Gemini CLI has no `PermissionRequest`, Codex no
    /// `Notification`).
    pub fn event_name(self, event: HookEvent) -> Option<&'static str> {
        match self.events() {
            None => Some(event.name()),
            Some(events) => events
                .iter()
                .find_map(|(name, counterpart)| match counterpart {
                    Counterpart::Event(known) if *known == event => Some(*name),
                    _ => None,
                }),
        }
    }

    /// The environment variables a hook of this dialect finds the project's root in, which a
    /// run sets: `CLAUDE_PROJECT_DIR` for Claude Code and the Reasonix host;
    /// `GEMINI_PROJECT_DIR`, `GEMINI_CWD` and (Gemini CLI's alias) `CLAUDE_PROJECT_DIR` for
    /// Gemini CLI (`hookRunner.ts`); none for Codex, whose hooks get the project only as their
    /// working directory and the input's `cwd`.
    pub fn project_dir_env(self) -> &'static [&'static str] {
        match self {
            HookDialect::ClaudeCode | HookDialect::Reasonix => &["CLAUDE_PROJECT_DIR"],
            HookDialect::GeminiCli => &["GEMINI_PROJECT_DIR", "GEMINI_CWD", "CLAUDE_PROJECT_DIR"],
            HookDialect::Codex => &[],
        }
    }
}

/// One hook file: where it is, whose it is, and its dialect.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Source {
    /// The file.
    pub path: PathBuf,
    /// Whose it is.
    pub scope: Scope,
    /// Its shape.
    pub dialect: HookDialect,
}

impl Source {
    /// The files Claude Code, Gemini CLI, Codex and the Reasonix host read, in the order their
    /// hooks run here: the user's (`HOME/.claude/settings.json`, `HOME/.gemini/settings.json`,
    /// `HOME/.codex/hooks.json`), then the project's (`.claude/settings.json`,
    /// `.claude/settings.local.json`, `.reasonix/settings.json`, `.gemini/settings.json`,
    /// `.codex/hooks.json`). A project file that is also the user's (the project is the home
    /// directory) is listed once, as the user's, as Gemini CLI does.
    ///
    /// Not listed: Gemini CLI's system files (`/etc/gemini-cli/settings.json`,
    /// `system-defaults.json`), Codex's `config.toml` `[hooks]` tables and `CODEX_HOME`, and
    /// the hooks extensions and plugins bring.
    pub fn standard(home: &Path, project: &Path) -> Vec<Source> {
        let user = [
            (".claude/settings.json", HookDialect::ClaudeCode),
            (".gemini/settings.json", HookDialect::GeminiCli),
            (".codex/hooks.json", HookDialect::Codex),
        ];
        let projects = [
            (".claude/settings.json", HookDialect::ClaudeCode),
            (".claude/settings.local.json", HookDialect::ClaudeCode),
            (".reasonix/settings.json", HookDialect::Reasonix),
            (".gemini/settings.json", HookDialect::GeminiCli),
            (".codex/hooks.json", HookDialect::Codex),
        ];
        let mut sources: Vec<Source> = user
            .into_iter()
            .map(|(file, dialect)| Source {
                path: home.join(file),
                scope: Scope::User,
                dialect,
            })
            .collect();
        for (file, dialect) in projects {
            let path = project.join(file);
            if !sources.iter().any(|source| source.path == path) {
                sources.push(Source {
                    path,
                    scope: Scope::Project,
                    dialect,
                });
            }
        }
        sources
    }
}

/// One hook: a command run on an event, for the tools its matcher takes.
#[derive(Debug, Clone)]
pub struct Hook {
    /// The event it runs on (the Claude Code event its dialect's event is).
    pub event: HookEvent,
    /// The tools it applies to (tool events only).
    pub matcher: Matcher,
    /// The command line, run by `sh -c`.
    pub command: String,
    /// Its own timeout (`timeout`, in its dialect's unit; a Codex hook without one has Codex's
    /// 600 s); `None` for the run's default.
    pub timeout: Option<Duration>,
    /// The file it came from.
    pub source: Arc<Source>,
    /// Where in the file: `hooks.PreToolUse[0].hooks[1]`.
    pub json_path: String,
}

impl Hook {
    /// Whether it runs on `event` for the tool `tool` (`None` for an event of no tool).
    pub fn applies(&self, event: HookEvent, tool: Option<&str>) -> bool {
        self.event == event
            && match tool {
                Some(tool) if event.matches_tools() => self.matcher.matches(tool),
                _ => true,
            }
    }
}

/// Something a hook file says that is not read: a key unknown here, a hook type other than
/// `command`, an event with no point in sidewire's chain, a documented key sidewire does not
/// honour.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// The file.
    pub path: PathBuf,
    /// Where in it.
    pub json_path: String,
    /// What is not read, and why.
    pub message: String,
}

/// What the hook files say: every hook in order, and what was not read.
#[derive(Debug, Clone, Default)]
pub struct HookFiles {
    /// Every hook, in file order, then the order within each file.
    pub hooks: Vec<Hook>,
    /// What was not read, each said once.
    pub warnings: Vec<Warning>,
}

impl HookFiles {
    /// Reads every file of `sources` that exists (bounded, regular files only; a link is
    /// followed, as the user's dotfiles often are links).
    ///
    /// # Errors
    ///
    /// [`Error::is_file`]: a file could not be read; [`Error::is_malformed`]: one is not JSON,
    /// or a value has the wrong shape (the error names the file and the JSON path).
    pub fn read(sources: &[Source]) -> Result<HookFiles, Error> {
        let mut files = HookFiles::default();
        for source in sources {
            let text = match file::read_to_string(&source.path, MAX_FILE_BYTES, Symlinks::Follow) {
                Ok(text) => text,
                Err(err) if err.is_not_found() => continue,
                Err(err) => return Err(Error::File(err)),
            };
            files.add(&text, source.clone())?;
        }
        Ok(files)
    }

    /// Adds the hooks of one file's `text`, read in its source's dialect.
    ///
    /// # Errors
    ///
    /// [`Error::is_malformed`], naming the file and the JSON path.
    pub fn add(&mut self, text: &str, source: Source) -> Result<(), Error> {
        let mut file = FileReader {
            files: self,
            source: Arc::new(source),
            disabled: Vec::new(),
            taken: 0,
        };
        file.read(text)
    }

    /// The hooks that run on `event` for the tool `tool`, in order.
    pub fn matching<'a>(
        &'a self,
        event: HookEvent,
        tool: Option<&'a str>,
    ) -> impl Iterator<Item = &'a Hook> + 'a {
        self.hooks
            .iter()
            .filter(move |hook| hook.applies(event, tool))
    }
}

/// The reading of one file into [`HookFiles`].
struct FileReader<'a> {
    files: &'a mut HookFiles,
    source: Arc<Source>,
    /// Gemini CLI's `hooksConfig.disabled`: the names (or commands) of hooks not to read.
    disabled: Vec<String>,
    /// The hooks taken from this file so far.
    taken: usize,
}

impl FileReader<'_> {
    fn dialect(&self) -> HookDialect {
        self.source.dialect
    }

    fn malformed(&self, json_path: &str, message: impl Into<String>) -> Error {
        Error::Malformed {
            path: self.source.path.clone(),
            json_path: json_path.to_owned(),
            message: message.into(),
        }
    }

    fn warn(&mut self, json_path: &str, message: impl Into<String>) {
        let warning = Warning {
            path: self.source.path.clone(),
            json_path: json_path.to_owned(),
            message: message.into(),
        };
        if !self.files.warnings.contains(&warning) {
            self.files.warnings.push(warning);
        }
    }

    fn read(&mut self, text: &str) -> Result<(), Error> {
        // Gemini CLI reads its settings through `strip-json-comments`.
        let text = if self.dialect() == HookDialect::GeminiCli {
            Cow::Owned(strip_comments(text))
        } else {
            Cow::Borrowed(text)
        };
        let root: Value = serde_json::from_str(&text)
            .map_err(|err| self.malformed("$", format!("not JSON: {err}")))?;
        let Value::Object(root) = root else {
            return Err(self.malformed("$", "not a JSON object"));
        };
        if self.dialect() == HookDialect::GeminiCli && !self.gemini_hooks_config(&root)? {
            return Ok(());
        }
        let Some(hooks) = root.get("hooks") else {
            return Ok(());
        };
        let Value::Object(events) = hooks else {
            return Err(self.malformed("hooks", "not an object of events"));
        };
        for (name, groups) in events {
            self.event(name, groups)?;
        }
        Ok(())
    }

    /// Gemini CLI's `hooksConfig`: whether the file's hooks are on (`enabled`), and the names
    /// of those that are off (`disabled`). Gemini CLI merges these over all its settings files;
    /// here each file's apply to its own hooks.
    fn gemini_hooks_config(&mut self, root: &Map<String, Value>) -> Result<bool, Error> {
        let Some(config) = root.get("hooksConfig") else {
            return Ok(true);
        };
        let Value::Object(config) = config else {
            return Err(self.malformed("hooksConfig", "not an object"));
        };
        let mut enabled = true;
        for (key, value) in config {
            let at = format!("hooksConfig.{key}");
            match key.as_str() {
                "enabled" | "notifications" => {
                    let Value::Bool(on) = value else {
                        return Err(self.malformed(&at, "not a boolean"));
                    };
                    if key == "enabled" {
                        enabled = *on;
                    }
                }
                "disabled" => {
                    let Value::Array(names) = value else {
                        return Err(self.malformed(&at, "not an array of hook names"));
                    };
                    for (n, name) in names.iter().enumerate() {
                        let Value::String(name) = name else {
                            return Err(self.malformed(&format!("{at}[{n}]"), "not a string"));
                        };
                        self.disabled.push(name.clone());
                    }
                }
                _ => self.warn(&at, "unknown key"),
            }
        }
        if !enabled && root.contains_key("hooks") {
            self.warn(
                "hooksConfig.enabled",
                "Gemini CLI's hooks are turned off in this file: its hooks are not read",
            );
        }
        Ok(enabled)
    }

    fn event(&mut self, name: &str, groups: &Value) -> Result<(), Error> {
        let at = format!("hooks.{name}");
        let dialect = self.dialect();
        if dialect == HookDialect::GeminiCli && GEMINI_HOOKS_CONFIG_FIELDS.contains(&name) {
            self.warn(
                &at,
                format!("Gemini CLI reads this setting from hooksConfig.{name}: not read"),
            );
            return Ok(());
        }
        let Some(counterpart) = dialect.counterpart(name) else {
            let message = match dialect {
                HookDialect::ClaudeCode | HookDialect::Reasonix => {
                    format!("{name:?} is not an event sidewire knows")
                }
                HookDialect::GeminiCli | HookDialect::Codex => {
                    format!("{name:?} is not a {} event", dialect.tool())
                }
            };
            self.warn(&at, message);
            return Ok(());
        };
        let Value::Array(groups) = groups else {
            return Err(self.malformed(&at, "not an array of matcher groups"));
        };
        let event = match counterpart {
            Counterpart::None(why) => {
                self.warn(&at, format!("{name} hooks do not run here: {why}"));
                return Ok(());
            }
            Counterpart::Event(event) => event,
        };
        if let Some(why) = event.unmapped_reason() {
            let message = if name == event.name() {
                format!("{name} hooks do not run here: {why}")
            } else {
                format!("{name} hooks (Claude Code's {event}) do not run here: {why}")
            };
            self.warn(&at, message);
            return Ok(());
        }
        for (g, group) in groups.iter().enumerate() {
            self.group(&format!("{at}[{g}]"), group, event)?;
        }
        Ok(())
    }

    fn group(&mut self, at: &str, group: &Value, event: HookEvent) -> Result<(), Error> {
        let Value::Object(group) = group else {
            return Err(self.malformed(at, "not an object"));
        };
        let dialect = self.dialect();
        let Some(matcher) = self.matcher(at, group, event)? else {
            return Ok(());
        };
        for (key, value) in group {
            let at = format!("{at}.{key}");
            match (dialect, key.as_str()) {
                (_, "hooks") => {}
                (_, key) if key == dialect.matcher_key() => {}
                (HookDialect::GeminiCli, "sequential") => match value {
                    Value::Bool(false) => {}
                    Value::Bool(true) => self.warn(
                        &at,
                        "not honoured: Gemini CLI runs such a group's hooks one after another, \
                         each given the input the one before rewrote; here each hook is given \
                         the event's input",
                    ),
                    _ => return Err(self.malformed(&at, "not a boolean")),
                },
                _ => self.warn(&at, "unknown key"),
            }
        }
        let commands = match group.get("hooks") {
            Some(Value::Array(commands)) => commands.as_slice(),
            Some(_) => {
                return Err(self.malformed(&format!("{at}.hooks"), "not an array of hooks"));
            }
            None => &[],
        };
        for (h, command) in commands.iter().enumerate() {
            let at = format!("{at}.hooks[{h}]");
            let Some(hook) = self.hook(&at, command, event, &matcher)? else {
                continue;
            };
            self.taken += 1;
            if self.taken > MAX_HOOKS_PER_FILE {
                return Err(self.malformed(
                    &at,
                    format!("more than {MAX_HOOKS_PER_FILE} hooks in one file"),
                ));
            }
            self.files.hooks.push(hook);
        }
        Ok(())
    }

    /// The group's matcher; `None` when the group is left out (a Codex pattern that does not
    /// compile, which Codex skips with a warning).
    fn matcher(
        &mut self,
        at: &str,
        group: &Map<String, Value>,
        event: HookEvent,
    ) -> Result<Option<Matcher>, Error> {
        let dialect = self.dialect();
        let key = dialect.matcher_key();
        let at = format!("{at}.{key}");
        let text = match group.get(key) {
            None | Some(Value::Null) => return Ok(Some(Matcher::any())),
            Some(Value::String(text)) => text,
            Some(_) => return Err(self.malformed(&at, "not a string")),
        };
        let every = match dialect.match_rule() {
            MatchRule::Search => matches!(text.trim(), "" | "*"),
            MatchRule::Anchored | MatchRule::ExactOrSearch => matches!(text.as_str(), "" | "*"),
        };
        if !event.matches_tools() && !every {
            self.warn(
                &at,
                format!("{event} hooks take no matcher here: they run on every {event}"),
            );
            return Ok(Some(Matcher::any()));
        }
        match Matcher::read(text, dialect.match_rule()) {
            Ok(read) => {
                if let Some(why) = read.fell_back {
                    self.warn(
                        &at,
                        format!(
                            "not a regular expression sidewire reads ({why}): matched as the \
                             exact tool name, as Gemini CLI does with a pattern it cannot compile"
                        ),
                    );
                }
                Ok(Some(read.matcher))
            }
            Err(why) if dialect == HookDialect::Codex => {
                self.warn(
                    &at,
                    format!("{why}: the group's hooks are not read, as Codex skips them"),
                );
                Ok(None)
            }
            Err(why) => Err(self.malformed(&at, why)),
        }
    }

    fn hook(
        &mut self,
        at: &str,
        value: &Value,
        event: HookEvent,
        matcher: &Matcher,
    ) -> Result<Option<Hook>, Error> {
        let Value::Object(fields) = value else {
            return Err(self.malformed(at, "not an object"));
        };
        match fields.get("type") {
            Some(Value::String(kind)) if kind == "command" => {}
            Some(Value::String(kind)) => {
                self.warn(
                    &format!("{at}.type"),
                    format!("{kind:?} hooks do not run here; only \"command\" hooks do"),
                );
                return Ok(None);
            }
            _ => {
                return Err(self.malformed(&format!("{at}.type"), "missing or not a string"));
            }
        }
        let command = match fields.get("command") {
            Some(Value::String(command)) if !command.trim().is_empty() => command.clone(),
            _ => {
                return Err(
                    self.malformed(&format!("{at}.command"), "missing, empty or not a string")
                );
            }
        };
        let timeout = self.timeout(&format!("{at}.timeout"), fields.get("timeout"))?;
        let mut name = None;
        for (key, value) in fields {
            let at = format!("{at}.{key}");
            if !self.hook_key(&at, key, value)? {
                self.warn(&at, "unknown key");
            }
            if key == "name" {
                name = value.as_str();
            }
        }
        // Gemini CLI's `hooksConfig.disabled` names a hook by its `name`, else its command.
        let called = name.unwrap_or(command.as_str());
        if self.disabled.iter().any(|off| off == called) {
            self.warn(
                at,
                format!("{called:?} is in hooksConfig.disabled: Gemini CLI does not run it"),
            );
            return Ok(None);
        }
        Ok(Some(Hook {
            event,
            matcher: matcher.clone(),
            command,
            timeout,
            source: Arc::clone(&self.source),
            json_path: at.to_owned(),
        }))
    }

    /// Whether `key` is a key of a hook in this dialect (checking its value, and warning when
    /// sidewire does not honour it); `false` for a key unknown here.
    fn hook_key(&mut self, at: &str, key: &str, value: &Value) -> Result<bool, Error> {
        let string = |reader: &Self| match value {
            Value::String(_) => Ok(true),
            _ => Err(reader.malformed(at, "not a string")),
        };
        match (self.dialect(), key) {
            (_, "type" | "command" | "timeout") => Ok(true),
            (HookDialect::GeminiCli, "name" | "description") => string(self),
            // In Gemini CLI's source (`CommandHookConfig.env`), not in its docs.
            (HookDialect::GeminiCli, "env") => {
                self.warn(
                    at,
                    "not honoured: the hook runs without these variables, which Gemini CLI \
                     would set",
                );
                Ok(true)
            }
            // The Windows command: sidewire runs `command` through `sh`, as Codex does off
            // Windows.
            (HookDialect::Codex, "statusMessage" | "commandWindows" | "command_windows") => {
                string(self)
            }
            (HookDialect::Codex, "async") => match value {
                Value::Bool(false) => Ok(true),
                Value::Bool(true) => {
                    self.warn(
                        at,
                        "not honoured: Codex runs an async hook without waiting for it; here \
                         it is waited for and its answer read like any other",
                    );
                    Ok(true)
                }
                _ => Err(self.malformed(at, "not a boolean")),
            },
            (HookDialect::Codex, "additionalContextLimit") => match value.as_u64() {
                Some(_) => {
                    self.warn(
                        at,
                        "not honoured: Codex spills a longer additionalContext to a file; here \
                         it is kept whole",
                    );
                    Ok(true)
                }
                None => Err(self.malformed(at, "not a whole number of tokens")),
            },
            _ => Ok(false),
        }
    }

    /// A hook's `timeout`, in its dialect's unit, at most [`MAX_TIMEOUT`].
    fn timeout(&self, at: &str, value: Option<&Value>) -> Result<Option<Duration>, Error> {
        let unit = self.dialect().timeout_unit();
        let number = match value {
            None | Some(Value::Null) if unit == TimeoutUnit::WholeSeconds => {
                return Ok(Some(CODEX_DEFAULT_TIMEOUT));
            }
            None | Some(Value::Null) => return Ok(None),
            Some(Value::Number(number)) => number,
            Some(_) => {
                let what = match unit {
                    TimeoutUnit::Seconds | TimeoutUnit::WholeSeconds => "not a number of seconds",
                    TimeoutUnit::Milliseconds => "not a number of milliseconds",
                };
                return Err(self.malformed(at, what));
            }
        };
        let positive = number.as_f64().filter(|n| *n > 0.0 && n.is_finite());
        let timeout = match unit {
            TimeoutUnit::Seconds => positive
                .map(Duration::from_secs_f64)
                .ok_or("not a positive number of seconds"),
            // Rounded to the nanosecond, so 30 ms is 30 ms, not 29.999... (the cast saturates;
            // the cap below cuts it).
            TimeoutUnit::Milliseconds => positive
                .map(|ms| Duration::from_nanos((ms * 1_000_000.0).round() as u64))
                .ok_or("not a positive number of milliseconds"),
            TimeoutUnit::WholeSeconds => number
                .as_u64()
                .map(|seconds| Duration::from_secs(seconds.max(1)))
                .ok_or("not a whole number of seconds"),
        };
        timeout
            .map(|timeout| Some(timeout.min(MAX_TIMEOUT)))
            .map_err(|why| self.malformed(at, why))
    }
}

/// `text` with its `//` and `/* */` comments outside strings blanked (newlines kept, so a
/// parse error's line and column still point into the file), as Gemini CLI's
/// `strip-json-comments` reads its settings.
fn strip_comments(text: &str) -> String {
    #[derive(PartialEq)]
    enum In {
        Code,
        String,
        Escape,
        Line,
        Block,
    }
    let mut out = String::with_capacity(text.len());
    let mut state = In::Code;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let blank = |c: char| if c == '\n' || c == '\r' { c } else { ' ' };
        match state {
            In::Code => match (c, chars.peek()) {
                ('"', _) => {
                    state = In::String;
                    out.push(c);
                }
                ('/', Some('/')) => {
                    chars.next();
                    state = In::Line;
                    out.push_str("  ");
                }
                ('/', Some('*')) => {
                    chars.next();
                    state = In::Block;
                    out.push_str("  ");
                }
                _ => out.push(c),
            },
            In::String => {
                state = match c {
                    '\\' => In::Escape,
                    '"' => In::Code,
                    _ => In::String,
                };
                out.push(c);
            }
            In::Escape => {
                state = In::String;
                out.push(c);
            }
            In::Line => {
                if c == '\n' {
                    state = In::Code;
                }
                out.push(blank(c));
            }
            In::Block => {
                if c == '*' && chars.peek() == Some(&'/') {
                    chars.next();
                    state = In::Code;
                    out.push_str("  ");
                } else {
                    out.push(blank(c));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_are_blanked_outside_strings_only() {
        let text = "{\"a\": \"x // y /* z */\", // note\n \"b\": /* one */ 1}";
        let value: Value = serde_json::from_str(&strip_comments(text)).unwrap();
        assert_eq!(value, serde_json::json!({"a": "x // y /* z */", "b": 1}));
        assert_eq!(strip_comments(text).len(), text.len(), "positions are kept");
        let escaped = r#"{"a": "q\"// not a comment"}"#;
        assert_eq!(strip_comments(escaped), escaped);
    }

    #[test]
    fn every_mapped_event_reads_back_by_its_dialect_name() {
        for dialect in [
            HookDialect::ClaudeCode,
            HookDialect::Reasonix,
            HookDialect::GeminiCli,
            HookDialect::Codex,
        ] {
            for event in HookEvent::ALL {
                if let Some(name) = dialect.event_name(event) {
                    assert!(
                        matches!(dialect.counterpart(name), Some(Counterpart::Event(e)) if e == event),
                        "{dialect:?} {event} {name}"
                    );
                }
            }
        }
        assert_eq!(
            HookDialect::GeminiCli.event_name(HookEvent::PreToolUse),
            Some("BeforeTool")
        );
        assert_eq!(
            HookDialect::GeminiCli.event_name(HookEvent::PermissionRequest),
            None
        );
        assert_eq!(HookDialect::Codex.event_name(HookEvent::Notification), None);
    }
}
