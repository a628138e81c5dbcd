//! `augbench production` with real loaders (Pillow and torchvision in the cached torch_stack
//! environment; native crates without one): every cell a file with its identity, a float16 batch
//! and the loader's memory; a rerun keeps every cell byte for byte; `compare` and `report` show the
//! latest run; an edited cell is measured again, named; a run killed with SIGKILL goes on with only
//! the missing cells.

use std::path::{Path, PathBuf};
use std::process::Output;

fn augbench() -> assert_cmd::Command {
    assert_cmd::Command::cargo_bin("augbench").unwrap()
}

/// Two CPU implementations × three recipes (RandomResizedCrop: Pillow has none) × the given
/// seeds, `batches` small batches a cell.
fn config(dir: &Path, seeds: &str, batches: u32) -> PathBuf {
    let text = format!(
        "version: 1\nproduction:\n  implementations: [pillow_cpu, torchvision_cpu]\n  recipes: [Resize, HorizontalFlip, RandomResizedCrop]\n  seeds: {seeds}\n  batch_size: 4\n  warmup_batches: 1\n  measured_batches: {batches}\n  workers: 1\ndata:\n  num_items: 12\n"
    );
    write_config(dir, "production.yaml", &text)
}

/// Writes `body` (a production config) as `dir/name`.
fn write_config(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, body).unwrap();
    path
}

/// A cell measured on the CPU: a batch of the contract (batch 4, float16), delivered there.
fn measured_on_the_cpu(c: &serde_json::Value) {
    assert_eq!(c["status"], "ok", "{c}");
    let measured = &c["measured"];
    let batch = &measured["batch"];
    assert_eq!(batch["shape"], serde_json::json!([4, 3, 224, 224]), "{c}");
    assert_eq!(batch["dtype"], "float16", "{c}");
    assert_eq!(measured["device"], "cpu", "{c}");
    assert!(measured.get("gpu_memory").is_none(), "{c}");
}

/// A first run of the config `body` (written as `name` in a new folder) into the folder's `out`.
fn first_run(name: &str, body: &str) -> (tempfile::TempDir, PathBuf, PathBuf, Output) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let cfg = write_config(dir.path(), name, body);
    let first = run(&cfg, &out);
    (dir, out, cfg, first)
}

/// `augbench report` of the production folder `out` into a page under `dir`; the page's text.
fn page(dir: &Path, out: &Path) -> String {
    let page = dir.join("page.html");
    let made = augbench()
        .args(["report", "--results"])
        .arg(out)
        .arg("--out")
        .arg(&page)
        .output()
        .unwrap();
    assert!(made.status.success(), "{}", text(&made));
    std::fs::read_to_string(&page).unwrap()
}

fn run(config: &Path, out: &Path) -> Output {
    augbench()
        .args(["production", "--no-refresh-requirements", "--config"])
        .arg(config)
        .arg("--output-dir")
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

/// Every cell file under `out`, sorted, with its bytes.
fn cells(out: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut found = Vec::new();
    let mut stack = vec![out.join("runs")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("seed-"))
            {
                let bytes = std::fs::read(&path).unwrap();
                found.push((path, bytes));
            }
        }
    }
    found.sort();
    found
}

fn json(bytes: &[u8]) -> serde_json::Value {
    serde_json::from_slice(bytes).unwrap()
}

