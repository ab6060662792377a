//! The event streams of a legacy HTTP session: each POST answered as a stream, and the GET
//! stream, is a [`Log`] of its events with ids, kept (bounded) so a client that lost the
//! connection resumes with `Last-Event-ID`, and routed to the connection attached now, if any.

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use bytes::Bytes;
use tokio::sync::mpsc;

/// The id of the standalone (GET) stream.
pub(crate) const STANDALONE: u64 = 0;

/// One event as it goes on the wire: `id`, `data`, and (on a priming event) `retry`.
pub(crate) fn event(id: &str, data: &str, retry: Option<Duration>) -> Bytes {
    let mut text = format!("id: {id}\n");
    if let Some(retry) = retry {
        text.push_str(&format!("retry: {}\n", retry.as_millis()));
    }
    // A JSON text has no raw newline; each line of `data` is its own field all the same.
    for line in data.split('\n') {
        text.push_str("data: ");
        text.push_str(line);
        text.push('\n');
    }
    text.push('\n');
    Bytes::from(text)
}

/// The stream part of an event id `{stream}-{seq}`.
pub(crate) fn parse_id(id: &str) -> Option<(u64, u64)> {
    let (stream, seq) = id.split_once('-')?;
    Some((stream.parse().ok()?, seq.parse().ok()?))
}

/// One stream's kept events and its attached connection.
#[derive(Debug, Default)]
pub(crate) struct Log {
    events: VecDeque<(u64, Bytes)>,
    next_seq: u64,
    attached: Option<mpsc::Sender<Bytes>>,
    /// The stream's response was sent: nothing more will come.
    done: bool,
}

/// Every stream of a session.
#[derive(Debug, Default)]
pub(crate) struct Streams {
    next: u64,
    logs: HashMap<u64, Log>,
}

impl Streams {
    /// A new stream's id (the standalone stream is made on first use).
    pub(crate) fn open(&mut self, max_streams: usize) -> u64 {
        self.next += 1;
        let id = self.next;
        self.logs.insert(id, Log::default());
        // Over the bound, the oldest finished streams go first, then the oldest.
        while self.logs.len() > max_streams.max(2) {
            let victim = self
                .logs
                .iter()
                .filter(|(id, log)| **id != STANDALONE && log.done)
                .map(|(id, _)| *id)
                .min()
                .or_else(|| {
                    self.logs
                        .keys()
                        .filter(|id| **id != STANDALONE)
                        .min()
                        .copied()
                });
            match victim {
                Some(victim) => self.logs.remove(&victim),
                None => break,
            };
        }
        id
    }

    /// Records an event of `stream` and says where it goes now (the attached connection).
    pub(crate) fn record(
        &mut self,
        stream: u64,
        data: &str,
        retry: Option<Duration>,
        max_events: usize,
    ) -> Option<(mpsc::Sender<Bytes>, Bytes)> {
        let log = self.logs.entry(stream).or_default();
        let seq = log.next_seq;
        log.next_seq += 1;
        let bytes = event(&format!("{stream}-{seq}"), data, retry);
        log.events.push_back((seq, bytes.clone()));
        while log.events.len() > max_events.max(1) {
            log.events.pop_front();
        }
        log.attached.clone().map(|attached| (attached, bytes))
    }

    /// The stream ended: its connection is let go.
    pub(crate) fn finish(&mut self, stream: u64) {
        if let Some(log) = self.logs.get_mut(&stream) {
            log.done = true;
            log.attached = None;
        }
    }

    /// Lets the connection go without ending the stream (the server closed it for polling).
    pub(crate) fn detach(&mut self, stream: u64) {
        if let Some(log) = self.logs.get_mut(&stream) {
            log.attached = None;
        }
    }

    /// Attaches a connection to `stream`; it gets the kept events after `after` first. `None`
    /// when the stream is unknown (never made, or let go under the bound), or, for the
    /// standalone stream, when a live connection already has it and `exclusive`.
    pub(crate) fn attach(
        &mut self,
        stream: u64,
        after: Option<u64>,
        queue: usize,
        exclusive: bool,
    ) -> Result<mpsc::Receiver<Bytes>, AttachError> {
        if stream == STANDALONE {
            self.logs.entry(STANDALONE).or_default();
        }
        let log = self.logs.get_mut(&stream).ok_or(AttachError::Unknown)?;
        if exclusive
            && log
                .attached
                .as_ref()
                .is_some_and(|attached| !attached.is_closed())
        {
            return Err(AttachError::Busy);
        }
        let replay: Vec<Bytes> = log
            .events
            .iter()
            .filter(|(seq, _)| after.is_some_and(|after| *seq > after))
            .map(|(_, bytes)| bytes.clone())
            .collect();
        let (tx, rx) = mpsc::channel(queue.max(1) + replay.len());
        for bytes in replay {
            let _ = tx.try_send(bytes);
        }
        if !log.done {
            log.attached = Some(tx);
        }
        Ok(rx)
    }

    /// Whether a live connection is attached to any stream (a client listening).
    pub(crate) fn listening(&self) -> bool {
        self.logs.values().any(|log| {
            log.attached
                .as_ref()
                .is_some_and(|attached| !attached.is_closed())
        })
    }

    /// Whether the stream exists.
    pub(crate) fn has(&self, stream: u64) -> bool {
        self.logs.contains_key(&stream)
    }
}

/// Why a connection could not attach.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AttachError {
    Unknown,
    Busy,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resumed_stream_replays_what_followed_and_logs_are_bounded() {
        let mut streams = Streams::default();
        let id = streams.open(4);
        for n in 0..5 {
            assert!(
                streams
                    .record(id, &format!("{{\"n\":{n}}}"), None, 3)
                    .is_none()
            );
        }
        let mut rx = streams.attach(id, Some(2), 4, false).unwrap();
        let got: Vec<String> = std::iter::from_fn(|| rx.try_recv().ok())
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .collect();
        assert_eq!(got.len(), 2, "{got:?}");
        assert!(got[0].starts_with(&format!("id: {id}-3\n")));
        assert!(streams.record(id, "{}", None, 3).is_some(), "attached now");
        for _ in 0..10 {
            streams.open(4);
        }
        assert!(streams.logs.len() <= 4);
        assert_eq!(parse_id("3-17"), Some((3, 17)));
        assert_eq!(parse_id("x"), None);
    }

    #[test]
    fn the_standalone_stream_takes_one_connection() {
        let mut streams = Streams::default();
        let first = streams.attach(STANDALONE, None, 4, true).unwrap();
        assert_eq!(
            streams.attach(STANDALONE, None, 4, true).unwrap_err(),
            AttachError::Busy
        );
        drop(first);
        assert!(streams.attach(STANDALONE, None, 4, true).is_ok());
    }
}
