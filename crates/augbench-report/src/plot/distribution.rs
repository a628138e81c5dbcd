//! Plot (c): the distribution of the reference's per-transform speedups over each other library
//! (only transforms both measured): every transform as a dot, the interquartile box, the median
//! and the min–max whiskers, on a log axis with 1× marked.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::axis::Axis;
use super::draw::drawing;
use super::style::{self, FONT};
use crate::table::Table;

const ROW_HEIGHT: u32 = 90;

pub struct Distribution {
    pub title: String,
    reference: String,
    /// (column index, library, speedups over transforms both measured).
    libraries: Vec<(usize, String, Vec<f64>)>,
}

impl Distribution {
    pub fn new(t: &Table) -> Option<Self> {
        if !t.reference_present {
            return None;
        }
        let libraries: Vec<_> = (1..t.columns.len())
            .map(|j| {
                let ratios = t
                    .rows
                    .iter()
                    .filter_map(|r| {
                        r.cells[0]
                            .figure()
                            .zip(r.cells[j].figure())
                            .map(|(a, b)| a / b)
                    })
                    .collect::<Vec<f64>>();
                (j, t.columns[j].library.clone(), ratios)
            })
            .filter(|(_, _, r)| !r.is_empty())
            .collect();
        (!libraries.is_empty()).then(|| Distribution {
            title: format!("Distribution of {} speedups — {}", t.reference, t.title),
            reference: t.reference.clone(),
            libraries,
        })
    }

    pub fn height(&self) -> u32 {
        220 + self.libraries.len() as u32 * ROW_HEIGHT
    }

    pub fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> anyhow::Result<()> {
        let k = self.libraries.len();
        let (lo, hi) = style::log_range(
            self.libraries.iter().flat_map(|l| l.2.iter().copied()),
            true,
        );
        let labels: Vec<String> = self
            .libraries
            .iter()
            .map(|l| format!("vs {} (n={})", l.1, l.2.len()))
            .collect();
        let mut chart = ChartBuilder::on(root)
            .caption(&self.title, (FONT, style::TITLE_SIZE))
            .margin(20)
            .x_label_area_size(60)
            .y_label_area_size(style::label_width(labels.iter().map(String::as_str)))
            .build_cartesian_2d(Axis::log(lo, hi, style::log_ticks(lo, hi)), Axis::slots(k))
            .map_err(drawing)?;
        let label = |y: &f64| {
            labels
                .get(k.saturating_sub(1).saturating_sub(y.floor() as usize))
                .cloned()
                .unwrap_or_default()
        };
        chart
            .configure_mesh()
            .disable_y_mesh()
            .x_desc(format!(
                "Speedup of {} over the library (×, log scale; one dot per transform)",
                self.reference
            ))
            .y_desc("Library")
            .x_label_formatter(&|v| format!("{}×", style::tick(*v)))
            .y_label_formatter(&label)
            .label_style((FONT, style::LABEL_SIZE))
            .axis_desc_style((FONT, style::DESC_SIZE))
            .draw()
            .map_err(drawing)?;
        for (i, (col, _, ratios)) in self.libraries.iter().enumerate() {
            let centre = (k - 1 - i) as f64 + 0.5;
            draw_box(
                &mut chart,
                ratios,
                centre,
                style::library_colour(*col),
                i == 0,
            )?;
        }
        super::draw::parity_line_and_legend(&mut chart, k, SeriesLabelPosition::UpperRight)
    }
}

type Ctx<'a, 'b, DB, X, Y> = ChartContext<'a, DB, Cartesian2d<X, Y>>;

/// Box (quartiles), median bar, min–max whisker and one dot per value, around `centre`.
fn draw_box<DB: DrawingBackend, X, Y>(
    chart: &mut Ctx<'_, '_, DB, X, Y>,
    values: &[f64],
    centre: f64,
    colour: RGBColor,
    with_legend: bool,
) -> anyhow::Result<()>
where
    X: plotters::coord::ranged1d::Ranged<ValueType = f64>,
    Y: plotters::coord::ranged1d::Ranged<ValueType = f64>,
{
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let q = |p: f64| augbench_stats::percentile_sorted(&sorted, p);
    let (min, q1, med, q3, max) = (q(0.0), q(25.0), q(50.0), q(75.0), q(100.0));
    let whisker = chart
        .draw_series(LineSeries::new(
            [(min, centre), (max, centre)],
            BLACK.stroke_width(1),
        ))
        .map_err(drawing)?;
    if with_legend {
        whisker
            .label("min–max")
            .legend(|(x, y)| PathElement::new([(x, y), (x + 16, y)], BLACK.stroke_width(1)));
    }
    let iqr = chart
        .draw_series([Rectangle::new(
            [(q1, centre - 0.25), (q3, centre + 0.25)],
            colour.mix(0.35).filled(),
        )])
        .map_err(drawing)?;
    if with_legend {
        iqr.label("interquartile range").legend(|(x, y)| {
            Rectangle::new([(x, y - 6), (x + 16, y + 6)], BLACK.mix(0.3).filled())
        });
    }
    let median = chart
        .draw_series(LineSeries::new(
            [(med, centre - 0.3), (med, centre + 0.3)],
            BLACK.stroke_width(3),
        ))
        .map_err(drawing)?;
    if with_legend {
        median.label("median").legend(|(x, y)| {
            PathElement::new([(x + 8, y - 7), (x + 8, y + 7)], BLACK.stroke_width(3))
        });
    }
    // Deterministic jitter (golden-ratio sequence) keeps equal values apart without randomness.
    let dots = values.iter().enumerate().map(|(j, v)| {
        let jitter = ((j as f64 * 0.618_033_988_75).fract() - 0.5) * 0.36;
        Circle::new((*v, centre + jitter), 4, colour.filled())
    });
    let dots = chart.draw_series(dots).map_err(drawing)?;
    if with_legend {
        dots.label("one transform")
            .legend(|(x, y)| Circle::new((x + 8, y), 4, BLACK.filled()));
    }
    Ok(())
}
