//! Rounds of the interleaved schedule: the seeded order in which libraries take their run in each
//! round, the drift sentinel (a native worker timing the reference kernel once a round), and the
//! annotations a transform gets once every library has its runs: paired speedups, `alone`, and
//! the machine's drift.

use std::collections::BTreeMap;
use std::time::Duration;

use augbench_core::policy;
use augbench_core::results::{Drift, Status, TransformResult};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

use augbench_host::child::CommandLine;
use augbench_protocol::client::Worker;
use augbench_protocol::protocol::{Request, SentinelRequest, TimeResponse};

/// The order of `n` libraries in one round: a seeded shuffle of its own for every transform,
/// process and round, so no library always goes first and a rerun repeats the order.
pub fn round_order(n: usize, transform: &str, process: u64, round: u64) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    let seed = fnv1a(transform.as_bytes())
        ^ policy::SCHEDULE_SEED
        ^ process.wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ round.wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
    order.shuffle(&mut ChaCha8Rng::seed_from_u64(seed));
    order
}

/// A/B micro rounds (docs/ab.md, "Chunked rounds"): the item ranges `(start, count)` a run over
/// `items` items is taken in, so that one chunk of a run lasting `run_sec` lasts about
/// `policy::AB_CHUNK_SEC`: nearly equal consecutive ranges covering every item once, at least
/// one item each.
pub fn run_chunks(items: u64, run_sec: f64) -> Vec<(u64, u64)> {
    let wanted = (run_sec / policy::AB_CHUNK_SEC).round();
    let k = if wanted.is_finite() && wanted >= 1.0 {
        (wanted as u64).clamp(1, items.max(1))
    } else {
        1
    };
    (0..k)
        .map(|c| {
            let start = items * c / k;
            (start, items * (c + 1) / k - start)
        })
        .collect()
}

/// FNV-1a: a stable hash of a name (the standard hasher's output may change between releases).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The drift sentinel: the coordinator's own native worker, timing the reference kernel.
pub struct Sentinel {
    worker: Worker,
    /// The sentinel's own noise floor: its spread over back-to-back timings at the start.
    pub floor: Option<f64>,
}

impl Sentinel {
    /// Starts the sentinel, times the kernel once untimed (so the first round is no colder than
    /// the others), then `policy::SENTINEL_FLOOR_REPEATS` times back to back: their spread is the
    /// sentinel's noise floor, beyond which a transform's rounds count as drifted.
    pub fn start(command: &CommandLine) -> anyhow::Result<Sentinel> {
        let worker = Worker::start(command, policy::STDERR_TAIL_LINES)?;
        let mut s = Sentinel {
            worker,
            floor: None,
        };
        s.time();
        let times: Option<Vec<f64>> = (0..policy::SENTINEL_FLOOR_REPEATS)
            .map(|_| s.time())
            .collect();
        s.floor = times.map(|t| augbench_stats::drift_spread(&t));
        Ok(s)
    }

    /// The kernel's time this round (ms, the fastest of `policy::SENTINEL_LOOPS` timings), or
    /// `None` when the sentinel failed (the caller goes on without it).
    pub fn time(&mut self) -> Option<f64> {
        let loops = policy::SENTINEL_LOOPS;
        let req = Request::Sentinel(SentinelRequest { loops });
        let timeout = Duration::from_secs_f64(policy::SENTINEL_TIMEOUT_SEC);
        let r: TimeResponse = self.worker.call(&req, timeout).ok()?;
        r.ns.iter().min().map(|ns| *ns as f64 / 1e6)
    }

    pub fn shutdown(self) {
        self.worker.shutdown();
    }
}

/// Annotates one transform's results across libraries (keyed by library): each measured result
/// gets its paired speedups against every library timed in the same rounds, `alone` when there
/// was none, and the drift sentinel's record (recorded only: drift does not mark a row).
pub fn annotate(
    results: &BTreeMap<String, TransformResult>,
    drift_ms: &[f64],
    floor: Option<f64>,
) -> BTreeMap<String, TransformResult> {
    results
        .iter()
        .map(|(lib, r)| {
            let mut r = r.clone();
            if r.status == Some(Status::Ok) && r.rounds_id.is_some() {
                pair_with_others(lib, &mut r, results);
                pair_with_ceiling(&mut r);
                record_drift(&mut r, drift_ms, floor);
            }
            (lib.clone(), r)
        })
        .collect()
}

/// Runs per worker process, one group when the result has no split.
fn groups(r: &TransformResult) -> Vec<usize> {
    match r.process_runs.as_slice() {
        [] => vec![r.throughputs.len()],
        runs => runs.iter().map(|n| *n as usize).collect(),
    }
}

