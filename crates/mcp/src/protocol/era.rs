//! The two eras of MCP and how a connection picks one.
//!
//! The legacy era (2024-11-05 … 2025-11-25) opens with the `initialize` handshake and keeps a
//! session; the modern era (2026-07-28) has neither: every request carries the protocol
//! version and the client's capabilities in its `_meta` (the [`Envelope`]), the server says
//! what it is in answer to `server/discover`, and servers ask the client for input inside a
//! result (multi-round-trip requests, see `protocol::mrtr`) instead of sending requests.
//!
//! [`EraChoice::Auto`] probes with one `server/discover` carrying the modern envelope and
//! reads the answer ([`Probe::read`]):
//!
//! | answer to the probe | verdict |
//! |---|---|
//! | a result naming a modern version we speak | modern |
//! | a result naming none | legacy: `initialize` |
//! | `-32022` naming a modern version we speak (once) | probe again at that version |
//! | `-32022` naming only handshake versions | legacy |
//! | `-32022` naming neither | incompatible: the connection fails |
//! | any other JSON-RPC error (`-32601`, a legacy server's "not initialized") | legacy |
//! | an HTTP error status whose body is not a modern error, or no answer in the probe's time | legacy |
//! | the connection closed, a network failure, an authorization failure | the error stands |
//!
//! The verdict holds for the connection's life: a renewed HTTP session or a reconnect of the
//! same client does not probe again.

use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sidewire_jsonrpc::lock;

use crate::protocol::types::{Implementation, SUPPORTED_PROTOCOL_VERSIONS, ServerCapabilities};

/// The modern protocol versions this client speaks, newest first.
pub const MODERN_PROTOCOL_VERSIONS: &[&str] = &["2026-07-28"];

/// The `_meta` key of the protocol version (modern era).
pub(crate) const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// The `_meta` key of the client's capabilities (modern era).
pub(crate) const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// The `_meta` key of the client's name and version (modern era).
pub(crate) const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// The `_meta` key of the lowest log level the client wants (modern era).
pub(crate) const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";

/// `-32020`: the HTTP headers and the body disagree (modern era).
pub const HEADER_MISMATCH: i64 = -32020;
/// `-32021`: the request needs a client capability the client did not declare (modern era).
pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;
/// `-32022`: the server does not speak the requested protocol version (modern era); its
/// `data` names the versions it does.
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

/// The protocol era a connection speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Era {
    /// 2024-11-05 … 2025-11-25: the `initialize` handshake, sessions, server→client requests.
    Legacy,
    /// 2026-07-28: stateless, per-request `_meta`, `server/discover`, multi-round-trip requests.
    Modern,
}

impl Era {
    /// `legacy` or `modern`.
    pub fn as_str(self) -> &'static str {
        match self {
            Era::Legacy => "legacy",
            Era::Modern => "modern",
        }
    }
}

impl std::fmt::Display for Era {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which era a connection may speak (see the module docs of the probe).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum EraChoice {
    /// Probe with `server/discover`; fall back to `initialize` on a legacy answer (default).
    #[default]
    Auto,
    /// The modern era only: a server that does not speak it fails the connection.
    Modern,
    /// The legacy era only: `initialize`, never a probe.
    Legacy,
}

impl EraChoice {
    /// `auto`, `modern` or `legacy`.
    pub fn as_str(self) -> &'static str {
        match self {
            EraChoice::Auto => "auto",
            EraChoice::Modern => "modern",
            EraChoice::Legacy => "legacy",
        }
    }
}

impl std::fmt::Display for EraChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for EraChoice {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        match text.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(EraChoice::Auto),
            "modern" | "2026-07-28" => Ok(EraChoice::Modern),
            "legacy" => Ok(EraChoice::Legacy),
            other => Err(format!(
                "unknown protocol era {other:?} (expected auto, modern or legacy)"
            )),
        }
    }
}

/// The `io.modelcontextprotocol/*` members every modern request carries in its `_meta`.
///
/// The version changes at most once (a `-32022` renegotiation), the log level when the caller
/// sets one; both are read per request.
#[derive(Debug)]
pub(crate) struct Envelope {
    capabilities: Value,
    /// `Null` only if the client info did not serialize; then it is not sent.
    client_info: Value,
    state: Mutex<State>,
}

/// What of the envelope changes.
#[derive(Debug)]
struct State {
    version: &'static str,
    log_level: Option<Value>,
}

impl Envelope {
    pub(crate) fn new(capabilities: Value, client_info: &Implementation) -> Self {
        Envelope {
            capabilities,
            client_info: serde_json::to_value(client_info).unwrap_or(Value::Null),
            state: Mutex::new(State {
                version: MODERN_PROTOCOL_VERSIONS[0],
                log_level: None,
            }),
        }
    }