#[test]
fn each_cell_is_a_file_with_its_identity_batch_and_memory_and_a_rerun_keeps_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    // 100 batches a cell, so that a cell outlasts the memory sampler's spacing (a reading of a
    // 600 MB tree costs ~10 ms, and the sampler spends at most 3% of a core).
    let cfg = config(dir.path(), "[137]", 100);
    let first = run(&cfg, &out);
    let log = text(&first);
    assert!(first.status.success(), "{log}");
    let files = cells(&out);
    assert_eq!(files.len(), 6, "{log}");
    let run_id = json(&std::fs::read(out.join("latest.json")).unwrap())["run_id"].clone();
    let mut with_memory = 0;
    for (path, bytes) in &files {
        let c = json(bytes);
        assert_eq!(c["id"]["run_id"], run_id, "{}", path.display());
        assert_eq!(c["id"]["seed"], 137);
        let unsupported =
            c["id"]["implementation"] == "pillow_cpu" && c["row"] == "RandomResizedCrop";
        if unsupported {
            assert_eq!(c["status"], "unsupported");
            assert!(
                c["reason"]
                    .as_str()
                    .unwrap()
                    .contains("stage 1 (RandomResizedCrop)"),
                "{c}"
            );
            continue;
        }
        measured_on_the_cpu(&c);
        assert_eq!(c["measured"]["ns"].as_array().unwrap().len(), 100);
        assert!(c["items_per_sec"].as_f64().unwrap() > 0.0);
        // The worker and its loader worker, read while the loader ran; or, for a cell shorter
        // than the sampling period, no figure and the reason.
        let memory = &c["memory"];
        match memory["unavailable"].as_str() {
            None => {
                assert!(memory["peak_pss_bytes"].as_u64().unwrap() > 10 << 20, "{c}");
                assert!(memory["max_processes"].as_u64().unwrap() >= 2, "{c}");
                with_memory += 1;
            }
            Some(why) => assert!(why.contains("never saw the loader at work"), "{c}"),
        }
    }
    assert!(with_memory > 0, "no cell read its loader's memory: {log}");
    assert!(
        log.contains("- pillow_cpu: 2/3 recipes measured, 1 unsupported"),
        "{log}"
    );
    let first_batch = log
        .split("## Time to first batch")
        .nth(1)
        .unwrap_or_default();
    let seconds: Vec<f64> = first_batch
        .lines()
        .skip_while(|l| !l.starts_with("| Resize"))
        .take(1)
        .flat_map(|l| {
            l.split(" | ")
                .skip(1)
                .map(|v| v.trim_end_matches(" |").parse::<f64>())
        })
        .collect::<Result<_, _>>()
        .unwrap_or_default();
    assert!(
        seconds.len() == 2 && seconds.iter().all(|s| *s > 0.0),
        "each implementation's Resize cells report their time to first batch: {log}"
    );
    assert!(
        log.contains("- torchvision_cpu:") && log.contains("over 2/3 recipes"),
        "{log}"
    );

    let again = run(&cfg, &out);
    let log = text(&again);
    assert!(again.status.success(), "{log}");
    assert!(
        log.contains("0 cells measured now, 6 kept from disk"),
        "{log}"
    );
    assert_eq!(cells(&out), files, "a rerun rewrote a finished cell");

    // `compare` and `report` read the folder's latest run: coverage, memory, intersection speedups.
    let shown = augbench().arg("compare").arg(&out).output().unwrap();
    let table = text(&shown);
    assert!(shown.status.success(), "{table}");
    assert!(table.contains("# Production run"), "{table}");
    assert!(
        table.contains("| Resize | ") && table.contains(" MiB) |"),
        "{table}"
    );
    assert!(
        table.contains("- pillow_cpu: 2/3 recipes measured"),
        "{table}"
    );
    assert!(table.contains("over 2/3 recipes"), "{table}");
    let html = page(dir.path(), &out);
    assert!(
        html.contains("<table>") && html.contains("<td>Resize</td>"),
        "{html}"
    );
    assert!(html.contains("2/3 recipes measured"), "{html}");

    // An edited cell fails its digest: it alone is measured again, and the run says which.
    let (edited, bytes) = &files[0];
    let text_before = String::from_utf8(bytes.clone()).unwrap();
    std::fs::write(
        edited,
        text_before.replace("items_per_sec\": ", "items_per_sec\": 1"),
    )
    .unwrap();
    let third = run(&cfg, &out);
    let log = text(&third);
    assert!(third.status.success(), "{log}");
    assert!(
        log.contains("1 cells measured now, 5 kept from disk"),
        "{log}"
    );
    assert!(
        log.contains(&format!("{} is measured again", edited.display())),
        "{log}"
    );
}

