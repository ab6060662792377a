//! Reading typed members out of a parsed document (JSON, or TOML turned into JSON values), each
//! error naming the member's path: the helpers every dialect shares.

use std::time::Duration;

use serde_json::{Map, Value};

use sidewire_mcp::{Restart, RestartPolicy};

use crate::error::Error;
use crate::text;

/// A unit a dialect writes a duration in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unit {
    Seconds,
    Millis,
}

pub(crate) fn object<'a>(value: &'a Value, path: &str) -> Result<&'a Map<String, Value>, Error> {
    match value {
        Value::Object(map) => Ok(map),
        other => Err(expected(path, "an object", other)),
    }
}

/// The member, `null` counting as absent.
pub(crate) fn member<'a>(entry: &'a Map<String, Value>, name: &str) -> Option<&'a Value> {
    entry.get(name).filter(|value| !value.is_null())
}

pub(crate) fn optional_string<'a>(
    entry: &'a Map<String, Value>,
    name: &str,
    path: &str,
) -> Result<Option<&'a str>, Error> {
    match member(entry, name) {
        None => Ok(None),
        Some(Value::String(text)) => Ok(Some(text)),
        Some(other) => Err(expected(path, "a string", other)),
    }
}

pub(crate) fn optional_bool(
    entry: &Map<String, Value>,
    name: &str,
    path: &str,
) -> Result<Option<bool>, Error> {
    match member(entry, name) {
        None => Ok(None),
        Some(Value::Bool(on)) => Ok(Some(*on)),
        Some(other) => Err(expected(path, "a boolean", other)),
    }
}

