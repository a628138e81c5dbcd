//! The normalized model every report reads: one `Row` per (library, transform) measurement,
//! whatever the input was (our result JSON, the public reference format, or a cell log), plus
//! the per-file context (`Source`) the HTML report shows. Rows are grouped by `GroupKey`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use augbench_core::Media;
use augbench_core::results::Status;
use augbench_stats::{Headline, Recorded};
use serde::Serialize;

/// One table's identity: rows from different groups are never compared with each other.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct GroupKey {
    pub scenario: String,
    pub mode: String,
    pub device: String,
    /// Pipeline sweep point (`augment w4 b32`); empty for micro.
    pub variant: String,
}

impl GroupKey {
    /// Human title: `image-rgb · micro · cpu`, plus the variant when there is one.
    pub fn title(&self) -> String {
        let mut t = format!("{} · {} · {}", self.scenario, self.mode, self.device);
        if !self.variant.is_empty() {
            t.push_str(" · ");
            t.push_str(&self.variant);
        }
        t
    }

    /// Marker name for `docs update`: `IMAGE-RGB-MICRO`, with `-CUDA` for non-CPU devices and
    /// the variant appended for pipeline sweep points.
    pub fn marker_name(&self) -> String {
        let mut parts = vec![self.scenario.clone(), self.mode.clone()];
        if self.device != "cpu" {
            parts.push(self.device.clone());
        }
        parts.extend(self.variant_words());
        parts.join("-").to_uppercase()
    }

    /// The variant's words for markers and file names: its separators (` · `, ` + `) dropped.
    fn variant_words(&self) -> impl Iterator<Item = String> + '_ {
        self.variant
            .split_whitespace()
            .filter(|w| !matches!(*w, "·" | "+"))
            .map(str::to_string)
    }

    /// File-name stem for plots: `image-rgb_micro_cpu[_<variant>]`.
    pub fn file_stem(&self) -> String {
        let mut parts = vec![
            self.scenario.clone(),
            self.mode.clone(),
            self.device.clone(),
        ];
        parts.extend(self.variant_words());
        parts.join("_")
    }
}

/// One measurement (or non-measurement) of one transform by one library.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    pub scenario: String,
    pub mode: String,
    pub media: Media,
    /// Video: frames per clip (from the results metadata), so frames/s = clips/s × this.
    pub clip_length: Option<u64>,
    pub library: String,
    pub library_version: String,
    pub device: String,
    pub variant: String,
    pub transform: String,
    pub status: Status,
    /// Median throughput (items/s); for `slow`, the preflight throughput when known.
    pub median: Option<f64>,
    /// The headline figure the source recorded (results' `figure_*`, cells' figure columns),
    /// `None` in sources without one; read it through `Row::headline`.
    pub figure: Option<f64>,
    pub figure_estimator: Option<String>,
    pub figure_interval: Option<(f64, f64)>,
    pub std: Option<f64>,
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    /// Rerun interval (where a repeat's median lands), when the source recorded one.
    pub rerun: Option<(f64, f64)>,
    pub throughputs: Vec<f64>,
    /// Items per thread-CPU second of each run, beside `throughputs` (results files whose workers
    /// report the thread's CPU clock; empty otherwise): what verdicts read where both sides have it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cpu_throughputs: Vec<f64>,
    /// Runs per worker process, in the order of `throughputs` (results files with several
    /// processes; empty otherwise).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub process_runs: Vec<u64>,
    /// Speedups over libraries measured in the same interleaved rounds (this ÷ partner).
    pub paired: Vec<PairedRatio>,
    /// Which rounds the row was measured in (results: `rounds_id`; cell logs: the run id). A
    /// paired speedup is only shown next to a partner row with the same value.
    pub pairing: Option<String>,
    /// Seconds per item at or above which the run called a transform slow.
    pub slow_threshold: f64,
    pub reason: Option<String>,
    /// Micro: whether the library's own output was already contiguous (false: a strided view or
    /// lazy work that the row's forcing finished), from the untimed check; `None` where unknown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_contiguous: Option<bool>,
    /// Micro: the share (0–1) of apply + force the check spent forcing the output.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub force_share: Option<f64>,
    /// Pipeline: the row's share of its decode ceiling timed in its own rounds (results'
    /// `pipeline.ceiling.ratio`); `None` where the source has none (then the share divides by
    /// the ceiling row's figure).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ceiling_share: Option<f64>,
    /// Pipeline: seconds from building the loader's iterator to its first batch (results'
    /// `pipeline.time_to_first_batch`), kept out of every timed window; `None` elsewhere.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_batch_s: Option<f64>,
    /// `measure: instructions`: the row's instruction counts under Valgrind (its figure is then
    /// items per 10⁹ instructions, `COUNT_UNIT`, never img/s).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instructions: Option<augbench_core::counts::InstructionRecord>,
    /// The transform's parameters as measured (results' `params`); `None` where the source has
    /// none. Two runs whose parameters differ measure different work (`judge::regression`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub params: Option<serde_json::Value>,
    /// File the row came from (for messages).
    pub source: PathBuf,
}

