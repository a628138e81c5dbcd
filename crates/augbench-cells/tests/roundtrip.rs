//! Property test: write → read is the identity for benchmark cells in Parquet, and appending a
//! repeated key replaces the older row. Evaluation cells' round trips: augbench-eval's `roundtrip`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failure is the test failing"
)]

use augbench_cells::bench::{BenchCell, BenchMetrics, append_bench_cells, read_bench_cells};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn bench_parquet_round_trip_is_identity(cells in proptest::collection::vec(bench_cell(), 0..10)) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cells.parquet");
        let report = append_bench_cells(&path, &cells).unwrap();
        let back = read_bench_cells(&path).unwrap();
        prop_assert_eq!(report.rows_after, back.len());
        // Rows with a repeated key collapse to the newest one, in place of the first.
        let mut want: Vec<BenchCell> = Vec::new();
        for c in &cells {
            match want.iter().position(|w| w.key() == c.key()) {
                Some(i) => want[i] = c.clone(),
                None => want.push(c.clone()),
            }
        }
        prop_assert_eq!(format!("{back:?}"), format!("{want:?}"));
    }
}

fn bench_cell() -> impl Strategy<Value = BenchCell> {
    (
        (
            "[ab]",
            "[xy]",
            1..3u64,
            proptest::collection::vec(0.0..1e5f64, 0..5),
        ),
        proptest::option::of(0.0..1e5f64),
        "[a-z]{0,3}",
        (
            proptest::option::of(any::<bool>()),
            proptest::option::of(0.0..=1.0f64),
            proptest::option::of(1..64u64),
        ),
    )
        .prop_map(
            |((lib, tr, ch, th), median, sha, (contiguous, force_share, clip_length))| BenchCell {
                run_id: "r1".into(),
                library: lib,
                library_version: "1.0".into(),
                transform: tr,
                scenario: "image-rgb".into(),
                mode: "micro".into(),
                media: "image".into(),
                device: "cpu".into(),
                channels: ch,
                items: 100,
                runs: 5,
                workers: 0,
                batch_size: 1,
                scope: "transform".into(),
                thread_policy: "single".into(),
                status: "ok".into(),
                cpu_name: "cpu".into(),
                cpu_cores: 2,
                ram_gb: 24.0,
                gpu_name: String::new(),
                gpu_memory_gb: None,
                os: "linux".into(),
                rustc_version: "rustc 1.95.0".into(),
                toolkit_version: "0.1.0".into(),
                git_sha: sha,
                timestamp_utc: "2026-01-01T00:00:00+00:00".into(),
                throughputs: th,
                metrics: BenchMetrics {
                    median,
                    ..Default::default()
                },
                card: Default::default(),
                form: augbench_cells::OutputForm {
                    contiguous,
                    force_share,
                },
                clip_length,
                figure: augbench_cells::CellFigure {
                    estimator: "max".into(),
                    value: median.map(|m| m * 1.1),
                    low: median,
                    high: median.map(|m| m * 1.2),
                },
            },
        )
}
