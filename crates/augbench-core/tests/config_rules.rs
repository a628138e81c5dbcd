//! Every validation rule of a run configuration, passing and failing, through the public
//! `RunConfig::from_yaml` + `resolve` path; located errors and hints; command-line override
//! precedence; and idempotence of resolution (seeded proptest and every example config).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failure is the test failing"
)]

use std::path::{Path, PathBuf};

use augbench_core::config::{CONFIG_VERSION, TransformSet};
use augbench_core::{
    ConfigError, Device, Matrix, Mode, Overrides, Registry, RunConfig, Schedule, Source,
};
use augbench_core::{policy, resolve};
use proptest::prelude::*;
use proptest::test_runner::RngSeed;

const FILE: &str = "cfg.yaml";

fn src(text: &str) -> Source {
    Source::new(Path::new(FILE), text)
}

/// Parses and resolves `text` as the file `cfg.yaml`.
fn check(text: &str) -> Result<RunConfig, ConfigError> {
    let cfg = RunConfig::from_yaml(text, Path::new(FILE))?;
    resolve::resolve(cfg, &src(text))
}

fn ok(text: &str) -> RunConfig {
    check(text).unwrap_or_else(|e| panic!("expected a valid config, got: {e}\n---\n{text}"))
}

fn err(text: &str) -> ConfigError {
    match check(text) {
        Ok(cfg) => panic!("expected an error, got a valid config:\n{}", cfg.to_yaml()),
        Err(e) => e,
    }
}

/// Asserts the error names the file, sits on `line`, and its message contains `needle`.
fn assert_at(e: &ConfigError, line: u64, needle: &str) {
    assert_eq!(e.file, PathBuf::from(FILE), "{e}");
    assert_eq!(e.line, Some(line), "wrong line in: {e}");
    assert!(e.column.is_some(), "no column in: {e}");
    assert!(e.message.contains(needle), "`{needle}` not in: {e}");
    assert!(!e.hint.is_empty(), "no hint in: {e}");
    let shown = e.to_string();
    assert!(shown.starts_with(&format!("{FILE}:{line}:")), "{shown}");
}

fn rgb(mode: &str, extra_selection: &str, rest: &str) -> String {
    format!(
        "version: 1\nselection:\n  scenario: image-rgb\n  mode: {mode}\n{extra_selection}{rest}"
    )
}

// ---- batched micro regime -------------------------------------------------------------------

fn batched(libraries: &str, mode: &str, items: u64) -> String {
    let sel = format!("  libraries: [{libraries}]\n");
    let rest = format!("data:\n  num_items: {items}\nexecution:\n  micro_batch: 8\n");
    rgb(mode, &sel, &rest)
}

#[test]
fn micro_batch_for_kornia_passes_and_defaults_to_per_item() {
    assert_eq!(
        ok(&batched("kornia", "micro", 64)).execution.micro_batch,
        Some(8)
    );
    let plain = ok(&rgb("micro", "", ""));
    assert_eq!(
        plain.execution.micro_batch,
        Some(policy::DEFAULT_MICRO_BATCH)
    );
}

#[test]
fn micro_batch_for_a_library_without_a_batched_regime_fails_at_its_line() {
    let e = err(&batched("kornia, pillow", "micro", 64));
    assert_at(&e, 9, "`pillow` has no batched regime");
    assert!(e.hint.contains("kornia"), "{e}");
}

#[test]
fn micro_batch_in_pipeline_mode_fails() {
    let e =
        err(&batched("kornia", "pipeline", 64).replace("micro_batch", "workers: 0\n  micro_batch"));
    assert!(e.message.contains("micro mode"), "{e}");
}

#[test]
fn micro_batch_above_num_items_fails_at_num_items() {
    assert_at(
        &err(&batched("kornia", "micro", 4)),
        7,
        "less than one batch",
    );
}

#[test]
fn micro_batch_flag_is_named_in_its_error() {
    let o = Overrides {
        micro_batch: Some(4),
        ..Overrides::default()
    };
    let text = rgb("micro", "  libraries: [pillow]\n", "");
    let e = with_overrides(&text, &o, vec![("micro_batch", "--micro-batch")]).unwrap_err();
    assert!(e.to_string().contains("--micro-batch"), "{e}");
}

#[test]
fn a_typed_run_count_or_spec_file_replaces_the_files_precision() {
    let text = rgb(
        "micro",
        "  libraries: [pillow]\n",
        "execution:\n  precision: 0.05\n  transform_budget_sec: 4\n",
    );
    let runs = Overrides {
        num_runs: Some(3),
        ..Overrides::default()
    };
    let cfg = with_overrides(&text, &runs, vec![("num_runs", "--num-runs")]).unwrap();
    assert_eq!(
        cfg.execution.precision, None,
        "the typed --num-runs is honoured"
    );
    assert_eq!(cfg.execution.transform_budget_sec, None);
    assert_eq!(cfg.execution.num_runs, Some(3));
    let mut file = RunConfig::from_yaml(&text, Path::new(FILE)).unwrap();
    let spec = Overrides {
        spec: Some("my_spec.py".into()),
        ..Overrides::default()
    };
    spec.apply(&mut file);
    assert_eq!(
        file.execution.precision, None,
        "a spec file runs num_runs runs"
    );
    // Nothing typed: the file's precision stands.
    let kept = with_overrides(&text, &Overrides::default(), vec![]).unwrap();
    assert_eq!(kept.execution.precision, Some(0.05));
}

// ---- decode scenario ---------------------------------------------------------------------------

fn decode(extra_selection: &str, rest: &str) -> String {
    format!("version: 1\nselection:\n  scenario: video-decode-16f\n{extra_selection}{rest}")
}

#[test]
fn decode_defaults_to_every_decoder_of_the_scenario_in_decode_mode() {
    let cfg = ok(&decode("", ""));
    let scenario = Matrix::get().scenario("video-decode-16f").unwrap();
    assert_eq!(cfg.selection.mode, Some(Mode::Decode));
    assert_eq!(cfg.selection.decoders.as_ref(), Some(&scenario.decoders));
    assert_eq!(cfg.selection.libraries, None);
    assert_eq!(cfg.selection.transform_set, None);
    assert_eq!(cfg.execution.processes, Some(policy::DECODE_PROCESSES));
    assert_eq!(ok(&cfg.to_yaml()), cfg, "resolving again changes nothing");
    let by_mode = ok("version: 1\nselection:\n  mode: decode\n");
    assert_eq!(
        by_mode.selection.scenario.as_deref(),
        Some("video-decode-16f")
    );
}

