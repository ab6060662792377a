//! One line of `run`'s input, parsed into a [`Command`] before anything runs (usage errors are
//! found here), the help text of each command, and the check that refuses control characters
//! in a line.

use std::collections::BTreeMap;

use anyhow::Context as _;
use serde_json::Value;

/// Which side a `/<owner>:<item>` command names, when the long form says so.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Namespace {
    /// `/plugin:<id>:<action>`: a plugin's UI action.
    Plugin,
    /// `/mcp:<server>:<prompt>`: an MCP prompt.
    Mcp,
}

/// `/call`'s arguments as typed: one JSON object, or `key=value` words (quoted as in a shell)
/// that are typed by the tool's input schema when the call runs.
#[derive(Debug, PartialEq)]
pub(super) enum CallArgs {
    /// `{...}`: used as it is.
    Json(Value),
    /// `key=value` words.
    Pairs(Vec<String>),
}

/// `/root`'s forms.
#[derive(Debug, PartialEq)]
pub(super) enum RootCommand<'a> {
    /// `/root`: the roots offered now.
    List,
    /// `/root add DIR` (the rest of the line).
    Add(&'a str),
    /// `/root remove DIR` (the rest of the line).
    Remove(&'a str),
}

/// One line of input, parsed.
#[derive(Debug, PartialEq)]
pub(super) enum Command<'a> {
    /// `/quit` (the whole line).
    Quit,
    /// `/help [COMMAND]`.
    Help { topic: Option<&'a str> },
    /// `/tools`: the MCP tools.
    Tools,
    /// `/call TOOL key=value... | {json}`: a tool call through the permission chain; the tool
    /// by its namespaced name or its own name when only one server has it.
    Call { tool: &'a str, args: CallArgs },
    /// `/ui`: the published surfaces and the plugins' UI actions.
    Ui,
    /// `/reload`: reload the extensions.
    Reload,
    /// `/root [add|remove DIR]`: the roots offered to the MCP servers.
    Root(RootCommand<'a>),
    /// `/submit PLUGIN:SURFACE key=value...`: submit a form.
    Submit {
        plugin: &'a str,
        surface: &'a str,
        values: BTreeMap<String, Value>,
    },
    /// `/<owner>:<item> args`: a plugin's UI action or an MCP prompt, told apart when it runs.
    Item {
        /// The word after the `/`, for messages.
        command: &'a str,
        /// Given by the long forms, else found from what `owner:item` names.
        namespace: Option<Namespace>,
        owner: &'a str,
        item: &'a str,
        /// The rest of the line: a prompt's key=value arguments.
        args: &'a str,
    },
    /// Any other line: text for `input.receive`, with its `@<server>:<uri>` references.
    Input(&'a str),
}

/// The built-in commands: name, usage, one line of help, and more for `/help NAME`.
pub(super) const COMMANDS: &[(&str, &str, &str, &str)] = &[
    (
        "/help",
        "/help [COMMAND]",
        "this list, or one command's help",
        "",
    ),
    (
        "/tools",
        "/tools",
        "the MCP servers' tools",
        "Each tool by its namespaced name (mcp__SERVER__TOOL) and its description.",
    ),
    (
        "/call",
        "/call TOOL key=value... | /call TOOL {json}",
        "call a tool through the permission chain",
        "TOOL is the tool's own name when only one server has it, else its namespaced name \
         (mcp__SERVER__TOOL). Values are typed by the tool's input schema (numbers, booleans, \
         JSON arrays and objects); quote a value with spaces as in a shell: text=\"two words\". \
         Ctrl-C cancels the call (the server is told). The report is one line; with -v it \
         shows each chain's decisions and the audit.",
    ),
    (
        "/ui",
        "/ui",
        "the plugins' surfaces and UI actions",
        "The latest state of each surface, then the actions as /PLUGIN:ACTION.",
    ),
    (
        "/submit",
        "/submit PLUGIN:SURFACE key=value...",
        "submit a plugin's form",
        "Values are JSON when they parse as JSON, else text.",
    ),
    (
        "/root",
        "/root [add DIR | remove DIR]",
        "the roots offered to the MCP servers",
        "Without arguments, the roots offered now. `add` offers a directory too, `remove` \
         takes one back; servers that declared `roots` are told (a legacy-era server gets \
         notifications/roots/list_changed). A server started with no roots (no --root, no \
         `roots` in the config) declared none and sees them only once it restarts.",
    ),
    (
        "/reload",
        "/reload",
        "reload the extensions",
        "Starts a new generation of sidecars; calls in flight finish on the old one.",
    ),
    (
        "/quit",
        "/quit",
        "leave (or Ctrl-D; Ctrl-C twice at an empty prompt)",
        "",
    ),
];

/// Items that are not fixed commands, for `/help`.
pub(super) const ITEMS: &[(&str, &str)] = &[
    (
        "/SERVER:PROMPT key=value...",
        "fill in an MCP prompt (/mcp:SERVER:PROMPT when a plugin has the same name)",
    ),
    (
        "/PLUGIN:ACTION",
        "run a plugin's UI action (/plugin:PLUGIN:ACTION when a server has the same name)",
    ),
    (
        "text @SERVER:URI",
        "any other line goes through input.receive; @SERVER:URI inserts a resource's text",
    ),
];

/// The help text: every command, or one (`topic`, with or without its `/`).
pub(super) fn help(topic: Option<&str>) -> anyhow::Result<String> {
    let Some(topic) = topic else {
        let mut text = String::from("commands:\n");
        let width = COMMANDS
            .iter()
            .map(|c| c.1.len())
            .chain(ITEMS.iter().map(|i| i.0.len()))
            .max()
            .unwrap_or(0);
        for (_, usage, line, _) in COMMANDS {
            text.push_str(&format!("  {usage:width$}  {line}\n"));
        }
        for (usage, line) in ITEMS {
            text.push_str(&format!("  {usage:width$}  {line}\n"));
        }
        text.push_str("Tab completes commands, tools and prompts; Ctrl-C cancels a call.");
        return Ok(text);
    };
    let name = format!("/{}", topic.trim_start_matches('/'));
    let (_, usage, line, more) = COMMANDS
        .iter()
        .find(|c| c.0 == name)
        .with_context(|| format!("no command {name}; /help lists them"))?;
    let mut text = format!("{usage}\n  {line}");
    if !more.is_empty() {
        text.push_str("\n  ");
        text.push_str(more);
    }
    Ok(text)
}

/// A line holding a control character (an arrow key's escape sequence typed into a pipe, a
/// pasted terminal sequence): it is refused whole rather than cleaned, so what runs is always
/// what the user saw. A tab is allowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct ControlInLine {
    /// The character's position (in characters, from 1).
    pub(super) column: usize,
}

impl std::fmt::Display for ControlInLine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the line holds a control character at column {} (an arrow key typed into a pipe?); nothing was run",
            self.column
        )
    }
}

