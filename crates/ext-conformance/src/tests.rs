//! Unit tests of the kit's pure parts: selectors, the registry, evidence sanitising, the merge
//! of findings, the padded frames, the sample payloads, and how a [`Sidecar`] becomes a launch
//! (or an error) before anything is spawned.

use sidewire_ext_protocol::{FRAME_BYTES, HookPoint};

use super::checks::framing::padded_request;
use super::checks::sample_payload;
use super::report::{Findings, Outcome, sanitize};
use super::statements::{StatementKind, statement};
use super::*;

#[test]
fn selectors_pick_sections_checklist_items_and_ids() {
    let item6 = statement("6");
    assert_eq!(item6.section, "2.3");
    assert!(item6.matches("2.3"));
    assert!(item6.matches("2"));
    assert!(item6.matches("§2.3"));
    assert!(item6.matches("17"));
    assert!(item6.matches("17.6"));
    assert!(item6.matches("6"));
    assert!(!item6.matches("2.1"));
    assert!(!item6.matches("17.60"));
    let ui = statement("S-ui");
    assert!(ui.matches("S-ui"));
    assert!(ui.matches("10"));
    assert!(!ui.matches("17"));
    // A section prefix must end at a dot: 1 does not select 10.5.
    assert!(!ui.matches("1"));
}

#[test]
fn every_sidecar_side_checklist_item_is_listed_once() {
    let sidecar_items = [
        1, 2, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 19, 20, 22, 23, 24, 32, 33, 49, 50, 59,
        60, 69, 88, 89, 90,
    ];
    let listed: Vec<&str> = statements()
        .iter()
        .filter(|s| s.is_checklist_item())
        .map(|s| s.id)
        .collect();
    let expected: Vec<String> = sidecar_items.iter().map(u32::to_string).collect();
    let mut sorted = listed.clone();
    sorted.sort_by_key(|id| id.parse::<u32>().unwrap());
    assert_eq!(sorted, expected);
    let mut ids: Vec<&str> = statements().iter().map(|s| s.id).collect();
    ids.dedup();
    assert_eq!(ids.len(), statements().len(), "ids are unique");
    for id in ["3", "4", "33"] {
        assert!(matches!(statement(id).kind, StatementKind::NotCheckable(_)));
    }
    assert!(matches!(statement("19").kind, StatementKind::Slow(_)));
}

#[test]
fn evidence_is_escaped_and_cut() {
    assert_eq!(
        sanitize("a\u{1b}[2Jb\r\n\u{202e}", 100),
        "a\\x1b[2Jb\\r\\n\\u{202e}"
    );
    assert_eq!(sanitize("\u{feff}{}", 100), "\\u{feff}{}");
    let long = "x".repeat(1000);
    let cut = sanitize(&long, 300);
    assert!(cut.starts_with(&"x".repeat(300)));
    assert!(cut.ends_with("… (1000 bytes in all)"), "{cut}");
}

#[test]
fn a_failure_anywhere_fails_the_statement_and_a_pass_beats_not_applicable() {
    let mut findings = Findings::default();
    findings.add("6", Outcome::Pass);
    findings.add(
        "6",
        Outcome::Fail {
            detail: "skipped a blank line".into(),
            frames: Vec::new(),
        },
    );
    findings.add("12", Outcome::NotApplicable("no".into()));
    findings.add("12", Outcome::Pass);
    findings.add("14", Outcome::NotApplicable("has ui".into()));
    let selected: Vec<&'static Statement> = ["6", "12", "14", "16", "19", "33"]
        .into_iter()
        .map(statement)
        .collect();
    let results = findings.results(&selected, false);
    let verdicts: Vec<StatementVerdict> = results.iter().map(|r| r.verdict).collect();
    assert_eq!(
        verdicts,
        [
            StatementVerdict::Fail,
            StatementVerdict::Pass,
            StatementVerdict::NotApplicable,
            StatementVerdict::NotApplicable,
            StatementVerdict::Skipped,
            StatementVerdict::NotCheckable
        ]
    );
    assert_eq!(results[0].detail, "skipped a blank line");
    assert_eq!(results[2].detail, "has ui");
}

#[test]
fn padded_requests_have_the_exact_size_and_stay_json() {
    for size in [200, FRAME_BYTES, FRAME_BYTES + 1] {
        let frame = padded_request(7, size);
        assert_eq!(frame.len(), size);
        assert_eq!(frame.last(), Some(&b'\n'));
        let value: serde_json::Value =
            serde_json::from_slice(&frame[..frame.len() - 1]).expect("JSON");
        assert_eq!(value["id"], 7);
    }
}

#[test]
fn sample_payloads_decode_at_their_point_with_and_without_filler() {
    for &point in HookPoint::ALL {
        for pad in [0, 300_000] {
            let payload = sample_payload(point, pad);
            point
                .decode_payload(&payload.to_string())
                .unwrap_or_else(|err| panic!("{}: {err}", point.as_str()));
        }
    }
}

/// Writes `manifest` as `dir/reasonix-plugin.json`.
fn write_manifest(dir: &std::path::Path, manifest: &serde_json::Value) {
    std::fs::write(
        dir.join(sidewire_ext_protocol::MANIFEST_FILE),
        manifest.to_string(),
    )
    .unwrap();
}

fn manifest(runtime: Option<serde_json::Value>) -> serde_json::Value {
    let mut manifest = serde_json::json!({
        "apiVersion": "reasonix.io/plugin/v1", "name": "acme", "version": "1.0.0",
    });
    if let Some(runtime) = runtime {
        manifest["runtime"] = runtime;
    }
    manifest
}

