//! Invariant checks behind the fuzz targets in `fuzz/` that reach what a hostile sidecar (or a
//! hostile package) controls: the strict decoder for every method's params and result, the
//! manifest parser, replacement re-validation and the UI DTOs.
//!
//! The checks live in the library so they compile with every build and cannot rot; each fuzz
//! target is a one-line call into this module, and the unit tests run the same checks on the
//! checked-in seeds (`fuzz/seeds/<target>/`). Not a public API: hidden from the docs and free
//! to change.
//!
//! # Input format
//!
//! An input is a header line, a line feed, and a JSON text (the manifest target has no header):
//!
//! * `protocol_decode`: `<method> params` or `<method> result`, e.g. `extension/intercept
//!   params`; an empty body after `params` means absent params. Prefixed with `v2 ` (`v2
//!   extension/intercept result`), the body is decoded with Extension Protocol v2's member set
//!   where it differs (spec delta §2.2–§2.11: the handshake, `timeoutMillis` ≥ 0, empty
//!   `paths`, stream `generation`/`epoch`, externalized replacements, `panel` and `view`, the
//!   browser requests), else as in v1.
//! * `ui_params`: the same, for the four UI methods only.
//! * `replacement_validate`: `<point>`; the body is the replacement, checked against a valid
//!   payload of the point as a chain member and as the slot owner, and at
//!   `permission.decision` against a received `hostDecision` of `allow` and of `deny`, so that
//!   every input tries each combination.
//!
//! Readable headers keep the seeds readable; an input whose header names nothing is ignored
//! at once, so mutations that break it cost little.
//!
//! # Invariants
//!
//! Every check asserts that nothing panics; that whatever decodes re-encodes to text that
//! decodes again to the same value, and that this text is a fixed point of encoding; and that a
//! rejection is a typed error whose target, path root and reason are the ones §4 gives for what
//! was decoded, and whose wire form maps back to that reason. Each target adds its own (see
//! each function).

use serde_json::Value;
use std::fmt::Debug;

use crate::decode::{Dto, Seg, decode, is_blank, parse};
use crate::error::{Error, Target};
use crate::hooks::{Caller, HookPayload, HookPoint, Verdict};
use crate::intercept::{EventParams, InterceptParams, InterceptResult, PAYLOAD_POINTER};
use crate::lifecycle::{
    HostCapabilities, InitializeParams, InitializeResult, ManifestExpectation, SessionContext,
    UiActionDecl, UiHost,
};
use crate::manifest::{Capability, Manifest, is_accepted_manifest_api_version, is_plugin_id};
use crate::methods::{self as m, Method, NotificationMethod, RequestMethod};
use crate::reason::Reason;
use crate::ui::{SurfacePayload, UiPublishParams};
use crate::version::{decode_initialize_params, decode_initialize_result};
use crate::{MAX_INTERCEPT_TIMEOUT_MILLIS, MAX_PRIORITY, MIN_PRIORITY};

/// What a check made of its input; the unit tests require every seed to be [`Checked::Accepted`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Checked {
    /// It decoded (or validated), and every invariant of an accepted value held.
    Accepted,
    /// It was rejected with an error, and every invariant of a rejection held.
    Rejected,
    /// The header named nothing this target checks, or the body is not UTF-8.
    Ignored,
}

/// The strict decoder on any method's params or result, chosen by the method registry.
///
/// Besides the common invariants: the two handshake decoders, which run the version check
/// before strict decoding, agree with the plain decoders on what they accept and what it
/// decodes to; an intercept or event payload is the DTO of its point, or `null` with exactly one
/// `/payload` descriptor (§9); an intercept result carries a replacement iff it replaces.
pub fn protocol_decode(data: &[u8]) {
    check_protocol(data);
}

/// The manifest parser (§12.1) on arbitrary text.
///
/// Besides the common invariants: an accepted manifest obeys its own rules (id syntax,
/// `apiVersion`, priority range, lists that require a capability), every point's effective
/// budget is within 1 … 60,000 ms, and the `extension/initialize` params the host builds from it
/// are accepted by the SDK's handshake decoder as they were built. A Manifest v2 (spec delta §4)
/// is held to v2's rules instead (its wider names, optional version, relaxations) and its first
/// frame to the SDK's v2 decoder.
pub fn manifest_parse(data: &[u8]) {
    check_manifest(data);
}

