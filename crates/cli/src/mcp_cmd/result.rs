//! A tool result in text mode, each part once: the content blocks (text as it is, an image or
//! audio clip as a one-line summary, never base64), then the structured content only when no
//! block is text, or when `--structured` asks for it. `--save DIR` writes the images, audio
//! and binary resources into DIR. (`--json` prints the whole result once, elsewhere.)
//!
//! Where the text goes decides how it is written ([`Parts`]): on a terminal each part is
//! escaped and a text's continuation lines are indented, so a peer cannot forge a line of
//! ours; piped or redirected, a text part is the tool's text itself, byte for byte (control
//! characters included: a file gets what the tool said), so `mcp call read_text_file path=f >
//! out` reproduces `f`.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use base64::Engine as _;
use sidewire_mcp::{CallToolResult, Content, ResourceContents};

use super::CONTENT_INDENT;
use crate::out::Out;
use crate::safe;

/// How a result is shown.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Show<'a> {
    /// Print the structured content even when a block is text.
    pub(super) structured: bool,
    /// Write binary parts here.
    pub(super) save: Option<&'a Path>,
}

/// The parts of a result on their way to stdout: on a terminal, one escaped line (or indented
/// block) each; piped, a text part byte for byte and each other part (a summary line of ours) on
/// a line of its own, after a newline only when the text before it did not end with one.
pub(super) struct Parts<'a> {
    out: &'a Out,
    /// Stdout is not a terminal: text parts go out as they are.
    verbatim: bool,
    /// Piped: what was written last did not end with a newline.
    open_line: bool,
}

impl<'a> Parts<'a> {
    pub(super) fn new(out: &'a Out) -> Self {
        Parts {
            out,
            verbatim: !out.is_terminal(),
            open_line: false,
        }
    }

    /// A peer's text part (a tool's text, a resource's text).
    pub(super) fn text(&mut self, text: &str) {
        if !self.verbatim {
            self.out.line(safe::block(text, CONTENT_INDENT));
            return;
        }
        self.close_line();
        self.out.verbatim(text);
        self.open_line = !text.is_empty() && !text.ends_with('\n');
    }

    /// A line of the CLI's own (a summary holding escaped peer values).
    pub(super) fn line(&mut self, line: impl AsRef<str>) {
        self.close_line();
        self.out.line(line);
    }

    /// Ends a piped text part that did not end its line, so the next part starts on its own.
    fn close_line(&mut self) {
        if std::mem::take(&mut self.open_line) {
            self.out.verbatim("\n");
        }
    }
}

/// Prints `result` (text mode).
pub(super) fn print(result: &CallToolResult, show: Show<'_>, out: &Out) -> anyhow::Result<()> {
    if let Some(dir) = show.save {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create --save directory {}", dir.display()))?;
    }
    let parts = &mut Parts::new(out);
    for (index, content) in result.content.iter().enumerate() {
        match content {
            Content::Text { text, .. } => parts.text(text),
            Content::Image {
                data, mime_type, ..
            } => binary("image", data, mime_type, index, show.save, parts)?,
            Content::Audio {
                data, mime_type, ..
            } => binary("audio", data, mime_type, index, show.save, parts)?,
            Content::Resource { resource, .. } => embedded(resource, index, show.save, parts)?,
            Content::ResourceLink(link) => parts.line(format!(
                "[resource link] {}{}",
                safe::line(&link.uri),
                if link.name.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", safe::line(&link.name))
                }
            )),
            other => parts.line(safe::block(
                &crate::builtin::content_text(other),
                CONTENT_INDENT,
            )),
        }
    }
    let has_text = result
        .content
        .iter()
        .any(|c| matches!(c, Content::Text { .. }));
    if let Some(structured) = &result.structured_content
        && (show.structured || !has_text)
    {
        parts.line(safe::json(structured));
    }
    Ok(())
}

/// An embedded resource: its text, or a summary of its blob.
fn embedded(
    resource: &ResourceContents,
    index: usize,
    save: Option<&Path>,
    parts: &mut Parts<'_>,
) -> anyhow::Result<()> {
    match (&resource.text, &resource.blob) {
        (Some(text), _) => parts.text(text),
        (None, Some(blob)) => {
            let mime = resource
                .mime_type
                .as_deref()
                .unwrap_or("application/octet-stream");
            binary("resource", blob, mime, index, save, parts)?;
        }
        (None, None) => parts.line(format!("[resource] {} (empty)", safe::line(&resource.uri))),
    }
    Ok(())
}