#[test]
fn decode_refuses_libraries_transforms_and_spec_at_their_line() {
    for key in [
        "libraries: [kornia]",
        "transforms: [Resize]",
        "transform_set: paper",
        "spec: s.py",
    ] {
        let e = err(&decode(&format!("  {key}\n"), ""));
        assert_at(&e, 4, "decodes clips and applies no transform");
        assert!(e.hint.contains("opencv"), "{e}");
    }
}

#[test]
fn decode_refuses_another_mode_an_unknown_decoder_and_an_empty_list() {
    assert_at(
        &err(&decode("  mode: micro\n", "")),
        4,
        "measures video decoders",
    );
    let e = err(&decode("  decoders: [decrod]\n", ""));
    assert_at(&e, 4, "unknown decoder `decrod`");
    assert!(e.hint.contains("did you mean `decord`"), "{e}");
    assert_at(
        &err(&decode("  decoders: []\n", "")),
        4,
        "no decoders selected",
    );
}

#[test]
fn decode_refuses_cuda_processes_workers_threads_and_resume() {
    let cases = [
        ("execution:\n  device: cuda\n", "run on the CPU"),
        ("execution:\n  processes: 3\n", "worker process"),
        ("execution:\n  workers: 2\n", "own process"),
        (
            "execution:\n  thread_policy: pipeline-default\n",
            "one thread",
        ),
        ("execution:\n  resume: true\n", "cannot resume"),
    ];
    for (rest, needle) in cases {
        assert_at(&err(&decode("", rest)), 5, needle);
    }
}

#[test]
fn transform_scenarios_refuse_decoders_and_decode_mode() {
    let e = err(&rgb("micro", "  decoders: [opencv]\n", ""));
    assert_at(&e, 5, "measures libraries, not decoders");
    let e = err(&rgb("decode", "", ""));
    assert_at(&e, 4, "`mode: decode` measures video decoders");
    assert!(e.hint.contains("video-decode-16f"), "{e}");
}

// ---- equivalence check in a run ----------------------------------------------------------------

const CHECK_ON: &str = "  check_equivalence: true\n";

#[test]
fn check_equivalence_defaults_from_policy_and_passes_on_rgb_micro_cpu() {
    let plain = ok(&rgb("micro", "", ""));
    assert_eq!(
        plain.execution.check_equivalence,
        Some(policy::DEFAULT_CHECK_EQUIVALENCE)
    );
    let on = ok(&rgb("micro", "", &format!("execution:\n{CHECK_ON}")));
    assert_eq!(on.execution.check_equivalence, Some(true));
    assert_eq!(
        ok(&on.to_yaml()),
        on,
        "resolving the resolved config changes nothing"
    );
    let off = ok(&rgb(
        "pipeline",
        "",
        "execution:\n  check_equivalence: false\n",
    ));
    assert_eq!(off.execution.check_equivalence, Some(false));
}

#[test]
fn check_equivalence_is_refused_where_its_labels_would_be_wrong() {
    let scenario = |name: &str| {
        format!("version: 1\nselection:\n  scenario: {name}\n  mode: micro\nexecution:\n{CHECK_ON}")
    };
    let cases = [
        (scenario("image-9ch"), 6, "scenario `image-9ch`"),
        (scenario("video-16f"), 6, "scenario `video-16f`"),
        (
            rgb("pipeline", "", &format!("execution:\n{CHECK_ON}")),
            6,
            "measures pipelines",
        ),
        (
            rgb(
                "micro",
                "",
                &format!("execution:\n  device: cuda\n{CHECK_ON}"),
            ),
            7,
            "not `cpu`",
        ),
        (
            batched("kornia", "micro", 64)
                .replace("micro_batch: 8\n", &format!("micro_batch: 8\n{CHECK_ON}")),
            10,
            "batched regime",
        ),
    ];
    for (text, line, needle) in cases {
        let e = err(&text);
        assert_at(&e, line, needle);
        assert!(
            e.message
                .starts_with("`check_equivalence: true` does not apply here"),
            "{e}"
        );
        assert!(e.hint.contains("augbench check equivalence"), "{e}");
    }
}

#[test]
fn check_equivalence_is_refused_with_a_spec_file_and_in_the_cloud() {
    let spec = rgb(
        "micro",
        "  spec: my_spec.py\n",
        &format!("execution:\n{CHECK_ON}"),
    );
    assert_at(&err(&spec), 7, "spec file");
    let cloud = rgb(
        "micro",
        "",
        &format!(
            "execution:\n{CHECK_ON}output:\n  gcs_results_uri: gs://b/r\ncloud:\n  provider: gcp\n"
        ),
    );
    assert_at(&err(&cloud), 6, "cloud run");
}

// ---- micro needs workers 0 -------------------------------------------------------------------

#[test]
fn micro_with_workers_fails_at_the_workers_line() {
    let text = rgb("micro", "", "execution:\n  num_runs: 2\n  workers: 2\n");
    assert_at(&err(&text), 7, "micro mode needs `workers: 0`");
}

#[test]
fn micro_with_zero_workers_and_pipeline_with_workers_pass() {
    let cfg = ok(&rgb("micro", "", "execution:\n  workers: 0\n"));
    assert_eq!(cfg.execution.workers, Some(0));
    let cfg = ok(&rgb("pipeline", "", "execution:\n  workers: 2\n"));
    assert_eq!(cfg.execution.workers, Some(2));
}

#[test]
fn default_workers_follow_policy_per_mode() {
    let micro = ok(&rgb("micro", "", ""));
    assert_eq!(
        micro.execution.workers,
        Some(policy::default_workers(Mode::Micro))
    );
    let pipe = ok(&rgb("pipeline", "", ""));
    assert_eq!(
        pipe.execution.workers,
        Some(policy::default_workers(Mode::Pipeline))
    );
}

