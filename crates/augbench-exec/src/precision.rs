//! Measuring to a precision in the interleaved schedule (`execution.precision`): the target and
//! budget a run reads from its config, and a transform's rounds clock, which asks the stopping
//! rule (`augbench_core::stats::precision::stop_rule`) before every round whether the intervals
//! of every library's figure and every paired speedup are narrow enough, and records the answer.

use std::time::Instant;

use augbench_core::stats::precision::{
    Decision, PrecisionRecord, Progress, half_widths, stop_rule, worst,
};
use augbench_core::{RunConfig, policy};

/// A run's precision target: the relative half-width, and the seconds of rounds one transform
/// may spend over all its processes (each process gets an equal share).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Target {
    pub precision: f64,
    pub budget_sec: f64,
    pub processes: u64,
}

impl Target {
    /// The config's target; `None` without `execution.precision` (every transform then takes
    /// `num_runs` rounds).
    pub fn from_config(cfg: &RunConfig, processes: u64) -> Option<Target> {
        let e = &cfg.execution;
        Some(Target {
            precision: e.precision?,
            budget_sec: e
                .transform_budget_sec
                .unwrap_or(policy::DEFAULT_TRANSFORM_BUDGET_SEC),
            processes: processes.max(1),
        })
    }

    fn share_sec(&self) -> f64 {
        self.budget_sec / self.processes as f64
    }
}

/// One transform's rounds in one process, as the stopping rule sees them.
pub(crate) struct RoundsClock {
    started: Instant,
    last: (Decision, f64),
}

impl RoundsClock {
    pub fn start() -> RoundsClock {
        RoundsClock {
            started: Instant::now(),
            last: (Decision::More, f64::NAN),
        }
    }

    /// Whether another round is due. `runs[i]`: library i's throughputs so far (earlier
    /// processes first, round by round), `groups`: the rounds of each process (empty: one).
    pub fn more(&mut self, t: &Target, runs: &[Vec<f64>], groups: &[usize], rounds: u64) -> bool {
        let refs: Vec<&[f64]> = runs.iter().map(Vec::as_slice).collect();
        let widths = crate::time_split::part("precision rule", || half_widths(&refs, groups));
        let p = Progress {
            rounds,
            min_rounds: policy::PRECISION_MIN_ROUNDS,
            max_rounds: policy::PRECISION_MAX_RUNS,
            elapsed_sec: self.started.elapsed().as_secs_f64(),
            budget_sec: t.share_sec(),
        };
        let d = stop_rule(&widths, t.precision, p);
        self.last = (d, worst(&widths));
        d == Decision::More
    }

    /// The record of the rounds so far, on top of `earlier` (the transform's earlier processes).
    pub fn record(
        &self,
        t: &Target,
        rounds: u64,
        earlier: Option<&PrecisionRecord>,
    ) -> PrecisionRecord {
        let (decision, width) = self.last;
        let seconds = self.started.elapsed().as_secs_f64() + earlier.map_or(0.0, |e| e.seconds);
        let rounds = rounds + earlier.map_or(0, |e| e.rounds);
        PrecisionRecord::new(decision, width, t.precision, t.budget_sec, rounds, seconds)
    }
}

/// The runs the rule reads for `current` libraries' runs of this process: each library's earlier
/// processes' runs (`earlier`, with their per-process counts) first, when every library has the
/// same earlier counts (so their rounds still pair); else this process's runs alone.
pub(crate) fn runs_so_far(
    earlier: &[(Vec<f64>, Vec<usize>)],
    current: &[Vec<f64>],
) -> (Vec<Vec<f64>>, Vec<usize>) {
    let this = current.first().map_or(0, Vec::len);
    let first = earlier.first().map(|(_, g)| g.clone()).unwrap_or_default();
    let aligned = !first.is_empty()
        && earlier.len() == current.len()
        && earlier
            .iter()
            .all(|(xs, g)| *g == first && xs.len() == g.iter().sum::<usize>())
        && current.iter().all(|c| c.len() == this);
    if !aligned {
        return (current.to_vec(), Vec::new());
    }
    let runs = earlier
        .iter()
        .zip(current)
        .map(|((xs, _), c)| xs.iter().chain(c).copied().collect())
        .collect();
    let mut groups = first;
    groups.push(this);
    (runs, groups)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earlier_processes_join_when_every_library_has_them() {
        let earlier = vec![(vec![1.0, 2.0], vec![2]), (vec![3.0, 4.0], vec![2])];
        let current = vec![vec![5.0], vec![6.0]];
        let (runs, groups) = runs_so_far(&earlier, &current);
        assert_eq!(runs, vec![vec![1.0, 2.0, 5.0], vec![3.0, 4.0, 6.0]]);
        assert_eq!(groups, vec![2, 1]);
        let ragged = vec![(vec![1.0, 2.0], vec![2]), (vec![3.0], vec![1])];
        let (runs, groups) = runs_so_far(&ragged, &current);
        assert_eq!((runs, groups), (current.clone(), vec![]));
        assert_eq!(runs_so_far(&[], &current), (current.clone(), vec![]));
    }

    #[test]
    fn the_clock_stops_narrow_rounds_after_the_minimum_and_records_why() {
        let t = Target {
            precision: 0.05,
            budget_sec: 60.0,
            processes: 1,
        };
        let mut c = RoundsClock::start();
        let steady = vec![vec![100.0, 100.5, 99.5], vec![50.0, 50.2, 49.9]];
        assert!(c.more(&t, &[vec![100.0], vec![50.0]], &[], 1));
        assert!(!c.more(&t, &steady, &[], 3));
        let r = c.record(&t, 3, None);
        assert!(r.reached && r.rounds == 3, "{r:?}");
        assert!(r.note.starts_with("reached ±"), "{}", r.note);
    }
}
