//! The device question `augbench run` settles before anything starts, given whether this machine
//! has a CUDA device at all (`augbench_host::gpu::cuda_present`). `device: cuda` without one is a
//! usage error (exit 2); `device: auto` without one becomes `cpu`, and with one each `auto` job (a
//! CUDA-capable library) becomes a `cuda` job, so every file is named by the device it runs on,
//! never `_dev-auto`.

use augbench_core::plan::{Plan, job_key};
use augbench_core::{Device, RunConfig, UsageError, naming};

/// The config with its device settled for a machine with (`cuda`) or without a CUDA device.
pub fn settle(mut cfg: RunConfig, cuda: bool) -> Result<RunConfig, UsageError> {
    match cfg.execution.device {
        Some(Device::Cuda) if !cuda => Err(UsageError::new(
            "`device: cuda`, but this machine has no CUDA device (nvidia-smi lists no GPU, or CUDA_VISIBLE_DEVICES hides them); nothing was run",
            "use `device: auto` (CUDA where present, else the CPU) or `device: cpu`, or run on a machine with an NVIDIA GPU",
        )),
        Some(Device::Auto) if !cuda => {
            cfg.execution.device = Some(Device::Cpu);
            Ok(cfg)
        }
        _ => Ok(cfg),
    }
}

/// With a CUDA device present, the plan's `auto` jobs (CUDA-capable libraries) run, and are
/// named, as `cuda` jobs: a worker without CUDA then fails its job instead of writing CPU
/// figures under another device's name.
pub fn name_by_device(mut plan: Plan, cuda: bool) -> Plan {
    if !cuda {
        return plan;
    }
    let out = augbench_core::naming::output_dir(&plan.config);
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
    fn cuda_without_a_device_is_a_usage_error() {
        let e = settle(with(Device::Cuda), false).unwrap_err();
        assert!(e.message.contains("no CUDA device"), "{}", e.message);
        assert!(e.hint.contains("device: auto"), "{}", e.hint);
        assert!(settle(with(Device::Cuda), true).is_ok());
    }

    #[test]
    fn auto_without_a_device_is_the_cpu_and_stays_auto_with_one() {
        let cpu = settle(with(Device::Auto), false).unwrap();
        assert_eq!(cpu.execution.device, Some(Device::Cpu));
        let auto = settle(with(Device::Auto), true).unwrap();
        assert_eq!(auto.execution.device, Some(Device::Auto));
    }

    #[test]
    fn auto_jobs_are_named_cuda_where_cuda_is_present() {
        let mut cfg = with(Device::Auto);
        cfg.selection.scenario = Some("image-rgb".into());
        cfg.selection.libraries = Some(vec!["kornia".into(), "pillow".into()]);
        cfg.selection.transforms = Some(vec!["HorizontalFlip".into()]);
        let src = augbench_core::Source::new(std::path::Path::new("t.yaml"), "");
        let cfg = augbench_core::resolve(cfg, &src).unwrap();
        let plan = name_by_device(augbench_core::plan::build(&cfg), true);
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
