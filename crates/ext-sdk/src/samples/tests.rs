use super::*;

#[test]
fn starter_rewrite_strips_the_prefix_and_appends_the_mark() {
    assert_eq!(
        starter_rewrite("starter: fix teh tests").as_deref(),
        Some("fix teh tests [rewritten by starter-extension]")
    );
    assert_eq!(
        starter_rewrite("starter: ").as_deref(),
        Some(" [rewritten by starter-extension]")
    );
    assert_eq!(starter_rewrite("fix the tests"), None);
    // The prefix must start the text and is case-sensitive.
    assert_eq!(starter_rewrite(" starter: x"), None);
    assert_eq!(starter_rewrite("Starter: x"), None);
    assert_eq!(starter_rewrite("starter:x"), None);
}

#[test]
fn samples_are_well_formed() {
    for extension in [starter(), allow_all(), status_card()] {
        extension
            .check()
            .expect("the samples register nothing twice");
        assert_eq!(extension.version, SAMPLE_VERSION);
    }
    assert_eq!(starter().name, STARTER_NAME);
    assert_eq!(allow_all().name, ALLOW_ALL_NAME);
    assert_eq!(status_card().name, STATUS_CARD_NAME);
}
