//! The public reference benchmark's result format, read leniently from a `serde_json::Value`:
//! any field may be missing. Scenario and mode come from metadata or the path
//! (`<out>/<scenario>/<mode>/<lib>_…`), the library from metadata or the file name.

use std::collections::BTreeMap;
use std::path::Path;

use augbench_core::results::Status;
use augbench_core::{Matrix, Media, policy};
use serde_json::Value;

use crate::model::{Dataset, GroupKey, Row, Source};

const MODES: [&str; 2] = ["micro", "pipeline"];

pub fn load(path: &Path, v: &Value) -> Dataset {
    let meta = v.get("metadata").cloned().unwrap_or(Value::Null);
    let params = meta.get("benchmark_params").cloned().unwrap_or(Value::Null);
    let (file_library, file_device) = super::file_name::name_parts(path);
    let library = text(&meta, "/library").unwrap_or(file_library);
    let media = media(path, &meta, &params);
    let key = group_key(path, &meta, &params, media, file_device);
    let versions = string_map(meta.get("library_versions"));
    let version = version_of(&library, &versions);
    let threshold = number(&params, "/slow_threshold_sec_per_item")
        .unwrap_or_else(|| policy::slow_threshold_sec_per_item(media));
    let clip_length = (media == Media::Video)
        .then(|| clip_length(&params, &key.scenario))
        .flatten();
    let base = Row {
        scenario: key.scenario.clone(),
        mode: key.mode.clone(),
        media,
        clip_length,
        library: library.clone(),
        library_version: version.clone(),
        device: key.device.clone(),
        variant: key.variant.clone(),
        transform: String::new(),
        status: Status::Ok,
        median: None,
        figure: None,
        figure_estimator: None,
        figure_interval: None,
        std: None,
        ci_low: None,
        ci_high: None,
        rerun: None,
        throughputs: Vec::new(),
        cpu_throughputs: Vec::new(),
        process_runs: Vec::new(),
        paired: Vec::new(),
        pairing: None,
        slow_threshold: threshold,
        reason: None,
        output_contiguous: None, // the reference format does not record the output form
        force_share: None,
        ceiling_share: None,
        first_batch_s: None,
        instructions: None,
        params: None, // the reference format names parameters its own way: not compared
        source: path.to_path_buf(),
    };
    let mut warnings = Vec::new();
    let mut rows = Vec::new();
    for (name, entry) in v["results"].as_object().into_iter().flatten() {
        if !entry.is_object() {
            warnings.push(format!(
                "{}: results[{name}] is not an object; skipped",
                path.display()
            ));
            continue;
        }
        let r = Row {
            transform: name.clone(),
            slow_threshold: number(entry, "/slow_threshold_sec_per_item").unwrap_or(threshold),
            ..base.clone()
        };
        rows.push(row(r, entry));
    }
    let source = Source {
        path: path.to_path_buf(),
        key,
        library,
        library_version: version,
        system_info: meta.get("system_info").cloned().unwrap_or(Value::Null),
        library_versions: versions,
        benchmark_params: params,
        thread_settings: meta.get("thread_settings").cloned().unwrap_or(Value::Null),
        equivalence: None,
        configured_reference: None,
        variant: None,
        data: None,
    };
    Dataset {
        rows,
        sources: vec![source],
        warnings,
    }
}

/// Scenario and mode from metadata, else the path, else the media and `micro`; device from
/// metadata, else the file name, else `cpu`.
fn group_key(
    path: &Path,
    meta: &Value,
    params: &Value,
    media: Media,
    file_device: Option<String>,
) -> GroupKey {
    let (path_scenario, path_mode) = from_path(path);
    let mode = text(meta, "/mode")
        .or(path_mode)
        .unwrap_or_else(|| "micro".into());
    GroupKey {
        scenario: text(meta, "/scenario")
            .or(path_scenario)
            .unwrap_or_else(|| media.to_string()),
        variant: if mode == "pipeline" {
            variant(path, meta, params)
        } else {
            String::new()
        },
        mode,
        device: text(meta, "/device")
            .or(file_device)
            .unwrap_or_else(|| "cpu".into()),
    }
}

fn row(mut r: Row, e: &Value) -> Row {
    r.throughputs = e
        .get("throughputs")
        .and_then(Value::as_array)
        .map(|a| a.iter().map(|x| x.as_f64().unwrap_or(f64::NAN)).collect())
        .unwrap_or_default();
    r.median = number(e, "/median_throughput");
    // A file in the reference format written by a newer augbench may carry the figure.
    r.figure = number(e, "/figure_throughput");
    r.figure_estimator = text(e, "/figure_estimator");
    r.figure_interval = number(e, "/figure_low").zip(number(e, "/figure_high"));
    r.std = number(e, "/std_throughput");
    r.ci_low = number(e, "/ci_low").or(number(e, "/throughput_ci95/0"));
    r.ci_high = number(e, "/ci_high").or(number(e, "/throughput_ci95/1"));
    r.reason = text(e, "/reason")
        .or(text(e, "/error"))
        .or(text(e, "/early_stop_reason"));
    r.status = status(e, &r.throughputs);
    r
}

