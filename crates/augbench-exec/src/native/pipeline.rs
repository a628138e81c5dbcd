//! Pipeline mode in the native worker: the loaded media (decoded items in the memory scope,
//! paths in the decode scopes), the recipe for one crate (shared crop → the crate's transform →
//! shared normalize straight into the batch), its in-process preflight, and the loader's start,
//! steady-state windows and stop. `crate::loader` owns the threads and the batch buffers.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

use serde_json::{Value, json};

use super::load::{self, Decoded};
use super::params::Params;
use super::session::{Adapter, Fault, Op, mapped_fault, trigger};
use super::{Library, failure, fir, image_rs, imageproc, kornia};
use crate::loader::{Batch, Crop, Fill, Loader, MakeFill, Normalize, Shape, batch};
use crate::protocol::{
    Failure, FailureKind, LoadRequest, LoadResponse, PipelinePrepareRequest,
    PipelinePrepareResponse, PipelineRunRequest, PipelineRunResponse, PipelineStartRequest,
    PipelineStartResponse, Skipped,
};

/// The crop the shared implementation draws (the recipe's `crop`).
const SHARED_CROP: &str = "RandomCrop224";

/// The pipeline side of a loaded session, independent of the crate.
pub(crate) trait Pipeline {
    fn prepare(&mut self, req: &PipelinePrepareRequest)
    -> Result<PipelinePrepareResponse, Failure>;
    fn start(&mut self, req: &PipelineStartRequest) -> Result<PipelineStartResponse, Failure>;
    fn run(&mut self, req: PipelineRunRequest) -> Result<PipelineRunResponse, Failure>;
    fn stop(&mut self);
}

/// Answers `load` with `pipeline: true`: RGB only; `preload: false` keeps the paths.
pub(crate) fn load(
    lib: Library,
    req: &LoadRequest,
    test_faults: bool,
) -> Result<(Box<dyn Pipeline>, LoadResponse), Failure> {
    if req.channels != 3 {
        let msg = format!(
            "the pipeline recipe is RGB; {} channels requested",
            req.channels
        );
        return Err(failure(FailureKind::Unsupported, msg));
    }
    let preload = req.preload != Some(false);
    match lib {
        Library::Image => load_as::<image_rs::ImageRs>(req, preload, test_faults),
        Library::Imageproc => load_as::<imageproc::Imageproc>(req, preload, test_faults),
        Library::FastImageResize => load_as::<fir::Fir>(req, preload, test_faults),
        Library::KorniaRs => load_as::<kornia::Kornia<3>>(req, preload, test_faults),
    }
}

enum Source<A: Adapter> {
    Paths(Vec<String>),
    Items(Vec<A::Item>),
}

fn load_as<A: Adapter>(
    req: &LoadRequest,
    preload: bool,
    test_faults: bool,
) -> Result<(Box<dyn Pipeline>, LoadResponse), Failure> {
    let t0 = Instant::now();
    let (source, skipped, converted, shape) = if preload {
        let Decoded {
            items,
            skipped,
            converted,
        } = load::decode_all(&req.paths);
        let items = items
            .into_iter()
            .map(|d| A::convert(d.width, d.height, d.data))
            .collect::<Result<Vec<_>, String>>()
            .map_err(|e| failure(FailureKind::Exception, format!("{}: {e}", A::LIBRARY)))?;
        let shape = items
            .first()
            .map(|i| A::shape(i).to_vec())
            .unwrap_or_default();
        (Source::<A>::Items(items), skipped, converted, shape)
    } else {
        let (found, missing): (Vec<_>, Vec<_>) = req
            .paths
            .iter()
            .cloned()
            .partition(|p| std::path::Path::new(p).is_file());
        let skipped = missing
            .into_iter()
            .map(|path| Skipped {
                path,
                reason: "no such file".into(),
            })
            .collect();
        (Source::Paths(found), skipped, 0, Vec::new())
    };
    let count = match &source {
        Source::Items(v) => v.len(),
        Source::Paths(v) => v.len(),
    };
    if count == 0 {
        let first = skipped
            .first()
            .map(|s: &Skipped| format!(" (first: {}: {})", s.path, s.reason));
        let msg = format!(
            "none of the {} files could be read{}",
            req.paths.len(),
            first.unwrap_or_default()
        );
        return Err(failure(FailureKind::Exception, msg));
    }
    let response = LoadResponse {
        count: count as u64,
        decode_seconds: t0.elapsed().as_secs_f64(),
        shape,
        dtype: if preload {
            super::session::DTYPE
        } else {
            "path"
        }
        .into(),
        layout: super::session::LAYOUT.into(),
        skipped,
        converted,
    };
    let pipe = Pipe::<A> {
        source: Arc::new(source),
        stages: None,
        loader: None,
        batch_size: 0,
        test_faults,
    };
    Ok((Box::new(pipe), response))
}

