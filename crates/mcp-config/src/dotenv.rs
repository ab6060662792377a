//! The `envFile` format (a dotenv file): `KEY=VALUE` lines, blank lines and `#` comments, an
//! optional `export ` prefix, values bare (a ` #` starts a comment, surrounding blanks
//! trimmed), in single quotes (literal) or in double quotes (`\n`, `\t`, `\"`, `\\` escapes).
//! Nothing in it is expanded. The file is read whole, at most [`MAX_ENV_FILE_BYTES`].

use crate::error::Error;

/// The largest `envFile` read (1 MiB).
pub const MAX_ENV_FILE_BYTES: usize = 1024 * 1024;

/// The pairs of a dotenv text, in order (a later key replaces an earlier one when applied).
/// Errors name `path` and the line, never a value.
pub(crate) fn parse(text: &str, path: &str) -> Result<Vec<(String, String)>, Error> {
    let mut pairs = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let at = || format!("{path} line {}", index + 1);
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line = line.strip_prefix("export ").map_or(line, str::trim_start);
        let Some((key, value)) = line.split_once('=') else {
            return Err(Error::syntax(format!("{}: expected KEY=VALUE", at())));
        };
        let key = key.trim();
        let valid = !key.is_empty()
            && !key.starts_with(|c: char| c.is_ascii_digit())
            && key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
        if !valid {
            return Err(Error::syntax(format!(
                "{}: {key:?} is not a variable name",
                at()
            )));
        }
        let value = value.trim_start();
        let value = if let Some(quoted) = value.strip_prefix('\'') {
            let end = quoted
                .find('\'')
                .ok_or_else(|| Error::syntax(format!("{}: a ' quote is not closed", at())))?;
            trailing(&quoted[end + 1..], &at)?;
            quoted[..end].to_owned()
        } else if let Some(quoted) = value.strip_prefix('"') {
            let (value, rest) = double_quoted(quoted)
                .ok_or_else(|| Error::syntax(format!("{}: a \" quote is not closed", at())))?;
            trailing(rest, &at)?;
            value
        } else {
            let end = value.find(" #").unwrap_or(value.len());
            value[..end].trim_end().to_owned()
        };
        pairs.push((key.to_owned(), value));
    }
    Ok(pairs)
}

/// What may follow a closing quote: blanks and a comment.
fn trailing(rest: &str, at: &dyn Fn() -> String) -> Result<(), Error> {
    let rest = rest.trim_start();
    if rest.is_empty() || rest.starts_with('#') {
        Ok(())
    } else {
        Err(Error::syntax(format!(
            "{}: unexpected text after the closing quote",
            at()
        )))
    }
}

/// A double-quoted value up to its closing quote, and the text after it.
fn double_quoted(text: &str) -> Option<(String, &str)> {
    let mut value = String::new();
    let mut chars = text.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Some((value, &text[i + 1..])),
            '\\' => match chars.next()?.1 {
                'n' => value.push('\n'),
                't' => value.push('\t'),
                'r' => value.push('\r'),
                other => value.push(other),
            },
            other => value.push(other),
        }
    }
    None
}
