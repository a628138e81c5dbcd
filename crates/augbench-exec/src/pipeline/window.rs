//! The window statistics of pipeline mode: one steady-state window's rate and its first and
//! second half from batch arrival times, and the drift rule that marks a row whose typical window
//! drifted.

use augbench_core::policy;
use augbench_core::results::TransformResult;

/// One window's rate and its halves, from batch arrival times (ns after the window started).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Window {
    pub items_per_sec: f64,
    pub seconds: f64,
    pub halves: [f64; 2],
}

impl Window {
    /// `None` without batches, or with arrival times that do not increase (a broken worker).
    pub fn from_arrivals(ns: &[u64], batch_size: u64) -> Option<Window> {
        let last = *ns.last()?;
        if last == 0 || ns.windows(2).any(|p| p[1] < p[0]) {
            return None;
        }
        let seconds = last as f64 / 1e9;
        let n = ns.len();
        let mid = n / 2;
        let t_mid = if mid == 0 { 0 } else { ns[mid - 1] };
        let rate = |batches: usize, span_ns: u64| {
            if span_ns == 0 {
                0.0
            } else {
                (batches as u64 * batch_size) as f64 / (span_ns as f64 / 1e9)
            }
        };
        Some(Window {
            items_per_sec: (n as u64 * batch_size) as f64 / seconds,
            seconds,
            halves: [rate(mid, t_mid), rate(n - mid, last - t_mid)],
        })
    }

    /// |second half / first half − 1|.
    pub fn drift(&self) -> f64 {
        half_drift(self.halves)
    }
}

/// Flags a measured result whose typical window drifted more than policy allows: the median over
/// its windows of |second half / first half − 1| (`pipeline.drift` keeps the largest). One window
/// off on a shared host is noise; most of them off is a loader short of its steady state.
pub(crate) fn flag_drift(r: &mut TransformResult) {
    let Some(p) = &r.pipeline else { return };
    let drifts: Vec<f64> = p.half_rates.iter().map(|h| half_drift(*h)).collect();
    if drifts.is_empty() {
        return;
    }
    let typical = augbench_stats::median(&drifts);
    if typical > policy::PIPELINE_DRIFT_UNSTABLE && !r.unstable {
        r.unstable = true;
        r.unstable_reason = Some(format!(
            "the windows' second halves ran {:.0}% off their first (median over {} windows; limit {:.0}%)",
            typical * 100.0,
            drifts.len(),
            policy::PIPELINE_DRIFT_UNSTABLE * 100.0
        ));
    }
}

/// |second half / first half − 1| of one window's half rates (0 without a first half).
fn half_drift([a, b]: [f64; 2]) -> f64 {
    if a > 0.0 { (b / a - 1.0).abs() } else { 0.0 }
}

/// A loader detail of `windows` windows with these half rates and ceiling windows (unit tests).
#[cfg(test)]
pub(crate) fn test_detail(
    windows: usize,
    half_rates: Vec<[f64; 2]>,
    ceiling: &[f64],
) -> augbench_core::results::PipelineDetail {
    augbench_core::results::PipelineDetail {
        time_to_first_batch: 0.1,
        warm_batches: 4,
        batches: vec![16; windows],
        half_rates,
        drift: 0.0,
        batch: serde_json::Value::Null,
        worker_threads: Vec::new(),
        transform_device: String::new(),
        ceiling_throughputs: ceiling.to_vec(),
        ceiling: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_rates_its_halves() {
        // 4 batches of 10 items: 0.1 s each, then 0.2 s each.
        let ns = [100_000_000, 200_000_000, 400_000_000, 600_000_000];
        let w = Window::from_arrivals(&ns, 10).unwrap();
        assert!((w.items_per_sec - 40.0 / 0.6).abs() < 1e-9);
        assert!((w.halves[0] - 100.0).abs() < 1e-9);
        assert!((w.halves[1] - 50.0).abs() < 1e-9);
        assert!((w.drift() - 0.5).abs() < 1e-9);
        assert!(Window::from_arrivals(&[], 10).is_none());
        assert!(Window::from_arrivals(&[5, 3, 9], 10).is_none());
    }

    #[test]
    fn a_row_is_marked_when_its_typical_window_drifted_not_one_window() {
        let row = |halves: Vec<[f64; 2]>| {
            let t = vec![100.0; halves.len()];
            let s = augbench_stats::summarize(&t);
            let mut r = TransformResult::measured(serde_json::Value::Null, &s, t, vec![1.0; 3]);
            r.pipeline = Some(test_detail(halves.len(), halves, &[]));
            flag_drift(&mut r);
            r
        };
        let one_off = row(vec![[100.0, 140.0], [100.0, 102.0], [100.0, 97.0]]);
        assert!(!one_off.unstable, "{:?}", one_off.unstable_reason);
        let most_off = row(vec![[100.0, 140.0], [100.0, 120.0], [100.0, 97.0]]);
        let why = most_off.unstable_reason.unwrap_or_default();
        assert!(
            most_off.unstable && why.starts_with("the windows' second halves ran 20% off"),
            "{why}"
        );
        assert!(why.contains("median over 3 windows; limit 10%"), "{why}");
    }
}
