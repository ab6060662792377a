//! Capping a tool result for a model's context: [`CallToolResult::capped`].
//!
//! Every host that feeds tool results to a model has to stop one huge result from filling the
//! context, and each writes the same cut by hand. This one measures what a model would be
//! shown ([`CallToolResult::model_size`]: text bytes, the base64 of images and audio, embedded
//! resources' text or blob, a link's URI and name, unknown items' JSON, and the structured
//! content's JSON) and cuts to a byte budget:
//!
//! - content is kept in order while it fits; the text that does not fit is cut on a character
//!   boundary; an image, audio or blob that does not fit is replaced by a one-line summary
//!   (`[image/png image: 48213 bytes of base64 left out]`), or dropped when even that does not
//!   fit; an item nothing of which fits is dropped;
//! - the structured content is kept whole when it fits after the content, else dropped (a
//!   shortened JSON document would not parse; servers repeat it as text anyway);
//! - a last text item says what was cut (the [`CutNote`]'s `Display`), within the budget.
//!
//! The result never measures more than the budget, whatever the input (a property test
//! checks it). `is_error` and `_meta` are kept (`_meta` is not shown to a model).

use std::fmt;

use crate::protocol::types::{CallToolResult, Content, ResourceContents};

/// What [`CallToolResult::capped`] cut.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct CutNote {
    /// The result's [`model_size`](CallToolResult::model_size) before.
    pub original_bytes: usize,
    /// After (at most the budget).
    pub kept_bytes: usize,
    /// Text items (or embedded resources' text) cut short.
    pub texts_cut: usize,
    /// Images, audio and blobs replaced by a summary.
    pub media_summarised: usize,
    /// Content items left out entirely.
    pub items_dropped: usize,
    /// The structured content was left out.
    pub structured_dropped: bool,
}

impl fmt::Display for CutNote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "[tool result cut from {} to {} bytes:",
            self.original_bytes, self.kept_bytes
        )?;
        let mut parts = Vec::new();
        if self.texts_cut > 0 {
            parts.push(format!("{} text part(s) shortened", self.texts_cut));
        }
        if self.media_summarised > 0 {
            parts.push(format!(
                "{} media part(s) summarised",
                self.media_summarised
            ));
        }
        if self.items_dropped > 0 {
            parts.push(format!("{} part(s) left out", self.items_dropped));
        }
        if self.structured_dropped {
            parts.push("structured content left out".to_owned());
        }
        write!(f, " {}]", parts.join(", "))
    }
}

/// Room kept for the note at the end, when the budget allows.
const NOTE_RESERVE: usize = 160;

/// What a model is shown of one content item, in bytes.
fn item_size(item: &Content) -> usize {
    match item {
        Content::Text { text, .. } => text.len(),
        Content::Image {
            data, mime_type, ..
        }
        | Content::Audio {
            data, mime_type, ..
        } => data.len() + mime_type.len(),
        Content::ResourceLink(resource) => resource.uri.len() + resource.name.len(),
        Content::Resource { resource, .. } => resource_size(resource),
        other => json_size(other),
    }
}

fn resource_size(resource: &ResourceContents) -> usize {
    resource.uri.len()
        + resource.text.as_ref().map_or(0, String::len)
        + resource.blob.as_ref().map_or(0, String::len)
}

fn json_size<T: serde::Serialize + ?Sized>(value: &T) -> usize {
    serde_json::to_vec(value).map_or(0, |bytes| bytes.len())
}

/// `text` cut to at most `cap` bytes on a character boundary.
fn cut(text: &str, cap: usize) -> &str {
    crate::protocol::handler::cut(text, cap)
}

impl CallToolResult {
    /// What a model is shown of this result, in bytes: the measure
    /// [`capped`](CallToolResult::capped) keeps under its budget (see the `cap` module docs).
    pub fn model_size(&self) -> usize {
        self.content.iter().map(item_size).sum::<usize>()
            + self.structured_content.as_ref().map_or(0, json_size)
    }

