//! The parts of [`Client`] for MCP 2025-11-25's client features, kept apart from the core
//! calls: the schema checks around `tools/call` (`protocol::structured`), the caller's
//! `_meta` and progress on any request, the roots a host may change
//! (`notifications/roots/list_changed`), and offering the URL elicitations of a `-32042`
//! error to the handler.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;
use sidewire_jsonrpc::{CallOptions, Request, lock};

use crate::error::Kind;
use crate::protocol::client::Client;
use crate::protocol::elicit_url::UrlElicitation;
use crate::protocol::era::Era;
use crate::protocol::methods::{
    Complete, CompleteArgument, CompleteContext, CompleteParams, GetPrompt, GetPromptParams,
    ReadResource, RootsListChanged, UriParams,
};
use crate::protocol::modern;
use crate::protocol::options::{ToolCallOptions, is_reserved_meta_key};
use crate::protocol::session::{ProgressSlot, Shared};
use crate::protocol::types::{
    CallToolResult, Completion, CompletionRef, ElicitAction, GetPromptResult, ReadResourceResult,
    Tool,
};
use crate::{Error, Root};

/// The listed tool a call is checked against: the listing and the tool's place in it (no
/// copy of the tool).
pub(crate) struct Listed(Arc<[Tool]>, usize);

impl Listed {
    fn tool(&self) -> &Tool {
        &self.0[self.1]
    }
}

/// Refuses a caller `_meta` that names a reserved key.
fn check_meta(options: &ToolCallOptions) -> Result<(), Error> {
    match options.meta.keys().find(|key| is_reserved_meta_key(key)) {
        Some(key) => Err(Error::new(Kind::ReservedMeta(
            crate::protocol::handler::cut(key, 256).to_owned(),
        ))),
        None => Ok(()),
    }
}

/// Removes a request's progress slot when it ends, however it ends.
struct Slot<'a> {
    shared: &'a Shared,
    token: Option<u64>,
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        if let Some(token) = self.token {
            lock(&self.shared.progress).remove(&token);
        }
    }
}

impl Client {
    /// What `call_tool` checks before sending: the caller's `_meta`, and (when asked) the
    /// arguments against the input schema. Returns the listed tool when its result is to be
    /// checked against an output schema.
    pub(crate) fn before_call(
        &self,
        name: &str,
        arguments: &Value,
        options: &ToolCallOptions,
    ) -> Result<Option<Listed>, Error> {
        let shared = self.shared();
        check_meta(options).map_err(|err| err.with_server(&shared.name))?;
        let Some((tools, index)) = shared.find_tool(name) else {
            return Ok(None);
        };
        let listed = Listed(tools, index);
        if options.validate_arguments {
            shared
                .schemas
                .check_arguments(listed.tool(), arguments)
                .map_err(|err| err.with_server(&shared.name))?;
        }
        Ok(listed.tool().output_schema.is_some().then_some(listed))
    }

    /// Checks a result against the listed tool's output schema.
    pub(crate) fn after_call(
        &self,
        listed: Option<&Listed>,
        result: CallToolResult,
    ) -> Result<CallToolResult, Error> {
        match listed {
            Some(listed) => self
                .shared()
                .schemas
                .check_result(listed.tool(), result)
                .map_err(|err| err.with_server(&self.shared().name)),
            None => Ok(result),
        }
    }

    /// Sends request `R` with the options' timeout, `_meta` members and (with a callback) a
    /// progress token.
    async fn request_with_options<R: Request>(
        &self,
        params: &R::Params,
        options: &ToolCallOptions,
    ) -> Result<R::Result, Error>
    where
        R::Params: Serialize,
    {
        let shared = self.shared();
        check_meta(options).map_err(|err| err.with_server(&shared.name))?;
        let timeout = options.timeout.unwrap_or(shared.spec.call_timeout);
        let mut slot = Slot {
            shared,
            token: None,
        };
        let mut meta = options.meta.clone();
        if let Some(callback) = &options.progress {
            let token = shared.next_token();
            lock(&shared.progress).insert(
                token,
                ProgressSlot {
                    callback: Some(Arc::clone(callback)),
                    activity: None,
                },
            );
            meta.insert("progressToken".to_owned(), Value::from(token));
            slot.token = Some(token);
        }
        let mut value = serde_json::to_value(params).map_err(|err| {
            Error::new(Kind::InvalidResponse(format!(
                "{}: the params do not serialize: {err}",
                R::METHOD
            )))
        })?;
        if !meta.is_empty()
            && let Value::Object(map) = &mut value
        {
            map.insert("_meta".to_owned(), Value::Object(meta));
        }
        let raw = modern::call_passing(
            shared,
            self.peer(),
            R::METHOD,
            R::METHOD,
            &value,
            CallOptions::timeout(timeout),
            options.input.as_ref(),
        )
        .await;
        drop(slot);
        match raw {
            Ok(raw) => raw.decode::<R::Result>().map_err(|err| {
                Error::new(Kind::InvalidResponse(format!(
                    "the result of {} does not decode: {err}",
                    R::METHOD
                )))
                .with_server(&shared.name)
            }),
            Err(err) => Err(self.explain(err).await),
        }
    }

