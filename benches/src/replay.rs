//! Answers replayed from real peers: frames captured once from a real server or sidecar (or,
//! for the reference Go SDK, derived from its source) and written back byte for byte with only
//! the `id` value changed. `benches/capture/README.md` says how each frame was made.
//!
//! A [`Frame`] is a captured answer line split once around its top-level `id`, so a replayed
//! answer costs two copies and the request's id, whatever the peer's member order, spacing or
//! `_meta`. [`serve_lines`] is the loop the replaying children run: it reads what the pipe
//! holds, answers every complete line into one buffer and writes that buffer once, so
//! answers to calls in flight leave together, as a peer with one writer sends them.

use bytes::{Buf as _, BytesMut};
use serde::Deserialize;
use serde_json::value::RawValue;
use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWrite, AsyncWriteExt as _};

/// One captured answer line, split around the text of its `id` value.
#[derive(Debug, Clone, Copy)]
pub struct Frame {
    /// Everything before the id value (`{"result":…,"jsonrpc":"2.0","id":`).
    prefix: &'static str,
    /// Everything after it, the newline included.
    suffix: &'static str,
}

impl Frame {
    /// Splits `captured`, one JSON-RPC response and its newline, around its top-level `id`.
    ///
    /// # Panics
    ///
    /// When `captured` is not one line holding a JSON object with an `id` member.
    pub fn split(captured: &'static str) -> Frame {
        /// Only the id is read, borrowed, so that its place in the text is known.
        #[derive(Deserialize)]
        struct Envelope<'a> {
            #[serde(borrow)]
            id: &'a RawValue,
        }
        let line = captured
            .strip_suffix('\n')
            .expect("a captured frame ends with its newline");
        assert!(!line.contains('\n'), "a captured frame is one line");
        let envelope: Envelope<'_> =
            serde_json::from_str(line).expect("a captured frame is a JSON-RPC response");
        let id = envelope.id.get();
        // `id` borrows from `line`: its offset is where the value's text starts.
        let start = id.as_ptr() as usize - line.as_ptr() as usize;
        Frame {
            prefix: &captured[..start],
            suffix: &captured[start + id.len()..],
        }
    }

    /// Appends the frame to `out` with `id` (a JSON value's text) in place of the captured one.
    pub fn write(&self, id: &[u8], out: &mut Vec<u8>) {
        out.reserve(self.prefix.len() + id.len() + self.suffix.len());
        out.extend_from_slice(self.prefix.as_bytes());
        out.extend_from_slice(id);
        out.extend_from_slice(self.suffix.as_bytes());
    }
}

/// What a replaying child reads of each line: the id, the method and the params, borrowed.
#[derive(Debug, Deserialize)]
pub struct Incoming<'a> {
    /// Absent on a notification.
    #[serde(borrow, default)]
    pub id: Option<&'a RawValue>,
    /// Absent on a response.
    #[serde(borrow, default)]
    pub method: Option<&'a str>,
    /// As sent, unread.
    #[serde(borrow, default)]
    pub params: Option<&'a RawValue>,
}

impl<'a> Incoming<'a> {
    /// Reads `line`; `None` when it is not a JSON object of that shape.
    pub fn read(line: &'a [u8]) -> Option<Incoming<'a>> {
        serde_json::from_slice(line).ok()
    }
}

/// Whether a replaying child goes on reading after a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Read the next line.
    Continue,
    /// Write what is answered so far and stop (an orderly shutdown).
    Stop,
}

/// Reads lines from `reader` until it closes (or `answer` says [`Flow::Stop`]), calling
/// `answer` with each non-empty line (its newline removed) and a buffer to append its answer
/// to. What all the lines of one read answered is written with one write.
///
/// # Errors
///
/// A read or a write failing.
pub async fn serve_lines<R, W, F>(
    mut reader: R,
    mut writer: W,
    mut answer: F,
) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
    F: FnMut(&[u8], &mut Vec<u8>) -> Flow,
{
    let mut input = BytesMut::with_capacity(64 * 1024);
    let mut out = Vec::with_capacity(64 * 1024);
    // How far `input` has been searched for a newline.
    let mut scanned = 0;
    loop {
        if reader.read_buf(&mut input).await? == 0 {
            return Ok(());
        }
        let mut flow = Flow::Continue;
        while let Some(at) = memchr::memchr(b'\n', &input[scanned..]) {
            let end = scanned + at;
            let line = input[..end].strip_suffix(b"\r").unwrap_or(&input[..end]);
            if !line.is_empty() {
                flow = answer(line, &mut out);
            }
            input.advance(end + 1);
            scanned = 0;
            if flow == Flow::Stop {
                break;
            }
        }
        scanned = input.len();
        if !out.is_empty() {
            writer.write_all(&out).await?;
            writer.flush().await?;
            out.clear();
        }
        if flow == Flow::Stop {
            return Ok(());
        }
    }
}

