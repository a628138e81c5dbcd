//! The pipeline side of a loaded native session: `load` with `pipeline: true`, then the in-process
//! preflight, the loader's start (first batch, contract, warm batches), steady-state windows and
//! stop, over the media `source` read and the stages `recipe` builds.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

use serde_json::{Value, json};

use super::recipe::{self, Stages};
use super::source::{Source, decoded, decoded_clips, nothing_read, paths_only};
use crate::adapters::{Fir, ImageRs, Imageproc, Kornia, Zune};
use crate::library::Library;
use crate::loader::{Batch, Loader, Shape, batch};
use crate::params::Params;
use crate::reply::failure;
use crate::session::{Adapter, mapped_fault};
use augbench_protocol::protocol::{
    Failure, FailureKind, LoadRequest, LoadResponse, PipelinePrepareRequest,
    PipelinePrepareResponse, PipelineRunRequest, PipelineRunResponse, PipelineStartRequest,
    PipelineStartResponse, ProductionCellRequest, ProductionCellResponse,
};

/// The pipeline side of a loaded session, independent of the crate.
pub(crate) trait Pipeline {
    fn prepare(&mut self, req: &PipelinePrepareRequest)
    -> Result<PipelinePrepareResponse, Failure>;
    fn start(&mut self, req: &PipelineStartRequest) -> Result<PipelineStartResponse, Failure>;
    fn run(&mut self, req: PipelineRunRequest) -> Result<PipelineRunResponse, Failure>;
    fn stop(&mut self);
    /// One production cell over the loaded files (`production`), with a loader of its own.
    fn production(
        &mut self,
        req: &ProductionCellRequest,
    ) -> Result<ProductionCellResponse, Failure>;
    /// A second loader side over the same media, with no recipe or loader of its own yet (the
    /// ceiling slot).
    fn companion(&self) -> Box<dyn Pipeline>;
}

/// Answers `load` with `pipeline: true`: RGB only; `preload: false` keeps the paths (clip
/// folders for `media: video`).
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
        Library::Image => load_as::<ImageRs>(req, preload, test_faults),
        Library::Imageproc => load_as::<Imageproc>(req, preload, test_faults),
        Library::FastImageResize => load_as::<Fir>(req, preload, test_faults),
        Library::KorniaRs => load_as::<Kornia<3>>(req, preload, test_faults),
        Library::ZuneImage => load_as::<Zune>(req, preload, test_faults),
    }
}

fn load_as<A: Adapter>(
    req: &LoadRequest,
    preload: bool,
    test_faults: bool,
) -> Result<(Box<dyn Pipeline>, LoadResponse), Failure> {
    let t0 = Instant::now();
    let video = req.media == "video";
    let read = match (video, preload) {
        (false, true) => decoded::<A>(&req.paths)?,
        (false, false) => paths_only(&req.paths, false),
        (true, true) => decoded_clips::<A>(&req.paths)?,
        (true, false) => paths_only(&req.paths, true),
    };
    if read.source.len() == 0 {
        return Err(nothing_read(req, &read.skipped));
    }
    let shape = read.source.first_shape();
    let dtype = if preload {
        crate::session::DTYPE
    } else {
        "path"
    };
    let response = LoadResponse {
        count: read.source.len() as u64,
        decode_seconds: t0.elapsed().as_secs_f64(),
        shape,
        dtype: dtype.into(),
        layout: if video {
            crate::clips::LAYOUT
        } else {
            crate::session::LAYOUT
        }
        .into(),
        skipped: read.skipped,
        converted: read.converted,
        targets: None,
    };
    let pipe = Pipe::<A> {
        clip_length: video.then_some(req.clip_length as usize),
        source: Arc::new(read.source),
        stages: None,
        loader: None,
        batch_size: 0,
        test_faults,
    };
    Ok((Box::new(pipe), response))
}

