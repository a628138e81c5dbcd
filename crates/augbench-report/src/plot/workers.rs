//! Plot (d): a production sweep of loader workers, throughput against the count of loader
//! workers, one line per implementation; each point is the geometric mean over the recipes that
//! implementation measured at every count, so a line's points compare the same recipes.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::draw::drawing;
use super::style::{self, FONT};

/// One implementation's line: its colour's index, its name, its points (count, items/s) in count
/// order.
type Line = (usize, String, Vec<(u64, f64)>);

pub struct WorkersChart {
    pub title: String,
    lines: Vec<Line>,
}

impl WorkersChart {
    /// The chart of `lines` (an implementation keeps its colour by its place among them); a line
    /// with fewer than two points is left out; `None` when no line is left.
    pub fn new(title: String, lines: Vec<(String, Vec<(u64, f64)>)>) -> Option<Self> {
        let lines: Vec<Line> = (lines.into_iter().enumerate())
            .filter(|(_, (_, p))| p.len() >= 2)
            .map(|(i, (name, mut points))| {
                points.sort_by_key(|p| p.0);
                (i, name, points)
            })
            .collect();
        (!lines.is_empty()).then_some(WorkersChart { title, lines })
    }

    pub fn height(&self) -> u32 {
        600
    }

    pub fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> anyhow::Result<()> {
        let points = self.lines.iter().flat_map(|(_, _, p)| p.iter());
        let mut counts: Vec<u64> = points.clone().map(|p| p.0).collect();
        counts.sort_unstable();
        counts.dedup();
        let max_x = counts.last().copied().unwrap_or(1).max(1) as f64;
        // a label at each count measured, nowhere else (ticks fall on whole numbers)
        let label = |v: &f64| {
            let whole = v.round();
            let at_count = (v - whole).abs() < 1e-9 && counts.contains(&(whole as u64));
            if at_count {
                format!("{whole:.0}")
            } else {
                String::new()
            }
        };
        let max_y = points.map(|p| p.1).fold(0.0, f64::max).max(1.0) * 1.1;
        let mut chart = ChartBuilder::on(root)
            .caption(&self.title, (FONT, style::TITLE_SIZE))
            .margin(20)
            .x_label_area_size(60)
            .y_label_area_size(90)
            .build_cartesian_2d(-0.2..max_x + 0.2, 0.0..max_y)
            .map_err(drawing)?;
        chart
            .configure_mesh()
            .x_desc("Loader workers (0: loading in the main process)")
            .y_desc("Throughput (items/s)")
            .x_labels(max_x as usize + 2)
            .x_label_formatter(&label)
            .y_label_formatter(&|v| format!("{v:.0}"))
            .label_style((FONT, style::LABEL_SIZE))
            .axis_desc_style((FONT, style::DESC_SIZE))
            .draw()
            .map_err(drawing)?;
        for (i, name, points) in &self.lines {
            let colour = style::library_colour(*i);
            let xy: Vec<(f64, f64)> = points.iter().map(|(w, v)| (*w as f64, *v)).collect();
            chart
                .draw_series(LineSeries::new(xy.clone(), colour.stroke_width(3)))
                .map_err(drawing)?
                .label(name.clone())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(3))
                });
            chart
                .draw_series(xy.iter().map(|p| Circle::new(*p, 5, colour.filled())))
                .map_err(drawing)?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .label_font((FONT, style::LABEL_SIZE))
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()
            .map_err(drawing)?;
        Ok(())
    }
}
