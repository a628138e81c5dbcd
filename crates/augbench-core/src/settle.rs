//! The device question a plan settles for the machine it runs on, given whether that machine has
//! a CUDA device at all (the caller probes it; this stays pure). `device: auto` without one is
//! `cpu`; with one each `auto` job (a CUDA-capable library) is a `cuda` job, so every file is
//! named by the device it runs on, never `_dev-auto`. `augbench plan` and `augbench run` both
//! build their plan with `for_machine`, so they name the same files. `device: cuda` without a
//! device is refused by `validate::device_present`.

use crate::config::RunConfig;
use crate::naming;
use crate::plan::{self, Plan, job_key};
use augbench_catalog::matrix::Device;

/// The config with `device: auto` settled for a machine with (`cuda`) or without a CUDA device:
/// without one it is `cpu`; with one it stays `auto` and `name_by_device` names its jobs.
pub fn device(mut cfg: RunConfig, cuda: bool) -> RunConfig {
    if cfg.execution.device == Some(Device::Auto) && !cuda {
        cfg.execution.device = Some(Device::Cpu);
    }
    cfg
}

/// The plan of `cfg` on a machine with (`cuda`) or without a CUDA device: the device settled,
/// then every job named by the device it runs on. The settled config is the plan's `config`. A
/// cloud config is planned as written: the cloud machine that runs each shard settles it.
pub fn for_machine(cfg: &RunConfig, cuda: bool) -> Plan {
    if cfg.is_cloud() {
        return plan::build(cfg);
    }
    name_by_device(plan::build(&device(cfg.clone(), cuda)), cuda)
}

/// With a CUDA device present, the plan's `auto` jobs (CUDA-capable libraries) run, and are
/// named, as `cuda` jobs: a worker without CUDA then fails its job instead of writing CPU
/// figures under another device's name.
pub fn name_by_device(mut plan: Plan, cuda: bool) -> Plan {
    if !cuda {
        return plan;
    }
    let out = naming::output_dir(&plan.config);
    for job in plan.jobs.iter_mut().filter(|j| j.device == Device::Auto) {
        let mut key = job_key(&plan.config, &job.library);
        key.device = Device::Cuda;
        let renamed = naming::result_file(&out, &key);
        for f in plan
            .expected_files
            .iter_mut()
            .filter(|f| **f == job.output_file)
        {
            f.clone_from(&renamed);
        }
        job.device = Device::Cuda;
        job.output_file = renamed;
    }
    plan
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(device: Device) -> RunConfig {
        let mut cfg = RunConfig::default();
        cfg.execution.device = Some(device);
        cfg
    }

    #[test]
    fn auto_without_a_device_is_the_cpu_and_stays_auto_with_one() {
        let cpu = device(with(Device::Auto), false);
        assert_eq!(cpu.execution.device, Some(Device::Cpu));
        let auto = device(with(Device::Auto), true);
        assert_eq!(auto.execution.device, Some(Device::Auto));
        assert_eq!(
            device(with(Device::Cuda), false).execution.device,
            Some(Device::Cuda)
        );
    }

    #[test]
    fn auto_jobs_are_named_cuda_where_cuda_is_present() {
        let mut cfg = with(Device::Auto);
        cfg.selection.scenario = Some("image-rgb".into());
        cfg.selection.libraries = Some(vec!["kornia".into(), "pillow".into()]);
        cfg.selection.transforms = Some(vec!["HorizontalFlip".into()]);
        let src = crate::Source::new(std::path::Path::new("t.yaml"), "");
        let cfg = crate::resolve::resolve(cfg, &src).unwrap();
        let plan = for_machine(&cfg, true);
        let names: Vec<String> = plan
            .expected_files
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        assert!(names.iter().all(|n| !n.contains("dev-auto")), "{names:?}");
        assert!(
            names
                .iter()
                .any(|n| n.ends_with("kornia_micro_dev-cuda_results.json"))
        );
        let kornia = plan.jobs.iter().find(|j| j.library == "kornia").unwrap();
        assert_eq!(kornia.device, Device::Cuda);
        let pillow = plan.jobs.iter().find(|j| j.library == "pillow").unwrap();
        assert_eq!(pillow.device, Device::Cpu);
    }
}
