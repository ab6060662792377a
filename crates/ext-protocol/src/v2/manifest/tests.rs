//! The v2 manifest parser: the §5.3 manifests, strictness, relaxations, and the mapping onto the
//! plugin model; v1 manifests stay with the v1 parser.

use crate::testkit::Predicate;
use crate::v2::{ManifestExpectation, is_plugin_name, is_slot_v2};
use crate::{Capability, Error, HookPoint, Manifest, ProtocolProfile, Slot};

/// The three manifests of spec delta §5.3.
const REPLAYS: [(&str, &str, &[Capability]); 3] = [
    (
        r#"{"apiVersion":"reasonix.io/plugin/v2","name":"starter-extension","version":"0.1.0",
            "runtime":{"command":"${REASONIX_PLUGIN_ROOT}/bin/starter-extension",
            "intercepts":["input.receive"],"capabilities":["interceptors"]}}"#,
        "starter-extension",
        &[Capability::Interceptors],
    ),
    (
        r#"{"apiVersion":"reasonix.io/plugin/v2","name":"allow-all","version":"0.1.0",
            "runtime":{"command":"${REASONIX_PLUGIN_ROOT}/bin/allow-all",
            "intercepts":["permission.decision"],"capabilities":["interceptors"]}}"#,
        "allow-all",
        &[Capability::Interceptors],
    ),
    (
        r#"{"apiVersion":"reasonix.io/plugin/v2","name":"status-card-go","version":"0.1.0",
            "runtime":{"command":"${REASONIX_PLUGIN_ROOT}/bin/status-card",
            "intercepts":["input.receive"],"capabilities":["interceptors","ui"]}}"#,
        "status-card-go",
        &[Capability::Interceptors, Capability::Ui],
    ),
];

#[test]
fn the_replay_manifests_parse_as_v2_and_map_onto_the_model() {
    for (json, name, capabilities) in REPLAYS {
        let manifest = Manifest::parse(json).unwrap();
        assert_eq!(manifest.profile(), ProtocolProfile::V2);
        assert_eq!(manifest.name, name);
        assert_eq!(manifest.version, "0.1.0");
        let runtime = manifest.runtime.as_ref().unwrap();
        assert_eq!(runtime.capabilities, capabilities);
        assert_eq!(runtime.intercepts.len(), 1);
        let v2 = manifest.v2.as_deref().unwrap();
        let expectation = ManifestExpectation::from_manifest(runtime, v2);
        // Exactly the members the reference host sends for these manifests.
        let sent = serde_json::to_value(&expectation).unwrap();
        let keys: Vec<&String> = sent.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["capabilities", "intercepts"], "{sent}");
    }
}

