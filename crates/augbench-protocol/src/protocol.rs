//! The worker protocol (docs/protocol.md) as typed messages: one JSON request per line on the
//! worker's stdin, one JSON response per line on its stdout. Shared by the coordinator's client
//! and the native Rust worker, and spoken by the Python worker.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub const PROTOCOL_VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "lowercase")]
pub enum Request {
    Hello,
    Load(LoadRequest),
    Prepare(PrepareRequest),
    Check,
    Time(TimeRequest),
    /// Native worker only: time the drift sentinel's reference kernel `loops` times (no media
    /// needed); answered like `time`, nanoseconds per loop.
    Sentinel(SentinelRequest),
    /// Apply the prepared transform once to every loaded item and write each output as raw HWC
    /// uint8 bytes into `dir` (the equivalence check; never timed).
    Emit(EmitRequest),
    /// Pipeline mode (Python workers): build the recipe, preflight it in-process.
    #[serde(rename = "pipeline_prepare")]
    PipelinePrepare(PipelinePrepareRequest),
    /// Pipeline mode: build the loader, take its first batch, check the contract, warm it.
    #[serde(rename = "pipeline_start")]
    PipelineStart(PipelineStartRequest),
    /// Pipeline mode: one steady-state window of at least `min_batches` and `min_time`.
    #[serde(rename = "pipeline_run")]
    PipelineRun(PipelineRunRequest),
    /// Pipeline mode: end the slot's loader and its workers.
    #[serde(rename = "pipeline_stop")]
    PipelineStop(PipelineStopRequest),
    /// Production cells (Python workers): one catalog recipe, whole, for one seed: loader built,
    /// warm-up batches untimed, measured batches timed (the coordinator samples memory).
    #[serde(rename = "production_cell")]
    ProductionCell(ProductionCellRequest),
    /// Production coverage: which of the recipes the library builds, each built as its cell
    /// would build it; nothing loaded, nothing timed (`production --plan`, `list recipes`).
    #[serde(rename = "production_builds")]
    ProductionBuilds(ProductionBuildsRequest),
    /// Decode mode (the Python decode worker): read every clip once, untimed, and check it.
    #[serde(rename = "decode_open")]
    DecodeOpen(DecodeOpenRequest),
    /// Decode mode: decode the first `count` clips once, timed in the worker.
    #[serde(rename = "decode_time")]
    DecodeTime(DecodeTimeRequest),
    Shutdown,
}

/// A production recipe's stage: a catalog op, its parameters, and whether it is the recipe's
/// crop (built as the library's loader crop).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChainStage {
    pub op: String,
    pub params: serde_json::Value,
    pub crop: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProductionCellRequest {
    pub recipe: String,
    pub stages: Vec<ChainStage>,
    /// How many of `stages` the loader workers run (the CPU prefix rule); the rest run on the
    /// collated batch on the load's device (only where that is `cuda`).
    pub stages_in_workers: u64,
    /// `float16` or `float32`: the batch's dtype after normalization.
    pub dtype: String,
    pub mean: [f64; 3],
    pub std: [f64; 3],
    /// [height, width] of every sample.
    pub size: [u64; 2],
    /// The seed's permutation of the loaded items, cycled by the loader.
    pub order: Vec<u64>,
    pub seed: u64,
    pub batch_size: u64,
    pub workers: u64,
    pub prefetch: u64,
    pub warmup_batches: u64,
    pub measured_batches: u64,
    /// The decoder to read the files with, by name (`pillow`, `simplejpeg`, `torchvision.io`);
    /// absent: the library's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decoder: Option<String>,
}

/// The recipes a `production_builds` request asks about.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProductionBuildsRequest {
    /// Where the stages after the loader workers' would run (`cpu` or `cuda`), as a cell's load.
    pub device: String,
    pub recipes: Vec<RecipeStages>,
}

/// One recipe as its cell request gives it: the stages and how many the loader workers run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecipeStages {
    pub recipe: String,
    pub stages: Vec<ChainStage>,
    pub stages_in_workers: u64,
}

/// Per recipe of the request, in its order: `refused` is the reason its cell would answer
/// `unsupported` with, `None` where the library builds it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ProductionBuildsResponse {
    pub recipes: Vec<RecipeBuild>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecipeBuild {
    pub recipe: String,
    #[serde(default)]
    pub refused: Option<String>,
}

