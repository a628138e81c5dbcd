//! The error rates of A/B verdicts, measured on a simulator of the measurement (issue "Verdicts
//! you can gate a release on", item 3): seeded simulated invocations per setting, each judged as
//! `augbench compare` judges a row (`paired`'s ratio and 95% interval, then `verdict::decide`,
//! fewer than `verdict::MIN_UNITS` rounds undecided), beside the process-pair interval
//! (`interval::process_pair_interval`) on the same invocations. Holds false verdicts under no
//! change to ≤ 5% and coverage of the true ratio to ≥ 93% where that is true, and states where it
//! is not. `cargo test --release -p augbench-report --test integration simulated_verdicts:: --
//! --nocapture --test-threads=1` prints the measured rows as markdown tables.
//!
//! The model, per A/B invocation: P worker processes per variant of R rounds each; process k of
//! the current variant runs side by side with process k of the baseline. Each process of each
//! variant settles at its own level (ln-normal, sd σ_p) and with probability q is a slow process
//! (×0.7 for all its rounds); each round's machine drift (ln-normal, sd σ_d) is shared by both
//! variants of that round; each run has its own noise (ln-normal, sd σ_r); the current variant's
//! true ratio to the baseline is 1 + e. Two more terms, off (0) unless a test sets them: an
//! invocation lean (ln-normal, sd λ), one factor on the current variant of every pair and round of
//! one invocation's row, which no interval over its pairs can see; and slow runs (each variant's
//! run of a round, on its own, takes 2× as long with probability p).

use std::f64::consts::TAU;

use augbench_core::policy;
use augbench_report::judge::interval::{pair_estimate, process_pair_interval};
use augbench_report::judge::verdict::{self, Verdict};
use augbench_stats::paired::paired;
use augbench_stats::{logscale, student};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// What a slow process runs at, as a share of its level.
const SLOW: f64 = 0.7;
/// What a slow run (`Model::slow_run`) runs at: 2× as long.
const SLOW_RUN: f64 = 0.5;
/// True effects of the current variant: none, then 5%, 10% and 20% slower.
const EFFECTS: [f64; 4] = [0.0, -0.05, -0.10, -0.20];
/// Simulated invocations per row judged by the current interval (a bootstrap of 2000 resamples
/// each, ~2.5 ms at 3 × 5 rounds); the process-pair interval, a closed form, gets `PAIR_RUNS`.
const RUNS_3: usize = 600;
const RUNS_6: usize = 400;
const PAIR_RUNS: usize = 20_000;
/// What the tests hold: false verdicts under no change at most, coverage at least.
const MAX_FALSE: f64 = 0.05;
const MIN_COVERAGE: f64 = 0.93;

#[derive(Debug, Clone, Copy)]
struct Model {
    processes: usize,
    rounds: usize,
    sd_process: f64,
    sd_drift: f64,
    sd_run: f64,
    slow_share: f64,
    effect: f64,
    /// λ, the ln sd of a lean on the current variant shared by every pair of one invocation.
    lean: f64,
    /// p, the chance that one variant's run of one round takes 2× as long.
    slow_run: f64,
}

impl Model {
    /// The default config's processes and rounds (`processes: 3`, `num_runs: 5`), σ_d 10%,
    /// σ_r 3%, a slow process 5% of the time; no lean, no slow runs.
    fn new(processes: usize, sd_process: f64, effect: f64) -> Model {
        Model {
            processes,
            rounds: policy::DEFAULT_NUM_RUNS as usize,
            sd_process,
            sd_drift: 0.10,
            sd_run: 0.03,
            slow_share: 0.05,
            effect,
            lean: 0.0,
            slow_run: 0.0,
        }
    }
}

/// One simulated invocation: per-round throughputs of each variant, and the rounds per process.
struct Invocation {
    current: Vec<f64>,
    baseline: Vec<f64>,
    groups: Vec<usize>,
}

/// A standard normal draw (Box–Muller).
fn normal(rng: &mut ChaCha8Rng) -> f64 {
    let u: f64 = 1.0 - rng.random::<f64>();
    let v: f64 = rng.random();
    (-2.0 * u.ln()).sqrt() * (TAU * v).cos()
}

