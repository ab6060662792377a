#![doc = include_str!("../README.md")]
//!
//! # Main types
//!
//! [`ExtensionHost`] (the installed plugins, booted and running: turns, reload, events,
//! shutdown), [`Turn`] (one pinned generation's hook points: [`Turn::intercept`] returns an
//! [`Outcome`]) and [`PluginStore`] (installed plugins and consent: a [`Package`]'s
//! [`TrustSummary`] is what the user agrees to).
//!
//! # Provider extensions
//!
//! A sidecar whose manifest declares capability `providers` may serve models (spec §14). Its
//! handshake's `providers` list is its initial catalog; [`ExtensionHost::providers`] aggregates the
//! catalogs of the ready sidecars (by plugin id, then each sidecar's order) and
//! [`ExtensionHost::refresh_providers`] asks them again (`extension/provider/catalog`), rejecting a
//! list whole when a ref repeats (`protocol_error`) or lacks the plugin's `plugin/<id>/` prefix
//! (`capability_not_declared`): that plugin keeps its previous list and a warning says why.
//!
//! [`ExtensionHost::open_stream`] (or [`Turn::open_stream`]) opens a stream only on the sidecar whose
//! current catalog lists the [`StreamRequest`]'s ref; any other ref fails before anything is
//! written, with `invalid_params`. The [`ProviderStream`] it returns is a `Stream` of
//! [`ProviderChunk`](sidewire_ext_protocol::ProviderChunk)s in `seq` order that ends with
//! `None` after a clean `stream/end`, or with exactly one [`Error::Provider`] whose
//! [`reason`](Error::reason) says how it ended: `provider_failed` (`accepted: false`, an
//! `end.error`, an `error` chunk of that code), `provider_interrupted` (an interrupted end, a
//! crash, a conflicting second end), `stream_cancelled` (after [`ProviderStream::cancel`]) or
//! `stream_gap` (a chunk beyond the 256-seq reorder window, a chunk after `lastSeq`, or one
//! still missing 1 s after the end). Duplicates are ignored; out-of-order chunks wait in the
//! window. Dropping the stream before its end cancels it (best-effort, 2 s); dropping never
//! needs a runtime.
//!
//! # Embedding
//!
//! ```no_run
//! use sidewire_ext_host::{ExtensionHost, HostConfig, HostEvent, PluginStore, InstallOptions, Package};
//! use sidewire_ext_protocol::{HookPayload, HookPoint, InputPayload};
//!
//! # async fn demo() -> Result<(), sidewire_ext_host::Error> {
//! // Installing is the consent: show the FULL TRUST summary first.
//! let store = PluginStore::new("/home/me/.local/share/sidewire");
//! let package = Package::open("./acme-guard".as_ref())?;
//! package.check_installable()?; // refuses what could forge the summary or never start
//! println!("{}", package.trust_summary()); // safe to print as it is: controls are escaped
//! store.install(&package.root, InstallOptions::copy())?;
//!
//! let config = HostConfig::new("/home/me/.local/share/sidewire", "s-7f3a", "/home/me/project");
//! let (host, mut events) = ExtensionHost::boot(config).await?;
//! tokio::spawn(async move {
//!     while let Some(event) = events.recv().await {
//!         match event {
//!             HostEvent::Prompt(prompt) => prompt.cancel(),
//!             other => eprintln!("{other:?}"),
//!         }
//!     }
//! });
//!
//! let turn = host.turn().await; // one generation for the whole turn
//! let outcome = turn
//!     .intercept(HookPoint::InputReceive, HookPayload::Input(InputPayload { text: "fix teh tests".into() }))
//!     .await?;
//! if let Some(blocked) = &outcome.blocked {
//!     eprintln!("refused by {}: {}", blocked.plugin, blocked.reason);
//! }
//! drop(turn);
//! host.shutdown().await;
//! # Ok(())
//! # }
//! ```
//!
//! # How it runs
//!
//! [`ExtensionHost::boot`] reads the [`PluginStore`] (only plugins recorded there, and enabled, ever
//! start), checks slot ownership before anything is spawned, and boots at most 4 sidecars at a
//! time within one 30 s budget. Each sidecar is launched directly (never through a shell) by
//! `sidewire-process`: in its own process group, with `PR_SET_PDEATHSIG(SIGKILL)` so a host
//! killed outright takes its sidecars along, and with stderr drained into a 16 KiB redacted
//! tail. Dropping the last [`ExtensionHost`] kills every group synchronously, without needing a
//! runtime. Each connection runs a few tasks on the caller's Tokio runtime (the JSON-RPC driver
//! behind the readiness barrier, the process's supervision with the exit watcher, the event
//! forwarder), so `ExtensionHost::boot` must be called within one, with the time and I/O drivers
//! enabled, and from a thread that outlives its sidecars (a runtime worker or the thread that
//! drives the runtime: the death signal follows the spawning thread). [`Redactor`] and
//! [`REDACTED`] are `sidewire-process`'s, re-exported: env-secret values and token patterns.
//!
//! # Where the spec is silent, and what this crate chose
//!
//! * **One session per host.** Switching sessions means booting a new host (§13.1 asks
//!   for a new generation with fresh sidecars, which is exactly that).
//! * **A turn pins a generation** ([`ExtensionHost::turn`]); [`ExtensionHost::intercept`] is a one-call
//!   turn. A reload waits until no turn is held; requests made while it waits join it: they get
//!   its report, or its error (the same [`Error::Reload`], sharing one typed cause, or
//!   [`Error::ShutDown`]). New turns may start as soon as the new generation is published: the
//!   retired sidecars are shut down after that, so a slow shutdown never stalls a turn.
//! * **A slot owner's `block`** fails the operation ([`Error::Operation`] with no reason:
//!   there is no wire reason for a refusal).
//! * **No override without its durable record** (§11): a host `deny` turned into `allow` takes
//!   effect only once its audit line is written and synced, within what is left of the point's
//!   budget. The log is opened non-blocking and must be a regular file. When the record cannot
//!   be written the decision is not applied ([`TraceResult::Unaudited`]) and a warning is sent
//!   every time: an optional member counts as failed and the chain goes on with the host's
//!   verdict; a required member or the `permission` slot owner fails the operation.
//! * **A plugin whose manifest no longer decodes** is treated as optional (the install record
//!   cannot vouch for its `required` flag); one that decodes with another name keeps its flag.
//! * **Install refuses what could forge the consent screen or never start**: a control
//!   character ([`is_terminal_control`]) in `name`, `version`, `runtime.command` or
//!   `runtime.args`, a command that is not absolute after expanding `${REASONIX_PLUGIN_ROOT}`,
//!   a shell ([`Error::Refused`] names the member and the rule). Launch applies the same
//!   check, so a linked plugin edited into such a manifest fails at stage `resolve`.
//! * **Reinstalling with `replace` re-enables** the plugin: it is a fresh consent.
//! * **A linked plugin's version** is the re-read manifest's.
//! * **Events** go through a per-connection queue of 256 to the connection's writer on a
//!   background lane, which the writer serves only while less than 64 KiB waits for it:
//!   requests and responses overtake queued events, so a full event queue never delays an
//!   intercept (§8) even when the sidecar reads slowly. Before `extension/shutdown`, events
//!   already queued are flushed to the writer (for at most 500 ms) so they are not overtaken.
//! * **The host's own event stream** ([`HostEvents`]) is bounded: 1,024 events and 16 MiB
//!   (strings and payloads as JSON, given back as the application reads). When it is full a
//!   surface is answered `{"accepted":false}` (it was not shown), a prompt
//!   `{"cancelled":true}`, and a warning is dropped.
//! * **Surfaces** are capped: 64 per plugin and a `surfaceId` of at most 256 bytes. A publish
//!   of a new id over the cap, or of a longer id, is answered `invalid_params` (replacing an
//!   existing id is always fine). The host keeps no payloads, only what staleness checks need,
//!   and forgets a connection's surfaces when the connection is dropped; at the cap, the
//!   plugin's stale surfaces (of a retired or crashed connection) make room first.
//! * **Prompts** are capped at 4 open per connection ([`HostConfig::prompts_per_connection()`]);
//!   one more is answered `invalid_params` at once. The spec sets no deadline; this host
//!   dismisses a prompt after [`HostConfig::prompt_timeout()`] (5 minutes): the sidecar gets
//!   `{"cancelled":true}` and the application [`HostEvent::PromptDismissed`].
//! * **Inbound requests** of one sidecar run 32 at a time with at most 1,024 more, holding at
//!   most 16 MiB of request frames, queued; one over is answered `-32603` (`internal`).
//! * **Content refs**: at most 64 objects and 32 MiB per connection (the spec bounds only the
//!   count, which allows 512 MiB); storing one more evicts the oldest until both hold, the
//!   newest always kept. A payload externalized for several members or recipients is one
//!   shared buffer.
//! * **Provider streams have an idle bound** (60 s, [`HostConfig::stream_idle_timeout`],
//!   [`StreamRequest::idle_timeout`]): a stream with nothing new for that long is cancelled as
//!   [`ProviderStream::cancel`] does, and ends `intercept_timeout` with
//!   [`Error::is_stream_idle`] once that cancel is over.
//! * **A chunk that does not decode** is dropped (§4), but the stream it names fails at once
//!   with `protocol_error` naming its `seq`, its type (quoted, escaped, cut) and why, rather
//!   than as a gap later.
//! * **Prompt answers are checked** against the fields (§10.3 value types, required fields);
//!   an empty answer is sent as `{"cancelled":true}`.
//! * **Actions and submissions** are sent with the current published generation; a surface of
//!   a crashed or retired connection is refused with `stale_generation` as an [`Error::Ui`].
//! * **A handshake failure names the side that refused** ([`StartupFailure::refused_by`]): the
//!   host (the result failed §6.3, or the barrier or framing rules were broken) or the sidecar
//!   (an error answer to `extension/initialize`), since the reason alone, `unsupported_version`
//!   say, reads the same from both sides.
//! * **The host also sends `capabilities.protocolVersion`**, as the reference host does and its
//!   SDK requires (see `sidewire-ext-protocol`'s "Where this crate differs from or extends the
//!   spec").
//! * **A crash is reported once the process is reaped** (bounded by the 5 s reap budget), so
//!   the [`HostEvent::Crashed`] tail is complete; its surfaces are marked stale at once
//!   ([`HostEvent::SurfacesStale`]) and its prompts dismissed ([`HostEvent::PromptDismissed`]).
//! * **Closing stdin** during shutdown is done by dropping the connection's JSON-RPC driver,
//!   which also fails the calls still pending with `provider_interrupted` at once (§6.6).
//! * **Provider stream bounds.** Stream notifications are handled on the connection's reader
//!   as they are read (decoded and routed into their stream), so the §2.4 queue of notifications
//!   read but not yet handled never holds more than one. What waits is the chunks delivered to a
//!   [`ProviderStream`] and not read yet plus the out-of-order ones: per connection at most
//!   65,536 chunks and 32 MiB (params as received plus ~0.2 KiB each for the decoded chunk);
//!   one more fails the connection (the crash path, so its streams end
//!   `provider_interrupted`), since ordered data is never dropped. (A bound of 256 unread
//!   chunks failed connections in ordinary use: a local provider writes a long answer as a
//!   burst of small chunks faster than an application reads them.) A
//!   connection has at most 64 streams open (until read to the end, or dropped and their
//!   cancel's wait over); one more open fails locally with `provider_failed`.
//! * **A stream's end is final once its chunks are in.** A second, conflicting `stream/end`
//!   fails a stream still waiting for a missing chunk; once every chunk up to `lastSeq` is in,
//!   the outcome is decided and later notifications for the stream are dropped as a finished
//!   stream's. An `error` chunk takes effect in `seq` order, after the chunks before it.
//! * **A cancel is over when its wait is.** After [`ProviderStream::cancel`], the stream ends
//!   with `stream_cancelled` when the sidecar's interrupted end arrives, or at the latest
//!   when `stream/cancel` is answered or its 2 s pass, so a sidecar that ignores the cancel
//!   cannot hold the stream open. A dropped stream's state is forgotten at the same point (or
//!   at its end, if that comes first).
//! * **A stream pins its turn**: a reload waits for open streams, as for turns.
//! * **Budgets** are the spec's by default; [`HostConfig`] can lower the boot budget, the
//!   handshake deadline, the shutdown `timeoutMillis`, the 30 s deadline of UI actions and
//!   submissions and of provider catalogs and stream opens, and the stream gap (1 s) and
//!   cancel (2 s) waits, which tests use to stay fast.
//!
//! # Cancel safety
//!
//! Every `pub async fn` documents its own. In short: dropping an intercept abandons the walk
//! (the call in flight is cancelled and its late answer ignored); dropping a boot kills what it
//! started; dropping a shutdown only stops waiting; a reload should not be dropped once it
//! started building; dropping a stream open once it was written, or a [`ProviderStream`]
//! before its end, cancels the stream; dropping a catalog refresh keeps every list as it was.
#![cfg_attr(docsrs, feature(doc_cfg))]

