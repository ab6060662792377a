//! The one path every request of a connection takes, in either era.
//!
//! Legacy: the params go out as they are. Modern: the [`Envelope`](era::Envelope) is merged
//! into the params' `_meta`, and the result is read by its `resultType`:
//!
//! - `complete` (or absent) is the result;
//! - `input_required` (multi-round-trip requests) carries `inputRequests` (sampling,
//!   elicitation, roots: the same handler that serves a legacy server's requests answers them,
//!   all of one round at once) and an opaque `requestState`; the request goes again, with a new
//!   id, carrying `inputResponses` and the `requestState` byte for byte, at most
//!   [`MAX_ROUNDS`] rounds of at most [`MAX_INPUT_REQUESTS`] requests each. A round with only a
//!   `requestState` waits 50 ms before going again, doubling to 250 ms. A refused input fails
//!   the request ([`Error::is_input_refused`]);
//! - anything else fails the request as an invalid response.
//!
//! A `-32022` (the server does not speak the version we sent) that names a modern version we
//! speak sends the request again at that version, once per request; the version then holds
//! for the connection. A request whose answer broke off before it arrived (a network failure,
//! an HTTP stream that ended: there is no resumption in the modern era) is sent again with a
//! new id once, when it is idempotent: a listing, `server/discover`, `resources/read`,
//! `prompts/get`, `completion/complete`.

use std::fmt::Display;
use std::time::Duration;

use futures_util::future::join_all;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sidewire_jsonrpc::{CallOptions, ErrorObject, Peer, RawResult};

use crate::Error;
use crate::error::{Kind, no_mutual_version};
use crate::protocol::era::{self, Era, ResultType};
use crate::protocol::methods::ListRootsResult;
use crate::protocol::options::PassedInput;
use crate::protocol::session::Shared;
use crate::protocol::types::{CreateMessageParams, ElicitParams};

/// The most `InputRequiredResult` rounds one request goes through.
pub(crate) const MAX_ROUNDS: usize = 10;
/// The most input requests one round may carry.
pub(crate) const MAX_INPUT_REQUESTS: usize = 16;
/// The first wait before going again after a round that carried only a `requestState`.
const STATE_ONLY_WAIT: Duration = Duration::from_millis(50);
/// The longest such wait.
const STATE_ONLY_MAX_WAIT: Duration = Duration::from_millis(250);

/// An `InputRequiredResult`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct InputRequired {
    #[serde(default)]
    input_requests: Option<Map<String, Value>>,
    #[serde(default)]
    request_state: Option<String>,
}

/// What the next leg of a multi-round-trip request carries.
struct Answers {
    /// `inputResponses`, by the server's keys.
    responses: Option<Map<String, Value>>,
    /// `requestState`, as the server sent it.
    state: Option<String>,
}

/// One embedded request.
#[derive(Debug, Deserialize)]
struct InputRequest {
    method: String,
    #[serde(default)]
    params: Value,
}

/// Whether sending `method` twice does no harm.
fn idempotent(method: &str) -> bool {
    matches!(
        method,
        "server/discover"
            | "tools/list"
            | "prompts/list"
            | "resources/list"
            | "resources/templates/list"
            | "resources/read"
            | "prompts/get"
            | "completion/complete"
    )
}

/// Sends `method` with `params` in the connection's era and returns its result; `what` names
/// the request in errors.
///
/// # Cancel safety
///
/// Dropping the future abandons the request in flight (the server is told, as for any
/// request) and any input the handler is gathering.
pub(crate) async fn call<P: Serialize + ?Sized>(
    shared: &Shared,
    peer: &Peer,
    what: &(impl Display + Sync + ?Sized),
    method: &str,
    params: &P,
    options: CallOptions,
) -> Result<RawResult, Error> {
    call_passing(shared, peer, what, method, params, options, None).await
}