/// The ln level one worker process settles at.
fn process_level(m: &Model, rng: &mut ChaCha8Rng) -> f64 {
    let slow = if rng.random_bool(m.slow_share) {
        SLOW.ln()
    } else {
        0.0
    };
    m.sd_process * normal(rng) + slow
}

/// The ln factor one run takes from `Model::slow_run` (drawn only where p > 0, so a model without
/// slow runs draws what it drew before they existed).
fn slow_run(m: &Model, rng: &mut ChaCha8Rng) -> f64 {
    if m.slow_run > 0.0 && rng.random_bool(m.slow_run) {
        SLOW_RUN.ln()
    } else {
        0.0
    }
}

fn invocation(m: &Model, rng: &mut ChaCha8Rng) -> Invocation {
    let (mut current, mut baseline) = (Vec::new(), Vec::new());
    // Drawn only where λ > 0, as `slow_run`: at λ = 0 every figure is the one measured before.
    let lean = if m.lean > 0.0 {
        m.lean * normal(rng)
    } else {
        0.0
    };
    for _ in 0..m.processes {
        let lc = process_level(m, rng) + m.effect.ln_1p() + lean;
        let lb = process_level(m, rng);
        for _ in 0..m.rounds {
            let drift = m.sd_drift * normal(rng);
            let c = lc + drift + m.sd_run * normal(rng) + slow_run(m, rng);
            let b = lb + drift + m.sd_run * normal(rng) + slow_run(m, rng);
            current.push(1000.0 * c.exp());
            baseline.push(1000.0 * b.exp());
        }
    }
    let groups = vec![m.rounds; m.processes];
    Invocation {
        current,
        baseline,
        groups,
    }
}

/// The verdict and interval `augbench compare` gives the row (ab.rs `judge`).
fn judge_current(inv: &Invocation) -> (Verdict, (f64, f64)) {
    let p = paired("baseline", &inv.current, &inv.baseline, &inv.groups).unwrap();
    let ci = (p.ci_low, p.ci_high);
    let v = if p.rounds < verdict::MIN_UNITS as u64 {
        Verdict::Undecided
    } else {
        verdict::decide(p.ratio, ci, policy::REGRESSION_MIN_EFFECT)
    };
    (v, ci)
}

/// The verdict and interval over process pairs.
fn judge_pairs(inv: &Invocation) -> (Verdict, (f64, f64)) {
    let logs: Vec<f64> = inv
        .current
        .iter()
        .zip(&inv.baseline)
        .map(|(c, b)| c.ln() - b.ln())
        .collect();
    let p = process_pair_interval(&logs, &inv.groups).unwrap();
    let ci = (p.low, p.high);
    let v = verdict::decide(p.ratio, ci, policy::REGRESSION_MIN_EFFECT);
    (v, ci)
}

/// Verdict counts of one interval over simulated invocations, and how many covered the truth.
#[derive(Debug, Default, Clone, Copy)]
struct Tally {
    n: usize,
    slower: usize,
    faster: usize,
    same: usize,
    covered: usize,
}

impl Tally {
    fn add(&mut self, (v, (lo, hi)): (Verdict, (f64, f64)), truth: f64) {
        self.n += 1;
        match v {
            Verdict::Regression => self.slower += 1,
            Verdict::Faster => self.faster += 1,
            Verdict::Same => self.same += 1,
            _ => {}
        }
        self.covered += usize::from(lo <= truth && truth <= hi);
    }

    fn share(&self, k: usize) -> f64 {
        k as f64 / self.n as f64
    }

    /// Slower or faster: a false verdict when there is no change.
    fn changes(&self) -> f64 {
        self.share(self.slower + self.faster)
    }

    fn coverage(&self) -> f64 {
        self.share(self.covered)
    }

    fn power(&self) -> f64 {
        self.share(self.slower)
    }