#[test]
fn v1_manifests_keep_the_v1_parser() {
    let v1 = r#"{"apiVersion":"reasonix.io/plugin/v1","name":"a","version":"1",
        "runtime":{"command":"/x","intercepts":["input.receive"]}}"#;
    // v1 still demands the capability, which v2 relaxes.
    let err = Manifest::parse(v1).unwrap_err();
    assert_eq!(err.path(), "runtime.intercepts", "{err}");
    let manifest =
        Manifest::parse(r#"{"apiVersion":"reasonix.io/plugin/v1.2","name":"a","version":"1"}"#)
            .unwrap();
    assert_eq!(manifest.profile(), ProtocolProfile::V1);
    assert!(manifest.v2.is_none());
    // Members v1 does not know stay unknown there.
    for member in [r#""requires":[]"#, r#""skills":"s""#] {
        let json = format!(
            r#"{{"apiVersion":"reasonix.io/plugin/v1","name":"a","version":"1",{member}}}"#
        );
        assert!(Manifest::parse(&json).unwrap_err().is_unknown(), "{json}");
    }
    // Near misses of the v2 apiVersion are v1 pattern errors, not v2 manifests.
    for api in [
        "reasonix.io/plugin/v2.0",
        "reasonix.io/plugin/v2.1",
        " reasonix.io/plugin/v2",
    ] {
        let json = format!(r#"{{"apiVersion":"{api}","name":"a","version":"1"}}"#);
        let err = Manifest::parse(&json).unwrap_err();
        assert_eq!(err.path(), "apiVersion", "{json}");
        assert!(err.is_pattern(), "{err:?}");
    }
}

#[test]
fn v2_relaxations() {
    let manifest = Manifest::parse(
        r#"{"apiVersion":"reasonix.io/plugin/v2","name":" Acme.Guard_2 ",
            "description":" d ",
            "runtime":{"command":" /bin/x ","args":["a"],
            "intercepts":["tool.before","tool.before","input.receive"],
            "replaces":["permission","tool:shell","permission","provider:p/m"],
            "capabilities":["tools","ui","tools"],
            "tools":[{"name":"t","description":"d","inputSchema":{"type":"object"},"readOnly":true}]}}"#,
    )
    .unwrap();
    assert_eq!(manifest.name, "Acme.Guard_2");
    assert_eq!(manifest.version, "", "version is optional");
    assert_eq!(manifest.description, "d");
    let runtime = manifest.runtime.as_ref().unwrap();
    assert_eq!(runtime.command, "/bin/x");
    assert_eq!(
        runtime.intercepts,
        [HookPoint::ToolBefore, HookPoint::InputReceive]
    );
    assert_eq!(runtime.replaces, [Slot::Permission]);
    assert_eq!(runtime.capabilities, [Capability::Ui]);
    let v2 = manifest.v2.as_deref().unwrap();
    assert_eq!(v2.replaces, ["permission", "tool:shell", "provider:p/m"]);
    assert_eq!(v2.capabilities, ["tools", "ui"]);
    assert_eq!(v2.tools[0].name, "t");
    assert!(v2.tools[0].read_only);
    let sent = ManifestExpectation::from_manifest(runtime, v2);
    assert_eq!(sent.tools, ["t"]);
    assert_eq!(sent.replaces, v2.replaces);

    let manifest = Manifest::parse(
        r#"{"apiVersion":"reasonix.io/plugin/v2","name":"p","version":"1",
            "requires":[{"namespace":" n ","kind":"provider","id":"x","versionRange":">=1.0.0","optional":true}],
            "provides":[{"namespace":"plugin/p","kind":"provider","id":"fake/echo","version":"1.0.0","schemaHash":"sha256:0"},
                        {"namespace":"plugin/p","kind":"uiaction","id":"refresh","version":"1.0.0","schemaHash":"h"}],
            "contributes":{"skills":["s"],"hooks":{}},
            "skills":"legacy","mcpServers":{"srv":{"command":"x"}}}"#,
    )
    .unwrap();
    let v2 = manifest.v2.as_deref().unwrap();
    assert_eq!(v2.requires[0].namespace, "n");
    assert!(v2.requires[0].optional);
    assert_eq!(v2.provides.len(), 2);
    assert_eq!(manifest.contributes.len(), 2);
    assert_eq!(v2.contributions.skills, ["legacy", "s"]);
    assert_eq!(v2.contributions.mcp_servers.len(), 1);
    assert!(manifest.runtime.is_none());
    let sent = ManifestExpectation::from_manifest(&Default::default(), v2);
    assert_eq!(sent.providers, ["plugin/p/fake/echo"]);
    assert_eq!(sent.ui_actions, ["refresh"]);
    assert_eq!(sent.requires[0].version_range.as_deref(), Some(">=1.0.0"));
    assert!(sent.tools.is_empty());
}

