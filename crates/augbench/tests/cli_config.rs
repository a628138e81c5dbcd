//! The config-first commands as a user runs them (assert_cmd on the real binary): `plan`,
//! `validate`, `list`, `--help`; exit codes 0/2, located errors with hints and no panics; flags
//! overriding the file; and the resolved-config round trip through `plan`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failure is the test failing"
)]

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use augbench_core::{Matrix, Mode, policy};
use predicates::prelude::*;
use predicates::str::contains;

const QUICKSTART: &str = "configs/examples/quickstart.yaml";
const RGB_MICRO: &str = "configs/examples/local_rgb_micro_cpu.yaml";

/// The workspace root, so configs are named by relative paths (as a user would type them).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn augbench() -> Command {
    let mut cmd = assert_cmd::cargo::cargo_bin_cmd!("augbench");
    cmd.current_dir(root());
    cmd
}

fn stdout_of(args: &[&str]) -> String {
    let out = augbench()
        .args(args)
        .assert()
        .success()
        .get_output()
        .clone();
    String::from_utf8(out.stdout).unwrap()
}

/// Writes `text` to `<tmp>/<name>` and returns the path.
fn write(dir: &tempfile::TempDir, name: &str, text: &str) -> PathBuf {
    let p = dir.path().join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn no_panic() -> impl Predicate<str> {
    contains("panicked")
        .or(contains("backtrace"))
        .or(contains("RUST_BACKTRACE"))
        .not()
}

/// Runs a command that must fail as a usage error (exit 2, no panic); returns its stderr.
fn usage_error(args: &[&str]) -> String {
    let out = augbench()
        .args(args)
        .assert()
        .code(2)
        .stdout("")
        .stderr(no_panic())
        .get_output()
        .clone();
    String::from_utf8(out.stderr).unwrap()
}

/// Asserts that `stderr` contains every needle.
fn has_all(stderr: &str, needles: &[&str]) {
    for n in needles {
        assert!(stderr.contains(n), "`{n}` not in stderr:\n{stderr}");
    }
}

// ---- plan ------------------------------------------------------------------------------------

#[test]
fn plan_lists_one_job_per_library_with_the_resolved_transforms() {
    let out = stdout_of(&["plan", "--config", RGB_MICRO]);
    assert!(out.starts_with("config:\n"), "{out}");
    assert!(out.contains("\njobs:\n") && out.contains("\nexpected_files:\n"));
    let libs = [
        "albumentationsx",
        "albumentations",
        "opencv",
        "torchvision",
        "kornia",
        "pillow",
        "image",
        "imageproc",
        "fast_image_resize",
        "kornia-rs",
        "zune-image",
    ];
    for lib in libs {
        assert!(out.contains(&format!("  library: {lib}\n")), "{lib}");
    }
    assert_eq!(out.matches("transform_count: 58\n").count(), libs.len());
}

#[test]
fn num_items_flag_overrides_the_file() {
    let out = stdout_of(&["plan", "--config", QUICKSTART, "--num-items", "7"]);
    assert!(out.contains("    num_items: 7\n"), "{out}");
    let out = stdout_of(&["plan", "--config", QUICKSTART]);
    assert!(
        out.contains("    num_items: 100\n"),
        "file value kept: {out}"
    );
}

#[test]
fn library_and_transform_flags_override_the_file() {
    let out = stdout_of(&[
        "plan",
        "--config",
        QUICKSTART,
        "--libraries",
        "image,kornia-rs",
        "--transforms",
        "Resize",
        "HorizontalFlip",
    ]);
    assert_eq!(out.matches("  library: ").count(), 2, "{out}");
    assert_eq!(out.matches("transform_count: 2\n").count(), 2, "{out}");
}

#[test]
fn resolved_config_fed_back_gives_the_identical_plan() {
    for cfg in [QUICKSTART, RGB_MICRO, "configs/paper/gcp_rgb_pipeline.yaml"] {
        let first = stdout_of(&["plan", "--config", cfg, "--num-items", "9"]);
        let resolved = config_section(&first);
        let dir = tempfile::tempdir().unwrap();
        let file = write(&dir, "resolved_config.yaml", &resolved);
        let again = stdout_of(&["plan", "--config", file.to_str().unwrap()]);
        assert_eq!(again, first, "{cfg}");
    }
}

/// The `config:` section of a plan, dedented into a config file of its own.
fn config_section(plan: &str) -> String {
    let body = plan
        .split_once("config:\n")
        .and_then(|(_, rest)| rest.split_once("\nschedule:\n"))
        .map(|(cfg, _)| cfg)
        .unwrap();
    body.lines()
        .map(|l| l.strip_prefix("  ").unwrap_or(l))
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

// ---- usage errors ----------------------------------------------------------------------------

#[test]
fn misspelled_key_exits_2_with_location_and_suggestion() {
    let dir = tempfile::tempdir().unwrap();
    let text = "version: 1\nselection:\n  scenario: image-rgb\ndata:\n  num_itms: 10\n";
    let f = write(&dir, "typo.yaml", text);
    for cmd in ["plan", "validate"] {
        let err = usage_error(&[cmd, "--config", f.to_str().unwrap()]);
        has_all(
            &err,
            &["typo.yaml:5:3:", "did you mean `num_items`", "hint:"],
        );
    }
}

#[test]
fn unknown_library_exits_2_and_lists_the_valid_ones() {
    let dir = tempfile::tempdir().unwrap();
    let text = "version: 1\nselection:\n  libraries: [image, imagemagick]\n";
    let f = write(&dir, "lib.yaml", text);
    let err = usage_error(&["plan", "--config", f.to_str().unwrap()]);
    has_all(&err, &["lib.yaml:3:3:", "unknown library `imagemagick`"]);
    for lib in Matrix::get().library_names() {
        has_all(&err, &[&format!("`{lib}`")]);
    }
}

#[test]
fn unknown_library_flag_exits_2_and_names_the_flag() {
    let err = usage_error(&["plan", "--config", QUICKSTART, "--libraries", "pilow"]);
    has_all(&err, &["(set by --libraries)", "did you mean `pillow`"]);
}

#[test]
fn workers_flag_on_micro_exits_2_and_names_the_flag() {
    let err = usage_error(&["validate", "--config", QUICKSTART, "--workers", "3"]);
    has_all(&err, &["(set by --workers)", "workers: 0"]);
}

#[test]
fn missing_config_file_exits_2_and_names_it() {
    for cmd in ["plan", "validate"] {
        let err = usage_error(&[cmd, "--config", "configs/no_such_file.yaml"]);
        has_all(&err, &["configs/no_such_file.yaml", "hint:"]);
    }
}

#[test]
fn bad_yaml_and_bad_values_exit_2_without_panicking() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("syntax.yaml", "version: 1\nselection: [unclosed\n"),
        ("empty.yaml", ""),
        ("version.yaml", "version: 3\n"),
        ("mode.yaml", "version: 1\nselection:\n  mode: mikro\n"),
        ("zero.yaml", "version: 1\ndata:\n  num_items: 0\n"),
        (
            "device.yaml",
            "version: 1\nselection:\n  libraries: [pillow]\nexecution:\n  device: cuda\n",
        ),
    ];
    for (name, text) in cases {
        let f = write(&dir, name, text);
        let err = usage_error(&["plan", "--config", f.to_str().unwrap()]);
        has_all(&err, &[name, "hint:"]);
    }
}

