//! The error rates of the gate between separate runs (`augbench compare --baseline B1
//! [--baseline B2 …] --current C`), measured on a seeded simulator that drives the shipped
//! `regression::compare_runs` on result files built and loaded as real ones are. `cargo test
//! --release -p augbench-report --test integration simulated_gate:: -- --nocapture
//! --test-threads=1` prints the measured rates as one markdown table (the settings are measured
//! once, on every core, for all the tests).
//!
//! The model, per simulated gate: one library (Pillow) and the three transforms of the docs'
//! gate (scripts/bench_gate.sh); each row gets a true level (10^U(2, 4) items/s). Each invocation
//! (three baseline invocations, then the current one) moves each row by its own lean,
//! ln-normal(τ_true) (the drift between invocations), or in the "shared lean" settings by one
//! lean for every row of the invocation (a slower runner). Inside an invocation each row is
//! timed by P = `policy::DEFAULT_PROCESSES` worker processes, each at its own level
//! (ln-normal, σ_p), and with probability q a slow process (×0.7 for all its runs), of R =
//! `policy::DEFAULT_NUM_RUNS` runs with noise ln-normal(σ_r). Each invocation's result file is
//! what `exec::record` writes after merging its worker processes
//! (`TransformResult::measured` over `augbench_stats::summarize_grouped`, `process_runs` set) in the
//! metadata of `sample::result_file`, serialized and read back with `load_result_bytes`.
//!
//! The current invocation is simulated once per gate and then slowed on one row (GaussianBlur,
//! the row bench_gate.sh slows) by 0 (A/A), 5% and 10% in time per item (throughput ÷ 1.05,
//! ÷ 1.10): common random numbers, so the unchanged rows and the baselines are the same draws
//! under every effect. Each gate is judged on four bases: `today` (the first baseline
//! invocation, no drift: the interval of one invocation against one), `τ̂` (three invocations,
//! the drift estimated), `stated/1` and `stated/3` (`--drift` equal to τ_true with one or three
//! invocations). The true ratio is current ÷ baseline of the rows' long-run levels: 1, or
//! 1/(1 + slowdown) on the slowed row.
//!
//! What it finds (σ_p 2%, σ_r 2%): today's gate (one invocation, no drift term) fails A/A gates
//! beyond 5% from τ_true 2% on; a stated τ keeps both 95% claims everywhere; the spread estimated
//! from three invocations (`drift::estimate`, read with Student's t at rows × 2 degrees of
//! freedom, never below the row's own spread) keeps them at every τ_true, with slow processes and
//! with one lean shared by every row of an invocation.
//!
//! Monte Carlo error: a rate is held to its claim plus 2 × √(p(1 − p)/n) at the claimed p over n
//! gates; a coverage to its claim less 2 × the standard error of the mean per-gate coverage over
//! gates (a gate's rows share τ̂ and, with a shared lean, their leans).

use std::f64::consts::PI;
use std::path::Path;
use std::sync::OnceLock;

use augbench_core::results::{ResultFile, TransformResult};
use augbench_core::{Mode, policy};
use augbench_report::judge::drift::DriftBasis;
use augbench_report::judge::regression::{RegressionReport, Verdict, compare_runs};
use augbench_report::{Dataset, load::load_result_bytes, sample};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The docs' gate: one library, three transforms; the first is the one slowed.
const LIBRARY: &str = "pillow";
const TRANSFORMS: [&str; 3] = ["GaussianBlur", "HorizontalFlip", "Resize"];
const SLOWED: &str = TRANSFORMS[0];
/// What a slow worker process runs at, as a share of its level.
const SLOW: f64 = 0.7;
/// Slowdowns of the slowed row in time per item: A/A, 5%, 10%.
const EFFECTS: [f64; 3] = [0.0, 0.05, 0.10];
/// Simulated gates per setting.
const GATES: usize = 300;
/// The gate's claims: a false failure rate under no change, and its intervals' coverage.
const FALSE_RATE: f64 = 0.05;
const COVERAGE: f64 = 0.95;
/// The claim on detecting a 10% slowdown at τ_true 1% with three baseline invocations.
const POWER_10: f64 = 0.8;

