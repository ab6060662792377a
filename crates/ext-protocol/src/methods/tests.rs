//! The method registry of §5.

use std::time::Duration;

use crate::methods::{self as m, NotificationMethod, RequestMethod};
use crate::{Direction, Dto, Method, MethodKind};

use Direction::{ExtensionToHost as EH, HostToExtension as HE};
use MethodKind::{Notification as N, Request as R};

#[test]
fn the_registry_matches_section_5() {
    let table: [(&str, Direction, MethodKind, &str, Option<&str>); 16] = [
        (
            "extension/initialize",
            HE,
            R,
            "InitializeParams",
            Some("InitializeResult"),
        ),
        ("extension/initialized", HE, N, "InitializedParams", None),
        (
            "extension/shutdown",
            HE,
            R,
            "ShutdownParams",
            Some("ShutdownResult"),
        ),
        (
            "extension/intercept",
            HE,
            R,
            "InterceptParams",
            Some("InterceptResult"),
        ),
        ("extension/event", HE, N, "EventParams", None),
        (
            "extension/resources/changed",
            HE,
            N,
            "ResourcesChangedParams",
            None,
        ),
        (
            "extension/ui/action",
            HE,
            R,
            "UIActionParams",
            Some("UIActionResult"),
        ),
        (
            "extension/ui/submit",
            HE,
            R,
            "UISubmitParams",
            Some("UISubmitResult"),
        ),
        (
            "host/ui/publish",
            EH,
            R,
            "UIPublishParams",
            Some("UIPublishResult"),
        ),
        (
            "host/ui/request",
            EH,
            R,
            "UIRequestParams",
            Some("UIRequestResult"),
        ),
        (
            "host/content/read",
            EH,
            R,
            "ContentReadParams",
            Some("ContentReadResult"),
        ),
        (
            "extension/provider/catalog",
            HE,
            R,
            "ProviderCatalogParams",
            Some("ProviderCatalogResult"),
        ),
        (
            "extension/provider/stream/open",
            HE,
            R,
            "StreamOpenParams",
            Some("StreamOpenResult"),
        ),
        (
            "extension/provider/stream/cancel",
            HE,
            R,
            "StreamCancelParams",
            Some("StreamCancelResult"),
        ),
        (
            "extension/provider/stream/chunk",
            EH,
            N,
            "StreamChunkParams",
            None,
        ),
        (
            "extension/provider/stream/end",
            EH,
            N,
            "StreamEndParams",
            None,
        ),
    ];
    assert_eq!(Method::ALL.len(), table.len());
    for (method, (name, direction, kind, params, result)) in Method::ALL.iter().zip(table) {
        assert_eq!(method.as_str(), name);
        assert_eq!(method.direction(), direction, "{name}");
        assert_eq!(method.kind(), kind, "{name}");
        assert_eq!(method.params_dto(), params, "{name}");
        assert_eq!(method.result_dto(), result, "{name}");
        assert_eq!(Method::lookup(name, direction, kind), Some(*method));
    }
    assert_eq!(
        Method::ALL.iter().filter(|m| m.is_provider_part()).count(),
        5
    );
}

#[test]
fn lookups_respect_direction_and_kind() {
    // A request for a notification-only method, or a method in the wrong direction, is
    // unregistered (§2.3, checklist 13).
    assert_eq!(Method::lookup("extension/initialized", HE, R), None);
    assert_eq!(Method::lookup("extension/initialize", HE, N), None);
    assert_eq!(Method::lookup("extension/initialize", EH, R), None);
    assert_eq!(Method::lookup("host/ui/publish", HE, R), None);
    assert_eq!(Method::lookup("host/browser/open", EH, R), None);
    assert_eq!(Method::lookup("extension/tool/call", HE, R), None);
    assert_eq!(Method::lookup("Extension/Initialize", HE, R), None);
}

#[test]
fn deadlines_follow_section_2_5() {
    let thirty = Some(Duration::from_secs(30));
    for method in [
        Method::UiAction,
        Method::UiSubmit,
        Method::ProviderCatalog,
        Method::StreamOpen,
        Method::ContentRead,
        Method::UiPublish,
        Method::Initialize,
    ] {
        assert_eq!(method.deadline(), thirty, "{method}");
    }
    assert_eq!(Method::UiRequest.deadline(), None);
    assert_eq!(Method::Intercept.deadline(), None);
    assert_eq!(
        Method::StreamCancel.deadline(),
        Some(Duration::from_secs(2))
    );
}

fn request<M: RequestMethod>() -> (Method, &'static str, &'static str) {
    (M::METHOD, M::Params::NAME, M::Result::NAME)
}

fn notification<M: NotificationMethod>() -> (Method, &'static str) {
    (M::METHOD, M::Params::NAME)
}

#[test]
fn method_types_agree_with_the_registry() {
    let requests = [
        request::<m::Initialize>(),
        request::<m::Shutdown>(),
        request::<m::Intercept>(),
        request::<m::UiAction>(),
        request::<m::UiSubmit>(),
        request::<m::UiPublish>(),
        request::<m::UiRequest>(),
        request::<m::ContentRead>(),
        request::<m::ProviderCatalog>(),
        request::<m::StreamOpen>(),
        request::<m::StreamCancel>(),
    ];
    for (method, params, result) in requests {
        assert_eq!(method.kind(), R);
        assert_eq!(method.params_dto(), params);
        assert_eq!(method.result_dto(), Some(result));
    }
    let notifications = [
        notification::<m::Initialized>(),
        notification::<m::Event>(),
        notification::<m::ResourcesChanged>(),
        notification::<m::StreamChunk>(),
        notification::<m::StreamEnd>(),
    ];
    for (method, params) in notifications {
        assert_eq!(method.kind(), N);
        assert_eq!(method.params_dto(), params);
    }
    assert_eq!(requests.len() + notifications.len(), Method::ALL.len());
}
