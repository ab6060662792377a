//! The method registry (§5): every method with its direction and kind, plus one zero-sized type
//! per method that ties the name to its params and result DTOs.
//!
//! A method is registered as (name, direction, kind); [`Method::lookup`] answers exactly the
//! question §2.3 asks of a received frame. Dispatch, deadlines enforcement and the SDK state
//! machine are the peers' business; this module only names things.

use std::time::Duration;

use crate::constants::{CALL_TIMEOUT, HANDSHAKE_TIMEOUT, STREAM_CANCEL_TIMEOUT};
use crate::decode::Dto;
use crate::profile::ProtocolProfile;
use crate::{content, intercept, lifecycle, provider, tool, ui};

/// Who sends a method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Host to extension (sidecar).
    HostToExtension,
    /// Extension to host.
    ExtensionToHost,
}

/// Whether a method is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MethodKind {
    /// Has an `id` and gets a response.
    Request,
    /// Has no `id` and is never answered.
    Notification,
}

/// A registered method of §5.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    /// `extension/initialize`.
    Initialize,
    /// `extension/initialized`.
    Initialized,
    /// `extension/shutdown`.
    Shutdown,
    /// `extension/intercept`.
    Intercept,
    /// `extension/event`.
    Event,
    /// `extension/resources/changed`.
    ResourcesChanged,
    /// `extension/ui/action`.
    UiAction,
    /// `extension/ui/submit`.
    UiSubmit,
    /// `host/ui/publish`.
    UiPublish,
    /// `host/ui/request`.
    UiRequest,
    /// `host/content/read`.
    ContentRead,
    /// `extension/provider/catalog`.
    ProviderCatalog,
    /// `extension/provider/stream/open`.
    StreamOpen,
    /// `extension/provider/stream/cancel`.
    StreamCancel,
    /// `extension/provider/stream/chunk`.
    StreamChunk,
    /// `extension/provider/stream/end`.
    StreamEnd,
    /// `extension/tool/call` (spec delta §2.5): registered in the V2 profile only, and not in
    /// [`Method::ALL`] (the v1 table).
    ToolCall,
}

wire_enum!(Method, "Method", {
    Initialize => "extension/initialize",
    Initialized => "extension/initialized",
    Shutdown => "extension/shutdown",
    Intercept => "extension/intercept",
    Event => "extension/event",
    ResourcesChanged => "extension/resources/changed",
    UiAction => "extension/ui/action",
    UiSubmit => "extension/ui/submit",
    UiPublish => "host/ui/publish",
    UiRequest => "host/ui/request",
    ContentRead => "host/content/read",
    ProviderCatalog => "extension/provider/catalog",
    StreamOpen => "extension/provider/stream/open",
    StreamCancel => "extension/provider/stream/cancel",
    StreamChunk => "extension/provider/stream/chunk",
    StreamEnd => "extension/provider/stream/end",
}, later {
    ToolCall => "extension/tool/call",
});

impl Method {
    /// Who sends it.
    pub fn direction(self) -> Direction {
        match self {
            Method::UiPublish
            | Method::UiRequest
            | Method::ContentRead
            | Method::StreamChunk
            | Method::StreamEnd => Direction::ExtensionToHost,
            _ => Direction::HostToExtension,
        }
    }

    /// Whether it is a request or a notification.
    pub fn kind(self) -> MethodKind {
        match self {
            Method::Initialized
            | Method::Event
            | Method::ResourcesChanged
            | Method::StreamChunk
            | Method::StreamEnd => MethodKind::Notification,
            _ => MethodKind::Request,
        }
    }

    /// The method registered under `name` for `direction` and `kind` in the v1 registry, if any
    /// (§2.3, §5): a request for a notification-only method, or a method received in the wrong
    /// direction, is unregistered. [`Method::lookup_in`] asks another profile's registry.
    pub fn lookup(name: &str, direction: Direction, kind: MethodKind) -> Option<Method> {
        Method::lookup_in(ProtocolProfile::V1, name, direction, kind)
    }

    /// [`Method::lookup`] in `profile`'s registry (spec delta §2.1): a method the profile does
    /// not register (`extension/tool/call` on V1) is unregistered.
    pub fn lookup_in(
        profile: ProtocolProfile,
        name: &str,
        direction: Direction,
        kind: MethodKind,
    ) -> Option<Method> {
        Method::parse(name).filter(|m| {
            m.is_registered_in(profile) && m.direction() == direction && m.kind() == kind
        })
    }

    /// Whether `profile`'s registry has this method: the v1 table ([`Method::ALL`]) is in every
    /// profile; v2 adds `extension/tool/call`.
    pub fn is_registered_in(self, profile: ProtocolProfile) -> bool {
        match self {
            Method::ToolCall => profile >= ProtocolProfile::V2,
            _ => true,
        }
    }

