//! Pipeline mode through the native worker's protocol, for every crate: each row of the pipeline
//! set either answers `unsupported` at prepare or delivers a first batch that meets the output
//! contract at the recipe's size; a corrupt file fails its row by name; windows time batches.

use std::path::Path;

use augbench_catalog::recipe::Recipe;
use augbench_core::Registry;
use serde_json::{Value, json};

use crate::{Library, exchange};

/// Writes `n` smooth 320×256 JPEGs into `dir`; returns their paths.
fn jpegs(dir: &Path, n: usize) -> Vec<String> {
    (0..n)
        .map(|i| {
            let img = image::RgbImage::from_fn(320, 256, |x, y| {
                image::Rgb([
                    (x % 256) as u8,
                    (y % 256) as u8,
                    ((x + y + i as u32 * 40) % 256) as u8,
                ])
            });
            let path = dir.join(format!("{i}.jpg"));
            img.save(&path).unwrap();
            path.display().to_string()
        })
        .collect()
}

/// Serves `requests` to a fresh worker for `lib`; returns one response per request.
fn serve(lib: Library, requests: &[Value]) -> Vec<Value> {
    exchange(lib.name(), requests).unwrap()
}

fn load(paths: &[String], preload: bool) -> Value {
    json!({"op": "load", "media": "image", "paths": paths, "channels": 3, "clip_length": 0,
           "device": "cpu", "pipeline": true, "preload": preload})
}

/// `pipeline_prepare` for `name` as the coordinator sends it (crop and ceiling from the recipe).
fn prepare(name: &str) -> Value {
    let recipe = Recipe::get();
    let spec = Recipe::lookup(name).unwrap();
    let row = recipe.row(spec).unwrap();
    json!({"op": "pipeline_prepare", "ceiling": recipe.is_ceiling(name), "transform": name,
           "params": spec.params, "crop": row.crop.map(|c| json!({"name": c.name, "params": c.params})),
           "mean": recipe.normalize.mean, "std": recipe.normalize.std, "split": false, "seed": 11,
           "preflight_items": 1})
}

fn start(name: &str, workers: u64, warm: u64) -> Value {
    let spec = Recipe::lookup(name).unwrap();
    let size = Recipe::get().row(spec).unwrap().size;
    json!({"op": "pipeline_start", "workers": workers, "batch_size": 2, "prefetch": 2,
           "warm_batches": warm, "order": [2, 0, 1], "seed": 11, "size": size})
}

#[test]
fn every_pipeline_row_is_unsupported_or_meets_the_contract() {
    let dir = tempfile::tempdir().unwrap();
    let paths = jpegs(dir.path(), 3);
    let recipe = Recipe::get();
    let set = Registry::get().set("rgb_pipeline").unwrap();
    let names: Vec<&String> = set
        .iter()
        .chain([&recipe.ceiling])
        .filter(|n| recipe.row(Recipe::lookup(n).unwrap()).is_ok())
        .collect();
    for lib in Library::ALL {
        let mut requests = vec![load(&paths, true)];
        for name in &names {
            requests.extend([
                prepare(name),
                start(name, 1, 0),
                json!({"op": "pipeline_stop"}),
            ]);
        }
        let replies = serve(lib, &requests);
        assert_eq!(
            replies[0]["ok"],
            true,
            "{} load: {}",
            lib.name(),
            replies[0]
        );
        let mut measured = 0;
        for (name, r) in names.iter().zip(replies[1..].chunks(3)) {
            if r[0]["ok"] != true {
                assert_eq!(
                    r[0]["kind"],
                    "unsupported",
                    "{} {name}: {}",
                    lib.name(),
                    r[0]
                );
                continue;
            }
            assert_eq!(r[1]["ok"], true, "{} {name}: {}", lib.name(), r[1]);
            assert_eq!(r[1]["batch"]["dtype"], "float32");
            measured += 1;
        }
        assert!(measured >= 5, "{}: only {measured} rows", lib.name());
    }
}

