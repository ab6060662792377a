//! The plain data a [`McpHost`](crate::McpHost) hands out: namespaced tools and prompts, resources
//! with their server, status entries and startup failures. Snapshots, not live views.
//!
//! [`HostSnapshot`] shares the clients' cached `Arc<[T]>` lists instead of copying them and is
//! walked by borrowed [`Named`] views, so a listing (the CLI prints through it) copies no tool.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use crate::names::{namespaced_name, namespaced_name_salted};
use crate::{
    Client, Era, Error, Implementation, Prompt, Resource, ResourceTemplate, ServerSpec, Stage,
    Tool, Transport, Truncation,
};

/// The most of an error message a failure record keeps.
const ERROR_CHARS: usize = 2000;

/// A tool of a running server, under its namespaced name.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct HostTool {
    /// `mcp__<server>__<tool>`, fitted to `^[a-zA-Z0-9_-]{1,64}$`.
    pub name: String,
    /// The server that offers it.
    pub server: String,
    /// The tool as the server describes it (its `name` is the raw name used on the wire).
    pub tool: Tool,
}

impl HostTool {
    pub(crate) fn new(name: String, server: String, tool: Tool) -> Self {
        HostTool { name, server, tool }
    }
}

/// A prompt of a running server, under its namespaced name.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct HostPrompt {
    /// `mcp__<server>__<prompt>`, fitted like tool names.
    pub name: String,
    /// The server that offers it.
    pub server: String,
    /// The prompt as the server describes it.
    pub prompt: Prompt,
}

impl HostPrompt {
    pub(crate) fn new(name: String, server: String, prompt: Prompt) -> Self {
        HostPrompt {
            name,
            server,
            prompt,
        }
    }
}

/// A resource or resource template of a running server.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct HostResource {
    /// The server to read it from.
    pub server: String,
    /// The resource, when this is one.
    pub resource: Option<Resource>,
    /// The template, when this is one.
    pub template: Option<ResourceTemplate>,
}

impl HostResource {
    pub(crate) fn resource(server: String, resource: Resource) -> Self {
        HostResource {
            server,
            resource: Some(resource),
            template: None,
        }
    }

    pub(crate) fn template(server: String, template: ResourceTemplate) -> Self {
        HostResource {
            server,
            resource: None,
            template: Some(template),
        }
    }
}

/// Why a server did not start.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct StartFailure {
    /// The server's name.
    pub server: String,
    /// Its transport.
    pub transport: Transport,
    /// Where startup failed.
    pub stage: Stage,
    /// At [`Stage::Initialize`]: the request startup was waiting on (`server/discover` or
    /// `initialize`), when known.
    pub handshake: Option<crate::Handshake>,
    /// How long startup had run.
    pub elapsed: Duration,
    /// What went wrong (whitespace collapsed, at most 2,000 characters; credentials in the
    /// stderr part are redacted).
    pub error: String,
    /// What went wrong without the server's name, the stage, the exit status or the stderr
    /// (each in its own field): for a caller that shows those apart. The text as the error
    /// says it (a peer's part unchanged: escape it to print it), at most 2,000 characters.
    pub reason: String,
    /// How the process ended, if it did.
    pub exit_status: Option<String>,
    /// The redacted end of its stderr.
    pub stderr_tail: Option<String>,
    /// Which part of an authorization failed, when it was one
    /// ([`Error::auth_error`]); [`AuthErrorKind::LoginRequired`](crate::auth::AuthErrorKind::LoginRequired)
    /// means someone must log in.
    #[cfg(feature = "auth")]
    #[cfg_attr(docsrs, doc(cfg(feature = "auth")))]
    pub auth_error: Option<crate::auth::AuthErrorKind>,
    /// The HTTP status of a non-2xx answer, when that was the failure ([`Error::http_status`]).
    pub http_status: Option<u16>,
}

