//! Extension tools (spec delta §2.5) through `run`: a V2 plugin (the built-in sidecar behind a
//! `reasonix.io/plugin/v2` manifest, serving the tool `add`) offers `ext__sidewire-demo__add`
//! beside the MCP tools; the scripted model calls it, and the call takes the MCP tools' path:
//! `tool.before` (where a user's PreToolUse hook can block it), `permission.decision` (the
//! host denies a tool that is not read-only, the sidecar's allow-all overrides it, audited),
//! the call, `tool.after`.

use std::path::{Path, PathBuf};

use serde_json::json;

use super::{EXE, SCRIPTED, run_in, stderr, stdout};

/// The built-in sidecar as a V2 plugin declaring and serving the tool `add`.
fn v2_plugin(dir: &Path) -> PathBuf {
    let package = dir.join("demo-v2");
    std::fs::create_dir_all(&package).unwrap();
    let manifest = json!({
        "apiVersion": "reasonix.io/plugin/v2",
        "name": "sidewire-demo",
        "version": "0.0.0",
        "runtime": {
            "command": EXE,
            "args": ["__sidecar", "--tools"],
            "intercepts": ["input.receive", "permission.decision"],
            "capabilities": ["interceptors", "ui", "providers", "tools"],
            "tools": [{
                "name": "add",
                "description": "Adds two integers.",
                "inputSchema": {"type": "object", "properties": {
                    "a": {"type": "integer"}, "b": {"type": "integer"}}}
            }]
        }
    });
    std::fs::write(package.join("reasonix-plugin.json"), manifest.to_string()).unwrap();
    package
}

struct Setup {
    _dir: tempfile::TempDir,
    /// `$HOME`, with the user's `.claude/settings.json`.
    user: PathBuf,
    /// The current directory (no MCP config: the only `add` is the extension's).
    project: PathBuf,
    /// `$SIDEWIRE_HOME`.
    state: PathBuf,
}

impl Setup {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let (user, project, state) = (
            dir.path().join("user"),
            dir.path().join("project"),
            dir.path().join("state"),
        );
        for dir in [&user, &project, &state] {
            std::fs::create_dir_all(dir.join(".claude")).unwrap();
        }
        let setup = Setup {
            _dir: dir,
            user,
            project,
            state,
        };
        let package = v2_plugin(setup._dir.path());
        let out = setup.sidewire(
            &[
                "plugin",
                "install",
                package.to_str().unwrap(),
                "--yes",
                "--link",
            ],
            "",
        );
        assert!(out.status.success(), "{}", stderr(&out));
        setup
    }

    fn sidewire(&self, args: &[&str], input: &str) -> std::process::Output {
        let user = self.user.to_str().unwrap();
        run_in(
            Some(&self.project),
            &self.state,
            args,
            input,
            &[("HOME", user)],
        )
    }

    fn audit(&self) -> String {
        std::fs::read_to_string(self.state.join("audit.jsonl")).unwrap_or_default()
    }
}

const TOOL: &str = "ext__sidewire-demo__add";