/// One line for base64 `data`: what, the MIME type, the decoded size, an image's dimensions
/// when its header says them; with `save`, the data is decoded into a file there.
fn binary(
    what: &str,
    data: &str,
    mime: &str,
    index: usize,
    save: Option<&Path>,
    parts: &mut Parts<'_>,
) -> anyhow::Result<()> {
    let mut line = format!("[{what} {}, {}", safe::line(mime), bytes(decoded_len(data)));
    if what == "image"
        && let Some((width, height)) = dimensions(data)
    {
        line.push_str(&format!(", {width}x{height}"));
    }
    line.push(']');
    match save {
        Some(dir) => {
            let path = save_to(dir, what, index, mime, data)?;
            line.push_str(&format!(" saved to {}", path.display()));
        }
        None => line.push_str(" (--save DIR writes it)"),
    }
    parts.line(line);
    Ok(())
}

/// Writes the decoded `data` to `DIR/<what>-<index>.<ext>`.
fn save_to(
    dir: &Path,
    what: &str,
    index: usize,
    mime: &str,
    data: &str,
) -> anyhow::Result<PathBuf> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data.trim())
        .with_context(|| format!("the {what} in part {index} is not valid base64"))?;
    let path = dir.join(format!("{what}-{index}.{}", extension(mime)));
    std::fs::write(&path, bytes).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(path)
}

/// A file extension for a MIME type (`bin` when unknown; never peer text in a file name).
fn extension(mime: &str) -> &'static str {
    match mime.split(';').next().unwrap_or_default().trim() {
        "image/png" => "png",
        "image/jpeg" => "jpg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        "image/svg+xml" => "svg",
        "audio/wav" | "audio/x-wav" | "audio/wave" => "wav",
        "audio/mpeg" => "mp3",
        "audio/ogg" => "ogg",
        "audio/flac" => "flac",
        "application/pdf" => "pdf",
        "application/json" => "json",
        "text/plain" => "txt",
        _ => "bin",
    }
}

/// The size base64 `data` decodes to, from its length alone.
fn decoded_len(data: &str) -> usize {
    let data = data.trim();
    let padding = data.bytes().rev().take_while(|b| *b == b'=').count();
    (data.len() / 4 * 3 + (data.len() % 4).saturating_sub(1)).saturating_sub(padding)
}

/// A byte count in words.
fn bytes(n: usize) -> String {
    #[allow(clippy::cast_precision_loss)]
    let f = n as f64;
    if n < 1024 {
        format!("{n} bytes")
    } else if n < 1024 * 1024 {
        format!("{:.1} KiB", f / 1024.0)
    } else {
        format!("{:.1} MiB", f / (1024.0 * 1024.0))
    }
}

/// A PNG's or GIF's width and height, from the first bytes only (nothing else is decoded).
fn dimensions(data: &str) -> Option<(u32, u32)> {
    let head = data.trim().get(..32)?;
    let head = base64::engine::general_purpose::STANDARD
        .decode(head)
        .ok()?;
    if head.starts_with(b"\x89PNG\r\n\x1a\n") && head.get(12..16) == Some(b"IHDR") {
        let width = u32::from_be_bytes(head.get(16..20)?.try_into().ok()?);
        let height = u32::from_be_bytes(head.get(20..24)?.try_into().ok()?);
        return Some((width, height));
    }
    if head.starts_with(b"GIF87a") || head.starts_with(b"GIF89a") {
        let width = u16::from_le_bytes(head.get(6..8)?.try_into().ok()?);
        let height = u16::from_le_bytes(head.get(8..10)?.try_into().ok()?);
        return Some((width.into(), height.into()));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_dimensions_come_from_the_header_alone() {
        let encode = |bytes: &[u8]| base64::engine::general_purpose::STANDARD.encode(bytes);
        for n in 0..10 {
            assert_eq!(decoded_len(&encode(&vec![0; n])), n, "{n}");
        }
        let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
        png.extend_from_slice(&640u32.to_be_bytes());
        png.extend_from_slice(&480u32.to_be_bytes());
        png.extend_from_slice(&[0; 20]);
        assert_eq!(dimensions(&encode(&png)), Some((640, 480)));
        let gif = b"GIF89a\x10\x00\x20\x00rest-of-the-header".to_vec();
        assert_eq!(dimensions(&encode(&gif)), Some((16, 32)));
        assert_eq!(dimensions(&encode(b"not an image at all, no header")), None);
        assert_eq!(dimensions("short"), None);
        assert_eq!(bytes(2048), "2.0 KiB");
        assert_eq!(extension("image/png"), "png");
        assert_eq!(extension("../../etc/passwd"), "bin");
    }
}