    fn cells(&self) -> String {
        let undecided = self.n - self.slower - self.faster - self.same;
        let pct = |k: usize| format!("{:.1}%", 100.0 * self.share(k));
        [self.slower, self.faster, self.same, undecided, self.covered]
            .map(pct)
            .join(" | ")
    }
}

/// One setting's measured rates: the current interval over its first `runs` invocations, the
/// process-pair interval over `PAIR_RUNS` (the same invocations first).
struct Row {
    model: Model,
    current: Tally,
    pairs: Tally,
}

fn measure(model: Model, runs: usize, seed: u64) -> Row {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let truth = 1.0 + model.effect;
    let (mut current, mut pairs) = (Tally::default(), Tally::default());
    for i in 0..runs.max(PAIR_RUNS) {
        let inv = invocation(&model, &mut rng);
        if i < runs {
            current.add(judge_current(&inv), truth);
        }
        pairs.add(judge_pairs(&inv), truth);
    }
    Row {
        model,
        current,
        pairs,
    }
}

/// The rows of P processes at σ_p, one per effect (each its own seed), printed as a table.
fn rows(processes: usize, sd_process: f64, runs: usize) -> Vec<Row> {
    let seed = 1000 * processes as u64 + (1000.0 * sd_process) as u64 * 10;
    let rows: Vec<Row> = EFFECTS
        .iter()
        .enumerate()
        .map(|(k, &e)| measure(Model::new(processes, sd_process, e), runs, seed + k as u64))
        .collect();
    print_table(&rows);
    rows
}

fn print_table(rows: &[Row]) {
    let m = rows[0].model;
    let mut out = format!(
        "\n{} processes × {} rounds, σ_p {}, σ_d {}, σ_r {}, slow process {}% (×{SLOW})\n\
         | effect | interval | invocations | slower | faster | same | undecided | covers 1+e |\n\
         |---|---|--:|--:|--:|--:|--:|--:|\n",
        m.processes,
        m.rounds,
        m.sd_process,
        m.sd_drift,
        m.sd_run,
        100.0 * m.slow_share
    );
    for r in rows {
        let e = format!("{:+.0}%", 100.0 * r.model.effect);
        for (name, t) in [
            ("rounds (current)", &r.current),
            ("process pairs", &r.pairs),
        ] {
            out += &format!("| {e} | {name} | {} | {} |\n", t.n, t.cells());
        }
    }
    eprint!("{out}");
}

/// Both intervals keep their rates; and a bigger slowdown is called `slower` more often.
fn assert_holds(rows: &[Row], which: fn(&Row) -> &Tally, name: &str) {
    let none = which(&rows[0]);
    assert!(
        none.changes() <= MAX_FALSE,
        "{name}: false {}",
        none.changes()
    );
    let mut power = none.power();
    for r in rows {
        let t = which(r);
        let e = r.model.effect;
        assert!(t.coverage() >= MIN_COVERAGE, "{name} at {e}: {t:?}");
        assert!(t.power() >= power, "{name}: power falls at {e}: {t:?}");
        power = t.power();
    }
}

fn current(r: &Row) -> &Tally {
    &r.current
}

fn pairs(r: &Row) -> &Tally {
    &r.pairs
}

/// Processes of a row that agree within ~2% (sd): the current interval, resampling rounds within
/// processes, covers the true ratio in 95–96% of invocations and calls a change under no change in
/// 4.9%; the process-pair interval too (96%, 2.0%), with less power (54% against 75% at −10%).
#[test]
fn three_processes_that_agree_keep_both_intervals_honest() {
    let rows = rows(3, 0.02, RUNS_3);
    assert_holds(&rows, current, "current");
    assert_holds(&rows, pairs, "process pairs");
}

