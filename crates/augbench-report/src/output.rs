//! Output plumbing shared by every report: the usage-error constructor. Reports write their files
//! through `augbench_host::fsutil::write_atomic`, the one atomic write.

use augbench_core::UsageError;

/// A mistake the user can fix (exit code 2), as an `anyhow::Error`.
pub fn usage(message: impl Into<String>, hint: impl Into<String>) -> anyhow::Error {
    UsageError::new(message, hint).into()
}