#[test]
fn v2_manifests_are_strict_with_json_paths() {
    const HEAD: &str = r#""apiVersion":"reasonix.io/plugin/v2","name":"a""#;
    let cases: [(&str, &str, Predicate); 16] = [
        (r#""nam":"b""#, "nam", Error::is_unknown),
        (
            r#""contributes":{"promts":[]}"#,
            "contributes.promts",
            Error::is_unknown,
        ),
        (
            r#""runtime":{"command":"/x","intrcepts":[]}"#,
            "runtime.intrcepts",
            Error::is_unknown,
        ),
        (
            r#""requires":[{"namespace":"n","kind":"k","id":"i","x":1}]"#,
            "requires[0].x",
            Error::is_unknown,
        ),
        (
            r#""requires":[{"namespace":"n","kind":"k"}]"#,
            "requires[0].id",
            Error::is_blank,
        ),
        (
            r#""requires":[{"namespace":"n s","kind":"k","id":"i"}]"#,
            "requires[0].namespace",
            Error::is_rule,
        ),
        (
            r#""provides":[{"namespace":"n","kind":"k","id":"i"}]"#,
            "provides[0].version",
            Error::is_rule,
        ),
        (
            r#""provides":[{"namespace":"n","kind":"tool","id":"i","version":"1.0.0"}]"#,
            "provides[0].schemaHash",
            Error::is_rule,
        ),
        (
            r#""provides":[{"namespace":"n","kind":"k","id":"i","version":"1.0.0"},{"namespace":"n","kind":"k","id":"i","version":"2.0.0"}]"#,
            "provides[1]",
            Error::is_rule,
        ),
        (
            r#""runtime":{"command":" "}"#,
            "runtime.command",
            Error::is_blank,
        ),
        (
            r#""runtime":{"command":"/x","args":["a",""]}"#,
            "runtime.args[1]",
            Error::is_blank,
        ),
        (
            r#""runtime":{"command":"/x","priority":1001}"#,
            "runtime.priority",
            Error::is_range,
        ),
        (
            r#""runtime":{"command":"/x","capabilities":["filesystem"]}"#,
            "runtime.capabilities[0]",
            Error::is_rule,
        ),
        (
            r#""runtime":{"command":"/x","replaces":["tool:"]}"#,
            "runtime.replaces[0]",
            Error::is_rule,
        ),
        (
            r#""runtime":{"command":"/x","tools":[{"name":"t","description":"d","inputSchema":{"type":"object"}}]}"#,
            "runtime.tools",
            Error::is_rule,
        ),
        (
            r#""runtime":{"command":"/x","capabilities":["tools"],"tools":[{"name":"a b","description":"d","inputSchema":{"type":"object"}}]}"#,
            "runtime.tools[0].name",
            Error::is_rule,
        ),
    ];
    for (member, path, predicate) in cases {
        let json = format!("{{{HEAD},{member}}}");
        let err = Manifest::parse(&json).unwrap_err();
        assert_eq!(err.path(), path, "{json}: {err}");
        assert!(predicate(&err), "{json}: {err:?}");
    }
    let tools = r#""runtime":{"command":"/x","capabilities":["tools"],"tools":[
        {"name":"t","description":"d","inputSchema":{"type":"object"}},
        {"name":"t","description":"d","inputSchema":{"type":"object"}}]}"#;
    let err = Manifest::parse(&format!("{{{HEAD},{tools}}}")).unwrap_err();
    assert_eq!(err.path(), "runtime.tools[1].name", "{err}");
    let err = Manifest::parse(r#"{"apiVersion":"reasonix.io/plugin/v2","name":"-a"}"#).unwrap_err();
    assert_eq!(err.path(), "name");
    assert!(err.is_pattern(), "{err:?}");
}

#[test]
fn v2_names() {
    for ok in ["a", "A", "a.b_c-d", "0", &"a".repeat(64)] {
        assert!(is_plugin_name(ok), "{ok}");
    }
    for bad in ["", "-a", ".a", "_a", "a b", "a/b", &"a".repeat(65)] {
        assert!(!is_plugin_name(bad), "{bad}");
    }
}

