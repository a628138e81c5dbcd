//! Setting a transform up for timed runs: prepare, the output contract check, the slow preflight
//! and the adaptive warmup (docs/methodology.md). What comes out is a `Measuring` ready for runs,
//! or a final result (unsupported, slow, error).

use std::time::{Duration, Instant};

use augbench_core::policy;
use augbench_core::registry::TransformSpec;
use augbench_core::results::{CONTRACT_ERROR, Status, TransformResult};
use augbench_core::stats;

use super::measuring::Measuring;
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
        Preflight::PerItem(sec) => sec,
    };
    on_phase(Phase::Warmup);
    let warmup_passes = warmup(s, items, set)?;
    Ok(Started::Measuring(Measuring::new(
        spec,
        params,
        loops_for(per_item * items as f64, set.min_time),
        per_item,
        set,
        warmup_passes,
        checked,
    )))
}

enum Preflight {
    PerItem(f64),
    /// Seconds per item measured (or the lower bound when the preflight hit its wall cap).
    Slow(f64),
}

fn preflight(
    s: &mut dyn Session,
    items: u64,
    set: &MicroSettings,
) -> Result<Preflight, WorkerError> {
    let count = set.preflight_items.clamp(1, items.max(1));
    let cap = Duration::from_secs_f64(policy::PREFLIGHT_MAX_SEC).min(set.request_timeout);
    let timeout = if set.disable_slow_skip {
        set.request_timeout
    } else {
        cap
    };
    let ns = match s.time(
        TimeRequest {
            start: 0,
            count,
            loops: 1,
            markers: false,
        },
        timeout,
    ) {
        Ok(ns) => ns,
        // Past the preflight's own wall cap the transform is slow; at the request timeout it hangs.
        Err(WorkerError::Timeout { .. }) if !set.disable_slow_skip && cap < set.request_timeout => {
            return Ok(Preflight::Slow(cap.as_secs_f64() / count as f64));
        }
        Err(e) => return Err(e),
    };
    let per_item = ns.first().copied().unwrap_or(0) as f64 / 1e9 / count as f64;
    if !set.disable_slow_skip && per_item >= set.slow_threshold {
        return Ok(Preflight::Slow(per_item));
    }
    Ok(Preflight::PerItem(per_item.max(1e-9)))
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

/// Runs warmup passes over a small subset until the window rule says stable; returns passes run.
fn warmup(s: &mut dyn Session, items: u64, set: &MicroSettings) -> Result<u64, WorkerError> {
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
    // first timed run of each process a cold one (a few percent to 30% slower, as measured).
    let full_pass = items > subset;
    if full_pass {
        let all = TimeRequest {
            start: 0,
            count: items,
            loops: 1,
            markers: false,
        };
        s.time(all, set.request_timeout)?;
    }
    Ok(rates.len() as u64 + u64::from(full_pass))
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
    let last = stats::mean(&rates[n - window..]);
    let before = stats::mean(&rates[n - 2 * window..n - window]);
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
