//! Plans of the shipped configs: insta snapshots of `plan::build(..).to_yaml()` for each example
//! and paper config, job counts, output naming of every job, and the matrix/registry invariants
//! the plan relies on that the unit tests in `src/` do not already cover.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failure is the test failing"
)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use augbench_catalog::registry::OutputRule;
use augbench_core::naming::{self, JobKey};
use augbench_core::plan::{self, Plan};
use augbench_core::{Device, Matrix, Mode, Registry, RunConfig, Source, policy, resolve};

/// Reads `configs/<rel>` and resolves it under the relative display path `configs/<rel>`, so
/// nothing absolute reaches a snapshot.
fn resolved(rel: &str) -> RunConfig {
    let display = PathBuf::from("configs").join(rel);
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(&display);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{display:?}: {e}"));
    let cfg = RunConfig::from_yaml(&text, &display).unwrap_or_else(|e| panic!("{e}"));
    resolve::resolve(cfg, &Source::new(&display, &text)).unwrap_or_else(|e| panic!("{e}"))
}

fn plan_of(rel: &str) -> Plan {
    plan::build(&resolved(rel))
}

macro_rules! plan_snapshots {
    ($($name:ident => $rel:literal),* $(,)?) => {$(
        #[test]
        fn $name() {
            let yaml = plan_of($rel).to_yaml();
            assert!(!yaml.is_empty(), "empty plan YAML for {}", $rel);
            insta::assert_snapshot!(stringify!($name), yaml);
        }
    )*};
}

plan_snapshots! {
    plan_quickstart => "examples/quickstart.yaml",
    plan_local_rgb_micro_cpu => "examples/local_rgb_micro_cpu.yaml",
    plan_rgb_micro_matrix => "examples/rgb_micro_matrix.yaml",
    plan_local_9ch_micro_cpu => "examples/local_9ch_micro_cpu.yaml",
    plan_local_video_micro_cpu => "examples/local_video_micro_cpu.yaml",
    plan_local_video_decode => "examples/local_video_decode.yaml",
    plan_local_rgb_pipeline_cpu => "examples/local_rgb_pipeline_cpu.yaml",
    plan_targets_pipeline => "examples/targets_pipeline.yaml",
    plan_gpu_check_pipeline => "examples/gpu_check_pipeline.yaml",
    plan_gcp_rgb_micro => "paper/gcp_rgb_micro.yaml",
    plan_gcp_rgb_pipeline => "paper/gcp_rgb_pipeline.yaml",
    plan_gcp_9ch_micro => "paper/gcp_9ch_micro.yaml",
    plan_gcp_9ch_pipeline => "paper/gcp_9ch_pipeline.yaml",
    plan_gcp_video_micro => "paper/gcp_video_micro.yaml",
    plan_gcp_video_pipeline => "paper/gcp_video_pipeline.yaml",
}

const ALL: &[&str] = &[
    "examples/quickstart.yaml",
    "examples/local_rgb_micro_cpu.yaml",
    "examples/rgb_micro_matrix.yaml",
    "examples/local_9ch_micro_cpu.yaml",
    "examples/local_video_micro_cpu.yaml",
    "examples/local_video_decode.yaml",
    "examples/local_rgb_pipeline_cpu.yaml",
    "examples/kornia_batched.yaml",
    "examples/gpu_check_micro.yaml",
    "examples/gpu_check_pipeline.yaml",
    "paper/gcp_rgb_micro.yaml",
    "paper/gcp_rgb_pipeline.yaml",
    "paper/gcp_9ch_micro.yaml",
    "paper/gcp_9ch_pipeline.yaml",
    "paper/gcp_video_micro.yaml",
    "paper/gcp_video_pipeline.yaml",
];

#[test]
fn local_rgb_micro_cpu_has_one_job_per_library_with_the_58_rgb_transforms() {
    let p = plan_of("examples/local_rgb_micro_cpu.yaml");
    let rgb = Registry::get().set("rgb").unwrap();
    assert_eq!(rgb.len(), 58);
    assert_eq!(p.jobs.len(), 11);
    let libs: Vec<&str> = p.jobs.iter().map(|j| j.library.as_str()).collect();
    let python = [
        "albumentationsx",
        "albumentations",
        "opencv",
        "torchvision",
        "kornia",
        "pillow",
    ];
    let rust = [
        "image",
        "imageproc",
        "fast_image_resize",
        "kornia-rs",
        "zune-image",
    ];
    assert_eq!(libs, [&python[..], &rust[..]].concat());
    for j in &p.jobs {
        assert_eq!(j.transforms.len(), 58, "{}", j.library);
        assert_eq!(j.transforms, rgb, "{}", j.library);
        assert_eq!((j.mode, j.device), (Mode::Micro, Device::Cpu));
    }
}

#[test]
fn every_job_is_named_by_naming_from_the_resolved_config() {
    for rel in ALL {
        let cfg = resolved(rel);
        let p = plan::build(&cfg);
        let out = cfg.output.output_dir.clone().unwrap();
        let e = &cfg.execution;
        for j in &p.jobs {
            // Built here from the resolved fields, not through plan::job_key.
            let key = JobKey {
                scenario: cfg.selection.scenario.as_deref().unwrap(),
                mode: cfg.selection.mode.unwrap(),
                library: &j.library,
                // `auto` resolves to CPU for libraries the matrix lists as CPU-only.
                device: match e.device.unwrap() {
                    Device::Auto
                        if !Matrix::get()
                            .library(&j.library)
                            .unwrap()
                            .devices
                            .contains(&Device::Cuda) =>
                    {
                        Device::Cpu
                    }
                    d => d,
                },
                scope: e.pipeline_scope.unwrap().name(),
                num_items: cfg.data.num_items,
                num_runs: e.num_runs.unwrap(),
                workers: e.workers.unwrap(),
                batch_size: e.batch_size.unwrap(),
                micro_batch: e.micro_batch.unwrap(),
                instructions: e.measure == Some(augbench_core::Measure::Instructions),
            };
            assert_eq!(j.output_file, naming::result_file(&out, &key), "{rel}");
            assert_eq!(plan::job_key(&cfg, &j.library), key, "{rel}");
            assert!(j.output_file.starts_with(&out), "{rel}");
        }
    }
}

