//! The protocol's identity, limits and timeouts, each defined exactly once.
//!
//! Every number and wire string of the spec that is a constant (§1, §2, §6.6, §7.9, §8, §9, §10.5,
//! §12, §13, §14.5) lives here and nowhere else; other crates import it instead of repeating the
//! literal. This module is not where rules live: the checks built on these values are in
//! `version`, the hook registry and the DTO modules.

use std::time::Duration;

/// The protocol id sent in `InitializeParams.protocolId` (§1).
pub const PROTOCOL_ID: &str = "reasonix.extension.v1";

/// The protocol major version (§1); `protocolVersion` must denote exactly this integer.
pub const PROTOCOL_MAJOR: u64 = 1;

/// The wire form of the protocol version (§1), sent by both peers.
pub const PROTOCOL_VERSION: &str = "1";

/// The protocol id of Extension Protocol v2 (spec delta §1.1), the other profile.
pub const PROTOCOL_ID_V2: &str = "reasonix.extension.v2";

/// The major version of Extension Protocol v2.
pub const PROTOCOL_MAJOR_V2: u64 = 2;

/// The wire form of Extension Protocol v2's version.
pub const PROTOCOL_VERSION_V2: &str = "2";

/// The manifest `apiVersion` of a plugin written for v2 (spec delta §4.1), exactly.
pub const MANIFEST_API_VERSION_V2: &str = "reasonix.io/plugin/v2";

/// The dependency schema version a v2 host sends (spec delta §2.2).
pub const DEPENDENCY_SCHEMA_VERSION: u64 = 1;

/// The manifest file name at a plugin package's root (§12.1).
pub const MANIFEST_FILE: &str = "reasonix-plugin.json";

/// The manifest `apiVersion` (§12.1). `reasonix.io/plugin/v1.<digits>` is accepted as well; see
/// [`is_accepted_manifest_api_version`](crate::is_accepted_manifest_api_version).
pub const MANIFEST_API_VERSION: &str = "reasonix.io/plugin/v1";

/// The largest frame in bytes, counting the trailing LF, in both directions (§2.1).
///
/// This is the only place the number lives; the framing codec takes it as a parameter.
pub const FRAME_BYTES: usize = 8_388_608;

/// The largest integer a `uint` member may hold, and the bound of `int` (§0): 2^53 − 1.
pub const MAX_SAFE_INTEGER: u64 = 9_007_199_254_740_991;

/// Payloads whose compact JSON is strictly longer than this are externalized (§9).
pub const EXTERNALIZE_FIELD_BYTES: usize = 65_536;

/// The most decoded bytes one `host/content/read` page carries (§9).
pub const CONTENT_CHUNK_BYTES: usize = 262_144;

/// The largest object a content ref may hold; larger payloads cannot be sent (§9).
///
/// It equals [`FRAME_BYTES`] numerically but is a different limit, so it is a separate constant.
pub const CONTENT_OBJECT_BYTES: usize = 8 * 1024 * 1024;

/// How many content objects the host keeps per connection; storing one more evicts the oldest
/// (§9).
pub const CONTENT_REFS_PER_CONNECTION: usize = 64;

/// Every content ref starts with this prefix, followed by [`CONTENT_REF_HEX_DIGITS`] lowercase hex
/// digits (§9).
pub const CONTENT_REF_PREFIX: &str = "content_";

/// The number of lowercase hex digits after [`CONTENT_REF_PREFIX`] (12 random bytes, §9).
pub const CONTENT_REF_HEX_DIGITS: usize = 24;

/// The fixed `message` of the error sent instead of a result that would not fit a frame (§2.4).
pub const RESPONSE_TOO_LARGE_MESSAGE: &str = "response exceeds frame size limit";

/// The words a barrier-violation failure must contain (§6.4).
pub const READINESS_RULE: &str = "before extension/initialized";

/// A host write to a sidecar's stdin that makes no progress for this long fails the connection
/// (§2.4).
pub const WRITE_STALL_TIMEOUT: Duration = Duration::from_secs(10);

/// The deadline of the fixed-deadline calls of §2.5: H→E `extension/ui/action`,
/// `extension/ui/submit`, `extension/provider/catalog`, `extension/provider/stream/open`, and the
/// SDK's `host/content/read` and `host/ui/publish`.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// The handshake deadline (§6.1), further bounded by the remaining generation budget.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(30);

/// The budget shared by all boots of one generation (§13.2).
pub const GENERATION_BOOT_BUDGET: Duration = Duration::from_secs(30);

/// How many sidecars of one generation boot concurrently at most (§13.2).
pub const MAX_CONCURRENT_BOOTS: usize = 4;

/// The `timeoutMillis` the host sends with `extension/shutdown` unless told otherwise (§6.6).
pub const SHUTDOWN_TIMEOUT_MILLIS: u64 = 5_000;

