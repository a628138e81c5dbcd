//! Golden job JSON and task script of every paper config (fixed run name), plus the shard split:
//! interleaved shards hold every library and a slice of the transforms, together all of them.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failure is the test failing"
)]

use std::path::{Path, PathBuf};

use augbench_cloud::job::{self, Layout};
use augbench_core::{RunConfig, Source, resolve};

fn paper(name: &str) -> RunConfig {
    let path: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../configs/paper")
        .join(format!("{name}.yaml"));
    let text = std::fs::read_to_string(&path).unwrap();
    let cfg = RunConfig::from_yaml(&text, &path).unwrap();
    resolve::resolve(cfg, &Source::new(&path, &text)).unwrap_or_else(|e| panic!("{e}"))
}

fn submission(name: &str) -> (RunConfig, job::Submission) {
    let cfg = paper(name);
    let layout = Layout::new(cfg.output.gcs_results_uri.as_deref().unwrap(), "golden-run");
    let data = cfg.data.gcs_uri.clone().unwrap();
    let sub = job::build(&job::Request::of_run(&cfg).unwrap(), layout, &data).unwrap();
    (cfg, sub)
}

const PAPER: [&str; 6] = [
    "gcp_rgb_micro",
    "gcp_9ch_micro",
    "gcp_video_micro",
    "gcp_rgb_pipeline",
    "gcp_9ch_pipeline",
    "gcp_video_pipeline",
];

#[test]
fn job_json_and_task_script_of_every_paper_config() {
    for name in PAPER {
        let (_, sub) = submission(name);
        assert_eq!(sub.jobs.len(), 1, "one machine shape per config");
        insta::assert_json_snapshot!(format!("{name}_job"), sub.jobs[0].json);
        insta::assert_snapshot!(format!("{name}_task_script"), sub.task_script);
    }
}

#[test]
fn interleaved_shards_hold_every_library_and_cover_the_transforms_once() {
    let (cfg, sub) = submission("gcp_rgb_micro");
    let shards = &sub.jobs[0].shards;
    let libraries = cfg.selection.libraries.clone().unwrap();
    let all: Vec<String> = shards.iter().flat_map(|s| s.transforms.clone()).collect();
    assert_eq!(all, augbench_core::resolve::selected_transforms(&cfg));
    for s in shards {
        assert_eq!(s.libraries, libraries, "shard {}", s.index);
    }
    let tasks = sub.jobs[0].json["taskGroups"][0]["taskCount"].as_u64();
    assert_eq!(tasks, Some(shards.len() as u64));
    assert_eq!(sub.shard_configs.len(), shards.len());
    let first = &sub.shard_configs[0].1;
    assert!(
        !first.contains("cloud:") && !first.contains("gs://"),
        "{first}"
    );
}

#[test]
fn gpu_shapes_install_drivers_and_cpu_shapes_do_not() {
    let (_, cpu) = submission("gcp_rgb_micro");
    let (_, gpu) = submission("gcp_rgb_pipeline");
    let instance = |s: &job::Submission| s.jobs[0].json["allocationPolicy"]["instances"][0].clone();
    assert!(instance(&cpu).get("installGpuDrivers").is_none());
    assert_eq!(instance(&gpu)["installGpuDrivers"], true);
    assert_eq!(
        instance(&gpu)["policy"]["accelerators"][0]["type"],
        "nvidia-l4"
    );
    assert_eq!(instance(&cpu)["policy"]["machineType"], "c4-standard-16");
}

#[test]
fn spot_retries_only_preemption() {
    let mut cfg = paper("gcp_rgb_micro");
    cfg.cloud.as_mut().unwrap().preemptible = Some(true);
    let layout = Layout::new("gs://b/r", "spot");
    let sub = job::build(&job::Request::of_run(&cfg).unwrap(), layout, "gs://b/d.tar").unwrap();
    let spec = &sub.jobs[0].json["taskGroups"][0]["taskSpec"];
    assert_eq!(
        sub.jobs[0].json["allocationPolicy"]["instances"][0]["policy"]["provisioningModel"],
        "SPOT"
    );
    assert_eq!(spec["lifecyclePolicies"][0]["action"], "RETRY_TASK");
    assert_eq!(
        spec["lifecyclePolicies"][0]["actionCondition"]["exitCodes"][0],
        job::PREEMPTED_EXIT_CODE
    );
    assert!(spec["maxRetryCount"].as_u64().unwrap() >= 1);
    let (_, standard) = submission("gcp_rgb_micro");
    let spec = &standard.jobs[0].json["taskGroups"][0]["taskSpec"];
    assert_eq!(spec["maxRetryCount"], 0);
    assert!(spec.get("lifecyclePolicies").is_none());
}

/// A Slurm run's `sbatch` options and task script (Slurm's prelude, the embedded dataset).
#[test]
fn slurm_job_spec_and_task_script() {
    let text = "version: 1\nselection:\n  scenario: image-rgb\n  libraries: [image, pillow]\n  transforms: [HorizontalFlip, Resize, Pad]\n\
                data:\n  num_items: 6\noutput:\n  output_dir: out\ncloud:\n  provider: slurm\n  shared_dir: /shared/augbench\n\
                \x20 partition: cpu\n  account: lab\n  constraint: icelake\n  shards: 3\n  parallelism: 2\n  max_run_duration_sec: 3601\n";
    let path = Path::new("slurm.yaml");
    let cfg = RunConfig::from_yaml(text, path).unwrap();
    let cfg = resolve::resolve(cfg, &Source::new(path, text)).unwrap_or_else(|e| panic!("{e}"));
    let sub = job::build(
        &job::Request::of_run(&cfg).unwrap(),
        Layout::new("/shared/augbench", "golden-run"),
        "",
    )
    .unwrap();
    assert_eq!(sub.jobs[0].shards.len(), 3);
    assert_eq!(sub.jobs[0].job.location, "cpu");
    insta::assert_json_snapshot!("slurm_job", sub.jobs[0].json);
    insta::assert_snapshot!("slurm_task_script", sub.task_script);
}
