use super::*;

fn runtime(command: &str, args: &[&str]) -> RuntimeSpec {
    RuntimeSpec {
        command: command.to_owned(),
        args: args.iter().map(|a| (*a).to_owned()).collect(),
        ..RuntimeSpec::default()
    }
}

#[test]
fn shells_and_relative_commands_are_refused_before_spawn() {
    let root = Path::new("/opt/plugins/acme");
    for command in [
        "/usr/bin/bash",
        "/bin/SH",
        "/opt/pwsh.exe",
        "/x/ZSH.EXE",
        "/mnt/c/Windows/CMD.exe",
        "/usr/bin/fish",
        "/bin/dash",
        "/bin/ksh",
        "/opt/powershell",
    ] {
        let err = resolve("acme", root, "1", &runtime(command, &[])).unwrap_err();
        assert!(err.contains("shell"), "{command}: {err}");
    }
    for command in ["bin/acme", "acme", "./acme", "~/acme", "$HOME/acme"] {
        let err = resolve("acme", root, "1", &runtime(command, &[])).unwrap_err();
        assert!(err.contains("absolute"), "{command}: {err}");
    }
    // A name that merely contains a shell's name is fine.
    assert!(resolve("acme", root, "1", &runtime("/bin/bashful", &[])).is_ok());
}

#[test]
fn only_the_plugin_root_placeholder_is_expanded() {
    let root = Path::new("/opt/plugins/acme");
    let spec = resolve(
        "acme",
        root,
        "1.2.0",
        &runtime(
            "${REASONIX_PLUGIN_ROOT}/bin/run",
            &["$HOME", "~", "${OTHER}", "--root=${REASONIX_PLUGIN_ROOT}"],
        ),
    )
    .unwrap();
    assert_eq!(spec.command, PathBuf::from("/opt/plugins/acme/bin/run"));
    assert_eq!(
        spec.args,
        ["$HOME", "~", "${OTHER}", "--root=/opt/plugins/acme"]
    );
    assert_eq!(spec.cwd, root);
    let err = resolve("acme", root, "1", &runtime("$HOME/bin/run", &[])).unwrap_err();
    assert!(err.contains("absolute"));
}

#[test]
fn the_reasonix_variables_come_last_and_cannot_be_overridden() {
    let mut rt = runtime("/bin/run", &[]);
    rt.env.insert("REASONIX_PLUGIN_ROOT".into(), "/evil".into());
    rt.env.insert("REASONIX_PLUGIN_NAME".into(), "evil".into());
    rt.env.insert("REASONIX_PLUGIN_VERSION".into(), "9".into());
    rt.env.insert("ACME_LOG".into(), "info".into());
    let spec = resolve("acme", Path::new("/p"), "1.2.0", &rt).unwrap();
    let last = |name: &str| {
        spec.env
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    assert_eq!(last("REASONIX_PLUGIN_ROOT"), Some("/p"));
    assert_eq!(last("REASONIX_PLUGIN_NAME"), Some("acme"));
    assert_eq!(last("REASONIX_PLUGIN_VERSION"), Some("1.2.0"));
    assert_eq!(last("ACME_LOG"), Some("info"));
}
