//! The hook files users keep: where they are ([`Source`]), and what they say ([`Hook`]).
//!
//! Both dialects are the same JSON shape under a top-level `hooks` key:
//!
//! ```json
//! {"hooks": {"PreToolUse": [{"matcher": "Bash",
//!                            "hooks": [{"type": "command", "command": "./check.sh", "timeout": 30}]}]}}
//! ```
//!
//! Claude Code's files name the group's pattern `matcher`; the Reasonix host's
//! `.reasonix/settings.json` names it `match`. Every other top-level key is another setting of
//! the tool that owns the file, and is not read. Inside `hooks`, a key this crate does not know
//! is a [`Warning`] naming the file and its JSON path; a value of the wrong shape is an
//! [`Error`] naming both: a malformed file is never skipped in silence.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};
use sidewire_process::file::{self, Symlinks};

use crate::error::Error;
use crate::event::HookEvent;
use crate::matcher::Matcher;

/// The largest hook file read.
pub const MAX_FILE_BYTES: usize = 1024 * 1024;

/// The most hooks taken from one file.
pub const MAX_HOOKS_PER_FILE: usize = 256;

/// The longest `timeout` a hook may ask for (Claude Code's default is 60 s).
pub const MAX_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// Whose file it is, which decides whether its hooks run before the user approves them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Scope {
    /// The user's own (`~/.claude/settings.json`): its hooks run.
    User,
    /// A project's (`.claude/settings.json`, `.claude/settings.local.json`,
    /// `.reasonix/settings.json`): its hooks run only once the user approved them.
    Project,
}

/// The shape of a file: which key names a group's pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum HookDialect {
    /// Claude Code's `settings.json`: `matcher`.
    ClaudeCode,
    /// The Reasonix host's `.reasonix/settings.json`: `match`.
    Reasonix,
}

impl HookDialect {
    fn matcher_key(self) -> &'static str {
        match self {
            HookDialect::ClaudeCode => "matcher",
            HookDialect::Reasonix => "match",
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
    /// The files Claude Code and the Reasonix host read, in the order their hooks run:
    /// `HOME/.claude/settings.json`, then the project's `.claude/settings.json`,
    /// `.claude/settings.local.json` and `.reasonix/settings.json`.
    pub fn standard(home: &Path, project: &Path) -> Vec<Source> {
        let source = |path: PathBuf, scope, dialect| Source {
            path,
            scope,
            dialect,
        };
        vec![
            source(
                home.join(".claude/settings.json"),
                Scope::User,
                HookDialect::ClaudeCode,
            ),
            source(
                project.join(".claude/settings.json"),
                Scope::Project,
                HookDialect::ClaudeCode,
            ),
            source(
                project.join(".claude/settings.local.json"),
                Scope::Project,
                HookDialect::ClaudeCode,
            ),
            source(
                project.join(".reasonix/settings.json"),
                Scope::Project,
                HookDialect::Reasonix,
            ),
        ]
    }
}

/// One hook: a command run on an event, for the tools its matcher takes.
#[derive(Debug, Clone)]
pub struct Hook {
    /// The event it runs on.
    pub event: HookEvent,
    /// The tools it applies to (tool events only).
    pub matcher: Matcher,
    /// The command line, run by `sh -c`.
    pub command: String,
    /// Its own timeout (`timeout`, in seconds); `None` for the default.
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
/// `command`, an event with no point in sidewire's chain.
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

    /// Adds the hooks of one file's `text`.
    ///
    /// # Errors
    ///
    /// [`Error::is_malformed`], naming the file and the JSON path.
    pub fn add(&mut self, text: &str, source: Source) -> Result<(), Error> {
        let source = Arc::new(source);
        let malformed = |json_path: &str, message: String| Error::Malformed {
            path: source.path.clone(),
            json_path: json_path.to_owned(),
            message,
        };
        let root: Value =
            serde_json::from_str(text).map_err(|err| malformed("$", format!("not JSON: {err}")))?;
        let Value::Object(root) = root else {
            return Err(malformed("$", "not a JSON object".to_owned()));
        };
        let Some(hooks) = root.get("hooks") else {
            return Ok(());
        };
        let Value::Object(events) = hooks else {
            return Err(malformed("hooks", "not an object of events".to_owned()));
        };
        let mut taken = 0;
        for (name, groups) in events {
            let at = format!("hooks.{name}");
            let Some(event) = HookEvent::from_name(name) else {
                self.warn(
                    &source,
                    &at,
                    format!("{name:?} is not an event sidewire knows"),
                );
                continue;
            };
            let Value::Array(groups) = groups else {
                return Err(malformed(&at, "not an array of matcher groups".to_owned()));
            };
            if let Some(why) = event.unmapped_reason() {
                self.warn(&source, &at, format!("{name} hooks do not run here: {why}"));
                continue;
            }
            for (g, group) in groups.iter().enumerate() {
                let at = format!("{at}[{g}]");
                let Value::Object(group) = group else {
                    return Err(malformed(&at, "not an object".to_owned()));
                };
                let matcher = self.matcher(&source, &at, group, event)?;
                for key in group.keys() {
                    if key != "hooks" && key != source.dialect.matcher_key() {
                        self.warn(&source, &format!("{at}.{key}"), "unknown key".to_owned());
                    }
                }
                let commands = match group.get("hooks") {
                    Some(Value::Array(commands)) => commands.as_slice(),
                    Some(_) => {
                        return Err(malformed(
                            &format!("{at}.hooks"),
                            "not an array of hooks".to_owned(),
                        ));
                    }
                    None => &[],
                };
                for (h, command) in commands.iter().enumerate() {
                    let at = format!("{at}.hooks[{h}]");
                    let Some(hook) =
                        self.hook(&source, &at, command, event, &matcher, &malformed)?
                    else {
                        continue;
                    };
                    taken += 1;
                    if taken > MAX_HOOKS_PER_FILE {
                        return Err(malformed(
                            &at,
                            format!("more than {MAX_HOOKS_PER_FILE} hooks in one file"),
                        ));
                    }
                    self.hooks.push(hook);
                }
            }
        }
        Ok(())
    }

