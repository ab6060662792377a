//! How a child process ended, as a value.

use std::process::ExitStatus;

/// How a supervised process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Exit {
    /// It exited with this status code.
    Status(i32),
    /// A signal killed it.
    Signal(i32),
    /// It ended, but its status is not known: waiting for it failed (someone else reaped it),
    /// or its supervision was dropped before it was reaped.
    Unknown,
}

impl Exit {
    /// The exit of a reaped child.
    pub fn from_status(status: ExitStatus) -> Exit {
        use std::os::unix::process::ExitStatusExt;
        match (status.code(), status.signal()) {
            (Some(code), _) => Exit::Status(code),
            (None, Some(signal)) => Exit::Signal(signal),
            (None, None) => Exit::Unknown,
        }
    }

    /// Whether it exited with status 0.
    pub fn success(self) -> bool {
        self == Exit::Status(0)
    }

    /// The status code it exited with, if it exited.
    pub fn code(self) -> Option<i32> {
        match self {
            Exit::Status(code) => Some(code),
            _ => None,
        }
    }

    /// The signal that killed it, if one did.
    pub fn signal(self) -> Option<i32> {
        match self {
            Exit::Signal(signal) => Some(signal),
            _ => None,
        }
    }
}

impl std::fmt::Display for Exit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Exit::Status(code) => write!(f, "exited with status {code}"),
            Exit::Signal(signal) => write!(f, "killed by signal {signal}"),
            Exit::Unknown => f.write_str("ended with an unknown status"),
        }
    }
}

#[cfg(test)]
mod tests;
