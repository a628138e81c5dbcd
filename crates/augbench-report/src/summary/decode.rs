//! The end-of-run table of a decode run: decoder, clips/s and frames/s (median [95% interval]),
//! access and status, one row per decoder.

use augbench_core::results::{DECODE_ROW, ResultFile};

/// The run's table: decoder, clips/s and frames/s (median [95% interval]), access, status.
pub fn table(files: &[&ResultFile]) -> String {
    let mut rows = vec![
        ["decoder", "clips/s", "frames/s", "access", "status"]
            .map(str::to_string)
            .to_vec(),
    ];
    for f in files {
        let Some(row) = f.results.get(DECODE_ROW) else {
            continue;
        };
        let d = row.decode.clone().unwrap_or_default();
        let status = row.status.map_or("?".to_string(), |s| s.to_string());
        let status = match (&row.reason, &row.early_stop_reason) {
            (Some(why), _) => format!("{status}: {}", one_line(why)),
            (None, Some(why)) => format!("{status} ({why})"),
            _ => status,
        };
        rows.push(vec![
            d.decoder.clone(),
            rate(row.median_throughput, row.throughput_ci95),
            rate(d.median_frames_per_sec, d.frames_ci95),
            d.access.clone(),
            status,
        ]);
    }
    augbench_core::text::columns(&rows, false, true)
}

fn rate(median: Option<f64>, ci: Option<[f64; 2]>) -> String {
    match (median, ci) {
        (Some(m), Some([lo, hi])) => format!("{m:.1} [{lo:.1}, {hi:.1}]"),
        (Some(m), None) => format!("{m:.1}"),
        _ => "-".into(),
    }
}

/// The first line of a reason, cut to a width a table can hold.
fn one_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    let cut: String = line.chars().take(110).collect();
    if cut.len() < line.len() {
        format!("{cut}…")
    } else {
        cut
    }
}