/// Checklist item 30: only `reasonix.io/plugin/v2` exactly is a v2 manifest; the near misses are
/// refused naming the apiVersion.
#[test]
fn api_versions() {
    let parse = |api: &str| {
        Manifest::parse(&format!(
            r#"{{"apiVersion":{api},"name":"a","version":"1"}}"#
        ))
    };
    assert_eq!(
        parse(r#""reasonix.io/plugin/v2""#).unwrap().profile(),
        ProtocolProfile::V2
    );
    for api in [
        r#""reasonix.io/plugin/v2.1""#,
        r#""reasonix.io/plugin/v2.0""#,
        r#""reasonix.io/plugin/v0""#,
        r#""reasonix.io/plugin/v10.2""#,
        r#""reasonix.io/plugin/vX""#,
        r#""foo""#,
        "42",
    ] {
        let err = parse(api).unwrap_err();
        assert_eq!(err.path(), "apiVersion", "{api}: {err}");
    }
}

/// Checklist item 34: the 17 points and the 10 slot forms in one v2 runtime without the
/// capabilities `interceptors` or `strategies`; the same runtime in a v1 manifest is refused.
#[test]
fn every_point_and_slot_form_without_capabilities() {
    let points: Vec<String> = HookPoint::ALL
        .iter()
        .map(|p| format!("{:?}", p.as_str()))
        .collect();
    let mut slots: Vec<String> = Slot::ALL
        .iter()
        .map(|s| format!("{:?}", s.as_str()))
        .collect();
    slots.extend([
        r#""tool:bash""#.to_owned(),
        r#""provider:openai/gpt-5""#.to_owned(),
    ]);
    assert_eq!((points.len(), slots.len()), (17, 10));
    let manifest = |api: &str| {
        format!(
            r#"{{"apiVersion":"{api}","name":"a","version":"1","runtime":{{"command":"/x",
            "intercepts":[{}],"replaces":[{}]}}}}"#,
            points.join(","),
            slots.join(",")
        )
    };
    let parsed = Manifest::parse(&manifest("reasonix.io/plugin/v2")).unwrap();
    let runtime = parsed.runtime.as_ref().unwrap();
    assert_eq!(runtime.intercepts.len(), 17);
    assert_eq!(runtime.replaces.len(), 8);
    assert_eq!(parsed.v2.as_deref().unwrap().replaces.len(), 10);
    Manifest::parse(&manifest("reasonix.io/plugin/v1")).unwrap_err();
    // A v1 manifest that would otherwise pass still refuses the two v2 forms.
    for form in ["tool:bash", "provider:openai/gpt-5"] {
        let v1 = format!(
            r#"{{"apiVersion":"reasonix.io/plugin/v1","name":"a","version":"1","runtime":{{"command":"/x",
            "capabilities":["strategies"],"replaces":["{form}"]}}}}"#
        );
        let err = Manifest::parse(&v1).unwrap_err();
        assert_eq!(err.path(), "runtime.replaces[0]", "{form}: {err}");
    }
}

/// Delta §2.8: the grammar of `tool:` and `provider:` slots.
#[test]
fn slot_forms() {
    use crate::v2::SlotForm;
    for (slot, form) in [
        ("tool:bash", SlotForm::Tool),
        ("provider:openai/gpt-5", SlotForm::Provider),
        ("provider:plugin/demo/fake/x", SlotForm::Provider),
        ("provider:plugin/Foo.Bar_1/fake/x", SlotForm::Provider),
    ] {
        assert_eq!(SlotForm::parse(slot), Some(form), "{slot}");
        assert!(is_slot_v2(slot), "{slot}");
    }
    for bad in [
        "tool:",
        "tool:a b",
        "tool:a\tb",
        "provider:",
        "provider:openai",
        "provider:openai/x/y",
        "provider:/x",
        "provider:openai/",
        "provider:plugin/demo/fake",
        "provider:plugin//fake/x",
        "provider:plugin/ /fake/x",
        "provider:plugin/demo/fake/x/y",
        "tools:bash",
        "Permission",
    ] {
        assert_eq!(SlotForm::parse(bad), None, "{bad}");
        assert!(!is_slot_v2(bad), "{bad}");
        let json = format!(
            r#"{{"apiVersion":"reasonix.io/plugin/v2","name":"a","runtime":{{"command":"/x","replaces":[{bad:?}]}}}}"#
        );
        let err = Manifest::parse(&json).unwrap_err();
        assert_eq!(err.path(), "runtime.replaces[0]", "{bad}: {err}");
        assert!(err.is_rule(), "{bad}: {err:?}");
    }
    assert!(is_slot_v2("permission"));
}

