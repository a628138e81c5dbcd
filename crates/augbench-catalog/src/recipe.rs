//! The pipeline recipe (pipeline.md), loaded from the embedded `specs/recipe.yaml`: the crop that
//! precedes every transform, the crop transforms that replace it, the normalization, and the batch
//! each library must deliver for a transform (its stages and the contract's spatial size).

use std::sync::OnceLock;

use serde::Deserialize;

use crate::registry::{OutputRule, Registry, TransformSpec};

const RECIPE_YAML: &str = include_str!("../../../specs/recipe.yaml");

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Normalize {
    pub mean: [f64; 3],
    pub std: [f64; 3],
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Recipe {
    #[allow(dead_code)]
    version: u32,
    /// The crop stage before T (a registry transform).
    pub crop: String,
    /// Transforms that are themselves the crop: the recipe is T → Normalize.
    pub crop_transforms: Vec<String>,
    /// Part of every recipe, never a row of their own.
    pub not_rows: Vec<String>,
    /// The ceiling row: the recipe with T removed (decode → crop → normalize → batch).
    pub ceiling: String,
    pub normalize: Normalize,
}

/// What one pipeline row runs: the crop stage (None when T is the crop), T, and the spatial size
/// of the batch (None when T's output depends on its input: any size, the same for every item).
#[derive(Debug, Clone)]
pub struct RowRecipe<'a> {
    pub crop: Option<&'a TransformSpec>,
    pub transform: &'a TransformSpec,
    pub size: Option<[u64; 2]>,
}

impl Recipe {
    /// The embedded recipe, parsed once. Its validity is a build-time fact checked by tests.
    pub fn get() -> &'static Recipe {
        static RECIPE: OnceLock<Recipe> = OnceLock::new();
        RECIPE.get_or_init(|| crate::embedded::parse("specs/recipe.yaml", RECIPE_YAML))
    }

    /// The ceiling row's spec: no parameters, the crop's size (identity).
    pub fn ceiling_spec(&self) -> &'static TransformSpec {
        static SPEC: OnceLock<TransformSpec> = OnceLock::new();
        SPEC.get_or_init(|| TransformSpec {
            name: Recipe::get().ceiling.clone(),
            params: Default::default(),
            output: OutputRule::Same,
            dtype: crate::registry::DtypeRule::Same,
        })
    }

    /// A transform's spec: the registry's, or the ceiling row's.
    pub fn lookup(name: &str) -> Option<&'static TransformSpec> {
        let r = Recipe::get();
        Registry::get()
            .spec(name)
            .or_else(|| (name == r.ceiling).then(|| r.ceiling_spec()))
    }

    /// Whether `name` is the ceiling row (its recipe has no T).
    pub fn is_ceiling(&self, name: &str) -> bool {
        self.ceiling == name
    }

    /// The row of `transform`, or why it is not a pipeline row.
    pub fn row<'a>(&self, transform: &'a TransformSpec) -> Result<RowRecipe<'a>, String> {
        if self.not_rows.contains(&transform.name) {
            return Err(format!(
                "{} is part of every pipeline recipe, not a row of its own",
                transform.name
            ));
        }
        let crop_spec = Registry::get()
            .spec(&self.crop)
            .ok_or_else(|| format!("the recipe's crop {} is not in the registry", self.crop))?;
        let is_crop = self.crop_transforms.contains(&transform.name);
        let crop = (!is_crop).then_some(crop_spec);
        let input = match (&crop_spec.output, is_crop) {
            (OutputRule::Fixed { size }, false) => Some(*size),
            _ => None,
        };
        let size = match &transform.output {
            OutputRule::Fixed { size } => Some(*size),
            OutputRule::Same => input,
            OutputRule::Depends => None,
        };
        Ok(RowRecipe {
            crop,
            transform,
            size,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &str) -> &'static TransformSpec {
        Registry::get().spec(name).unwrap()
    }

    #[test]
    fn the_recipe_names_registry_transforms() {
        let r = Recipe::get();
        let reg = Registry::get();
        for name in r.crop_transforms.iter().chain(&r.not_rows).chain([&r.crop]) {
            assert!(reg.spec(name).is_some(), "{name}");
        }
        assert!(r.normalize.std.iter().all(|s| *s > 0.0));
    }

    #[test]
    fn a_transform_follows_the_crop_and_keeps_its_size() {
        let row = Recipe::get().row(spec("HorizontalFlip")).unwrap();
        assert_eq!(row.crop.map(|c| c.name.as_str()), Some("RandomCrop224"));
        assert_eq!(row.size, Some([224, 224]));
        let row = Recipe::get().row(spec("Resize")).unwrap();
        assert_eq!(row.size, Some([512, 512]));
        assert_eq!(Recipe::get().row(spec("Pad")).unwrap().size, None);
    }

    #[test]
    fn the_ceiling_row_is_the_crop_alone() {
        let r = Recipe::get();
        assert!(
            Registry::get().spec(&r.ceiling).is_none(),
            "not a registry transform"
        );
        let row = r.row(Recipe::lookup(&r.ceiling).unwrap()).unwrap();
        assert_eq!(row.crop.map(|c| c.name.as_str()), Some("RandomCrop224"));
        assert_eq!(row.size, Some([224, 224]));
    }

    #[test]
    fn a_crop_transform_replaces_the_crop_and_normalize_is_no_row() {
        let row = Recipe::get().row(spec("RandomResizedCrop")).unwrap();
        assert!(row.crop.is_none());
        assert_eq!(row.size, Some([224, 224]));
        let e = Recipe::get().row(spec("Normalize")).unwrap_err();
        assert!(e.contains("part of every pipeline recipe"), "{e}");
    }
}
