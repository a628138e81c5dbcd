//! The labels and notes every chart shares: a column's axis label (library and version), a
//! row's (the transform, marked on a pipeline group's ceiling row) and the note on what the
//! ceiling row and its shares mean.

use crate::table::{Column, Table};

/// A column's axis label: `library version`, or the library alone when the version is unknown.
pub(super) fn column_label(c: &Column) -> String {
    if c.version.is_empty() {
        c.library.clone()
    } else {
        format!("{} {}", c.library, c.version)
    }
}

/// A row's axis label: the transform, suffixed ` (ceiling)` on a pipeline group's ceiling row.
pub(super) fn row_label(t: &Table, transform: &str) -> String {
    if t.ceiling.as_deref() == Some(transform) {
        format!("{transform} (ceiling)")
    } else {
        transform.to_string()
    }
}

/// What a pipeline plot's ceiling row and its `(x%)` annotations mean.
pub(super) fn ceiling_note(ceiling: &str) -> String {
    format!(
        "Ceiling (outlined row): {ceiling} = decode → crop → normalize, no transform; \
         (x%) = share of the library's own ceiling"
    )
}
