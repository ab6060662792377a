//! The turn loop on ext-host's provider streams: [`Agent::run_turn`], with the provider of
//! the turn's pinned generation as the [`Model`].

use std::future::Future;

use sidewire_ext_host::Turn;
use sidewire_ext_host::protocol::ProviderRequest;

use crate::conversation::Conversation;
use crate::error::Error;
use crate::turn::{Agent, Model, TurnEvent, TurnReport, run};

impl Agent {
    /// Runs one turn of `input` on a pinned generation of `extensions`, with `mcp`'s tools, and
    /// appends what it added to `conversation` (see the crate docs for the order of points).
    /// `on_event` sees the turn as it happens.
    ///
    /// # Errors
    ///
    /// [`Error::Hook`] when a turn-level chain fails (a required plugin, a slot owner, a host
    /// shut down); [`Error::Provider`] when the stream cannot be opened or fails;
    /// [`Error::ResponseTooLarge`]. A failed turn leaves `conversation` as it was. Tool calls
    /// that fail are not errors: the model is told.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future abandons the turn: the provider stream is dropped (the host cancels
    /// it on the sidecar), an intercept or MCP call in flight is cancelled, and `conversation`
    /// is left as it was (tools that already ran are not undone).
    pub async fn run_turn(
        &self,
        extensions: &sidewire_ext_host::ExtensionHost,
        mcp: &sidewire_mcp::McpHost,
        conversation: &mut Conversation,
        input: &str,
        mut on_event: impl FnMut(TurnEvent<'_>) + Send,
    ) -> Result<TurnReport, Error> {
        let turn = extensions.turn().await;
        let model = HostModel {
            turn: &turn,
            agent: self,
        };
        // The MCP tools and, after them, the extension tools of the pinned generation.
        let tools = crate::tools::WithExtensionTools::new(mcp, &turn);
        run(
            self,
            &turn,
            &model,
            &tools,
            conversation,
            input,
            &mut on_event,
        )
        .await
    }
}

/// The provider of an [`Agent`] on a pinned [`Turn`].
struct HostModel<'a> {
    turn: &'a Turn,
    agent: &'a Agent,
}

impl Model for HostModel<'_> {
    type Stream = sidewire_ext_host::ProviderStream;

    fn open(
        &self,
        request: ProviderRequest,
    ) -> impl Future<Output = Result<Self::Stream, sidewire_ext_host::Error>> + Send {
        let request = sidewire_ext_host::StreamRequest::new(&self.agent.provider_ref, request)
            .model(&self.agent.model);
        self.turn.open_stream(request)
    }
}