#[test]
fn a_corrupt_file_fails_the_decode_scope_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let paths = jpegs(dir.path(), 3);
    let bytes = std::fs::read(&paths[1]).unwrap();
    std::fs::write(&paths[1], &bytes[..bytes.len() / 2]).unwrap();
    for workers in [0, 2] {
        let replies = serve(
            Library::Image,
            &[
                load(&paths, false),
                prepare("HorizontalFlip"),
                start("HorizontalFlip", workers, 1),
            ],
        );
        assert_eq!(
            replies[0]["count"], 3,
            "a decode scope reads files in the loader"
        );
        // The preflight reads item 0 only; batch 0 is items 2, 0 and batch 1 (warm) items 1, 2.
        assert_eq!(replies[1]["ok"], true, "{}", replies[1]);
        assert_eq!(replies[2]["ok"], false);
        let error = replies[2]["error"].as_str().unwrap();
        assert!(
            error.contains(&paths[1]) && error.contains("truncated"),
            "{error}"
        );
    }
}

#[test]
fn windows_time_batches_in_the_memory_and_decode_scopes() {
    let dir = tempfile::tempdir().unwrap();
    let paths = jpegs(dir.path(), 3);
    for preload in [true, false] {
        let run =
            json!({"op": "pipeline_run", "min_batches": 3, "min_time": 0.0, "rewarm_batches": 1});
        let replies = serve(
            Library::KorniaRs,
            &[
                load(&paths, preload),
                prepare("Grayscale"),
                start("Grayscale", 2, 2),
                run,
            ],
        );
        assert_eq!(replies[2]["batch"]["shape"], json!([2, 3, 224, 224]));
        assert_eq!(replies[2]["worker_threads"].as_array().unwrap().len(), 2);
        assert_eq!(replies[2]["worker_threads"][1]["rayon"], 1);
        let ns: Vec<u64> = serde_json::from_value(replies[3]["ns"].clone()).unwrap();
        assert_eq!(ns.len(), 3);
        assert!(ns.windows(2).all(|w| w[0] <= w[1]));
        assert_eq!(replies[3]["items"], 6);
    }
}

#[test]
fn the_ceiling_slot_keeps_its_loader_up_while_the_rows_change() {
    let dir = tempfile::tempdir().unwrap();
    let paths = jpegs(dir.path(), 3);
    let ceiling = &Recipe::get().ceiling;
    let in_slot = |mut v: Value| {
        v["slot"] = json!("ceiling");
        v
    };
    let run = json!({"op": "pipeline_run", "min_batches": 2, "min_time": 0.0, "rewarm_batches": 1});
    let mut requests = vec![
        load(&paths, true),
        in_slot(prepare(ceiling)),
        in_slot(start(ceiling, 1, 1)),
    ];
    for name in ["HorizontalFlip", "Grayscale"] {
        // The row's slot prepares and starts each transform; the ceiling's loader stays up.
        requests.extend([
            prepare(name),
            start(name, 1, 1),
            run.clone(),
            in_slot(run.clone()),
        ]);
    }
    requests.extend([
        json!({"op": "pipeline_stop", "slot": "ceiling"}),
        in_slot(run.clone()),
        run,
    ]);
    let replies = serve(Library::Image, &requests);
    for (k, r) in replies.iter().enumerate().take(11) {
        assert!(r.get("kind").is_none(), "request {k}: {r}");
    }
    for k in [5, 6, 9, 10] {
        assert_eq!(replies[k]["items"], 4, "window {k}: {}", replies[k]);
    }
    assert_eq!(
        replies[12]["kind"], "bad_request",
        "the ceiling's loader is stopped"
    );
    assert_eq!(replies[13]["items"], 4, "the row's loader runs on");
}
#[test]
fn pipeline_ops_need_pipeline_media() {
    let replies = serve(Library::Image, &[prepare("HorizontalFlip")]);
    assert_eq!(replies[0]["kind"], "bad_request");
    let dir = tempfile::tempdir().unwrap();
    let paths = jpegs(dir.path(), 1);
    let mut nine = load(&paths, true);
    nine["channels"] = json!(9);
    let replies = serve(Library::KorniaRs, &[nine]);
    assert_eq!(replies[0]["kind"], "unsupported", "{}", replies[0]);
}

