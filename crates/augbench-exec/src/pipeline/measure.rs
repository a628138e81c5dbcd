//! One transform in a real loader, on a worker that holds the job's items (or their paths):
//! recipe and in-process preflight (the slow gate), the loader's start (first batch, output
//! contract, warm batches), `num_runs` steady-state windows, then the loader's end.

use augbench_catalog::recipe::Recipe;
use augbench_catalog::registry::TransformSpec;
use augbench_core::policy;
use augbench_core::results::{PipelineDetail, Status, TransformResult};

use super::settings::{PipelineSettings, sample_order};
use super::window::{Window, flag_drift};
use crate::micro::{settle, slow_result};
use augbench_protocol::client::{Worker, WorkerError};
use augbench_protocol::protocol::{
    LoaderSlot, PipelinePrepareRequest, PipelinePrepareResponse, PipelineRunRequest,
    PipelineRunResponse, PipelineStartRequest, PipelineStartResponse, PipelineStopRequest, Request,
    Stage,
};

/// A transform whose loader is built, checked and warm: collects windows, one per call, so a
/// scheduler can alternate the windows of several libraries' loaders.
#[derive(Debug, Clone)]
pub struct PipelineRuns {
    /// The worker's loader these windows come from.
    slot: LoaderSlot,
    params: serde_json::Value,
    per_item: f64,
    /// Where T ran and what the library warned while building the recipe (boxed:
    /// `PipelineStarted` holds this next to a boxed result).
    built: Box<(String, Vec<String>)>,
    started: PipelineStartResponse,
    runs: Vec<(Window, PipelineRunResponse)>,
}

/// What setting a transform up in its loader gave.
pub enum PipelineStarted {
    /// Unsupported, slow, a broken contract or an error: the transform's final result.
    Finished(Box<TransformResult>),
    Underway(PipelineRuns),
}

/// Recipe and preflight (the slow gate), then the loader in the worker's `slot`: first batch,
/// contract, warm batches.
pub fn start(
    w: &mut Worker,
    spec: &TransformSpec,
    slot: LoaderSlot,
    items: u64,
    set: &PipelineSettings,
    on_phase: &mut dyn FnMut(String),
) -> Result<PipelineStarted, WorkerError> {
    use PipelineStarted::Finished;
    let params = serde_json::to_value(&spec.params).unwrap_or_default();
    let recipe = Recipe::get();
    let row = match recipe.row(spec) {
        Ok(row) => row,
        Err(why) => {
            let r = TransformResult::not_measured(Status::Unsupported, params, why);
            return Ok(Finished(Box::new(r)));
        }
    };
    on_phase("preflight".into());
    let prepare = PipelinePrepareRequest {
        slot,
        ceiling: recipe.is_ceiling(&spec.name),
        transform: spec.name.clone(),
        params: params.clone(),
        crop: row.crop.map(|c| Stage {
            name: c.name.clone(),
            params: serde_json::to_value(&c.params).unwrap_or_default(),
        }),
        mean: recipe.normalize.mean,
        std: recipe.normalize.std,
        split: set.split,
        seed: policy::PIPELINE_ORDER_SEED,
        preflight_items: set.preflight_items,
    };
    let call = w.call(&Request::PipelinePrepare(prepare), set.request_timeout);
    let prepared: PipelinePrepareResponse = match settle(call, &params)? {
        Ok(p) => p,
        Err(r) => return Ok(Finished(Box::new(r))),
    };
    let per_item = prepared.preflight_sec_per_item;
    if per_item >= set.slow_threshold && !set.disable_slow_skip {
        let r = slow_result(&params, set.slow_threshold, set.preflight_items, per_item);
        return Ok(Finished(Box::new(r)));
    }
    on_phase("loader start".into());
    let start = PipelineStartRequest {
        slot,
        workers: set.workers,
        batch_size: set.batch_size,
        prefetch: set.prefetch,
        warm_batches: set.warm_batches(),
        order: sample_order(items),
        seed: policy::PIPELINE_ORDER_SEED,
        size: row.size,
        frames: set.frames,
    };
    let call = w.call(&Request::PipelineStart(start), set.request_timeout);
    match settle(call, &params)? {
        Ok(started) => Ok(PipelineStarted::Underway(PipelineRuns {
            slot,
            params,
            per_item,
            built: Box::new((prepared.transform_device, prepared.warnings)),
            started,
            runs: Vec::new(),
        })),
        Err(r) => Ok(Finished(Box::new(r))),
    }
}

impl PipelineRuns {
    pub fn runs(&self) -> u64 {
        self.runs.len() as u64
    }

    pub fn wants_more(&self, set: &PipelineSettings) -> bool {
        self.runs() < set.num_runs
    }

    /// Items per second of each window so far.
    pub fn throughputs(&self) -> Vec<f64> {
        self.runs.iter().map(|(w, _)| w.items_per_sec).collect()
    }

