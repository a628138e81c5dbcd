//! The error a user can fix by changing how they call augbench (bad flag, bad file, bad choice).
//! Every crate returns it (inside `anyhow`) for usage mistakes; the binary maps it to exit code 2.

use std::fmt;

/// A mistake the user can fix, with a hint saying how. Exit code 2.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct UsageError {
    pub message: String,
    pub hint: String,
}

impl UsageError {
    pub fn new(message: impl Into<String>, hint: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            hint: hint.into(),
        }
    }
}

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.message)?;
        if !self.hint.is_empty() {
            write!(f, "\n  hint: {}", self.hint)?;
        }
        Ok(())
    }
}