/// `clips` folders of `frames` 320×256 PNG frames; every frame of a clip is the same image.
fn clip_folders(dir: &Path, clips: usize, frames: usize) -> Vec<String> {
    let frame = jpegs(dir, 1).remove(0);
    let img = image::open(&frame).unwrap().to_rgb8();
    (0..clips)
        .map(|c| {
            let folder = dir.join(format!("clip_{c:06}"));
            std::fs::create_dir(&folder).unwrap();
            for t in 0..frames {
                img.save(folder.join(format!("frame_{t:03}.png"))).unwrap();
            }
            folder.display().to_string()
        })
        .collect()
}

fn load_clips(folders: &[String], frames: u64, preload: bool) -> Value {
    json!({"op": "load", "media": "video", "paths": folders, "channels": 3, "clip_length": frames,
           "device": "cpu", "pipeline": true, "preload": preload})
}

#[test]
fn clips_make_clip_batches_in_the_memory_and_decode_scopes() {
    let dir = tempfile::tempdir().unwrap();
    let folders = clip_folders(dir.path(), 3, 3);
    for preload in [true, false] {
        let mut clip_start = start("HorizontalFlip", 2, 1);
        clip_start["frames"] = json!(3);
        let run = json!({"op": "pipeline_run", "min_batches": 2, "min_time": 0.0});
        let replies = serve(
            Library::Image,
            &[
                load_clips(&folders, 3, preload),
                prepare("HorizontalFlip"),
                clip_start,
                run,
                start("HorizontalFlip", 0, 0),
            ],
        );
        assert_eq!(replies[0]["layout"], "THWC", "{}", replies[0]);
        if preload {
            assert_eq!(replies[0]["shape"], json!([3, 256, 320, 3]));
        }
        assert_eq!(
            replies[2]["batch"]["shape"],
            json!([2, 3, 3, 224, 224]),
            "{}",
            replies[2]
        );
        assert_eq!(replies[3]["items"], 4, "items are clips");
        // An image contract on clip items is broken before timing.
        assert_eq!(replies[4]["kind"], "contract", "{}", replies[4]);
    }
}

#[test]
fn a_clip_draws_one_crop_window_for_all_its_frames() {
    use super::recipe;
    use crate::adapters::ImageRs;
    use crate::loader::Batch;
    use crate::session::Adapter;
    use augbench_protocol::protocol::PipelinePrepareRequest;

    let dir = tempfile::tempdir().unwrap();
    let folder = &clip_folders(dir.path(), 1, 3)[0];
    let frames = crate::clips::read_clip(Path::new(folder)).unwrap();
    let clip: Vec<_> = frames
        .into_iter()
        .map(|f| ImageRs::convert(f.width, f.height, f.data).unwrap())
        .collect();
    let source = std::sync::Arc::new(super::source::Source::<ImageRs>::Clips(vec![clip]));
    let req: PipelinePrepareRequest = serde_json::from_value(prepare("DecodeOnly")).unwrap();
    let stages = std::sync::Arc::new(recipe::stages(&req).unwrap());
    let (mut fill, _) = recipe::make_fill(&source, &stages)(None).unwrap();
    let plane = 3 * 224 * 224;
    let mut cuts = Vec::new();
    for _ in 0..2 {
        let mut b = Batch::with_frames(1, Some(3));
        fill.fill(0, &mut b, 0).unwrap();
        let first = &b.data[..plane];
        assert!((1..3).all(|t| &b.data[t * plane..(t + 1) * plane] == first));
        cuts.push(first.to_vec());
    }
    assert_ne!(cuts[0], cuts[1], "each clip draws its own window");
    let mut images = Batch::new(1);
    let e = fill.fill(0, &mut images, 0).unwrap_err();
    assert!(e.contains("this item is a clip"), "{e}");
}