impl std::error::Error for ControlInLine {}

/// Refuses a line with a C0 or C1 control character or DEL (not a tab).
pub(super) fn check_line(line: &str) -> Result<(), ControlInLine> {
    match line
        .chars()
        .position(|c| c != '\t' && (c.is_control() || c == '\u{7f}'))
    {
        Some(at) => Err(ControlInLine { column: at + 1 }),
        None => Ok(()),
    }
}

impl<'a> Command<'a> {
    /// Parses a trimmed, non-empty line.
    pub(super) fn parse(line: &'a str) -> anyhow::Result<Self> {
        if line == "/quit" {
            return Ok(Command::Quit);
        }
        let (word, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        let rest = rest.trim();
        let command = match word {
            "/help" => Command::Help {
                topic: (!rest.is_empty()).then_some(rest),
            },
            "/tools" => Command::Tools,
            "/call" => {
                let (tool, args) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
                anyhow::ensure!(
                    !tool.is_empty(),
                    "usage: /call TOOL key=value... (or a JSON object)"
                );
                let args = args.trim();
                let args = if args.starts_with('{') {
                    let value: Value =
                        serde_json::from_str(args).context("the arguments are not valid JSON")?;
                    anyhow::ensure!(value.is_object(), "the arguments must be a JSON object");
                    CallArgs::Json(value)
                } else {
                    let words = shlex::split(args).context("an unclosed quote in the arguments")?;
                    if let Some(word) = words.iter().find(|w| !w.contains('=')) {
                        anyhow::bail!("arguments are key=value, got {word:?}");
                    }
                    CallArgs::Pairs(words)
                };
                Command::Call { tool, args }
            }
            "/ui" => Command::Ui,
            "/reload" => Command::Reload,
            "/root" => {
                let (verb, dir) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
                let dir = dir.trim();
                let root = match (verb, dir.is_empty()) {
                    ("", _) => RootCommand::List,
                    ("add", false) => RootCommand::Add(dir),
                    ("remove", false) => RootCommand::Remove(dir),
                    _ => anyhow::bail!("usage: /root [add DIR | remove DIR]"),
                };
                Command::Root(root)
            }
            "/submit" => {
                let (surface, pairs) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
                let (plugin, surface) = surface
                    .split_once(':')
                    .context("usage: /submit PLUGIN:SURFACE key=value...")?;
                let mut values = BTreeMap::new();
                for pair in pairs.split_whitespace() {
                    let (key, value) = pair.split_once('=').context("form values are key=value")?;
                    let value = serde_json::from_str(value)
                        .unwrap_or_else(|_| Value::String(value.to_owned()));
                    values.insert(key.to_owned(), value);
                }
                Command::Submit {
                    plugin,
                    surface,
                    values,
                }
            }
            _ => match word.strip_prefix('/') {
                Some(command) => Self::item(command, rest)?,
                None => Command::Input(line),
            },
        };
        Ok(command)
    }

    /// `/<owner>:<item>`, or the long forms `/plugin:<id>:<action>` and `/mcp:<server>:<prompt>`
    /// for when a plugin and a server share a name.
    fn item(command: &'a str, args: &'a str) -> anyhow::Result<Self> {
        let (namespace, target) = match command.split_once(':') {
            Some(("plugin", target)) => (Some(Namespace::Plugin), target),
            Some(("mcp", target)) => (Some(Namespace::Mcp), target),
            _ => (None, command),
        };
        let (owner, item) = target
            .split_once(':')
            .with_context(|| format!("unknown command /{command}; /help lists the commands"))?;
        Ok(Command::Item {
            command,
            namespace,
            owner,
            item,
            args,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(line: &str) -> String {
        format!("{:#}", Command::parse(line).expect_err("a usage error"))
    }

    #[test]
    fn commands_are_parsed_by_their_first_word() {
        assert_eq!(Command::parse("/quit").unwrap(), Command::Quit);
        assert_eq!(Command::parse("/tools all").unwrap(), Command::Tools);
        assert_eq!(Command::parse("/ui").unwrap(), Command::Ui);
        assert_eq!(Command::parse("/reload").unwrap(), Command::Reload);
        assert_eq!(
            Command::parse("/root").unwrap(),
            Command::Root(RootCommand::List)
        );
        assert_eq!(
            Command::parse("/root add  /a dir with spaces ").unwrap(),
            Command::Root(RootCommand::Add("/a dir with spaces"))
        );
        assert_eq!(
            Command::parse("/root remove src").unwrap(),
            Command::Root(RootCommand::Remove("src"))
        );
        assert_eq!(
            Command::parse("/help").unwrap(),
            Command::Help { topic: None }
        );
        assert_eq!(
            Command::parse("/help  call").unwrap(),
            Command::Help {
                topic: Some("call")
            }
        );
        assert_eq!(
            Command::parse("/call mcp__a__add  {\"a\": 1}").unwrap(),
            Command::Call {
                tool: "mcp__a__add",
                args: CallArgs::Json(serde_json::json!({"a": 1}))
            }
        );
        assert_eq!(
            Command::parse("/call echo").unwrap(),
            Command::Call {
                tool: "echo",
                args: CallArgs::Pairs(Vec::new())
            }
        );
        assert_eq!(
            Command::parse("/call echo text=\"two words\" n=2").unwrap(),
            Command::Call {
                tool: "echo",
                args: CallArgs::Pairs(vec!["text=two words".to_owned(), "n=2".to_owned()])
            }
        );
        assert_eq!(
            Command::parse("/submit p:form n=2 s=two").unwrap(),
            Command::Submit {
                plugin: "p",
                surface: "form",
                values: [("n", serde_json::json!(2)), ("s", serde_json::json!("two"))]
                    .into_iter()
                    .map(|(k, v)| (k.to_owned(), v))
                    .collect(),
            }
        );
        assert_eq!(
            Command::parse("hello @srv:file:///a /not-a-command").unwrap(),
            Command::Input("hello @srv:file:///a /not-a-command")
        );
    }

    #[test]
    fn owner_item_commands_keep_their_namespace_and_arguments() {
        let item = |namespace, owner, item, args| (namespace, owner, item, args);
        for (line, want) in [
            (
                "/srv:greet city=Oslo",
                item(None, "srv", "greet", "city=Oslo"),
            ),
            ("/plugin:p:go", item(Some(Namespace::Plugin), "p", "go", "")),
            (
                "/mcp:srv:greet a=1",
                item(Some(Namespace::Mcp), "srv", "greet", "a=1"),
            ),
            // Only the first word names the namespace: a plugin may be called `plugin`.
            (
                "/plugin:plugin:go",
                item(Some(Namespace::Plugin), "plugin", "go", ""),
            ),
        ] {
            let Command::Item {
                namespace,
                owner,
                item,
                args,
                ..
            } = Command::parse(line).unwrap()
            else {
                panic!("{line} is not an item command");
            };
            assert_eq!((namespace, owner, item, args), want, "{line}");
        }
    }

    #[test]
    fn usage_errors_are_found_when_parsing() {
        // `/quit` is the whole line; with more it is just an unknown command.
        assert!(error("/quit now").starts_with("unknown command /quit"));
        assert!(error("/nope").starts_with("unknown command /nope"));
        assert!(error("/plugin:only").starts_with("unknown command /plugin:only"));
        assert_eq!(
            error("/call"),
            "usage: /call TOOL key=value... (or a JSON object)"
        );
        assert!(error("/call t {bad").starts_with("the arguments are not valid JSON"));
        assert_eq!(error("/call t [1]"), "arguments are key=value, got \"[1]\"");
        assert_eq!(
            error("/call t text=\"open"),
            "an unclosed quote in the arguments"
        );
        assert_eq!(
            error("/submit form"),
            "usage: /submit PLUGIN:SURFACE key=value..."
        );
        assert_eq!(error("/submit p:form x"), "form values are key=value");
        for line in ["/root add", "/root drop x", "/root remove"] {
            assert_eq!(error(line), "usage: /root [add DIR | remove DIR]", "{line}");
        }
    }

    #[test]
    fn help_lists_every_command_and_explains_one() {
        let all = help(None).unwrap();
        for (name, ..) in COMMANDS {
            assert!(all.contains(name), "{name} missing from:\n{all}");
        }
        assert!(help(Some("call")).unwrap().contains("Ctrl-C cancels"));
        assert_eq!(help(Some("/call")).unwrap(), help(Some("call")).unwrap());
        assert!(help(Some("nope")).is_err());
    }

    #[test]
    fn control_characters_are_refused_with_where() {
        assert_eq!(check_line("plain\ttext é ✓"), Ok(()));
        // The left arrow typed into a pipe.
        assert_eq!(
            check_line("hel\u{1b}[Dlo"),
            Err(ControlInLine { column: 4 })
        );
        assert_eq!(check_line("a\u{7f}"), Err(ControlInLine { column: 2 }));
        assert_eq!(check_line("\u{9b}2J"), Err(ControlInLine { column: 1 }));
        assert_eq!(check_line("a\rb"), Err(ControlInLine { column: 2 }));
    }
}
