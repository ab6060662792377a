//! `sidewire ext conformance`: runs the conformance kit (`sidewire-ext-conformance`) against a
//! sidecar and prints its report, as text grouped by spec section or as `--json`.
//! Exits 0 only when no statement failed (1 when one did; usage errors are clap's 2).
//!
//! Everything the sidecar said (frames, stderr quoted in a detail) is already escaped by the
//! kit, and every line still goes through `safe::line` on its way out.

use std::path::Path;

use anyhow::Context as _;
use sidewire_ext_conformance::{
    FrameDirection, Report, RunOptions, Sidecar, Statement, StatementKind, StatementResult,
    StatementVerdict,
};
use sidewire_ext_host::PluginStore;

use crate::Reported;
use crate::cli::ConformanceArgs;
use crate::out::Out;
use crate::safe;

pub(crate) async fn run(args: ConformanceArgs, out: &Out) -> anyhow::Result<()> {
    let mut options = RunOptions::new().slow(args.slow);
    for selector in &args.only {
        options = options.only(selector.clone());
    }
    if let Some(protocol) = args.protocol {
        options = options.protocol(protocol.profile());
    }
    if args.list {
        list(&options, out);
        return Ok(());
    }
    let sidecar = sidecar(&args).context("cannot run the conformance kit")?;
    let report = sidewire_ext_conformance::run(&sidecar, &options)
        .await
        .context("cannot run the conformance kit")?;
    if out.json {
        let mut value = serde_json::to_value(&report).context("serializing the report")?;
        value["passed"] = serde_json::json!(report.passed());
        out.json(&value);
    } else {
        print(&report, out);
    }
    if report.passed() {
        Ok(())
    } else {
        Err(Reported.into())
    }
}

/// The sidecar to check from the arguments (clap already refused the combinations that make no
/// sense): a command with its manifest, a package directory, or an installed plugin id (looked
/// up in the store here: the kit reads no store).
fn sidecar(args: &ConformanceArgs) -> anyhow::Result<Sidecar> {
    if let (Some(manifest), Some((program, rest))) = (&args.manifest, args.command.split_first()) {
        return Ok(Sidecar::Command {
            manifest: manifest.clone(),
            program: program.clone(),
            args: rest.to_vec(),
        });
    }
    let name = args.target.as_deref().unwrap_or_default();
    if Path::new(name).is_dir() {
        return Ok(Sidecar::Package(name.into()));
    }
    let plugin = PluginStore::new(crate::sidewire_home()?)
        .get(name)
        .context("reading the plugin store")?
        .with_context(|| format!("plugin {name} is not installed (see `sidewire plugin list`)"))?;
    Ok(Sidecar::Installed {
        id: plugin.id,
        root: plugin.root,
        version: plugin.version,
    })
}

/// A section's heading: `§6.1 Handshake sequence`, `v2 delta §2.5 Extension tools`.
fn section_heading(section: &str) -> String {
    match section.strip_prefix("delta.") {
        Some(rest) => format!("v2 delta §{rest} {}", section_title(section)),
        None => format!("§{section} {}", section_title(section)),
    }
}

/// A section's title.
fn section_title(section: &str) -> &'static str {
    match section {
        "delta.1.4" => "Identity and negotiation",
        "delta.2.2" => "Lifecycle DTOs",
        "delta.2.3" => "Intercepts",
        "delta.2.5" => "Extension tools",
        "delta.2.11" => "Provider streams",
        "delta.3.1" => "Reasons",
        "2.1" => "Process, streams, frames",
        "2.2" => "Envelope",
        "2.3" => "Malformed and unexpected frames",
        "2.4" => "Output limits and write discipline",
        "2.5" => "Call deadlines",
        "3" => "Errors",
        "4" => "Strict DTO decoding",
        "6.1" => "Handshake sequence",
        "6.3" => "Host validation of InitializeResult",
        "6.4" => "Readiness barrier",
        "6.5" => "SDK state machine",
        "6.6" => "Shutdown",
        "7.2" => "Hook points",
        "7.5" => "Decisions",
        "7.9" => "Timeouts",
        "8" => "Events",
        "9" => "Content references",
        "10.3" => "Blocking prompts",
        "10.4" => "Actions and submissions",
        "10.5" => "UI calls",
        "14.4" => "Provider extensions",
        _ => "",
    }
}

