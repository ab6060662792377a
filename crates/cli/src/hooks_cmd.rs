//! `sidewire hooks`: the command hooks of the files users keep (Claude Code's, the Reasonix
//! host's, and the other dialects `sidewire-hooks` reads), which of them run, their approval,
//! and a test run of one event; and [`member`], the hooks member every host command (`run`,
//! `ext intercept`, `mcp serve`) adds to its extension chain.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context as _;
use serde_json::{Map, Value, json};
use sidewire_agent::HooksMember;
use sidewire_ext_host::ChainMember;
use sidewire_hooks::{
    Approvals, Hook, HookEvent, HookFiles, HookId, HookRunner, RunContext, Source, Standing,
    decision_name, merge,
};

use crate::cli::HooksCommand;
use crate::out::Out;
use crate::safe;

/// The file in `$SIDEWIRE_HOME` that keeps the approvals and the required marks.
const APPROVALS_FILE: &str = "hooks.json";

/// The hook files and what sidewire says of them.
struct Loaded {
    files: HookFiles,
    approvals: Approvals,
    project: PathBuf,
}

/// Reads the hook files of the user (`$HOME`) and of the project (the current directory), and
/// the approvals.
fn load() -> anyhow::Result<Loaded> {
    let project = std::env::current_dir().context("cannot read the current directory")?;
    // No HOME: no user file (the project's are still read).
    let home = std::env::var_os("HOME")
        .filter(|home| !home.is_empty())
        .map_or_else(|| project.join(".no-home"), PathBuf::from);
    let files =
        HookFiles::read(&Source::standard(&home, &project)).context("reading the hook files")?;
    let approvals = Approvals::load(crate::sidewire_home()?.join(APPROVALS_FILE))
        .context("reading the hook approvals")?;
    Ok(Loaded {
        files,
        approvals,
        project,
    })
}

/// The hooks member for a host command's chain: `None` when no hook may run. Says each part of
/// a file that is not read once, and, when project hooks are held back, how to approve them:
/// with `ask` (a terminal), it asks for each; without, one warning.
///
/// # Errors
///
/// A hook file that is malformed (naming the file and the JSON path), or the approvals file.
pub(crate) fn member(
    out: &Out,
    ask: bool,
    session_id: &str,
) -> anyhow::Result<Option<Arc<dyn ChainMember>>> {
    let mut loaded = load()?;
    warn_unread(&loaded.files, out);
    let (mut armed, held) = loaded.approvals.arm(&loaded.files);
    if !held.is_empty() {
        if ask {
            let mut approved = false;
            for hook in &held {
                let question = format!(
                    "{}\nrun this project hook? [y/N] ",
                    describe(hook, Standing::NotApproved, false)
                );
                if crate::plugin_cmd::ask(&question)? {
                    loaded.approvals.approve(hook, false)?;
                    approved = true;
                }
            }
            if approved {
                loaded.approvals.save()?;
                armed = loaded.approvals.arm(&loaded.files).0;
            }
        } else {
            out.note(format!(
                "warning: {} project hook(s) not approved, so they do not run: `sidewire hooks \
                 list` shows them, `sidewire hooks approve ID` (or --all) approves them",
                held.len()
            ));
        }
    }
    if armed.is_empty() {
        return Ok(None);
    }
    let runner = HookRunner::new(armed, RunContext::new(&loaded.project), session_id);
    Ok(Some(Arc::new(HooksMember::new(runner))))
}

fn warn_unread(files: &HookFiles, out: &Out) {
    for warning in &files.warnings {
        out.note(format!(
            "warning: hooks: {}: {}: {}",
            safe::line(&warning.path.to_string_lossy()),
            safe::line(&warning.json_path),
            safe::line(&warning.message)
        ));
    }
}

pub(crate) async fn run(command: HooksCommand, out: &Out) -> anyhow::Result<()> {
    match command {
        HooksCommand::List => list(out),
        HooksCommand::Approve { ids, all, required } => approve(&ids, all, required, out),
        HooksCommand::Revoke { ids, all } => revoke(&ids, all, out),
        HooksCommand::Test { event, input } => test(&event, &input, out).await,
    }
}

/// One hook, for the terminal: its id, standing, event, matcher, file and command.
fn describe(hook: &Hook, standing: Standing, required: bool) -> String {
    let matcher = match hook.matcher.text() {
        "" => "*".to_owned(),
        text => safe::line(text).into_owned(),
    };
    format!(
        "{} {}{} {} [{}] {}:{}\n    {}",
        HookId::of(hook).short(),
        standing.as_str(),
        if required { ", required" } else { "" },
        hook.event,
        matcher,
        safe::line(&hook.source.path.to_string_lossy()),
        safe::line(&hook.json_path),
        safe::block(&hook.command, "    ")
    )
}

fn hook_json(hook: &Hook, standing: Standing, required: bool) -> Value {
    json!({
        "id": HookId::of(hook).as_str(),
        "standing": standing.as_str(),
        "runs": standing.runs(),
        "required": required,
        "event": hook.event.name(),
        "matcher": hook.matcher.text(),
        "command": hook.command,
        "timeoutSecs": hook.timeout.map(|t| t.as_secs_f64()),
        "source": hook.source.path,
        "jsonPath": hook.json_path,
    })
}