    /// Whether it belongs to the optional Provider extensions part (§14).
    pub fn is_provider_part(self) -> bool {
        matches!(
            self,
            Method::ProviderCatalog
                | Method::StreamOpen
                | Method::StreamCancel
                | Method::StreamChunk
                | Method::StreamEnd
        )
    }

    /// Whether it belongs to the optional UI part, answered `unknown_method` by an SDK without a
    /// UI handler (§10.4) or a host without a UI (§10.5).
    pub fn is_ui_part(self) -> bool {
        matches!(
            self,
            Method::UiAction | Method::UiSubmit | Method::UiPublish | Method::UiRequest
        )
    }

    /// The spec's name of the params DTO.
    pub fn params_dto(self) -> &'static str {
        match self {
            Method::Initialize => lifecycle::InitializeParams::NAME,
            Method::Initialized => lifecycle::InitializedParams::NAME,
            Method::Shutdown => lifecycle::ShutdownParams::NAME,
            Method::Intercept => intercept::InterceptParams::NAME,
            Method::Event => intercept::EventParams::NAME,
            Method::ResourcesChanged => intercept::ResourcesChangedParams::NAME,
            Method::UiAction => ui::UiActionParams::NAME,
            Method::UiSubmit => ui::UiSubmitParams::NAME,
            Method::UiPublish => ui::UiPublishParams::NAME,
            Method::UiRequest => ui::UiRequestParams::NAME,
            Method::ContentRead => content::ContentReadParams::NAME,
            Method::ProviderCatalog => provider::ProviderCatalogParams::NAME,
            Method::StreamOpen => provider::StreamOpenParams::NAME,
            Method::StreamCancel => provider::StreamCancelParams::NAME,
            Method::StreamChunk => provider::StreamChunkParams::NAME,
            Method::StreamEnd => provider::StreamEndParams::NAME,
            Method::ToolCall => tool::ToolCallParams::NAME,
        }
    }

    /// The spec's name of the result DTO; `None` for notifications.
    pub fn result_dto(self) -> Option<&'static str> {
        Some(match self {
            Method::Initialize => lifecycle::InitializeResult::NAME,
            Method::Shutdown => lifecycle::ShutdownResult::NAME,
            Method::Intercept => intercept::InterceptResult::NAME,
            Method::UiAction => ui::UiActionResult::NAME,
            Method::UiSubmit => ui::UiSubmitResult::NAME,
            Method::UiPublish => ui::UiPublishResult::NAME,
            Method::UiRequest => ui::UiRequestResult::NAME,
            Method::ContentRead => content::ContentReadResult::NAME,
            Method::ProviderCatalog => provider::ProviderCatalogResult::NAME,
            Method::StreamOpen => provider::StreamOpenResult::NAME,
            Method::StreamCancel => provider::StreamCancelResult::NAME,
            Method::ToolCall => tool::ToolCallResult::NAME,
            Method::Initialized
            | Method::Event
            | Method::ResourcesChanged
            | Method::StreamChunk
            | Method::StreamEnd => return None,
        })
    }

    /// The caller's fixed deadline for this request (§2.5, §6.1, §14.5), or `None` when it has
    /// none of its own: `extension/intercept` uses the point's budget (§7.9),
    /// `extension/tool/call` the host's tool budget ([`TOOL_CALL_TIMEOUT`](crate::TOOL_CALL_TIMEOUT), sent in
    /// `timeoutMillis`),
    /// `extension/shutdown` waits `timeoutMillis` plus
    /// [`SHUTDOWN_ANSWER_GRACE`](crate::SHUTDOWN_ANSWER_GRACE) (§6.6), `host/ui/request` waits
    /// for the user, and notifications are never answered. The handshake deadline is further
    /// bounded by the generation budget.
    pub fn deadline(self) -> Option<Duration> {
        match self {
            Method::Initialize => Some(HANDSHAKE_TIMEOUT),
            Method::UiAction
            | Method::UiSubmit
            | Method::ProviderCatalog
            | Method::StreamOpen
            | Method::ContentRead
            | Method::UiPublish => Some(CALL_TIMEOUT),
            Method::StreamCancel => Some(STREAM_CANCEL_TIMEOUT),
            _ => None,
        }
    }
}

/// A request method: its registry entry and DTOs.
pub trait RequestMethod {
    /// The registry entry.
    const METHOD: Method;
    /// The params DTO.
    type Params: Dto;
    /// The result DTO.
    type Result: Dto;
}

/// A notification method: its registry entry and params DTO.
pub trait NotificationMethod {
    /// The registry entry.
    const METHOD: Method;
    /// The params DTO.
    type Params: Dto;
}

/// `extension/initialize` (request, H→E).
#[derive(Debug, Clone, Copy, Default)]
pub struct Initialize;

impl RequestMethod for Initialize {
    const METHOD: Method = Method::Initialize;
    type Params = lifecycle::InitializeParams;
    type Result = lifecycle::InitializeResult;
}

/// `extension/initialized` (notification, H→E).
#[derive(Debug, Clone, Copy, Default)]
pub struct Initialized;

