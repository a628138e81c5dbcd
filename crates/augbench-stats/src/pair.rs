//! The process-pair interval of a paired ratio (current ÷ baseline): when worker process k of
//! each variant runs side by side with process k of the other, each process settles at its own
//! level, so the unit that repeats independently is the process pair, not the round. Each pair
//! gives one figure, the median of its rounds' ln ratios; the ratio is the exponentiated mean of
//! those figures and its interval Student's t over them, at 95% or at any level (for a family of
//! change claims: `PairEstimate::interval_at`). Symmetric in log, never below zero, reciprocal
//! when the variants swap.

use crate::{logscale, paired::t_over_z, student};

/// Two-sided 95% normal quantile; `t_over_z` scales it to Student's t (95%, as
/// `policy::CONFIDENCE`).
const Z95: f64 = 1.96;

/// A ratio and its 95% interval over process pairs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PairInterval {
    /// exp of the mean over process pairs of each pair's median ln ratio.
    pub ratio: f64,
    pub low: f64,
    pub high: f64,
    /// Process pairs the interval is over (its degrees of freedom are one fewer).
    pub processes: usize,
}

/// What the process pairs say before a level is chosen: the mean of their median ln ratios and
/// its standard error, over `processes` pairs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PairEstimate {
    pub mean_log: f64,
    pub std_error: f64,
    pub processes: usize,
}

impl PairEstimate {
    /// The 95% interval (the tabulated t quantile).
    pub fn interval(&self) -> PairInterval {
        self.with_half(Z95 * t_over_z(self.processes - 1) * self.std_error)
    }

    /// The two-sided interval at `confidence` (Student's t at any level, `stats::student`).
    pub fn interval_at(&self, confidence: f64) -> PairInterval {
        let p = 1.0 - (1.0 - confidence) / 2.0;
        self.with_half(student::quantile(self.processes - 1, p) * self.std_error)
    }

    fn with_half(&self, half: f64) -> PairInterval {
        let ratio = self.mean_log.exp();
        let (low, high) = logscale::around(ratio, half);
        PairInterval {
            ratio,
            low,
            high,
            processes: self.processes,
        }
    }
}

/// The interval over process pairs of per-round ln ratios `logs` (ln(current ÷ baseline)), the
/// consecutive rounds of each pair in `groups`. `None` unless `groups` has at least two non-empty
/// processes that add up to `logs.len()` and every log is finite.
pub fn process_pair_interval(logs: &[f64], groups: &[usize]) -> Option<PairInterval> {
    Some(pair_estimate(logs, groups)?.interval())
}

/// `process_pair_interval` before a level is chosen.
pub fn pair_estimate(logs: &[f64], groups: &[usize]) -> Option<PairEstimate> {
    let medians = pair_medians(logs, groups)?;
    let n = medians.len() as f64;
    let mean = medians.iter().sum::<f64>() / n;
    let var = medians.iter().map(|m| (m - mean).powi(2)).sum::<f64>() / (n - 1.0);
    Some(PairEstimate {
        mean_log: mean,
        std_error: (var / n).sqrt(),
        processes: medians.len(),
    })
}

/// The median ln ratio of each process pair; `None` for fewer than two pairs, groups that do not
/// split `logs`, or a non-finite log.
fn pair_medians(logs: &[f64], groups: &[usize]) -> Option<Vec<f64>> {
    let splits = groups.len() >= 2
        && !groups.contains(&0)
        && groups.iter().sum::<usize>() == logs.len()
        && logs.iter().all(|x| x.is_finite());
    if !splits {
        return None;
    }
    let mut rest = logs;
    let medians = groups.iter().map(|&n| {
        let (head, tail) = rest.split_at(n);
        rest = tail;
        logscale::median_log(head)
    });
    Some(medians.collect())
}