/// Processes 5% apart (sd), 3 of them: the current interval is too narrow. The bootstrap over 3
/// processes can only reach as far as the 3 process levels do, so it covers the true ratio in
/// 89–91% of invocations and calls a change under no change in 11.0%, twice the 5% it promises.
/// The process-pair interval (t with 2 degrees of freedom) covers (96%) with 3.3%.
#[test]
fn three_processes_5pct_apart_make_the_current_interval_too_narrow() {
    let rows = rows(3, 0.05, RUNS_3);
    for r in &rows {
        assert!(r.current.coverage() < MIN_COVERAGE, "{:?}", r.current);
    }
    assert!(
        rows[0].current.changes() > MAX_FALSE,
        "{:?}",
        rows[0].current
    );
    assert_holds(&rows, pairs, "process pairs");
}

/// Processes 15% apart (sd; levels up to ~1.5× apart, the busy host of docs/methodology.md), 3
/// of them: the current interval covers in 83–85% and calls a change under no change in 15.5%,
/// three times 5%. The process-pair interval keeps its rates (95%, 4.6%), at the cost of power
/// (16.5% against 42% at −20%: a 42% that comes with 15% false verdicts is no power).
#[test]
fn three_processes_15pct_apart_make_the_current_interval_far_too_narrow() {
    let rows = rows(3, 0.15, RUNS_3);
    for r in &rows {
        assert!(r.current.coverage() < 0.90, "{:?}", r.current);
    }
    assert!(
        rows[0].current.changes() > 2.0 * MAX_FALSE,
        "{:?}",
        rows[0].current
    );
    assert_holds(&rows, pairs, "process pairs");
}

/// With 6 processes (`policy::PRECISION_MAX_PROCESSES`) the current interval covers again even
/// when processes are 5% apart (97–99%, 1.2% false), and the process-pair interval (t with 5
/// degrees of freedom; 97%, 3.3%) is the more powerful (54% against 42% at −10%).
#[test]
fn six_processes_5pct_apart_keep_both_intervals_honest() {
    let rows = rows(6, 0.05, RUNS_6);
    assert_holds(&rows, current, "current");
    assert_holds(&rows, pairs, "process pairs");
}

/// 6 processes 15% apart: both intervals keep their rates (current 94–97%, 3.0% false; process
/// pairs 95%, 4.6%); neither sees much below 20% (39% and 47% at −20%).
#[test]
fn six_processes_15pct_apart_keep_both_intervals_honest() {
    let rows = rows(6, 0.15, RUNS_6);
    assert_holds(&rows, current, "current");
    assert_holds(&rows, pairs, "process pairs");
}

/// Rows of one simulated A/B invocation (the benchmark's 3 transforms), and invocations judged.
const FAMILY: usize = 3;
const FAMILY_RUNS: usize = 20_000;

/// One invocation's rows judged as `augbench compare` judges them: `no change` on each row's 95%
/// process-pair interval, a change on the interval at `verdict::family_confidence(FAMILY)`; and
/// the same rows judged each on its own 95% interval. Row 0 carries `effect`, the others none.
fn family_verdicts(m: &Model, effect: f64, t: f64, rng: &mut ChaCha8Rng) -> [Vec<Verdict>; 2] {
    let (mut family, mut alone) = (Vec::new(), Vec::new());
    for row in 0..FAMILY {
        let model = Model {
            effect: if row == 0 { effect } else { 0.0 },
            ..*m
        };
        let inv = invocation(&model, rng);
        let logs: Vec<f64> = (inv.current.iter().zip(&inv.baseline))
            .map(|(c, b)| c.ln() - b.ln())
            .collect();
        let e = pair_estimate(&logs, &inv.groups).unwrap();
        let same = e.interval();
        let change = logscale::around(same.ratio, t * e.std_error);
        let m95 = policy::REGRESSION_MIN_EFFECT;
        let iv = (same.low, same.high);
        alone.push(verdict::decide(same.ratio, iv, m95));
        family.push(verdict::decide_in_family(same.ratio, iv, change, m95));
    }
    [family, alone]
}

