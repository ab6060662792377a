#![doc = include_str!("../README.md")]
//!
//! # Main types
//!
//! [`Extension`] (what a sidecar author builds), [`HostHandle`] (the handle for calling the
//! host from a callback), [`Context`] (what a callback is given) and [`Provider`] (a sidecar
//! that serves models); [`serve_main`], [`serve`] and [`serve_io`] run an extension.
//!
//! # A sidecar's `main`
//!
//! Not run as a doctest: it serves stdin and stdout until the host closes them.
//!
//! ```no_run
//! use sidewire_ext_sdk::protocol::{InputPayload, StatusPayload};
//! use sidewire_ext_sdk::{Decision, Extension, Options, point, serve_main};
//!
//! #[tokio::main(flavor = "current_thread")]
//! async fn main() -> std::process::ExitCode {
//!     let extension = Extension::new("acme-guard", "1.2.0")
//!         .on_intercept(point::INPUT_RECEIVE, |_ctx, input: InputPayload| async move {
//!             if input.text.contains("rm -rf /") {
//!                 return Ok(Decision::block("not today"));
//!             }
//!             let text = input.text.replace("teh", "the");
//!             if text == input.text {
//!                 return Ok(Decision::Continue);
//!             }
//!             Ok(Decision::Replace(InputPayload { text }))
//!         })
//!         .on_ready(|host| async move {
//!             let status = StatusPayload { label: "guarding".into(), ..Default::default() };
//!             host.publish("guard", status).await?;
//!             Ok(())
//!         });
//!     // Exits 0 when the host closes stdin; on a fatal error, 1 with the reason on stderr.
//!     serve_main(extension, Options::new()).await
//! }
//! ```
//!
//! Its manifest declares what the callbacks may do; a callback for a point the manifest does
//! not list is reported on stderr and never called. The `samples` module holds the extensions
//! behind `examples/` (starter, allow-all, status-card, and the scripted model served by
//! `examples/provider`); it is behind the `samples` feature, off by default, since
//! demonstrations are not the SDK's API.
//!
//! **stdout belongs to the protocol.** `println!` (or any other write to stdout) in a sidecar
//! corrupts the stream and the host kills the process. Log with [`log`] or [`HostHandle::log`], which
//! write `reasonix-extension: `-prefixed lines to stderr.
//!
//! # The state machine (§6.5)
//!
//! ```text
//!        initialize ok           initialized
//!  new ────────────────▶ handshake ──────────▶ ready
//!   │                       │                   │
//!   └──── shutdown ─────────┴──── shutdown ─────┴──▶ shutdown ──(stdin EOF)──▶ exit 0
//! ```
//!
//! Each request is dispatched in the spec's order: envelope checks (`-32600`); a method not
//! registered as an H→E request, in any state (`-32601`); a registered request the state does
//! not serve (`protocol_error`): in `new` only initialize and shutdown are served, in
//! `handshake` only shutdown, in `ready` everything but initialize, in `shutdown` nothing; no
//! UI handler (`unknown_method`); for initialize the version check; strict params decoding
//! (`invalid_params`); the callback. Notifications outside their state are dropped. The switch
//! to `ready` happens on the read loop before the next frame is read, and nothing is written
//! before it but the initialize answer: host calls made earlier fail locally with
//! [`Error::NotReady`].
//!
//! Any error answer to initialize ends [`serve`] with [`Error::Handshake`]. On
//! `extension/shutdown` the shutdown hook runs within `timeoutMillis` (overrunning is answered
//! `shutdown_timeout`), the answer is `{"accepted":true}`, callbacks still running are
//! cancelled without an answer, and `serve` returns `Ok` at end of input. End of input in any
//! state is `Ok`, unless it cuts a line short. A frame over 8 MiB, a line that is not a JSON
//! object (blank lines and BOMs included) and input ending inside a line are fatal
//! ([`Error::Connection`]); with [`serve_main`] the process exits 1 and the reason, which
//! contains the word "frame" for an oversized frame, goes to stderr.
//!
//! Callbacks run concurrently, 32 at once by default ([`Options::concurrency`]); up to 1,024
//! more wait, within their deadlines, while frames keep being read and lifecycle requests are
//! answered at once (a request beyond that is answered `internal` without running anything).
//! An interceptor runs within the intercept's `timeoutMillis` (overrun: `intercept_timeout`).
//! Events are delivered one at a time in arrival order.
//!
//! # Provider extensions (§14)
//!
//! A sidecar serves models by registering a [`Provider`] with [`Extension::provider`]: a
//! catalog of descriptors and an `open` that returns the stream's producer, a [`ChunkStream`]
//! (an async stream of `Result<ProviderChunk, Error>`). The manifest must have capability
//! `providers`; without it (or without a provider) the provider requests are answered
//! `unknown_method` in `ready` whatever their params, and a registered provider is reported on
//! stderr as not offered. Before `ready` and after `extension/shutdown` the state gate answers
//! them `protocol_error`.
//!
//! The SDK, not the author, keeps the rules of §14.4:
//!
//! * **Catalog.** The handshake's `providers` and each `extension/provider/catalog` answer
//!   (`{"providers":[...]}`, `[]` when empty) come from [`Provider::catalog`], checked first:
//!   the `ProviderDescriptor` rules, unique refs, and the `plugin/<pluginId>/` prefix when
//!   `REASONIX_PLUGIN_NAME` is set. A catalog that fails (or an `Err`) is never sent: the call
//!   is answered `internal` with the cause on stderr. Opens are served for the refs of the
//!   catalog last sent.
//! * **Open.** Bad params or a `providerRef` outside that catalog are `invalid_params`; a
//!   `streamId` still active is `protocol_error`; [`Provider::open`] returning `Err` is
//!   `provider_failed` with its text; otherwise `{"accepted":true}`, written before the
//!   stream's first chunk, and the producer runs in the background (a job of the serve loop).
//! * **Chunks.** Numbered contiguously from `seqBase + 1`. Each is checked against the
//!   `ProviderChunk` DTO before it is sent; an invalid chunk, or an `error` chunk, is never
//!   sent and ends the stream with the generic `end.error` "the provider produced an invalid
//!   chunk" (the details go to stderr). Each chunk waits for room in the writer's bounded
//!   queue before the producer is polled again: a host that reads slowly slows the producer,
//!   nothing piles up.
//! * **End.** Exactly one `stream/end`, with `lastSeq` the last chunk sent (`seqBase` if
//!   none): clean when the producer ends, `error` (the producer's error text, cut to
//!   [`END_ERROR_BYTES`], never empty) when it yields `Err`.
//! * **Cancel.** `extension/provider/stream/cancel` is processed as it is read: no chunk of
//!   that stream is queued afterwards, the producer is dropped without being polled again, and
//!   the end says `"interrupted":true` with the current `lastSeq`. It is answered
//!   `{"cancelled":true}` for an active stream, `false` for an unknown one, one already ended,
//!   or one already cancelled. `extension/shutdown` cancels every active stream the same way.
//! * **Bound.** At most [`MAX_STREAMS`] (64) streams are active per connection, opens being
//!   handled included; one more open is answered `provider_failed` without calling the
//!   provider.
//!
//! # Where the spec is silent, and what this SDK chose
//!
//! * A second `extension/initialize` (while one is handled, or in `handshake`/`ready`) is
//!   answered `protocol_error` but is not fatal: §6.5 makes "any error answer to initialize"
//!   fatal, which we read as a failed handshake (version, params, hook), not a duplicate the
//!   state machine refuses. The connection that did shake hands stays usable.
//! * Host calls stay allowed after `extension/shutdown` if the connection had been ready, so a
//!   shutdown hook can publish a last status; the host serves them until it closes stdin.
//! * UI actions and form submissions count as "a UI handler" separately: without an action
//!   callback `extension/ui/action` is `unknown_method`, without a submit callback
//!   `extension/ui/submit` is. Without manifest capability `ui` neither is live. An action id
//!   that is not registered is `invalid_params`.
//! * UI action and submit callbacks are bounded by the host's 30 s deadline (§2.5) and answered
//!   `intercept_timeout` when they overrun.
//! * A callback error, an illegal decision (`allow` outside `permission.decision`, `block` in a
//!   strategy call) and an invalid replacement are answered `internal` with the cause in the
//!   message, and logged on stderr; nothing invalid is ever sent, so the host applies its
//!   failure policy instead of detecting a violation.
//! * `InitializeResult.name`/`version` come from [`Extension::new`]. If they differ from
//!   `REASONIX_PLUGIN_NAME`/`REASONIX_PLUGIN_VERSION` (what the host launched), the SDK warns
//!   on stderr but goes on: the spec calls them informational.
//! * A cancelled callback is never answered; its request stays parked (without running
//!   anything) until end of input ends the connection.
//! * Events go through one ordered queue of 256 (the host's own bound, §8); when it is full a
//!   new event is dropped with a line on stderr.
//! * A catalog that fails at the handshake does not fail the handshake: nothing is offered
//!   (`providers` absent), the cause goes to stderr, and a later catalog call may offer it.
//! * A stream is active from the moment its open is routed until its end is decided; a cancel
//!   that arrives while [`Provider::open`] runs abandons the open, which is still answered
//!   `{"accepted":true}`, and the stream ends at once, `interrupted`, with no chunk. A stream
//!   whose end was decided is no longer active: a cancel racing with the end is answered
//!   `false` and the end is the clean (or error) one.
//! * `stream/end` is sent after `extension/shutdown` too (`interrupted`), so the host sees
//!   every accepted stream end; it is dropped silently once the connection has closed.
//! * The catalog call and the open are bounded by the host's 30 s (§2.5), answered
//!   `intercept_timeout` when they overrun, and take one of the [`Options::concurrency`]
//!   callback slots while they run; a producer does not hold a slot.
//! * A producer whose numbering would pass 2^64 − 1 (a `seqBase` near the top) ends with the
//!   generic `end.error`.
//!
//! # Cancel safety
//!
//! Every `pub async fn` documents its own. Dropping [`serve`] closes the connection at once.
#![cfg_attr(docsrs, feature(doc_cfg))]

mod content;
mod error;
mod extension;
mod guard;
mod host;
mod log;
pub mod point;
mod provider;
#[cfg(feature = "samples")]
#[cfg_attr(docsrs, doc(cfg(feature = "samples")))]
pub mod samples;
mod serve;
mod state;
mod stdio;

/// The wire types of Extension Protocol v1 that callbacks receive and return (payload DTOs,
/// UI payloads, hook points, slots); the whole `sidewire-ext-protocol` crate.
pub use sidewire_ext_protocol as protocol;

pub use crate::error::Error;
pub use crate::extension::{Context, Extension};
pub use crate::host::{HostHandle, Surface};
pub use crate::log::log;
pub use crate::point::{Decision, Payload, Point};
pub use crate::provider::{ChunkStream, END_ERROR_BYTES, MAX_STREAMS, Provider, StreamContext};
pub use crate::serve::{Options, serve, serve_io, serve_main};
