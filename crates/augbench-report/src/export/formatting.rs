//! The cell texts and notes every export format shares, so every output shows the same digits
//! and words: `median ± std`, speedups (paired with their interval, or a ratio of medians), the
//! footer's speedup, the paired-speedup note, and the forced-output mark and its note.

use crate::number::decimals;

/// `median ± std`, both with the median's digits.
pub fn fmt_median_std(median: f64, std: Option<f64>) -> String {
    let d = decimals(median);
    match std {
        Some(s) => format!("{median:.d$} ± {s:.d$}"),
        None => format!("{median:.d$}"),
    }
}

/// `2.31×`, or `n/a`.
pub fn fmt_speedup(x: Option<f64>) -> String {
    x.map_or_else(|| "n/a".to_string(), |v| format!("{v:.2}×"))
}

/// A row's speedup: `2.31× [2.25–2.40]` when paired (its rerun interval, or the interval over
/// rounds of an older source), `2.31×` when it is the ratio of two medians, `n/a` without one.
pub fn fmt_row_speedup(r: &crate::table::TableRow) -> String {
    match (r.speedup, r.speedup_ci) {
        (Some(s), Some([lo, hi])) if r.speedup_paired => format!("{s:.2}× [{lo:.2}–{hi:.2}]"),
        (s, _) => fmt_speedup(s),
    }
}

/// The sentence every format puts under a table with paired speedups.
pub fn paired_note(t: &crate::table::Table) -> Option<String> {
    (t.paired_rows > 0).then(|| {
        format!(
            "Speedups with [an interval] are paired ({} of {} rows): both libraries were timed in the same interleaved rounds, and the speedup is the median of the per-round ratios with its rerun interval, where a repeat of the run lands (over worker processes: it covered 93.5–96.7% in the simulator for a fixed run count, and 87.5–91.5% where a precision target stopped the rounds on the first narrow look; files without one show the interval over rounds, which is narrower than a repeat shows: docs/methodology.md); the others are ratios of medians.",
            t.paired_rows,
            t.rows.iter().filter(|r| r.speedup.is_some()).count()
        )
    })
}

/// The marker after a cell whose library's output was not contiguous (the row includes forcing it).
pub const FORCED_MARK: &str = "†";

/// The note that explains `FORCED_MARK` and lists each marked cell with the share of apply +
/// force that forcing took (`HorizontalFlip (albumentationsx 95%)`); none when no cell is marked.
pub fn forced_note(t: &crate::table::Table) -> Option<String> {
    let cells = t.forced_cells();
    if cells.is_empty() {
        return None;
    }
    let list: Vec<String> = cells
        .iter()
        .map(|(transform, library, share)| match share {
            Some(s) => format!("{transform} ({library} {:.0}%)", s * 100.0),
            None => format!("{transform} ({library})"),
        })
        .collect();
    Some(format!(
        "{FORCED_MARK}: the library returned a strided view or lazy work, not a contiguous output, so the row \
         also times the copy that finishes it; measured once outside the timed runs, the share of apply + \
         force that the copy took: {}.",
        list.join(", ")
    ))
}

/// `1.85× over 12 rows (12 paired)`, the footer's speedup column.
pub fn fmt_footer_speedup(f: &crate::table::FooterEntry) -> String {
    let paired = if f.paired > 0 {
        format!(" ({} paired)", f.paired)
    } else {
        String::new()
    };
    format!(
        "{} over {} rows{paired}",
        fmt_speedup(f.median_speedup),
        f.common
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::number::fmt_num;

    #[test]
    fn number_formats() {
        assert_eq!(fmt_num(20.0), "20");
        assert_eq!(fmt_num(0.5), "0.5");
        assert_eq!(fmt_num(1234.4), "1234");
        assert_eq!(fmt_median_std(1234.44, Some(12.3)), "1234 ± 12");
        assert_eq!(fmt_median_std(12.345, Some(0.42)), "12.3 ± 0.4");
        assert_eq!(fmt_median_std(1.5, None), "1.50");
        assert_eq!(fmt_speedup(Some(2.3149)), "2.31×");
        assert_eq!(fmt_speedup(None), "n/a");
    }
}
