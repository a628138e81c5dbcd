//! The time a plan will take (`augbench plan`'s estimate): worker starts, media loads, each
//! transform's set-up and rounds, from policy's rough per-item costs or, where an earlier result
//! of the same job says how fast a transform ran, from that. With `execution.precision` the
//! rounds are a range: every transform pinned down after the minimum rounds, or every transform
//! spending its budget. Pure: the caller reads earlier results and passes them in.

use std::collections::BTreeMap;

use crate::matrix::{Backend, Media, Mode};
use crate::plan::Plan;
use crate::policy;
use crate::time_split::seconds;

/// What an earlier run measured: seconds per item of (library, transform) (from its median, or
/// its preflight when it was slow), and where that came from.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Prior {
    pub sec_per_item: BTreeMap<(String, String), f64>,
    /// Seconds one worker start took (with its media load), when the earlier run recorded it.
    pub worker_start_sec: Option<f64>,
    /// The files the figures came from, for the basis line.
    pub sources: Vec<String>,
}

/// The estimate: a range of seconds (equal ends without a precision target), its parts at the
/// low end, and what it is based on.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    pub low_sec: f64,
    pub high_sec: f64,
    pub parts: Vec<(String, f64)>,
    pub basis: String,
}

impl Estimate {
    /// Lines for `plan`, as YAML comments (the plan above them stays valid YAML).
    pub fn comment(&self) -> String {
        let total = if (self.high_sec - self.low_sec).abs() < 1.0 {
            format!("~{}", seconds(self.low_sec))
        } else {
            format!(
                "{} to {} (precision target: rows pinned down early stop early; the high end is every row spending its budget)",
                seconds(self.low_sec),
                seconds(self.high_sec)
            )
        };
        let parts: Vec<String> = self
            .parts
            .iter()
            .map(|(p, s)| format!("{p} {}", seconds(*s)))
            .collect();
        format!(
            "# time estimate: {total}\n#   {}\n#   based on: {}\n",
            parts.join(", "),
            self.basis
        )
    }
}

/// Estimates `plan`'s wall time on one machine.
pub fn estimate(plan: &Plan, prior: &Prior) -> Estimate {
    let cfg = &plan.config;
    let media = cfg.selection.media.unwrap_or(Media::Image);
    let e = &cfg.execution;
    let mode = cfg.selection.mode.unwrap_or(Mode::Micro);
    let processes = e
        .processes
        .unwrap_or(policy::default_processes(mode))
        .max(1) as f64;
    let items = cfg
        .data
        .num_items
        .unwrap_or(policy::default_num_items(media)) as f64;
    let mut starts = 0.0;
    let mut load = 0.0;
    let mut setup = 0.0;
    let (mut low, mut high) = (0.0, 0.0);
    let mut from_prior = 0usize;
    let mut rows = 0usize;
    for job in &plan.jobs {
        let native = job.backend == Backend::NativeWorker;
        starts += processes * prior.worker_start_sec.unwrap_or(start_sec(native));
        if prior.worker_start_sec.is_none() {
            load += processes * items * policy::est_decode_sec_per_item(media);
        }
        for t in &job.transforms {
            rows += 1;
            let key = (job.library.clone(), t.clone());
            let spi = match prior.sec_per_item.get(&key) {
                Some(s) => {
                    from_prior += 1;
                    *s
                }
                None => policy::cloud_est_sec_per_item(media),
            };
            let row = row_sec(cfg, media, items, spi);
            setup += processes * row.setup;
            low += processes * row.low;
            high += processes * row.high;
        }
    }
    // Interleaved rounds share one budget across a transform's libraries.
    if let Some(budget) = e.precision.and(e.transform_budget_sec) {
        let transforms = plan.jobs.first().map_or(0, |j| j.transforms.len()) as f64;
        high = high.min(budget * transforms).max(low);
    }
    let fixed = starts + load + setup;
    let basis = basis(prior, from_prior, rows);
    Estimate {
        low_sec: fixed + low,
        high_sec: fixed + high,
        parts: vec![
            ("worker start".into(), starts),
            ("media load".into(), load),
            ("set-up (check, preflight, warmup)".into(), setup),
            ("timed rounds".into(), low),
        ],
        basis,
    }
}

