//! The browser methods of v2@60ab9be (spec delta §2.4): five `host/browser/tab/*` E→H
//! requests, registered on V2 connections only ([`BrowserMethod::lookup_in`]), and their params,
//! decoded strictly with the per-type rules (a failure is `invalid_params`). A host without a
//! browser answers them after decoding; their results are not modelled here.

use serde::Serialize;

use crate::decode::{Dto, Enum, Fields, Int, NonBlank, Seg, Str, Uint, rule};
use crate::error::Error;
use crate::methods::{Direction, MethodKind};
use crate::profile::ProtocolProfile;
use crate::v2::CapabilityRef;

/// The longest `timeoutMillis` of `host/browser/tab/wait`.
pub const BROWSER_WAIT_MAX_MILLIS: i64 = 30_000;

/// The requirement a plugin must declare (non-optional) to use the browser methods:
/// `reasonix/browser/companion`.
pub const BROWSER_COMPANION: (&str, &str, &str) = ("reasonix", "browser", "companion");

/// Whether `requires` holds the non-optional `reasonix/browser/companion` requirement (spec
/// delta §2.4 rule 2; the installed manifest's, never the sidecar's self-description).
pub fn requires_browser(requires: &[CapabilityRef]) -> bool {
    let (namespace, kind, id) = BROWSER_COMPANION;
    requires
        .iter()
        .any(|r| !r.optional && r.namespace == namespace && r.kind == kind && r.id == id)
}

/// One of the five browser methods.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BrowserMethod {
    /// `host/browser/tab/list` ([`TabListParams`]).
    TabList,
    /// `host/browser/tab/open` ([`TabOpenParams`]).
    TabOpen,
    /// `host/browser/tab/snapshot` ([`TabSnapshotParams`]).
    TabSnapshot,
    /// `host/browser/tab/wait` ([`TabWaitParams`]).
    TabWait,
    /// `host/browser/tab/act` ([`TabActParams`]).
    TabAct,
}

wire_enum!(BrowserMethod, "BrowserMethod", {
    TabList => "host/browser/tab/list",
    TabOpen => "host/browser/tab/open",
    TabSnapshot => "host/browser/tab/snapshot",
    TabWait => "host/browser/tab/wait",
    TabAct => "host/browser/tab/act",
});

impl BrowserMethod {
    /// Who sends it: the extension.
    pub fn direction(self) -> Direction {
        Direction::ExtensionToHost
    }

    /// Whether it is a request: always.
    pub fn kind(self) -> MethodKind {
        MethodKind::Request
    }

    /// The browser method registered under `name` for `direction` and `kind` on a connection of
    /// `profile`: none on V1 (the name is unregistered, `-32601`), the five E→H requests on V2.
    pub fn lookup_in(
        name: &str,
        direction: Direction,
        kind: MethodKind,
        profile: ProtocolProfile,
    ) -> Option<BrowserMethod> {
        if profile != ProtocolProfile::V2 {
            return None;
        }
        BrowserMethod::parse(name).filter(|m| m.direction() == direction && m.kind() == kind)
    }

    /// Decodes `raw` params with this method's DTO and per-type rules; the error is
    /// `invalid_params`.
    pub fn check_params(self, raw: Option<&str>) -> Result<(), Error> {
        use crate::decode_params;
        match self {
            BrowserMethod::TabList => decode_params::<TabListParams>(raw).map(drop),
            BrowserMethod::TabOpen => decode_params::<TabOpenParams>(raw).map(drop),
            BrowserMethod::TabSnapshot => decode_params::<TabSnapshotParams>(raw).map(drop),
            BrowserMethod::TabWait => decode_params::<TabWaitParams>(raw).map(drop),
            BrowserMethod::TabAct => decode_params::<TabActParams>(raw).map(drop),
        }
    }
}

/// `BrowserTabListParams`: `{}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct TabListParams {}

impl Dto for TabListParams {
    const NAME: &'static str = "BrowserTabListParams";

    fn describe(_: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(TabListParams {})
    }
}

/// Where a new tab opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Disposition {
    /// `foreground`.
    Foreground,
    /// `background`.
    Background,
}

wire_enum!(Disposition, "BrowserDisposition", {
    Foreground => "foreground",
    Background => "background",
});

/// `BrowserTabOpenParams`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TabOpenParams {
    /// An absolute `http`/`https` URL without userinfo.
    pub url: String,
    /// Where it opens.
    pub disposition: Disposition,
}

impl Dto for TabOpenParams {
    const NAME: &'static str = "BrowserTabOpenParams";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        let params = TabOpenParams {
            url: f.req("url", NonBlank)?,
            disposition: f.req("disposition", Enum::new())?,
        };
        f.check(|at| {
            split_url(&params.url)
                .map(drop)
                .ok_or_else(|| rule(&at.key("url"), URL_RULE))
        })?;
        Ok(params)
    }
}

const URL_RULE: &str = "must be an absolute http or https URL without userinfo";

/// `(authority, rest)` of an absolute `http`/`https` URL (scheme compared case-insensitively)
/// whose authority is non-empty and holds no userinfo; `None` otherwise.
fn split_url(url: &str) -> Option<(&str, &str)> {
    let (scheme, after) = url.split_once("://")?;
    if !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https") {
        return None;
    }
    let end = after.find(['/', '?', '#']).unwrap_or(after.len());
    let (authority, rest) = after.split_at(end);
    let valid = !authority.is_empty()
        && !authority.contains('@')
        && !authority
            .chars()
            .any(|c| c.is_whitespace() || c.is_control());
    valid.then_some((authority, rest))
}