/// Native crates are not in the catalog: each recipe is built from its stages by the crate, and a
/// stage it cannot build makes the cell unsupported, naming the stage. Their loader workers are
/// threads, so the loader's memory is the worker process alone.
#[test]
fn native_crates_measure_the_recipes_they_build_and_name_the_stage_they_cannot() {
    let (dir, out, cfg, first) = first_run(
        "native.yaml",
        "version: 1\nproduction:\n  implementations: [image_cpu, fast_image_resize_cpu]\n  recipes: [Resize, HorizontalFlip, Rotate]\n  seeds: [137]\n  batch_size: 4\n  warmup_batches: 1\n  measured_batches: 100\n  workers: 2\ndata:\n  num_items: 12\n",
    );
    let log = text(&first);
    assert!(first.status.success(), "{log}");
    let files = cells(&out);
    assert_eq!(files.len(), 6, "{log}");
    let mut with_memory = 0;
    for (path, bytes) in &files {
        let c = json(bytes);
        let (imp, row) = (c["id"]["implementation"].as_str(), c["row"].as_str());
        let stage = match (imp, row) {
            (_, Some("Rotate")) => Some("stage 2 (Rotate)"),
            (Some("fast_image_resize_cpu"), Some("HorizontalFlip")) => {
                Some("stage 2 (HorizontalFlip)")
            }
            _ => None,
        };
        if let Some(stage) = stage {
            assert_eq!(c["status"], "unsupported", "{}: {c}", path.display());
            assert!(c["reason"].as_str().unwrap().starts_with(stage), "{c}");
            continue;
        }
        measured_on_the_cpu(&c);
        assert_eq!(c["measured"]["loader"]["kind"], "native threads (augbench)");
        assert_eq!(
            c["measured"]["worker_threads"].as_array().unwrap().len(),
            2,
            "{c}"
        );
        let memory = &c["memory"];
        match memory["unavailable"].as_str() {
            None => {
                assert_eq!(memory["max_processes"], 1, "{c}");
                assert!(memory["samples"].as_u64().unwrap() >= 3, "{c}");
                assert!(memory["peak_pss_bytes"].as_u64().unwrap() > 1 << 20, "{c}");
                with_memory += 1;
            }
            Some(why) => assert!(why.contains("a reading while the cell ran"), "{c}"),
        }
    }
    assert!(with_memory > 0, "no cell read its loader's memory: {log}");
    // The plan before and after: the cells each crate measures, then an estimate from the run.
    let plan = |out: &Path| {
        let o = augbench()
            .args(["production", "--plan", "--config"])
            .arg(&cfg)
            .arg("--output-dir")
            .arg(out)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let after = plan(&out);
    assert!(
        after.contains("{name: image_cpu, recipes: 2/3, cells_to_measure: 2}"),
        "{after}"
    );
    assert!(
        after.contains("{name: fast_image_resize_cpu, recipes: 1/3, cells_to_measure: 1}"),
        "{after}"
    );
    let id = json(&std::fs::read(out.join("latest.json")).unwrap())["run_id"].clone();
    assert!(
        after.contains(&format!("at the rates of run {}", id.as_str().unwrap())),
        "{after}"
    );
    assert!(plan(&dir.path().join("nothing")).contains("# estimate: none"));
    assert!(log.contains("- image_cpu: 2/3 recipes measured"), "{log}");
    assert!(
        log.contains("- fast_image_resize_cpu: 1/3 recipes measured"),
        "{log}"
    );
    let again = run(&cfg, &out);
    assert!(again.status.success(), "{}", text(&again));
    assert_eq!(cells(&out), files, "a rerun keeps every cell byte for byte");
    // The page: the tables, then a heatmap of throughput and one of memory.
    let html = page(dir.path(), &out);
    assert_eq!(html.matches("<svg").count(), 2, "{html}");
    assert!(html.contains("Throughput, median over seeds"), "{html}");
    assert!(
        html.contains("Peak PSS of the loader&apos;s processes"),
        "{html}"
    );
    // Two runs side by side: a run against itself is 1.00× everywhere; a run of other cell
    // settings is refused (exit 2), naming the setting.
    let compare = |baseline: &Path| {
        augbench()
            .args(["compare", "--baseline"])
            .arg(baseline)
            .arg("--current")
            .arg(&out)
            .output()
            .unwrap()
    };
    let same = compare(&out);
    let shown = text(&same);
    assert!(same.status.success(), "{shown}");
    assert!(
        shown.contains("- image_cpu: 1.00× over 2/3 recipes"),
        "{shown}"
    );
    assert!(shown.contains("names no regression"), "{shown}");
    let other_cfg = dir.path().join("other.yaml");
    let body = std::fs::read_to_string(&cfg).unwrap();
    std::fs::write(&other_cfg, body.replace("batch_size: 4", "batch_size: 2")).unwrap();
    let other = dir.path().join("other");
    assert!(run(&other_cfg, &other).status.success());
    let refused = compare(&other);
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
    assert!(
        text(&refused).contains("`batch_size` is 2 in the baseline and 4"),
        "{}",
        text(&refused)
    );
}

/// `workers: [0, 2]` sweeps the loader workers: a cell per count, each a file of its own naming
/// its count, the loader started with that many workers (Python's DataLoader and the native
/// loader alike), a column per (implementation, count), the scaling line and the page's chart; a
/// rerun keeps every cell.
#[test]
fn a_sweep_of_loader_workers_measures_a_cell_per_count() {
    let (dir, out, cfg, first) = first_run(
        "sweep.yaml",
        "version: 1\nproduction:\n  implementations: [pillow_cpu, image_cpu]\n  recipes: [Resize]\n  seeds: [137]\n  batch_size: 4\n  warmup_batches: 1\n  measured_batches: 20\n  workers: [0, 2]\ndata:\n  num_items: 12\n",
    );
    assert!(first.status.success(), "{}", text(&first));
    let found = cells(&out);
    let names: Vec<String> = found
        .iter()
        .map(|(p, _)| {
            let rel = p.strip_prefix(&out).unwrap().to_string_lossy().into_owned();
            rel.split_once("/cells/").unwrap().1.to_string()
        })
        .collect();
    assert_eq!(
        names,
        [
            "image_cpu/Resize224+Normalize+ToTensor/workers-0/seed-137.json",
            "image_cpu/Resize224+Normalize+ToTensor/workers-2/seed-137.json",
            "pillow_cpu/Resize224+Normalize+ToTensor/workers-0/seed-137.json",
            "pillow_cpu/Resize224+Normalize+ToTensor/workers-2/seed-137.json",
        ]
    );
    for (path, bytes) in &found {
        let c = json(bytes);
        measured_on_the_cpu(&c);
        let w = c["id"]["workers"].as_u64().unwrap();
        assert!(path.to_string_lossy().contains(&format!("workers-{w}")));
        assert_eq!(c["settings"]["workers"], w, "{c}");
        assert_eq!(c["measured"]["loader"]["workers"], w, "{c}");
    }
    let summary = String::from_utf8_lossy(&first.stdout).into_owned();
    assert!(
        summary.contains("| recipe | pillow_cpu (0 workers) | pillow_cpu (2 workers) | image_cpu (0 workers) | image_cpu (2 workers) |"),
        "{summary}"
    );
    assert!(summary.contains("## Loader workers"), "{summary}");
    assert!(summary.contains("All 4 cells"), "{summary}");
    assert!(page(dir.path(), &out).contains("Throughput against loader workers"));
    let plan = augbench()
        .args(["production", "--plan", "--config"])
        .arg(&cfg)
        .output()
        .unwrap();
    let plan = String::from_utf8_lossy(&plan.stdout).into_owned();
    assert!(
        plan.contains(
            "cells: 4  # 2 implementations × 1 recipes × 1 seed(s) × 2 loader-worker counts"
        ),
        "{plan}"
    );
    assert!(plan.contains("workers: [0, 2]"), "{plan}");
    let again = run(&cfg, &out);
    assert!(again.status.success(), "{}", text(&again));
    assert_eq!(cells(&out), found, "a rerun keeps every cell byte for byte");
}

#[test]
fn a_run_killed_mid_way_goes_on_with_only_the_missing_cells() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    // Few batches a cell: the test reads which cells are on disk, not what they measured (a
    // cell still takes a worker's start, far longer than the 50 ms the kill waits between looks).
    let cfg = config(dir.path(), "[137, 138]", 10);
    let bin = assert_cmd::cargo::cargo_bin("augbench");
    let mut child = std::process::Command::new(bin)
        .args(["production", "--no-refresh-requirements", "--config"])
        .arg(&cfg)
        .arg("--output-dir")
        .arg(&out)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(300);
    // Implementations take turns by blocks of groups: one cell past the first block, both have
    // cells (in config order the first 6 would all be Pillow's).
    let enough = augbench_core::policy::PRODUCTION_ORDER_BLOCK.min(6) + 1;
    while cells(&out).len() < enough && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child.kill().unwrap(); // SIGKILL: no handler runs
    child.wait().unwrap();
    let before = cells(&out);
    assert!(
        (enough..12).contains(&before.len()),
        "{} cells before the kill",
        before.len()
    );
    for imp in ["pillow_cpu", "torchvision_cpu"] {
        assert!(
            before
                .iter()
                .any(|(p, _)| p.components().any(|c| c.as_os_str() == imp)),
            "no {imp} cell among the first {}: {:?}",
            before.len(),
            before.iter().map(|(p, _)| p).collect::<Vec<_>>()
        );
    }
    let shown = augbench().arg("compare").arg(&out).output().unwrap();
    let table = String::from_utf8_lossy(&shown.stdout);
    let missing = 12 - before.len();
    assert!(
        table.contains(&format!(
            "Incomplete: {} of 12 cells on disk, {missing} not measured yet",
            before.len()
        )) && table.contains("not measured |"),
        "{}",
        text(&shown)
    );
    let resumed = run(&cfg, &out);
    let log = text(&resumed);
    assert!(resumed.status.success(), "{log}");
    assert!(
        log.contains("All 12 cells of the run are on disk."),
        "{log}"
    );
    assert!(
        log.contains(&format!(
            "{missing} cells measured now, {} kept",
            before.len()
        )),
        "{log}"
    );
    let after = cells(&out);
    assert_eq!(after.len(), 12);
    for (path, bytes) in &before {
        let now = after.iter().find(|(p, _)| p == path).unwrap();
        assert_eq!(&now.1, bytes, "{} changed on resume", path.display());
    }
}