/// Checklist item 35 and delta §2.6: capability and requirement rules.
#[test]
fn dependency_rules() {
    const HEAD: &str = r#""apiVersion":"reasonix.io/plugin/v2","name":"a""#;
    let parse = |member: &str| Manifest::parse(&format!("{{{HEAD},{member}}}"));
    let refused: [(&str, &str); 14] = [
        (
            r#""provides":[{"namespace":"n","kind":"provider","id":"i","version":"1.0.0"}]"#,
            "provides[0].schemaHash",
        ),
        (
            r#""provides":[{"namespace":"n","kind":"ui","id":"i","version":"1.0.0"}]"#,
            "provides[0].schemaHash",
        ),
        (
            r#""provides":[{"namespace":"n","kind":"uiaction","id":"i","version":"1.0.0","schemaHash":" "}]"#,
            "provides[0].schemaHash",
        ),
        (
            r#""provides":[{"namespace":"n","kind":"k","id":"i","version":"one"}]"#,
            "provides[0].version",
        ),
        (
            r#""provides":[{"namespace":"n","kind":"k","id":"i","version":"1.0"}]"#,
            "provides[0].version",
        ),
        (
            r#""provides":[{"namespace":"n","kind":"k","id":"i","version":"1.0.0"},{"namespace":"n","kind":"k","id":"i","version":"2.0.0"}]"#,
            "provides[1]",
        ),
        (
            r#""provides":[{"namespace":"n","kind":"k","id":"a\tb","version":"1.0.0"}]"#,
            "provides[0].id",
        ),
        (
            r#""requires":[{"namespace":"n","kind":"k","id":"i","version":"latest"}]"#,
            "requires[0].version",
        ),
        (
            r#""requires":[{"namespace":"n","kind":"k","id":"i","versionRange":">=x"}]"#,
            "requires[0].versionRange",
        ),
        (
            r#""requires":[{"namespace":"n","kind":"k","id":"i","versionRange":">=1.0.0,"}]"#,
            "requires[0].versionRange",
        ),
        (
            r#""requires":[{"namespace":"n","kind":"k","id":"i","versionRange":"^1.0.0"}]"#,
            "requires[0].versionRange",
        ),
        (
            r#""requires":[{"namespace":"n","kind":"k","id":"i","versionRange":"1.x"}]"#,
            "requires[0].versionRange",
        ),
        (
            r#""requires":[{"namespace":"n","kind":"","id":"i"}]"#,
            "requires[0].kind",
        ),
        (
            r#""requires":[{"namespace":"n","kind":"k","id":"i"},{"namespace":"n","kind":"k","id":"i","version":"v"}]"#,
            "requires[1].version",
        ),
    ];
    for (member, path) in refused {
        let err = parse(member).unwrap_err();
        assert_eq!(err.path(), path, "{member}: {err}");
    }
    let schema_hash = parse(refused[0].0).unwrap_err().to_string();
    assert!(schema_hash.contains("schemaHash"), "{schema_hash}");
    let ok = parse(
        r#""requires":[{"namespace":"reasonix","kind":"browser","id":"companion","versionRange":">=1.0.0,<2.0.0"},
                       {"namespace":"n","kind":"k","id":"i","version":"v1.2.3","versionRange":"=1.2.3","optional":true}],
           "provides":[{"namespace":"n","kind":"provider","id":"i","version":"v1.0.0-rc.1","schemaHash":"h"},
                       {"namespace":"n","kind":"other","id":"i","version":"2.0.0"}]"#,
    )
    .unwrap();
    let v2 = ok.v2.as_deref().unwrap();
    assert_eq!(v2.requires[0].key(), "reasonix/browser/companion");
    assert_eq!(v2.provides.len(), 2);
}

