use std::collections::VecDeque;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_util::StreamExt;
use tokio::io::{AsyncRead, ReadBuf};

use super::FrameReader;
use crate::{NdjsonCodec, Oversize, READ_CHUNK};

/// An `AsyncRead` that hands out scripted chunks (or errors), each at most as large as the
/// caller's buffer, keeping the remainder for the next read.
struct Script(VecDeque<io::Result<Vec<u8>>>);

impl Script {
    fn new(chunks: Vec<io::Result<Vec<u8>>>) -> Self {
        Script(chunks.into())
    }

    fn chunked(input: &[u8], size: usize) -> Self {
        Script::new(input.chunks(size).map(|c| Ok(c.to_vec())).collect())
    }
}

impl AsyncRead for Script {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.0.pop_front() {
            None => Poll::Ready(Ok(())),
            Some(Err(err)) => Poll::Ready(Err(err)),
            Some(Ok(mut chunk)) => {
                let n = chunk.len().min(buf.remaining());
                buf.put_slice(&chunk[..n]);
                if n < chunk.len() {
                    self.0.push_front(Ok(chunk.split_off(n)));
                }
                Poll::Ready(Ok(()))
            }
        }
    }
}

async fn collect(reader: &mut FrameReader<Script>) -> Vec<Result<String, String>> {
    let mut out = Vec::new();
    while let Some(item) = reader.next().await {
        out.push(
            item.map(|f| String::from_utf8_lossy(&f).into_owned())
                .map_err(|e| e.to_string()),
        );
    }
    out
}

#[tokio::test]
async fn skip_mode_goes_on_after_an_oversized_line() {
    let script = Script::chunked(b"{\"a\":1}\nxxxxxxxxxxxxxxxxxxxxxxxx\n{\"b\":2}\n", 5);
    let mut reader = FrameReader::new(script, NdjsonCodec::new(16, Oversize::Skip));
    let out = collect(&mut reader).await;
    assert_eq!(out.len(), 3, "{out:?}");
    assert_eq!(out[0], Ok("{\"a\":1}".to_owned()));
    assert!(out[1].as_ref().unwrap_err().contains("16-byte frame limit"));
    assert_eq!(out[2], Ok("{\"b\":2}".to_owned()));
}

#[tokio::test]
async fn terminate_mode_ends_the_stream_after_the_error() {
    let script = Script::chunked(b"{}\nxxxxxxxxxxxxxxxxxxxxxxxx\n{}\n", 64);
    let mut reader = FrameReader::new(script, NdjsonCodec::new(16, Oversize::Terminate));
    let out = collect(&mut reader).await;
    assert_eq!(out.len(), 2, "{out:?}");
    assert!(out[1].is_err());
    assert!(reader.next().await.is_none(), "the stream stays finished");
}

#[tokio::test]
async fn eof_mid_frame_is_an_error_then_the_end() {
    let script = Script::chunked(b"{}\n{\"par", 3);
    let mut reader = FrameReader::new(script, NdjsonCodec::new(64, Oversize::Terminate));
    let out = collect(&mut reader).await;
    assert_eq!(out[0], Ok("{}".to_owned()));
    assert!(
        out[1].as_ref().unwrap_err().contains("unterminated"),
        "{out:?}"
    );
    assert_eq!(out.len(), 2);
}

#[tokio::test]
async fn io_errors_are_final() {
    let script = Script::new(vec![
        Ok(b"{}\n".to_vec()),
        Err(io::Error::other("pipe burst")),
        Ok(b"{}\n".to_vec()),
    ]);
    let mut reader = FrameReader::new(script, NdjsonCodec::new(64, Oversize::Skip));
    let out = collect(&mut reader).await;
    assert_eq!(out.len(), 2, "{out:?}");
    assert!(out[1].as_ref().unwrap_err().contains("pipe burst"));
}

#[tokio::test]
async fn large_frame_respects_the_buffer_bound() {
    let cap = 2 * 1024 * 1024;
    let mut input = vec![b'f'; cap - 1];
    input.push(b'\n');
    input.extend_from_slice(b"{}\n");
    let mut reader = FrameReader::new(
        Script::chunked(&input, 4096),
        NdjsonCodec::new(cap, Oversize::Terminate),
    );
    let big = reader.next().await.unwrap().unwrap();
    assert_eq!(big.len(), cap - 1);
    assert!(reader.buffer_capacity() <= crate::SHRINK_AFTER);
    assert_eq!(&reader.next().await.unwrap().unwrap()[..], b"{}");
    assert!(reader.next().await.is_none());
    assert!(reader.buffer_capacity() <= cap + READ_CHUNK);
}