/// `decoders: reference`: AlbumentationsX reads its files with SimpleJPEG and Kornia with
/// torchvision.io, as the reference does, each in its own cached environment; every cell names
/// the decoder it read with, and the summary lists them beside the cells' settings.
#[test]
fn the_reference_decoders_read_the_files_and_every_cell_names_its_decoder() {
    let (_dir, out, _, first) = first_run(
        "reference.yaml",
        "version: 1\nproduction:\n  implementations: [albumentationsx_cpu, kornia_cpu]\n  recipes: [HorizontalFlip]\n  seeds: [137]\n  batch_size: 4\n  warmup_batches: 1\n  measured_batches: 3\n  workers: 1\n  decoders: reference\ndata:\n  num_items: 8\n",
    );
    assert!(first.status.success(), "{}", text(&first));
    let found = cells(&out);
    assert_eq!(found.len(), 2, "{}", text(&first));
    for (path, bytes) in &found {
        let c = json(bytes);
        measured_on_the_cpu(&c);
        let want = match c["id"]["implementation"].as_str() {
            Some("albumentationsx_cpu") => "simplejpeg.decode_jpeg",
            _ => "torchvision.io.decode_image",
        };
        let decoder = c["measured"]["decoder"].as_str().unwrap_or_default();
        assert!(decoder.starts_with(want), "{}: {c}", path.display());
        assert_eq!(c["settings"]["decoders"], "reference", "{c}");
    }
    let summary = std::fs::read_dir(out.join("runs"))
        .unwrap()
        .flatten()
        .map(|run| std::fs::read_to_string(run.path().join("summary.md")).unwrap_or_default())
        .collect::<String>();
    assert!(
        summary.contains("Decoders: albumentationsx_cpu simplejpeg.decode_jpeg (libjpeg-turbo), RGB; kornia_cpu torchvision.io.decode_image, RGB."),
        "{summary}"
    );
    assert!(
        summary.contains("file order numpy-pcg64 per seed"),
        "{summary}"
    );
}

