//! [`Icon`]: the `icons` a 2025-11-25 server may give its tools, prompts, resources, resource
//! templates and itself (`serverInfo`).
//!
//! Kept as the server sent them and never fetched: an icon's `src` is peer text (an `https:`
//! or `data:` URI by the spec, but anything may arrive), which a host must check before it
//! loads or shows it. Icons count towards a listing's byte cap like every other member of an
//! item, so they are bounded with it.

use serde::{Deserialize, Serialize};

/// One icon of a tool, prompt, resource, resource template or implementation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Icon {
    /// Where the image is: a URI (`https:`, `data:`), as the server wrote it. Peer text.
    pub src: String,
    /// Its MIME type (`image/png`, `image/svg+xml`, ...), when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The sizes it is drawn for (`"48x48"`, `"any"`), when given.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sizes: Vec<String>,
    /// The background it is meant for (`"light"`, `"dark"`), when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theme: Option<String>,
}

impl Icon {
    /// An icon at `src` (for mock servers and tests).
    pub fn new(src: impl Into<String>) -> Self {
        Icon {
            src: src.into(),
            mime_type: None,
            sizes: Vec::new(),
            theme: None,
        }
    }
}