/// Checklist item 31 (the entry levels) and 37 (the text rules and the legacy merge).
#[test]
fn contributes_is_strict_and_merges_the_legacy_members() {
    const HEAD: &str = r#""apiVersion":"reasonix.io/plugin/v2","name":"a""#;
    let parse = |member: &str| Manifest::parse(&format!("{{{HEAD},{member}}}"));
    let refused: [(&str, &str, Predicate); 14] = [
        (
            r#""contributes":{"hooks":{"PreToolUse":[{"command":"x","comand":"y"}]}}"#,
            "contributes.hooks.PreToolUse[0].comand",
            Error::is_unknown,
        ),
        (
            r#""hooks":{"PreToolUse":[{"command":"x","comand":"y"}]}"#,
            "hooks.PreToolUse[0].comand",
            Error::is_unknown,
        ),
        (
            r#""mcpServers":{"srv":{"command":"x","bogus":1}}"#,
            "mcpServers.srv.bogus",
            Error::is_unknown,
        ),
        (
            r#""contributes":{"mcpServers":{"srv":{"command":"x","autoStart":true}}}"#,
            "contributes.mcpServers.srv.autoStart",
            Error::is_unknown,
        ),
        (
            r#""contributes":{"skills":[{"path":"s","name":"n"}]}"#,
            "contributes.skills[0].name",
            Error::is_unknown,
        ),
        (
            r#""contributes":{"hooks":{"E":[{"async":"yes"}]}}"#,
            "contributes.hooks.E[0].async",
            Error::is_type,
        ),
        (
            r#""contributes":{"skills":7}"#,
            "contributes.skills",
            Error::is_type,
        ),
        (
            r#""contributes":{"skills":["../outside"]}"#,
            "contributes.skills[0]",
            Error::is_rule,
        ),
        (
            r#""contributes":{"prompts":"/etc/passwd"}"#,
            "contributes.prompts",
            Error::is_rule,
        ),
        (
            r#""contributes":{"themes":["C:\\themes\\x"]}"#,
            "contributes.themes[0]",
            Error::is_rule,
        ),
        (
            r#""commands":["\\\\server\\share\\x"]"#,
            "commands[0]",
            Error::is_rule,
        ),
        (
            r#""contributes":{"agents":[{"path":"a/../../b"}]}"#,
            "contributes.agents[0]",
            Error::is_rule,
        ),
        (
            r#""contributes":{"hooks":{"E":[{"command":"a"}]}},"hooks":{"E":[{"command":"b"}]}"#,
            "hooks.E",
            Error::is_rule,
        ),
        (
            r#""contributes":{"mcpServers":{"srv":{"command":"a"}}},"mcpServers":{"srv":{"command":"b"}}"#,
            "mcpServers.srv",
            Error::is_rule,
        ),
    ];
    for (member, path, predicate) in refused {
        let err = parse(member).unwrap_err();
        assert_eq!(err.path(), path, "{member}: {err}");
        assert!(predicate(&err), "{member}: {err:?}");
    }
    let escape = parse(refused[7].0).unwrap_err().to_string();
    assert!(
        escape.contains("must be relative and stay inside the plugin root"),
        "{escape}"
    );
    let manifest = parse(
        r#""contributes":{"skills":["skills/b","./skills/a/",{"path":"skills\\b"}],
            "themes":"themes/*.reasonix-theme",
            "hooks":{"E":[{"match":"m","command":"c","args":["x"],"async":true,"timeout":5,"env":{"K":"V"}}]},
            "mcpServers":{"srv":{"type":"stdio","command":"c","auto_start":true,"headers":{"h":"v"}}}},
          "skills":"skills/c","commands":["cmd"],
          "hooks":{"E":[{"match":"m","command":"c","args":["x"],"async":true,"timeout":5,"env":{"K":"V"}}],
                   "F":[{"command":"f"}]},
          "mcpServers":{"srv":{"type":"stdio","command":"c","auto_start":true,"headers":{"h":"v"}},
                        "other":{"url":"https://x"}}"#,
    )
    .unwrap();
    let c = &manifest.v2.as_deref().unwrap().contributions;
    assert_eq!(c.skills, ["skills/a", "skills/b", "skills/c"]);
    assert_eq!(c.commands, ["cmd"]);
    assert_eq!(c.themes, ["themes/*.reasonix-theme"]);
    assert_eq!(c.hooks.keys().collect::<Vec<_>>(), ["E", "F"]);
    assert_eq!(c.hooks["E"].len(), 1, "identical entries dedupe");
    assert_eq!(c.mcp_servers.keys().collect::<Vec<_>>(), ["other", "srv"]);
    assert_eq!(manifest.contributes["skills"][2], "skills/c");
}

