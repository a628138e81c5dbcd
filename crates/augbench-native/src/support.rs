//! What a native library can build, asked without media or a worker: each adapter's `build` on
//! the transform's canonical parameters. The planner's estimate uses it so that rows a crate does
//! not support cost nothing, and `augbench list recipes` counts the production recipes a crate
//! builds; a run still learns support from the worker's own replies.

use serde_json::Value;

use crate::adapters::{Fir, ImageRs, Imageproc, Kornia, Zune};
use crate::library::Library;
use crate::params::Params;
use crate::session::Adapter;
use augbench_protocol::protocol::{Failure, FailureKind};

/// Whether `library` builds `transform` with `params`: `Some(false)` when its adapter answers
/// `unsupported`, `None` when it fails otherwise (a parameter it reads at prepare time, say).
pub fn builds(library: Library, transform: &str, params: &Value) -> Option<bool> {
    match build(library, transform, params) {
        Ok(()) => Some(true),
        Err(f) if f.kind == FailureKind::Unsupported => Some(false),
        Err(_) => None,
    }
}

fn build(library: Library, transform: &str, params: &Value) -> Result<(), Failure> {
    let p = Params::new(transform, params);
    match library {
        Library::Image => ImageRs::build(transform, &p).map(drop),
        Library::Imageproc => Imageproc::build(transform, &p).map(drop),
        Library::FastImageResize => Fir::build(transform, &p).map(drop),
        Library::KorniaRs => Kornia::<3>::build(transform, &p).map(drop),
        Library::ZuneImage => Zune::build(transform, &p).map(drop),
    }
}

/// Why `library` would not measure a recipe of `stages` (each `(op, params, crop)`): the first
/// stage it cannot build (or cannot be asked about), named as its cell names it; `None` where it
/// builds every one. The shared crop needs no transform of the crate's (`pipeline::production`).
pub fn refusal<'a>(
    library: Library,
    stages: impl IntoIterator<Item = (&'a str, Value, bool)>,
) -> Option<String> {
    stages
        .into_iter()
        .enumerate()
        .find_map(|(i, (op, params, crop))| {
            if crop && crate::pipeline::is_shared_crop(op) {
                return None;
            }
            let error = build(library, op, &params).err()?.error;
            Some(format!("stage {} ({op}): {error}", i + 1))
        })
}

/// Whether `library` builds every stage of a catalog recipe (`refusal`, each stage marked as the
/// recipe's crop where it is one of the crop transforms).
pub fn builds_recipe(library: Library, recipe: &augbench_catalog::recipes::Recipe) -> bool {
    let crops = &augbench_catalog::recipe::Recipe::get().crop_transforms;
    let stages = recipe.stages.iter().map(|stage| {
        let params = Value::Object(stage.params.clone().into_iter().collect());
        (stage.op.as_str(), params, crops.contains(&stage.op))
    });
    refusal(library, stages).is_none()
}

#[cfg(test)]
mod tests {
    use super::*;
    use augbench_catalog::registry::Registry;

    /// Every native library builds some of the rgb set and not all of it, and what it builds
    /// here is what its worker prepares (`tests::supported` checks the worker side).
    #[test]
    fn every_library_builds_part_of_the_rgb_set() {
        let reg = Registry::get();
        for lib in Library::ALL {
            let answers: Vec<Option<bool>> = reg
                .set("rgb")
                .unwrap()
                .iter()
                .map(|name| {
                    let spec = reg.spec(name).unwrap();
                    let params = Value::Object(spec.params.clone().into_iter().collect());
                    builds(lib, name, &params)
                })
                .collect();
            let yes = answers.iter().filter(|a| **a == Some(true)).count();
            let no = answers.iter().filter(|a| **a == Some(false)).count();
            assert!(
                yes > 0 && no > 0,
                "{}: {yes} built, {no} unsupported",
                lib.name()
            );
        }
    }
}
