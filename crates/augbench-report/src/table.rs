//! The comparison table of one group (scenario, mode, device, sweep point), independent of the
//! output format: reference library first, one cell per library, the speedup of the reference
//! over the fastest other library, and a footer that compares only rows both libraries measured.

use augbench_core::Media;
use augbench_core::results::Status;
use serde::Serialize;

use crate::model::{Dataset, Group, GroupKey, Row, unit};

/// Row order of a table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Sort {
    /// Transform name, A → Z.
    #[default]
    Name,
    /// Speedup of the reference, largest first; rows without a speedup last.
    Speedup,
}

#[derive(Debug, Clone, Default)]
pub struct TableOptions {
    /// Reference library; `None` = the rule of `crate::reference` (config, default, most rows).
    pub reference: Option<String>,
    pub sort: Sort,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Column {
    pub library: String,
    pub version: String,
}

/// One cell: what a library did with a transform.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "status", rename_all = "lowercase")]
pub enum Cell {
    Ok {
        /// The row's headline figure (`Row::measured`); `Table::figure` says which it is.
        figure: f64,
        std: Option<f64>,
        ci_low: Option<f64>,
        ci_high: Option<f64>,
        /// What the untimed check saw of the library's own output, when the source recorded it.
        #[serde(skip_serializing_if = "Option::is_none")]
        form: Option<Form>,
    },
    /// Too slow for training use; `preflight` is the preflight throughput when known.
    Slow {
        preflight: Option<f64>,
    },
    Unsupported {
        reason: Option<String>,
    },
    Error {
        reason: Option<String>,
    },
    /// The library's results do not mention the transform (shown like unsupported).
    Missing,
}

/// A measured cell's output form, from the untimed check: whether the library's own output was
/// contiguous (false: a strided view or lazy work, so every timed call also forced it) and the
/// share of apply + force that forcing took (near 1: the row measures a copy, not the transform).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Form {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_contiguous: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub force_share: Option<f64>,
}

impl Form {
    fn of(r: &Row) -> Option<Form> {
        (r.output_contiguous.is_some() || r.force_share.is_some()).then_some(Form {
            output_contiguous: r.output_contiguous,
            force_share: r.force_share,
        })
    }
}

impl Cell {
    fn from_row(row: Option<&Row>) -> Cell {
        let Some(r) = row else { return Cell::Missing };
        match (r.status, r.measured()) {
            (Status::Ok, Some(figure)) => Cell::Ok {
                figure,
                std: r.std,
                ci_low: r.ci_low,
                ci_high: r.ci_high,
                form: Form::of(r),
            },
            (Status::Slow, _) => Cell::Slow {
                preflight: r.median,
            },
            (Status::Unsupported, _) => Cell::Unsupported {
                reason: r.reason.clone(),
            },
            _ => Cell::Error {
                reason: r.reason.clone(),
            },
        }
    }

    /// The headline figure of a measured cell.
    pub fn figure(&self) -> Option<f64> {
        match self {
            Cell::Ok { figure, .. } => Some(*figure),
            _ => None,
        }
    }

    /// The output form of a measured cell, when known.
    pub fn form(&self) -> Option<Form> {
        match self {
            Cell::Ok { form, .. } => *form,
            _ => None,
        }
    }

    /// Whether the library's output was not contiguous, so the row also times forcing it.
    pub fn forced(&self) -> bool {
        self.form()
            .is_some_and(|f| f.output_contiguous == Some(false))
    }
}