    /// This result cut to at most `max_bytes` of [`model_size`](CallToolResult::model_size),
    /// and a note of what was cut (`None` when it already fit, and the result is unchanged).
    /// Text is cut on a character boundary, media replaced by a summary, the structured
    /// content dropped when it does not fit whole; a last text item carries the note when
    /// there is room.
    pub fn capped(&self, max_bytes: usize) -> (CallToolResult, Option<CutNote>) {
        let original = self.model_size();
        if original <= max_bytes {
            return (self.clone(), None);
        }
        let mut note = CutNote {
            original_bytes: original,
            ..CutNote::default()
        };
        let reserve = if max_bytes >= 2 * NOTE_RESERVE {
            NOTE_RESERVE
        } else {
            0
        };
        let mut left = max_bytes - reserve;
        let mut content = Vec::new();
        for item in &self.content {
            let size = item_size(item);
            if size <= left {
                content.push(item.clone());
                left -= size;
                continue;
            }
            let kept = match item {
                Content::Text { text, annotations } if left > 0 => {
                    note.texts_cut += 1;
                    Some(Content::Text {
                        text: cut(text, left).to_owned(),
                        annotations: annotations.clone(),
                    })
                }
                Content::Image {
                    data, mime_type, ..
                } => summary(&mut note, mime_type, "image", data.len(), left),
                Content::Audio {
                    data, mime_type, ..
                } => summary(&mut note, mime_type, "audio", data.len(), left),
                Content::Resource {
                    resource,
                    annotations,
                } if resource.blob.is_none()
                    && resource.text.is_some()
                    && left > resource.uri.len() =>
                {
                    note.texts_cut += 1;
                    let mut resource = resource.clone();
                    let room = left - resource.uri.len();
                    let text = resource.text.take().unwrap_or_default();
                    resource.text = Some(cut(&text, room).to_owned());
                    Some(Content::Resource {
                        resource,
                        annotations: annotations.clone(),
                    })
                }
                Content::Resource { resource, .. } if resource.blob.is_some() => {
                    let mime = resource.mime_type.as_deref().unwrap_or("binary");
                    let bytes = resource.blob.as_ref().map_or(0, String::len);
                    summary(&mut note, mime, "resource", bytes, left)
                }
                _ => None,
            };
            match kept {
                Some(kept) => {
                    left -= item_size(&kept);
                    content.push(kept);
                }
                None => note.items_dropped += 1,
            }
        }
        let structured = match &self.structured_content {
            Some(structured) if json_size(structured) <= left => {
                left -= json_size(structured);
                Some(structured.clone())
            }
            Some(_) => {
                note.structured_dropped = true;
                None
            }
            None => None,
        };
        let mut capped = CallToolResult {
            content,
            structured_content: structured,
            is_error: self.is_error,
            meta: self.meta.clone(),
        };
        left += reserve;
        note.kept_bytes = max_bytes - left;
        let text = note.to_string();
        if !text.is_empty() && left > 0 {
            let text = cut(&text, left).to_owned();
            note.kept_bytes += text.len();
            capped.content.push(Content::text(text));
        }
        (capped, Some(note))
    }
}

/// A one-line stand-in for media that does not fit, if the line fits.
fn summary(
    note: &mut CutNote,
    mime_type: &str,
    kind: &str,
    bytes: usize,
    left: usize,
) -> Option<Content> {
    let line = format!(
        "[{} {kind}: {bytes} bytes of base64 left out]",
        cut(mime_type, 64)
    );
    if line.len() > left {
        return None;
    }
    note.media_summarised += 1;
    Some(Content::text(line))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn image(bytes: usize) -> Content {
        Content::Image {
            data: "A".repeat(bytes),
            mime_type: "image/png".to_owned(),
            annotations: None,
        }
    }

    #[test]
    fn a_result_that_fits_is_unchanged() {
        let result = CallToolResult::text("hello");
        let (capped, note) = result.capped(5);
        assert_eq!(capped, result);
        assert!(note.is_none());
    }

    #[test]
    fn text_is_cut_on_a_char_boundary_with_a_note() {
        let result = CallToolResult::text("é".repeat(1000));
        let (capped, note) = result.capped(501);
        let note = note.unwrap();
        assert_eq!(note.texts_cut, 1);
        assert!(capped.model_size() <= 501);
        let first = capped.content[0].as_text().unwrap();
        assert!(first.chars().all(|c| c == 'é'));
        let last = capped.content.last().unwrap().as_text().unwrap();
        assert!(last.starts_with("[tool result cut from 2000"), "{last}");
    }

    #[test]
    fn media_is_summarised_and_structured_content_dropped() {
        let result = CallToolResult {
            content: vec![Content::text("see:"), image(100_000)],
            structured_content: Some(json!({"rows": "x".repeat(10_000)})),
            ..CallToolResult::default()
        };
        let (capped, note) = result.capped(1000);
        let note = note.unwrap();
        assert_eq!(note.media_summarised, 1);
        assert!(note.structured_dropped);
        assert!(capped.structured_content.is_none());
        assert!(
            capped.content[1]
                .as_text()
                .unwrap()
                .contains("image/png image: 100000 bytes")
        );
        assert!(capped.model_size() <= 1000);
        assert_eq!(note.kept_bytes, capped.model_size());
    }

    fn content() -> impl Strategy<Value = Content> {
        prop_oneof![
            ".{0,300}".prop_map(Content::text),
            (0usize..2000).prop_map(image),
            (".{0,40}", ".{0,400}").prop_map(|(uri, text)| Content::Resource {
                resource: ResourceContents::text(&uri, &text),
                annotations: None,
            }),
            (0usize..500).prop_map(|n| Content::Other(json!({"type": "x", "n": "y".repeat(n)}))),
        ]
    }

    proptest! {
        #[test]
        fn the_output_never_exceeds_the_cap(
            items in proptest::collection::vec(content(), 0..8),
            structured in proptest::option::of(".{0,500}"),
            cap in 0usize..3000,
        ) {
            let result = CallToolResult {
                content: items,
                structured_content: structured.map(|s| json!({ "s": s })),
                ..CallToolResult::default()
            };
            let (capped, note) = result.capped(cap);
            prop_assert!(capped.model_size() <= cap, "{} > {cap}", capped.model_size());
            match note {
                None => prop_assert_eq!(&capped, &result),
                Some(note) => {
                    prop_assert!(result.model_size() > cap);
                    prop_assert_eq!(note.kept_bytes, capped.model_size());
                }
            }
        }
    }
}
