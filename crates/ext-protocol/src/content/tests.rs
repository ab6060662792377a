//! Fixtures and page rules of the content DTOs.

use crate::testkit::{accepts, check_dto, check_rejects};
use crate::{
    CONTENT_CHUNK_BYTES, ContentReadParams, ContentReadResult, Error, ExternalizedField,
    is_content_ref,
};

const SHA: &str = "5e4ce7b36ba37b78a5d5f9fd08e6b7b54ba6879d651aa46ec9e1d6fa24ebe30a";

fn page(offset: u64, data: &str, next: Option<u64>, total: u64) -> String {
    let next = next.map_or(String::new(), |n| format!(r#","nextOffset":{n}"#));
    format!(
        r#"{{"contentRef":"content_dd52f655b36f8402bb80800e","offset":{offset},
            "dataBase64":"{data}"{next},"totalBytes":{total},"sha256":"{SHA}","encoding":"utf8"}}"#
    )
}

#[test]
fn every_content_dto_round_trips_and_rejects_violations() {
    let mut cases = 0;
    cases += check_dto::<ExternalizedField>(
        &format!(
            r#"{{"jsonPointer":"/payload","contentRef":"content_dd52f655b36f8402bb80800e",
                "totalBytes":15,"sha256":"{SHA}"}}"#
        ),
        &format!(r#"{{"jsonPointer":"/p","contentRef":"c","totalBytes":0,"sha256":"{SHA}"}}"#),
    );
    cases += check_dto::<ContentReadParams>(
        r#"{"contentRef":"content_dd52f655b36f8402bb80800e","offset":0}"#,
        r#"{"contentRef":"x","offset":15}"#,
    );
    cases += check_dto::<ContentReadResult>(
        &page(0, "eyJt", Some(3), 15),
        &page(0, "eyJtZXNzYWdlcyI6W119", None, 15),
    );
    assert!(cases > 50, "only {cases} mutations");
}

#[test]
fn pages_are_consistent() {
    // The spec's example page, and a legal empty read at the end.
    let first = accepts::<ContentReadResult>(&page(0, "eyJtZXNzYWdlcyI6W119", None, 15));
    assert_eq!(first.page_len(), Some(15));
    accepts::<ContentReadResult>(&page(15, "", None, 15));
    accepts::<ContentReadResult>(&page(3, "ZXNzYQ==", Some(7), 15));
    check_rejects::<ContentReadResult>(&[
        (
            &page(0, "eyJt", None, 15),
            "params.nextOffset",
            Error::is_rule,
        ),
        (
            &page(0, "eyJt", Some(4), 15),
            "params.nextOffset",
            Error::is_rule,
        ),
        (
            &page(12, "eyJt", Some(15), 15),
            "params.nextOffset",
            Error::is_rule,
        ),
        (
            &page(14, "eyJt", None, 15),
            "params.dataBase64",
            Error::is_rule,
        ),
        (
            &page(0, "eyJ", None, 3),
            "params.dataBase64",
            Error::is_rule,
        ),
        (
            &page(0, "ey=t", None, 3),
            "params.dataBase64",
            Error::is_rule,
        ),
        (
            &page(0, "e===", None, 1),
            "params.dataBase64",
            Error::is_rule,
        ),
        (
            &page(0, "", None, 8_388_609),
            "params.totalBytes",
            Error::is_rule,
        ),
        (
            &page(0, "eyJt", Some(3), 15).replace("utf8", "utf-8"),
            "params.encoding",
            Error::is_enum,
        ),
        (
            &page(0, "eyJt", Some(3), 15).replace(SHA, &SHA.to_uppercase()),
            "params.sha256",
            Error::is_pattern,
        ),
    ]);
    let too_big = "AAAA".repeat(CONTENT_CHUNK_BYTES / 3 + 1);
    check_rejects::<ContentReadResult>(&[(
        &page(0, &too_big, Some(262_147), 8_000_000),
        "params.dataBase64",
        Error::is_rule,
    )]);
}

#[test]
fn content_ref_shape() {
    assert!(is_content_ref("content_dd52f655b36f8402bb80800e"));
    for bad in [
        "content_DD52F655B36F8402BB80800E",
        "content_dd52f655b36f8402bb80800",
        "content_dd52f655b36f8402bb80800e0",
        "contentdd52f655b36f8402bb80800e",
        "content_dd52f655b36f8402bb80800g",
    ] {
        assert!(!is_content_ref(bad), "{bad}");
    }
}