/// The reference library's speedup over another library at one transform: paired (the median
/// over interleaved rounds of the per-round ratio, with its 95% interval) when both were measured
/// in the same rounds, else the ratio of the two figures.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Ratio {
    pub value: f64,
    pub paired: bool,
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TableRow {
    pub transform: String,
    /// One per column, in column order.
    pub cells: Vec<Cell>,
    /// Fastest library of the row, when at least two measured it.
    pub fastest: Option<String>,
    /// The reference's speedup over the fastest other library that measured the row.
    pub speedup: Option<f64>,
    /// Whether `speedup` is paired, and its interval when it is.
    pub speedup_paired: bool,
    pub speedup_ci: Option<[f64; 2]>,
    /// The reference's speedup over each column's library (none for the reference's own).
    pub ratios: Vec<Option<Ratio>>,
    /// Pipeline groups: each cell's throughput as a share of its library's own decode ceiling
    /// (the `DecodeOnly` row: decode → crop → normalize, no transform); none for the ceiling row.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub of_ceiling: Vec<Option<f64>>,
    /// Pipeline groups: each cell's time to first batch in seconds (loader built → first batch),
    /// by column; empty where no row of the group recorded one.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub first_batch_s: Vec<Option<f64>>,
    /// Video groups: each measured cell in frames/s (clips/s × its file's clip length), by column.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub frames_per_sec: Vec<Option<f64>>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FooterEntry {
    pub library: String,
    /// Rows this library measured (status ok) out of `total`.
    pub measured: usize,
    pub total: usize,
    /// Rows both this library and the reference measured (0 for the reference itself).
    pub common: usize,
    /// Of those, rows with a paired speedup (measured in the same interleaved rounds).
    pub paired: usize,
    /// Median over those rows of the reference's speedup over this library (paired where the
    /// row has it, else the ratio of the figures).
    pub median_speedup: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Table {
    pub key: GroupKey,
    pub title: String,
    pub media: Media,
    pub unit: &'static str,
    /// Video groups: the unit of each cell's second figure (`frames/s`); none for images.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frames_unit: Option<&'static str>,
    /// Throughput at the run's slow threshold (items/s): slow cells are at or below it.
    pub slow_items_per_sec: f64,
    pub reference: String,
    /// Why `reference` is the reference.
    pub reference_why: crate::reference::Why,
    /// Whether the reference library has results in this group.
    pub reference_present: bool,
    /// Which figure the cells show (`fastest run`; sources without a figure add
    /// `median run (file without a figure)`), from `Row::headline`.
    pub figure: String,
    pub columns: Vec<Column>,
    pub rows: Vec<TableRow>,
    pub footer: Vec<FooterEntry>,
    /// Rows whose speedup is paired.
    pub paired_rows: usize,
    /// The ceiling row's name when the group has one (pipeline groups).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ceiling: Option<String>,
    /// Transforms no library in the group measured or tried (all unsupported): not in `rows`,
    /// named once under the table.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unmeasured: Vec<String>,
}

impl Table {
    /// `(transform, library, force share)` of every measured cell whose output was not
    /// contiguous, in row then column order.
    pub fn forced_cells(&self) -> Vec<(&str, &str, Option<f64>)> {
        self.rows
            .iter()
            .flat_map(|r| {
                r.cells.iter().zip(&self.columns).filter_map(|(c, col)| {
                    let share = c.form().filter(|_| c.forced())?.force_share;
                    Some((r.transform.as_str(), col.library.as_str(), share))
                })
            })
            .collect()
    }

    /// The line that names the collapsed rows, when there are any.
    pub fn unmeasured_note(&self) -> Option<String> {
        (!self.unmeasured.is_empty()).then(|| {
            format!(
                "Not supported by any library here ({}): {}",
                self.unmeasured.len(),
                self.unmeasured.join(", ")
            )
        })
    }

    /// `≤20 img/s`: the label of slow cells.
    pub fn slow_label(&self) -> String {
        format!(
            "≤{} {}",
            crate::number::fmt_num(self.slow_items_per_sec),
            self.unit
        )
    }
}

/// The reference library of a dataset (the rule lives in `crate::reference`).
pub fn resolve_reference(
    data: &Dataset,
    requested: Option<&str>,
) -> anyhow::Result<crate::reference::Choice> {
    crate::reference::choose(
        requested,
        data.configured_reference(),
        &data.measured_counts(),
    )
}

/// One table per group, in group order.
pub fn build_tables(data: &Dataset, opts: &TableOptions) -> anyhow::Result<Vec<Table>> {
    let reference = resolve_reference(data, opts.reference.as_deref())?;
    Ok(data
        .groups()
        .iter()
        .map(|g| build(g, &reference, opts.sort))
        .collect())
}

/// Whether no library measured or tried the row: every cell unsupported or missing. Such rows
/// are collapsed into one line that names them (errors and slow cells keep their row).
pub fn is_unmeasured(cells: &[Cell]) -> bool {
    cells
        .iter()
        .all(|c| matches!(c, Cell::Unsupported { .. } | Cell::Missing))
}

fn build(group: &Group<'_>, choice: &crate::reference::Choice, sort: Sort) -> Table {
    let reference = choice.library.as_str();
    let mut libs = group.libraries();
    let reference_present = libs.contains(&reference);
    if reference_present {
        libs.retain(|l| *l != reference);
        libs.insert(0, reference);
    }
    let columns: Vec<Column> = libs
        .iter()
        .map(|l| Column {
            library: l.to_string(),
            version: group.version(l),
        })
        .collect();
    let ceilings = ceiling_medians(group, &libs);
    let (mut rows, unmeasured): (Vec<TableRow>, Vec<TableRow>) = group
        .transforms()
        .into_iter()
        .map(|t| {
            let mut row = table_row(group, t, &libs, reference_present);
            let own: Vec<Option<f64>> = libs
                .iter()
                .map(|l| group.row(l, t).and_then(|r| r.ceiling_share))
                .collect();
            row.of_ceiling = shares_of_ceiling(&row, &own, ceilings.as_ref());
            row.first_batch_s = first_batches(group, t, &libs);
            row
        })
        .partition(|r| !is_unmeasured(&r.cells));
    if sort == Sort::Speedup {
        rows.sort_by(|a, b| {
            b.speedup
                .unwrap_or(f64::NEG_INFINITY)
                .total_cmp(&a.speedup.unwrap_or(f64::NEG_INFINITY))
        });
    }
    let footer = footer(&libs, &rows, reference_present);
    let paired_rows = rows.iter().filter(|r| r.speedup_paired).count();
    Table {
        title: group.key.title(),
        key: group.key.clone(),
        media: group.media(),
        unit: if group.key.variant == crate::model::COUNT_VARIANT {
            crate::model::COUNT_UNIT
        } else {
            unit(group.media())
        },
        frames_unit: (group.media() == Media::Video).then_some(Media::FRAMES_UNIT),
        slow_items_per_sec: 1.0 / group.slow_threshold(),
        reference: reference.to_string(),
        reference_why: choice.why,
        reference_present,
        figure: figure_label(group),
        columns,
        rows,
        footer,
        paired_rows,
        ceiling: ceilings.map(|(name, _)| name),
        unmeasured: unmeasured.into_iter().map(|r| r.transform).collect(),
    }
}

/// The figures a group's measured rows show, joined (`fastest run`, or `fastest run; median run
/// (file without a figure)` when some sources lack one).
pub fn figure_label(group: &Group<'_>) -> String {
    if group.key.variant == crate::model::COUNT_VARIANT {
        return "items per 10⁹ instructions counted under Valgrind (median over processes)".into();
    }
    let labels: std::collections::BTreeSet<String> = group
        .rows
        .iter()
        .filter(|r| r.status == Status::Ok)
        .filter_map(|r| r.headline())
        .map(|h| h.label())
        .collect();
    if labels.is_empty() {
        return augbench_core::policy::FIGURE_ESTIMATOR.label().to_string();
    }
    labels.into_iter().collect::<Vec<_>>().join("; ")
}

/// Each library's ceiling throughput in the group (by column), when the group has ceiling rows.
/// The heading of the time-to-first-batch table every renderer draws under a pipeline group.
pub const FIRST_BATCH_TITLE: &str =
    "Time to first batch [s] (the loader built → its first batch, outside every timed window):";

/// Each column's time to first batch for transform `t` (pipeline rows); empty when none of
/// them recorded one.
fn first_batches(group: &Group<'_>, t: &str, libs: &[&str]) -> Vec<Option<f64>> {
    let v: Vec<Option<f64>> = libs
        .iter()
        .map(|l| group.row(l, t).and_then(|r| r.first_batch_s))
        .collect();
    if v.iter().all(Option::is_none) {
        Vec::new()
    } else {
        v
    }
}

fn ceiling_medians(group: &Group<'_>, libs: &[&str]) -> Option<(String, Vec<Option<f64>>)> {
    let name = &augbench_catalog::recipe::Recipe::get().ceiling;
    let medians: Vec<Option<f64>> = libs
        .iter()
        .map(|l| Cell::from_row(group.row(l, name)).figure())
        .collect();
    medians
        .iter()
        .any(Option::is_some)
        .then(|| (name.clone(), medians))
}

/// Each cell's share of its library's ceiling: the share paired with the ceiling's windows of the
/// row's own rounds (`own`, by column) where the source recorded one, else the cell's figure ÷ the
/// ceiling row's.
fn shares_of_ceiling(
    row: &TableRow,
    own: &[Option<f64>],
    ceilings: Option<&(String, Vec<Option<f64>>)>,
) -> Vec<Option<f64>> {
    let Some((name, medians)) = ceilings else {
        return Vec::new();
    };
    if row.transform == *name {
        return vec![None; row.cells.len()];
    }
    row.cells
        .iter()
        .zip(medians)
        .enumerate()
        .map(|(k, (c, ceiling))| {
            let figure = c.figure()?;
            own.get(k)
                .copied()
                .flatten()
                .or_else(|| Some(figure / ceiling.filter(|m| *m > 0.0)?))
        })
        .collect()
}

fn table_row(
    group: &Group<'_>,
    transform: &str,
    libs: &[&str],
    reference_present: bool,
) -> TableRow {
    let cells: Vec<Cell> = libs
        .iter()
        .map(|l| Cell::from_row(group.row(l, transform)))
        .collect();
    let measured: Vec<(usize, f64)> = cells
        .iter()
        .enumerate()
        .filter_map(|(i, c)| c.figure().map(|m| (i, m)))
        .collect();
    let fastest = (measured.len() >= 2)
        .then(|| measured.iter().max_by(|a, b| a.1.total_cmp(&b.1)))
        .flatten()
        .map(|(i, _)| libs[*i].to_string());
    let ratios: Vec<Option<Ratio>> = libs
        .iter()
        .enumerate()
        .map(|(i, lib)| {
            let both = reference_present && i > 0;
            both.then(|| ratio(group, libs[0], lib, transform, &cells[0], &cells[i]))
                .flatten()
        })
        .collect();
    let fastest_other = measured
        .iter()
        .filter(|(i, _)| *i != 0)
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .and_then(|(i, _)| ratios[*i]);
    TableRow {
        transform: transform.to_string(),
        cells,
        fastest,
        speedup: fastest_other.map(|r| r.value),
        speedup_paired: fastest_other.is_some_and(|r| r.paired),
        speedup_ci: fastest_other.and_then(|r| r.ci_low.zip(r.ci_high).map(|(l, h)| [l, h])),
        ratios,
        of_ceiling: Vec::new(),
        first_batch_s: Vec::new(),
        frames_per_sec: frames_per_sec(group, transform, libs),
    }
}

/// Video groups: each library's frames/s at `transform`; empty for images.
fn frames_per_sec(group: &Group<'_>, transform: &str, libs: &[&str]) -> Vec<Option<f64>> {
    if group.media() != Media::Video {
        return Vec::new();
    }
    libs.iter()
        .map(|l| group.row(l, transform)?.frames_per_sec())
        .collect()
}

/// The reference's speedup over `other` where both measured the transform: paired when they
/// were timed in the same rounds, else the ratio of the figures.
fn ratio(
    group: &Group<'_>,
    reference: &str,
    other: &str,
    transform: &str,
    a: &Cell,
    b: &Cell,
) -> Option<Ratio> {
    let (ma, mb) = (a.figure()?, b.figure()?);
    Some(match group.paired(reference, other, transform) {
        Some(p) => {
            // Where a repeat of the run lands (the rerun interval over worker processes) where the
            // source recorded it; else the interval over rounds (older sources).
            let (lo, hi) = p.rerun.unwrap_or((p.ci_low, p.ci_high));
            Ratio {
                value: p.ratio,
                paired: true,
                ci_low: Some(lo),
                ci_high: Some(hi),
            }
        }
        None => Ratio {
            value: ma / mb,
            paired: false,
            ci_low: None,
            ci_high: None,
        },
    })
}

fn footer(libs: &[&str], rows: &[TableRow], reference_present: bool) -> Vec<FooterEntry> {
    libs.iter()
        .enumerate()
        .map(|(i, lib)| {
            let measured = rows
                .iter()
                .filter(|r| r.cells[i].figure().is_some())
                .count();
            let ratios: Vec<Ratio> = if reference_present && i > 0 {
                rows.iter().filter_map(|r| r.ratios[i]).collect()
            } else {
                Vec::new()
            };
            let values: Vec<f64> = ratios.iter().map(|r| r.value).collect();
            FooterEntry {
                library: lib.to_string(),
                measured,
                total: rows.len(),
                common: ratios.len(),
                paired: ratios.iter().filter(|r| r.paired).count(),
                median_speedup: (!values.is_empty()).then(|| augbench_stats::median(&values)),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(figure: f64) -> Cell {
        Cell::Ok {
            figure,
            std: None,
            ci_low: None,
            ci_high: None,
            form: None,
        }
    }

    fn row(transform: &str, cells: Vec<Cell>) -> TableRow {
        TableRow {
            transform: transform.into(),
            cells,
            fastest: None,
            speedup: None,
            speedup_paired: false,
            speedup_ci: None,
            ratios: Vec::new(),
            of_ceiling: Vec::new(),
            first_batch_s: Vec::new(),
            frames_per_sec: Vec::new(),
        }
    }

    #[test]
    fn a_row_reads_against_its_own_librarys_ceiling() {
        let ceilings = (
            "DecodeOnly".to_string(),
            vec![Some(800.0), Some(400.0), None],
        );
        let r = row("Rotate", vec![ok(400.0), ok(300.0), ok(100.0)]);
        let shares = shares_of_ceiling(&r, &[], Some(&ceilings));
        assert_eq!(shares, [Some(0.5), Some(0.75), None]);
        // A share paired in the row's own rounds wins over the ceiling row measured apart.
        let paired = shares_of_ceiling(&r, &[Some(0.6), None, Some(0.9)], Some(&ceilings));
        assert_eq!(paired, [Some(0.6), Some(0.75), Some(0.9)]);
        let own = row("DecodeOnly", vec![ok(800.0), ok(400.0), Cell::Missing]);
        assert_eq!(
            shares_of_ceiling(&own, &[], Some(&ceilings)),
            [None, None, None]
        );
        let unsupported = row(
            "Rotate",
            vec![Cell::Unsupported { reason: None }, ok(1.0), ok(1.0)],
        );
        let shares = shares_of_ceiling(&unsupported, &[Some(0.5)], Some(&ceilings));
        assert_eq!(shares[0], None, "no share without a measured cell");
        assert!(
            shares_of_ceiling(&r, &[], None).is_empty(),
            "micro groups have no ceiling"
        );
    }
}
