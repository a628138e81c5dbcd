//! `augbench run` in video pipeline mode end to end, on augbench's own synthetic video files
//! (decoded once into the clip cache): torchvision in PyTorch's DataLoader and kornia-rs in the
//! native loader deliver `B×T×3×224×224` batches of clips, the files say so (clip length, notes,
//! the clip cache's decoder and sampling rule), and the summary and `compare` show clips/s with a
//! frames/s column. The environments come from the shared cache.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failure is the test failing"
)]

use std::path::Path;

use augbench_core::results::{ResultFile, Status};

const CLIPS: u64 = 4;
const FRAMES: u64 = 4;

fn augbench() -> assert_cmd::Command {
    assert_cmd::Command::cargo_bin("augbench").unwrap()
}

fn result_file(out: &Path, library: &str) -> ResultFile {
    let name = format!("{library}_decode_dataloader_augment_n{CLIPS}_r2_w1_b2_results.json");
    let path = out.join("video-16f/pipeline").join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{} missing: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

#[test]
fn video_pipeline_rows_deliver_clip_batches_labelled_as_clips() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("video_pipeline.yaml");
    // Slow skip off: the test is about labels, and a preflight beside the other tests may read
    // above the slow threshold.
    let text = format!(
        "version: 1\nselection:\n  scenario: video-16f\n  mode: pipeline\n  libraries: [torchvision, kornia-rs]\n  transforms: [HorizontalFlip]\ndata: {{num_items: {CLIPS}, clip_length: {FRAMES}}}\nexecution: {{num_runs: 2, workers: 1, batch_size: 2, device: cpu, disable_slow_skip: true}}\n"
    );
    std::fs::write(&config, text).unwrap();
    let out = dir.path().join("out");
    let run = augbench()
        .args(["run", "--no-refresh-requirements", "--config"])
        .arg(&config)
        .arg("--output")
        .arg(&out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    let log = format!("{stdout}\n{}", String::from_utf8_lossy(&run.stderr));
    assert!(run.status.success(), "{log}");
    assert!(stdout.contains("clips/s (pipeline, w=1, b=2)"), "{log}");
    assert!(stdout.contains("torchvision [frames/s]"), "{log}");
    for (library, draws) in [
        ("torchvision", "one parameter draw per clip"),
        ("kornia-rs", "per frame"),
    ] {
        let file = result_file(&out, library);
        let m = &file.metadata;
        let p = m.pipeline.as_ref().expect("pipeline metadata");
        assert_eq!(p.clip_length, Some(FRAMES), "{library}");
        let clips_note = p.notes.iter().find(|n| n.starts_with("clips:"));
        assert!(
            clips_note.is_some_and(|n| n.contains(draws)),
            "{library}: {p:?}"
        );
        let clips = m.dataset.clips.as_ref().expect("clip cache metadata");
        assert!(!clips.decoder.is_empty() && !clips.sampling_rule.is_empty());
        assert_eq!(m.benchmark_params.clip_length, Some(FRAMES));
        for name in ["HorizontalFlip", "DecodeOnly"] {
            let r = &file.results[name];
            assert_eq!(r.status, Some(Status::Ok), "{library} {name}: {log}");
            let batch = [2, FRAMES, 3, 224, 224];
            assert_eq!(r.output_shape.as_deref(), Some(&batch[..]), "{library}");
        }
    }
    let compare = augbench().arg("compare").arg(&out).output().unwrap();
    let table = String::from_utf8_lossy(&compare.stdout);
    assert!(compare.status.success(), "{table}");
    assert!(table.contains("[clips/s] | [frames/s]"), "{table}");
}