/// [`call`], whose input requests, with `passed`, go to the caller (see
/// `ToolCallOptions::pass_input_through`).
///
/// # Cancel safety
///
/// As [`call`].
pub(crate) async fn call_passing<P: Serialize + ?Sized>(
    shared: &Shared,
    peer: &Peer,
    what: &(impl Display + Sync + ?Sized),
    method: &str,
    params: &P,
    options: CallOptions,
    passed: Option<&PassedInput>,
) -> Result<RawResult, Error> {
    match shared.era() {
        Some(Era::Modern) => call_modern(shared, peer, what, method, params, options, passed).await,
        _ => peer
            .call(method, Some(params), options)
            .await
            .map_err(|err| Error::rpc(what, err)),
    }
}

/// Sends a modern request (see the module docs).
async fn call_modern<P: Serialize + ?Sized>(
    shared: &Shared,
    peer: &Peer,
    what: &(impl Display + Sync + ?Sized),
    method: &str,
    params: &P,
    options: CallOptions,
    passed: Option<&PassedInput>,
) -> Result<RawResult, Error> {
    let mut renegotiated = false;
    let mut reissued = false;
    let mut rounds = 0;
    let mut state_only_wait = STATE_ONLY_WAIT;
    let mut answers: Option<Answers> = passed.map(|passed| Answers {
        responses: passed.responses.clone(),
        state: passed.state.clone(),
    });
    let envelope = &shared.envelope;
    // The caller's params as a `Value` once; each leg is written from it and the envelope.
    let params = serde_json::to_value(params).map_err(|error| {
        let method = method.to_owned();
        Error::rpc(what, sidewire_jsonrpc::Error::Serialize { method, error })
    })?;
    loop {
        let (responses, state) = match &answers {
            Some(Answers { responses, state }) => (responses.as_ref(), state.as_deref()),
            None => (None, None),
        };
        let leg = (envelope.leg(&params, responses, state))
            .declaring(passed.map(|passed| &passed.capabilities));
        let raw = match peer.call(method, Some(&leg), options.clone()).await {
            Ok(raw) => raw,
            Err(sidewire_jsonrpc::Error::Remote { error, .. })
                if error.code == era::UNSUPPORTED_PROTOCOL_VERSION && !renegotiated =>
            {
                let offered = era::supported_versions(error.data.as_ref());
                let Some(version) = era::mutual_modern(&offered) else {
                    return Err(no_mutual_version(offered));
                };
                tracing::debug!(server = %shared.name, method, version, "the server asked for another protocol version; sending again");
                envelope.set_version(version);
                renegotiated = true;
                continue;
            }
            Err(err) => {
                let err = Error::rpc(what, err);
                let broken = err.is_http() && err.http_status().is_none();
                if broken && !reissued && idempotent(method) {
                    tracing::debug!(server = %shared.name, method, %err, "the answer broke off; sending the request again");
                    reissued = true;
                    continue;
                }
                return Err(err);
            }
        };
        match era::result_type(raw.get()) {
            Ok(ResultType::Complete) => return Ok(raw),
            Ok(ResultType::InputRequired) => {}
            Err(why) => {
                return Err(Error::new(Kind::InvalidResponse(format!(
                    "the result of {what} is not one this client knows: {why}"
                ))));
            }
        }
        rounds += 1;
        if rounds > MAX_ROUNDS {
            return Err(Error::new(Kind::InvalidResponse(format!(
                "{what}: the server still asked for input after {MAX_ROUNDS} rounds"
            ))));
        }
        let input: InputRequired = raw.decode().map_err(|err| {
            Error::new(Kind::InvalidResponse(format!(
                "{what}: the InputRequiredResult does not decode: {err}"
            )))
        })?;
        drop(raw);
        if passed.is_some() {
            return Err(Error::new(Kind::InputRequired {
                method: method.to_owned(),
                requests: input.input_requests.unwrap_or_default(),
                state: input.request_state,
            }));
        }
        let responses = match input.input_requests {
            Some(requests) if !requests.is_empty() => {
                state_only_wait = STATE_ONLY_WAIT;
                Some(answer_all(shared, what, method, requests).await?)
            }
            _ if input.request_state.is_none() => {
                return Err(Error::new(Kind::InvalidResponse(format!(
                    "{what}: an InputRequiredResult with neither inputRequests nor requestState"
                ))));
            }
            _ => {
                tokio::time::sleep(state_only_wait).await;
                state_only_wait = (state_only_wait * 2).min(STATE_ONLY_MAX_WAIT);
                None
            }
        };
        answers = Some(Answers {
            responses,
            state: input.request_state,
        });
    }
}

