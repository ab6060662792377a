//! The client's part of the skills extension (`io.modelcontextprotocol/skills`, SEP-2640):
//! listing the skills a server offers, and loading one, verified against its listing entry.
//!
//! A skill is a directory of files under `skill://{name}/`; its listing entry ([`Skill`]) names
//! every file with its SHA-256 digest and byte size, and carries the frontmatter of its
//! `SKILL.md`. Nothing is read when skills are listed: a host reads a skill's files only when it
//! loads the skill. Every file read through [`Client::read_skill_file`] is checked against its
//! entry before its text is handed out: the byte length against `size`, the bytes against
//! `digest` (`sha256:{64 lowercase hex}`), and for `SKILL.md` the YAML frontmatter against the
//! entry's `frontmatter`, field by field. Any discrepancy fails the read
//! ([`Error::is_skill_unverified`]) and the content is dropped unused.
//!
//! The frontmatter reader takes the YAML this needs and no more: block mappings (nested by
//! indentation), block sequences, and scalars (plain, single- or double-quoted), with comments.
//! Anything else (flow collections, block scalars, anchors, tags) cannot be compared, which
//! fails the verification too: a skill that cannot be checked is not loaded.

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest as _, Sha256};

use crate::error::Kind;
use crate::protocol::types::ReadResourceResult;
use crate::{Client, Error};

/// The extension's identifier (in `capabilities.extensions`).
pub const SKILLS_EXTENSION: &str = "io.modelcontextprotocol/skills";

/// The most lines of frontmatter read; a longer block is refused.
const MAX_FRONTMATTER_LINES: usize = 1_000;

/// One skill of a `skills/list` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Skill {
    /// The URI of its `SKILL.md` (`skill://{name}/SKILL.md`).
    pub uri: String,
    /// The frontmatter of its `SKILL.md` (at least `name` and `description`).
    #[serde(default)]
    pub frontmatter: Map<String, Value>,
    /// Every file of the skill, its `SKILL.md` included.
    #[serde(default)]
    pub resources: Vec<SkillFile>,
}

impl Skill {
    /// The skill's name (`frontmatter.name`).
    pub fn name(&self) -> Option<&str> {
        self.frontmatter.get("name")?.as_str()
    }

    /// The skill's description (`frontmatter.description`).
    pub fn description(&self) -> Option<&str> {
        self.frontmatter.get("description")?.as_str()
    }

    /// The entry of the file at `uri`, when the skill lists one.
    pub fn file(&self, uri: &str) -> Option<&SkillFile> {
        self.resources.iter().find(|file| file.uri == uri)
    }
}

/// One file of a skill, as its listing entry names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SkillFile {
    /// Its URI (under the skill's `skill://{name}/`).
    pub uri: String,
    /// `sha256:{hex}` of its bytes.
    pub digest: String,
    /// Its length in bytes.
    pub size: u64,
}

impl Client {
    /// Loads a skill: reads its `SKILL.md` and returns the text once it matches the entry (see
    /// [`read_skill_file`](Client::read_skill_file)).
    ///
    /// # Errors
    ///
    /// As for [`read_skill_file`](Client::read_skill_file).
    ///
    /// # Cancel safety
    ///
    /// Dropping the future cancels the read (the server is told).
    pub async fn load_skill(&self, skill: &Skill) -> Result<String, Error> {
        self.read_skill_file(skill, &skill.uri).await
    }

    /// Reads the file at `uri` of `skill` (`resources/read`) and returns its text once it is
    /// verified against the skill's entry: its size and digest, and for the skill's `SKILL.md`
    /// its frontmatter. Unverified content is never returned.
    ///
    /// # Errors
    ///
    /// [`Error::is_skill_unverified`] when the skill does not list `uri`, or the content does
    /// not match its entry; else as for [`read_resource`](Client::read_resource).
    ///
    /// # Cancel safety
    ///
    /// Dropping the future cancels the read (the server is told).
    pub async fn read_skill_file(&self, skill: &Skill, uri: &str) -> Result<String, Error> {
        let unverified = |why: String| {
            Error::new(Kind::SkillUnverified {
                uri: uri.to_owned(),
                why,
            })
            .with_server(&std::sync::Arc::from(self.name()))
        };
        let Some(entry) = skill.file(uri) else {
            return Err(unverified(format!(
                "the skill {:?} does not list this file",
                skill.uri
            )));
        };
        let result = self.read_resource(uri).await?;
        let check = if uri == skill.uri {
            Some(&skill.frontmatter)
        } else {
            None
        };
        verify(entry, check, &result).map_err(unverified)
    }
}

