//! The listing subcommands of `sidewire mcp`: `servers` (each with its protocol version and
//! era), `tools` (each with its parameters: name, type, `?` when optional), `prompts`,
//! `resources` and `templates`, each printed one entry a line (an empty listing says so) or as
//! one JSON document. The listings are written as they are walked, from the clients' cached
//! lists: nothing is copied or built whole first.

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::json;
use sidewire_mcp::{HostSnapshot, ListLimit, McpHost, ServerStatus, StartFailure, Transport};
use sidewire_mcp_config::{ConfiguredServer, Dialect, McpConfig};

use super::{LIST_INDENT, failure_text};
use crate::Reported;
use crate::out::Out;
use crate::safe;

/// `servers`: each server's state, with a failure's text under its row, and (from a config)
/// the server as sidewire understood the file: dialect, transport, resolved command or URL,
/// timeouts, tool filter, and which fields were expanded from which variables, secrets
/// redacted. Fails (reported) when a server failed to start.
pub(super) fn servers(
    host: &McpHost,
    config: Option<&McpConfig>,
    failures: &[StartFailure],
    out: &Out,
) -> anyhow::Result<()> {
    let mut rows = Vec::new();
    let configured_servers = config.map(|config| by_name(&config.servers, |s| s.spec.name()));
    for status in host.status() {
        let configured = config
            .zip(configured_servers.as_ref())
            .and_then(|(config, servers)| {
                let server = *servers.get(status.name.as_str())?;
                Some((config.dialect, server))
            });
        let state = format!("{:?}", status.state).to_lowercase();
        out.line(format!(
            "{} {state}{}{}{}",
            safe::line(&status.name),
            status
                .server_info
                .as_ref()
                .map(|i| format!(" {} {}", safe::line(&i.name), safe::line(&i.version)))
                .unwrap_or_default(),
            protocol(&status),
            status
                .startup
                .map(|d| format!(" (started in {} ms)", d.as_millis()))
                .unwrap_or_default(),
        ));
        if let Some((dialect, server)) = configured {
            for line in understood(dialect, server) {
                out.line(format!("  {line}"));
            }
        }
        // A listing a cap cut short: the counts are what was kept, not what the server has.
        for truncation in &status.truncated {
            out.line(format!(
                "  warning: {}",
                safe::line(&truncation.to_string())
            ));
        }
        if let Some(failure) = &status.failure {
            // One printed line per line of the text, each escaped on its own, so a stderr
            // line cannot pass for another server's row.
            for line in failure_text(failure).lines() {
                out.line(format!("  {}", safe::line(line)));
            }
        }
        rows.push(json!({
            "config": configured.map(|(dialect, server)| understood_json(dialect, server)),
            "name": status.name, "state": state, "pid": status.pid,
            "protocolVersion": status.protocol_version,
            "era": status.era.map(|era| era.as_str()),
            "tools": status.tools, "prompts": status.prompts, "resources": status.resources,
            "failure": status.failure.as_ref().map(failure_text),
            "truncated": status.truncated.iter().map(|t| json!({
                "list": t.list.method(), "kept": t.kept, "limit": limit(t.limit),
            })).collect::<Vec<_>>(),
        }));
    }
    out.json(&json!({ "servers": rows }));
    if failures.is_empty() {
        Ok(())
    } else {
        Err(Reported.into())
    }
}

/// `items` by the name `name` gives each, for one lookup per row: `servers` once scanned the
/// config for every server it listed, O(servers²) name comparisons (26 s of a 40 s listing of
/// 20,000 servers). `name` is called once per item. A repeated name keeps its first item, as
/// the scan did.
fn by_name<'a, T>(items: &'a [T], name: impl Fn(&'a T) -> &'a str) -> HashMap<&'a str, &'a T> {
    let mut map = HashMap::with_capacity(items.len());
    for item in items {
        map.entry(name(item)).or_insert(item);
    }
    map
}

