//! Native loader overhead (issue 12): the `DecodeOnly` row in the memory scope (shared crop +
//! normalize, no transform) through a real native worker's loader with W = 1 and 2 threads,
//! against a bare single-threaded loop doing the same crop + normalize into one batch buffer on
//! the same decoded items. Windows alternate (bare, W=1, W=2, bare, …) and the bench prints each
//! loader's rate as a ratio of the bare loop's in the same round (target ≥ 0.9 × W).
//! `cargo bench -p augbench-native --bench loader_overhead`; without `--bench`, one short round.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a development tool run by hand, not the product"
)]

use std::hint::black_box;
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::Context;
use augbench_catalog::recipe::Recipe;
use augbench_core::{Media, policy};
use augbench_native::loader::{Batch, Crop, Normalize, Pixels};
use augbench_protocol::client::Worker;
use augbench_protocol::protocol::{
    HelloResponse, LoadRequest, LoadResponse, LoaderSlot, PipelinePrepareRequest,
    PipelinePrepareResponse, PipelineRunRequest, PipelineRunResponse, PipelineStartRequest,
    PipelineStartResponse, Request, Stage,
};

/// Set on this bench binary to make it serve the worker protocol (the code behind `augbench
/// worker`).
const SELF_WORKER_ENV: &str = "AUGBENCH_BENCH_AS_WORKER";
const LIBRARY: &str = "image";
const ITEMS: u64 = 64;
const BATCH: u64 = 32;
const WORKERS: [u64; 2] = [1, 2];

