//! The embedded specs' one parser: each spec file is compiled into the binary and parsed once on
//! first use; one that does not parse is a build defect (every spec's tests parse it), never a
//! user's mistake, so it stops the program naming the file.

use serde::de::DeserializeOwned;

/// Parses the embedded spec `file` (its repository path, for the message) from `text`.
#[allow(
    clippy::panic,
    reason = "embedded at build time, never user input; tests parse it"
)]
pub(crate) fn parse<T: DeserializeOwned>(file: &str, text: &str) -> T {
    match serde_saphyr::from_str(text) {
        Ok(v) => v,
        Err(e) => panic!("embedded {file} is invalid: {e}"),
    }
}
