//! The browser methods: registered on V2 only, params decoded with the per-type rules.

use serde_json::{Value, json};

use crate::methods::{Direction, MethodKind};
use crate::v2::CapabilityRef;
use crate::v2::browser::{BrowserMethod, requires_browser};
use crate::{ProtocolProfile, Reason};

#[test]
fn the_five_methods_are_registered_on_v2_only() {
    // Checklist item 8 (the registry's half).
    for method in BrowserMethod::ALL {
        let name = method.as_str();
        let on = |profile| {
            BrowserMethod::lookup_in(
                name,
                Direction::ExtensionToHost,
                MethodKind::Request,
                profile,
            )
        };
        assert_eq!(on(ProtocolProfile::V2), Some(*method), "{name}");
        assert_eq!(on(ProtocolProfile::V1), None, "{name}");
        // Only as E→H requests.
        for (direction, kind) in [
            (Direction::HostToExtension, MethodKind::Request),
            (Direction::ExtensionToHost, MethodKind::Notification),
        ] {
            assert_eq!(
                BrowserMethod::lookup_in(name, direction, kind, ProtocolProfile::V2),
                None
            );
        }
    }
    assert_eq!(BrowserMethod::ALL.len(), 5);
    // They are not v1 methods.
    for method in BrowserMethod::ALL {
        assert!(crate::Method::parse(method.as_str()).is_none());
    }
}

fn check(method: BrowserMethod, params: Value) -> Result<(), crate::Error> {
    method.check_params(Some(&params.to_string()))
}

#[test]
fn params_follow_the_per_type_rules() {
    // Checklist item 16 (the decoder's half).
    use BrowserMethod::*;
    let act = |extra: Value| {
        let mut params = json!({"tabId":"t1","expectedOrigin":"https://example.com"});
        for (k, v) in extra.as_object().unwrap() {
            params[k] = v.clone();
        }
        params
    };
    let accepted = [
        (TabList, json!({})),
        (
            TabOpen,
            json!({"url":"HTTPS://example.com/a?b#c","disposition":"background"}),
        ),
        (
            TabOpen,
            json!({"url":"http://localhost:8080","disposition":"foreground"}),
        ),
        (TabSnapshot, json!({"tabId":"t1","maxChars":1})),
        (
            TabWait,
            json!({"tabId":"t1","waitUntil":"network_idle","timeoutMillis":30000}),
        ),
        (TabAct, act(json!({"action":"click","ref":"e1"}))),
        (TabAct, act(json!({"action":"press","key":"F"}))),
        (TabAct, act(json!({"action":"press","key":" "}))),
        (TabAct, act(json!({"action":"press","key":"PageDown"}))),
        (TabAct, act(json!({"action":"scroll","delta":-3}))),
        (
            TabAct,
            act(json!({"action":"type","ref":"e2","text":"hi","expectedOrigin":"http://a.b/"})),
        ),
    ];
    for (method, params) in accepted {
        check(method, params.clone()).unwrap_or_else(|err| panic!("{params}: {err}"));
    }
    let refused = [
        (TabList, json!({"x":1})),
        (TabOpen, json!({"url":"ftp://x","disposition":"foreground"})),
        (
            TabOpen,
            json!({"url":"https://user@x","disposition":"foreground"}),
        ),
        (
            TabOpen,
            json!({"url":"example.com","disposition":"foreground"}),
        ),
        (
            TabOpen,
            json!({"url":"https://","disposition":"foreground"}),
        ),
        (TabOpen, json!({"url":"https://x","disposition":"new"})),
        (TabSnapshot, json!({"tabId":"t1","maxChars":0})),
        (TabSnapshot, json!({"tabId":" "})),
        (TabWait, json!({"tabId":"t1","waitUntil":"soon"})),
        (
            TabWait,
            json!({"tabId":"t1","waitUntil":"load","timeoutMillis":30001}),
        ),
        (
            TabWait,
            json!({"tabId":"t1","waitUntil":"load","timeoutMillis":0}),
        ),
        (TabAct, act(json!({"action":"press","key":"F13"}))),
        (TabAct, act(json!({"action":"press","key":"é"}))),
        (TabAct, act(json!({"action":"press"}))),
        (TabAct, act(json!({"action":"scroll","delta":0}))),
        (TabAct, act(json!({"action":"scroll"}))),
        (TabAct, act(json!({"action":"click"}))),
        (TabAct, act(json!({"action":"select","ref":"  "}))),
        (
            TabAct,
            act(json!({"action":"hover","ref":"e","expectedOrigin":"https://a.b/path"})),
        ),
        (
            TabAct,
            act(json!({"action":"hover","ref":"e","expectedOrigin":"https://a.b?q"})),
        ),
        (
            TabAct,
            act(json!({"action":"hover","ref":"e","expectedOrigin":"ftp://a.b"})),
        ),
        (TabAct, act(json!({"action":"drag","ref":"e"}))),
    ];
    for (method, params) in refused {
        let err = check(method, params.clone()).unwrap_err();
        assert_eq!(err.reason(), Reason::InvalidParams, "{params}");
    }
}

#[test]
fn only_a_non_optional_companion_requirement_counts() {
    let requirement = |id: &str, optional: bool| CapabilityRef {
        namespace: "reasonix".to_owned(),
        kind: "browser".to_owned(),
        id: id.to_owned(),
        version: String::new(),
        version_range: String::new(),
        schema_hash: String::new(),
        optional,
    };
    assert!(requires_browser(&[requirement("companion", false)]));
    assert!(!requires_browser(&[requirement("companion", true)]));
    assert!(!requires_browser(&[requirement("other", false)]));
    assert!(!requires_browser(&[]));
}
