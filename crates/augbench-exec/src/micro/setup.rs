//! Setting a transform up for timed runs: prepare, the output contract check, the slow preflight
//! and the adaptive warmup (docs/methodology.md). What comes out is a `Measuring` ready for runs,
//! or a final result (unsupported, slow, error).

use std::time::{Duration, Instant};

use augbench_catalog::registry::TransformSpec;
use augbench_core::config::FullPass;
use augbench_core::policy;
use augbench_core::results::{CONTRACT_ERROR, Status, TransformResult};

use super::measuring::{Measuring, Warmed};
use super::phase::Phase;
use super::requests::{prepare_request, settle};
use super::session::Session;
use super::settings::{MicroSettings, WarmupSettings};
use augbench_protocol::client::WorkerError;
use augbench_protocol::contract;
use augbench_protocol::protocol::TimeRequest;

/// What `start` leaves: a transform that needs no timed runs (unsupported, slow, error), or one
/// ready for them.
pub enum Started {
    Finished(Box<TransformResult>),
    Measuring(Measuring),
}

/// Prepares, checks, preflights and warms up one transform; no timed run yet.
pub fn start(
    s: &mut dyn Session,
    spec: &TransformSpec,
    items: u64,
    set: &MicroSettings,
    on_phase: &mut dyn FnMut(Phase),
) -> Result<Started, WorkerError> {
    let params = serde_json::to_value(&spec.params).unwrap_or_default();
    let mut warnings = Vec::new();
    let started = start_inner(s, spec, items, set, on_phase, &params, &mut warnings);
    Ok(match settle(started, &params)? {
        Ok(Started::Finished(mut r)) => {
            r.warnings = warnings;
            Started::Finished(r)
        }
        Err(mut r) => {
            r.warnings = warnings;
            Started::Finished(Box::new(r))
        }
        Ok(Started::Measuring(m)) => Started::Measuring(m.with_warnings(warnings)),
    })
}

fn start_inner(
    s: &mut dyn Session,
    spec: &TransformSpec,
    items: u64,
    set: &MicroSettings,
    on_phase: &mut dyn FnMut(Phase),
    params: &serde_json::Value,
    warnings: &mut Vec<String>,
) -> Result<Started, WorkerError> {
    let timeout = set.request_timeout;
    let prepared = s.prepare(prepare_request(spec, params, set), timeout)?;
    warnings.clone_from(&prepared.warnings);
    if let Some(batch) = set.batch
        && prepared.regime.as_deref() != Some("batch")
    {
        let reason = format!("the worker did not enter the batched regime (micro_batch {batch})");
        let r = TransformResult::not_measured(Status::Error, params.clone(), reason);
        return Ok(Started::Finished(Box::new(r)));
    }
    on_phase(Phase::Check);
    let checked = s.check(timeout)?;
    if let Err(why) = contract::check(spec, &checked) {
        let r = TransformResult::failed(params.clone(), CONTRACT_ERROR, why);
        return Ok(Started::Finished(Box::new(r)));
    }
    on_phase(Phase::Preflight);
    let per_item = match preflight(s, items, set)? {
        Preflight::Slow(result) => {
            let mut r = slow_result(params, set.slow_threshold, set.preflight_items, result);
            r.output_contiguous = checked.output_contiguous;
            r.force_share = checked.force_share;
            return Ok(Started::Finished(Box::new(r)));
        }
        Preflight::PerItem(cold) => cold,
    };
    on_phase(Phase::Warmup);
    let warmed = warmup(s, items, per_item, set)?;
    let per_item = per_item.per_item;
    Ok(Started::Measuring(Measuring::new(
        spec,
        params,
        loops_for(per_item * items as f64, set.min_time),
        per_item,
        set,
        warmed,
        checked,
    )))
}

enum Preflight {
    PerItem(Cold),
    /// Seconds per item measured (or the lower bound when the preflight hit its wall cap).
    Slow(f64),
}

/// The preflight's cold pass over the warmup subset: seconds per item over all of it, and over
/// the items after the first (the first carries what a transform pays once, whatever the item).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Cold {
    pub per_item: f64,
    pub rest_per_item: Option<f64>,
}