    fn matcher(
        &mut self,
        source: &Arc<Source>,
        at: &str,
        group: &Map<String, Value>,
        event: HookEvent,
    ) -> Result<Matcher, Error> {
        let key = source.dialect.matcher_key();
        let text = match group.get(key) {
            None | Some(Value::Null) => return Ok(Matcher::any()),
            Some(Value::String(text)) => text,
            Some(_) => {
                return Err(Error::Malformed {
                    path: source.path.clone(),
                    json_path: format!("{at}.{key}"),
                    message: "not a string".to_owned(),
                });
            }
        };
        if !event.matches_tools() && !text.is_empty() && text != "*" {
            self.warn(
                source,
                &format!("{at}.{key}"),
                format!("{event} hooks take no matcher here: they run on every {event}"),
            );
            return Ok(Matcher::any());
        }
        Matcher::new(text).map_err(|message| Error::Malformed {
            path: source.path.clone(),
            json_path: format!("{at}.{key}"),
            message,
        })
    }

    fn hook(
        &mut self,
        source: &Arc<Source>,
        at: &str,
        value: &Value,
        event: HookEvent,
        matcher: &Matcher,
        malformed: &impl Fn(&str, String) -> Error,
    ) -> Result<Option<Hook>, Error> {
        let Value::Object(fields) = value else {
            return Err(malformed(at, "not an object".to_owned()));
        };
        match fields.get("type") {
            Some(Value::String(kind)) if kind == "command" => {}
            Some(Value::String(kind)) => {
                self.warn(
                    source,
                    &format!("{at}.type"),
                    format!("{kind:?} hooks do not run here; only \"command\" hooks do"),
                );
                return Ok(None);
            }
            _ => {
                return Err(malformed(
                    &format!("{at}.type"),
                    "missing or not a string".to_owned(),
                ));
            }
        }
        let command = match fields.get("command") {
            Some(Value::String(command)) if !command.trim().is_empty() => command.clone(),
            _ => {
                return Err(malformed(
                    &format!("{at}.command"),
                    "missing, empty or not a string".to_owned(),
                ));
            }
        };
        let timeout = match fields.get("timeout") {
            None | Some(Value::Null) => None,
            Some(Value::Number(seconds)) => match seconds.as_f64() {
                Some(seconds) if seconds > 0.0 && seconds.is_finite() => {
                    Some(Duration::from_secs_f64(seconds).min(MAX_TIMEOUT))
                }
                _ => {
                    return Err(malformed(
                        &format!("{at}.timeout"),
                        "not a positive number of seconds".to_owned(),
                    ));
                }
            },
            Some(_) => {
                return Err(malformed(
                    &format!("{at}.timeout"),
                    "not a number of seconds".to_owned(),
                ));
            }
        };
        for key in fields.keys() {
            if !matches!(key.as_str(), "type" | "command" | "timeout") {
                self.warn(source, &format!("{at}.{key}"), "unknown key".to_owned());
            }
        }
        Ok(Some(Hook {
            event,
            matcher: matcher.clone(),
            command,
            timeout,
            source: Arc::clone(source),
            json_path: at.to_owned(),
        }))
    }

    fn warn(&mut self, source: &Source, json_path: &str, message: String) {
        let warning = Warning {
            path: source.path.clone(),
            json_path: json_path.to_owned(),
            message,
        };
        if !self.warnings.contains(&warning) {
            self.warnings.push(warning);
        }
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