#[derive(Debug, Clone, Copy, PartialEq)]
struct Model {
    /// τ_true: ln sd of an invocation's lean.
    tau: f64,
    /// One lean for every row of an invocation (a slower runner) instead of one per row.
    shared_lean: bool,
    sd_process: f64,
    sd_run: f64,
    /// Probability that a worker process is a slow one (×`SLOW`).
    slow_share: f64,
    /// A runner that switches between two speed levels: each invocation, every row together, is
    /// on the slower one with this probability (outside the gate's model; a known failure).
    switch: Option<Switch>,
}

/// Two speed levels of one runner: an invocation lands on the slower one with probability
/// `share`, every row's figure ×(1 − `slower`).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Switch {
    share: f64,
    slower: f64,
}

impl Model {
    /// Leans per row at τ_true, σ_p 2%, σ_r 2%, no slow processes.
    fn new(tau: f64) -> Model {
        Model {
            tau,
            shared_lean: false,
            sd_process: 0.02,
            sd_run: 0.02,
            slow_share: 0.0,
            switch: None,
        }
    }

    fn describe(&self) -> String {
        let mut s = format!("τ {:.1}%", 100.0 * self.tau);
        if self.shared_lean {
            s += ", shared lean";
        }
        if self.slow_share > 0.0 {
            s += &format!(", slow process {:.0}%", 100.0 * self.slow_share);
        }
        if let Some(w) = self.switch {
            s += &format!(
                ", runner {:.0}% slower in {:.0}% of invocations",
                100.0 * w.slower,
                100.0 * w.share
            );
        }
        s
    }
}

/// What a gate's interval rests on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Basis {
    /// One baseline invocation, no `--drift`: the gate before the drift term.
    Today,
    /// Three baseline invocations, τ̂ estimated from them.
    Estimated,
    /// `--drift` = τ_true, with one and with three baseline invocations.
    StatedOne,
    StatedThree,
}

impl Basis {
    const ALL: [Basis; 4] = [
        Basis::Today,
        Basis::Estimated,
        Basis::StatedOne,
        Basis::StatedThree,
    ];

    fn name(self) -> &'static str {
        match self {
            Basis::Today => "today (1 inv.)",
            Basis::Estimated => "τ̂ (3 inv.)",
            Basis::StatedOne => "stated τ (1 inv.)",
            Basis::StatedThree => "stated τ (3 inv.)",
        }
    }

    fn invocations(self) -> usize {
        match self {
            Basis::Today | Basis::StatedOne => 1,
            Basis::Estimated | Basis::StatedThree => policy::DRIFT_MIN_INVOCATIONS,
        }
    }

    fn drift(self, m: &Model) -> Option<f64> {
        matches!(self, Basis::StatedOne | Basis::StatedThree).then_some(m.tau)
    }
}

/// A standard normal draw (Box–Muller).
fn normal(rng: &mut ChaCha8Rng) -> f64 {
    let u: f64 = 1.0 - rng.random::<f64>();
    let v: f64 = rng.random();
    (-2.0 * u.ln()).sqrt() * (2.0 * PI * v).cos()
}

/// One row's runs in one invocation at ln level `level`: P processes of R runs, in order.
fn row_runs(m: &Model, level: f64, rng: &mut ChaCha8Rng) -> Vec<f64> {
    let (p, r) = (
        policy::DEFAULT_PROCESSES as usize,
        policy::DEFAULT_NUM_RUNS as usize,
    );
    let mut xs = Vec::with_capacity(p * r);
    for _ in 0..p {
        let slow = if m.slow_share > 0.0 && rng.random_bool(m.slow_share) {
            SLOW.ln()
        } else {
            0.0
        };
        let process = level + m.sd_process * normal(rng) + slow;
        for _ in 0..r {
            xs.push((process + m.sd_run * normal(rng)).exp());
        }
    }
    xs
}

/// One invocation's runs of every row: the row's true level moved by the invocation's lean.
fn invocation_runs(m: &Model, levels: &[f64; 3], rng: &mut ChaCha8Rng) -> [Vec<f64>; 3] {
    let shared = m.tau * normal(rng);
    let level = match m.switch {
        Some(w) if rng.random_bool(w.share) => (1.0 - w.slower).ln(),
        _ => 0.0,
    };
    std::array::from_fn(|j| {
        let lean = if m.shared_lean {
            shared
        } else {
            m.tau * normal(rng)
        };
        row_runs(m, levels[j].ln() + level + lean, rng)
    })
}