/// Status from an explicit field, else from `supported`, `error` and `early_stopped`. The
/// reference writes a slow preflight as `status: ok`, `early_stopped: true` and no runs.
fn status(e: &Value, throughputs: &[f64]) -> Status {
    let explicit = e
        .get("status")
        .cloned()
        .and_then(|s| serde_json::from_value::<Status>(s).ok());
    let early = e
        .get("early_stopped")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let runs = number(e, "/num_successful_runs").unwrap_or(throughputs.len() as f64);
    if e.get("supported").and_then(Value::as_bool) == Some(false) {
        Status::Unsupported
    } else if matches!(explicit, Some(s) if s != Status::Ok) {
        explicit.unwrap_or(Status::Ok)
    } else if e.get("error").is_some_and(|x| !x.is_null()) {
        Status::Error
    } else if early && runs == 0.0 {
        Status::Slow
    } else {
        Status::Ok
    }
}

/// Frames per clip: the file's own `clip_length` (or `num_frames`), else its scenario's.
fn clip_length(params: &Value, scenario: &str) -> Option<u64> {
    let recorded = ["/clip_length", "/num_frames"]
        .iter()
        .find_map(|k| params.pointer(k).and_then(Value::as_u64));
    recorded.or_else(|| Matrix::get().scenario(scenario)?.clip_length)
}

fn media(path: &Path, meta: &Value, params: &Value) -> Media {
    let named = text(meta, "/media")
        .or(text(meta, "/dataset/media"))
        .or(text(params, "/media"))
        .or(text(meta, "/scenario")
            .and_then(|s| Matrix::get().scenario(&s).map(|i| i.media.to_string())));
    match named.as_deref() {
        Some("video") => Media::Video,
        Some(_) => Media::Image,
        None if params.get("num_videos").is_some() => Media::Video,
        None if path.to_string_lossy().contains("video") => Media::Video,
        None => Media::Image,
    }
}

/// `(scenario, mode)` when the file sits at `<scenario>/<mode>/<file>`.
fn from_path(path: &Path) -> (Option<String>, Option<String>) {
    let name = |p: Option<&Path>| {
        p.and_then(Path::file_name)
            .map(|n| n.to_string_lossy().into_owned())
    };
    let mode_dir = path.parent();
    match name(mode_dir) {
        Some(m) if MODES.contains(&m.as_str()) => (name(mode_dir.and_then(Path::parent)), Some(m)),
        _ => (None, None),
    }
}

/// Pipeline sweep point from metadata, or from the `_w<W>_b<B>` tokens of the file name.
fn variant(path: &Path, meta: &Value, params: &Value) -> String {
    let stem = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let token = |p: char| {
        stem.split('_')
            .find(|t| t.len() > 1 && t.starts_with(p) && t[1..].chars().all(|c| c.is_ascii_digit()))
            .map(|t| t[1..].to_string())
    };
    let num = |k: &str| number(params, k).map(|n| n.to_string());
    let scope = text(meta, "/timing/measurement_scope")
        .or(text(params, "/scope"))
        .unwrap_or_else(|| policy::DEFAULT_PIPELINE_SCOPE.to_string());
    let workers = num("/workers")
        .or(num("/num_workers"))
        .or(token('w'))
        .unwrap_or_else(|| "?".into());
    let batch = num("/batch_size")
        .or(token('b'))
        .unwrap_or_else(|| "?".into());
    format!("{scope} w{workers} b{batch}")
}

/// A library's version from a `library_versions` map: by name, by its package, or ignoring case.
pub fn version_of(library: &str, versions: &BTreeMap<String, String>) -> String {
    let package = Matrix::get().library(library).map(|l| l.package.as_str());
    versions
        .get(library)
        .or_else(|| package.and_then(|p| versions.get(p)))
        .or_else(|| {
            versions
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(library))
                .map(|(_, v)| v)
        })
        .cloned()
        .unwrap_or_default()
}

fn string_map(v: Option<&Value>) -> BTreeMap<String, String> {
    v.and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(k, v)| {
            (
                k.clone(),
                v.as_str().map_or_else(|| v.to_string(), str::to_string),
            )
        })
        .collect()
}

fn text(v: &Value, pointer: &str) -> Option<String> {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .map(str::to_string)
}

fn number(v: &Value, pointer: &str) -> Option<f64> {
    v.pointer(pointer).and_then(Value::as_f64)
}
