//! The native worker's protocol loop on in-memory buffers, over real synthetic JPEGs and real
//! broken files: hello, load (skips and conversions), prepare, check, time, unsupported,
//! malformed requests, and the 1×1 image.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failure is the test failing"
)]

use std::io::Cursor;
use std::path::{Path, PathBuf};

use augbench_media::synth;
use augbench_native::{ServeOptions, serve_with};
use image::{GrayImage, RgbImage, RgbaImage};
use indicatif::ProgressBar;
use serde_json::{Value, json};

const LIBRARIES: [&str; 4] = ["image", "imageproc", "fast_image_resize", "kornia-rs"];

/// Sends `requests` to a worker for `library` and returns its response lines as JSON.
fn exchange(library: &str, requests: &[Value]) -> Vec<Value> {
    augbench_native::exchange(library, requests).unwrap()
}

fn jpegs(dir: &Path, n: u64) -> Vec<String> {
    let paths = synth::write_images(dir, 5, n, &ProgressBar::hidden()).unwrap();
    paths.iter().map(|p| p.display().to_string()).collect()
}

fn load(paths: &[String], channels: u64) -> Value {
    json!({"op": "load", "media": "image", "paths": paths, "channels": channels,
           "clip_length": 16, "device": "cpu"})
}

fn prepare(name: &str, params: Value) -> Value {
    json!({"op": "prepare", "transform": name, "params": params, "device": "cpu"})
}

fn time(count: u64, loops: u64) -> Value {
    json!({"op": "time", "start": 1, "count": count, "loops": loops})
}

#[test]
fn hello_reports_library_versions_runtime_and_threads() {
    for lib in LIBRARIES {
        let r = &exchange(lib, &[json!({"op": "hello"})])[0];
        assert_eq!(r["ok"], true);
        assert_eq!(r["protocol"], 1);
        assert_eq!(r["library"], lib);
        assert!(r["versions"]["image"].is_string(), "{r}");
        assert!(r["runtime"].as_str().unwrap().starts_with("rustc "), "{r}");
        assert!(r["threads"]["rayon"].as_u64().unwrap() >= 1);
    }
}

/// One transform per library with its parameters and the output shape on a 375×500 input.
fn sample_transform(lib: &str) -> (&'static str, Value, Value) {
    let resize = json!({"target_size": 64, "interpolation": "bilinear"});
    match lib {
        "imageproc" => (
            "GaussianBlur",
            json!({"sigma": 2.0, "kernel_size": [5, 5]}),
            json!(null),
        ),
        _ => ("Resize", resize, json!([64, 64, 3])),
    }
}

#[test]
fn every_library_loads_checks_and_times() {
    let t = tempfile::tempdir().unwrap();
    let paths = jpegs(t.path(), 3);
    for lib in LIBRARIES {
        let (name, params, out_shape) = sample_transform(lib);
        let requests = [
            load(&paths, 3),
            prepare(name, params),
            json!({"op": "check"}),
            time(5, 3),
            json!({"op": "shutdown"}),
            json!({"op": "hello"}),
        ];
        let r = exchange(lib, &requests);
        assert_eq!(r.len(), 5, "{lib}: shutdown must end the loop: {r:?}");
        assert!(r.iter().all(|v| v["ok"] == true), "{lib}: {r:?}");
        assert_eq!(r[0]["count"], 3);
        assert_eq!(r[0]["dtype"], "uint8");
        assert_eq!(r[0]["layout"], "HWC");
        assert_eq!(r[0]["shape"].as_array().unwrap().len(), 3);
        assert_eq!(r[1]["transform"], name);
        assert_eq!(r[2]["input_shape"], r[0]["shape"]);
        let expect = if out_shape.is_null() {
            r[0]["shape"].clone()
        } else {
            out_shape
        };
        assert_eq!(r[2]["output_shape"], expect, "{lib}");
        let ns = r[3]["ns"].as_array().unwrap();
        assert_eq!(ns.len(), 3);
        assert!(ns.iter().all(|v| v.as_u64().unwrap() > 0), "{lib}: {ns:?}");
    }
}