    /// [`get_prompt`](Client::get_prompt) with options: a timeout, `_meta` members, a
    /// progress callback (which adds a progress token), and
    /// [`ToolCallOptions::pass_input_through`].
    ///
    /// # Errors
    ///
    /// As for [`get_prompt`](Client::get_prompt), [`Error::is_reserved_meta`], and
    /// [`Error::is_input_required`] when the server asks for input and `options` pass it
    /// through.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future cancels the request (the server is told).
    pub async fn get_prompt_with(
        &self,
        name: &str,
        arguments: BTreeMap<String, String>,
        options: ToolCallOptions,
    ) -> Result<GetPromptResult, Error> {
        let params = GetPromptParams {
            name: name.to_owned(),
            arguments: (!arguments.is_empty()).then_some(arguments),
        };
        self.request_with_options::<GetPrompt>(&params, &options)
            .await
    }

    /// [`read_resource`](Client::read_resource) with options (see
    /// [`get_prompt_with`](Client::get_prompt_with)).
    ///
    /// # Errors
    ///
    /// As for [`read_resource`](Client::read_resource), and [`Error::is_reserved_meta`].
    ///
    /// # Cancel safety
    ///
    /// Dropping the future cancels the request (the server is told).
    pub async fn read_resource_with(
        &self,
        uri: &str,
        options: ToolCallOptions,
    ) -> Result<ReadResourceResult, Error> {
        let params = UriParams {
            uri: uri.to_owned(),
        };
        self.request_with_options::<ReadResource>(&params, &options)
            .await
    }

    /// [`complete`](Client::complete) with options (see
    /// [`get_prompt_with`](Client::get_prompt_with)).
    ///
    /// # Errors
    ///
    /// As for [`complete`](Client::complete), and [`Error::is_reserved_meta`].
    ///
    /// # Cancel safety
    ///
    /// Dropping the future cancels the request (the server is told).
    pub async fn complete_with(
        &self,
        reference: CompletionRef,
        argument: &str,
        value: &str,
        context: BTreeMap<String, String>,
        options: ToolCallOptions,
    ) -> Result<Completion, Error> {
        let params = CompleteParams {
            reference,
            argument: CompleteArgument {
                name: argument.to_owned(),
                value: value.to_owned(),
            },
            context: (!context.is_empty()).then_some(CompleteContext { arguments: context }),
        };
        Ok(self
            .request_with_options::<Complete>(&params, &options)
            .await?
            .completion)
    }

    /// The roots offered to the server now (the spec's, until
    /// [`set_roots`](Client::set_roots)).
    pub fn roots(&self) -> Vec<Root> {
        self.shared().roots()
    }

    /// Replaces the roots offered to the server. When they changed, a legacy-era connection
    /// sends `notifications/roots/list_changed` (the server then asks `roots/list`); a
    /// modern-era one has no such notice, and answers the next `roots/list` input request with
    /// the new roots.
    ///
    /// # Errors
    ///
    /// [`Error::is_unsupported`] when the connection did not advertise `roots` (its spec had
    /// no root when it connected: the capability cannot be added afterwards; the roots are
    /// unchanged); a closed connection.
    ///
    /// # Cancel safety
    ///
    /// The roots are replaced before the first await; dropping the future may leave the notice
    /// unsent.
    pub async fn set_roots(&self, roots: Vec<Root>) -> Result<(), Error> {
        let shared = self.shared();
        if shared.spec.roots.is_empty() {
            return Err(Error::new(Kind::Unsupported(
                "this connection did not advertise roots (its spec had none when it connected)"
                    .to_owned(),
            ))
            .with_server(&shared.name));
        }
        if !shared.replace_roots(roots) || self.era() == Era::Modern {
            return Ok(());
        }
        self.peer()
            .notify_untyped::<()>(
                <RootsListChanged as sidewire_jsonrpc::Notification>::METHOD,
                None,
            )
            .await
            .map_err(|err| {
                Error::rpc("notifications/roots/list_changed", err).with_server(&shared.name)
            })
    }

    /// Offers the URL elicitations of a `-32042` error ([`Error::url_elicitations`]) to the
    /// handler's [`elicit_url`](crate::ClientHandler::elicit_url), one after the other, and
    /// returns each with the user's choice. After the user accepted and finished (the handler
    /// hears [`on_elicitation_complete`](crate::ClientHandler::on_elicitation_complete)), the
    /// caller may send the refused request again; this never retries by itself.
    ///
    /// # Errors
    ///
    /// [`Error::is_unsupported`] when the handler does not offer URL elicitation; the
    /// handler's error for one elicitation, as [`Error::is_input_refused`].
    ///
    /// # Cancel safety
    ///
    /// Dropping the future drops the handler's future for the elicitation being offered.
    pub async fn offer_url_elicitations(
        &self,
        err: &Error,
    ) -> Result<Vec<(UrlElicitation, ElicitAction)>, Error> {
        let shared = self.shared();
        if !shared.handler.supports_url_elicitation() {
            return Err(Error::new(Kind::Unsupported(
                "the handler does not offer URL elicitation".to_owned(),
            ))
            .with_server(&shared.name));
        }
        let mut outcomes = Vec::new();
        for request in err.url_elicitations() {
            let action = shared
                .handler
                .elicit_url(Arc::clone(&shared.name), request.clone())
                .await
                .map_err(|error| {
                    Error::new(Kind::InputRefused {
                        method: "tools/call".to_owned(),
                        request: "a URL elicitation".to_owned(),
                        error,
                    })
                    .with_server(&shared.name)
                })?;
            outcomes.push((request, action));
        }
        Ok(outcomes)
    }
}
