//! Measuring to a precision in the interleaved schedule (`execution.precision`): the target and
//! budget a run reads from its config, and a transform's rounds clock, which asks the stopping
//! rule (`augbench_stats::precision::stop_rule`) before every round whether this process's
//! intervals of every library's figure and every paired speedup are narrow enough, and records
//! how the intervals over every process so far stand when its rounds end.

use std::time::Instant;

use augbench_core::{RunConfig, policy};
use augbench_stats::precision::{
    Decision, PrecisionRecord, Progress, after_process, half_widths_with, process_target,
    stop_rule, worst,
};
use augbench_stats::spread::Spread;

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

    /// Seconds of rounds one process may spend after `spent` seconds of earlier processes: an
    /// equal share of the budget, never more than is left of it.
    pub fn process_budget(&self, spent: f64) -> f64 {
        let share = self.budget_sec / self.processes as f64;
        share.min(self.budget_sec - spent).max(0.0)
    }

    /// The half-width a process's own rounds aim for, after the runs of the transform's earlier
    /// processes (`earlier`, as `runs_so_far` takes them): the target, or a share of the spread
    /// those processes showed once there are `policy::MIN_PROCESS_UNITS` of them
    /// (`process_target`), read with the run's `prior` as the record over processes reads them.
    pub fn process_aim(&self, earlier: &[(Vec<f64>, Vec<usize>)], prior: Option<&Spread>) -> f64 {
        let over = match earlier_paired(earlier) {
            Some((runs, groups)) if groups.len() >= policy::MIN_PROCESS_UNITS => {
                widths_with(&runs, &groups, prior)
            }
            _ => Vec::new(),
        };
        process_target(self.precision, &over)
    }
}

/// The half-widths the stopping rule reads for libraries' runs (`runs[i]`, round by round) of
/// consecutive processes (`groups`; empty: one).
pub(crate) fn widths(runs: &[Vec<f64>], groups: &[usize]) -> Vec<f64> {
    widths_with(runs, groups, None)
}

/// `widths`, every pair's spread between processes shrunk towards the run's `prior` when there
/// is one (`stats::spread`).
fn widths_with(runs: &[Vec<f64>], groups: &[usize], prior: Option<&Spread>) -> Vec<f64> {
    let refs: Vec<&[f64]> = runs.iter().map(Vec::as_slice).collect();
    crate::time_split::part("precision rule", || half_widths_with(&refs, groups, prior))
}

/// One transform's rounds in one process, as the stopping rule sees them.
pub(crate) struct RoundsClock {
    started: Instant,
    budget_sec: f64,
    /// The half-width this process's rounds aim for (`process_target`).
    aim: f64,
    last: (Decision, f64),
}

impl RoundsClock {
    /// A clock for rounds that may spend `budget_sec` (`Target::process_budget`) and aim for
    /// `aim` (`Target::process_aim`).
    pub fn start(budget_sec: f64, aim: f64) -> RoundsClock {
        RoundsClock {
            started: Instant::now(),
            budget_sec,
            aim,
            last: (Decision::More, f64::NAN),
        }
    }

    /// Whether another round is due. `runs[i]`: library i's throughputs the rule reads, `groups`
    /// the runs of each process among them (empty: this process alone; else the last is this
    /// process's). From
    /// `policy::MIN_PROCESS_UNITS` processes on the scheduler passes this process's runs alone:
    /// more rounds cannot narrow the spread between processes (`record` judges that).
    pub fn more(&mut self, runs: &[Vec<f64>], groups: &[usize], rounds: u64) -> bool {
        let widths = widths(runs, groups);
        let p = Progress {
            rounds,
            min_rounds: policy::PRECISION_MIN_ROUNDS,
            max_rounds: policy::PRECISION_MAX_RUNS,
            earlier_runs: groups.iter().rev().skip(1).sum::<usize>() as u64,
            elapsed_sec: self.started.elapsed().as_secs_f64(),
            budget_sec: self.budget_sec,
        };
        let d = stop_rule(&widths, self.aim, p);
        self.last = (d, worst(&widths));
        d == Decision::More
    }

