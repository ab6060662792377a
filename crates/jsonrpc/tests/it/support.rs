//! Shared test scaffolding: peers over in-memory pipes, a scripted raw peer, and waits that
//! always have a deadline.

use std::future::Future;
use std::time::Duration;

use futures_util::StreamExt;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sidewire_framing::FrameReader;
use sidewire_jsonrpc::{
    CloseReason, Config, ErrorObject, Notification, Peer, Profile, Request, RequestContext, Router,
};
use tokio::io::{AsyncWriteExt, DuplexStream, ReadHalf, WriteHalf};
use tokio::task::JoinHandle;

pub(crate) const CAP: usize = 64 * 1024;

/// Every wait in these tests goes through this, so a hang fails with a message.
pub(crate) async fn within<T>(what: &str, fut: impl Future<Output = T>) -> T {
    sidewire_test_support::within(Duration::from_secs(10), what, fut).await
}

pub(crate) struct Echo;
impl Request for Echo {
    const METHOD: &'static str = "test/echo";
    type Params = Value;
    type Result = Value;
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct AddParams {
    pub(crate) a: i64,
    pub(crate) b: i64,
}
pub(crate) struct Add;
impl Request for Add {
    const METHOD: &'static str = "test/add";
    type Params = AddParams;
    type Result = i64;
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Ms {
    pub(crate) ms: u64,
}
pub(crate) struct Sleep;
impl Request for Sleep {
    const METHOD: &'static str = "test/sleep";
    type Params = Ms;
    type Result = u64;
}

pub(crate) struct Panic;
impl Request for Panic {
    const METHOD: &'static str = "test/panic";
    type Params = Value;
    type Result = Value;
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Len {
    pub(crate) n: usize,
}
pub(crate) struct Big;
impl Request for Big {
    const METHOD: &'static str = "test/big";
    type Params = Len;
    type Result = String;
}

/// Calls `test/echo` on the other side and returns what came back.
pub(crate) struct CallBack;
impl Request for CallBack {
    const METHOD: &'static str = "test/callback";
    type Params = Value;
    type Result = Value;
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Seq {
    pub(crate) n: u64,
}
pub(crate) struct Note;
impl Notification for Note {
    const METHOD: &'static str = "test/note";
    type Params = Seq;
}

/// A router that serves every test method; notifications go to `notes`.
pub(crate) fn router(notes: Option<tokio::sync::mpsc::UnboundedSender<u64>>) -> Router {
    let mut router = Router::new()
        .request::<Echo, _, _>(|params, _| async move { Ok(params) })
        .request::<Add, _, _>(|p, _| async move { Ok(p.a + p.b) })
        .request::<Sleep, _, _>(|p, _| async move {
            tokio::time::sleep(Duration::from_millis(p.ms)).await;
            Ok(p.ms)
        })
        .request::<Panic, _, _>(|_, _| async move {
            if true {
                panic!("handler panics on purpose");
            }
            Ok(Value::Null)
        })
        .request::<Big, _, _>(|p, _| async move { Ok("x".repeat(p.n)) })
        .request::<CallBack, _, _>(|params, ctx: RequestContext| async move {
            ctx.peer()
                .request::<Echo>(&params)
                .await
                .map_err(|e| ErrorObject::internal(e.to_string()))
        });
    if let Some(notes) = notes {
        router = router.notification::<Note, _>(move |p| {
            let _ = notes.send(p.n);
        });
    }
    router
}

pub(crate) type Task = JoinHandle<Result<(), CloseReason>>;

/// Two peers talking over an in-memory pipe, drivers spawned.
pub(crate) fn pair(a: (Config, Router), b: (Config, Router)) -> (Peer, Task, Peer, Task) {
    let (left, right) = tokio::io::duplex(256 * 1024);
    let (pa, ta) = spawn(left, a.0, a.1);
    let (pb, tb) = spawn(right, b.0, b.1);
    (pa, ta, pb, tb)
}

pub(crate) fn spawn(io: DuplexStream, config: Config, router: Router) -> (Peer, Task) {
    let (read, write) = tokio::io::split(io);
    let (stream, sink) = sidewire_jsonrpc::ndjson(read, write, &config);
    let (peer, driver) = sidewire_jsonrpc::connect(stream, sink, router, config);
    (peer, tokio::spawn(driver))
}

pub(crate) fn strict() -> Config {
    Config::new(Profile::Strict, CAP)
}

pub(crate) fn lenient() -> Config {
    Config::new(Profile::Lenient, CAP)
}

/// The far end of a connection, scripted line by line by the test.
pub(crate) struct Raw {
    pub(crate) lines: FrameReader<ReadHalf<DuplexStream>>,
    pub(crate) write: WriteHalf<DuplexStream>,
}

impl Raw {
    pub(crate) async fn send(&mut self, line: &str) {
        self.send_bytes(line.as_bytes()).await;
    }

    /// Sends one line of any bytes (not necessarily UTF-8).
    pub(crate) async fn send_bytes(&mut self, line: &[u8]) {
        self.write.write_all(line).await.unwrap();
        self.write.write_all(b"\n").await.unwrap();
        self.write.flush().await.unwrap();
    }

    /// The next frame, parsed.
    pub(crate) async fn recv(&mut self) -> Value {
        let frame = within("a frame from the peer", self.lines.next())
            .await
            .expect("the peer closed its output")
            .expect("a well-formed frame");
        serde_json::from_slice(&frame).expect("the peer writes JSON")
    }

    /// The next frame as text.
    pub(crate) async fn recv_text(&mut self) -> String {
        let frame = within("a frame from the peer", self.lines.next())
            .await
            .expect("the peer closed its output")
            .expect("a well-formed frame");
        String::from_utf8(frame.to_vec()).unwrap()
    }

    /// Asserts that nothing arrives for a short while.
    pub(crate) async fn silent(&mut self) {
        let got = tokio::time::timeout(Duration::from_millis(100), self.lines.next()).await;
        assert!(got.is_err(), "expected silence, got {got:?}");
    }
}

/// A peer under test whose other end is scripted by hand.
pub(crate) fn with_raw(config: Config, router: Router) -> (Peer, Task, Raw) {
    let (ours, theirs) = tokio::io::duplex(256 * 1024);
    let (peer, task) = spawn(ours, config, router);
    let (read, write) = tokio::io::split(theirs);
    let codec =
        sidewire_framing::NdjsonCodec::new(16 * 1024 * 1024, sidewire_framing::Oversize::Terminate);
    let raw = Raw {
        lines: FrameReader::new(read, codec),
        write,
    };
    (peer, task, raw)
}