/// Replacement re-validation (§7.8) of an arbitrary replacement against a valid payload of
/// every point, as a chain member and as the slot owner.
///
/// Besides the common invariants: a validated replacement is the DTO of its point, carries the
/// point's session phase, keeps the received `hostDecision` when a chain member sent it, is
/// itself a valid payload of the point when the host sends it on (§9's decoder), and validates
/// again to itself. Who answers matters only at `permission.decision`: elsewhere a chain
/// member's and the slot owner's replacement pass or fail together, and there the owner's
/// passes exactly when a chain member's would have kept its `hostDecision`.
pub fn replacement_validate(data: &[u8]) {
    check_replacement(data);
}

/// The UI DTOs (§10): `host/ui/publish` and `host/ui/request` params, `extension/ui/action` and
/// `extension/ui/submit` params, and their results.
///
/// Besides the common invariants: a published payload is the DTO of its `kind`, and a card's
/// actions pass the §10.2 check exactly when each is declared: always against its own actions,
/// and against an empty declaration only when it has none, failing then with `invalid_params`
/// at the first action.
pub fn ui_params(data: &[u8]) {
    check_ui(data);
}

/// Splits an input into its header line and body, both UTF-8.
fn split(data: &[u8]) -> Option<(&str, &str)> {
    let cut = data.iter().position(|&b| b == b'\n')?;
    let header = std::str::from_utf8(&data[..cut]).ok()?;
    let body = std::str::from_utf8(&data[cut + 1..]).ok()?;
    Some((header, body))
}

/// The `<method> <part>` header, with the method looked up in the registry.
fn method_header(header: &str) -> Option<(Method, Target)> {
    let (name, part) = header.split_once(' ')?;
    let method = Method::parse(name)?;
    let target = match part {
        "params" => Target::Params,
        "result" if method.result_dto().is_some() => Target::Result,
        _ => return None,
    };
    Some((method, target))
}

pub(crate) fn check_protocol(data: &[u8]) -> Checked {
    let Some((header, body)) = split(data) else {
        return Checked::Ignored;
    };
    if let Some(header) = header.strip_prefix("v2 ") {
        return check_v2(header, body);
    }
    let Some((method, target)) = method_header(header) else {
        return Checked::Ignored;
    };
    decode_for(method, target, body)
}

