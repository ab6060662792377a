//! One audit record per tool call, as a JSON line: to a file (appended, `0600` when created)
//! or to stdout (the convention of log shippers in containers).
//!
//! A record is written and flushed before the call's result is returned; when it cannot be,
//! the result is withheld and the client gets an error (fail closed). Arguments are recorded
//! only when asked for, with secrets redacted: the value of every member whose name looks like
//! a credential, and every token pattern or secret environment value in any string.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;

use serde_json::{Map, Value};
use sidewire_ext_host::{REDACTED, Redactor};

use crate::error::Error;

/// Where audit records go.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum AuditSink {
    /// Nowhere.
    #[default]
    Off,
    /// Standard output, one JSON line per call (not with the stdio transport, whose stdout is
    /// the protocol).
    Stdout,
    /// Appended to this file (created `0600`); it must be a regular file.
    File(PathBuf),
}

/// The audit log: a sink, and whether arguments are recorded.
pub(crate) struct Audit {
    out: Mutex<Out>,
    arguments: bool,
    redactor: Redactor,
}

enum Out {
    Off,
    Stdout,
    File { file: File, path: PathBuf },
}

impl Audit {
    /// Opens `sink`.
    pub(crate) fn open(sink: &AuditSink, arguments: bool) -> Result<Audit, Error> {
        let out = match sink {
            AuditSink::Off => Out::Off,
            AuditSink::Stdout => Out::Stdout,
            AuditSink::File(path) => {
                let failed = |source| Error::Audit {
                    path: path.display().to_string(),
                    source,
                };
                let mut options = OpenOptions::new();
                options.create(true).append(true);
                #[cfg(unix)]
                {
                    use std::os::unix::fs::OpenOptionsExt;
                    // Non-blocking, so a FIFO put in its place cannot hang the open.
                    options
                        .mode(0o600)
                        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32);
                }
                let file = options.open(path).map_err(failed)?;
                let meta = file.metadata().map_err(failed)?;
                if !meta.is_file() {
                    return Err(failed(std::io::Error::other("not a regular file")));
                }
                Out::File {
                    file,
                    path: path.clone(),
                }
            }
        };
        Ok(Audit {
            out: Mutex::new(out),
            arguments,
            redactor: Redactor::from_process_env(),
        })
    }

    /// Whether records are written at all.
    pub(crate) fn is_on(&self) -> bool {
        !matches!(*self.lock(), Out::Off)
    }

    /// The arguments as a record carries them: `None` unless asked for, else redacted.
    pub(crate) fn arguments(&self, arguments: &Value) -> Option<Value> {
        self.arguments.then(|| redact(&self.redactor, arguments))
    }

    /// Writes one record and flushes it.
    pub(crate) fn write(&self, record: &Value) -> Result<(), Error> {
        let mut line = record.to_string();
        line.push('\n');
        let mut out = self.lock();
        match &mut *out {
            Out::Off => Ok(()),
            Out::Stdout => {
                let mut stdout = std::io::stdout().lock();
                (stdout.write_all(line.as_bytes()))
                    .and_then(|()| stdout.flush())
                    .map_err(|source| Error::Audit {
                        path: "-".to_owned(),
                        source,
                    })
            }
            Out::File { file, path } => (file.write_all(line.as_bytes()))
                .and_then(|()| file.flush())
                .map_err(|source| Error::Audit {
                    path: path.display().to_string(),
                    source,
                }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Out> {
        self.out
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Member names whose values are credentials (compared without case, `-` and `_`).
const SECRET_MEMBERS: &[&str] = &[
    "token",
    "accesstoken",
    "refreshtoken",
    "apikey",
    "secret",
    "clientsecret",
    "password",
    "passwd",
    "authorization",
    "cookie",
    "privatekey",
    "credentials",
];

fn is_secret_member(name: &str) -> bool {
    let folded: String = (name.chars())
        .filter(|c| *c != '-' && *c != '_')
        .flat_map(char::to_lowercase)
        .collect();
    SECRET_MEMBERS.iter().any(|secret| folded == *secret)
        || folded.ends_with("token")
        || folded.ends_with("secret")
        || folded.ends_with("password")
}

/// `value` with every credential replaced by [`REDACTED`].
fn redact(redactor: &Redactor, value: &Value) -> Value {
    match value {
        Value::String(text) => Value::String(redactor.redact(text)),
        Value::Array(items) => Value::Array(items.iter().map(|v| redact(redactor, v)).collect()),
        Value::Object(members) => Value::Object(
            members
                .iter()
                .map(|(name, value)| {
                    let value = if is_secret_member(name) {
                        Value::String(REDACTED.to_owned())
                    } else {
                        redact(redactor, value)
                    };
                    (name.clone(), value)
                })
                .collect::<Map<_, _>>(),
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn arguments_are_redacted() {
        let redactor = Redactor::new([("GITHUB_TOKEN", "ghp_supersecretvalue123456")]);
        let arguments = json!({
            "query": "is:open",
            "api_key": "k-123",
            "nested": {"Access-Token": "abc", "note": "uses ghp_supersecretvalue123456 here"},
            "list": [{"password": 7}],
        });
        let redacted = redact(&redactor, &arguments);
        assert_eq!(redacted["query"], "is:open");
        assert_eq!(redacted["api_key"], REDACTED);
        assert_eq!(redacted["nested"]["Access-Token"], REDACTED);
        assert_eq!(redacted["list"][0]["password"], REDACTED);
        let note = redacted["nested"]["note"].as_str().unwrap();
        assert!(!note.contains("supersecret"), "{note}");
    }

    #[test]
    fn a_file_sink_appends_lines_and_refuses_what_is_not_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        let audit = Audit::open(&AuditSink::File(path.clone()), false).unwrap();
        assert!(audit.arguments(&json!({"a": 1})).is_none(), "not asked for");
        audit.write(&json!({"n": 1})).unwrap();
        audit.write(&json!({"n": 2})).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text, "{\"n\":1}\n{\"n\":2}\n");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let refused = Audit::open(&AuditSink::File(dir.path().to_owned()), false);
        assert!(refused.err().is_some_and(|err| err.is_audit()));
    }
}