    /// The record of the rounds so far, on top of `earlier` (the transform's earlier processes),
    /// judged by `over_processes`: the half-widths over every process so far, this one included
    /// (`processes` of them).
    pub fn record(
        &self,
        t: &Target,
        rounds: u64,
        earlier: Option<&PrecisionRecord>,
        over_processes: &[f64],
        processes: u64,
    ) -> PrecisionRecord {
        let decision = after_process(self.last.0, over_processes, t.precision, processes);
        let (width, own) = (worst(over_processes), self.last.1);
        let seconds = self.started.elapsed().as_secs_f64() + earlier.map_or(0.0, |e| e.seconds);
        let rounds = rounds + earlier.map_or(0, |e| e.rounds);
        let own = own.is_finite().then_some(own);
        PrecisionRecord::with_own(
            decision,
            width,
            own,
            t.precision,
            t.budget_sec,
            rounds,
            seconds,
        )
    }
}

/// Every process's runs so far for `current` libraries' runs of this process: each library's
/// earlier processes' runs (`earlier`, with their per-process counts) first. `None` when the
/// libraries' earlier processes differ (one missed a process), so their rounds no longer pair;
/// with no earlier processes, this process's runs alone.
pub(crate) fn runs_so_far(
    earlier: &[(Vec<f64>, Vec<usize>)],
    current: &[Vec<f64>],
) -> Option<(Vec<Vec<f64>>, Vec<usize>)> {
    let this = current.first().map_or(0, Vec::len);
    if earlier.is_empty() {
        return Some((current.to_vec(), Vec::new()));
    }
    let first = aligned_groups(earlier)?;
    if earlier.len() != current.len() || current.iter().any(|c| c.len() != this) {
        return None;
    }
    let runs = earlier
        .iter()
        .zip(current)
        .map(|((xs, _), c)| xs.iter().chain(c).copied().collect())
        .collect();
    let mut groups = first;
    groups.push(this);
    Some((runs, groups))
}

/// The earlier processes' runs of every library and their processes, when they align
/// (`aligned_groups`).
pub(crate) fn earlier_paired(
    earlier: &[(Vec<f64>, Vec<usize>)],
) -> Option<(Vec<Vec<f64>>, Vec<usize>)> {
    let groups = aligned_groups(earlier)?;
    Some((earlier.iter().map(|(xs, _)| xs.clone()).collect(), groups))
}

/// The runs per process that every library's earlier processes share; `None` when there are
/// none or they differ (one library missed a process).
fn aligned_groups(earlier: &[(Vec<f64>, Vec<usize>)]) -> Option<Vec<usize>> {
    let first = earlier.first().map(|(_, g)| g.clone()).unwrap_or_default();
    let aligned = !first.is_empty()
        && earlier
            .iter()
            .all(|(xs, g)| *g == first && xs.len() == g.iter().sum::<usize>());
    aligned.then_some(first)
}