// ---- multichannel: images only, channels a multiple of 3 -------------------------------------

#[test]
fn multichannel_video_fails() {
    let text = "version: 1\nselection:\n  scenario: video-16f\n  multichannel: true\n";
    assert_at(&err(text), 4, "images only");
}

#[test]
fn video_with_nine_channels_fails() {
    let text = "version: 1\nselection:\n  scenario: video-16f\ndata:\n  num_channels: 9\n";
    let e = err(text);
    assert!(e.message.contains("images only"), "{e}");
}

#[test]
fn multichannel_images_pass() {
    let text = "version: 1\nselection:\n  scenario: image-9ch\n  multichannel: true\ndata:\n  num_channels: 9\n";
    let cfg = ok(text);
    assert_eq!(cfg.data.num_channels, Some(9));
    assert_eq!(cfg.selection.multichannel, Some(true));
    let cfg = ok("version: 1\nselection:\n  scenario: image-9ch\n");
    assert_eq!(
        cfg.selection.multichannel,
        Some(true),
        "filled from scenario"
    );
    let cfg = ok("version: 1\nselection:\n  scenario: image-9ch\ndata:\n  num_channels: 6\n");
    assert_eq!(cfg.data.num_channels, Some(6));
}

#[test]
fn channels_not_a_multiple_of_three_fail_at_their_line() {
    for bad in [8, 4, 0] {
        let text = format!(
            "version: 1\nselection:\n  scenario: image-9ch\ndata:\n  num_items: 10\n  num_channels: {bad}\n"
        );
        assert_at(&err(&text), 6, "multiple of 3");
    }
}

#[test]
fn nine_channels_without_scenario_select_the_9ch_scenario() {
    let cfg = ok("version: 1\ndata:\n  num_channels: 9\n");
    assert_eq!(cfg.selection.scenario.as_deref(), Some("image-9ch"));
}

// ---- transform_set needs a scenario -----------------------------------------------------------

#[test]
fn transform_set_without_scenario_fails() {
    let text = "version: 1\nselection:\n  mode: micro\n  transform_set: paper\n";
    let e = err(text);
    assert_at(&e, 4, "needs a scenario");
    for s in Matrix::get().scenario_names() {
        assert!(e.hint.contains(s), "hint should list {s}: {e}");
    }
}

#[test]
fn transform_set_with_scenario_passes_and_paper_is_the_default() {
    let cfg = ok("version: 1\nselection:\n  scenario: video-16f\n  transform_set: all\n");
    assert_eq!(cfg.selection.transform_set, Some(TransformSet::All));
    let cfg = ok("version: 1\n");
    assert_eq!(cfg.selection.transform_set, Some(TransformSet::Paper));
    assert_eq!(cfg.selection.scenario.as_deref(), Some("image-rgb"));
}

// ---- libraries support the device, the mode and the scenario ---------------------------------

#[test]
fn library_without_the_device_fails_and_names_its_devices() {
    let text = rgb(
        "micro",
        "  libraries: [torchvision, pillow]\n",
        "execution:\n  device: cuda\n",
    );
    let e = err(&text);
    assert_at(&e, 5, "`pillow` does not run on device `cuda`");
    assert!(e.hint.contains("cpu") && e.hint.contains("auto"), "{e}");
}

#[test]
fn device_auto_and_supported_devices_pass() {
    let libs = "  libraries: [torchvision, pillow]\n";
    let cfg = ok(&rgb("micro", libs, "execution:\n  device: auto\n"));
    assert_eq!(cfg.execution.device, Some(Device::Auto));
    let cuda = "  libraries: [torchvision, kornia]\n";
    let cfg = ok(&rgb("micro", cuda, "execution:\n  device: cuda\n"));
    assert_eq!(cfg.execution.device, Some(Device::Cuda));
}

#[test]
fn default_libraries_on_cuda_are_only_those_with_cuda() {
    let cfg = ok(&rgb("pipeline", "", "execution:\n  device: cuda\n"));
    let m = Matrix::get();
    let libs = cfg.selection.libraries.unwrap_or_default();
    assert!(!libs.is_empty());
    for l in &libs {
        let info = m.library(l).unwrap();
        assert!(info.devices.contains(&Device::Cuda), "{l}");
        assert!(info.modes.contains(&Mode::Pipeline), "{l}");
    }
}

#[test]
fn library_outside_the_scenario_fails_and_lists_the_scenario_libraries() {
    let text = "version: 1\nselection:\n  scenario: image-9ch\n  libraries: [kornia, pillow]\n";
    let e = err(text);
    assert_at(&e, 4, "`pillow` does not run scenario `image-9ch`");
    for l in &Matrix::get().scenario("image-9ch").unwrap().libraries {
        assert!(e.hint.contains(l.as_str()), "hint should list {l}: {e}");
    }
}

#[test]
fn library_without_the_mode_fails() {
    let text = rgb(
        "micro",
        "  libraries: [dali]\n",
        "execution:\n  device: cuda\n",
    );
    let e = err(&text);
    assert_at(&e, 5, "has no micro mode");
    assert!(e.hint.contains("dali runs in mode pipeline"), "{e}");
}

#[test]
fn a_library_kept_out_of_a_scenario_says_why() {
    let text =
        "version: 1\nselection:\n  scenario: video-16f\n  mode: pipeline\n  libraries: [dali]\n";
    let e = err(text);
    assert_at(
        &e,
        5,
        "`dali` does not run scenario `video-16f`: DALI's video readers",
    );
    assert!(e.message.contains("frame files"), "{e}");
}

#[test]
fn dali_runs_pipeline_rows_on_the_cpu() {
    let text = rgb(
        "pipeline",
        "  libraries: [dali]\n",
        "execution:\n  device: cpu\n",
    );
    assert!(check(&text).is_ok());
}

#[test]
fn dali_has_no_variants() {
    let text = rgb(
        "pipeline",
        "  variants:\n    - library: dali\n      pin: nvidia-dali-cuda120==2.3.0\n",
        "",
    );
    assert!(err(&text).message.contains("pipeline backend"));
}

