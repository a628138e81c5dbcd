//! The time a plan will take (`augbench plan`'s estimate): worker starts, media loads, each
//! transform's set-up and rounds (pipeline: loader starts, windows, rewarms and the ceiling's
//! companion windows), from what earlier results of the same jobs measured (speeds, unsupported
//! rows), the shipped cost table (`catalog::costs`), or policy's rough costs. With
//! `execution.precision` it is a range: every transform pinned down after the minimum rounds, or
//! every one spending its budget over the most processes. Pure: the caller passes both in.

use std::collections::BTreeMap;

use crate::config::FullPass;
use crate::plan::Plan;
use crate::policy;
use augbench_catalog::costs::Costs;
use augbench_catalog::matrix::{Backend, Media, Mode};
use augbench_stats::duration::seconds;

/// What an earlier run measured: seconds per item of (library, transform) (from its median, or
/// its preflight when it was slow), and where that came from.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Prior {
    pub sec_per_item: BTreeMap<(String, String), f64>,
    /// Seconds one worker start took (with its media load), when the earlier run recorded it.
    pub worker_start_sec: Option<f64>,
    /// Rows an earlier run recorded `unsupported`: they cost nothing.
    pub unsupported: std::collections::BTreeSet<(String, String)>,
    /// Rows the adapters say they do not build, known before any worker starts (the caller asks
    /// them): they cost nothing either.
    pub unbuildable: std::collections::BTreeSet<(String, String)>,
    /// Rows an earlier run recorded `slow`: their `sec_per_item` is the preflight's, per call.
    pub slow: std::collections::BTreeSet<(String, String)>,
    /// The files the figures came from, for the basis line.
    pub sources: Vec<String>,
    /// The shipped cost table (`Costs::get()` in `plan`), for what no earlier result says: each
    /// library's worker start, and micro image rows' costs. `None`: policy's flat costs.
    pub table: Option<&'static Costs>,
}

/// The estimate: a range of seconds (equal ends without a precision target), its parts at the
/// low end, and what it is based on.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    pub low_sec: f64,
    pub high_sec: f64,
    pub parts: Vec<(String, f64)>,
    pub basis: String,
    /// How sure the estimate is, in words (`sureness`).
    pub sureness: String,
}

