//! Plot (b): the headline figure (the title names it) of every transform × library as a heatmap on a log colour scale,
//! each cell labelled with its number (or slow / – / error), with a colour bar as the legend.
//! In pipeline groups the decode-ceiling row comes first, labelled `(ceiling)` and outlined,
//! every other cell also shows its share of its library's ceiling, and a note says what the
//! ceiling is.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::axis::Axis;
use super::draw::drawing;
use super::style::{self, FONT};
use crate::table::{Cell, Table, TableRow};

const BAR_WIDTH: u32 = 210;
const ROW_HEIGHT: u32 = 28;
/// Height of the strip under a pipeline heatmap that explains the ceiling.
const NOTE_HEIGHT: u32 = 34;

type Cells<'a, DB> = ChartContext<'a, DB, Cartesian2d<Axis, Axis>>;

pub struct Heatmap {
    pub title: String,
    unit: &'static str,
    libraries: Vec<String>,
    /// Row labels, top to bottom (the ceiling row suffixed ` (ceiling)`).
    transforms: Vec<String>,
    /// `cells[transform][library]`.
    cells: Vec<Vec<Cell>>,
    /// `shares[transform][library]`: share of the library's ceiling (empty outside pipelines).
    shares: Vec<Vec<Option<f64>>>,
    /// The ceiling row's name when the group has one; that row is drawn first.
    ceiling: Option<String>,
    lo: f64,
    hi: f64,
    /// The axes' descriptions: columns, then rows.
    axes: (&'static str, &'static str),
}

/// A grid of figures without a results table (the production page): `rows` of (label, one
/// cell per column).
pub struct Grid {
    pub title: String,
    pub unit: &'static str,
    pub axes: (&'static str, &'static str),
    pub columns: Vec<String>,
    pub rows: Vec<(String, Vec<Cell>)>,
}

impl Heatmap {
    pub fn new(t: &Table) -> Option<Self> {
        let values: Vec<f64> = t
            .rows
            .iter()
            .flat_map(|r| r.cells.iter().filter_map(Cell::figure))
            .collect();
        let lo = values.iter().copied().reduce(f64::min)?;
        let hi = values.iter().copied().reduce(f64::max)?;
        let ceiling = t
            .ceiling
            .clone()
            .filter(|c| t.rows.iter().any(|r| r.transform == *c));
        let rows = ordered_rows(t, ceiling.as_deref());
        Some(Heatmap {
            title: format!("Throughput, {} ({}) — {}", t.figure, t.unit, t.title),
            unit: t.unit,
            libraries: t.columns.iter().map(super::labels::column_label).collect(),
            transforms: rows
                .iter()
                .map(|r| super::labels::row_label(t, &r.transform))
                .collect(),
            cells: rows.iter().map(|r| r.cells.clone()).collect(),
            shares: rows.iter().map(|r| r.of_ceiling.clone()).collect(),
            ceiling,
            lo,
            hi,
            axes: ("Library", "Transform"),
        })
    }

    /// A heatmap of `grid`; `None` when no cell has a figure.
    pub fn grid(grid: Grid) -> Option<Self> {
        let values: Vec<f64> = grid
            .rows
            .iter()
            .flat_map(|(_, cells)| cells.iter().filter_map(Cell::figure))
            .collect();
        let lo = values.iter().copied().reduce(f64::min)?;
        let hi = values.iter().copied().reduce(f64::max)?;
        let (transforms, cells) = grid.rows.into_iter().unzip();
        Some(Heatmap {
            title: grid.title,
            unit: grid.unit,
            libraries: grid.columns,
            transforms,
            cells,
            shares: Vec::new(),
            ceiling: None,
            lo,
            hi,
            axes: grid.axes,
        })
    }

    pub fn height(&self) -> u32 {
        let note = if self.ceiling.is_some() {
            NOTE_HEIGHT
        } else {
            0
        };
        200 + self.transforms.len() as u32 * ROW_HEIGHT + note
    }

    pub fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> anyhow::Result<()> {
        let root = root
            .titled(&self.title, (FONT, style::TITLE_SIZE))
            .map_err(drawing)?;
        let (w, h) = root.dim_in_pixel();
        let body = match &self.ceiling {
            Some(name) => {
                let (body, note) = root.split_vertically(h.saturating_sub(NOTE_HEIGHT));
                draw_ceiling_note(&note, name)?;
                body
            }
            None => root,
        };
        let (main, bar) = body.split_horizontally(w.saturating_sub(BAR_WIDTH));
        self.draw_cells(&main)?;
        self.draw_colour_bar(&bar)
    }