#[test]
fn empty_library_list_fails() {
    assert_at(
        &err(&rgb("micro", "  libraries: []\n", "")),
        5,
        "no libraries",
    );
}

#[test]
fn media_contradicting_the_scenario_fails() {
    let text = "version: 1\nselection:\n  scenario: video-16f\n  media: image\n";
    assert_at(&err(text), 4, "video");
}

// ---- data source -----------------------------------------------------------------------------

#[test]
fn local_run_with_gcs_uri_but_no_data_dir_fails() {
    let text = "version: 1\ndata:\n  num_items: 5\n  gcs_uri: gs://b/val.tar\n";
    assert_at(&err(text), 4, "gcs_uri");
}

#[test]
fn local_run_with_data_dir_and_gcs_uri_passes_without_synthetic_seed() {
    let text = "version: 1\ndata:\n  data_dir: media\n  gcs_uri: gs://b/val.tar\n";
    let cfg = ok(text);
    assert_eq!(cfg.data.data_dir, Some(PathBuf::from("media")));
    assert_eq!(cfg.data.synthetic_seed, None);
}

#[test]
fn local_run_without_data_dir_falls_back_to_synthetic() {
    let cfg = ok("version: 1\n");
    assert_eq!(cfg.data.data_dir, None);
    assert_eq!(cfg.data.synthetic_seed, Some(policy::SYNTH_SEED));
    let cfg = ok("version: 1\ndata:\n  synthetic_seed: 9\n");
    assert_eq!(cfg.data.synthetic_seed, Some(9), "a given seed is kept");
}

// ---- cloud -----------------------------------------------------------------------------------

const CLOUD_DATA: &str = "data:\n  gcs_uri: gs://b/val.tar\n";
const CLOUD_OUT: &str = "output:\n  gcs_results_uri: gs://b/results\n";
const CLOUD: &str = "cloud:\n  provider: gcp\n  zone: us-central1-a\n";

#[test]
fn cloud_needs_a_dataset() {
    let text = format!("version: 1\n{CLOUD_OUT}{CLOUD}");
    assert_at(&err(&text), 4, "data.gcs_uri");
    let staged = format!("version: 1\ndata:\n  data_dir: media\n{CLOUD_OUT}{CLOUD}");
    assert_eq!(ok(&staged).data.data_dir, Some(PathBuf::from("media")));
}

#[test]
fn cloud_needs_gcs_results_uri_attached_or_not() {
    let text = format!("version: 1\n{CLOUD_DATA}{CLOUD}");
    assert_at(&err(&text), 4, "output.gcs_results_uri");
    let attached = format!("version: 1\n{CLOUD_DATA}{CLOUD}  attached: true\n");
    assert_at(&err(&attached), 4, "output.gcs_results_uri");
}

#[test]
fn cloud_uris_must_be_gs() {
    let text = format!("version: 1\ndata:\n  gcs_uri: /tmp/val.tar\n{CLOUD_OUT}{CLOUD}");
    assert_at(&err(&text), 3, "gs://");
    let text = format!("version: 1\n{CLOUD_DATA}output:\n  gcs_results_uri: s3://b\n{CLOUD}");
    assert_at(&err(&text), 5, "gs://");
}

#[test]
fn cloud_needs_a_location_and_a_consistent_zone() {
    let text = format!("version: 1\n{CLOUD_DATA}{CLOUD_OUT}cloud:\n  provider: gcp\n");
    assert_at(&err(&text), 6, "cloud.region");
    let text = format!("version: 1\n{CLOUD_DATA}{CLOUD_OUT}{CLOUD}  region: europe-west4\n");
    assert_at(&err(&text), 8, "not in region");
}

#[test]
fn cloud_with_both_uris_fills_a_cpu_shape_and_no_synthetic_seed() {
    let cfg = ok(&format!("version: 1\n{CLOUD_DATA}{CLOUD_OUT}{CLOUD}"));
    assert!(cfg.is_cloud());
    assert_eq!(cfg.data.synthetic_seed, None);
    let c = cfg.cloud.unwrap();
    assert_eq!(c.region.as_deref(), Some("us-central1"));
    assert_eq!(
        c.machine_type.as_deref(),
        Some(policy::CLOUD_CPU_MACHINE_TYPE)
    );
    assert_eq!(c.gpu_type, None);
    assert_eq!(c.venv_cache_uri.as_deref(), Some("gs://b/results/envs"));
    assert_eq!(c.parallelism, c.shards);
}

#[test]
fn gpu_type_on_a_cpu_only_run_is_refused_at_its_line() {
    let text = format!(
        "version: 1\nselection:\n  libraries: [albumentationsx, pillow]\n{CLOUD_DATA}{CLOUD_OUT}{CLOUD}  gpu_type: nvidia-l4\n"
    );
    assert_at(&err(&text), 11, "CPU-only");
    let auto = text.replace("version: 1\n", "version: 1\nexecution:\n  device: auto\n");
    assert_at(&err(&auto), 13, "CPU-only");
}

#[test]
fn cuda_needs_a_gpu_shape_and_gets_the_gpu_machine() {
    let base = format!(
        "version: 1\nselection:\n  libraries: [kornia]\nexecution:\n  device: cuda\n{CLOUD_DATA}{CLOUD_OUT}{CLOUD}"
    );
    assert_at(&err(&base), 5, "GPU machine shape");
    let cfg = ok(&format!("{base}  gpu_type: nvidia-l4\n"));
    let c = cfg.cloud.unwrap();
    assert_eq!(
        c.machine_type.as_deref(),
        Some(policy::CLOUD_GPU_MACHINE_TYPE)
    );
    assert_eq!(c.gpu_count, Some(policy::CLOUD_GPU_COUNT));
}