fn env_of<'a>(launch: &'a target::Launch, name: &str) -> Option<&'a str> {
    launch
        .spec
        .env
        .iter()
        .rev()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

#[tokio::test]
async fn installed_plugins_and_packages_launch_through_the_launch_contract() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    write_manifest(
        root,
        &manifest(Some(serde_json::json!({
            "command": "${REASONIX_PLUGIN_ROOT}/bin/run",
            "args": ["--root=${REASONIX_PLUGIN_ROOT}", "$HOME"],
        }))),
    );
    let package = target::resolve(&Sidecar::Package(root.to_path_buf()))
        .await
        .unwrap();
    assert_eq!(package.plugin_id, "acme");
    assert_eq!(package.spec.command, root.join("bin/run"));
    let root_text = root.to_str().unwrap();
    assert_eq!(
        package.spec.args,
        [format!("--root={root_text}"), "$HOME".to_owned()]
    );
    assert_eq!(package.spec.cwd, root);
    assert_eq!(env_of(&package, "REASONIX_PLUGIN_ROOT"), Some(root_text));
    assert_eq!(env_of(&package, "REASONIX_PLUGIN_VERSION"), Some("1.0.0"));

    // An installed plugin is launched under its install record's id and version.
    let installed = target::resolve(&Sidecar::Installed {
        id: "acme-linked".to_owned(),
        root: root.to_path_buf(),
        version: "2.0.0".to_owned(),
    })
    .await
    .unwrap();
    assert_eq!(installed.plugin_id, "acme-linked");
    assert_eq!(
        env_of(&installed, "REASONIX_PLUGIN_NAME"),
        Some("acme-linked")
    );
    assert_eq!(env_of(&installed, "REASONIX_PLUGIN_VERSION"), Some("2.0.0"));
}

#[tokio::test]
async fn what_cannot_be_launched_is_a_typed_error_before_any_spawn() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = |name: &str| {
        let dir = tmp.path().join(name);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    };
    let resolve = |sidecar: Sidecar| async move { target::resolve(&sidecar).await.unwrap_err() };

    let missing = resolve(Sidecar::Package(dir("missing"))).await;
    assert!(missing.is_io(), "{missing}");

    let bad = dir("bad");
    std::fs::write(bad.join(sidewire_ext_protocol::MANIFEST_FILE), "{").unwrap();
    let err = resolve(Sidecar::Package(bad)).await;
    assert!(err.is_manifest(), "{err}");

    let declarative = dir("declarative");
    write_manifest(&declarative, &manifest(None));
    let err = resolve(Sidecar::Package(declarative)).await;
    assert!(err.is_no_runtime(), "{err}");
    assert!(err.to_string().contains("no `runtime`"), "{err}");

    // The launch contract refuses a shell, naming the command, for a package as for a host.
    let shell = dir("shell");
    write_manifest(
        &shell,
        &manifest(Some(serde_json::json!({ "command": "/bin/bash" }))),
    );
    let err = resolve(Sidecar::Package(shell)).await;
    assert!(err.is_refused(), "{err}");
    assert!(
        err.to_string().starts_with(
            "cannot check acme: manifest member runtime.command \"/bin/bash\" is a shell"
        ),
        "{err}"
    );

    // A command is not bound by the contract, but its program must exist.
    let command = dir("command");
    write_manifest(
        &command,
        &manifest(Some(serde_json::json!({ "command": "/bin/bash" }))),
    );
    let err = resolve(Sidecar::Command {
        manifest: command.join(sidewire_ext_protocol::MANIFEST_FILE),
        program: "./no-such-sidecar".to_owned(),
        args: Vec::new(),
    })
    .await;
    assert!(err.is_program(), "{err}");
}

#[test]
fn the_v2_delta_items_apply_to_v2_only_and_have_their_selectors() {
    let delta: Vec<&str> = statements()
        .iter()
        .filter(|s| s.is_delta_item())
        .map(|s| s.id)
        .collect();
    assert_eq!(delta, ["D4", "D5", "D6", "D9", "D15", "D22", "D24", "D25"]);
    for id in &delta {
        let s = statement(id);
        assert!(s.applies_to(ProtocolProfile::V2) && !s.applies_to(ProtocolProfile::V1));
        assert!(s.matches("delta"));
        assert!(!s.matches("17"));
    }
    assert!(statement("D9").matches("delta.9"));
    assert!(statement("D9").matches("D9"));
    assert!(!statement("D9").matches("delta.90"));
    assert!(!statement("9").matches("delta.9"));
    // The v1 version cases hold on v1 only (spec delta §1.4 P6), and so do v1's envelope,
    // state-machine and refusal rules; hook points, payloads, UI, content and streams hold on
    // both (delta §3.2).
    for id in ["22", "23", "24", "6", "15", "32", "88", "S-provider"] {
        assert!(!statement(id).applies_to(ProtocolProfile::V2), "{id}");
        assert!(statement(id).applies_to(ProtocolProfile::V1), "{id}");
    }
    for id in [
        "1",
        "S-frames",
        "S-handshake",
        "S-intercept",
        "S-ui",
        "89",
        "90",
        "59",
    ] {
        assert!(statement(id).applies_to(ProtocolProfile::V2), "{id}");
        assert!(statement(id).applies_to(ProtocolProfile::V1), "{id}");
    }
}