/// What every loader thread builds its recipe from.
struct Stages {
    transform: String,
    params: Value,
    /// The ceiling row: no transform.
    ceiling: bool,
    /// The shared crop's size, when the transform is not itself the crop.
    crop: Option<(usize, usize)>,
    norm: Normalize,
    seed: u64,
    /// A debug fault that fires inside the loader instead of the transform.
    fault: Option<Fault>,
}

struct Pipe<A: Adapter> {
    source: Arc<Source<A>>,
    stages: Option<Arc<Stages>>,
    loader: Option<Loader>,
    batch_size: usize,
    /// `AUGBENCH_TEST_FAULTS` may map this library's transform to a fault inside the loader.
    test_faults: bool,
}

impl<A: Adapter> Pipeline for Pipe<A> {
    fn prepare(
        &mut self,
        req: &PipelinePrepareRequest,
    ) -> Result<PipelinePrepareResponse, Failure> {
        self.stop();
        self.stages = None;
        if req.split {
            let msg = format!("{} runs on the CPU only: no GPU split", A::LIBRARY);
            return Err(failure(FailureKind::Unsupported, msg));
        }
        let mut stages = stages(req)?;
        stages.fault = mapped_fault(A::LIBRARY, &req.transform)
            .filter(|_| self.test_faults)
            .map(|(f, _)| f);
        let stages = Arc::new(stages);
        if !stages.ceiling {
            // Built once here so that `unsupported` answers before any loader starts.
            let _probe = A::build(
                &stages.transform,
                &Params::new(&stages.transform, &stages.params),
            )?;
        }
        let per_item = preflight::<A>(&self.source, &stages, req.preflight_items)?;
        self.stages = Some(stages);
        Ok(PipelinePrepareResponse {
            transform: req.transform.clone(),
            decoder: super::versions::decoder(),
            split: false,
            transform_device: "cpu".into(),
            preflight_sec_per_item: per_item,
        })
    }

    fn start(&mut self, req: &PipelineStartRequest) -> Result<PipelineStartResponse, Failure> {
        self.stop();
        let stages = self
            .stages
            .clone()
            .ok_or_else(|| bad("pipeline_start before pipeline_prepare"))?;
        let shape = Shape {
            workers: req.workers as usize,
            batch_size: req.batch_size as usize,
            prefetch: req.prefetch as usize,
            order: Arc::new(req.order.clone()),
        };
        let t0 = Instant::now();
        let mut loader =
            Loader::start(shape, make_fill(&self.source, &stages)).map_err(exception)?;
        let first = loader.next_batch().map_err(exception)?;
        let time_to_first_batch = t0.elapsed().as_secs_f64();
        let seen = batch::check(&first, req.size).map_err(|e| failure(FailureKind::Contract, e))?;
        loader.recycle(first);
        take(&mut loader, req.warm_batches).map_err(exception)?;
        let response = PipelineStartResponse {
            time_to_first_batch,
            warm_batches: req.warm_batches,
            batch: seen,
            worker_threads: loader.threads.clone(),
            loader: loader_label(req, &stages),
        };
        self.batch_size = req.batch_size as usize;
        self.loader = Some(loader);
        Ok(response)
    }