struct Pipe<A: Adapter> {
    source: Arc<Source<A>>,
    /// Video: frames per clip (from `load`); `None` for images.
    clip_length: Option<usize>,
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
        let mut stages = recipe::stages(req)?;
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
        let per_item =
            preflight::<A>(&self.source, &stages, req.preflight_items, self.clip_length)?;
        self.stages = Some(stages);
        Ok(PipelinePrepareResponse {
            transform: req.transform.clone(),
            decoder: A::decoder(),
            split: false,
            transform_device: "cpu".into(),
            preflight_sec_per_item: per_item,
            warnings: Vec::new(),
        })
    }

    fn start(&mut self, req: &PipelineStartRequest) -> Result<PipelineStartResponse, Failure> {
        self.stop();
        let stages = self
            .stages
            .clone()
            .ok_or_else(|| bad("pipeline_start before pipeline_prepare"))?;
        check_frames(req.frames, self.clip_length)?;
        let shape = Shape {
            workers: req.workers as usize,
            batch_size: req.batch_size as usize,
            prefetch: req.prefetch as usize,
            order: Arc::new(req.order.clone()),
            frames: req.frames.map(|t| t as usize),
        };
        let t0 = Instant::now();
        let mut loader =
            Loader::start(shape, recipe::make_fill(&self.source, &stages)).map_err(exception)?;
        let first = loader.next_batch().map_err(exception)?;
        let time_to_first_batch = t0.elapsed().as_secs_f64();
        let seen = batch::check(&first, req.size, req.frames)
            .map_err(|e| failure(FailureKind::Contract, e))?;
        loader.recycle(first);
        take(&mut loader, req.warm_batches).map_err(exception)?;
        let response = PipelineStartResponse {
            time_to_first_batch,
            warm_batches: req.warm_batches,
            batch: seen,
            worker_threads: loader.threads.clone(),
            loader: loader_label(req, &stages, self.clip_length.is_some()),
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

    fn production(
        &mut self,
        req: &ProductionCellRequest,
    ) -> Result<ProductionCellResponse, Failure> {
        self.stop();
        let cell = super::production::cell(&self.source, req);
        crate::loader::release_freed_memory();
        cell
    }

    fn companion(&self) -> Box<dyn Pipeline> {
        Box::new(Pipe::<A> {
            source: Arc::clone(&self.source),
            clip_length: self.clip_length,
            stages: None,
            loader: None,
            batch_size: 0,
            test_faults: self.test_faults,
        })
    }
}

/// Seconds per item of the whole recipe (read included) on the first items, in this thread.
fn preflight<A: Adapter>(
    source: &Arc<Source<A>>,
    stages: &Arc<Stages>,
    items: u64,
    frames: Option<usize>,
) -> Result<f64, Failure> {
    let (mut fill, _) = recipe::make_fill(source, stages)(None).map_err(exception)?;
    let n = (items.max(1) as usize).min(source.len());
    let mut one = Batch::with_frames(1, frames);
    let t0 = Instant::now();
    for index in 0..n {
        fill.fill(index as u64, &mut one, 0).map_err(exception)?;
    }
    Ok(t0.elapsed().as_secs_f64() / n as f64)
}

/// The contract's clip length (`frames`) against the loaded items': a mismatch would batch clips
/// as images or images as clips, so it breaks the contract before any loader starts.
fn check_frames(frames: Option<u64>, clip_length: Option<usize>) -> Result<(), Failure> {
    let items = clip_length.map(|t| t as u64);
    if frames == items {
        return Ok(());
    }
    let name = |f: Option<u64>| f.map_or("images".to_string(), |t| format!("clips of {t} frames"));
    let msg = format!(
        "the items are {}, where the recipe makes batches of {}",
        name(items),
        name(frames)
    );
    Err(failure(FailureKind::Contract, msg))
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

fn loader_label(req: &PipelineStartRequest, stages: &Stages, clips: bool) -> Value {
    let collation = if clips {
        "in place: each clip's frames are normalized into their slots of a preallocated B×T×3×H×W float32 buffer"
    } else {
        "in place: each item is normalized into its slot of a preallocated B×3×H×W float32 buffer"
    };
    json!({
        "kind": "native threads (augbench)",
        "workers": req.workers,
        "prefetch_per_worker": req.prefetch,
        "collation": collation,
        "crop": if stages.crop.is_some() { "shared (augbench)" } else { "the crate's own (the row's transform)" },
        "normalize": "shared (augbench)",
    })
}

fn exception(e: String) -> Failure {
    failure(FailureKind::Exception, e)
}

fn bad(e: &str) -> Failure {
    failure(FailureKind::BadRequest, e.to_string())
}