/// Checklist item 33: each runtime error of delta §4.2 is refused at its member's path.
#[test]
fn runtime_errors_name_their_member() {
    const HEAD: &str = r#""apiVersion":"reasonix.io/plugin/v2","name":"a""#;
    let tool = |extra: &str| {
        format!(
            r#""runtime":{{"command":"/x","capabilities":["tools"],"tools":[{{"name":"t","description":"d","inputSchema":{{"type":"object"}}{extra}}}]}}"#
        )
    };
    let cases: Vec<(String, &str, Predicate)> = vec![
        (r#""runtime":{"command":" "}"#.into(), "runtime.command", Error::is_blank),
        (r#""runtime":{"args":[]}"#.into(), "runtime.command", Error::is_missing),
        (r#""runtime":{"command":"/x","args":["a",""]}"#.into(), "runtime.args[1]", Error::is_blank),
        (r#""runtime":{"command":"/x","env":{"":"v"}}"#.into(), "runtime.env[\"\"]", Error::is_blank),
        (r#""runtime":{"command":"/x","priority":1001}"#.into(), "runtime.priority", Error::is_range),
        (r#""runtime":{"command":"/x","priority":-1001}"#.into(), "runtime.priority", Error::is_range),
        (r#""runtime":{"command":"/x","intercepts":["input.recieve"]}"#.into(), "runtime.intercepts[0]", Error::is_enum),
        (r#""runtime":{"command":"/x","replaces":["systemprompt"]}"#.into(), "runtime.replaces[0]", Error::is_rule),
        (r#""runtime":{"command":"/x","replaces":["tool:"]}"#.into(), "runtime.replaces[0]", Error::is_rule),
        (r#""runtime":{"command":"/x","replaces":["provider:openai"]}"#.into(), "runtime.replaces[0]", Error::is_rule),
        (r#""runtime":{"command":"/x","capabilities":["filesystem"]}"#.into(), "runtime.capabilities[0]", Error::is_rule),
        (
            r#""runtime":{"command":"/x","tools":[{"name":"t","description":"d","inputSchema":{"type":"object"}}]}"#.into(),
            "runtime.tools",
            Error::is_rule,
        ),
        (tool("").replace(r#""name":"t""#, r#""name":"a b""#), "runtime.tools[0].name", Error::is_rule),
        (tool("").replace(r#""description":"d""#, r#""description":" ""#), "runtime.tools[0].description", Error::is_blank),
        (tool("").replace(r#"{"type":"object"}"#, r#""object""#), "runtime.tools[0].inputSchema", Error::is_type),
        (tool("").replace(r#"{"type":"object"}"#, r#"{"type":"string"}"#), "runtime.tools[0].inputSchema", Error::is_rule),
        (tool(r#","exec":"rm""#), "runtime.tools[0].exec", Error::is_unknown),
    ];
    for (member, path, predicate) in cases {
        let json = format!("{{{HEAD},{member}}}");
        let err = Manifest::parse(&json).unwrap_err();
        assert_eq!(err.path(), path, "{json}: {err}");
        assert!(predicate(&err), "{json}: {err:?}");
    }
}