fn start_sec(native: bool) -> f64 {
    if native {
        policy::EST_NATIVE_WORKER_START_SEC
    } else {
        policy::EST_PYTHON_WORKER_START_SEC
    }
}

struct RowSec {
    setup: f64,
    low: f64,
    high: f64,
}

/// One library's transform in one process: set-up, and its rounds at the fewest and the most.
fn row_sec(cfg: &crate::RunConfig, media: Media, items: f64, spi: f64) -> RowSec {
    let e = &cfg.execution;
    let preflight = policy::slow_preflight_items(media) as f64 * spi;
    let slow = e
        .slow_threshold_sec_per_item
        .unwrap_or_else(|| policy::slow_threshold_sec_per_item(media));
    if spi >= slow && e.disable_slow_skip != Some(true) {
        return RowSec {
            setup: preflight,
            low: 0.0,
            high: 0.0,
        };
    }
    let subset = (policy::WARMUP_SUBSET_ITEMS as f64).min(items);
    let window = policy::warmup_window(media) as f64;
    let warmup = (window * policy::WARMUP_MIN_WINDOWS as f64 * subset * spi)
        .min(e.warmup.max_seconds.unwrap_or(policy::WARMUP_MAX_SEC));
    let min_time = e.min_time.unwrap_or(policy::DEFAULT_MIN_TIME_SEC);
    let round = (items * spi).max(min_time) + subset * spi;
    let (low, high) = match e.precision {
        Some(_) => (
            policy::PRECISION_MIN_ROUNDS as f64,
            policy::PRECISION_MAX_RUNS as f64,
        ),
        None => {
            let n = e.num_runs.unwrap_or(policy::DEFAULT_NUM_RUNS) as f64;
            (n, n)
        }
    };
    RowSec {
        setup: preflight + warmup + policy::EST_SETUP_SEC,
        low: low * round,
        high: high * round,
    }
}

fn basis(prior: &Prior, from_prior: usize, rows: usize) -> String {
    let policy_part = "policy's rough costs (worker start, decode and transform time per item)";
    if from_prior == 0 {
        return format!("{policy_part}; no earlier result of these jobs in the output folder");
    }
    format!(
        "{from_prior} of {rows} rows from earlier results ({}), the rest from {policy_part}",
        prior.sources.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(extra: &str) -> Plan {
        let text = format!(
            "version: 1\nselection:\n  scenario: image-rgb\n  mode: micro\n  libraries: [pillow, image]\n  transforms: [Resize, HorizontalFlip]\ndata:\n  num_items: 100\nexecution:\n  processes: 1\n{extra}"
        );
        let path = std::path::Path::new("cfg.yaml");
        let cfg = crate::RunConfig::from_yaml(&text, path)
            .and_then(|c| crate::resolve(c, &crate::Source::new(path, &text)));
        crate::plan::build(&cfg.unwrap_or_else(|e| panic!("{e}")))
    }

    #[test]
    fn a_fixed_budget_is_one_figure_and_a_precision_target_a_range() {
        let fixed = estimate(&plan(""), &Prior::default());
        assert_eq!(fixed.low_sec, fixed.high_sec);
        assert!(fixed.low_sec > 0.0);
        assert!(fixed.basis.contains("no earlier result"), "{}", fixed.basis);
        let p = estimate(&plan("  precision: 0.03\n"), &Prior::default());
        assert!(p.high_sec > p.low_sec, "{p:?}");
        assert!(p.comment().contains(" to "), "{}", p.comment());
    }

    #[test]
    fn earlier_results_replace_policy_costs_and_say_so() {
        let mut prior = Prior::default();
        prior
            .sec_per_item
            .insert(("pillow".into(), "Resize".into()), 0.04);
        prior.sources.push("out/pillow.json".into());
        let slow = estimate(&plan(""), &prior);
        let base = estimate(&plan(""), &Prior::default());
        assert!(slow.low_sec > base.low_sec, "{slow:?} vs {base:?}");
        assert!(slow.basis.starts_with("1 of 4 rows"), "{}", slow.basis);
    }
}