impl Estimate {
    /// Lines for `plan`, as YAML comments (the plan above them stays valid YAML).
    pub fn comment(&self) -> String {
        let total = if (self.high_sec - self.low_sec).abs() < 1.0 {
            format!("~{}", seconds(self.low_sec))
        } else {
            format!(
                "{} to {} (precision target: rows pinned down early stop early; the high end is every row spending its budget and taking the most processes)",
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
            "# time estimate: {total}\n#   {}\n#   based on: {}\n#   how sure: {}\n",
            parts.join(", "),
            self.basis,
            self.sureness
        )
    }
}

/// Estimates `plan`'s wall time on a machine with `threads` logical threads (loader workers
/// share them).
pub fn estimate(plan: &Plan, prior: &Prior, threads: u64) -> Estimate {
    if plan.config.execution.measure == Some(crate::config::Measure::Instructions) {
        return estimate_counts(plan);
    }
    let shape = Shape::of(plan, threads);
    let fewest_rounds = fewest_rounds(plan, prior, &shape);
    let mut t = Totals::default();
    for job in &plan.jobs {
        let (start, load) = start_and_load(prior, &shape, job);
        t.starts += shape.processes * start;
        t.load += shape.processes * load;
        let (mut companion, mut ceiling_loader) = (false, 0.0);
        for name in &job.transforms {
            t.rows += 1;
            let spi = match row_cost(prior, &shape, job, name) {
                RowCost::Unsupported => {
                    t.from_prior += 1;
                    continue;
                }
                RowCost::Unbuildable => {
                    t.unbuildable += 1;
                    continue;
                }
                RowCost::Measured(spi) => {
                    t.from_prior += 1;
                    spi
                }
                RowCost::Shipped(spi) => {
                    t.from_table += 1;
                    spi
                }
                RowCost::Policy(spi) => spi,
            };
            let ceiling = *name == augbench_catalog::recipe::Recipe::get().ceiling;
            let fewest = fewest_rounds.get(name.as_str()).copied();
            let row = shape.row_sec(&plan.config, spi, ceiling, fewest);
            if ceiling {
                ceiling_loader = row.loader;
            }
            companion |= shape.pipeline() && shape.interleaved && !ceiling && row.high > 0.0;
            t.add(&row, shape.processes);
        }
        if companion && ceiling_loader > 0.0 {
            // The ceiling's companion loader: started and warmed once per worker process, as
            // the ceiling row's own loader is.
            t.loader += shape.processes * ceiling_loader;
        }
    }
    t.finish(plan, prior, &shape)
}

/// One worker start's seconds and its media load's: an earlier run's (the load inside its
/// start), else the shipped table's start for the library (any mode: a start is its imports)
/// and, for micro image rows, its load. A pipeline loads nothing up front (its loader decodes).
fn start_and_load(prior: &Prior, shape: &Shape, job: &crate::plan::Job) -> (f64, f64) {
    if let Some(s) = prior.worker_start_sec {
        return (s, 0.0);
    }
    let listed = prior.table.and_then(|t| t.library(&job.library));
    let start = listed.map_or_else(
        || start_sec(job.backend == Backend::NativeWorker),
        |c| c.worker_start_sec,
    );
    let load = match listed {
        _ if shape.pipeline() => 0.0,
        Some(c) if shape.micro_image() => shape.items * c.load_sec_per_item,
        _ => shape.items * policy::est_decode_sec_per_item(shape.media),
    };
    (start, load)
}

/// Where a row's cost comes from: an earlier result says it costs nothing (`unsupported`), the
/// adapters do not build it, or seconds per item (an earlier result's, the shipped table's, or
/// policy's; a target row that nothing measured costs its library's image-only row's times
/// `policy::est_target_row_factor`).
enum RowCost {
    Unsupported,
    Unbuildable,
    Measured(f64),
    Shipped(f64),
    Policy(f64),
}

fn row_cost(prior: &Prior, shape: &Shape, job: &crate::plan::Job, name: &str) -> RowCost {
    let key = (job.library.clone(), name.to_string());
    if prior.unsupported.contains(&key) {
        return RowCost::Unsupported;
    }
    if prior.unbuildable.contains(&key) {
        return RowCost::Unbuildable;
    }
    if let Some(s) = prior.sec_per_item.get(&key) {
        return RowCost::Measured(shape.prior_sec_per_item(*s, prior.slow.contains(&key)));
    }
    let (library, factor) = match job.targets {
        Some(_) => (&job.adapter, policy::est_target_row_factor(shape.mode)),
        None => (&job.library, 1.0),
    };
    let plain = (library.clone(), name.to_string());
    let measured_plain = prior
        .sec_per_item
        .get(&plain)
        .filter(|_| job.targets.is_some());
    if let Some(s) = measured_plain {
        let slow = prior.slow.contains(&plain);
        return RowCost::Measured(shape.prior_sec_per_item(*s, slow) * factor);
    }
    let table = prior.table.filter(|_| shape.micro_image());
    match table.and_then(|t| t.sec_per_item(library, name)) {
        Some(s) => RowCost::Shipped(s * factor),
        None => RowCost::Policy(shape.policy_sec_per_item() * factor),
    }
}

/// Micro, interleaved, with a precision target: the fewest rounds each transform takes in a
/// process. A process's rounds end at its share of the transform's budget even before
/// `PRECISION_MIN_ROUNDS` (after one round), so a transform whose round (every library's run)
/// outlasts that share takes fewer. Empty otherwise (every row takes `rounds`' low end).
fn fewest_rounds<'p>(plan: &'p Plan, prior: &Prior, shape: &Shape) -> BTreeMap<&'p str, f64> {
    let e = &plan.config.execution;
    if e.precision.is_none() || !shape.interleaved || shape.pipeline() {
        return BTreeMap::new();
    }
    let budget = e
        .transform_budget_sec
        .unwrap_or(policy::DEFAULT_TRANSFORM_BUDGET_SEC);
    let share = budget / shape.processes;
    let mut round: BTreeMap<&str, f64> = BTreeMap::new();
    for job in &plan.jobs {
        for name in &job.transforms {
            let spi = match row_cost(prior, shape, job, name) {
                RowCost::Measured(s) | RowCost::Shipped(s) | RowCost::Policy(s) => s,
                RowCost::Unsupported | RowCost::Unbuildable => continue,
            };
            if is_slow(&plan.config, shape.media, spi) {
                continue;
            }
            *round.entry(name.as_str()).or_default() +=
                micro_round_sec(&plan.config, shape.items, spi);
        }
    }
    round
        .into_iter()
        .map(|(name, sec)| (name, budget_rounds(share, sec)))
        .collect()
}