/// Shares over `FAMILY_RUNS` invocations, for the family rule and the rule alone: invocations
/// with a change claimed on an unchanged row; row 0 called `slower`; unchanged rows called `same`.
fn family_rates(m: Model, effect: f64, seed: u64) -> [(f64, f64, f64); 2] {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut counts = [(0usize, 0usize, 0usize); 2];
    // `PairEstimate::interval_at`'s quantile, found once (its bisection is slow for 60 000 rows).
    let level = verdict::family_confidence(FAMILY);
    let t = student::quantile(m.processes - 1, 1.0 - (1.0 - level) / 2.0);
    let logs: Vec<f64> = (0..m.processes * 2)
        .map(|i| 0.01 * (i % 3) as f64)
        .collect();
    let e = pair_estimate(&logs, &vec![2; m.processes]).unwrap();
    let at = e.interval_at(level);
    assert_eq!(
        logscale::around(at.ratio, t * e.std_error),
        (at.low, at.high)
    );
    for _ in 0..FAMILY_RUNS {
        for (k, vs) in family_verdicts(&m, effect, t, &mut rng).iter().enumerate() {
            let change = |v: &Verdict| matches!(v, Verdict::Regression | Verdict::Faster);
            let false_claim = vs
                .iter()
                .enumerate()
                .any(|(i, v)| (effect == 0.0 || i > 0) && change(v));
            counts[k].0 += usize::from(false_claim);
            counts[k].1 += usize::from(vs[0] == Verdict::Regression);
            counts[k].2 += vs[1..].iter().filter(|v| **v == Verdict::Same).count();
        }
    }
    let n = FAMILY_RUNS as f64;
    counts.map(|(f, s, same)| {
        (
            f as f64 / n,
            s as f64 / n,
            same as f64 / (n * (FAMILY - 1) as f64),
        )
    })
}

/// The A/B default (6 process pairs × 5 rounds), processes 2% apart, 3 rows an invocation:
/// judged each on its own 95% interval, 4.7% of A/A invocations call a change on some row (about
/// 3 × the row's rate, and k × a row's rate passes 5% from a handful of rows on); read as one
/// family (each change at 98.3%), 1.4%. The price is power on the changed row (`slower` 29% /
/// 55% / 75% at −5% / −10% / −20% against 44% / 68% / 87% alone); `same` is untouched (it reads
/// the 95% interval either way).
#[test]
fn a_family_of_rows_keeps_one_false_verdict_rate_per_invocation() {
    let m = Model::new(policy::AB_PROCESSES as usize, 0.02, 0.0);
    let [fam, alone] = family_rates(m, 0.0, 41);
    eprintln!(
        "\nA/A, {FAMILY} rows × {FAMILY_RUNS} invocations: invocations with a false change: family {:.1}%, alone {:.1}%; unchanged rows same: {:.1}% / {:.1}%",
        100.0 * fam.0,
        100.0 * alone.0,
        100.0 * fam.2,
        100.0 * alone.2
    );
    assert!(fam.0 <= MAX_FALSE, "family: {fam:?}");
    assert!(alone.0 > fam.0, "alone {alone:?} family {fam:?}");
    assert_eq!(fam.2, alone.2, "same reads the 95% interval either way");
    for (k, effect) in [-0.05, -0.10, -0.20].into_iter().enumerate() {
        let [fam, alone] = family_rates(Model { effect, ..m }, effect, 42 + k as u64);
        eprintln!(
            "{:+.0}% on one row: slower family {:.1}% (alone {:.1}%); invocations with a false change {:.1}%",
            100.0 * effect,
            100.0 * fam.1,
            100.0 * alone.1,
            100.0 * fam.0
        );
        assert!(fam.0 <= MAX_FALSE, "{effect}: {fam:?}");
        assert!(
            fam.1 <= alone.1 && fam.1 >= 0.5 * alone.1,
            "{effect}: {fam:?} {alone:?}"
        );
    }
}

/// λ of the lean table (the ln sd of an invocation's lean): none, 0.5%, 1%, 1.5%, 2% and 4%.
const LEANS: [f64; 6] = [0.0, 0.005, 0.01, 0.015, 0.02, 0.04];
/// The smallest λ of `LEANS` at which the shipped rule's false-change rate is measured past 5%
/// (with 3 Monte Carlo errors): the known failure the lean test holds.
const LEAN_PAST_5PCT: f64 = 0.015;
/// p of the heavy-tailed row (λ = 0): one variant's run of a round 2× as long, 5% of runs.
const SLOW_RUNS: f64 = 0.05;