/// `BrowserTabSnapshotParams`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TabSnapshotParams {
    /// The tab.
    pub tab_id: String,
    /// At most this many characters of snapshot (≥ 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_chars: Option<u64>,
}

impl Dto for TabSnapshotParams {
    const NAME: &'static str = "BrowserTabSnapshotParams";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(TabSnapshotParams {
            tab_id: f.req("tabId", NonBlank)?,
            max_chars: f.opt("maxChars", Uint::POSITIVE)?,
        })
    }
}

/// What `host/browser/tab/wait` waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WaitUntil {
    /// `load`.
    Load,
    /// `network_idle`.
    NetworkIdle,
    /// `dom_content_loaded`.
    DomContentLoaded,
    /// `navigation`.
    Navigation,
}

wire_enum!(WaitUntil, "BrowserWaitUntil", {
    Load => "load",
    NetworkIdle => "network_idle",
    DomContentLoaded => "dom_content_loaded",
    Navigation => "navigation",
});

/// `BrowserTabWaitParams`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TabWaitParams {
    /// The tab.
    pub tab_id: String,
    /// What to wait for.
    pub wait_until: WaitUntil,
    /// The bound, 1 … 30,000 ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_millis: Option<i64>,
}

impl Dto for TabWaitParams {
    const NAME: &'static str = "BrowserTabWaitParams";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(TabWaitParams {
            tab_id: f.req("tabId", NonBlank)?,
            wait_until: f.req("waitUntil", Enum::new())?,
            timeout_millis: f.opt(
                "timeoutMillis",
                Int {
                    min: 1,
                    max: BROWSER_WAIT_MAX_MILLIS,
                },
            )?,
        })
    }
}

/// What `host/browser/tab/act` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    /// `click` (`ref` required).
    Click,
    /// `hover` (`ref` required).
    Hover,
    /// `scroll` (non-zero `delta` required).
    Scroll,
    /// `type` (`ref` required).
    Type,
    /// `press` (`key` required, one of [`PRESS_KEYS`] or one printable ASCII character).
    Press,
    /// `select` (`ref` required).
    Select,
}

wire_enum!(Action, "BrowserAction", {
    Click => "click",
    Hover => "hover",
    Scroll => "scroll",
    Type => "type",
    Press => "press",
    Select => "select",
});

/// The named keys `press` accepts (besides one printable ASCII character, space included).
pub const PRESS_KEYS: [&str; 13] = [
    "Enter",
    "Tab",
    "Escape",
    "Backspace",
    "Delete",
    "ArrowUp",
    "ArrowDown",
    "ArrowLeft",
    "ArrowRight",
    "Home",
    "End",
    "PageUp",
    "PageDown",
];

/// `BrowserTabActParams`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TabActParams {
    /// The tab.
    pub tab_id: String,
    /// `scheme://host` (`http`/`https`), path empty or `/`, no query, fragment or userinfo.
    pub expected_origin: String,
    /// The action.
    pub action: Action,
    /// The element ref (required non-blank for click, hover, type, select).
    #[serde(rename = "ref", skip_serializing_if = "String::is_empty")]
    pub reference: String,
    /// Text to type.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub text: String,
    /// A value to select.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub value: String,
    /// The key to press.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub key: String,
    /// The scroll delta (required non-zero for scroll).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delta: Option<i64>,
}

impl Dto for TabActParams {
    const NAME: &'static str = "BrowserTabActParams";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        let params = TabActParams {
            tab_id: f.req("tabId", NonBlank)?,
            expected_origin: f.req("expectedOrigin", NonBlank)?,
            action: f.req("action", Enum::new())?,
            reference: f.or_default("ref", Str)?,
            text: f.or_default("text", Str)?,
            value: f.or_default("value", Str)?,
            key: f.or_default("key", Str)?,
            delta: f.opt(
                "delta",
                Int {
                    min: -Int::SAFE,
                    max: Int::SAFE,
                },
            )?,
        };
        f.check(|at| params.check(at))?;
        Ok(params)
    }
}

impl TabActParams {
    fn check(&self, at: &Seg<'_>) -> Result<(), Error> {
        let origin =
            split_url(&self.expected_origin).filter(|(_, rest)| rest.is_empty() || *rest == "/");
        if origin.is_none() {
            return Err(rule(
                &at.key("expectedOrigin"),
                "must be scheme://host with http or https, path empty or \"/\", no query, \
                 fragment or userinfo",
            ));
        }
        match self.action {
            Action::Click | Action::Hover | Action::Type | Action::Select
                if self.reference.trim().is_empty() =>
            {
                Err(rule(
                    &at.key("ref"),
                    format!("is required for action {}", self.action.as_str()),
                ))
            }
            Action::Press if !is_press_key(&self.key) => Err(rule(
                &at.key("key"),
                "must be a named key (Enter, Tab, …) or one printable ASCII character",
            )),
            Action::Scroll if self.delta.unwrap_or(0) == 0 => {
                Err(rule(&at.key("delta"), "must be non-zero for action scroll"))
            }
            _ => Ok(()),
        }
    }
}

fn is_press_key(key: &str) -> bool {
    PRESS_KEYS.contains(&key)
        || (key.len() == 1 && (' '..='~').contains(&(key.as_bytes()[0] as char)))
}

#[cfg(test)]
mod tests;
