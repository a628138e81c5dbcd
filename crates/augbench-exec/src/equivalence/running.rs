//! The running side of `augbench check equivalence`: writes the check's input images (lossless
//! PNG, one with odd width and height, so every decoder agrees), starts each library's worker,
//! and asks it to `emit` each transform's outputs (deterministic ones once, random ones under two
//! seeds), then hands them to `verdict`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context;
use augbench_core::Registry;
use augbench_core::policy;
use indicatif::MultiProgress;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use augbench_core::config::ThreadPolicy;

use crate::worker::{self, Role, Target};
use augbench_host::child::CommandLine;
use augbench_protocol::client::Worker;
use augbench_protocol::protocol::{
    EmitRequest, EmitResponse, FailureKind, LoadRequest, LoadResponse, PrepareRequest,
    PrepareResponse, Request, TargetsRequest,
};

use super::produced::{Output, Produced};
use super::verdict::{Check, is_deterministic, judge};

/// Input image sizes (width, height): ImageNet-like, one with odd sides; all at most the
/// registry's 512-pixel Resize, so resampling rows upsample (no antialiasing question).
pub const INPUT_SIZES: [(u32, u32); 3] = [(500, 375), (333, 251), (448, 320)];
/// Seed of the input images (and of the targets check's shapes).
pub(super) const INPUT_SEED: u64 = 20_261_130;
/// The two seeds a random transform is emitted under.
pub const SEEDS: [u64; 2] = [1, 2];

/// Writes the inputs into `dir`; returns their paths.
pub fn write_inputs(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    input_images()
        .iter()
        .enumerate()
        .map(|(i, img)| save_input(dir, i, img))
        .collect()
}

/// The input images, one per [`INPUT_SIZES`] entry (the targets check paints shapes over them).
pub(super) fn input_images() -> Vec<image::RgbImage> {
    let mut rng = ChaCha8Rng::seed_from_u64(INPUT_SEED);
    INPUT_SIZES
        .iter()
        .map(|&(w, h)| augbench_media::synth::render(&mut rng, w, h))
        .collect()
}

/// Saves input `i` as a lossless PNG named by its index and size; returns its path.
pub(super) fn save_input(dir: &Path, i: usize, img: &image::RgbImage) -> anyhow::Result<PathBuf> {
    let path = dir.join(format!("input_{i}_{}x{}.png", img.width(), img.height()));
    img.save(&path)
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(path)
}

/// The whole check for these libraries and transforms, in a scratch folder: writes the inputs,
/// collects every output and judges them. `refresh`: re-resolve the Python environments' locks
/// (as the run does, so the check and the timing use the same environment).
pub fn run_check(
    libraries: &[String],
    transforms: &[String],
    refresh: bool,
    mp: &MultiProgress,
) -> anyhow::Result<Check> {
    let scratch = tempfile::tempdir().context("creating a scratch folder for the check")?;
    let inputs = write_inputs(scratch.path())?;
    let out = scratch.path().join("out");
    let produced = collect(libraries, transforms, &inputs, &out, refresh, mp)?;
    Ok(judge(transforms, &produced, &INPUT_SIZES))
}

/// Every library's outputs for every transform: `library → transform → Produced`.
pub fn collect(
    libraries: &[String],
    transforms: &[String],
    inputs: &[PathBuf],
    scratch: &Path,
    refresh: bool,
    mp: &MultiProgress,
) -> anyhow::Result<BTreeMap<String, BTreeMap<String, Produced>>> {
    per_library(
        (libraries, transforms),
        scratch,
        mp,
        "Equivalence",
        &|library| start(library, inputs, None, refresh, mp),
        &|worker, t, dir| Ok(emit_all(worker, t, dir)),
        Produced::Failed,
    )
}

/// Every library's output of every transform (`library → transform → T`): each library's worker
/// started once (`start_worker`), then `emit(worker, transform, <scratch>/<library>)` per
/// transform under a bar titled `<title> (<library>)`; a worker that does not start gives each
/// of its transforms `failed(why)`.
pub(super) fn per_library<T>(
    (libraries, transforms): (&[String], &[String]),
    scratch: &Path,
    mp: &MultiProgress,
    title: &str,
    start_worker: &dyn Fn(&str) -> anyhow::Result<Worker>,
    emit: &dyn Fn(&mut Worker, &str, &Path) -> anyhow::Result<T>,
    failed: fn(String) -> T,
) -> anyhow::Result<BTreeMap<String, BTreeMap<String, T>>> {
    let mut all = BTreeMap::new();
    for library in libraries {
        let label = format!("{title} ({library})");
        let bar = crate::progress::steps_bar(mp, label, transforms.len() as u64);
        let produced = match start_worker(library) {
            Ok(mut worker) => {
                let dir = scratch.join(library);
                std::fs::create_dir_all(&dir)
                    .with_context(|| format!("creating {}", dir.display()))?;
                let mut map = BTreeMap::new();
                for t in transforms {
                    map.insert(t.clone(), emit(&mut worker, t, &dir)?);
                    bar.inc(1);
                }
                worker.shutdown();
                map
            }
            Err(e) => {
                let why = format!("{e:#}");
                transforms
                    .iter()
                    .map(|t| (t.clone(), failed(why.clone())))
                    .collect()
            }
        };
        bar.finish_and_clear();
        all.insert(library.clone(), produced);
    }
    Ok(all)
}

