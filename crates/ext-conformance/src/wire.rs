//! The kit's raw connection to one sidecar process: exact bytes out, lines in, with every wait
//! bounded and the line buffer bounded by the frame limit plus one read chunk.
//!
//! Nothing here knows JSON; `session.rs` parses what this returns.

use std::time::Duration;

use sidewire_ext_protocol::{FRAME_BYTES, STDERR_TAIL_BYTES};
use sidewire_process::{Command, Exit, Process};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{ChildStdin, ChildStdout};
use tokio::time::Instant;

use super::target::Launch;

/// How much is read from the sidecar's stdout at once.
const READ_CHUNK: usize = 64 * 1024;

/// Why no line came.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReadEnd {
    /// stdout reached end of file (the sidecar closed it or exited).
    Eof,
    /// Nothing (or no complete line) within the wait.
    Timeout,
    /// More than the frame limit without a line feed: the kit stops reading, as a host would.
    Oversize,
    /// Reading failed.
    Failed,
}

/// One sidecar process and its pipes.
pub(crate) struct Wire {
    process: Process,
    stdin: Option<ChildStdin>,
    stdout: ChildStdout,
    /// Bytes read and not yet returned as lines; never more than `FRAME_BYTES + READ_CHUNK`.
    buf: Vec<u8>,
    /// How far `buf` was searched for a line feed.
    scanned: usize,
    /// Set once stdout is done (EOF, oversize, error): later reads return it at once.
    ended: Option<ReadEnd>,
}

impl Wire {
    /// Spawns the sidecar of `launch` (no shell, its own process group, stderr drained into the
    /// 16 KiB tail) and runs its supervision on a task of the current runtime.
    pub(crate) fn spawn(launch: &Launch) -> Result<Wire, String> {
        let spec = &launch.spec;
        let spawned = Command::new(&spec.command)
            .args(&spec.args)
            .envs(spec.env.iter().map(|(name, value)| (name, value)))
            .current_dir(&spec.cwd)
            .tail_bytes(STDERR_TAIL_BYTES)
            .spawn()
            .map_err(|err| format!("cannot spawn {}: {err}", spec.command.display()))?;
        // The supervision drains stderr and reaps; it ends once the process is gone, which the
        // `Process` in this wire guarantees when it is dropped (it kills the group).
        tokio::spawn(spawned.supervise);
        Ok(Wire {
            process: spawned.process,
            stdin: Some(spawned.stdin),
            stdout: spawned.stdout,
            buf: Vec::new(),
            scanned: 0,
            ended: None,
        })
    }

    /// Writes `bytes` to stdin within `timeout`. An error says why (stdin closed, the sidecar
    /// stopped reading).
    pub(crate) async fn write(&mut self, bytes: &[u8], timeout: Duration) -> Result<(), String> {
        let Some(stdin) = self.stdin.as_mut() else {
            return Err("stdin is already closed".to_owned());
        };
        let write = async {
            stdin.write_all(bytes).await?;
            stdin.flush().await
        };
        match tokio::time::timeout(timeout, write).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(err)) => Err(format!("writing to the sidecar's stdin failed: {err}")),
            Err(_) => Err(format!(
                "the sidecar did not read its stdin for {} ms",
                timeout.as_millis()
            )),
        }
    }

    /// Closes stdin (end of input for the sidecar).
    pub(crate) fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// The next line without its LF (a CR before it is kept), waiting until `deadline`.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: bytes read are kept in the buffer.
    pub(crate) async fn read_line(&mut self, deadline: Instant) -> Result<Vec<u8>, ReadEnd> {
        loop {
            if let Some(at) = memchr_lf(&self.buf[self.scanned..]) {
                let end = self.scanned + at;
                let mut line: Vec<u8> = self.buf.drain(..=end).collect();
                line.pop();
                self.scanned = 0;
                return Ok(line);
            }
            self.scanned = self.buf.len();
            if let Some(end) = self.ended {
                return Err(end);
            }
            if self.buf.len() >= FRAME_BYTES {
                self.ended = Some(ReadEnd::Oversize);
                self.buf = Vec::new();
                self.scanned = 0;
                return Err(ReadEnd::Oversize);
            }
            self.buf.reserve(READ_CHUNK);
            let room = READ_CHUNK.min(FRAME_BYTES + READ_CHUNK - self.buf.len());
            let mut limited = (&mut self.stdout).take(room as u64);
            let read = limited.read_buf(&mut self.buf);
            match tokio::time::timeout_at(deadline, read).await {
                Err(_) => return Err(ReadEnd::Timeout),
                Ok(Ok(0)) => {
                    // A partial line at end of file is returned as the last line.
                    self.ended = Some(ReadEnd::Eof);
                    if !self.buf.is_empty() {
                        self.scanned = 0;
                        return Ok(std::mem::take(&mut self.buf));
                    }
                }
                Ok(Ok(_)) => {}
                Ok(Err(_)) => self.ended = Some(ReadEnd::Failed),
            }
        }
    }

    /// Waits until the process exits, at most `timeout`.
    pub(crate) async fn wait_exit(&self, timeout: Duration) -> Option<Exit> {
        tokio::time::timeout(timeout, self.process.exited())
            .await
            .ok()
    }

    /// Waits until the process exited and its stderr was read to the end, at most `timeout`.
    pub(crate) async fn wait_finished(&self, timeout: Duration) -> Option<Exit> {
        let monitor = self.process.monitor();
        tokio::time::timeout(timeout, monitor.finished()).await.ok()
    }

    /// The process's stderr tail so far (lossy UTF-8, at most 16 KiB).
    pub(crate) fn stderr_tail(&self) -> String {
        self.process.stderr_tail()
    }

    /// Kills the process group at once.
    pub(crate) fn kill(&self) {
        self.process.kill();
    }
}

fn memchr_lf(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == b'\n')
}