impl StartFailure {
    pub(crate) fn from_error(spec: &ServerSpec, err: &Error, elapsed: Duration) -> Self {
        let (stage, elapsed) = err.stage().unwrap_or((Stage::Launch, elapsed));
        let short = |text: String| match text.char_indices().nth(ERROR_CHARS) {
            Some((cut, _)) => format!("{}...", &text[..cut]),
            None => text,
        };
        StartFailure {
            server: spec.name().to_owned(),
            transport: spec.transport(),
            stage,
            handshake: err.handshake().filter(|_| stage == Stage::Initialize),
            elapsed,
            error: short(
                err.to_string()
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
            reason: short(err.reason()),
            exit_status: err.exit_status().map(str::to_owned),
            stderr_tail: err.stderr_tail().map(str::to_owned),
            #[cfg(feature = "auth")]
            auth_error: err.auth_error(),
            http_status: err.http_status(),
        }
    }
}

/// How a started server's connection ended by itself: what a restart reports.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ServerExit {
    /// Why the connection ended, in words (e.g. "the peer closed the connection").
    pub reason: String,
    /// How the process ended (stdio), e.g. "exited with status 3".
    pub exit_status: Option<String>,
    /// The redacted end of its stderr (at most 16 KiB).
    pub stderr_tail: Option<String>,
}

impl ServerExit {
    pub(crate) fn of(client: &Client) -> Self {
        ServerExit {
            reason: client
                .close_reason()
                .map_or_else(|| "the connection ended".to_owned(), |r| r.to_string()),
            exit_status: client.exit_status(),
            stderr_tail: client.stderr_tail().filter(|tail| !tail.is_empty()),
        }
    }
}

/// Where a server stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServerState {
    /// Startup is under way.
    Starting,
    /// Connected and serving.
    Running,
    /// It was running, but its connection has ended (the process exited) and it is not
    /// restarted ([`Restart::Never`](crate::Restart::Never)), or the end is being noticed.
    Exited,
    /// It crashed and is being restarted (waiting out the backoff or reconnecting); see
    /// [`ServerStatus::last_exit`]. Calls wait for it.
    Restarting,
    /// It crashed and the restart policy's attempts are spent: [`ServerStatus::last_exit`] says
    /// how it last ended and [`ServerStatus::failure`] why the last attempt failed, if one did.
    GaveUp,
    /// Startup failed (see [`ServerStatus::failure`]).
    Failed,
    /// Its spec is disabled ([`ServerSpec::enabled`](crate::ServerSpec::enabled), config
    /// `disabled: true` or `enabled: false`): listed, never started.
    Disabled,
}

/// One server's entry in [`McpHost::status`](crate::McpHost::status).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ServerStatus {
    /// The server's name.
    pub name: String,
    /// Where it stands.
    pub state: ServerState,
    /// Its process id (stdio, while known).
    pub pid: Option<u32>,
    /// The protocol version it chose.
    pub protocol_version: Option<String>,
    /// The era that version belongs to ([`Client::era`]).
    pub era: Option<Era>,
    /// Who it says it is.
    pub server_info: Option<Implementation>,
    /// How many tools, prompts and resources it offers, as last listed.
    pub tools: usize,
    /// See `tools`.
    pub prompts: usize,
    /// See `tools`.
    pub resources: usize,
    /// How long its startup took.
    pub startup: Option<Duration>,
    /// The lists a limit cut short (see [`Client::truncations`]): what is counted above is
    /// what was kept, not all the server offers.
    pub truncated: Vec<Truncation>,
    /// Why it failed to start (or, [`ServerState::GaveUp`], why its last restart failed).
    pub failure: Option<StartFailure>,
    /// How many times the host has restarted it successfully.
    pub restarts: u32,
    /// How its connection last ended by itself, when it has (the reason of the last restart).
    pub last_exit: Option<ServerExit>,
}

impl ServerStatus {
    fn empty(name: &str, state: ServerState) -> Self {
        ServerStatus {
            name: name.to_owned(),
            state,
            pid: None,
            protocol_version: None,
            era: None,
            server_info: None,
            tools: 0,
            prompts: 0,
            resources: 0,
            startup: None,
            truncated: Vec::new(),
            failure: None,
            restarts: 0,
            last_exit: None,
        }
    }

    pub(crate) fn starting(name: &str) -> Self {
        ServerStatus::empty(name, ServerState::Starting)
    }

    pub(crate) fn disabled(name: &str) -> Self {
        ServerStatus::empty(name, ServerState::Disabled)
    }