#[test]
fn shard_counts_are_checked_against_the_schedule() {
    let libs = "selection:\n  libraries: [albumentationsx, pillow]\n  transforms: [HorizontalFlip, Resize]\n";
    let head = format!("version: 1\n{libs}{CLOUD_DATA}{CLOUD_OUT}{CLOUD}");
    assert_at(
        &err(&format!("{head}  shards: 3\n")),
        12,
        "at least one transform",
    );
    assert_at(&err(&format!("{head}  shards: 0\n")), 12, "at least 1");
    assert_eq!(
        ok(&format!("{head}  shards: 2\n")).cloud.unwrap().shards,
        Some(2)
    );
    let seq = head.replace(
        CLOUD_DATA,
        &format!("execution:\n  schedule: sequential\n{CLOUD_DATA}"),
    );
    assert_eq!(
        ok(&seq).cloud.unwrap().shards,
        Some(2),
        "one library per shard"
    );
    assert_at(
        &err(&format!("{seq}  shards: 1\n")),
        14,
        "one library per shard",
    );
}

#[test]
fn every_paper_micro_config_asks_for_a_cpu_shape() {
    for path in config_files() {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if !name.starts_with("gcp_") || !name.contains("micro") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let cfg = RunConfig::from_yaml(&text, &path).unwrap();
        let c = resolve::resolve(cfg, &Source::new(&path, &text))
            .unwrap()
            .cloud
            .unwrap();
        assert_eq!(c.gpu_type, None, "{name}");
        assert_eq!(
            c.machine_type.as_deref(),
            Some(policy::CLOUD_CPU_MACHINE_TYPE),
            "{name}"
        );
    }
}

// ---- names: unknown keys, libraries, transforms, scenarios, variants --------------------------

#[test]
fn unknown_key_is_located_and_suggests_the_nearest() {
    let text = "version: 1\ndata:\n  num_itms: 10\n";
    let e = err(text);
    assert_eq!((e.line, e.column), (Some(3), Some(3)), "{e}");
    assert!(e.message.contains("num_itms"), "{e}");
    assert!(e.hint.contains("did you mean `num_items`?"), "{e}");
    assert!(e.to_string().starts_with("cfg.yaml:3:3: "), "{e}");
}

#[test]
fn unknown_top_level_and_deep_keys_suggest_the_nearest() {
    let e = err("version: 1\nselecton:\n  mode: micro\n");
    assert_eq!(e.line, Some(2), "{e}");
    assert!(e.hint.contains("did you mean `selection`?"), "{e}");
    let e = err("version: 1\nexecution:\n  num_runs: 2\n  warmup:\n    windw: 3\n");
    assert_eq!((e.line, e.column), (Some(5), Some(5)), "{e}");
    assert!(e.hint.contains("did you mean `window`?"), "{e}");
}

#[test]
fn unknown_enum_value_suggests_the_nearest() {
    let e = err("version: 1\nselection:\n  mode: mikro\n");
    assert_eq!(e.line, Some(3), "{e}");
    assert!(e.hint.contains("did you mean `micro`?"), "{e}");
}

#[test]
fn unknown_library_lists_every_valid_library() {
    let e = err(&rgb(
        "micro",
        "  libraries: [kornia, albumentations_x]\n",
        "",
    ));
    assert_at(&e, 5, "unknown library `albumentations_x`");
    for l in Matrix::get().library_names() {
        assert!(
            e.hint.contains(&format!("`{l}`")),
            "hint should list {l}: {e}"
        );
    }
}

#[test]
fn unknown_transform_suggests_the_nearest() {
    let e = err(&rgb("micro", "  transforms: [Resize, HorizontalFlp]\n", ""));
    assert_at(&e, 5, "unknown transform `HorizontalFlp`");
    assert!(e.hint.contains("did you mean `HorizontalFlip`?"), "{e}");
}

#[test]
fn known_transforms_pass_and_replace_the_set() {
    let cfg = ok(&rgb(
        "micro",
        "  transforms: [Resize, HorizontalFlip]\n",
        "",
    ));
    assert_eq!(
        augbench_core::resolve::selected_transforms(&cfg),
        ["Resize", "HorizontalFlip"]
    );
    assert_eq!(cfg.selection.transform_set, None);
}

#[test]
fn a_pipeline_list_may_place_its_ceiling_row_and_a_micro_list_may_not() {
    let ceiling = &augbench_catalog::recipe::Recipe::get().ceiling;
    let list = format!("  transforms: [HorizontalFlip, {ceiling}]\n");
    let cfg = ok(&rgb("pipeline", &list, ""));
    assert_eq!(
        augbench_core::resolve::selected_transforms(&cfg),
        ["HorizontalFlip", ceiling.as_str()],
        "kept where the list puts it"
    );
    let cfg = ok(&rgb("pipeline", "  transforms: [HorizontalFlip]\n", ""));
    assert_eq!(
        augbench_core::resolve::selected_transforms(&cfg),
        [ceiling.as_str(), "HorizontalFlip"],
        "first when the list does not name it"
    );
    let e = err(&rgb("micro", &list, ""));
    assert_at(&e, 5, &format!("unknown transform `{ceiling}`"));
}

#[test]
fn unknown_scenario_suggests_the_nearest() {
    let e = err("version: 1\nselection:\n  scenario: image-rbg\n");
    assert_at(&e, 3, "unknown scenario `image-rbg`");
    assert!(e.hint.contains("did you mean `image-rgb`?"), "{e}");
}

// ---- version and counts ----------------------------------------------------------------------

#[test]
fn unsupported_version_fails_at_its_line() {
    let e = err("# a comment\nversion: 2\n");
    assert_at(&e, 2, "unsupported config version 2");
    assert!(
        e.hint.contains(&format!("version: {CONFIG_VERSION}")),
        "{e}"
    );
}

#[test]
fn missing_version_fails() {
    let e = err("selection:\n  mode: micro\n");
    assert!(e.message.contains("version"), "{e}");
}

#[test]
fn zero_counts_fail_at_their_line() {
    let cases = [
        ("data:\n  num_items: 0\n", "num_items"),
        ("execution:\n  num_runs: 0\n", "num_runs"),
        ("execution:\n  processes: 0\n", "processes"),
        ("execution:\n  batch_size: 0\n", "batch_size"),
    ];
    for (section, key) in cases {
        let text = format!("version: 1\n{section}");
        assert_at(&err(&text), 3, &format!("`{key}` must be at least 1"));
    }
}