/// The unit of a counted row's figure: items per 10⁹ instructions (higher is less work, so
/// every "faster" and speedup of a table reads the same way as for img/s).
pub const COUNT_UNIT: &str = "items/Ginstr";
/// The group variant of counted rows: their own tables, never mixed with timed rows.
pub const COUNT_VARIANT: &str = "instructions";

/// The group variant of a row: its pipeline sweep point (`<scope> w<workers> b<batch>`) and its
/// target set (`image + boxes`), joined with ` · ` where it has both; target rows get their own
/// tables, never mixed with the image-only rows of the same sweep point.
pub fn group_variant(pipeline: Option<(&str, u64, u64)>, target_set: Option<&str>) -> String {
    let sweep = pipeline.map(|(scope, workers, batch)| format!("{scope} w{workers} b{batch}"));
    let set = target_set.map(|set| format!("image + {set}"));
    [sweep, set]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" · ")
}

impl Row {
    pub fn key(&self) -> GroupKey {
        GroupKey {
            scenario: self.scenario.clone(),
            mode: self.mode.clone(),
            device: self.device.clone(),
            variant: self.variant.clone(),
        }
    }

    /// Frames per second of a measured video row (figure in clips/s × frames per clip).
    pub fn frames_per_sec(&self) -> Option<f64> {
        Some(self.measured()? * self.clip_length? as f64)
    }

    /// The row's headline figure (`augbench_stats::headline`): the recorded figure, or
    /// the median (with its rerun interval), marked as such, for sources without one.
    pub fn headline(&self) -> Option<Headline> {
        augbench_stats::headline(Recorded {
            figure: self.figure,
            estimator: self.figure_estimator.as_deref(),
            figure_low: self.figure_interval.map(|i| i.0),
            figure_high: self.figure_interval.map(|i| i.1),
            median: self.median,
            rerun_low: self.rerun.map(|i| i.0).or(self.ci_low),
            rerun_high: self.rerun.map(|i| i.1).or(self.ci_high),
        })
    }

    /// The headline figure when the row was measured (status `ok`): what every table,
    /// comparison, verdict and plot shows.
    pub fn measured(&self) -> Option<f64> {
        match (self.status, &self.instructions) {
            (Status::Ok, Some(c)) => (c.per_item > 0.0).then(|| 1e9 / c.per_item),
            (Status::Ok, None) => self.headline().map(|h| h.value),
            _ => None,
        }
    }
}

/// A paired speedup: the median over interleaved rounds of this library's throughput ÷ the
/// partner's, with its 95% interval over rounds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PairedRatio {
    pub partner: String,
    pub ratio: f64,
    pub ci_low: f64,
    pub ci_high: f64,
    pub rounds: u64,
    /// Where a repeat of the run's ratio lands (95%), when the source recorded it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rerun: Option<(f64, f64)>,
    /// The per-round ratios, in round order (results files; empty where the source has none):
    /// with the row's `process_runs` they give the interval over process pairs.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ratios: Vec<f64>,
}