    pub(crate) fn failed(name: &str, failure: StartFailure) -> Self {
        ServerStatus {
            failure: Some(failure),
            ..ServerStatus::empty(name, ServerState::Failed)
        }
    }

    pub(crate) fn running(client: &Client, startup: Duration) -> Self {
        let state = if client.is_closed() {
            ServerState::Exited
        } else {
            ServerState::Running
        };
        ServerStatus {
            pid: client.pid(),
            protocol_version: Some(client.protocol_version().to_owned()),
            era: Some(client.era()),
            server_info: Some(client.server_info()),
            tools: client.tools().len(),
            prompts: client.prompts().len(),
            resources: client.resources().len(),
            startup: Some(startup),
            truncated: client.truncations(),
            ..ServerStatus::empty(client.name(), state)
        }
    }
}

/// Every running server's cached lists at one moment, shared with the clients rather than
/// copied ([`McpHost::snapshot`](crate::McpHost::snapshot)): walking it borrows each item, so
/// printing or searching thousands of tools copies none of them. Holding a snapshot keeps the
/// lists it saw alive after a refresh replaces them.
#[derive(Debug, Clone, Default)]
pub struct HostSnapshot {
    servers: Vec<ServerLists>,
}

#[derive(Debug, Clone)]
struct ServerLists {
    name: String,
    tools: Arc<[Tool]>,
    prompts: Arc<[Prompt]>,
    resources: Arc<[Resource]>,
    templates: Arc<[ResourceTemplate]>,
}

/// A tool or prompt borrowed from a [`HostSnapshot`], under its namespaced name.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Named<'a, T> {
    /// `mcp__<server>__<name>`, fitted to `^[a-zA-Z0-9_-]{1,64}$` and unique in the snapshot.
    pub name: String,
    /// The server that offers it.
    pub server: &'a str,
    /// The item as the server describes it.
    pub item: &'a T,
}

impl HostSnapshot {
    pub(crate) fn push(&mut self, name: String, client: &Client) {
        self.servers.push(ServerLists {
            name,
            tools: client.tools(),
            prompts: client.prompts(),
            resources: client.resources(),
            templates: client.resource_templates(),
        });
    }

    /// Every tool, by server then server order, under namespaced names that never collide
    /// (`mcp__<server>__<tool>`, sanitised to the MCP tool-name rule with a hash suffix when
    /// that changed the name).
    pub fn tools(&self) -> impl Iterator<Item = Named<'_, Tool>> + '_ {
        named(
            self.servers.iter().map(|s| (s.name.as_str(), &*s.tools)),
            |t| &t.name,
        )
    }

    /// Every prompt, by server then server order, under namespaced names (the tools' scheme).
    pub fn prompts(&self) -> impl Iterator<Item = Named<'_, Prompt>> + '_ {
        named(
            self.servers.iter().map(|s| (s.name.as_str(), &*s.prompts)),
            |p| &p.name,
        )
    }

    /// Every resource with its server, by server then server order (URIs are not renamed).
    pub fn resources(&self) -> impl Iterator<Item = (&str, &Resource)> + '_ {
        self.servers
            .iter()
            .flat_map(|s| s.resources.iter().map(move |r| (s.name.as_str(), r)))
    }

    /// Every resource template with its server, by server then server order.
    pub fn resource_templates(&self) -> impl Iterator<Item = (&str, &ResourceTemplate)> + '_ {
        self.servers
            .iter()
            .flat_map(|s| s.templates.iter().map(move |t| (s.name.as_str(), t)))
    }
}

/// Every tool of a [`HostSnapshot`] by its namespaced name, so a host call finds its tool
/// without naming every tool of every server (which allocates a name per tool): built once per
/// change of any server's tool list, and valid only for the lists it was built from. One entry
/// per cached tool, so bounded by the servers' listing caps.
#[derive(Debug, Default)]
pub(crate) struct ToolNames {
    /// What it was built from: each server's name and tool list (the lists compared by pointer).
    from: Vec<(String, Arc<[Tool]>)>,
    /// Namespaced name → (server, position in its list), both indexes into `from`.
    names: HashMap<String, (usize, usize)>,
}