/// Rounds a process takes before its budget `share` is spent, when each lasts `round_sec`: at
/// least one, at most `PRECISION_MIN_ROUNDS` (the low end; the rule may stop there).
fn budget_rounds(share: f64, round_sec: f64) -> f64 {
    let min = policy::PRECISION_MIN_ROUNDS as f64;
    if round_sec <= 0.0 {
        return min;
    }
    (share / round_sec).ceil().clamp(1.0, min)
}

/// What shapes every row's time: the mode, the media, the processes, the items, the schedule.
struct Shape {
    media: Media,
    mode: Mode,
    processes: f64,
    items: f64,
    interleaved: bool,
    /// Pipeline: the loader workers that run at once (at least 1: `workers: 0` loads in the main
    /// process), never more than the machine's threads.
    parallel: f64,
}

impl Shape {
    fn of(plan: &Plan, threads: u64) -> Shape {
        let cfg = &plan.config;
        let media = cfg.selection.media.unwrap_or(Media::Image);
        let mode = cfg.selection.mode.unwrap_or(Mode::Micro);
        let e = &cfg.execution;
        let workers = e.workers.unwrap_or(policy::default_workers(mode));
        let interleaved = plan.schedule == crate::config::Schedule::Interleaved;
        let configured = e
            .processes
            .unwrap_or(policy::default_processes(mode))
            .max(1);
        // A precision target is never reached over fewer processes than show their spread.
        let fewest = if e.precision.is_some() && interleaved {
            configured.max(policy::MIN_PROCESS_UNITS as u64)
        } else {
            configured
        };
        Shape {
            media,
            mode,
            processes: fewest as f64,
            items: cfg
                .data
                .num_items
                .unwrap_or(policy::default_num_items(media)) as f64,
            interleaved,
            parallel: workers.clamp(1, threads.max(1)) as f64,
        }
    }

    fn pipeline(&self) -> bool {
        self.mode == Mode::Pipeline
    }

    /// The rows the shipped cost table prices: micro image ones.
    fn micro_image(&self) -> bool {
        self.mode == Mode::Micro && self.media == Media::Image
    }

    /// Seconds per item from an earlier result: its figure's, or, for a row it recorded `slow`,
    /// its preflight's seconds per call, which a pipeline's loader workers share.
    fn prior_sec_per_item(&self, sec: f64, slow: bool) -> f64 {
        if slow && self.pipeline() {
            sec / self.parallel
        } else {
            sec
        }
    }

    /// Seconds per item when no earlier result says: one call's (micro), or one delivered
    /// item's wall time from the loader's workers together (pipeline).
    fn policy_sec_per_item(&self) -> f64 {
        if self.pipeline() {
            policy::est_pipeline_sec_per_item(self.media) / self.parallel
        } else {
            policy::cloud_est_sec_per_item(self.media)
        }
    }

    /// One row's seconds in one process; `fewest`: the transform's fewest rounds, where a
    /// budget decides them (`fewest_rounds`).
    fn row_sec(
        &self,
        cfg: &crate::RunConfig,
        spi: f64,
        ceiling: bool,
        fewest: Option<f64>,
    ) -> RowSec {
        if self.pipeline() {
            pipeline_row_sec(cfg, self, spi, ceiling)
        } else {
            row_sec(cfg, self.media, self.items, spi, fewest)
        }
    }
}

#[derive(Default)]
struct Totals {
    starts: f64,
    load: f64,
    setup: f64,
    loader: f64,
    low: f64,
    high: f64,
    rows: usize,
    from_prior: usize,
    from_table: usize,
    unbuildable: usize,
}

impl Totals {
    fn add(&mut self, row: &RowSec, processes: f64) {
        self.setup += processes * row.setup;
        self.loader += processes * row.loader;
        self.low += processes * row.low;
        self.high += processes * row.high;
    }