/// The Monte Carlo error of a share p measured over n invocations: √(p(1 − p)/n).
fn mc_error(p: f64, n: usize) -> f64 {
    (p * (1.0 - p) / n as f64).sqrt()
}

/// A share and its Monte Carlo error, for a table cell.
fn pct_mc(p: f64) -> String {
    format!(
        "{:.1}% ± {:.1}",
        100.0 * p,
        100.0 * mc_error(p, FAMILY_RUNS)
    )
}

/// The A/B default (`policy::AB_PROCESSES` pairs × the default rounds, processes 2% apart, 3 rows
/// an invocation), each row of each invocation with its own lean on the current variant (sd λ),
/// judged as `compare` judges it: the rows alone (each on its 95% interval) and as one family
/// (shipped). A lean is not noise over pairs (every pair of the row carries it), so no interval
/// over pairs widens for it: the false-change rate climbs with λ. Measured (20 000 invocations a
/// cell, ~6 s): false change 1.4% at λ 0, 3.7% at 1%, past 5% from 1.5% on (11.9% at 2%,
/// 37.5% at 4%); 5% slow runs (2×) at λ 0 keep 1.4%. The table is in docs/ab.md ("One family per
/// report").
#[test]
fn an_invocation_lean_is_not_covered_by_the_ab_interval() {
    let base = Model::new(policy::AB_PROCESSES as usize, 0.02, 0.0);
    let mut settings: Vec<Model> = LEANS.iter().map(|&lean| Model { lean, ..base }).collect();
    settings.push(Model {
        slow_run: SLOW_RUNS,
        ..base
    });
    let limit = MAX_FALSE + 3.0 * mc_error(MAX_FALSE, FAMILY_RUNS);
    let mut out = format!(
        "\n{} pairs × {} rounds, σ_p {}, {FAMILY} rows, {FAMILY_RUNS} invocations a cell (± the \
         Monte Carlo error, points); false change: invocations with a `slower`/`faster` on an \
         unchanged row; power: `slower` on the changed row, shipped rule (rows alone)\n\
         | lean λ | slow runs (2×) | false change, rows alone | false change, family (shipped) | \
         `slower` at −5% | `slower` at −10% |\n|--:|--:|--:|--:|--:|--:|\n",
        base.processes, base.rounds, base.sd_process
    );
    let mut false_family = Vec::new();
    for (k, m) in settings.iter().enumerate() {
        let seed = 700 + 10 * k as u64;
        let [fam, alone] = family_rates(*m, 0.0, seed);
        let [f5, a5] = family_rates(*m, -0.05, seed + 1);
        let [f10, a10] = family_rates(*m, -0.10, seed + 2);
        out += &format!(
            "| {:.1}% | {:.0}% | {} | {} | {} ({:.1}%) | {} ({:.1}%) |\n",
            100.0 * m.lean,
            100.0 * m.slow_run,
            pct_mc(alone.0),
            pct_mc(fam.0),
            pct_mc(f5.1),
            100.0 * a5.1,
            pct_mc(f10.1),
            100.0 * a10.1
        );
        false_family.push(fam.0);
    }
    out += &format!(
        "the shipped rule's claim, with 3 Monte Carlo errors: ≤ {:.2}%\n",
        100.0 * limit
    );
    eprint!("{out}");
    // What holds: no lean (with or without slow runs) keeps the family's 5%; up to 1% too.
    // The known failure: from `LEAN_PAST_5PCT` on, it does not, and no interval over pairs can.
    for (m, f) in settings.iter().zip(&false_family) {
        if m.lean < LEAN_PAST_5PCT {
            assert!(*f <= limit, "λ {}, slow runs {}: {f}", m.lean, m.slow_run);
        } else {
            assert!(
                *f > limit,
                "λ {}: {f} (the rule changed? docs/ab.md)",
                m.lean
            );
        }
    }
}
