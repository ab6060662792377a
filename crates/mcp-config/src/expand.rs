//! Variable expansion in config values: one pass over the text, each reference replaced from
//! the environment, the config's inputs or the few predefined names, never re-expanded, the
//! result capped at [`MAX_EXPANDED_BYTES`]. The rules are in the
//! [crate docs](crate#expansion).

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::Error;
use crate::types::{ConfigInput, ConfigVariable, InputResolver, VariableSource};

/// The most bytes one expanded value may have (64 KiB): a reference cannot make a header or an
/// argument of unbounded size.
pub const MAX_EXPANDED_BYTES: usize = 64 * 1024;

/// Which reference syntaxes a value takes besides `${...}` (which every dialect takes).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Syntax {
    /// opencode's `{env:NAME}`.
    pub(crate) opencode: bool,
    /// Gemini CLI's bare `$NAME` (in `env` values).
    pub(crate) bare: bool,
}

/// Looks a variable up in the environment.
pub(crate) type Env<'a> = &'a (dyn Fn(&str) -> Option<String> + Send + Sync);

/// Expands values for one config file.
pub(crate) struct Expander<'a> {
    pub(crate) env: Env<'a>,
    /// `${workspaceFolder}`.
    pub(crate) project: &'a Path,
    /// The inputs the file declares (VS Code `inputs[]`), by id.
    pub(crate) inputs: BTreeMap<String, ConfigInput>,
    pub(crate) resolver: Option<&'a dyn InputResolver>,
    /// The answers given so far: each input is asked for once per file.
    pub(crate) answers: BTreeMap<String, String>,
}