impl NotificationMethod for Initialized {
    const METHOD: Method = Method::Initialized;
    type Params = lifecycle::InitializedParams;
}

/// `extension/shutdown` (request, H→E).
#[derive(Debug, Clone, Copy, Default)]
pub struct Shutdown;

impl RequestMethod for Shutdown {
    const METHOD: Method = Method::Shutdown;
    type Params = lifecycle::ShutdownParams;
    type Result = lifecycle::ShutdownResult;
}

/// `extension/intercept` (request, H→E).
#[derive(Debug, Clone, Copy, Default)]
pub struct Intercept;

impl RequestMethod for Intercept {
    const METHOD: Method = Method::Intercept;
    type Params = intercept::InterceptParams;
    type Result = intercept::InterceptResult;
}

/// `extension/event` (notification, H→E).
#[derive(Debug, Clone, Copy, Default)]
pub struct Event;

impl NotificationMethod for Event {
    const METHOD: Method = Method::Event;
    type Params = intercept::EventParams;
}

/// `extension/resources/changed` (notification, H→E).
#[derive(Debug, Clone, Copy, Default)]
pub struct ResourcesChanged;

impl NotificationMethod for ResourcesChanged {
    const METHOD: Method = Method::ResourcesChanged;
    type Params = intercept::ResourcesChangedParams;
}

/// `extension/ui/action` (request, H→E).
#[derive(Debug, Clone, Copy, Default)]
pub struct UiAction;

impl RequestMethod for UiAction {
    const METHOD: Method = Method::UiAction;
    type Params = ui::UiActionParams;
    type Result = ui::UiActionResult;
}

/// `extension/ui/submit` (request, H→E).
#[derive(Debug, Clone, Copy, Default)]
pub struct UiSubmit;

impl RequestMethod for UiSubmit {
    const METHOD: Method = Method::UiSubmit;
    type Params = ui::UiSubmitParams;
    type Result = ui::UiSubmitResult;
}

/// `host/ui/publish` (request, E→H).
#[derive(Debug, Clone, Copy, Default)]
pub struct UiPublish;

impl RequestMethod for UiPublish {
    const METHOD: Method = Method::UiPublish;
    type Params = ui::UiPublishParams;
    type Result = ui::UiPublishResult;
}

/// `host/ui/request` (request, E→H).
#[derive(Debug, Clone, Copy, Default)]
pub struct UiRequest;

impl RequestMethod for UiRequest {
    const METHOD: Method = Method::UiRequest;
    type Params = ui::UiRequestParams;
    type Result = ui::UiRequestResult;
}

/// `host/content/read` (request, E→H).
#[derive(Debug, Clone, Copy, Default)]
pub struct ContentRead;

impl RequestMethod for ContentRead {
    const METHOD: Method = Method::ContentRead;
    type Params = content::ContentReadParams;
    type Result = content::ContentReadResult;
}

/// `extension/provider/catalog` (request, H→E).
#[derive(Debug, Clone, Copy, Default)]
pub struct ProviderCatalog;

impl RequestMethod for ProviderCatalog {
    const METHOD: Method = Method::ProviderCatalog;
    type Params = provider::ProviderCatalogParams;
    type Result = provider::ProviderCatalogResult;
}

/// `extension/provider/stream/open` (request, H→E).
#[derive(Debug, Clone, Copy, Default)]
pub struct StreamOpen;

impl RequestMethod for StreamOpen {
    const METHOD: Method = Method::StreamOpen;
    type Params = provider::StreamOpenParams;
    type Result = provider::StreamOpenResult;
}

/// `extension/provider/stream/cancel` (request, H→E).
#[derive(Debug, Clone, Copy, Default)]
pub struct StreamCancel;

impl RequestMethod for StreamCancel {
    const METHOD: Method = Method::StreamCancel;
    type Params = provider::StreamCancelParams;
    type Result = provider::StreamCancelResult;
}

/// `extension/provider/stream/chunk` (notification, E→H).
#[derive(Debug, Clone, Copy, Default)]
pub struct StreamChunk;

impl NotificationMethod for StreamChunk {
    const METHOD: Method = Method::StreamChunk;
    type Params = provider::StreamChunkParams;
}

/// `extension/provider/stream/end` (notification, E→H).
#[derive(Debug, Clone, Copy, Default)]
pub struct StreamEnd;

impl NotificationMethod for StreamEnd {
    const METHOD: Method = Method::StreamEnd;
    type Params = provider::StreamEndParams;
}

/// `extension/tool/call` (request, H→E; V2 only, spec delta §2.5).
#[derive(Debug, Clone, Copy, Default)]
pub struct ToolCall;

impl RequestMethod for ToolCall {
    const METHOD: Method = Method::ToolCall;
    type Params = tool::ToolCallParams;
    type Result = tool::ToolCallResult;
}

#[cfg(test)]
mod tests;