#[test]
fn a_precision_below_the_noise_floor_fails_at_its_line_naming_the_smallest_that_works() {
    let floor = policy::RERUN_DRIFT_FLOOR;
    let text = format!("version: 1\nexecution:\n  precision: {}\n", floor / 2.0);
    let e = err(&text);
    assert_at(&e, 3, "below the noise floor");
    let smallest = format!("smallest precision that can be reached is {floor}");
    assert!(e.to_string().contains(&smallest), "{e}");
    let cfg = ok(&format!("version: 1\nexecution:\n  precision: {floor}\n"));
    assert_eq!(cfg.execution.precision, Some(floor));
}

#[test]
fn a_budget_too_small_for_the_first_rounds_fails_at_its_line_naming_the_smallest() {
    let text = "version: 1\nexecution:\n  processes: 4\n  min_time: 0.5\n  precision: 0.05\n  transform_budget_sec: 1\n";
    let e = err(text);
    assert_at(&e, 6, "cannot hold one process's first");
    let smallest = 4.0 * policy::PRECISION_MIN_ROUNDS as f64 * 0.5;
    let hint = format!("the smallest budget that works here is {smallest} s");
    assert!(e.to_string().contains(&hint), "{e}");
    let fits = text.replace(
        "transform_budget_sec: 1\n",
        &format!("transform_budget_sec: {smallest}\n"),
    );
    assert_eq!(ok(&fits).execution.transform_budget_sec, Some(smallest));
}

#[test]
fn precision_must_be_a_fraction_and_the_budget_positive() {
    for bad in ["0", "1", "-0.1", "1.5"] {
        let text = format!("version: 1\nexecution:\n  precision: {bad}\n");
        assert_at(&err(&text), 3, "precision");
    }
    for bad in ["0", "-5", ".nan"] {
        let text =
            format!("version: 1\nexecution:\n  precision: 0.03\n  transform_budget_sec: {bad}\n");
        assert_at(&err(&text), 4, "transform_budget_sec");
    }
    let text = "version: 1\nexecution:\n  transform_budget_sec: 20\n";
    assert_at(&err(text), 3, "no `precision` is set");
    let cfg = ok("version: 1\nexecution:\n  precision: 0.02\n");
    assert_eq!(cfg.execution.precision, Some(0.02));
    assert_eq!(
        cfg.execution.transform_budget_sec,
        Some(policy::DEFAULT_TRANSFORM_BUDGET_SEC),
        "the budget defaults from policy"
    );
}

#[test]
fn ones_pass() {
    let text = "version: 1\ndata:\n  num_items: 1\nexecution:\n  num_runs: 1\n  processes: 1\n  batch_size: 1\n";
    let cfg = ok(text);
    assert_eq!(cfg.data.num_items, Some(1));
}

// ---- override precedence ---------------------------------------------------------------------

const FILE_WITH_VALUES: &str = "version: 1
selection:
  scenario: image-rgb
  mode: pipeline
  libraries: [kornia]
  transforms: [Resize]
data:
  data_dir: file_media
  num_items: 100
execution:
  num_runs: 3
  device: cpu
  workers: 2
  batch_size: 16
  refresh_requirements: true
  resume: false
output:
  output_dir: file_out
";

fn with_overrides(
    text: &str,
    o: &Overrides,
    cli_keys: Vec<(&'static str, &'static str)>,
) -> Result<RunConfig, ConfigError> {
    let mut cfg = RunConfig::from_yaml(text, Path::new(FILE))?;
    o.apply(&mut cfg);
    let mut s = src(text);
    s.cli_keys = cli_keys;
    resolve::resolve(cfg, &s)
}

fn every_override() -> Overrides {
    Overrides {
        data_dir: Some("flag_media".into()),
        annotations: None,
        targets: None,
        output: Some("flag_out".into()),
        libraries: Some(vec!["torchvision".into(), "albumentationsx".into()]),
        decoders: None,
        transforms: Some(vec!["HorizontalFlip".into()]),
        transform_set: Some(TransformSet::All),
        spec: Some("my_spec.py".into()),
        num_items: Some(7),
        clip_length: Some(8),
        num_runs: Some(9),
        precision: Some(0.04),
        transform_budget_sec: Some(12.0),
        device: Some(Device::Auto),
        workers: Some(6),
        batch_size: Some(8),
        micro_batch: None,
        schedule: Some(Schedule::Sequential),
        measure: None,
        variants: None,
        baseline: None,
        no_refresh_requirements: true,
        resume: true,
    }
}

#[test]
fn untyped_flags_leave_the_file_values() {
    let plain = ok(FILE_WITH_VALUES);
    let none = with_overrides(FILE_WITH_VALUES, &Overrides::default(), vec![]).unwrap();
    assert_eq!(none, plain);
    assert_eq!(none.data.num_items, Some(100));
    assert_eq!(none.execution.workers, Some(2));
    assert_eq!(none.execution.refresh_requirements, Some(true));
    assert_eq!(none.output.output_dir, Some(PathBuf::from("file_out")));
}

#[test]
fn typed_flags_win_over_the_file() {
    // The file is a pipeline config, which takes no spec file nor a precision (covered by their
    // own rules; the precision flags are checked on a micro file below).
    let o = Overrides {
        spec: None,
        precision: None,
        transform_budget_sec: None,
        ..every_override()
    };
    let cfg = with_overrides(FILE_WITH_VALUES, &o, vec![]).unwrap();
    assert_eq!(cfg.data.data_dir, o.data_dir);
    assert_eq!(cfg.output.output_dir, o.output);
    assert_eq!(cfg.selection.libraries, o.libraries);
    assert_eq!(cfg.selection.transforms, o.transforms);
    assert_eq!(cfg.selection.transform_set, o.transform_set);
    assert_eq!(cfg.selection.spec, o.spec);
    assert_eq!(cfg.data.num_items, Some(7));
    assert_eq!(cfg.data.clip_length, Some(8));
    assert_eq!(cfg.execution.num_runs, Some(9));
    assert_eq!(cfg.execution.device, Some(Device::Auto));
    assert_eq!(cfg.execution.workers, Some(6));
    assert_eq!(cfg.execution.batch_size, Some(8));
    assert_eq!(cfg.execution.schedule, Some(Schedule::Sequential));
    assert_eq!(cfg.execution.refresh_requirements, Some(false));
    assert_eq!(cfg.execution.resume, Some(true));
    let e = every_override();
    let precise = Overrides {
        precision: e.precision,
        transform_budget_sec: e.transform_budget_sec,
        ..Overrides::default()
    };
    let cfg = with_overrides(&rgb("micro", "", ""), &precise, vec![]).unwrap();
    assert_eq!(cfg.execution.precision, Some(0.04));
    assert_eq!(cfg.execution.transform_budget_sec, Some(12.0));
}

