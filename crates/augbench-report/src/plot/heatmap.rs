//! Plot (b): median throughput of every transform × library as a heatmap on a log colour scale,
//! each cell labelled with its number (or slow / – / error), with a colour bar as the legend.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::axis::Axis;
use super::drawing;
use super::style::{self, FONT};
use crate::table::{Cell, Table};

const BAR_WIDTH: u32 = 210;
const ROW_HEIGHT: u32 = 28;

pub struct Heatmap {
    pub title: String,
    unit: &'static str,
    libraries: Vec<String>,
    transforms: Vec<String>,
    /// `cells[transform][library]`.
    cells: Vec<Vec<Cell>>,
    lo: f64,
    hi: f64,
}

impl Heatmap {
    pub fn new(t: &Table) -> Option<Self> {
        let values: Vec<f64> = t
            .rows
            .iter()
            .flat_map(|r| r.cells.iter().filter_map(Cell::median))
            .collect();
        let lo = values.iter().copied().reduce(f64::min)?;
        let hi = values.iter().copied().reduce(f64::max)?;
        let mut rows: Vec<_> = t.rows.iter().collect();
        rows.sort_by(|a, b| a.transform.cmp(&b.transform));
        Some(Heatmap {
            title: format!("Median throughput ({}) — {}", t.unit, t.title),
            unit: t.unit,
            libraries: t
                .columns
                .iter()
                .map(|c| {
                    if c.version.is_empty() {
                        c.library.clone()
                    } else {
                        format!("{} {}", c.library, c.version)
                    }
                })
                .collect(),
            transforms: rows.iter().map(|r| r.transform.clone()).collect(),
            cells: rows.iter().map(|r| r.cells.clone()).collect(),
            lo,
            hi,
        })
    }

    pub fn height(&self) -> u32 {
        200 + self.transforms.len() as u32 * ROW_HEIGHT
    }

    pub fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> anyhow::Result<()> {
        let root = root
            .titled(&self.title, (FONT, style::TITLE_SIZE))
            .map_err(drawing)?;
        let (w, _) = root.dim_in_pixel();
        let (main, bar) = root.split_horizontally(w.saturating_sub(BAR_WIDTH));
        self.draw_cells(&main)?;
        self.draw_colour_bar(&bar)
    }

    fn draw_cells<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> anyhow::Result<()> {
        let (k, n) = (self.libraries.len(), self.transforms.len());
        let mut chart = ChartBuilder::on(area)
            .margin(15)
            .x_label_area_size(70)
            .y_label_area_size(style::label_width(
                self.transforms.iter().map(String::as_str),
            ))
            .build_cartesian_2d(Axis::slots(k), Axis::slots(n))
            .map_err(drawing)?;
        let lib = |x: &f64| {
            self.libraries
                .get(x.floor() as usize)
                .cloned()
                .unwrap_or_default()
        };
        let tf = |y: &f64| {
            let i = n.saturating_sub(1).saturating_sub(y.floor() as usize);
            self.transforms
                .get(i)
                .map_or_else(String::new, |s| style::short(s))
        };
        chart
            .configure_mesh()
            .disable_mesh()
            .x_desc("Library")
            .y_desc("Transform")
            .x_label_formatter(&lib)
            .y_label_formatter(&tf)
            .label_style((FONT, style::LABEL_SIZE))
            .axis_desc_style((FONT, style::DESC_SIZE))
            .draw()
            .map_err(drawing)?;
        for (i, row) in self.cells.iter().enumerate() {
            let y = (n - 1 - i) as f64;
            for (j, cell) in row.iter().enumerate() {
                let (fill, text, ink) = self.cell_look(cell);
                let x = j as f64;
                chart
                    .draw_series([Rectangle::new([(x, y), (x + 1.0, y + 1.0)], fill.filled())])
                    .map_err(drawing)?;
                chart
                    .draw_series([Rectangle::new(
                        [(x, y), (x + 1.0, y + 1.0)],
                        WHITE.stroke_width(1),
                    )])
                    .map_err(drawing)?;
                let font = (FONT, style::VALUE_SIZE)
                    .into_font()
                    .color(&ink)
                    .pos(Pos::new(HPos::Center, VPos::Center));
                chart
                    .draw_series([Text::new(text, (x + 0.5, y + 0.5), font)])
                    .map_err(drawing)?;
            }
        }
        Ok(())
    }

    /// Fill colour, text and text colour of a cell.
    fn cell_look(&self, cell: &Cell) -> (RGBColor, String, RGBColor) {
        match cell {
            Cell::Ok { median, .. } => {
                let t = style::log_position(*median, self.lo, self.hi);
                let ink = if t < 0.6 { WHITE } else { BLACK };
                (style::viridis(t), style::tick(*median), ink)
            }
            Cell::Slow { .. } => (style::EMPTY_CELL, "slow".into(), BLACK),
            Cell::Error { .. } => (style::EMPTY_CELL, "error".into(), BLACK),
            Cell::Unsupported { .. } | Cell::Missing => (style::EMPTY_CELL, "–".into(), BLACK),
        }
    }

    fn draw_colour_bar<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
    ) -> anyhow::Result<()> {
        let (lo, hi) = if self.hi > self.lo {
            (self.lo, self.hi)
        } else {
            (self.lo / 2.0, self.lo * 2.0)
        };
        let mut chart = ChartBuilder::on(area)
            .margin_top(15)
            .margin_bottom(85)
            .margin_right(10)
            .y_label_area_size(110)
            .build_cartesian_2d(
                Axis::linear(0.0, 1.0, vec![]),
                Axis::log(lo, hi, style::log_ticks(lo, hi)),
            )
            .map_err(drawing)?;
        chart
            .configure_mesh()
            .disable_mesh()
            .disable_x_axis()
            .y_desc(format!("{} (log scale)", self.unit))
            .y_label_formatter(&|v| style::tick(*v))
            .label_style((FONT, style::LABEL_SIZE))
            .axis_desc_style((FONT, style::DESC_SIZE))
            .draw()
            .map_err(drawing)?;
        let steps = 120;
        let ratio = (hi / lo).powf(1.0 / f64::from(steps));
        let strips = (0..steps).map(|s| {
            let (a, b) = (lo * ratio.powi(s), lo * ratio.powi(s + 1));
            let colour = style::viridis(style::log_position(a.sqrt() * b.sqrt(), self.lo, self.hi));
            Rectangle::new([(0.0, a), (1.0, b)], colour.filled())
        });
        chart.draw_series(strips).map_err(drawing)?;
        let (_, h) = area.dim_in_pixel();
        let font = (FONT, style::VALUE_SIZE).into_font().color(&BLACK);
        for (i, line) in ["Grey cells:", "slow, – unsupported,", "error"]
            .iter()
            .enumerate()
        {
            let y = h as i32 - 70 + 18 * i as i32;
            area.draw_text(line, &font, (10, y)).map_err(drawing)?;
        }
        Ok(())
    }
}