/// `body` decoded with v2's member set for `<method> <part>` (spec delta §2), with the common
/// invariants; the methods whose DTOs v2 does not change decode as in v1. Besides: the SDK's
/// and the host's v2 handshake decoders agree with the plain v2 decoders, and an intercept
/// result carries an inline replacement or one `/replacement` descriptor exactly when it
/// replaces (§2.9).
fn check_v2(header: &str, body: &str) -> Checked {
    use crate::v2::{self, browser};
    let Some((name, part)) = header.split_once(' ') else {
        return Checked::Ignored;
    };
    let target = match part {
        "params" => Target::Params,
        "result" => Target::Result,
        _ => return Checked::Ignored,
    };
    let params = target == Target::Params;
    if let Some(method) = browser::BrowserMethod::parse(name) {
        if !params {
            return Checked::Ignored;
        }
        return match method {
            browser::BrowserMethod::TabList => round_trip::<browser::TabListParams>(body, target).1,
            browser::BrowserMethod::TabOpen => round_trip::<browser::TabOpenParams>(body, target).1,
            browser::BrowserMethod::TabSnapshot => {
                round_trip::<browser::TabSnapshotParams>(body, target).1
            }
            browser::BrowserMethod::TabWait => round_trip::<browser::TabWaitParams>(body, target).1,
            browser::BrowserMethod::TabAct => round_trip::<browser::TabActParams>(body, target).1,
        };
    }
    let Some(method) = Method::parse(name) else {
        return Checked::Ignored;
    };
    match method {
        Method::Initialize if params => {
            let (plain, checked) = round_trip::<v2::InitializeParams>(body, target);
            let raw = (!body.is_empty()).then_some(body);
            let accepted = [crate::ProtocolProfile::V2];
            match (
                crate::version::decode_initialize_params_in(raw, &accepted),
                plain,
            ) {
                (Ok(crate::version::Initialize::V2(sdk)), Some(plain)) => assert_eq!(sdk, plain),
                (Err(err), None) => rejected(&err, target),
                (sdk, plain) => panic!("the v2 handshake decoder disagrees: {sdk:?} vs {plain:?}"),
            }
            checked
        }
        Method::Initialize => {
            let (plain, checked) = round_trip::<v2::InitializeResult>(body, target);
            let host =
                crate::version::decode_initialize_result_in(body, crate::ProtocolProfile::V2);
            match (host, plain) {
                (Ok(host), Some(plain)) => assert_eq!(host, plain),
                (Err(err), None) => rejected(&err, target),
                (host, plain) => {
                    panic!("the v2 handshake decoder disagrees: {host:?} vs {plain:?}")
                }
            }
            checked
        }
        Method::Intercept if params => {
            let (decoded, checked) = round_trip::<v2::InterceptParams>(body, target);
            if let Some(p) = decoded {
                payload_matches(p.0.event, p.0.payload.as_ref(), &p.0.externalized);
            }
            checked
        }
        Method::Intercept => {
            let (decoded, checked) = round_trip::<v2::InterceptResult>(body, target);
            if let Some(r) = decoded {
                let replaces = r.decision == crate::DecisionKind::Replace;
                match (r.replacement.is_some(), r.externalized.as_slice()) {
                    (true, []) => assert!(replaces, "a replacement without replace: {r:?}"),
                    (false, [one]) => {
                        assert!(replaces, "a descriptor without replace: {r:?}");
                        assert_eq!(one.json_pointer, v2::REPLACEMENT_POINTER);
                    }
                    (false, []) => assert!(!replaces, "replace without a replacement: {r:?}"),
                    other => panic!("the §2.9 rule let through {other:?}"),
                }
            }
            checked
        }
        Method::Shutdown if params => round_trip::<v2::ShutdownParams>(body, target).1,
        Method::ResourcesChanged => round_trip::<v2::ResourcesChangedParams>(body, target).1,
        Method::StreamOpen if params => round_trip::<v2::StreamOpenParams>(body, target).1,
        Method::StreamChunk => round_trip::<v2::StreamChunkParams>(body, target).1,
        Method::UiPublish if params => {
            let (decoded, checked) = round_trip::<v2::ui::UiPublishParams>(body, target);
            if let Some(p) = decoded {
                // Its own buttons and actions are declared; what it names is checked at once.
                let own: Vec<UiActionDecl> = (p.action_ids().into_iter())
                    .map(|action_id| UiActionDecl {
                        action_id: action_id.to_owned(),
                        label: String::new(),
                    })
                    .collect();
                p.check_actions(&own)
                    .expect("a publish's own actions are declared");
            }
            checked
        }
        _ => decode_for(method, target, body),
    }
}

/// Decodes `body` as `method`'s params or result, with every invariant checked.
fn decode_for(method: Method, target: Target, body: &str) -> Checked {
    let params = target == Target::Params;
    macro_rules! request {
        ($m:ty) => {
            if params {
                round_trip::<<$m as RequestMethod>::Params>(body, target).1
            } else {
                round_trip::<<$m as RequestMethod>::Result>(body, target).1
            }
        };
    }
    macro_rules! notification {
        ($m:ty) => {
            round_trip::<<$m as NotificationMethod>::Params>(body, target).1
        };
    }
    match method {
        Method::Initialize if params => initialize_params(body),
        Method::Initialize => initialize_result(body),
        Method::Initialized => notification!(m::Initialized),
        Method::Shutdown => request!(m::Shutdown),
        Method::Intercept if params => {
            let (decoded, checked) = round_trip::<InterceptParams>(body, target);
            if let Some(p) = decoded {
                payload_matches(p.event, p.payload.as_ref(), &p.externalized);
            }
            checked
        }
        Method::Intercept => {
            let (decoded, checked) = round_trip::<InterceptResult>(body, target);
            if let Some(r) = decoded {
                assert_eq!(
                    r.replacement.is_some(),
                    r.decision == crate::DecisionKind::Replace,
                    "a replacement without replace, or the reverse: {r:?}"
                );
            }
            checked
        }
        Method::Event => {
            let (decoded, checked) = round_trip::<EventParams>(body, target);
            if let Some(p) = decoded {
                payload_matches(p.event, p.payload.as_ref(), &p.externalized);
            }
            checked
        }
        Method::ResourcesChanged => notification!(m::ResourcesChanged),
        Method::UiAction => request!(m::UiAction),
        Method::UiSubmit => request!(m::UiSubmit),
        Method::UiPublish if params => publish(body),
        Method::UiPublish => request!(m::UiPublish),
        Method::UiRequest => request!(m::UiRequest),
        Method::ContentRead => request!(m::ContentRead),
        Method::ProviderCatalog => request!(m::ProviderCatalog),
        Method::StreamOpen => request!(m::StreamOpen),
        Method::StreamCancel => request!(m::StreamCancel),
        Method::StreamChunk => notification!(m::StreamChunk),
        Method::StreamEnd => notification!(m::StreamEnd),
        Method::ToolCall => request!(m::ToolCall),
    }
}

