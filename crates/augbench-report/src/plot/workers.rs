//! Plot (d): a production sweep of loader workers, throughput against the count of loader
//! workers, one line per implementation; each point is the geometric mean over the recipes that
//! implementation measured at every count, so a line's points compare the same recipes.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::draw::drawing;
use super::style::{self, FONT};

pub struct WorkersChart {
    pub title: String,
    /// (implementation, its points (count, items/s) in count order).
    pub lines: Vec<(String, Vec<(u64, f64)>)>,
}

impl WorkersChart {
    /// The chart of `lines`; `None` when no line has two points (nothing to draw against a count).
    pub fn new(title: String, lines: Vec<(String, Vec<(u64, f64)>)>) -> Option<Self> {
        let mut lines: Vec<_> = lines.into_iter().filter(|(_, p)| p.len() >= 2).collect();
        for (_, points) in &mut lines {
            points.sort_by_key(|p| p.0);
        }
        (!lines.is_empty()).then_some(WorkersChart { title, lines })
    }

    pub fn height(&self) -> u32 {
        600
    }

    pub fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> anyhow::Result<()> {
        let points = self.lines.iter().flat_map(|(_, p)| p.iter());
        let max_x = points.clone().map(|p| p.0).max().unwrap_or(1).max(1) as f64;
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
            .x_label_formatter(&|v| format!("{v:.0}"))
            .y_label_formatter(&|v| format!("{v:.0}"))
            .label_style((FONT, style::LABEL_SIZE))
            .axis_desc_style((FONT, style::DESC_SIZE))
            .draw()
            .map_err(drawing)?;
        for (i, (name, points)) in self.lines.iter().enumerate() {
            let colour = style::library_colour(i);
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
