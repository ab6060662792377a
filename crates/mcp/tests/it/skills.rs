//! The skills extension's client part against the in-process mock: listing reads nothing, a
//! skill loads only when its files match its entry, and a tampered one is refused typed.

use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};
use sidewire_mcp::{NoHandler, ServerSpec};

use crate::support::*;

const SKILL: &str = "skill://pdf-processing/SKILL.md";
const FORMS: &str = "skill://pdf-processing/references/FORMS.md";
const SKILL_MD: &str = "---\nname: pdf-processing\ndescription: Extract PDF text\nmetadata:\n  author: me\n---\n\nBody.\n";
const FORMS_MD: &str = "Forms.\n";

fn file(uri: &str, text: &str) -> Value {
    let hex: String = Sha256::digest(text.as_bytes())
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    json!({"uri": uri, "digest": format!("sha256:{hex}"), "size": text.len()})
}

/// A mock listing one skill whose entry describes `SKILL_MD` and `FORMS_MD`, serving
/// `served` as its SKILL.md.
fn state(served: &str) -> MockState {
    let state = MockState::default();
    *lock(&state.skills) = vec![json!({
        "uri": SKILL,
        "frontmatter": {"name": "pdf-processing", "description": "Extract PDF text", "metadata": {"author": "me"}},
        "resources": [file(SKILL, SKILL_MD), file(FORMS, FORMS_MD)]
    })];
    lock(&state.files).insert(SKILL.to_owned(), served.to_owned());
    lock(&state.files).insert(FORMS.to_owned(), FORMS_MD.to_owned());
    state
}

fn spec() -> ServerSpec {
    ServerSpec::stdio("mock", "unused")
}

/// Lists the mock's one skill and loads it, expecting a refusal.
async fn load_error(state: MockState) -> sidewire_mcp::Error {
    let (client, _mock) = mock_with(state, spec(), NoHandler).await;
    let client = client.unwrap();
    let skills = within("skills/list", client.list_skills()).await.unwrap();
    within("load", client.load_skill(&skills[0]))
        .await
        .unwrap_err()
}

#[tokio::test]
async fn a_listed_skill_is_read_only_when_loaded_and_then_verified() {
    let (client, mock) = mock_with(state(SKILL_MD), spec(), NoHandler).await;
    let client = client.unwrap();
    let skills = within("skills/list", client.list_skills()).await.unwrap();
    assert_eq!(skills.len(), 1);
    let skill = &skills[0];
    assert_eq!(skill.name(), Some("pdf-processing"));
    assert_eq!(skill.resources.len(), 2);
    assert_eq!(
        mock.state.count("resources/read"),
        0,
        "listing reads nothing"
    );

    let text = within("load", client.load_skill(skill)).await.unwrap();
    assert_eq!(text, SKILL_MD);
    let forms = within("read", client.read_skill_file(skill, FORMS))
        .await
        .unwrap();
    assert_eq!(forms, FORMS_MD);
    assert_eq!(mock.state.count("resources/read"), 2);

    // A file the skill does not list is refused before anything is read.
    let err = within(
        "unlisted",
        client.read_skill_file(skill, "skill://pdf-processing/other.md"),
    )
    .await
    .unwrap_err();
    assert!(err.is_skill_unverified(), "{err:?}");
    assert_eq!(mock.state.count("resources/read"), 2);
}

#[tokio::test]
async fn a_skill_md_that_does_not_match_its_entry_is_refused() {
    let tampered = [
        // The body changed, the length did not: the digest catches it.
        SKILL_MD.replace("Body.", "Evil."),
        // Longer than the entry says.
        format!("{SKILL_MD}more\n"),
    ];
    for served in tampered {
        let err = load_error(state(&served)).await;
        assert!(err.is_skill_unverified(), "{served:?}: {err:?}");
        assert!(!err.is_remote());
    }
}

#[tokio::test]
async fn a_frontmatter_that_differs_from_the_entry_is_refused() {
    let served = SKILL_MD.replace("author: me", "author: someone else");
    let mut state = state(&served);
    // The entry's digest and size are the served file's: only the frontmatter disagrees.
    let skills = state.skills.get_mut().unwrap();
    skills[0]["resources"][0] = file(SKILL, &served);
    let err = load_error(state).await;
    assert!(err.is_skill_unverified(), "{err:?}");
}
