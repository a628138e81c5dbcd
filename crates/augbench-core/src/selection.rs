//! The transforms a config selects, in order: the explicit list, all of the registry, or the
//! scenario's set (the pipeline set in pipeline mode), with the pipeline ceiling row first. Read
//! by the planner, the cloud sharding and the resolver alike.

use crate::config::{RunConfig, TransformSet};
use augbench_catalog::matrix::{Matrix, Mode};
use augbench_catalog::registry::Registry;

/// The transforms a resolved config selects, in order. Pipeline mode puts the ceiling row
/// (`DecodeOnly`, specs/recipe.yaml) first, unless the list names it (then it stays where the
/// list puts it): every library's pipeline rows are read against it.
pub fn selected_transforms(cfg: &RunConfig) -> Vec<String> {
    let mut names = chosen_transforms(cfg);
    let ceiling = &augbench_catalog::recipe::Recipe::get().ceiling;
    if cfg.selection.mode == Some(Mode::Pipeline) && !names.contains(ceiling) {
        names.insert(0, ceiling.clone());
    }
    names
}

fn chosen_transforms(cfg: &RunConfig) -> Vec<String> {
    if let Some(list) = &cfg.selection.transforms {
        return list.clone();
    }
    let reg = Registry::get();
    match cfg.selection.transform_set {
        Some(TransformSet::All) => reg.names().into_iter().map(str::to_string).collect(),
        _ => {
            let scenario = cfg
                .selection
                .scenario
                .as_deref()
                .and_then(|s| Matrix::get().scenario(s));
            // Pipeline mode has its own set where one exists (transforms two libraries support).
            let pipeline = cfg.selection.mode == Some(Mode::Pipeline);
            scenario
                .and_then(|s| {
                    let own = pipeline.then(|| reg.set(&format!("{}_pipeline", s.set)));
                    own.flatten().or_else(|| reg.set(&s.set))
                })
                .map(<[String]>::to_vec)
                .unwrap_or_default()
        }
    }
}
