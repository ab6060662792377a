//! `contributes` of a v2 manifest and the legacy root members `skills`, `commands`, `hooks` and
//! `mcpServers` (spec delta §4.1): strictly validated and merged into one [`Contributions`].
//! These are the host's plugin features, not the extension protocol's: sidewire validates them
//! and interprets none.
//!
//! The text rules live here (the parser sees only text): a path is relative, has no drive
//! letter, is no UNC path and does not climb out of the plugin root through `..`; it is
//! slash-normalised (`\` becomes `/`, `.` and empty segments dropped, `a/../b` resolved), and a
//! list is deduplicated and sorted. What needs the file system (symlinks leaving the root,
//! missing paths, themes that are not regular files) is checked where the root is known:
//! `sidewire-ext-host`'s `Package::check_contributions`.

use std::collections::BTreeMap;
use std::marker::PhantomData;

use serde::Serialize;
use serde_json::{Value, json};

use crate::decode::{
    Any, Bool, Dto, Fields, Kind, List, MapOf, Obj, Seg, Str, decode_value, rule, wrong_type,
};
use crate::error::Error;
use crate::schema::Defs;

/// What a v2 manifest contributes: `contributes` merged with the legacy root members, every
/// path list normalised, deduplicated and sorted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Contributions {
    /// Skill paths.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skills: Vec<String>,
    /// Agent paths.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub agents: Vec<String>,
    /// Command paths.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<String>,
    /// Prompt paths.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub prompts: Vec<String>,
    /// Theme files, or per-segment globs (`themes/*.reasonix-theme`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub themes: Vec<String>,
    /// Hook entries per event, each entry validated, as written.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub hooks: BTreeMap<String, Vec<Value>>,
    /// MCP servers by name, each entry validated, as written.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub mcp_servers: BTreeMap<String, Value>,
}

/// Which list a contributed path is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum PathKind {
    /// `skills`.
    Skill,
    /// `agents`.
    Agent,
    /// `commands`.
    Command,
    /// `prompts`.
    Prompt,
    /// `themes`: a regular file, or a glob whose matches are regular files.
    Theme,
}

impl PathKind {
    /// The member's name in `contributes`.
    pub fn as_str(self) -> &'static str {
        match self {
            PathKind::Skill => "skills",
            PathKind::Agent => "agents",
            PathKind::Command => "commands",
            PathKind::Prompt => "prompts",
            PathKind::Theme => "themes",
        }
    }
}

impl Contributions {
    /// Every contributed path with its list, in list order then path order.
    pub fn paths(&self) -> impl Iterator<Item = (PathKind, &str)> {
        [
            (PathKind::Skill, &self.skills),
            (PathKind::Agent, &self.agents),
            (PathKind::Command, &self.commands),
            (PathKind::Prompt, &self.prompts),
            (PathKind::Theme, &self.themes),
        ]
        .into_iter()
        .flat_map(|(kind, paths)| paths.iter().map(move |p| (kind, p.as_str())))
    }

    /// Whether it contributes nothing.
    pub fn is_empty(&self) -> bool {
        *self == Contributions::default()
    }
}

/// Whether `path` holds a glob character (`*` or `?`; theme entries may be per-segment globs).
pub fn is_glob(path: &str) -> bool {
    path.contains(['*', '?'])
}

/// Normalises a contributed path (see the module documentation), or says why it is refused.
fn normalize(path: &str) -> Result<String, &'static str> {
    const ESCAPE: &str = "must be relative and stay inside the plugin root";
    if path.trim().is_empty() {
        return Err("must not be empty");
    }
    if path.chars().any(char::is_control) {
        return Err("must not hold a control character");
    }
    let bytes = path.as_bytes();
    let drive = bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':';
    if path.starts_with(['/', '\\']) || drive {
        return Err(ESCAPE);
    }
    let mut segments: Vec<&str> = Vec::new();
    for segment in path.split(['/', '\\']) {
        match segment {
            "" | "." => {}
            ".." => {
                if segments.pop().is_none() {
                    return Err(ESCAPE);
                }
            }
            other => segments.push(other),
        }
    }
    if segments.is_empty() {
        return Ok(".".to_owned());
    }
    Ok(segments.join("/"))
}

