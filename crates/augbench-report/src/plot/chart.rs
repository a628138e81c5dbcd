//! The charts of a table and their files: which charts a table gets, each drawn as SVG and PNG
//! 1200 px wide on plotters' backends, the embedded font registered once, and every chart of
//! every group written under the output folder.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use anyhow::{Context, anyhow};
use plotters::coord::Shift;
use plotters::prelude::*;

use super::draw::drawing;
use super::{distribution, heatmap, speedup, style, workers};
use crate::model::Dataset;
use crate::table::{Table, TableOptions, build_tables};
use augbench_host::fsutil::write_atomic;

/// Width of every plot in pixels.
pub const WIDTH: u32 = 1200;
const FONT_BYTES: &[u8] = include_bytes!("../../assets/DejaVuSans.ttf");

/// One chart, drawable on any plotters backend.
pub enum Chart {
    Speedup(speedup::SpeedupChart),
    Heatmap(heatmap::Heatmap),
    Distribution(distribution::Distribution),
    Workers(workers::WorkersChart),
}

impl Chart {
    /// Short name used in file names: `speedup`, `heatmap`, `speedup_distribution`.
    pub fn name(&self) -> &'static str {
        match self {
            Chart::Speedup(_) => "speedup",
            Chart::Heatmap(_) => "heatmap",
            Chart::Distribution(_) => "speedup_distribution",
            Chart::Workers(_) => "workers",
        }
    }

    pub fn title(&self) -> &str {
        match self {
            Chart::Speedup(c) => &c.title,
            Chart::Heatmap(c) => &c.title,
            Chart::Distribution(c) => &c.title,
            Chart::Workers(c) => &c.title,
        }
    }

    pub fn height(&self) -> u32 {
        match self {
            Chart::Speedup(c) => c.height(),
            Chart::Heatmap(c) => c.height(),
            Chart::Distribution(c) => c.height(),
            Chart::Workers(c) => c.height(),
        }
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> anyhow::Result<()> {
        root.fill(&WHITE).map_err(drawing)?;
        match self {
            Chart::Speedup(c) => c.draw(root),
            Chart::Heatmap(c) => c.draw(root),
            Chart::Distribution(c) => c.draw(root),
            Chart::Workers(c) => c.draw(root),
        }
    }

    pub fn svg(&self) -> anyhow::Result<String> {
        ensure_font()?;
        let mut s = String::new();
        {
            let root = SVGBackend::with_string(&mut s, (WIDTH, self.height())).into_drawing_area();
            self.draw(&root)?;
            root.present().map_err(drawing)?;
        }
        Ok(s)
    }

    pub fn png(&self) -> anyhow::Result<Vec<u8>> {
        ensure_font()?;
        let (w, h) = (WIDTH, self.height());
        let mut buf = vec![0u8; w as usize * h as usize * 3];
        {
            let root = BitMapBackend::with_buffer(&mut buf, (w, h)).into_drawing_area();
            self.draw(&root)?;
            root.present().map_err(drawing)?;
        }
        let mut png = Vec::new();
        image::ImageEncoder::write_image(
            image::codecs::png::PngEncoder::new(&mut png),
            &buf,
            w,
            h,
            image::ExtendedColorType::Rgb8,
        )
        .context("encoding PNG")?;
        Ok(png)
    }
}

/// The charts of one table: speedup plots need the reference and at least one other library.
pub fn charts(table: &Table) -> Vec<Chart> {
    let mut out = Vec::new();
    if let Some(c) = speedup::SpeedupChart::new(table) {
        out.push(Chart::Speedup(c));
    }
    if let Some(c) = heatmap::Heatmap::new(table) {
        out.push(Chart::Heatmap(c));
    }
    if let Some(c) = distribution::Distribution::new(table) {
        out.push(Chart::Distribution(c));
    }
    out
}

/// Writes every chart of every group as `<out>/<group>_<chart>.svg` and `.png`; returns the paths.
pub fn write_plots(
    data: &Dataset,
    out: &Path,
    opts: &TableOptions,
) -> anyhow::Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    for table in build_tables(data, opts)? {
        for chart in charts(&table) {
            let stem = format!("{}_{}", table.key.file_stem(), chart.name());
            let svg = out.join(format!("{stem}.svg"));
            write_atomic(&svg, chart.svg()?.as_bytes())?;
            let png = out.join(format!("{stem}.png"));
            write_atomic(&png, &chart.png()?)?;
            written.extend([svg, png]);
        }
    }
    Ok(written)
}

fn ensure_font() -> anyhow::Result<()> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| {
        [FontStyle::Normal, FontStyle::Bold]
            .into_iter()
            .all(|s| plotters::style::register_font(style::FONT, s, FONT_BYTES).is_ok())
    });
    if ok {
        Ok(())
    } else {
        Err(anyhow!(
            "the embedded font DejaVuSans.ttf could not be loaded"
        ))
    }
}
