//! The SDK state machine of §6.5 as plain data: the states, which registered requests and
//! notifications each one serves, and the one cell the connection keeps its state in.
//!
//! The table is a pure function so it is tested without a connection. Transitions happen on
//! the jsonrpc driver (notifications and request routing run there, in arrival order), which is
//! what makes "the switch to `ready` happens before the next frame is read" true.

use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

use sidewire_ext_protocol::Method;

/// A state of §6.5, plus `Initializing`, which the spec folds into `new`: an initialize is
/// being handled, so a second one is not served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum State {
    /// Nothing received yet.
    New = 0,
    /// `extension/initialize` is being handled.
    Initializing = 1,
    /// Initialize answered; waiting for `extension/initialized`.
    Handshake = 2,
    /// Normal traffic.
    Ready = 3,
    /// `extension/shutdown` received; nothing more is served.
    Shutdown = 4,
}

impl State {
    fn from_u8(value: u8) -> State {
        match value {
            0 => State::New,
            1 => State::Initializing,
            2 => State::Handshake,
            3 => State::Ready,
            _ => State::Shutdown,
        }
    }

    /// The state's name as the spec writes it, for error messages.
    pub(crate) fn name(self) -> &'static str {
        match self {
            State::New | State::Initializing => "new",
            State::Handshake => "handshake",
            State::Ready => "ready",
            State::Shutdown => "shutdown",
        }
    }

    /// Whether a registered H→E request is served in this state (§6.5 table); the others are
    /// answered `protocol_error`.
    pub(crate) fn serves(self, method: Method) -> bool {
        match self {
            State::New => matches!(method, Method::Initialize | Method::Shutdown),
            State::Initializing | State::Handshake => method == Method::Shutdown,
            State::Ready => method != Method::Initialize,
            State::Shutdown => false,
        }
    }

    /// Whether a registered H→E notification is handled in this state; the others are
    /// dropped.
    pub(crate) fn handles(self, method: Method) -> bool {
        match self {
            State::Handshake => method == Method::Initialized,
            State::Ready => method != Method::Initialized,
            State::New | State::Initializing | State::Shutdown => false,
        }
    }
}

/// The connection's state, shared by the router, the host handle and the callbacks.
#[derive(Debug)]
pub(crate) struct StateCell {
    state: AtomicU8,
    /// Set once on entering `ready`; host calls stay allowed after a shutdown that followed.
    was_ready: AtomicBool,
}

impl StateCell {
    pub(crate) fn new() -> Self {
        StateCell {
            state: AtomicU8::new(State::New as u8),
            was_ready: AtomicBool::new(false),
        }
    }

    pub(crate) fn get(&self) -> State {
        State::from_u8(self.state.load(Ordering::Acquire))
    }

    /// Moves from `from` to `to`; `false` (and no change) when the state is not `from`.
    pub(crate) fn advance(&self, from: State, to: State) -> bool {
        let moved = self
            .state
            .compare_exchange(from as u8, to as u8, Ordering::AcqRel, Ordering::Acquire)
            .is_ok();
        if moved && to == State::Ready {
            self.was_ready.store(true, Ordering::Release);
        }
        moved
    }

    /// Enters `shutdown` from any state; returns the state left.
    pub(crate) fn shut_down(&self) -> State {
        State::from_u8(self.state.swap(State::Shutdown as u8, Ordering::AcqRel))
    }

    /// Whether extension code may call the host: the connection is ready, or was ready before
    /// a shutdown (the host keeps serving calls until it closes stdin, §6.6).
    pub(crate) fn may_call_host(&self) -> bool {
        match self.get() {
            State::Ready => true,
            State::Shutdown => self.was_ready.load(Ordering::Acquire),
            State::New | State::Initializing | State::Handshake => false,
        }
    }
}

#[cfg(test)]
mod tests;
