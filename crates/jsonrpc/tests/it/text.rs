//! A response's result reaches its caller as its text, trimmed, and a response with both a
//! result and an error fails the call.

use serde_json::json;
use sidewire_jsonrpc::Router;

use crate::support::{strict, with_raw};

#[tokio::test]
async fn a_result_is_delivered_trimmed_and_a_result_with_an_error_fails_the_call() {
    let (peer, _task, mut raw) = with_raw(strict(), Router::new());
    for (answer, ok) in [
        // Whitespace around the result: the result, trimmed.
        (
            r#"{"jsonrpc":"2.0","id":ID,"result": {"a":[1,"}"]} }"#,
            true,
        ),
        // A result and an error: the call fails.
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