fn preflight(
    s: &mut dyn Session,
    items: u64,
    set: &MicroSettings,
) -> Result<Preflight, WorkerError> {
    let count = set.preflight_items.clamp(1, items.max(1));
    let cap = Duration::from_secs_f64(policy::PREFLIGHT_MAX_SEC).min(set.request_timeout);
    let limit = if set.disable_slow_skip {
        set.request_timeout
    } else {
        cap
    };
    let started = Instant::now();
    // The first item alone, then the rest: what a transform pays once stays out of the rest.
    let mut ns = Vec::new();
    for (start, n) in [(0, 1), (1, count - 1)] {
        if n == 0 {
            continue;
        }
        let timeout = limit
            .saturating_sub(started.elapsed())
            .max(Duration::from_millis(1));
        let request = TimeRequest {
            start,
            count: n,
            loops: 1,
            markers: false,
        };
        match s.time(request, timeout) {
            Ok(t) => ns.push(t.first().copied().unwrap_or(0) as f64 / 1e9),
            // Past the preflight's own wall cap the transform is slow; at the request timeout it
            // hangs.
            Err(WorkerError::Timeout { .. })
                if !set.disable_slow_skip && cap < set.request_timeout =>
            {
                return Ok(Preflight::Slow(cap.as_secs_f64() / count as f64));
            }
            Err(e) => return Err(e),
        }
    }
    let per_item = ns.iter().sum::<f64>() / count as f64;
    if !set.disable_slow_skip && per_item >= set.slow_threshold {
        return Ok(Preflight::Slow(per_item));
    }
    Ok(Preflight::PerItem(Cold {
        per_item: per_item.max(1e-9),
        rest_per_item: (count > 1).then(|| ns.last().copied().unwrap_or(0.0) / (count - 1) as f64),
    }))
}

/// A transform recorded as `slow` from its preflight speed (micro and pipeline mode).
pub(crate) fn slow_result(
    params: &serde_json::Value,
    threshold: f64,
    preflight_items: u64,
    per_item: f64,
) -> TransformResult {
    let reason = format!("preflight: {per_item:.4} s/item ≥ slow threshold {threshold} s/item");
    TransformResult {
        status: Some(Status::Slow),
        supported: true,
        params: params.clone(),
        early_stopped: true,
        early_stop_reason: Some(reason),
        slow_threshold_sec_per_item: Some(threshold),
        slow_preflight_items: Some(preflight_items),
        preflight_sec_per_item: Some(per_item),
        preflight_throughput: Some(1.0 / per_item),
        ..Default::default()
    }
}

/// Loops of a pass needed so one timed value lasts at least `min_time`.
pub fn loops_for(pass_seconds: f64, min_time: f64) -> u64 {
    if pass_seconds <= 0.0 {
        return 1;
    }
    ((min_time / pass_seconds).ceil() as u64).clamp(1, 100_000)
}

/// Runs warmup passes over a small subset until the window rule says stable, then, where the
/// row takes it (`takes_full_pass`), one untimed pass over every item.
fn warmup(
    s: &mut dyn Session,
    items: u64,
    cold: Cold,
    set: &MicroSettings,
) -> Result<Warmed, WorkerError> {
    let w = &set.warmup;
    let subset = policy::WARMUP_SUBSET_ITEMS.clamp(1, items.max(1));
    let started = Instant::now();
    let mut rates: Vec<f64> = Vec::new();
    // Ask for one window of passes per request, so protocol cost stays out of short passes.
    let per_request = w.window.min(w.max_passes.max(1));
    while (rates.len() as u64) < w.max_passes && started.elapsed().as_secs_f64() < w.max_seconds {
        let ns = s.time(
            TimeRequest {
                start: 0,
                count: subset,
                loops: per_request,
                markers: false,
            },
            set.request_timeout,
        )?;
        rates.extend(
            ns.iter()
                .map(|n| subset as f64 / (*n as f64 / 1e9).max(1e-12)),
        );
        if warmed_up(&rates, w) {
            break;
        }
    }
    // One untimed pass over every item: the subset is warm, the rest would otherwise make the
    // first timed run of each process a cold one (a few percent to 30% slower, as measured on
    // fast rows; rows slower than the auto rule's threshold were measured not to read cold).
    let cold_ratio = cold_ratio(cold, &rates, w.window);
    let full_pass = items > subset && takes_full_pass(w.full_pass, cold.per_item, cold_ratio);
    if full_pass {
        let all = TimeRequest {
            start: 0,
            count: items,
            loops: 1,
            markers: false,
        };
        s.time(all, set.request_timeout)?;
    }
    Ok(Warmed {
        passes: rates.len() as u64 + u64::from(full_pass),
        full_pass,
        cold_ratio,
    })
}

/// The subset's cold seconds per item (after its first item) over its warm seconds per item
/// (the mean rate of the last `window` warmup passes).
fn cold_ratio(cold: Cold, rates: &[f64], window: u64) -> Option<f64> {
    let last = &rates[rates.len().saturating_sub(window.max(1) as usize)..];
    let warm_rate = augbench_stats::mean(last);
    let rest = cold.rest_per_item?;
    (warm_rate > 0.0 && rest > 0.0).then_some(rest * warm_rate)
}

/// Whether the warmup ends with the untimed pass over every item: `always`, `never`, or (`auto`)
/// for a row faster than `WARMUP_FULL_PASS_MAX_SEC_PER_ITEM` an item (where it is cheap and a cold
/// first run was measured), or one whose subset read cold by more than `WARMUP_COLD_RATIO` (a
/// cost each new item pays once, as torch's convolutions do for each new image size); a ratio
/// that could not be read takes the pass.
pub(super) fn takes_full_pass(mode: FullPass, per_item: f64, cold_ratio: Option<f64>) -> bool {
    match mode {
        FullPass::Always => true,
        FullPass::Never => false,
        FullPass::Auto => {
            per_item < policy::WARMUP_FULL_PASS_MAX_SEC_PER_ITEM
                || cold_ratio.is_none_or(|r| r > 1.0 + policy::WARMUP_COLD_RATIO)
        }
    }
}