mod audit;
mod chain;
mod config;
mod conn;
mod content;
mod error;
mod events;
mod generation;
mod member;
mod package;
mod provider;
mod runtime;
mod shared;
mod store;
mod text;
mod tool;
mod ui;
mod util;

pub use crate::audit::AuditRecord;
pub use crate::chain::{Blocked, Outcome, TraceEntry, TraceResult, TraceRole};
pub use crate::config::HostConfig;
pub use crate::error::{
    Error, OperationFailure, ProviderFailure, RefusedBy, StartupFailure, StartupStage,
};
pub use crate::events::{HostEvent, HostEvents, PublishedSurface, UiPrompt};
pub use crate::member::{ChainMember, MemberAnswer, MemberFailure, MemberFuture};
pub use crate::package::{
    ContributionRefusal, ContributionWarning, MAX_GLOB_ENTRIES, MAX_GLOB_MATCHES, Package,
    TrustSummary,
};
pub use crate::provider::{CatalogEntry, ProviderStream, StreamRequest};
pub use crate::runtime::{
    ExtensionHost, GenerationReport, InactivePlugin, InactiveReason, SidecarInfo, Turn,
    UnmetOptional,
};
pub use crate::store::{InstallOptions, InstalledPlugin, PluginStore};
pub use crate::tool::{
    ExtensionTool, MAX_TOOL_NAME_LEN, TOOL_NAME_PREFIX, is_model_tool_name, tool_name,
};