fn list(out: &Out) -> anyhow::Result<()> {
    let loaded = load()?;
    warn_unread(&loaded.files, out);
    if loaded.files.hooks.is_empty() {
        out.line(
            "no hooks: sidewire reads ~/.claude/settings.json, .claude/settings.json, \
             .claude/settings.local.json, .reasonix/settings.json and the other dialects' files",
        );
    }
    let mut rows = Vec::new();
    for hook in &loaded.files.hooks {
        let standing = loaded.approvals.standing(hook);
        let required = loaded.approvals.is_required(hook);
        out.line(describe(hook, standing, required));
        rows.push(hook_json(hook, standing, required));
    }
    out.json(&json!({ "hooks": rows, "approvals": loaded.approvals.path() }));
    Ok(())
}

/// The hooks `ids` (prefixes of at least 6 digits) name, or every hook with `all`.
fn chosen<'a>(files: &'a HookFiles, ids: &[String], all: bool) -> anyhow::Result<Vec<&'a Hook>> {
    anyhow::ensure!(
        all || !ids.is_empty(),
        "name the hooks (IDs from `sidewire hooks list`) or give --all"
    );
    if all {
        return Ok(files.hooks.iter().collect());
    }
    let mut chosen = Vec::new();
    for id in ids {
        let named: Vec<&Hook> = (files.hooks.iter())
            .filter(|hook| HookId::of(hook).starts_with(id))
            .collect();
        match named.as_slice() {
            [] => anyhow::bail!(
                "no hook has the id {} (ids of at least 6 digits; `sidewire hooks list` shows them)",
                safe::line(id)
            ),
            [hook] => chosen.push(*hook),
            _ => anyhow::bail!(
                "{} names more than one hook: give more of it",
                safe::line(id)
            ),
        }
    }
    Ok(chosen)
}

fn approve(ids: &[String], all: bool, required: bool, out: &Out) -> anyhow::Result<()> {
    let mut loaded = load()?;
    let hooks = chosen(&loaded.files, ids, all)?;
    let mut rows = Vec::new();
    for hook in &hooks {
        loaded.approvals.approve(hook, required)?;
    }
    loaded.approvals.save()?;
    for hook in hooks {
        let standing = loaded.approvals.standing(hook);
        out.line(describe(hook, standing, required));
        rows.push(hook_json(hook, standing, required));
    }
    out.json(&json!({ "approved": rows }));
    Ok(())
}

fn revoke(ids: &[String], all: bool, out: &Out) -> anyhow::Result<()> {
    let mut loaded = load()?;
    let hooks = chosen(&loaded.files, ids, all)?;
    let mut revoked = Vec::new();
    for hook in hooks {
        let id = HookId::of(hook);
        if loaded.approvals.revoke(&id) {
            out.line(format!("revoked {}", id.short()));
            revoked.push(id.to_string());
        }
    }
    loaded.approvals.save()?;
    out.json(&json!({ "revoked": revoked }));
    Ok(())
}

/// `hooks test EVENT INPUT`: the hooks of one event that may run, run on `input` (Claude
/// Code's stdin JSON for the event; the common fields are filled in when absent), each one's
/// trace, and the merged decision.
async fn test(event: &str, input: &str, out: &Out) -> anyhow::Result<()> {
    let event = HookEvent::from_name(event).with_context(|| {
        format!(
            "{} is not a hook event (one of {})",
            safe::line(event),
            HookEvent::ALL.map(HookEvent::name).join(", ")
        )
    })?;
    let text = if input == "-" {
        std::io::read_to_string(std::io::stdin().lock()).context("reading the input from stdin")?
    } else {
        input.to_owned()
    };
    let Value::Object(fields) = serde_json::from_str(&text).context("the input is not JSON")?
    else {
        anyhow::bail!("the input must be a JSON object (the event's stdin JSON)");
    };
    let loaded = load()?;
    warn_unread(&loaded.files, out);
    let (armed, held) = loaded.approvals.arm(&loaded.files);
    let tool = fields
        .get("tool_name")
        .and_then(Value::as_str)
        .map(str::to_owned);
    for hook in held
        .iter()
        .filter(|hook| hook.applies(event, tool.as_deref()))
    {
        out.note(format!(
            "not run (not approved): {}",
            describe(hook, Standing::NotApproved, false)
        ));
    }
    let runner = HookRunner::new(armed, RunContext::new(&loaded.project), crate::session_id());
    let mut common = match runner.input(event, Map::new()) {
        Value::Object(common) => common,
        _ => Map::new(),
    };
    common.extend(fields);
    let runs = runner
        .run_event(event, tool.as_deref(), &Value::Object(common))
        .await;
    let merged = merge(
        &runs
            .iter()
            .map(|run| run.answer.clone())
            .collect::<Vec<_>>(),
    );
    for run in &runs {
        out.line(safe::line(&run.trace_line()));
    }
    out.line(format!(
        "decision: {}{}",
        decision_name(merged.decision),
        merged
            .reason
            .as_deref()
            .map(|reason| format!(": {}", safe::line(reason)))
            .unwrap_or_default()
    ));
    out.json(&json!({
        "event": event.name(),
        "decision": decision_name(merged.decision),
        "reason": merged.reason,
        "updatedInput": merged.updated_input,
        "context": merged.context,
        "hooks": runs.iter().map(|run| json!({
            "id": HookId::of(&run.armed.hook).as_str(),
            "command": run.armed.hook.command,
            "source": run.armed.hook.source.path,
            "decision": decision_name(run.answer.decision),
            "failure": run.answer.failure,
            "trace": run.trace_line(),
        })).collect::<Vec<_>>(),
    }));
    Ok(())
}
