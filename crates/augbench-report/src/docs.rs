//! README tables: replaces the text between `<!-- AUGBENCH:<NAME>:START -->` and
//! `<!-- AUGBENCH:<NAME>:END -->` with the fresh markdown table of the group named `<NAME>`
//! (`IMAGE-RGB-MICRO`). Idempotent: running it twice gives the same file.

use std::collections::BTreeMap;

use crate::export::markdown;
use crate::output::usage;
use crate::table::Table;

const OPEN: &str = "<!-- AUGBENCH:";
const START: &str = ":START -->";
const END: &str = ":END -->";

/// What an update did: the names it refreshed, in file order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Updated {
    pub text: String,
    pub names: Vec<String>,
}

/// Replaces every marker block of `text` with its table. `file` names the file in messages.
pub fn update(text: &str, tables: &[Table], file: &str) -> anyhow::Result<Updated> {
    let by_name: BTreeMap<String, &Table> =
        tables.iter().map(|t| (t.key.marker_name(), t)).collect();
    let available = || by_name.keys().cloned().collect::<Vec<_>>().join(", ");
    let mut out = String::with_capacity(text.len());
    let mut names = Vec::new();
    let mut rest = text;
    while let Some(pos) = rest.find(OPEN) {
        let after = &rest[pos + OPEN.len()..];
        let Some(name_len) = after.find(START).filter(|n| is_name(&after[..*n])) else {
            // Not a start marker (an END without START, or other text): copy and move on.
            let stray = &rest[..pos + OPEN.len()];
            if after.split_once(END).is_some_and(|(n, _)| is_name(n)) {
                return Err(usage(
                    format!(
                        "{file} line {}: END marker without a START marker",
                        line_of(text, rest, pos)
                    ),
                    "each block is `<!-- AUGBENCH:NAME:START -->` … `<!-- AUGBENCH:NAME:END -->`",
                ));
            }
            out.push_str(stray);
            rest = after;
            continue;
        };
        let name = &after[..name_len];
        let body_start = pos + OPEN.len() + name_len + START.len();
        let end_marker = format!("{OPEN}{name}{END}");
        let Some(end_rel) = rest[body_start..].find(&end_marker) else {
            return Err(usage(
                format!(
                    "{file} line {}: `{OPEN}{name}{START}` has no matching `{end_marker}`",
                    line_of(text, rest, pos)
                ),
                "add the END marker after the block",
            ));
        };
        let Some(table) = by_name.get(name) else {
            return Err(usage(
                format!(
                    "{file} line {}: no results for marker `{name}`; available: {}",
                    line_of(text, rest, pos),
                    available()
                ),
                "rename the marker to one of the available names, or pass results that contain that group",
            ));
        };
        out.push_str(&rest[..body_start]);
        out.push('\n');
        out.push_str(&markdown::render_table(table));
        out.push_str(&end_marker);
        names.push(name.to_string());
        rest = &rest[body_start + end_rel + end_marker.len()..];
    }
    out.push_str(rest);
    if names.is_empty() {
        return Err(usage(
            format!(
                "{file}: no `{OPEN}<NAME>{START}` markers; available names: {}",
                available()
            ),
            format!("add `{OPEN}NAME{START}` and `{OPEN}NAME{END}` lines where a table should go"),
        ));
    }
    Ok(Updated { text: out, names })
}

fn is_name(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '-' || c == '_')
}

/// 1-based line of `rest[pos]` inside `text` (`rest` is a suffix of `text`).
fn line_of(text: &str, rest: &str, pos: usize) -> usize {
    let offset = text.len() - rest.len() + pos;
    text[..offset].matches('\n').count() + 1
}