    fn finish(self, plan: &Plan, prior: &Prior, shape: &Shape) -> Estimate {
        let e = &plan.config.execution;
        let fixed = self.starts + self.load + self.setup + self.loader;
        let (mut high, mut fixed_high) = (self.high, fixed);
        // Interleaved, with a precision target, a transform may take more processes than
        // configured (each started and set up again), and its rounds share one budget across its
        // libraries and processes: the high end is every transform taking the most processes.
        if e.precision.is_some() && shape.interleaved {
            let most = (policy::PRECISION_MAX_PROCESSES as f64).max(shape.processes);
            fixed_high = fixed * most / shape.processes;
            high *= most / shape.processes;
            if let Some(budget) = e.transform_budget_sec {
                let transforms = plan.jobs.first().map_or(0, |j| j.transforms.len()) as f64;
                high = high.min(budget * transforms);
            }
            high = high.max(self.low);
        }
        let mut parts = vec![
            ("worker start".to_string(), self.starts),
            ("media load".to_string(), self.load),
            ("set-up (check, preflight, warmup)".to_string(), self.setup),
        ];
        if self.loader > 0.0 {
            parts.push(("loader start (with its warm batches)".into(), self.loader));
        }
        parts.push(("timed rounds".into(), self.low));
        Estimate {
            low_sec: fixed + self.low,
            high_sec: fixed_high + high,
            parts,
            basis: basis(prior, &self),
            sureness: sureness(&self),
        }
    }
}

/// `measure: instructions`: every worker start and media load under Valgrind, then per row and
/// process a warm pass and a counted pass over at most `COUNT_MAX_ITEMS` items,
/// all at policy's native cost × `VALGRIND_SLOWDOWN`.
fn estimate_counts(plan: &Plan) -> Estimate {
    let e = &plan.config.execution;
    let processes = e.processes.unwrap_or(policy::COUNT_PROCESSES) as f64;
    let media = plan.config.selection.media.unwrap_or(Media::Image);
    let loaded = plan
        .config
        .data
        .num_items
        .unwrap_or(policy::default_num_items(media)) as f64;
    let counted = loaded.min(policy::COUNT_MAX_ITEMS as f64);
    let slow = policy::VALGRIND_SLOWDOWN;
    let (mut starts, mut rows) = (0.0, 0.0);
    for job in &plan.jobs {
        let load = counted * policy::est_decode_sec_per_item(media) * slow;
        starts += processes * (policy::VALGRIND_WORKER_START_SEC + load);
        let per_row = 2.0 * counted * policy::cloud_est_sec_per_item(media) * slow;
        rows += processes * job.transforms.len() as f64 * per_row;
    }
    let total = starts + rows;
    Estimate {
        low_sec: total,
        high_sec: total,
        parts: vec![
            (
                "worker starts and media loads under valgrind".into(),
                starts,
            ),
            ("counted rows".into(), rows),
        ],
        basis: format!(
            "policy's rough costs × {slow} (callgrind's slowdown over native code); rows the library does not support cost less"
        ),
        sureness: "a rough figure: callgrind's slowdown varies several-fold between libraries"
            .to_string(),
    }
}

fn start_sec(native: bool) -> f64 {
    if native {
        policy::EST_NATIVE_WORKER_START_SEC
    } else {
        policy::EST_PYTHON_WORKER_START_SEC
    }
}

/// One row's seconds in one process: set-up, loader start, and its rounds at the fewest and the
/// most.
struct RowSec {
    setup: f64,
    loader: f64,
    low: f64,
    high: f64,
}

impl RowSec {
    /// A row that preflight records as `slow`: its preflight and nothing else.
    fn slow(preflight: f64) -> RowSec {
        RowSec {
            setup: preflight,
            loader: 0.0,
            low: 0.0,
            high: 0.0,
        }
    }
}

/// Rounds per process at the fewest and the most: `num_runs`, or the precision target's range.
fn rounds(cfg: &crate::RunConfig) -> (f64, f64) {
    let e = &cfg.execution;
    match e.precision {
        Some(_) => (
            policy::PRECISION_MIN_ROUNDS as f64,
            policy::PRECISION_MAX_RUNS as f64,
        ),
        None => {
            let n = e.num_runs.unwrap_or(policy::DEFAULT_NUM_RUNS) as f64;
            (n, n)
        }
    }
}

fn is_slow(cfg: &crate::RunConfig, media: Media, sec_per_call: f64) -> bool {
    let e = &cfg.execution;
    let slow = e
        .slow_threshold_sec_per_item
        .unwrap_or_else(|| policy::slow_threshold_sec_per_item(media));
    sec_per_call >= slow && e.disable_slow_skip != Some(true)
}