/// Decodes `body` as `T` for `target` (an empty params body is absent params); on success
/// re-encodes, decodes again and compares, on failure checks the error. Returns the value.
fn round_trip<T: Dto + PartialEq + Debug>(body: &str, target: Target) -> (Option<T>, Checked) {
    let raw = if target == Target::Params && body.is_empty() {
        "{}"
    } else {
        body
    };
    match decode::<T>(raw, target) {
        Ok(value) => {
            encodes_stably(&value, target);
            (Some(value), Checked::Accepted)
        }
        Err(err) => {
            rejected(&err, target);
            (None, Checked::Rejected)
        }
    }
}

/// Whatever decoded encodes to text that decodes again to the same value, and that text is a
/// fixed point: encoding the second value gives the same bytes.
fn encodes_stably<T: Dto + PartialEq + Debug>(value: &T, target: Target) {
    let text = serde_json::to_string(value).expect("a DTO always encodes");
    let again = decode::<T>(&text, target)
        .unwrap_or_else(|err| panic!("{} re-encoded as {text} no longer decodes: {err}", T::NAME));
    assert_eq!(&again, value, "{} changed through {text}", T::NAME);
    let text_again = serde_json::to_string(&again).expect("a DTO always encodes");
    assert_eq!(text_again, text, "{}'s encoding is not stable", T::NAME);
}

/// A rejection is typed and consistent: it knows what was decoded, its path starts at that
/// target's root, its reason is the target's (or the version check's own, §1), its text can be
/// shown, and its wire form maps back to the same reason.
fn rejected(err: &Error, target: Target) {
    assert_eq!(err.target(), target, "{err}");
    assert!(
        err.path().starts_with(target.root()),
        "{err}: {}",
        err.path()
    );
    if err.is_version() {
        assert!(
            matches!(
                err.reason(),
                Reason::UnsupportedVersion | Reason::ProtocolError
            ),
            "{err}"
        );
    } else {
        assert!(!err.is_undeclared(), "decoding never checks claims: {err}");
        assert_eq!(err.reason(), target.reason(), "{err}");
    }
    let _ = err.to_string();
    assert_eq!(
        Reason::from_error_object(&err.to_error_object()),
        Some(err.reason()),
        "{err}"
    );
}

/// The SDK's handshake decoder (version check first, §6.1) accepts exactly what the plain
/// decoder accepts, with the same value; the plain decoder's invariants hold as usual.
fn initialize_params(body: &str) -> Checked {
    let (plain, checked) = round_trip::<InitializeParams>(body, Target::Params);
    let raw = (!body.is_empty()).then_some(body);
    match (decode_initialize_params(raw), plain) {
        (Ok(sdk), Some(plain)) => assert_eq!(sdk, plain),
        (Err(err), None) => rejected(&err, Target::Params),
        (sdk, plain) => panic!("the handshake decoder disagrees: {sdk:?} vs {plain:?}"),
    }
    checked
}

/// The host's handshake decoder (version check first, §6.3 checks 1–3) agrees with the plain
/// decoder the same way.
fn initialize_result(body: &str) -> Checked {
    let (plain, checked) = round_trip::<InitializeResult>(body, Target::Result);
    match (decode_initialize_result(body), plain) {
        (Ok(host), Some(plain)) => assert_eq!(host, plain),
        (Err(err), None) => rejected(&err, Target::Result),
        (host, plain) => panic!("the handshake decoder disagrees: {host:?} vs {plain:?}"),
    }
    checked
}

