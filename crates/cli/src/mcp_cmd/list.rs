//! The listing subcommands of `sidewire mcp`: `servers`, `tools`, `prompts`, `resources` and
//! `templates`, each printed one entry a line or as one JSON document.

use serde_json::{Value, json};
use sidewire_mcp::{McpHost, StartFailure};

use super::{LIST_INDENT, failure_text};
use crate::Reported;
use crate::out::Out;
use crate::safe;

/// `servers`: each server's state, with a failure's text under its row. Fails (reported) when
/// a server failed to start.
pub(super) fn servers(host: &McpHost, failures: &[StartFailure], out: &Out) -> anyhow::Result<()> {
    let mut rows = Vec::new();
    for status in host.status() {
        let state = format!("{:?}", status.state).to_lowercase();
        out.line(format!(
            "{} {state}{}{}",
            safe::line(&status.name),
            status
                .server_info
                .as_ref()
                .map(|i| format!(" {} {}", safe::line(&i.name), safe::line(&i.version)))
                .unwrap_or_default(),
            status
                .startup
                .map(|d| format!(" (started in {} ms)", d.as_millis()))
                .unwrap_or_default(),
        ));
        if let Some(failure) = &status.failure {
            // One printed line per line of the text, each escaped on its own, so a stderr
            // line cannot pass for another server's row.
            for line in failure_text(failure).lines() {
                out.line(format!("  {}", safe::line(line)));
            }
        }
        rows.push(json!({
            "name": status.name, "state": state, "pid": status.pid,
            "protocolVersion": status.protocol_version,
            "tools": status.tools, "prompts": status.prompts, "resources": status.resources,
            "failure": status.failure.as_ref().map(failure_text),
        }));
    }
    out.json(&json!({ "servers": rows }));
    if failures.is_empty() {
        Ok(())
    } else {
        Err(Reported.into())
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

/// One entry of a listing.
enum Entry {
    /// A tool or a prompt: under its namespaced name, with a description that may span lines.
    Named {
        name: String,
        server: String,
        description: Option<String>,
        item: Value,
    },
    /// A resource or a template: under its server, as `<server>:<location>  <name>`.
    Located {
        server: String,
        location: String,
        name: String,
        item: Value,
    },
}

/// `tools`, `prompts`, `resources` or `templates`: one entry a line, or the JSON document
/// `{"<listing>": [...]}`.
pub(super) fn listing(host: &McpHost, listing: Listing, out: &Out) -> anyhow::Result<()> {
    let named = |name, server, description, item| Entry::Named {
        name,
        server,
        description,
        item,
    };
    let located = |server, location, name, item| Entry::Located {
        server,
        location,
        name,
        item,
    };
    let entries: Vec<Entry> = match listing {
        Listing::Tools => (host.tools().into_iter())
            .map(|t| named(t.name, t.server, t.tool.description.clone(), json!(t.tool)))
            .collect(),
        Listing::Prompts => (host.prompts().into_iter())
            .map(|p| {
                named(
                    p.name,
                    p.server,
                    p.prompt.description.clone(),
                    json!(p.prompt),
                )
            })
            .collect(),
        Listing::Resources => (host.resources().into_iter())
            .filter_map(|e| Some((e.server, e.resource?)))
            .map(|(server, r)| located(server, r.uri.clone(), r.name.clone(), json!(r)))
            .collect(),
        Listing::Templates => (host.resources().into_iter())
            .filter_map(|e| Some((e.server, e.template?)))
            .map(|(server, t)| located(server, t.uri_template.clone(), t.name.clone(), json!(t)))
            .collect(),
    };
    let kind = listing.item_key();
    let mut rows = Vec::new();
    for entry in entries {
        match entry {
            Entry::Named {
                name,
                server,
                description,
                item,
            } => {
                out.line(format!(
                    "{}  {}",
                    safe::line(&name),
                    safe::block(description.unwrap_or_default().trim_end(), LIST_INDENT)
                ));
                rows.push(json!({ "name": name, "server": server, kind: item }));
            }
            Entry::Located {
                server,
                location,
                name,
                item,
            } => {
                out.line(format!(
                    "{}:{}  {}",
                    safe::line(&server),
                    safe::line(&location),
                    safe::line(&name)
                ));
                rows.push(json!({ "server": server, kind: item }));
            }
        }
    }
    out.json(&json!({ listing.key(): rows }));
    Ok(())
}
