//! Clip cache (issue 13): the first load of N synthetic videos (decode every sampled frame in the
//! video-decode environment and write the clip folders) against a cached load of the same key
//! (manifest check only). Rounds alternate cold, cached, cold, cached … in fresh temp caches, and
//! the bench prints each round's pair and the median ratio. Needs the `video_decode` environment
//! (`augbench env build video_decode`). `cargo bench -p augbench-exec --bench clip_cache`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a development tool run by hand, not the product"
)]

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use augbench_core::{Media, policy};
use augbench_exec::worker::clip_decoder;
use augbench_media::{Decoder, clip_cache};

/// Synthetic videos per round (`AUGBENCH_BENCH_CLIPS` overrides).
const CLIPS: u64 = 50;
const CLIPS_ENV: &str = "AUGBENCH_BENCH_CLIPS";

fn main() -> anyhow::Result<()> {
    let bench = std::env::args().any(|a| a == "--bench");
    let rounds = if bench { 3 } else { 1 };
    let count = clip_count()?;
    let dir = tempfile::tempdir().context("creating a temp folder for the videos")?;
    let ds = augbench_media::write_synthetic(
        &dir.path().join("videos"),
        policy::SYNTH_SEED,
        count,
        Media::Video,
        None,
    )?;
    let decoder = clip_decoder(false, None)?;
    let length = policy::DEFAULT_CLIP_LENGTH;
    let (mut cold, mut warm) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        let parent = dir.path().join(format!("cache{round}"));
        let (first, reused_first) = timed(&parent, &ds.items, length, &decoder)?;
        let (again, reused_again) = timed(&parent, &ds.items, length, &decoder)?;
        anyhow::ensure!(
            !reused_first && reused_again,
            "round {round}: the first load must decode and the second reuse the cache"
        );
        println!(
            "round {round}: {count} clips × {length} frames: first load {first:.2} s, cached load {:.1} ms ({:.0}× faster)",
            again * 1e3,
            first / again
        );
        cold.push(first);
        warm.push(again);
    }
    let ratios: Vec<f64> = cold.iter().zip(&warm).map(|(c, w)| c / w).collect();
    println!(
        "median over {rounds} rounds: first load {:.2} s ({:.1} clips/s), cached load {:.1} ms, ratio {:.0}× (min {:.0}×, max {:.0}×)",
        augbench_stats::median(&cold),
        count as f64 / augbench_stats::median(&cold),
        augbench_stats::median(&warm) * 1e3,
        augbench_stats::median(&ratios),
        ratios.iter().copied().fold(f64::MAX, f64::min),
        ratios.iter().copied().fold(f64::MIN, f64::max),
    );
    Ok(())
}

fn clip_count() -> anyhow::Result<u64> {
    match std::env::var(CLIPS_ENV) {
        Ok(v) => v
            .parse()
            .with_context(|| format!("{CLIPS_ENV}={v:?} is not a whole number")),
        Err(_) => Ok(CLIPS),
    }
}

/// Seconds for one `build_in` under `parent`, and whether it reused a cache.
fn timed(
    parent: &Path,
    items: &[PathBuf],
    length: u64,
    decoder: &Decoder,
) -> anyhow::Result<(f64, bool)> {
    let started = Instant::now();
    let cache = clip_cache::build_in(parent, items, length, Some(decoder), None)?;
    Ok((started.elapsed().as_secs_f64(), cache.reused))
}