/// §9: an inline payload is the DTO of its point; a `null` one has exactly one `/payload`
/// descriptor.
fn payload_matches(
    point: HookPoint,
    payload: Option<&HookPayload>,
    externalized: &[crate::ExternalizedField],
) {
    match (payload, externalized) {
        (Some(payload), []) => assert_eq!(payload.kind(), point.payload_kind()),
        (None, [one]) => assert_eq!(one.json_pointer, PAYLOAD_POINTER),
        other => panic!("the §9 rule let through {other:?}"),
    }
}

/// `host/ui/publish` params, with the card-action check of §10.2.
fn publish(body: &str) -> Checked {
    let (decoded, checked) = round_trip::<UiPublishParams>(body, Target::Params);
    let Some(params) = decoded else {
        return checked;
    };
    assert_eq!(params.payload.kind(), params.kind);
    let actions = match &params.payload {
        SurfacePayload::Card(card) => card.actions.as_slice(),
        _ => &[],
    };
    let own: Vec<UiActionDecl> = actions
        .iter()
        .map(|a| UiActionDecl {
            action_id: a.action_id.clone(),
            label: String::new(),
        })
        .collect();
    params
        .check_card_actions(&own)
        .expect("a card's own actions are declared");
    match params.check_card_actions(&[]) {
        Ok(()) => assert!(actions.is_empty(), "undeclared actions passed"),
        Err(err) => {
            assert!(!actions.is_empty(), "a card without actions failed: {err}");
            assert_eq!(err.reason(), Reason::InvalidParams);
            assert_eq!(err.path(), "params.payload.actions[0].actionId");
        }
    }
    checked
}

pub(crate) fn check_ui(data: &[u8]) -> Checked {
    let Some((header, body)) = split(data) else {
        return Checked::Ignored;
    };
    match method_header(header) {
        Some((method, target)) if method.is_ui_part() => decode_for(method, target, body),
        _ => Checked::Ignored,
    }
}

pub(crate) fn check_manifest(data: &[u8]) -> Checked {
    let Ok(text) = std::str::from_utf8(data) else {
        return Checked::Ignored;
    };
    let manifest = match Manifest::parse(text) {
        Ok(manifest) => manifest,
        Err(err) => {
            rejected(&err, Target::Manifest);
            return Checked::Rejected;
        }
    };
    if manifest.profile() == crate::ProtocolProfile::V2 {
        check_manifest_v2(&manifest);
        return Checked::Accepted;
    }
    encodes_stably(&manifest, Target::Manifest);
    assert!(is_plugin_id(&manifest.name), "{:?}", manifest.name);
    assert!(is_accepted_manifest_api_version(&manifest.api_version));
    assert!(!is_blank(&manifest.version));
    let Some(runtime) = &manifest.runtime else {
        return Checked::Accepted;
    };
    runs_as_a_plugin(runtime);
    assert!(runtime.intercepts.is_empty() || runtime.has(Capability::Interceptors));
    assert!(runtime.replaces.is_empty() || runtime.has(Capability::Strategies));
    // Whatever installs, the host's first frame built from it is accepted by the SDK as is.
    let params = InitializeParams::new(
        ManifestExpectation::from_runtime(runtime),
        SessionContext {
            session_id: "s-1".to_owned(),
            workspace_root: "/w".to_owned(),
            generation: 1,
        },
        HostCapabilities::new(UiHost::Headless),
    );
    let text = serde_json::to_string(&params).expect("params always encode");
    let decoded = decode_initialize_params(Some(&text))
        .unwrap_or_else(|err| panic!("the SDK refuses the host's {text}: {err}"));
    assert_eq!(decoded, params);
    Checked::Accepted
}

/// What every accepted runtime section obeys, whichever parser took it: a command, a priority
/// in range, no repeated point or slot, every point's budget within 1 … 60,000 ms.
fn runs_as_a_plugin(runtime: &crate::RuntimeSpec) {
    assert!(!is_blank(&runtime.command));
    assert!((MIN_PRIORITY..=MAX_PRIORITY).contains(&runtime.priority));
    for (i, point) in runtime.intercepts.iter().enumerate() {
        assert!(!runtime.intercepts[..i].contains(point), "{point} repeated");
    }
    for (i, slot) in runtime.replaces.iter().enumerate() {
        assert!(!runtime.replaces[..i].contains(slot), "{slot} repeated");
    }
    for point in HookPoint::ALL {
        let budget = point.timeout_millis(runtime.timeout_millis);
        assert!(
            (1..=MAX_INTERCEPT_TIMEOUT_MILLIS).contains(&budget),
            "{budget}"
        );
    }
}