#[test]
fn expected_files_are_the_job_files_then_resolved_config_and_cells() {
    for rel in ALL {
        let cfg = resolved(rel);
        let p = plan::build(&cfg);
        let out = cfg.output.output_dir.clone().unwrap();
        let mut expected: Vec<PathBuf> = p.jobs.iter().map(|j| j.output_file.clone()).collect();
        expected.push(out.join(naming::RESOLVED_CONFIG_FILE));
        expected.push(out.join(naming::CELLS_FILE));
        assert_eq!(p.expected_files, expected, "{rel}");
        let unique: BTreeSet<&PathBuf> = p.expected_files.iter().collect();
        assert_eq!(
            unique.len(),
            p.expected_files.len(),
            "{rel}: duplicate files"
        );
    }
}

#[test]
fn jobs_carry_backend_and_env_group_from_the_matrix() {
    let m = Matrix::get();
    for rel in ALL {
        let p = plan_of(rel);
        assert!(!p.jobs.is_empty(), "{rel}");
        for j in &p.jobs {
            let s = m.scenario(&j.scenario).unwrap();
            assert_eq!(j.media, s.media, "{rel}");
            if s.is_decode() {
                let d = m.decoder(&j.library).unwrap();
                assert_eq!(j.env_group, d.env_group, "{rel}");
                assert!(s.decoders.contains(&j.library), "{rel}");
                continue;
            }
            let lib = m.library(&j.library).unwrap();
            let group = lib.env_group_for(j.mode);
            assert_eq!((j.backend, j.env_group.as_str()), (lib.backend, group));
            assert!(s.libraries.contains(&j.library), "{rel}");
        }
    }
}

#[test]
fn every_scenario_names_an_existing_curated_set() {
    let reg = Registry::get();
    for s in Matrix::get().scenarios.iter().filter(|s| !s.is_decode()) {
        let set = reg.set(&s.set);
        assert!(
            set.is_some_and(|t| !t.is_empty()),
            "{}: set {}",
            s.name,
            s.set
        );
    }
}

#[test]
fn every_matrix_library_runs_some_scenario() {
    let m = Matrix::get();
    for l in &m.libraries {
        let used = m.scenarios.iter().any(|s| s.libraries.contains(&l.name));
        assert!(used, "{} is in no scenario", l.name);
    }
}

#[test]
fn every_spec_has_a_usable_output_rule() {
    for t in &Registry::get().transforms {
        match &t.output {
            OutputRule::Same | OutputRule::Depends => {}
            OutputRule::Fixed { size } => assert!(size.iter().all(|&s| s > 0), "{}", t.name),
        }
    }
}

#[test]
fn every_scenario_and_mode_on_cpu_plans_a_nonempty_default_job_list() {
    let m = Matrix::get();
    for s in m.scenarios.iter().filter(|s| !s.is_decode()) {
        for mode in [Mode::Micro, Mode::Pipeline] {
            let text = format!(
                "version: 1\nselection:\n  scenario: {}\n  mode: {mode}\n",
                s.name
            );
            let src = Source::new(Path::new("default.yaml"), &text);
            let cfg = RunConfig::from_yaml(&text, &src.file).unwrap();
            let cfg = resolve::resolve(cfg, &src).unwrap_or_else(|e| panic!("{e}"));
            let p = plan::build(&cfg);
            assert!(!p.jobs.is_empty(), "{} {mode}", s.name);
            let n = policy::default_num_items(s.media);
            assert_eq!(cfg.data.num_items, Some(n));
            let reg = Registry::get();
            let own = format!("{}_pipeline", s.set);
            let set = match mode {
                Mode::Pipeline => reg.set(&own).or(reg.set(&s.set)),
                _ => reg.set(&s.set),
            };
            // Pipeline plans put the ceiling row (specs/recipe.yaml) first.
            let ceiling = usize::from(mode == Mode::Pipeline);
            let set_len = set.unwrap().len() + ceiling;
            assert!(p.jobs.iter().all(|j| j.transforms.len() == set_len));
        }
    }
}

#[test]
fn a_decode_scenario_plans_one_job_per_decoder_with_no_transforms() {
    let m = Matrix::get();
    for s in m.scenarios.iter().filter(|s| s.is_decode()) {
        let text = format!("version: 1\nselection:\n  scenario: {}\n", s.name);
        let src = Source::new(Path::new("default.yaml"), &text);
        let cfg = resolve::resolve(RunConfig::from_yaml(&text, &src.file).unwrap(), &src).unwrap();
        let p = plan::build(&cfg);
        let names: Vec<&str> = p.jobs.iter().map(|j| j.library.as_str()).collect();
        assert_eq!(names, s.decoders, "{}", s.name);
        assert!(
            p.jobs
                .iter()
                .all(|j| j.mode == Mode::Decode && j.transforms.is_empty())
        );
        assert!(p.jobs.iter().all(|j| j.device == Device::Cpu));
        assert_eq!(cfg.data.num_items, Some(policy::default_num_items(s.media)));
    }
}