/// The text of `result` for `entry`, when it matches the entry (and, given `frontmatter`, its
/// YAML frontmatter matches that); else why not.
fn verify(
    entry: &SkillFile,
    frontmatter: Option<&Map<String, Value>>,
    result: &ReadResourceResult,
) -> Result<String, String> {
    let contents = result
        .contents
        .iter()
        .find(|contents| contents.uri == entry.uri)
        .or(match result.contents.as_slice() {
            [only] => Some(only),
            _ => None,
        })
        .ok_or_else(|| "the read returned no contents for this file".to_owned())?;
    let bytes = match (&contents.text, &contents.blob) {
        (Some(text), _) => text.as_bytes().to_vec(),
        (None, Some(blob)) => base64::engine::general_purpose::STANDARD
            .decode(blob)
            .map_err(|err| format!("the blob is not base64: {err}"))?,
        (None, None) => return Err("the read returned neither text nor a blob".to_owned()),
    };
    if bytes.len() as u64 != entry.size {
        return Err(format!(
            "{} bytes where the entry says {}",
            bytes.len(),
            entry.size
        ));
    }
    let Some(hex) = entry.digest.strip_prefix("sha256:") else {
        return Err(format!(
            "the digest {:?} is not sha256:{{hex}}",
            entry.digest
        ));
    };
    let actual = Sha256::digest(&bytes);
    let actual: String = actual.iter().map(|byte| format!("{byte:02x}")).collect();
    if !hex.eq_ignore_ascii_case(&actual) {
        return Err(format!(
            "the content's digest is sha256:{actual}, the entry's {}",
            entry.digest
        ));
    }
    let text = String::from_utf8(bytes).map_err(|_| "the file is not UTF-8 text".to_owned())?;
    if let Some(expected) = frontmatter {
        let found = read_frontmatter(&text)?;
        compare(expected, &found)?;
    }
    Ok(text)
}

/// Compares the entry's frontmatter with the file's, field by field (an absent field equals
/// `null`). Numbers compare as JSON values: `1` and `1.0` differ, which can only refuse a skill,
/// never load a changed one.
fn compare(entry: &Map<String, Value>, file: &Map<String, Value>) -> Result<(), String> {
    let null = Value::Null;
    for key in entry.keys().chain(file.keys()) {
        let (a, b) = (
            entry.get(key).unwrap_or(&null),
            file.get(key).unwrap_or(&null),
        );
        if a != b {
            return Err(format!(
                "the frontmatter's {key:?} is {b} in the file but {a} in the entry"
            ));
        }
    }
    Ok(())
}

/// The YAML frontmatter of a `SKILL.md`: the block between a first line `---` and the next
/// `---` line, as a mapping.
fn read_frontmatter(text: &str) -> Result<Map<String, Value>, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.lines();
    if lines.next().map(str::trim_end) != Some("---") {
        return Err("the file does not begin with a --- frontmatter block".to_owned());
    }
    let mut block = Vec::new();
    for line in lines {
        if line.trim_end() == "---" {
            let mut parser = Yaml {
                lines: block,
                at: 0,
            };
            return match parser.node(0)? {
                Value::Object(map) if parser.at == parser.lines.len() => Ok(map),
                Value::Object(_) => Err("the frontmatter has text past its mapping".to_owned()),
                Value::Null => Ok(Map::new()),
                _ => Err("the frontmatter is not a mapping".to_owned()),
            };
        }
        if block.len() == MAX_FRONTMATTER_LINES {
            return Err(format!(
                "the frontmatter has more than {MAX_FRONTMATTER_LINES} lines"
            ));
        }
        // Blank lines and comment lines carry nothing.
        let trimmed = line.trim_start();
        if !(trimmed.is_empty() || trimmed.starts_with('#')) {
            if line.starts_with('\t') {
                return Err("the frontmatter indents with a tab".to_owned());
            }
            block.push((line.len() - trimmed.len(), trimmed.trim_end()));
        }
    }
    Err("the frontmatter block does not end with ---".to_owned())
}