fn main() -> anyhow::Result<()> {
    if let Ok(library) = std::env::var(SELF_WORKER_ENV) {
        let (stdin, stdout) = (std::io::stdin().lock(), std::io::stdout().lock());
        return augbench_native::serve(&library, stdin, stdout);
    }
    let bench = std::env::args().any(|a| a == "--bench");
    let (rounds, window) = if bench { (7, 1.0) } else { (1, 0.05) };
    let dir = tempfile::tempdir().context("creating a temp folder for the dataset")?;
    let ds = augbench_media::write_synthetic(
        &dir.path().join("synth"),
        policy::SYNTH_SEED,
        ITEMS,
        Media::Image,
        None,
    )?;
    let paths: Vec<String> = ds.items.iter().map(|p| p.display().to_string()).collect();
    let items = ds
        .items
        .iter()
        .map(|p| {
            Ok(image::open(p)
                .with_context(|| format!("decoding {}", p.display()))?
                .to_rgb8())
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let mut loaders = WORKERS
        .iter()
        .map(|&w| start_loader(&paths, w))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let mut ratios = vec![Vec::new(); WORKERS.len()];
    for round in 0..rounds {
        let bare = bare_rate(&items, window);
        for (i, w) in loaders.iter_mut().enumerate() {
            let rate = loader_rate(w, window)?;
            ratios[i].push(rate / bare);
            println!(
                "round {round}: bare {bare:.0} img/s, loader w={} {rate:.0} img/s",
                WORKERS[i]
            );
        }
    }
    for (w, r) in WORKERS.iter().zip(&ratios) {
        let s = augbench_stats::summarize(r);
        let (lo, hi) = r
            .iter()
            .fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
        println!(
            "loader w={w} / bare loop: median {:.2} (min {lo:.2}, max {hi:.2}; {} rounds), per worker {:.2}; target ≥ {:.1}",
            s.median,
            r.len(),
            s.median / *w as f64,
            0.9 * *w as f64
        );
    }
    Ok(())
}

/// A native worker holding the decoded items (memory scope) with a warm `DecodeOnly` loader.
fn start_loader(paths: &[String], workers: u64) -> anyhow::Result<Worker> {
    let mut cmd = Command::new(std::env::current_exe().context("locating the bench binary")?);
    cmd.env(SELF_WORKER_ENV, LIBRARY);
    let label = format!("{LIBRARY} worker (w={workers})");
    let timeout = Duration::from_secs_f64(policy::REQUEST_TIMEOUT_SEC);
    let mut w = Worker::spawn(cmd, &label, policy::STDERR_TAIL_LINES)?;
    let _: HelloResponse = w.call(&Request::Hello, timeout)?;
    let load = LoadRequest {
        media: "image".into(),
        paths: paths.to_vec(),
        channels: 3,
        clip_length: 0,
        device: "cpu".into(),
        pipeline: true,
        preload: Some(true),
        targets: None,
    };
    let _: LoadResponse = w.call(&Request::Load(load), timeout)?;
    let recipe = Recipe::get();
    let crop = Recipe::lookup(&recipe.crop).context("the recipe's crop is in the registry")?;
    let prepare = PipelinePrepareRequest {
        slot: LoaderSlot::Row,
        ceiling: true,
        transform: recipe.ceiling.clone(),
        params: serde_json::json!({}),
        crop: Some(Stage {
            name: crop.name.clone(),
            params: serde_json::to_value(&crop.params)?,
        }),
        mean: recipe.normalize.mean,
        std: recipe.normalize.std,
        split: false,
        seed: policy::PIPELINE_ORDER_SEED,
        preflight_items: 1,
    };
    let _: PipelinePrepareResponse = w.call(&Request::PipelinePrepare(prepare), timeout)?;
    let start = PipelineStartRequest {
        slot: LoaderSlot::Row,
        workers,
        batch_size: BATCH,
        prefetch: policy::PIPELINE_PREFETCH_FACTOR,
        warm_batches: 8,
        order: augbench_exec::pipeline::sample_order(ITEMS),
        seed: policy::PIPELINE_ORDER_SEED,
        size: Some([crop_size().1 as u64, crop_size().0 as u64]),
        frames: None,
    };
    let _: PipelineStartResponse = w.call(&Request::PipelineStart(start), timeout)?;
    Ok(w)
}

/// The recipe crop's (width, height), from its registry parameters.
fn crop_size() -> (usize, usize) {
    let recipe = Recipe::get();
    let params =
        Recipe::lookup(&recipe.crop).map(|s| serde_json::to_value(&s.params).unwrap_or_default());
    let dim = |key: &str| {
        params
            .as_ref()
            .and_then(|p| p.get(key)?.as_u64())
            .unwrap_or_default() as usize
    };
    (dim("width"), dim("height"))
}

/// One window of the worker's loader (after an untimed rewarm), in img/s.
fn loader_rate(w: &mut Worker, window: f64) -> anyhow::Result<f64> {
    let req = PipelineRunRequest {
        slot: LoaderSlot::Row,
        min_batches: 8,
        min_time: window,
        rewarm_batches: 8,
    };
    let timeout = Duration::from_secs_f64(policy::REQUEST_TIMEOUT_SEC);
    let r: PipelineRunResponse = w.call(&Request::PipelineRun(req), timeout)?;
    let last = *r.ns.last().context("a window without batches")?;
    Ok(r.items as f64 / (last as f64 / 1e9))
}

/// The same crop + normalize in this thread, into one reused batch buffer, in img/s.
fn bare_rate(items: &[image::RgbImage], window: f64) -> f64 {
    let recipe = Recipe::get();
    let norm = Normalize::new(recipe.normalize.mean, recipe.normalize.std);
    let (w, h) = crop_size();
    let mut crop = Crop::new(w, h, policy::PIPELINE_ORDER_SEED);
    let mut batch = Batch::new(BATCH as usize);
    let order = augbench_exec::pipeline::sample_order(ITEMS);
    let (mut done, mut k) = (0u64, 0usize);
    let t0 = Instant::now();
    while done < 8 * BATCH || t0.elapsed().as_secs_f64() < window {
        for slot in 0..BATCH as usize {
            let img = &items[order[k % order.len()] as usize];
            k += 1;
            let px = Pixels {
                width: img.width() as usize,
                height: img.height() as usize,
                channels: 3,
                data: img.as_raw(),
            };
            let cropped = crop.apply(px).expect("synthetic items exceed the crop");
            batch.put(slot, cropped, &norm).expect("one size per batch");
        }
        black_box(&batch.data);
        done += BATCH;
    }
    done as f64 / t0.elapsed().as_secs_f64()
}