/// The flat-rate rule: after `min_windows` windows (at least two), warm once the rate stops
/// climbing: the mean rate of the last window is at most `threshold` (relative) above the mean of
/// the window before it. Warming up makes a rate rise (caches, allocations, lazy set-up); a window
/// that reads slower on a busy machine is noise, and it ends warmup instead of prolonging it
/// (docs/methodology.md, "One transform, step by step").
pub fn warmed_up(rates: &[f64], w: &WarmupSettings) -> bool {
    let window = w.window.max(1) as usize;
    let need = window * w.min_windows.max(2) as usize;
    if rates.len() < need {
        return false;
    }
    let n = rates.len();
    let last = augbench_stats::mean(&rates[n - window..]);
    let before = augbench_stats::mean(&rates[n - 2 * window..n - window]);
    before > 0.0 && last <= before * (1.0 + w.threshold)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::micro::testing::{Log, flip, settings, ws};

    #[test]
    fn warmup_needs_min_windows_then_stability() {
        assert!(!warmed_up(&[100.0; 5], &ws()));
        assert!(warmed_up(&[100.0; 6], &ws()));
        assert!(!warmed_up(&[10.0, 10.0, 10.0, 100.0, 100.0, 100.0], &ws()));
        // Still climbing by more than the threshold: not yet.
        assert!(!warmed_up(&[90.0, 90.0, 90.0, 100.0, 100.0, 100.0], &ws()));
        // Flat within the threshold, or slower (noise on a busy machine): warm.
        assert!(warmed_up(
            &[100.0, 100.0, 100.0, 104.0, 104.0, 104.0],
            &ws()
        ));
        assert!(warmed_up(&[100.0, 100.0, 100.0, 60.0, 60.0, 60.0], &ws()));
        // The climb is read from the last two windows, not from the first passes.
        assert!(warmed_up(
            &[10.0, 10.0, 10.0, 100.0, 100.0, 100.0, 101.0, 101.0, 101.0],
            &ws()
        ));
    }

    #[test]
    fn auto_takes_the_full_pass_for_fast_rows_and_for_rows_that_read_cold() {
        let fast = policy::WARMUP_FULL_PASS_MAX_SEC_PER_ITEM / 2.0;
        let slow = policy::WARMUP_FULL_PASS_MAX_SEC_PER_ITEM * 2.0;
        let warm = Some(1.0 + policy::WARMUP_COLD_RATIO / 2.0);
        let cold = Some(1.0 + policy::WARMUP_COLD_RATIO * 2.0);
        assert!(takes_full_pass(FullPass::Auto, fast, warm));
        assert!(!takes_full_pass(FullPass::Auto, slow, warm));
        assert!(takes_full_pass(FullPass::Auto, slow, cold));
        assert!(
            takes_full_pass(FullPass::Auto, slow, None),
            "unread: take it"
        );
        assert!(takes_full_pass(FullPass::Always, slow, warm));
        assert!(!takes_full_pass(FullPass::Never, fast, cold));
    }

    /// The requests after the preflight and the window passes: whether one covered every item.
    fn full_pass_taken(mut log: Log, items: u64) -> bool {
        let mut set = settings(3);
        set.preflight_items = 10;
        let Ok(Started::Measuring(_)) = start(&mut log, &flip(), items, &set, &mut |_| {}) else {
            panic!("expected a transform under way");
        };
        log.times.iter().any(|t| t.count == items)
    }

    #[test]
    fn a_slow_row_skips_the_full_pass_unless_its_new_items_read_cold() {
        let item = (policy::WARMUP_FULL_PASS_MAX_SEC_PER_ITEM * 4e9) as u64;
        assert!(!full_pass_taken(Log::with(item, 0), 40));
        // Each new item costs half as much again the first time: the subset reads cold.
        assert!(full_pass_taken(Log::with(item, item / 2), 40));
        // A cost paid once, by the first item only, is not a cold item.
        let mut once = Log::with(item, 0);
        once.once_ns = 20 * item;
        assert!(!full_pass_taken(once, 40));
    }

    #[test]
    fn loops_reach_min_time() {
        assert_eq!(loops_for(0.001, 0.05), 50);
        assert_eq!(loops_for(1.0, 0.05), 1);
        assert_eq!(loops_for(0.0, 0.05), 1);
    }

    #[test]
    fn warmup_ends_with_one_untimed_pass_over_every_item() {
        let (mut log, set) = (Log::default(), settings(3));
        let Ok(Started::Measuring(_)) = start(&mut log, &flip(), 40, &set, &mut |_| {}) else {
            panic!("expected a transform under way");
        };
        let last = log.times.last().unwrap();
        assert_eq!((last.start, last.count, last.loops), (0, 40, 1));
        assert!(
            log.times[..log.times.len() - 1]
                .iter()
                .all(|t| t.count < 40)
        );
    }
}
