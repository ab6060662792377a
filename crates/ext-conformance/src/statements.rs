//! The statement registry: every sidecar-side (S) statement of the spec's §17 checklist, plus
//! the sidecar-side rules of other sections the kit checks, each with its id, section and title,
//! and whether it can be observed from outside the sidecar.

use serde::{Serialize, Serializer};
use sidewire_ext_protocol::ProtocolProfile;

/// One statement the kit knows about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Statement {
    /// The id: the §17 item number (`"22"`), or `S-<name>` for a sidecar-side rule of another
    /// section that §17 does not list on its own.
    pub id: &'static str,
    /// The spec section the rule comes from (`"2.3"`, `"6.5"`).
    pub section: &'static str,
    /// What a conforming sidecar does, in one sentence.
    pub title: &'static str,
    /// How the kit treats it.
    pub kind: StatementKind,
    /// The one protocol profile it applies to (`None`: every profile). Serialized as the
    /// profile's `protocolId`.
    #[serde(serialize_with = "profile_id")]
    pub profile: Option<ProtocolProfile>,
}

fn profile_id<S: Serializer>(
    profile: &Option<ProtocolProfile>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match profile {
        Some(profile) => serializer.serialize_str(profile.protocol_id()),
        None => serializer.serialize_none(),
    }
}

/// How the kit treats a statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "why", rename_all = "snake_case")]
#[non_exhaustive]
pub enum StatementKind {
    /// Checked on every run (some only when the manifest or handshake makes them applicable).
    Checked,
    /// Checked only with [`RunOptions::slow`](crate::RunOptions::slow): it needs a spec deadline
    /// to pass in real time.
    Slow(&'static str),
    /// Cannot be observed from outside the sidecar; the reason says why.
    NotCheckable(&'static str),
}

impl Statement {
    /// Whether this is a §17 checklist item (its id is a number).
    pub fn is_checklist_item(&self) -> bool {
        self.id.bytes().all(|b| b.is_ascii_digit())
    }

    /// Whether this is an item of the v2 delta's §6 checklist (its id is `D` and a number).
    pub fn is_delta_item(&self) -> bool {
        self.id
            .strip_prefix('D')
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    }

    /// Whether it applies to a connection speaking `profile`.
    pub fn applies_to(&self, profile: ProtocolProfile) -> bool {
        self.profile.is_none_or(|only| only == profile)
    }

    /// This statement, applying only to `profile`.
    const fn only(mut self, profile: ProtocolProfile) -> Statement {
        self.profile = Some(profile);
        self
    }

    /// Whether `--only <selector>` selects this statement: a section (`2.3` selects 2.3 and
    /// 2.3.x, `6` every 6.x), `17` (every checklist item), `17.N` (checklist item N), `delta`
    /// (every item of the v2 delta's §6 checklist, ids `D<n>`), `delta.N` (its item N), or an
    /// id.
    pub fn matches(&self, selector: &str) -> bool {
        let selector = selector.trim().trim_start_matches('§');
        if selector == self.id {
            return true;
        }
        if selector == "17" {
            return self.is_checklist_item();
        }
        if let Some(item) = selector.strip_prefix("17.") {
            return self.is_checklist_item() && item == self.id;
        }
        if selector == "delta" {
            return self.is_delta_item();
        }
        if let Some(item) = selector.strip_prefix("delta.") {
            return self.is_delta_item() && self.id.strip_prefix('D') == Some(item);
        }
        self.section == selector
            || self
                .section
                .strip_prefix(selector)
                .is_some_and(|rest| rest.starts_with('.'))
    }
}

const fn checked(id: &'static str, section: &'static str, title: &'static str) -> Statement {
    Statement {
        id,
        section,
        title,
        kind: StatementKind::Checked,
        profile: None,
    }
}

const fn internal(
    id: &'static str,
    section: &'static str,
    title: &'static str,
    why: &'static str,
) -> Statement {
    Statement {
        id,
        section,
        title,
        kind: StatementKind::NotCheckable(why),
        profile: None,
    }
}

/// Every statement, in report order (by section, then id).
pub fn statements() -> &'static [Statement] {
    STATEMENTS
}

/// The statement with this id.
pub(crate) fn statement(id: &str) -> &'static Statement {
    STATEMENTS
        .iter()
        .find(|s| s.id == id)
        .unwrap_or_else(|| panic!("no statement {id}"))
}