#[test]
fn device_cuda_without_a_cuda_device_exits_2_before_anything_starts() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        &dir,
        "cuda.yaml",
        "version: 1\nselection:\n  scenario: image-rgb\n  libraries: [torchvision]\n  transforms: [HorizontalFlip]\nexecution:\n  device: cuda\n",
    );
    let out = dir.path().join("out");
    let run = augbench()
        .env("CUDA_VISIBLE_DEVICES", "")
        .args(["run", "--config", f.to_str().unwrap(), "--output"])
        .arg(&out)
        .assert()
        .code(2)
        .stderr(no_panic())
        .get_output()
        .clone();
    let err = String::from_utf8(run.stderr).unwrap();
    has_all(
        &err,
        &[
            "device: cuda",
            "no CUDA device",
            "nothing was run",
            "hint:",
            "device: auto",
        ],
    );
    assert!(!out.exists(), "nothing may be written before the refusal");
}

#[test]
fn unknown_scenario_in_list_exits_2() {
    let err = usage_error(&["list", "transforms", "--scenario", "image-rbg"]);
    has_all(&err, &["did you mean `image-rgb`"]);
}

// ---- validate and list -----------------------------------------------------------------------

#[test]
fn validate_accepts_every_shipped_example() {
    for entry in std::fs::read_dir(root().join("configs/examples")).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        let rel = format!("configs/examples/{name}");
        augbench()
            .args(["validate", "--config", &rel])
            .assert()
            .success()
            .stdout(contains(format!("{rel}: ok")));
    }
}

