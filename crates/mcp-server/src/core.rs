//! The sans-IO session core: what one client message does to a session, before any handler
//! runs. Transports feed it [`Inbound`] messages and carry out the [`Step`] it returns; it
//! owns no I/O, no clock and no task, so every transition is a plain function call (and a
//! fuzz target).
//!
//! A session is a stdio connection, or a Streamable HTTP session (`Mcp-Session-Id`). A
//! modern request needs no session: it is served by a core in [`Phase::Fresh`] that it leaves
//! as it found.
//!
//! | phase | message | step | next phase |
//! |---|---|---|---|
//! | `Fresh` | `initialize` | answer: the negotiated version, capabilities, `serverInfo` | `Initializing` |
//! | `Fresh` | `ping` without a modern `_meta` | answer `{}` | `Fresh` |
//! | `Fresh` | another request with a modern `_meta` | dispatch, modern era (the methods the era removed, `initialize` on a stateless core included, are `-32601`) | `Fresh` |
//! | `Fresh` | another request without one | answer `-32602` (missing keys) or `-32022` | `Fresh` |
//! | `Initializing` | `notifications/initialized` | nothing | `Ready` |
//! | `Initializing`, `Ready` | `initialize` | answer `-32600` (already initialized) | unchanged |
//! | `Initializing`, `Ready` | `ping` | answer `{}` | unchanged |
//! | `Initializing`, `Ready` | `logging/setLevel` (with `logging` offered) | answer `{}`, level kept | unchanged |
//! | `Initializing`, `Ready` | `resources/subscribe`, `unsubscribe` (with `resources.subscribe` offered) | answer `{}`, set kept | unchanged |
//! | `Initializing`, `Ready` | one of those three, not offered | answer `-32601` | unchanged |
//! | `Initializing`, `Ready` | another request | dispatch, legacy era | unchanged |
//! | any | `notifications/cancelled` | cancel the named request | unchanged |
//! | any | a response | reply to the server request it answers | unchanged |
//! | any | another notification | nothing | unchanged |
//! | `Closed` | a request | answer `-32600` (closed) | `Closed` |
//!
//! A request before `notifications/initialized` is served (clients race it over HTTP); a
//! method the server does not offer is answered `-32601` when dispatched.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};
use sidewire_mcp::LogLevel;

use crate::era::{self, Envelope, Era};
use crate::error::{Error, INVALID_REQUEST};
use crate::wire::{self, Inbound};

/// The most resource URIs one session may subscribe to.
pub const MAX_SUBSCRIPTIONS: usize = 1024;
/// The longest resource URI read.
pub const MAX_URI_BYTES: usize = 8 << 10;

/// Where a session is in its lifecycle (the module's state table).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Phase {
    /// Nothing yet: `initialize`, or modern requests.
    Fresh,
    /// `initialize` answered at this version; `notifications/initialized` not yet seen.
    Initializing(&'static str),
    /// Initialized at this version.
    Ready(&'static str),
    /// Ended (`DELETE`, EOF).
    Closed,
}

/// What the server says about itself in `initialize`.
#[derive(Debug, Clone)]
pub struct Offer {
    /// `serverInfo`.
    pub info: Value,
    /// `capabilities`.
    pub capabilities: Value,
    /// `instructions`.
    pub instructions: Option<String>,
}

impl Offer {
    /// Whether the capabilities offer a method the core answers itself: `logging/setLevel`
    /// needs `logging`, `resources/subscribe` and `unsubscribe` need `resources.subscribe`.
    fn offers(&self, method: &str) -> bool {
        match method {
            "logging/setLevel" => self.capabilities.get("logging").is_some(),
            "resources/subscribe" | "resources/unsubscribe" => {
                self.capabilities["resources"]["subscribe"] == json!(true)
            }
            _ => true,
        }
    }
}

/// The client a legacy session learned at `initialize`, or a modern request's envelope.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Client {
    /// Its capabilities.
    pub capabilities: Map<String, Value>,
    /// `clientInfo`.
    pub info: Option<Value>,
    /// The log level it asked for (`logging/setLevel`, or the modern `_meta`).
    pub log_level: Option<LogLevel>,
}