/// A transform as `exec::record` writes it once its worker processes are merged: every run
/// summarized over the processes (`summarize_grouped`: median, rerun interval, figure), with
/// `process_runs`.
fn transform(xs: &[f64], items: u64) -> TransformResult {
    let (p, r) = (policy::DEFAULT_PROCESSES, policy::DEFAULT_NUM_RUNS);
    let groups = vec![r as usize; p as usize];
    assert_eq!(xs.len(), (p * r) as usize);
    let summary = augbench_stats::summarize_grouped(xs, &groups);
    let times = xs.iter().map(|t| items as f64 / t).collect();
    let mut tr = TransformResult::measured(serde_json::json!({}), &summary, xs.to_vec(), times);
    tr.process_runs = vec![r; p as usize];
    tr
}

/// One invocation's result file (Pillow, image-rgb micro) with `runs` for the three transforms.
fn result_file(runs: &[Vec<f64>; 3]) -> ResultFile {
    let mut file = sample::result_file("image-rgb", Mode::Micro, LIBRARY, "12.0.0", &[]);
    let items = file.metadata.benchmark_params.num_items;
    for (name, xs) in TRANSFORMS.iter().zip(runs) {
        file.results.insert(name.to_string(), transform(xs, items));
    }
    file
}

/// The file as `compare` reads it: serialized and loaded back.
fn load(file: &ResultFile, name: &str) -> Dataset {
    let bytes = serde_json::to_vec(file).unwrap();
    load_result_bytes(Path::new(name), &bytes).unwrap()
}

/// One report's reading of a gate (`fails`: any row `regression`).
#[derive(Debug, Clone, Copy, Default)]
struct Reading {
    fails: bool,
    slowed_regression: bool,
    /// Some unchanged row (not the slowed one) reads `regression`.
    unchanged_regression: bool,
    /// Rows whose `ratio_interval` holds the true ratio, of `rows`.
    covered: usize,
    rows: usize,
    /// The drift the gate used, where known.
    tau: Option<f64>,
}

fn read(report: &RegressionReport, slowdown: f64) -> Reading {
    assert_eq!(report.family, TRANSFORMS.len(), "{report:?}");
    let mut r = Reading {
        tau: report.drift.spread(),
        ..Reading::default()
    };
    for row in &report.rows {
        let slowed = row.transform == SLOWED;
        let regression = row.verdict == Verdict::Regression;
        r.fails |= regression;
        if slowed {
            r.slowed_regression = regression;
        } else {
            r.unchanged_regression |= regression;
        }
        let truth = if slowed { 1.0 / (1.0 + slowdown) } else { 1.0 };
        let (lo, hi) = row.ratio_interval.unwrap();
        r.covered += usize::from(lo <= truth && truth <= hi);
        r.rows += 1;
    }
    r
}

/// Every reading of one simulated gate: [basis][effect].
type GateReadings = [[Reading; EFFECTS.len()]; Basis::ALL.len()];

fn gate(m: &Model, seed: u64) -> GateReadings {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let levels: [f64; 3] = std::array::from_fn(|_| 10f64.powf(2.0 + 2.0 * rng.random::<f64>()));
    let baselines: Vec<Dataset> = (0..policy::DRIFT_MIN_INVOCATIONS)
        .map(|i| {
            let runs = invocation_runs(m, &levels, &mut rng);
            load(&result_file(&runs), &format!("baseline-{i}.json"))
        })
        .collect();
    let runs = invocation_runs(m, &levels, &mut rng);
    let same = result_file(&runs);
    let items = same.metadata.benchmark_params.num_items;
    let currents: Vec<Dataset> = EFFECTS
        .iter()
        .map(|s| {
            let mut file = same.clone();
            if *s > 0.0 {
                let slowed: Vec<f64> = runs[0].iter().map(|x| x / (1.0 + s)).collect();
                file.results
                    .insert(SLOWED.to_string(), transform(&slowed, items));
            }
            load(&file, "current.json")
        })
        .collect();
    let effects = (policy::REGRESSION_MIN_EFFECT, policy::COUNT_MIN_EFFECT);
    Basis::ALL.map(|basis| {
        let invocations = &baselines[..basis.invocations()];
        std::array::from_fn(|e| {
            let report = compare_runs(invocations, &currents[e], effects, basis.drift(m)).unwrap();
            let expected = match basis {
                Basis::Today => matches!(report.drift, DriftBasis::Unknown { invocations: 1 }),
                Basis::Estimated => matches!(report.drift, DriftBasis::Estimated { .. }),
                _ => matches!(report.drift, DriftBasis::Stated { .. }),
            };
            assert!(expected, "{basis:?}: {:?}", report.drift);
            read(&report, EFFECTS[e])
        })
    })
}