#[test]
fn list_shows_the_matrix() {
    let m = Matrix::get();
    let out = stdout_of(&["list", "scenarios"]);
    for s in m.scenario_names() {
        assert!(out.contains(s), "{s}");
    }
    let out = stdout_of(&["list", "libraries"]);
    for l in m.library_names() {
        assert!(out.contains(l), "{l}");
    }
    let out = stdout_of(&["list", "libraries", "--scenario", "image-9ch"]);
    let nine = &m.scenario("image-9ch").unwrap().libraries;
    assert_eq!(out.lines().count(), 1 + nine.len(), "{out}");
    assert!(!out.contains("pillow"), "{out}");
}

#[test]
fn list_transforms_has_a_row_per_transform() {
    let reg = augbench_core::Registry::get();
    let all = stdout_of(&["list", "transforms"]);
    assert_eq!(all.lines().count(), 1 + reg.transforms.len());
    let video = stdout_of(&["list", "transforms", "--scenario", "video-16f"]);
    assert_eq!(video.lines().count(), 1 + reg.set("video").unwrap().len());
}

/// The embedded recipe catalog: a row per recipe with where the CPU prefix rule splits it, and
/// each implementation's coverage out of every recipe, asked of what runs; asked again, the
/// Python workers' kept answers list the same.
#[test]
fn list_recipes_has_a_row_per_recipe_and_each_implementations_coverage() {
    let c = augbench_catalog::recipes::Catalog::embedded();
    // Asked afresh: no kept answer (another test asking meanwhile only keeps the same ones).
    let _ = std::fs::remove_dir_all(augbench_host::cache::coverage_dir());
    let out = stdout_of(&["list", "recipes"]);
    assert!(
        augbench_host::cache::coverage_dir().is_dir(),
        "no answer kept"
    );
    assert_eq!(stdout_of(&["list", "recipes"]), out, "kept answers differ");
    let total = c.recipes.len();
    assert!(
        out.starts_with(&format!("specs/recipes/rgb.yaml: {total} recipes")),
        "{out}"
    );
    for r in &c.recipes {
        let line = out
            .lines()
            .find(|l| l.split_whitespace().next() == Some(r.id.as_str()))
            .unwrap_or_else(|| panic!("no row for {}", r.id));
        let split = c.prefix(r).expect("the embedded catalog is collatable");
        assert!(line.contains(&r.stages[split].op), "{line}");
    }
    // The catalog's implementations: what a run measures, asked of each worker (CI builds every
    // environment), beside what the catalog lists; GPU ones without a device keep the list.
    let line_of = |name: &str| {
        let found = out
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name));
        found.unwrap_or_else(|| panic!("no row for {name} in\n{out}"))
    };
    for name in &c.implementations {
        let line = line_of(name);
        let cols: Vec<&str> = line.split_whitespace().collect();
        let listed = format!("{}/{total}", c.covered(name));
        assert_eq!(cols[2], listed, "{line}");
        let refused = line
            .split("refuses ")
            .nth(1)
            .map_or(0, |r| r.split(", ").count());
        let measures = c.covered(name) - refused;
        let expected = if name.starts_with("dali") {
            "0".into()
        } else {
            format!("{measures}/{total}")
        };
        assert_eq!(cols[1], expected, "{line}");
        if name.ends_with("_cpu") {
            assert!(line.contains("worker:"), "{line}");
        }
    }
    // What the catalog claims and the adapters refuse (the run answers `unsupported`).
    let refuses = |name: &str, recipe: &str| {
        let line = line_of(name);
        assert!(
            line.contains("worker: refuses") && line.contains(recipe),
            "{line}"
        );
    };
    refuses("pillow_cpu", "RandomResizedCrop+Normalize+ToTensor");
    refuses(
        "kornia_cpu",
        "RandomCrop224+OpticalDistortion+Normalize+ToTensor",
    );
    // The native crates follow, each with the recipes whose every stage it builds, as its worker
    // answers: the same count as the crate's own builders in process.
    for lib in augbench_native::Library::ALL {
        let name = format!("{}_cpu", lib.name());
        let builds = c
            .recipes
            .iter()
            .filter(|r| augbench_native::support::builds_recipe(lib, r))
            .count();
        let line = line_of(&name);
        let cols: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(
            cols[1..3],
            [format!("{builds}/{total}"), "-".into()],
            "{line}"
        );
        assert!(line.contains("worker: native crate"), "{line}");
    }
}

