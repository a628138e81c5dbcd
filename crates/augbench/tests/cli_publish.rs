//! `augbench publish`: the folder it writes (page, tables, results, cell log, machine card,
//! versions, manifest with hashes), that no path of the machine is left in it, that the
//! published results read back, and its refusals (exit 2): no results, two machines, an existing
//! folder without `--force`.

use std::path::Path;

use assert_cmd::Command;
use augbench_core::results::ResultFile;
use augbench_report::sample;
use predicates::prelude::*;

fn augbench() -> Command {
    Command::cargo_bin("augbench").unwrap()
}

/// The demo results, each naming paths of this machine (the dataset below `machine_dir`, the
/// command line's binary and output folder) as a real run's do.
fn results_naming(machine_dir: &Path) -> Vec<ResultFile> {
    let here = machine_dir.display();
    sample::demo()
        .into_iter()
        .map(|mut f| {
            f.metadata.dataset.path = format!("{here}/data/images");
            f.metadata.environment.argv = vec![
                format!("{here}/bin/augbench"),
                "run".into(),
                format!("--output={here}/out"),
            ];
            f
        })
        .collect()
}

fn write(dir: &Path, files: &[ResultFile]) {
    for f in files {
        sample::write(dir, f).unwrap();
    }
}

fn publish(results: &Path, out: &Path) -> Command {
    let mut c = augbench();
    c.arg("publish")
        .arg("--results")
        .arg(results)
        .arg("--out")
        .arg(out);
    c
}

/// Every file below `dir` as text (a Parquet file as its bytes, lossy).
fn all_text(dir: &Path) -> Vec<(String, String)> {
    augbench_host::fsutil::files_under(dir)
        .into_iter()
        .map(|p| {
            let text = String::from_utf8_lossy(&std::fs::read(&p).unwrap()).into_owned();
            (p.display().to_string(), text)
        })
        .collect()
}

#[test]
fn a_published_run_opens_reads_back_and_names_no_path_of_the_machine() {
    let tmp = tempfile::tempdir().unwrap();
    let results = tmp.path().join("run");
    write(&results, &results_naming(tmp.path()));
    let out = tmp.path().join("site").join("demo-run");
    publish(&results, &out)
        .assert()
        .success()
        .stdout(predicate::str::contains("published").and(predicate::str::contains("index.html")));
    for f in [
        "index.html",
        "tables.md",
        "machine.json",
        "versions.json",
        "README.md",
    ] {
        assert!(out.join(f).is_file(), "{f}");
    }
    let here = tmp.path().display().to_string();
    for (file, text) in all_text(&out) {
        assert!(!text.contains(&here), "{file} names {here}");
    }
    // The manifest lists every other file with its size and hash.
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
    let files = manifest["files"].as_array().unwrap();
    let on_disk = augbench_host::fsutil::files_under(&out).len();
    assert_eq!(files.len() + 1, on_disk, "{manifest}");
    for f in files {
        let bytes = std::fs::read(out.join(f["path"].as_str().unwrap())).unwrap();
        assert_eq!(f["bytes"], bytes.len() as u64);
        assert_eq!(
            f["sha256"].as_str().unwrap(),
            augbench_core::production::cell::sha256_hex(&bytes)
        );
    }
    assert_eq!(manifest["name"], "demo-run");
    // The published results are results: `compare` reads them, a row for every transform.
    let shown = augbench()
        .arg("compare")
        .arg(out.join("results"))
        .assert()
        .success();
    let table = String::from_utf8_lossy(&shown.get_output().stdout).into_owned();
    for file in sample::demo() {
        for transform in file.results.keys() {
            assert!(
                table.contains(&format!("| {transform} ")),
                "{transform}:\n{table}"
            );
        }
    }
    // The run's files carry when they were measured; the manifest spans them.
    assert!(
        manifest["measured_from"]
            .as_str()
            .is_some_and(|t| !t.is_empty()),
        "{manifest}"
    );
}

#[test]
fn the_dataset_path_of_a_published_result_is_a_placeholder() {
    let tmp = tempfile::tempdir().unwrap();
    let results = tmp.path().join("run");
    write(&results, &results_naming(tmp.path()));
    let out = tmp.path().join("pub");
    publish(&results, &out).assert().success();
    let any = augbench_host::fsutil::files_under(&out.join("results"));
    let first: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&any[0]).unwrap()).unwrap();
    assert_eq!(first["metadata"]["dataset"]["path"], "<local>/images");
    assert_eq!(
        first["metadata"]["environment"]["argv"][0],
        "<local>/augbench"
    );
    assert_eq!(
        first["metadata"]["environment"]["argv"][2],
        "--output=<local>/out"
    );
}

#[test]
fn an_existing_folder_is_kept_unless_forced() {
    let tmp = tempfile::tempdir().unwrap();
    let results = tmp.path().join("run");
    write(&results, &sample::demo());
    let out = tmp.path().join("pub");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("mine.txt"), "keep").unwrap();
    publish(&results, &out).assert().code(2).stderr(
        predicate::str::contains("already exists").and(predicate::str::contains("--force")),
    );
    assert!(out.join("mine.txt").is_file());
    publish(&results, &out).arg("--force").assert().success();
    assert!(!out.join("mine.txt").exists());
    assert!(out.join("index.html").is_file());
}

#[test]
fn a_folder_without_results_or_results_of_two_machines_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let empty = tmp.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    publish(&empty, &tmp.path().join("a"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("holds no results"));
    publish(&tmp.path().join("missing"), &tmp.path().join("b"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("is not a folder"));
    let two = tmp.path().join("two");
    let mut files = sample::demo();
    files[0].metadata.system_info.processor = "Some Other CPU".into();
    write(&two, &files);
    publish(&two, &tmp.path().join("c"))
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("more than one machine")
                .and(predicate::str::contains("Some Other CPU")),
        );
    assert!(!tmp.path().join("c").exists(), "nothing written");
}