fn pair_with_others(lib: &str, r: &mut TransformResult, all: &BTreeMap<String, TransformResult>) {
    let same_rounds: Vec<(&String, &TransformResult)> = all
        .iter()
        .filter(|(other, o)| {
            other.as_str() != lib && o.status == Some(Status::Ok) && o.rounds_id == r.rounds_id
        })
        .collect();
    let mine = groups(r);
    r.paired = same_rounds
        .iter()
        .filter_map(|(other, o)| {
            // Processes both finished in full; a later process one of them lost is left out.
            let common: Vec<usize> = mine
                .iter()
                .zip(groups(o))
                .take_while(|(a, b)| **a == *b)
                .map(|(a, _)| *a)
                .collect();
            let n: usize = common.iter().sum();
            let (a, b) = (r.throughputs.get(..n)?, o.throughputs.get(..n)?);
            augbench_stats::paired(other, a, b, &common)
        })
        .collect();
    r.alone = same_rounds.is_empty().then_some(true);
}

/// A pipeline row against the decode ceiling's windows of its own rounds (`pipeline.ceiling`:
/// its share, paired round by round), `unstable` when it reads above the ceiling beyond the
/// paired interval; nothing when the rounds had no ceiling window beside every row's.
fn pair_with_ceiling(r: &mut TransformResult) {
    let groups = groups(r);
    let Some(p) = r.pipeline.as_mut() else {
        return;
    };
    p.ceiling = None;
    if p.ceiling_throughputs.len() != r.throughputs.len() {
        return;
    }
    let name = &augbench_catalog::recipe::Recipe::get().ceiling;
    p.ceiling = augbench_stats::paired(name, &r.throughputs, &p.ceiling_throughputs, &groups);
    let why = p
        .ceiling
        .as_ref()
        .and_then(augbench_stats::ceiling::above_paired_ceiling);
    let noted = |why: &str| {
        r.unstable_reason
            .as_deref()
            .is_some_and(|s| s.contains(why))
    };
    if let Some(why) = why.filter(|w| !noted(w)) {
        r.add_unstable(why);
    }
}