/// [`serve_lines`] for the requests among the lines: a line that is not such an object, a
/// notification or an answer is read past unanswered; `answer` gets each request's id as sent
/// (its JSON text), its method and the request itself.
///
/// # Errors
///
/// A read or a write failing.
pub async fn serve_requests<R, W, F>(reader: R, writer: W, mut answer: F) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
    F: FnMut(&[u8], &str, &Incoming<'_>, &mut Vec<u8>) -> Flow,
{
    serve_lines(reader, writer, |line, out| {
        let Some(incoming) = Incoming::read(line) else {
            return Flow::Continue;
        };
        let (Some(id), Some(method)) = (incoming.id, incoming.method) else {
            return Flow::Continue;
        };
        answer(id.get().as_bytes(), method, &incoming, out)
    })
    .await
}

/// Appends `{"jsonrpc":"2.0","id":ID,"result":RESULT}` and its newline to `out`: the shape
/// sidewire-jsonrpc writes, for the answers a replaying child does not replay.
pub fn write_result(id: &[u8], result: &serde_json::Value, out: &mut Vec<u8>) {
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    out.extend_from_slice(id);
    out.extend_from_slice(br#","result":"#);
    serde_json::to_writer(&mut *out, result).expect("a JSON value serializes");
    out.extend_from_slice(b"}\n");
}

/// Appends a JSON-RPC error answer with `code` and `message` to `out`.
pub fn write_error(id: &[u8], code: i64, message: &str, out: &mut Vec<u8>) {
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    out.extend_from_slice(id);
    out.extend_from_slice(br#","error":{"code":"#);
    out.extend_from_slice(code.to_string().as_bytes());
    out.extend_from_slice(br#","message":"#);
    serde_json::to_writer(&mut *out, message).expect("a string serializes");
    out.extend_from_slice(b"}}\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_keeps_every_byte_but_the_id() {
        let frame = Frame::split(concat!(
            r#"{"result":{"content":[{"type":"text","text":"ok"}],"id":7},"#,
            r#""jsonrpc":"2.0", "id" : 7 }"#,
            "\n"
        ));
        let mut out = Vec::new();
        frame.write(br#""abc""#, &mut out);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            concat!(
                r#"{"result":{"content":[{"type":"text","text":"ok"}],"id":7},"#,
                r#""jsonrpc":"2.0", "id" : "abc" }"#,
                "\n"
            )
        );
    }

    /// Every committed fixture: its name and bytes.
    fn fixtures() -> Vec<(String, String)> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/real");
        let mut out: Vec<_> = std::fs::read_dir(&dir)
            .expect("benches/fixtures/real")
            .map(|entry| {
                let path = entry.expect("an entry").path();
                let name = path.file_name().unwrap().to_string_lossy().into_owned();
                (name, std::fs::read_to_string(&path).expect("UTF-8 text"))
            })
            .filter(|(name, _)| name.ends_with(".json"))
            .collect();
        out.sort();
        out
    }

    #[test]
    fn every_fixture_is_one_json_rpc_response_line() {
        let fixtures = fixtures();
        assert!(fixtures.len() >= 20, "the fixtures are there: {fixtures:?}");
        for (name, text) in fixtures {
            let line = text
                .strip_suffix('\n')
                .unwrap_or_else(|| panic!("{name}: no newline"));
            assert!(!line.contains('\n'), "{name}: more than one line");
            let value: serde_json::Value =
                serde_json::from_str(line).unwrap_or_else(|e| panic!("{name}: {e}"));
            let object = value
                .as_object()
                .unwrap_or_else(|| panic!("{name}: not an object"));
            assert_eq!(object.get("jsonrpc"), Some(&"2.0".into()), "{name}");
            assert!(
                object.get("id").is_some_and(|id| id.is_u64()),
                "{name}: an id"
            );
            assert!(object.contains_key("result"), "{name}: a result");
            assert!(
                !object.contains_key("error") && !object.contains_key("method"),
                "{name}"
            );
            assert_eq!(object.len(), 3, "{name}: jsonrpc, id and result only");
        }
    }

    /// `captured` with its one top-level `"id":N` (however spaced) holding `id` instead, found
    /// by a text search rather than by [`Frame::split`]'s parse.
    fn substituted(captured: &str, id: &str) -> String {
        let value: serde_json::Value = serde_json::from_str(captured).unwrap();
        let captured_id = value["id"].to_string();
        let pattern = format!(r#""id":{captured_id}"#);
        assert_eq!(
            captured.matches(&pattern).count(),
            1,
            "one {pattern} in {captured}"
        );
        captured.replacen(&pattern, &format!(r#""id":{id}"#), 1)
    }

    /// Writes `lines` to a replaying child run by `serve` and returns the answer lines.
    async fn exchange<F, Fut>(serve: F, lines: &[String]) -> Vec<String>
    where
        F: FnOnce(
            tokio::io::ReadHalf<tokio::io::DuplexStream>,
            tokio::io::WriteHalf<tokio::io::DuplexStream>,
        ) -> Fut,
        Fut: std::future::Future<Output = std::io::Result<()>> + Send + 'static,
    {
        let (mut client, server) = tokio::io::duplex(64 * 1024);
        let (reader, writer) = tokio::io::split(server);
        let served = tokio::spawn(serve(reader, writer));
        for line in lines {
            client.write_all(line.as_bytes()).await.unwrap();
        }
        let mut answers = Vec::new();
        let mut pending = Vec::new();
        let mut buf = [0u8; 4096];
        while answers.len() < lines.iter().filter(|l| l.contains(r#""id""#)).count() {
            let n = client.read(&mut buf).await.unwrap();
            assert!(n > 0, "the replay ended early: {answers:?}");
            pending.extend_from_slice(&buf[..n]);
            while let Some(at) = pending.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = pending.drain(..=at).collect();
                answers.push(String::from_utf8(line).unwrap());
            }
        }
        drop(client);
        served.await.unwrap().unwrap();
        answers
    }

    #[tokio::test]
    async fn the_mcp_replay_writes_the_captured_bytes_but_the_id() {
        use crate::noop_mcp::{Shape, replay_on};
        let envelope = r#""io.modelcontextprotocol/protocolVersion":"2026-07-28""#;
        for shape in Shape::ALL {
            let (legacy, modern) = shape.captured();
            let mut lines = vec![
                r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#.to_owned(),
                r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned(),
            ];
            let mut want = vec![None];
            for id in ["12345", r#""sidewire-9""#, "0"] {
                lines.push(format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"noop","_meta":{{"progressToken":"p"}}}}}}"#
                ));
                want.push(Some(substituted(legacy, id)));
                if let Some(modern) = modern {
                    lines.push(format!(
                        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"noop","_meta":{{{envelope}}}}}}}"#
                    ));
                    want.push(Some(substituted(modern, id)));
                }
            }
            let lines: Vec<String> = lines.into_iter().map(|line| line + "\n").collect();
            let answers = exchange(|r, w| replay_on(shape, r, w), &lines).await;
            assert_eq!(answers.len(), want.len(), "{shape:?}");
            for (answer, want) in answers.iter().zip(&want) {
                if let Some(want) = want {
                    assert_eq!(answer, want, "{shape:?}");
                }
            }
        }
    }

    #[tokio::test]
    async fn a_legacy_only_replay_refuses_server_discover() {
        use crate::noop_mcp::{Shape, replay_on};
        let lines = [
            r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}"#.to_owned() + "\n",
        ];
        let answers = exchange(|r, w| replay_on(Shape::Ts1, r, w), &lines).await;
        let answer: serde_json::Value = serde_json::from_str(&answers[0]).unwrap();
        assert_eq!(answer["error"]["code"], -32601);
        let answers = exchange(|r, w| replay_on(Shape::Ts2, r, w), &lines).await;
        let answer: serde_json::Value = serde_json::from_str(&answers[0]).unwrap();
        assert_eq!(answer["result"]["supportedVersions"][0], "2026-07-28");
    }

    #[tokio::test]
    async fn the_sidecar_replay_writes_the_captured_bytes_but_the_id() {
        use crate::sidecars::{InterceptShape, replay_on};
        for shape in InterceptShape::ALL {
            let [initialize, intercept, shutdown] = shape.captured();
            let lines: Vec<String> = [
                r#"{"jsonrpc":"2.0","id":1,"method":"extension/initialize","params":{}}"#,
                r#"{"jsonrpc":"2.0","method":"extension/initialized","params":{}}"#,
                r#"{"jsonrpc":"2.0","id":2,"method":"extension/intercept","params":{}}"#,
                r#"{"jsonrpc":"2.0","id":9007199254740991,"method":"extension/intercept","params":{}}"#,
                r#"{"jsonrpc":"2.0","id":4,"method":"extension/shutdown","params":{}}"#,
            ]
            .into_iter()
            .map(|line| line.to_owned() + "\n")
            .collect();
            let answers = exchange(|r, w| replay_on(shape, r, w), &lines).await;
            assert_eq!(
                answers,
                [
                    substituted(initialize, "1"),
                    substituted(intercept, "2"),
                    substituted(intercept, "9007199254740991"),
                    substituted(shutdown, "4"),
                ],
                "{shape:?}"
            );
        }
    }

    #[tokio::test]
    async fn lines_split_across_reads_are_answered_once_each_in_order() {
        let (mut client, server) = tokio::io::duplex(64);
        let (reader, writer) = tokio::io::split(server);
        let served = tokio::spawn(serve_lines(reader, writer, |line, out| {
            out.extend_from_slice(line);
            out.push(b'\n');
            if line == b"stop" {
                Flow::Stop
            } else {
                Flow::Continue
            }
        }));
        client.write_all(b"a\r\n\nbc").await.unwrap();
        client.write_all(b"d\nstop\nignored\n").await.unwrap();
        served.await.unwrap().unwrap();
        let mut answers = Vec::new();
        drop(client.read_to_end(&mut answers).await);
        assert_eq!(answers, b"a\nbcd\nstop\n");
    }
}