#[test]
fn run_offers_an_extension_tool_and_calls_it_through_the_chain() {
    let setup = Setup::new();
    let out = setup.sidewire(
        &["run", "--model", SCRIPTED],
        "/tools\nadd 2 and 40\n/quit\n",
    );
    let text = stdout(&out);
    assert!(out.status.success(), "{text}\n{}", stderr(&out));
    // `/tools` lists it after the MCP tools (there are none here).
    assert!(
        text.contains(&format!("{TOOL}  Adds two integers.")),
        "{text}"
    );
    // The host denied (not read-only), the sidecar's allow-all allowed, the tool answered.
    assert!(
        text.contains(&format!(
            "  tool {TOOL} {{\"a\":2,\"b\":40}} [host deny, allow after sidewire-demo] -> 42"
        )),
        "{text}"
    );
    assert!(text.contains("  The tool said: 42.\n"), "{text}");
    // The override is audited, as for an MCP tool.
    let audit = setup.audit();
    assert_eq!(audit.lines().count(), 1, "{audit}");
    assert!(audit.contains("\"extensionDecision\":\"allow\""), "{audit}");

    // `--json`: the report names the tool, its permission and its result.
    let out = setup.sidewire(
        &["--json", "run", "--model", SCRIPTED],
        "add 2 and 40\n/quit\n",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let call = stdout(&out)
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .find(|event| event["event"] == "toolCall")
        .expect("a toolCall event");
    assert_eq!(call["report"]["tool"], TOOL);
    assert_eq!(call["report"]["permission"]["permission"], "allow");
    assert_eq!(call["report"]["result"]["content"][0], "42");
}

#[test]
fn ext_tools_lists_the_served_tools() {
    let setup = Setup::new();
    let out = setup.sidewire(&["ext", "tools"], "");
    let text = stdout(&out);
    assert!(out.status.success(), "{text}\n{}", stderr(&out));
    assert!(
        text.contains(&format!(
            "{TOOL}  Adds two integers.  (plugin sidewire-demo)"
        )),
        "{text}"
    );
    let out = setup.sidewire(&["--json", "ext", "tools"], "");
    assert!(out.status.success(), "{}", stderr(&out));
    let listed: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let tool = &listed["tools"][0];
    assert_eq!(tool["name"], TOOL, "{listed}");
    assert_eq!(tool["tool"], "add", "{listed}");
    assert_eq!(
        tool["inputSchema"]["properties"]["a"]["type"], "integer",
        "{listed}"
    );
}

#[test]
fn a_pre_tool_use_hook_blocks_an_extension_tool_before_it_runs() {
    let setup = Setup::new();
    let settings = json!({"hooks": {"PreToolUse": [{"matcher": "ext__.*",
        "hooks": [{"type": "command", "command": "echo 'no extension tools' >&2; exit 2"}]}]}});
    std::fs::write(
        setup.user.join(".claude/settings.json"),
        settings.to_string(),
    )
    .unwrap();
    let out = setup.sidewire(
        &["--json", "run", "--model", SCRIPTED],
        "add 2 and 40\n/quit\n",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let call = stdout(&out)
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .find(|event| event["event"] == "toolCall")
        .expect("a toolCall event");
    assert_eq!(call["report"]["tool"], TOOL, "{call}");
    assert_eq!(call["report"]["stop"]["kind"], "blocked", "{call}");
    assert_eq!(call["report"]["stop"]["point"], "tool.before", "{call}");
    assert!(
        call["report"].get("result").is_none_or(|r| r.is_null()),
        "{call}"
    );
    // Nothing reached permission.decision, so nothing was overridden or audited.
    assert_eq!(setup.audit(), "");
}

#[test]
fn the_gateway_lists_and_serves_an_extension_tool_through_the_chain() {
    let setup = Setup::new();
    let config = setup.project.join("mcp.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"demo": {"command": EXE, "args": ["__mcp-server"]}}}).to_string(),
    )
    .unwrap();
    let user = setup.user.to_str().unwrap();
    let mut served = super::gateway::Served::start_with(
        &setup.state,
        &["--config", config.to_str().unwrap()],
        &[("HOME", user)],
    );
    let names = served.tool_names();
    assert!(names.contains(&TOOL.to_owned()), "{names:?}");
    let answer = served.call(1, TOOL, json!({"a": 2, "b": 40}));
    assert_eq!(super::gateway::text_of(&answer), "42", "{answer}");
    assert_ne!(answer["result"]["isError"], true, "{answer}");
    let (status, stderr) = served.close();
    assert!(status.success(), "{stderr}");
    // One gateway record, naming the plugin as its server; the override is audited too.
    let records = super::gateway::audit_records(&setup.state);
    assert_eq!(records.len(), 1, "{records:?}");
    assert_eq!(records[0]["tool"], TOOL);
    assert_eq!(records[0]["server"], "ext:sidewire-demo");
    assert_eq!(records[0]["outcome"], "ok");
    assert_eq!(setup.audit().lines().count(), 1, "{}", setup.audit());
}

#[test]
fn slash_call_runs_an_extension_tool_by_its_name() {
    let setup = Setup::new();
    // Typed `key=value` arguments come from the tool's input schema (integers here).
    let out = setup.sidewire(&["run"], &format!("/call {TOOL} a=2 b=40\n/quit\n"));
    let text = stdout(&out);
    assert!(out.status.success(), "{text}\n{}", stderr(&out));
    assert!(
        text.contains(&format!(
            "  tool {TOOL} {{\"a\":2,\"b\":40}} [host deny, allow after sidewire-demo] -> 42"
        )),
        "{text}"
    );
    assert_eq!(setup.audit().lines().count(), 1);
}