#[test]
fn unsupported_and_malformed_requests_fail_without_ending_the_worker() {
    let t = tempfile::tempdir().unwrap();
    let paths = jpegs(t.path(), 1);
    let requests = [
        json!({"op": "check"}),
        load(&paths, 3),
        prepare("Elastic", json!({"alpha": 50.0})),
        json!({"op": "launch"}),
        prepare("Resize", json!({"interpolation": "bilinear"})),
        prepare("HorizontalFlip", json!({})),
        json!({"op": "check"}),
    ];
    let r = exchange("fast_image_resize", &requests);
    assert_eq!(r.len(), 7);
    assert_eq!(
        (r[0]["ok"].clone(), r[0]["kind"].clone()),
        (json!(false), json!("bad_request"))
    );
    assert_eq!(r[2]["kind"], "unsupported");
    assert!(
        r[2]["error"].as_str().unwrap().contains("Elastic"),
        "{}",
        r[2]
    );
    assert_eq!(r[3]["kind"], "bad_request");
    assert_eq!(r[4]["kind"], "bad_request");
    assert!(
        r[4]["error"].as_str().unwrap().contains("target_size"),
        "{}",
        r[4]
    );
    assert_eq!(r[5]["kind"], "unsupported");
    assert_eq!(
        r[6]["kind"], "bad_request",
        "no transform is prepared after a failed prepare"
    );
}

fn write(path: &Path, bytes: &[u8]) -> String {
    std::fs::write(path, bytes).unwrap();
    path.display().to_string()
}

/// A folder of broken and unusual files: corrupt, truncated, grayscale, RGBA, 1×1, and one good JPEG.
fn odd_files(dir: &Path) -> Vec<String> {
    let good = jpegs(dir, 1).remove(0);
    let bytes = std::fs::read(&good).unwrap();
    let one: PathBuf = dir.join("one.png");
    RgbImage::from_pixel(1, 1, image::Rgb([9, 8, 7]))
        .save(&one)
        .unwrap();
    let gray = dir.join("gray.png");
    GrayImage::from_pixel(40, 30, image::Luma([100]))
        .save(&gray)
        .unwrap();
    let rgba = dir.join("rgba.png");
    RgbaImage::from_pixel(30, 40, image::Rgba([1, 2, 3, 128]))
        .save(&rgba)
        .unwrap();
    vec![
        one.display().to_string(),
        write(&dir.join("corrupt.jpg"), b"this is not a jpeg at all"),
        write(&dir.join("truncated.jpg"), &bytes[..bytes.len() / 3]),
        gray.display().to_string(),
        rgba.display().to_string(),
        dir.join("missing.jpg").display().to_string(),
        good,
    ]
}