static STATEMENTS: &[Statement] = &[
    checked(
        "1",
        "2.1",
        "A frame of exactly 8,388,608 bytes including its LF is accepted; one of 8,388,609 bytes ends the connection without a reply.",
    ),
    checked(
        "2",
        "2.1",
        "An oversized inbound line makes the sidecar exit non-zero with `frame` on stderr.",
    )
    .only(ProtocolProfile::V1),
    checked(
        "S-frames",
        "2.1",
        "stdout carries frames only: every line is one JSON-RPC 2.0 object, a response has exactly one of `result`/`error`, an error an integer `code` and a string `message`.",
    ),
    internal(
        "3",
        "2.4",
        "An outbound frame over the limit is never written (the caller gets `frame_too_large`).",
        "needs extension code that produces an oversized value; no host input makes a sidecar write one",
    ),
    internal(
        "4",
        "2.4",
        "An oversized result becomes a -32603 `response exceeds frame size limit` error on the wire.",
        "needs a handler whose result exceeds the frame limit; a sidecar's handlers are its own",
    ),
    checked(
        "6",
        "2.3",
        "An empty line, a whitespace-only line or a line beginning with a BOM is fatal and never skipped; a CR before the LF is accepted.",
    )
    .only(ProtocolProfile::V1),
    checked(
        "7",
        "4",
        "A frame with a repeated member name is fatal; params with one are answered `invalid_params`.",
    )
    .only(ProtocolProfile::V1),
    checked(
        "8",
        "2.3",
        "A request without `\"jsonrpc\":\"2.0\"` is answered -32600 echoing its id.",
    ),
    checked(
        "9",
        "2.2",
        "Request ids that are an object, `1.0` or `1e3` are answered -32600 with `\"id\":null`; `-5`, `0` and `18446744073709551616` are echoed byte for byte; array `params` is answered -32600.",
    ),
    checked(
        "10",
        "2.2",
        "A string request id is echoed unchanged, byte for byte.",
    )
    .only(ProtocolProfile::V1),
    checked(
        "11",
        "2.3",
        "A request reusing a pending id gets -32600, and the first request is still answered.",
    )
    .only(ProtocolProfile::V1),
    checked(
        "12",
        "2.3",
        "A malformed or unknown notification, a notification for a request-only method, or a response with an unknown id produces no frame and leaves the connection usable.",
    )
    .only(ProtocolProfile::V1),
    checked(
        "13",
        "2.3",
        "A request for an unregistered or wrong-direction method, or for a notification-only method, gets -32601 `unknown_method` in every state, even when its params would fail decoding.",
    )
    .only(ProtocolProfile::V1),
    checked(
        "14",
        "10.4",
        "Without a UI handler, `extension/ui/action` and `extension/ui/submit` are answered `unknown_method`, even with invalid params.",
    ),
    checked(
        "15",
        "3",
        "Every error response carries `data.reason` and the table's `data.retryable`.",
    )
    .only(ProtocolProfile::V1),
    checked(
        "16",
        "2.4",
        "32 callbacks that each await `host/content/read` all complete.",
    ),
    Statement {
        id: "19",
        section: "2.5",
        title: "A `host/content/read` the host never answers fails with `intercept_timeout` after 30 s.",
        kind: StatementKind::Slow("takes 30 s (the spec's content-read deadline); run with --slow"),
        profile: None,
    },
    checked(
        "20",
        "4",
        "Params with an unknown member, a missing required member, `null` in a non-nullable member, `1.5` for an integer, or only U+3000 in a non-empty string are answered `invalid_params`.",
    )
    .only(ProtocolProfile::V1),
    checked(
        "22",
        "6.1",
        "Initialize with protocolId `reasonix.extension.v2` is answered `unsupported_version` and the sidecar exits non-zero.",
    ).only(ProtocolProfile::V1),
    checked(
        "23",
        "6.1",
        "protocolVersion `\"2\"`/`\"0\"` or a missing protocolId is answered `unsupported_version`; `\"x\"`, `\"\"`, `\"01\"`, the number 1 or a missing protocolVersion `protocol_error`; each error answer is followed by exit non-zero.",
    ).only(ProtocolProfile::V1),
    checked(
        "24",
        "6.1",
        "Initialize with a foreign protocolId plus an unknown member is answered `unsupported_version`, not `invalid_params`.",
    ).only(ProtocolProfile::V1),
    checked(
        "S-handshake",
        "6.3",
        "The initialize result decodes strictly with protocolVersion `\"1\"` and claims nothing beyond the manifest (subscriptions, replaces, providers, uiActions).",
    ),
    checked(
        "S-barrier",
        "6.4",
        "Nothing is written before the response to `extension/initialize`.",
    ),
    checked(
        "32",
        "6.5",
        "In state `new` a registered request other than initialize or shutdown is answered `protocol_error`, as is a second initialize in `ready` and any request after shutdown.",
    )
    .only(ProtocolProfile::V1),
    internal(
        "33",
        "6.5",
        "A host call attempted by extension code before `ready` fails locally and writes nothing.",
        "internal to the SDK: nothing reaches the wire, and the kit cannot make extension code call early",
    ),
    checked(
        "S-intercept",
        "7.5",
        "Each subscribed point's intercept is answered with a decision legal at that point (and for that caller), a `replacement` iff `replace`, valid for the point's DTO.",
    ),
    checked(
        "49",
        "7.9",
        "An intercept whose work overruns `timeoutMillis` is answered `intercept_timeout`; an intercept for a point without a handler is answered `continue`.",
    )
    .only(ProtocolProfile::V1),
    checked(
        "50",
        "7.2",
        "A handler outside the manifest the host sends is logged on stderr and not subscribed (nor are UI actions without capability `ui`).",
    )
    .only(ProtocolProfile::V1),
    checked(
        "S-events",
        "8",
        "`extension/event` and `extension/resources/changed` are never answered, valid or not.",
    ),
    checked(
        "S-content",
        "9",
        "Content reads name a ref of this connection, start at offset 0 and follow `nextOffset`.",
    ),
    checked(
        "59",
        "9",
        "Content with a wrong length or SHA-256, or a page whose echoed `totalBytes` or `sha256` differs, is rejected with `protocol_error`.",
    ),
    checked(
        "60",
        "9",
        "An externalized payload is read back in full before the callback; descriptors other than exactly one `/payload` pointer are answered `invalid_params`.",
    )
    .only(ProtocolProfile::V1),
    checked(
        "S-ui",
        "10.5",
        "UI calls come only with capability `ui`, with valid params, the host's session and generation, and declared card actions; each declared action is answered with a valid result.",
    ),
    checked(
        "69",
        "10.3",
        "Prompts (`host/ui/request`) have the §10.3 shapes.",
    ),
    checked(
        "88",
        "6.6",
        "`extension/shutdown` is answered `{\"accepted\":true}`, running callbacks are cancelled without an answer, and the sidecar exits 0 when stdin closes (in any state, within 750 ms); stdin ending after a partial line exits non-zero.",
    )
    .only(ProtocolProfile::V1),
    checked(
        "89",
        "14.4",
        "Stream chunks are numbered from 1 with exactly one `stream/end` whose `lastSeq` is the last seq; the catalog is an array of valid descriptors with this plugin's refs.",
    ),
    checked(
        "90",
        "14.4",
        "After a processed cancel no chunk follows and `stream/end` has `\"interrupted\":true`; no `error` chunk is ever sent.",
    ),
    checked(
        "S-provider",
        "14.4",
        "`stream/open` with bad params or an unknown `providerRef` is answered `invalid_params`.",
    )
    .only(ProtocolProfile::V1),
    // The v2 delta's §6 checklist (sidecar-side items), on v2 connections. The v1 items above
    // that hold on v2 too (hook points, payloads, decisions, UI, content, streams: delta §3.2)
    // run on both; v1's envelope, state-machine and refusal rules stay v1's (the delta's §6
    // preamble: "every V1 item of v1 §17 keeps applying to V1 connections"; item 40): the
    // reference SDK does not follow them and the reference host does not rely on them.
    checked(
        "D4",
        "delta.1.4",
        "Initialize with protocolId `reasonix.extension.v2` and `\"2\"` is answered with protocolVersion `\"2\"`; in the same build the v1 id with `\"1\"` is answered `\"1\"` (or refused `unsupported_version` by a sidecar restricted to v2).",
    )
    .only(ProtocolProfile::V2),
    checked(
        "D5",
        "delta.1.4",
        "The v2 id with `\"1\"`, the v1 id with `\"2\"`, or a third id is answered `unsupported_version` and the sidecar exits non-zero.",
    )
    .only(ProtocolProfile::V2),
    checked(
        "D6",
        "delta.2.2",
        "A v2 initialize carrying every optional member is accepted; one missing `capabilities.protocolVersion` or carrying an unknown member is answered `invalid_params`.",
    )
    .only(ProtocolProfile::V2),
    checked(
        "D9",
        "delta.2.3",
        "`timeoutMillis` 0 in `extension/intercept` and `extension/shutdown` is accepted on v2 (no deadline).",
    )
    .only(ProtocolProfile::V2),
    checked(
        "D15",
        "delta.2.5",
        "Tool calls: the handshake's `tools` are sorted and declared in `runtime.tools`; a served (read-only) tool answers `content` (and `isError` on its own failure) for any JSON `arguments`; an unserved name is `unknown_method`; a missing `name` or `arguments`, or `timeoutMillis` -1, is `invalid_params`.",
    )
    .only(ProtocolProfile::V2),
    checked(
        "D22",
        "delta.2.11",
        "With `seqBase` 1 the first chunk is seq 1 and `lastSeq` equals the chunk count; with `seqBase` 0 the first chunk is also 1.",
    )
    .only(ProtocolProfile::V2),
    internal(
        "D24",
        "delta.2.2",
        "`extension/resources/changed` with `\"paths\":[]` reaches the callback on v2.",
        "whether a callback ran is not observable from outside; that the notification is neither answered nor fatal is checked by S-events",
    )
    .only(ProtocolProfile::V2),
    checked(
        "D25",
        "delta.3.1",
        "Every error answer on a v2 connection carries a reason of the v2 table (28 reasons) with that table's `retryable`.",
    )
    .only(ProtocolProfile::V2),
];
