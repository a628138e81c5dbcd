//! The seeded bootstraps' cost on the default schedule (3 worker processes × 5 runs): a row's
//! `summarize_grouped` (CI, rerun interval and figure, 2000 resamples each) and a pair's
//! `paired` (log-scale intervals and the interval over processes), plus the figure alone and
//! the rule's `precision::half_widths` over 6 processes of 10 rounds. The simulators in
//! augbench-report and augbench-core spend their time here.
//! `cargo bench -p augbench-stats --bench bootstrap`; without `--bench`, one short pass each.

use std::hint::black_box;

use augbench_stats::{figure, paired, precision, summarize_grouped};
use criterion::{Criterion, criterion_group, criterion_main};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// `processes` × `runs` throughputs near `level`, each process at its own level, seeded.
fn runs(processes: usize, runs: usize, level: f64, seed: u64) -> (Vec<f64>, Vec<usize>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut xs = Vec::with_capacity(processes * runs);
    for _ in 0..processes {
        let own = level * rng.random_range(0.95..1.05);
        xs.extend((0..runs).map(|_| own * rng.random_range(0.97..1.03)));
    }
    (xs, vec![runs; processes])
}

fn bench(c: &mut Criterion) {
    let (a, groups) = runs(3, 5, 1000.0, 1);
    let (b, _) = runs(3, 5, 800.0, 2);
    c.bench_function("summarize_grouped 3x5", |x| {
        x.iter(|| summarize_grouped(black_box(&a), black_box(&groups)))
    });
    c.bench_function("paired 3x5", |x| {
        x.iter(|| paired("b", black_box(&a), black_box(&b), black_box(&groups)))
    });
    c.bench_function("figure 3x5", |x| {
        x.iter(|| figure(black_box(&a), black_box(&groups)))
    });
    let (a6, groups6) = runs(6, 10, 1000.0, 3);
    let (b6, _) = runs(6, 10, 800.0, 4);
    c.bench_function("half_widths 6x10", |x| {
        x.iter(|| precision::half_widths(&[black_box(&a6), black_box(&b6)], &groups6))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
