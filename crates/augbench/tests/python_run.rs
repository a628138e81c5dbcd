//! `augbench run` with real Python library workers: an AlbumentationsX + Pillow micro run that
//! must produce valid results JSON, custom spec files (bad ones fail before any timing; a
//! transform that raises or segfaults costs only itself), and the device choice (`auto` runs and
//! is named by the device it gets, a CUDA run where CUDA exists; `cuda` without CUDA is refused
//! before anything starts: cli_config.rs).
//! These use the shared environment cache on purpose (torch installs once per machine); outputs
//! go to temp dirs.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failure is the test failing"
)]

use std::path::{Path, PathBuf};
use std::process::Output;

use augbench_core::results::{ResultFile, Status};

const TRANSFORMS: &[&str] = &[
    "Resize",
    "HorizontalFlip",
    "GaussianBlur",
    "JpegCompression",
    "Rotate",
];

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../configs/examples/{name}"))
}

/// `augbench run` on the quickstart config with 20 items into `out`, plus `extra` flags.
fn run(out: &Path, extra: &[&str]) -> Output {
    run_config(&example("quickstart.yaml"), out, extra)
}

fn run_config(config: &Path, out: &Path, extra: &[&str]) -> Output {
    let mut cmd = assert_cmd::Command::cargo_bin("augbench").unwrap();
    cmd.arg("run")
        .arg("--config")
        .arg(config)
        .arg("--output")
        .arg(out)
        .args([
            "--num-items",
            "20",
            "--num-runs",
            "3",
            "--no-refresh-requirements",
        ])
        .args(extra);
    cmd.output().unwrap()
}

fn text(out: &Output) -> String {
    format!(
        "status {:?}\n--- stdout\n{}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Every results file under `dir`, parsed strictly (the result types deny unknown fields).
/// The file names of every result file below `dir`.
fn result_names(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.to_string_lossy().ends_with("_results.json") {
                found.push(p.file_name().unwrap().to_string_lossy().to_string());
            }
        }
    }
    found
}

fn results(dir: &Path) -> Vec<ResultFile> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.to_string_lossy().ends_with("_results.json") {
                let text = std::fs::read_to_string(&p).unwrap();
                let file: ResultFile = serde_json::from_str(&text)
                    .unwrap_or_else(|e| panic!("{} is not a valid result file: {e}", p.display()));
                found.push(file);
            }
        }
    }
    found.sort_by(|a, b| a.metadata.library.cmp(&b.metadata.library));
    found
}

fn spec_file(dir: &Path, body: &str) -> PathBuf {
    let path = dir.join("my_spec.py");
    std::fs::write(&path, body).unwrap();
    path
}

#[test]
fn albumentationsx_and_pillow_micro_run_writes_valid_results() {
    let t = tempfile::tempdir().unwrap();
    let mut flags = vec!["--libraries", "albumentationsx", "pillow", "--transforms"];
    flags.extend(TRANSFORMS);
    // Every transform measured in full: whether one is over the slow threshold depends on the
    // machine's load, and this test is about the files, not the machine's speed.
    let quickstart = std::fs::read_to_string(example("quickstart.yaml")).unwrap();
    let config = t.path().join("full.yaml");
    let full = quickstart.replace("execution:\n", "execution:\n  disable_slow_skip: true\n");
    assert_ne!(full, quickstart, "the quickstart has an execution block");
    std::fs::write(&config, full).unwrap();
    let out = run_config(&config, &t.path().join("out"), &flags);
    assert!(out.status.success(), "{}", text(&out));
    let files = results(t.path());
    let libs: Vec<&str> = files.iter().map(|f| f.metadata.library.as_str()).collect();
    assert_eq!(libs, ["albumentationsx", "pillow"]);
    for f in &files {
        assert_eq!(f.metadata.benchmark_params.num_items, 20);
        assert_eq!(f.metadata.device, "cpu");
        assert!(!f.metadata.library_versions.is_empty());
        for name in TRANSFORMS {
            let r = &f.results[*name];
            let lib = &f.metadata.library;
            assert_eq!(r.status, Some(Status::Ok), "{lib} {name}: {:?}", r.reason);
            let runs = 3 * f.metadata.benchmark_params.processes;
            assert_eq!(r.throughputs.len() as u64, runs, "{lib} {name}");
            assert!(r.median_throughput.is_some_and(|m| m > 0.0), "{lib} {name}");
            let share = r.force_share.unwrap_or(f64::NAN);
            assert!((0.0..=1.0).contains(&share), "{lib} {name}: {share}");
        }
    }
    // The output form: AlbumentationsX flips by returning a strided view, Pillow a loaded image.
    let flip = |f: &ResultFile| f.results["HorizontalFlip"].output_contiguous;
    assert_eq!(
        (flip(&files[0]), flip(&files[1])),
        (Some(false), Some(true))
    );
    let cells = augbench_cells::read_bench_cells(&t.path().join("out/cells.parquet")).unwrap();
    let albx_flip = cells
        .iter()
        .find(|c| c.library == "albumentationsx" && c.transform == "HorizontalFlip")
        .unwrap();
    assert_eq!(
        albx_flip.form.contiguous,
        Some(false),
        "the cell log carries it"
    );
    assert!(albx_flip.form.force_share.is_some_and(|s| s > 0.0));
}