/// Records the drift sentinel's times over the transform's rounds. Drift does not make a row
/// `unstable`: in the estimator study the sentinel's spread did not predict which figures moved
/// between invocations (marked and unmarked rows moved alike); the run summary names the
/// transforms it saw drift during (`augbench_stats::drift_beyond_floor`).
fn record_drift(r: &mut TransformResult, drift_ms: &[f64], floor: Option<f64>) {
    if drift_ms.is_empty() {
        return;
    }
    r.drift = Some(Drift {
        spread: augbench_stats::drift_spread(drift_ms),
        median_ms: augbench_stats::median(drift_ms),
        times_ms: drift_ms.to_vec(),
        floor,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_every_item_once_and_last_about_the_policys_time() {
        let chunk = policy::AB_CHUNK_SEC;
        for (items, run_sec, k) in [
            (50, 40.0 * chunk, 40),
            (50, 100.0 * chunk, 50),
            (7, 0.3 * chunk, 1),
            (10, f64::NAN, 1),
            (0, 1.0, 1),
        ] {
            let c = run_chunks(items, run_sec);
            assert_eq!(c.len() as u64, k, "{items} items, {run_sec} s: {c:?}");
            let mut next = 0;
            for &(start, count) in &c {
                assert_eq!(start, next, "{c:?}");
                assert!(count >= 1 || items == 0, "{c:?}");
                next = start + count;
            }
            assert_eq!(next, items, "{c:?}");
        }
    }
    use augbench_stats::summarize;

    fn measured(throughputs: &[f64], rounds: &str) -> TransformResult {
        let s = summarize(throughputs);
        let mut r = TransformResult::measured(
            serde_json::Value::Null,
            &s,
            throughputs.to_vec(),
            vec![0.1; throughputs.len()],
        );
        r.rounds_id = Some(rounds.into());
        r
    }

    #[test]
    fn every_round_has_its_own_seeded_order() {
        assert_eq!(
            round_order(4, "Resize", 0, 0),
            round_order(4, "Resize", 0, 0)
        );
        let orders: std::collections::BTreeSet<Vec<usize>> =
            (0..20).map(|r| round_order(4, "Resize", 0, r)).collect();
        assert!(orders.len() > 5, "{orders:?}");
        let mut one = round_order(4, "Rotate", 1, 3);
        one.sort();
        assert_eq!(one, vec![0, 1, 2, 3]);
    }

    #[test]
    fn libraries_of_the_same_rounds_pair_both_ways() {
        let all: BTreeMap<String, TransformResult> = [
            ("a".to_string(), measured(&[200.0, 202.0, 198.0], "x")),
            ("b".to_string(), measured(&[100.0, 101.0, 99.0], "x")),
            ("c".to_string(), measured(&[10.0, 10.0, 10.0], "other-run")),
        ]
        .into();
        let out = annotate(&all, &[5.0, 5.1, 5.0], Some(0.01));
        let a = &out["a"].paired;
        assert_eq!(a.len(), 1, "c ran in other rounds: {a:?}");
        assert_eq!((a[0].partner.as_str(), a[0].ratio), ("b", 2.0));
        assert_eq!(out["b"].paired[0].ratio, 0.5);
        assert_eq!(out["c"].alone, Some(true));
        assert_eq!(out["a"].alone, None);
        assert!(out["a"].drift.as_ref().is_some_and(|d| d.spread < 0.05));
        assert_eq!(out["a"].drift.as_ref().map(|d| d.times_ms.len()), Some(3));
    }

    #[test]
    fn a_process_one_library_lost_is_left_out_of_the_pairing() {
        let mut a = measured(&[200.0, 202.0, 198.0, 150.0, 151.0, 149.0], "x");
        a.process_runs = vec![3, 3];
        let b = measured(&[100.0, 101.0, 99.0], "x");
        let all: BTreeMap<String, TransformResult> =
            [("a".to_string(), a), ("b".to_string(), b)].into();
        let out = annotate(&all, &[], None);
        let p = &out["a"].paired[0];
        assert_eq!((p.rounds, p.ratio), (3, 2.0), "the first process only");
        assert_eq!(out["b"].paired[0].rounds, 3);
    }

    #[test]
    fn a_drifting_sentinel_is_recorded_and_does_not_mark_the_row() {
        let all: BTreeMap<String, TransformResult> =
            [("a".to_string(), measured(&[100.0, 101.0, 99.0], "x"))].into();
        let drifting = [5.0, 6.5, 5.0, 7.0, 5.2];
        let out = annotate(&all, &drifting, Some(0.02));
        let d = out["a"].drift.clone().expect("drift recorded");
        assert!(!out["a"].unstable, "{:?}", out["a"].unstable_reason);
        assert_eq!((d.times_ms.len(), d.floor), (5, Some(0.02)));
        assert!(augbench_stats::drift_beyond_floor(d.spread, d.floor).is_some());
    }

    #[test]
    fn a_row_pairs_with_the_ceiling_windows_of_its_own_rounds() {
        let with_ceiling = |row: &[f64], ceiling: &[f64]| {
            let mut r = measured(row, "x");
            r.process_runs = vec![3, 3, 3];
            r.pipeline = Some(crate::pipeline::test_detail(row.len(), Vec::new(), ceiling));
            let all: BTreeMap<String, TransformResult> = [("a".to_string(), r)].into();
            annotate(&all, &[], None).remove("a").unwrap()
        };
        let ceiling = [
            700.0, 690.0, 710.0, 500.0, 505.0, 495.0, 800.0, 790.0, 810.0,
        ];
        let below: Vec<f64> = ceiling.iter().map(|c| c * 0.8).collect();
        let r = with_ceiling(&below, &ceiling);
        let share = r.pipeline.as_ref().and_then(|p| p.ceiling.clone()).unwrap();
        assert!(
            (share.ratio - 0.8).abs() < 1e-9 && share.rounds == 9,
            "{share:?}"
        );
        assert!(!r.unstable, "{:?}", r.unstable_reason);
        // Above the ceiling of the same rounds, consistently: a measurement to distrust.
        let above: Vec<f64> = ceiling.iter().map(|c| c * 1.1).collect();
        let r = with_ceiling(&above, &ceiling);
        let why = r.unstable_reason.clone().unwrap_or_default();
        assert!(
            r.unstable && why.contains("above its ceiling in the same rounds: 1.100×"),
            "{why}"
        );
        // Windows that do not line up with the row's (a companion that ended early): no share.
        let r = with_ceiling(&below, &ceiling[..5]);
        assert_eq!(r.pipeline.and_then(|p| p.ceiling), None);
    }

    #[test]
    fn unmeasured_results_are_left_alone() {
        let r = TransformResult::not_measured(
            Status::Unsupported,
            serde_json::Value::Null,
            "no".into(),
        );
        let all: BTreeMap<String, TransformResult> = [("a".to_string(), r.clone())].into();
        assert_eq!(annotate(&all, &[1.0, 2.0], None)["a"], r);
    }
}