    /// Items per second of each window so far, which are dropped: a loader that stays up
    /// (the ceiling's companion) starts each transform's rounds with none.
    pub fn take_throughputs(&mut self) -> Vec<f64> {
        let t = self.throughputs();
        self.runs.clear();
        t
    }

    /// Ends the loader without a result (a companion at the end of its worker process).
    pub fn stop(self, w: &mut Worker, set: &PipelineSettings) {
        stop_loader(w, set, self.slot);
    }

    /// One steady-state window. `rewarm`: the loader sat idle while other libraries ran (its
    /// queue refilled), so the worker first takes `warm_batches` untimed, and the window starts
    /// in the steady state; else it drains what its queue gathered since the last window
    /// (`queue_batches`), which would otherwise come free. A failed request is the transform's
    /// final result.
    pub fn run(
        &mut self,
        w: &mut Worker,
        set: &PipelineSettings,
        rewarm: bool,
    ) -> Result<Result<(), TransformResult>, WorkerError> {
        let req = PipelineRunRequest {
            slot: self.slot,
            min_batches: set.min_batches,
            min_time: set.min_time,
            rewarm_batches: if rewarm {
                set.warm_batches()
            } else {
                set.queue_batches()
            },
        };
        let call = w.call(&Request::PipelineRun(req), set.request_timeout);
        let r: PipelineRunResponse = match settle(call, &self.params)? {
            Ok(r) => r,
            Err(r) => {
                stop_loader(w, set, self.slot); // its workers must not run on while other libraries are timed
                return Ok(Err(r));
            }
        };
        match Window::from_arrivals(&r.ns, set.batch_size) {
            Some(win) => {
                self.runs.push((win, r));
                Ok(Ok(()))
            }
            None => {
                let why = "the loader delivered no batch in a window".to_string();
                let params = self.params.clone();
                Ok(Err(TransformResult::not_measured(
                    Status::Error,
                    params,
                    why,
                )))
            }
        }
    }

    /// Ends the loader (its workers exit) and returns the transform's result.
    pub fn finish(self, w: &mut Worker, set: &PipelineSettings) -> TransformResult {
        stop_loader(w, set, self.slot);
        let mut r = result(self.params, self.per_item, set, self.started, &self.runs);
        let (transform_device, warnings) = *self.built;
        if let Some(p) = r.pipeline.as_mut() {
            p.transform_device = transform_device;
        }
        r.warnings = warnings;
        r
    }
}

/// Ends the worker's loader in `slot`; a worker that cannot answer is replaced by its lane anyway.
fn stop_loader(w: &mut Worker, set: &PipelineSettings, slot: LoaderSlot) {
    let req = Request::PipelineStop(PipelineStopRequest { slot });
    let _ = w.call::<serde_json::Value>(&req, set.request_timeout);
}

fn result(
    params: serde_json::Value,
    per_item: f64,
    set: &PipelineSettings,
    started: PipelineStartResponse,
    runs: &[(Window, PipelineRunResponse)],
) -> TransformResult {
    let throughputs: Vec<f64> = runs.iter().map(|(w, _)| w.items_per_sec).collect();
    let times: Vec<f64> = runs.iter().map(|(w, _)| w.seconds).collect();
    let summary = augbench_stats::summarize(&throughputs);
    let mut r = TransformResult::measured(params, &summary, throughputs, times);
    r.slow_threshold_sec_per_item = Some(set.slow_threshold);
    r.slow_preflight_items = Some(set.preflight_items);
    r.preflight_sec_per_item = Some(per_item);
    r.preflight_throughput = (per_item > 0.0).then(|| 1.0 / per_item);
    r.warmup_iterations = started.warm_batches;
    // The run with the highest peak (the allocator's counters restart every window).
    let peak = |m: &serde_json::Value| m.get("peak_allocated_bytes").and_then(|v| v.as_u64());
    r.gpu_memory = runs
        .iter()
        .filter_map(|(_, x)| x.gpu_memory.clone())
        .max_by_key(|m| peak(m).unwrap_or_default());
    r.output_shape = started
        .batch
        .get("shape")
        .and_then(|s| serde_json::from_value(s.clone()).ok());
    r.output_dtype = started
        .batch
        .get("dtype")
        .and_then(|d| d.as_str().map(str::to_string));
    r.pipeline = Some(PipelineDetail {
        time_to_first_batch: started.time_to_first_batch,
        warm_batches: started.warm_batches,
        batches: runs.iter().map(|(_, x)| x.ns.len() as u64).collect(),
        half_rates: runs.iter().map(|(w, _)| w.halves).collect(),
        drift: runs.iter().map(|(w, _)| w.drift()).fold(0.0, f64::max),
        batch: started.batch,
        worker_threads: started.worker_threads,
        transform_device: String::new(), // set by `finish`, which knows where T ran
        ceiling_throughputs: Vec::new(), // set by the scheduler, which times the companion
        ceiling: None,                   // paired once every process has its windows
    });
    flag_drift(&mut r);
    r
}
