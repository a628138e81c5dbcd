//! A decoder's result file (`<decoder>_decode_results.json`, written atomically): the metadata
//! every result file carries, and one row (`results["decode"]`) in clips/s with frames/s, the
//! access pattern, what a clip came back as, and how its frames were checked; plus the summary
//! table `augbench run` prints from those files.

use std::collections::BTreeMap;

use augbench_core::results::{
    DECODE_ROW, DatasetInfo, DecodeDetail, Metadata, RESULT_FORMAT_VERSION, ResultFile, Status,
    TimingInfo, TransformResult,
};
use augbench_core::{RunConfig, Schedule, policy};

use super::lane::Lane;
use crate::outcome::{JobFailure, JobStatus};
use crate::record::{benchmark_params, thread_settings, write_results};
use augbench_media::clips::SAMPLING_RULE;

/// Writes the lane's file and says how its job ended.
pub fn write(
    cfg: &RunConfig,
    lane: &Lane,
    dataset: &DatasetInfo,
    clips: u64,
    schedule: Schedule,
    interrupted: bool,
) -> JobStatus {
    let file = file(cfg, lane, dataset, clips, schedule, interrupted);
    if let Err(e) = write_results(&lane.job.output_file, &file) {
        return JobStatus::Failed(JobFailure::of(&e));
    }
    match &lane.stopped {
        Some((_, why)) if lane.failed_to_start => {
            JobStatus::Failed(JobFailure::message(why.clone()))
        }
        _ if interrupted => JobStatus::Interrupted(file),
        _ => JobStatus::Finished(file),
    }
}

fn file(
    cfg: &RunConfig,
    lane: &Lane,
    dataset: &DatasetInfo,
    clips: u64,
    schedule: Schedule,
    interrupted: bool,
) -> ResultFile {
    let clip_length = cfg.data.clip_length.unwrap_or(policy::DEFAULT_CLIP_LENGTH);
    let params = serde_json::json!({ "clip_length": clip_length, "sampling_rule": SAMPLING_RULE });
    let mut row = match (&lane.stopped, lane.times.is_empty()) {
        (Some((status, why)), _) => TransformResult::not_measured(*status, params, why.clone()),
        (None, true) => TransformResult::not_measured(
            Status::Error,
            params,
            "interrupted before its first run".into(),
        ),
        (None, false) => measured(lane, params, clips),
    };
    let runs = cfg.execution.num_runs.unwrap_or_default();
    if interrupted && lane.stopped.is_none() && (lane.times.len() as u64) < runs {
        row.early_stopped = true;
        row.early_stop_reason = Some(format!(
            "interrupted (Ctrl-C) after {} of {runs} runs",
            lane.times.len()
        ));
    }
    row.decode = Some(detail(lane, &row, clip_length, clips));
    ResultFile {
        metadata: metadata(cfg, lane, dataset, clips, schedule),
        results: BTreeMap::from([(DECODE_ROW.to_string(), row)]),
    }
}

/// The row of a decoder that finished its runs: clips/s per run and their summary.
fn measured(lane: &Lane, params: serde_json::Value, clips: u64) -> TransformResult {
    let throughputs: Vec<f64> = lane.times.iter().map(|s| clips as f64 / s).collect();
    let summary = augbench_stats::summarize(&throughputs);
    let mut row = TransformResult::measured(params, &summary, throughputs, lane.times.clone());
    row.warmup_iterations = policy::DECODE_WARMUP_PASSES;
    if let Some(open) = &lane.open {
        row.output_shape = Some(open.sample.shape.clone());
        row.output_dtype = Some(open.sample.dtype.clone());
    }
    row
}

fn detail(lane: &Lane, row: &TransformResult, clip_length: u64, clips: u64) -> DecodeDetail {
    let per_frame = |x: f64| x * clip_length as f64;
    let version = lane
        .hello
        .as_ref()
        .zip(lane.info)
        .and_then(|(h, d)| h.versions.get(&d.package))
        .map(|v| format!(" {v}"))
        .unwrap_or_default();
    DecodeDetail {
        decoder: format!("{}{version}", lane.job.library),
        access: lane.info.map(|d| d.access.to_string()).unwrap_or_default(),
        sampling_rule: SAMPLING_RULE.to_string(),
        clip_length,
        clips,
        sample: lane
            .open
            .as_ref()
            .map(|o| o.sample.clone())
            .unwrap_or_default(),
        frames_per_sec: row.throughputs.iter().map(|&t| per_frame(t)).collect(),
        median_frames_per_sec: row.median_throughput.map(per_frame),
        frames_ci95: row
            .throughput_ci95
            .map(|[lo, hi]| [per_frame(lo), per_frame(hi)]),
        verification: lane.verification.clone(),
        check_seconds: lane.open.as_ref().map_or(0.0, |o| o.seconds),
    }
}

fn metadata(
    cfg: &RunConfig,
    lane: &Lane,
    dataset: &DatasetInfo,
    clips: u64,
    schedule: Schedule,
) -> Metadata {
    let hello = lane.hello.clone().unwrap_or_default();
    let runtime = if hello.runtime.is_empty() {
        "python"
    } else {
        &hello.runtime
    };
    Metadata {
        format_version: RESULT_FORMAT_VERSION,
        system_info: augbench_host::system::system_info(runtime),
        library_versions: hello.versions.clone(),
        thread_settings: thread_settings(&hello),
        environment: augbench_host::system::environment_info(),
        gpu: None,
        dataset: dataset.clone(),
        timing: timing(lane),
        scenario: lane.job.scenario.clone(),
        mode: lane.job.mode.to_string(),
        library: lane.job.library.clone(),
        device: lane.job.device.to_string(),
        benchmark_params: benchmark_params(cfg, lane.job, clips, schedule),
        run_config: serde_json::to_value(cfg).unwrap_or_default(),
        pipeline: None,
        equivalence: None,
        time_split: None,
        time_by_row: Vec::new(),
        variant: None,
        targets: None,
    }
}

/// What the clock covers: per clip, opening the file, reaching the sampled frames the decoder's
/// way, the clip in its native type, and closing; the frame check is outside.
fn timing(lane: &Lane) -> TimingInfo {
    let (access, output) = lane
        .info
        .map(|d| (d.access.to_string(), d.output.clone()))
        .unwrap_or_default();
    TimingInfo {
        backend: lane.job.backend.to_string(),
        measurement_scope: "decode".into(),
        includes: vec![
            "open the video file".into(),
            format!("reach and decode the sampled frames ({access})"),
            format!("the clip as {output}"),
            "close the file".into(),
        ],
    }
}
