//! MCP over a pair of pipes: one NDJSON message per line each way (a server's stdin and
//! stdout, or any `AsyncRead`/`AsyncWrite`). One connection is one session.

use futures_util::StreamExt;
use sidewire_framing::{FrameReader, NdjsonCodec, Oversize};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};

use crate::context::Out;
use crate::core::Step;
use crate::server::{Server, lock, stream};
use crate::wire;
use crate::{Error, Handler};

impl<H: Handler> Server<H> {
    /// Serves one client over `reader`/`writer` until it closes its end; then every request
    /// still running is cancelled. A line over [`crate::Limits::max_message_bytes`], or one
    /// that is not a JSON-RPC message with a readable id, is skipped and never answered (the
    /// workspace's rule: nothing is sent in reply to a message without an id); a well-formed
    /// object with a usable id but the wrong shape is answered `-32600`. The connection goes on.
    ///
    /// # Errors
    ///
    /// Reading or writing failed ([`Error::Io`]).
    ///
    /// # Cancel safety
    ///
    /// Dropping the future ends the connection: requests in flight are cancelled, and
    /// messages not yet written are lost.
    pub async fn serve_stdio<R, W>(&self, reader: R, mut writer: W) -> Result<(), Error>
    where
        R: AsyncRead + Unpin,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let session = self.open_session();
        let (out, mut outgoing) = stream(&self.inner.limits);
        *lock(&session.unsolicited) = Some(out.clone());
        let writing = tokio::spawn(async move {
            while let Some(message) = outgoing.recv().await {
                let (Out::Message(message) | Out::Final(message)) = message else {
                    continue;
                };
                let mut line = message.to_string();
                line.push('\n');
                writer.write_all(line.as_bytes()).await?;
                writer.flush().await?;
            }
            Ok::<(), std::io::Error>(())
        });
        struct Close<'a>(&'a crate::server::Session);
        impl Drop for Close<'_> {
            fn drop(&mut self) {
                self.0.close();
            }
        }
        let _close = Close(&session);
        let codec = NdjsonCodec::new(self.inner.limits.max_message_bytes, Oversize::Skip)
            .skip_blank_lines(true)
            .strip_bom(true);
        let mut frames = FrameReader::new(reader, codec);
        let mut failure = None;
        while let Some(frame) = frames.next().await {
            let frame = match frame {
                Ok(frame) => frame,
                // Its id is unknown, and nothing is answered to a message without one.
                Err(err) if err.is_too_large() => {
                    tracing::debug!("skipped a client line over the message bound");
                    continue;
                }
                Err(err) if err.is_truncated() => break,
                Err(err) => {
                    failure = Some(Error::Io(std::io::Error::other(err.to_string())));
                    break;
                }
            };
            let step = match wire::parse(&frame) {
                Ok(message) => self.step(&session, message),
                // A message whose id could not be read is never answered (an error storm with
                // a peer that writes logs to the pipe, rust-sdk #938): it is skipped.
                Err(rejection) if rejection.id.is_null() => {
                    tracing::debug!(
                        code = rejection.code,
                        "skipped a client line that is not a request"
                    );
                    continue;
                }
                Err(rejection) => Step::Answer(rejection.to_response()),
            };
            let sent = match self.settle(&session, step) {
                Some(Step::Answer(answer)) => out.send(Out::Message(answer)).await.is_ok(),
                Some(Step::Dispatch(call)) => {
                    self.spawn_call(&session, call, out.clone()).detach();
                    true
                }
                _ => true,
            };
            if !sent {
                break;
            }
        }
        session.close();
        drop(out);
        match writing.await {
            Ok(Ok(())) | Err(_) => {}
            Ok(Err(err)) if failure.is_none() => failure = Some(Error::Io(err)),
            Ok(Err(_)) => {}
        }
        failure.map_or(Ok(()), Err)
    }
}