/// The invariants of a manifest the v2 parser took (spec delta §4): its v1 view is a plugin
/// model the host can run (a command, priorities in range, no repeated point or slot, budgets
/// in range), and the v2 host's first frame built from it is accepted by the SDK in v2, as is.
fn check_manifest_v2(manifest: &Manifest) {
    assert_eq!(manifest.api_version, crate::MANIFEST_API_VERSION_V2);
    let declared = manifest
        .v2
        .as_deref()
        .expect("a v2 manifest keeps what v1 has no word for");
    assert!(
        crate::v2::is_plugin_name(&manifest.name),
        "{:?}",
        manifest.name
    );
    for provided in &declared.provides {
        assert!(crate::v2::is_capability_version(&provided.version));
    }
    for slot in &declared.replaces {
        assert!(crate::v2::is_slot_v2(slot), "{slot:?}");
    }
    // Every contributed path stays inside the root by its text.
    for (_, path) in declared.contributions.paths() {
        assert!(!path.starts_with('/') && !path.contains('\\'), "{path:?}");
        assert!(
            path.split('/').all(|s| s != ".." && !s.is_empty()),
            "{path:?}"
        );
    }
    let Some(runtime) = &manifest.runtime else {
        return;
    };
    runs_as_a_plugin(runtime);
    let params = crate::v2::InitializeParams {
        protocol_id: crate::PROTOCOL_ID_V2.to_owned(),
        protocol_version: crate::PROTOCOL_VERSION_V2.to_owned(),
        manifest: crate::v2::ManifestExpectation::from_manifest(runtime, declared),
        session: crate::v2::SessionContext {
            session_id: "s-1".to_owned(),
            workspace_root: "/w".to_owned(),
            generation: 1,
            epoch: None,
        },
        capabilities: crate::v2::HostCapabilities {
            content_refs: true,
            ui_host: UiHost::Headless,
            protocol_version: crate::PROTOCOL_VERSION_V2.to_owned(),
            dependency_schema_version: Some(crate::DEPENDENCY_SCHEMA_VERSION),
        },
        dependency_schema_version: Some(crate::DEPENDENCY_SCHEMA_VERSION),
    };
    let text = serde_json::to_string(&params).expect("params always encode");
    let decoded = crate::decode_initialize_params_in(Some(&text), &[crate::ProtocolProfile::V2])
        .unwrap_or_else(|err| panic!("the SDK refuses the v2 host's {text}: {err}"));
    assert_eq!(decoded, crate::Initialize::V2(params));
}

/// A valid payload of `point`, as the host would send it; at `permission.decision` its
/// `hostDecision` is `verdict`.
pub(crate) fn received_payload(point: HookPoint, verdict: Verdict) -> HookPayload {
    use crate::PayloadKind as K;
    let text = match point.payload_kind() {
        K::Session => format!(
            r#"{{"sessionPath":"/home/dev/.sessions/s-7f3a.jsonl","phase":"{}"}}"#,
            point.session_phase().expect("a session point").as_str()
        ),
        K::Input => r#"{"text":"fix teh tests"}"#.to_owned(),
        K::AgentStart => r#"{"model":"m-1","toolCount":3,"sessionId":"s-7f3a"}"#.to_owned(),
        K::SystemPrompt => {
            r#"{"prompt":"You are careful.","workspaceRoot":"/home/dev/project"}"#.to_owned()
        }
        K::Context => r#"{"messages":[{"role":"user","content":"fix teh tests"}]}"#.to_owned(),
        K::ProviderRequest => {
            r#"{"request":{"messages":[{"role":"user","content":"hi"}],"tools":[],"maxTokens":1024}}"#
                .to_owned()
        }
        K::ProviderResponse => {
            r#"{"text":"done","calls":[{"id":"c1","name":"read_file","arguments":"{}"}]}"#
                .to_owned()
        }
        K::ToolBefore => {
            r#"{"name":"read_file","arguments":"{\"path\":\"a.rs\"}","callId":"c1"}"#.to_owned()
        }
        K::ToolAfter => {
            r#"{"name":"read_file","arguments":"{}","callId":"c1","result":"ok","isError":false}"#
                .to_owned()
        }
        K::Permission => format!(
            r#"{{"name":"shell","arguments":"{{\"cmd\":\"git status\"}}","readOnly":true,"hostDecision":"{}"}}"#,
            verdict.as_str()
        ),
        K::CompactionPrepare => r#"{"messages":[],"guidance":"keep decisions"}"#.to_owned(),
        K::CompactionComplete => r#"{"summary":"the tests were fixed"}"#.to_owned(),
        K::FrontendEvent => r#"{"kind":"turn_started","text":"fix the tests"}"#.to_owned(),
    };
    point
        .decode_payload(&text)
        .expect("the received payloads are valid")
}