/// One library's micro transform in one process (`fewest`: its transform's fewest rounds, where
/// a budget decides them).
fn row_sec(
    cfg: &crate::RunConfig,
    media: Media,
    items: f64,
    spi: f64,
    fewest: Option<f64>,
) -> RowSec {
    let e = &cfg.execution;
    let preflight = policy::slow_preflight_items(media) as f64 * spi;
    if is_slow(cfg, media, spi) {
        return RowSec::slow(preflight);
    }
    let subset = (policy::WARMUP_SUBSET_ITEMS as f64).min(items);
    let window = policy::warmup_window(media) as f64;
    let passes = (window * policy::WARMUP_MIN_WINDOWS as f64 * subset * spi)
        .min(e.warmup.max_seconds.unwrap_or(policy::WARMUP_MAX_SEC));
    // Warmup ends with one untimed pass over every item beyond the subset, where the row takes
    // it (`auto` is counted as a fast row's rule: whether a slower row reads cold only shows then).
    let full_pass = match e.warmup.full_pass.unwrap_or(policy::WARMUP_FULL_PASS) {
        FullPass::Always => true,
        FullPass::Never => false,
        FullPass::Auto => spi < policy::WARMUP_FULL_PASS_MAX_SEC_PER_ITEM,
    };
    let warmup = passes
        + if items > subset && full_pass {
            items * spi
        } else {
            0.0
        };
    let round = micro_round_sec(cfg, items, spi);
    let (low, high) = rounds(cfg);
    let low = fewest.map_or(low, |f| f.min(low));
    RowSec {
        setup: preflight + warmup + policy::EST_SETUP_SEC,
        loader: 0.0,
        low: low * round,
        high: high * round,
    }
}

/// One library's timed run and the rewarm before it (micro): a pass, at least `min_time` long.
fn micro_round_sec(cfg: &crate::RunConfig, items: f64, spi: f64) -> f64 {
    let min_time = cfg
        .execution
        .min_time
        .unwrap_or(policy::DEFAULT_MIN_TIME_SEC);
    let subset = (policy::WARMUP_SUBSET_ITEMS as f64).min(items);
    (items * spi).max(min_time) + subset * spi
}

/// One library's pipeline transform in one process, `spi` seconds per delivered item: preflight
/// in the worker's main process, a loader started and warmed, then its windows. Interleaved, each
/// window is rewarmed first, and a row (not the ceiling itself) times the ceiling's companion
/// window beside it.
fn pipeline_row_sec(cfg: &crate::RunConfig, shape: &Shape, spi: f64, ceiling: bool) -> RowSec {
    let e = &cfg.execution;
    let per_call = spi * shape.parallel;
    let preflight = policy::slow_preflight_items(shape.media) as f64 * per_call;
    if is_slow(cfg, shape.media, per_call) {
        return RowSec::slow(preflight);
    }
    let workers = e.workers.unwrap_or(policy::default_workers(Mode::Pipeline));
    let batch = e.batch_size.unwrap_or(policy::DEFAULT_BATCH_SIZE) as f64;
    let min_batches = e
        .min_batches
        .unwrap_or_else(|| policy::default_min_batches(workers));
    let warm = policy::pipeline_warm_batches(workers, min_batches) as f64 * batch * spi;
    let min_time = e.min_time.unwrap_or(policy::DEFAULT_MIN_TIME_SEC);
    let window = (min_batches as f64 * batch * spi).max(min_time);
    let loaders = if shape.interleaved && !ceiling {
        2.0
    } else {
        1.0
    };
    let rewarm = if shape.interleaved { warm } else { 0.0 };
    let round = loaders * (window + rewarm);
    let (low, high) = rounds(cfg);
    RowSec {
        setup: preflight + policy::EST_SETUP_SEC,
        loader: policy::EST_LOADER_START_SEC + warm,
        low: low * round,
        high: high * round,
    }
}

/// How sure an estimate is, by where most of its rows' costs came from (`rows` counts the
/// buildable ones). The shipped table's and policy's figure is what docs/methodology.md
/// measured ("How close it comes"); earlier results carry the machine's load when they ran.
fn sureness(t: &Totals) -> String {
    let rows = t.rows - t.unbuildable;
    if rows > 0 && 2 * t.from_prior >= rows {
        return "most rows from this machine's earlier results: as close as the load now is to \
                then (a shared machine moves 20-50% between runs)"
            .to_string();
    }
    let from = if 2 * (t.from_prior + t.from_table) >= rows {
        "the shipped cost table was measured on"
    } else {
        "policy's costs come from"
    };
    format!(
        "within about ±{:.0}% on a 2-core VM like the one {from}; a faster or busier machine, or \
         photos instead of synthetic images, moves it; `plan` after a run of these jobs reads \
         that run's costs",
        policy::PLAN_POLICY_ERROR * 100.0
    )
}