/// For binaries only, since both are process-global: become a child subreaper at start (so
/// sidecars' `setsid()` daemons are re-parented to the binary, not PID 1), and kill and reap
/// everything still below the process at the very end of shutdown. Re-exported from
/// `sidewire-process` so a binary needs no dependency of its own on it.
pub mod reaper {
    pub use sidewire_process::{kill_descendants, set_child_subreaper};
}
/// The launch contract's refusals, the terminal-control set and the manifest cap are
/// `sidewire-ext-protocol`'s (its `launch` rules, which install and launch both apply),
/// re-exported because this crate's API names them.
pub use sidewire_ext_protocol::{MAX_MANIFEST_BYTES, Refusal, is_terminal_control};
pub use sidewire_process::file::FileError;
pub use sidewire_process::{REDACTED, Redactor};

/// `time` as audit records write it: RFC 3339 in UTC with milliseconds
/// (`2026-12-06T21:24:00.123Z`), so another log of the same host (a gateway's per-call
/// records) sorts and reads the same way.
pub fn audit_time(time: std::time::SystemTime) -> String {
    crate::util::rfc3339(time)
}

/// The wire types of Extension Protocol v1 that this crate's API speaks (hook points and
/// payloads, verdicts, reasons, the model and provider DTOs); the whole
/// `sidewire-ext-protocol` crate, so an embedder needs no dependency of its own on it.
pub use sidewire_ext_protocol as protocol;