/// The half-widths over every process so far (`runs_so_far`), every pair's spread between
/// processes shrunk towards the run's `prior` when there is one (`stats::spread`); one NaN (never
/// narrow) when the libraries' processes no longer pair.
pub(crate) fn widths_so_far(
    earlier: &[(Vec<f64>, Vec<usize>)],
    current: &[Vec<f64>],
    prior: Option<&Spread>,
) -> Vec<f64> {
    match runs_so_far(earlier, current) {
        Some((runs, groups)) => widths_with(&runs, &groups, prior),
        None => vec![f64::NAN],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(precision: f64, budget_sec: f64, processes: u64) -> Target {
        Target {
            precision,
            budget_sec,
            processes,
        }
    }

    /// Drives a clock the way `Scheduler::rounds` does (ask, then take a round) over given
    /// per-round throughputs of two libraries; returns the rounds taken when it stopped.
    fn rounds_until_stop(clock: &mut RoundsClock, a: &[f64], b: &[f64]) -> u64 {
        let mut round = 0u64;
        let (mut ra, mut rb) = (Vec::new(), Vec::new());
        while clock.more(&[ra.clone(), rb.clone()], &[], round) {
            let k = round as usize % a.len();
            ra.push(a[k]);
            rb.push(b[k]);
            round += 1;
        }
        round
    }

    #[test]
    fn the_rounds_loop_stops_when_the_target_is_reached_and_not_before() {
        // Steady libraries: every interval sits at the drift floor from the first rounds, so the
        // loop ends at the fewest rounds the rule takes, not at the cap.
        let mut steady = RoundsClock::start(3600.0, 0.05);
        let taken = rounds_until_stop(
            &mut steady,
            &[1000.0, 1001.0, 999.0],
            &[500.0, 501.0, 499.0],
        );
        assert_eq!(taken, policy::PRECISION_MIN_ROUNDS);
        assert_eq!(steady.last.0, Decision::Reached);
        // Ratios that swing 2× between rounds (the libraries move apart) never reach ±5%: the
        // loop goes on past the fewest rounds and ends on a stop of its own (cap or out of
        // reach), never on `Reached`.
        let mut noisy = RoundsClock::start(3600.0, 0.05);
        let taken = rounds_until_stop(&mut noisy, &[1000.0, 1300.0, 700.0], &[500.0, 350.0, 650.0]);
        assert!(taken > policy::PRECISION_MIN_ROUNDS, "{taken}");
        assert!(taken <= policy::PRECISION_MAX_RUNS, "{taken}");
        assert_ne!(noisy.last.0, Decision::Reached);
        assert_ne!(noisy.last.0, Decision::More);
    }

    #[test]
    fn a_spent_budget_ends_the_rounds_loop_after_one_round() {
        let mut clock = RoundsClock::start(0.0, 0.0001);
        let taken = rounds_until_stop(&mut clock, &[1000.0, 1300.0], &[500.0, 650.0]);
        assert_eq!(taken, 1);
        assert_eq!(clock.last.0, Decision::BudgetSpent);
    }

    #[test]
    fn earlier_processes_join_when_every_library_has_them() {
        let earlier = vec![(vec![1.0, 2.0], vec![2]), (vec![3.0, 4.0], vec![2])];
        let current = vec![vec![5.0], vec![6.0]];
        let (runs, groups) = runs_so_far(&earlier, &current).unwrap_or_default();
        assert_eq!(runs, vec![vec![1.0, 2.0, 5.0], vec![3.0, 4.0, 6.0]]);
        assert_eq!(groups, vec![2, 1]);
        let ragged = vec![(vec![1.0, 2.0], vec![2]), (vec![3.0], vec![1])];
        assert_eq!(runs_so_far(&ragged, &current), None);
        assert!(
            widths_so_far(&ragged, &current, None)[0].is_nan(),
            "never narrow"
        );
        assert_eq!(runs_so_far(&[], &current), Some((current.clone(), vec![])));
    }

    #[test]
    fn the_clock_stops_narrow_rounds_after_the_minimum_and_records_why() {
        let t = target(0.05, 60.0, 1);
        let mut c = RoundsClock::start(t.process_budget(0.0), t.precision);
        let steady = vec![vec![100.0, 100.5, 99.5], vec![50.0, 50.2, 49.9]];
        assert!(c.more(&[vec![100.0], vec![50.0]], &[], 1));
        assert!(!c.more(&steady, &[], 3));
        let r = c.record(&t, 3, None, &widths(&steady, &[]), 1);
        assert!(
            !r.reached && r.note.contains("too few"),
            "one process: {r:?}"
        );
        let units = policy::MIN_PROCESS_UNITS as u64;
        let r = c.record(&t, 3, None, &widths(&steady, &[]), units);
        assert!(r.reached && r.rounds == 3, "{r:?}");
        assert!(r.note.starts_with("reached ±"), "{}", r.note);
    }

    #[test]
    fn a_process_pinned_down_among_processes_that_disagree_is_not_reached_nor_within_reach() {
        let t = target(0.05, 60.0, 3);
        let mut c = RoundsClock::start(t.process_budget(0.0), t.precision);
        let steady = vec![vec![100.0, 100.5, 99.5]];
        assert!(!c.more(&steady, &[], 3), "this process is pinned down");
        // Three processes of the same rounds: 100, 60 and 140 img/s.
        let all = vec![vec![
            60.0, 60.2, 59.9, 140.0, 139.0, 140.5, 100.0, 100.5, 99.5,
        ]];
        let over = widths(&all, &[3, 3, 3]);
        let r = c.record(&t, 3, None, &over, 2);
        assert!(!r.reached, "{r:?}");
        assert!(r.note.contains("which disagree"), "{}", r.note);
        // Known to be three processes, ±40% apart: six would not narrow them to ±5%.
        let r = c.record(&t, 3, None, &over, 3);
        assert!(r.note.contains("out of reach"), "{}", r.note);
    }

    #[test]
    fn after_processes_that_disagree_a_process_stops_once_pinned_to_a_share_of_their_spread() {
        let t = target(0.03, 60.0, 3);
        // Three earlier processes of two libraries: about 60, 100 and 140 img/s.
        let a = vec![60.0, 61.0, 59.0, 100.0, 101.0, 99.0, 140.0, 141.0, 139.0];
        let b = vec![50.0; 9];
        let earlier = vec![(a, vec![3, 3, 3]), (b, vec![3, 3, 3])];
        let aim = t.process_aim(&earlier, None);
        assert!(aim > 0.1, "a share of the processes' spread: {aim}");
        let two: Vec<_> = earlier
            .iter()
            .map(|(xs, _)| (xs[..6].to_vec(), vec![3, 3]))
            .collect();
        assert_eq!(t.process_aim(&two, None), 0.03, "two processes: the target");
        // A process whose own rounds spread ±6%: past its aim, not the target.
        let own = vec![vec![100.0, 94.0, 106.0], vec![50.0, 50.0, 50.0]];
        let mut strict = RoundsClock::start(t.process_budget(0.0), t.precision);
        assert!(strict.more(&own, &[], 3), "still wider than ±3%");
        let mut relaxed = RoundsClock::start(t.process_budget(0.0), aim);
        assert!(
            !relaxed.more(&own, &[], 3),
            "within its aim after the minimum rounds"
        );
    }

    #[test]
    fn rounds_far_from_their_aim_stop_before_the_cap_and_the_record_says_why() {
        let t = target(0.03, 600.0, 2);
        let mut c = RoundsClock::start(t.process_budget(0.0), t.precision);
        // Runs that swing ±30% around 100 img/s: no 30 rounds pin them to ±3%.
        let swings = |n: usize| -> Vec<Vec<f64>> {
            let xs = (0..n).map(|i| [70.0, 130.0, 100.0][i % 3]).collect();
            vec![xs]
        };
        let from = policy::PRECISION_FUTILITY_ROUNDS;
        assert!(c.more(&swings(from as usize - 1), &[], from - 1));
        assert!(
            !c.more(&swings(from as usize), &[], from),
            "stops at {from}"
        );
        let over = widths(&swings(from as usize), &[]);
        let r = c.record(&t, from, None, &over, 1);
        assert!(!r.reached, "{r:?}");
        assert!(
            r.note.contains("out of reach within a process"),
            "{}",
            r.note
        );
    }

    #[test]
    fn a_process_never_gets_more_than_its_share_or_what_is_left() {
        let t = target(0.05, 30.0, 3);
        assert_eq!(t.process_budget(0.0), 10.0);
        assert_eq!(t.process_budget(25.0), 5.0);
        assert_eq!(t.process_budget(31.0), 0.0);
    }
}