/// Context of one input file, for the HTML report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Source {
    pub path: PathBuf,
    pub key: GroupKey,
    pub library: String,
    pub library_version: String,
    pub system_info: serde_json::Value,
    pub library_versions: BTreeMap<String, String>,
    pub benchmark_params: serde_json::Value,
    pub thread_settings: serde_json::Value,
    /// The run's equivalence check as this file's library saw it (our result files of a run
    /// with `execution.check_equivalence`; absent otherwise).
    pub equivalence: Option<augbench_catalog::equivalence::EquivalenceSummary>,
    /// `output.reference_library` of the run config recorded in the file, when set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub configured_reference: Option<String>,
    /// A/B runs: the variant this file measured (our result files; absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variant: Option<augbench_core::variant::VariantRecord>,
    /// What the file measured over; `None` where the source does not say. Two runs over other
    /// data are not compared (`judge::regression`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<MeasuredOver>,
}

/// The items a file measured, and the files they came from where the source records them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MeasuredOver {
    pub items: u64,
    /// `50 image files, 6123456 bytes, synthetic` (not the folder's path, which differs between
    /// two clones of one dataset); `None` in the cell log, which keeps only the item count.
    pub files: Option<String>,
}

impl MeasuredOver {
    /// `50 items (50 image files, 6123456 bytes, synthetic)`.
    pub fn describe(&self) -> String {
        match &self.files {
            Some(f) => format!("{} items ({f})", self.items),
            None => format!("{} items", self.items),
        }
    }

    /// Whether two files measured over other data: other item counts, or other files where
    /// both say which.
    pub fn differs(&self, other: &MeasuredOver) -> bool {
        self.items != other.items
            || self
                .files
                .as_ref()
                .zip(other.files.as_ref())
                .is_some_and(|(a, b)| a != b)
    }
}

/// Everything loaded: rows, their sources, and warnings worth showing (NaN/zero values, …).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Dataset {
    pub rows: Vec<Row>,
    pub sources: Vec<Source>,
    pub warnings: Vec<String>,
}

/// The rows of one group.
#[derive(Debug, Clone, PartialEq)]
pub struct Group<'a> {
    pub key: GroupKey,
    pub rows: Vec<&'a Row>,
}

impl<'a> Group<'a> {
    pub fn media(&self) -> Media {
        self.rows.first().map_or(Media::Image, |r| r.media)
    }

    /// Libraries present in this group, sorted by name.
    pub fn libraries(&self) -> Vec<&'a str> {
        let set: BTreeSet<&str> = self.rows.iter().map(|r| r.library.as_str()).collect();
        set.into_iter().collect()
    }

    /// Transforms present in this group, sorted by name.
    pub fn transforms(&self) -> Vec<&'a str> {
        let set: BTreeSet<&str> = self.rows.iter().map(|r| r.transform.as_str()).collect();
        set.into_iter().collect()
    }

    /// The paired speedup of `library` over `partner` at `transform`, when they were measured in
    /// the same rounds.
    pub fn paired(&self, library: &str, partner: &str, transform: &str) -> Option<&'a PairedRatio> {
        let (a, b) = (self.row(library, transform)?, self.row(partner, transform)?);
        if a.pairing.is_none() || a.pairing != b.pairing {
            return None;
        }
        a.paired.iter().find(|p| p.partner == partner)
    }

    pub fn row(&self, library: &str, transform: &str) -> Option<&'a Row> {
        self.rows
            .iter()
            .copied()
            .find(|r| r.library == library && r.transform == transform)
    }

    /// Version(s) of a library in this group, joined with `/` when files disagree.
    pub fn version(&self, library: &str) -> String {
        let set: BTreeSet<&str> = self
            .rows
            .iter()
            .filter(|r| r.library == library && !r.library_version.is_empty())
            .map(|r| r.library_version.as_str())
            .collect();
        set.into_iter().collect::<Vec<_>>().join("/")
    }

    /// The slow threshold (s/item) of this group: the smallest one any row used.
    pub fn slow_threshold(&self) -> f64 {
        self.rows
            .iter()
            .map(|r| r.slow_threshold)
            .fold(f64::INFINITY, f64::min)
    }
}

