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
        let err = resolve_launch("acme", root, "1", &runtime(command, &[]))
            .unwrap_err()
            .to_string();
        assert!(err.contains("shell"), "{command}: {err}");
    }
    for command in ["bin/acme", "acme", "./acme", "~/acme", "$HOME/acme"] {
        let err = resolve_launch("acme", root, "1", &runtime(command, &[]))
            .unwrap_err()
            .to_string();
        assert!(err.contains("absolute"), "{command}: {err}");
    }
    // A name that merely contains a shell's name is fine.
    assert!(resolve_launch("acme", root, "1", &runtime("/bin/bashful", &[])).is_ok());
}

#[test]
fn only_the_plugin_root_placeholder_is_expanded() {
    let root = Path::new("/opt/plugins/acme");
    let spec = resolve_launch(
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
    let err = resolve_launch("acme", root, "1", &runtime("$HOME/bin/run", &[]))
        .unwrap_err()
        .to_string();
    assert!(err.contains("absolute"));
}

#[test]
fn the_reasonix_variables_come_last_and_cannot_be_overridden() {
    let mut rt = runtime("/bin/run", &[]);
    rt.env.insert("REASONIX_PLUGIN_ROOT".into(), "/evil".into());
    rt.env.insert("REASONIX_PLUGIN_NAME".into(), "evil".into());
    rt.env.insert("REASONIX_PLUGIN_VERSION".into(), "9".into());
    rt.env.insert("ACME_LOG".into(), "info".into());
    let spec = resolve_launch("acme", Path::new("/p"), "1.2.0", &rt).unwrap();
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

#[test]
fn a_refused_command_is_quoted_at_launch_and_not_at_install() {
    let root = Path::new("/opt/plugins/acme");
    let runtime = runtime("/usr/bin/bash", &[]);
    let launch = resolve_launch("acme", root, "1", &runtime).unwrap_err();
    assert_eq!(launch.field, "runtime.command");
    assert!(
        launch
            .to_string()
            .starts_with("manifest member runtime.command \"/usr/bin/bash\" is a shell (bash)"),
        "{launch}"
    );
    let install = check_launch("acme", root, "1", Some(&runtime)).unwrap_err();
    assert!(
        install
            .to_string()
            .starts_with("manifest member runtime.command is a shell (bash)"),
        "{install}"
    );
}

#[test]
fn the_set_is_exactly_controls_del_c1_and_bidi() {
    for c in (0u32..0x20).chain(0x7f..0xa0).filter_map(char::from_u32) {
        assert!(is_terminal_control(c), "{:?}", c);
    }
    for c in [
        '\u{61c}', '\u{200e}', '\u{200f}', '\u{2028}', '\u{2029}', '\u{202a}', '\u{202b}',
        '\u{202c}', '\u{202d}', '\u{202e}', '\u{2066}', '\u{2067}', '\u{2068}', '\u{2069}',
    ] {
        assert!(is_terminal_control(c), "{:?}", c);
    }
    for c in [
        ' ', '~', 'a', '\u{a0}', 'é', '€', '\u{200b}', '\u{2027}', '\u{202f}', '\u{2065}',
        '\u{206a}', '日',
    ] {
        assert!(!is_terminal_control(c), "{:?}", c);
    }
}

#[test]
fn the_first_control_is_found_with_its_byte_offset() {
    assert_eq!(first_terminal_control("plain text, é€"), None);
    assert_eq!(first_terminal_control("é\u{1b}[2K"), Some((2, '\u{1b}')));
    assert_eq!(
        first_terminal_control("ab\u{202e}cd\r"),
        Some((2, '\u{202e}'))
    );
}