    pub(crate) fn set_version(&self, version: &'static str) {
        lock(&self.state).version = version;
    }

    pub(crate) fn set_log_level(&self, level: Value) {
        lock(&self.state).log_level = Some(level);
    }

    /// `params` with the envelope merged into its `_meta` (created when absent; members the
    /// caller put there, such as a progress token, are kept). Params that are not an object
    /// (none at all) become an object holding only `_meta`.
    pub(crate) fn wrap(&self, params: Value) -> Value {
        serde_json::to_value(self.leg(&params, None, None)).expect("a map of values serializes")
    }

    /// One leg of a modern request: `params` (as `serde_json::to_value` makes them) with a
    /// multi-round-trip leg's `inputResponses` and `requestState` set, when `params` is an
    /// object, and the envelope merged into its `_meta` as [`wrap`](Envelope::wrap) does.
    pub(crate) fn leg<'a>(
        &'a self,
        params: &'a Value,
        responses: Option<&'a Map<String, Value>>,
        state: Option<&'a str>,
    ) -> Leg<'a> {
        Leg {
            params,
            responses,
            state,
            capabilities: None,
            envelope: self,
        }
    }
}

impl<'a> Leg<'a> {
    /// The leg declaring `capabilities` as the client's, in place of the envelope's.
    pub(crate) fn declaring(mut self, capabilities: Option<&'a Value>) -> Self {
        self.capabilities = capabilities;
        self
    }
}

/// A request's params with the envelope merged in, serialized from borrowed parts (see
/// [`Envelope::leg`]): nothing is cloned per request.
pub(crate) struct Leg<'a> {
    params: &'a Value,
    responses: Option<&'a Map<String, Value>>,
    state: Option<&'a str>,
    /// Declared in place of the envelope's capabilities.
    capabilities: Option<&'a Value>,
    envelope: &'a Envelope,
}

impl Serialize for Leg<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap as _;
        let mut map = serializer.serialize_map(None)?;
        let members = self.params.as_object();
        if let Some(members) = members {
            for (name, value) in members {
                let replaced = match name.as_str() {
                    "_meta" => true,
                    "inputResponses" => self.responses.is_some(),
                    "requestState" => self.state.is_some(),
                    _ => false,
                };
                if !replaced {
                    map.serialize_entry(name, value)?;
                }
            }
            if let Some(responses) = self.responses {
                map.serialize_entry("inputResponses", responses)?;
            }
            if let Some(state) = self.state {
                map.serialize_entry("requestState", state)?;
            }
        }
        let caller = members
            .and_then(|members| members.get("_meta"))
            .and_then(Value::as_object);
        let meta = Meta {
            caller,
            capabilities: self.capabilities,
            envelope: self.envelope,
        };
        map.serialize_entry("_meta", &meta)?;
        map.end()
    }
}

/// The `_meta` of a [`Leg`]: the caller's members, then the envelope's, which win.
struct Meta<'a> {
    caller: Option<&'a Map<String, Value>>,
    capabilities: Option<&'a Value>,
    envelope: &'a Envelope,
}

impl Serialize for Meta<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap as _;
        let envelope = self.envelope;
        let state = lock(&envelope.state);
        let ours = |name: &str| match name {
            META_VERSION | META_CAPABILITIES => true,
            META_CLIENT_INFO => !envelope.client_info.is_null(),
            META_LOG_LEVEL => state.log_level.is_some(),
            _ => false,
        };
        let mut map = serializer.serialize_map(None)?;
        for (name, value) in self.caller.into_iter().flatten() {
            if !ours(name) {
                map.serialize_entry(name, value)?;
            }
        }
        map.serialize_entry(META_VERSION, state.version)?;
        map.serialize_entry(
            META_CAPABILITIES,
            self.capabilities.unwrap_or(&envelope.capabilities),
        )?;
        if !envelope.client_info.is_null() {
            map.serialize_entry(META_CLIENT_INFO, &envelope.client_info)?;
        }
        if let Some(level) = &state.log_level {
            map.serialize_entry(META_LOG_LEVEL, level)?;
        }
        map.end()
    }
}

/// The `server/discover` result. The server's identity is `serverInfo`, or (as some servers
/// send it) `_meta["io.modelcontextprotocol/serverInfo"]`: see [`DiscoverResult::server_info`].
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DiscoverResult {
    #[serde(default)]
    pub(crate) supported_versions: Vec<String>,
    #[serde(default)]
    pub(crate) capabilities: ServerCapabilities,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    server_info: Option<Implementation>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) instructions: Option<String>,
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    meta: Option<DiscoverMeta>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
struct DiscoverMeta {
    #[serde(
        default,
        rename = "io.modelcontextprotocol/serverInfo",
        skip_serializing_if = "Option::is_none"
    )]
    server_info: Option<Implementation>,
}

