//! A program outside the workspace, on the published APIs only: an MCP client of the installed
//! `sidewire` binary's built-in server (`sidewire __mcp-server`, over stdio) calls its `echo`
//! tool, and `sidewire-framing`'s NDJSON codec decodes lines under a small cap. `.ci/package.sh`
//! builds and runs it against the packaged crates; the binary is the first argument.

use bytes::BytesMut;
use serde_json::json;
use sidewire_framing::{NdjsonCodec, Oversize};
use sidewire_mcp::{Client, NoHandler, ServerSpec, ToolCallOptions};
use tokio_util::codec::Decoder;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let sidewire = std::env::args()
        .nth(1)
        .ok_or("usage: sidewire-outside PATH-TO-SIDEWIRE")?;

    // MCP over stdio: the library spawns the server (no shell) and never spawns a task.
    let spec = ServerSpec::stdio("demo", sidewire).arg("__mcp-server");
    let (client, driver) = Client::connect(&spec, NoHandler).await?;
    tokio::spawn(driver); // the library never spawns: the caller runs the driver
    let answer = client
        .call_tool(
            "echo",
            json!({"text": "from outside"}),
            ToolCallOptions::new(),
        )
        .await?;
    assert!(!answer.is_error, "echo failed: {}", answer.joined_text());
    assert_eq!(answer.joined_text(), "from outside");
    client.close().await;
    println!("mcp: echo answered {:?}", "from outside");

    // NDJSON under a 16-byte cap (the newline counts): the long line is refused, and with
    // `Oversize::Skip` the codec goes on to the next line.
    let mut codec = NdjsonCodec::new(16, Oversize::Skip);
    let mut input =
        BytesMut::from(&b"{\"id\":1}\n{\"id\":2,\"text\":\"over the cap\"}\n{\"id\":3}\n"[..]);
    let first = codec.decode(&mut input)?.ok_or("a first frame")?;
    assert_eq!(&first[..], b"{\"id\":1}");
    let refused = codec
        .decode(&mut input)
        .expect_err("the over-cap line is refused");
    assert!(refused.is_too_large(), "{refused}");
    let third = codec.decode(&mut input)?.ok_or("a third frame")?;
    assert_eq!(&third[..], b"{\"id\":3}");
    assert!(codec.decode(&mut input)?.is_none());
    println!("framing: 2 frames, 1 line over the 16-byte cap refused ({refused})");
    Ok(())
}