    fn run(&mut self, req: PipelineRunRequest) -> Result<PipelineRunResponse, Failure> {
        let loader = self
            .loader
            .as_mut()
            .ok_or_else(|| bad("pipeline_run before pipeline_start"))?;
        let window = window(loader, req);
        if window.is_err() {
            self.stop(); // a broken loader does not run on
        }
        let ns = window.map_err(exception)?;
        let items = ns.len() as u64 * self.batch_size as u64;
        Ok(PipelineRunResponse {
            ns,
            items,
            gpu_memory: None,
        })
    }

    fn stop(&mut self) {
        self.loader = None; // dropping the loader joins its threads
    }
}

fn stages(req: &PipelinePrepareRequest) -> Result<Stages, Failure> {
    let crop = match &req.crop {
        None => None,
        Some(stage) if stage.name == SHARED_CROP => {
            let p = Params::new(&stage.name, &stage.params);
            Some((p.dim("width")? as usize, p.dim("height")? as usize))
        }
        Some(stage) => {
            let msg = format!(
                "the native loader's shared crop is {SHARED_CROP}, not {}",
                stage.name
            );
            return Err(failure(FailureKind::Unsupported, msg));
        }
    };
    Ok(Stages {
        transform: req.transform.clone(),
        params: req.params.clone(),
        ceiling: req.ceiling,
        crop,
        norm: Normalize::new(req.mean, req.std),
        seed: req.seed,
        fault: None,
    })
}

/// Seconds per item of the whole recipe (read included) on the first items, in this thread.
fn preflight<A: Adapter>(
    source: &Arc<Source<A>>,
    stages: &Arc<Stages>,
    items: u64,
) -> Result<f64, Failure> {
    let (mut fill, _) = make_fill(source, stages)(None).map_err(exception)?;
    let count = match &**source {
        Source::Items(v) => v.len(),
        Source::Paths(v) => v.len(),
    };
    let n = (items.max(1) as usize).min(count);
    let mut one = Batch::new(1);
    let t0 = Instant::now();
    for index in 0..n {
        fill.fill(index as u64, &mut one, 0).map_err(exception)?;
    }
    Ok(t0.elapsed().as_secs_f64() / n as f64)
}

/// Takes `n` batches untimed.
fn take(loader: &mut Loader, n: u64) -> Result<(), String> {
    for _ in 0..n {
        let b = loader.next_batch()?;
        loader.recycle(b);
    }
    Ok(())
}

/// One steady-state window: arrival times of batches after the window started.
fn window(loader: &mut Loader, req: PipelineRunRequest) -> Result<Vec<u64>, String> {
    take(loader, req.rewarm_batches)?;
    let mut ns = Vec::new();
    let t0 = Instant::now();
    loop {
        let b = loader.next_batch()?;
        let elapsed = t0.elapsed();
        ns.push(u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX));
        black_box(&b.data); // delivered to the training step
        loader.recycle(b);
        if ns.len() as u64 >= req.min_batches && elapsed.as_secs_f64() >= req.min_time {
            return Ok(ns);
        }
    }
}

fn loader_label(req: &PipelineStartRequest, stages: &Stages) -> Value {
    json!({
        "kind": "native threads (augbench)",
        "workers": req.workers,
        "prefetch_per_worker": req.prefetch,
        "collation": "in place: each item is normalized into its slot of a preallocated B×3×H×W float32 buffer",
        "crop": if stages.crop.is_some() { "shared (augbench)" } else { "the crate's own (the row's transform)" },
        "normalize": "shared (augbench)",
    })
}

/// Each thread's recipe: built inside the thread (a worker gets its own one-thread rayon pool,
/// so crates that use rayon stay on their loader thread).
fn make_fill<A: Adapter>(source: &Arc<Source<A>>, stages: &Arc<Stages>) -> MakeFill {
    let (source, stages) = (source.clone(), stages.clone());
    Arc::new(move |worker: Option<usize>| {
        let pool = worker.map(|_| own_pool()).transpose()?;
        let t = transform::<A>(&stages, worker)?;
        let seed = stages.seed.wrapping_add(worker.map_or(0, |w| w as u64 + 1));
        let crop = stages.crop.map(|(w, h)| Crop::new(w, h, seed));
        let report = json!({ "worker": worker, "rayon": rayon::current_num_threads() });
        let fill = RecipeFill::<A> {
            source: source.clone(),
            crop,
            t,
            norm: stages.norm,
            _pool: pool,
        };
        Ok((Box::new(fill) as Box<dyn Fill>, report))
    })
}