/// A reader that stops early (`augbench list libraries | head -1`) ends the listing quietly: the
/// pipe is closed before the binary writes, and it exits 0 without a panic. Every listing writes
/// through the same writer (`cmd::output::emit`); this one starts no worker (`list recipes` asks
/// each environment's worker what it covers, 20 s of the test's time when not kept).
#[test]
fn a_listing_into_a_closed_pipe_exits_quietly() {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_augbench"))
        .args(["list", "libraries"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && !err.contains("panicked"), "{out:?}");
}

// ---- help ------------------------------------------------------------------------------------

/// Subcommand names listed under `Commands:` in a help text (without `help`).
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_string)
        .collect()
}

/// Every command path reachable from the top-level help, each with its help text.
fn all_helps() -> Vec<(Vec<String>, String)> {
    let mut todo = vec![Vec::<String>::new()];
    let mut done = Vec::new();
    while let Some(path) = todo.pop() {
        let mut args = path.clone();
        args.push("--help".into());
        let help = stdout_of(&args.iter().map(String::as_str).collect::<Vec<_>>());
        for sub in subcommands(&help) {
            let mut p = path.clone();
            p.push(sub);
            todo.push(p);
        }
        done.push((path, help));
    }
    done
}

#[test]
fn help_works_on_every_command() {
    let helps = all_helps();
    let names: Vec<String> = helps.iter().map(|(p, _)| p.join(" ")).collect();
    for needed in [
        "plan",
        "validate",
        "run",
        "list",
        "list scenarios",
        "list libraries",
        "list decoders",
        "list transforms",
    ] {
        assert!(
            names.iter().any(|n| n == needed),
            "{needed} missing: {names:?}"
        );
    }
    for (path, help) in &helps {
        assert!(help.contains("Usage: augbench"), "{path:?}: {help}");
    }
}

/// Where help shows a default for a policy-backed flag, it is policy's value.
#[test]
fn defaults_shown_in_help_come_from_policy() {
    let image = augbench_core::Media::Image;
    let policy_values: [(&str, Vec<String>); 4] = [
        ("--num-runs", vec![policy::DEFAULT_NUM_RUNS.to_string()]),
        ("--batch-size", vec![policy::DEFAULT_BATCH_SIZE.to_string()]),
        (
            "--workers",
            [Mode::Micro, Mode::Pipeline]
                .map(|m| policy::default_workers(m).to_string())
                .to_vec(),
        ),
        (
            "--num-items",
            vec![policy::default_num_items(image).to_string()],
        ),
    ];
    for cmd in ["plan", "validate", "run"] {
        let help = stdout_of(&[cmd, "--help"]);
        for (flag, values) in &policy_values {
            let Some(line) = help.lines().find(|l| l.contains(flag)) else {
                continue;
            };
            if line.to_lowercase().contains("default") {
                assert!(
                    values.iter().any(|v| line.contains(v.as_str())),
                    "{cmd}: {line}"
                );
            }
        }
    }
}