    fn draw_cells<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> anyhow::Result<()> {
        let mut chart = self.cell_axes(area)?;
        let n = self.transforms.len();
        let col_px = chart.plotting_area().dim_in_pixel().0 / self.libraries.len().max(1) as u32;
        for (i, row) in self.cells.iter().enumerate() {
            let y = (n - 1 - i) as f64;
            for (j, cell) in row.iter().enumerate() {
                let share = self.shares.get(i).and_then(|s| s.get(j)).copied().flatten();
                self.draw_cell(&mut chart, cell, share, (j as f64, y), col_px)?;
            }
        }
        if self.ceiling.is_some() {
            outline_row(&mut chart, self.libraries.len(), n - 1)?;
        }
        Ok(())
    }

    /// The chart over `libraries × transforms` slots, with its axes and labels drawn.
    fn cell_axes<'a, DB: DrawingBackend>(
        &self,
        area: &'a DrawingArea<DB, Shift>,
    ) -> anyhow::Result<Cells<'a, DB>> {
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
            .x_desc(self.axes.0)
            .y_desc(self.axes.1)
            .x_label_formatter(&lib)
            .y_label_formatter(&tf)
            .label_style((FONT, style::LABEL_SIZE))
            .axis_desc_style((FONT, style::DESC_SIZE))
            .draw()
            .map_err(drawing)?;
        Ok(chart)
    }

    /// One cell at slot `(x, y)`: fill, white border and its text, shrunk to fit `col_px`.
    fn draw_cell<DB: DrawingBackend>(
        &self,
        chart: &mut Cells<'_, DB>,
        cell: &Cell,
        share: Option<f64>,
        (x, y): (f64, f64),
        col_px: u32,
    ) -> anyhow::Result<()> {
        let (fill, text, ink) = self.cell_look(cell, share);
        let slot = [(x, y), (x + 1.0, y + 1.0)];
        chart
            .draw_series([
                Rectangle::new(slot, fill.filled()),
                Rectangle::new(slot, WHITE.stroke_width(1)),
            ])
            .map_err(drawing)?;
        let font = (FONT, style::fitted_size(&text, col_px))
            .into_font()
            .color(&ink)
            .pos(Pos::new(HPos::Center, VPos::Center));
        chart
            .draw_series([Text::new(text, (x + 0.5, y + 0.5), font)])
            .map_err(drawing)?;
        Ok(())
    }

    /// Fill colour, text and text colour of a cell; `share` of the ceiling as `123 (92%)`.
    fn cell_look(&self, cell: &Cell, share: Option<f64>) -> (RGBColor, String, RGBColor) {
        match cell {
            Cell::Ok { figure, .. } => {
                let t = style::log_position(*figure, self.lo, self.hi);
                let ink = if t < 0.6 { WHITE } else { BLACK };
                let text = match share {
                    Some(s) => format!("{} ({:.0}%)", style::tick(*figure), s * 100.0),
                    None => style::tick(*figure),
                };
                (style::viridis(t), text, ink)
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

/// The table's rows, the ceiling row first, the rest by name.
fn ordered_rows<'t>(t: &'t Table, ceiling: Option<&str>) -> Vec<&'t TableRow> {
    let mut rows: Vec<&TableRow> = t.rows.iter().collect();
    rows.sort_by(|a, b| {
        let rank = |r: &TableRow| Some(r.transform.as_str()) != ceiling;
        rank(a)
            .cmp(&rank(b))
            .then_with(|| a.transform.cmp(&b.transform))
    });
    rows
}

/// A heavy dark outline around the whole row at slot `y` (the ceiling row).
fn outline_row<DB: DrawingBackend>(
    chart: &mut Cells<'_, DB>,
    columns: usize,
    y: usize,
) -> anyhow::Result<()> {
    // A path, not a `Rectangle`: plotters' SVG backend drops a rectangle's stroke width.
    let (y, right) = (y as f64, columns as f64);
    let corners = [
        (0.0, y),
        (right, y),
        (right, y + 1.0),
        (0.0, y + 1.0),
        (0.0, y),
    ];
    chart
        .draw_series([PathElement::new(corners, BLACK.stroke_width(3))])
        .map_err(drawing)?;
    Ok(())
}

/// The line under a pipeline heatmap saying what the ceiling row and the percentages are.
fn draw_ceiling_note<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    ceiling: &str,
) -> anyhow::Result<()> {
    let font = (FONT, style::LABEL_SIZE).into_font().color(&BLACK);
    area.draw_text(&super::labels::ceiling_note(ceiling), &font, (15, 6))
        .map_err(drawing)
}
