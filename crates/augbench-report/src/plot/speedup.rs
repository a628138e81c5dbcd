//! Plot (a): the reference library's speedup over each other library, per transform, as
//! horizontal bars from 1× on a log axis, transforms sorted by speedup over the fastest other.
//! Speedups are paired (median of per-round ratios) where the table has them; the title says so.
//! A pipeline group's ceiling row is labelled `(ceiling)`.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::axis::Axis;
use super::draw::drawing;
use super::style::{self, FONT};
use crate::table::Table;

pub struct SpeedupChart {
    pub title: String,
    reference: String,
    /// Other libraries, with their column index (for colours).
    libraries: Vec<(usize, String)>,
    /// (transform, speedup per other library where both measured), best first.
    rows: Vec<(String, Vec<Option<f64>>)>,
}

impl SpeedupChart {
    pub fn new(t: &Table) -> Option<Self> {
        if !t.reference_present || t.columns.len() < 2 {
            return None;
        }
        let mut rows: Vec<(f64, String, Vec<Option<f64>>)> = t
            .rows
            .iter()
            .filter_map(|r| {
                let ratios = r.ratios[1..].iter().map(|x| x.map(|x| x.value)).collect();
                Some((
                    r.speedup?,
                    super::labels::row_label(t, &r.transform),
                    ratios,
                ))
            })
            .collect();
        if rows.is_empty() {
            return None;
        }
        rows.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        Some(SpeedupChart {
            title: format!(
                "Speedup of {} per transform{} — {}",
                t.reference,
                if t.paired_rows > 0 {
                    " (paired rounds)"
                } else {
                    ""
                },
                t.title
            ),
            reference: t.reference.clone(),
            libraries: t
                .columns
                .iter()
                .enumerate()
                .skip(1)
                .map(|(i, c)| (i, c.library.clone()))
                .collect(),
            rows: rows.into_iter().map(|(_, n, r)| (n, r)).collect(),
        })
    }

    fn slot(&self) -> u32 {
        (self.libraries.len() as u32 * 14 + 10).max(26)
    }

    pub fn height(&self) -> u32 {
        190 + self.rows.len() as u32 * self.slot()
    }

    pub fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> anyhow::Result<()> {
        let n = self.rows.len();
        let (lo, hi) = style::log_range(
            self.rows.iter().flat_map(|r| r.1.iter().flatten().copied()),
            true,
        );
        let names: Vec<&str> = self.rows.iter().map(|r| r.0.as_str()).collect();
        let mut chart = ChartBuilder::on(root)
            .caption(&self.title, (FONT, style::TITLE_SIZE))
            .margin(20)
            .x_label_area_size(60)
            .y_label_area_size(style::label_width(names.iter().copied()))
            .build_cartesian_2d(Axis::log(lo, hi, style::log_ticks(lo, hi)), Axis::slots(n))
            .map_err(drawing)?;
        let label = |y: &f64| {
            let i = n.saturating_sub(1).saturating_sub(y.floor() as usize);
            names.get(i).map_or_else(String::new, |s| style::short(s))
        };
        chart
            .configure_mesh()
            .disable_y_mesh()
            .x_desc(format!(
                "Speedup of {} over the library (×, log scale; > 1 means {} is faster)",
                self.reference, self.reference
            ))
            .y_desc("Transform")
            .x_label_formatter(&|v| format!("{}×", style::tick(*v)))
            .y_label_formatter(&label)
            .label_style((FONT, style::LABEL_SIZE))
            .axis_desc_style((FONT, style::DESC_SIZE))
            .draw()
            .map_err(drawing)?;
        self.draw_bars(&mut chart, n)?;
        super::draw::parity_line_and_legend(&mut chart, n, SeriesLabelPosition::LowerRight)
    }

    fn draw_bars<DB: DrawingBackend, X, Y>(
        &self,
        chart: &mut ChartContext<'_, DB, Cartesian2d<X, Y>>,
        n: usize,
    ) -> anyhow::Result<()>
    where
        X: plotters::coord::ranged1d::Ranged<ValueType = f64>,
        Y: plotters::coord::ranged1d::Ranged<ValueType = f64>,
    {
        let k = self.libraries.len() as f64;
        let bar = 0.8 / k;
        for (j, (col, lib)) in self.libraries.iter().enumerate() {
            let colour = style::library_colour(*col);
            let bars = self.rows.iter().enumerate().filter_map(|(i, (_, ratios))| {
                let v = ratios.get(j).copied().flatten()?;
                let top = (n - i) as f64 - 0.1 - bar * j as f64;
                Some(Rectangle::new(
                    [(1.0, top - bar), (v, top)],
                    colour.filled(),
                ))
            });
            chart
                .draw_series(bars)
                .map_err(drawing)?
                .label(format!("vs {lib}"))
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 6), (x + 16, y + 6)], colour.filled())
                });
        }
        Ok(())
    }
}
