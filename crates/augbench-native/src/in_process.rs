//! The worker's protocol loop without a process: requests in, parsed responses out, through
//! `serve_with` on in-memory buffers. The one helper the unit tests, the integration tests and
//! the benches use to talk to a native worker in process.

use std::io::Cursor;

use anyhow::Context;
use serde_json::Value;

use crate::worker::{ServeOptions, serve_with};

/// Serves `requests` to a fresh in-process worker for `library` (test faults off) and returns
/// its response lines, parsed.
pub fn exchange(library: &str, requests: &[Value]) -> anyhow::Result<Vec<Value>> {
    let input: String = requests.iter().map(|r| format!("{r}\n")).collect();
    let mut out = Vec::new();
    serve_with(
        library,
        Cursor::new(input),
        &mut out,
        ServeOptions::default(),
    )?;
    let text = String::from_utf8(out).context("the worker wrote non-UTF-8 output")?;
    text.lines()
        .map(|l| serde_json::from_str(l).with_context(|| format!("not a JSON line: {l}")))
        .collect()
}