/// Starts `library`'s worker and loads the inputs on the CPU (with `targets`, their targets too).
pub(super) fn start(
    library: &str,
    inputs: &[PathBuf],
    targets: Option<TargetsRequest>,
    refresh: bool,
    mp: &MultiProgress,
) -> anyhow::Result<Worker> {
    let cmd = command(library, refresh, mp)?;
    let mut worker = Worker::start(&cmd, policy::STDERR_TAIL_LINES)?;
    let timeout = timeout();
    worker
        .request(&Request::Hello, timeout)
        .with_context(|| format!("starting {}", cmd.label))?;
    let load = Request::Load(LoadRequest {
        media: "image".into(),
        paths: inputs.iter().map(|p| p.display().to_string()).collect(),
        channels: policy::DEFAULT_CHANNELS,
        clip_length: policy::DEFAULT_CLIP_LENGTH,
        device: "cpu".into(),
        pipeline: false,
        preload: None,
        targets,
    });
    let loaded: LoadResponse = worker
        .call(&load, timeout)
        .with_context(|| format!("{} could not load the check's images", cmd.label))?;
    anyhow::ensure!(
        loaded.count == inputs.len() as u64,
        "{} loaded {} of the {} check images",
        cmd.label,
        loaded.count,
        inputs.len()
    );
    Ok(worker)
}

/// The library's worker, one thread, without a spec file (the check is outside any timing).
fn command(library: &str, refresh: bool, mp: &MultiProgress) -> anyhow::Result<CommandLine> {
    let role = Role::Transforms { spec: None };
    let target = Target::of_library(library)?;
    worker::command(target, role, ThreadPolicy::Single, refresh, mp)
}

pub(super) fn timeout() -> std::time::Duration {
    std::time::Duration::from_secs_f64(policy::REQUEST_TIMEOUT_SEC)
}

/// One transform: once for a deterministic one, under each of [`SEEDS`] for a random one.
fn emit_all(worker: &mut Worker, transform: &str, dir: &Path) -> Produced {
    let Some(spec) = Registry::get().spec(transform) else {
        return Produced::Failed(format!("`{transform}` is not in the transform registry"));
    };
    let params = serde_json::to_value(&spec.params).unwrap_or_default();
    let seeds: &[u64] = if is_deterministic(transform) {
        &SEEDS[..1]
    } else {
        &SEEDS
    };
    let mut runs = Vec::new();
    for &seed in seeds {
        match emit_once(worker, transform, &params, seed, dir) {
            Ok(outputs) => runs.push(outputs),
            Err(p) => return p,
        }
    }
    Produced::Outputs(runs)
}

fn emit_once(
    worker: &mut Worker,
    transform: &str,
    params: &serde_json::Value,
    seed: u64,
    dir: &Path,
) -> Result<Vec<Output>, Produced> {
    let emitted = prepare_and_emit(worker, transform, params, seed, dir)?;
    emitted.outputs.iter().map(read_output).collect()
}

/// Prepares `transform` with `params` under `seed` and emits every loaded item into `dir`.
pub(super) fn prepare_and_emit(
    worker: &mut Worker,
    transform: &str,
    params: &serde_json::Value,
    seed: u64,
    dir: &Path,
) -> Result<EmitResponse, Produced> {
    let prepare = Request::Prepare(PrepareRequest {
        transform: transform.into(),
        params: params.clone(),
        device: "cpu".into(),
        batch: None,
        seed: Some(seed),
    });
    let _: PrepareResponse = worker.call(&prepare, timeout()).map_err(failed)?;
    let emit = Request::Emit(EmitRequest {
        dir: dir.display().to_string(),
        seed: Some(seed),
    });
    worker.call(&emit, timeout()).map_err(failed)
}

fn read_output(o: &augbench_protocol::protocol::EmitOutput) -> Result<Output, Produced> {
    let dims: Vec<usize> = o.shape.iter().map(|&n| n as usize).collect();
    let shape: [usize; 3] = dims
        .try_into()
        .map_err(|_| Produced::Failed(format!("output shape {:?} is not H×W×C", o.shape)))?;
    let data = std::fs::read(&o.file)
        .map_err(|e| Produced::Failed(format!("cannot read {}: {e}", o.file)))?;
    Ok(Output { shape, data })
}

pub(super) fn failed(e: augbench_protocol::client::WorkerError) -> Produced {
    match &e {
        augbench_protocol::client::WorkerError::Failed { failure, .. }
            if failure.kind == FailureKind::Unsupported =>
        {
            Produced::Unsupported(failure.error.clone())
        }
        _ => Produced::Failed(e.to_string()),
    }
}