/// `production_cell` for catalog recipe `recipe` as the coordinator sends it (the catalog's
/// output size and normalization): 3 files, batch 2, `workers` loader threads.
fn production_cell(recipe: &augbench_catalog::recipes::Recipe, dtype: &str, workers: u64) -> Value {
    let crops = &Recipe::get().crop_transforms;
    let output = &augbench_catalog::recipes::Catalog::embedded().output;
    let stages: Vec<Value> = recipe
        .stages
        .iter()
        .map(|s| json!({"op": s.op, "params": s.params, "crop": crops.contains(&s.op)}))
        .collect();
    json!({"op": "production_cell", "recipe": recipe.id, "stages": stages,
           "stages_in_workers": recipe.stages.len(), "dtype": dtype,
           "mean": output.normalize.mean, "std": output.normalize.std, "size": output.size(),
           "order": [2, 0, 1], "seed": 137, "batch_size": 2, "workers": workers, "prefetch": 2,
           "warmup_batches": 1, "measured_batches": 2})
}

fn catalog_recipe(row: &str) -> &'static augbench_catalog::recipes::Recipe {
    let catalog = augbench_catalog::recipes::Catalog::embedded();
    catalog.recipes.iter().find(|r| r.row == row).unwrap()
}

#[test]
fn every_catalog_recipe_is_unsupported_at_a_named_stage_or_a_batch_of_the_contract() {
    let dir = tempfile::tempdir().unwrap();
    let paths = jpegs(dir.path(), 3);
    let catalog = augbench_catalog::recipes::Catalog::embedded();
    for lib in Library::ALL {
        let mut requests = vec![load(&paths, false)];
        requests.extend(
            catalog
                .recipes
                .iter()
                .map(|r| production_cell(r, "float16", 1)),
        );
        // `production_builds` over the same recipes answers what the cells answer.
        let asked: Vec<Value> = requests[1..]
            .iter()
            .map(|c| json!({"recipe": c["recipe"], "stages": c["stages"], "stages_in_workers": c["stages_in_workers"]}))
            .collect();
        requests.push(json!({"op": "production_builds", "device": "cpu", "recipes": asked}));
        let replies = serve(lib, &requests);
        let builds = &replies[replies.len() - 1]["recipes"];
        assert_eq!(
            replies[0]["ok"],
            json!(true),
            "{}: {}",
            lib.name(),
            replies[0]
        );
        let mut measured = 0;
        for (i, (recipe, reply)) in catalog.recipes.iter().zip(&replies[1..]).enumerate() {
            let what = format!("{} {}: {reply}", lib.name(), recipe.id);
            let listed = crate::support::builds_recipe(lib, recipe);
            assert_eq!(
                listed,
                reply["ok"] == json!(true),
                "`list recipes` differs: {what}"
            );
            if reply["ok"] == json!(true) {
                measured += 1;
                assert_eq!(reply["batch"]["shape"], json!([2, 3, 224, 224]), "{what}");
                assert_eq!(reply["batch"]["dtype"], json!("float16"), "{what}");
                assert_eq!(reply["ns"].as_array().map(Vec::len), Some(2), "{what}");
                let checked = json!({"form": 2, "values": ["last"]});
                assert_eq!(reply["batch"]["checked"], checked, "{what}");
                assert_eq!(reply["items"], json!(4), "{what}");
                assert_eq!(
                    reply["stages_in_workers"],
                    json!(recipe.stages.len()),
                    "{what}"
                );
            } else {
                assert_eq!(reply["kind"], json!("unsupported"), "{what}");
                let error = reply["error"].as_str().unwrap_or_default();
                assert!(error.starts_with("stage "), "{what}");
            }
            let answer = &builds[i];
            assert_eq!(answer["recipe"], json!(recipe.id), "{what}");
            let refused = (reply["ok"] != json!(true)).then(|| reply["error"].clone());
            assert_eq!(answer["refused"], refused.unwrap_or(Value::Null), "{what}");
        }
        // RandomCrop224 alone is augbench's shared crop: every crate measures it.
        let crop_only = catalog
            .recipes
            .iter()
            .position(|r| r.row == "RandomCrop224");
        let reply = crop_only.and_then(|i| replies.get(i + 1));
        assert_eq!(
            reply.map(|r| &r["ok"]),
            Some(&json!(true)),
            "{}",
            lib.name()
        );
        eprintln!("{}: {measured}/{}", lib.name(), catalog.recipes.len());
    }
}