impl Expander<'_> {
    /// `text` with its references replaced; the variables used are appended to `used`, and
    /// the value each reference to a variable or an input gave (not the predefined names,
    /// which hold no secret) to `values`, so the caller can keep them out of what it shows.
    /// Errors name `path` (the server and the field) and the variable, never a value.
    pub(crate) fn expand(
        &mut self,
        text: &str,
        path: &str,
        syntax: Syntax,
        used: &mut Vec<ConfigVariable>,
        values: &mut Vec<String>,
    ) -> Result<String, Error> {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while !rest.is_empty() {
            let before = used.len();
            let (value, consumed) = if let Some(after) = rest.strip_prefix("${") {
                let end = after.find('}').ok_or_else(|| {
                    Error::unexpanded(format!("{path}: `${{` without its closing `}}`"))
                })?;
                let value = self.reference(&after[..end], path, used)?;
                (value, end + 3)
            } else if let Some(after) = rest.strip_prefix("{env:").filter(|_| syntax.opencode) {
                let end = after.find('}').ok_or_else(|| {
                    Error::unexpanded(format!("{path}: `{{env:` without its closing `}}`"))
                })?;
                let name = &after[..end];
                check_name(name, path, &format!("{{env:{name}}}"))?;
                (self.variable(name, None, path, used)?, end + 6)
            } else if let Some(after) = rest.strip_prefix('$').filter(|_| syntax.bare) {
                let len = after
                    .char_indices()
                    .find(|&(i, c)| {
                        !(c == '_' || c.is_ascii_alphabetic() || (i > 0 && c.is_ascii_digit()))
                    })
                    .map_or(after.len(), |(i, _)| i);
                if len == 0 {
                    ("$".to_owned(), 1)
                } else {
                    (self.variable(&after[..len], None, path, used)?, len + 1)
                }
            } else {
                let next = rest.chars().next().map_or(1, char::len_utf8);
                (rest[..next].to_owned(), next)
            };
            if out.len() + value.len() > MAX_EXPANDED_BYTES {
                return Err(Error::unexpanded(format!(
                    "{path}: the expanded value is longer than {} KiB",
                    MAX_EXPANDED_BYTES / 1024
                )));
            }
            let referenced = used[before..]
                .iter()
                .any(|variable| variable.source != VariableSource::Builtin);
            if referenced && !value.is_empty() {
                values.push(value.clone());
            }
            out.push_str(&value);
            rest = &rest[consumed..];
        }
        Ok(out)
    }

    /// The value of the reference inside `${...}`.
    fn reference(
        &mut self,
        reference: &str,
        path: &str,
        used: &mut Vec<ConfigVariable>,
    ) -> Result<String, Error> {
        let written = format!("${{{reference}}}");
        if reference.contains("${") {
            return Err(Error::unexpanded(format!(
                "{path}: `{written}` nests a reference; references are expanded in one pass"
            )));
        }
        let builtin = |name: &str, value: String, used: &mut Vec<ConfigVariable>| {
            used.push(ConfigVariable::new(name, VariableSource::Builtin));
            Ok(value)
        };
        match reference {
            "workspaceFolder" => {
                return builtin(reference, self.project.display().to_string(), used);
            }
            "workspaceFolderBasename" => {
                let base = self.project.file_name().unwrap_or_default();
                return builtin(reference, base.to_string_lossy().into_owned(), used);
            }
            "pathSeparator" | "/" => return builtin(reference, "/".to_owned(), used),
            "userHome" => {
                let home = (self.env)("HOME").filter(|home| !home.is_empty());
                let home = home.ok_or_else(|| {
                    Error::unexpanded(format!(
                        "{path}: `${{userHome}}` needs the environment variable HOME, which is not set"
                    ))
                })?;
                return builtin(reference, home, used);
            }
            _ => {}
        }
        if let Some(id) = reference.strip_prefix("input:") {
            return self.input(id, path, used);
        }
        let (name, default) = match reference.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (reference, None),
        };
        let name = name.strip_prefix("env:").unwrap_or(name);
        check_name(name, path, &written)?;
        self.variable(name, default, path, used)
    }

    /// An environment variable's value, or the default; unset without a default is an error.
    fn variable(
        &self,
        name: &str,
        default: Option<&str>,
        path: &str,
        used: &mut Vec<ConfigVariable>,
    ) -> Result<String, Error> {
        // As in a shell, `:-` also covers a variable that is set but empty.
        match ((self.env)(name), default) {
            (Some(value), Some(default)) if value.is_empty() => {
                used.push(ConfigVariable::new(name, VariableSource::Default));
                Ok(default.to_owned())
            }
            (Some(value), _) => {
                used.push(ConfigVariable::new(name, VariableSource::Environment));
                Ok(value)
            }
            (None, Some(default)) => {
                used.push(ConfigVariable::new(name, VariableSource::Default));
                Ok(default.to_owned())
            }
            (None, None) => Err(Error::unexpanded(format!(
                "{path}: the environment variable {name} is not set"
            ))),
        }
    }

    /// `${input:ID}`: the answer to a declared input, asked for once.
    fn input(
        &mut self,
        id: &str,
        path: &str,
        used: &mut Vec<ConfigVariable>,
    ) -> Result<String, Error> {
        let Some(input) = self.inputs.get(id) else {
            return Err(Error::unexpanded(format!(
                "{path}: `${{input:{id}}}` names no entry of `inputs`"
            )));
        };
        let answer = match self.answers.get(id) {
            Some(answer) => answer.clone(),
            None => {
                // The answer, else the input's `default` (as VS Code offers it), else an
                // error naming the input.
                let answer = match (self.resolver, &input.default) {
                    (Some(resolver), default) => resolver
                        .resolve(input)
                        .or_else(|| default.clone())
                        .ok_or_else(|| {
                            Error::unexpanded(format!("{path}: the input {id} was not answered"))
                        })?,
                    (None, Some(default)) => default.clone(),
                    (None, None) => {
                        return Err(Error::unexpanded(format!(
                            "{path}: the input {id} needs an answer, and there is no one to \
                             ask (not a terminal) and no `default`"
                        )));
                    }
                };
                self.answers.insert(id.to_owned(), answer.clone());
                answer
            }
        };
        used.push(ConfigVariable::new(id, VariableSource::Input));
        Ok(answer)
    }
}

/// A variable name: ASCII letters, digits and `_`, not empty.
fn check_name(name: &str, path: &str, written: &str) -> Result<(), Error> {
    let valid = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if valid {
        Ok(())
    } else {
        Err(Error::unexpanded(format!(
            "{path}: `{written}` is not a variable reference (`${{NAME}}`, `${{NAME:-default}}`, \
             `${{env:NAME}}`, `${{input:ID}}`, `${{userHome}}` or `${{workspaceFolder}}`)"
        )))
    }
}
