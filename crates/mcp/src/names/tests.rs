//! Unit tests of namespaced names.

use std::collections::HashSet;

use super::*;

#[test]
fn names_that_fit_are_kept() {
    assert_eq!(
        namespaced_name("files", "read_file"),
        "mcp__files__read_file"
    );
    assert_eq!(namespaced_name("a-b", "C-9"), "mcp__a-b__C-9");
}

#[test]
fn sanitised_names_get_a_hash_suffix() {
    let name = namespaced_name("my.server", "read file");
    assert!(is_valid_name(&name), "{name}");
    assert!(name.starts_with("mcp__my_server__read_file_"), "{name}");
    // Two raw names that sanitise alike still differ.
    assert_ne!(namespaced_name("a.b", "x"), namespaced_name("a_b", "x"));
    assert_ne!(namespaced_name("a", "x y"), namespaced_name("a", "x.y"));
    assert_eq!(
        namespaced_name("ünï", "tøøl"),
        namespaced_name("ünï", "tøøl")
    );
    assert!(is_valid_name(&namespaced_name("ünï", "tøøl")));
}

#[test]
fn long_names_are_truncated_to_64_with_a_hash() {
    let long = "t".repeat(100);
    let a = namespaced_name("server", &long);
    let b = namespaced_name("server", &format!("{long}x"));
    assert_eq!(a.len(), MAX_NAME_LEN);
    assert!(is_valid_name(&a) && is_valid_name(&b));
    assert_ne!(a, b);
    // Exactly 64 fits as is; 65 does not.
    let fits = "x".repeat(64 - "mcp__s__".len());
    assert_eq!(namespaced_name("s", &fits), format!("mcp__s__{fits}"));
    let over = format!("{fits}y");
    assert_ne!(namespaced_name("s", &over), format!("mcp__s__{over}"));
}

#[test]
fn many_near_identical_names_never_collide() {
    let mut seen = HashSet::new();
    for i in 0..2000 {
        let tool = format!("{}.{i}", "x".repeat(70));
        assert!(seen.insert(namespaced_name("srv", &tool)));
    }
    assert!(seen.insert(namespaced_name_salted("srv", "t", 1)));
    assert!(seen.insert(namespaced_name_salted("srv", "t", 2)));
}

#[test]
fn validity_rule() {
    assert!(is_valid_name("a"));
    assert!(!is_valid_name(""));
    assert!(!is_valid_name(&"a".repeat(65)));
    assert!(!is_valid_name("a b"));
    assert!(!is_valid_name("a.b"));
}