impl Dataset {
    /// Groups in key order; a group never mixes scenarios, modes, devices or sweep points.
    pub fn groups(&self) -> Vec<Group<'_>> {
        let mut map: BTreeMap<GroupKey, Vec<&Row>> = BTreeMap::new();
        for r in &self.rows {
            map.entry(r.key()).or_default().push(r);
        }
        map.into_iter()
            .map(|(key, rows)| Group { key, rows })
            .collect()
    }

    /// Every library present, sorted.
    pub fn libraries(&self) -> Vec<&str> {
        let set: BTreeSet<&str> = self.rows.iter().map(|r| r.library.as_str()).collect();
        set.into_iter().collect()
    }

    /// The reference library named by the first source's run config, when any names one.
    pub fn configured_reference(&self) -> Option<&str> {
        self.sources
            .iter()
            .find_map(|s| s.configured_reference.as_deref())
    }

    /// Every library present with the rows it measured (status ok), sorted by name.
    pub fn measured_counts(&self) -> Vec<(String, usize)> {
        let mut counts: BTreeMap<String, usize> = BTreeMap::new();
        for r in &self.rows {
            *counts.entry(r.library.clone()).or_default() += usize::from(r.measured().is_some());
        }
        counts.into_iter().collect()
    }

    pub fn extend(&mut self, other: Dataset) {
        self.rows.extend(other.rows);
        self.sources.extend(other.sources);
        self.warnings.extend(other.warnings);
    }
}

/// `img/s` or `clips/s` (the core's unit of each media).
pub fn unit(media: Media) -> &'static str {
    media.unit()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(device: &str, variant: &str) -> GroupKey {
        GroupKey {
            scenario: "image-rgb".into(),
            mode: "micro".into(),
            device: device.into(),
            variant: variant.into(),
        }
    }

    #[test]
    fn marker_names() {
        assert_eq!(key("cpu", "").marker_name(), "IMAGE-RGB-MICRO");
        assert_eq!(key("cuda", "").marker_name(), "IMAGE-RGB-MICRO-CUDA");
        assert_eq!(
            key("cpu", "augment w4 b32").marker_name(),
            "IMAGE-RGB-MICRO-AUGMENT-W4-B32"
        );
    }

    #[test]
    fn a_variant_joins_the_sweep_point_and_the_target_set() {
        let both = group_variant(
            Some(("decode_dataloader_augment", 2, 32)),
            Some("mask+boxes"),
        );
        assert_eq!(
            both,
            "decode_dataloader_augment w2 b32 · image + mask+boxes"
        );
        assert_eq!(group_variant(None, Some("boxes")), "image + boxes");
        assert_eq!(
            group_variant(Some(("augment", 4, 8)), None),
            "augment w4 b8"
        );
        let k = key("cpu", &both);
        assert_eq!(
            k.marker_name(),
            "IMAGE-RGB-MICRO-DECODE_DATALOADER_AUGMENT-W2-B32-IMAGE-MASK+BOXES"
        );
        assert_eq!(
            k.file_stem(),
            "image-rgb_micro_cpu_decode_dataloader_augment_w2_b32_image_mask+boxes"
        );
    }

    #[test]
    fn file_stems() {
        assert_eq!(key("cpu", "").file_stem(), "image-rgb_micro_cpu");
        assert_eq!(
            key("cuda", "augment w4 b32").file_stem(),
            "image-rgb_micro_cuda_augment_w4_b32"
        );
    }

    #[test]
    fn data_differs_by_items_or_by_files_where_both_sides_name_them() {
        let over = |items, files: Option<&str>| MeasuredOver {
            items,
            files: files.map(str::to_string),
        };
        let synth = Some("50 image files, 6123456 bytes, synthetic");
        assert!(!over(50, synth).differs(&over(50, synth)));
        assert!(over(50, synth).differs(&over(200, synth)));
        assert!(over(50, synth).differs(&over(50, Some("50 image files, 999 bytes"))));
        // The cell log keeps only the count: the files are not compared then.
        assert!(!over(50, synth).differs(&over(50, None)));
        assert!(over(50, None).differs(&over(51, None)));
        assert_eq!(
            over(50, synth).describe(),
            "50 items (50 image files, 6123456 bytes, synthetic)"
        );
        assert_eq!(over(8, None).describe(), "8 items");
    }
}
