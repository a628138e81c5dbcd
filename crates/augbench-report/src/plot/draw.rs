//! What the charts share while drawing: a plotters error turned into the report's, and the 1×
//! (equal speed) line with the legend box of the speedup charts.

use anyhow::anyhow;
use plotters::prelude::*;

use super::{axis, style};

/// The 1× (equal speed) line across `rows` slots and the legend box, shared by the speedup charts.
pub(super) fn parity_line_and_legend<'a, DB: DrawingBackend + 'a>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<axis::Axis, axis::Axis>>,
    rows: usize,
    position: SeriesLabelPosition,
) -> anyhow::Result<()> {
    chart
        .draw_series(LineSeries::new(
            [(1.0, 0.0), (1.0, rows as f64)],
            BLACK.stroke_width(2),
        ))
        .map_err(drawing)?
        .label("1× = equal speed")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 16, y)], BLACK.stroke_width(2)));
    chart
        .configure_series_labels()
        .position(position)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .label_font((style::FONT, style::LABEL_SIZE))
        .draw()
        .map_err(drawing)
}

pub(super) fn drawing(e: impl std::fmt::Display) -> anyhow::Error {
    anyhow!("drawing a plot: {e}")
}
