//! Pipeline mode in the native worker: the loaded media (decoded items in the memory scope,
//! paths in the decode scopes), the in-process preflight, and the loader's start (first batch,
//! contract, warm batches), steady-state windows and stop. The row's recipe is in `recipe`;
//! `crate::loader` owns the threads and the batch buffers.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

use serde_json::{Value, json};

mod recipe;

use recipe::Stages;

use super::load::{self, Decoded};
use super::params::Params;
use super::session::{Adapter, mapped_fault};
use super::{Library, failure, fir, image_rs, imageproc, kornia};
use crate::loader::{Batch, Loader, Shape, batch};
use crate::protocol::{
    Failure, FailureKind, LoadRequest, LoadResponse, PipelinePrepareRequest,
    PipelinePrepareResponse, PipelineRunRequest, PipelineRunResponse, PipelineStartRequest,
    PipelineStartResponse, Skipped,
};

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

/// The media a loader reads: decoded items (memory scope) or paths (decode scopes).
enum Source<A: Adapter> {
    Paths(Vec<String>),
    Items(Vec<A::Item>),
}

impl<A: Adapter> Source<A> {
    fn len(&self) -> usize {
        match self {
            Source::Items(v) => v.len(),
            Source::Paths(v) => v.len(),
        }
    }
}

/// What `load` read: the source, the files it skipped and how many it converted to RGB.
struct Read<A: Adapter> {
    source: Source<A>,
    skipped: Vec<Skipped>,
    converted: u64,
}

fn load_as<A: Adapter>(
    req: &LoadRequest,
    preload: bool,
    test_faults: bool,
) -> Result<(Box<dyn Pipeline>, LoadResponse), Failure> {
    let t0 = Instant::now();
    let read = if preload {
        decoded::<A>(&req.paths)?
    } else {
        paths_only(&req.paths)
    };
    if read.source.len() == 0 {
        return Err(nothing_read(req, &read.skipped));
    }
    let shape = match &read.source {
        Source::Items(items) => A::shape(&items[0]).to_vec(),
        Source::Paths(_) => Vec::new(),
    };
    let dtype = if preload {
        super::session::DTYPE
    } else {
        "path"
    };
    let response = LoadResponse {
        count: read.source.len() as u64,
        decode_seconds: t0.elapsed().as_secs_f64(),
        shape,
        dtype: dtype.into(),
        layout: super::session::LAYOUT.into(),
        skipped: read.skipped,
        converted: read.converted,
    };
    let pipe = Pipe::<A> {
        source: Arc::new(read.source),
        stages: None,
        loader: None,
        batch_size: 0,
        test_faults,
    };
    Ok((Box::new(pipe), response))
}

/// The memory scope: every file decoded now (unreadable ones skipped with the reason).
fn decoded<A: Adapter>(paths: &[String]) -> Result<Read<A>, Failure> {
    let Decoded {
        items,
        skipped,
        converted,
    } = load::decode_all(paths);
    let items = items
        .into_iter()
        .map(|d| A::convert(d.width, d.height, d.data))
        .collect::<Result<Vec<_>, String>>()
        .map_err(|e| failure(FailureKind::Exception, format!("{}: {e}", A::LIBRARY)))?;
    Ok(Read {
        source: Source::Items(items),
        skipped,
        converted,
    })
}

/// The decode scopes: the loader decodes; a missing file is skipped now.
fn paths_only<A: Adapter>(paths: &[String]) -> Read<A> {
    let (found, missing): (Vec<_>, Vec<_>) = paths
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
    Read {
        source: Source::Paths(found),
        skipped,
        converted: 0,
    }
}

fn nothing_read(req: &LoadRequest, skipped: &[Skipped]) -> Failure {
    let first = skipped
        .first()
        .map(|s| format!(" (first: {}: {})", s.path, s.reason))
        .unwrap_or_default();
    let msg = format!("none of the {} files could be read{first}", req.paths.len());
    failure(FailureKind::Exception, msg)
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
        let per_item = preflight::<A>(&self.source, &stages, req.preflight_items)?;
        self.stages = Some(stages);
        Ok(PipelinePrepareResponse {
            transform: req.transform.clone(),
            decoder: super::versions::decoder(),
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
        let shape = Shape {
            workers: req.workers as usize,
            batch_size: req.batch_size as usize,
            prefetch: req.prefetch as usize,
            order: Arc::new(req.order.clone()),
        };
        let t0 = Instant::now();
        let mut loader =
            Loader::start(shape, recipe::make_fill(&self.source, &stages)).map_err(exception)?;
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

/// Seconds per item of the whole recipe (read included) on the first items, in this thread.
fn preflight<A: Adapter>(
    source: &Arc<Source<A>>,
    stages: &Arc<Stages>,
    items: u64,
) -> Result<f64, Failure> {
    let (mut fill, _) = recipe::make_fill(source, stages)(None).map_err(exception)?;
    let n = (items.max(1) as usize).min(source.len());
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

fn exception(e: String) -> Failure {
    failure(FailureKind::Exception, e)
}

fn bad(e: &str) -> Failure {
    failure(FailureKind::BadRequest, e.to_string())
}

#[cfg(test)]
mod tests;