pub(crate) fn check_replacement(data: &[u8]) -> Checked {
    let Some((header, body)) = split(data) else {
        return Checked::Ignored;
    };
    let Some(point) = HookPoint::parse(header) else {
        return Checked::Ignored;
    };
    // The host gets the replacement from a strictly decoded result, so it is parsed the same
    // way (repeated names rejected); a body that is not one JSON value is a rejection too.
    let replacement = match parse(body, &Seg::Root(Target::Replacement)) {
        Ok(value) => value,
        Err(err) => {
            rejected(&err, Target::Replacement);
            return Checked::Rejected;
        }
    };
    // The received verdict only exists at `permission.decision`.
    let verdicts: &[Verdict] = if point == HookPoint::PermissionDecision {
        &[Verdict::Allow, Verdict::Deny]
    } else {
        &[Verdict::Deny]
    };
    let mut accepted = false;
    for &verdict in verdicts {
        let chain = validated(point, &replacement, Caller::Chain, verdict);
        let owner = validated(point, &replacement, Caller::SlotOwner, verdict);
        match (&chain, &owner) {
            (Some(by_chain), Some(by_owner)) => assert_eq!(by_chain, by_owner),
            (Some(by_chain), None) => panic!("only a chain member may send {by_chain:?}"),
            (None, Some(HookPayload::Permission(p))) => assert_ne!(p.host_decision, verdict),
            (None, Some(by_owner)) => panic!("only the slot owner may send {by_owner:?}"),
            (None, None) => {}
        }
        accepted |= chain.is_some() || owner.is_some();
    }
    if accepted {
        Checked::Accepted
    } else {
        Checked::Rejected
    }
}

/// Re-validates `replacement` as `caller`, against a received payload whose verdict is
/// `verdict`, and checks every invariant of the outcome; the validated payload, if any.
fn validated(
    point: HookPoint,
    replacement: &Value,
    caller: Caller,
    verdict: Verdict,
) -> Option<HookPayload> {
    let received = received_payload(point, verdict);
    let payload = match point.validate_replacement(replacement, &received, caller) {
        Ok(payload) => payload,
        Err(err) => {
            rejected(&err, Target::Replacement);
            return None;
        }
    };
    assert_eq!(payload.kind(), point.payload_kind());
    match &payload {
        HookPayload::Session(p) => assert_eq!(p.phase, point.session_phase()),
        HookPayload::Input(p) => assert!(!is_blank(&p.text)),
        HookPayload::Permission(p) if caller == Caller::Chain => {
            // The security property: a chain member never changes the host's verdict.
            assert_eq!(
                p.host_decision, verdict,
                "a chain member changed hostDecision"
            );
        }
        _ => {}
    }
    // What the host sends the next member is a valid payload of the point (§7.8 step 5).
    let text = serde_json::to_string(&payload).expect("a payload always encodes");
    let sent = point
        .decode_payload(&text)
        .unwrap_or_else(|err| panic!("the validated {text} is not a valid payload: {err}"));
    assert_eq!(sent, payload, "{text}");
    // Re-validating the validated value gives it back.
    let value: Value = serde_json::from_str(&text).expect("our own text parses");
    let again = point
        .validate_replacement(&value, &received, caller)
        .unwrap_or_else(|err| panic!("the validated {text} fails again: {err}"));
    assert_eq!(again, payload, "{text}");
    Some(payload)
}

#[cfg(test)]
mod tests;