impl From<Envelope> for Client {
    fn from(envelope: Envelope) -> Self {
        Client {
            capabilities: envelope.capabilities,
            info: envelope.client_info,
            log_level: envelope.log_level,
        }
    }
}

/// A request for the handler.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// Its id.
    pub id: Value,
    /// The method.
    pub method: String,
    /// The params.
    pub params: Map<String, Value>,
    /// The era it is served in.
    pub era: Era,
    /// Who asks.
    pub client: Client,
    /// The `Mcp-Param-*` headers of a modern HTTP request (suffix in lower case, value), to be
    /// checked against the arguments their tool designates; `None` when there are no such
    /// headers to check (stdio, legacy).
    pub param_headers: Option<Vec<(String, String)>>,
}

/// What the transport does with one message.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Write this response now.
    Answer(Value),
    /// Run the handler, then write its response.
    Dispatch(Call),
    /// The client answered our request `id`.
    Reply {
        /// Our request's id.
        id: Value,
        /// Its result or error object.
        outcome: Result<Value, Value>,
    },
    /// Cancel the client's request `id`.
    Cancel {
        /// The request's id.
        id: Value,
    },
    /// Nothing to do.
    Nothing,
}

/// One session's state.
#[derive(Debug, Clone)]
pub struct SessionCore {
    phase: Phase,
    /// A stateless core (modern requests over HTTP): `initialize` is not a handshake here.
    stateless: bool,
    client: Client,
    subscriptions: BTreeSet<String>,
}

impl Default for SessionCore {
    fn default() -> Self {
        SessionCore::new()
    }
}

impl SessionCore {
    /// A fresh session.
    pub fn new() -> Self {
        SessionCore {
            phase: Phase::Fresh,
            stateless: false,
            client: Client::default(),
            subscriptions: BTreeSet::new(),
        }
    }

    /// A core for one stateless (modern) request: it never initializes.
    pub fn stateless() -> Self {
        SessionCore {
            stateless: true,
            ..SessionCore::new()
        }
    }

    /// Where it is.
    pub fn phase(&self) -> &Phase {
        &self.phase
    }

    /// The legacy client, once initialized.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The session's subscriptions, taken (it has none after).
    pub fn take_subscriptions(&mut self) -> BTreeSet<String> {
        std::mem::take(&mut self.subscriptions)
    }

    /// Whether the session subscribed to `uri`.
    pub fn is_subscribed(&self, uri: &str) -> bool {
        self.subscriptions.contains(uri)
    }