#[test]
fn a_spec_file_with_a_syntax_error_fails_naming_file_and_line_before_timing() {
    let t = tempfile::tempdir().unwrap();
    let spec = spec_file(
        t.path(),
        "LIBRARY = \"pillow\"\n\ndef __call__(transform, image):\n    return transform(image\n",
    );
    let out = run(&t.path().join("out"), &["--spec", spec.to_str().unwrap()]);
    assert!(!out.status.success(), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("spec file {} line 4", spec.display())),
        "{}",
        text(&out)
    );
    assert!(stderr.contains("SyntaxError"), "{}", text(&out));
    assert!(
        results(&t.path().join("out")).is_empty(),
        "nothing is timed"
    );
}

#[test]
fn a_spec_file_without_library_fails_naming_the_file() {
    let t = tempfile::tempdir().unwrap();
    let spec = spec_file(t.path(), "TRANSFORMS = []\n");
    let out = run(&t.path().join("out"), &["--spec", spec.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let want = format!("spec file {}: LIBRARY is not defined", spec.display());
    assert!(stderr.contains(&want), "{}", text(&out));
    assert!(
        !t.path().join("out").exists(),
        "checked before anything is written"
    );
}

/// A Pillow spec file: `Crash` segfaults its worker, `Flaky` raises on every image but the first
/// one it sees (item 0, used by the contract check), `Flip` is an ordinary transform.
const FAULTY_SPEC: &str = r#"
import os
import signal

from PIL import Image

LIBRARY = "pillow"

def __call__(transform, image):
    return transform(image)

def crash(image):
    os.kill(os.getpid(), signal.SIGSEGV)

FIRST = []

def flaky(image):
    if not FIRST:
        FIRST.append(id(image))
    if id(image) != FIRST[0]:
        raise ValueError("cannot handle this image")
    return image.transpose(Image.Transpose.FLIP_LEFT_RIGHT)

TRANSFORMS = [
    {"name": "Crash", "transform": crash},
    {"name": "Flaky", "transform": flaky},
    {"name": "Flip", "transform": lambda image: image.transpose(Image.Transpose.FLIP_LEFT_RIGHT)},
]
"#;

#[test]
fn spec_transforms_that_segfault_or_raise_cost_only_themselves() {
    let t = tempfile::tempdir().unwrap();
    let spec = spec_file(t.path(), FAULTY_SPEC);
    let out_dir = t.path().join("out");
    let out = run(&out_dir, &["--spec", spec.to_str().unwrap()]);
    let files = results(&out_dir);
    assert_eq!(
        files.len(),
        1,
        "only the spec's LIBRARY runs\n{}",
        text(&out)
    );
    let f = &files[0];
    assert_eq!(f.metadata.library, "pillow");
    let names: Vec<&str> = f.results.keys().map(String::as_str).collect();
    assert_eq!(names, ["Crash", "Flaky", "Flip"], "the spec's transforms");
    let crash = &f.results["Crash"];
    assert_eq!(crash.status, Some(Status::Error));
    let reason = crash.reason.as_deref().unwrap_or_default();
    assert!(reason.contains("segmentation fault"), "{reason}");
    let flaky = &f.results["Flaky"];
    assert_eq!(flaky.status, Some(Status::Error));
    let reason = flaky.reason.as_deref().unwrap_or_default();
    assert!(reason.contains("Flaky raised on item 1"), "{reason}");
    assert!(
        reason.contains("ValueError: cannot handle this image"),
        "{reason}"
    );
    let flip = &f.results["Flip"];
    assert_eq!(flip.status, Some(Status::Ok), "{:?}", flip.reason);
    assert!(flip.median_throughput.is_some_and(|m| m > 0.0));
}

/// Whether torch in the `torch_stack` environment sees a CUDA device.
fn cuda_available() -> bool {
    let mut cmd = assert_cmd::Command::cargo_bin("augbench").unwrap();
    let out = cmd.args(["env", "python", "torch_stack"]).output().unwrap();
    let python = String::from_utf8_lossy(&out.stdout).trim().to_string();
    std::process::Command::new(python)
        .args(["-c", "import torch; print(torch.cuda.is_available())"])
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "True")
}

fn torchvision_flip(out: &Path, device: &str) -> Output {
    run(
        out,
        &[
            "--libraries",
            "torchvision",
            "--transforms",
            "HorizontalFlip",
            "--device",
            device,
        ],
    )
}

#[test]
fn device_auto_runs_on_what_the_worker_has_and_records_it() {
    let t = tempfile::tempdir().unwrap();
    let out = torchvision_flip(t.path(), "auto");
    assert!(out.status.success(), "{}", text(&out));
    let files = results(t.path());
    let want = if cuda_available() { "cuda" } else { "cpu" };
    assert_eq!(files[0].metadata.device, want);
    // The file is named by that device: no `_dev-auto` (CPU files carry no device suffix).
    let named = if want == "cuda" {
        "_dev-cuda_"
    } else {
        "torchvision_micro_results"
    };
    let names = result_names(t.path());
    assert!(names.iter().all(|n| !n.contains("dev-auto")), "{names:?}");
    assert!(names.iter().any(|n| n.contains(named)), "{names:?}");
    assert_eq!(files[0].results["HorizontalFlip"].status, Some(Status::Ok));
}

#[test]
#[ignore = "needs a CUDA device (no CI runner has one): on a GPU machine, cargo test --release -p augbench --test integration python_run::cuda_run_where_cuda_exists -- --ignored"]
fn cuda_run_where_cuda_exists() {
    assert!(
        cuda_available(),
        "no CUDA device here (torch.cuda.is_available() is False)"
    );
    let t = tempfile::tempdir().unwrap();
    let out = torchvision_flip(t.path(), "cuda");
    assert!(out.status.success(), "{}", text(&out));
    let files = results(t.path());
    assert_eq!(files[0].metadata.device, "cuda");
    let r = &files[0].results["HorizontalFlip"];
    assert_eq!(r.status, Some(Status::Ok), "{:?}", r.reason);
}

#[test]
fn kornia_batched_regime_gets_its_own_file_and_per_item_shapes() {
    let t = tempfile::tempdir().unwrap();
    let extra = [
        "--transforms",
        "HorizontalFlip",
        "Resize",
        "--device",
        "cpu",
        "--micro-batch",
        "4",
    ];
    // Both measured in full: whether Resize's preflight is over the slow threshold depends on
    // the machine's load, and this test is about the file and the shapes.
    let shipped = std::fs::read_to_string(example("kornia_batched.yaml")).unwrap();
    let full = shipped.replace("execution:\n", "execution:\n  disable_slow_skip: true\n");
    assert_ne!(full, shipped, "the example has an execution block");
    let config = t.path().join("full.yaml");
    std::fs::write(&config, full).unwrap();
    let out = run_config(&config, t.path(), &extra);
    assert!(out.status.success(), "{}", text(&out));
    let file = t
        .path()
        .join("image-rgb/micro/kornia_micro_batch4_results.json");
    assert!(file.exists(), "{}", text(&out));
    let files = results(t.path());
    assert_eq!(
        files.len(),
        1,
        "the batched run must not write a per-item file"
    );
    assert_eq!(files[0].metadata.benchmark_params.micro_batch, Some(4));
    for name in ["HorizontalFlip", "Resize"] {
        let r = &files[0].results[name];
        assert_eq!(r.status, Some(Status::Ok), "{name}: {:?}", r.reason);
        let shape = r.output_shape.as_deref().unwrap_or_default();
        assert_eq!(
            shape.len(),
            3,
            "{name}: one item's shape, not the batch's: {shape:?}"
        );
    }
}

/// A built environment serves its modules as bytecode: a worker does not compile its library
/// again at each start, even where Python may not write its cache.
#[test]
fn environments_are_compiled_to_bytecode() {
    let mut cmd = assert_cmd::Command::cargo_bin("augbench").unwrap();
    let out = cmd
        .args(["env", "build", "pillow", "--no-refresh-requirements"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let mut cmd = assert_cmd::Command::cargo_bin("augbench").unwrap();
    let out = cmd.args(["env", "python", "pillow"]).output().unwrap();
    let python = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let probe = "import os, PIL.Image as m; print(os.path.exists(m.__cached__))";
    let cached = std::process::Command::new(&python)
        .args(["-c", probe])
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&cached.stdout).trim(),
        "True",
        "{python}: {}",
        String::from_utf8_lossy(&cached.stderr)
    );
}