/// The subset of YAML block syntax a frontmatter needs, over (indent, text) lines without
/// blanks or comments.
struct Yaml<'a> {
    lines: Vec<(usize, &'a str)>,
    at: usize,
}

impl Yaml<'_> {
    /// The node whose lines start here, indented at least `min`: a mapping, a sequence, or
    /// nothing (`null`).
    fn node(&mut self, min: usize) -> Result<Value, String> {
        let Some(&(indent, text)) = self.lines.get(self.at) else {
            return Ok(Value::Null);
        };
        if indent < min {
            return Ok(Value::Null);
        }
        if text == "-" || text.starts_with("- ") {
            self.sequence(indent)
        } else {
            self.mapping(indent)
        }
    }

    fn mapping(&mut self, indent: usize) -> Result<Value, String> {
        let mut map = Map::new();
        while let Some(&(at, text)) = self.lines.get(self.at) {
            if at < indent {
                break;
            }
            if at > indent {
                return Err(format!("unexpected indentation at {text:?}"));
            }
            let (key, rest) = split_key(text)?;
            self.at += 1;
            let value = if rest.is_empty() {
                // A nested block: deeper lines, or a sequence at the same indent.
                match self.lines.get(self.at) {
                    Some(&(next, line))
                        if next > indent
                            || (next == indent && (line == "-" || line.starts_with("- "))) =>
                    {
                        self.node(next)?
                    }
                    _ => Value::Null,
                }
            } else {
                scalar(rest)?
            };
            if map.insert(key.clone(), value).is_some() {
                return Err(format!("the key {key:?} appears twice"));
            }
        }
        Ok(Value::Object(map))
    }

    fn sequence(&mut self, indent: usize) -> Result<Value, String> {
        let mut items = Vec::new();
        while let Some(&(at, text)) = self.lines.get(self.at) {
            if at != indent || !(text == "-" || text.starts_with("- ")) {
                if at > indent {
                    return Err(format!("unexpected indentation at {text:?}"));
                }
                break;
            }
            let rest = text[1..].trim_start();
            self.at += 1;
            items.push(match rest {
                "" => match self.lines.get(self.at) {
                    Some(&(next, _)) if next > indent => self.node(next)?,
                    _ => Value::Null,
                },
                rest if split_key(rest).is_ok() && !starts_quoted(rest) => {
                    return Err(format!(
                        "a mapping inside a sequence item ({rest:?}) is not read"
                    ));
                }
                rest => scalar(rest)?,
            });
        }
        Ok(Value::Array(items))
    }
}

fn starts_quoted(text: &str) -> bool {
    text.starts_with('"') || text.starts_with('\'')
}

/// `key: rest` (the key plain or quoted).
fn split_key(text: &str) -> Result<(String, &str), String> {
    if starts_quoted(text) {
        let (key, rest) = quoted(text)?;
        let Some(rest) = rest.strip_prefix(':') else {
            return Err(format!("no ':' after the key in {text:?}"));
        };
        return Ok((key, rest.trim()));
    }
    let colon = text
        .char_indices()
        .find(|&(i, c)| c == ':' && text[i + 1..].chars().next().is_none_or(|n| n == ' '))
        .map(|(i, _)| i)
        .ok_or_else(|| format!("{text:?} is not a `key: value` line"))?;
    let key = text[..colon].trim_end();
    if key.is_empty() || key.starts_with(['[', '{', '&', '*', '!', '?', '|', '>']) {
        return Err(format!("the key of {text:?} is not one this reader takes"));
    }
    Ok((key.to_owned(), text[colon + 1..].trim()))
}

