//! `augbench run` in pipeline mode with real loaders (torchvision and Pillow share the cached
//! torch_stack environment): result files named and labelled with what was measured, rows that
//! came from loader workers (w > 0), paired speedups from interleaved rounds, a pipeline section in
//! `compare`, a corrupt JPEG that fails its rows by name, `workers: 0`, and a `device: auto` file
//! named and labelled by the device it ran on.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failure is the test failing"
)]

use std::path::{Path, PathBuf};
use std::process::Output;

use augbench_core::results::{ResultFile, Status};

fn augbench() -> assert_cmd::Command {
    assert_cmd::Command::cargo_bin("augbench").unwrap()
}

/// A pipeline config over torchvision and Pillow with `workers` loader workers, batches of 4.
/// Slow skip off: these tests are about labels and pairing, and beside the other tests the
/// loaders' 10-item preflight read above the pipeline slow threshold (0.058 s an item against
/// 0.05), leaving a `slow` row with nothing to pair.
fn config(dir: &Path, workers: u64, data_dir: Option<&Path>, device: &str) -> PathBuf {
    let data = match data_dir {
        Some(d) => format!("data: {{data_dir: {}}}\n", d.display()),
        None => "data: {num_items: 16}\n".to_string(),
    };
    let text = format!(
        "version: 1\nselection:\n  scenario: image-rgb\n  mode: pipeline\n  libraries: [torchvision, pillow]\n  transforms: [HorizontalFlip, CenterCrop224, Normalize]\n{data}execution: {{num_runs: 2, workers: {workers}, batch_size: 4, device: {device}, disable_slow_skip: true}}\n"
    );
    let path = dir.join("pipeline.yaml");
    std::fs::write(&path, text).unwrap();
    path
}

fn run(config: &Path, out: &Path) -> Output {
    augbench()
        .args(["run", "--no-refresh-requirements", "--config"])
        .arg(config)
        .arg("--output")
        .arg(out)
        .output()
        .unwrap()
}

fn text(out: &Output) -> String {
    format!(
        "status {:?}\n--- stdout\n{}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn result_file(out: &Path, library: &str, items: &str, workers: u64, dev: &str) -> ResultFile {
    let name =
        format!("{library}_decode_dataloader_augment_n{items}_r2_w{workers}_b4{dev}_results.json");
    let path = out.join("image-rgb/pipeline").join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{} missing: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

#[test]
fn pipeline_rows_come_from_loader_workers_and_are_labelled_with_them() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let output = run(&config(dir.path(), 2, None, "cpu"), &out);
    let log = text(&output);
    assert!(output.status.success(), "{log}");
    assert!(log.contains("img/s (pipeline, w=2, b=4)"), "{log}");
    for library in ["torchvision", "pillow"] {
        let file = result_file(&out, library, "16", 2, "");
        let m = &file.metadata;
        assert_eq!(m.mode, "pipeline");
        assert_eq!(m.timing.measurement_scope, "decode_dataloader_augment");
        let p = m.pipeline.as_ref().expect("pipeline metadata");
        assert_eq!((p.workers, p.batch_size), (2, 4));
        assert!(!p.main_process_loading && !p.decoder.is_empty(), "{p:?}");
        assert_eq!(m.benchmark_params.schedule.as_deref(), Some("interleaved"));
        let flip = &file.results["HorizontalFlip"];
        assert_eq!(flip.status, Some(Status::Ok), "{library}: {flip:?}");
        assert_eq!(flip.throughputs.len(), 2);
        let d = flip.pipeline.as_ref().expect("loader details");
        let workers: Vec<_> = d
            .worker_threads
            .iter()
            .map(|t| t["worker"].clone())
            .collect();
        assert_eq!(
            workers,
            [serde_json::json!(0), serde_json::json!(1)],
            "{library}"
        );
        assert!(d.time_to_first_batch > 0.0);
        assert!(d.batches.iter().all(|b| *b >= p.min_batches), "{d:?}");
        assert_eq!(flip.output_shape.as_deref(), Some(&[4, 3, 224, 224][..]));
        assert!(
            !flip.paired.is_empty(),
            "interleaved rounds pair the libraries"
        );
        let ceiling = &file.results["DecodeOnly"];
        assert_eq!(
            ceiling.status,
            Some(Status::Ok),
            "{library}: the ceiling row"
        );
        let normalize = &file.results["Normalize"];
        assert_eq!(normalize.status, Some(Status::Unsupported));
        let why = normalize.reason.as_deref().unwrap_or_default();
        assert!(why.contains("part of every pipeline recipe"), "{why}");
    }
    let compare = augbench().arg("compare").arg(&out).output().unwrap();
    let table = String::from_utf8_lossy(&compare.stdout);
    assert!(compare.status.success(), "{}", text(&compare));
    assert!(
        table.contains("image-rgb · pipeline · cpu · decode_dataloader_augment w2 b4"),
        "{table}"
    );
}

#[test]
fn a_corrupt_jpeg_fails_its_rows_by_name_and_workers_zero_and_auto_are_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let synth = augbench()
        .args(["data", "synth", "--n", "7", "--out"])
        .arg(&data)
        .output()
        .unwrap();
    assert!(synth.status.success(), "{}", text(&synth));
    std::fs::write(data.join("zz_broken.jpg"), b"this is not a JPEG").unwrap();
    let out = dir.path().join("out");
    let output = run(&config(dir.path(), 0, Some(&data), "auto"), &out);
    let log = text(&output);
    let cuda = out.join("image-rgb/pipeline").read_dir().unwrap().any(|e| {
        e.unwrap()
            .file_name()
            .to_string_lossy()
            .contains("_dev-cuda")
    });
    for library in ["torchvision", "pillow"] {
        // `auto` is settled before naming: a CUDA-capable library's file says `cuda` where the
        // machine has CUDA and nothing (the CPU) where it has none; never `_dev-auto`.
        let dev = if library == "torchvision" && cuda {
            "_dev-cuda"
        } else {
            ""
        };
        let items = augbench_core::policy::default_num_items(augbench_core::Media::Image);
        let file = result_file(&out, library, &items.to_string(), 0, dev);
        let p = file.metadata.pipeline.as_ref().expect("pipeline metadata");
        assert!(p.main_process_loading, "{p:?}");
        assert!(p.notes.iter().any(|n| n.contains("main process")), "{p:?}");
        assert_eq!(
            file.metadata.device,
            if dev.is_empty() { "cpu" } else { "cuda" }
        );
        for name in ["HorizontalFlip", "CenterCrop224"] {
            let r = &file.results[name];
            assert_eq!(r.status, Some(Status::Error), "{library} {name}: {log}");
            let why = r.reason.as_deref().unwrap_or_default();
            assert!(why.contains("zz_broken.jpg"), "{library} {name}: {why}");
        }
    }
}