#[test]
fn a_precision_is_refused_where_nothing_reads_it() {
    for (rest, key) in [
        (
            "execution:\n  precision: 0.05\n  schedule: sequential\n",
            "schedule",
        ),
        ("execution:\n  precision: 0.05\n", "mode"),
    ] {
        let mode = if key == "mode" { "pipeline" } else { "micro" };
        let err = with_overrides(&rgb(mode, "", rest), &Overrides::default(), vec![]).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("interleaved micro schedule"), "{key}: {text}");
    }
}

#[test]
fn one_typed_flag_changes_only_its_field() {
    let plain = ok(FILE_WITH_VALUES);
    let o = Overrides {
        num_items: Some(7),
        ..Overrides::default()
    };
    let cfg = with_overrides(FILE_WITH_VALUES, &o, vec![("num_items", "--num-items")]).unwrap();
    let mut expected = plain;
    expected.data.num_items = Some(7);
    assert_eq!(cfg, expected);
}

#[test]
fn errors_on_overridden_keys_name_the_flag() {
    let text = rgb("micro", "", "execution:\n  workers: 0\n");
    let o = Overrides {
        workers: Some(3),
        ..Overrides::default()
    };
    let e = with_overrides(&text, &o, vec![("workers", "--workers")]).unwrap_err();
    assert!(
        e.message.contains("micro mode needs `workers: 0`, got 3"),
        "{e}"
    );
    assert!(e.message.contains("(set by --workers)"), "{e}");
    assert_eq!(e.line, None, "a flag has no line in the file: {e}");

    let o = Overrides {
        num_items: Some(0),
        ..Overrides::default()
    };
    let e = with_overrides(&text, &o, vec![("num_items", "--num-items")]).unwrap_err();
    assert!(e.message.contains("(set by --num-items)"), "{e}");

    let o = Overrides {
        libraries: Some(vec!["pilow".into()]),
        ..Overrides::default()
    };
    let e = with_overrides(&text, &o, vec![("libraries", "--libraries")]).unwrap_err();
    assert!(e.message.contains("(set by --libraries)"), "{e}");
    assert!(e.hint.contains("did you mean `pillow`?"), "{e}");

    let o = Overrides {
        precision: Some(0.03),
        transform_budget_sec: Some(0.0),
        ..Overrides::default()
    };
    let keys = vec![
        ("precision", "--precision"),
        ("transform_budget_sec", "--transform-budget"),
    ];
    let e = with_overrides(&text, &o, keys).unwrap_err();
    assert!(e.message.contains("(set by --transform-budget)"), "{e}");
}

#[test]
fn errors_on_file_keys_do_not_blame_a_flag() {
    let text = rgb("micro", "", "execution:\n  workers: 2\n");
    let o = Overrides {
        num_items: Some(7),
        ..Overrides::default()
    };
    let e = with_overrides(&text, &o, vec![("num_items", "--num-items")]).unwrap_err();
    assert!(!e.message.contains("set by"), "{e}");
    assert_eq!(e.line, Some(6), "{e}");
}

// ---- idempotence -----------------------------------------------------------------------------

/// resolve::resolve(parse(to_yaml(resolved))) == resolved.
fn assert_idempotent(resolved: &RunConfig) {
    let text = resolved.to_yaml();
    let again = RunConfig::from_yaml(&text, Path::new("resolved.yaml"))
        .and_then(|c| resolve::resolve(c, &Source::new(Path::new("resolved.yaml"), &text)))
        .unwrap_or_else(|e| panic!("resolved config does not resolve: {e}\n---\n{text}"));
    assert_eq!(&again, resolved, "---\n{text}");
}

