//! A tool result in text mode, each part once: the content blocks (text as it is, an image or
//! audio clip as a one-line summary, never base64), then the structured content only when no
//! block is text, or when `--structured` asks for it. `--save DIR` writes the images, audio
//! and binary resources into DIR. (`--json` prints the whole result once, elsewhere.)

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

/// Prints `result` (text mode).
pub(super) fn print(result: &CallToolResult, show: Show<'_>, out: &Out) -> anyhow::Result<()> {
    if let Some(dir) = show.save {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create --save directory {}", dir.display()))?;
    }
    for (index, content) in result.content.iter().enumerate() {
        match content {
            Content::Text { text, .. } => out.line(safe::block(text, CONTENT_INDENT)),
            Content::Image {
                data, mime_type, ..
            } => binary("image", data, mime_type, index, show.save, out)?,
            Content::Audio {
                data, mime_type, ..
            } => binary("audio", data, mime_type, index, show.save, out)?,
            Content::Resource { resource, .. } => embedded(resource, index, show.save, out)?,
            Content::ResourceLink(link) => out.line(format!(
                "[resource link] {}{}",
                safe::line(&link.uri),
                if link.name.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", safe::line(&link.name))
                }
            )),
            other => out.line(safe::block(
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
        out.line(safe::json(structured));
    }
    Ok(())
}

/// An embedded resource: its text, or a summary of its blob.
fn embedded(
    resource: &ResourceContents,
    index: usize,
    save: Option<&Path>,
    out: &Out,
) -> anyhow::Result<()> {
    match (&resource.text, &resource.blob) {
        (Some(text), _) => out.line(safe::block(text, CONTENT_INDENT)),
        (None, Some(blob)) => {
            let mime = resource
                .mime_type
                .as_deref()
                .unwrap_or("application/octet-stream");
            binary("resource", blob, mime, index, save, out)?;
        }
        (None, None) => out.line(format!("[resource] {} (empty)", safe::line(&resource.uri))),
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
    out: &Out,
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
    out.line(line);
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