    /// The legacy version, once initialized.
    pub fn legacy_version(&self) -> Option<&'static str> {
        match self.phase {
            Phase::Initializing(version) | Phase::Ready(version) => Some(version),
            _ => None,
        }
    }

    /// Ends the session.
    pub fn close(&mut self) {
        self.phase = Phase::Closed;
    }

    /// One message (the module's state table).
    pub fn step(&mut self, message: Inbound, offer: &Offer) -> Step {
        match message {
            Inbound::Response { id, outcome } => Step::Reply { id, outcome },
            Inbound::Notification { method, params } => self.notification(&method, &params),
            Inbound::Request { id, method, params } => self.request(id, method, params, offer),
        }
    }

    fn notification(&mut self, method: &str, params: &Map<String, Value>) -> Step {
        match method {
            "notifications/initialized" => {
                if let Phase::Initializing(version) = self.phase {
                    self.phase = Phase::Ready(version);
                }
                Step::Nothing
            }
            "notifications/cancelled" => match params.get("requestId") {
                Some(id) if id.is_string() || id.is_i64() || id.is_u64() => {
                    Step::Cancel { id: id.clone() }
                }
                _ => Step::Nothing,
            },
            _ => Step::Nothing,
        }
    }

    fn request(
        &mut self,
        id: Value,
        method: String,
        params: Map<String, Value>,
        offer: &Offer,
    ) -> Step {
        let answer = |result: Result<Value, Error>| match result {
            Ok(result) => Step::Answer(wire::result(&id, result)),
            Err(err) => Step::Answer(wire::error(&id, err.to_error_object())),
        };
        let modern = params
            .get("_meta")
            .and_then(|meta| meta.get(era::META_VERSION))
            .is_some();
        // A closed session answers every request `-32600`, `ping` included (the table).
        if method == "ping"
            && self.phase != Phase::Closed
            && !(self.phase == Phase::Fresh && modern)
        {
            return answer(Ok(json!({})));
        }
        match (&self.phase, method.as_str()) {
            (Phase::Closed, _) => answer(Err(Error::Rpc {
                code: INVALID_REQUEST,
                message: "the session is closed".into(),
                data: None,
            })),
            (Phase::Fresh, "initialize") if !self.stateless => {
                answer(self.initialize(&params, offer))
            }
            (Phase::Fresh, _) => match era::envelope(&params) {
                Ok((version, envelope)) => Step::Dispatch(Call {
                    id,
                    method,
                    params,
                    era: Era::Modern(version),
                    client: envelope.into(),
                    param_headers: None,
                }),
                Err(err) => answer(Err(err)),
            },
            (_, "initialize") => answer(Err(Error::Rpc {
                code: INVALID_REQUEST,
                message: "already initialized".into(),
                data: None,
            })),
            (_, "logging/setLevel" | "resources/subscribe" | "resources/unsubscribe")
                if !offer.offers(&method) =>
            {
                answer(Err(Error::MethodNotFound(method.clone())))
            }
            (_, "logging/setLevel") => answer(self.set_level(&params)),
            (_, "resources/subscribe") => answer(self.subscribe(&params, true)),
            (_, "resources/unsubscribe") => answer(self.subscribe(&params, false)),
            (Phase::Initializing(version) | Phase::Ready(version), _) => Step::Dispatch(Call {
                id,
                method,
                params,
                era: Era::Legacy(version),
                client: self.client.clone(),
                param_headers: None,
            }),
        }
    }

    fn initialize(&mut self, params: &Map<String, Value>, offer: &Offer) -> Result<Value, Error> {
        let requested = params.get("protocolVersion").and_then(Value::as_str);
        let capabilities = match params.get("capabilities") {
            Some(Value::Object(capabilities)) => capabilities.clone(),
            None | Some(Value::Null) => Map::new(),
            Some(_) => return Err(Error::invalid_params("capabilities must be an object")),
        };
        let version = era::negotiate(requested);
        self.client = Client {
            capabilities,
            info: params.get("clientInfo").cloned(),
            log_level: None,
        };
        self.phase = Phase::Initializing(version);
        let mut result = json!({
            "protocolVersion": version,
            "capabilities": offer.capabilities,
            "serverInfo": offer.info,
        });
        if let Some(instructions) = &offer.instructions {
            result["instructions"] = json!(instructions);
        }
        Ok(result)
    }

    fn set_level(&mut self, params: &Map<String, Value>) -> Result<Value, Error> {
        let level = params
            .get("level")
            .cloned()
            .and_then(|level| serde_json::from_value(level).ok())
            .ok_or_else(|| Error::invalid_params("level is not a log level"))?;
        self.client.log_level = Some(level);
        Ok(json!({}))
    }

    fn subscribe(&mut self, params: &Map<String, Value>, on: bool) -> Result<Value, Error> {
        let uri = params
            .get("uri")
            .and_then(Value::as_str)
            .filter(|uri| !uri.is_empty() && uri.len() <= MAX_URI_BYTES)
            .ok_or_else(|| Error::invalid_params("uri is missing or too long"))?;
        if on {
            if self.subscriptions.len() >= MAX_SUBSCRIPTIONS && !self.subscriptions.contains(uri) {
                return Err(Error::Limit("subscriptions per session"));
            }
            self.subscriptions.insert(uri.to_owned());
        } else {
            self.subscriptions.remove(uri);
        }
        Ok(json!({}))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offer() -> Offer {
        Offer {
            info: json!({"name": "t", "version": "1"}),
            capabilities: json!({"tools": {}, "logging": {}, "resources": {"subscribe": true}}),
            instructions: None,
        }
    }

    fn request(id: i64, method: &str, params: Value) -> Inbound {
        Inbound::Request {
            id: json!(id),
            method: method.into(),
            params: params.as_object().cloned().unwrap_or_default(),
        }
    }

    fn code(step: &Step) -> Option<i64> {
        match step {
            Step::Answer(answer) => answer["error"]["code"].as_i64(),
            _ => None,
        }
    }

    #[test]
    fn the_state_table_holds() {
        let mut core = SessionCore::new();
        let modern = core.step(request(1, "tools/list", json!({})), &offer());
        assert_eq!(code(&modern), Some(crate::error::INVALID_PARAMS));
        let init = core.step(
            request(
                2,
                "initialize",
                json!({"protocolVersion": "2025-06-18", "capabilities": {"sampling": {}}}),
            ),
            &offer(),
        );
        let Step::Answer(init) = init else {
            panic!("{init:?}")
        };
        assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
        assert_eq!(core.phase(), &Phase::Initializing("2025-06-18"));
        let again = core.step(request(3, "initialize", json!({})), &offer());
        assert_eq!(code(&again), Some(INVALID_REQUEST));
        let early = core.step(request(4, "tools/list", json!({})), &offer());
        assert!(matches!(
            early,
            Step::Dispatch(Call {
                era: Era::Legacy("2025-06-18"),
                ..
            })
        ));
        core.step(
            Inbound::Notification {
                method: "notifications/initialized".into(),
                params: Map::new(),
            },
            &offer(),
        );
        assert_eq!(core.phase(), &Phase::Ready("2025-06-18"));
        let level = core.step(
            request(5, "logging/setLevel", json!({"level": "warning"})),
            &offer(),
        );
        assert!(matches!(level, Step::Answer(ref a) if a.get("result").is_some()));
        assert_eq!(core.client().log_level, Some(LogLevel::Warning));
        core.step(
            request(6, "resources/subscribe", json!({"uri": "file:///a"})),
            &offer(),
        );
        assert!(core.is_subscribed("file:///a"));
        core.step(
            request(7, "resources/unsubscribe", json!({"uri": "file:///a"})),
            &offer(),
        );
        assert!(!core.is_subscribed("file:///a"));
        let cancel = core.step(
            Inbound::Notification {
                method: "notifications/cancelled".into(),
                params: json!({"requestId": 4}).as_object().cloned().unwrap(),
            },
            &offer(),
        );
        assert_eq!(cancel, Step::Cancel { id: json!(4) });
        core.close();
        assert_eq!(
            code(&core.step(request(8, "tools/list", json!({})), &offer())),
            Some(INVALID_REQUEST)
        );
    }

    #[test]
    fn methods_the_server_does_not_offer_are_not_found() {
        let mut core = SessionCore::new();
        let tools_only = Offer {
            capabilities: json!({"tools": {}}),
            ..offer()
        };
        core.step(request(1, "initialize", json!({})), &tools_only);
        for method in [
            "logging/setLevel",
            "resources/subscribe",
            "resources/unsubscribe",
        ] {
            let step = core.step(
                request(2, method, json!({"level": "info", "uri": "u:a"})),
                &tools_only,
            );
            assert_eq!(
                code(&step),
                Some(crate::error::METHOD_NOT_FOUND),
                "{method}"
            );
        }
    }

    #[test]
    fn subscriptions_are_bounded() {
        let mut core = SessionCore::new();
        core.step(request(1, "initialize", json!({})), &offer());
        for i in 0..MAX_SUBSCRIPTIONS {
            core.step(
                request(2, "resources/subscribe", json!({"uri": format!("u:{i}")})),
                &offer(),
            );
        }
        let over = core.step(
            request(3, "resources/subscribe", json!({"uri": "u:over"})),
            &offer(),
        );
        assert!(code(&over).is_some());
        assert!(!core.is_subscribed("u:over"));
    }
}
