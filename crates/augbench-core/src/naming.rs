//! Output naming: the one place that decides result file names and folders, so the planner,
//! the runner, cloud collection and reports always agree.

use std::path::{Path, PathBuf};

use crate::config::RunConfig;
use crate::policy;
use augbench_catalog::matrix::{Device, Mode};

pub const RESOLVED_CONFIG_FILE: &str = "resolved_config.yaml";
pub const CELLS_FILE: &str = "cells.parquet";
/// The targets file of a run with `selection.targets`, in its output folder.
pub const TARGETS_FILE: &str = "targets.json";
/// The equivalence check of a run with `execution.check_equivalence` on, in its output folder.
pub const EQUIVALENCE_FILE: &str = "equivalence.json";
/// Held by the one `augbench run` writing into an output folder.
pub const RUN_LOCK_FILE: &str = ".augbench-run.lock";
/// The record of a submitted cloud run, in the output folder.
pub const CLOUD_RUN_FILE: &str = "cloud_run.json";
/// The record of a baseline of repeated invocations (`augbench run --invocations N`), in the
/// output folder beside the invocations' own folders (`invocation_dir`).
pub const BASELINE_FILE: &str = "baseline.json";
/// Local folder of a cloud run's files (job JSON, task script, shards, fetched tasks).
pub const CLOUD_DIR: &str = "cloud";

/// The run's output folder: `output.output_dir`, else the policy default.
pub fn output_dir(cfg: &RunConfig) -> PathBuf {
    cfg.output
        .output_dir
        .clone()
        .unwrap_or_else(|| PathBuf::from(policy::DEFAULT_OUTPUT_DIR))
}

/// `<out>/equivalence.json`.
pub fn equivalence(out: &Path) -> PathBuf {
    out.join(EQUIVALENCE_FILE)
}

/// The parameters that make a result file name unique.
#[derive(Debug, Clone, PartialEq)]
pub struct JobKey<'a> {
    pub scenario: &'a str,
    pub mode: Mode,
    pub library: &'a str,
    pub device: Device,
    /// Pipeline only: measurement scope, items (`None` = all), runs, workers, batch size.
    pub scope: &'a str,
    pub num_items: Option<u64>,
    pub num_runs: u64,
    pub workers: u64,
    pub batch_size: u64,
    /// Micro only: items per call; above 1 the batched regime gets its own file.
    pub micro_batch: u64,
    /// Micro only: instruction counts get their own file (`_instructions`), never mixed with times.
    pub instructions: bool,
}

/// `<scenario>/micro/<lib>_micro[_batch<B>][_instructions][_dev-<d>]_results.json`,
/// `<scenario>/pipeline/<lib>_<scope>_n<N|all>_r<R>_w<W>_b<B>[_dev-<d>]_results.json`, or for a
/// decoder `<scenario>/decode/<decoder>_decode_results.json`.
pub fn result_file(out: &Path, key: &JobKey<'_>) -> PathBuf {
    let dev = match key.device {
        Device::Cpu => String::new(),
        d => format!("_dev-{d}"),
    };
    let name = match key.mode {
        Mode::Micro => {
            let batch = match key.micro_batch {
                0 | 1 => String::new(),
                b => format!("_batch{b}"),
            };
            let counts = if key.instructions {
                "_instructions"
            } else {
                ""
            };
            format!("{}_micro{batch}{counts}{dev}_results.json", key.library)
        }
        Mode::Pipeline => {
            let n = key.num_items.map_or("all".to_string(), |n| n.to_string());
            format!(
                "{}_{}_n{n}_r{}_w{}_b{}{dev}_results.json",
                key.library, key.scope, key.num_runs, key.workers, key.batch_size
            )
        }
        Mode::Decode => format!("{}_decode{dev}_results.json", key.library),
    };
    out.join(key.scenario).join(key.mode.to_string()).join(name)
}

pub fn resolved_config(out: &Path) -> PathBuf {
    out.join(RESOLVED_CONFIG_FILE)
}

pub fn cells_log(out: &Path) -> PathBuf {
    out.join(CELLS_FILE)
}

/// `<out>/targets.json`: the targets the workers of a run with `selection.targets` load.
pub fn targets_file(out: &Path) -> PathBuf {
    out.join(TARGETS_FILE)
}

pub fn run_lock(out: &Path) -> PathBuf {
    out.join(RUN_LOCK_FILE)
}

pub fn cloud_run(out: &Path) -> PathBuf {
    out.join(CLOUD_RUN_FILE)
}

pub fn cloud_dir(out: &Path) -> PathBuf {
    out.join(CLOUD_DIR)
}

/// `<out>/baseline.json`.
pub fn baseline(out: &Path) -> PathBuf {
    out.join(BASELINE_FILE)
}

/// The folder name of invocation `i` (from 1) of a baseline of repeated invocations.
pub fn invocation_name(i: usize) -> String {
    format!("invocation-{i}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(mode: Mode, device: Device) -> JobKey<'static> {
        JobKey {
            scenario: "image-rgb",
            mode,
            library: "kornia",
            device,
            scope: "augment",
            num_items: Some(2000),
            num_runs: 3,
            workers: 4,
            batch_size: 32,
            micro_batch: 1,
            instructions: false,
        }
    }

    #[test]
    fn instruction_counts_have_their_own_file() {
        let mut k = key(Mode::Micro, Device::Cpu);
        k.instructions = true;
        let p = result_file(Path::new("out"), &k);
        assert_eq!(
            p,
            Path::new("out/image-rgb/micro/kornia_micro_instructions_results.json")
        );
    }

    #[test]
    fn batched_micro_has_its_own_file() {
        let mut k = key(Mode::Micro, Device::Cuda);
        k.micro_batch = 32;
        let p = result_file(Path::new("out"), &k);
        assert_eq!(
            p,
            Path::new("out/image-rgb/micro/kornia_micro_batch32_dev-cuda_results.json")
        );
    }

    #[test]
    fn micro_cpu_has_no_device_suffix() {
        let p = result_file(Path::new("out"), &key(Mode::Micro, Device::Cpu));
        assert_eq!(
            p,
            Path::new("out/image-rgb/micro/kornia_micro_results.json")
        );
    }

    #[test]
    fn micro_cuda_has_device_suffix() {
        let p = result_file(Path::new("out"), &key(Mode::Micro, Device::Cuda));
        assert_eq!(
            p,
            Path::new("out/image-rgb/micro/kornia_micro_dev-cuda_results.json")
        );
    }

    #[test]
    fn a_decoder_has_its_decode_file() {
        let mut k = key(Mode::Decode, Device::Cpu);
        k.scenario = "video-decode-16f";
        k.library = "decord";
        let p = result_file(Path::new("out"), &k);
        assert_eq!(
            p,
            Path::new("out/video-decode-16f/decode/decord_decode_results.json")
        );
    }

    #[test]
    fn pipeline_encodes_sweep_parameters() {
        let mut k = key(Mode::Pipeline, Device::Cuda);
        let p = result_file(Path::new("o"), &k);
        assert_eq!(
            p,
            Path::new("o/image-rgb/pipeline/kornia_augment_n2000_r3_w4_b32_dev-cuda_results.json")
        );
        k.num_items = None;
        k.device = Device::Cpu;
        let p = result_file(Path::new("o"), &k);
        assert_eq!(
            p,
            Path::new("o/image-rgb/pipeline/kornia_augment_nall_r3_w4_b32_results.json")
        );
    }
}