/// An array of strings, each with its path (`path[i]`).
pub(crate) fn string_array<'a>(
    entry: &'a Map<String, Value>,
    name: &str,
    path: &str,
) -> Result<Option<Vec<(&'a str, String)>>, Error> {
    let Some(value) = member(entry, name) else {
        return Ok(None);
    };
    let Value::Array(items) = value else {
        return Err(expected(path, "an array of strings", value));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| match item {
            Value::String(text) => Ok((text.as_str(), format!("{path}[{i}]"))),
            other => Err(expected(&format!("{path}[{i}]"), "a string", other)),
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

/// An object of strings, each with its key and path (`path.KEY`).
pub(crate) fn string_map<'a>(
    entry: &'a Map<String, Value>,
    name: &str,
    path: &str,
) -> Result<Vec<(&'a str, &'a str, String)>, Error> {
    match member(entry, name) {
        None => Ok(Vec::new()),
        Some(Value::Object(map)) => map
            .iter()
            .map(|(key, value)| {
                let at = format!("{path}.{}", display_key(key));
                match value {
                    Value::String(text) => Ok((key.as_str(), text.as_str(), at)),
                    other => Err(expected(&at, "a string", other)),
                }
            })
            .collect(),
        Some(other) => Err(expected(path, "an object of strings", other)),
    }
}

/// A positive, finite duration given as a number in `unit`.
pub(crate) fn duration(
    entry: &Map<String, Value>,
    name: &str,
    unit: Unit,
    path: &str,
) -> Result<Option<Duration>, Error> {
    let Some(value) = member(entry, name) else {
        return Ok(None);
    };
    let scale = match unit {
        Unit::Seconds => 1.0,
        Unit::Millis => 1e-3,
    };
    let parsed = value
        .as_f64()
        .map(|n| n * scale)
        .filter(|s| s.is_finite() && *s > 0.0)
        .and_then(|s| Duration::try_from_secs_f64(s).ok())
        .filter(|d| !d.is_zero());
    match parsed {
        Some(duration) => Ok(Some(duration)),
        None if value.is_number() => Err(Error::invalid(format!(
            "{path}: expected a positive number, got {value}"
        ))),
        None => Err(expected(path, "a positive number", value)),
    }
}

/// `startup_timeout_sec` or `startup_timeout_ms` (not both): a positive, finite duration.
pub(crate) fn startup_timeout(
    entry: &Map<String, Value>,
    field: &dyn Fn(&str) -> String,
) -> Result<Option<Duration>, Error> {
    const SEC: &str = "startup_timeout_sec";
    const MS: &str = "startup_timeout_ms";
    if member(entry, SEC).is_some() && member(entry, MS).is_some() {
        return Err(Error::invalid(format!(
            "{}: give `{SEC}` or `{MS}`, not both",
            field(SEC)
        )));
    }
    match duration(entry, SEC, Unit::Seconds, &field(SEC))? {
        Some(duration) => Ok(Some(duration)),
        None => duration(entry, MS, Unit::Millis, &field(MS)),
    }
}

/// `restart`: `false` (never), `true` (the default policy), or an object of `maxRestarts`,
/// `withinMs`, `initialBackoffMs` and `maxBackoffMs`, each optional.
pub(crate) fn restart_policy(value: &Value, path: &str) -> Result<Restart, Error> {
    let members = match value {
        Value::Bool(false) => return Ok(Restart::Never),
        Value::Null | Value::Bool(true) => return Ok(Restart::default()),
        Value::Object(members) => members,
        other => return Err(expected(path, "a boolean or an object", other)),
    };
    let number = |member: &str| -> Result<Option<u64>, Error> {
        match members.get(member) {
            None | Some(Value::Null) => Ok(None),
            Some(value) => value.as_u64().map(Some).ok_or_else(|| {
                expected(&format!("{path}.{member}"), "a non-negative integer", value)
            }),
        }
    };
    let mut policy = RestartPolicy::default();
    if let Some(attempts) = number("maxRestarts")? {
        let attempts = u32::try_from(attempts)
            .map_err(|_| Error::invalid(format!("{path}.maxRestarts: {attempts} is too large")))?;
        policy = policy.max_restarts(attempts);
    }
    if let Some(ms) = number("withinMs")? {
        policy = policy.within(Duration::from_millis(ms));
    }
    let initial = number("initialBackoffMs")?.map_or(policy.initial_backoff, Duration::from_millis);
    let max = number("maxBackoffMs")?.map_or(policy.max_backoff, Duration::from_millis);
    Ok(Restart::OnCrash(policy.backoff(initial, max)))
}

/// An optional positive integer member (`null` counts as absent).
pub(crate) fn positive(
    entry: &Map<String, Value>,
    name: &str,
    path: &str,
) -> Result<Option<usize>, Error> {
    match member(entry, name) {
        None => Ok(None),
        Some(value) => match value.as_u64().and_then(|n| usize::try_from(n).ok()) {
            Some(n) if n > 0 => Ok(Some(n)),
            _ if value.is_number() => Err(Error::invalid(format!(
                "{path}: expected a positive integer, got {value}"
            ))),
            _ => Err(expected(path, "a positive integer", value)),
        },
    }
}

/// The paths of `entry`'s members that are in neither `read` (what the reader takes) nor
/// `foreign` (what other tools write there and sidewire leaves alone), in the entry's order:
/// most likely typos (`arg` for `args`).
pub(crate) fn unknown_members(
    entry: &Map<String, Value>,
    read: &[&str],
    foreign: &[&str],
    path: &str,
) -> Vec<String> {
    entry
        .keys()
        .filter(|key| !read.contains(&key.as_str()) && !foreign.contains(&key.as_str()))
        .map(|key| format!("{path}.{}", display_key(key)))
        .collect()
}

pub(crate) fn expected(path: &str, what: &str, got: &Value) -> Error {
    Error::invalid(format!(
        "{path}: expected {what}, got {}",
        text::json_kind(got)
    ))
}

/// A map key as it appears in a path: bare when it is a plain identifier, quoted otherwise, so
/// a key holding dots or spaces cannot make the path ambiguous.
/// A key longer than [`PEER_TEXT_BYTES`](text::PEER_TEXT_BYTES) is quoted cut.
pub(crate) fn display_key(key: &str) -> String {
    let plain = !key.is_empty()
        && key.len() <= text::PEER_TEXT_BYTES
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if plain {
        key.to_owned()
    } else if key.len() <= text::PEER_TEXT_BYTES {
        format!("{key:?}")
    } else {
        format!("\"{}\"", text::peer(key))
    }
}
