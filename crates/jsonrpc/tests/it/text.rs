//! The quick way in for a response in the canonical shape: its result checked but the frame
//! not parsed whole; and the usual way for everything it does not take.

use serde_json::json;
use sidewire_jsonrpc::Router;

use crate::support::{strict, with_raw};

#[tokio::test]
async fn a_canonical_response_is_delivered_and_one_with_more_members_is_judged_as_before() {
    let (peer, _task, mut raw) = with_raw(strict(), Router::new());
    for (answer, ok) in [
        // The canonical shape, whitespace around the result: the result, trimmed.
        (
            r#"{"jsonrpc":"2.0","id":ID,"result": {"a":[1,"}"]} }"#,
            true,
        ),
        // A result and an error: the canonical shape until the result is read; the usual
        // way finds both and fails the call.
        (
            r#"{"jsonrpc":"2.0","id":ID,"result":1,"error":{"code":1,"message":"m"}}"#,
            false,
        ),
    ] {
        let call = {
            let peer = peer.clone();
            tokio::spawn(async move {
                let options = sidewire_jsonrpc::CallOptions::default();
                let raw = peer.call("m", Some(&json!({})), options).await?;
                Ok::<_, sidewire_jsonrpc::Error>(raw.get().to_owned())
            })
        };
        let id = raw.recv().await["id"].clone();
        raw.send(&answer.replace("ID", &id.to_string())).await;
        let outcome = crate::support::within("the call", call).await.unwrap();
        if ok {
            assert_eq!(outcome.unwrap(), r#"{"a":[1,"}"]}"#);
        } else {
            assert!(outcome.unwrap_err().is_invalid_response());
        }
    }
}