impl ToolNames {
    /// Names the tools of `snapshot`, as [`HostSnapshot::tools`] does.
    pub(crate) fn new(snapshot: &HostSnapshot) -> Self {
        let from: Vec<(String, Arc<[Tool]>)> = (snapshot.servers.iter())
            .map(|s| (s.name.clone(), Arc::clone(&s.tools)))
            .collect();
        let mut taken = HashSet::new();
        let mut names = HashMap::new();
        for (at, (server, tools)) in from.iter().enumerate() {
            for (position, tool) in tools.iter().enumerate() {
                names.insert(unique(&mut taken, server, &tool.name), (at, position));
            }
        }
        ToolNames { from, names }
    }

    /// Built from the very lists `snapshot` holds.
    pub(crate) fn is_for(&self, snapshot: &HostSnapshot) -> bool {
        self.from.len() == snapshot.servers.len()
            && (self.from.iter().zip(&snapshot.servers))
                .all(|((name, tools), s)| *name == s.name && Arc::ptr_eq(tools, &s.tools))
    }

    /// The server and the tool named `name`.
    pub(crate) fn find(&self, name: &str) -> Option<(&str, &Tool)> {
        let &(at, position) = self.names.get(name)?;
        let (server, tools) = &self.from[at];
        Some((server, &tools[position]))
    }
}

/// The items of `lists` under unique namespaced names.
fn named<'a, T: 'a>(
    lists: impl Iterator<Item = (&'a str, &'a [T])> + 'a,
    key: fn(&T) -> &str,
) -> impl Iterator<Item = Named<'a, T>> + 'a {
    let mut taken = HashSet::new();
    lists
        .flat_map(|(server, items)| items.iter().map(move |item| (server, item)))
        .map(move |(server, item)| Named {
            name: unique(&mut taken, server, key(item)),
            server,
            item,
        })
}

/// The namespaced name for `item` on `server`, made unique against `taken`.
fn unique(taken: &mut HashSet<String>, server: &str, item: &str) -> String {
    let mut name = namespaced_name(server, item);
    let mut salt = 0;
    while !taken.insert(name.clone()) {
        salt += 1;
        name = namespaced_name_salted(server, item, salt);
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tools(names: &[&str]) -> Arc<[Tool]> {
        crate::protocol::tool_index::minimal_tools(names).into()
    }

    fn snapshot(servers: &[(&str, &Arc<[Tool]>)]) -> HostSnapshot {
        HostSnapshot {
            servers: (servers.iter())
                .map(|(name, tools)| ServerLists {
                    name: (*name).to_owned(),
                    tools: Arc::clone(tools),
                    prompts: Arc::from([]),
                    resources: Arc::from([]),
                    templates: Arc::from([]),
                })
                .collect(),
        }
    }

    #[test]
    fn every_namespaced_tool_name_resolves_to_its_tool() {
        // Names that collide once namespaced (`a.b` and `a_b` sanitise alike; a tool named
        // twice), so salted names are in play.
        let one = tools(&["read", "a.b", "a_b", "read", "x"]);
        let two = tools(&["read", "write"]);
        let odd = tools(&["q"]);
        let snapshot = snapshot(&[("one", &one), ("two", &two), ("o.dd", &odd)]);
        let names = ToolNames::new(&snapshot);
        let mut count = 0;
        for named in snapshot.tools() {
            let (server, tool) = names.find(&named.name).expect("every name resolves");
            assert_eq!(server, named.server, "{}", named.name);
            assert!(std::ptr::eq(tool, named.item), "{}", named.name);
            count += 1;
        }
        assert_eq!(count, 8);
        assert!(names.find("mcp__one__nothing").is_none());
    }

    #[test]
    fn a_replaced_list_makes_the_names_stale() {
        let one = tools(&["read"]);
        let names = ToolNames::new(&snapshot(&[("one", &one)]));
        assert!(names.is_for(&snapshot(&[("one", &one)])));
        // The same tools in a new list (a re-list), another server, one server fewer.
        assert!(!names.is_for(&snapshot(&[("one", &tools(&["read"]))])));
        assert!(!names.is_for(&snapshot(&[("two", &one)])));
        assert!(!names.is_for(&snapshot(&[("one", &one), ("two", &one)])));
        assert!(!names.is_for(&HostSnapshot::default()));
    }
}