/// The lines saying how sidewire understood a config server (every value escaped).
fn understood(dialect: Dialect, server: &ConfiguredServer) -> Vec<String> {
    let spec = &server.spec;
    let mut lines = Vec::new();
    let target = match spec.transport() {
        Transport::Stdio => {
            let mut words = vec![spec.command().to_owned()];
            words.extend(server.shown_args.iter().cloned());
            words.join(" ")
        }
        _ => server.shown_url.clone(),
    };
    let enabled = if spec.is_enabled() {
        "enabled"
    } else {
        "disabled"
    };
    lines.push(format!(
        "{dialect} {} {} ({enabled})",
        spec.transport(),
        safe::line(&target)
    ));
    lines.push(format!(
        "timeouts: startup {} ms, calls {} ms",
        spec.startup_budget().as_millis(),
        spec.default_call_timeout().as_millis()
    ));
    let filter = spec.tools_exposed();
    if !filter.is_all() {
        let mut text = String::from("tools:");
        if let Some(allowed) = filter.allowed() {
            let names: Vec<&str> = allowed.iter().map(String::as_str).collect();
            text.push_str(&format!(" only {}", names.join(", ")));
        }
        if !filter.denied().is_empty() {
            let names: Vec<&str> = filter.denied().iter().map(String::as_str).collect();
            text.push_str(&format!(" except {}", names.join(", ")));
        }
        lines.push(safe::line(&text).into_owned());
    }
    for (what, shown) in [
        ("env", &server.shown_env),
        ("header", &server.shown_headers),
    ] {
        for (key, value) in shown {
            lines.push(format!("{what} {}={}", safe::line(key), safe::line(value)));
        }
    }
    for expansion in &server.expansions {
        let variables: Vec<String> = (expansion.variables.iter())
            .map(|v| format!("{} ({})", v.name, v.source.as_str()))
            .collect();
        lines.push(format!(
            "expanded {} from {}",
            safe::line(&expansion.field),
            safe::line(&variables.join(", "))
        ));
    }
    lines
}