// ---- snapshots of what a user sees ------------------------------------------------------------

/// The README's library table is `augbench list libraries`: every library of the matrix, with
/// its licence, the version it is pinned to, its backend and environment group.
#[test]
fn readme_lists_every_library_with_its_licence_and_version() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md")).unwrap();
    let listed = stdout_of(&["list", "libraries"]);
    for line in listed.lines().skip(1) {
        let cells: Vec<&str> = line
            .split("  ")
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .collect();
        let row = format!("| {} |", cells[..5].join(" | "));
        assert!(readme.contains(&row), "README.md lacks the row {row}");
    }
}

#[test]
fn list_tables_snapshot() {
    insta::assert_snapshot!("list_scenarios", stdout_of(&["list", "scenarios"]));
    insta::assert_snapshot!("list_libraries", stdout_of(&["list", "libraries"]));
    insta::assert_snapshot!("list_decoders", stdout_of(&["list", "decoders"]));
}

#[test]
fn config_error_messages_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("typo.yaml", "version: 1\ndata:\n  num_itms: 10\n"),
        (
            "library.yaml",
            "version: 1\nselection:\n  libraries: [kornia, pilow]\n",
        ),
        (
            "micro.yaml",
            "version: 1\nselection:\n  mode: micro\nexecution:\n  workers: 2\n",
        ),
        ("cloud.yaml", "version: 1\ncloud:\n  provider: gcp\n"),
    ];
    let mut shown = String::new();
    for (name, text) in cases {
        write(&dir, name, text);
        let out = augbench()
            .current_dir(dir.path())
            .args(["validate", "--config", name])
            .assert()
            .code(2)
            .get_output()
            .clone();
        shown.push_str(&format!("$ augbench validate --config {name}\n"));
        shown.push_str(&String::from_utf8(out.stderr).unwrap());
    }
    insta::assert_snapshot!("config_errors", shown);
}

#[test]
fn run_refuses_pipeline_modes_it_cannot_measure_before_measuring_anything() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let config = dir.path().join("multichannel_pipeline.yaml");
    std::fs::write(
        &config,
        "version: 1\nselection: {scenario: image-9ch, mode: pipeline, libraries: [torchvision]}\n",
    )
    .unwrap();
    let stderr = usage_error(&[
        "run",
        "--config",
        config.to_str().unwrap(),
        "--output",
        out.to_str().unwrap(),
    ]);
    assert!(
        stderr.contains("9-channel image pipeline")
            && stderr.contains("pipeline mode for RGB images and RGB video clips only"),
        "{stderr}"
    );
    assert!(stderr.contains("hint: use `mode: micro`"), "{stderr}");
    assert!(!out.exists(), "nothing is written under a pipeline label");
}

#[test]
fn the_batch_copy_scope_needs_cuda_and_single_worker_one_worker() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, execution: &str| {
        let path = dir.path().join(name);
        let text = format!(
            "version: 1\nselection: {{mode: pipeline, libraries: [torchvision]}}\nexecution: {execution}\n"
        );
        std::fs::write(&path, text).unwrap();
        path
    };
    let copy = write(
        "copy.yaml",
        "{pipeline_scope: decode_dataloader_augment_batch_copy}",
    );
    let stderr = usage_error(&["plan", "--config", copy.to_str().unwrap()]);
    assert!(stderr.contains("needs `device: cuda`"), "{stderr}");
    assert!(stderr.contains("copy.yaml"), "{stderr}");
    let single = write(
        "single.yaml",
        "{thread_policy: pipeline-single-worker, workers: 2}",
    );
    let stderr = usage_error(&["plan", "--config", single.to_str().unwrap()]);
    assert!(
        stderr.contains("runs one loader worker, got `workers: 2`"),
        "{stderr}"
    );
}

// ---- A/B variants --------------------------------------------------------------------------------

