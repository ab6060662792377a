//! Externalization and `host/content/read` through real sidecars.

use serde_json::{Value, json};
use sha2::Digest;
use sidewire_ext_protocol::{EXTERNALIZE_FIELD_BYTES, HookPoint};

use crate::support::*;

/// An input payload whose compact JSON is exactly `bytes` long.
fn sized_input(bytes: usize) -> sidewire_ext_protocol::HookPayload {
    input(&"y".repeat(bytes - r#"{"text":""}"#.len()))
}

fn intercepts(env: &Env, file: &str) -> Vec<Value> {
    recorded(env, file)
        .into_iter()
        .filter(|f| f["method"] == "extension/intercept")
        .collect()
}

pub(crate) async fn payloads_over_64_kib_are_externalized_and_read_back_in_pages() {
    let env = Env::new();
    env.plugin("reader")
        .intercepts(&["input.receive"])
        .on("input.receive", json!("read_content"))
        .record("reader.jsonl")
        .install();
    let (runtime, _events) = env.boot().await;
    // Exactly the limit: inline. The reader finds nothing to read and blocks with an error.
    let inline = sized_input(EXTERNALIZE_FIELD_BYTES);
    let _ = runtime
        .intercept(HookPoint::InputReceive, inline)
        .await
        .unwrap();
    // One byte more: externalized, read back whole, hash checked by the sidecar.
    let big = sized_input(600_000);
    let expected = serde_json::to_string(&big).unwrap();
    let outcome = runtime
        .intercept(HookPoint::InputReceive, big)
        .await
        .unwrap();
    let sha: String = sha2::Sha256::digest(expected.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(
        outcome.blocked.unwrap().reason,
        format!("read 600000 bytes sha256 {sha}")
    );
    let just_over = sized_input(EXTERNALIZE_FIELD_BYTES + 1);
    runtime
        .intercept(HookPoint::InputReceive, just_over)
        .await
        .unwrap();
    env.finish(runtime).await;
    let seen = intercepts(&env, "reader.jsonl");
    assert!(seen[0]["params"]["payload"].is_object());
    assert!(seen[0]["params"].get("externalized").is_none());
    for (params, total) in [
        (&seen[1]["params"], 600_000),
        (&seen[2]["params"], EXTERNALIZE_FIELD_BYTES + 1),
    ] {
        assert!(params["payload"].is_null(), "{params}");
        let fields = params["externalized"].as_array().unwrap();
        assert_eq!(fields.len(), 1);
        assert_eq!(fields[0]["jsonPointer"], "/payload");
        assert_eq!(fields[0]["totalBytes"], total);
    }
    assert_eq!(seen[1]["params"]["externalized"][0]["sha256"], json!(sha));
    // The pages of the big read: at most 262,144 bytes, chained by nextOffset, the last
    // without it.
    let pages: Vec<Value> = recorded(&env, "reader.jsonl")
        .into_iter()
        .filter(|f| f["result"]["dataBase64"].is_string())
        .map(|f| f["result"].clone())
        .collect();
    let offsets: Vec<(u64, Option<u64>)> = pages
        .iter()
        .take(3)
        .map(|p| (p["offset"].as_u64().unwrap(), p["nextOffset"].as_u64()))
        .collect();
    assert_eq!(
        offsets,
        [
            (0, Some(262_144)),
            (262_144, Some(524_288)),
            (524_288, None)
        ]
    );
}

pub(crate) async fn reads_past_the_end_of_evicted_or_foreign_refs_expire() {
    let env = Env::new();
    let ref_file = env.path("ref.txt").display().to_string();
    env.plugin("own")
        .intercepts(&["input.receive", "tool.before", "tool.after"])
        .on("input.receive", json!({"decision":"continue"}))
        .on("tool.before", json!({"read": {"ref_file": ref_file}}))
        .on("tool.after", json!({"read": {"offset": 70_000}}))
        .record("own.jsonl")
        .install();
    env.plugin("other")
        .intercepts(&["compaction.complete"])
        .on(
            "compaction.complete",
            json!({"read": {"ref_file": ref_file}}),
        )
        .install();
    let (runtime, _events) = env.boot().await;
    let big = sized_input(EXTERNALIZE_FIELD_BYTES + 100);
    runtime
        .intercept(HookPoint::InputReceive, big.clone())
        .await
        .unwrap();
    let first = intercepts(&env, "own.jsonl")[0]["params"]["externalized"][0]["contentRef"]
        .as_str()
        .unwrap()
        .to_owned();
    std::fs::write(&ref_file, &first).unwrap();
    let tool = |after: bool| {
        let arguments = String::new();
        if after {
            sidewire_ext_protocol::HookPayload::ToolAfter(sidewire_ext_protocol::ToolAfterPayload {
                name: "t".into(),
                arguments,
                call_id: String::new(),
                result: "z".repeat(EXTERNALIZE_FIELD_BYTES),
                is_error: None,
            })
        } else {
            sidewire_ext_protocol::HookPayload::ToolBefore(
                sidewire_ext_protocol::ToolBeforePayload {
                    name: "t".into(),
                    arguments,
                    call_id: String::new(),
                },
            )
        }
    };
    let reason = |outcome: sidewire_ext_host::Outcome| outcome.blocked.unwrap().reason;
    // Still stored: readable, with the last page's shape.
    let got = reason(
        runtime
            .intercept(HookPoint::ToolBefore, tool(false))
            .await
            .unwrap(),
    );
    assert!(
        got.starts_with("page ") && got.contains("next null"),
        "{got}"
    );
    // Another connection's ref.
    let summary = HookPoint::CompactionComplete;
    let got = reason(
        runtime
            .intercept(
                summary,
                sidewire_ext_protocol::HookPayload::CompactionComplete(
                    sidewire_ext_protocol::CompactionCompletePayload {
                        summary: "s".into(),
                    },
                ),
            )
            .await
            .unwrap(),
    );
    assert_eq!(got, "content_ref_expired");
    // Past the end of its own (small enough) object: the tool.after payload is ~65.6 KB.
    let got = reason(
        runtime
            .intercept(HookPoint::ToolAfter, tool(true))
            .await
            .unwrap(),
    );
    assert_eq!(got, "content_ref_expired");
    // Evicted after 64 more objects.
    for _ in 0..64 {
        runtime
            .intercept(HookPoint::InputReceive, big.clone())
            .await
            .unwrap();
    }
    let got = reason(
        runtime
            .intercept(HookPoint::ToolBefore, tool(false))
            .await
            .unwrap(),
    );
    assert_eq!(got, "content_ref_expired");
    env.finish(runtime).await;
}