/// The same as a JSON object.
fn understood_json(dialect: Dialect, server: &ConfiguredServer) -> serde_json::Value {
    let spec = &server.spec;
    let filter = spec.tools_exposed();
    json!({
        "dialect": dialect.as_str(),
        "transport": spec.transport().as_str(),
        "enabled": spec.is_enabled(),
        "command": (spec.transport() == Transport::Stdio).then(|| spec.command()),
        "args": (spec.transport() == Transport::Stdio).then_some(&server.shown_args),
        "url": (spec.transport() != Transport::Stdio).then_some(server.shown_url.as_str()),
        "env": server.shown_env,
        "headers": server.shown_headers,
        "startupTimeoutMs": spec.startup_budget().as_millis() as u64,
        "callTimeoutMs": spec.default_call_timeout().as_millis() as u64,
        "tools": {"only": filter.allowed(), "except": filter.denied()},
        "expanded": server.expansions.iter().map(|e| json!({
            "field": e.field,
            "template": e.template,
            "variables": e.variables.iter().map(|v| json!({
                "name": v.name, "source": v.source.as_str(),
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    })
}

/// ` protocol 2026-07-28 (modern era)`, or nothing before a handshake.
fn protocol(status: &ServerStatus) -> String {
    match (&status.protocol_version, status.era) {
        (Some(version), Some(era)) => format!(" protocol {} ({era} era)", safe::line(version)),
        (Some(version), None) => format!(" protocol {}", safe::line(version)),
        (None, _) => String::new(),
    }
}

/// A listing limit as JSON: `{"items": 10000}`, `{"bytes": ...}` or `{"pages": 100}`.
fn limit(limit: ListLimit) -> serde_json::Value {
    match limit {
        ListLimit::Items(cap) => json!({ "items": cap }),
        ListLimit::Bytes(cap) => json!({ "bytes": cap }),
        ListLimit::Pages(cap) => json!({ "pages": cap }),
        _ => json!({}),
    }
}

/// The listings of what the servers offer.
#[derive(Debug, Clone, Copy)]
pub(super) enum Listing {
    /// The tools, under their namespaced names.
    Tools,
    /// The prompts, under their namespaced names.
    Prompts,
    /// The resources, as `<server>:<uri>`.
    Resources,
    /// The resource templates, as `<server>:<uri template>`.
    Templates,
}

impl Listing {
    /// The key of the JSON document's list.
    fn key(self) -> &'static str {
        match self {
            Listing::Tools => "tools",
            Listing::Prompts => "prompts",
            Listing::Resources => "resources",
            Listing::Templates => "templates",
        }
    }

    /// The key of the server's own definition in each JSON row.
    fn item_key(self) -> &'static str {
        match self {
            Listing::Tools => "tool",
            Listing::Prompts => "prompt",
            Listing::Resources => "resource",
            Listing::Templates => "template",
        }
    }
}

/// `tools`, `prompts`, `resources` or `templates`: one entry a line, or the JSON document
/// `{"<listing>": [...]}`. Both walk the clients' cached lists through a [`HostSnapshot`]:
/// text is written line by line, and the JSON document is serialised as it goes, so neither
/// copies the items nor holds the document.
pub(super) fn listing(host: &McpHost, listing: Listing, out: &Out) -> anyhow::Result<()> {
    let snapshot = host.snapshot();
    if out.json {
        out.json_stream(&Document {
            key: listing.key(),
            kind: listing.item_key(),
            snapshot: &snapshot,
            listing,
        });
        return Ok(());
    }
    let named = |name: &str, description: Option<&str>| {
        out.line(format!(
            "{}  {}",
            safe::line(name),
            safe::block(description.unwrap_or_default().trim_end(), LIST_INDENT)
        ));
    };
    let located = |server: &str, location: &str, name: &str| {
        out.line(format!(
            "{}:{}  {}",
            safe::line(server),
            safe::line(location),
            safe::line(name)
        ));
    };
    let mut shown = 0usize;
    match listing {
        Listing::Tools => {
            for t in snapshot.tools() {
                named(&t.name, t.item.description.as_deref());
                if let Some(parameters) = parameters(&t.item.input_schema.to_value()) {
                    out.line(format!("{LIST_INDENT}{parameters}"));
                }
                shown += 1;
            }
        }
        Listing::Prompts => {
            for p in snapshot.prompts() {
                named(&p.name, p.item.description.as_deref());
                shown += 1;
            }
        }
        Listing::Resources => {
            for (server, r) in snapshot.resources() {
                located(server, &r.uri, &r.name);
                shown += 1;
            }
        }
        Listing::Templates => {
            for (server, t) in snapshot.resource_templates() {
                located(server, &t.uri_template, &t.name);
                shown += 1;
            }
        }
    }
    if shown == 0 {
        out.line(match listing {
            Listing::Tools => "no tools",
            Listing::Prompts => "no prompts",
            Listing::Resources => "no resources",
            Listing::Templates => "no resource templates",
        });
    }
    Ok(())
}

/// At most this many parameters are listed per tool; the others are counted.
const MAX_PARAMETERS_SHOWN: usize = 16;
/// A parameter's name and type are cut to this many characters each.
const MAX_PARAMETER_CHARS: usize = 40;

/// A tool's parameters on one line, from its input schema's `properties`: `name: type` for a
/// required one, `name?: type` for an optional one (`a: number, steps?: integer, tags?:
/// string[]`); `None` when it takes none. Names and types are the server's text: escaped, and
/// cut.
fn parameters(schema: &serde_json::Value) -> Option<String> {
    let properties = schema.get("properties")?.as_object()?;
    if properties.is_empty() {
        return None;
    }
    let required: BTreeSet<&str> = (schema.get("required").and_then(|r| r.as_array()))
        .map(|names| names.iter().filter_map(|n| n.as_str()).collect())
        .unwrap_or_default();
    let mut parts: Vec<String> = properties
        .iter()
        .take(MAX_PARAMETERS_SHOWN)
        .map(|(name, property)| {
            let optional = if required.contains(name.as_str()) {
                ""
            } else {
                "?"
            };
            format!(
                "{}{optional}: {}",
                cut(name),
                cut(&parameter_type(property))
            )
        })
        .collect();
    if properties.len() > MAX_PARAMETERS_SHOWN {
        parts.push(format!("+{} more", properties.len() - MAX_PARAMETERS_SHOWN));
    }
    Some(parts.join(", "))
}

/// A property's type in a word: its `type` (types joined by `|`, an array's item type as
/// `type[]`), `enum`, `anyOf`/`oneOf`, or `any`.
fn parameter_type(property: &serde_json::Value) -> String {
    use serde_json::Value;
    let words = |types: &[Value]| -> String {
        let names: Vec<&str> = types.iter().filter_map(Value::as_str).collect();
        names.join("|")
    };
    match property.get("type") {
        Some(Value::String(kind)) if kind == "array" => {
            match property.get("items").and_then(|i| i.get("type")) {
                Some(Value::String(item)) => format!("{item}[]"),
                _ => "array".to_owned(),
            }
        }
        Some(Value::String(kind)) => kind.clone(),
        Some(Value::Array(kinds)) if !kinds.is_empty() => words(kinds),
        _ if property.get("enum").is_some() => "enum".to_owned(),
        _ if property.get("anyOf").is_some() => "anyOf".to_owned(),
        _ if property.get("oneOf").is_some() => "oneOf".to_owned(),
        _ => "any".to_owned(),
    }
}

/// A server's word escaped for one line and cut to [`MAX_PARAMETER_CHARS`].
fn cut(text: &str) -> String {
    let text = safe::line(text);
    match text.char_indices().nth(MAX_PARAMETER_CHARS) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.into_owned(),
    }
}

/// The `--json` document of a listing, serialised straight from the snapshot.
struct Document<'a> {
    key: &'static str,
    kind: &'static str,
    snapshot: &'a HostSnapshot,
    listing: Listing,
}

/// One row: `{"name", "server", "<kind>": item}` (a resource or template has no `name`).
struct Row<'a, T> {
    name: Option<String>,
    server: &'a str,
    kind: &'static str,
    item: &'a T,
}

impl<'a, T> Row<'a, T> {
    fn named(name: String, server: &'a str, kind: &'static str, item: &'a T) -> Self {
        Row {
            name: Some(name),
            server,
            kind,
            item,
        }
    }

    fn located(server: &'a str, kind: &'static str, item: &'a T) -> Self {
        Row {
            name: None,
            server,
            kind,
            item,
        }
    }
}

impl<T: Serialize> Serialize for Row<'_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        if let Some(name) = &self.name {
            map.serialize_entry("name", name)?;
        }
        map.serialize_entry("server", self.server)?;
        map.serialize_entry(self.kind, self.item)?;
        map.end()
    }
}