#[test]
fn broken_files_are_skipped_with_reasons_and_conversions_counted() {
    let t = tempfile::tempdir().unwrap();
    let paths = odd_files(t.path());
    let r = exchange("image", &[load(&paths, 3)]);
    let r = &r[0];
    assert_eq!(r["ok"], true, "{r}");
    assert_eq!(r["count"], 4, "1×1, gray, rgba and the good JPEG load: {r}");
    assert_eq!(r["converted"], 2, "{r}");
    assert_eq!(r["shape"], json!([1, 1, 3]));
    let skipped = r["skipped"].as_array().unwrap();
    let names: Vec<&str> = skipped
        .iter()
        .map(|s| s["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        vec![paths[1].as_str(), paths[2].as_str(), paths[5].as_str()]
    );
    for s in skipped {
        assert!(!s["reason"].as_str().unwrap().is_empty(), "{s}");
    }
}

#[test]
fn a_1x1_image_is_transformed_or_fails_clearly() {
    let t = tempfile::tempdir().unwrap();
    let paths = odd_files(t.path());
    let one = vec![paths[0].clone()];
    let r = exchange(
        "kornia-rs",
        &[
            load(&one, 3),
            prepare("HorizontalFlip", json!({})),
            json!({"op": "check"}),
            prepare("CenterCrop224", json!({"height": 224, "width": 224})),
            json!({"op": "check"}),
            time(1, 1),
        ],
    );
    assert_eq!(r[2]["output_shape"], json!([1, 1, 3]), "{:?}", r);
    assert_eq!(r[4]["ok"], false);
    assert_eq!(r[4]["kind"], "exception");
    assert!(r[4]["error"].as_str().unwrap().contains("1×1"), "{}", r[4]);
    assert_eq!(r[5]["kind"], "exception");
}

#[test]
fn nothing_decodable_is_a_failure_listing_every_file() {
    let t = tempfile::tempdir().unwrap();
    let bad = vec![write(&t.path().join("x.jpg"), b"nope")];
    let r = &exchange("imageproc", &[load(&bad, 3)])[0];
    assert_eq!(r["ok"], false);
    assert_eq!(r["kind"], "bad_input", "{r}");
    assert!(r["error"].as_str().unwrap().contains("x.jpg"), "{r}");
    assert!(r["detail"].as_str().unwrap().contains("x.jpg"), "{r}");
}

#[test]
fn nine_channels_are_kornia_only() {
    let t = tempfile::tempdir().unwrap();
    let paths = jpegs(t.path(), 2);
    let r = exchange(
        "kornia-rs",
        &[
            load(&paths, 9),
            prepare("VerticalFlip", json!({})),
            json!({"op": "check"}),
            time(2, 1),
        ],
    );
    assert!(r.iter().all(|v| v["ok"] == true), "{r:?}");
    assert_eq!(r[0]["shape"][2], 9);
    assert_eq!(r[2]["output_shape"], r[2]["input_shape"]);
    for lib in ["image", "imageproc", "fast_image_resize"] {
        let r = &exchange(lib, &[load(&paths, 9)])[0];
        assert_eq!(r["kind"], "unsupported", "{lib}: {r}");
    }
    let r = &exchange("kornia-rs", &[load(&paths, 6)])[0];
    assert_eq!(r["kind"], "unsupported");
}

#[test]
fn identity_measures_the_harness_alone() {
    let t = tempfile::tempdir().unwrap();
    let paths = jpegs(t.path(), 2);
    let r = exchange(
        "image",
        &[
            load(&paths, 3),
            prepare("Identity", json!({})),
            json!({"op": "check"}),
            time(1000, 2),
        ],
    );
    assert!(r.iter().all(|v| v["ok"] == true), "{r:?}");
    assert_eq!(r[2]["output_shape"], r[2]["input_shape"]);
}

#[test]
fn faults_are_unknown_unless_enabled() {
    let t = tempfile::tempdir().unwrap();
    let paths = jpegs(t.path(), 1);
    let r = exchange("image", &[load(&paths, 3), prepare("__panic", json!({}))]);
    assert_eq!(r[1]["kind"], "unsupported");
}

#[test]
fn an_enabled_panic_fault_unwinds_after_complete_lines_only() {
    let t = tempfile::tempdir().unwrap();
    let paths = jpegs(t.path(), 1);
    let input: String = [load(&paths, 3), prepare("__panic", json!({})), time(1, 1)]
        .iter()
        .map(|r| format!("{r}\n"))
        .collect();
    let mut out = Vec::new();
    let options = ServeOptions { test_faults: true };
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        serve_with("image", Cursor::new(input), &mut out, options)
    }));
    assert!(result.is_err(), "the fault must panic");
    let text = String::from_utf8(out).unwrap();
    assert!(text.ends_with('\n'));
    assert_eq!(text.lines().count(), 2);
    for line in text.lines() {
        serde_json::from_str::<Value>(line).unwrap();
    }
}

#[test]
fn unknown_libraries_are_usage_errors() {
    let e = serve_with(
        "opencv",
        Cursor::new(""),
        Vec::new(),
        ServeOptions::default(),
    )
    .unwrap_err();
    assert!(
        e.downcast_ref::<augbench_core::UsageError>().is_some(),
        "{e}"
    );
}