fn config_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs");
    let mut files = Vec::new();
    for sub in ["examples", "paper"] {
        for entry in std::fs::read_dir(root.join(sub)).unwrap() {
            let p = entry.unwrap().path();
            if p.extension().is_some_and(|e| e == "yaml") {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

#[test]
fn every_example_config_resolves_idempotently() {
    let files = config_files();
    assert!(files.len() >= 5, "example configs missing: {files:?}");
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        if augbench_core::production::is_production_config(&text) {
            continue; // read by `production::load` (configs_validate.rs)
        }
        let cfg = RunConfig::from_yaml(&text, &path).unwrap();
        let resolved =
            resolve::resolve(cfg, &Source::new(&path, &text)).unwrap_or_else(|e| panic!("{e}"));
        assert_idempotent(&resolved);
    }
}

/// A valid config, as YAML text, from a few choices.
#[derive(Debug, Clone)]
struct Choice {
    scenario: usize,
    pipeline: bool,
    device: Device,
    library_mask: u16,
    num_items: Option<u64>,
    num_runs: Option<u64>,
    transforms: Option<Vec<usize>>,
    all_transforms: bool,
    data_dir: bool,
    cloud: Option<bool>,
    batch_size: Option<u64>,
}

fn choice() -> impl Strategy<Value = Choice> {
    let device = prop_oneof![Just(Device::Cpu), Just(Device::Cuda), Just(Device::Auto)];
    (
        (0usize..3, any::<bool>(), device, any::<u16>()),
        (
            proptest::option::of(1u64..5000),
            proptest::option::of(1u64..20),
        ),
        (
            proptest::option::of(proptest::collection::vec(0usize..500, 1..5)),
            any::<bool>(),
        ),
        (
            any::<bool>(),
            proptest::option::of(any::<bool>()),
            proptest::option::of(1u64..256),
        ),
    )
        .prop_map(|((s, p, d, m), (n, r), (t, all), (dd, c, b))| Choice {
            scenario: s,
            pipeline: p,
            device: d,
            library_mask: m,
            num_items: n,
            num_runs: r,
            transforms: t,
            all_transforms: all,
            data_dir: dd,
            cloud: c,
            batch_size: b,
        })
}

fn opt_line(out: &mut String, key: &str, v: Option<impl std::fmt::Display>) {
    if let Some(v) = v {
        out.push_str(&format!("  {key}: {v}\n"));
    }
}

/// `name:` and its lines, or nothing when it has none (an empty section is YAML null).
fn section(name: &str, body: &str) -> String {
    if body.is_empty() {
        String::new()
    } else {
        format!("{name}:\n{body}")
    }
}

fn render(c: &Choice) -> String {
    let m = Matrix::get();
    let scenario = &m.scenarios[c.scenario % m.scenarios.len()];
    let mode = if c.pipeline {
        Mode::Pipeline
    } else {
        Mode::Micro
    };
    let libs: Vec<&str> = scenario
        .libraries
        .iter()
        .enumerate()
        .filter(|(i, _)| c.library_mask & (1 << i) != 0)
        .filter_map(|(_, l)| m.library(l))
        .filter(|l| l.modes.contains(&mode) && l.supports_device(c.device))
        .map(|l| l.name.as_str())
        .collect();
    let mut sel = format!("  scenario: {}\n  mode: {mode}\n", scenario.name);
    if !libs.is_empty() {
        sel.push_str(&format!("  libraries: [{}]\n", libs.join(", ")));
    }
    let names = Registry::get().names();
    match &c.transforms {
        Some(idx) => {
            let picked: Vec<&str> = idx.iter().map(|i| names[i % names.len()]).collect();
            sel.push_str(&format!("  transforms: [{}]\n", picked.join(", ")));
        }
        None if c.all_transforms => sel.push_str("  transform_set: all\n"),
        None => {}
    }
    let mut data = String::new();
    opt_line(&mut data, "num_items", c.num_items);
    opt_line(&mut data, "data_dir", c.data_dir.then_some("media"));
    opt_line(&mut data, "gcs_uri", c.cloud.map(|_| "gs://b/data.tar"));
    let mut exec = format!("  device: {}\n", c.device);
    opt_line(&mut exec, "num_runs", c.num_runs);
    opt_line(&mut exec, "batch_size", c.batch_size);
    let mut t = format!("version: 1\n{}", section("selection", &sel));
    t.push_str(&section("data", &data));
    t.push_str(&section("execution", &exec));
    if let Some(attached) = c.cloud {
        t.push_str("output:\n  gcs_results_uri: gs://b/results\n");
        t.push_str(&format!(
            "cloud:\n  provider: gcp\n  zone: us-central1-a\n  attached: {attached}\n"
        ));
        if c.device == Device::Cuda {
            t.push_str("  gpu_type: nvidia-l4\n");
        }
    }
    t
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 64,
        rng_seed: RngSeed::Fixed(20_260_101),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn generated_valid_configs_resolve_idempotently(c in choice()) {
        let text = render(&c);
        let resolved = check(&text);
        prop_assert!(resolved.is_ok(), "generated config rejected: {:?}\n---\n{}", resolved, text);
        let resolved = resolved.unwrap();
        assert_idempotent(&resolved);
        let libs = resolved.selection.libraries.clone().unwrap_or_default();
        prop_assert!(!libs.is_empty(), "{}", text);
    }
}

#[test]
fn timing_values_must_be_positive_and_finite() {
    for (key, bad) in [
        ("min_time", "-1"),
        ("request_timeout_sec", "-1"),
        ("slow_threshold_sec_per_item", "0"),
        ("min_time", ".inf"),
        ("request_timeout_sec", ".nan"),
    ] {
        let text = format!("version: 1\nexecution:\n  {key}: {bad}\n");
        let cfg = RunConfig::from_yaml(&text, Path::new(FILE)).unwrap();
        let e = resolve::resolve(cfg, &src(&text)).unwrap_err();
        assert!(e.message.contains(key), "{key}={bad}: {e}");
        assert_eq!(e.line, Some(3), "{key}={bad}");
    }
}

#[test]
fn empty_transform_list_fails() {
    assert_at(
        &err(&rgb("micro", "  transforms: []\n", "")),
        5,
        "`transforms` is empty",
    );
}

// ---- A/B process pairs ------------------------------------------------------------------------

fn ab(processes: &str) -> String {
    let sel = "  variants:\n    - library: pillow\n      pin: pillow==11.3.0\n    - library: pillow\n      pin: pillow==12.0.0\n";
    rgb(
        "micro",
        sel,
        &format!("execution:\n  num_runs: 3\n{processes}"),
    )
}

#[test]
fn ab_runs_with_too_few_processes_to_decide_fail_at_the_line_naming_the_smallest() {
    let need = augbench_stats::paired::min_verdict_pairs(policy::REGRESSION_MIN_EFFECT);
    let e = err(&ab(&format!("  processes: {}\n", need - 1)));
    assert_at(&e, 12, "cannot decide a 5% change");
    assert!(e.hint.contains(&format!("processes: {need}")), "{e}");
    ok(&ab(&format!("  processes: {need}\n")));
    let defaulted = ok(&ab(""));
    assert_eq!(defaulted.execution.processes, Some(policy::AB_PROCESSES));
}

#[test]
fn pipeline_ab_runs_need_the_same_pairs_and_default_to_the_fewest_that_decide() {
    let need = augbench_stats::paired::min_verdict_pairs(policy::REGRESSION_MIN_EFFECT);
    let sel = "  variants:\n    - library: pillow\n      pin: pillow==11.3.0\n    - library: pillow\n      pin: pillow==12.0.0\n";
    let pipeline = |processes: &str| {
        rgb(
            "pipeline",
            sel,
            &format!("execution:\n  num_runs: 3\n{processes}"),
        )
    };
    let e = err(&pipeline("  processes: 1\n"));
    assert_at(&e, 12, "cannot decide a 5% change");
    assert!(e.hint.contains(&format!("processes: {need}")), "{e}");
    let defaulted = ok(&pipeline(""));
    assert_eq!(defaulted.execution.processes, Some(need));
    assert_eq!(policy::ab_processes(augbench_core::Mode::Pipeline), need);
}