/// A quoted scalar at the start of `text`, and what follows it.
fn quoted(text: &str) -> Result<(String, &str), String> {
    let mut out = String::new();
    let mut chars = text.char_indices();
    let Some((_, quote)) = chars.next() else {
        return Err("an empty scalar".to_owned());
    };
    while let Some((i, c)) = chars.next() {
        match (quote, c) {
            ('\'', '\'') => {
                if text[i + 1..].starts_with('\'') {
                    chars.next();
                    out.push('\'');
                } else {
                    return Ok((out, &text[i + 1..]));
                }
            }
            ('"', '"') => return Ok((out, &text[i + 1..])),
            ('"', '\\') => {
                let escaped = match chars.next().map(|(_, c)| c) {
                    Some('"') => '"',
                    Some('\\') => '\\',
                    Some('/') => '/',
                    Some('n') => '\n',
                    Some('t') => '\t',
                    Some('r') => '\r',
                    Some('0') => '\0',
                    Some('u') => {
                        let hex: String = chars.by_ref().take(4).map(|(_, c)| c).collect();
                        u32::from_str_radix(&hex, 16)
                            .ok()
                            .and_then(char::from_u32)
                            .ok_or_else(|| format!("a bad \\u escape in {text:?}"))?
                    }
                    other => return Err(format!("the escape \\{other:?} is not read")),
                };
                out.push(escaped);
            }
            _ => out.push(c),
        }
    }
    Err(format!("the quoted scalar {text:?} does not end"))
}

/// A scalar value, resolved as YAML 1.2's core schema does (`null`, booleans, numbers, else
/// text).
fn scalar(text: &str) -> Result<Value, String> {
    if starts_quoted(text) {
        let (value, rest) = quoted(text)?;
        let rest = rest.trim();
        if !(rest.is_empty() || rest.starts_with('#')) {
            return Err(format!("text after the quoted scalar {text:?}"));
        }
        return Ok(Value::String(value));
    }
    // A comment starts at ` #`.
    let text = match text.find(" #") {
        Some(at) => text[..at].trim_end(),
        None => text,
    };
    if text.starts_with(['[', '{', '|', '>', '&', '*', '!', '%', '@', '`']) {
        return Err(format!(
            "the value {text:?} is YAML this reader does not take"
        ));
    }
    Ok(match text {
        "" | "~" | "null" | "Null" | "NULL" => Value::Null,
        "true" | "True" | "TRUE" => Value::Bool(true),
        "false" | "False" | "FALSE" => Value::Bool(false),
        _ => number(text).unwrap_or_else(|| Value::String(text.to_owned())),
    })
}