/// What a production cell measured (the loader's details kept as the worker wrote them).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ProductionCellResponse {
    /// Each measured batch's arrival, nanoseconds after the clock started.
    pub ns: Vec<u64>,
    pub items: u64,
    pub time_to_first_batch: f64,
    pub batch: serde_json::Value,
    pub warmup_batches: u64,
    pub worker_threads: serde_json::Value,
    pub loader: serde_json::Value,
    pub stages_in_workers: u64,
    pub decoder: String,
    /// Where the batch was delivered (`cpu` or `cuda`).
    #[serde(default)]
    pub device: String,
    /// On `cuda`: the torch allocator's peaks over the cell, from before the loader was built
    /// to the last measured batch's arrival; absent on the CPU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_memory: Option<GpuMemory>,
}

/// The torch allocator's peaks over a production cell on the GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct GpuMemory {
    pub peak_allocated_bytes: u64,
    pub peak_reserved_bytes: u64,
}

/// One clip of a decode run: the video file and the frame indices the sampling rule picked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DecodeItem {
    pub source: String,
    pub indices: Vec<u64>,
}

/// Where the decode worker writes, per clip, the top-left `height × width` region of its frames
/// (THWC uint8, `<dir>/<k>.u8`) so the coordinator can read the synthetic frame markers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VerifyRegion {
    pub dir: String,
    pub height: u32,
    pub width: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DecodeOpenRequest {
    pub items: Vec<DecodeItem>,
    pub verify: Option<VerifyRegion>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct DecodeOpenResponse {
    pub count: u64,
    pub seconds: f64,
    pub sample: augbench_core::results::DecodedSample,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct DecodeTimeRequest {
    pub count: u64,
}

/// A recipe stage: a registry transform and its canonical parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stage {
    pub name: String,
    pub params: serde_json::Value,
}

/// Which of a worker's two loaders a pipeline request is for: the row's (the default), or the
/// decode ceiling's companion, which stays up across a worker process's transforms so that every
/// round times the ceiling next to the row (docs/pipeline.md, "The decode ceiling").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LoaderSlot {
    #[default]
    Row,
    Ceiling,
}