impl DiscoverResult {
    /// Who the server says it is.
    pub(crate) fn server_info(&self) -> Implementation {
        self.server_info
            .clone()
            .or_else(|| self.meta.as_ref()?.server_info.clone())
            .unwrap_or_default()
    }
}

/// The `data` of a `-32022` error.
#[derive(Debug, Default, Deserialize)]
struct UnsupportedData {
    #[serde(default)]
    supported: Vec<String>,
}

/// The versions a `-32022` error's `data` names, when it names any.
pub(crate) fn supported_versions(data: Option<&Value>) -> Vec<String> {
    data.and_then(|data| serde_json::from_value::<UnsupportedData>(data.clone()).ok())
        .map(|data| data.supported)
        .unwrap_or_default()
}

/// The newest modern version we speak among `offered`.
pub(crate) fn mutual_modern(offered: &[String]) -> Option<&'static str> {
    MODERN_PROTOCOL_VERSIONS
        .iter()
        .copied()
        .find(|ours| offered.iter().any(|theirs| theirs == ours))
}

/// Whether `offered` names a handshake (legacy) version we speak.
pub(crate) fn names_legacy(offered: &[String]) -> bool {
    offered
        .iter()
        .any(|theirs| SUPPORTED_PROTOCOL_VERSIONS.contains(&theirs.as_str()))
}

