//! Summaries: the mean per group and metric, and the scene bootstrap interval — checked by
//! properties (seeded determinism, bounds, degenerate single scene) and an insta snapshot.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failure is the test failing"
)]

use augbench_eval::render::{TextFormat, render_summary};
use augbench_eval::summary::{SummaryOptions, summarize};
use augbench_eval::{CardStamp, EvalLog, PreAggregated};
use proptest::prelude::*;

fn cell(model: &str, scene: &str, phase: &str, absrel: f64) -> PreAggregated {
    PreAggregated {
        model_name: model.into(),
        task: "monocular_depth".into(),
        scene_id: scene.into(),
        phase: phase.into(),
        n_samples: 1,
        difficulty: None,
        latency_ms_mean: None,
        git_sha: None,
        timestamp_utc: Some("2026-01-01T00:00:00+00:00".into()),
        frame_budget: 0,
        metrics: vec![("absrel".into(), Some(absrel))],
    }
}

fn log_of(values: &[(usize, f64)]) -> EvalLog {
    let mut log = EvalLog::default();
    for (scene, v) in values {
        log.push_pre_aggregated(
            cell("m", &format!("s{scene}"), "clu", *v),
            &CardStamp::default(),
        );
    }
    log
}

fn opts(by: &[&str], bootstrap: usize, seed: u64) -> SummaryOptions {
    SummaryOptions {
        by: by.iter().map(|s| s.to_string()).collect(),
        bootstrap,
        seed,
        ..Default::default()
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn interval_is_ordered_bounded_by_scene_means_and_seeded(
        values in proptest::collection::vec((0..6usize, -100.0..100.0f64), 1..40),
        seed in 0..1000u64,
    ) {
        let table = log_of(&values).to_table();
        let a = summarize(&table, &opts(&["model"], 200, seed)).unwrap();
        let b = summarize(&table, &opts(&["model"], 200, seed)).unwrap();
        prop_assert_eq!(&a, &b);
        let row = &a[0];
        let (lo, hi) = (row.ci_low.unwrap(), row.ci_high.unwrap());
        // Scene means bound every resampled mean (cells weight scenes by their count).
        let mut scene_means = std::collections::HashMap::<usize, (f64, f64)>::new();
        for (s, v) in &values { let e = scene_means.entry(*s).or_default(); e.0 += v; e.1 += 1.0; }
        let means: Vec<f64> = scene_means.values().map(|(s, n)| s / n).collect();
        let (min, max) = means.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &m| (a.min(m), b.max(m)));
        prop_assert!(lo <= hi);
        prop_assert!(lo >= min - 1e-9 && hi <= max + 1e-9, "{lo} {hi} outside [{min}, {max}]");
        let mean = values.iter().map(|v| v.1).sum::<f64>() / values.len() as f64;
        prop_assert!((row.mean.unwrap() - mean).abs() < 1e-9);
        prop_assert_eq!(row.n_cells, values.len());
        prop_assert_eq!(row.n_units, scene_means.len());
    }

    #[test]
    fn one_scene_gives_a_degenerate_interval(v in -10.0..10.0f64, k in 1..5usize) {
        let table = log_of(&vec![(0, v); k]).to_table();
        let row = &summarize(&table, &opts(&[], 100, 0)).unwrap()[0];
        prop_assert!((row.ci_low.unwrap() - v).abs() < 1e-9 && (row.ci_high.unwrap() - v).abs() < 1e-9);
    }
}

#[test]
fn summary_by_model_and_phase_snapshot() {
    let mut log = EvalLog::default();
    let stamp = CardStamp::default();
    for (i, v) in [0.1, 0.2, 0.4, 0.3].iter().enumerate() {
        log.push_pre_aggregated(cell("A", &format!("s{i}"), "clu", *v), &stamp);
        log.push_pre_aggregated(cell("A", &format!("s{i}"), "int", v * 2.0), &stamp);
        log.push_pre_aggregated(cell("B", &format!("s{i}"), "clu", v + 1.0), &stamp);
    }
    log.push_pre_aggregated(cell("B", "s9", "clu", f64::NAN), &stamp);
    let rows = summarize(&log.to_table(), &opts(&["model", "phase"], 500, 0)).unwrap();
    insta::assert_snapshot!(render_summary(&rows, TextFormat::Table));
}

#[test]
fn unknown_group_column_and_bad_ci_are_usage_errors() {
    let table = log_of(&[(0, 1.0)]).to_table();
    let e = summarize(&table, &opts(&["nope"], 10, 0)).unwrap_err();
    assert!(e.to_string().contains("'nope'") && e.hint().contains("model_name"));
    let e = summarize(
        &table,
        &SummaryOptions {
            ci: 1.5,
            ..Default::default()
        },
    )
    .unwrap_err();
    assert!(e.to_string().contains("--ci"));
    let empty = EvalLog::default().to_table();
    assert!(
        summarize(&empty, &SummaryOptions::default())
            .unwrap_err()
            .to_string()
            .contains("0 rows")
    );
}