/// Extra time the host waits for the shutdown answer past `timeoutMillis`, so that an answer sent
/// exactly at the deadline is still read (§6.6).
pub const SHUTDOWN_ANSWER_GRACE: Duration = Duration::from_millis(500);

/// How long the host waits for the sidecar to exit after closing its stdin (§6.6).
pub const SHUTDOWN_EXIT_WAIT: Duration = Duration::from_millis(750);

/// How long the host waits for the reap after a kill, and then for the stdout reader (§6.6).
pub const SHUTDOWN_REAP_WAIT: Duration = Duration::from_secs(5);

/// The default intercept budget of the four latency-sensitive points (§7.9).
pub const SHORT_INTERCEPT_TIMEOUT: Duration = Duration::from_secs(5);

/// The default intercept budget of every other point (§7.9).
pub const DEFAULT_INTERCEPT_TIMEOUT: Duration = Duration::from_secs(30);

/// A manifest `runtime.timeoutMillis` is clamped to this (§7.9, §12.1).
pub const MAX_INTERCEPT_TIMEOUT_MILLIS: u64 = 60_000;

/// The per-connection event queue, in frames; a new event is dropped when it is full (§8).
pub const EVENT_QUEUE_FRAMES: usize = 256;

/// The per-connection queue of inbound E→H notifications; the connection fails when it is full
/// (§2.4, §14.5).
pub const NOTIFICATION_QUEUE_FRAMES: usize = 256;

/// The fewest concurrent callbacks an SDK should allow after the handshake (§2.4).
pub const MIN_CONCURRENT_CALLBACKS: usize = 32;

/// During a reload, at most this many `host/ui/*` calls per staged connection are held until the
/// swap; later ones are answered as stale (§10.5).
pub const HELD_UI_CALLS_PER_CONNECTION: usize = 16;

/// The reorder window of a provider stream, in sequence numbers (§14.5).
pub const STREAM_REORDER_WINDOW: u64 = 256;

/// A chunk still missing this long after `stream/end` fails the stream with `stream_gap` (§14.5).
pub const STREAM_GAP_TIMEOUT: Duration = Duration::from_secs(1);

/// The best-effort deadline of `extension/provider/stream/cancel` (§14.5).
pub const STREAM_CANCEL_TIMEOUT: Duration = Duration::from_secs(2);

/// How many bytes of a sidecar's stderr the host keeps (§13.5).
pub const STDERR_TAIL_BYTES: usize = 16 * 1024;

/// The longest UI action id (§6.2, `^[a-z0-9-]{1,64}$`).
pub const MAX_ACTION_ID_CHARS: usize = 64;

/// The longest plugin id (§12.1, `^[a-z0-9][a-z0-9-]{0,63}$`).
pub const MAX_PLUGIN_ID_CHARS: usize = 64;

/// The lowest manifest `runtime.priority` (§12.1).
pub const MIN_PRIORITY: i64 = -1000;

/// The highest manifest `runtime.priority` (§12.1).
pub const MAX_PRIORITY: i64 = 1000;

/// The largest manifest a host reads (this crate's choice; §12.1 sets no size): a real one is a
/// few KiB, and it is read before anyone consented to the package, so a hostile one must not
/// grow the host. A reader stops one byte past it.
pub const MAX_MANIFEST_BYTES: usize = 1024 * 1024;

/// The only expansion the launch contract performs, in `command` and `args` (§12.3).
pub const PLUGIN_ROOT_PLACEHOLDER: &str = "${REASONIX_PLUGIN_ROOT}";

/// The environment variable carrying the installed plugin root (§12.3).
pub const ENV_PLUGIN_ROOT: &str = "REASONIX_PLUGIN_ROOT";

/// The environment variable carrying the plugin id (§12.3).
pub const ENV_PLUGIN_NAME: &str = "REASONIX_PLUGIN_NAME";

/// The environment variable carrying the installed version (§12.3).
pub const ENV_PLUGIN_VERSION: &str = "REASONIX_PLUGIN_VERSION";

/// Command base names the launch contract refuses, compared case-insensitively after removing a
/// trailing `.exe` (§12.3).
pub const REFUSED_COMMAND_NAMES: &[&str] = &[
    "sh",
    "bash",
    "zsh",
    "fish",
    "dash",
    "ksh",
    "cmd",
    "powershell",
    "pwsh",
];

/// The prefix of provider refs served by plugins: `plugin/<pluginId>/<rest>` (§14.1).
pub const PLUGIN_PROVIDER_REF_PREFIX: &str = "plugin/";

/// The suggested prefix of an SDK's stderr lines (§13.5).
pub const SDK_STDERR_PREFIX: &str = "reasonix-extension: ";