/// Sections in spec order (`2.3` < `10.4`), the v2 delta's after the v1 spec's.
fn section_key(section: &str) -> Vec<u32> {
    match section.strip_prefix("delta.") {
        Some(rest) => std::iter::once(u32::MAX).chain(section_key(rest)).collect(),
        None => section.split('.').filter_map(|p| p.parse().ok()).collect(),
    }
}

fn grouped<T>(items: &[T], section: impl Fn(&T) -> &'static str) -> Vec<(&'static str, Vec<&T>)> {
    let mut groups: Vec<(&'static str, Vec<&T>)> = Vec::new();
    for item in items {
        let s = section(item);
        match groups.iter_mut().find(|(name, _)| *name == s) {
            Some((_, members)) => members.push(item),
            None => groups.push((s, vec![item])),
        }
    }
    groups.sort_by_key(|(s, _)| section_key(s));
    groups
}

fn list(options: &RunOptions, out: &Out) {
    let selected: Vec<&Statement> = sidewire_ext_conformance::statements()
        .iter()
        .filter(|s| options.selects(s))
        .filter(|s| options.protocol.is_none_or(|p| s.applies_to(p)))
        .collect();
    if out.json {
        out.json(&serde_json::json!({ "statements": selected }));
        return;
    }
    for (section, statements) in grouped(&selected, |s| s.section) {
        out.heading(section_heading(section));
        for statement in statements {
            let kind = match statement.kind {
                StatementKind::Checked => "checked".to_owned(),
                StatementKind::Slow(why) => format!("slow: {why}"),
                StatementKind::NotCheckable(why) => format!("not checkable: {why}"),
                _ => String::new(),
            };
            out.line(format!(
                "  {:<12} {}",
                statement.id,
                safe::line(statement.title)
            ));
            out.line(format!("  {:<12} ({kind})", ""));
        }
    }
}

fn print(report: &Report, out: &Out) {
    out.heading(format!(
        "Conformance of {} to Extension Protocol v{} ({}; {} statements, {:.1} s)",
        safe::line(&report.plugin),
        report.profile.major(),
        report.profile.protocol_id(),
        report.results.len(),
        report.elapsed.as_secs_f64()
    ));
    for (section, results) in grouped(&report.results, |r| r.statement.section) {
        out.line("");
        out.heading(section_heading(section));
        for result in results {
            print_result(result, out);
        }
    }
    out.line("");
    out.line(format!(
        "{} passed, {} failed, {} not applicable, {} not checkable, {} skipped",
        report.count(StatementVerdict::Pass),
        report.count(StatementVerdict::Fail),
        report.count(StatementVerdict::NotApplicable),
        report.count(StatementVerdict::NotCheckable),
        report.count(StatementVerdict::Skipped),
    ));
}

fn print_result(result: &StatementResult, out: &Out) {
    out.line(format!(
        "  {:<13} {:<12} {}",
        result.verdict.label(),
        result.statement.id,
        safe::line(result.statement.title)
    ));
    if !result.detail.is_empty() {
        out.line(format!(
            "  {:<13} {:<12} {}",
            "",
            "",
            safe::line(&result.detail)
        ));
    }
    for frame in &result.frames {
        let arrow = match frame.direction {
            FrameDirection::Sent => "host →",
            _ => "← sidecar",
        };
        out.line(format!(
            "  {:<13} {:<12} {arrow} {}",
            "",
            "",
            safe::line(&frame.text)
        ));
    }
}