/// Readings of one (basis, effect) summed over gates.
#[derive(Debug, Clone, Copy, Default)]
struct Tally {
    gates: usize,
    fails: usize,
    slowed_regression: usize,
    unchanged_regression: usize,
    covered: usize,
    rows: usize,
    /// Sums of each gate's covered share and its square (the standard error over gates).
    coverage_sum: f64,
    coverage_sq: f64,
    tau_sum: f64,
    tau_zero: usize,
}

impl Tally {
    fn add(&mut self, r: &Reading) {
        self.gates += 1;
        self.fails += usize::from(r.fails);
        self.slowed_regression += usize::from(r.slowed_regression);
        self.unchanged_regression += usize::from(r.unchanged_regression);
        self.covered += r.covered;
        self.rows += r.rows;
        let c = r.covered as f64 / r.rows as f64;
        self.coverage_sum += c;
        self.coverage_sq += c * c;
        let tau = r.tau.unwrap_or(0.0);
        self.tau_sum += tau;
        self.tau_zero += usize::from(tau == 0.0);
    }

    fn share(&self, k: usize) -> f64 {
        k as f64 / self.gates as f64
    }

    fn fail_rate(&self) -> f64 {
        self.share(self.fails)
    }

    fn detection(&self) -> f64 {
        self.share(self.slowed_regression)
    }

    fn unchanged_rate(&self) -> f64 {
        self.share(self.unchanged_regression)
    }

    fn coverage(&self) -> f64 {
        self.covered as f64 / self.rows as f64
    }

    /// Standard error of the mean per-gate coverage.
    fn coverage_se(&self) -> f64 {
        let n = self.gates as f64;
        let mean = self.coverage_sum / n;
        let var = (self.coverage_sq / n - mean * mean).max(0.0) * n / (n - 1.0);
        (var / n).sqrt()
    }

    /// Monte Carlo error of a rate at the claimed `p`.
    fn mc_error(&self, p: f64) -> f64 {
        (p * (1.0 - p) / self.gates as f64).sqrt()
    }

    /// The most false failures the claim allows over these gates: 5% + 2 × MC error.
    fn false_bound(&self) -> f64 {
        FALSE_RATE + 2.0 * self.mc_error(FALSE_RATE)
    }

    /// The least coverage the claim allows: 95% − 2 × MC error.
    fn coverage_bound(&self) -> f64 {
        COVERAGE - 2.0 * self.coverage_se()
    }

    fn mean_tau(&self) -> f64 {
        self.tau_sum / self.gates as f64
    }
}

/// One setting's tallies: [basis][effect].
struct Setting {
    model: Model,
    tallies: [[Tally; EFFECTS.len()]; Basis::ALL.len()],
}

impl Setting {
    fn at(&self, basis: Basis, slowdown: f64) -> &Tally {
        let b = Basis::ALL.iter().position(|x| *x == basis).unwrap();
        let e = EFFECTS.iter().position(|x| *x == slowdown).unwrap();
        &self.tallies[b][e]
    }
}