/// What to do after the probe's answer.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Probe {
    /// Speak the modern era at this version.
    Modern(&'static str),
    /// Probe once more, at this version.
    Again(&'static str),
    /// Fall back to `initialize`.
    Legacy,
    /// The server speaks only versions we do not: fail with what it named.
    Incompatible(Vec<String>),
    /// The server answered `-32022` again though its answer lists `version`, which we speak
    /// and sent: it refuses a version it says it supports. `legacy`: the answer also names a
    /// handshake version we speak (so `auto` may still initialize).
    Refused { version: &'static str, legacy: bool },
}

impl Probe {
    /// The verdict on a successful probe.
    pub(crate) fn of_result(result: &DiscoverResult) -> Probe {
        match mutual_modern(&result.supported_versions) {
            Some(version) => Probe::Modern(version),
            None => Probe::Legacy,
        }
    }

    /// The verdict on a `-32022`; `again` says whether one more probe is allowed (it is not
    /// after the one renegotiation, which went at the version the first answer named).
    pub(crate) fn of_unsupported(data: Option<&Value>, again: bool) -> Probe {
        let offered = supported_versions(data);
        match mutual_modern(&offered) {
            Some(version) if again => Probe::Again(version),
            Some(version) => Probe::Refused {
                version,
                legacy: names_legacy(&offered),
            },
            None if names_legacy(&offered) || offered.is_empty() => Probe::Legacy,
            None => Probe::Incompatible(offered),
        }
    }
}

/// How a modern result says what it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ResultType {
    /// The request's own result (also when `resultType` is absent, as from an older server).
    Complete,
    /// The server needs input first (`InputRequiredResult`).
    InputRequired,
}

/// The `resultType` of a raw result; `Err` names one we do not know.
///
/// Read by serde, which reads the whole result for this one member (it borrows the value when
/// it has no escape, and refuses a `resultType` named twice). A hand-written scan of the
/// top-level members in front of it saved up to 5 % wall clock on the real-bytes benches
/// (issue 42) and went: one reading per message.
///
/// `raw` is the text of one JSON value (a `RawResult`'s, which the connection checked).
pub(crate) fn result_type(raw: &str) -> Result<ResultType, String> {
    #[derive(Deserialize)]
    struct Peek<'a> {
        #[serde(rename = "resultType", borrow, default)]
        result_type: Option<std::borrow::Cow<'a, str>>,
    }
    let peek: Peek<'_> = serde_json::from_str(raw).map_err(|err| err.to_string())?;
    match peek.result_type.as_deref() {
        None | Some("complete") => Ok(ResultType::Complete),
        Some("input_required") => Ok(ResultType::InputRequired),
        // Peer text of any size: quoted cut.
        Some(other) => Err(format!(
            "an unknown resultType \"{}\"",
            crate::text::peer(other)
        )),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_envelope_keeps_what_the_caller_put_in_meta() {
        let envelope = Envelope::new(json!({"sampling": {}}), &Implementation::new("c", "1"));
        let wrapped = envelope.wrap(json!({"name": "t", "_meta": {"progressToken": "p"}}));
        assert_eq!(wrapped["name"], "t");
        assert_eq!(wrapped["_meta"]["progressToken"], "p");
        assert_eq!(wrapped["_meta"][META_VERSION], "2026-07-28");
        assert_eq!(wrapped["_meta"][META_CAPABILITIES], json!({"sampling": {}}));
        assert_eq!(wrapped["_meta"][META_CLIENT_INFO]["name"], "c");
        assert!(wrapped["_meta"].get(META_LOG_LEVEL).is_none());
        envelope.set_log_level(json!("debug"));
        assert_eq!(envelope.wrap(Value::Null)["_meta"][META_LOG_LEVEL], "debug");
    }

    /// A leg carries a multi-round-trip round's answers, in place of any the caller set, and
    /// the envelope as it is now.
    #[test]
    fn a_leg_carries_the_answers_and_the_envelope_as_it_is_now() {
        let envelope = Envelope::new(json!({}), &Implementation::new("c", "1"));
        envelope.set_version("2099-01-01");
        envelope.set_log_level(json!("warning"));
        let responses: Map<String, Value> =
            serde_json::from_value(json!({"k": {"action": "accept"}})).unwrap();
        let params = json!({"name": "t", "requestState": "s0", "_meta": {"progressToken": 1}});
        let leg =
            serde_json::to_value(envelope.leg(&params, Some(&responses), Some("s1"))).unwrap();
        assert_eq!(leg["name"], "t");
        assert_eq!(leg["inputResponses"], Value::Object(responses));
        assert_eq!(leg["requestState"], "s1");
        assert_eq!(leg["_meta"]["progressToken"], 1);
        assert_eq!(leg["_meta"][META_VERSION], "2099-01-01");
        assert_eq!(leg["_meta"][META_LOG_LEVEL], "warning");
        let leg = serde_json::to_value(envelope.leg(&json!([1, 2]), None, Some("s1"))).unwrap();
        assert_eq!(leg.as_object().unwrap().len(), 1, "{leg}");
    }

    #[test]
    fn the_probe_reads_each_answer() {
        let result = |versions: &[&str]| DiscoverResult {
            supported_versions: versions.iter().map(|v| (*v).to_owned()).collect(),
            capabilities: ServerCapabilities::default(),
            server_info: None,
            instructions: None,
            meta: None,
        };
        assert_eq!(
            Probe::of_result(&result(&["2025-11-25", "2026-07-28"])),
            Probe::Modern("2026-07-28")
        );
        assert_eq!(Probe::of_result(&result(&["2025-11-25"])), Probe::Legacy);
        let data = json!({"supported": ["2026-07-28"], "requested": "x"});
        assert_eq!(
            Probe::of_unsupported(Some(&data), true),
            Probe::Again("2026-07-28")
        );
        // Refused again at a version it lists: said so, not "none of which".
        assert_eq!(
            Probe::of_unsupported(Some(&data), false),
            Probe::Refused {
                version: "2026-07-28",
                legacy: false
            }
        );
        let both = json!({"supported": ["2026-07-28", "2025-11-25"]});
        assert_eq!(
            Probe::of_unsupported(Some(&both), false),
            Probe::Refused {
                version: "2026-07-28",
                legacy: true
            }
        );
        let legacy = json!({"supported": ["2025-06-18"]});
        assert_eq!(Probe::of_unsupported(Some(&legacy), true), Probe::Legacy);
        let future = json!({"supported": ["2030-01-01"]});
        assert_eq!(
            Probe::of_unsupported(Some(&future), true),
            Probe::Incompatible(vec!["2030-01-01".to_owned()])
        );
        assert_eq!(Probe::of_unsupported(None, true), Probe::Legacy);
    }

    #[test]
    fn result_types() {
        assert_eq!(result_type("{}"), Ok(ResultType::Complete));
        assert_eq!(
            result_type(r#"{"resultType":"complete","content":[]}"#),
            Ok(ResultType::Complete)
        );
        assert_eq!(
            result_type(r#"{"resultType":"input_required"}"#),
            Ok(ResultType::InputRequired)
        );
        assert!(result_type(r#"{"resultType":"task"}"#).is_err());
    }

    /// What serde's reading decides beyond the plain cases: escapes, duplicates, non-strings,
    /// nested members of the same name.
    #[test]
    fn result_types_at_the_edges() {
        let complete = [
            " { } ",
            "{ \"a\" : { \"resultType\" : \"task\" } ,\n\"resultType\"\t:\"complete\" }",
            r#"{"a":"}\"resultType\":1","b":[{"resultType":2}]}"#,
            r#"{"resultType":"compl\u0065te"}"#,
            r#"{"resultType":null}"#,
        ];
        for text in complete {
            assert_eq!(result_type(text), Ok(ResultType::Complete), "{text}");
        }
        assert_eq!(
            result_type(r#"{"result\u0054ype":"input_required"}"#),
            Ok(ResultType::InputRequired)
        );
        let refused = [
            r#"{"resultType":1}"#,
            r#"{"resultType":"complete","resultType":"complete"}"#,
            r#"{"resultType":"é"}"#,
            r#""resultType""#,
        ];
        for text in refused {
            assert!(result_type(text).is_err(), "{text}");
        }
    }
}