/// Where the rows' costs came from: earlier results (named), the shipped table, policy.
fn basis(prior: &Prior, t: &Totals) -> String {
    let policy_part = "policy's rough costs (worker start, decode and transform time per item)";
    let mut from = Vec::new();
    if t.from_prior > 0 {
        from.push(format!(
            "{} of {} rows from earlier results ({})",
            t.from_prior,
            t.rows,
            prior.sources.join(", ")
        ));
    }
    if let Some(table) = prior.table.filter(|_| t.from_table > 0) {
        from.push(format!(
            "{} rows from the shipped cost table (specs/costs.yaml: {})",
            t.from_table, table.measured
        ));
    }
    let rest = t
        .rows
        .saturating_sub(t.unbuildable + t.from_prior + t.from_table);
    let mut text = match (from.is_empty(), rest) {
        (true, _) => format!("{policy_part}; no earlier result of these jobs in the output folder"),
        (false, 0) => from.join("; "),
        (false, _) => format!("{}, the rest from {policy_part}", from.join("; ")),
    };
    if t.unbuildable > 0 {
        text += &format!(
            "; {} rows the adapters do not build cost nothing",
            t.unbuildable
        );
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(text: &str) -> Plan {
        let path = std::path::Path::new("cfg.yaml");
        let cfg = crate::RunConfig::from_yaml(text, path)
            .and_then(|c| crate::resolve::resolve(c, &crate::Source::new(path, text)));
        crate::plan::build(&cfg.unwrap_or_else(|e| panic!("{e}")))
    }

    fn plan(extra: &str) -> Plan {
        let text = format!(
            "version: 1\nselection:\n  scenario: image-rgb\n  mode: micro\n  libraries: [pillow, image]\n  transforms: [Resize, HorizontalFlip]\ndata:\n  num_items: 100\nexecution:\n  processes: 1\n{extra}"
        );
        build(&text)
    }

    #[test]
    fn rows_the_adapters_do_not_build_cost_nothing_and_are_named() {
        let p = plan("");
        let all = estimate(&p, &Prior::default(), 2);
        let mut prior = Prior::default();
        prior
            .unbuildable
            .insert(("image".to_string(), "HorizontalFlip".to_string()));
        let less = estimate(&p, &prior, 2);
        assert!(less.low_sec < all.low_sec, "{less:?} vs {all:?}");
        assert!(
            less.basis
                .ends_with("; 1 rows the adapters do not build cost nothing")
        );
        assert!(!all.basis.contains("adapters"), "{}", all.basis);
    }

    #[test]
    fn a_fixed_budget_is_one_figure_and_a_precision_target_a_range() {
        let fixed = estimate(&plan(""), &Prior::default(), 2);
        assert_eq!(fixed.low_sec, fixed.high_sec);
        assert!(fixed.low_sec > 0.0);
        assert!(fixed.basis.contains("no earlier result"), "{}", fixed.basis);
        let p = estimate(&plan("  precision: 0.03\n"), &Prior::default(), 2);
        assert!(p.high_sec > p.low_sec, "{p:?}");
        assert!(p.comment().contains(" to "), "{}", p.comment());
        // One configured process: the low end takes the processes a target needs before it can
        // be reached, the high end starts up to the most.
        let units = policy::MIN_PROCESS_UNITS as f64;
        let one = part(&fixed, "worker start");
        assert!(
            (part(&p, "worker start") - units * one).abs() < 1e-9,
            "{p:?}"
        );
        let extra = (policy::PRECISION_MAX_PROCESSES as f64 - units) * one;
        assert!(p.high_sec - p.low_sec >= extra, "{p:?}");
    }

    #[test]
    fn a_budget_shorter_than_a_round_takes_fewer_rounds_at_the_low_end() {
        let at = |budget: &str| {
            let p = plan(&format!(
                "  precision: 0.05\n  transform_budget_sec: {budget}\n"
            ));
            part(&estimate(&p, &Prior::default(), 2), "timed rounds")
        };
        let (short, long) = (at("0.2"), at("1000"));
        let min = policy::PRECISION_MIN_ROUNDS as f64;
        assert!((long / short - min).abs() < 1e-9, "{short} vs {long}");
        assert_eq!(budget_rounds(10.0, 4.0), 3.0_f64.min(min));
        assert_eq!(budget_rounds(1.0, 4.0), 1.0);
        assert_eq!(budget_rounds(5.0, 0.0), min);
    }

    #[test]
    fn a_slow_row_under_auto_skips_the_full_pass_in_the_estimate() {
        let mut prior = Prior::default();
        let slow = policy::WARMUP_FULL_PASS_MAX_SEC_PER_ITEM * 2.0;
        let fast = policy::WARMUP_FULL_PASS_MAX_SEC_PER_ITEM / 2.0;
        for library in ["pillow", "image"] {
            for transform in ["Resize", "HorizontalFlip"] {
                let key = (library.to_string(), transform.to_string());
                prior.sec_per_item.insert(key, fast);
            }
        }
        prior
            .sec_per_item
            .insert(("pillow".into(), "Resize".into()), slow);
        let set_up = |extra: &str| {
            part(
                &estimate(&plan(extra), &prior, 2),
                "set-up (check, preflight, warmup)",
            )
        };
        let (auto, always) = (set_up(""), set_up("  warmup: {full_pass: always}\n"));
        assert!(
            (always - auto - 100.0 * slow).abs() < 1e-6,
            "{auto} vs {always}"
        );
    }

    #[test]
    fn earlier_results_replace_policy_costs_and_say_so() {
        let mut prior = Prior::default();
        prior
            .sec_per_item
            .insert(("pillow".into(), "Resize".into()), 0.04);
        prior.sources.push("out/pillow.json".into());
        let slow = estimate(&plan(""), &prior, 2);
        let base = estimate(&plan(""), &Prior::default(), 2);
        assert!(slow.low_sec > base.low_sec, "{slow:?} vs {base:?}");
        assert!(slow.basis.starts_with("1 of 4 rows"), "{}", slow.basis);
    }

    /// A cost table that prices pillow's start and its Resize only.
    fn table(spi: f64, start: f64) -> &'static Costs {
        let lib = augbench_catalog::costs::LibraryCosts {
            worker_start_sec: start,
            load_sec_per_item: 0.0,
            sec_per_item: [("Resize".to_string(), spi)].into(),
        };
        Box::leak(Box::new(Costs {
            measured: "a test VM".into(),
            libraries: [("pillow".to_string(), lib)].into(),
        }))
    }

    #[test]
    fn the_shipped_table_prices_its_rows_and_starts_and_says_so() {
        let p = plan("");
        let base = estimate(&p, &Prior::default(), 2);
        let prior = Prior {
            table: Some(table(0.04, 20.0)),
            ..Prior::default()
        };
        let priced = estimate(&p, &prior, 2);
        let start = part(&priced, "worker start") - part(&base, "worker start");
        assert!((start - (20.0 - policy::EST_PYTHON_WORKER_START_SEC)).abs() < 1e-9);
        let policy_load = 100.0 * policy::est_decode_sec_per_item(Media::Image);
        let load = part(&base, "media load") - part(&priced, "media load");
        assert!((load - policy_load).abs() < 1e-9, "{load}");
        let runs = policy::DEFAULT_NUM_RUNS as f64;
        let round = |spi| micro_round_sec(&p.config, 100.0, spi);
        let rounds = part(&priced, "timed rounds") - part(&base, "timed rounds");
        let want = runs * (round(0.04) - round(policy::cloud_est_sec_per_item(Media::Image)));
        assert!((rounds - want).abs() < 1e-9, "{rounds} vs {want}");
        assert!(
            priced.basis.starts_with(
                "1 rows from the shipped cost table (specs/costs.yaml: a test VM), the rest from"
            ),
            "{}",
            priced.basis
        );
        assert!(!base.basis.contains("shipped"), "{}", base.basis);
    }

    #[test]
    fn earlier_results_come_before_the_shipped_table() {
        let mut prior = Prior {
            table: Some(table(0.04, 20.0)),
            ..Prior::default()
        };
        let key = ("pillow".to_string(), "Resize".to_string());
        prior.sec_per_item.insert(key, 0.001);
        prior.sources.push("out/pillow.json".into());
        let e = estimate(&plan(""), &prior, 2);
        assert!(
            e.basis.starts_with("1 of 4 rows from earlier results"),
            "{}",
            e.basis
        );
        assert!(!e.basis.contains("shipped"), "{}", e.basis);
    }

    #[test]
    fn a_pipeline_loads_no_media_up_front() {
        let e = estimate(&pipeline_plan("", 2), &Prior::default(), 2);
        assert_eq!(part(&e, "media load"), 0.0);
    }

    fn pipeline_plan(extra: &str, workers: u64) -> Plan {
        let text = format!(
            "version: 1\nselection:\n  scenario: image-rgb\n  mode: pipeline\n  libraries: [pillow, torchvision]\n  transforms: [HorizontalFlip]\ndata:\n  num_items: 100\nexecution:\n  workers: {workers}\n  batch_size: 16\n{extra}"
        );
        build(&text)
    }

    fn part(e: &Estimate, name: &str) -> f64 {
        e.parts
            .iter()
            .find(|(p, _)| p == name)
            .map_or_else(|| panic!("no {name} in {e:?}"), |p| p.1)
    }

    #[test]
    fn an_interleaved_pipeline_rewarms_every_window_and_times_the_ceilings_companion() {
        let inter = estimate(&pipeline_plan("", 2), &Prior::default(), 2);
        let seq = estimate(
            &pipeline_plan("  schedule: sequential\n", 2),
            &Prior::default(),
            2,
        );
        // Two workers: 16-batch windows and 16 warm batches. Interleaved, a row's round is its
        // window and the companion's, each rewarmed (64 batches); the ceiling's own round is 32.
        // Sequential, every round is one 16-batch window: (2 × 64 + 2 × 32) / (4 × 16) = 3.
        let ratio = part(&inter, "timed rounds") / part(&seq, "timed rounds");
        assert!((ratio - 3.0).abs() < 1e-9, "{ratio}");
        let loaders = part(&inter, "loader start (with its warm batches)")
            - part(&seq, "loader start (with its warm batches)");
        // One companion per library, started and warmed as the ceiling's own loader is.
        let warm = policy::pipeline_warm_batches(2, policy::default_min_batches(2)) as f64
            * 16.0
            * policy::est_pipeline_sec_per_item(Media::Image)
            / 2.0;
        let companion = policy::EST_LOADER_START_SEC + warm;
        assert!(
            (loaders - 2.0 * companion).abs() < 1e-9,
            "{loaders} vs 2 × {companion}"
        );
    }

    #[test]
    fn a_target_loader_that_nothing_measured_costs_the_policy_factor_more() {
        let only = |libs: &str, extra: &str| {
            let text = format!(
                "version: 1\nselection:\n  scenario: image-rgb\n  mode: pipeline\n  libraries: [{libs}]\n  transforms: [HorizontalFlip]\n{extra}data:\n  num_items: 100\nexecution:\n  workers: 2\n  batch_size: 16\n  schedule: sequential\n"
            );
            estimate(&build(&text), &Prior::default(), 2)
        };
        let plain = only("torchvision", "");
        let both = only("torchvision", "  targets: [boxes]\n");
        // Sequential rounds: the target column's rounds are the image-only column's times the factor.
        let rounds = part(&both, "timed rounds") / part(&plain, "timed rounds");
        let factor = policy::est_target_row_factor(Mode::Pipeline);
        assert!((rounds - (1.0 + factor)).abs() < 1e-9, "{rounds}");
    }

    #[test]
    fn loader_workers_beyond_the_machines_threads_do_not_speed_the_estimate_up() {
        let plan = pipeline_plan("", 8);
        let two = part(&estimate(&plan, &Prior::default(), 2), "timed rounds");
        let eight = part(&estimate(&plan, &Prior::default(), 8), "timed rounds");
        assert!((two / eight - 4.0).abs() < 1e-9, "{two} vs {eight}");
    }

    #[test]
    fn a_row_an_earlier_run_found_unsupported_costs_nothing() {
        let mut prior = Prior::default();
        prior.unsupported.insert(("pillow".into(), "Resize".into()));
        let with = estimate(&plan(""), &prior, 2);
        let base = estimate(&plan(""), &Prior::default(), 2);
        assert!(with.low_sec < base.low_sec, "{with:?} vs {base:?}");
        assert!(with.basis.starts_with("1 of 4 rows"), "{}", with.basis);
    }
}