/// `GATES` simulated gates of `m`, gate g seeded `seed` × 1 000 003 + g, spread over the cores
/// and summed in gate order.
fn measure(m: Model, seed: u64) -> Setting {
    let threads = std::thread::available_parallelism()
        .map_or(1, std::num::NonZeroUsize::get)
        .min(GATES);
    let mut readings: Vec<(usize, GateReadings)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                s.spawn(move || {
                    (t..GATES)
                        .step_by(threads)
                        .map(|g| (g, gate(&m, seed * 1_000_003 + g as u64)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    readings.sort_by_key(|r| r.0);
    let mut tallies = [[Tally::default(); EFFECTS.len()]; Basis::ALL.len()];
    for (_, g) in &readings {
        for (b, row) in g.iter().enumerate() {
            for (e, r) in row.iter().enumerate() {
                tallies[b][e].add(r);
            }
        }
    }
    Setting { model: m, tallies }
}

/// τ_true of the settings with a lean per row.
const TAUS: [f64; 5] = [0.0, 0.005, 0.01, 0.02, 0.05];

/// Every setting, measured once for all the tests: a lean per row at each of `TAUS`, then at
/// τ_true 2% one lean per invocation (a slower runner), and slow worker processes 5% of the time.
fn settings() -> &'static [Setting] {
    static SETTINGS: OnceLock<Vec<Setting>> = OnceLock::new();
    SETTINGS.get_or_init(|| {
        let mut models: Vec<Model> = TAUS.iter().map(|t| Model::new(*t)).collect();
        models.push(Model {
            shared_lean: true,
            ..Model::new(0.02)
        });
        models.push(Model {
            slow_share: 0.05,
            ..Model::new(0.02)
        });
        let started = std::time::Instant::now();
        let settings: Vec<Setting> = models
            .into_iter()
            .enumerate()
            .map(|(k, m)| measure(m, 7001 + k as u64))
            .collect();
        print_table(&settings, started.elapsed().as_secs_f64());
        settings
    })
}

fn setting(m: Model) -> &'static Setting {
    settings().iter().find(|s| s.model == m).unwrap()
}

fn pct(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
}

fn print_table(settings: &[Setting], secs: f64) {
    let m = settings[0].model;
    let mut out = format!(
        "\nThe gate between runs, simulated ({GATES} gates per setting, {secs:.0} s): {} rows, \
         {} processes × {} runs, σ_p {}, σ_r {}; the slowed row {SLOWED}.\n\
         A/A fails: gates with any row `regression` under no change (claim ≤ 5%; ± MC error at \
         5%); detected: the slowed row reads `regression`; unchanged: gates with `regression` on \
         an unchanged row under the 10% slowdown; covers: rows whose 95% ratio interval holds the \
         true ratio (± MC error over gates; the same with a slowdown, which scales the slowed \
         row's figures and interval alike); τ used: the mean drift the gate added (share of \
         gates at 0).\n\n\
         | setting | basis | A/A fails | detected 5% | detected 10% | unchanged (10%) | covers | τ used |\n\
         |---|---|--:|--:|--:|--:|--:|--:|\n",
        TRANSFORMS.len(),
        policy::DEFAULT_PROCESSES,
        policy::DEFAULT_NUM_RUNS,
        m.sd_process,
        m.sd_run,
    );
    for s in settings {
        for basis in Basis::ALL {
            let (aa, five, ten) = (s.at(basis, 0.0), s.at(basis, 0.05), s.at(basis, 0.10));
            let tau = match basis {
                Basis::Today => "–".to_string(),
                _ => format!("{} ({})", pct(aa.mean_tau()), pct(aa.share(aa.tau_zero))),
            };
            out += &format!(
                "| {} | {} | {} ± {} | {} | {} | {} | {} ± {} | {tau} |\n",
                s.model.describe(),
                basis.name(),
                pct(aa.fail_rate()),
                pct(aa.mc_error(FALSE_RATE)),
                pct(five.detection()),
                pct(ten.detection()),
                pct(ten.unchanged_rate()),
                pct(aa.coverage()),
                pct(aa.coverage_se()),
            );
        }
    }
    eprint!("{out}");
}

/// (a) Today's gate, one baseline invocation and no drift term, fails A/A gates beyond its 5%
/// once τ_true reaches 2% (13.3% at 2%, 48.3% at 5%; at 1% it still holds, 3.3%: the figure's
/// ±2% floor absorbs a drift below it), and covers the true ratio in 84.1% / 53.9% of rows: the
/// known failure the drift term answers (the summary line says so: "not a 95% interval between
/// runs").
#[test]
fn one_invocation_without_drift_fails_a_a_gates_beyond_five_percent() {
    for tau in [0.02, 0.05] {
        let t = setting(Model::new(tau)).at(Basis::Today, 0.0);
        assert!(
            t.fail_rate() > t.false_bound(),
            "today's gate at τ {tau}: A/A fails {:.3} ≤ {:.3}",
            t.fail_rate(),
            t.false_bound()
        );
        assert!(
            t.coverage() < t.coverage_bound(),
            "today's gate at τ {tau}: coverage {:.3} ≥ {:.3}",
            t.coverage(),
            t.coverage_bound()
        );
    }
}

/// A runner that sits on one of two speed levels 25% apart for an invocation at a time (the slower
/// one in 20% of invocations; docs/ci.md measured levels about 30% apart on a shared VM), τ_true
/// 1% besides: a known failure of τ̂ from three invocations. Where the three baselines all land
/// on one level and the current on the other (0.8³ × 0.2 + 0.2³ × 0.8 ≈ 11% of gates), every
/// row moves 25% and τ̂ never saw it; the A/A claim fails (13.7% of gates; coverage 85.6%).
#[test]
fn a_runner_switching_between_two_speed_levels_breaks_the_estimated_drift() {
    static SWITCHING: OnceLock<Setting> = OnceLock::new();
    let m = Model {
        switch: Some(Switch {
            share: 0.2,
            slower: 0.25,
        }),
        ..Model::new(0.01)
    };
    let s = SWITCHING.get_or_init(|| {
        let started = std::time::Instant::now();
        let s = measure(m, 7101);
        print_table(std::slice::from_ref(&s), started.elapsed().as_secs_f64());
        s
    });
    let t = s.at(Basis::Estimated, 0.0);
    assert!(
        t.fail_rate() > t.false_bound(),
        "{}: A/A fails {:.3} ≤ {:.3}",
        m.describe(),
        t.fail_rate(),
        t.false_bound()
    );
}

/// (a) With the drift term stated equal to the truth (one or three invocations), A/A gates fail
/// at most 5% (+ 2 × MC error) in every setting (0.3–3.3%); with τ̂ from three invocations, where
/// it is not the known failure (τ_true ≤ 1%, and slow processes at 2%: 1.7–4.3%).
#[test]
fn the_drift_term_keeps_a_a_gates_within_five_percent() {
    for s in settings() {
        for basis in [Basis::Estimated, Basis::StatedOne, Basis::StatedThree] {
            let t = s.at(basis, 0.0);
            assert!(
                t.fail_rate() <= t.false_bound(),
                "{} {}: A/A fails {:.3} > {:.3}",
                s.model.describe(),
                basis.name(),
                t.fail_rate(),
                t.false_bound()
            );
        }
    }
}

/// (b) At τ_true 1%, σ_p 2%, σ_r 2%, three baseline invocations see a 10% slowdown of one row in
/// at least 80% of gates (81.0%; at τ_true 0.5% 86.0%, at 0 91.0%; 5%: 24.7%, reported only).
#[test]
fn three_invocations_see_a_ten_percent_slowdown() {
    let t = setting(Model::new(0.01)).at(Basis::Estimated, 0.10);
    assert!(
        t.detection() >= POWER_10,
        "10% slowdown detected in {:.3} < {POWER_10}",
        t.detection()
    );
}

/// (c) A slowdown of one row leaves the other rows' verdicts as they were (the same draws read
/// the same with and without it, on every basis), and they read `regression` no more than an
/// A/A gate is allowed to fail, wherever the basis keeps its A/A claim.
#[test]
fn unchanged_rows_read_regression_no_more_than_the_false_rate() {
    for s in settings() {
        for basis in Basis::ALL {
            let aa = s.at(basis, 0.0);
            for slowdown in [0.05, 0.10] {
                let t = s.at(basis, slowdown);
                assert_eq!(
                    t.unchanged_regression,
                    aa.unchanged_regression,
                    "{} {} at {slowdown}",
                    s.model.describe(),
                    basis.name()
                );
            }
        }
        for basis in [Basis::Estimated, Basis::StatedOne, Basis::StatedThree] {
            let t = s.at(basis, 0.10);
            assert!(
                t.unchanged_rate() <= t.false_bound(),
                "{} {}: unchanged rows regression {:.3} > {:.3}",
                s.model.describe(),
                basis.name(),
                t.unchanged_rate(),
                t.false_bound()
            );
        }
    }
}

/// (d) The ratio interval covers the true ratio in at least 95% (− 2 × MC error) of rows, with
/// and without a slowdown: with three invocations on τ̂ where it is not the known failure
/// (93.8–97.2%), and on a stated τ in every setting (95.3–97.9%).
#[test]
fn the_ratio_interval_covers_the_true_ratio() {
    for s in settings() {
        for basis in [Basis::Estimated, Basis::StatedOne, Basis::StatedThree] {
            for slowdown in EFFECTS {
                let t = s.at(basis, slowdown);
                assert!(
                    t.coverage() >= t.coverage_bound(),
                    "{} {} at {slowdown}: coverage {:.3} < {:.3}",
                    s.model.describe(),
                    basis.name(),
                    t.coverage(),
                    t.coverage_bound()
                );
            }
        }
    }
}
