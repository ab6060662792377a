//! The browser answers of a host without a browser (spec delta §2.4).

use serde_json::json;
use sidewire_ext_protocol::v2::CapabilityRef;
use sidewire_ext_protocol::v2::browser::BrowserMethod;
use sidewire_ext_protocol::{ProtocolProfile, Reason};

use super::browser_refusal;

fn companion(optional: bool) -> CapabilityRef {
    CapabilityRef {
        namespace: "reasonix".to_owned(),
        kind: "browser".to_owned(),
        id: "companion".to_owned(),
        version: String::new(),
        version_range: String::new(),
        schema_hash: String::new(),
        optional,
    }
}

fn reason(error: &sidewire_jsonrpc::ErrorObject) -> Option<Reason> {
    Reason::from_error_object_in(error, ProtocolProfile::V2)
}

#[test]
fn params_first_then_the_requirement_then_unavailable() {
    // Checklist item 16.
    let list = Some("{}");
    assert_eq!(
        reason(&browser_refusal(BrowserMethod::TabList, list, &[])),
        Some(Reason::CapabilityNotDeclared)
    );
    assert_eq!(
        reason(&browser_refusal(
            BrowserMethod::TabList,
            list,
            &[companion(true)]
        )),
        Some(Reason::CapabilityNotDeclared),
        "an optional requirement does not count"
    );
    assert_eq!(
        reason(&browser_refusal(
            BrowserMethod::TabList,
            list,
            &[companion(false)]
        )),
        Some(Reason::BrowserUnavailable)
    );
    // Invalid params are `invalid_params` before anything else, with or without the
    // requirement.
    let invalid = [
        (
            BrowserMethod::TabOpen,
            json!({"url":"ftp://x","disposition":"foreground"}),
        ),
        (
            BrowserMethod::TabWait,
            json!({"tabId":"t","waitUntil":"soon"}),
        ),
        (
            BrowserMethod::TabAct,
            json!({"tabId":"t","expectedOrigin":"https://a.b","action":"press","key":"F13"}),
        ),
        (
            BrowserMethod::TabAct,
            json!({"tabId":"t","expectedOrigin":"https://a.b","action":"scroll","delta":0}),
        ),
    ];
    for (method, params) in invalid {
        for requires in [vec![], vec![companion(false)]] {
            let text = params.to_string();
            assert_eq!(
                reason(&browser_refusal(method, Some(&text), &requires)),
                Some(Reason::InvalidParams),
                "{params}"
            );
        }
    }
}
