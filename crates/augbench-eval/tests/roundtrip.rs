//! Property tests: write → read is the identity for evaluation cells, in Parquet (NaN and ±inf
//! kept) and in JSON Lines (non-finite floats come back as null, as documented).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failure is the test failing"
)]

use augbench_cells::Format;
use augbench_eval::{EvalCell, EvalLog};
use proptest::prelude::*;

fn float() -> impl Strategy<Value = f64> {
    prop_oneof![
        6 => -1e6..1e6f64,
        1 => Just(f64::NAN),
        1 => Just(f64::INFINITY),
        1 => Just(f64::NEG_INFINITY),
        1 => Just(0.1 + 0.2),
    ]
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof!["[a-z_0-9]{1,12}", "\\PC{0,40}"]
}

fn cell(n_metrics: usize) -> impl Strategy<Value = EvalCell> {
    (
        (text(), text(), text(), text(), proptest::option::of(text())),
        (0..1000i64, 0..200i64, proptest::option::of(float())),
        (
            proptest::option::of(text()),
            proptest::option::of(float()),
            proptest::option::of(text()),
            proptest::option::of(1..64i64),
        ),
        (text(), proptest::option::of(text()), text()),
        proptest::collection::vec(proptest::option::of(float()), n_metrics),
    )
        .prop_map(
            |((m, t, s, p, d), (n, fb, lat), (gn, gm, pr, bs), (tv, sha, ts), metrics)| EvalCell {
                model_name: m,
                task: t,
                scene_id: s,
                phase: p,
                difficulty: d,
                n_samples: n,
                frame_budget: fb,
                latency_ms_mean: lat,
                gpu_name: gn,
                gpu_memory_gb: gm,
                precision: pr,
                batch_size: bs,
                toolkit_version: tv,
                git_sha: sha,
                timestamp_utc: ts,
                metrics,
            },
        )
}

fn log() -> impl Strategy<Value = EvalLog> {
    (0..4usize).prop_flat_map(|m| {
        (
            proptest::collection::vec("[a-z]{1,6}", m..=m).prop_filter("unique", |v| {
                let mut u = v.clone();
                u.sort();
                u.dedup();
                u.len() == v.len()
            }),
            proptest::collection::vec(cell(m), 0..20),
        )
            .prop_map(|(metric_names, cells)| EvalLog {
                metric_names,
                cells,
            })
    })
}

/// Float equality where NaN equals NaN.
fn same(a: Option<f64>, b: Option<f64>) -> bool {
    match (a, b) {
        (Some(x), Some(y)) => x == y || (x.is_nan() && y.is_nan()),
        (x, y) => x == y,
    }
}

fn assert_same_log(got: &EvalLog, want: &EvalLog, jsonl: bool) {
    let finite = |v: Option<f64>| {
        if jsonl {
            v.filter(|x| x.is_finite())
        } else {
            v
        }
    };
    assert_eq!(got.metric_names, want.metric_names);
    assert_eq!(got.cells.len(), want.cells.len());
    for (g, w) in got.cells.iter().zip(&want.cells) {
        let strip = |c: &EvalCell| EvalCell {
            latency_ms_mean: None,
            gpu_memory_gb: None,
            metrics: vec![],
            ..c.clone()
        };
        assert_eq!(strip(g), strip(w));
        assert!(same(g.latency_ms_mean, finite(w.latency_ms_mean)));
        assert!(same(g.gpu_memory_gb, finite(w.gpu_memory_gb)));
        for (x, y) in g.metrics.iter().zip(&w.metrics) {
            assert!(same(*x, finite(*y)), "{x:?} vs {y:?}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn eval_parquet_round_trip_is_identity(log in log()) {
        let dir = tempfile::tempdir().unwrap();
        let res = log.write(&dir.path().join("c.parquet"), Format::Auto).unwrap();
        assert_same_log(&EvalLog::read(&res.path).unwrap(), &log, false);
    }

    #[test]
    fn eval_jsonl_round_trip_is_identity_up_to_nonfinite(log in log()) {
        let dir = tempfile::tempdir().unwrap();
        let res = log.write(&dir.path().join("c.jsonl"), Format::Auto).unwrap();
        let back = EvalLog::read(&res.path).unwrap();
        if log.cells.is_empty() {
            // An empty JSON Lines file holds no columns, so metric names cannot survive it.
            prop_assert_eq!(back, EvalLog::default());
        } else {
            assert_same_log(&back, &log, true);
        }
    }
}
