//! Exploratory run (temporary).

use std::f64::consts::TAU;
use std::time::Instant;

use augbench_core::policy;
use augbench_core::stats::paired::paired;
use augbench_report::interval::process_pair_interval;
use augbench_report::verdict::{self, Verdict};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const SLOW: f64 = 0.7;
const EFFECTS: [f64; 4] = [0.0, -0.05, -0.10, -0.20];

#[derive(Debug, Clone, Copy)]
struct Model {
    processes: usize,
    rounds: usize,
    sd_process: f64,
    sd_drift: f64,
    sd_run: f64,
    slow_share: f64,
    effect: f64,
}

impl Model {
    fn default_config(sd_process: f64, effect: f64) -> Model {
        Model {
            processes: policy::DEFAULT_PROCESSES as usize,
            rounds: policy::DEFAULT_NUM_RUNS as usize,
            sd_process,
            sd_drift: 0.1,
            sd_run: 0.03,
            slow_share: 0.05,
            effect,
        }
    }
}

struct Invocation {
    current: Vec<f64>,
    baseline: Vec<f64>,
    groups: Vec<usize>,
}

fn normal(rng: &mut ChaCha8Rng) -> f64 {
    let u: f64 = 1.0 - rng.random::<f64>();
    let v: f64 = rng.random();
    (-2.0 * u.ln()).sqrt() * (TAU * v).cos()
}

fn process_level(m: &Model, rng: &mut ChaCha8Rng) -> f64 {
    let slow = if rng.random_bool(m.slow_share) {
        SLOW.ln()
    } else {
        0.0
    };
    m.sd_process * normal(rng) + slow
}

fn invocation(m: &Model, rng: &mut ChaCha8Rng) -> Invocation {
    let (mut current, mut baseline) = (Vec::new(), Vec::new());
    for _ in 0..m.processes {
        let lc = process_level(m, rng) + m.effect.ln_1p();
        let lb = process_level(m, rng);
        for _ in 0..m.rounds {
            let drift = m.sd_drift * normal(rng);
            current.push(1000.0 * (lc + drift + m.sd_run * normal(rng)).exp());
            baseline.push(1000.0 * (lb + drift + m.sd_run * normal(rng)).exp());
        }
    }
    Invocation {
        current,
        baseline,
        groups: vec![m.rounds; m.processes],
    }
}

#[derive(Debug, Default, Clone, Copy)]
struct Tally {
    n: usize,
    slower: usize,
    faster: usize,
    same: usize,
    covered: usize,
}

impl Tally {
    fn add(&mut self, v: Verdict, (lo, hi): (f64, f64), truth: f64) {
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
    fn line(&self) -> String {
        format!(
            "slower {:.3} faster {:.3} same {:.3} cover {:.3}",
            self.share(self.slower),
            self.share(self.faster),
            self.share(self.same),
            self.share(self.covered)
        )
    }
}

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

fn judge_pairs(inv: &Invocation) -> (Verdict, (f64, f64)) {
    let logs: Vec<f64> = inv
        .current
        .iter()
        .zip(&inv.baseline)
        .map(|(c, b)| (c / b).ln())
        .collect();
    let p = process_pair_interval(&logs, &inv.groups).unwrap();
    let ci = (p.low, p.high);
    (
        verdict::decide(p.ratio, ci, policy::REGRESSION_MIN_EFFECT),
        ci,
    )
}

fn measure(m: &Model, n: usize, seed: u64) -> (Tally, Tally) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (mut cur, mut alt) = (Tally::default(), Tally::default());
    let truth = 1.0 + m.effect;
    for _ in 0..n {
        let inv = invocation(m, &mut rng);
        let (v, ci) = judge_current(&inv);
        cur.add(v, ci, truth);
        let (v, ci) = judge_pairs(&inv);
        alt.add(v, ci, truth);
    }
    (cur, alt)
}

#[test]
fn explore() {
    for procs in [3usize, 6] {
        for sp in [0.02, 0.05, 0.15] {
            for (k, e) in EFFECTS.into_iter().enumerate() {
                let mut m = Model::default_config(sp, e);
                m.processes = procs;
                let mut rng = ChaCha8Rng::seed_from_u64(100 + k as u64);
                let mut alt = Tally::default();
                let t = Instant::now();
                for _ in 0..40000 {
                    let inv = invocation(&m, &mut rng);
                    let (v, ci) = judge_pairs(&inv);
                    alt.add(v, ci, 1.0 + e);
                }
                eprintln!(
                    "P{procs} sp {sp} e {e}: ALT {} ({:.2}s)",
                    alt.line(),
                    t.elapsed().as_secs_f64()
                );
            }
        }
    }
}
