//! Shared look of every plot: font family and sizes, library colours, the log colour scale of
//! the heatmap, 1-2-5 log-axis ticks, label shortening and fitting cell text.

use plotters::style::RGBColor;

/// Family name the embedded DejaVu Sans is registered under.
pub const FONT: &str = "sans-serif";
pub const TITLE_SIZE: u32 = 26;
pub const DESC_SIZE: u32 = 18;
pub const LABEL_SIZE: u32 = 15;
pub const VALUE_SIZE: u32 = 13;
/// Longest transform label drawn before it is shortened with `…`.
pub const MAX_LABEL_CHARS: usize = 42;

/// Categorical colours (Tableau 10), one per library column.
const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

pub fn library_colour(index: usize) -> RGBColor {
    PALETTE[index % PALETTE.len()]
}

/// Cells that hold no measurement.
pub const EMPTY_CELL: RGBColor = RGBColor(225, 225, 225);

/// Viridis stops, low → high.
const VIRIDIS: [(u8, u8, u8); 5] = [
    (68, 1, 84),
    (59, 82, 139),
    (33, 145, 140),
    (94, 201, 98),
    (253, 231, 37),
];

/// Colour of `t` in [0, 1] on the viridis scale.
pub fn viridis(t: f64) -> RGBColor {
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let x = t * (VIRIDIS.len() - 1) as f64;
    let i = (x.floor() as usize).min(VIRIDIS.len() - 2);
    let f = x - i as f64;
    let mix = |a: u8, b: u8| (f64::from(a) + (f64::from(b) - f64::from(a)) * f).round() as u8;
    let (a, b) = (VIRIDIS[i], VIRIDIS[i + 1]);
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// Position of `v` between `lo` and `hi` on a log scale, in [0, 1].
pub fn log_position(v: f64, lo: f64, hi: f64) -> f64 {
    if hi <= lo {
        return 0.5;
    }
    ((v.ln() - lo.ln()) / (hi.ln() - lo.ln())).clamp(0.0, 1.0)
}

/// Ticks at 1, 2 and 5 times powers of ten inside [lo, hi].
pub fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let (start, end) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let mut v: Vec<f64> = (start..=end)
        .flat_map(|e| [1.0, 2.0, 5.0].map(|m| m * 10f64.powi(e)))
        .filter(|t| *t >= lo && *t <= hi)
        .collect();
    if v.len() > 12 {
        v.retain(|t| (t.log10().fract()).abs() < 1e-9);
    }
    v
}

/// A log-axis range around `values` (always including 1× for speedups when `with_one`).
pub fn log_range(values: impl IntoIterator<Item = f64>, with_one: bool) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values.into_iter().filter(|v| v.is_finite() && *v > 0.0) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if with_one {
        lo = lo.min(1.0);
        hi = hi.max(1.0);
    }
    if !lo.is_finite() {
        return (0.5, 2.0);
    }
    (lo / 1.5, hi * 1.5)
}

/// `label` shortened to `MAX_LABEL_CHARS` characters.
pub fn short(label: &str) -> String {
    if label.chars().count() <= MAX_LABEL_CHARS {
        label.to_string()
    } else {
        let s: String = label.chars().take(MAX_LABEL_CHARS - 1).collect();
        format!("{s}…")
    }
}

/// Pixels for a label column holding these labels.
pub fn label_width<'a>(labels: impl IntoIterator<Item = &'a str>) -> u32 {
    let chars = labels
        .into_iter()
        .map(|l| short(l).chars().count())
        .max()
        .unwrap_or(8);
    (chars as u32 * 9 + 20).clamp(80, 420)
}

/// Font size for `text` in a cell `cell_px` wide: `VALUE_SIZE` when it fits, else smaller
/// (down to 9 px), so long labels such as `12000 (92%)` stay inside narrow cells.
pub fn fitted_size(text: &str, cell_px: u32) -> u32 {
    // DejaVu Sans digits are about 0.64 em wide; keep 4 px free on each side.
    let fit = f64::from(cell_px.saturating_sub(8)) / (text.chars().count().max(1) as f64 * 0.64);
    (fit.floor() as u32).clamp(9, VALUE_SIZE)
}

/// Tick label of a speedup or throughput axis: `0.5`, `2`, `1000`.
pub fn tick(v: f64) -> String {
    crate::export::fmt_num(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_one_two_five() {
        assert_eq!(log_ticks(0.4, 30.0), vec![0.5, 1.0, 2.0, 5.0, 10.0, 20.0]);
    }

    #[test]
    fn viridis_ends() {
        assert_eq!(viridis(0.0), RGBColor(68, 1, 84));
        assert_eq!(viridis(1.0), RGBColor(253, 231, 37));
        assert_eq!(viridis(f64::NAN), RGBColor(68, 1, 84));
    }

    #[test]
    fn cell_text_shrinks_only_when_it_does_not_fit() {
        assert_eq!(fitted_size("12000 (92%)", 200), VALUE_SIZE);
        assert!(fitted_size("12000 (92%)", 90) < VALUE_SIZE);
        assert_eq!(fitted_size("12000 (92%)", 10), 9);
    }

    #[test]
    fn shortens_long_labels() {
        let s = short(&"x".repeat(100));
        assert_eq!(s.chars().count(), MAX_LABEL_CHARS);
        assert!(s.ends_with('…'));
    }
}