/// A one-thread rayon pool that the calling (loader) thread itself belongs to.
fn own_pool() -> Result<rayon::ThreadPool, String> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .use_current_thread()
        .build()
        .map_err(|e| format!("cannot pin the loader thread's rayon pool: {e}"))
}

/// The thread's transform: none for the ceiling row; a debug fault fires in the loader's worker
/// threads only (the preflight runs the real recipe).
fn transform<A: Adapter>(stages: &Stages, worker: Option<usize>) -> Result<Option<Op<A>>, String> {
    if let Some(f) = stages.fault.filter(|_| worker.is_some()) {
        return Ok(Some(fault_op::<A>(f)));
    }
    if stages.ceiling {
        return Ok(None);
    }
    let p = Params::new(&stages.transform, &stages.params);
    A::build(&stages.transform, &p)
        .map(Some)
        .map_err(|f| f.error)
}

struct RecipeFill<A: Adapter> {
    source: Arc<Source<A>>,
    crop: Option<Crop>,
    t: Option<Op<A>>,
    norm: Normalize,
    /// Keeps this thread's rayon pool alive.
    _pool: Option<rayon::ThreadPool>,
}

impl<A: Adapter> Fill for RecipeFill<A> {
    fn fill(&mut self, index: u64, batch: &mut Batch, slot: usize) -> Result<(), String> {
        let i = index as usize;
        match &*self.source.clone() {
            Source::Items(items) => {
                let item = items.get(i).ok_or_else(|| format!("no item {index}"))?;
                self.recipe(item, batch, slot)
                    .map_err(|e| format!("item {index}: {e}"))
            }
            Source::Paths(paths) => {
                let path = paths.get(i).ok_or_else(|| format!("no item {index}"))?;
                let item = read::<A>(path)?;
                self.recipe(&item, batch, slot)
                    .map_err(|e| format!("{path}: {e}"))
            }
        }
    }
}

impl<A: Adapter> RecipeFill<A> {
    fn recipe(&mut self, item: &A::Item, batch: &mut Batch, slot: usize) -> Result<(), String> {
        let norm = self.norm;
        match (self.crop.as_mut(), self.t.as_mut()) {
            (Some(crop), None) => batch.put(slot, crop.apply(A::pixels(item))?, &norm),
            (Some(crop), Some(t)) => {
                let (w, h) = crop.size();
                let cropped = A::convert(w as u32, h as u32, crop.apply_owned(A::pixels(item))?)?;
                batch.put(slot, A::out_pixels(&t(&cropped)?), &norm)
            }
            (None, Some(t)) => batch.put(slot, A::out_pixels(&t(item)?), &norm),
            (None, None) => batch.put(slot, A::pixels(item), &norm),
        }
    }
}

/// A transform that fires `f` on every item, as a crashing or hanging augmentation would (the
/// ceiling row too, so a test can break any row).
fn fault_op<A: Adapter>(f: Fault) -> Op<A> {
    Box::new(move |_| trigger(f))
}

/// Decodes one file inside the loader (decode scopes), named in the error.
fn read<A: Adapter>(path: &str) -> Result<A::Item, String> {
    let (rgb, _) = load::decode(std::path::Path::new(path))
        .map_err(|e| format!("could not decode {path}: {e}"))?;
    A::convert(rgb.width, rgb.height, rgb.data).map_err(|e| format!("{path}: {e}"))
}

fn exception(e: String) -> Failure {
    failure(FailureKind::Exception, e)
}

fn bad(e: &str) -> Failure {
    failure(FailureKind::BadRequest, e.to_string())
}
