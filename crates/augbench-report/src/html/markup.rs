//! The HTML helpers every section of the report page shares: escaping text for markup and
//! attributes, and the anchor id of a group's section (the page's links and the embedded data
//! name a group by it).

use crate::table::Table;

/// HTML-escapes text.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

pub(super) fn anchor(t: &Table) -> String {
    format!("g-{}", t.key.file_stem())
}