/// A path list: a string, an array of strings, or an array of `{"path": …}` objects.
#[derive(Debug, Clone, Copy)]
struct PathList;

/// One `{"path": …}` object of a path list.
#[derive(Debug, Serialize)]
struct PathObject {
    path: String,
}

impl Dto for PathObject {
    const NAME: &'static str = "ContributedPath";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(PathObject {
            path: f.req("path", Str)?,
        })
    }
}

impl Kind for PathList {
    type Out = Vec<String>;

    fn decode(&self, value: Value, at: &Seg<'_>) -> Result<Vec<String>, Error> {
        let raw: Vec<(String, Seg<'_>)> = match value {
            Value::String(path) => vec![(path, *at)],
            Value::Array(items) => {
                let mut out = Vec::with_capacity(items.len());
                for (i, item) in items.into_iter().enumerate() {
                    let here = at.index(i);
                    let path = match item {
                        Value::String(path) => path,
                        Value::Object(_) => decode_value::<PathObject>(item, &here)?.path,
                        other => {
                            return Err(wrong_type(&here, "a path or {\"path\": …}", &other));
                        }
                    };
                    out.push((path, here));
                }
                out
            }
            other => return Err(wrong_type(at, "a path or a list of paths", &other)),
        };
        let mut paths = Vec::with_capacity(raw.len());
        for (path, here) in raw {
            paths.push(normalize(&path).map_err(|why| rule(&here, why))?);
        }
        paths.sort();
        paths.dedup();
        Ok(paths)
    }

    fn schema(&self, _: &mut Defs) -> Value {
        json!({"anyOf": [
            {"type": "string"},
            {"type": "array", "items": {"anyOf": [
                {"type": "string"},
                {"type": "object", "properties": {"path": {"type": "string"}},
                 "required": ["path"], "additionalProperties": false}
            ]}}
        ]})
    }

    fn placeholder(&self) -> Vec<String> {
        Vec::new()
    }
}

/// A JSON object validated as `T`, kept as written.
struct Checked<T>(PhantomData<T>);

impl<T> Checked<T> {
    const fn new() -> Self {
        Checked(PhantomData)
    }
}

impl<T: Dto> Kind for Checked<T> {
    type Out = Value;

    fn decode(&self, value: Value, at: &Seg<'_>) -> Result<Value, Error> {
        if !value.is_object() {
            return Err(wrong_type(at, "an object", &value));
        }
        decode_value::<T>(value.clone(), at)?;
        Ok(value)
    }

    fn schema(&self, defs: &mut Defs) -> Value {
        Obj::<T>::new().schema(defs)
    }

    fn placeholder(&self) -> Value {
        Value::Object(Default::default())
    }
}

const STRING_MAP: MapOf<Str> = MapOf {
    value: Str,
    non_blank_keys: true,
};

/// A hook entry (PP): validated member names and types only.
#[derive(Debug, Serialize)]
struct HookEntry;

impl Dto for HookEntry {
    const NAME: &'static str = "HookEntry";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        for name in [
            "match",
            "command",
            "contextFile",
            "shellCommand",
            "shell",
            "payloadFormat",
            "description",
            "cwd",
        ] {
            f.opt(name, Str)?;
        }
        f.opt("args", List(Str))?;
        f.opt("async", Bool)?;
        // Seconds or a duration: the reference's type was not found, so any value.
        f.opt("timeout", Any)?;
        f.opt("env", STRING_MAP)?;
        Ok(HookEntry)
    }
}

/// An MCP server entry (PP): validated member names and types only.
#[derive(Debug, Serialize)]
struct McpServerEntry;

impl Dto for McpServerEntry {
    const NAME: &'static str = "McpServerEntry";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        for name in ["type", "command", "url", "display_name", "description"] {
            f.opt(name, Str)?;
        }
        f.opt("args", List(Str))?;
        f.opt("env", STRING_MAP)?;
        f.opt("headers", STRING_MAP)?;
        f.opt("auto_start", Bool)?;
        f.opt("imported", Bool)?;
        // Their types were not found in the reference: any value.
        f.opt("tier", Any)?;
        f.opt("load", Any)?;
        Ok(McpServerEntry)
    }
}

