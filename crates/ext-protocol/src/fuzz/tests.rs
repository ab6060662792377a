//! The fuzz checks on the checked-in seeds (`fuzz/seeds/<target>/`), and on every prefix of
//! each seed, so the invariants run in every `cargo test` and the seeds cannot go stale.

use std::path::PathBuf;

use super::{Checked, check_manifest, check_protocol, check_replacement, check_ui};
use crate::{Caller, HookPoint, Verdict};

/// The seeds of one target, by file name.
fn seeds(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/seeds")
        .join(target);
    let mut seeds: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|err| panic!("{}: {err}", dir.display()))
        .map(|entry| {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&path).unwrap())
        })
        .collect();
    seeds.sort();
    seeds
}

/// Every seed is accepted (so the fuzzer starts from deep inside the decoder), and no prefix of
/// one breaks an invariant (which walks the error paths of every member on the way).
fn check_seeds(target: &str, check: fn(&[u8]) -> Checked, at_least: usize) {
    let seeds = seeds(target);
    assert!(
        seeds.len() >= at_least,
        "{target}: only {} seeds",
        seeds.len()
    );
    for (name, data) in &seeds {
        assert_eq!(check(data), Checked::Accepted, "{target}/{name}");
        for cut in 0..data.len() {
            check(&data[..cut]);
        }
    }
}

#[test]
fn protocol_decode_accepts_its_seeds() {
    check_seeds("protocol_decode", check_protocol, 30);
}

#[test]
fn protocol_decode_seeds_cover_every_params_and_result_dto() {
    let mut covered = Vec::new();
    for (_, data) in seeds("protocol_decode") {
        let header = String::from_utf8_lossy(&data)
            .lines()
            .next()
            .unwrap()
            .to_owned();
        covered.push(header);
    }
    for method in crate::Method::ALL {
        let params = format!("{} params", method.as_str());
        assert!(covered.contains(&params), "no seed for {params}");
        if method.result_dto().is_some() {
            let result = format!("{} result", method.as_str());
            assert!(covered.contains(&result), "no seed for {result}");
        }
    }
}

#[test]
fn manifest_parse_accepts_its_seeds() {
    check_seeds("manifest_parse", check_manifest, 3);
}

#[test]
fn replacement_validate_accepts_its_seeds() {
    check_seeds("replacement_validate", check_replacement, 17);
    // Every point has a seed.
    let names: Vec<String> = seeds("replacement_validate")
        .into_iter()
        .map(|(name, _)| name)
        .collect();
    for point in HookPoint::ALL {
        assert!(
            names.iter().any(|n| n.starts_with(point.as_str())),
            "no seed for {point}"
        );
    }
}

#[test]
fn ui_params_accepts_its_seeds() {
    check_seeds("ui_params", check_ui, 10);
}

#[test]
fn a_chain_member_cannot_flip_the_host_decision_but_the_owner_can() {
    let point = HookPoint::PermissionDecision;
    let allow = serde_json::json!({"name": "shell", "hostDecision": "allow"});
    for (caller, verdict, passes) in [
        (Caller::Chain, Verdict::Deny, false),
        (Caller::Chain, Verdict::Allow, true),
        (Caller::SlotOwner, Verdict::Deny, true),
        (Caller::SlotOwner, Verdict::Allow, true),
    ] {
        let outcome = super::validated(point, &allow, caller, verdict);
        assert_eq!(outcome.is_some(), passes, "{caller:?} over {verdict}");
    }
    let data = b"permission.decision\n{\"name\":\"shell\",\"hostDecision\":\"allow\"}";
    assert_eq!(check_replacement(data), Checked::Accepted);
    // The received payloads themselves are valid replacements at every point.
    for point in HookPoint::ALL {
        for verdict in [Verdict::Allow, Verdict::Deny] {
            let received = super::received_payload(*point, verdict);
            let text = serde_json::to_string(&received).unwrap();
            let data = format!("{point}\n{text}");
            assert_eq!(
                check_replacement(data.as_bytes()),
                Checked::Accepted,
                "{data}"
            );
        }
    }
}

#[test]
fn headers_that_name_nothing_are_ignored_and_rejections_are_typed() {
    for data in [
        &b"no header at all"[..],
        b"extension/nothing params\n{}",
        b"extension/initialized result\n{}",
        b"extension/intercept both\n{}",
        b"input.receive chain\n{}",
        b"input.receiver\n{}",
        b"\xff params\n{}",
    ] {
        assert_eq!(check_protocol(data), Checked::Ignored, "{data:?}");
        assert_eq!(check_replacement(data), Checked::Ignored, "{data:?}");
    }
    // Only the UI methods belong to the UI target.
    assert_eq!(
        check_ui(b"extension/shutdown params\n{\"timeoutMillis\":1}"),
        Checked::Ignored
    );
    // Failures of each kind go through the rejection checks.
    for data in [
        &b"extension/intercept params\n{\"event\":\"input.receive\"}"[..],
        b"extension/initialize params\n{\"protocolId\":\"reasonix.extension.v2\"}",
        b"extension/initialize params\n",
        b"extension/initialize result\n{\"protocolVersion\":\"2\"}",
        b"extension/shutdown params\n{\"timeoutMillis\":1,\"timeoutMillis\":2}",
        b"host/content/read result\nnot json",
    ] {
        assert_eq!(check_protocol(data), Checked::Rejected, "{data:?}");
    }
    assert_eq!(check_manifest(b"{\"apiVersion\":1}"), Checked::Rejected);
    assert_eq!(check_manifest(b"\xff"), Checked::Ignored);
    assert_eq!(
        check_replacement(b"session.save\n{\"phase\":\"load\"}"),
        Checked::Rejected
    );
}

#[test]
fn a_number_in_a_replacement_survives_re_serialization_exactly() {
    // Found by `replacement_validate`: with serde_json's default (inexact) float parsing, the
    // replacement the host validated and the one it sent on differed in `temperature`.
    let data = concat!(
        "provider.request\n",
        r#"{"request":{"messages":[{"role":"user","content":"hi"}],"tools":[],"#,
        r#""temperature":8888888888000000000000000000000000000000000000000000000000000000000000000000000000000000000000002049638230412172386.7,"#,
        r#""maxTokens":2048}}"#
    );
    assert_eq!(check_replacement(data.as_bytes()), Checked::Accepted);
    // The same number anywhere the decoder reads one.
    let data = concat!(
        "extension/provider/stream/open params\n",
        r#"{"streamId":"s","providerRef":"plugin/p/x","request":{"messages":[],"tools":[],"#,
        r#""temperature":8.888888888e+114,"maxTokens":1},"seqBase":0}"#
    );
    assert_eq!(check_protocol(data.as_bytes()), Checked::Accepted);
}