/// A sequence serialised from an iterator it takes once.
struct Rows<I>(RefCell<Option<I>>);

impl<I: Iterator<Item = R>, R: Serialize> Serialize for Rows<I> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let rows = self.0.borrow_mut().take();
        serializer.collect_seq(rows.into_iter().flatten())
    }
}

impl Serialize for Document<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let (snapshot, kind) = (self.snapshot, self.kind);
        let mut map = serializer.serialize_map(Some(1))?;
        let key = self.key;
        match self.listing {
            Listing::Tools => {
                let rows = snapshot
                    .tools()
                    .map(|t| Row::named(t.name, t.server, kind, t.item));
                map.serialize_entry(key, &Rows(RefCell::new(Some(rows))))?;
            }
            Listing::Prompts => {
                let rows = snapshot
                    .prompts()
                    .map(|p| Row::named(p.name, p.server, kind, p.item));
                map.serialize_entry(key, &Rows(RefCell::new(Some(rows))))?;
            }
            Listing::Resources => {
                let rows = snapshot.resources().map(|(s, r)| Row::located(s, kind, r));
                map.serialize_entry(key, &Rows(RefCell::new(Some(rows))))?;
            }
            Listing::Templates => {
                let rows = snapshot
                    .resource_templates()
                    .map(|(s, t)| Row::located(s, kind, t));
                map.serialize_entry(key, &Rows(RefCell::new(Some(rows))))?;
            }
        }
        map.end()
    }
}

#[cfg(test)]
mod tests;