const HOOKS: MapOf<List<Checked<HookEntry>>> = MapOf {
    value: List(Checked::new()),
    non_blank_keys: true,
};

const SERVERS: MapOf<Checked<McpServerEntry>> = MapOf {
    value: Checked::new(),
    non_blank_keys: true,
};

/// `contributes`, strictly.
#[derive(Debug, Default, Serialize)]
pub(crate) struct ContributesDoc(Contributions);

impl Dto for ContributesDoc {
    const NAME: &'static str = "Contributes";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(ContributesDoc(Contributions {
            skills: f.or_default("skills", PathList)?,
            agents: f.or_default("agents", PathList)?,
            commands: f.or_default("commands", PathList)?,
            prompts: f.or_default("prompts", PathList)?,
            themes: f.or_default("themes", PathList)?,
            hooks: f.or_default("hooks", HOOKS)?,
            mcp_servers: f.or_default("mcpServers", SERVERS)?,
        }))
    }
}

/// The legacy root members, read from the manifest's own reader.
#[derive(Debug, Default)]
pub(crate) struct Legacy {
    skills: Vec<String>,
    commands: Vec<String>,
    hooks: BTreeMap<String, Vec<Value>>,
    mcp_servers: BTreeMap<String, Value>,
}

impl Legacy {
    /// Reads `skills`, `commands`, `hooks` and `mcpServers` at the manifest's root.
    pub(crate) fn read(f: &mut Fields<'_>) -> Result<Legacy, Error> {
        Ok(Legacy {
            skills: f.or_default("skills", PathList)?,
            commands: f.or_default("commands", PathList)?,
            hooks: f.or_default("hooks", HOOKS)?,
            mcp_servers: f.or_default("mcpServers", SERVERS)?,
        })
    }
}

/// Merges the legacy members into `contributes` (delta §4.1): path lists are unioned; a hook
/// event or a server defined in both must be defined identically (then it is kept once), else
/// the error names it at its legacy path.
pub(crate) fn merge(
    contributes: Option<ContributesDoc>,
    legacy: Legacy,
    at: &Seg<'_>,
) -> Result<Contributions, Error> {
    let mut merged = contributes.map(|c| c.0).unwrap_or_default();
    for (into, from) in [
        (&mut merged.skills, legacy.skills),
        (&mut merged.commands, legacy.commands),
    ] {
        into.extend(from);
        into.sort();
        into.dedup();
    }
    let here = at.key("hooks");
    for (event, entries) in legacy.hooks {
        match merged.hooks.get(&event) {
            Some(existing) if *existing != entries => {
                return Err(rule(
                    &here.key(&event),
                    format!("hook event {event:?} is defined differently in contributes.hooks"),
                ));
            }
            Some(_) => {}
            None => {
                merged.hooks.insert(event, entries);
            }
        }
    }
    let here = at.key("mcpServers");
    for (name, server) in legacy.mcp_servers {
        match merged.mcp_servers.get(&name) {
            Some(existing) if *existing != server => {
                return Err(rule(
                    &here.key(&name),
                    format!("MCP server {name:?} is defined differently in contributes.mcpServers"),
                ));
            }
            Some(_) => {}
            None => {
                merged.mcp_servers.insert(name, server);
            }
        }
    }
    Ok(merged)
}

#[cfg(test)]
mod tests {
    use super::normalize;

    #[test]
    fn path_text_rules() {
        for (path, normal) in [
            ("skills", "skills"),
            ("./skills/a/", "skills/a"),
            ("skills\\win", "skills/win"),
            ("a/../b", "b"),
            ("a//b", "a/b"),
            (".", "."),
            ("themes/*.reasonix-theme", "themes/*.reasonix-theme"),
        ] {
            assert_eq!(normalize(path).as_deref(), Ok(normal), "{path}");
        }
        for bad in [
            "",
            " ",
            "../outside",
            "a/../../b",
            "/etc/passwd",
            "\\etc",
            "C:\\Windows\\x",
            "c:relative",
            "\\\\server\\share\\x",
            "//server/share/x",
            "a\u{1b}b",
        ] {
            assert!(normalize(bad).is_err(), "{bad:?}");
        }
    }
}