#[test]
fn a_config_mistake_is_exit_2_at_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.yaml");
    std::fs::write(
        &path,
        "version: 1\nproduction:\n  implementations: [pillow_cpu]\n  recipes: [Rezise]\n",
    )
    .unwrap();
    let out = augbench()
        .args(["production", "--config"])
        .arg(&path)
        .output()
        .unwrap();
    let log = text(&out);
    assert_eq!(out.status.code(), Some(2), "{log}");
    assert!(log.contains("bad.yaml:4"), "{log}");
    assert!(log.contains("did you mean `Resize`"), "{log}");
}

#[test]
fn gpu_implementations_without_a_cuda_device_are_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let path = write_config(
        dir.path(),
        "gpu.yaml",
        "version: 1\nproduction:\n  implementations: [torchvision_gpu, kornia_cpu]\n  recipes: [Rotate]\n",
    );
    // The plan measures nothing, so it shows a GPU config anywhere, with the split's device.
    let plan = augbench()
        .args(["production", "--plan", "--config"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(plan.status.success(), "{}", text(&plan));
    assert!(text(&plan).contains("torchvision_gpu"), "{}", text(&plan));
    let refused = augbench()
        .env("CUDA_VISIBLE_DEVICES", "-1") // no device, on any machine
        .args(["production", "--config"])
        .arg(&path)
        .arg("--output-dir")
        .arg(&out)
        .output()
        .unwrap();
    let log = text(&refused);
    assert_eq!(refused.status.code(), Some(2), "{log}");
    assert!(log.contains("torchvision_gpu run on the GPU"), "{log}");
    assert!(log.contains("no CUDA device"), "{log}");
    assert!(!out.exists(), "nothing was written: {log}");
    // DALI's own pipeline has no production cell: refused at its config line.
    std::fs::write(
        &path,
        "version: 1\nproduction:\n  implementations: [dali_gpu]\n",
    )
    .unwrap();
    let dali = augbench()
        .args(["production", "--config"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(dali.status.code(), Some(2), "{}", text(&dali));
    assert!(text(&dali).contains("gpu.yaml:3"), "{}", text(&dali));
}

/// `program production` of `config` into `out` over only the first 6 images.
fn six_items(program: &Path, config: &Path, out: &Path) -> Output {
    std::process::Command::new(program)
        .args([
            "production",
            "--no-refresh-requirements",
            "--num-items",
            "6",
            "--config",
        ])
        .arg(config)
        .arg("--output-dir")
        .arg(out)
        .output()
        .unwrap()
}

#[test]
fn a_changed_input_starts_a_new_run_and_names_the_input() {
    let (_dir, out, path, first) = first_run(
        "one.yaml",
        "version: 1\nproduction:\n  implementations: [pillow_cpu]\n  recipes: [Resize]\n  seeds: [137]\n  batch_size: 4\n  warmup_batches: 1\n  measured_batches: 2\n  workers: 0\ndata:\n  num_items: 8\n",
    );
    assert!(first.status.success(), "{}", text(&first));
    let augbench_bin = assert_cmd::cargo::cargo_bin("augbench");
    let with_fewer = six_items(&augbench_bin, &path, &out);
    let log = text(&with_fewer);
    assert!(with_fewer.status.success(), "{log}");
    assert!(log.contains("changed inputs: dataset"), "{log}");
    assert!(log.contains("1 cells measured now, 0 kept"), "{log}");
    let runs = std::fs::read_dir(out.join("runs")).unwrap().count();
    assert_eq!(runs, 2, "each input set has its own run folder");

    // The same build facts in other bytes (a rebuild from edited sources): a new run.
    let rebuilt = out.parent().unwrap().join("augbench-rebuilt");
    let mut bytes = std::fs::read(&augbench_bin).unwrap();
    bytes.extend_from_slice(b"edited");
    std::fs::write(&rebuilt, bytes).unwrap();
    std::fs::set_permissions(
        &rebuilt,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let by_rebuilt = six_items(&rebuilt, &path, &out);
    let log = text(&by_rebuilt);
    assert!(by_rebuilt.status.success(), "{log}");
    assert!(log.contains("changed inputs: augbench\n"), "{log}");
}