/// A YAML core-schema number.
fn number(text: &str) -> Option<Value> {
    let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
    if digits.is_empty() || !digits.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
        return None;
    }
    if digits.bytes().all(|b| b.is_ascii_digit()) {
        return text
            .trim_start_matches('+')
            .parse::<i64>()
            .ok()
            .map(Value::from);
    }
    if !digits
        .bytes()
        .all(|b| b.is_ascii_digit() || b".eE+-".contains(&b))
    {
        return None;
    }
    let value: f64 = text.parse().ok()?;
    serde_json::Number::from_f64(value).map(Value::Number)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::ResourceContents;

    const SKILL_MD: &str = "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\n---\n\nSkill body.\n";

    fn digest(text: &str) -> String {
        let hash = Sha256::digest(text.as_bytes());
        format!(
            "sha256:{}",
            hash.iter().map(|b| format!("{b:02x}")).collect::<String>()
        )
    }

    fn entry(text: &str) -> SkillFile {
        SkillFile {
            uri: "skill://pdf-processing/SKILL.md".to_owned(),
            digest: digest(text),
            size: text.len() as u64,
        }
    }

    fn frontmatter() -> Map<String, Value> {
        let Value::Object(map) = json!({
            "name": "pdf-processing",
            "description": "Extract, fill, and assemble PDF documents"
        }) else {
            unreachable!()
        };
        map
    }

    fn read(text: &str) -> ReadResourceResult {
        ReadResourceResult {
            contents: vec![ResourceContents::text(
                "skill://pdf-processing/SKILL.md",
                text,
            )],
        }
    }

    #[test]
    fn a_file_that_matches_its_entry_is_read() {
        let text = verify(&entry(SKILL_MD), Some(&frontmatter()), &read(SKILL_MD)).unwrap();
        assert_eq!(text, SKILL_MD);
    }

    #[test]
    fn a_tampered_body_fails_the_digest() {
        let served = SKILL_MD.replace("Skill body.", "Evil body!!");
        assert_eq!(served.len(), SKILL_MD.len());
        let why = verify(&entry(SKILL_MD), Some(&frontmatter()), &read(&served)).unwrap_err();
        assert!(why.contains("digest"), "{why}");
    }

    #[test]
    fn a_longer_file_fails_the_size() {
        let served = format!("{SKILL_MD}extra bytes\n");
        let why = verify(&entry(SKILL_MD), None, &read(&served)).unwrap_err();
        assert!(why.contains("bytes"), "{why}");
    }

    #[test]
    fn a_changed_frontmatter_fails_even_with_a_matching_digest() {
        let served = SKILL_MD.replace(
            "description: Extract, fill, and assemble PDF documents",
            "description: Exfiltrate credentials",
        );
        // The entry's digest and size are of the served file: only the frontmatter differs.
        let why = verify(&entry(&served), Some(&frontmatter()), &read(&served)).unwrap_err();
        assert!(why.contains("description"), "{why}");
        // A supporting file has no frontmatter to compare.
        assert!(verify(&entry(&served), None, &read(&served)).is_ok());
    }

    #[test]
    fn frontmatter_yaml_is_read() {
        let text = "\u{feff}---\n# a comment\nname: 'it''s'\ndescription: \"a \\\"b\\\" \\u00e9\" # note\nversion: 1.5\ncount: 3\nflag: true\nnothing:\nmetadata:\n  author: me\n  tags:\n    - a\n    - \"b\"\nlist:\n- x\n- 2\n---\nbody\n";
        let found = read_frontmatter(text).unwrap();
        assert_eq!(
            Value::Object(found),
            json!({
                "name": "it's",
                "description": "a \"b\" é",
                "version": 1.5,
                "count": 3,
                "flag": true,
                "nothing": null,
                "metadata": {"author": "me", "tags": ["a", "b"]},
                "list": ["x", 2]
            })
        );
    }

    #[test]
    fn frontmatter_this_reader_cannot_compare_fails() {
        for text in [
            "no frontmatter\n",
            "---\nname: x\n",
            "---\nname: [a, b]\n---\n",
            "---\nname: |\n  block\n---\n",
            "---\nname: &a x\n---\n",
            "---\nname: x\nname: y\n---\n",
            "---\nname: x\n   deeper: y\n---\n",
            "---\n- a\n---\n",
            "---\nname: \"open\n---\n",
        ] {
            assert!(read_frontmatter(text).is_err(), "{text:?}");
        }
        let long = format!("---\n{}---\n", "a: b\n".repeat(MAX_FRONTMATTER_LINES + 1));
        assert!(read_frontmatter(&long).is_err());
        let at_cap = format!(
            "---\n{}---\n",
            (0..MAX_FRONTMATTER_LINES)
                .map(|i| format!("k{i}: v\n"))
                .collect::<String>()
        );
        assert_eq!(
            read_frontmatter(&at_cap).unwrap().len(),
            MAX_FRONTMATTER_LINES
        );
    }

    #[test]
    fn fields_compare_as_json_values() {
        let file = read_frontmatter("---\nname: x\nn: 1\nf: 1.5\n---\n").unwrap();
        let Value::Object(entry) = json!({"name": "x", "n": 1, "f": 1.5}) else {
            unreachable!()
        };
        assert!(compare(&entry, &file).is_ok());
        let Value::Object(float) = json!({"name": "x", "n": 1.0, "f": 1.5}) else {
            unreachable!()
        };
        assert!(compare(&float, &file).is_err());
        let Value::Object(more) = json!({"name": "x", "n": 1, "f": 1.5, "extra": "y"}) else {
            unreachable!()
        };
        assert!(compare(&more, &file).is_err());
        let Value::Object(null) = json!({"name": "x", "n": 1, "f": 1.5, "extra": null}) else {
            unreachable!()
        };
        assert!(compare(&null, &file).is_ok());
    }

    #[test]
    fn a_skill_entry_decodes() {
        let skill: Skill = serde_json::from_value(json!({
            "uri": "skill://pdf-processing/SKILL.md",
            "frontmatter": {"name": "pdf-processing", "description": "d"},
            "resources": [{"uri": "skill://pdf-processing/SKILL.md", "digest": "sha256:00", "size": 3}]
        }))
        .unwrap();
        assert_eq!(skill.name(), Some("pdf-processing"));
        assert_eq!(
            skill.file("skill://pdf-processing/SKILL.md").unwrap().size,
            3
        );
        assert!(skill.file("skill://pdf-processing/other").is_none());
    }
}