/// Answers every input request of one round at once; the first refusal fails them all.
async fn answer_all(
    shared: &Shared,
    what: &(impl Display + Sync + ?Sized),
    method: &str,
    requests: Map<String, Value>,
) -> Result<Map<String, Value>, Error> {
    if requests.len() > MAX_INPUT_REQUESTS {
        return Err(Error::new(Kind::InvalidResponse(format!(
            "{what}: the server asked for {} inputs at once (the limit is {MAX_INPUT_REQUESTS})",
            requests.len()
        ))));
    }
    let answers = join_all(requests.into_iter().map(|(key, request)| async move {
        let answer = answer(shared, request).await;
        (key, answer)
    }))
    .await;
    let mut responses = Map::new();
    for (key, answer) in answers {
        match answer {
            Ok(value) => {
                responses.insert(key, value);
            }
            Err((request, error)) => {
                return Err(Error::new(Kind::InputRefused {
                    method: method.to_owned(),
                    request,
                    error,
                }));
            }
        }
    }
    Ok(responses)
}

/// One input request answered by the handler (or the spec's roots); the error names the
/// request.
async fn answer(shared: &Shared, request: Value) -> Result<Value, (String, ErrorObject)> {
    let request: InputRequest = serde_json::from_value(request).map_err(|err| {
        (
            "an input request".to_owned(),
            ErrorObject::invalid_params(format!("the input request does not decode: {err}")),
        )
    })?;
    let method = request.method;
    let refused = |error: ErrorObject| (method.clone(), error);
    let not_offered = |what: &str| {
        ErrorObject::new(
            ErrorObject::METHOD_NOT_FOUND,
            format!("this client does not offer {what}"),
        )
    };
    let result = match method.as_str() {
        "roots/list" => match shared.answer_roots().await {
            Ok(roots) => serde_json::to_value(ListRootsResult { roots })
                .map_err(|err| ErrorObject::internal(err.to_string())),
            Err(error) => Err(error),
        },
        "elicitation/create"
            if shared.handler.supports_elicitation()
                || shared.handler.supports_url_elicitation() =>
        {
            let params: ElicitParams = serde_json::from_value(request.params)
                .map_err(|err| refused(ErrorObject::invalid_params(err.to_string())))?;
            match crate::protocol::elicit_url::elicit(
                shared.handler.clone(),
                shared.name.clone(),
                params,
            )
            .await
            {
                Ok(result) => serde_json::to_value(result)
                    .map_err(|err| ErrorObject::internal(err.to_string())),
                Err(error) => Err(error),
            }
        }
        "sampling/createMessage" if shared.handler.supports_sampling() => {
            let params: CreateMessageParams = serde_json::from_value(request.params)
                .map_err(|err| refused(ErrorObject::invalid_params(err.to_string())))?;
            if let Some(error) =
                crate::protocol::session::refuse_unoffered_tools(shared.handler.as_ref(), &params)
            {
                return Err(refused(error));
            }
            match shared
                .handler
                .create_message(shared.name.clone(), params)
                .await
            {
                Ok(result) => serde_json::to_value(result)
                    .map_err(|err| ErrorObject::internal(err.to_string())),
                Err(error) => Err(error),
            }
        }
        "elicitation/create" => Err(not_offered("elicitation")),
        "sampling/createMessage" => Err(not_offered("sampling")),
        other => Err(not_offered(&format!("input of kind {other:?}"))),
    };
    result.map_err(refused)
}