impl LoaderSlot {
    pub fn is_row(&self) -> bool {
        *self == LoaderSlot::Row
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct PipelineStopRequest {
    #[serde(default, skip_serializing_if = "LoaderSlot::is_row")]
    pub slot: LoaderSlot,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PipelinePrepareRequest {
    #[serde(default, skip_serializing_if = "LoaderSlot::is_row")]
    pub slot: LoaderSlot,
    /// The ceiling row: the recipe with T removed (`transform` names the row).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ceiling: bool,
    pub transform: String,
    pub params: serde_json::Value,
    /// The crop before T; absent when T is itself the crop.
    pub crop: Option<Stage>,
    pub mean: [f64; 3],
    pub std: [f64; 3],
    /// GPU split: workers crop, the main process runs T and normalizes on the device.
    pub split: bool,
    pub seed: u64,
    pub preflight_items: u64,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PipelinePrepareResponse {
    pub transform: String,
    pub decoder: String,
    pub split: bool,
    /// Where T ran: the device in the split's main-process stage, else `cpu` (loader workers).
    #[serde(default)]
    pub transform_device: String,
    pub preflight_sec_per_item: f64,
    /// Warnings the library emitted while building the recipe (recorded with the row).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PipelineStartRequest {
    #[serde(default, skip_serializing_if = "LoaderSlot::is_row")]
    pub slot: LoaderSlot,
    pub workers: u64,
    pub batch_size: u64,
    pub prefetch: u64,
    pub warm_batches: u64,
    /// Item indices in the seeded order every library follows (repeated without end).
    pub order: Vec<u64>,
    pub seed: u64,
    /// The batch's spatial size the contract expects; absent = any, the same for every item.
    pub size: Option<[u64; 2]>,
    /// Video: frames per clip; the contract expects `B×T×3×H×W` (absent: images, `B×3×H×W`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frames: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PipelineStartResponse {
    pub time_to_first_batch: f64,
    pub warm_batches: u64,
    /// The first batch as the contract saw it (shape, dtype, channel means).
    pub batch: serde_json::Value,
    /// What each loader worker (or the main process, with no workers) actually had.
    pub worker_threads: Vec<serde_json::Value>,
    pub loader: serde_json::Value,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PipelineRunRequest {
    #[serde(default, skip_serializing_if = "LoaderSlot::is_row")]
    pub slot: LoaderSlot,
    pub min_batches: u64,
    pub min_time: f64,
    /// Batches taken untimed before the clock starts (a loader that sat idle between rounds).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rewarm_batches: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PipelineRunResponse {
    /// Arrival time of each batch, nanoseconds after the window started.
    pub ns: Vec<u64>,
    pub items: u64,
    pub gpu_memory: Option<serde_json::Value>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SentinelRequest {
    pub loops: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadRequest {
    pub media: String,
    pub paths: Vec<String>,
    pub channels: u64,
    pub clip_length: u64,
    pub device: String,
    /// Pipeline mode: items are read with the library's pipeline decoder …
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pipeline: bool,
    /// … and decoded now (memory scope) or kept as paths for the loader to decode (`false`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preload: Option<bool>,
    /// Target rows: the targets file and the kinds moved with each image.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub targets: Option<TargetsRequest>,
}

/// The targets of a `load` (docs/protocol.md, "Targets"): each item's entry in `file`, converted
/// to the library's own types before any timed call, of the `kinds` named.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TargetsRequest {
    pub file: String,
    pub kinds: Vec<String>,
}

/// What a `load` with targets holds: the kinds, the items that carry them, and the totals.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct LoadedTargets {
    pub kinds: Vec<String>,
    #[serde(default)]
    pub items: u64,
    #[serde(default)]
    pub boxes: u64,
    #[serde(default)]
    pub keypoints: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PrepareRequest {
    pub transform: String,
    pub params: serde_json::Value,
    pub device: String,
    /// Batched regime: apply the transform once to a stack of this many items (absent = per item).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch: Option<u64>,
    /// Seed of the transform's parameter draws (absent = the worker's default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EmitRequest {
    /// An existing folder; output `i` goes to `<dir>/<i>.u8`.
    pub dir: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
}

/// One emitted output: its raw HWC uint8 file and `[height, width, channels]`; after a `load`
/// with targets also the output's targets (docs/protocol.md, "Targets").
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct EmitOutput {
    pub file: String,
    pub shape: Vec<u64>,
    /// `<i>.targets.json`: boxes, labels and keypoints of the loaded kinds (`{}` with a mask alone).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub targets_file: Option<String>,
    /// `<i>.mask.u8`: the output mask, raw H×W uint8 (masks loaded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mask_file: Option<String>,
    /// `[height, width]` of the mask file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mask_shape: Option<Vec<u64>>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct EmitResponse {
    pub outputs: Vec<EmitOutput>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimeRequest {
    pub start: u64,
    pub count: u64,
    pub loops: u64,
    /// Instruction counts: call the count markers (`getpgrp()` before, `getppid()` after) around
    /// each loop, so callgrind's `--zero-before`/`--dump-before` cut one dump per loop.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub markers: bool,
}

/// Why a request failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    Unsupported,
    Contract,
    Exception,
    BadRequest,
    /// The user's input cannot be used: a spec file to fix, or media none of which decodes.
    BadInput,
}

impl FailureKind {
    /// The kind as the protocol spells it (`contract`, `bad_request` …).
    pub fn name(self) -> &'static str {
        match self {
            FailureKind::Unsupported => "unsupported",
            FailureKind::Contract => augbench_core::results::CONTRACT_ERROR,
            FailureKind::Exception => "exception",
            FailureKind::BadRequest => "bad_request",
            FailureKind::BadInput => "bad_input",
        }
    }
}

/// A failed response: `{"ok": false, "error", "kind", "detail"}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Failure {
    pub error: String,
    pub kind: FailureKind,
    #[serde(default)]
    pub detail: String,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct HelloResponse {
    pub protocol: u32,
    pub library: String,
    pub versions: BTreeMap<String, String>,
    pub runtime: String,
    pub threads: BTreeMap<String, serde_json::Value>,
    /// Pipeline mode: the decoder the library reads files with (Python workers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decoder: Option<String>,
    /// Pipeline mode: the decoder by device where the library decodes differently on a device
    /// (DALI: `mixed` on cuda); a job records the one of its device, else `decoder`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub device_decoders: BTreeMap<String, String>,
    /// Decode mode: how the decoder reaches the sampled frames (`seek-per-frame`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access: Option<String>,
    /// The SIMD features the worker's own CPU detection sees (`avx2`, `avx512f`, …): under
    /// Valgrind fewer than the machine has; absent from workers that do not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_features: Option<Vec<String>>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Skipped {
    pub path: String,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct LoadResponse {
    pub count: u64,
    pub decode_seconds: f64,
    pub shape: Vec<u64>,
    pub dtype: String,
    pub layout: String,
    #[serde(default)]
    pub skipped: Vec<Skipped>,
    /// Items converted to the requested channel layout (grayscale/RGBA → RGB).
    #[serde(default)]
    pub converted: u64,
    /// Target rows: what the worker holds besides the images.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub targets: Option<LoadedTargets>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PrepareResponse {
    pub transform: String,
    /// `batch` when the library measures a stacked batch (reported as its own mode).
    #[serde(default)]
    pub regime: Option<String>,
    /// Warnings the library emitted while building the transform (recorded with the row).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct CheckResponse {
    pub input_shape: Vec<u64>,
    pub output_shape: Vec<u64>,
    pub input_dtype: String,
    pub output_dtype: String,
    pub layout: String,
    /// Whether the library's own output was already complete in memory (not a strided view, not
    /// lazy); absent from workers that cannot tell (or predate the field).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_contiguous: Option<bool>,
    /// Share of apply + force spent forcing the output, measured outside the timed runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub force_share: Option<f64>,
    /// Target rows: the first item's targets after the call (counts, the mask's shape).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub targets_out: Option<serde_json::Value>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TimeResponse {
    /// Nanoseconds per loop; a loop applies the transform once to each of `count` items.
    pub ns: Vec<u64>,
    /// The timing thread's CPU time per loop, in nanoseconds (`CLOCK_THREAD_CPUTIME_ID`,
    /// `time.thread_time_ns`); empty from workers that predate it and for the sentinel.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpu_ns: Vec<u64>,
}

/// Serializes a success: the payload's fields plus `"ok": true`.
pub fn ok_line<T: Serialize>(payload: &T) -> String {
    let mut v = serde_json::to_value(payload).unwrap_or(serde_json::Value::Null);
    match v.as_object_mut() {
        Some(map) => {
            map.insert("ok".into(), serde_json::Value::Bool(true));
        }
        None => v = serde_json::json!({"ok": true}),
    }
    v.to_string()
}

/// Serializes a failure with `"ok": false`.
pub fn failure_line(f: &Failure) -> String {
    let mut v = serde_json::to_value(f).unwrap_or(serde_json::Value::Null);
    if let Some(map) = v.as_object_mut() {
        map.insert("ok".into(), serde_json::Value::Bool(false));
    }
    v.to_string()
}

/// Splits a response line into a success payload or a typed failure.
pub fn parse_response(line: &str) -> Result<Result<serde_json::Value, Failure>, serde_json::Error> {
    let v: serde_json::Value = serde_json::from_str(line)?;
    if v.get("ok").and_then(serde_json::Value::as_bool) == Some(true) {
        Ok(Ok(v))
    } else {
        Ok(Err(serde_json::from_value(v)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_use_op_tags() {
        let r: Request =
            serde_json::from_str(r#"{"op":"time","start":0,"count":5,"loops":2}"#).unwrap();
        assert_eq!(
            r,
            Request::Time(TimeRequest {
                start: 0,
                count: 5,
                loops: 2,
                markers: false
            })
        );
        assert_eq!(
            serde_json::to_string(&Request::Hello).unwrap(),
            r#"{"op":"hello"}"#
        );
    }

    #[test]
    fn the_loader_slot_is_row_unless_named_and_only_named_off_the_row() {
        let stop: Request = serde_json::from_str(r#"{"op":"pipeline_stop"}"#).unwrap();
        assert_eq!(stop, Request::PipelineStop(PipelineStopRequest::default()));
        let run: Request = serde_json::from_str(
            r#"{"op":"pipeline_run","slot":"ceiling","min_batches":4,"min_time":0.1}"#,
        )
        .unwrap();
        let Request::PipelineRun(req) = run else {
            panic!("{run:?}")
        };
        assert_eq!(req.slot, LoaderSlot::Ceiling);
        let row = PipelineRunRequest {
            slot: LoaderSlot::Row,
            ..req
        };
        let line = serde_json::to_string(&Request::PipelineRun(row)).unwrap();
        assert!(!line.contains("slot"), "{line}");
        let bad = serde_json::from_str::<Request>(r#"{"op":"pipeline_stop","slot":"other"}"#);
        assert!(bad.is_err());
    }

    #[test]
    fn failure_kind_names_match_the_wire() {
        for kind in [
            FailureKind::Unsupported,
            FailureKind::Contract,
            FailureKind::Exception,
            FailureKind::BadRequest,
        ] {
            assert_eq!(serde_json::to_value(kind).unwrap(), kind.name());
        }
    }

    #[test]
    fn responses_round_trip() {
        let line = ok_line(&TimeResponse {
            ns: vec![1, 2],
            cpu_ns: vec![1, 1],
        });
        let v = parse_response(&line).unwrap().unwrap();
        assert_eq!(v["ns"], serde_json::json!([1, 2]));
        assert_eq!(v["cpu_ns"], serde_json::json!([1, 1]));
        let old: TimeResponse = serde_json::from_str(r#"{"ns":[5]}"#).unwrap();
        assert!(
            old.cpu_ns.is_empty(),
            "a worker without the CPU clock still parses"
        );
        let f = Failure {
            error: "nope".into(),
            kind: FailureKind::Unsupported,
            detail: String::new(),
        };
        let back = parse_response(&failure_line(&f)).unwrap().unwrap_err();
        assert_eq!(back, f);
    }
}
