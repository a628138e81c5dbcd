//! The decode scenario (`mode: decode`): every selected decoder reads the same sampled frames of the
//! same video files, each in its own worker process. After an untimed pass that reads and checks
//! every clip, and a short warmup, the decoders take turns run by run (interleaved) or one after
//! another (sequential); each decoder's row goes to `<decoder>_decode_results.json`.

mod lane;
mod result;
mod verify;

use std::sync::atomic::{AtomicBool, Ordering};

use augbench_core::plan::{Job, Plan};
use augbench_core::results::Status;
use augbench_core::{Schedule, UsageError, policy};
use indicatif::{MultiProgress, ProgressBar, ProgressStyle};

use augbench_core::naming::output_dir;
use augbench_media::clips::sample_indices;
use augbench_media::scan::is_video_file;

use crate::outcome::{JobStatus, RunReport};
use crate::run_media::Media;
use augbench_protocol::protocol::DecodeItem;
use lane::Lane;

/// Runs every decoder of the plan over the readable video files of `media`.
pub fn run(
    plan: &Plan,
    media: &Media,
    mp: &MultiProgress,
    stop: &AtomicBool,
) -> anyhow::Result<RunReport> {
    let cfg = &plan.config;
    let clip_length = cfg.data.clip_length.unwrap_or(policy::DEFAULT_CLIP_LENGTH);
    let items = items(media, clip_length, mp)?;
    let verify = media.info.synthetic;
    let mut lanes: Vec<Lane> = plan
        .jobs
        .iter()
        .map(|job| Lane::open(cfg, job, &items, verify, mp))
        .collect();
    warm(&mut lanes, items.len() as u64, stop);
    let runs = cfg.execution.num_runs.unwrap_or(policy::DEFAULT_NUM_RUNS);
    let interrupted = measure(
        &mut lanes,
        runs,
        plan.schedule,
        items.len() as u64,
        mp,
        stop,
    );
    let jobs = lanes
        .iter_mut()
        .map(|lane| {
            lane.close();
            let status = result::write(
                cfg,
                lane,
                &media.info,
                items.len() as u64,
                plan.schedule,
                interrupted,
            );
            (lane.job.clone(), status)
        })
        .collect::<Vec<(Job, JobStatus)>>();
    Ok(RunReport {
        jobs,
        out_dir: output_dir(cfg),
    })
}

/// The clips every decoder reads: each readable video file of the clip stage (unreadable ones
/// were skipped there, by name) with the indices of the sampling rule. Exit 2 when there are none.
fn items(media: &Media, clip_length: u64, mp: &MultiProgress) -> anyhow::Result<Vec<DecodeItem>> {
    let mut folders = 0;
    let items: Vec<DecodeItem> = media
        .clip_entries
        .iter()
        .filter(|e| e.clip.is_some())
        .filter(|e| {
            let video = is_video_file(std::path::Path::new(&e.source));
            folders += usize::from(!video);
            video
        })
        .map(|e| DecodeItem {
            source: e.source.clone(),
            indices: sample_indices(e.frames, clip_length),
        })
        .collect();
    if folders > 0 {
        mp.suspend(|| {
            eprintln!("note: {folders} frame folders left out: decoders read video files")
        });
    }
    if items.is_empty() {
        return Err(UsageError::new(
            "the decode scenario found no readable video file",
            "point data_dir at video files (.mp4 .avi .mov .mkv .webm), or remove it to use the built-in synthetic videos",
        )
        .into());
    }
    Ok(items)
}

/// Untimed passes over the first clips, per decoder (caches, allocators, lazy imports).
fn warm(lanes: &mut [Lane], clips: u64, stop: &AtomicBool) {
    let count = clips.min(policy::WARMUP_SUBSET_ITEMS);
    for lane in lanes.iter_mut().filter(|l| l.ready()) {
        for _ in 0..policy::DECODE_WARMUP_PASSES {
            if stop.load(Ordering::SeqCst) {
                return;
            }
            if let Err(e) = lane.time(count) {
                lane.stop(Status::Error, format!("warmup: {e}"));
                break;
            }
        }
    }
}

/// The order of the timed passes, as (lane, run) pairs: interleaved, every run visits every
/// decoder, each run starting one decoder later than the last (A-B-C, B-C-A, …) so no decoder
/// always goes first; sequential, all runs of one decoder, then the next.
pub fn steps(lanes: usize, runs: u64, schedule: Schedule) -> Vec<(usize, u64)> {
    match schedule {
        Schedule::Interleaved => (0..runs)
            .flat_map(|r| (0..lanes).map(move |i| ((i + r as usize) % lanes, r)))
            .collect(),
        Schedule::Sequential => (0..lanes)
            .flat_map(|l| (0..runs).map(move |r| (l, r)))
            .collect(),
    }
}

/// The timed passes over every clip; returns whether Ctrl-C stopped them.
fn measure(
    lanes: &mut [Lane],
    runs: u64,
    schedule: Schedule,
    clips: u64,
    mp: &MultiProgress,
    stop: &AtomicBool,
) -> bool {
    let order = steps(lanes.len(), runs, schedule);
    let bar = bar(mp, lanes.len(), runs, clips);
    for (l, _) in order {
        if stop.load(Ordering::SeqCst) {
            bar.abandon();
            return true;
        }
        let lane = &mut lanes[l];
        bar.set_message(lane.job.library.clone());
        if lane.ready() {
            match lane.time(clips) {
                Ok(s) => lane.times.push(s),
                Err(_) if crate::job::stopped_by_user(stop) => {
                    bar.abandon();
                    return true;
                }
                Err(e) => lane.stop(Status::Error, format!("run {}: {e}", lane.times.len() + 1)),
            }
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    false
}

/// `Decode runs (4 decoders × 5 runs, 50 clips)`, moving once per decoder and run.
fn bar(mp: &MultiProgress, lanes: usize, runs: u64, clips: u64) -> ProgressBar {
    let style = ProgressStyle::with_template("{prefix} {bar:30} {pos}/{len} {msg} [{elapsed}]")
        .unwrap_or_else(|_| ProgressStyle::default_bar());
    let bar = mp.add(ProgressBar::new(lanes as u64 * runs).with_style(style));
    bar.set_prefix(format!(
        "Decode runs ({lanes} decoders × {runs} runs, {clips} clips)"
    ));
    bar
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interleaved_runs_visit_every_decoder_and_rotate_the_first() {
        let s = steps(3, 2, Schedule::Interleaved);
        assert_eq!(s, vec![(0, 0), (1, 0), (2, 0), (1, 1), (2, 1), (0, 1)]);
    }

    #[test]
    fn sequential_runs_finish_one_decoder_first() {
        let s = steps(2, 3, Schedule::Sequential);
        assert_eq!(s, vec![(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]);
    }

    #[test]
    fn every_decoder_gets_every_run_once() {
        for schedule in [Schedule::Interleaved, Schedule::Sequential] {
            let mut s = steps(4, 5, schedule);
            s.sort_unstable();
            let want: Vec<(usize, u64)> =
                (0..4).flat_map(|l| (0..5).map(move |r| (l, r))).collect();
            assert_eq!(s, want);
        }
    }
}