/// The plan of an A/B run: one job per variant (label, library, what it installs, the baseline
/// it is compared against, its own file), and each variant's environment, to build.
#[test]
fn plan_shows_each_variant_and_its_environment() {
    let out = augbench()
        .env("AUGBENCH_CACHE", "/augbench-cache")
        .args(["plan", "--config", "configs/examples/ab_versions.yaml"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let jobs = &text[text.find("jobs:").unwrap()..];
    // The environment key hashes this machine's Python version: shown as <key>.
    let redacted: String = jobs
        .lines()
        .map(|l| match l.rsplit_once('-') {
            Some((head, key)) if key.len() == 16 && key.chars().all(|c| c.is_ascii_hexdigit()) => {
                format!("{head}-<key>")
            }
            _ => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n");
    insta::assert_snapshot!(redacted);
}

#[test]
fn a_variant_flag_replaces_the_files_variants_and_names_itself_in_errors() {
    let plan = stdout_of(&[
        "plan",
        "--config",
        "configs/examples/ab_versions.yaml",
        "--variant",
        "pillow==12.2.0",
        "--variant",
        "pillow@next=pillow==13.0.0",
    ]);
    assert!(plan.contains("library: pillow@12.2.0"), "{plan}");
    assert!(plan.contains("compared_against: pillow@12.2.0"), "{plan}");
    assert!(!plan.contains("pillow@11.3.0"), "{plan}");
    let err = usage_error(&[
        "validate",
        "--config",
        "configs/examples/ab_versions.yaml",
        "--variant",
        "image@x=image==0.25",
    ]);
    has_all(
        &err,
        &["Rust crate compiled into augbench", "(set by --variant)"],
    );
    let err = usage_error(&["plan", "--config", QUICKSTART, "--variant", "nosuch==1"]);
    has_all(&err, &["no library installs `nosuch`"]);
}

/// The plan's job block (from its `- scenario:` line to the next job) of the column `label`.
fn job_block<'a>(plan: &'a str, label: &str) -> &'a str {
    let jobs = &plan[plan.find("\njobs:").unwrap()..];
    let at = jobs.find(&format!("library: {label}\n")).unwrap();
    let start = jobs[..at].rfind("- scenario:").unwrap();
    let end = jobs[at..]
        .find("- scenario:")
        .map_or(jobs.len(), |e| at + e);
    &jobs[start..end]
}

/// Pipeline and video micro runs take variants like micro: each variant is its own job over the
/// environment group its library runs that mode in (Pillow's loader: the pipeline group), with
/// its own file named by label and its own environment listed.
#[test]
fn pipeline_and_video_plans_build_each_variant_over_its_modes_group() {
    use augbench_core::{Matrix, Mode};
    let cases = [
        (
            "configs/examples/local_rgb_pipeline_cpu.yaml",
            "pillow",
            Mode::Pipeline,
            "image-rgb/pipeline/pillow@next_decode_dataloader_augment_",
        ),
        (
            "configs/examples/local_video_micro_cpu.yaml",
            "kornia",
            Mode::Micro,
            "video-16f/micro/kornia@next_micro_results.json",
        ),
    ];
    for (config, library, mode, file) in cases {
        let flag = format!("{library}@next={library}==0.0.1");
        let plan = stdout_of(&["plan", "--config", config, "--variant", &flag]);
        let group = Matrix::get().library(library).unwrap().env_group_for(mode);
        let job = job_block(&plan, &format!("{library}@next"));
        has_all(
            job,
            &[
                &format!("variant_of: {library}\n"),
                &format!("installs: pin {library}==0.0.1\n"),
                &format!("env_group: {group}\n"),
                file,
            ],
        );
        let envs = &plan[plan.find("\nvariant_environments:").unwrap()..];
        has_all(
            envs,
            &[
                &format!("label: {library}@next\n"),
                &format!("over_lock: envs/{group}.txt\n"),
            ],
        );
    }
}

#[test]
fn a_run_count_and_a_precision_together_are_refused() {
    augbench()
        .args(["plan", "--config", "configs/examples/quickstart.yaml"])
        .args(["--num-runs", "3", "--precision", "0.05"])
        .current_dir(env!("CARGO_MANIFEST_DIR").to_string() + "/../..")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--num-runs"));
}

/// `plan` names the files `run` writes on this machine: with a CUDA device (a fake `nvidia-smi`
/// first on PATH lists one) the `auto` jobs of CUDA-capable libraries are `cuda` jobs; without
/// one (a fake that lists none) every job is a CPU job; never `_dev-auto`.
#[test]
fn plan_settles_device_auto_by_the_machines_cuda_devices() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("auto.yaml");
    std::fs::write(
        &cfg,
        "version: 1\nselection:\n  scenario: image-rgb\n  mode: micro\n  libraries: [kornia, pillow]\n  transforms: [HorizontalFlip]\nexecution:\n  device: auto\n",
    )
    .unwrap();
    let plan_with = |smi_script: &str| {
        let bin = tempfile::tempdir().unwrap();
        let smi = bin.path().join("nvidia-smi");
        std::fs::write(&smi, smi_script).unwrap();
        let mut perms = std::fs::metadata(&smi).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
        std::fs::set_permissions(&smi, perms).unwrap();
        let path = format!(
            "{}:{}",
            bin.path().display(),
            std::env::var("PATH").unwrap()
        );
        let out = augbench()
            .env("PATH", path)
            .env_remove("CUDA_VISIBLE_DEVICES")
            .args(["plan", "--config"])
            .arg(&cfg)
            .assert()
            .success()
            .get_output()
            .clone();
        String::from_utf8(out.stdout).unwrap()
    };
    let with_gpu = plan_with("#!/bin/sh\necho 'NVIDIA Fake GPU, 16384'\n");
    assert!(
        with_gpu.contains("kornia_micro_dev-cuda_results.json"),
        "{with_gpu}"
    );
    assert!(with_gpu.contains("pillow_micro_results.json"), "{with_gpu}");
    assert!(!with_gpu.contains("dev-auto"), "{with_gpu}");
    let without = plan_with("#!/bin/sh\nexit 9\n");
    assert!(without.contains("kornia_micro_results.json"), "{without}");
    assert!(
        !without.contains("dev-cuda") && !without.contains("dev-auto"),
        "{without}"
    );
}

/// `augbench init`: the examples come out of the binary, outside any clone, and run as written.
#[test]
fn init_writes_the_built_in_examples_where_there_is_no_clone() {
    let dir = tempfile::tempdir().unwrap();
    let here = || {
        let mut cmd = assert_cmd::cargo::cargo_bin_cmd!("augbench");
        cmd.current_dir(dir.path());
        cmd
    };
    let listed = here().arg("init").assert().success().get_output().clone();
    let listed = String::from_utf8(listed.stdout).unwrap();
    for entry in std::fs::read_dir(root().join("configs/examples")).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        let stem = name.trim_end_matches(".yaml");
        assert!(
            listed.contains(&format!("  {stem} ")),
            "{stem} not listed:\n{listed}"
        );
    }
    here()
        .args(["init", "quickstart"])
        .assert()
        .success()
        .stdout(contains("run it:  augbench run --config quickstart.yaml"));
    let written = std::fs::read_to_string(dir.path().join("quickstart.yaml")).unwrap();
    assert_eq!(
        written,
        std::fs::read_to_string(root().join(QUICKSTART)).unwrap()
    );
    here()
        .args(["validate", "--config", "quickstart.yaml"])
        .assert()
        .success();
    here()
        .args(["init", "production_rgb_small", "--out", "small.yaml"])
        .assert()
        .success()
        .stdout(contains("augbench production --config small.yaml"));
    here()
        .args(["init", "quickstart"])
        .assert()
        .code(2)
        .stderr(contains("quickstart.yaml already exists").and(contains("hint:")));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("quickstart.yaml")).unwrap(),
        written,
        "an existing file is never overwritten"
    );
    here()
        .args(["init", "quickstrat"])
        .assert()
        .code(2)
        .stderr(contains("did you mean `quickstart`?"));
}