#[test]
fn a_bad_production_request_is_a_bad_request_and_the_worker_keeps_serving() {
    let dir = tempfile::tempdir().unwrap();
    let paths = jpegs(dir.path(), 3);
    let flip = catalog_recipe("HorizontalFlip");
    let bad_dtype = production_cell(flip, "bfloat16", 1);
    let mut bad_order = production_cell(flip, "float32", 1);
    bad_order["order"] = json!([0, 7]);
    let mut no_stages = production_cell(flip, "float32", 1);
    no_stages["stages"] = json!([]);
    // A parameter the crop cannot take is the request's mistake, not a stage the crate lacks.
    let mut bad_param = production_cell(flip, "float32", 1);
    bad_param["stages"][0]["params"] = json!({"height": 224, "width": "wide"});
    // A split the native loader cannot make: it has no device for the batch's stages.
    let mut split = production_cell(flip, "float32", 1);
    split["stages_in_workers"] = json!(1);
    // A decoder asked for by name: the crate reads with its own.
    let mut decoder = production_cell(flip, "float32", 1);
    decoder["decoder"] = json!("simplejpeg");
    let replies = serve(
        Library::Image,
        &[
            production_cell(flip, "float16", 1),
            load(&paths, false),
            bad_dtype,
            bad_order,
            no_stages,
            bad_param,
            split,
            decoder,
            production_cell(flip, "float32", 1),
        ],
    );
    assert!(
        replies[0]["error"]
            .as_str()
            .unwrap()
            .contains("no pipeline media loaded")
    );
    for (reply, says) in replies[2..8].iter().zip([
        "float16 or float32",
        "below 3",
        "non-empty",
        "width",
        "every stage in its threads",
        "decodes with its own crate, not `simplejpeg`",
    ]) {
        assert_eq!(reply["kind"], json!("bad_request"), "{reply}");
        assert!(reply["error"].as_str().unwrap().contains(says), "{reply}");
    }
    assert_eq!(
        replies[8]["batch"]["dtype"],
        json!("float32"),
        "{}",
        replies[8]
    );
}

/// With no loader threads the worker's own thread fills each batch; the cell is the same
/// contract, and the loader says it has no workers.
#[test]
fn a_production_cell_without_loader_threads_fills_batches_on_the_worker_thread() {
    let dir = tempfile::tempdir().unwrap();
    let paths = jpegs(dir.path(), 3);
    let replies = serve(
        Library::KorniaRs,
        &[
            load(&paths, false),
            production_cell(catalog_recipe("VerticalFlip"), "float16", 0),
        ],
    );
    let reply = &replies[1];
    assert_eq!(reply["batch"]["shape"], json!([2, 3, 224, 224]), "{reply}");
    assert_eq!(reply["loader"]["workers"], json!(0), "{reply}");
    assert_eq!(
        reply["loader"]["persistent_workers"],
        json!(false),
        "{reply}"
    );
    assert_eq!(
        reply["worker_threads"].as_array().map(Vec::len),
        Some(1),
        "{reply}"
    );
}
