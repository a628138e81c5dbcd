//! `augbench run` in pipeline mode for the Rust crates (no Python): the native loader's result
//! files carry the decoder, the loader threads and the shared-stage note; each library gets its
//! `DecodeOnly` ceiling, timed again beside every row in its rounds; a transform that panics in a
//! loader thread, or hangs there, is an `error` row (the hang ends at the request timeout) while
//! the other rows are measured.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failure is the test failing"
)]

use std::path::Path;

use augbench_core::results::{ResultFile, Status};

/// The hang ends at a 6 s request timeout: a request here times 12 items (three batches), well
/// under a second even on a loaded 2-core machine.
fn config(dir: &Path) -> std::path::PathBuf {
    let text = "version: 1\nselection:\n  scenario: image-rgb\n  mode: pipeline\n  libraries: [image, kornia-rs]\n  transforms: [HorizontalFlip, Grayscale, Normalize, DecodeOnly]\ndata: {num_items: 12}\nexecution: {num_runs: 2, workers: 2, batch_size: 4, request_timeout_sec: 6}\n";
    let path = dir.join("native.yaml");
    std::fs::write(&path, text).unwrap();
    path
}

fn result_file(out: &Path, library: &str) -> ResultFile {
    let name = format!("{library}_decode_dataloader_augment_n12_r2_w2_b4_results.json");
    let path = out.join("image-rgb/pipeline").join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{} missing: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

#[test]
fn native_pipeline_rows_with_a_panicking_and_a_hanging_loader_thread() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let run = assert_cmd::Command::cargo_bin("augbench")
        .unwrap()
        .args(["run", "--config"])
        .arg(config(dir.path()))
        .arg("--output")
        .arg(&out)
        .env(
            "AUGBENCH_TEST_FAULTS",
            "panic:HorizontalFlip@image,hang:Grayscale@kornia-rs",
        )
        .timeout(std::time::Duration::from_secs(300))
        .output()
        .unwrap();
    let log =
        String::from_utf8_lossy(&run.stderr).to_string() + &String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "error rows are results, not a failed run
{log}"
    );

    let image = result_file(&out, "image");
    let p = image.metadata.pipeline.as_ref().unwrap();
    assert!(p.decoder.starts_with("image 0.25"), "{}", p.decoder);
    assert!(
        p.notes.iter().any(|n| n.contains("shared implementation")),
        "{:?}",
        p.notes
    );
    assert!(image.metadata.timing.backend.contains("native threads"));
    let flip = &image.results["HorizontalFlip"];
    assert_eq!(flip.status, Some(Status::Error));
    assert!(
        flip.reason
            .as_deref()
            .unwrap_or_default()
            .contains("panicked"),
        "{:?}",
        flip.reason
    );
    for name in ["DecodeOnly", "Grayscale"] {
        let r = &image.results[name];
        assert_eq!(r.status, Some(Status::Ok), "image {name}: {:?}", r.reason);
        let d = r.pipeline.as_ref().unwrap();
        assert_eq!(d.worker_threads.len(), 2);
        assert_eq!(d.batch["shape"], serde_json::json!([4, 3, 224, 224]));
    }
    assert_eq!(image.results["Normalize"].status, Some(Status::Unsupported));

    let kornia = result_file(&out, "kornia-rs");
    assert_eq!(
        kornia.results["Grayscale"].status,
        Some(Status::Error),
        "the hang ends at the timeout"
    );
    assert_eq!(kornia.results["HorizontalFlip"].status, Some(Status::Ok));
    assert_eq!(kornia.results["DecodeOnly"].status, Some(Status::Ok));

    // Every round timed each library's ceiling beside its row: one window beside each of the
    // row's, in every process, and the row's share paired with them.
    for r in [
        &image.results["Grayscale"],
        &kornia.results["HorizontalFlip"],
    ] {
        let d = r.pipeline.as_ref().unwrap();
        assert_eq!(d.ceiling_throughputs.len(), r.throughputs.len(), "{d:?}");
        assert!(d.ceiling_throughputs.iter().all(|t| *t > 0.0), "{d:?}");
        let share = d.ceiling.as_ref().expect("paired with the ceiling");
        assert_eq!(share.partner, "DecodeOnly");
        assert_eq!(share.rounds as usize, r.throughputs.len());
    }
    // The ceiling listed last: its own rounds come while the companion is up, and still time
    // no companion window beside it.
    let own = kornia.results["DecodeOnly"].pipeline.as_ref().unwrap();
    assert!(
        own.ceiling_throughputs.is_empty() && own.ceiling.is_none(),
        "{own:?}"
    );
}
